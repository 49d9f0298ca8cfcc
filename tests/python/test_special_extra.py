"""Differential tests of the torch.special functions composed in
oneflow.framework.special_extra: values and float64 gradients against torch on the same inputs,
and accuracy against mpmath where torch's own kernels are the less accurate reference."""

import math

import mpmath
import numpy as np
import pytest
import torch

import oneflow as flow

UNARY = ["entr", "log_ndtr", "ndtri", "erfcx", "i0", "i0e", "i1", "i1e"]
NO_HALF = {"log_ndtr", "ndtri", "erfcx"}  # torch's CPU kernels reject float16/bfloat16 there
SPECIALS = [-math.inf, -800.0, -30.0, -1.0, -1e-300, 0.0, 1e-300, 0.25, 1.0, 30.0, 800.0]
SPECIALS += [math.inf, math.nan]
# torch's right tail of log_ndtr is log1p(-erfc(x/sqrt2)/2), whose erfc magnifies the rounding
# of x/sqrt2 by about x^2: up to ~4e-13 relative at x = 40 (mpmath tests cover ours).
RTOL64 = {"log_ndtr": 1e-12}
RTOL32 = {"log_ndtr": 1e-5}  # the same in float32 arithmetic: ~4e-6 at x = 20


def _inputs(name, rng, shape=(7, 5)):
    """Points in the function's natural domain plus some outside it."""
    if name == "ndtri":
        x = rng.uniform(0, 1, size=shape)
    elif name == "entr":
        x = rng.uniform(-1, 5, size=shape)
    else:
        x = rng.uniform(-40, 40, size=shape)
    return x


def _compare(name, x, dtype, rtol, atol):
    t = torch.tensor(x, dtype=dtype)
    f = flow.tensor(x, dtype=getattr(flow, str(dtype).split(".")[1]))
    expected = getattr(torch.special, name)(t)
    got = getattr(flow.special, name)(f)
    assert str(got.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(
        got.float().numpy() if dtype == torch.bfloat16 else got.numpy(),
        expected.float().numpy() if dtype == torch.bfloat16 else expected.numpy(),
        rtol=rtol,
        atol=atol,
        equal_nan=True,
    )


@pytest.mark.parametrize("name", UNARY)
def test_unary_float64_matches_torch(name):
    x = _inputs(name, np.random.default_rng(0))
    _compare(name, x, torch.float64, rtol=RTOL64.get(name, 1e-13), atol=1e-300)


@pytest.mark.parametrize("name", UNARY)
def test_unary_float32_matches_torch(name):
    # Both round a float64-accurate value once, up to torch's own float32 error.
    x = _inputs(name, np.random.default_rng(1))
    _compare(name, x, torch.float32, rtol=RTOL32.get(name, 2e-6), atol=1e-37)


@pytest.mark.parametrize("name", sorted(set(UNARY) - NO_HALF))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_unary_half_matches_torch(name, dtype):
    x = _inputs(name, np.random.default_rng(2), shape=(40,))
    x = x / 4 if name != "entr" else x  # keep i0 and i1 inside float16's range
    # Two ulps: torch rounds its intermediates to the half type as well.
    rtol = 2e-3 if dtype == torch.float16 else 2.5e-2
    _compare(name, x, dtype, rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("name", sorted(NO_HALF))
def test_unary_half_rejected_as_torch(name):
    with pytest.raises(RuntimeError):
        getattr(torch.special, name)(torch.ones(2, dtype=torch.float16))
    with pytest.raises(RuntimeError):
        getattr(flow.special, name)(flow.ones(2, dtype=flow.float16))


@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values_match_torch(name):
    x = np.array(SPECIALS + [0.5, 1 - 1e-16, 1.5, -0.5])
    _compare(name, x, torch.float64, rtol=RTOL64.get(name, 1e-13), atol=1e-300)


@pytest.mark.parametrize("name", UNARY)
def test_unary_integer_promotes_to_default_float(name):
    x = np.array([-3, -1, 0, 1, 2, 7], dtype=np.int64)
    expected = getattr(torch.special, name)(torch.tensor(x))
    got = getattr(flow.special, name)(flow.tensor(x))
    assert got.dtype == flow.float32 and expected.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=2e-6, equal_nan=True)


@pytest.mark.parametrize("name", UNARY)
def test_unary_noncontiguous_and_empty(name):
    x = _inputs(name, np.random.default_rng(3), shape=(6, 4))
    expected = getattr(torch.special, name)(torch.tensor(x).t())
    got = getattr(flow.special, name)(flow.tensor(x).t())
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-13, equal_nan=True)
    empty = getattr(flow.special, name)(flow.zeros(0, 3, dtype=flow.float64))
    assert tuple(empty.shape) == (0, 3) and empty.dtype == flow.float64


def _grad_points(name):
    if name == "ndtri":
        return np.array([1e-300, 1e-20, 1e-3, 0.1, 0.3, 0.5, 0.7, 0.99, 1 - 1e-12])
    if name == "entr":
        return np.array([1e-300, 1e-5, 0.3, 1.0, 2.5, 100.0, -1.0])
    return np.array([-700.0, -40.0, -26.0, -5.0, -1.0, -0.3, 0.0, 0.3, 1.0, 4.0, 5.0, 25.0])


@pytest.mark.parametrize("name", UNARY)
def test_unary_grad_matches_torch(name):
    x = _grad_points(name)
    t = torch.tensor(x, requires_grad=True)
    f = flow.tensor(x, requires_grad=True)
    w = np.linspace(0.5, 1.5, x.size)  # a non-uniform upstream gradient
    (getattr(torch.special, name)(t) * torch.tensor(w)).sum().backward()
    (getattr(flow.special, name)(f) * flow.tensor(w)).sum().backward()
    # torch's log_ndtr gradient is exp(-x^2/2 - log_ndtr(x)), whose exponent cancels far left
    # (3e-11 off at x = -700; ours is checked against mpmath below).
    rtol = 1e-10 if name == "log_ndtr" else 1e-11
    np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=1e-300)


# ---- accuracy against mpmath ------------------------------------------------------------------

mpmath.mp.dps = 60


def _max_rel(got, ref):
    worst = 0.0
    for g, r in zip(got, ref):
        if r == 0:
            worst = max(worst, abs(g))
        else:
            worst = max(worst, float(abs((mpmath.mpf(float(g)) - r) / r)))
    return worst


def test_log_ndtr_accuracy():
    x = np.concatenate([np.linspace(-60, 37, 389), [-1e3, -1e5, -1e10, -1.0, 1.0]])
    got = flow.special.log_ndtr(flow.tensor(x)).numpy()
    # log(ncdf(x)) loses nothing on the left; on the right log1p keeps the tiny tail.
    ref = [
        mpmath.log(mpmath.ncdf(v)) if v < 0 else mpmath.log1p(-mpmath.ncdf(-mpmath.mpf(v)))
        for v in x
    ]
    assert _max_rel(got, ref) < 2e-15


def test_erfcx_accuracy():
    x = np.concatenate([np.linspace(-26, 60, 431), [3.999, 4.0, 4.001, 1e3, 1e10, 1e-10]])
    got = flow.special.erfcx(flow.tensor(x)).numpy()
    ref = [mpmath.exp(mpmath.mpf(v) ** 2) * mpmath.erfc(v) for v in x]
    assert _max_rel(got, ref) < 2e-15


def test_ndtri_accuracy():
    p = np.concatenate(
        [
            np.geomspace(1e-300, 0.49, 120),
            np.linspace(0.01, 0.99, 57),
            1 - np.geomspace(1e-16, 0.49, 60),
            [0.25, 0.75, 0.5 + 1e-12, 0.5 - 1e-12, 5e-324],
        ]
    )
    got = flow.special.ndtri(flow.tensor(p)).numpy()
    # The root of log ncdf(x) = log p from the computed value (Newton in 60 digits).
    ref = [
        mpmath.findroot(lambda v, q=q: mpmath.log(mpmath.ncdf(v)) - mpmath.log(q), mpmath.mpf(g))
        for q, g in zip(p, got)
    ]
    assert _max_rel(got, ref) < 1e-14


def test_log_ndtr_grad_accuracy():
    x = np.array([-1e4, -700.0, -40.0, -5.0, -1.5, -1.0, -0.5, 0.0, 2.0, 8.0])
    f = flow.tensor(x, requires_grad=True)
    flow.special.log_ndtr(f).sum().backward()
    ref = [mpmath.npdf(v) / mpmath.ncdf(v) for v in x]
    assert _max_rel(f.grad.numpy(), ref) < 2e-15


@pytest.mark.parametrize(
    "name, ref",
    [
        ("i0", lambda v: mpmath.besseli(0, v)),
        ("i1", lambda v: mpmath.besseli(1, v)),
        ("i0e", lambda v: mpmath.besseli(0, v) * mpmath.exp(-abs(v))),
        ("i1e", lambda v: mpmath.besseli(1, v) * mpmath.exp(-abs(v))),
    ],
)
def test_bessel_accuracy(name, ref):
    x = np.concatenate([np.linspace(-100, 100, 401), np.geomspace(1e-12, 700, 120)])
    x = np.concatenate([x, [24.999, 25.0, 25.001]])
    if name.endswith("e"):
        x = np.concatenate([x, [1e4, 1e8, -1e12]])
    got = getattr(flow.special, name)(flow.tensor(x)).numpy()
    assert _max_rel(got, [ref(mpmath.mpf(v)) for v in x]) < 3e-15


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "log_ndtr", "erfcx"])
def test_float32_correctly_rounded(name):
    # Computed in float64 and rounded once: within half an ulp of float32 plus float64 error.
    x = np.linspace(-9, 20, 801).astype(np.float32)  # erfcx overflows float32 below -9.4
    got = getattr(flow.special, name)(flow.tensor(x)).numpy().astype(np.float64)
    ref = getattr(flow.special, name)(flow.tensor(x.astype(np.float64))).numpy()
    np.testing.assert_allclose(got, ref, rtol=6.1e-8, atol=1e-45)


# ---- binary functions and aliases -------------------------------------------------------------


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_binary_values_broadcast_and_special(name):
    v = np.array([-math.inf, -2.0, -1.0, -0.5, 0.0, 1e-300, 1.0, 3.0, math.inf, math.nan])
    x, y = v[:, None], v[None, :]
    for dtype in (torch.float64, torch.float32):
        fd = getattr(flow, str(dtype).split(".")[1])
        expected = getattr(torch.special, name)(
            torch.tensor(x, dtype=dtype), torch.tensor(y, dtype=dtype)
        )
        got = getattr(flow.special, name)(flow.tensor(x, dtype=fd), flow.tensor(y, dtype=fd))
        assert tuple(got.shape) == (10, 10) and got.dtype == fd
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_binary_scalars_and_integers(name):
    ti, fi = torch.tensor([1, 2, 5]), flow.tensor([1, 2, 5])
    for args_t, args_f in [((ti, ti), (fi, fi)), ((2, ti), (2, fi)), ((ti, 3.0), (fi, 3.0))]:
        expected = getattr(torch.special, name)(*args_t)
        got = getattr(flow.special, name)(*args_f)
        assert got.dtype == flow.float32 and expected.dtype == torch.float32
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_binary_grad_matches_torch(name):
    rng = np.random.default_rng(4)
    x = rng.uniform(-2, 3, size=(4, 1))
    x[0, 0] = 0.0  # the x == 0 branch with ordinary y
    y = rng.uniform(-0.9, 4, size=(1, 5))
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    fx, fy = flow.tensor(x, requires_grad=True), flow.tensor(y, requires_grad=True)
    getattr(torch.special, name)(tx, ty).sum().backward()
    getattr(flow.special, name)(fx, fy).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(fy.grad.numpy(), ty.grad.numpy(), rtol=1e-12)


def test_xlog1py_grad_edges_match_torch():
    # x == 0 with y <= -1 or y == inf, where torch's formula masks or not.
    x = np.array([0.0, 0.0, 0.0, 2.0, 0.0])
    y = np.array([-1.0, -2.0, 1.0, -1.0, math.nan])
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    fx, fy = flow.tensor(x, requires_grad=True), flow.tensor(y, requires_grad=True)
    torch.special.xlog1py(tx, ty).sum().backward()
    flow.special.xlog1py(fx, fy).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(fy.grad.numpy(), ty.grad.numpy(), rtol=1e-12, equal_nan=True)


def test_sinc_polygamma_multigammaln_match_torch():
    x = np.array([[0.0, 0.5, 1.0, 2.5], [3.0, -1.5, 7.0, 1e-8]])
    np.testing.assert_allclose(
        flow.special.sinc(flow.tensor(x)).numpy(),
        torch.special.sinc(torch.tensor(x)).numpy(),
        rtol=1e-12,
    )
    xp = np.abs(x) + 0.5
    for n in (0, 1, 3):
        np.testing.assert_allclose(
            flow.special.polygamma(n, flow.tensor(xp)).numpy(),
            torch.special.polygamma(n, torch.tensor(xp)).numpy(),
            rtol=1e-10,
        )
    xm = np.abs(x) + 2.0
    for p in (1, 3):
        np.testing.assert_allclose(
            flow.special.multigammaln(flow.tensor(xm), p).numpy(),
            torch.special.multigammaln(torch.tensor(xm), p).numpy(),
            rtol=1e-12,
        )


def test_top_level_and_tensor_methods():
    x = np.array([-3.0, 0.0, 0.5, 12.0])
    np.testing.assert_allclose(
        flow.i0(flow.tensor(x)).numpy(), torch.i0(torch.tensor(x)).numpy(), rtol=1e-13
    )
    np.testing.assert_allclose(
        flow.tensor(x).i0().numpy(), torch.tensor(x).i0().numpy(), rtol=1e-13
    )
    f, t = flow.tensor(x, dtype=flow.float32), torch.tensor(x, dtype=torch.float32)
    assert f.i0_() is f
    t.i0_()
    np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=2e-6)


# ---- regularised incomplete gamma functions ----------------------------------------------


def test_gammainc_and_gammaincc_like_torch():
    rng = np.random.default_rng(0)
    a = np.concatenate(
        [rng.uniform(0, 5, 200), rng.uniform(5, 200, 100), [0, 0, 1, 2, -1, np.inf, 2, np.nan]]
    )
    x = np.concatenate(
        [rng.uniform(0, 10, 200), rng.uniform(0, 300, 100), [0, 1, 0, np.inf, 1, 2, -1, 1]]
    )
    for ours, theirs in [
        (flow.special.gammainc, torch.special.gammainc),
        (flow.special.gammaincc, torch.special.gammaincc),
        (flow.igamma, torch.igamma),
        (flow.igammac, torch.igammac),
    ]:
        got = ours(flow.tensor(a), flow.tensor(x)).numpy()
        want = theirs(torch.tensor(a), torch.tensor(x)).numpy()
        # PyTorch's own values are ~1e-9 off in places (checked against 40-digit values below)
        np.testing.assert_allclose(got, want, rtol=5e-9, atol=1e-300)
        got32 = ours(flow.tensor(a, dtype=flow.float32), flow.tensor(x, dtype=flow.float32))
        want32 = theirs(torch.tensor(a, dtype=torch.float32), torch.tensor(x, dtype=torch.float32))
        assert got32.dtype == flow.float32
        np.testing.assert_allclose(got32.numpy(), want32.numpy(), rtol=2e-5, atol=2e-6)


def test_gammainc_accuracy_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    cases = [(0.01, 0.5), (1e-5, 3.0), (174.4, 130.2), (173.4, 220.8), (1e4, 1e4 + 50)]
    cases += [(1e5, 1e5 + 100), (2.5, 2.5), (30.0, 31.0), (0.5, 40.0)]
    for a, x in cases:
        p = float(mpmath.gammainc(a, 0, x, regularized=True))
        q = float(mpmath.gammainc(a, x, mpmath.inf, regularized=True))
        got_p = flow.special.gammainc(
            flow.tensor([a], dtype=flow.float64), flow.tensor([x], dtype=flow.float64)
        ).item()
        got_q = flow.special.gammaincc(
            flow.tensor([a], dtype=flow.float64), flow.tensor([x], dtype=flow.float64)
        ).item()
        assert abs(got_p - p) <= 1e-10 * abs(p) + 1e-15, (a, x, got_p, p)
        assert abs(got_q - q) <= 1e-10 * abs(q) + 1e-15, (a, x, got_q, q)


def test_gammainc_float32_rounds_the_double_value():
    # float32 results come from sums stopped at the float's precision: they must still be the
    # float64 value rounded (within an ulp), also where P is near 1 and Q = 1 - P is small, for
    # large a (slowly falling terms) and near the switch between the series and the fraction
    rng = np.random.default_rng(1)
    a = np.concatenate(
        [
            rng.uniform(0.001, 0.1, 300),
            rng.uniform(0.1, 20, 2000),
            rng.uniform(100, 1e5, 300),
            rng.uniform(1, 50, 300),
        ]
    ).astype(np.float32)
    x = np.concatenate(
        [
            rng.uniform(0.01, 1.0, 300),
            rng.uniform(0, 30, 2000),
            a[2300:2600] * rng.uniform(0.97, 1.03, 300),
            a[2600:] + rng.uniform(0.5, 1.5, 300),
        ]
    ).astype(np.float32)
    for fn in (flow.special.gammainc, flow.special.gammaincc):
        got = fn(flow.tensor(a), flow.tensor(x)).numpy()
        want = fn(flow.tensor(a, dtype=flow.float64), flow.tensor(x, dtype=flow.float64))
        want = want.numpy()
        np.testing.assert_allclose(got, want, rtol=1.5e-7, atol=1e-37)


def test_gammaincc_small_a_keeps_its_digits():
    """Q(a, x) for a < 0.2 below x = a + 1 (where P is near 1): from -expm1(a log x - log
    Gamma(1 + a)) and a's own series, not 1 - P (which gave 2.2e-16 for Q(1e-20, 0.5) = 5.6e-21);
    within 1e-13 of 40-digit values, and float32 within an ulp of float64."""
    a = np.array([1e-300, 1e-20, 1e-15, 1e-10, 1e-5, 0.01, 0.1, 0.19, 0.199999, 0.21])
    x = np.array([1e-300, 1e-10, 0.01, 0.5, 1.0, 1.19])
    a, x = (v.ravel() for v in np.meshgrid(a, x))
    with mpmath.workdps(40):
        want = np.array(
            [float(mpmath.gammainc(u, v, mpmath.inf, regularized=True)) for u, v in zip(a, x)]
        )
    got = flow.special.gammaincc(flow.tensor(a), flow.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13)
    p = flow.special.gammainc(flow.tensor(a), flow.tensor(x)).numpy()
    np.testing.assert_allclose(p + got, 1.0, rtol=1e-15)
    keep = a > 1e-30  # float32's range
    a32, x32 = a[keep].astype(np.float32), x[keep].astype(np.float32)
    got32 = flow.special.gammaincc(flow.tensor(a32), flow.tensor(x32)).numpy()
    want32 = flow.special.gammaincc(
        flow.tensor(a32.astype(np.float64)), flow.tensor(x32.astype(np.float64))
    )
    np.testing.assert_allclose(got32, want32.numpy(), rtol=1.5e-7, atol=1e-37)


def _lower_gamma_series(a, x):
    """P(a, x) by its power series in 40-digit arithmetic."""
    with mpmath.workdps(40):
        a, x = mpmath.mpf(a), mpmath.mpf(x)
        term = total = mpmath.mpf(1)
        n = 1
        while term > total * mpmath.mpf(10) ** -30:
            term *= x / (a + n)
            total += term
            n += 1
        return float(mpmath.exp(a * mpmath.log(x) - x - mpmath.loggamma(a + 1)) * total)


def test_gammainc_large_a_by_the_uniform_expansion():
    """a >= 1e7 (the series and the fraction would need ~sqrt(a) terms and lose digits in the
    prefactor; 1e30 gave NaN): within 1e-13 of 40-digit values near the mean, and of the normal
    limit Phi((x - a) / sqrt(a)) at a = 1e20 and 1e30 (PyTorch's own values drift there: 0.187 for
    0.162 at a = 1e30); P + Q = 1; float32 within an ulp of float64."""
    cases = [(1e7, 1e7), (1e7, 1e7 - 3 * math.sqrt(1e7)), (3e7, 3e7 + 1e4), (2e7, 1.99e7)]
    a = np.array([c[0] for c in cases])
    x = np.array([c[1] for c in cases])
    want = np.array([_lower_gamma_series(*c) for c in cases])
    got = flow.special.gammainc(flow.tensor(a), flow.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13)
    d = np.array([-10.0, -3.0, -1.0, -0.01, 0.0, 0.3, 1.0, 3.0])
    for big, rtol in ((1e20, 1e-7), (1e30, 1e-12)):  # the 1/sqrt(a) term: 3e-8 at 1e20, d=-10
        x = big + d * math.sqrt(big)
        d_exact = (x - big) / math.sqrt(big)  # x as rounded
        normal = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in d_exact])
        a = np.full_like(x, big)
        p = flow.special.gammainc(flow.tensor(a), flow.tensor(x)).numpy()
        q = flow.special.gammaincc(flow.tensor(a), flow.tensor(x)).numpy()
        np.testing.assert_allclose(p, normal, rtol=rtol)
        np.testing.assert_allclose(p + q, 1.0, rtol=1e-15)
        p32 = flow.special.gammainc(
            flow.tensor(a, dtype=flow.float32), flow.tensor(x, dtype=flow.float32)
        )
        a32, x32 = a.astype(np.float32).astype(np.float64), x.astype(np.float32).astype(np.float64)
        want32 = flow.special.gammainc(flow.tensor(a32), flow.tensor(x32)).numpy()
        np.testing.assert_allclose(p32.numpy(), want32, rtol=1.5e-7, atol=1e-37)


def test_gammainc_x_gradient_for_large_a():
    """dP/dx = x^(a-1) e^-x / Gamma(a) without the cancellation of its logarithm from a = 100 on
    (80% off at a = 1e15, 1, 0 or inf at 1e20 and beyond; PyTorch's too): within 1e-13 of
    50-digit values; Q's is its negative; second order as PyTorch's."""
    a, x = [], []
    for big in [0.5, 3.0, 99.0, 100.0, 1e3, 1e6, 1e9, 1e12, 1e15, 1e20, 1e30]:
        for z in [-5, -1, 0, 0.5, 3]:
            a.append(big)
            x.append(big + z * math.sqrt(big) if big + z * math.sqrt(big) > 0 else big / 2)
    with mpmath.workdps(50):
        want = [
            float(mpmath.exp((mpmath.mpf(u) - 1) * mpmath.log(v) - v - mpmath.loggamma(u)))
            for u, v in zip(a, x)
        ]
    for fn, sign in ((flow.special.gammainc, 1), (flow.special.gammaincc, -1)):
        xt = flow.tensor(x, dtype=flow.float64, requires_grad=True)
        fn(flow.tensor(a, dtype=flow.float64), xt).sum().backward()
        np.testing.assert_allclose(xt.grad.numpy(), sign * np.array(want), rtol=1e-13)
    grads = []
    for lib in (torch, flow):
        xt = lib.tensor([5.0, 150.0, 0.7], dtype=lib.float64, requires_grad=True)
        at = lib.tensor([3.0, 140.0, 0.4], dtype=lib.float64)
        (g,) = lib.autograd.grad(lib.special.gammainc(at, xt).sum(), xt, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), xt)
        grads.append((g.detach().numpy(), g2.numpy()))
    for ours, theirs in zip(grads[1], grads[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_gammainc_gradients_broadcasting_and_errors_like_torch():
    a = np.array([[0.5], [2.0], [7.5]])
    x = np.array([0.3, 1.0, 4.0, 12.0])
    for ours, theirs in [(flow.igamma, torch.igamma), (flow.igammac, torch.igammac)]:
        fx = flow.tensor(x, requires_grad=True)
        tx = torch.tensor(x, requires_grad=True)
        got = ours(flow.tensor(a), fx)
        want = theirs(torch.tensor(a), tx)
        assert tuple(got.shape) == (3, 4)
        w = np.arange(12.0).reshape(3, 4)
        (got * flow.tensor(w)).sum().backward()
        (want * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="derivative"):
        flow.igamma(flow.tensor([2.0], requires_grad=True), flow.tensor([1.0])).sum().backward()
    with pytest.raises(NotImplementedError, match="igamma"):
        flow.igamma(flow.tensor([3]), flow.tensor([2]))
    # Tensor methods, in place, and a Python number
    t = flow.tensor([1.0, 2.0])
    assert t.igamma_(flow.tensor(1.5)) is t
    np.testing.assert_allclose(
        t.numpy(), torch.tensor([1.0, 2.0]).igamma(torch.tensor(1.5)).numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(
        flow.tensor([2.0, 3.0]).igammac(1.0).numpy(),
        torch.tensor([2.0, 3.0]).igammac(torch.tensor(1.0)).numpy(),
        rtol=1e-6,
    )
