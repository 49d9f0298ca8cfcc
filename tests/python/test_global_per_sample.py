"""Per-sample ops on global tensors split along the batch (convolutions, pools, layer/group
norm, batch norm, attention and their gradients) keep the split: each rank computes
its samples, weight gradients come out as partial sums. Values and gradients against the same
ops on whole local tensors, on 2 and 3 processes through the launcher (uneven shards)."""

import pathlib
import textwrap

import pytest
from test_distributed import _run_on_ranks

EXAMPLES = str(pathlib.Path(__file__).resolve().parents[2] / "examples")

BODY = """
import sys

import numpy as np
import oneflow as flow
import oneflow.nn.functional as F

rank, world = flow.env.get_rank(), flow.env.get_world_size()
P = flow.placement("cpu", ranks=list(range(world)))
B, S0 = flow.sbp.broadcast, flow.sbp.split(0)
rng = np.random.RandomState(0)


def glob(a, sbp=S0):
    return flow.tensor(a).to_global(P, B).to_global(sbp=sbp)


def weighted_sum(outs):
    floats = [o for o in outs if o.dtype.is_floating_point]
    return sum(o.float().sum() * (i + 1) for i, o in enumerate(floats))


def close(a, b, name, tol):
    np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-4, atol=tol, err_msg=name)


def check(name, fn, batch_shapes, param_shapes, split=True):
    xs = [rng.randn(*s).astype(np.float32) for s in batch_shapes]
    ws = [rng.randn(*s).astype(np.float32) for s in param_shapes]
    # local reference
    lx = [flow.tensor(a, requires_grad=True) for a in xs]
    lw = [flow.tensor(a, requires_grad=True) for a in ws]
    lout = fn(*lx, *lw)
    lout = lout if isinstance(lout, tuple) else (lout,)
    weighted_sum(lout).backward()
    # global: batch split, parameters broadcast
    gx = [glob(a).requires_grad_() for a in xs]
    gw = [glob(a, B).requires_grad_() for a in ws]
    gout = fn(*gx, *gw)
    gout = gout if isinstance(gout, tuple) else (gout,)
    for o in gout:
        assert o.sbp == ((S0,) if split else (B,)), (name, o.sbp)
    weighted_sum(gout).backward()
    for lo, go in zip(lout, gout):
        close(go, lo, name, 1e-5)
    for lt, gt in zip(lx + lw, gx + gw):
        close(gt.grad, lt.grad, name, 1e-4)
    for t in gx:
        assert t.grad.sbp == (S0,), (name, t.grad.sbp)  # the leaf's layout
    for t in gw:
        assert t.grad.sbp == (B,), (name, t.grad.sbp)


def batch_norm_eval(x, w, b):
    mean, var = flow.zeros(4) + 0.5, flow.ones(4) * 2
    if x.is_global:
        mean, var = mean.to_global(P, B), var.to_global(P, B)
    return F.batch_norm(x, mean, var, w, b, training=False)


def sdpa(causal):
    return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal)


N = 5  # uneven shards over 2 and 3 ranks
E = 2 * world  # even ones
CASES = [
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1), [(N, 4, 6, 6)], [(6, 4, 3, 3), (6,)]),
    ("groups", lambda x, w: F.conv2d(x, w, None, 2, 0, 1, 2), [(N, 4, 7, 7)], [(6, 2, 3, 3)]),
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b), [(N, 3, 9)], [(4, 3, 2), (4,)]),
    ("transpose", lambda x, w: F.conv_transpose2d(x, w, None, 2), [(N, 4, 3, 3)], [(4, 2, 3, 3)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2), [(N, 3, 6, 6)], []),
    ("max_pool2d indices", lambda x: F.max_pool2d(x, 3, 2, 1, 1, False, True), [(N, 3, 7, 7)], []),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1), [(N, 3, 7, 7)], []),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [(N, 3, 7, 5)], []),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, 2), [(N, 3, 6, 6)], []),
    ("layer_norm sample", lambda x, w, b: F.layer_norm(x, (4, 6), w, b), [(N, 4, 6)], [(4, 6)] * 2),
    ("layer_norm rows even", lambda x, w, b: F.layer_norm(x, (6,), w, b), [(E, 4, 6)], [(6,)] * 2),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [(E, 4, 3, 3)], [(4,), (4,)]),
    ("group_norm one group", lambda x, w, b: F.group_norm(x, 1, w, b), [(N, 4, 3, 3)], [(4,)] * 2),
    ("batch_norm eval", batch_norm_eval, [(N, 4, 3, 3)], [(4,), (4,)]),
    ("batch_norm eval (N, C)", batch_norm_eval, [(N, 4)], [(4,), (4,)]),
    ("layer_norm (N, D)", lambda x, w, b: F.layer_norm(x, (4,), w, b), [(N, 4)], [(4,), (4,)]),
    ("sdpa", sdpa(False), [(N, 2, 5, 8), (N, 2, 7, 8), (N, 2, 7, 8)], []),
    ("sdpa causal", sdpa(True), [(N, 2, 5, 8)] * 3, []),
]
for case in CASES:
    check(*case)
# rows of uneven shards do not split the flattened statistics as the samples: computed whole
check("layer_norm rows", lambda x, w, b: F.layer_norm(x, (6,), w, b), [(N, 4, 6)], [(6,)] * 2, 0)
check("group_norm uneven", lambda x, w, b: F.group_norm(x, 2, w, b), [(N, 4, 3, 3)], [(4,)] * 2, 0)


# a data-parallel CNN step: the shards' convolutions see only their samples
def cnn():
    flow.manual_seed(0)
    return flow.nn.Sequential(
        flow.nn.Conv2d(3, 8, 3, padding=1), flow.nn.ReLU(), flow.nn.MaxPool2d(2),
        flow.nn.Conv2d(8, 8, 3), flow.nn.GroupNorm(1, 8), flow.nn.AdaptiveAvgPool2d(1),
        flow.nn.Flatten(), flow.nn.Linear(8, 4),
    )


m, ref = cnn(), cnn()
m.to_global(P, B)
x = rng.randn(7, 3, 8, 8).astype(np.float32)
y = rng.randint(0, 4, 7)
hidden = m[:4](glob(x))
assert hidden.sbp == (S0,) and hidden.to_local().shape[0] < 7, hidden.sbp
loss = F.cross_entropy(m(glob(x)), glob(y))
loss.backward()
rl = F.cross_entropy(ref(flow.tensor(x)), flow.tensor(y))
rl.backward()
close(loss, rl, "cnn loss", 1e-6)
for p, q in zip(m.parameters(), ref.parameters()):
    close(p.grad, q.grad, "cnn grads", 1e-5)


# batch norm in training mode: statistics of the whole batch from per-rank sums (the fused
# kernel would need the whole batch on every rank), running statistics as one process's
def bn_net():
    flow.manual_seed(0)
    return flow.nn.Sequential(
        flow.nn.Conv2d(3, 8, 3, padding=1), flow.nn.BatchNorm2d(8), flow.nn.ReLU(),
        flow.nn.Flatten(), flow.nn.Linear(8 * 36, 4),
    )


m, ref = bn_net(), bn_net()
m.to_global(P, B)
for _ in range(3):
    x = rng.randn(7, 3, 6, 6).astype(np.float32)
    y = rng.randint(0, 4, 7)
    loss = F.cross_entropy(m(glob(x)), glob(y))
    loss.backward()
    rl = F.cross_entropy(ref(flow.tensor(x)), flow.tensor(y))
    rl.backward()
    close(loss, rl, "bn loss", 1e-6)
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p.grad, q.grad, "bn grads", 1e-5)
assert m[1](m[0](glob(x))).sbp == (S0,)
ref[1](ref[0](flow.tensor(x)))
for name in ("running_mean", "running_var"):
    assert getattr(m[1], name).sbp == (B,)
    close(getattr(m[1], name), getattr(ref[1], name), name, 1e-6)
# other layouts (channels split, partial sums) take the statistics composed of reductions
x = rng.randn(6, 4, 3, 3).astype(np.float32)
for sbp in (flow.sbp.split(1), flow.sbp.split(2), flow.sbp.partial_sum):
    stats = [flow.zeros(4), flow.ones(4)]
    gstats = [t.to_global(P, B) for t in stats]
    xs = flow.tensor(x, requires_grad=True)
    xg = glob(x) if sbp == flow.sbp.partial_sum else glob(x, sbp)
    if sbp == flow.sbp.partial_sum:
        xg = (glob(x, B) / world).to_global(sbp=sbp)
    xg = xg.detach().requires_grad_()
    out = F.batch_norm(xg, *gstats, training=True)
    ref_out = F.batch_norm(xs, *stats, training=True)
    (out * out).sum().backward()
    (ref_out * ref_out).sum().backward()
    close(out, ref_out, f"batch_norm {sbp}", 1e-5)
    if sbp != flow.sbp.partial_sum:  # (a partial sum leaf's gradient is each shard's)
        close(xg.grad, xs.grad, f"batch_norm grad {sbp}", 1e-4)
    close(gstats[0], stats[0], f"running mean {sbp}", 1e-6)


# a GPT of the example's blocks: embedding lookups of split ids, qkv.split(C, 2), the heads'
# reshapes and transposes, attention, layer norms and the (B * T, V) logits keep the split
sys.path.insert(0, EXAMPLES)
import char_gpt  # noqa: E402


class GlobalGPT(char_gpt.GPT):
    def forward(self, idx):
        pos = flow.arange(idx.shape[1])
        if idx.is_global:
            pos = pos.to_global(P, B)  # positions: the same on every rank
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def gpt():
    flow.manual_seed(0)
    return GlobalGPT(30, 16, d_model=32, n_head=4, n_layer=2)


for batch in (2 * world, 5):  # even shards keep the split through (B * T, V); uneven: whole
    m, ref = gpt(), gpt()
    m.to_global(P, B)
    opt = flow.optim.AdamW(m.parameters(), lr=1e-2)
    ropt = flow.optim.AdamW(ref.parameters(), lr=1e-2)
    split_modules = []
    for mod in m.blocks.modules():
        mod.register_forward_hook(lambda mod, i, o: split_modules.append(o.sbp == (S0,)))
    for _ in range(3):
        idx, tgt = rng.randint(0, 30, (batch, 16)), rng.randint(0, 30, (batch, 16))
        logits = m(glob(idx))
        assert logits.sbp == ((S0,) if batch % world == 0 else (B,)), logits.sbp
        loss = F.cross_entropy(logits.reshape(-1, 30), glob(tgt).reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        rl = F.cross_entropy(ref(flow.tensor(idx)).reshape(-1, 30), flow.tensor(tgt).reshape(-1))
        rl.backward()
        ropt.step()
        ropt.zero_grad()
        close(loss, rl, "gpt loss", 1e-6)
    assert all(split_modules) or batch % world, split_modules
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p, q, "gpt parameters", 1e-4)

# 16-bit inputs keep their dtype (computed in float32, as local CPU tensors)
x = rng.randn(2 * world, 4, 3).astype(np.float32)
for dt in (flow.float16, flow.bfloat16):
    for make in (lambda: flow.nn.BatchNorm1d(4), lambda: flow.nn.LayerNorm(3)):
        m, ref = make(), make()
        m.to_global(P, B)
        out, ref_out = m(glob(x).to(dt)), ref(flow.tensor(x).to(dt))
        assert out.dtype == dt and out.sbp == (S0,), (out.dtype, out.sbp)
        close(out.float(), ref_out.float(), f"16-bit {dt}", 2e-2)
print(f"rank {rank} ok", flush=True)
"""


@pytest.mark.parametrize("world", [2, 3])
def test_per_sample_ops_keep_the_batch_split_on_ranks(tmp_path, world):
    _run_on_ranks(tmp_path, f"EXAMPLES = {EXAMPLES!r}\n" + textwrap.dedent(BODY), world)
