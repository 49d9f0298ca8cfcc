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
