"""oneflow.env: this process's place in a multi-process run. Once the communicator is initialised
(by the first oneflow.comm op or oneflow.distributed.init_process_group) its rank and size are
the truth; before that, the variables `python -m oneflow.distributed.launch` sets (RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE), so a program can shard its data before it
communicates. Without a launcher the process is rank 0 of 1."""

import os

from oneflow import _oneflow_internal as _internal


def _env_int(name, default):
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            f"oneflow.env: environment variable {name} must be an integer, got {value!r}"
        ) from None


def _communicator_initialized():
    # getattr: the rank queries work on a build whose communicator bindings are missing too.
    initialized = getattr(_internal, "_comm_initialized", None)
    return initialized is not None and initialized()


def get_rank():
    """The rank of this process among all processes (0 without a launcher)."""
    if _communicator_initialized():
        return _internal._comm_rank()
    return _env_int("RANK", 0)


def get_world_size():
    """The number of processes in the run (1 without a launcher)."""
    if _communicator_initialized():
        return _internal._comm_world_size()
    return _env_int("WORLD_SIZE", 1)


def is_multi_client():
    """OneFlow's: every process runs its own Python program (always true here)."""
    return True


def get_local_rank():
    """The rank of this process among the processes on its machine; unique per machine only."""
    return _env_int("LOCAL_RANK", 0)


def get_node_size():
    """The number of machines in the run: the world size over the processes per machine."""
    local_world_size = _env_int("LOCAL_WORLD_SIZE", 0)
    if local_world_size <= 0:
        return 1
    return max(1, get_world_size() // local_world_size)


def all_device_placement(device_type):
    """A placement over every rank of the run, on `device_type` ("cpu" or "cuda")."""
    from oneflow.framework.placement import placement

    return placement(device_type, list(range(get_world_size())))


def init_rdma():
    """RDMA transport: not built; collectives run over TCP."""
    raise NotImplementedError(
        "init_rdma: RDMA is not supported by this build; collectives run over TCP (Gloo)"
    )


def rdma_is_initialized():
    return False
