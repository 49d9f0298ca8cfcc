"""oneflow.utils.global_view: converting nested containers of tensors to and from global
tensors, and global_mode, a scope in which creation ops make global tensors."""

import inspect
import threading
import warnings

from oneflow import sbp as _sbp
from oneflow._oneflow_internal import Tensor
from oneflow.framework import creation as _creation


def _map(input, fn, warn, op):
    if isinstance(input, Tensor):
        return fn(input)
    if input is None:
        return None
    if isinstance(input, dict):
        return type(input)((k, _map(v, fn, warn, op)) for k, v in input.items())
    if isinstance(input, tuple) and hasattr(input, "_fields"):  # namedtuple
        return type(input)(*(_map(v, fn, warn, op) for v in input))
    if isinstance(input, (list, tuple)):
        return type(input)(_map(v, fn, warn, op) for v in input)
    if warn:
        warnings.warn(
            f"{op}: a leaf of type {type(input).__name__} is not a tensor; kept as is",
            stacklevel=3,
        )
    return input


def _takes_two(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def to_global(input, placement=None, sbp=None, warn_on_non_tensor_leaf=True, **kwargs):
    """Converts a tensor, or the tensors of nested lists/tuples/dicts, to global tensors. sbp
    may be a function that returns each tensor's sbp: OneFlow's fn(input, tensor), with the
    whole input first, or fn(tensor)."""
    by_tensor = callable(sbp) and not isinstance(sbp, _sbp.sbp)  # sbp objects are callable
    two = by_tensor and _takes_two(sbp)

    def convert(t):
        s = (sbp(input, t) if two else sbp(t)) if by_tensor else sbp
        return t.to_global(placement, s, **kwargs)

    return _map(input, convert, warn_on_non_tensor_leaf, "to_global")


def to_local(input, *, copy=False):
    """This process's shards of a global tensor or of the tensors of nested containers."""
    return _map(input, lambda t: t.to_local(copy=copy), False, "to_local")


class _Mode:
    def __init__(self, enabled=False, placement=None, sbp=None):
        self.is_enabled, self.placement = enabled, placement
        self.sbp = tuple(sbp) if isinstance(sbp, (list, tuple)) else (sbp,) if sbp else None


_state = threading.local()


def _stack():
    if not hasattr(_state, "stack"):
        _state.stack = [_Mode()]
    return _state.stack


class global_mode:
    """A scope in which creation ops without placement= make global tensors on `placement`
    with `sbp` (both required when enabled); global_mode(False) turns that off inside."""

    def __init__(self, enabled, placement=None, sbp=None):
        if enabled and (placement is None or sbp is None):
            raise ValueError("global_mode: placement and sbp are required when it is enabled")
        self._mode = _Mode(bool(enabled), placement, sbp)

    def __enter__(self):
        _stack().append(self._mode)
        _creation._global_modes.append(self._mode)
        return self

    def __exit__(self, *exc):
        _stack().pop()
        _creation._global_modes.remove(self._mode)


class current_global_mode:
    """The innermost global_mode's settings: is_enabled, placement and sbp (a tuple)."""

    def __init__(self):
        mode = _stack()[-1]
        self.is_enabled, self.placement, self.sbp = mode.is_enabled, mode.placement, mode.sbp
