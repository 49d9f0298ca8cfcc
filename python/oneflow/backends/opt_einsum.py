"""oneflow.backends.opt_einsum: torch.backends.opt_einsum's switches. is_available() says
whether the opt_einsum package can be imported; `enabled` defaults to that and can only be
turned on with it, and `strategy` ("auto", "greedy" or "optimal") is "auto" with it and None
without, as PyTorch's; set_flags() and flags() check the values as PyTorch's do. The switches
are kept and reported only: oneflow.einsum contracts its operands in its own order."""

import contextlib
import functools

try:
    import opt_einsum as _opt_einsum
except ImportError:
    _opt_einsum = None

__all__ = ["enabled", "flags", "get_opt_einsum", "is_available", "set_flags", "strategy"]


@functools.lru_cache
def is_available():
    """Whether the opt_einsum package is installed."""
    return _opt_einsum is not None


def get_opt_einsum():
    """The opt_einsum package if it is installed, else None."""
    return _opt_einsum


enabled = bool(_opt_einsum is not None)
strategy = "auto" if _opt_einsum is not None else None


def _set_enabled(value):
    if not is_available() and value:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap the "
            "benefits of calculating an optimal path for einsum. oneflow.einsum will fall back "
            "to contracting from left to right. To enable this optimal path calculation, "
            "please install opt-einsum."
        )
    globals()["enabled"] = value


def _set_strategy(value):
    if not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {value} will not be "
            "meaningful. oneflow.einsum will bypass path calculation and simply contract from "
            "left to right. Please install opt_einsum or unset `strategy`."
        )
    if not enabled:
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be "
            "meaningful. oneflow.einsum will bypass path calculation and simply contract from "
            "left to right. Please set `enabled` to `True` as well or unset `strategy`."
        )
    if value not in ("auto", "greedy", "optimal"):
        raise ValueError(
            f"`strategy` must be one of the following: [auto, greedy, optimal] but is {value}"
        )
    globals()["strategy"] = value


def set_flags(_enabled=None, _strategy=None):
    """Sets the switches given (checked as PyTorch's); returns the previous
    (enabled, strategy)."""
    orig = (enabled, strategy if is_available() else None)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return orig


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """The switches set for the block and restored after it."""
    orig = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*orig)
