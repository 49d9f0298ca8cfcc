"""nn.functional activations, normalisation, embedding and losses, and the matrix products,
against PyTorch (values and gradients in float32 and float64, differential.py's tolerances)."""

import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import check


def F(lib):
    return lib.nn.functional


def _labels(shape, c, seed=0):
    return np.random.default_rng(seed).integers(0, c, size=shape)


ACTIVATIONS = {
    "relu6": lambda lib, a: F(lib).relu6(a * 4),
    "leaky_relu": lambda lib, a: F(lib).leaky_relu(a, 0.2),
    "elu": lambda lib, a: F(lib).elu(a, 0.7),
    "celu": lambda lib, a: F(lib).celu(a, 1.3),
    "selu": lambda lib, a: F(lib).selu(a),
    "silu": lambda lib, a: F(lib).silu(a),
    "mish": lambda lib, a: F(lib).mish(a),
    "softplus": lambda lib, a: F(lib).softplus(a * 5, beta=2, threshold=3),
    "softsign": lambda lib, a: F(lib).softsign(a),
    "hardtanh": lambda lib, a: F(lib).hardtanh(a * 2, -0.5, 1.5),
    "hardsigmoid": lambda lib, a: F(lib).hardsigmoid(a * 5),
    "hardswish": lambda lib, a: F(lib).hardswish(a * 5),
    "hardshrink": lambda lib, a: F(lib).hardshrink(a, 0.3),
    "softshrink": lambda lib, a: F(lib).softshrink(a, 0.3),
    "tanhshrink": lambda lib, a: F(lib).tanhshrink(a),
    "logsigmoid": lambda lib, a: F(lib).logsigmoid(a * 3),
    "threshold": lambda lib, a: F(lib).threshold(a, 0.1, -2.0),
    "glu": lambda lib, a: F(lib).glu(a, 1),
    "log_softmax": lambda lib, a: F(lib).log_softmax(a * 3, dim=1),
    "softmin": lambda lib, a: F(lib).softmin(a, dim=0),
    "normalize": lambda lib, a: F(lib).normalize(a, dim=1),
    "layer_norm": lambda lib, a: F(lib).layer_norm(a, (a.shape[-1],)),
    "group_norm": lambda lib, a: F(lib).group_norm(a.reshape(2, 4, -1), 2),
    "instance_norm": lambda lib, a: F(lib).instance_norm(a.reshape(2, 4, -1)),
    "pad": lambda lib, a: F(lib).pad(a, (1, 2, 0, 1), value=0.5),
    "pad_negative": lambda lib, a: F(lib).pad(a, (-1, 1)),
    "top_level": lambda lib, a: lib.selu(a).sum(1) + lib.nn.functional.softplus(a).mean(),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_and_norms(name, dtype, device):
    if dtype == "float64" and name in ("celu", "hardsigmoid"):
        # PyTorch's float64 backward of these rounds its constant (1/alpha, 1/6) to float32, so
        # its gradient is off by ~3e-8 relative; ours is exact. float32 is compared.
        pytest.skip("PyTorch's float64 gradient uses a float32 constant")
    check(ACTIVATIONS[name], [(4, 6)], dtype=dtype, device=device)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_affine_and_prelu(dtype, device):
    check(
        lambda lib, a, w, b: F(lib).layer_norm(a, (3, 4), w, b, eps=1e-3),
        [(2, 3, 4), (3, 4), (3, 4)],
        dtype=dtype,
        device=device,
    )
    check(lambda lib, a, w: F(lib).prelu(a, w), [(2, 3, 4), (3,)], dtype=dtype, device=device)
    check(lambda lib, a, w: F(lib).prelu(a, w), [(2, 3), (1,)], dtype=dtype, device=device)


def test_prelu_one_fused_pass_like_torch():
    # prelu is one binary kernel: x at and around 0, NaN, infinities, a transposed input, 1-D
    # input with a per-element weight, and both gradients.
    x = np.array([[-2.0, -0.0, 0.0, 1e-30, np.nan], [np.inf, -np.inf, 3.0, -1e-30, -5.0]])
    x = np.broadcast_to(x, (3, 2, 5)).transpose(1, 0, 2).astype(np.float32)  # (2, 3, 5)
    w = np.array([0.25, -1.5, 0.0], np.float32)
    for xs, ws in ((x, w), (x.transpose(0, 2, 1)[:, :3], w), (x[0, 0, :3], w[1:2]), (x, w[:1])):
        ft = flow.tensor(np.ascontiguousarray(xs), requires_grad=True)
        tt = torch.tensor(np.ascontiguousarray(xs), requires_grad=True)
        fw = flow.tensor(ws, requires_grad=True)
        tw = torch.tensor(ws, requires_grad=True)
        fy, ty = flow.nn.functional.prelu(ft, fw), torch.nn.functional.prelu(tt, tw)
        np.testing.assert_array_equal(fy.numpy(), ty.detach().numpy())
        g = np.arange(fy.numel(), dtype=np.float32).reshape(fy.shape) - 4
        fy.backward(flow.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_array_equal(ft.grad.numpy(), tt.grad.numpy())
        np.testing.assert_allclose(fw.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        flow.nn.functional.prelu(flow.tensor([1, -2]), flow.tensor([0.5]))
    for xs, ws in (((3,), (3,)), ((2, 4), (3,)), ((2, 3), (1, 3))):
        with pytest.raises(RuntimeError) as fe:
            flow.nn.functional.prelu(flow.ones(*xs), flow.ones(*ws))
        with pytest.raises(RuntimeError) as te:
            torch.nn.functional.prelu(torch.ones(*xs), torch.ones(*ws))
        assert str(fe.value) == str(te.value)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(training, device):
    rng = np.random.default_rng(0)
    mean, var = rng.standard_normal(3), rng.random(3) + 0.5
    stats = {}

    def fn(lib, a, w, b):
        rm = lib.tensor(mean, dtype=a.dtype, device=a.device)
        rv = lib.tensor(var, dtype=a.dtype, device=a.device)
        out = F(lib).batch_norm(a, rm, rv, w, b, training=training, momentum=0.3)
        stats[lib.__name__] = (rm.cpu().numpy().copy(), rv.cpu().numpy().copy())
        return out

    check(fn, [(4, 3, 5), (3,), (3,)], dtype="float64", device=device)
    np.testing.assert_allclose(stats["oneflow"][0], stats["torch"][0], rtol=1e-10)
    np.testing.assert_allclose(stats["oneflow"][1], stats["torch"][1], rtol=1e-10)


def test_linear_bilinear_and_embedding(device):
    check(lambda lib, x, w, b: F(lib).linear(x, w, b), [(5, 3), (4, 3), (4,)], device=device)
    check(
        lambda lib, x, y, w, b: F(lib).bilinear(x, y, w, b),
        [(5, 3), (5, 2), (4, 3, 2), (4,)],
        device=device,
    )
    idx = _labels((2, 3), 6)

    def emb(lib, w):
        return F(lib).embedding(lib.tensor(idx, device=w.device), w, padding_idx=2)

    check(emb, [(6, 4)], device=device)
    with pytest.raises(IndexError, match="embedding: index out of range"):
        F(flow).embedding(flow.tensor([6]), flow.ones(6, 2))
    with pytest.raises(RuntimeError, match="embedding: expected an integer index"):
        F(flow).embedding(flow.tensor([0.0]), flow.ones(6, 2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "x_shape,w_shape,b_shape",
    [
        ((5, 3), (4, 3), (4,)),  # one GEMM from the bias rows
        ((2, 7, 3), (4, 3), (4,)),  # batch dims folded into rows
        ((0, 3), (4, 3), (4,)),  # no rows
        ((5, 0), (4, 0), (4,)),  # empty inner dim: the bias alone
        ((6, 40), (33, 40), (33,)),
        ((1, 7), (5, 7), (5,)),  # one row: BLAS's gemv, the bias added after
        ((3,), (4, 3), (4,)),  # 1-D input: added after
        ((5, 3), (4, 3), (1,)),  # a broadcast bias: added after
    ],
    ids=str,
)
def test_linear_bias_in_the_gemm_like_torch(x_shape, w_shape, b_shape, dtype):
    # On the CPU the bias of a float linear starts its GEMM's output (BLAS beta = 1, or added
    # after by the other kernels); other shapes add it after. Values and all three gradients,
    # with x, w and b each alone requiring a gradient, and a transposed (non-contiguous) input.
    rng = np.random.default_rng(sum(x_shape) + len(b_shape))
    xv, wv, bv = (rng.standard_normal(s).astype(dtype) for s in (x_shape, w_shape, b_shape))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for needs in ((True, True, True), (False, False, True), (False, True, False)):
        res = []
        for lib in (flow, torch):
            x, w, b = (
                lib.tensor(v, requires_grad=r) for v, r in zip((xv, wv, bv), needs, strict=True)
            )
            y = F(lib).linear(x, w, b)
            y.backward(lib.tensor(np.ones(tuple(y.shape), dtype)))
            grads = [t.grad.numpy() if t.grad is not None else None for t in (x, w, b)]
            res.append((y.detach().numpy(), grads))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=tol, atol=tol)
        for g0, g1 in zip(res[0][1], res[1][1], strict=True):
            assert (g0 is None) == (g1 is None)
            if g0 is not None:
                np.testing.assert_allclose(g0, g1, rtol=tol, atol=tol)
    if len(x_shape) == 2 and len(w_shape) == 2 and x_shape[0] > 0:
        xt = rng.standard_normal(x_shape[::-1]).astype(dtype)
        got = F(flow).linear(flow.tensor(xt).t(), flow.tensor(wv), flow.tensor(bv)).numpy()
        want = torch.nn.functional.linear(torch.tensor(xt).t(), torch.tensor(wv), torch.tensor(bv))
        np.testing.assert_allclose(got, want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("a_t", [False, True])
@pytest.mark.parametrize("b_t", [False, True])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_matmul_gradients_of_transposed_operands_like_torch(a_t, b_t, batch):
    # A transposed contiguous operand (x @ w.t() in linear) gets its gradient computed
    # transposed, so that the weight's gradient is contiguous; values as PyTorch's.
    rng = np.random.default_rng(len(batch) + 2 * a_t + b_t)
    av = rng.standard_normal(batch + ((7, 5) if a_t else (5, 7))).astype("float32")
    bv = rng.standard_normal(batch + ((6, 7) if b_t else (7, 6))).astype("float32")
    gv = rng.standard_normal(batch + (5, 6)).astype("float32")
    res = []
    for lib in (flow, torch):
        a, b = lib.tensor(av, requires_grad=True), lib.tensor(bv, requires_grad=True)
        y = lib.matmul(a.transpose(-1, -2) if a_t else a, b.transpose(-1, -2) if b_t else b)
        y.backward(lib.tensor(gv))
        res.append((a.grad, b.grad))
    for got, want in zip(res[0], res[1], strict=True):
        assert got.is_contiguous()
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    w = flow.nn.Linear(7, 4)
    w(flow.randn(3, 7)).sum().backward()
    assert w.weight.grad.is_contiguous()


def test_dropout_statistics():
    x = flow.ones(200, 500)
    y = F(flow).dropout(x, 0.3)
    kept = (y != 0).float().mean().item()
    assert abs(kept - 0.7) < 0.01
    assert np.allclose(y.numpy()[y.numpy() != 0], 1 / 0.7)
    assert F(flow).dropout(x, 0.3, training=False) is x
    with pytest.raises(ValueError, match="dropout probability"):
        F(flow).dropout(x, 1.5)


def test_one_hot():
    t = np.array([[0, 2], [1, 3]])
    np.testing.assert_array_equal(
        F(flow).one_hot(flow.tensor(t), 5).numpy(),
        torch.nn.functional.one_hot(torch.tensor(t), 5).numpy(),
    )
    assert tuple(F(flow).one_hot(flow.tensor(t)).shape) == (2, 2, 4)


LOSSES = {
    "mse": ([(4, 3), (4, 3)], lambda lib, a, b: F(lib).mse_loss(a, b)),
    # one fused kernel (several threads' ranges past the parallel grain), and the composed path
    "mse_sum_large": (
        [(300, 257), (300, 257)],
        lambda lib, a, b: F(lib).mse_loss(a, b, reduction="sum"),
    ),
    "mse_strided": ([(5, 4), (4, 5)], lambda lib, a, b: F(lib).mse_loss(a.t(), b)),
    "mse_none": ([(4, 3), (4, 3)], lambda lib, a, b: F(lib).mse_loss(a, b, reduction="none")),
    "mse_empty": ([(0, 3), (0, 3)], lambda lib, a, b: F(lib).mse_loss(a, b, reduction="sum")),
    "l1_sum": ([(4, 3), (4, 3)], lambda lib, a, b: F(lib).l1_loss(a, b, reduction="sum")),
    "smooth_l1": ([(4, 3), (4, 3)], lambda lib, a, b: F(lib).smooth_l1_loss(a, b, beta=0.5)),
    "huber": ([(4, 3), (4, 3)], lambda lib, a, b: F(lib).huber_loss(a, b, delta=0.7)),
    "bce_logits": (
        [(4, 3), (4, 3)],
        lambda lib, a, b: F(lib).binary_cross_entropy_with_logits(
            a, b.sigmoid(), pos_weight=lib.tensor([0.5, 1.0, 2.0], dtype=a.dtype, device=a.device)
        ),
    ),
    "bce": (
        [(4, 3), (4, 3)],
        lambda lib, a, b: F(lib).binary_cross_entropy(a.sigmoid(), b.sigmoid(), reduction="none"),
    ),
    "kl_div": (
        [(4, 3), (4, 3)],
        lambda lib, a, b: F(lib).kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean"),
    ),
    "kl_div_log_target": (
        [(4, 3), (4, 3)],
        lambda lib, a, b: F(lib).kl_div(a, b.log_softmax(1), reduction="sum", log_target=True),
    ),
    "margin_ranking": (
        [(5,), (5,)],
        lambda lib, a, b: F(lib).margin_ranking_loss(
            a, b, lib.tensor([1, -1, 1, 1, -1.0], device=a.device).to(a.dtype), 0.1
        ),
    ),
    "cosine_embedding": (
        [(5, 3), (5, 3)],
        lambda lib, a, b: F(lib).cosine_embedding_loss(
            a, b, lib.tensor([1, -1, 1, 1, -1], device=a.device).to(a.dtype), 0.2
        ),
    ),
    "triplet": (
        [(5, 3), (5, 3), (5, 3)],
        lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=0.5),
    ),
    "cosine_similarity": ([(5, 3), (5, 3)], lambda lib, a, b: F(lib).cosine_similarity(a, b)),
    "pairwise_distance": ([(5, 3), (5, 3)], lambda lib, a, b: F(lib).pairwise_distance(a, b)),
    "soft_margin": (
        [(5,)],
        lambda lib, a: F(lib).soft_margin_loss(
            a, lib.tensor([1, -1, 1, 1, -1], dtype=a.dtype, device=a.device)
        ),
    ),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses(name, dtype, device):
    shapes, fn = LOSSES[name]
    check(fn, shapes, dtype=dtype, device=device)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"reduction": "sum"},
        {"reduction": "none"},
        {"ignore_index": 1},
        {"label_smoothing": 0.2},
        {"weight": True},
        {"weight": True, "label_smoothing": 0.1, "ignore_index": 0},
    ],
)
def test_cross_entropy_and_nll(kwargs, dtype, device):
    labels = _labels((6,), 4, seed=3)
    labels_2d = _labels((2, 5), 4, seed=4)

    def kw(lib, x):
        out = dict(kwargs)
        if out.pop("weight", False):
            out["weight"] = lib.tensor([0.2, 1.0, 0.5, 2.0], dtype=x.dtype, device=x.device)
        return out

    def ce(lib, x):
        return F(lib).cross_entropy(x, lib.tensor(labels, device=x.device), **kw(lib, x))

    check(ce, [(6, 4)], dtype=dtype, device=device)

    def ce_spatial(lib, x):
        return F(lib).cross_entropy(x, lib.tensor(labels_2d, device=x.device), **kw(lib, x))

    check(ce_spatial, [(2, 4, 5)], dtype=dtype, device=device)

    def nll(lib, x):
        return F(lib).nll_loss(
            x.log_softmax(1),
            lib.tensor(labels, device=x.device),
            **{k: v for k, v in kw(lib, x).items() if k != "label_smoothing"},
        )

    check(nll, [(6, 4)], dtype=dtype, device=device)


def test_cross_entropy_with_probabilities(device):
    def ce(lib, x, t):
        return F(lib).cross_entropy(x, t.softmax(1), label_smoothing=0.1)

    check(ce, [(5, 4), (5, 4)], dtype="float64", device=device)


@pytest.mark.parametrize("pos_weight", [None, 2.5])
def test_bce_with_logits_exact_at_extreme_logits_like_torch(pos_weight):
    # (1 - t) x is formed before log s(x) is subtracted: a sure target (t = 1) at a large logit
    # keeps its tiny loss instead of cancelling to 0.
    x = np.array([-100, -30, -20, -5, -1e-3, 0, 1e-3, 5, 17, 20, 30, 100], np.float32)
    for t in (0.0, 0.3, 1.0):
        res = []
        for lib in (flow, torch):
            xi = lib.tensor(x, requires_grad=True)
            pw = None if pos_weight is None else lib.tensor([pos_weight])
            loss = lib.nn.functional.binary_cross_entropy_with_logits(
                xi, lib.full((x.size,), t), reduction="none", pos_weight=pw
            )
            loss.sum().backward()
            res.append((loss.detach().numpy(), xi.grad.numpy()))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-6, atol=1e-30)
        # (PyTorch's gradient cancels to 0 where ours keeps -2.5 * s(-17) = -1e-7)
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss", ["smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_smooth_l1_and_huber_fused_like_torch(loss, reduction, dtype):
    # One fused pass over input - target (with the reduction: the pair loss kernel): both sides
    # of the kink, exactly at it, NaN and infinities, an expanded target; values and gradients
    # of both operands. The broadcasting form (no reduction fusion) is covered below.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 50)).astype(dtype)
    x[0, :6] = [0.75, -0.75, 0.0, np.nan, np.inf, -np.inf]
    y = rng.standard_normal(50).astype(dtype)
    y[:6] = 0
    kw = {"beta": 0.75} if loss == "smooth_l1_loss" else {"delta": 0.75}
    g = rng.standard_normal((4, 50) if reduction == "none" else ()).astype(dtype)
    res = []
    for lib in (flow, torch):
        xi, yi = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        out = getattr(lib.nn.functional, loss)(xi, yi.expand(4, 50), reduction=reduction, **kw)
        (out * lib.tensor(g)).sum().backward()
        res.append((out.detach().numpy(), xi.grad.numpy(), yi.grad.numpy()))
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss", ["smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_smooth_l1_and_huber_broadcast_and_large_like_torch(loss, reduction):
    # A broadcasting target (PyTorch warns; the loss is the one-pass elementwise kernel, then the
    # reduction), mixed float64 / float32 operands (promoted), and 300k elements (the threaded
    # pair-loss kernel).
    rng = np.random.default_rng(4)
    kw = {"beta": 0.5} if loss == "smooth_l1_loss" else {"delta": 1.5}
    cases = [
        (rng.standard_normal((6, 1, 7)), rng.standard_normal((5, 1)).astype(np.float32)),
        (rng.standard_normal((3, 100000)).astype(np.float32), rng.standard_normal((3, 100000))),
    ]
    if loss == "huber_loss":  # PyTorch's huber backward fails on mixed dtypes
        cases = [(x, y.astype(x.dtype)) for x, y in cases]
    for x, y in cases:
        res = []
        for lib in (flow, torch):
            xi, yi = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = getattr(lib.nn.functional, loss)(xi, yi, reduction=reduction, **kw)
            out.sum().backward()
            res.append((out.detach().numpy(), xi.grad.numpy(), yi.grad.numpy()))
        assert res[0][0].dtype == res[1][0].dtype
        for a, b in zip(res[0], res[1]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="not a valid value"):
        getattr(flow.nn.functional, loss)(flow.ones(2), flow.ones(2), reduction="avg")
    with pytest.raises(RuntimeError, match=f"{loss}: input of shape"):
        getattr(flow.nn.functional, loss)(flow.ones(2, 3), flow.ones(4))


def test_loss_errors():
    x = flow.randn(3, 4)
    with pytest.raises(RuntimeError, match="cross_entropy|nll_loss"):
        F(flow).nll_loss(x, flow.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(IndexError, match=r"nll_loss: target 4 is out of bounds .*\[0, 4\)"):
        F(flow).cross_entropy(x, flow.tensor([0, 4, 1])).numpy()  # checked by the kernel
    with pytest.raises(ValueError, match="expected target of shape"):
        F(flow).cross_entropy(x, flow.tensor([0, 1]))


LINALG = {
    "mm": ([(3, 4), (4, 5)], lambda lib, a, b: lib.mm(a, b)),
    "bmm": ([(2, 3, 4), (2, 4, 5)], lambda lib, a, b: lib.bmm(a, b)),
    "addmm": ([(5,), (3, 4), (4, 5)], lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2)),
    "baddbmm": (
        [(2, 3, 5), (2, 3, 4), (2, 4, 5)],
        lambda lib, c, a, b: lib.baddbmm(c, a, b, alpha=0.3),
    ),
    "dot": ([(4,), (4,)], lambda lib, a, b: lib.dot(a, b)),
    "mv": ([(3, 4), (4,)], lambda lib, a, b: lib.mv(a, b)),
    "outer": ([(3,), (4,)], lambda lib, a, b: lib.outer(a, b)),
    "tensordot": ([(2, 3, 4), (3, 4, 5)], lambda lib, a, b: lib.tensordot(a, b, dims=2)),
    "tensordot_lists": (
        [(2, 3, 4), (4, 2, 5)],
        lambda lib, a, b: lib.tensordot(a, b, dims=([0, 2], [1, 0])),
    ),
    "trace": ([(4, 4)], lambda lib, a: lib.trace(a)),
    "cross": ([(4, 3), (4, 3)], lambda lib, a, b: lib.cross(a, b, dim=1)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(LINALG))
def test_matrix_products(name, dtype, device):
    shapes, fn = LINALG[name]
    check(fn, shapes, dtype=dtype, device=device)


def test_matrix_product_errors():
    with pytest.raises(RuntimeError, match="mm: expected 2-D"):
        flow.mm(flow.ones(3), flow.ones(3, 2))
    with pytest.raises(RuntimeError, match="dot: inconsistent tensor size"):
        flow.dot(flow.ones(3), flow.ones(4))
    with pytest.raises(RuntimeError, match="bmm: batch sizes differ"):
        flow.bmm(flow.ones(2, 3, 4), flow.ones(3, 4, 5))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("flat_targets", [False, True])
def test_ctc_loss(reduction, flat_targets):
    rng = np.random.default_rng(0)
    T, N, C = 12, 3, 5
    logits = rng.standard_normal((T, N, C))
    targets = rng.integers(1, C, size=(N, 4))
    targets[1, 1] = targets[1, 0]  # a repeated label needs a blank between
    in_len, tgt_len = [12, 9, 11], [4, 2, 3]
    fl = flow.tensor(logits, requires_grad=True)
    tl = torch.tensor(logits, requires_grad=True)
    if flat_targets:
        ft = flow.tensor(np.concatenate([targets[b, : tgt_len[b]] for b in range(N)]))
        tt = torch.tensor(ft.numpy())
    else:
        ft, tt = flow.tensor(targets), torch.tensor(targets)
    fo = F(flow).ctc_loss(
        fl.log_softmax(2), ft, flow.tensor(in_len), flow.tensor(tgt_len), reduction=reduction
    )
    to = torch.nn.functional.ctc_loss(
        tl.log_softmax(2), tt, torch.tensor(in_len), torch.tensor(tgt_len), reduction=reduction
    )
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-9)
    fo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(fl.grad.numpy(), tl.grad.numpy(), rtol=1e-7, atol=1e-10)
    m = flow.nn.CTCLoss(zero_infinity=True)
    impossible = m(
        fl.log_softmax(2)[:2],
        ft if not flat_targets else ft,
        flow.tensor([2, 2, 2]),
        flow.tensor(tgt_len),
    )
    assert np.isfinite(impossible.item())


def test_rms_norm_and_aliases():
    x = np.random.default_rng(0).standard_normal((3, 4))
    f = flow.nn.RMSNorm(4)(flow.tensor(x)).detach().numpy()
    t = torch.nn.RMSNorm(4)(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(f, t, rtol=1e-10)
    a = flow.tensor(x)
    np.testing.assert_allclose(F(flow).quick_gelu(a).numpy(), flow.quick_gelu(a).numpy())
    np.testing.assert_allclose(F(flow).square_relu(a).numpy(), np.maximum(x, 0) ** 2)


@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (3, 4, 5, 5), (2, 3, 2, 3, 4)])
def test_batch_norm_training_kernel_matches_torch(shape):
    """The oneDNN training kernel (float32): output, input/weight/bias gradients, running stats,
    and second-order gradients (composite rule under create_graph)."""
    rng = np.random.default_rng(0)
    x0, dy = (
        rng.standard_normal(shape, dtype=np.float32),
        rng.standard_normal(shape, dtype=np.float32),
    )
    w0, b0 = (
        rng.standard_normal(shape[1], dtype=np.float32),
        rng.standard_normal(shape[1], dtype=np.float32),
    )

    def run(m, tensor):
        x, w, b = (tensor(a, requires_grad=True) for a in (x0, w0, b0))
        rm, rv = tensor(np.zeros(shape[1], np.float32)), tensor(np.ones(shape[1], np.float32))
        y = m.nn.functional.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3)
        gx, gw = m.autograd.grad((y * tensor(dy)).sum(), [x, w], create_graph=True)
        (ggx,) = m.autograd.grad((gx * gx).sum() + (gw * gw).sum(), [x])
        y.backward(tensor(dy))
        return [t.detach().numpy() for t in (y, x.grad, w.grad, b.grad, rm, rv, ggx)]

    for got, want in zip(run(flow, flow.tensor), run(torch, torch.tensor)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


NORM_CASES = [
    # (name, shape, call(lib, x, w, b, rm, rv))
    ("batch_norm eval", (4, 3, 5), lambda F, x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b)),
    ("batch_norm eval 4d", (2, 3, 4, 4), lambda F, x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b)),
    ("batch_norm eval no affine", (5, 3), lambda F, x, w, b, rm, rv: F.batch_norm(x, rm, rv)),
    ("group_norm", (2, 6, 5), lambda F, x, w, b, rm, rv: F.group_norm(x.repeat(1, 2, 1), 3)),
    (
        "group_norm affine",
        (2, 6, 3, 4),
        lambda F, x, w, b, rm, rv: F.group_norm(x, 2, w.repeat(2), b.repeat(2)),
    ),
    (
        "group_norm groups == channels",
        (3, 3, 2, 2, 2),
        lambda F, x, w, b, rm, rv: F.group_norm(x, 3, w, b),
    ),
    ("instance_norm", (2, 3, 7), lambda F, x, w, b, rm, rv: F.instance_norm(x)),
    (
        "instance_norm affine + running stats",
        (4, 3, 3, 5),
        lambda F, x, w, b, rm, rv: F.instance_norm(x, rm, rv, w, b, momentum=0.3),
    ),
    (
        "instance_norm with running stats (eval)",
        (2, 3, 6),
        lambda F, x, w, b, rm, rv: F.instance_norm(x, rm, rv, w, b, use_input_stats=False),
    ),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", NORM_CASES, ids=[c[0] for c in NORM_CASES])
def test_normalisation_kernels_match_torch(case, dtype):
    """float32 runs on oneDNN (batch-norm training/inference primitives), float64 on composites:
    output, gradients of input, weight and bias, second-order gradients, running statistics."""
    name, shape, call = case
    rng = np.random.default_rng(len(name))
    c = shape[1] if "channels" in name or "group" not in name else shape[1] // 2
    arrays = [rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c)]
    stats = [rng.standard_normal(shape[1]), rng.random(shape[1]) + 0.5]

    def run(lib):
        dt = getattr(lib, dtype)
        x, w, b = (lib.tensor(a, dtype=dt, requires_grad=True) for a in arrays)
        rm, rv = (lib.tensor(a, dtype=dt) for a in stats)
        y = call(lib.nn.functional, x, w, b, rm, rv)
        g = lib.tensor(rng_dy(y.shape), dtype=dt)
        inputs = [t for t in (x, w, b)]
        grads = lib.autograd.grad((y * g).sum(), inputs, create_graph=True, allow_unused=True)
        used = [t for t, gr in zip(inputs, grads) if gr is not None]
        total = sum((gr * gr).sum() for gr in grads if gr is not None)
        # A gradient that does not depend on the inputs has zero second-order gradients.
        second = [None] * len(used)
        if total.requires_grad:
            second = lib.autograd.grad(total, used, allow_unused=True)
        second = [lib.zeros_like(t) if s is None else s for t, s in zip(used, second)]
        out = [y, rm, rv] + [gr for gr in grads if gr is not None] + list(second)
        return [t.detach().numpy() for t in out]

    def rng_dy(s):
        return np.random.default_rng(1).standard_normal(tuple(s))

    got, want = run(flow), run(torch)
    assert len(got) == len(want)
    tol = 2e-4 if dtype == "float32" else 1e-9
    for a, e in zip(got, want):
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


def test_instance_norm_module_tracks_running_stats_like_torch():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((3, 4, 5, 5)).astype(np.float32) for _ in range(3)]

    def run(lib):
        m = lib.nn.InstanceNorm2d(4, affine=True, track_running_stats=True, momentum=0.2)
        outs = [m(lib.tensor(x)).detach().numpy() for x in xs]
        m.eval()
        outs.append(m(lib.tensor(xs[0])).detach().numpy())
        buffers = {k: v.numpy() for k, v in m.state_dict().items()}
        return outs, buffers

    (got, got_state), (want, want_state) = run(flow), run(torch)
    for a, e in zip(got, want):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)
    assert sorted(got_state) == sorted(want_state)
    for k in want_state:
        np.testing.assert_allclose(got_state[k], want_state[k], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_float32_special_values_and_dims_match_torch(fn, dim):
    # float32 runs on AVX2 rows (last dim) or oneDNN: NaN, +inf and rows of -inf make the whole
    # row NaN, as in PyTorch; the softmax dim may be inner (strided rows).
    rng = np.random.default_rng(abs(dim))
    # Widths 44 and 600 take the vector columns (and a second block of columns) when the softmax
    # dim has dims after it.
    for width in (4, 44, 600):
        a = (rng.standard_normal((5, 6, width)) * 10).astype(np.float32)
        a[0, :, :] = -np.inf
        a[1, 2, 1] = np.nan
        a[2, 3, 0] = np.inf
        a[3, 1, :] = -np.inf
        a[4, 5, width - 1] = np.nan
        g = rng.standard_normal(a.shape).astype(np.float32)

        def run(lib, a=a, g=g):
            x = lib.tensor(a, requires_grad=True)
            y = getattr(lib, fn)(x, dim)
            y.backward(lib.tensor(g))
            return y.detach().numpy(), x.grad.numpy()

        for got, want in zip(run(flow), run(torch)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
    for shape in [(), (0, 3), (7,), (3, 1000), (5, 1), (4, 13), (2, 4099)]:
        for scale in [1, 30]:
            x = (rng.standard_normal(shape) * scale).astype(np.float32)
            gy = rng.standard_normal(shape).astype(np.float32)
            fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            got = getattr(flow, fn)(fx, -1 if shape else 0)
            want = getattr(torch, fn)(tx, -1 if shape else 0)
            got.backward(flow.tensor(gy))
            want.backward(torch.tensor(gy))
            np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-6, atol=2e-6)
            np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


# The fused activation kernels (kernels/cpu/activation.cpp) against PyTorch: values and
# gradients for a random upstream gradient, at the kinks and special values, on sizes that
# cross the kernels' chunk and thread boundaries, and on a transposed view.
def _lib(functional):
    return flow if functional is flow.nn.functional else torch


FUSED_ACTIVATIONS = {
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "elu": lambda F, x: F.elu(x, 0.7),
    "celu": lambda F, x: F.celu(x, 1.3),
    "selu": lambda F, x: F.selu(x),
    "silu": lambda F, x: F.silu(x),
    "mish": lambda F, x: F.mish(x),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta": lambda F, x: F.softplus(x, beta=2, threshold=3),
    "relu6": lambda F, x: F.relu6(x),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 1.5),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softsign": lambda F, x: F.softsign(x),
    "hardshrink": lambda F, x: F.hardshrink(x, 0.5),
    "softshrink": lambda F, x: F.softshrink(x, 0.5),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.5, -2.0),
    "nan_to_num": lambda F, x: _lib(F).nan_to_num(x, 1.5, 7.0, -9.0),
    "nan_to_num_default": lambda F, x: _lib(F).nan_to_num(x),
    # clamp of a floating tensor by numbers, and the fused gradients of abs and sigmoid
    "clamp": lambda F, x: _lib(F).clamp(x, -0.5, 1.5),
    "clamp_min": lambda F, x: _lib(F).clamp(x, min=-0.5),
    "clamp_max": lambda F, x: x.clamp(max=1.5),
    "clamp_empty_range": lambda F, x: _lib(F).clamp(x, 1.5, -0.5),
    "abs": lambda F, x: _lib(F).abs(x),
    "sigmoid": lambda F, x: _lib(F).sigmoid(x),
}
# PyTorch's float64 kernels of these round a constant (1/alpha, 1/6) to float32: its results
# are ~1e-7 off relative; ours are exact.
_FLOAT32_CONSTANTS = ("celu", "hardsigmoid")
_SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 3.0, -3.0, 6.0, 20.0, 1.5 * 2, 100.0, -100.0]
_SPECIAL += [float("inf"), float("-inf"), float("nan")]


def _activation_inputs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    yield "random", (rng.standard_normal(n) * 5)
    yield "special", np.array(_SPECIAL)
    yield "parallel", rng.standard_normal((130, 600)) * 4  # past the driver's parallel grain
    yield "empty", np.zeros((0, 3))
    yield "scalar", np.array(-1.25)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(FUSED_ACTIVATIONS))
def test_fused_activations_match_torch(name, dtype):
    fn = FUSED_ACTIVATIONS[name]
    tol = dict(rtol=2e-6, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    if dtype == "float64" and name in _FLOAT32_CONSTANTS:
        tol = dict(rtol=1e-6, atol=1e-7)
    if dtype == "float32" and name == "mish":
        # mish' = t + x s (1 - t^2) cancels near x = -1.19 (terms ~0.3, result ~1e-4): the two
        # float32 formulations differ there by a few ulp of the terms.
        tol = dict(rtol=2e-6, atol=5e-6)
    for seed in range(3):
        for kind, a in _activation_inputs(seed):
            a = a.astype(dtype)
            g = np.random.default_rng(seed + 7).standard_normal(a.shape).astype(dtype)
            results = {}
            for lib in (flow, torch):
                x = lib.tensor(a, requires_grad=True)
                y = fn(lib.nn.functional, x)
                y.backward(lib.tensor(g))
                results[lib] = (y.detach().numpy(), x.grad.numpy())
            (y, gx), (yt, gxt) = results[flow], results[torch]
            if name in ("elu", "selu", "celu", "hardswish"):
                # PyTorch's gradient of these at a NaN input depends on its kernel: NaN in
                # float64 and in its AVX2 float32 loop, the last branch's (as ours) in its
                # scalar and AVX-512 float32 code. Compare elsewhere.
                gx, gxt = gx[~np.isnan(a)], gxt[~np.isnan(a)]
            msg = f"{name} {kind} seed {seed}"
            np.testing.assert_allclose(y, yt, **tol, err_msg=msg)
            np.testing.assert_allclose(gx, gxt, **tol, err_msg=msg)
    # A transposed (non-contiguous) input, and an upstream gradient broadcast from a sum.
    a = np.random.default_rng(5).standard_normal((40, 70)).astype(dtype) * 4
    outs = []
    for lib in (flow, torch):
        x = lib.tensor(a, requires_grad=True)
        y = fn(lib.nn.functional, x.t())
        y.sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    for got, want in zip(*outs):
        np.testing.assert_allclose(got, want, **tol)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fused_activations_16_bit_floats_match_torch(dtype):
    a = np.random.default_rng(0).standard_normal(1000) * 4
    for name, fn in sorted(FUSED_ACTIVATIONS.items()):
        x = flow.tensor(a, dtype=getattr(flow, dtype), requires_grad=True)
        xt = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)
        y, yt = fn(flow.nn.functional, x), fn(torch.nn.functional, xt)
        assert y.dtype == getattr(flow, dtype)
        y.sum().backward()
        yt.sum().backward()
        # the rounding of the 16-bit result (and, in PyTorch, of some intermediates)
        tol = dict(rtol=2e-2, atol=2e-2)
        y, yt = y.float().detach().numpy(), yt.float().detach().numpy()
        np.testing.assert_allclose(y, yt, **tol, err_msg=name)
        np.testing.assert_allclose(
            x.grad.float().numpy(), xt.grad.float().numpy(), **tol, err_msg=name
        )


@pytest.mark.parametrize("name", sorted(set(FUSED_ACTIVATIONS) - {"hardsigmoid"}))
def test_fused_activations_second_order_match_torch(name):
    # (PyTorch has no derivative of hardsigmoid's backward; ours is the piecewise zero.)
    fn = FUSED_ACTIVATIONS[name]
    a = np.random.default_rng(1).standard_normal((6, 7)) * 4

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        y = fn(lib.nn.functional, x)
        (gx,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), x)
        return gx.detach().numpy(), ggx.numpy()

    tol = dict(rtol=1e-6, atol=1e-7) if name in _FLOAT32_CONSTANTS else dict(rtol=1e-10, atol=1e-12)
    for got, want in zip(run(flow), run(torch)):
        np.testing.assert_allclose(got, want, **tol)


def test_fused_activations_in_place_and_integer_inputs():
    a = np.random.default_rng(2).standard_normal(50).astype("float32")
    for name in ("leaky_relu", "elu", "silu", "hardswish", "hardtanh", "threshold"):
        x, xt = flow.tensor(a), torch.tensor(a)
        F, Ft = flow.nn.functional, torch.nn.functional
        args = {"threshold": (0.1, 2.0)}.get(name, ())
        out = getattr(F, name)(x, *args, inplace=True)
        getattr(Ft, name)(xt, *args, inplace=True)
        assert out is x
        np.testing.assert_allclose(x.numpy(), xt.numpy(), rtol=1e-6, atol=1e-7)
    # Integer inputs keep working where PyTorch accepts them.
    i = np.arange(-3, 4)
    for name, args in (("hardtanh", (-1, 2)), ("threshold", (0, 5)), ("relu6", ())):
        got = getattr(flow.nn.functional, name)(flow.tensor(i), *args)
        want = getattr(torch.nn.functional, name)(torch.tensor(i), *args)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


GROUP_NORM_SHAPES = [
    # (shape, groups): whole (sample, group) pairs per thread, few pairs (rows split), (N, C),
    # one channel per group, and a zero-size spatial dim.
    ((8, 64, 20, 20), 32),
    ((1, 6, 90, 80), 2),
    ((1, 4, 70000), 1),
    ((5, 12), 4),
    ((3, 6, 7), 6),
    ((2, 4, 0, 3), 2),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("case", GROUP_NORM_SHAPES, ids=[str(c) for c in GROUP_NORM_SHAPES])
def test_group_norm_kernel_matches_torch(case, affine, dtype):
    """The fused group_norm / group_norm_grad kernels (no create_graph): output, input, weight and
    bias gradients; a strided input and a broadcast (stride 0) incoming gradient."""
    shape, groups = case
    rng = np.random.default_rng(sum(shape) + groups)
    x0 = rng.standard_normal(shape) * 3 + 1.5
    w0, b0 = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    dy0 = rng.standard_normal(shape)

    def run(lib):
        dt = getattr(lib, dtype)
        x = lib.tensor(x0, dtype=dt, requires_grad=True)
        w = lib.tensor(w0, dtype=dt, requires_grad=True) if affine else None
        b = lib.tensor(b0, dtype=dt, requires_grad=True) if affine else None
        y = lib.nn.functional.group_norm(x, groups, w, b, eps=1e-5)
        y.backward(lib.tensor(dy0, dtype=dt))
        out = [y, x.grad]
        # PyTorch's weight gradient of an empty input is NaN (0 * NaN statistics); oneflow's is
        # the empty sum, 0: compared for non-empty inputs only.
        if affine and x0.size:
            out += [w.grad, b.grad]
        # Strided input (a transposed view) and a gradient broadcast from a sum.
        xt = lib.tensor(np.swapaxes(x0, 0, 1).copy(), dtype=dt).transpose(0, 1).requires_grad_()
        y2 = lib.nn.functional.group_norm(xt, groups, w, b)
        (y2.sum() * 2).backward()
        out += [y2, xt.grad]
        return [t.detach().numpy() for t in out]

    tol = 5e-4 if dtype == "float32" else 1e-10
    for got, want in zip(run(flow), run(torch)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


NLL_CASES = [
    # (input shape, weighted, ignore_index or None)
    ((7, 5), False, None),
    ((7, 5), True, 2),
    ((3, 4, 2, 3), True, None),
    ((3, 4, 5), False, 1),
    ((6,), True, None),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("case", NLL_CASES, ids=[str(c) for c in NLL_CASES])
def test_fused_nll_loss_matches_torch(case, reduction, dtype):
    """The fused nll_loss kernels (mean and sum): loss, input gradient, class weights, ignored
    targets, spatial dims, a (C,) input with a 0-dim target, and second-order gradients of
    cross_entropy through log_softmax."""
    shape, weighted, ignore = case
    rng = np.random.default_rng(len(shape) * 10 + int(weighted))
    x0 = rng.standard_normal(shape)
    c = shape[0] if len(shape) == 1 else shape[1]
    t_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t0 = rng.integers(0, c, t_shape)
    w0 = rng.random(c) + 0.5

    def run(lib):
        dt = getattr(lib, dtype)
        x = lib.tensor(x0, dtype=dt, requires_grad=True)
        t = lib.tensor(t0, dtype=lib.int64)
        w = lib.tensor(w0, dtype=dt) if weighted else None
        kw = {} if ignore is None else {"ignore_index": ignore}
        F = lib.nn.functional
        loss = F.nll_loss(F.log_softmax(x, x.ndim > 1 and 1 or 0), t, w, reduction=reduction, **kw)
        (gx,) = lib.autograd.grad(loss * 3, [x], create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), [x])
        ce = F.cross_entropy(x, t, w, reduction=reduction, **kw)
        ce.backward()
        return [a.detach().numpy() for a in (loss, gx, ggx, ce, x.grad)]

    tol = 1e-5 if dtype == "float32" else 1e-12
    for got, want in zip(run(flow), run(torch)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_fused_nll_loss_edge_cases_like_torch():
    F = flow.nn.functional
    logp = flow.log_softmax(flow.randn(4, 3), 1)
    # Every target ignored: the mean is 0 / 0 (NaN) and the sum 0, as in PyTorch.
    t = flow.tensor([1, 1, 1, 1])
    assert np.isnan(F.nll_loss(logp, t, ignore_index=1).item())
    assert F.nll_loss(logp, t, ignore_index=1, reduction="sum").item() == 0
    with pytest.raises(IndexError, match=r"nll_loss.*target 3 is out of bounds.*\[0, 3\)"):
        F.nll_loss(logp, flow.tensor([0, 3, 1, 2])).item()
    with pytest.raises(IndexError, match=r"target -2 is out of bounds"):
        F.cross_entropy(flow.randn(2, 3), flow.tensor([0, -2]), reduction="sum").item()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(0, 5), (1, 1), (9, 7), (33, 8), (300, 9), (64, 257), (5,)])
def test_cross_entropy_fused_rows_like_torch(shape, dtype):
    """cross_entropy of (N, C) logits runs log_softmax inside nll_loss's kernel: values and
    gradients over row lengths around the vector width, large and -inf logits, ignored and
    weighted rows, label smoothing, a transposed input, gradients accumulated twice and second
    order."""
    rng = np.random.default_rng(sum(shape))
    x0 = rng.standard_normal(shape) * 4
    c = shape[-1]
    if x0.size > 20:
        x0.flat[3] = 900.0
        x0.flat[11] = -np.inf
    t0 = rng.integers(0, c, shape[:-1])
    if t0.size > 2:
        t0[1] = 2 if c > 2 else 0  # the ignored class below
    w0 = rng.random(c) + 0.5
    tol = 2e-5 if dtype == "float32" else 1e-11
    for reduction, smoothing in (("mean", 0.0), ("sum", 0.0), ("mean", 0.3), ("sum", 0.1)):
        for weighted, ignore in ((False, -100), (True, 2)):
            if smoothing and x0.size > 20:
                x0.flat[11] = -50.0  # (-inf times a weight: NaN in both libraries)
            got, want = [], []
            for lib, out in ((flow, got), (torch, want)):
                dt = getattr(lib, dtype)
                x = lib.tensor(x0, dtype=dt, requires_grad=True)
                w = lib.tensor(w0, dtype=dt) if weighted else None
                t = lib.tensor(t0, dtype=lib.int64)
                F = lib.nn.functional
                for _ in range(2):  # the second backward accumulates into x.grad
                    loss = F.cross_entropy(
                        x,
                        t,
                        w,
                        ignore_index=ignore,
                        reduction=reduction,
                        label_smoothing=smoothing,
                    )
                    loss.backward()
                out += [loss.detach().numpy(), x.grad.numpy()]
            for g, e in zip(got, want):
                np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    if len(shape) == 2 and shape[0] > 1:
        # a transposed (non-contiguous) input and second-order gradients (float64)
        got, want = [], []
        for lib, out in ((flow, got), (torch, want)):
            xt = lib.tensor(np.ascontiguousarray(x0.T), dtype=lib.float64, requires_grad=True)
            xf = lib.tensor(np.where(np.isfinite(x0), x0, 0) / 4, dtype=lib.float64)
            xf.requires_grad_(True)
            t = lib.tensor(t0, dtype=lib.int64)
            F = lib.nn.functional
            a = F.cross_entropy(xt.t(), t)
            (gt,) = lib.autograd.grad(a, [xt])
            out += [a.detach().numpy(), gt.numpy()]
            w = lib.tensor(w0, dtype=lib.float64)
            for kw in ({}, {"label_smoothing": 0.25, "weight": w, "ignore_index": 2}):
                (gx,) = lib.autograd.grad(F.cross_entropy(xf, t, **kw) * 3, [xf], create_graph=True)
                (ggx,) = lib.autograd.grad((gx * gx).sum(), [xf])
                out += [gx.detach().numpy(), ggx.numpy()]
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_without_dim_warns_and_takes_torchs_dim(name):
    rng = np.random.default_rng(14)
    for shape in [(5,), (2, 3), (2, 3, 4), (2, 3, 4, 5)]:
        a = rng.standard_normal(shape).astype(np.float32)
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            f = getattr(flow.nn.functional, name)(flow.tensor(a))
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            t = getattr(torch.nn.functional, name)(torch.tensor(a))
        np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    for lib in (flow, torch):  # the top-level function still requires dim
        with pytest.raises(TypeError):
            lib.softmax(lib.ones(2, 3))
