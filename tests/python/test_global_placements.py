"""Global tensors placed on part of the processes (pipeline stages): conversions between
placements for every pair of layouts, ops on a sub-placement, and two-stage training (forward,
backward, optimizer steps) against the same model run locally; on 2 and 3 processes."""

import pytest
from test_distributed import _run_on_ranks

_PRELUDE = """
import numpy as np
import oneflow as flow
import oneflow.nn as nn

rank, world = flow.env.get_rank(), flow.env.get_world_size()
S0, S1, B, P = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
"""

BOXING = (
    _PRELUDE
    + """
import itertools

a = np.arange(20, dtype=np.float32).reshape(5, 4) - 7


def src(ranks, sbp):
    # a global tensor with value `a` laid out as sbp on ranks
    pl = flow.placement("cpu", ranks=ranks)
    return flow.tensor(a).to_global(placement=pl, sbp=B).to_global(sbp=sbp)


def check_shard(t, ranks, sbp):
    local = t.to_local()
    if rank not in ranks:
        assert tuple(local.shape) == (0, 0), (rank, local.shape)
        return
    j, k = ranks.index(rank), len(ranks)
    if sbp == B:
        want = a
    elif sbp == P:
        want = a if j == 0 else np.zeros_like(a)
    else:
        want = np.array_split(a, k, axis=sbp.axis)[j]
    np.testing.assert_array_equal(local.numpy(), want)


PLACES = [[0], [1], [0, 1]] + ([[1, 2], [2, 0], [2], [0, 1, 2]] if world == 3 else [])
for frm, to in itertools.permutations(PLACES, 2):
    for s_in, s_out in itertools.product([S0, S1, B, P], repeat=2):
        x = src(frm, s_in)
        y = x.to_global(placement=flow.placement("cpu", ranks=to), sbp=s_out)
        assert y.placement == flow.placement("cpu", ranks=to) and y.sbp == (s_out,)
        assert tuple(y.shape) == (5, 4)
        np.testing.assert_array_equal(y.numpy(), a)
        check_shard(y, to, s_out)

# local -> global on part of the processes: a broadcast is the first rank's data, split shards
# are gathered (the processes left out learn the global shape)
mine = flow.tensor(a * (rank + 1))
pl = flow.placement("cpu", ranks=[world - 1, 0])
g = mine.to_global(placement=pl, sbp=B)
np.testing.assert_array_equal(g.numpy(), a * world)
rows = flow.ones(3 if rank == world - 1 else 2, 3) * rank  # rank 1 of 3 is left out
g = rows.to_global(placement=pl, sbp=S0)
want = np.concatenate([np.full((3, 3), world - 1.0), np.zeros((2, 3))])
np.testing.assert_array_equal(g.numpy(), want)
print(f"rank {rank} ok")
"""
)


@pytest.mark.parametrize("world", [2, 3])
def test_conversions_between_placements(tmp_path, world):
    _run_on_ranks(tmp_path, BOXING, world)


OPS = (
    _PRELUDE
    + """
ranks = [1, 2] if world == 3 else [1]
pl = flow.placement("cpu", ranks=ranks)
rng = np.random.default_rng(0)
a = rng.standard_normal((6, 4)).astype(np.float32)
w = rng.standard_normal((4, 3)).astype(np.float32)

x = flow.tensor(a, requires_grad=True)
gx = x.to_global(placement=pl, sbp=B).to_global(sbp=S0)
gw = flow.tensor(w).to_global(placement=pl, sbp=B).requires_grad_()
y = (gx @ gw).relu()
s = y.sum(dim=0)  # a split reduced: partial sums, boxed among the placement's ranks
t = s.to_global(sbp=B) * 2
np.testing.assert_allclose(t.numpy(), 2 * np.maximum(a @ w, 0).sum(0), rtol=1e-5)
t.sum().backward()
mask = (a @ w > 0).astype(np.float32)
np.testing.assert_allclose(gw.grad.numpy(), a.T @ (2 * mask), rtol=1e-5)
# x's gradient: the whole one on the placement's processes (x was their broadcast value)
if rank in ranks:
    np.testing.assert_allclose(x.grad.numpy(), (2 * mask) @ w.T, rtol=1e-5)
else:
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros_like(a))  # its values were not used
# values read on the host (indices, masks): every process gets them
m = gx > 0
sel = gx[m]
assert sel.shape == (int((a > 0).sum()),), sel.shape
np.testing.assert_allclose(sel.numpy(), a[a > 0])
idx = flow.tensor([3, 0, 5]).to_global(placement=pl, sbp=B)
np.testing.assert_allclose(gx[idx].numpy(), a[[3, 0, 5]])
# random numbers: one value, whatever process reads it
r = flow.randn(5, 3, placement=pl, sbp=S0)
v = r.numpy()
assert v.shape == (5, 3) and np.isfinite(v).all()
assert repr(t).startswith("tensor(")
# unique reads the whole value on every process
u, inv, cnt = flow.unique(idx, return_inverse=True, return_counts=True)
assert u.placement == pl and u.tolist() == [0, 3, 5] and cnt.tolist() == [1, 1, 1], u
assert inv.tolist() == [1, 0, 2]
# SyncBatchNorm on a global batch is BatchNorm (its statistics cover the global batch already)
flow.manual_seed(0)
sbn = flow.nn.SyncBatchNorm(4).to_global(placement=pl, sbp=B)
np.testing.assert_allclose(
    sbn(gx).numpy(), (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-5), rtol=1e-4, atol=1e-5
)
# DDP of a global module says what to do
try:
    flow.nn.parallel.DistributedDataParallel(flow.nn.Linear(2, 2).to_global(placement=pl, sbp=B))
    raise AssertionError("expected ValueError")
except ValueError as e:
    assert "global tensors" in str(e), e
print(f"rank {rank} ok")
"""
)


@pytest.mark.parametrize("world", [2, 3])
def test_ops_on_part_of_the_processes(tmp_path, world):
    _run_on_ranks(tmp_path, OPS, world)


PIPELINE = (
    _PRELUDE
    + """
P0 = flow.placement("cpu", ranks=[0])
P1 = flow.placement("cpu", ranks=list(range(1, world)))  # stage 1: data parallel over the rest


def model():
    flow.manual_seed(3)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8)), nn.Sequential(
        nn.Tanh(), nn.Linear(8, 3)
    )


rng = np.random.default_rng(1)
data = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(3)]
labels = [rng.integers(0, 3, 4) for _ in range(3)]

# reference: the same model and steps on local tensors
s0, s1 = model()
opt = flow.optim.SGD(list(s0.parameters()) + list(s1.parameters()), lr=0.1, momentum=0.9)
ref = []
for x, t in zip(data, labels):
    loss = nn.functional.cross_entropy(s1(s0(flow.tensor(x))), flow.tensor(t))
    opt.zero_grad()
    loss.backward()
    opt.step()
    ref.append(loss.item())

g0, g1 = model()
g0.to_global(placement=P0, sbp=B)
g1.to_global(placement=P1, sbp=B)
opt = flow.optim.SGD(list(g0.parameters()) + list(g1.parameters()), lr=0.1, momentum=0.9)
got = []
for x, t in zip(data, labels):
    h = g0(flow.tensor(x).to_global(placement=P0, sbp=B))
    h = h.to_global(placement=P1, sbp=S0)
    tt = flow.tensor(t).to_global(placement=P1, sbp=B).to_global(sbp=S0)
    loss = nn.functional.cross_entropy(g1(h), tt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    got.append(loss.numpy().item())
np.testing.assert_allclose(got, ref, rtol=1e-5)
local_params = list(s0.parameters()) + list(s1.parameters())
for a, b in zip(local_params, list(g0.parameters()) + list(g1.parameters())):
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-6)
# a stage's parameters are absent elsewhere
shard = g1[1].weight.to_local()
assert tuple(shard.shape) == ((3, 8) if rank >= 1 else (0, 0)), shard.shape
print(f"rank {rank} ok")
"""
)


@pytest.mark.parametrize("world", [2, 3])
def test_two_stage_pipeline_trains_as_the_local_model(tmp_path, world):
    _run_on_ranks(tmp_path, PIPELINE, world)


NORM_AND_LOAD = (
    _PRELUDE
    + """
pl = flow.placement("cpu", ranks=list(range(1, world)))
rng = np.random.default_rng(2)
a = rng.standard_normal((6, 3, 4)).astype(np.float32)

# batch norm of a batch split over part of the processes, against the local module
flow.manual_seed(0)
ref, bn = nn.BatchNorm1d(3), nn.BatchNorm1d(3)
bn.to_global(placement=pl, sbp=B)
x = flow.tensor(a, requires_grad=True)
y_ref = ref(x)
(y_ref * y_ref).sum().backward()
gx = flow.tensor(a).to_global(placement=pl, sbp=B).to_global(sbp=S0).requires_grad_()
y = bn(gx)
(y * y).sum().backward()
np.testing.assert_allclose(y.numpy(), y_ref.numpy(), rtol=1e-4, atol=1e-5)
np.testing.assert_allclose(gx.grad.numpy(), x.grad.numpy(), rtol=1e-4, atol=1e-4)
np.testing.assert_allclose(bn.running_var.numpy(), ref.running_var.numpy(), rtol=1e-5)

# load(global_src_rank=r): tensors placed on rank r (OneFlow's); load_state_dict moves them to
# the parameters' placement
flow.save({"w": flow.tensor(a)}, "sd.of") if rank == 0 else None
flow.comm.barrier()
sd = flow.load("sd.of", global_src_rank=0)
assert sd["w"].placement == flow.placement("cpu", ranks=[0]), sd["w"].placement
holder = nn.Module()
holder.w = nn.Parameter(flow.zeros(6, 3, 4))
holder.to_global(placement=pl, sbp=B)
holder.load_state_dict(sd)
np.testing.assert_array_equal(holder.w.numpy(), a)
local = nn.Module()
local.w = nn.Parameter(flow.zeros(6, 3, 4))
local.load_state_dict(sd)  # the whole value on every process
np.testing.assert_array_equal(local.w.numpy(), a)
print(f"rank {rank} ok")
"""
)


@pytest.mark.parametrize("world", [2, 3])
def test_batch_norm_and_checkpoints_on_part_of_the_processes(tmp_path, world):
    _run_on_ranks(tmp_path, NORM_AND_LOAD, world)


REVIEW = (
    _PRELUDE
    + """
P0 = flow.placement("cpu", ranks=[0])
P1 = flow.placement("cpu", ranks=[1, 2])
everyone = flow.placement.all("cpu")

# an in-place write after a saved value raises on every process (the left-out one waited)
x0 = flow.ones(3).to_global(placement=P0, sbp=B).requires_grad_()
y = x0.to_global(placement=P1, sbp=B).sigmoid()
y.mul_(2)
try:
    y.sum().backward()
    raise AssertionError("expected the in-place version error")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e

# assignment by masks and by global indices on every process
a = np.arange(15.0, dtype=np.float32).reshape(5, 3)
pl = flow.placement("cpu", ranks=[2, 0])
x = flow.tensor(a).to_global(placement=pl, sbp=B)
x[x > 5] = 0.0
np.testing.assert_array_equal(x.numpy(), np.where(a > 5, 0, a))
w = flow.tensor(a).to_global(placement=pl, sbp=B).to_global(sbp=S0).detach().requires_grad_()
z = w * 1
idx = flow.tensor([4, 1]).to_global(placement=pl, sbp=B)
z[idx] = flow.full((2, 3), 9.0).to_global(placement=pl, sbp=B)
z.sum().backward()
want = a.copy()
want[[4, 1]] = 9.0
np.testing.assert_array_equal(z.numpy(), want)
g = np.ones_like(a)
g[[4, 1]] = 0
np.testing.assert_array_equal(w.grad.numpy(), g)

# a left-out process's tensor is ignored, whatever its shape
loc = flow.tensor([]) if rank == 0 else flow.ones(2, 3) * rank
g = loc.to_global(placement=P1, sbp=flow.sbp.split(1))
assert g.shape == (2, 6), g.shape
np.testing.assert_array_equal(g.numpy(), np.concatenate([np.ones((2, 3)), 2 * np.ones((2, 3))], 1))

# clip_grad_norm_ over two stages, and an optimizer resumed from a checkpoint, as locally
def stages():
    flow.manual_seed(5)
    return nn.Linear(4, 3), nn.Linear(3, 2)

data = flow.tensor(np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32))
r0, r1 = stages()
ropt = flow.optim.Adam(list(r0.parameters()) + list(r1.parameters()), lr=0.1)
s0, s1 = stages()
s0.to_global(placement=P0, sbp=B)
s1.to_global(placement=P1, sbp=B)
params = list(s0.parameters()) + list(s1.parameters())
opt = flow.optim.Adam(params, lr=0.1)
for step in range(3):
    if step == 2:  # save and resume the optimizer
        flow.save(opt.state_dict(), "opt.of", global_dst_rank=0)
        flow.comm.barrier()
        opt = flow.optim.Adam(params, lr=0.1)
        opt.load_state_dict(flow.load("opt.of", global_src_rank=0))
    ref = r1(r0(data)).pow(2).sum()
    ropt.zero_grad()
    ref.backward()
    rn = nn.utils.clip_grad_norm_(list(r0.parameters()) + list(r1.parameters()), 0.5)
    ropt.step()
    h = s0(data.to_global(placement=P0, sbp=B)).to_global(placement=P1, sbp=B)
    loss = s1(h).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    n = nn.utils.clip_grad_norm_(params, 0.5)
    opt.step()
    np.testing.assert_allclose(n.numpy(), rn.numpy(), rtol=1e-5)
    np.testing.assert_allclose(loss.numpy(), ref.numpy(), rtol=1e-5)
for a_, b_ in zip(list(r0.parameters()) + list(r1.parameters()), params):
    np.testing.assert_allclose(b_.numpy(), a_.numpy(), rtol=1e-5, atol=1e-6)

# second derivatives through conversions
u = flow.tensor([1.0, 2.0]).to_global(placement=P0, sbp=B).requires_grad_()
v = u.to_global(placement=P1, sbp=B).pow(3).sum()
(du,) = flow.autograd.grad(v, u, create_graph=True)
(ddu,) = flow.autograd.grad(du.sum(), u)
np.testing.assert_allclose(ddu.numpy(), [6.0, 12.0])
# a 0-d tensor's shard where the placement leaves the process out: a zero, not leftover memory
s = flow.tensor(3.0).to_global(placement=P1, sbp=B)
assert s.to_local().item() == (0.0 if rank == 0 else 3.0)
print(f"rank {rank} ok")
"""
)


def test_review_cases_on_part_of_the_processes(tmp_path):
    _run_on_ranks(tmp_path, REVIEW, 3)


FAILED_SEND = """
import datetime
import oneflow as flow
import oneflow.distributed as dist

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=10))
rank = dist.get_rank()
sub = flow.placement("cpu", ranks=[1, 2])
x = flow.randn(4, 3).to_global(placement=sub, sbp=flow.sbp.broadcast)
bad = flow.tensor([[0], [5], [1], [2]]).to_global(placement=sub, sbp=flow.sbp.broadcast)
busy = flow.randn(1000, 1000).to_global(placement=sub, sbp=flow.sbp.broadcast)
for _ in range(3):
    busy = busy @ busy  # keeps the stream busy: the failing op queues behind
try:
    y = flow.gather(x, 1, bad)  # fails on ranks 1 and 2 (in the queue, usually)
    print(f"rank {rank} got {y.to_global(placement=flow.placement.all('cpu')).numpy()}")
    raise AssertionError("expected an error")
except (RuntimeError, IndexError) as e:
    # ranks 1, 2: the kernel's error; rank 0: no garbage (it was sent), the receive fails
    assert ("out of bounds" in str(e)) if rank else ("recv" in str(e)), e
print(f"rank {rank} ok")
"""


def test_a_failed_op_sends_nothing_to_other_processes(tmp_path):
    _run_on_ranks(tmp_path, FAILED_SEND, 3)


GRAPH_PIPELINE = (
    _PRELUDE
    + """
P0 = flow.placement("cpu", ranks=[0])
P1 = flow.placement("cpu", ranks=list(range(1, world)))


def stages():
    flow.manual_seed(7)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU()), nn.Sequential(nn.Linear(8, 3))


rng = np.random.default_rng(4)
data = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(3)]
labels = [rng.integers(0, 3, 4) for _ in range(3)]


def placed():
    s0, s1 = stages()
    s0.to_global(placement=P0, sbp=B)
    s1.to_global(placement=P1, sbp=B)
    return s0, s1


def batches():
    for x, t in zip(data, labels):
        yield (
            flow.tensor(x).to_global(placement=P0, sbp=B),
            flow.tensor(t).to_global(placement=P1, sbp=B).to_global(sbp=S0),
        )


# eager pipeline
e0, e1 = placed()
eopt = flow.optim.SGD(list(e0.parameters()) + list(e1.parameters()), lr=0.1, momentum=0.9)
eager = []
for x, t in batches():
    loss = nn.functional.cross_entropy(e1(e0(x).to_global(placement=P1, sbp=S0)), t)
    eopt.zero_grad()
    loss.backward()
    eopt.step()
    eager.append(loss.numpy().item())


# the same pipeline as an nn.Graph (OneFlow's set_stage is accepted: placements decide)
class Pipeline(nn.Graph):
    def __init__(self, s0, s1, opt):
        super().__init__()
        self.s0, self.s1 = s0, s1
        self.s0.config.set_stage(0, P0)  # OneFlow's older spelling
        self.s1.to(nn.graph.GraphModule).set_stage(1, P1)
        self.add_optimizer(opt)

    def build(self, x, t):
        h = self.s0(x).to_global(placement=P1, sbp=S0)
        loss = nn.functional.cross_entropy(self.s1(h), t)
        loss.backward()
        return loss


g0, g1 = placed()
gopt = flow.optim.SGD(list(g0.parameters()) + list(g1.parameters()), lr=0.1, momentum=0.9)
graph = Pipeline(g0, g1, gopt)
got = [graph(x, t).numpy().item() for x, t in batches()]
np.testing.assert_allclose(got, eager, rtol=1e-5)
eager_params = list(e0.parameters()) + list(e1.parameters())
for a, b in zip(eager_params, list(g0.parameters()) + list(g1.parameters())):
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)

# two micro-batches per step (OneFlow's pipeline training): the update of the whole batch
a0, a1 = placed()
aopt = flow.optim.SGD(list(a0.parameters()) + list(a1.parameters()), lr=0.1, momentum=0.9)
accumulating = Pipeline(a0, a1, aopt)
accumulating.config.set_gradient_accumulation_steps(2)
for (x, t), want in zip(batches(), eager):
    losses = accumulating(x, t).numpy()
    assert losses.shape == (2,), losses.shape
    np.testing.assert_allclose(losses.mean(), want, rtol=1e-5)
for a, b in zip(eager_params, list(a0.parameters()) + list(a1.parameters())):
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
# 1F1B: the first stage (one stage after it) runs the second micro-batch's forward before the
# first one's backward, the last stage each backward right after its forward
ir = list(accumulating._plans.values())[0].compiled.ir()
messages = [w for line in ir.splitlines() for w in ("send", "recv") if w in line]
want = {0: ["send", "send", "recv", "recv"], 1: ["recv", "send", "recv", "send"]}
if world == 2:
    assert messages == want[rank], (rank, messages)

# the rooted collectives say they cannot be recorded
class Rooted(nn.Graph):
    def build(self, t):
        flow.comm.reduce(t, 0)
        return t


try:
    Rooted()(flow.ones(2))
    raise AssertionError("expected NotImplementedError")
except NotImplementedError as e:
    assert "reduce: cannot be recorded in nn.Graph" in str(e), e

# a dynamic grad scaler with global parameters says it is not supported in graphs yet
scaled = Pipeline(*placed(), aopt)
scaled.set_grad_scaler(flow.amp.GradScaler(device="cpu"))
try:
    scaled(*next(batches()))
    raise AssertionError("expected NotImplementedError")
except NotImplementedError as e:
    assert "dynamic GradScaler with global parameters" in str(e), e
print(f"rank {rank} ok")
"""
)


@pytest.mark.parametrize("world", [2, 3])
def test_pipeline_in_a_graph_trains_as_eager(tmp_path, world):
    _run_on_ranks(tmp_path, GRAPH_PIPELINE, world)


# Stages on [0] -> [1] with the loss back on [0] and two micro-batches: the process with the loss
# also holds the first stage. Every process holds its backward()s back alike (the messages
# between two stages pair up by order; when only the processes without the loss held them back,
# activations and gradients paired up wrongly: wrong parameters, or an abort on sizes).
LOSS_ON_THE_FIRST_STAGE = """
import numpy as np
import oneflow as flow
import oneflow.nn as nn
rank = flow.env.get_rank()
B = flow.sbp.broadcast
P0, P1 = flow.placement("cpu", ranks=[0]), flow.placement("cpu", ranks=[1])


def make(width):
    flow.manual_seed(7)
    s0, s1 = nn.Linear(6, 8), nn.Linear(8, width)
    s0.to_global(placement=P0, sbp=B)
    s1.to_global(placement=P1, sbp=B)
    return s0, s1, flow.optim.SGD(list(s0.parameters()) + list(s1.parameters()), lr=0.1)


flow.manual_seed(1)
x = flow.randn(4, 6).to_global(placement=P0, sbp=B)
for width in (8, 10):  # messages of one size, and of two
    t = flow.tensor([0, 1, 7, 3]).to_global(placement=P0, sbp=B)
    e0, e1, eopt = make(width)
    out = e1(e0(x).relu().to_global(placement=P1, sbp=B)).to_global(placement=P0, sbp=B)
    nn.functional.cross_entropy(out, t).backward()
    eopt.step()
    s0, s1, opt = make(width)

    class G(nn.Graph):
        def __init__(self):
            super().__init__()
            self.s0, self.s1 = s0, s1
            self.add_optimizer(opt)
            self.config.set_gradient_accumulation_steps(2)

        def build(self, x, t):
            h = self.s1(self.s0(x).relu().to_global(placement=P1, sbp=B))
            loss = nn.functional.cross_entropy(h.to_global(placement=P0, sbp=B), t)
            loss.backward()
            return loss

    G()(x, t)
    for a, b in ((e0.weight, s0.weight), (e1.weight, s1.weight)):
        if rank in a.placement.ranks:
            np.testing.assert_allclose(b.to_local().numpy(), a.to_local().numpy(), atol=1e-6)
print(f"rank {rank} ok")
"""


def test_pipeline_micro_batches_with_the_loss_on_the_first_stage(tmp_path):
    _run_on_ranks(tmp_path, LOSS_ON_THE_FIRST_STAGE, 2)


# Three stages on [0] -> [1] -> [2], four micro-batches: each stage traces as many forwards
# ahead as there are stages after it, then a backward after each forward (1F1B), and the
# parameters end where the eager whole-batch steps put them.
ONE_F_ONE_B = (
    _PRELUDE
    + """
P = [flow.placement("cpu", ranks=[r]) for r in range(3)]


def placed():
    flow.manual_seed(11)
    s = [nn.Sequential(nn.Linear(6, 8), nn.Tanh()), nn.Sequential(nn.Linear(8, 5), nn.Tanh()),
         nn.Linear(5, 3)]
    for m, p in zip(s, P):
        m.to_global(placement=p, sbp=B)
    return s


def params(s):
    return [p for m in s for p in m.parameters()]


rng = np.random.default_rng(5)
data = [rng.standard_normal((8, 6)).astype(np.float32) for _ in range(2)]
labels = [rng.integers(0, 3, 8) for _ in range(2)]


def batches():
    for x, t in zip(data, labels):
        yield flow.tensor(x).to_global(placement=P[0], sbp=B), flow.tensor(t).to_global(
            placement=P[2], sbp=B
        )


def forward(s, x, t):
    h = s[0](x).to_global(placement=P[1], sbp=B)
    h = s[1](h).to_global(placement=P[2], sbp=B)
    return nn.functional.cross_entropy(s[2](h), t)


e = placed()
eopt = flow.optim.SGD(params(e), lr=0.1, momentum=0.9)
eager = []
for x, t in batches():
    loss = forward(e, x, t)
    eopt.zero_grad()
    loss.backward()
    eopt.step()
    eager.append(loss.numpy().item())


class Pipeline(nn.Graph):
    def __init__(self, s, opt):
        super().__init__()
        self.s0, self.s1, self.s2 = s
        self.add_optimizer(opt)
        self.config.set_gradient_accumulation_steps(4)

    def build(self, x, t):
        loss = forward([self.s0, self.s1, self.s2], x, t)
        loss.backward()
        return loss


g = placed()
graph = Pipeline(g, flow.optim.SGD(params(g), lr=0.1, momentum=0.9))
for (x, t), want in zip(batches(), eager):
    np.testing.assert_allclose(graph(x, t).numpy().mean(), want, rtol=1e-5)
for a, b in zip(params(e), params(g)):
    if rank in a.placement.ranks:
        np.testing.assert_allclose(b.to_local().numpy(), a.to_local().numpy(), atol=1e-6)
ir = list(graph._plans.values())[0].compiled.ir()
messages = "".join(w[0] for line in ir.splitlines() for w in ("send", "recv") if w in line)
want = {0: "sssrsrrr", 1: "rs" * 8, 2: "rs" * 4}
assert messages == want[rank], (rank, messages)
# the middle stage: what it receives, activations (8 wide) or gradients (5 wide), in order
received = [line.split(" = ")[0].split(":")[1] for line in ir.splitlines() if "recv" in line]
if rank == 1:
    order = "".join("F" if "8" in meta else "B" for meta in received)
    assert order == "FFBFBFBB", (received, order)


# Local inputs made global inside build(): to_global's meta check is an all_gather of every
# process, which a later stage would reach in its next forward only after the gradient it sent
# back was taken (under 1F1B, after the earlier stage's next forward: a deadlock). A collective
# over several stages keeps GPipe's order.
class LocalInputs(Pipeline):
    def build(self, x, t):
        x = x.to_global(placement=P[0], sbp=B)
        t = t.to_global(placement=P[2], sbp=B)
        return super().build(x, t)


g = placed()
graph = LocalInputs(g, flow.optim.SGD(params(g), lr=0.1, momentum=0.9))
for (x, t), want in zip(zip(data, labels), eager):
    got = graph(flow.tensor(x), flow.tensor(t)).numpy()
    np.testing.assert_allclose(got.mean(), want, rtol=1e-5)
for a, b in zip(params(e), params(g)):
    if rank in a.placement.ranks:
        np.testing.assert_allclose(b.to_local().numpy(), a.to_local().numpy(), atol=1e-6)
ir = list(graph._plans.values())[0].compiled.ir()
messages = "".join(w[0] for line in ir.splitlines() for w in ("send", "recv") if w in line)
assert messages == {0: "ssssrrrr", 1: "rs" * 8, 2: "rrrrssss"}[rank], (rank, messages)
print(f"rank {rank} ok")
"""
)


def test_pipeline_micro_batches_run_one_forward_one_backward(tmp_path):
    _run_on_ranks(tmp_path, ONE_F_ONE_B, 3)
