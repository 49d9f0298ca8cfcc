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
