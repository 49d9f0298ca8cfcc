"""oneflow.distributed groups (new_group) on 3 processes: collectives, point-to-point and object
ops among a group's ranks, a communication stream per group (async ops of several groups issued
in different orders), groups of the same ranks kept apart, Work.wait() per op, receives and sends
per group, DDP and SyncBatchNorm over a group."""

from test_distributed import _env, _launch, _run_on_ranks

NEW_GROUP = """
import numpy as np
import oneflow as flow
import oneflow.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
g02, g12 = dist.new_group([2, 0]), dist.new_group([1, 2])  # ranks are sorted, as PyTorch's
assert dist.get_process_group_ranks(g02) == [0, 2]
assert dist.get_world_size(g02) == (2 if rank != 1 else -1)  # PyTorch's -1 outside
try:
    dist.new_group([0, 1], backend="nccl")
    raise AssertionError("expected NotImplementedError")
except NotImplementedError as e:
    assert "NCCL" in str(e), e
assert dist.get_rank(g02) == {0: 0, 1: -1, 2: 1}[rank]
assert dist.get_global_rank(g12, 1) == 2 and dist.get_group_rank(g12, 1) == 0
t = flow.full((3,), float(rank + 1))
out = dist.all_reduce(t, group=g02)
want = {0: 4.0, 1: 2.0, 2: 4.0}[rank]  # rank 1 is outside: None, its tensor unchanged
assert out is None and t.tolist() == [want] * 3, (rank, t.tolist())
# the groups interleave with each other and with the default group
b = flow.full((2,), float(rank))
dist.broadcast(b, src=2, group=g12)
assert b.tolist() == [2.0 if rank else 0.0] * 2, (rank, b.tolist())
parts = [flow.zeros(1) for _ in range(2)]
dist.all_gather(parts, flow.tensor([10.0 * rank]), group=g12)
if rank:
    assert [p.item() for p in parts] == [10.0, 20.0], parts
avg = flow.full((2,), float(rank))
dist.all_reduce(avg, op=dist.ReduceOp.AVG, group=g02)
assert avg.tolist() == ([1.0, 1.0] if rank != 1 else [1.0, 1.0]), avg.tolist()
r = flow.tensor([float(rank)])
dist.reduce(r, dst=2, group=g02)
assert r.item() == {0: 0.0, 1: 1.0, 2: 2.0}[rank], r.item()
if rank == 0:
    dist.send(flow.tensor([7.0]), dst=2, group=g02)
elif rank == 2:
    got = flow.zeros(1)
    assert dist.recv(got, src=0, group=g02) == 0 and got.item() == 7.0
objs = [None, None]
dist.all_gather_object(objs, {"r": rank}, group=g12)
if rank:
    assert objs == [{"r": 1}, {"r": 2}], objs
lst = [rank]
dist.broadcast_object_list(lst, src=0, group=g02)
assert lst == [0 if rank != 1 else 1], lst
dist.barrier(group=g12)
# DDP over a group averages over its ranks only
if rank != 1:
    flow.manual_seed(rank)  # different initial weights: rank 0's are broadcast
    net = flow.nn.Linear(3, 2)
    ddp = flow.nn.parallel.DistributedDataParallel(net, process_group=g02)
    flow.manual_seed(0)
    ref = flow.nn.Linear(3, 2)
    xs = [flow.ones(4, 3) * (k + 1) for k in (0, 2)]
    ddp(xs[rank // 2]).pow(2).sum().backward()
    for x in xs:
        ref(x).pow(2).sum().backward()
    np.testing.assert_allclose(net.weight.numpy(), ref.weight.numpy())
    np.testing.assert_allclose(net.weight.grad.numpy(), ref.weight.grad.numpy() / 2, rtol=1e-5)
# SyncBatchNorm over a group: the statistics of its ranks' batches
if rank != 1:
    xb = flow.tensor(np.random.default_rng(rank).standard_normal((4, 3)).astype(np.float32))
    both = np.concatenate([np.random.default_rng(r).standard_normal((4, 3)) for r in (0, 2)])
    sbn = flow.nn.SyncBatchNorm(3, process_group=g02)
    out = sbn(xb.requires_grad_())
    mean, var = both.mean(0), both.var(0)
    np.testing.assert_allclose(out.numpy(), (xb.numpy() - mean) / np.sqrt(var + 1e-5), rtol=1e-4)
    out.pow(2).sum().backward()
    assert xb.grad.shape == (4, 3)
    np.testing.assert_allclose(sbn.running_mean.numpy(), 0.1 * mean, rtol=1e-4, atol=1e-6)
# outside a group: PyTorch's -1 for its world size and from recv; SyncBatchNorm is BatchNorm
assert dist.get_world_size(g12) == (-1 if rank == 0 else 2)
if rank == 0:
    assert dist.recv(flow.zeros(1), src=1, group=g12) == -1
    xs = flow.ones(4, 3) * flow.arange(4.0)[:, None]
    plain = flow.nn.SyncBatchNorm(3, process_group=g12)(xs)
    want = (np.arange(4) - 1.5) / np.sqrt(1.25 + 1e-5)
    np.testing.assert_allclose(plain.numpy()[:, 0], want, rtol=1e-4)
# P2POp's group_peer is a rank of the group
if rank:
    other = flow.zeros(1)
    ops = [
        dist.P2POp(dist.isend, flow.tensor([float(rank)]), group=g12, group_peer=2 - rank),
        dist.P2POp(dist.irecv, other, group=g12, group_peer=2 - rank),
    ]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    assert other.item() == 3.0 - rank, other
total = flow.ones(1)
dist.all_reduce(total)
assert total.item() == 3.0
if rank != 1:
    try:
        dist.broadcast(flow.zeros(1), src=1, group=g02)
        raise AssertionError("expected ValueError")
    except ValueError as e:
        assert "src rank 1 is not in the group" in str(e), e
# torch 2.x group_src / group_dst: ranks of the group (g12's group rank 1 is global rank 2)
if rank:
    b = flow.full((2,), float(rank))
    dist.broadcast(b, group=g12, group_src=1)
    assert b.tolist() == [2.0, 2.0], b.tolist()
    r = flow.tensor([float(rank)])
    dist.reduce(r, group=g12, group_dst=0)
    assert r.item() == (3.0 if rank == 1 else 2.0), r.item()
    got = [flow.zeros(1) for _ in range(2)] if rank == 2 else None
    dist.gather(flow.tensor([float(rank)]), got, group=g12, group_dst=1)
    if rank == 2:
        assert [t.item() for t in got] == [1.0, 2.0], got
    mine = flow.zeros(1)
    dist.scatter(mine, [flow.tensor([5.0]), flow.tensor([6.0])] if rank == 1 else None,
                 group=g12, group_src=0)
    assert mine.item() == 4.0 + rank, mine.item()
    if rank == 1:
        dist.send(flow.tensor([9.0]), group=g12, group_dst=1)
        dist.send_object_list(["x"], group=g12, group_dst=1)
    else:
        got = flow.zeros(1)
        assert dist.recv(got, group=g12, group_src=0) == 1 and got.item() == 9.0
        objs = [None]
        assert dist.recv_object_list(objs, group=g12, group_src=0) == 1 and objs == ["x"]
    lst = [rank]
    dist.broadcast_object_list(lst, group=g12, group_src=1)
    assert lst == [2], lst
    for call in (
        lambda: dist.broadcast(flow.zeros(1), src=2, group=g12, group_src=1),
        lambda: dist.broadcast(flow.zeros(1), group=g12),
        lambda: dist.broadcast(flow.zeros(1), group=g12, group_src=2),
    ):
        try:
            call()
            raise AssertionError("expected ValueError")
        except ValueError as e:
            assert "group_src" in str(e), e
for kwargs in ({"peer": 1, "group_peer": 0}, {"group_peer": 5}, {"group_peer": -1}, {}):
    try:
        dist.P2POp(dist.isend, flow.zeros(1), group=g12, **kwargs)
        raise AssertionError(f"P2POp took {kwargs}")
    except ValueError as e:
        assert "peer" in str(e), e
print(f"rank {rank} ok")
"""


def test_new_group_runs_collectives_among_its_ranks(tmp_path):
    _run_on_ranks(tmp_path, NEW_GROUP, 3)


# Asynchronous collectives of three groups issued in a cycle of orders (rank 0: {0,1} then
# {0,2}; rank 1: {1,2} then {0,1}; rank 2: {0,2} then {1,2}): one stream per group runs them
# (on one stream for all, each rank waited for a peer busy in another group until the timeout).
GROUP_ORDERS = """
import oneflow as flow
import oneflow.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
g01, g02, g12 = dist.new_group([0, 1]), dist.new_group([0, 2]), dist.new_group([1, 2])
order = {0: [g01, g02], 1: [g12, g01], 2: [g02, g12]}[rank]
ts = [flow.full((4,), float(rank + 1)) for _ in order]
works = [dist.all_reduce(t, group=g, async_op=True) for t, g in zip(ts, order)]
for w in works:
    w.wait()
want = {0: [3.0, 4.0], 1: [5.0, 3.0], 2: [4.0, 5.0]}[rank]
assert [t[0].item() for t in ts] == want, (rank, [t.tolist() for t in ts])
# the same tensor through two groups in turn: the second waits for the first
x = flow.full((2,), float(rank + 1))
if rank != 2:
    dist.all_reduce(x, group=g01)            # ranks 0, 1: 3
if rank != 1:
    dist.all_reduce(x, group=g02)            # rank 0: 3 + 3 = 6, rank 2: 6
want = {0: 6.0, 1: 3.0, 2: 6.0}[rank]
assert x.tolist() == [want] * 2, (rank, x.tolist())
print(f"rank {rank} ok")
"""


def test_async_collectives_of_groups_in_different_orders(tmp_path):
    _run_on_ranks(tmp_path, GROUP_ORDERS, 3)


# Collectives that only read a tensor do not wait for each other: two groups' all_gathers of one
# input issued in opposite orders on the two ranks complete (they ran one after the other, and
# each rank's second waited for its peer's, until the timeout). Writes still wait.
GROUP_READS = """
import time
import oneflow as flow
import oneflow.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
ga, gb = dist.new_group([0, 1]), dist.new_group([0, 1])
# two groups' collectives that only read x, issued in opposite orders on the two ranks
x = flow.full((3,), float(rank + 1))
outs = {g: [flow.empty(3), flow.empty(3)] for g in (ga, gb)}
order = [ga, gb] if rank == 0 else [gb, ga]
works = [dist.all_gather(outs[g], x, group=g, async_op=True) for g in order]
for w in works:
    w.wait()
for g in (ga, gb):
    assert [o.tolist() for o in outs[g]] == [[1.0] * 3, [2.0] * 3], rank
# in place: all_to_all_single(x, x) sends a copy of x (Gloo wrote blocks before sending them)
x = flow.arange(4, dtype=flow.float32) + 10 * rank
dist.all_to_all_single(x, x)
assert x.tolist() == [[0.0, 1.0, 10.0, 11.0], [2.0, 3.0, 12.0, 13.0]][rank], x.tolist()
# a write still waits: a CPU op writing x after an async all_reduce of x
x = flow.full((3,), float(rank + 1))
w = dist.all_reduce(x, async_op=True)
x.mul_(2)
assert x.tolist() == [6.0] * 3, x.tolist()
print(f"rank {rank} ok")
"""


def test_collectives_that_read_one_tensor_run_beside_each_other(tmp_path):
    _run_on_ranks(tmp_path, GROUP_READS, 2)


# A pipeline's messages: rank 0 sends four activations, then receives four gradients; rank 1
# receives each activation and sends its gradient in turn. A receive used to wait for the
# process's pending sends, so rank 0's first receive waited for its fourth send, which rank 1
# receives only after it sent the second gradient (a deadlock until the timeout).
PIPELINE_MESSAGES = """
import oneflow as flow
import oneflow.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
for step in range(3):
    if rank == 0:
        works = [dist.isend(flow.full((256,), float(k + step)), 1) for k in range(4)]
        grads = [flow.empty(256) for _ in range(4)]
        for g in grads:
            dist.recv(g, 1)
        assert [g[0].item() for g in grads] == [2.0 * (k + step) for k in range(4)]
        for w in works:
            w.wait()
    else:
        for k in range(4):
            a = flow.empty(256)
            dist.recv(a, 0)
            dist.send(a * 2, 0)
print(f"rank {rank} ok")
"""


def test_receives_do_not_wait_for_pending_sends(tmp_path):
    _run_on_ranks(tmp_path, PIPELINE_MESSAGES, 2)


# The sends' waits run on a thread per group: many groups with sends (each group's stream and
# the waits used two of the engine's 64 streams: the 33rd group's collective waited on its own
# stream), many pending sends (1100 isends each way before the receives: the waits' queue was
# a ring of 1024 that filled), a DataLoader forked while sends are pending (the child tore
# down the parent's wait and hung).
MANY_SENDS = """
import oneflow as flow
import oneflow.distributed as dist
from oneflow.utils.data import DataLoader, TensorDataset
dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
for i, g in enumerate([dist.new_group([0, 1]) for _ in range(36)]):
    w = dist.isend(flow.full((4,), float(i)), peer, group=g)
    b = flow.zeros(4)
    dist.recv(b, peer, group=g)
    x = flow.ones(2)
    dist.all_reduce(x, group=g)
    assert b[0].item() == i and x[0].item() == 2.0, (i, b.tolist(), x.tolist())
sends = [dist.isend(flow.full((4,), float(i + 10000 * rank)), peer) for i in range(1100)]
bufs = [flow.zeros(4) for _ in range(1100)]
for w in [dist.irecv(b, peer) for b in bufs]:
    w.wait()
for w in sends:
    w.wait()
assert all(b[0].item() == i + 10000 * peer for i, b in enumerate(bufs))
if rank == 0:
    ws = [dist.isend(flow.full((1000,), float(i)), 1) for i in range(20)]
    loader = DataLoader(TensorDataset(flow.arange(64.0)), batch_size=8, num_workers=2)
    assert sum(b[0].sum().item() for b in loader) == 2016.0
    for w in ws:
        w.wait()
else:
    for i in range(20):
        b = flow.zeros(1000)
        dist.recv(b, 0)
        assert b[0].item() == i
print(f"rank {rank} ok")
"""


def test_many_groups_and_pending_sends_and_a_fork(tmp_path):
    _run_on_ranks(tmp_path, MANY_SENDS, 2)


# A child forked (os.fork) while a send is pending exits normally: its exit hooks do not wait for
# the parent's send (they waited forever).
FORK_EXIT = """
import os, sys, time
import oneflow as flow
import oneflow.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 0:
    w = dist.isend(flow.ones(1000), 1)
    time.sleep(0.2)
    pid = os.fork()
    if pid == 0:
        sys.exit(0)  # the child runs the atexit hooks; the parent's send is not its own
    t0 = time.time()
    while time.time() - t0 < 10:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        raise AssertionError("the forked child hung at exit")
    w.wait()
else:
    time.sleep(2)
    b = flow.zeros(1000)
    dist.recv(b, 0)
print(f"rank {rank} ok", flush=True)
"""


def test_a_forked_child_does_not_wait_for_the_parents_sends(tmp_path):
    _run_on_ranks(tmp_path, FORK_EXIT, 2)


# A send to a rank that has exited fails where sends are waited for (here: at exit, printed);
# the process's later messages to live ranks go on (they were dropped after the failure).
DEAD_PEER = """
import os, time
import oneflow as flow
import oneflow.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
dist.barrier()
if rank == 1:
    os._exit(0)
time.sleep(1)
if rank == 0:
    dist.isend(flow.ones(4), 1)
    time.sleep(0.5)
    for i in range(3):
        dist.send(flow.full((4,), float(i + 1)), 2)
    ack = flow.zeros(1)
    dist.recv(ack, 2)
    print("rank 0 ok", flush=True)
else:
    got = []
    for i in range(3):
        b = flow.zeros(4)
        dist.recv(b, 0)
        got.append(b[0].item())
    assert got == [1.0, 2.0, 3.0], got
    print("rank 2 ok", flush=True)
    dist.send(flow.ones(1), 0)
    time.sleep(1)
"""


def test_a_failed_send_does_not_stop_messages_to_live_ranks(tmp_path):
    (tmp_path / "ranks.py").write_text(DEAD_PEER)
    proc = _launch(tmp_path, "--nproc_per_node", "3", "ranks.py", env=_env(ONEFLOW_COMM_TIMEOUT=10))
    out = proc.stdout + proc.stderr
    assert "rank 0 ok" in proc.stdout and "rank 2 ok" in proc.stdout, out
    assert "at exit: send: communication failed" in proc.stderr, out


# A group's failure names the group's ranks that have gone, not other ranks of the process group
# that have exited (it said "ranks 1, 2 have exited" for the group [0, 1]).
GONE_PEERS = """
import time
import oneflow as flow
import oneflow.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
g01 = dist.new_group([0, 1])
if rank != 0:
    print(f"rank {rank} ok", flush=True)  # and exits
else:
    time.sleep(3)  # ranks 1 and 2 have exited
    try:
        dist.all_reduce(flow.ones(4), group=g01)
        flow.ones(1).tolist()
        dist.barrier(group=g01)
        raise AssertionError("expected the group's failure")
    except RuntimeError as e:
        msg = str(e)
        assert "rank 1 has exited" in msg and "ranks 1, 2" not in msg, msg
    print("rank 0 ok", flush=True)
"""


def test_a_group_failure_names_only_its_own_gone_ranks(tmp_path):
    _run_on_ranks(tmp_path, GONE_PEERS, 3)


# A collective that only reads its tensor (a broadcast from this rank) and fails: a later op
# reading the tensor takes over its error; one that nothing raised is printed at exit.
UNOBSERVED_FAILURE = """
import time
import oneflow as flow
import oneflow.distributed as dist
dist.init_process_group("gloo")
if dist.get_rank() == 0:
    x = flow.ones(1 << 16)
    dist.broadcast(x, src=0)  # rank 1 never joins
    time.sleep(4)
    # a later op reading x takes over the failed broadcast's error
    try:
        (x + 1).tolist()
        raise AssertionError("expected the broadcast's error")
    except RuntimeError as e:
        assert "broadcast" in str(e), e
    dist.broadcast(x, src=0)  # fails again: nothing reads it
    print("rank 0 reached the end", flush=True)
else:
    time.sleep(9)
"""


def test_a_failed_collective_nothing_reads_is_reported_at_exit(tmp_path):
    (tmp_path / "ranks.py").write_text(UNOBSERVED_FAILURE)
    proc = _launch(tmp_path, "--nproc_per_node", "2", "ranks.py", env=_env(ONEFLOW_COMM_TIMEOUT=2))
    assert "rank 0 reached the end" in proc.stdout, proc.stdout + proc.stderr
    assert "at exit: broadcast: communication failed" in proc.stderr, proc.stderr


# Groups as PyTorch's process groups: two of the same ranks are apart; Work.wait() waits for its
# own op (not another group's, whose peer waits for this rank's next op); irecv's deferred
# receive is posted at its own group's ops only; a subgroup's send reaches its peer after the
# sender's wait() and exit; a DataLoader forks while a collective waits for this rank's later
# message.
GROUP_WORK = """
import os
import time
import oneflow as flow
import oneflow.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
gA, gB = dist.new_group([0, 1]), dist.new_group([0, 1])
g01, g12, g02 = dist.new_group([0, 1]), dist.new_group([1, 2]), dist.new_group([0, 2])
if rank < 2:
    x, y = flow.full((4,), float(rank + 1)), flow.full((4,), 10.0 * (rank + 1))
    pairs = [(x, gA), (y, gB)] if rank == 0 else [(y, gB), (x, gA)]
    works = [dist.all_reduce(t, group=g, async_op=True) for t, g in pairs]
    for w in works:
        w.wait()
    assert x.tolist() == [3.0] * 4 and y.tolist() == [30.0] * 4, (rank, x, y)
t, u, v = flow.ones(4), flow.ones(4), flow.ones(4)
if rank == 0:
    w02 = dist.all_reduce(t, group=g02, async_op=True)  # rank 2 joins after g12's op
    dist.all_reduce(u, group=g01, async_op=True).wait()
    dist.all_reduce(v, group=g01)
    w02.wait()
elif rank == 1:
    dist.all_reduce(u, group=g01, async_op=True).wait()
    dist.all_reduce(v, group=g01)
    dist.all_reduce(flow.ones(4), group=g12)
else:
    dist.all_reduce(flow.ones(4), group=g12)
    dist.all_reduce(t, group=g02)
assert t.tolist() == ([2.0] * 4 if rank != 1 else [1.0] * 4), (rank, t)
if rank in (1, 2):
    peer = 3 - rank
    got = flow.zeros(3)
    w = dist.irecv(got, src=peer, group=g12)
    dist.all_reduce(flow.ones(2), group=g01 if rank == 1 else g02)  # another group's op
    ws = dist.isend(flow.full((3,), float(rank)), dst=peer, group=g12)
    w.wait()
    ws.wait()
    assert got.tolist() == [float(peer)] * 3, (rank, got)
else:
    dist.all_reduce(flow.ones(2), group=g01)
    dist.all_reduce(flow.ones(2), group=g02)


class DS(flow.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return flow.tensor(float(i))


if rank == 0:
    z = flow.ones(4)
    w = dist.all_reduce(z, group=g01, async_op=True)  # rank 1 joins after our send
    assert sum(float(b.sum()) for b in flow.utils.data.DataLoader(DS(), 4, num_workers=1)) == 28
    dist.send(flow.tensor([5.0]), dst=1)
    w.wait()
    assert z.tolist() == [2.0] * 4
elif rank == 1:
    r = flow.zeros(1)
    dist.recv(r, src=0)
    z = flow.ones(4)
    dist.all_reduce(z, group=g01)
big = 1 << 20
if rank == 1:  # sends on a subgroup and exits at once: the message still arrives
    dist.isend(flow.arange(big, dtype=flow.float32), dst=2, group=g12).wait()
    print(f"rank {rank} ok", flush=True)
    os._exit(0)
if rank == 2:
    time.sleep(1)
    got = flow.zeros(big)
    assert dist.recv(got, src=1, group=g12) == 1 and got[-1].item() == big - 1
print(f"rank {rank} ok", flush=True)
"""


def test_groups_apart_work_waits_receives_and_sends_per_group(tmp_path):
    _run_on_ranks(tmp_path, GROUP_WORK, 3)


EXCHANGE = """
import numpy as np
import oneflow as flow
import oneflow.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
# irecv before isend on both ranks (a common exchange): the receives wait for the sends
for group in (None, dist.new_group([0, 1])):
    got = flow.zeros(2)
    w1 = dist.irecv(got, src=peer, group=group)
    w2 = dist.isend(flow.full((2,), float(rank)), dst=peer, group=group)
    w1.wait()
    w2.wait()
    assert got.tolist() == [float(peer)] * 2, got


# DDP with a parameter only one rank uses: every rank gets its averaged gradient (PyTorch's)
class M(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.b, self.c = flow.nn.Linear(3, 1), flow.nn.Linear(3, 1)

    def forward(self, x, use_c):
        return self.b(x) + (self.c(x) if use_c else 0)


m = M()
ddp = flow.nn.parallel.DistributedDataParallel(m, find_unused_parameters=True)
ddp(flow.ones(2, 3), use_c=(rank == 0)).sum().backward()
np.testing.assert_allclose(m.c.weight.grad.numpy(), np.ones((1, 3)))  # (2 + 0) / 2
np.testing.assert_allclose(m.b.weight.grad.numpy(), 2 * np.ones((1, 3)))
m2 = M()
ddp2 = flow.nn.parallel.DistributedDataParallel(m2, find_unused_parameters=True)
ddp2(flow.ones(2, 3), use_c=False).sum().backward()
assert m2.c.weight.grad is None  # no rank used it
print(f"rank {rank} ok")
"""


def test_irecv_before_isend_and_ddp_parameters_unused_on_some_ranks(tmp_path):
    _run_on_ranks(tmp_path, EXCHANGE, 2)
