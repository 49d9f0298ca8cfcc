"""nn.Parameter: a Tensor that a Module registers as trainable state."""

from oneflow._oneflow_internal import Tensor


class Parameter(Tensor):
    """A leaf tensor sharing `data`'s storage, with requires_grad set (default True)."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            import oneflow

            data = oneflow.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: expected a Tensor, got {type(data).__name__}")
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    # print(p) and f"{p}" show the repr, as PyTorch's (whose Tensor formats only plain tensors
    # as their values)
    def __str__(self):
        return self.__repr__()

    def __format__(self, format_spec):
        return object.__format__(self, format_spec)

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach(), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result


class _BufferMeta(type(Tensor)):
    # isinstance(t, Buffer) holds for the tensors Buffer(...) marked (as PyTorch's).
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """nn.Buffer(data, persistent=True): marks a tensor that a Module registers as a buffer when
    assigned as its attribute (persistent ones are in its state_dict), as torch.nn.Buffer. The
    result is `data` detached, keeping requires_grad (a Tensor, not a subclass instance)."""

    def __new__(cls, data=None, *, persistent=True):
        import oneflow

        if data is None:
            data = oneflow.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer: expected a Tensor, got {type(data).__name__}")
        t = data.detach().requires_grad_(data.requires_grad)
        t._is_buffer = True
        t.persistent = bool(persistent)
        return t


class UninitializedParameter(Parameter):
    """A parameter of a lazy module before its shape is known (an empty placeholder):
    materialize(shape) resizes this same object and makes it a plain Parameter, so optimizers
    holding it keep it (PyTorch's UninitializedParameter)."""

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        import oneflow

        super().__init__(oneflow.empty(0, device=device, dtype=dtype), requires_grad)

    def materialize(self, shape, device=None, dtype=None):
        import oneflow

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        requires_grad = self.requires_grad
        self.requires_grad_(False)
        with oneflow.no_grad():
            self.resize_(*shape)
        self.requires_grad_(requires_grad)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedParameter>"

    def __reduce_ex__(self, proto):
        return (UninitializedParameter, (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = UninitializedParameter(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(Tensor):
    """A buffer of a lazy module before its shape is known (an empty placeholder); the lazy
    module registers the real buffer in its place at the first call."""

    cls_to_become = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None):
        import oneflow

        super().__init__(oneflow.empty(0, device=device, dtype=dtype), requires_grad=requires_grad)

    def __repr__(self):
        return "<UninitializedBuffer>"


def is_lazy(param):
    """Whether `param` is a lazy module's placeholder not yet materialized."""
    return isinstance(param, (UninitializedParameter, UninitializedBuffer))
