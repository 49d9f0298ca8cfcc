"""The vectorised CPU paths of the pools and reductions against PyTorch: max and average pooling
(the columns whose windows lie inside the input run eight at a time), amax/amin/max/min/argmax
along a contiguous dim, prod and sums along outer dims, float64 sums and the one-pass 2-norm;
the elementwise driver's loops (built per tier) on broadcast operands, where with broadcast
masks and values, the fused scaled dot-product attention, nan_to_num, cummax/cummin
lines, the one-pass cat of contiguous inputs and the radix sort of long lines. Each case also
runs in a process capped at the lower vector tiers (ONEFLOW_CPU_CAPABILITY), so the SSE2
fallbacks are checked on machines with AVX2."""

import itertools
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import oneflow as flow


def _pool_input(rng, shape):
    # NaNs, -infs and ties (rounded values) exercise PyTorch's index rule: the first maximum,
    # replaced by any later NaN.
    a = np.round(rng.standard_normal(shape), 1).astype(np.float32)
    a[rng.random(shape) < 0.02] = np.nan
    a[rng.random(shape) < 0.02] = -np.inf
    return a


def _geometries():
    for (h, w), k, s, p, d, ceil in itertools.product(
        [(7, 9), (16, 40), (5, 100), (1, 37)],
        (1, 2, 3, 5),
        (1, 2, 3),
        (0, 1, 2),
        (1, 2),
        (False, True),
    ):
        if p <= k // 2 and (k - 1) * d + 1 <= min(h, w) + 2 * p:
            yield h, w, k, s, p, d, ceil


def test_max_pool2d_values_and_indices_like_torch():
    rng = np.random.default_rng(0)
    checked = 0
    for h, w, k, s, p, d, ceil in _geometries():
        a = _pool_input(rng, (2, 3, h, w))
        args = (k, s, p, d)
        tv, ti = torch.nn.functional.max_pool2d(
            torch.tensor(a), *args, ceil_mode=ceil, return_indices=True
        )
        if (ti.numpy() < 0).any() or (ti.numpy() >= h * w).any():
            continue  # a window wholly in the padding: PyTorch's index points nowhere
        fv, fi = flow.nn.functional.max_pool2d(
            flow.tensor(a), *args, ceil_mode=ceil, return_indices=True
        )
        plain = flow.nn.functional.max_pool2d(flow.tensor(a), *args, ceil_mode=ceil)
        what = f"{(h, w)} k={k} s={s} p={p} d={d} ceil={ceil}"
        np.testing.assert_array_equal(fi.numpy(), ti.numpy(), err_msg=what)
        np.testing.assert_array_equal(fv.numpy(), tv.numpy(), err_msg=what)  # NaNs compare equal
        np.testing.assert_array_equal(plain.numpy(), tv.numpy(), err_msg=what)
        checked += 1
    assert checked >= 300


@pytest.mark.parametrize("dims", [1, 3])
def test_max_pool_1d_3d_like_torch(dims):
    rng = np.random.default_rng(dims)
    shape = (2, 3, 50) if dims == 1 else (2, 3, 9, 10, 30)
    fn = f"max_pool{dims}d"
    for k, s, p in [(3, 2, 1), (2, 2, 0), (3, 1, 1), (5, 3, 2)]:
        a = _pool_input(rng, shape)
        tv, ti = getattr(torch.nn.functional, fn)(torch.tensor(a), k, s, p, return_indices=True)
        fv, fi = getattr(flow.nn.functional, fn)(flow.tensor(a), k, s, p, return_indices=True)
        np.testing.assert_array_equal(fi.numpy(), ti.numpy())
        np.testing.assert_array_equal(fv.numpy(), tv.numpy())


def test_max_pool2d_gradient_like_torch():
    a = np.random.default_rng(3).standard_normal((2, 4, 21, 35)).astype(np.float32)
    g = np.random.default_rng(4).standard_normal((2, 4, 11, 18)).astype(np.float32)
    grads = []
    for lib in (flow, torch):
        x = lib.tensor(a, requires_grad=True)
        lib.nn.functional.max_pool2d(x, 3, 2, 1).backward(lib.tensor(g))
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-6)


def test_avg_pool2d_values_and_gradients_like_torch():
    rng = np.random.default_rng(1)
    checked = 0
    for (h, w), k, s, p, ceil, include_pad, div in itertools.product(
        [(7, 9), (16, 40), (5, 100)],
        (1, 2, 3, 5),
        (1, 2, 3),
        (0, 1, 2),
        (False, True),
        (False, True),
        (None, 7),
    ):
        if p > k // 2 or k > min(h, w) + 2 * p:
            continue
        a = rng.standard_normal((2, 3, h, w)).astype(np.float32)
        kw = dict(ceil_mode=ceil, count_include_pad=include_pad, divisor_override=div)
        tx, fx = torch.tensor(a, requires_grad=True), flow.tensor(a, requires_grad=True)
        ty = torch.nn.functional.avg_pool2d(tx, k, s, p, **kw)
        fy = flow.nn.functional.avg_pool2d(fx, k, s, p, **kw)
        what = f"{(h, w)} k={k} s={s} p={p} {kw}"
        # float32 sums of at most 25 taps in another order: a few ulp.
        np.testing.assert_allclose(
            fy.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=what
        )
        g = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
        ty.backward(torch.tensor(g))
        fy.backward(flow.tensor(g))
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
        checked += 1
    assert checked > 400


def _with_nans(rng, shape):
    a = rng.standard_normal(shape).astype(np.float32)
    a[rng.random(shape) < 0.002] = np.nan
    a.flat[:: max(1, a.size // 7)] = 0.0  # zeros of both signs tie
    a.flat[1 :: max(1, a.size // 5)] = -0.0
    return a


@pytest.mark.parametrize("shape", [(16, 64, 64), (5, 9, 37), (3, 130, 11), (2, 70, 300)])
def test_sums_over_a_middle_dim_like_torch(shape):
    # Whole rows of the kept inner dim added four at a time (float lanes per block of rows).
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(np.float32)
    f, t = flow.tensor(a), torch.tensor(a).double()
    for got, want in (
        (flow.sum(f, 1), torch.sum(t, 1)),
        (flow.mean(f, 1), torch.mean(t, 1)),
        (flow.linalg.vector_norm(f, dim=1), torch.linalg.vector_norm(t, dim=1)),
        (flow.sum(f, (0, 1)), torch.sum(t, (0, 1))),
    ):
        np.testing.assert_allclose(got.numpy(), want.float().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 5, 8, 13, 16, 24, 64, 1000, 1023])
def test_short_runs_side_by_side_like_torch(n):
    # Reductions over the last dim of runs shorter than 1024 take four runs per pass: every
    # count of runs around the groups of four, tails of the eight- and sixteen-float steps, and
    # NaNs first, in the middle and in the tail of a run.
    rng = np.random.default_rng(n)
    for runs in (1, 3, 4, 7, 130):
        a = rng.standard_normal((runs, n)).astype(np.float32)
        b = a.copy()
        b[0, 0] = np.nan
        if runs > 2:
            b[1, -1] = np.nan
            b[2, n // 2] = np.nan
        f, t = flow.tensor(a), torch.tensor(a)
        want = torch.sum(t.double(), -1).float().numpy()
        np.testing.assert_allclose(flow.sum(f, -1).numpy(), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(
            flow.linalg.vector_norm(f, dim=-1).numpy(),
            torch.linalg.vector_norm(t.double(), dim=-1).float().numpy(),
            rtol=1e-5,
        )
        np.testing.assert_allclose(
            flow.prod(f, -1).numpy(), torch.prod(t.double(), -1).float().numpy(), rtol=4e-7
        )
        for x in (a, b):
            for name in ("amax", "amin"):
                np.testing.assert_array_equal(
                    getattr(flow, name)(flow.tensor(x), -1).numpy(),
                    getattr(torch, name)(torch.tensor(x), -1).numpy(),
                    err_msg=f"{name} runs={runs}",
                )
        np.testing.assert_array_equal(
            np.isnan(flow.sum(flow.tensor(b), -1).numpy()), np.isnan(b).any(-1)
        )


@pytest.mark.parametrize(
    "shape",
    [
        (1024, 1024),
        (37, 300),
        (5, 7),
        (300, 37),
        (1000, 3),
        (3, 64),
        (16, 64, 64),
        (5, 9, 37),
        (3, 7, 75),  # along dim 1: a 64-column strip, an 8-column strip, 3 scalar columns
    ],
)
def test_extreme_reductions_along_each_dim_like_torch(shape):
    rng = np.random.default_rng(sum(shape))
    a = _with_nans(rng, shape)
    f, t = flow.tensor(a), torch.tensor(a)
    for d in (0, 1, -1):
        for name in ("amax", "amin"):
            np.testing.assert_array_equal(
                getattr(flow, name)(f, d).numpy(), getattr(torch, name)(t, d).numpy()
            )
        for name in ("max", "min"):
            fv, fi = getattr(flow, name)(f, d)
            tv, ti = getattr(torch, name)(t, d)
            np.testing.assert_array_equal(fi.numpy(), ti.numpy(), err_msg=f"{name} dim {d}")
            np.testing.assert_array_equal(fv.numpy(), tv.numpy())
        for name in ("argmax", "argmin"):
            np.testing.assert_array_equal(
                getattr(flow, name)(f, d).numpy(), getattr(torch, name)(t, d).numpy()
            )
    clean = np.nan_to_num(a)
    assert float(flow.amax(flow.tensor(clean))) == float(torch.amax(torch.tensor(clean)))
    assert np.isnan(float(flow.amax(f))) == bool(np.isnan(a).any())


@pytest.mark.parametrize("shape", [(1024, 1024), (37, 300), (300, 37), (7, 5)])
def test_prod_and_float64_sums_like_torch(shape):
    rng = np.random.default_rng(7)
    a = rng.uniform(0.5, 1.5, shape).astype(np.float32)
    a[rng.random(shape) < 0.01] *= -1
    d64 = rng.standard_normal(shape)
    for d in (0, 1, None):
        fa = flow.prod(flow.tensor(a), d) if d is not None else flow.prod(flow.tensor(a))
        ta = (
            torch.prod(torch.tensor(a).double(), d)
            if d is not None
            else torch.prod(torch.tensor(a).double())
        )
        # Products accumulate in double: the float32 result is the correctly rounded one (to a
        # few ulp) of the exact product.
        np.testing.assert_allclose(fa.numpy(), ta.numpy().astype(np.float32), rtol=4e-7)
        fs = flow.sum(flow.tensor(d64), d) if d is not None else flow.sum(flow.tensor(d64))
        ts = torch.sum(torch.tensor(d64), d) if d is not None else torch.sum(torch.tensor(d64))
        np.testing.assert_allclose(fs.numpy(), ts.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [8, 40, 64, 130, 1024, 3000, 70000])
def test_prod_outside_float_range_on_the_way_like_float64(n):
    # The float32 factors are multiplied in double, so partial products that leave float's
    # range on the way do not matter: the results must be those of the exact product, rounded
    # once (checked against float64), including signed zeros, inf, NaN.
    rng = np.random.default_rng(n)
    rows = 6
    a = rng.uniform(0.5, 1.5, (rows, n)).astype(np.float32)
    # Overflows float on the way (in one vector lane: every 8th value), the rest brings it back.
    a[1, ::8][:6], a[1, 4::8][:6] = 1e30, 1e-30
    a[2, ::8][:6], a[2, 4::8][:6] = 1e-30, 1e30  # underflows on the way
    a[3, 3] = -0.0  # a signed zero
    a[4, 5] = np.inf
    a[5, 0] = 3e-42  # a denormal input
    a[5, 1] = 3e38
    for x, dim in ((a, 1), (np.ascontiguousarray(a.T), 0)):
        want = torch.prod(torch.tensor(x).double(), dim).float().numpy()
        got = flow.prod(flow.tensor(x), dim).numpy()
        np.testing.assert_allclose(got, want, rtol=4e-7, err_msg=f"n={n} dim={dim}")
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    full = rng.uniform(0.9, 1.1, n).astype(np.float32)
    np.testing.assert_allclose(
        flow.prod(flow.tensor(full)).numpy(),
        np.float32(np.prod(full.astype(np.float64))),
        rtol=4e-7,
    )


def _special_factors(a):
    # Columns of a (rows, cols) whose products leave float's range on the way, or meet the
    # values IEEE arithmetic treats apart; each must come out as the float64 product rounded.
    rows = a.shape[0]
    if rows >= 4:
        a[:4, 0] = [1e30, 1e30, 1e-30, 1e-30]  # overflows float, then back
        a[:4, 1] = [1e-30, 1e-30, 1e30, 1e30]  # underflows float to zero, then back
        a[:3, 2] = [1e-20, 1e-18, 1e20]  # a denormal product (precision lost), then back
        a[:2, 3] = [3e-42, 3e38]  # a denormal factor
    if rows >= 2:
        a[1, 4] = -0.0
        a[0, 5] = np.inf
        a[rows - 1, 6] = np.nan
        a[:, 7] = 1e-5  # a product that ends below float's range
        a[:, 8] = -1e5  # or above it
        a[: rows // 2, 9], a[rows // 2 :, 9] = 0.1, 10.0  # drifts out of float's range and back
        a[:, 10] = -3.0
        if a.shape[1] > 12:
            a[:2, 11] = [0.0, np.inf]  # NaN
            a[: rows // 2, 12], a[rows // 2 :, 12] = 2.0, 0.5  # exact throughout
    return a


@pytest.mark.parametrize("cols", [16, 40, 64, 100, 256, 257])
def test_prod_down_columns_like_float64(cols):
    # Strips of columns (and the last columns on their own) over chunks of rows: each result is
    # the exact product rounded once (checked against float64), whatever its partial products
    # did on the way.
    rng = np.random.default_rng(cols)
    for rows in (1, 2, 5, 64, 300):
        a = rng.uniform(0.5, 1.5, (rows, cols)).astype(np.float32)
        a *= rng.choice(np.float32([-1, 1]), a.shape)
        _special_factors(a)
        for x, dim in ((a, 0), (a.reshape(1, rows, cols).repeat(3, 0), 1)):
            want = torch.prod(torch.tensor(x).double(), dim).float().numpy()
            got = flow.prod(flow.tensor(x), dim).numpy()
            np.testing.assert_allclose(got, want, rtol=2e-7, err_msg=f"rows={rows}")
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("n", [4096, 4133, 70001, 1 << 20])
def test_full_prod_like_float64(n):
    rng = np.random.default_rng(n)
    a = rng.uniform(0.999, 1.001, n).astype(np.float32)
    a *= rng.choice(np.float32([-1, 1]), n, p=[0.01, 0.99])
    cases = [a.copy()]
    b = a.copy()
    b[[5, 69, 133]] = 1e30  # one lane past float's range, the rest brings it back
    b[[3000, 3064, 3128]] = 1e-30
    cases.append(b)
    c = a.copy()
    c[n // 2] = -0.0
    cases.append(c)
    for x in cases:
        want = np.float32(np.prod(x.astype(np.float64)))
        got = flow.prod(flow.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=2e-7)
        assert np.signbit(got) == np.signbit(want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vector_norm_values_and_gradients_like_torch(dtype):
    rng = np.random.default_rng(11)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for shape, dim in [
        ((5, 7), None),
        ((5, 7), 0),
        ((5, 7), 1),
        ((4, 5, 6), (0, 2)),
        ((1000, 3), 1),
        ((3, 1000), 0),
        ((70000,), None),
        ((0, 3), 1),
        ((), None),
    ]:
        a = rng.standard_normal(shape).astype(dtype)
        for keepdim in (False, True):
            fx, tx = flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
            fy = flow.linalg.vector_norm(fx, dim=dim, keepdim=keepdim)
            ty = torch.linalg.vector_norm(tx, dim=dim, keepdim=keepdim)
            assert tuple(fy.shape) == tuple(ty.shape)
            np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=rtol)
            if a.size:
                fy.sum().backward()
                ty.sum().backward()
                np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=rtol)
    # A transposed input, and flow.norm / matrix_norm("fro") on the same path.
    a = rng.standard_normal((6, 8)).astype(dtype)
    np.testing.assert_allclose(
        flow.linalg.vector_norm(flow.tensor(a).t(), dim=1).numpy(),
        torch.linalg.vector_norm(torch.tensor(a).t(), dim=1).numpy(),
        rtol=rtol,
    )
    np.testing.assert_allclose(
        flow.linalg.matrix_norm(flow.tensor(a)).numpy(),
        torch.linalg.matrix_norm(torch.tensor(a)).numpy(),
        rtol=rtol,
    )


def test_norm_gradient_is_zero_where_the_norm_is_zero():
    # d|x|/dx at x = 0: PyTorch gives 0; sqrt(sum(x * x)) would give NaN.
    for lib in (flow, torch):
        x = lib.zeros(2, 3, requires_grad=True)
        lib.norm(x, dim=1).sum().backward()
        assert x.grad.numpy().tolist() == [[0.0] * 3] * 2, lib.__name__
    rows = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0]], dtype=np.float32)
    grads = []
    for lib in (flow, torch):
        x = lib.tensor(rows, requires_grad=True)
        lib.nn.functional.normalize(x, dim=1).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_vector_norm_of_half_types_and_bad_dtypes_like_torch():
    for name in ("float16", "bfloat16"):
        v = [1.0, 2.0, 3.0, 250.0]
        f = flow.linalg.vector_norm(flow.tensor(v, dtype=getattr(flow, name)))
        t = torch.linalg.vector_norm(torch.tensor(v, dtype=getattr(torch, name)))
        assert f.dtype == getattr(flow, name)
        assert float(f) == float(t)
    for lib in (flow, torch):
        with pytest.raises(RuntimeError):
            lib.linalg.vector_norm(lib.tensor([1, 2]))


def test_relu_gradient_and_broadcast_binaries_like_torch():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((300, 257)).astype(np.float32)
    a[rng.random(a.shape) < 0.05] = np.nan
    row = rng.standard_normal(257).astype(np.float32)
    for lib in (flow, torch):
        x = lib.tensor(a, requires_grad=True)
        r = lib.tensor(row)
        y = lib.relu(x)
        (y.sum() * 3).backward()  # a broadcast (stride 0) gradient into relu's backward
        out = [y, x.grad, x + r, x * r, x / r, x - r, lib.maximum(x, r), x > r, x <= r]
        if lib is flow:
            got = [t.detach().numpy() for t in out]
        else:
            want = [t.detach().numpy() for t in out]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


ATTENTION_CASES = [
    # (batch dims, L, S, E, Ev, causal, scale)
    ((2, 3), 5, 7, 4, 6, True, None),  # fewer queries than keys
    ((2, 3), 9, 4, 8, 3, True, None),  # more queries than keys: the last rows see all
    ((1, 2), 70, 70, 33, 17, False, None),  # widths that are not multiples of the lanes
    ((3,), 64, 64, 32, 32, True, 0.3),
    ((2, 2), 130, 100, 16, 16, True, None),  # several blocks of query rows
    ((2, 1, 2), 1, 9, 8, 8, False, None),  # one query row, three batch dims
    ((), 40, 1, 5, 2, True, None),  # one key, no batch dims
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ATTENTION_CASES)
def test_fused_attention_values_and_gradients_like_torch(case, dtype):
    batch, L, S, E, Ev, causal, scale = case
    rng = np.random.default_rng(L * 100 + S)
    q = rng.standard_normal((*batch, L, E)).astype(dtype)
    k = rng.standard_normal((*batch, S, E)).astype(dtype)
    v = rng.standard_normal((*batch, S, Ev)).astype(dtype)
    g = rng.standard_normal((*batch, L, Ev)).astype(dtype)
    res = {}
    for lib in (flow, torch):
        tq, tk, tv = (lib.tensor(a, requires_grad=True) for a in (q, k, v))
        y = lib.nn.functional.scaled_dot_product_attention(
            tq, tk, tv, is_causal=causal, scale=scale
        )
        (y * lib.tensor(g)).sum().backward()
        res[lib] = [t.detach().numpy() for t in (y, tq.grad, tk.grad, tv.grad)]
    tol = 2e-5 if dtype == "float32" else 1e-12
    for name, a, b in zip(("out", "dq", "dk", "dv"), res[flow], res[torch]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=name)


def test_fused_attention_on_strided_views_like_torch():
    # The char-GPT layout: q, k, v are transposed views of one projection (rows not contiguous,
    # batch dims that do not merge), and the output gradient of a sum is a broadcast.
    rng = np.random.default_rng(3)
    B, T, H, D = 3, 20, 4, 8
    x = rng.standard_normal((B, T, 3 * H * D)).astype(np.float32)
    res = {}
    for lib in (flow, torch):
        t = lib.tensor(x, requires_grad=True)
        q, k, v = (u.reshape(B, T, H, D).transpose(1, 2) for u in t.split(H * D, dim=2))
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        y.sum().backward()
        res[lib] = (y.detach().numpy(), t.grad.numpy())
    for a, b in zip(res[flow], res[torch]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def test_fused_attention_special_values_and_limits():
    q = flow.randn(2, 6, 4)
    k = flow.randn(2, 6, 4)
    v = flow.randn(2, 6, 3)
    bad = q.clone()
    bad[0, 2, 1] = float("nan")
    y = flow.nn.functional.scaled_dot_product_attention(bad, k, v, is_causal=True).numpy()
    t = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(bad.numpy()), torch.tensor(k.numpy()), torch.tensor(v.numpy()), is_causal=True
    ).numpy()
    np.testing.assert_array_equal(np.isnan(y), np.isnan(t))  # only the NaN query's row
    np.testing.assert_allclose(np.nan_to_num(y), np.nan_to_num(t), rtol=2e-5, atol=2e-5)
    # A second derivative raises, as PyTorch's fused CPU kernel.
    qq = flow.randn(2, 5, 4, requires_grad=True)
    out = flow.nn.functional.scaled_dot_product_attention(qq, qq, qq, is_causal=True)
    (gq,) = flow.autograd.grad(out.sum(), qq, create_graph=True)
    with pytest.raises(RuntimeError, match="scaled_dot_product_attention"):
        gq.sum().backward()
    # Masks, dropout, mixed dtypes and empty inputs keep the composite.
    assert not flow._oneflow_internal._C._fused_attention_supported(q, k, v.double())
    assert not flow._oneflow_internal._C._fused_attention_supported(q[:, :0], k, v)
    with pytest.raises(RuntimeError, match="fused CPU kernel"):
        flow._oneflow_internal._C._fused_attention(q, k, v.double(), 0.5, False)
    empty = flow.nn.functional.scaled_dot_product_attention(q[:, :0], k, v)
    assert tuple(empty.shape) == (2, 0, 3)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "uint8"])
def test_where_with_broadcast_mask_and_scalar_operands_like_torch(dtype):
    # The runs of a broadcast (L, S) mask over (B, H, L, S) values, with one or both value
    # operands a single broadcast value (masked_fill, an attention mask and its backward).
    rng = np.random.default_rng(9)
    mask = rng.random((37, 70)) < 0.6
    a = (rng.standard_normal((3, 2, 37, 70)) * 50).astype(dtype)
    b = (rng.standard_normal((3, 2, 37, 70)) * 50).astype(dtype)
    for lib in (flow, torch):
        m, x, y = lib.tensor(mask), lib.tensor(a), lib.tensor(b)
        xt = x.transpose(-2, -1).contiguous().transpose(-2, -1)  # strided runs take the loop
        out = [
            lib.where(m, x, y),
            lib.where(m, x, 7),
            lib.where(m, 5, y),
            lib.where(m, lib.tensor(2, dtype=x.dtype), lib.tensor(3, dtype=x.dtype)).expand(
                3, 2, 37, 70
            ),
            x.masked_fill(~m, 1),
            lib.where(m, xt, 4),
        ]
        if lib is flow:
            got = [t.numpy() for t in out]
        else:
            want = [t.numpy() for t in out]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_nan_to_num_like_torch(dtype):
    v = [float("nan"), float("inf"), -float("inf"), 1.5, -0.0, 65504.0] * 300
    for args in [(), (1.0, 2.0, -3.0), (0.5, None, None)]:
        f = flow.nan_to_num(flow.tensor(v, dtype=getattr(flow, dtype)), *args)
        t = torch.nan_to_num(torch.tensor(v, dtype=getattr(torch, dtype)), *args)
        assert f.dtype == getattr(flow, dtype)
        np.testing.assert_array_equal(f.float().numpy(), t.float().numpy())


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cum_extremes_along_lines_like_torch(fn):
    rng = np.random.default_rng(6)
    a = np.round(rng.standard_normal((37, 300)), 1).astype(np.float32)
    a[rng.random(a.shape) < 0.01] = np.nan
    for dim, transpose in [(1, False), (-1, False), (0, True), (1, True)]:
        f, t = flow.tensor(a), torch.tensor(a)
        if transpose:  # strided lines
            f, t = f.t(), t.t()
        fv, fi = getattr(flow, fn)(f, dim)
        tv, ti = getattr(torch, fn)(t, dim)
        np.testing.assert_array_equal(fv.numpy(), tv.numpy())
        np.testing.assert_array_equal(fi.numpy(), ti.numpy())


@pytest.mark.parametrize(
    "shapes,dim",
    [
        ([(3, 40000), (3, 1), (3, 0), (3, 20000)], 1),  # rows longer than a 64 KiB piece
        ([(5000, 7), (5000, 3)], 1),  # many short rows
        ([(300000,), (5,), (0,), (70000,)], 0),  # one row: split into pieces
        ([(4, 6, 5), (4, 1, 5), (4, 9, 5)], 1),
        ([(2, 3, 50000), (2, 3, 1)], -1),
        ([(1024, 256)] * 4, 0),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int8", "float64"])
def test_cat_of_contiguous_inputs_like_numpy(shapes, dim, dtype):
    rng = np.random.default_rng(7)
    parts = [(rng.standard_normal(s) * 50).astype(dtype) for s in shapes]
    got = flow.cat([flow.tensor(p) for p in parts], dim).numpy()
    np.testing.assert_array_equal(got, np.concatenate(parts, dim))
    # mixed: one strided part takes the per-input copies
    mixed = [flow.tensor(p) for p in parts]
    mixed[0] = flow.tensor(np.ascontiguousarray(np.swapaxes(parts[0], 0, -1))).transpose(0, -1)
    np.testing.assert_array_equal(flow.cat(mixed, dim).numpy(), np.concatenate(parts, dim))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_fused_addcmul_addcdiv_lerp_like_torch(dtype):
    # One pass each on the CPU (Ternary primitives), out of place and in place, broadcasting
    # and strided operands, a scalar or tensor lerp weight on both sides of 0.5; gradients.
    rng = np.random.default_rng(4)
    tol = {"float32": 2e-6, "float64": 1e-13, "float16": 2e-3}[dtype]

    def arr(*shape, positive=False):
        a = rng.standard_normal(shape)
        return (np.abs(a) + 0.5 if positive else a).astype(dtype)

    a, b, c = arr(300, 37), arr(300, 37), arr(37, positive=True)
    w = rng.random((300, 1)).astype(dtype)
    f = {k: flow.tensor(v) for k, v in dict(a=a, b=b, c=c, w=w).items()}
    t = {k: torch.tensor(v) for k, v in dict(a=a, b=b, c=c, w=w).items()}

    def close(x, y):
        np.testing.assert_allclose(
            x.float().numpy(), y.float().numpy(), rtol=tol, atol=tol * 4, equal_nan=True
        )

    for d in (f, t):
        d["bt"] = d["b"].t().contiguous().t()  # a strided operand
    close(
        flow.addcmul(f["a"], f["b"], f["c"], value=0.3),
        torch.addcmul(t["a"], t["b"], t["c"], value=0.3),
    )
    close(
        flow.addcdiv(f["a"], f["bt"], f["c"], value=-2),
        torch.addcdiv(t["a"], t["bt"], t["c"], value=-2),
    )
    for weight in (0.25, 0.75, 1.0, 0.0):
        close(flow.lerp(f["a"], f["b"], weight), torch.lerp(t["a"], t["b"], weight))
    close(flow.lerp(f["a"], f["b"], f["w"]), torch.lerp(t["a"], t["b"], t["w"]))
    close(
        flow.lerp(f["a"][:, ::2], f["bt"][:, ::2], 0.6),
        torch.lerp(t["a"][:, ::2], t["bt"][:, ::2], 0.6),
    )
    # in place, including on a view
    for fx, tx in (
        (f["a"].clone(), t["a"].clone()),
        (f["a"].clone()[:, 1:], t["a"].clone()[:, 1:]),
    ):
        n = fx.shape[1]
        fx.addcmul_(f["b"][:, :n], f["c"][:n], value=0.5)
        tx.addcmul_(t["b"][:, :n], t["c"][:n], value=0.5)
        fx.addcdiv_(f["b"][:, :n], f["c"][:n])
        tx.addcdiv_(t["b"][:, :n], t["c"][:n])
        fx.lerp_(f["b"][:, :n], 0.8)
        tx.lerp_(t["b"][:, :n], 0.8)
        fx.lerp_(f["b"][:, :n], f["w"])
        tx.lerp_(t["b"][:, :n], t["w"])
        close(fx, tx)
    # a float64 operand narrows into float32 in place, as PyTorch allows; into int it cannot
    got = flow.ones(3).addcmul_(flow.tensor([0.1, 0.2, 0.3], dtype=flow.float64), flow.ones(3))
    want = torch.ones(3).addcmul_(torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64), torch.ones(3))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(RuntimeError, match="can't be cast"):
        flow.ones(3, dtype=flow.int64).addcmul_(flow.ones(3), flow.ones(3))
    # keyword operands
    fk, tk = f["a"].clone(), t["a"].clone()
    fk.addcmul_(tensor1=f["b"], tensor2=f["c"], value=2)
    tk.addcmul_(tensor1=t["b"], tensor2=t["c"], value=2)
    fk.lerp_(end=f["b"], weight=0.3)
    tk.lerp_(end=t["b"], weight=0.3)
    close(fk, tk)
    if dtype == "float16":
        return
    # gradients, also through an in-place update of a non-leaf
    fa, fb, fc, fw = (flow.tensor(v, requires_grad=True) for v in (a, b, c, w))
    ta, tb, tc, tw = (torch.tensor(v, requires_grad=True) for v in (a, b, c, w))
    for lib, (x, y, z, q) in ((flow, (fa, fb, fc, fw)), (torch, (ta, tb, tc, tw))):
        u = lib.addcmul(x, y, z, value=0.3) * 2
        u.addcdiv_(y, z, value=0.7)
        u.lerp_(x, q)
        (lib.lerp(u, y, 0.9) * y).sum().backward()
    for fg, tg in ((fa, ta), (fb, tb), (fc, tc), (fw, tw)):
        close(fg.grad, tg.grad)


@pytest.mark.parametrize("fn", ["index_add", "index_copy"])
def test_index_add_and_copy_of_whole_rows_like_torch(fn):
    # Rows of the outermost dim go through index_put on a copy (duplicates accumulate for
    # index_add); inner dims and bool sources keep scatter; errors as PyTorch's.
    rng = np.random.default_rng(6)
    x = rng.standard_normal((40, 33, 3)).astype(np.float32)
    s = rng.standard_normal((25, 33, 3)).astype(np.float32)
    idx = rng.integers(0, 40, 25) if fn == "index_add" else rng.permutation(40)[:25]
    kw = {"alpha": 0.5} if fn == "index_add" else {}
    for dt in ("int64", "int32") if fn == "index_add" else ("int64",):
        fx, fs = flow.tensor(x, requires_grad=True), flow.tensor(s, requires_grad=True)
        tx, ts = torch.tensor(x, requires_grad=True), torch.tensor(s, requires_grad=True)
        fo = getattr(flow, fn)(fx, 0, flow.tensor(idx.astype(dt)), fs, **kw)
        to = getattr(torch, fn)(tx, 0, torch.tensor(idx.astype(dt)), ts, **kw)
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-6, atol=1e-6)
        w = rng.standard_normal(fo.shape).astype(np.float32)
        (fo * flow.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(fs.grad.numpy(), ts.grad.numpy(), rtol=1e-6)
    # along an inner dim (scatter)
    fi = getattr(flow, fn)(flow.tensor(x), 1, flow.tensor([3, 0]), flow.tensor(x[:, :2]))
    ti = getattr(torch, fn)(torch.tensor(x), 1, torch.tensor([3, 0]), torch.tensor(x[:, :2]))
    np.testing.assert_allclose(fi.numpy(), ti.numpy(), rtol=1e-6)
    for bad in (40, -1):
        for a, b in ((x, s[:1]), (x[:, 0, 0], s[:1, 0, 0])):  # on a 1-D tensor too
            with pytest.raises(Exception) as fe:
                getattr(flow, fn)(flow.tensor(a), 0, flow.tensor([bad]), flow.tensor(b)).numpy()
            with pytest.raises(Exception) as te:
                getattr(torch, fn)(torch.tensor(a), 0, torch.tensor([bad]), torch.tensor(b))
            assert type(fe.value).__name__ == type(te.value).__name__, (fe.value, te.value)


def test_erfinv_float32_within_half_an_ulp_and_a_bit_like_torch():
    # AVX-512: a table of 32 polynomials picked per lane (|x| <= 1/2, then by the binade of
    # 1 - |x| and its mantissa's half, to 1 - 2^-16), the two lowest terms summed in float pairs:
    # within 0.515 ulp (0.5145 the worst over every 5th float below 1/2 and every float from 1/2
    # on; PyTorch's float erfinv, MKL's in this wheel, 0.5435). Values past 1 - 2^-16 and below
    # 2^-64, and the AVX2 and default tiers: Giles' approximation and one Halley step in double,
    # correctly rounded. +-1 -> +-inf, outside [-1, 1] and NaN -> NaN, tiny values kept.
    rng = np.random.default_rng(2)
    # the table's seams: |x| = 1/2, the binades of 1 - |x| and their halves, the table's end
    seams = [0.5] + [1 - 2.0**-e for e in range(1, 18)] + [1 - 1.5 * 2.0**-e for e in range(2, 17)]
    near = [np.nextafter(np.float32(v), np.float32(side)) for v in seams for side in (0, 1)]
    y = np.concatenate(
        [
            rng.uniform(-1, 1, 100000),
            1 - rng.uniform(0, 1e-4, 10000),
            rng.uniform(-1e-4, 1e-4, 1000),
            np.array(seams + near) * rng.choice([-1, 1], len(seams) + len(near)),
            [1, -1, 0, -0.0, 1.5, -2, np.nan, 1 - 6e-8, -1 + 6e-8, 1e-30, 1e-45, 2.6e-38, 1e-19],
        ]
    ).astype(np.float32)
    got = flow.erfinv(flow.tensor(y)).numpy()
    # PyTorch's float64 erfinv (MKL's in this wheel), refined by one Newton step on the C
    # library's erf, so that the reference does not depend on MKL's accuracy mode
    exact = torch.erfinv(torch.tensor(y).double()).numpy()
    yd = y.astype(np.float64)
    inner = np.isfinite(exact) & (np.abs(exact) < 5)
    erf = np.vectorize(math.erf)(exact[inner])
    exact[inner] -= (erf - yd[inner]) / (2 / math.sqrt(math.pi) * np.exp(-(exact[inner] ** 2)))
    want = exact.astype(np.float32)
    fin = np.isfinite(exact) & (exact != 0)
    ulp = np.spacing(np.abs(want[fin])).astype(np.float64)
    err = np.abs(got[fin] - exact[fin]) / ulp
    worst = int(np.argmax(err))
    assert err[worst] <= 0.515, (y[fin][worst], got[fin][worst], exact[fin][worst])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    np.testing.assert_array_equal(
        np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)])
    )


def test_erfc_float32_within_4_ulp_like_torch():
    # 1 - erf below 1, exp(-x^2) erfcx(x) above (two fits), 2 - erfc(-x) for negative x; PyTorch
    # (Sleef's erfcf) is within 1.5 ulp. Subnormal results within 2 subnormal steps.
    rng = np.random.default_rng(5)
    x = np.concatenate(
        [rng.uniform(-12, 12, 200000), rng.standard_normal(50000), np.linspace(-11, 11, 40001)]
    ).astype(np.float32)
    got = flow.erfc(flow.tensor(x)).numpy()
    exact = torch.erfc(torch.tensor(x).double()).numpy()
    want = exact.astype(np.float32)
    normal = np.abs(want) >= np.finfo(np.float32).tiny
    ulp = np.spacing(np.abs(want[normal])).astype(np.float64)
    assert (np.abs(got[normal] - exact[normal]) / ulp).max() <= 4
    assert np.abs(got[~normal] - exact[~normal]).max() <= 3e-45
    special = np.array([0, -0.0, np.inf, -np.inf, np.nan, 10.1, -30, 1e-30], np.float32)
    np.testing.assert_array_equal(
        flow.erfc(flow.tensor(special)).numpy(), torch.erfc(torch.tensor(special)).numpy()
    )


@pytest.mark.parametrize("n", [1, 7, 63, 64, 65, 129, 255, 256, 257, 1000, 5000])
def test_erfinv_block_edges_and_in_place_like_torch(n):
    # The vector kernels work on blocks of 256 floats, the last one through a padded buffer, and
    # pack each block's lanes by branch (|x| below or above ~0.843) before unpacking them in
    # order; in place they read each block before writing it.
    rng = np.random.default_rng(n)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    special = rng.random(n) < 0.05
    y[special] = rng.choice(np.array([1, -1, 0, 1.5, np.nan], np.float32), special.sum())
    want = torch.erfinv(torch.tensor(y)).numpy()
    np.testing.assert_allclose(flow.erfinv(flow.tensor(y)).numpy(), want, rtol=2e-7, atol=0)
    t = flow.tensor(y)
    t.erfinv_()
    np.testing.assert_allclose(t.numpy(), want, rtol=2e-7, atol=0)
    strided = flow.tensor(np.repeat(y, 2))[::2]
    np.testing.assert_allclose(flow.erfinv(strided).numpy(), want, rtol=2e-7, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_floor_and_trunc_division_like_torch(dtype):
    # The vector kernels follow the scalar rule: (a - fmod(a, b)) / b, corrected and rounded;
    # zeros keep the sign of a / b; b == 0, inf and NaN as PyTorch.
    rng = np.random.default_rng(9)
    a = (rng.standard_normal((300, 37)) * 10).astype(dtype)
    b = (rng.standard_normal((300, 37)) * 3).astype(dtype)
    a[0, :8] = [0.0, -0.0, 5.0, -5.0, np.inf, -np.inf, np.nan, 7.5]
    b[0, :8] = [3.0, 3.0, 0.0, 0.0, 2.0, 2.0, 1.0, np.inf]
    a[1, :6] = [6.0, -6.0, 6.0, -6.0, 1e-30, -1e-30]
    b[1, :6] = [3.0, 3.0, -3.0, -3.0, 7.0, 7.0]
    b[2, :3] = [np.inf, -np.inf, np.nan]
    fa, fb, ta, tb = flow.tensor(a), flow.tensor(b), torch.tensor(a), torch.tensor(b)
    for mode in ("floor", "trunc"):
        for x, y, u, v in ((fa, fb, ta, tb), (fa[:, 1:], fb[:, :-1], ta[:, 1:], tb[:, :-1])):
            got = flow.div(x, y, rounding_mode=mode).numpy()
            want = torch.div(u, v, rounding_mode=mode).numpy()
            np.testing.assert_array_equal(got, want)
            real = ~np.isnan(want)  # a NaN's sign bit carries nothing
            np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]))
        got = flow.div(fa, 2.5, rounding_mode=mode).numpy()
        np.testing.assert_array_equal(got, torch.div(ta, 2.5, rounding_mode=mode).numpy())
    np.testing.assert_array_equal((fa // fb).numpy(), (ta // tb).numpy())
    np.testing.assert_array_equal(
        flow.floor_divide(fa, fb).numpy(), torch.floor_divide(ta, tb).numpy()
    )


@pytest.mark.parametrize("shape", [(1000, 1037), (7, 5), (3, 70001)])
def test_one_byte_loops_like_torch(shape):
    # bool, uint8 and int8 loops (casts, ~, comparisons, all/any, sums, count_nonzero, where):
    # their 1-byte stores once kept these loops from vectorising; bools run as bytes.
    rng = np.random.default_rng(5)
    b = rng.random(shape) < 0.5
    b2 = rng.random(shape) < 0.3
    u = rng.integers(0, 256, shape).astype(np.uint8)
    i8 = rng.integers(-128, 128, shape).astype(np.int8)
    fb, tb = flow.tensor(b), torch.tensor(b)
    fb2, tb2 = flow.tensor(b2), torch.tensor(b2)
    fu, tu = flow.tensor(u), torch.tensor(u)
    fi, ti = flow.tensor(i8), torch.tensor(i8)

    def same(f, t):
        np.testing.assert_array_equal(f.numpy(), t.numpy())
        assert str(f.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]

    for fx, tx in ((fb, tb), (fb.t(), tb.t()), (fb[:, ::3], tb[:, ::3])):
        same(~fx, ~tx)
        same(flow.logical_not(fx), torch.logical_not(tx))
        for dt in ("uint8", "int8", "int64", "float32", "float64"):
            same(fx.to(getattr(flow, dt)), tx.to(getattr(torch, dt)))
        for dims in (None, 0, 1):
            kw = {} if dims is None else {"dim": dims}
            same(flow.all(fx, **kw), torch.all(tx, **kw))
            same(flow.any(fx, **kw), torch.any(tx, **kw))
            same(fx.sum(**kw), tx.sum(**kw))
            same(flow.count_nonzero(fx, **kw), torch.count_nonzero(tx, **kw))
        same(flow.all(fx, 1, keepdim=True), torch.all(tx, 1, keepdim=True))
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        same(getattr(flow, op)(fb, fb2), getattr(torch, op)(tb, tb2))
        same(getattr(flow, op)(fb, True), getattr(torch, op)(tb, True))
        same(getattr(flow, op)(fu, fu.flip([1])), getattr(torch, op)(tu, tu.flip([1])))
    same(flow.where(fb, fu, fu.flip([0])), torch.where(tb, tu, tu.flip([0])))
    same(flow.where(fb, fb2, ~fb2), torch.where(tb, tb2, ~tb2))
    for fx, tx in ((fu, tu), (fi, ti)):
        same(~fx, ~tx)
        same(fx.to(flow.bool), tx.to(torch.bool))
        same(fx.float(), tx.float())
        same(flow.amax(fx, 1), torch.amax(tx, 1))
        same(flow.amin(fx, 0), torch.amin(tx, 0))
        same(fx.sum(1), tx.sum(1))
        same(fx.max(), tx.max())
        same(flow.count_nonzero(fx), torch.count_nonzero(tx))
    same(flow.all(fu), torch.all(tu))  # uint8 keeps uint8
    same(fb & fb2, tb & tb2)
    same(fb | fb2, tb | tb2)
    same(fb ^ fb2, tb ^ tb2)


@pytest.mark.parametrize("seed", range(8))
def test_cat_of_row_strided_views_like_torch(seed):
    # Views whose rows are contiguous and equally spaced (narrows along the cat dim: roll's
    # pieces; an expanded outer dim) take the one-pass row copy; the others (a permuted inner
    # part, an expanded inner dim) the per-input copies.
    rng = np.random.default_rng(seed)
    shape = [int(v) for v in rng.integers(1, 5, 3)] + [int(rng.integers(2, 300))]
    dim = int(rng.integers(0, 4))
    base = rng.standard_normal(shape).astype(np.float32)

    def views(lib, x):
        n, k = x.shape[dim], max(1, x.shape[dim] // 3)
        one = [1 if d == dim else s for d, s in enumerate(x.shape)]
        out = [x.narrow(dim, n - k, k), x.narrow(dim, 0, n - k)]
        # an outer dim (or every dim) broadcast from one row
        out.append(x.narrow(dim, 0, 1).narrow(0, 0, 1).expand(*one))
        # the inner part permuted: rows are not contiguous
        last = x.narrow(dim, 0, 1).contiguous()
        out.append(last.flip([3]).contiguous().permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2))
        # an inner dim broadcast
        out.append(x.narrow(dim, 0, 1).narrow(3, 0, 1).expand(*one))
        return out

    f0, t0 = flow.tensor(base), torch.tensor(base)
    fv, tv = views(flow, f0), views(torch, t0)
    for d in (dim, dim - 4):
        np.testing.assert_array_equal(flow.cat(fv, d).numpy(), torch.cat(tv, d).numpy())
        np.testing.assert_array_equal(flow.cat(fv[:2], d).numpy(), torch.cat(tv[:2], d).numpy())
    # roll is two narrows and a cat
    np.testing.assert_array_equal(flow.roll(f0, 2, dim).numpy(), torch.roll(t0, 2, dim).numpy())


@pytest.mark.parametrize(
    "dtype",
    [
        "float32",
        "float16",
        "bfloat16",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
        "float64",
        "int64",
    ],
)
@pytest.mark.parametrize("descending", [False, True])
def test_long_lines_sort_by_radix_like_torch(dtype, descending):
    # Lines of 1024 and more sort their keys (32 or 64 bits) by radix: ties keep index order
    # (stable), NaN last (first descending), -0.0 equal to 0.0; integer values are written from
    # their keys.
    rng = np.random.default_rng(8)
    a = np.round(rng.standard_normal((3, 3000)) * 40)
    if dtype in ("float32", "float16", "bfloat16", "float64"):
        a[rng.random(a.shape) < 0.01] = np.nan
        a[rng.random(a.shape) < 0.01] = -0.0
    f = flow.tensor(a.astype(np.float32)).to(getattr(flow, dtype))
    t = torch.tensor(a.astype(np.float32)).to(getattr(torch, dtype))
    if dtype == "float64":  # values no float32 holds, two of them apart only in the last bit
        a = a + 1e-12 * rng.standard_normal(a.shape)
        a[0, :2] = [1.0, np.nextafter(1.0, 2.0)]
        f, t = flow.tensor(a), torch.tensor(a)
    for dim, lines in [(1, f), (0, f.t())]:
        tl = t if dim == 1 else t.t()
        fv, fi = flow.sort(lines, dim=dim, descending=descending, stable=True)
        tv, ti = torch.sort(tl, dim=dim, descending=descending, stable=True)
        np.testing.assert_array_equal(fv.float().numpy(), tv.float().numpy())
        np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    if dtype == "bool":  # topk of bool raises in both libraries
        return
    n = f.shape[1]
    fv, fi = flow.topk(f, n, dim=1, largest=descending)
    tv, _ = torch.topk(t, n, dim=1, largest=descending)
    np.testing.assert_array_equal(fv.float().numpy(), tv.float().numpy())
    np.testing.assert_array_equal(
        np.take_along_axis(f.float().numpy(), fi.numpy(), 1), fv.float().numpy()
    )
    if dtype not in ("float16", "bfloat16"):
        fu, finv, fc = flow.unique(f, return_inverse=True, return_counts=True)
        tu, tinv, tc = torch.unique(t, return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(fu.float().numpy(), tu.float().numpy())
        np.testing.assert_array_equal(fc.numpy(), tc.numpy())
        # Each NaN is its own entry; PyTorch orders those entries arbitrarily on long inputs
        # (ours: by position), so the inverse is compared where the input is a number.
        num = ~np.isnan(f.float().numpy())
        np.testing.assert_array_equal(finv.numpy()[num], tinv.numpy()[num])
        np.testing.assert_array_equal(fu.float().numpy()[finv.numpy()], f.float().numpy())


@pytest.mark.parametrize("spread", ["byte", "two_bytes", "full"])
def test_int64_radix_sort_and_unique_like_torch(spread):
    # 64-bit keys skip the bytes that every key shares; values across the whole int64 range (the
    # extremes too), a small range, one byte of difference; ties stable; unique's inverse and
    # counts over one long flattened line.
    rng = np.random.default_rng(21)
    lo, hi = {"byte": (-100, 100), "two_bytes": (0, 60000), "full": (-(2**63), 2**63 - 1)}[spread]
    a = rng.integers(lo, hi, size=(2, 5000), dtype=np.int64, endpoint=True)
    if spread == "full":
        a[0, :4] = [-(2**63), 2**63 - 1, -1, 0]
        a[1, :100] = a[1, 100:200]  # duplicates
    f, t = flow.tensor(a), torch.tensor(a)
    for descending in (False, True):
        fv, fi = flow.sort(f, dim=1, descending=descending, stable=True)
        tv, ti = torch.sort(t, dim=1, descending=descending, stable=True)
        np.testing.assert_array_equal(fv.numpy(), tv.numpy())
        np.testing.assert_array_equal(fi.numpy(), ti.numpy())
        fv, fi = flow.sort(f.reshape(-1), descending=descending, stable=True)
        tv, ti = torch.sort(t.reshape(-1), descending=descending, stable=True)
        np.testing.assert_array_equal(fv.numpy(), tv.numpy())
        np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    fu, finv, fc = flow.unique(f, return_inverse=True, return_counts=True)
    tu, tinv, tc = torch.unique(t, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(fu.numpy(), tu.numpy())
    np.testing.assert_array_equal(finv.numpy(), tinv.numpy())
    np.testing.assert_array_equal(fc.numpy(), tc.numpy())


def _ulps(a, b):
    """Distance in float32 steps between two float32 arrays (signed zeros equal)."""
    ai, bi = (v.view(np.int32).astype(np.int64) for v in (a, b))
    ai = np.where(ai < 0, -(ai & 0x7FFFFFFF), ai)
    bi = np.where(bi < 0, -(bi & 0x7FFFFFFF), bi)
    return np.abs(ai - bi)


def test_conditional_parallel_regions_go_through_the_one_thread_guard():
    # Note [One-thread parallel regions] (kernels/cpu/parallel.h): libgomp makes a system call at
    # the end of a parallel region even when it runs on one thread (an `if (false)` clause), which
    # cost small reductions ~0.5 us each. A region that may run on one thread is written with
    # OF_OMP_FOR_IF, or entered only under an explicit test; no raw pragma carries an if clause.
    root = os.path.join(os.path.dirname(__file__), "..", "..", "oneflow", "core", "kernels", "cpu")
    offenders = []
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path) as f:
                for number, line in enumerate(f, 1):
                    if re.match(r"\s*#pragma omp parallel\b.*\bif\s*\(", line):
                        offenders.append(f"{name}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def _operand(rng, shape, layout, dtype):
    """(oneflow, torch) tensors equal to one array, of `shape` broadcast in `layout`."""
    if layout == "scalar":
        a = rng.standard_normal(())
    elif layout == "ones":
        a = rng.standard_normal((1,) * len(shape))
    elif layout == "leading_one":
        a = rng.standard_normal((1, *shape))
    else:
        a = rng.standard_normal(shape)
    a = (a * 3).astype(dtype)
    f, t = flow.tensor(a), torch.tensor(a)
    if layout == "transposed" and len(shape) >= 2:  # the same values, stored column-major
        back = tuple(reversed(range(len(shape))))
        f = flow.tensor(np.ascontiguousarray(a.T)).permute(*back)
        t = torch.tensor(np.ascontiguousarray(a.T)).permute(*back)
    elif layout == "strided":  # every other element of a longer run
        if shape:
            wide = np.zeros((*shape[:-1], 2 * shape[-1]), dtype)
            wide[..., ::2] = a
            f, t = flow.tensor(wide)[..., ::2], torch.tensor(wide)[..., ::2]
    return f, t


_SMALL_SHAPES = [(), (1,), (5,), (3, 4), (1, 7), (2, 1, 3), (0, 3), (64,), (181, 181), (32768,)]
_LAYOUTS = ["same", "scalar", "ones", "leading_one", "transposed", "strided"]


@pytest.mark.parametrize("shape", _SMALL_SHAPES, ids=str)
def test_elementwise_ops_in_every_operand_layout_like_torch(shape):
    # Small ops whose operands are contiguous with the output's dims or single elements run as
    # one flat run (no stride vectors); every other layout, and ops past the parallel grain,
    # take the strided walk. Both must give PyTorch's values, shapes and dtypes.
    rng = np.random.default_rng(len(shape) * 100 + sum(shape))
    binaries = ["add", "sub", "mul", "div", "maximum", "atan2", "lt"]
    for la, lb in itertools.product(_LAYOUTS, repeat=2):
        for dtype in ("float32", "float64", "int64"):
            fa, ta = _operand(rng, shape, la, dtype)
            fb, tb = _operand(rng, shape, lb, dtype)
            for name in binaries:
                if dtype == "int64" and name in ("div", "atan2"):
                    continue
                want = getattr(torch, name)(ta, tb)
                got = getattr(flow, name)(fa, fb)
                assert tuple(got.shape) == tuple(want.shape), (name, la, lb)
                np.testing.assert_allclose(
                    got.numpy(), want.numpy(), rtol=1e-6, err_msg=f"{name} {la} {lb} {dtype}"
                )
        fa, ta = _operand(rng, shape, la, "float32")
        fb, tb = _operand(rng, shape, lb, "float32")
        fm, tm = fa > 0, ta > 0
        np.testing.assert_array_equal(
            flow.where(fm, fa, fb).numpy(), torch.where(tm, ta, tb).numpy(), err_msg=f"{la} {lb}"
        )
        np.testing.assert_allclose(
            flow.addcmul(fa, fb, fa, value=0.5).numpy(),
            torch.addcmul(ta, tb, ta, value=0.5).numpy(),
            rtol=1e-6,
            atol=1e-6,  # a + 0.5 a b near zero: one rounding more or less than PyTorch's
        )
    for layout in _LAYOUTS:
        fa, ta = _operand(rng, shape, layout, "float32")
        for name in ("abs", "neg", "exp", "sin", "floor"):
            np.testing.assert_allclose(
                getattr(flow, name)(fa).numpy(),
                getattr(torch, name)(ta).numpy(),
                rtol=1e-6,
                err_msg=f"{name} {layout}",
            )
        for name in ("relu", "gelu", "silu", "softplus"):
            np.testing.assert_allclose(
                getattr(flow.nn.functional, name)(fa).numpy(),
                # against float64: PyTorch's float32 gelu loses digits in the negative tail
                getattr(torch.nn.functional, name)(ta.double()).float().numpy(),
                rtol=1e-5,
                atol=1e-6,
                err_msg=f"{name} {layout}",
            )
        for dtype in (flow.float64, flow.int32, flow.bool, flow.float16):
            tdtype = getattr(torch, str(dtype).split(".")[-1])
            np.testing.assert_array_equal(fa.to(dtype).numpy(), ta.to(tdtype).numpy())
        np.testing.assert_array_equal(fa.contiguous().numpy(), ta.contiguous().numpy())
        # gradients through the fused activation and binary kernels
        ga = fa.clone().requires_grad_()
        gt = ta.double().requires_grad_()
        (flow.nn.functional.gelu(ga) * ga).sum().backward()
        (torch.nn.functional.gelu(gt) * gt).sum().backward()
        np.testing.assert_allclose(ga.grad.numpy(), gt.grad.float().numpy(), rtol=1e-5, atol=2e-6)
    # in-place results written through a transposed (non-contiguous) output
    if len(shape) >= 2:
        fo, to = _operand(rng, shape, "transposed", "float32")
        fb, tb = _operand(rng, shape, "same", "float32")
        fo.add_(fb)
        to.add_(tb)
        fo.mul_(2.5)
        to.mul_(2.5)
        np.testing.assert_allclose(fo.numpy(), to.numpy(), rtol=1e-6)


def _odd_function_against_float64(name, dense, edges, tiny_max, ulps, seed):
    """flow.<name> of float32 `x` (dense linspace, edge ranges, tiny and subnormal values,
    specials, and all their negatives) within `ulps` of torch.<name> in float64 rounded to
    float32, signed zeros kept, NaN passed through; returns (x, got, want)."""
    rng = np.random.default_rng(seed)
    x = np.concatenate(
        [
            np.linspace(-dense, dense, 600_001, dtype=np.float32),
            *(np.linspace(lo, hi, 20_001, dtype=np.float32) for lo, hi in edges),
            (10.0 ** rng.uniform(-45, tiny_max, 200_000)).astype(np.float32),
            np.array([0.0, 1e-40, 1e-30, 100.0, np.inf, 3e38], dtype=np.float32),
        ]
    )
    x = np.concatenate([x, -x])
    got = getattr(flow, name)(flow.tensor(x)).numpy()
    want = getattr(torch, name)(torch.tensor(x.astype(np.float64))).numpy().astype(np.float32)
    assert _ulps(got, want).max() <= ulps
    assert np.signbit(got[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()
    nan = flow.tensor([np.nan, -np.nan], dtype=flow.float32)
    assert np.isnan(getattr(flow, name)(nan).numpy()).all()
    return x, got, want


def test_erf_float32_within_an_ulp_of_the_rounded_float64():
    # The vector erf switches formula at |x| = 1 and saturates at 3.92: dense around both,
    # tiny and subnormal inputs (relative accuracy), specials.
    _odd_function_against_float64("erf", 4.5, [(0.999, 1.001), (3.9, 3.95)], 1, 1, seed=11)


def test_tanh_float32_within_2_ulp_of_the_rounded_float64():
    # The vector tanh switches from an odd polynomial to 1 - 2 / (exp(2|x|) + 1) at |x| = 0.625
    # and clamps |x| at 10 (tanh rounds to 1 from 9.02 on): dense around both, tiny and
    # subnormal inputs (tanh(x) = x there), specials; non-contiguous and tail lengths too.
    # (Measured: within 1 ulp.)
    x, got, want = _odd_function_against_float64(
        "tanh", 12, [(0.62, 0.63), (8.9, 10.1)], 1.5, 2, seed=12
    )
    for n in (1, 7, 17, 33):  # masked tails
        np.testing.assert_array_equal(flow.tanh(flow.tensor(x[:n])).numpy(), got[:n])
    m = flow.tensor(x[: 4 * 999].reshape(4, 999)).t()  # strided
    assert _ulps(flow.tanh(m).numpy(), want[: 4 * 999].reshape(4, 999).T).max() <= 2
    # the gradient uses the output: 1 - tanh(x)^2
    a = flow.tensor(x[:1000], requires_grad=True)
    flow.tanh(a).sum().backward()
    b = torch.tensor(x[:1000], requires_grad=True)
    torch.tanh(b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_sin_cos_float32_within_2_ulp_of_the_rounded_float64():
    # The vector sin and cos reduce |x| by multiples of pi/2 (pi/2 in three parts) below 8192
    # and hand larger |x|, inf and NaN to Sleef: dense values, the neighbourhoods of multiples
    # of pi/4 (quadrant switches, zeros of sin and cos) up to the switch, both sides of 8192,
    # large and tiny values. (Measured: within 1.5 ulp of the exact value.)
    rng = np.random.default_rng(13)
    x = np.concatenate(
        [
            np.linspace(-20, 20, 600_001, dtype=np.float32),
            np.linspace(8180, 8200, 20_001, dtype=np.float32),
            np.linspace(1e4, 1e7, 20_001, dtype=np.float32),
            (10.0 ** rng.uniform(-45, 1, 200_000)).astype(np.float32),
            np.array([0.0, 1e-40, 1e-30, 100.0, 3e38], dtype=np.float32),
        ]
    )
    k = np.concatenate([np.arange(1, 200), np.arange(200, 10_400, 37)]).astype(np.float64)
    near = (k[:, None] * np.pi / 4 + np.linspace(-1e-3, 1e-3, 41)[None, :]).ravel()
    x = np.concatenate([x, near.astype(np.float32), -near.astype(np.float32)])
    for name in ("sin", "cos"):
        got = getattr(flow, name)(flow.tensor(x)).numpy()
        want = getattr(torch, name)(torch.tensor(x.astype(np.float64))).numpy()
        assert _ulps(got, want.astype(np.float32)).max() <= 2, name
        if name == "sin":
            assert np.signbit(got[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()
        for n in (1, 7, 17, 33):  # masked tails
            np.testing.assert_array_equal(getattr(flow, name)(flow.tensor(x[:n])).numpy(), got[:n])
        m = flow.tensor(x[: 4 * 999].reshape(4, 999)).t()  # strided
        np.testing.assert_array_equal(
            getattr(flow, name)(m).numpy(), got[: 4 * 999].reshape(4, 999).T
        )
    for f in (flow.sin, flow.cos):
        assert np.isnan(f(flow.tensor([np.inf, -np.inf, np.nan])).numpy()).all()
    assert flow.cos(flow.tensor([-0.0])).item() == 1.0
    # gradients: cos x and -sin x
    a = flow.tensor(x[:1000], requires_grad=True)
    (flow.sin(a) + flow.cos(a)).sum().backward()
    b = torch.tensor(x[:1000], requires_grad=True)
    (torch.sin(b) + torch.cos(b)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_log_float32_within_an_ulp_of_the_float64_value():
    # The vector log splits v = m 2^k (m in [sqrt(1/2), sqrt(2))) and evaluates log1p(m - 1) by
    # a polynomial; zero, negative, subnormal (AVX2), infinite and NaN lanes go to Sleef. Every
    # 997th positive float (subnormals to FLT_MAX) against the exact value (measured: 0.82 ulp),
    # specials, masked tails, strided input and the gradient.
    x = np.arange(1, 0x7F800000, 997, dtype=np.uint32).view(np.float32)
    got = flow.log(flow.tensor(x)).numpy()
    want = torch.log(torch.tensor(x.astype(np.float64))).numpy()
    err = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want.astype(np.float32)))
    assert err.max() <= 1.0, (err.max(), x[err.argmax()])
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, 1e-45, -1e-45], np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        want_sp = np.log(sp.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(flow.log(flow.tensor(sp)).numpy(), want_sp)
    for n in (1, 7, 17, 33):  # masked tails
        np.testing.assert_array_equal(flow.log(flow.tensor(x[:n])).numpy(), got[:n])
    m = flow.tensor(x[: 4 * 999].reshape(4, 999)).t()  # strided
    np.testing.assert_array_equal(flow.log(m).numpy(), got[: 4 * 999].reshape(4, 999).T)
    pos = np.linspace(0.01, 10, 1000, dtype=np.float32)
    a = flow.tensor(pos, requires_grad=True)
    flow.log(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 1 / pos, rtol=1e-6)


def test_atan_float32_within_2_ulp_of_the_rounded_float64():
    # The vector atan evaluates a polynomial in min(|x|, 1) / max(|x|, 1) and subtracts it from
    # pi/2 above 1: every 997th float of either sign (zero, subnormals, both sides of 1, up to
    # FLT_MAX), dense around 1, specials, masked tails, strided input and the gradient.
    # (Measured: within 1.4 ulp of the exact value.)
    pos = np.arange(0, 0x7F800000, 997, dtype=np.uint32).view(np.float32)
    x = np.concatenate([pos, np.linspace(0.99, 1.01, 20_001, dtype=np.float32), [np.inf]])
    x = np.concatenate([x, -x]).astype(np.float32)
    got = flow.atan(flow.tensor(x)).numpy()
    want = torch.atan(torch.tensor(x.astype(np.float64))).numpy().astype(np.float32)
    assert _ulps(got, want).max() <= 2
    assert np.signbit(got[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()
    assert np.isnan(flow.atan(flow.tensor([np.nan, -np.nan], dtype=flow.float32)).numpy()).all()
    for n in (1, 7, 17, 33):  # masked tails
        np.testing.assert_array_equal(flow.atan(flow.tensor(x[:n])).numpy(), got[:n])
    m = flow.tensor(x[: 4 * 999].reshape(4, 999)).t()  # strided
    np.testing.assert_array_equal(flow.atan(m).numpy(), got[: 4 * 999].reshape(4, 999).T)
    v = np.linspace(-5, 5, 1001, dtype=np.float32)
    a = flow.tensor(v, requires_grad=True)
    flow.atan(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 1 / (1 + v.astype(np.float64) ** 2), rtol=1e-6)


@pytest.mark.parametrize("name", ["asin", "acos"])
def test_asin_acos_float32_within_an_ulp_of_the_rounded_float64(name):
    # The vector asin and acos: a polynomial up to |x| = 1/2, and through sqrt((1 - |x|) / 2)
    # with its rounding kept above it, against pi/2 and pi with the differences' roundings kept.
    # Every 997th float of [0, 1] of either sign (zero, subnormals, both sides of 1/2, 1), dense
    # around 1/2, out of the domain, specials, masked tails, strided input and the one-pass
    # gradient. (Measured over every 7th float: within 0.64 ulp of the exact value at the AVX2
    # and AVX-512 tiers.)
    pos = np.arange(0, 0x3F800001, 997, dtype=np.uint32).view(np.float32)
    pos = np.concatenate([pos, np.linspace(0.49, 0.51, 20_001, dtype=np.float32)])
    edges = [0.5, np.nextafter(np.float32(0.5), 1), np.nextafter(np.float32(0.5), 0), 1.0]
    x = np.concatenate([pos, np.float32(edges)])
    x = np.concatenate([x, -x]).astype(np.float32)
    got = getattr(flow, name)(flow.tensor(x)).numpy()
    want = getattr(torch, name)(torch.tensor(x.astype(np.float64))).numpy().astype(np.float32)
    assert _ulps(got, want).max() <= 1
    if name == "asin":
        assert np.signbit(got[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()
    outside = np.float32([1.0000001, -1.0000001, 2, -3, np.inf, -np.inf, np.nan, -np.nan])
    assert np.isnan(getattr(flow, name)(flow.tensor(outside)).numpy()).all()
    for n in (1, 7, 17, 33):  # masked tails
        np.testing.assert_array_equal(getattr(flow, name)(flow.tensor(x[:n])).numpy(), got[:n])
    m = flow.tensor(x[: 4 * 999].reshape(4, 999)).t()  # strided
    np.testing.assert_array_equal(getattr(flow, name)(m).numpy(), got[: 4 * 999].reshape(4, 999).T)
    v = np.linspace(-0.99, 0.99, 1001, dtype=np.float32)
    a = flow.tensor(v, requires_grad=True)
    getattr(flow, name)(a).sum().backward()
    want_grad = (1 if name == "asin" else -1) / np.sqrt(1 - v.astype(np.float64) ** 2)
    np.testing.assert_allclose(a.grad.numpy(), want_grad, rtol=2e-6)


@pytest.mark.skipif(
    "ONEFLOW_CPU_CAPABILITY" in os.environ, reason="already running at a capped tier"
)
@pytest.mark.parametrize("tier", ["avx2", "default"])
def test_lower_tiers_match_torch(tier):
    env = dict(os.environ, ONEFLOW_CPU_CAPABILITY=tier)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", __file__],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
