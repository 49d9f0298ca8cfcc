"""oneflow.xpu (torch.xpu): Intel GPUs, which oneflow has no kernels for. As torch.xpu in a
build without XPU: nothing is available, the queries that need no device answer (0, False,
empty), seeding does nothing, and what needs a device raises AssertionError."""

import collections

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_arch_list",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_gencode_flags",
    "get_rng_state",
    "get_rng_state_all",
    "init",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "is_tf32_supported",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "synchronize",
]


def _unavailable(*args, **kwargs):
    raise AssertionError("OneFlow not compiled with XPU enabled")


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def empty_cache():
    """Nothing is cached without a device."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def memory_stats(device=None):
    return collections.OrderedDict()


def memory_stats_as_nested_dict(device=None):
    return {}


def memory_snapshot():
    return []


def manual_seed(seed):
    """Seeds nothing: there is no XPU generator (as PyTorch's without XPU, silently)."""


def manual_seed_all(seed):
    """Seeds nothing: there is no XPU generator."""


def seed():
    """Seeds nothing: there is no XPU generator."""


def seed_all():
    """Seeds nothing: there is no XPU generator."""


def get_rng_state_all():
    return []


def set_rng_state_all(new_states):
    """Nothing to set: there is no XPU generator."""


current_device = _unavailable
get_device_capability = _unavailable
get_device_name = _unavailable
get_device_properties = _unavailable
get_rng_state = _unavailable
init = _unavailable
initial_seed = _unavailable
set_device = _unavailable
set_rng_state = _unavailable
synchronize = _unavailable
