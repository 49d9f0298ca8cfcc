"""Top-level names of PyTorch's namespace that scripts call around the ops: frombuffer, rms_norm,
is_inference, index_put, the warn-always flag, the inter-op thread count, set_flush_denormal and
get_device_module."""

import builtins
import os
import types
import warnings

# PyTorch's device types, in the order of its message for an unknown one.
_DEVICE_TYPES = (
    "cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta hpu "
    "mtia privateuseone"
).split()


def _device_type(device):
    """The type of a device given as a string or a oneflow.device (PyTorch's device strings,
    including the types oneflow has no device for)."""
    import oneflow

    if isinstance(device, oneflow.device):
        return device.type
    if not isinstance(device, str):
        raise RuntimeError(
            f"Invalid value of device '{device}', expect oneflow.device, str, or None"
        )
    kind = device.split(":", 1)[0]
    if kind not in _DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
            f"{device}"
        )
    return kind


# ---- frombuffer ----------------------------------------------------------------------------

_warned_read_only = [False]


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor viewing the memory of an object with the buffer protocol (bytearray, array,
    mmap, ...): writes through either are seen by the other, as PyTorch's."""
    import numpy as np

    import oneflow

    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    size = oneflow.empty(0, dtype=dtype).element_size()
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({length} bytes) minus 1"
        )
    if count < 0:
        if (length - offset) % size != 0:
            raise ValueError(
                f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                f"multiple of element size ({size})"
            )
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(
            f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({length} bytes)"
        )
    raw = np.frombuffer(buffer, np.uint8)[offset : offset + count * size]
    if not raw.flags.writeable and (is_warn_always_enabled() or not _warned_read_only[0]):
        _warned_read_only[0] = True
        warnings.warn(
            "The given buffer is not writable, and OneFlow does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.",
            UserWarning,
            stacklevel=2,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # from_numpy's own warning about read-only arrays
        t = oneflow.from_numpy(raw)
    if dtype != oneflow.uint8:
        t = t.view(dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---- small functions -------------------------------------------------------------------------


def is_inference(input):
    """Whether `input` was made in inference mode (Tensor.is_inference)."""
    return input.is_inference()


def index_put(input, indices, values, accumulate=False):
    """A copy of input with values put at indices (added to it with accumulate)."""
    return input.index_put(indices, values, accumulate)


_warn_always = [False]


def set_warn_always(b, /):
    """When True, the warnings oneflow gives once per process are given every time."""
    _warn_always[0] = builtins.bool(b)


def is_warn_always_enabled():
    return _warn_always[0]


def _default_interop_threads():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_interop_threads = [None]  # set once, as PyTorch's


def get_num_interop_threads():
    """The number of threads for inter-op parallelism (kept for PyTorch's API: oneflow's ops
    run in order on the eager engine's stream)."""
    n = _interop_threads[0]
    return _default_interop_threads() if n is None else n


def set_num_interop_threads(n):
    """Sets get_num_interop_threads(); as PyTorch's, only once."""
    if not isinstance(n, builtins.int) or isinstance(n, builtins.bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop_threads[0] is not None:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _interop_threads[0] = n


def set_flush_denormal(mode):
    """Flushing denormal floats to zero is not supported here (oneflow's kernels run on the
    engine's threads, whose floating-point modes it does not set): False, as PyTorch's answer
    on a CPU without it."""
    return False


def get_device_module(device=None):
    """The module of a device type (oneflow.cuda for "cuda:0", oneflow.cpu, oneflow.xpu, ...);
    without a device, the current accelerator's, else oneflow.cpu."""
    import oneflow

    if device is None:
        kind = "cuda" if oneflow.cuda.is_available() else "cpu"
    else:
        kind = _device_type(device)
    module = getattr(oneflow, kind, None)
    if not isinstance(module, types.ModuleType):
        raise RuntimeError(
            f"Device '{kind}' does not have a corresponding module registered as 'oneflow.{kind}'."
        )
    return module


def functions():
    from oneflow.nn import functional

    return dict(
        frombuffer=frombuffer,
        is_inference=is_inference,
        index_put=index_put,
        rms_norm=functional.rms_norm,
        set_warn_always=set_warn_always,
        is_warn_always_enabled=is_warn_always_enabled,
        get_num_interop_threads=get_num_interop_threads,
        set_num_interop_threads=set_num_interop_threads,
        set_flush_denormal=set_flush_denormal,
        get_device_module=get_device_module,
    )
