"""oneflow.cuda: CUDA device queries."""

from oneflow import _oneflow_internal as _internal


def is_available():
    return _internal.with_cuda and _internal.cuda_device_count() > 0


def device_count():
    return _internal.cuda_device_count() if _internal.with_cuda else 0


def current_device():
    return 0


def synchronize(device=None):
    """Waits for the queued CPU ops and for all work on the CUDA device."""
    _internal.synchronize()
    if is_available():
        index = 0 if device is None else _internal.device(device).index
        _internal.cuda_synchronize(index)


def memory_allocated(device="cuda:0"):
    return _internal.memory_allocated(device)


def memory_reserved(device="cuda:0"):
    return _internal.memory_reserved(device)


def empty_cache():
    if is_available():
        _internal.empty_cache("cuda:0")
