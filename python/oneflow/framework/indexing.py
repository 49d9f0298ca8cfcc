"""Tensor.__getitem__ / __setitem__ for basic indexing: ints, slices with positive steps,
None, Ellipsis. Every result is a view of the indexed tensor; writes go through it. Indexing
with tensors, lists or bool masks (advanced indexing) is not implemented yet."""

import builtins

from oneflow._oneflow_internal import _C, Tensor


def _is_int(x):
    return (
        isinstance(x, builtins.int)
        and not isinstance(x, builtins.bool)
        or (hasattr(x, "__index__") and not isinstance(x, (Tensor, builtins.bool, builtins.float)))
    )


def _normalize(key, ndim):
    items = key if isinstance(key, tuple) else (key,)
    for it in items:
        if isinstance(it, (Tensor, list, builtins.bool)) or (
            not _is_int(it) and it is not None and it is not Ellipsis and not isinstance(it, slice)
        ):
            if isinstance(it, (Tensor, list, builtins.bool)) or hasattr(it, "__array__"):
                raise NotImplementedError(
                    "getitem: indexing with tensors, lists or bool masks (advanced indexing) "
                    "is not implemented yet"
                )
            raise TypeError(
                f"getitem: expected ints, slices, None or Ellipsis as indices, "
                f"got {type(it).__name__}"
            )
    consuming = sum(1 for it in items if it is not None and it is not Ellipsis)
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise IndexError("getitem: an index can only have a single ellipsis ('...')")
    if consuming > ndim:
        raise IndexError(
            f"getitem: too many indices for tensor of dimension {ndim} (got {consuming})"
        )
    out = []
    for it in items:
        if it is Ellipsis:
            out.extend([slice(None)] * (ndim - consuming))
        else:
            out.append(it)
    return out


def getitem(self, key):
    t = self
    d = 0
    for it in _normalize(key, self.ndim):
        if it is None:
            t = _C.unsqueeze(t, d)
            d += 1
        elif isinstance(it, slice):
            step = 1 if it.step is None else it.step.__index__()
            start = None if it.start is None else it.start.__index__()
            stop = None if it.stop is None else it.stop.__index__()
            t = _C.slice(t, d, start, stop, step)
            d += 1
        else:
            t = _C.select(t, d, it.__index__())
    return t


def setitem(self, key, value):
    view = getitem(self, key)
    _C.copy_(view, value)
