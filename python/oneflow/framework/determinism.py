"""PyTorch's global numerics switches: float32 matrix-product precision and deterministic
algorithms (torch.set_float32_matmul_precision, torch.use_deterministic_algorithms and their
readers). The values live in the C++ core, where the kernels read them
(oneflow/core/common/backend_flags.h): below "highest", float32 products on CUDA use TF32
("high") or bfloat16 ("medium") tensor cores; in deterministic mode the CUDA kernels that add
with floating-point atomics raise (or warn once, with warn_only). The CPU kernels are
deterministic for a given thread count, and CPU float32 products stay float32."""

import warnings

from oneflow._oneflow_internal import (
    _deterministic_mode,
    _float32_matmul_precision,
    _set_deterministic_mode,
    _set_float32_matmul_precision,
)

_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision):
    """Sets how float32 matrix products may compute: "highest" (float32), "high" (TF32 tensor
    cores on CUDA) or "medium" (bfloat16 tensor cores on CUDA)."""
    if not isinstance(precision, str):
        raise RuntimeError(
            f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}"
        )
    if precision not in _PRECISIONS:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "set_float32_matmul_precision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _set_float32_matmul_precision(_PRECISIONS.index(precision))


def get_float32_matmul_precision():
    """The current float32 matrix-product precision: "highest", "high" or "medium"."""
    return _PRECISIONS[_float32_matmul_precision()]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """With mode True, ops without a deterministic implementation raise RuntimeError (warn once
    instead with warn_only=True); as torch.use_deterministic_algorithms."""
    if not isinstance(mode, bool):
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    if not isinstance(warn_only, bool):
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
            f"{type(warn_only).__name__}"
        )
    _set_deterministic_mode(0 if not mode else 1 if warn_only else 2)


def are_deterministic_algorithms_enabled():
    return _deterministic_mode() != 0


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic_mode() == 1


_DEBUG_MODES = ("default", "warn", "error")


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": off; 1 / "warn": warn_only; 2 / "error": raise."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif isinstance(debug_mode, int):  # bools too, as PyTorch (True is "warn")
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(
                f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
            )
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    _set_deterministic_mode(int(debug_mode))


def get_deterministic_debug_mode():
    return _deterministic_mode()


def functions():
    return {
        name: globals()[name]
        for name in (
            "set_float32_matmul_precision",
            "get_float32_matmul_precision",
            "use_deterministic_algorithms",
            "are_deterministic_algorithms_enabled",
            "is_deterministic_algorithms_warn_only_enabled",
            "set_deterministic_debug_mode",
            "get_deterministic_debug_mode",
        )
    }
