"""oneflow.random: the default generator's seed and state (torch.random), and fork_rng."""

import contextlib
import warnings

import oneflow as _flow
from oneflow.framework.creation import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

default_generator = _flow.default_generator

__all__ = [
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None
):
    """Restores the CPU generator's state, and the states of `devices` of `device_type` (all
    visible ones when None), when the block exits; with enabled=False it does nothing."""
    if not enabled:
        yield
        return
    device_type = "cuda" if device_type is None else _flow.device(device_type).type
    if device_type not in ("cuda", "cpu"):
        raise RuntimeError(f"{_caller}: unsupported device type {device_type!r}")
    accel = device_type == "cuda" and _flow.cuda.is_available()
    if devices is None:
        count = _flow.cuda.device_count() if accel else 0
        if count > 1 and _caller == "fork_rng":
            warnings.warn(
                f"{_caller}: forking the random state of all {count} visible CUDA devices; pass "
                f"{_devices_kw}= to name the ones used",
                stacklevel=3,
            )
        devices = list(range(count))
    else:
        devices = [_flow.cuda._index(d, _caller) for d in devices] if accel else []
    cpu_state = get_rng_state()
    device_states = [_flow.cuda.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            _flow.cuda.set_rng_state(state, d)
