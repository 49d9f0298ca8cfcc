"""oneflow.cpu: the CPU device's queue of eager ops."""

from oneflow import _oneflow_internal as _internal


def synchronize(device=None):
    """Waits until every queued CPU op has run; raises the error of a kernel that failed."""
    _internal.synchronize()


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"
