"""oneflow.cuda: CUDA device queries, the current device, the CUDA random generators and the
legacy CUDA tensor types.

Without a usable CUDA device the functions behave as PyTorch's: seeding and setting a random
state do nothing, reading a state or a device's properties raises (AssertionError in a build
without CUDA, RuntimeError when the build has CUDA but the machine has no device)."""

import random as _random

from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import (
    _C,
    OutOfMemoryError,  # noqa: F401  (torch.cuda.OutOfMemoryError)
)


def is_available():
    return _internal.with_cuda and _internal.cuda_device_count() > 0


def is_bf16_supported(including_emulation=True):
    """Whether the current CUDA device computes in bfloat16 (compute capability 8.0 and up;
    with emulation, any device); False without a usable GPU."""
    if not is_available():
        return False
    if including_emulation:
        return True
    return get_device_capability(current_device())[0] >= 8


def device_count():
    return _internal.cuda_device_count() if _internal.with_cuda else 0


def is_initialized():
    return is_available()


def _check_available(what):
    if not _internal.with_cuda:
        raise AssertionError(
            f"oneflow.cuda.{what}: this oneflow was built without CUDA support "
            "(ONEFLOW_WITH_CUDA=OFF)"
        )
    if _internal.cuda_device_count() == 0:
        raise RuntimeError(f"oneflow.cuda.{what}: no CUDA GPUs are available")


def _index(device, what, optional=False):
    """The CUDA device index named by an int, a string or a flow.device (None: the current)."""
    if device is None:
        return current_device()
    if isinstance(device, bool) or not isinstance(device, (int, str, _internal.device)):
        raise TypeError(
            f"oneflow.cuda.{what}: expected a device index, a device string or a "
            f"oneflow.device, got {type(device).__name__}"
        )
    if isinstance(device, int):
        return device
    dev = _internal.device(device) if isinstance(device, str) else device
    if dev.type != "cuda":
        if optional and dev.type == "cpu":
            return -1
        raise ValueError(f"oneflow.cuda.{what}: expected a cuda device, but got: {dev}")
    return dev.index


def current_device():
    """The index of the device that "cuda" without an index names (0 until set_device)."""
    return _internal.cuda_current_device()


def set_device(device):
    """Makes `device` the one that "cuda" without an index names. A negative index does
    nothing, as in PyTorch."""
    index = _index(device, "set_device")
    if index < 0:
        return
    _check_available("set_device")
    if index >= device_count():
        raise RuntimeError(
            f"oneflow.cuda.set_device: invalid device ordinal {index}: "
            f"{device_count()} CUDA device(s) available"
        )
    _internal.cuda_set_device(index)


class _CudaDeviceProperties:
    """What oneflow.cuda.get_device_properties returns (PyTorch's field names)."""

    def __init__(self, name, major, minor, total_memory, multi_processor_count):
        self.name = name
        self.major = major
        self.minor = minor
        self.total_memory = total_memory
        self.multi_processor_count = multi_processor_count

    def __repr__(self):
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
            f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count})"
        )


def get_device_properties(device=None):
    _check_available("get_device_properties")
    index = _index(device, "get_device_properties")
    if not 0 <= index < device_count():
        raise AssertionError(f"oneflow.cuda.get_device_properties: invalid device id {index}")
    return _CudaDeviceProperties(*_internal.cuda_device_properties(index))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    props = get_device_properties(device)
    return props.major, props.minor


def synchronize(device=None):
    """Waits for the queued CPU ops and for all work on the CUDA device."""
    _internal.synchronize()
    if is_available():
        _internal.cuda_synchronize(_index(device, "synchronize"))


def _stats_device(device, what):
    """The CUDA device a memory query names, or None without a usable GPU (the queries then
    give 0 and an empty dict, as PyTorch's do without CUDA)."""
    if not is_available():
        return None
    return f"cuda:{_index(device, what)}"


def memory_allocated(device=None):
    d = _stats_device(device, "memory_allocated")
    return 0 if d is None else _internal.memory_allocated(d)


def memory_reserved(device=None):
    d = _stats_device(device, "memory_reserved")
    return 0 if d is None else _internal.memory_reserved(d)


def memory_stats(device=None):
    """The caching allocator's counters, under PyTorch's key names (a subset):
    allocated_bytes.all.current / .peak, reserved_bytes.all.current / .peak,
    allocation.all.allocated."""
    import collections

    d = _stats_device(device, "memory_stats")
    return collections.OrderedDict(sorted(_internal._memory_stats(d).items()) if d else [])


def max_memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def max_memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None):
    d = _stats_device(device, "reset_peak_memory_stats")
    if d is not None:
        _internal._reset_peak_memory_stats(d)


reset_max_memory_allocated = reset_peak_memory_stats
memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def empty_cache():
    if is_available():
        _internal.empty_cache("cuda:0")


# ---- random generators: one per device, separate from the CPU's ---------------------------


def _generator(index):
    return _C.default_generator_of(f"cuda:{index}")


def manual_seed(seed):
    """Seeds the current device's generator (nothing without a CUDA device)."""
    if is_available():
        _generator(current_device()).manual_seed(seed)


def manual_seed_all(seed):
    """Seeds every CUDA device's generator (nothing without a CUDA device)."""
    for i in range(device_count()):
        _generator(i).manual_seed(seed)


def seed():
    """Seeds the current device's generator with a random number."""
    manual_seed(_random.getrandbits(63))


def seed_all():
    """Seeds every device's generator with one random number."""
    manual_seed_all(_random.getrandbits(63))


def initial_seed():
    _check_available("initial_seed")
    return _generator(current_device()).initial_seed()


def get_rng_state(device="cuda"):
    """The state of a device's generator, as a uint8 CPU tensor."""
    _check_available("get_rng_state")
    return _generator(_index(device, "get_rng_state")).get_state()


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="cuda"):
    """Restores a state from get_rng_state (nothing without a CUDA device)."""
    index = _index(device, "set_rng_state")
    if is_available():
        _generator(index).set_state(new_state)


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---- legacy tensor types (oneflow.cuda.FloatTensor, ...) ----------------------------------


def _make_types():
    from oneflow.framework.misc_ops import LEGACY_TYPES, _legacy

    return {name: _legacy(name, dt, cuda=True) for name, dt in LEGACY_TYPES.items()}


globals().update(_make_types())
