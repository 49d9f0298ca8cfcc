"""oneflow.distributed: torch.distributed's process-group API over oneflow.comm's communicator.

The default process group (WORLD) and new_group's, on the Gloo backend for CPU tensors. Every
collective is queued on its group's communication stream, with or without async_op: reading a
result waits for it and later ops on the same tensors run after it. async_op=True adds a Work
whose wait() blocks until the queued work ran. Processes are started by
`python -m oneflow.distributed.launch` (oneflow.distributed.launch, imported on first use so
`-m` runs it cleanly)."""

import contextlib
import datetime
import enum
import os
import urllib.parse

import oneflow as flow
from oneflow import _oneflow_internal as _internal
from oneflow import comm as _comm
from oneflow import env as _env


def is_available():
    return True


def is_gloo_available():
    return True


def is_nccl_available():
    return False


def is_mpi_available():
    return False


class Backend:
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"


class ReduceOp:
    """Reductions: SUM, PRODUCT, MIN, MAX, and AVG for floating tensors (a sum divided by the
    world size). BAND, BOR, BXOR and PREMUL_SUM are named but not supported."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


_COMM_OPS = {
    ReduceOp.SUM: "sum",
    ReduceOp.PRODUCT: "product",
    ReduceOp.MIN: "min",
    ReduceOp.MAX: "max",
}


class _World:
    def __repr__(self):
        return "<oneflow.distributed.group.WORLD>"


class GroupMember:
    WORLD = _World()
    NON_GROUP_MEMBER = None


class ProcessGroup:
    """A group of some of the ranks (new_group): collectives called with it run among its ranks
    only (a Gloo context of its own, connected at the first one); src and dst name global
    ranks, as PyTorch's. A rank outside the group gets None from them and changes nothing."""

    _next_id = 1  # every process makes its groups in the same order (as PyTorch requires)

    def __init__(self, ranks):
        self._ranks = list(ranks)
        # Two groups of the same ranks are apart (a Gloo context and a stream each)
        self._id = ProcessGroup._next_id
        ProcessGroup._next_id += 1

    def rank(self):
        """This process's rank in the group, -1 outside it."""
        me = _internal._comm_rank()
        return self._ranks.index(me) if me in self._ranks else -1

    def size(self):
        return len(self._ranks)

    def __repr__(self):
        return f"<oneflow.distributed.ProcessGroup ranks={self._ranks}>"


group = GroupMember


class Work:
    """The handle of an op called with async_op=True."""

    def __init__(self, result=(), source_rank=None, group=None):
        self._result = list(result)
        self._source_rank = source_rank
        self._group = group
        self._done = False

    def wait(self, timeout=None):
        """Blocks until the op ran; raises its error (a dead peer, a timeout). Waits for this
        op's tensors (or, for an op without them, its group's queued work and sends), not for
        other groups' collectives."""
        _post_receives()
        if not self._done and _internal._comm_initialized():
            if self._result:
                _internal._comm_wait_tensors(self._result)
            else:  # a send is complete once its peer has it: the posted sends too
                g = _sub(self._group)
                _internal._comm_wait_group(
                    None if g is None else g._ranks, 0 if g is None else g._id
                )
            self._done = True
        return True

    def is_completed(self):
        # Conservative without a per-op query: done once nothing is queued on any stream.
        _post_receives()
        return self._done or _internal.pending_instructions() == 0

    def is_success(self):
        return self.is_completed()

    def result(self):
        return self._result

    def synchronize(self):
        self.wait()

    def source_rank(self):
        """The sender's rank, for the Work of irecv."""
        if self._source_rank is None:
            raise ValueError("source_rank: this Work is not a receive")
        return self._source_rank


def _finish(async_op, group, *tensors):
    return Work(tensors, group=group) if async_op else None


# ---- the default group -----------------------------------------------------------------------

_NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


# Whether init_process_group made (or took over) the default group, as opposed to OneFlow-style
# code joining it implicitly.
_state = {"explicit": False}


def is_initialized():
    return _internal._comm_initialized()


def _require_initialized(op):
    if not _internal._comm_initialized():
        raise ValueError(f"{op}: {_NOT_INITIALIZED}")


def _check_group(op, group):
    if group is not None and group is not GroupMember.WORLD and not isinstance(group, ProcessGroup):
        raise TypeError(f"{op}: expected a group made by new_group (or None), got {group!r}")


def _sub(group):
    """The ProcessGroup of a subset of the ranks, or None for the default group."""
    return group if isinstance(group, ProcessGroup) else None


def _scope(group):
    """Runs the collectives inside it among the group's ranks (rank and world size are the
    group's there)."""
    g = _sub(group)
    return _internal._CommGroupScope(g._ranks, g._id) if g is not None else contextlib.nullcontext()


def _group_rank(op, name, group, rank):
    """A global rank (src, dst) as a rank of the group."""
    g = _sub(group)
    if g is None or rank is None:
        return rank
    if rank not in g._ranks:
        raise ValueError(f"{op}: {name} rank {rank} is not in the group (ranks {g._ranks})")
    return g._ranks.index(rank)


def _peer(op, name, group, rank, group_rank, default=None):
    """The rank within the group of a src or dst given as a global rank (`rank`) or as a rank
    of the group (`group_rank`, PyTorch's group_src/group_dst); exactly one of them, or
    neither when the op has a default."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"{op}: cannot specify both {name} and group_{name}")
        g = _sub(group)
        size = len(g._ranks) if g is not None else _internal._comm_world_size()
        if not 0 <= group_rank < size:
            raise ValueError(
                f"{op}: group_{name} {group_rank} is not a rank of the group (0..{size - 1})"
            )
        return group_rank
    if rank is None:
        if default is None:
            raise ValueError(f"{op}: must specify {name} or group_{name}")
        rank = default
    return _group_rank(op, name, group, rank)


def _member(op, group):
    """Checks the call; whether this process takes part (outside a group, PyTorch's
    collectives return None without doing anything). Receives that irecv deferred on the group
    are queued first, unless this is a send (Note [Receives after sends])."""
    _start(op, group)
    if op not in ("isend", "send", "irecv"):
        _post_receives(group)
    g = _sub(group)
    return g is None or g.rank() >= 0


def _check_backend(op, backend):
    if backend is None:
        return
    if not isinstance(backend, str):
        raise TypeError(f"{op}: expected backend to be a str, got {type(backend).__name__}")
    # "gloo", or per-device lists such as "cpu:gloo,cuda:nccl"
    names = {part.split(":")[-1].strip().lower() for part in backend.split(",")}
    if "nccl" in names:
        raise NotImplementedError(
            f"{op}: the NCCL backend is not built yet; use backend='gloo' with CPU tensors"
        )
    unknown = names - {"gloo"}
    if unknown:
        raise ValueError(
            f"{op}: unsupported backend {backend!r} (supported: 'gloo'; 'nccl' is planned)"
        )


def _timeout_seconds(op, timeout):
    if timeout is None:
        return _comm._timeout_from_env(op)
    seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else timeout
    if not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ValueError(f"{op}: expected a positive timeout, got {timeout!r}")
    return float(seconds)


def _rendezvous_int(op, scheme, name, arg, query, variable):
    """An explicit argument (>= 0) wins, then the URL's query, then (env://) the variable."""
    if arg is not None and arg >= 0:
        return arg
    if name in query:
        try:
            return int(query[name][0])
        except ValueError:
            raise ValueError(f"{op}: {name} in init_method must be an integer") from None
    if scheme == "env":
        value = _comm._env_int(op, variable, None)
        if value is not None:
            return value
        raise ValueError(
            f"{op}: environment variable {variable} expected, but not set (env:// rendezvous)"
        )
    raise ValueError(f"{op}: {name} missing ({scheme}:// rendezvous needs {name}=...)")


def init_process_group(
    backend=None,
    init_method=None,
    timeout=None,
    world_size=-1,
    rank=-1,
    store=None,
    group_name="",
    pg_options=None,
    device_id=None,
):
    """Joins the default group. init_method "env://" (the default) reads RANK, WORLD_SIZE,
    MASTER_ADDR (default 127.0.0.1) and MASTER_PORT; "tcp://host:port" takes rank and
    world_size from the arguments. The timeout (default ONEFLOW_COMM_TIMEOUT seconds, else 300)
    bounds the rendezvous and every later wait."""
    op = "init_process_group"
    if is_initialized():
        if _state["explicit"]:
            raise ValueError("trying to initialize the default process group twice!")
        # Joined implicitly by OneFlow-style code (a global tensor, flow.comm, DDP) from the
        # launcher's environment: the same group, which this call now names as its own.
        _check_backend(op, backend)
        if (rank >= 0 and rank != _internal._comm_rank()) or (
            world_size >= 0 and world_size != _internal._comm_world_size()
        ):
            raise ValueError(
                f"{op}: the process already joined a group as rank {_internal._comm_rank()} of "
                f"{_internal._comm_world_size()}, got rank={rank}, world_size={world_size}"
            )
        _state["explicit"] = True
        return
    _check_backend(op, backend)
    if store is not None:
        raise NotImplementedError(
            f"{op}: store= is not supported; use init_method 'env://' or 'tcp://host:port'"
        )
    url = urllib.parse.urlparse(init_method or "env://")
    scheme = url.scheme
    query = urllib.parse.parse_qs(url.query)
    if scheme == "file":
        raise NotImplementedError(
            f"{op}: file:// rendezvous is not supported; use 'env://' or 'tcp://host:port'"
        )
    if scheme not in ("env", "tcp"):
        raise ValueError(
            f"{op}: unsupported init_method {init_method!r} (expected 'env://' or "
            "'tcp://host:port')"
        )
    rank = _rendezvous_int(op, scheme, "rank", rank, query, "RANK")
    world_size = _rendezvous_int(op, scheme, "world_size", world_size, query, "WORLD_SIZE")
    if scheme == "tcp":
        if not url.hostname or url.port is None:
            raise ValueError(f"{op}: expected init_method 'tcp://host:port', got {init_method!r}")
        master_addr, master_port = url.hostname, url.port
    else:
        master_addr = os.environ.get("MASTER_ADDR", "").strip() or "127.0.0.1"
        master_port = _comm._env_int(op, "MASTER_PORT", None)
        if master_port is None:
            if world_size > 1:
                raise ValueError(
                    f"{op}: environment variable MASTER_PORT expected, but not set (env:// "
                    "rendezvous)"
                )
            master_port = 0
    _comm._init(op, rank, world_size, master_addr, master_port, _timeout_seconds(op, timeout))
    _state["explicit"] = True


def destroy_process_group(group=None):
    """Leaves the default group once the queued collectives ran; init_process_group may follow."""
    op = "destroy_process_group"
    _check_group(op, group)
    _require_initialized(op)
    _internal._comm_destroy()
    _state["explicit"] = False


def new_group(
    ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False
):
    """A group of `ranks` (sorted, as PyTorch's; every rank of the default group when None),
    for the collectives' `group=`. Its members connect at its first collective."""
    op = "new_group"
    _require_initialized(op)
    _check_backend(op, backend)
    world = _internal._comm_world_size()
    if ranks is None:  # a group of every rank, apart from the default one (as PyTorch's)
        ranks = range(world)
    ranks = sorted(int(r) for r in ranks)
    if len(set(ranks)) != len(ranks) or any(not 0 <= r < world for r in ranks):
        raise ValueError(f"{op}: expected distinct ranks in [0, {world - 1}], got {ranks}")
    if not ranks:
        raise ValueError(f"{op}: a group needs at least one rank")
    g = ProcessGroup(ranks)
    if g.rank() >= 0:  # every process calls new_group (as PyTorch's): the members connect now
        with _internal._CommGroupScope(ranks, g._id):
            pass
    return g


def get_rank(group=None):
    """This process's rank; before the group is joined, the launcher's (OneFlow's
    oneflow.distributed.get_rank needs no process group). In a group from new_group: the rank
    within it, -1 outside it."""
    _check_group("get_rank", group)
    if _sub(group) is not None:
        return group.rank()
    return _env.get_rank()


def get_world_size(group=None):
    """The number of processes (of the group); before the group is joined, the launcher's."""
    _check_group("get_world_size", group)
    if _sub(group) is not None:
        return group.size() if group.rank() >= 0 else -1  # PyTorch's -1 outside the group
    return _env.get_world_size()


def is_multi_client():
    """OneFlow's: every process runs its own Python program (always true here)."""
    return True


def get_backend(group=None):
    _check_group("get_backend", group)
    _require_initialized("get_backend")
    if _sub(group) is not None and group.rank() < 0:
        raise ValueError("get_backend: invalid process group specified (this rank is not in it)")
    return Backend.GLOO


def _start(op, group):
    _check_group(op, group)
    _require_initialized(op)


def _comm_op(op, name, tensor):
    """The communicator's name of a ReduceOp; AVG is a sum divided afterwards."""
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"{name}: expected op to be a ReduceOp, got {op!r}")
    if op == ReduceOp.AVG:
        if not tensor.dtype.is_floating_point:
            raise ValueError(
                f"{name}: ReduceOp.AVG needs a floating-point tensor, got "
                f"{_comm._dtype_name(tensor.dtype)}"
            )
        return "sum"
    if op not in _COMM_OPS:
        raise NotImplementedError(
            f"{name}: ReduceOp.{op.name} is not supported (supported: SUM, PRODUCT, MIN, MAX, AVG)"
        )
    return _COMM_OPS[op]


def _average(op, tensor):
    if op == ReduceOp.AVG and tensor.numel() > 0:
        with flow.no_grad():
            tensor.div_(_internal._comm_world_size())


# ---- collectives -----------------------------------------------------------------------------


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    if not _member("all_reduce", group):
        return None
    with _scope(group):
        _comm._check_tensor("all_reduce", "tensor", tensor)
        _comm._all_reduce(tensor, _comm_op(op, "all_reduce", tensor))
        _average(op, tensor)
    return _finish(async_op, group, tensor)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    if not _member("reduce", group):
        return None
    dst = _peer("reduce", "dst", group, dst, group_dst)
    with _scope(group):
        _comm._check_tensor("reduce", "tensor", tensor)
        _comm._reduce(tensor, dst, _comm_op(op, "reduce", tensor))
        if _internal._comm_rank() == dst:
            _average(op, tensor)
    return _finish(async_op, group, tensor)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    if not _member("broadcast", group):
        return None
    src = _peer("broadcast", "src", group, src, group_src)
    with _scope(group):
        _comm.broadcast(tensor, src)
    return _finish(async_op, group, tensor)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    if not _member("all_gather", group):
        return None
    with _scope(group):
        _comm.all_gather(tensor_list, tensor)
    return _finish(async_op, group, *tensor_list)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    if not _member("all_gather_into_tensor", group):
        return None
    with _scope(group):
        _comm.all_gather_into_tensor(output_tensor, input_tensor)
    return _finish(async_op, group, output_tensor)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    if not _member("gather", group):
        return None
    dst = _peer("gather", "dst", group, dst, group_dst, default=0)
    with _scope(group):
        _comm.gather(tensor, gather_list, dst)
    return _finish(async_op, group, *(gather_list or ()))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    if not _member("scatter", group):
        return None
    src = _peer("scatter", "src", group, src, group_src, default=0)
    with _scope(group):
        _comm.scatter(tensor, scatter_list, src)
    return _finish(async_op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    if not _member("reduce_scatter", group):
        return None
    with _scope(group):
        _comm._check_tensor("reduce_scatter", "output", output)
        _comm._reduce_scatter(output, input_list, _comm_op(op, "reduce_scatter", output))
        _average(op, output)
    return _finish(async_op, group, output)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    if not _member("reduce_scatter_tensor", group):
        return None
    with _scope(group):
        _comm._check_tensor("reduce_scatter_tensor", "output", output)
        _comm._reduce_scatter_tensor(output, input, _comm_op(op, "reduce_scatter_tensor", output))
        _average(op, output)
    return _finish(async_op, group, output)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    if not _member("all_to_all", group):
        return None
    with _scope(group):
        _comm.all_to_all(output_tensor_list, input_tensor_list)
    return _finish(async_op, group, *output_tensor_list)


def _check_splits(op, name, splits, tensor, world_size):
    if splits is None:
        return
    splits = list(splits)
    if len(splits) != world_size:
        raise ValueError(f"{op}: expected {world_size} {name}, got {len(splits)}")
    if sum(splits) != tensor.shape[0]:
        raise ValueError(
            f"{op}: {name} {splits} sum to {sum(splits)}, expected the size of dim 0 "
            f"({tensor.shape[0]})"
        )
    if len(set(splits)) > 1:
        raise NotImplementedError(f"{op}: uneven {name} {splits} are not supported yet")


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False
):
    """Block j (along dim 0) of rank i's input lands in block i of rank j's output. Only equal
    blocks: dim 0 divided evenly by the world size."""
    op = "all_to_all_single"
    if not _member(op, group):
        return None
    with _scope(group):
        _all_to_all_single(op, output, input, output_split_sizes, input_split_sizes)
    return _finish(async_op, group, output)


def _all_to_all_single(op, output, input, output_split_sizes, input_split_sizes):
    _comm._check_tensor(op, "input", input)
    _comm._check_like(op, "output", output, input, "input", same_shape=False)
    world_size = _internal._comm_world_size()
    for name, t in (("input", input), ("output", output)):
        if t.ndim == 0:
            raise ValueError(f"{op}: {name} must have at least one dimension")
    _check_splits(op, "input_split_sizes", input_split_sizes, input, world_size)
    _check_splits(op, "output_split_sizes", output_split_sizes, output, world_size)
    for name, t in (("input", input), ("output", output)):
        if t.shape[0] % world_size:
            raise ValueError(
                f"{op}: the size of {name}'s dim 0 ({t.shape[0]}) does not divide equally "
                f"across world size {world_size}"
            )
    _comm._check_numel(op, "output", output, input.numel(), "as many as input")
    if input.numel() > 0:
        with flow.no_grad():
            inp = _comm._contiguous(input)
            _comm._write_through(output, lambda out: _internal._comm_all_to_all(out, inp))


def barrier(group=None, async_op=False, device_ids=None):
    """Blocks until every rank (of the group) called barrier() (with async_op, until
    Work.wait())."""
    if not _member("barrier", group):
        return None
    with _scope(group):
        _internal._comm_barrier()
    work = Work(group=group)
    if async_op:
        return work
    work.wait()
    return None


# ---- point to point --------------------------------------------------------------------------


def _check_peer(op, name, peer):
    if peer is None:
        raise NotImplementedError(f"{op}: receiving from any rank ({name}=None) is not supported")
    peer = _comm._check_rank_arg(op, name, peer, _internal._comm_world_size())
    if peer == _internal._comm_rank():
        raise ValueError(f"{op}: invalid {name} rank {peer}: it is the rank of the current process")
    return peer


def _check_tag(op, tag):
    if isinstance(tag, bool) or not isinstance(tag, int) or tag < 0:
        raise ValueError(f"{op}: expected tag to be a non-negative int, got {tag!r}")


# Note [Receives after sends]: a group's communication stream runs its tasks one after another,
# and a receive waits there until its message arrives. Two ranks that each irecv and then isend
# (a common exchange) would both wait in their receive with their send queued behind it. So
# irecv only checks its arguments and records the receive; it is queued once the sends issued
# after it are: at the next op of its group that is not a send, or at a Work.wait() (each
# group has a stream of its own: another group's op does not need it posted). Its tensor is
# undefined until wait(), as PyTorch says.
_deferred_receives = []


_ALL = object()


def _group_id(group):
    g = _sub(group)
    return 0 if g is None else g._id


def _post_receives(group=_ALL):
    """Queues the receives irecv deferred: those of `group` (at its ops), or all."""
    key = _ALL if group is _ALL else _group_id(group)
    keep = []
    for gid, post in list(_deferred_receives):
        if key is _ALL or gid == key:
            post()
        else:
            keep.append((gid, post))
    _deferred_receives[:] = keep


def _isend(op, tensor, dst, group, tag, group_dst=None):
    """Whether this process sent (outside the group it does nothing)."""
    if not _member(op, group):
        return False
    _comm._check_tensor(op, "tensor", tensor)
    _check_tag(op, tag)
    peer = _peer(op, "dst", group, dst, group_dst)
    with _scope(group):
        peer = _check_peer(op, "dst", peer)
        if tensor.numel() > 0:
            _internal._comm_send(_comm._contiguous(tensor), peer, tag)
    return True


def _global_src(op, group, src, group_src):
    """src as a global rank (None: any source) from src or group_src."""
    if group_src is None:
        return src
    peer = _peer(op, "src", group, src, group_src)
    g = _sub(group)
    return g._ranks[peer] if g is not None else peer


def _irecv(op, tensor, src, group, tag, group_src=None):
    if not _member(op, group):
        return None
    _comm._check_tensor(op, "tensor", tensor)
    _check_tag(op, tag)
    src = _global_src(op, group, src, group_src)
    peer = _group_rank(op, "src", group, src)
    with _scope(group):
        peer = _check_peer(op, "src", peer)
        if tensor.numel() > 0:
            with flow.no_grad():
                _comm._write_through(tensor, lambda t: _internal._comm_recv(t, peer, tag))
    return src


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Queues sending `tensor` to rank `dst` (or group_dst, a rank of the group); later writes
    to the tensor wait for it."""
    return Work(group=group) if _isend("isend", tensor, dst, group, tag, group_dst) else None


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into `tensor` (of the sent size) from rank `src` (or group_src, a rank of the
    group); queued once the sends issued after it are (Note [Receives after sends]), at the
    latest by Work.wait()."""
    if not _member("irecv", group):
        return None
    _comm._check_tensor("irecv", "tensor", tensor)
    _check_tag("irecv", tag)
    src = _global_src("irecv", group, src, group_src)
    peer = _group_rank("irecv", "src", group, src)
    with _scope(group):
        peer = _check_peer("irecv", "src", peer)

    def post():
        if tensor.numel() > 0:
            with _scope(group), flow.no_grad():
                _comm._write_through(tensor, lambda t: _internal._comm_recv(t, peer, tag))

    _deferred_receives.append((_group_id(group), post))
    return Work([tensor], source_rank=src, group=group)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends `tensor` to rank `dst` (or group_dst, a rank of the group; queued, as every op:
    later writes to it wait)."""
    _isend("send", tensor, dst, group, tag, group_dst)


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into `tensor` from rank `src` (or group_src, a rank of the group); returns the
    sender's global rank (-1 outside the group, as PyTorch's)."""
    got = _irecv("recv", tensor, src, group, tag, group_src)
    return -1 if got is None else got


from oneflow.distributed.objects import (  # noqa: E402,F401
    P2POp,
    all_gather_object,
    batch_isend_irecv,
    broadcast_object_list,
    default_pg_timeout,
    gather_object,
    get_global_rank,
    get_group_rank,
    get_node_local_rank,
    get_process_group_ranks,
    is_torchelastic_launched,
    monitored_barrier,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)


def __getattr__(name):
    # The launcher is a submodule run with `python -m`; importing it with the package would
    # make runpy warn that it was imported before it ran.
    if name == "launch":
        import importlib

        return importlib.import_module("oneflow.distributed.launch")
    raise AttributeError(f"module 'oneflow.distributed' has no attribute {name!r}")
