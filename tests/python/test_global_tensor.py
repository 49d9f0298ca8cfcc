"""Global tensors (placement + sbp): conversions, boxing, ops with their sbp signatures and
gradients, on a world of one in this process and on 2 and 3 real processes over loopback
through the launcher, compared with NumPy."""

import textwrap

import numpy as np
import pytest
from test_distributed import _env, _launch

import oneflow as flow

P1 = flow.placement("cpu", [0])
SBPS = {
    "B": flow.sbp.broadcast,
    "S0": flow.sbp.split(0),
    "S1": flow.sbp.split(1),
    "P": flow.sbp.partial_sum,
}


def _a(shape=(5, 4), seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


@pytest.mark.parametrize("name", list(SBPS))
def test_to_global_and_back_one_rank(name):
    a = _a()
    x = flow.tensor(a)
    g = x.to_global(placement=P1, sbp=SBPS[name])
    assert g.is_global and not g.is_local and not x.is_global
    assert g.shape == (5, 4)
    assert g.placement == P1
    assert g.sbp == (SBPS[name],)
    np.testing.assert_array_equal(g.numpy(), a)
    np.testing.assert_array_equal(g.to_local().numpy(), a)
    assert 'placement=oneflow.placement(type="cpu", ranks=[0])' in repr(g)
    for other in SBPS.values():
        h = g.to_global(sbp=other)
        assert h.sbp == (other,)
        np.testing.assert_array_equal(h.numpy(), a)


def test_sbp_sequence_and_negative_split_axis():
    g = flow.tensor(_a()).to_global(P1, [flow.sbp.split(-1)])
    assert g.sbp == (flow.sbp.split(1),)


def test_global_ops_match_local_one_rank():
    a, b = _a(), _a((4, 3), 1)
    x = flow.tensor(a).to_global(P1, flow.sbp.split(0))
    w = flow.tensor(b).to_global(P1, flow.sbp.broadcast)
    y = flow.matmul(x, w)
    assert y.is_global and y.sbp == (flow.sbp.split(0),)
    np.testing.assert_allclose(y.numpy(), a @ b, rtol=1e-5, atol=1e-6)
    s = (x * 2 + 1).sum()
    assert s.sbp == (flow.sbp.partial_sum,) and s.shape == ()
    np.testing.assert_allclose(s.numpy(), (a * 2 + 1).sum(), rtol=1e-5)
    np.testing.assert_allclose(x.sum(dim=1).numpy(), a.sum(1), rtol=1e-5)
    assert x.sum(dim=1).sbp == (flow.sbp.split(0),)
    t = x.T
    assert t.sbp == (flow.sbp.split(1),) and t.shape == (4, 5)
    np.testing.assert_array_equal(t.numpy(), a.T)
    sm = flow.softmax(x, dim=1)
    assert sm.sbp == (flow.sbp.split(0),)
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(sm.numpy(), e / e.sum(1, keepdims=True), rtol=1e-5)
    r = x.reshape(5, 2, 2)
    assert r.sbp == (flow.sbp.split(0),)
    np.testing.assert_array_equal(r.numpy(), a.reshape(5, 2, 2))
    # an op without its own rule runs on broadcast inputs
    c = flow.cumsum(x, dim=0)
    assert c.sbp == (flow.sbp.broadcast,)
    np.testing.assert_allclose(c.numpy(), np.cumsum(a, 0), rtol=1e-5)


def test_global_backward_one_rank():
    a, b = _a(), _a((4, 3), 1)
    xl = flow.tensor(a, requires_grad=True)
    x = xl.to_global(P1, flow.sbp.split(0))
    w = flow.tensor(b).to_global(P1, flow.sbp.broadcast)
    w.requires_grad_(True)
    assert w.is_leaf
    loss = (flow.matmul(x, w) ** 2).mean()
    loss.backward()
    assert w.grad.is_global
    y = a @ b
    np.testing.assert_allclose(w.grad.numpy(), a.T @ (2 * y / y.size), rtol=1e-4, atol=1e-6)
    assert not xl.grad.is_global
    np.testing.assert_allclose(xl.grad.numpy(), (2 * y / y.size) @ b.T, rtol=1e-4, atol=1e-6)


def test_creation_with_placement_one_rank():
    z = flow.zeros(3, 4, placement=P1, sbp=flow.sbp.split(0))
    assert z.is_global and z.shape == (3, 4) and z.sbp == (flow.sbp.split(0),)
    np.testing.assert_array_equal(z.numpy(), np.zeros((3, 4), np.float32))
    o = flow.ones(2, placement=P1, sbp=flow.sbp.broadcast, requires_grad=True)
    assert o.requires_grad and o.is_leaf
    r = flow.randn(3, 4, placement=P1, sbp=flow.sbp.broadcast)
    assert r.is_global and r.dtype == flow.float32
    t = flow.tensor([[1, 2], [3, 4]], placement=P1, sbp=flow.sbp.split(1))
    np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
    f = flow.full((2, 2), 7.0, placement=P1, sbp=flow.sbp.broadcast)
    assert f.numpy().tolist() == [[7.0, 7.0], [7.0, 7.0]]
    ar = flow.arange(6, placement=P1, sbp=flow.sbp.split(0))
    np.testing.assert_array_equal(ar.numpy(), np.arange(6))
    assert flow.placement.all("cpu") == P1


def test_global_errors_one_rank():
    g = flow.tensor(_a()).to_global(P1, flow.sbp.broadcast)
    with pytest.raises(RuntimeError, match="expected all inputs to be global"):
        g + flow.ones(5, 4)
    with pytest.raises(RuntimeError, match="global tensor"):
        g.data_ptr()
    with pytest.raises(ValueError, match="names rank 1, which is not in the process group of 1"):
        flow.tensor(_a()).to_global(flow.placement("cpu", [0, 1]), flow.sbp.broadcast)
    with pytest.raises(ValueError, match="expected 1 sbp"):
        g.to_global(sbp=[flow.sbp.broadcast, flow.sbp.broadcast])
    with pytest.raises(ValueError, match="needs a tuple of 2 sbp"):
        flow.tensor(_a()).to_global(flow.placement("cpu", [[0]]), flow.sbp.split(0))
    # broadcast alone means broadcast on every axis (what internal callers pass)
    bb = flow.tensor(_a()).to_global(flow.placement("cpu", [[0]]), flow.sbp.broadcast)
    assert bb.sbp == (flow.sbp.broadcast,) * 2
    for ragged in ([[0], []], [[0, 1], [2]], [[0, [1]], [2, 3]], [[], []], []):
        with pytest.raises(ValueError, match="placement"):
            flow.placement("cpu", ragged)
    # a 1 x 1 placement: an sbp per axis
    nd = flow.tensor(_a()).to_global(flow.placement("cpu", [[0]]), (flow.sbp.split(0),) * 2)
    assert nd.sbp == (flow.sbp.split(0), flow.sbp.split(0)) and nd.placement.hierarchy == (1, 1)
    np.testing.assert_array_equal((nd * 2).numpy(), _a() * 2)
    with pytest.raises(IndexError, match="split axis"):
        g.to_global(sbp=flow.sbp.split(2))
    with pytest.raises(ValueError, match="needs an sbp"):
        flow.tensor(_a()).to_global(P1)
    with pytest.raises(RuntimeError, match="only global tensors have a placement"):
        _ = flow.ones(2).placement
    # the scalar operand of a Python number mixes with global tensors
    np.testing.assert_allclose((g * 3).numpy(), _a() * 3)


BODY = """
import os
import numpy as np
import oneflow as flow

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
P = flow.placement("cpu", list(range(world)))
S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
SBPS = {"B": B, "S0": S0, "S1": S1, "P": PS}
results = {}


def keep(key, value):
    results[key] = value


def rows(n):
    base, extra = divmod(n, world)
    begin = rank * base + min(rank, extra)
    return begin, begin + base + (rank < extra)


rng = np.random.RandomState(0)
a = rng.randn(5, 4).astype(np.float32)
b = rng.randn(4, 3).astype(np.float32)
t = rng.randn(5, 3).astype(np.float32)
lo, hi = rows(5)

# local -> global from shards, and every layout change, read back as shards and whole values
gs = flow.tensor(a[lo:hi]).to_global(P, S0)
keep("s0_shape", np.array(gs.shape))
keep("s0_whole", gs)
for src, s in SBPS.items():
    g = flow.tensor(a).to_global(P, B).to_global(sbp=s)
    for dst, d in SBPS.items():
        h = g.to_global(sbp=d)
        keep(f"box_{src}_{dst}_local", h.to_local())
        keep(f"box_{src}_{dst}_whole", h)
# 3-d, with a dim smaller than the world (a rank holds no rows), every pair of layouts
c = np.random.RandomState(1).randn(2, 3, 7).astype(np.float32)
layouts3 = {"B": B, "S0": S0, "S1": S1, "S2": flow.sbp.split(2), "P": PS}
for src, s3 in layouts3.items():
    g3 = flow.tensor(c).to_global(P, B).to_global(sbp=s3)
    for dst, d3 in layouts3.items():
        h3 = g3.to_global(sbp=d3)
        keep(f"box3_{src}_{dst}_local", h3.to_local())
        keep(f"box3_{src}_{dst}_whole", h3)
gp = flow.tensor(a * (rank + 1)).to_global(P, PS)
keep("partial_whole", gp)
keep("partial_to_s1", gp.to_global(sbp=S1).to_local())

# ops: data-parallel matmul, reductions, elementwise with broadcasting, views, softmax
x = flow.tensor(a).to_global(P, B).to_global(sbp=S0)
w = flow.tensor(b).to_global(P, B)
y = flow.matmul(x, w)
keep("mm_sbp", str(y.sbp))
keep("mm", y)
keep("mm_k_split", flow.matmul(x.to_global(sbp=S1), w.to_global(sbp=S0)))
keep("mm_k_split_sbp", str(flow.matmul(x.to_global(sbp=S1), w.to_global(sbp=S0)).sbp))
for name, (sa, sb) in {"sk_b": (S1, B), "b_sk": (B, S0)}.items():
    mk = flow.matmul(x.to_global(sbp=sa), w.to_global(sbp=sb))
    keep(f"mm_{name}", mk)
    keep(f"mm_{name}_sbp", str(mk.sbp))
s = (x * 2 + 1).sum()
keep("sum_sbp", str(s.sbp))
keep("sum", s)
keep("sum1", x.sum(dim=1))
keep("amax0", x.amax(dim=0))
bias = flow.tensor(a[0]).to_global(P, B)
keep("bcast_add", x + bias)
keep("bcast_add_sbp", str((x + bias).sbp))
keep("transpose", x.T)
keep("transpose_sbp", str(x.T.sbp))
keep("softmax", flow.softmax(x, dim=1))
keep("relu_partial", flow.relu(gp))
keep("partial_plus_partial", gp + gp)
keep("item", np.array(s.item()))
keep("reshape", x.reshape(5, 2, 2))
keep("reshape_sbp", str(x.reshape(5, 2, 2).sbp))
keep("expand", x.unsqueeze(1).expand(5, 3, 4))
keep("expand_sbp", str(x.unsqueeze(1).expand(5, 3, 4).sbp))
keep("slice_cols", x[:, 1:3])
keep("slice_cols_sbp", str(x[:, 1:3].sbp))
keep("slice_rows", x[1:4])
xw = x.clone()
xw[:, 0] = 7.0
keep("setitem_cols", xw.clone())
xw[1:3] = 5.0  # along the split dim: written into the whole value, laid out again
keep("setitem_rows", xw)
keep("setitem_rows_sbp", str(xw.sbp))

# autograd through to_global and through global ops, and an SGD step on a global parameter
xl = flow.tensor(a[lo:hi], requires_grad=True)
xg = xl.to_global(P, S0)
wg = flow.tensor(b).to_global(P, B)
wg.requires_grad_(True)
tg = flow.tensor(t).to_global(P, B).to_global(sbp=S0)
loss = ((flow.matmul(xg, wg) - tg) ** 2).mean()
loss.backward()
keep("loss", loss)
keep("w_grad", wg.grad)
keep("w_grad_sbp", str(wg.grad.sbp))
keep("x_grad_local", xl.grad)
opt = flow.optim.SGD([wg], lr=0.1)
opt.step()
opt.zero_grad()
keep("w_after_sgd_local", wg.to_local())

# local -> global broadcast takes rank 0's values (written into the other ranks' tensors
# unless copy=True); check_meta=False takes every shard to have this one's size
mine = flow.full((2,), float(rank))
kept = flow.full((2,), float(rank))
keep("bcast_from_rank0", mine.to_global(P, B).to_local())
keep("bcast_source_after", mine)
kept.to_global(P, B, copy=True)
keep("bcast_copy_source_after", kept)
keep("no_check_meta_shape", np.array(flow.ones(2).to_global(P, S0, check_meta=False).shape))
# to_local of a broadcast tensor: its copies' gradients sum
wb = flow.tensor(b).to_global(P, B)
wb.requires_grad_(True)
(wb.to_local() * (rank + 1)).sum().backward()
keep("to_local_grad", wb.grad)

# data-parallel training of a module made global: rank r holds rows of the batch
flow.manual_seed(0)
model = flow.nn.Sequential(flow.nn.Linear(4, 8), flow.nn.ReLU(), flow.nn.Linear(8, 3))
model.to_global(P, B)
opt = flow.optim.Adam(model.parameters(), lr=0.01)
xs = flow.tensor(a).to_global(P, B).to_global(sbp=S0)
labels = flow.tensor(np.array([0, 1, 2, 1, 0])).to_global(P, B).to_global(sbp=S0)
for step in range(3):
    out = model(xs)
    loss = flow.nn.functional.cross_entropy(out, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    keep(f"ddp_loss{step}", loss)
keep("ddp_weight", model[0].weight)

# creation with placement: random values are rank 0's on every rank
flow.manual_seed(rank)
r = flow.randn(4, 6, placement=P, sbp=S1)
keep("randn_local", r.to_local())
keep("randn_whole", r)

arrays = {k: v.numpy() if isinstance(v, flow.Tensor) else np.asarray(v) for k, v in results.items()}
np.savez(f"rank{rank}.npz", **arrays)
"""


def _split(arr, axis, world, rank):
    n = arr.shape[axis]
    base, extra = divmod(n, world)
    begin = rank * base + min(rank, extra)
    return np.take(arr, range(begin, begin + base + (rank < extra)), axis=axis)


@pytest.mark.parametrize("world", [2, 3])
def test_global_tensors_on_ranks(tmp_path, world):
    (tmp_path / "ranks.py").write_text(textwrap.dedent(BODY))
    proc = _launch(
        tmp_path, "--nproc_per_node", str(world), "ranks.py", env=_env(ONEFLOW_COMM_TIMEOUT=30)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rng = np.random.RandomState(0)
    a = rng.randn(5, 4).astype(np.float32)
    b = rng.randn(4, 3).astype(np.float32)
    t = rng.randn(5, 3).astype(np.float32)
    close = dict(rtol=1e-5, atol=1e-5)
    # the same training on the whole batch in this process
    flow.manual_seed(0)
    model = flow.nn.Sequential(flow.nn.Linear(4, 8), flow.nn.ReLU(), flow.nn.Linear(8, 3))
    opt = flow.optim.Adam(model.parameters(), lr=0.01)
    ddp_losses = []
    for _ in range(3):
        loss = flow.nn.functional.cross_entropy(model(flow.tensor(a)), flow.tensor([0, 1, 2, 1, 0]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        ddp_losses.append(loss.item())
    ddp_weight = model[0].weight.numpy()
    randn_whole = None
    for rank in range(world):
        with np.load(tmp_path / f"rank{rank}.npz") as f:
            r = {k: f[k] for k in f.files}
        assert r["s0_shape"].tolist() == [5, 4]
        np.testing.assert_array_equal(r["s0_whole"], a)
        for src in ("B", "S0", "S1", "P"):
            for dst in ("B", "S0", "S1", "P"):
                np.testing.assert_allclose(r[f"box_{src}_{dst}_whole"], a, **close)
                local = r[f"box_{src}_{dst}_local"]
                if dst == "B":
                    np.testing.assert_allclose(local, a, **close)
                elif dst == "P":
                    np.testing.assert_allclose(local, a if rank == 0 else 0 * a, **close)
                else:
                    axis = int(dst[1])
                    np.testing.assert_allclose(local, _split(a, axis, world, rank), **close)
        c = np.random.RandomState(1).randn(2, 3, 7).astype(np.float32)
        for src in ("B", "S0", "S1", "S2", "P"):
            for dst in ("B", "S0", "S1", "S2", "P"):
                np.testing.assert_allclose(r[f"box3_{src}_{dst}_whole"], c, **close)
                local = r[f"box3_{src}_{dst}_local"]
                if dst[0] == "S":
                    np.testing.assert_allclose(local, _split(c, int(dst[1]), world, rank), **close)
                elif dst == "B":
                    np.testing.assert_allclose(local, c, **close)
        total = a * sum(range(1, world + 1))
        np.testing.assert_allclose(r["partial_whole"], total, **close)
        np.testing.assert_allclose(r["partial_to_s1"], _split(total, 1, world, rank), **close)
        assert str(r["mm_sbp"]) == "(oneflow.sbp.split(dim=0),)"
        np.testing.assert_allclose(r["mm"], a @ b, **close)
        np.testing.assert_allclose(r["mm_k_split"], a @ b, **close)
        assert str(r["mm_k_split_sbp"]) == "(oneflow.sbp.partial_sum,)"
        for name in ("sk_b", "b_sk"):
            np.testing.assert_allclose(r[f"mm_{name}"], a @ b, **close)
            assert str(r[f"mm_{name}_sbp"]) == "(oneflow.sbp.partial_sum,)"
        assert str(r["sum_sbp"]) == "(oneflow.sbp.partial_sum,)"
        np.testing.assert_allclose(r["sum"], (a * 2 + 1).sum(), rtol=1e-5)
        np.testing.assert_allclose(r["item"], (a * 2 + 1).sum(), rtol=1e-5)
        np.testing.assert_allclose(r["sum1"], a.sum(1), **close)
        np.testing.assert_allclose(r["amax0"], a.max(0), **close)
        np.testing.assert_allclose(r["bcast_add"], a + a[0], **close)
        assert str(r["bcast_add_sbp"]) == "(oneflow.sbp.split(dim=0),)"
        np.testing.assert_array_equal(r["reshape"], a.reshape(5, 2, 2))
        assert str(r["reshape_sbp"]) == "(oneflow.sbp.split(dim=0),)"
        np.testing.assert_array_equal(r["expand"], np.broadcast_to(a[:, None], (5, 3, 4)))
        assert str(r["expand_sbp"]) == "(oneflow.sbp.split(dim=0),)"
        np.testing.assert_array_equal(r["slice_cols"], a[:, 1:3])
        assert str(r["slice_cols_sbp"]) == "(oneflow.sbp.split(dim=0),)"
        np.testing.assert_array_equal(r["slice_rows"], a[1:4])
        written = a.copy()
        written[:, 0] = 7.0
        np.testing.assert_array_equal(r["setitem_cols"], written)
        written[1:3] = 5.0
        np.testing.assert_array_equal(r["setitem_rows"], written)
        assert str(r["setitem_rows_sbp"]) == "(oneflow.sbp.split(dim=0),)"
        np.testing.assert_array_equal(r["transpose"], a.T)
        assert str(r["transpose_sbp"]) == "(oneflow.sbp.split(dim=1),)"
        e = np.exp(a - a.max(1, keepdims=True))
        np.testing.assert_allclose(r["softmax"], e / e.sum(1, keepdims=True), **close)
        np.testing.assert_allclose(r["relu_partial"], np.maximum(total, 0), **close)
        np.testing.assert_allclose(r["partial_plus_partial"], 2 * total, **close)
        # the training step
        d = a @ b - t
        np.testing.assert_allclose(r["loss"], (d**2).mean(), rtol=1e-5)
        gw = a.T @ (2 * d / d.size)
        np.testing.assert_allclose(r["w_grad"], gw, **close)
        assert str(r["w_grad_sbp"]) == "(oneflow.sbp.broadcast,)"  # the leaf's layout
        gx = (2 * d / d.size) @ b.T
        np.testing.assert_allclose(r["x_grad_local"], _split(gx, 0, world, rank), **close)
        np.testing.assert_allclose(r["w_after_sgd_local"], b - 0.1 * gw, **close)
        np.testing.assert_array_equal(r["bcast_from_rank0"], [0.0, 0.0])
        np.testing.assert_array_equal(r["bcast_source_after"], [0.0, 0.0])
        np.testing.assert_array_equal(r["bcast_copy_source_after"], [rank, rank])
        assert r["no_check_meta_shape"].tolist() == [2 * world]
        np.testing.assert_allclose(r["to_local_grad"], np.full((4, 3), sum(range(1, world + 1))))
        for step in range(3):
            np.testing.assert_allclose(r[f"ddp_loss{step}"], ddp_losses[step], rtol=1e-5)
        np.testing.assert_allclose(r["ddp_weight"], ddp_weight, rtol=1e-5, atol=1e-6)
        if randn_whole is None:
            randn_whole = r["randn_whole"]
        np.testing.assert_array_equal(r["randn_whole"], randn_whole)
        np.testing.assert_array_equal(r["randn_local"], _split(randn_whole, 1, world, rank))


def test_conversion_aliases_one_rank():
    a = _a()
    g = flow.tensor(a).local_to_global(P1, flow.sbp.split(0))
    assert g.sbp == (flow.sbp.split(0),)
    h = g.global_to_global(sbp=flow.sbp.broadcast)
    assert h.sbp == (flow.sbp.broadcast,)
    with pytest.raises(RuntimeError, match="no longer available.*to_global"):
        flow.tensor(a).to_consistent(P1, flow.sbp.broadcast)
    with pytest.raises(RuntimeError, match="expected a local tensor"):
        g.local_to_global(P1, flow.sbp.broadcast)
    with pytest.raises(RuntimeError, match="expected a global tensor"):
        flow.tensor(a).global_to_global(sbp=flow.sbp.broadcast)
    # to_local of a local tensor is the tensor; copy=True copies
    x = flow.tensor(a)
    assert x.to_local() is x
    np.testing.assert_array_equal(g.to_local(copy=True).numpy(), a)


def test_global_view_and_global_mode_one_rank():
    from oneflow.utils import global_view

    sd = {"w": flow.ones(2, 3), "n": [flow.zeros(4), 7]}
    with pytest.warns(UserWarning, match="not a tensor"):
        g = global_view.to_global(sd, P1, lambda t: flow.sbp.split(t.ndim - 1))
    assert g["w"].sbp == (flow.sbp.split(1),) and g["n"][0].sbp == (flow.sbp.split(0),)
    assert g["n"][1] == 7
    back = global_view.to_local(g)
    assert not back["w"].is_global and back["n"][1] == 7
    assert not global_view.current_global_mode().is_enabled
    with global_view.global_mode(True, placement=P1, sbp=flow.sbp.broadcast):
        mode = global_view.current_global_mode()
        assert mode.is_enabled and mode.placement == P1 and mode.sbp[0] == flow.sbp.broadcast
        z = flow.zeros(2, 2)
        assert z.is_global and z.sbp == (flow.sbp.broadcast,)
        assert flow.randn(3).is_global
        with global_view.global_mode(False):
            assert not flow.ones(2).is_global
        assert z.to("cpu") is z
        assert z.to(flow.float64).dtype == flow.float64
    assert not flow.zeros(2).is_global
    with pytest.raises(ValueError, match="placement and sbp are required"):
        global_view.global_mode(True)


def test_module_to_global_one_rank():
    m = flow.nn.Linear(4, 3)
    w = m.weight
    ref = m(flow.ones(2, 4)).numpy()
    m.to_global(P1, flow.sbp.broadcast)
    assert m.weight is w and w.is_global and w.is_leaf and w.requires_grad
    x = flow.ones(2, 4).to_global(P1, flow.sbp.split(0))
    y = m(x)
    assert y.sbp == (flow.sbp.split(0),)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-6)
    y.sum().backward()
    assert m.weight.grad.is_global and m.bias.grad.is_global
    np.testing.assert_allclose(m.bias.grad.numpy(), [2.0, 2.0, 2.0])


def test_strided_shards_views_and_backward_one_rank():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    xt = flow.tensor(a).to_global(P1, flow.sbp.broadcast).T
    assert not xt.is_contiguous() and xt.contiguous().to_local().is_contiguous()
    np.testing.assert_array_equal(xt.reshape(6).numpy(), a.T.reshape(6))
    np.testing.assert_array_equal(
        flow.nn.functional.pad(xt, (1, 1)).numpy(), np.pad(a.T, ((0, 0), (1, 1)))
    )
    e = np.exp(a.T - a.T.max(1, keepdims=True))
    np.testing.assert_allclose(flow.softmax(xt, 1).numpy(), e / e.sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(xt.repeat(2, 1).numpy(), np.tile(a.T, (2, 1)))
    a3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g3 = flow.tensor(a3).to_global(P1, flow.sbp.broadcast).transpose(0, 1)
    w = flow.ones(4, 1).to_global(P1, flow.sbp.broadcast)
    np.testing.assert_array_equal(
        flow.matmul(g3, w).numpy(), a3.transpose(1, 0, 2) @ np.ones((4, 1))
    )
    # backward rules that build zeros, and defaults made beside the inputs
    x = flow.tensor(a).to_global(P1, flow.sbp.split(0))
    x.requires_grad_(True)
    for f in (
        lambda t: flow.softmax(t, 1).sum(),
        lambda t: t.max(dim=1)[0].sum(),
        lambda t: t.sort(dim=1)[0].sum(),
        lambda t: t.topk(2, dim=1)[0].sum(),
        lambda t: flow.gather(
            t, 1, flow.tensor([[0], [2]]).to_global(P1, flow.sbp.broadcast)
        ).sum(),
        lambda t: flow.nn.functional.layer_norm(t, (3,)).sum(),
    ):
        x.grad = None
        f(x).backward()
        assert x.grad.is_global and x.grad.shape == (2, 3)
    # .data keeps the layout; writes through it reach the tensor
    d = x.data
    assert d.is_global and d.sbp == x.sbp
    d[0, 0] = 100.0
    assert x.numpy()[0, 0] == 100.0


def test_new_tensors_of_a_global_tensor_are_global_one_rank():
    g = flow.ones(2, 3).to_global(P1, flow.sbp.split(0))
    for t in (g.new_zeros(4), g.new_ones(2, 2), g.new_empty(3), g.new_full((2,), 5.0)):
        assert t.is_global and t.placement == P1 and t.sbp == (flow.sbp.broadcast,)
    n = g.new_tensor([1.0, 2.0])
    assert n.is_global and n.numpy().tolist() == [1.0, 2.0]
    assert not g.new_zeros(2, device="cpu").is_global
    assert not flow.ones(2).new_zeros(3).is_global


def test_indexing_and_random_fills_of_global_tensors_one_rank():
    from oneflow.utils import global_view

    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    x = flow.tensor(a).to_global(P1, flow.sbp.split(0))
    np.testing.assert_array_equal(x[[0, 2]].numpy(), a[[0, 2]])
    idx = flow.tensor([2, 0]).to_global(P1, flow.sbp.broadcast)
    np.testing.assert_array_equal(x[idx].numpy(), a[[2, 0]])
    np.testing.assert_array_equal(flow.index_select(x, 0, idx).numpy(), a[[2, 0]])
    emb = flow.nn.Embedding(5, 2)
    emb.to_global(P1, flow.sbp.broadcast)
    np.testing.assert_array_equal(emb(idx).numpy(), emb.weight.numpy()[[2, 0]])
    w = flow.empty(3, 4).to_global(P1, flow.sbp.broadcast)
    flow.nn.init.uniform_(w, -1, 1)
    assert w.is_global and (np.abs(w.numpy()) <= 1).all()
    flow.nn.init.normal_(w)
    flow.nn.init.xavier_uniform_(w)
    with global_view.global_mode(True, placement=P1, sbp=flow.sbp.broadcast):
        for t in (flow.tensor([1, 2]), flow.arange(3), flow.randint(0, 5, (2,))):
            assert t.is_global


BODY_REGRESSIONS = """
import os
import numpy as np
import oneflow as flow

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
P = flow.placement("cpu", list(range(world)))
S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
out = {}

# optimizers update split parameters in place
optimizers = {"sgd": flow.optim.SGD, "adam": flow.optim.Adam}
for name, make in optimizers.items():
    w = flow.ones(6).to_global(P, B).to_global(sbp=S0)
    w.requires_grad_(True)
    opt = make([w], lr=0.1)
    (w * 3).sum().backward()
    opt.step()
    out[name] = w.numpy()
# an in-place op keeps its destination's layout
b = flow.ones(2, 3).to_global(P, B)
p = flow.full((2, 3), float(rank + 1)).to_global(P, PS)
b.mul_(p)
out["mul_inplace_sbp"] = np.array(str(b.sbp))
out["mul_inplace"] = b.numpy()
# a partial sum times a split operand that broadcasts along the op: the partial sum is summed
q = flow.full((5, 4), float(rank + 1)).to_global(P, PS)
c = flow.tensor(np.arange(5, dtype=np.float32).reshape(5, 1)).to_global(P, B).to_global(sbp=S0)
out["partial_times_split"] = (q * c).numpy()
# to_local's gradient on an uneven split
x = flow.ones(5, 2).to_global(P, B).to_global(sbp=S0)
x.requires_grad_(True)
(x.to_local() * 2).sum().backward()
out["to_local_grad"] = x.grad.numpy()
# shards that disagree on a dim other than the split one raise on every rank
try:
    flow.ones(2, 3 + rank).to_global(P, S0)
    out["mismatch"] = np.array(0)
except ValueError as e:
    out["mismatch"] = np.array(int("must have one dtype and shape" in str(e)))
# a broadcast random result is the same on every rank whatever the generators hold
flow.manual_seed(100 + rank)
d = flow.nn.functional.dropout(flow.ones(64).to_global(P, B), p=0.5)
out["dropout"] = d.to_local()
# a split random result: each shard draws its own numbers (the generators are seeded alike)
flow.manual_seed(7)
ds = flow.nn.functional.dropout(flow.ones(8 * world, 64).to_global(P, B).to_global(sbp=S0), 0.5)
out["dropout_split"] = ds.to_local()
# a non-contiguous local tensor made broadcast
t = flow.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) * (rank + 1)).T
out["noncontig_b"] = t.to_global(P, B).to_local()
# a local 0-d leaf used as a number in global ops gets the whole gradient, as a local tensor
sc = flow.tensor(2.0, requires_grad=True)
(flow.ones(5, 2).to_global(P, B).to_global(sbp=S0) * sc).sum().backward()
out["scalar_leaf_grad_is_global"] = np.array(int(sc.grad.is_global))
out["scalar_leaf_grad"] = sc.grad
# casts of integer partial sums cast the sum
ip = flow.full((3,), 100, dtype=flow.int8).to_global(P, PS)
out["int8_partial_as_float"] = ip.float().numpy()
# backward through chunk with unused pieces (zero gradients of a global op are global)
xc = flow.ones(4, 6).to_global(P, B).to_global(sbp=S0)
xc.requires_grad_(True)
xc.chunk(3, dim=1)[1].sum().backward()
out["chunk_grad"] = xc.grad.numpy()
# a local 0-d tensor with a history taken as a number by a global op
wl = flow.tensor(3.0, requires_grad=True)
(flow.ones(4).to_global(P, B).to_global(sbp=S0) * (wl * wl)).sum().backward()
out["local_nonleaf_grad"] = wl.grad
# recurrent layers on global inputs, integer division by a global divisor
rnn = flow.nn.GRU(3, 4, batch_first=True)
rnn.to_global(P, B)
out["gru_shape"] = np.array(rnn(flow.ones(5, 2, 3).to_global(P, B).to_global(sbp=S0))[0].shape)
num = flow.tensor([7, -7, 9, 4]).to_global(P, B).to_global(sbp=S0)
den = flow.tensor([3, 3, 2, 5]).to_global(P, B).to_global(sbp=S0)
out["fmod"] = flow.fmod(num, den).numpy()
# mismatched sbp between ranks and local gradients of global outputs raise
try:
    flow.ones(2, 2).to_global(P, S0 if rank == 0 else S1)
    out["sbp_mismatch"] = np.array(0)
except ValueError as e:
    out["sbp_mismatch"] = np.array(int("same sbp" in str(e)))
try:
    flow.ones(2).to_global(P, B).requires_grad_().sum().backward(flow.tensor(1.0))
    out["local_seed"] = np.array(0)
except RuntimeError as e:
    out["local_seed"] = np.array(int("local tensor but output[0] is global" in str(e)))
# cross_entropy of batch-split logits (summed per rank, one all-reduce for the mean) equals
# the whole batch's, with ignored targets, label smoothing and class weights
logits_np = np.random.RandomState(3).randn(7, 5).astype(np.float32)
targets_np = np.array([0, 3, -100, 4, 1, -100, 2])
class_w = np.array([1.0, 2.0, 0.5, 1.0, 3.0], dtype=np.float32)
for i, kw in enumerate(({}, {"label_smoothing": 0.1}, {"ignore_index": 3}, {"weight": class_w})):
    t_np = np.where(targets_np < 0, kw.get("ignore_index", -100), targets_np)
    ref_x = flow.tensor(logits_np, requires_grad=True)
    local_kw = {k: flow.tensor(v) if k == "weight" else v for k, v in kw.items()}
    ref = flow.nn.functional.cross_entropy(ref_x, flow.tensor(t_np), **local_kw)
    ref.backward()
    gx = flow.tensor(logits_np).to_global(P, B).to_global(sbp=S0)
    gx.requires_grad_(True)
    gt = flow.tensor(t_np).to_global(P, B).to_global(sbp=S0)
    global_kw = {k: v.to_global(P, B) if k == "weight" else v for k, v in local_kw.items()}
    loss = flow.nn.functional.cross_entropy(gx, gt, **global_kw)
    loss.backward()
    out[f"ce{i}_loss_err"] = np.array(abs(loss.item() - ref.item()))
    out[f"ce{i}_grad_err"] = np.array(np.abs(gx.grad.numpy() - ref_x.grad.numpy()).max())
# gradients of broadcast leaves of two dtypes, summed in one bucket per dtype at backward's end
wa = flow.ones(3).to_global(P, B)
wb = flow.ones(3, dtype=flow.float64).to_global(P, B)
wa.requires_grad_(True)
wb.requires_grad_(True)
rows = flow.tensor(np.arange(15, dtype=np.float32).reshape(5, 3)).to_global(P, B)
rows = rows.to_global(sbp=S0)
((rows * wa).sum() + (rows.double() * wb * 2).sum()).backward()
out["bucket_grads"] = np.stack([wa.grad.numpy(), wb.grad.numpy()])
out["bucket_sbp"] = np.array(str(wa.grad.sbp) + str(wb.grad.sbp))
# save with global_dst_rank (rank 0 writes whole values), load with global_src_rank (rank 0
# reads, every rank gets broadcast global tensors) or locally, into a global model
flow.manual_seed(1)
src = flow.nn.Linear(3, 4)
src.to_global(P, B)
src.weight.data = src.weight.data.to_global(sbp=S0)
flow.save(src.state_dict(), "global_sd.of", global_dst_rank=0)
for how in ("global", "local"):
    dst = flow.nn.Linear(3, 4)
    dst.to_global(P, B)
    src_rank = 0 if how == "global" else None
    sd = flow.load("global_sd.of", global_src_rank=src_rank)
    out[f"load_{how}_is_global"] = np.array(int(all(v.is_global for v in sd.values())))
    dst.load_state_dict(sd)
    out[f"load_{how}_weight"] = dst.weight
    out[f"load_{how}_bias"] = dst.bias
out["saved_weight"] = src.weight
out["saved_bias"] = src.bias
np.savez(f"rank{rank}.npz", **{k: np.asarray(v) for k, v in out.items()})
"""


@pytest.mark.parametrize("world", [2, 3])
def test_global_regressions_on_ranks(tmp_path, world):
    (tmp_path / "ranks.py").write_text(textwrap.dedent(BODY_REGRESSIONS))
    proc = _launch(
        tmp_path, "--nproc_per_node", str(world), "ranks.py", env=_env(ONEFLOW_COMM_TIMEOUT=30)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dropouts = []
    for rank in range(world):
        with np.load(tmp_path / f"rank{rank}.npz") as f:
            r = {k: f[k] for k in f.files}
        np.testing.assert_allclose(r["sgd"], np.full(6, 0.7), rtol=1e-6)
        np.testing.assert_allclose(r["adam"], np.full(6, 0.9), rtol=1e-5)
        assert str(r["mul_inplace_sbp"]) == "(oneflow.sbp.broadcast,)"
        np.testing.assert_allclose(r["mul_inplace"], np.full((2, 3), sum(range(1, world + 1))))
        total = sum(range(1, world + 1))
        np.testing.assert_allclose(
            r["partial_times_split"], total * np.arange(5).reshape(5, 1) * np.ones((5, 4))
        )
        np.testing.assert_allclose(r["to_local_grad"], np.full((5, 2), 2.0))
        assert r["mismatch"] == 1
        assert r["scalar_leaf_grad_is_global"] == 0 and r["scalar_leaf_grad"] == 10.0
        wrapped = (np.int64(100) * world + 128) % 256 - 128
        np.testing.assert_array_equal(r["int8_partial_as_float"], np.full(3, float(wrapped)))
        expected_chunk = np.zeros((4, 6))
        expected_chunk[:, 2:4] = 1
        np.testing.assert_array_equal(r["chunk_grad"], expected_chunk)
        assert r["local_nonleaf_grad"] == 24.0
        assert r["gru_shape"].tolist() == [5, 2, 4]
        np.testing.assert_array_equal(r["fmod"], [1, -1, 1, 4])
        assert r["sbp_mismatch"] == 1 and r["local_seed"] == 1
        assert r["load_global_is_global"] == 1 and r["load_local_is_global"] == 0
        col = np.arange(15).reshape(5, 3).sum(0)
        np.testing.assert_array_equal(r["bucket_grads"], np.stack([col, 2 * col]))
        assert str(r["bucket_sbp"]) == "(oneflow.sbp.broadcast,)" * 2
        for i in range(4):
            assert r[f"ce{i}_loss_err"] < 1e-5 and r[f"ce{i}_grad_err"] < 1e-6, (i, r)
        for how in ("global", "local"):
            np.testing.assert_array_equal(r[f"load_{how}_weight"], r["saved_weight"])
            np.testing.assert_array_equal(r[f"load_{how}_bias"], r["saved_bias"])
        dropouts.append(r["dropout"])
        np.testing.assert_array_equal(r["noncontig_b"], np.arange(6).reshape(2, 3).T)
    for d in dropouts[1:]:
        np.testing.assert_array_equal(d, dropouts[0])
    shards = []
    for rank in range(world):
        with np.load(tmp_path / f"rank{rank}.npz") as f:
            shards.append(f["dropout_split"])
    for s in shards[1:]:
        assert s.shape == shards[0].shape and not np.array_equal(s, shards[0])


HOST_VALUE_OPS = """
import numpy as np
import oneflow as flow

rank = flow.env.get_rank()
P = flow.placement("cpu", ranks=[0, 1])
S0, B = flow.sbp.split(0), flow.sbp.broadcast
a = np.arange(6.0, dtype=np.float32).reshape(3, 2)
x = flow.tensor(a).to_global(P, B)
rep = flow.tensor([1, 2, 0]).to_global(P, B)
# ops that read values on the host or build index tensors from shapes
r = flow.repeat_interleave(x, rep, dim=0)
assert r.is_global and r.sbp == (B,)
np.testing.assert_array_equal(r.numpy(), np.repeat(a, [1, 2, 0], axis=0))
np.testing.assert_array_equal(flow.repeat_interleave(rep).numpy(), [0, 1, 1])
idx = flow.tensor([0, 2, 3]).to_global(P, B)
for sbp in (B, S0):
    dst = flow.ones(4, 2).to_global(P, B).to_global(P, sbp)
    want = np.ones((4, 2), np.float32)
    np.add.at(want, [0, 2, 3], a)
    np.testing.assert_array_equal(dst.index_add(0, idx, x).numpy(), want)
    want = np.ones((4, 2), np.float32)
    want[[0, 2, 3]] = a
    np.testing.assert_array_equal(dst.index_copy(0, idx, x).numpy(), want)
m = flow.multinomial(flow.tensor([[0.0, 1, 1, 0], [1, 0, 0, 1]]).to_global(P, B), 2)
draws = [None, None]
flow.distributed.all_gather_object(draws, m.numpy())
assert (draws[0] == draws[1]).all() and m.sbp == (B,)
assert set(draws[0][0]) == {1, 2} and set(draws[0][1]) == {0, 3}, draws[0]
u = flow.unique_consecutive(flow.tensor([1, 1, 2, 2, 3, 1]).to_global(P, B).to_global(P, S0))
np.testing.assert_array_equal(u.numpy(), [1, 2, 3, 1])
img = np.arange(32.0, dtype=np.float32).reshape(2, 1, 4, 4)
for mode in ("nearest", "bilinear"):
    g = flow.tensor(img).to_global(P, B).to_global(P, S0).requires_grad_()
    out = flow.nn.functional.interpolate(g, scale_factor=2, mode=mode)
    ref = flow.tensor(img).requires_grad_()
    want = flow.nn.functional.interpolate(ref, scale_factor=2, mode=mode)
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-6)
    (out * out).sum().backward()
    (want * want).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), ref.grad.numpy(), rtol=1e-5)
theta = np.array([[[1.0, 0.2, 0.1], [0.0, 0.9, -0.1]]], np.float32)
grid = flow.nn.functional.affine_grid(flow.tensor(theta).to_global(P, B), [1, 1, 3, 4])
want = flow.nn.functional.affine_grid(flow.tensor(theta), [1, 1, 3, 4])
np.testing.assert_allclose(grid.numpy(), want.numpy(), rtol=1e-6)
cols = np.arange(2 * 4 * 9, dtype=np.float32).reshape(2, 4, 9)
folded = flow.nn.functional.fold(flow.tensor(cols).to_global(P, B), (4, 4), 2)
want = flow.nn.functional.fold(flow.tensor(cols), (4, 4), 2)
np.testing.assert_allclose(folded.numpy(), want.numpy())
# composites that build index or constant tensors beside their inputs
F = flow.nn.functional


def like(t, v):
    return flow.tensor(v).to_global(P, B) if t.is_global else flow.tensor(v)


for fn in (
    lambda t: flow.diag_embed(t),
    lambda t: flow.block_diag(t, t[:1]),
    lambda t: flow.vander(t[0]),
    lambda t: flow.quantile(t, 0.25, dim=0),
    lambda t: F.embedding_bag(like(t, [[0, 2], [1, 1]]), t, mode="mean"),
):
    got, want = fn(x), fn(flow.tensor(a))
    assert got.is_global
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
m3 = np.array([[3.0, 1, 0], [1, 2, 0], [0, 0, 1]], np.float32)
s = flow.linalg.svd(flow.tensor(m3).to_global(P, B))[1]
assert s.is_global
np.testing.assert_allclose(s.numpy(), np.linalg.svd(m3)[1], rtol=1e-5)
q = flow.tensor(m3).to_global(P, B).requires_grad_()
flow.linalg.svdvals(q).sum().backward()
u_, _, vh = np.linalg.svd(m3)
np.testing.assert_allclose(q.grad.numpy(), u_ @ vh, rtol=1e-4, atol=1e-5)
print(f"rank {rank} ok")
"""


def test_host_value_and_index_building_ops_on_global_tensors(tmp_path):
    from test_distributed import _run_on_ranks

    _run_on_ranks(tmp_path, HOST_VALUE_OPS, 2)


_SQ = np.random.RandomState(3).rand(4, 4).astype(np.float32) + 4 * np.eye(4, dtype=np.float32)
# Composites that built local helper tensors (constants, masks, normalisation factors) or read
# bits through a dtype view: on a global input they raised "expected all inputs to be global
# tensors" or returned a local tensor.
GLOBAL_LIKE_LOCAL = {
    "signbit": lambda x: flow.signbit(x - 0.5),
    "copysign": lambda x: flow.copysign(x, x - 0.5),
    "nextafter": lambda x: flow.nextafter(x, x - 0.5),
    "view_dtype": lambda x: x.view(flow.int32),
    "view_dtype_narrower": lambda x: x.view(flow.int16),
    "lu_unpack": lambda x: flow.lu_unpack(*flow.linalg.lu_factor(x)),
    "linalg_lu": lambda x: flow.linalg.lu(x),
    "matrix_exp_scaled": lambda x: flow.linalg.matrix_exp(x * 3),
    "linalg_vander": lambda x: flow.linalg.vander(x[0]),
    "ifft": lambda x: flow.fft.ifft(x),
    "ihfft": lambda x: flow.fft.ihfft(x),
    "hfft": lambda x: flow.fft.hfft(x),
    "ifft2": lambda x: flow.fft.ifft2(x),
    "complex_conj": lambda x: flow.complex(x, x - 0.5).conj_physical(),
    "complex_scalar_ops": lambda x: 2 - (flow.complex(x, x) + 1) ** 0.5 / 3,
    "complex_pow0": lambda x: flow.complex(x, x) ** 0,
    "complex_rdiv": lambda x: 1 / flow.complex(x, x + 1),
    "complex_plus_python_complex": lambda x: flow.complex(x, x) + (1 + 1j),
    "real_times_python_complex": lambda x: x * (1 + 2j),
    "python_complex_minus_real": lambda x: (1 + 2j) - x,
    "tensor_of_global": lambda x: flow.tensor(x * 2),
    "new_tensor_of_global": lambda x: x.new_tensor(x * 2),
}


@pytest.mark.parametrize("name", sorted(GLOBAL_LIKE_LOCAL))
def test_composites_with_helper_tensors_on_global_inputs(name):
    op = GLOBAL_LIKE_LOCAL[name]
    want = op(flow.tensor(_SQ))
    for sbp in (flow.sbp.broadcast, flow.sbp.split(0)):
        got = op(flow.tensor(_SQ).to_global(P1, sbp))
        outs = got if isinstance(got, tuple) else (got,)
        wants = want if isinstance(want, tuple) else (want,)
        for g, w in zip(outs, wants):
            assert g.is_global, name
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_tensor_of_a_global_tensor_takes_a_new_layout():
    g = flow.tensor(_SQ).to_global(P1, flow.sbp.broadcast)
    t = flow.tensor(g, dtype=flow.float64, placement=P1, sbp=flow.sbp.split(1))
    assert t.is_global and t.sbp == (flow.sbp.split(1),) and t.dtype == flow.float64
    np.testing.assert_array_equal(t.numpy(), _SQ.astype(np.float64))
    t.add_(1)  # a copy
    np.testing.assert_array_equal(g.numpy(), _SQ)


@pytest.mark.parametrize("drop", ["dropout1d", "dropout2d", "dropout3d"])
def test_channel_dropout_of_global_inputs_drops_whole_channels(drop):
    spatial = {"dropout1d": 1, "dropout2d": 2, "dropout3d": 3}[drop]
    x = flow.ones(4, 6, *([3] * spatial)).to_global(P1, flow.sbp.split(0))
    y = getattr(flow.nn.functional, drop)(x, 0.5)
    assert y.is_global and y.sbp == (flow.sbp.split(0),)
    v = y.numpy().reshape(4, 6, -1)
    assert set(np.unique(v)) <= {0.0, 2.0}
    assert (v.min(-1) == v.max(-1)).all()  # one draw per channel


def test_view_dtype_of_a_global_tensor_split_along_its_last_dim():
    g = flow.tensor(_SQ).to_global(P1, flow.sbp.split(1))
    assert g.view(flow.int32).sbp == (flow.sbp.split(1),)  # same element size: the shard's view
    with pytest.raises(RuntimeError, match="split along its last dim"):
        g.view(flow.int16)
    v = flow.tensor(_SQ).to_global(P1, flow.sbp.split(0)).view(flow.int16)
    np.testing.assert_array_equal(v.numpy(), _SQ.view(np.int16))
