"""torch.distributed's collectives of picklable Python objects, the rank queries of the default
group, batched point-to-point ops and monitored_barrier, over the tensor collectives.

An object travels as its pickle in a uint8 tensor; where the ranks' pickles differ in size, the
sizes go first (one int64 each) and every rank pads its pickle to the largest. As in PyTorch,
unpickling runs arbitrary code: only exchange objects between trusted ranks.
"""

import functools
import inspect
import io
import pickle
from datetime import timedelta

import numpy as np

import oneflow as flow
from oneflow import _oneflow_internal as _internal

default_pg_timeout = timedelta(minutes=30)


def _dist():
    from oneflow import distributed

    return distributed


def _start(op, group):
    """The world size and rank of the group the call runs in (inside _in_group: its group's)."""
    _dist()._start(op, group)
    return _internal._comm_world_size(), _internal._comm_rank()


def _in_group(*rank_args, returns_rank=False, defaults=None):
    """Runs the function among the ranks of its `group` (a new_group): outside the group it
    returns None and does nothing; the rank arguments named (global ranks, as PyTorch's, or
    ranks of the group through group_<name>; `defaults` where neither is given) become ranks
    of the group, and so does a returned rank back."""

    def wrap(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args, **kwargs):
            d = _dist()
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            group = bound.arguments.get("group")
            if not d._member(fn.__name__, group):
                return None
            for name in rank_args:
                rank = bound.arguments[name]
                group_rank = bound.arguments.pop(f"group_{name}", None)
                if rank is None and group_rank is None and returns_rank:
                    continue  # a receive from any source
                bound.arguments[name] = d._peer(
                    fn.__name__, name, group, rank, group_rank, (defaults or {}).get(name)
                )
            with d._scope(group):
                out = fn(*bound.args, **bound.kwargs)
            if returns_rank and out is not None and d._sub(group) is not None:
                out = group._ranks[out]
            return out

        return call

    return wrap


def _to_tensor(obj):
    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    data = np.frombuffer(buf.getvalue(), dtype=np.uint8)
    return flow.tensor(data.copy(), dtype=flow.uint8), data.size


def _from_tensor(t, size):
    return pickle.loads(t[:size].numpy().tobytes())


def _gathered_sizes(size, world):
    sizes = flow.zeros(world, dtype=flow.int64)
    _internal._comm_all_gather(sizes, flow.tensor([size], dtype=flow.int64))
    return [int(s) for s in sizes.tolist()]


def _padded(t, length):
    if t.numel() == length:
        return t
    out = flow.zeros(length, dtype=flow.uint8)
    out[: t.numel()] = t
    return out


@_in_group()
def all_gather_object(object_list, obj, group=None):
    """Fills object_list (of world_size entries) with every rank's obj, in rank order."""
    world, _ = _start("all_gather_object", group)
    if len(object_list) != world:
        raise ValueError(
            f"all_gather_object: expected object_list of {world} entries (the world size), got "
            f"{len(object_list)}"
        )
    t, size = _to_tensor(obj)
    sizes = _gathered_sizes(size, world)
    longest = max(sizes)
    out = flow.zeros(world * longest, dtype=flow.uint8)
    if longest:
        _internal._comm_all_gather(out, _padded(t, longest))
    for r in range(world):
        object_list[r] = _from_tensor(out[r * longest : (r + 1) * longest], sizes[r])


@_in_group("dst", defaults={"dst": 0})
def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """On dst, fills object_gather_list with every rank's obj; other ranks pass None."""
    world, rank = _start("gather_object", group)
    if rank == dst and (object_gather_list is None or len(object_gather_list) != world):
        raise ValueError(
            f"gather_object: expected object_gather_list of {world} entries on rank {dst}"
        )
    t, size = _to_tensor(obj)
    sizes = _gathered_sizes(size, world)
    longest = max(sizes)
    out = flow.zeros(world * longest, dtype=flow.uint8) if rank == dst else None
    if longest:
        _internal._comm_gather(out, _padded(t, longest), dst)
    if rank == dst:
        for r in range(world):
            object_gather_list[r] = _from_tensor(out[r * longest : (r + 1) * longest], sizes[r])


@_in_group("src", defaults={"src": 0})
def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replaces the entries of object_list on every rank with those of rank src (the lists have
    the same length on every rank)."""
    world, rank = _start("broadcast_object_list", group)
    n = len(object_list)
    if rank == src:
        pieces = [_to_tensor(o) for o in object_list]
        sizes = flow.tensor([s for _, s in pieces], dtype=flow.int64)
    else:
        sizes = flow.zeros(n, dtype=flow.int64)
    if n:
        _internal._comm_broadcast(sizes, src)
    lengths = [int(s) for s in sizes.tolist()]
    total = sum(lengths)
    if rank == src:
        data = flow.cat([t for t, _ in pieces]) if n else flow.zeros(0, dtype=flow.uint8)
    else:
        data = flow.zeros(total, dtype=flow.uint8)
    if total:
        _internal._comm_broadcast(data, src)
    if rank != src:
        start = 0
        for i, length in enumerate(lengths):
            object_list[i] = _from_tensor(data[start : start + length], length)
            start += length


@_in_group("src", defaults={"src": 0})
def scatter_object_list(
    scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
    group_src=None,
):  # fmt: skip
    """Rank r receives entry r of src's scatter_object_input_list in
    scatter_object_output_list[0]."""
    world, rank = _start("scatter_object_list", group)
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError(
            "scatter_object_list: expected scatter_object_output_list to be a list of at least "
            "one element"
        )
    if rank == src and (
        scatter_object_input_list is None or len(scatter_object_input_list) != world
    ):
        raise ValueError(
            f"scatter_object_list: expected scatter_object_input_list of {world} entries on "
            f"rank {src}"
        )
    holder = [list(scatter_object_input_list) if rank == src else None]
    broadcast_object_list(holder, src)
    scatter_object_output_list[0] = holder[0][rank]


@_in_group("dst")
def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    """Sends the objects to rank dst (recv_object_list there receives them)."""
    _start("send_object_list", group)
    pieces = [_to_tensor(o) for o in object_list]
    sizes = flow.tensor([s for _, s in pieces], dtype=flow.int64)
    _internal._comm_send(sizes, dst, 0)
    if int(sizes.sum()):
        _internal._comm_send(flow.cat([t for t, _ in pieces]), dst, 0)


@_in_group("src", returns_rank=True)
def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Receives into object_list (of the sent length) the objects rank src sent; returns src."""
    _start("recv_object_list", group)
    if src is None:
        raise NotImplementedError("recv_object_list: receiving from any source (src=None)")
    sizes = flow.zeros(len(object_list), dtype=flow.int64)
    _internal._comm_recv(sizes, src, 0)
    lengths = [int(s) for s in sizes.tolist()]
    data = flow.zeros(sum(lengths), dtype=flow.uint8)
    if sum(lengths):
        _internal._comm_recv(data, src, 0)
    start = 0
    for i, length in enumerate(lengths):
        object_list[i] = _from_tensor(data[start : start + length], length)
        start += length
    return src


class P2POp:
    """A send or receive for batch_isend_irecv: op is isend or irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        d = _dist()
        if op not in (d.isend, d.irecv):
            raise ValueError("P2POp: expected op to be oneflow.distributed.isend or irecv")
        self.op, self.tensor, self.group, self.tag = op, tensor, group, tag
        if peer is not None and group_peer is not None:
            raise ValueError("P2POp: cannot specify both peer and group_peer")
        if peer is None and group_peer is None:
            raise ValueError("P2POp: must specify peer or group_peer")
        if group_peer is not None:  # a rank of the group: its global rank
            g = d._sub(group)
            size = len(g._ranks) if g is not None else d.get_world_size()
            if not 0 <= group_peer < size:
                raise ValueError(
                    f"P2POp: group_peer {group_peer} is not a rank of the group (0..{size - 1})"
                )
            peer = g._ranks[group_peer] if g is not None else group_peer
        self.peer = peer


def batch_isend_irecv(p2p_op_list):
    """Issues the sends and receives; returns their Work handles. Sends go first: on one
    communication stream a receive issued before the matching peer's send would wait for it."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("batch_isend_irecv: expected a non-empty list of P2POp")
    d = _dist()
    ordered = [p for p in p2p_op_list if p.op is d.isend] + [
        p for p in p2p_op_list if p.op is d.irecv
    ]
    works = {id(p): p.op(p.tensor, p.peer, p.group, p.tag) for p in ordered}
    return [works[id(p)] for p in p2p_op_list]


def get_global_rank(group, group_rank):
    """The global rank of a rank of the group (the default group's are the global ranks)."""
    d = _dist()
    d._check_group("get_global_rank", group)
    g = d._sub(group)
    if g is None:
        return group_rank
    if not 0 <= group_rank < g.size():
        raise ValueError(f"get_global_rank: group rank {group_rank} is not part of {g}")
    return g._ranks[group_rank]


def get_group_rank(group, global_rank):
    d = _dist()
    d._check_group("get_group_rank", group)
    g = d._sub(group)
    if g is None:
        return global_rank
    if global_rank not in g._ranks:
        raise ValueError(f"get_group_rank: global rank {global_rank} is not part of {g}")
    return g._ranks.index(global_rank)


def get_process_group_ranks(group):
    d = _dist()
    d._check_group("get_process_group_ranks", group)
    g = d._sub(group)
    return list(g._ranks) if g is not None else list(range(d.get_world_size()))


def get_node_local_rank(fallback_rank=None):
    import os

    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "get_node_local_rank: LOCAL_RANK is not set (start the program with "
        "python -m oneflow.distributed.launch) and no fallback_rank was given"
    )


def is_torchelastic_launched():
    return False


@_in_group()
def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that do not arrive: every rank reports to rank 0, which
    then releases them. Each wait is bounded by the communicator's timeout
    (ONEFLOW_COMM_TIMEOUT); `timeout` is accepted for PyTorch's signature."""
    world, rank = _start("monitored_barrier", group)
    if world == 1:
        return
    token = flow.zeros(1, dtype=flow.int64)
    if rank == 0:
        missing = []
        for r in range(1, world):
            _internal._comm_recv(token, r, 1)
            try:
                token.numpy()
            except RuntimeError as e:
                if not wait_all_ranks:
                    raise RuntimeError(f"monitored_barrier: rank {r} did not arrive: {e}") from e
                missing.append(r)
        if missing:
            raise RuntimeError(f"monitored_barrier: ranks {missing} did not arrive")
        for r in range(1, world):
            _internal._comm_send(token, r, 1)
    else:
        _internal._comm_send(token, 0, 1)
        _internal._comm_recv(token, 0, 1)
    token.numpy()
