"""nn.utils.prune (torch.nn.utils.prune): pruning a parameter by a mask, PyTorch's way.

Pruning `name` of a module moves the parameter to `name + "_orig"`, adds the buffer
`name + "_mask"` and makes `name` a plain attribute, orig * mask, recomputed by a forward
pre-hook before every call; pruning it again combines the masks (a PruningContainer prunes
only the entries still kept). `remove` makes the pruned values the parameter again."""

import numbers
from abc import ABC, abstractmethod

import oneflow

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


def _validate_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _count(amount, size):
    """How many entries `amount` (a count or a fraction) names out of `size`."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={size}"
            )
        return int(amount)
    return round(amount * size)


def _hooks_of(module, name):
    return [
        (k, h)
        for k, h in module._forward_pre_hooks.items()
        if isinstance(h, BasePruningMethod) and h._tensor_name == name
    ]


class BasePruningMethod(ABC):
    """A pruning method: compute_mask(t, default_mask) decides which entries are kept (1)."""

    PRUNING_TYPE = "unstructured"
    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        pass

    def apply_mask(self, module):
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        old = _hooks_of(module, name)
        if len(old) > 1:
            raise RuntimeError(f"prune: more than one pruning hook on {name}")
        orig = getattr(module, name)
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(orig.shape):
            raise ValueError(
                f"importance_scores should have the same shape as parameter {name} of {module}"
            )
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old:
            key, previous = old[0]
            del module._forward_pre_hooks[key]
            if isinstance(previous, PruningContainer):
                previous.add_pruning_method(method)
                method = previous
            else:
                container = PruningContainer(previous)
                container.add_pruning_method(method)
                method = container
            default_mask = getattr(module, name + "_mask").detach().clone()
            orig = getattr(module, name + "_orig")
        else:
            default_mask = oneflow.ones_like(orig)
            # the parameter itself becomes name_orig (an optimizer holding it still trains it)
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        scores = importance_scores if importance_scores is not None else orig
        with oneflow.no_grad():
            mask = method.compute_mask(scores.detach(), default_mask=default_mask)
        if name + "_mask" in module._buffers:
            module._buffers[name + "_mask"] = mask
        else:
            module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        scores = importance_scores if importance_scores is not None else t
        default_mask = default_mask if default_mask is not None else oneflow.ones_like(t)
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module):
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        with oneflow.no_grad():
            orig.copy_(weight.detach())
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        module.register_parameter(self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Successive pruning of one tensor: each method prunes only what the earlier ones kept."""

    def __init__(self, *methods):
        self._pruning_methods = ()
        for m in methods:
            self.add_pruning_method(m)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name is not None:
            if self._tensor_name != method._tensor_name:
                raise ValueError(
                    "Can only add pruning methods acting on the parameter named "
                    f"'{self._tensor_name}' to PruningContainer {self}. Found "
                    f"'{method._tensor_name}'"
                )
        if method is not None:
            self._tensor_name = method._tensor_name
            self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, i):
        return self._pruning_methods[i]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        mask = default_mask.clone()
        if method.PRUNING_TYPE == "unstructured":
            keep = mask == 1
            sub = method.compute_mask(t[keep], default_mask=mask[keep])
            mask[keep] = sub.to(mask.dtype)
            return mask
        if method.PRUNING_TYPE == "structured":
            dim = method.dim if method.dim >= 0 else method.dim + t.ndim
            other = [d for d in range(t.ndim) if d != dim]
            kept = (mask.sum(other) != 0).nonzero().reshape(-1) if other else None
            if kept is None:
                kept = (mask != 0).nonzero().reshape(-1)
            sub_t = t.index_select(dim, kept)
            sub_mask = method.compute_mask(sub_t, default_mask=mask.index_select(dim, kept))
            return mask.index_copy(dim, kept, sub_mask.to(mask.dtype))
        return mask * method.compute_mask(t, default_mask=mask)


class Identity(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _count(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            idx = oneflow.topk(oneflow.rand_like(t).reshape(-1), k).indices
            mask.reshape(-1)[idx] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _count(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            idx = oneflow.topk(oneflow.abs(t).reshape(-1), k, largest=False).indices
            mask.reshape(-1)[idx] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim, keep_idx, default_mask):
    mask = oneflow.zeros_like(t)
    index = [slice(None)] * t.ndim
    index[dim] = keep_idx
    mask[tuple(index)] = 1
    return mask * default_mask


class RandomStructured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        dim = self.dim if self.dim >= 0 else self.dim + t.ndim
        n = t.shape[dim]
        keep = n - _count(self.amount, n)
        order = oneflow.randperm(n, device=t.device)
        return _channel_mask(t, dim, order[:keep].sort().values, default_mask)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        dim = self.dim if self.dim >= 0 else self.dim + t.ndim
        size = t.shape[dim]
        keep = size - _count(self.amount, size)
        other = [d for d in range(t.ndim) if d != dim]
        norm = oneflow.linalg.vector_norm(t, ord=self.n, dim=other) if other else t.abs()
        idx = oneflow.topk(norm, keep, largest=True).indices
        return _channel_mask(t, dim, idx, default_mask)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise AssertionError("custom_from_mask: the mask does not fit the tensor")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """One unstructured pruning over all (module, name) pairs together: e.g. the smallest
    entries of all of them by L1Unstructured with an amount."""
    parameters = list(parameters)
    importance_scores = importance_scores or {}
    scores, masks = [], []
    for module, name in parameters:
        s = importance_scores.get((module, name), getattr(module, name))
        scores.append(s.detach().reshape(-1))
        mask = getattr(module, name + "_mask", None)
        masks.append(
            mask.reshape(-1) if mask is not None else oneflow.ones_like(s.detach()).reshape(-1)
        )
    relevant = oneflow.cat(scores)
    default_mask = oneflow.cat(masks)
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
            f"method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    with oneflow.no_grad():
        final = container.compute_mask(relevant, default_mask)
    start = 0
    for (module, name), s in zip(parameters, scores):
        n = s.numel()
        custom_from_mask(
            module, name, final[start : start + n].reshape(getattr(module, name).shape)
        )
        start += n


def remove(module, name):
    hooks = _hooks_of(module, name)
    if not hooks:
        raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                         "can be removed")  # fmt: skip
    key, hook = hooks[0]
    hook.remove(module)
    del module._forward_pre_hooks[key]
    return module


def is_pruned(module):
    for m in module.modules():
        for hook in m._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
