"""nn.attention (torch.nn.attention): SDPBackend and the sdpa_kernel context manager, which
restricts scaled_dot_product_attention to the given backends. Here MATH is the composed
softmax(QK^T)V and FLASH_ATTENTION / EFFICIENT_ATTENTION / CUDNN_ATTENTION name the fused CPU
kernel (one kernel, no L x S scores kept); a call that no allowed backend can run raises."""

import contextlib
import enum
import threading

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_FUSED = {SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION}
_state = threading.local()


def _allowed():
    """The backends scaled_dot_product_attention may use in this thread (None: any)."""
    return getattr(_state, "allowed", None)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = set(backends)
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel: expected SDPBackend values, got {b!r}")
    previous = _allowed()
    _state.allowed = backends
    try:
        yield
    finally:
        _state.allowed = previous


def fused_allowed():
    allowed = _allowed()
    return allowed is None or bool(allowed & _FUSED)


def math_allowed():
    allowed = _allowed()
    return allowed is None or SDPBackend.MATH in allowed
