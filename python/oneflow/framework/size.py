"""oneflow.Size: the shape of a tensor, a tuple of ints.

Its base, ``_SizeBase``, is a C-level tuple subclass whose slices are Sizes again; indexing by
an integer and building a tensor's ``shape`` run no Python code."""

from oneflow._oneflow_internal import _set_size_type, _SizeBase


class Size(_SizeBase):
    __slots__ = ()

    def __new__(cls, sizes=()):
        return super().__new__(cls, (int(s) for s in sizes))

    def __repr__(self):
        return f"oneflow.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


_set_size_type(Size)
