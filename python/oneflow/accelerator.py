"""oneflow.accelerator (torch.accelerator): the current accelerator, CUDA in this build, and its
device index, synchronization and memory queries. Without a usable GPU, is_available() is False
and current_accelerator() None, as PyTorch on a CPU-only machine."""

import oneflow as _flow

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "device_count",
    "device_index",
    "empty_cache",
    "is_available",
    "memory_allocated",
    "memory_reserved",
    "set_device_idx",
    "set_device_index",
    "synchronize",
]


def is_available():
    return _flow.cuda.is_available()


def device_count():
    return _flow.cuda.device_count()


def current_accelerator(check_available=False):
    """oneflow.device("cuda") when this build has CUDA (and, with check_available, a usable
    device), else None."""
    if not _flow._oneflow_internal.with_cuda or (check_available and not is_available()):
        return None
    return _flow.device("cuda")


def _require(what):
    if not is_available():
        raise RuntimeError(f"oneflow.accelerator.{what}: no accelerator is available")


def current_device_index():
    _require("current_device_index")
    return _flow.cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device):
    _require("set_device_index")
    _flow.cuda.set_device(device)


set_device_idx = set_device_index


class device_index:
    """Makes `device` (an index; None does nothing) the current accelerator inside the block."""

    def __init__(self, device):
        self.idx = device
        self.prev = None

    def __enter__(self):
        if self.idx is not None:
            self.prev = current_device_index()
            set_device_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.prev is not None:
            set_device_index(self.prev)
        return False


def synchronize(device=None):
    _require("synchronize")
    _flow.cuda.synchronize(device)


def empty_cache():
    if is_available():
        _flow.cuda.empty_cache()


def memory_allocated(device_index=None):
    _require("memory_allocated")
    return _flow.cuda.memory_allocated(_dev(device_index))


def memory_reserved(device_index=None):
    _require("memory_reserved")
    return _flow.cuda.memory_reserved(_dev(device_index))


def _dev(device):
    if device is None:
        return f"cuda:{_flow.cuda.current_device()}"
    return f"cuda:{device}" if isinstance(device, int) else device
