"""Global tensors' layout metadata and the rules that read it: strides that every rank sees
alike (they choose code paths, some of which communicate), views of shards with size-1 dims,
squeeze of a split tensor, norm gradients of uneven batches, max_unpool; against the same ops
on local tensors, in this process and on 2 and 3 processes."""

import numpy as np
import pytest
from test_distributed import _run_on_ranks

import oneflow as flow

P1 = flow.placement("cpu", [0])


def test_a_sliced_shard_with_a_size_one_dim_is_not_contiguous_one_rank():
    x = np.arange(96, dtype=np.float32).reshape(1, 4, 24)
    g = flow.tensor(x).to_global(P1, flow.sbp.broadcast)[:, :, 8:16]
    assert not g.is_contiguous()
    np.testing.assert_array_equal(g.reshape(1, 32).numpy(), x[:, :, 8:16].reshape(1, 32))
    np.testing.assert_array_equal(g.flatten(1).numpy(), x[:, :, 8:16].reshape(1, 32))
    w = np.random.RandomState(0).randn(8, 3).astype(np.float32)
    out = g @ flow.tensor(w).to_global(P1, flow.sbp.broadcast)
    np.testing.assert_allclose(out.numpy(), x[:, :, 8:16] @ w, rtol=1e-5)
    stepped = flow.tensor(x).to_global(P1, flow.sbp.broadcast)[:, :, ::2]
    np.testing.assert_array_equal(stepped.reshape(1, -1).numpy(), x[:, :, ::2].reshape(1, -1))


BODY = """
import numpy as np
import oneflow as flow
import oneflow.nn.functional as F

rank, world = flow.env.get_rank(), flow.env.get_world_size()
P = flow.placement("cpu", ranks=list(range(world)))
B, S0, S1 = flow.sbp.broadcast, flow.sbp.split(0), flow.sbp.split(1)
rng = np.random.RandomState(0)


def glob(a, sbp=S0):
    return flow.tensor(a).to_global(P, B).to_global(sbp=sbp)


def close(a, b, what):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4, err_msg=what)


# every rank's strides agree when some shards hold one row: matmul's gradient takes one path
x, y = rng.randn(4, 6).astype(np.float32), rng.randn(4, 3).astype(np.float32)
gx = glob(x).requires_grad_()
o = gx.t() @ glob(y)
(o * o).sum().backward()
close(gx.grad.numpy(), 2 * y @ (x.T @ y).T, "x.t() @ y gradient")
strides = flow.tensor(list(gx.t().stride())).to_global(P, B)
mine = flow.tensor(list(gx.t().stride()))
assert (strides.to_local() == mine).all(), (strides.to_local(), mine)

# second order through a product of uneven shards
for n in (3, 5):
    a, t = rng.randn(n, 4), rng.randint(0, 3, n)
    w = rng.randn(4, 3)
    outs = []
    for make in (lambda v, s=S0: glob(v, s), lambda v, s=None: flow.tensor(v)):
        xa = make(a.astype(np.float32)).requires_grad_()
        wa = make(w.astype(np.float32), B).requires_grad_()
        loss = F.cross_entropy(xa @ wa, make(t))
        (g,) = flow.autograd.grad(loss, xa, create_graph=True)
        (g * g).sum().backward()
        outs.append(wa.grad.numpy())
    close(outs[0], outs[1], f"second order, batch {n}")

# norm gradients of an uneven batch whose forward ran on the whole batch
for norm in ("layer", "group"):
    x, r = rng.randn(5, 4, 6).astype(np.float32), rng.randn(5, 4, 6).astype(np.float32)
    wt = rng.randn(6 if norm == "layer" else 4).astype(np.float32)
    res = []
    for make in (lambda v, s=S0: glob(v, s), lambda v, s=None: flow.tensor(v)):
        xa, wa = make(x).requires_grad_(), make(wt, B).requires_grad_()
        out = F.layer_norm(xa, (6,), wa) if norm == "layer" else F.group_norm(xa, 2, wa)
        (out * make(r)).sum().backward()
        res.append((xa.grad.numpy(), wa.grad.numpy()))
    close(res[0][0], res[1][0], f"{norm}_norm input gradient")
    close(res[0][1], res[1][1], f"{norm}_norm weight gradient")

# squeeze of one size-1 dim of a tensor split along a later dim
x = np.arange(30, dtype=np.float32).reshape(1, 6, 5)
g = glob(x, S1)
np.testing.assert_array_equal(g[:, :, 0].numpy(), x[:, :, 0])
for a, b in zip(g.unbind(2), x.transpose(2, 0, 1)):
    np.testing.assert_array_equal(a.numpy(), b)
assert g.squeeze(0).sbp == (flow.sbp.split(0),)

# max_unpool of a global tensor
x = rng.randn(4, 3, 8, 8).astype(np.float32)
for sbp in (B, S0):
    v, i = F.max_pool2d(glob(x, sbp), 2, return_indices=True)
    lv, li = F.max_pool2d(flow.tensor(x), 2, return_indices=True)
    expected = F.max_unpool2d(lv, li, 2).numpy()
    np.testing.assert_array_equal(F.max_unpool2d(v, i, 2).numpy(), expected)
print(f"rank {rank} ok", flush=True)
"""


@pytest.mark.parametrize("world", [2, 3])
def test_layouts_agree_across_ranks(tmp_path, world):
    _run_on_ranks(tmp_path, BODY, world)
