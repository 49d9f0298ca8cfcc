"""oneflow.mps (torch.mps): Apple's Metal GPUs, which oneflow has no kernels for. As torch.mps
where there is no MPS device: nothing is available, manual_seed does nothing, and what needs
the device raises RuntimeError."""

__all__ = [
    "current_allocated_memory",
    "device_count",
    "driver_allocated_memory",
    "empty_cache",
    "get_rng_state",
    "is_available",
    "manual_seed",
    "recommended_max_memory",
    "seed",
    "set_per_process_memory_fraction",
    "set_rng_state",
    "synchronize",
]


def _unavailable(what):
    def fn(*args, **kwargs):
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")

    fn.__name__ = what
    return fn


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Seeds nothing: there is no MPS generator (as PyTorch's without MPS, silently)."""


synchronize = _unavailable("deviceSynchronize")
empty_cache = _unavailable("emptyCache")
get_rng_state = _unavailable("getDefaultGenerator")
set_rng_state = _unavailable("getDefaultGenerator")
seed = _unavailable("getDefaultGenerator")
current_allocated_memory = _unavailable("getCurrentAllocatedMemory")
driver_allocated_memory = _unavailable("getDriverAllocatedMemory")
recommended_max_memory = _unavailable("getRecommendedMaxMemory")
set_per_process_memory_fraction = _unavailable("setMemoryFraction")
