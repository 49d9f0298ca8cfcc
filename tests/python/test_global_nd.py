"""Global tensors on N-D placements (2 x 2 arrays of 4 processes): every pair of 2-D layouts
converts into every other, shards are the nested splits, ops choose a layout per hierarchy
axis (matmul of (S(0), B) by (B, S(1)) stays sharded both ways), and a 2-D hybrid parallel
MLP (data parallel on axis 0, tensor parallel on axis 1) trains as the local model, eagerly
and in nn.Graph; transfers to and from 1-D placements and N-D sub-placements."""

from test_distributed import _run_on_ranks

BOXING = """
import itertools, numpy as np, oneflow as flow
from oneflow import env
r = env.get_rank()
P = flow.placement("cpu", ranks=[[0, 1], [2, 3]])
S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
rng = np.random.RandomState(0)
a = rng.randn(5, 7).astype(np.float32)
x = flow.tensor(a).to_global(P, (B, B))
assert x.sbp == (B, B), x.sbp
errs = []
def split_range(n, k, i):
    base, extra = divmod(n, k); b = i * base + min(i, extra); return b, b + base + (i < extra)
def expected_shard(v, nd, coords):
    for s, c, h in zip(nd, coords, (2, 2)):
        if s.kind == "split":
            b, e = split_range(v.shape[s.axis], h, c)
            v = np.take(v, range(b, e), axis=s.axis)
    return v
coords = divmod(r, 2)
layouts = list(itertools.product([S0, S1, B, PS], repeat=2))
for src in layouts:
    y = x.to_global(P, src)
    if y.sbp != src: errs.append(f"sbp {src} {y.sbp}")
    if not np.allclose(y.numpy(), a, atol=1e-5): errs.append(f"value {src}")
    if PS not in src:
        loc = y.to_local().numpy()
        exp = expected_shard(a, src, coords)
        if loc.shape != exp.shape or not np.allclose(loc, exp):
            errs.append(f"shard {src} {loc.shape} {exp.shape}")
    for dst in layouts:
        z = y.to_global(P, dst)
        if not np.allclose(z.numpy(), a, atol=1e-5): errs.append(f"box {src}->{dst}")
        if PS not in dst:
            loc, exp = z.to_local().numpy(), expected_shard(a, dst, coords)
            if loc.shape != exp.shape or not np.allclose(loc, exp, atol=1e-5):
                errs.append(f"boxshard {src}->{dst}")
# from_local with nd sbp
loc = flow.tensor(expected_shard(a, (S0, S1), coords))
g = loc.to_global(P, (S0, S1))
if g.shape != (5, 7) or not np.allclose(g.numpy(), a): errs.append("from_local")
# matmul hybrid
w = rng.randn(7, 6).astype(np.float32)
X = flow.tensor(a).to_global(P, (B, B)).to_global(P, (S0, B))
W = flow.tensor(w).to_global(P, (B, B)).to_global(P, (B, S1))
W.requires_grad_(True)
Y = X @ W
if Y.sbp != (S0, S1): errs.append(f"matmul sbp {Y.sbp}")
if not np.allclose(Y.numpy(), a @ w, atol=1e-4): errs.append("matmul value")
L = (Y.relu() * 2).sum()
L.backward()
gw = ((a @ w > 0) * 2).astype(np.float32)
if not np.allclose(W.grad.numpy(), a.T @ gw, atol=1e-3): errs.append("matmul grad")
if W.grad.sbp != W.sbp: errs.append(f"grad sbp {W.grad.sbp}")
# elementwise, reductions, softmax
Z = (X * 3 + 1).softmax(dim=1)
ea = np.exp(a * 3 + 1); ea /= ea.sum(1, keepdims=True)
if not np.allclose(Z.numpy(), ea, atol=1e-5): errs.append("softmax")
s = flow.tensor(a).to_global(P, (B, B)).to_global(P, (S0, S1)).sum(dim=0)
if not np.allclose(s.numpy(), a.sum(0), atol=1e-4): errs.append(f"sum {s.sbp}")
m = flow.tensor(a).to_global(P, (B, B)).to_global(P, (S1, S0)).mean()
if not np.allclose(m.numpy(), a.mean(), atol=1e-5): errs.append("mean")
v = flow.tensor(a).to_global(P, (B, B)).to_global(P, (S0, S1)).reshape(35)
if not np.allclose(v.numpy(), a.reshape(35)): errs.append(f"reshape {v.sbp}")
t = flow.tensor(a).to_global(P, (B, B)).to_global(P, (S0, S1)).t()
if not np.allclose(t.numpy(), a.T): errs.append(f"t {t.sbp}")
# a 3-D array of ranks (2 x 1 x 2)
P3 = flow.placement("cpu", ranks=[[[0, 1]], [[2, 3]]])
X3 = flow.tensor(a).to_global(P3, (B, B, B)).to_global(P3, (S0, B, B))
W3 = flow.tensor(w).to_global(P3, (B, B, B)).to_global(P3, (B, B, S1))
Y3 = X3 @ W3
if Y3.sbp != (S0, B, S1) or not np.allclose(Y3.numpy(), a @ w, atol=1e-4):
    errs.append(f"3-D matmul {Y3.sbp}")
if tuple(Y3.to_local().shape) != (3 - coords[0], 3): errs.append(f"3-D shard {Y3.to_local().shape}")
assert not errs, errs
print(f"rank {r} ok")
"""

HYBRID = """
import numpy as np, oneflow as flow, oneflow.nn as nn
from oneflow import env
rank = env.get_rank()
P2 = flow.placement("cpu", ranks=[[0, 1], [2, 3]])
S0, S1, B, P = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
rng = np.random.RandomState(1)
xa = rng.randn(8, 6).astype(np.float32); ta = rng.randn(8, 5).astype(np.float32)
w1a = rng.randn(6, 10).astype(np.float32) * 0.3; w2a = rng.randn(10, 5).astype(np.float32) * 0.3
def glob(a, sbp):
    return flow.tensor(a).to_global(P2, (B, B)).to_global(P2, sbp)
def run(opt_cls, steps=3):
    w1 = nn.Parameter(glob(w1a, (B, S1))); w2 = nn.Parameter(glob(w2a, (B, S0)))
    lw1 = nn.Parameter(flow.tensor(w1a)); lw2 = nn.Parameter(flow.tensor(w2a))
    opt = opt_cls([w1, w2], lr=0.1); lopt = opt_cls([lw1, lw2], lr=0.1)
    x, t = glob(xa, (S0, B)), glob(ta, (S0, B))
    lx, lt = flow.tensor(xa), flow.tensor(ta)
    for _ in range(steps):
        h = (x @ w1).relu()
        assert h.sbp == (S0, S1), h.sbp
        y = h @ w2
        assert y.sbp == (S0, P), y.sbp
        loss = ((y - t) ** 2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        assert w1.grad.sbp == (B, S1) and w2.grad.sbp == (B, S0), (w1.grad.sbp, w2.grad.sbp)
        lloss = ((((lx @ lw1).relu() @ lw2) - lt) ** 2).mean()
        lopt.zero_grad(); lloss.backward(); lopt.step()
        assert abs(loss.item() - lloss.item()) < 1e-4, (loss.item(), lloss.item())
    np.testing.assert_allclose(w1.numpy(), lw1.numpy(), atol=1e-5)
    np.testing.assert_allclose(w2.numpy(), lw2.numpy(), atol=1e-5)
    assert w1.sbp == (B, S1)
run(flow.optim.SGD); run(flow.optim.Adam)
# nn.Linear modules made global
lin = nn.Linear(6, 4)
ref = nn.Linear(6, 4); ref.load_state_dict(lin.state_dict())
lin.to_global(P2, (B, B))
out = lin(glob(xa, (S0, B)))
np.testing.assert_allclose(out.numpy(), ref(flow.tensor(xa)).detach().numpy(), atol=1e-5)
# dropout on (S0, B): the ranks of one row of the array draw the same mask
d = flow.nn.functional.dropout(glob(np.ones((8, 6), np.float32), (S0, B)), p=0.5)
masks = [None] * 4
flow.distributed.all_gather_object(masks, d.to_local().numpy())
assert (masks[0] == masks[1]).all() and (masks[2] == masks[3]).all(), "row masks differ"
assert not (masks[0] == masks[2]).all(), "rows drew the same numbers"
# random creation on N-D
r = flow.randn(8, 4, placement=P2, sbp=(S0, S1))
whole = r.numpy(); allw = [None] * 4
flow.distributed.all_gather_object(allw, whole)
assert all((w == allw[0]).all() for w in allw)
# transfers between 1-D and N-D placements
P1 = flow.placement("cpu", ranks=[0, 1, 2, 3])
for s in [(S0, S1), (P, S0), (B, P), (S1, S1)]:
    g = glob(xa, s)
    for s1 in [S0, B, P]:
        o = g.to_global(P1, s1)
        np.testing.assert_allclose(o.numpy(), xa, atol=1e-5)
        back = o.to_global(P2, s)
        assert back.sbp == s and back.placement == P2
        np.testing.assert_allclose(back.numpy(), xa, atol=1e-5)
# sub-placements: a 2 x 1 array of ranks 0 and 2, a 1 x 2 one of 1 and 3
Q = flow.placement("cpu", ranks=[[0], [2]]); R = flow.placement("cpu", ranks=[[1, 3]])
q = glob(xa, (S0, S1)).to_global(Q, (S0, B))
assert q.placement == Q and q.sbp == (S0, B)
z = (q * 2).sum(dim=1)
np.testing.assert_allclose(z.numpy(), (xa * 2).sum(1), atol=1e-4)
u = z.to_global(R, (B, S0))
np.testing.assert_allclose(u.numpy(), (xa * 2).sum(1), atol=1e-4)
if rank in (1, 3):
    want = np.array_split((xa * 2).sum(1), 2)[[1, 3].index(rank)]
    np.testing.assert_allclose(u.to_local().numpy(), want, atol=1e-4)
else:
    assert tuple(u.to_local().shape) == (0,)
# errors
try:
    glob(xa, (S0,))
    raise AssertionError("one sbp on a 2-D placement was taken")
except ValueError as e:
    assert "2 sbp" in str(e), e
try:
    flow.tensor(np.zeros((rank + 1, 3), np.float32)).to_global(P2, (S0, S0))
    raise AssertionError("uneven shards were taken")
except ValueError as e:
    assert "is not its shard" in str(e), e
assert P2.hierarchy == flow.Size([2, 2]) and P2.ranks.shape == (2, 2)
print(f"rank {rank} ok")
"""

GRAPH = """
import numpy as np, oneflow as flow, oneflow.nn as nn
from oneflow import env
rank = env.get_rank()
P2 = flow.placement("cpu", ranks=[[0, 1], [2, 3]])
S0, S1, B, P = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
rng = np.random.RandomState(1)
xa = rng.randn(8, 6).astype(np.float32); ta = rng.randn(8, 5).astype(np.float32)
w1a = rng.randn(6, 10).astype(np.float32) * 0.3; w2a = rng.randn(10, 5).astype(np.float32) * 0.3
def glob(a, sbp):
    return flow.tensor(a).to_global(P2, (B, B)).to_global(P2, sbp)
class M(nn.Module):
    def __init__(self, g):
        super().__init__()
        self.w1 = nn.Parameter(g(w1a, (B, S1)) if g else flow.tensor(w1a))
        self.w2 = nn.Parameter(g(w2a, (B, S0)) if g else flow.tensor(w2a))
    def forward(self, x):
        return (x @ self.w1).relu() @ self.w2
m, ref = M(glob), M(None)
opt = flow.optim.SGD(m.parameters(), lr=0.1); ropt = flow.optim.SGD(ref.parameters(), lr=0.1)
class G(nn.Graph):
    def __init__(self):
        super().__init__()
        self.m = m
        self.add_optimizer(opt)
    def build(self, x, t):
        loss = ((self.m(x) - t) ** 2).mean()
        loss.backward()
        return loss
g = G()
x, t = glob(xa, (S0, B)), glob(ta, (S0, B))
for i in range(4):
    loss = g(x, t)
    rl = ((ref(flow.tensor(xa)) - flow.tensor(ta)) ** 2).mean()
    ropt.zero_grad(); rl.backward(); ropt.step()
    assert abs(loss.item() - rl.item()) < 1e-4, (i, loss.item(), rl.item())
np.testing.assert_allclose(m.w1.numpy(), ref.w1.numpy(), atol=1e-5)
assert m.w1.sbp == (B, S1)
print(f"rank {rank} ok")
"""


def test_every_2d_layout_converts_to_every_other(tmp_path):
    _run_on_ranks(tmp_path, BOXING, 4)


def test_hybrid_parallel_training_transfers_and_sub_placements(tmp_path):
    _run_on_ranks(tmp_path, HYBRID, 4)


def test_hybrid_parallel_graph_trains_as_local(tmp_path):
    _run_on_ranks(tmp_path, GRAPH, 4)


REGRESSIONS = """
import numpy as np
import oneflow as flow
import oneflow.nn as nn

rank = flow.env.get_rank()
P2 = flow.placement("cpu", ranks=[[0, 1], [2, 3]])
S0, S1, B = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast
a = np.arange(105, dtype=np.float32).reshape(5, 3, 7)
# nested splits of a small dim leave rank 3 an empty shard: every rank must see the same strides
# (it took its shard for non-contiguous and chose another plan than the others)
x = flow.tensor(a).to_global(P2, (B, B)).to_global(P2, (S1, S1))
assert tuple(x.to_local().shape) == ((5, 0, 7) if rank == 3 else (5, 1, 7)), x.to_local().shape
assert x.is_contiguous()
np.testing.assert_array_equal(x.view(15, 7).numpy(), a.reshape(15, 7))
np.testing.assert_array_equal(x.view(5, 1, 3, 7).numpy(), a.reshape(5, 1, 3, 7))
sm = x.softmax(-1).numpy()
e = np.exp(a - a.max(-1, keepdims=True))
np.testing.assert_allclose(sm, e / e.sum(-1, keepdims=True), rtol=1e-5)
# an embedding's gradient with the batch split over one axis only (rows split on axis 0)
table = nn.Parameter(flow.tensor(np.arange(20.0, dtype=np.float32).reshape(5, 4)).to_global(P2, B))
ids = flow.tensor([[0, 1], [4, 4], [2, 0], [3, 3]]).to_global(P2, B).to_global(P2, (S0, B))
flow.nn.functional.embedding(ids, table).relu().sum().backward()
want = np.zeros((5, 4), np.float32)
for i in [0, 1, 4, 4, 2, 0, 3, 3]:  # relu passes the gradient where the row is positive
    want[i] += (np.arange(20.0).reshape(5, 4)[i] > 0)
np.testing.assert_array_equal(table.grad.numpy(), want)
assert table.grad.sbp == (B, B)


# dropout of split layouts inside nn.Graph: every rank draws its own shard's mask, at each call
class Drop(flow.nn.Graph):
    def build(self, x):
        return flow.nn.functional.dropout(x, 0.5)


for place, sbp in ((P2, (S0, S1)), (flow.placement("cpu", ranks=[0, 1, 2, 3]), (S0,))):
    g = Drop()
    ones = flow.ones(8, 8).to_global(place, B if len(sbp) == 1 else (B, B)).to_global(place, sbp)
    first, second = g(ones), g(ones)
    assert first.sbp == sbp
    masks = [None] * 4
    flow.distributed.all_gather_object(masks, (first.to_local().numpy(), second.to_local().numpy()))
    assert all(not np.array_equal(m[0], m[1]) for m in masks), "a replay repeated its mask"
    assert len({m[0].tobytes() for m in masks}) == 4, "shards drew the same numbers"
    assert set(np.unique(first.numpy())) <= {0.0, 2.0}
# one broadcast sbp stands for broadcast on every axis (internal callers pass it)
m = nn.Linear(3, 2)
sd = {k: v.clone() for k, v in m.state_dict().items()}
m.to_global(P2, (B, B))
m.load_state_dict(sd)
np.testing.assert_array_equal(m.weight.numpy(), sd["weight"].numpy())
w = flow.ones(4, 2).to_global(P2, B).to_global(P2, (S0, B))
assert w.new_zeros(3).sbp == (B, B) and w[[0, 2]].shape == (2, 2)
out, h = nn.GRU(2, 3).to_global(P2, B)(flow.ones(5, 1, 2).to_global(P2, B))
assert out.shape == (5, 1, 3) and h.sbp == (B, B)
print(f"rank {rank} ok")
"""


def test_empty_shards_embedding_gradients_graph_dropout_and_broadcast_sbp(tmp_path):
    _run_on_ranks(tmp_path, REGRESSIONS, 4)
