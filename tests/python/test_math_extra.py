"""oneflow against PyTorch on the composite pointwise ops of math_extra: hypot, logaddexp(2),
copysign, heaviside, signbit, sinc, deg2rad, rad2deg, gcd, lcm, float_power, ldexp, frexp.
Values, dtypes, broadcasting, edge values, gradients (float64), in-place forms and errors."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import check

INF, NAN = math.inf, math.nan
EDGES = [0.0, -0.0, 1.0, -2.5, INF, -INF, NAN, 1e-300, -1e300]
FLOAT_BINARY = ["hypot", "logaddexp", "logaddexp2", "copysign", "ldexp"]
FLOAT_UNARY = ["sinc", "deg2rad", "rad2deg"]
FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _np(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.numpy()


def _same(got, want, rtol, atol):
    """Same dtype, shape, values (NaN where NaN) and signs of zeros and infinities."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    g, w = _np(got).astype(np.float64), _np(want).astype(np.float64)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    exact = (w == 0) | np.isinf(w)
    np.testing.assert_array_equal(np.signbit(g[exact]), np.signbit(w[exact]))


def _raises_like(fn):
    """fn(oneflow) raises the exception type fn(torch) raises."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(flow)
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)


# ---- values over random shapes, broadcasting, dtypes ----------------------------------------


@pytest.mark.parametrize("name", FLOAT_BINARY)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_binary_broadcast_matches_torch(name, dtype):
    # check() compares values with per-dtype tolerances and gradients where floating.
    grad = dtype == "float64"
    check(lambda m, a, b: getattr(m, name)(a, b), [(3, 1, 4), (5, 1)], dtype=dtype, grad=grad)
    check(lambda m, a, b: getattr(m, name)(a, b), [(2, 3), (3,)], dtype=dtype, grad=grad, seed=1)


@pytest.mark.parametrize("name", FLOAT_UNARY)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_unary_matches_torch(name, dtype):
    check(lambda m, a: getattr(m, name)(a), [(4, 5)], dtype=dtype, grad=dtype == "float64")
    check(lambda m, a: getattr(m, name)(a * 3), [(7,)], dtype=dtype, grad=dtype == "float64")


@pytest.mark.parametrize("name", FLOAT_BINARY + FLOAT_UNARY + ["float_power"])
def test_gradients_float64_non_contiguous(name):
    # A transposed view as input; the gradient lands in the leaf's layout.
    unary = name in FLOAT_UNARY

    def fn(m, a, *b):
        return getattr(m, name)(a, *b)

    shapes = [(4, 3)] if unary else [(4, 3), (4, 3)]
    check(fn, shapes, dtype="float64", transform=lambda m, t, i: t.t())


@pytest.mark.parametrize(
    "name", FLOAT_BINARY + FLOAT_UNARY + ["float_power", "gcd", "lcm", "signbit", "heaviside"]
)
def test_zero_size(name):
    results = []
    for m in (flow, torch):
        ints = name in ("gcd", "lcm")
        a = m.ones(0, 3, dtype=m.int64 if ints else m.float32)
        b = m.ones(1, 3, dtype=m.int64 if ints else m.float32)
        fn = getattr(m, name)
        results.append(fn(a) if name in FLOAT_UNARY + ["signbit"] else fn(a, b))
    _same(results[0], results[1], 0, 0)


@pytest.mark.parametrize("name", FLOAT_BINARY + ["float_power"])
@pytest.mark.parametrize(
    "dtypes",
    [
        ("int64", "int64"),
        ("int32", "int64"),
        ("int64", "float32"),
        ("float16", "int64"),
        ("float16", "float32"),
        ("float32", "float64"),
        ("bool", "bool"),
        ("uint8", "uint8"),
    ],
)
def test_type_promotion(name, dtypes):
    rng = np.random.default_rng(3)
    arrays = [rng.integers(-3, 4, size=(2, 3)) for _ in dtypes]

    def run(m):
        a, b = (m.tensor(x).to(getattr(m, d)) for x, d in zip(arrays, dtypes))
        return getattr(m, name)(a, b)

    try:
        want = run(torch)
    except Exception as e:  # noqa: BLE001 -- the type is what is compared
        with pytest.raises(Exception) as got:
            run(flow)
        assert type(got.value).__name__ == type(e).__name__
        return
    _same(run(flow), want, rtol=1e-2, atol=1e-3)  # float16 results: a few ulp


def test_zero_dim_other_does_not_promote():
    for name in FLOAT_BINARY + ["float_power"]:
        for dt in (torch.float16, torch.float32, torch.int64):
            f = getattr(flow, name)(
                flow.tensor([1.5, -2.0]).to(getattr(flow, str(dt)[6:])),
                flow.tensor(3.0, dtype=flow.float64),
            )
            t = getattr(torch, name)(
                torch.tensor([1.5, -2.0]).to(dt), torch.tensor(3.0, dtype=torch.float64)
            )
            _same(f, t, rtol=1e-3, atol=1e-3)


# ---- edge values ----------------------------------------------------------------------------


def _edge_pairs(dtype):
    a, b = np.meshgrid(np.array(EDGES), np.array(EDGES))
    with np.errstate(over="ignore"):  # -1e300 is -inf in float32
        return a.ravel().astype(dtype), b.ravel().astype(dtype)


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2", "copysign"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_edge_values(name, dtype):
    a, b = _edge_pairs(dtype)
    with np.errstate(all="ignore"):
        got = getattr(flow, name)(flow.tensor(a), flow.tensor(b))
        want = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
    _same(got, want, rtol=1e-6 if dtype == "float32" else 1e-14, atol=0)


def test_hypot_no_overflow_or_underflow():
    for v in [1e300, 1e-300, 3e38]:
        a = torch.tensor([v, 3 * v, -v])
        b = torch.tensor([v, 4 * v, 0.0])
        for dt in (torch.float32, torch.float64):
            got = flow.hypot(
                flow.tensor(a.numpy()).to(getattr(flow, str(dt)[6:])),
                flow.tensor(b.numpy()).to(getattr(flow, str(dt)[6:])),
            )
            _same(got, torch.hypot(a.to(dt), b.to(dt)), rtol=1e-6, atol=0)
    big = flow.hypot(
        flow.tensor([3e300], dtype=flow.float64), flow.tensor([4e300], dtype=flow.float64)
    )
    assert float(big[0]) == pytest.approx(5e300, rel=1e-15)


def test_logaddexp_far_apart_keeps_the_small_term():
    a = torch.tensor([0.0, -50.0, 30.0], dtype=torch.float64)
    b = torch.tensor([-50.0, 0.0, -700.0], dtype=torch.float64)
    for name in ("logaddexp", "logaddexp2"):
        got = getattr(flow, name)(flow.tensor(a.numpy()), flow.tensor(b.numpy()))
        _same(got, getattr(torch, name)(a, b), rtol=1e-14, atol=0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_signbit_and_copysign_zero_signs(dtype):
    vals = [0.0, -0.0, 1.0, -1.0, INF, -INF, 2.5, -7.0]
    t = torch.tensor(vals).to(getattr(torch, dtype))
    f = flow.tensor(vals).to(getattr(flow, dtype))
    assert flow.signbit(f).tolist() == torch.signbit(t).tolist()
    _same(
        flow.copysign(flow.tensor([3.0]).to(f.dtype), f),
        torch.copysign(torch.tensor([3.0]).to(t.dtype), t),
        0,
        0,
    )
    for s in [-0.0, 0.0, 2, -3, NAN, -INF]:
        _same(flow.copysign(f, s), torch.copysign(t, s), 0, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_signbit_copysign_and_nextafter_on_the_bits(dtype):
    # NaNs keep their sign bit (-nan from negating a NaN), and nextafter steps the bits: zeros,
    # subnormals, the largest finite value, infinities and NaN, every pair of them.
    vals = np.array([0.0, -0.0, 1.0, -1.0, 3.4e38, INF, -INF, NAN, 1e-45, 2.5, 1.1754944e-38])
    a, b = np.repeat(vals, len(vals)), np.tile(vals, len(vals))
    fa, fb = (flow.tensor(v).to(getattr(flow, dtype)) for v in (a, b))
    ta, tb = (torch.tensor(v).to(getattr(torch, dtype)) for v in (a, b))
    got = flow.nextafter(fa, fb).double().numpy()
    want = torch.nextafter(ta, tb).double().numpy()
    number = ~np.isnan(want)
    np.testing.assert_array_equal(got.view(np.int64)[number], want.view(np.int64)[number])
    assert np.isnan(got[~number]).all()
    assert fa.clone().nextafter_(fb).double().numpy()[5] == want[5]
    if dtype == "bfloat16":
        return  # PyTorch turns every NaN into one bfloat16 NaN with the sign bit set
    nan = np.array([NAN, -NAN, NAN], np.float32) * np.array([1, 1, -1], np.float32)
    fn, tn = flow.tensor(nan).to(getattr(flow, dtype)), torch.tensor(nan).to(getattr(torch, dtype))
    assert flow.signbit(fn).tolist() == torch.signbit(tn).tolist()
    ones = np.ones(3, np.float32)
    np.testing.assert_array_equal(
        flow.copysign(flow.tensor(ones).to(fn.dtype), fn).float().numpy(),
        torch.copysign(torch.tensor(ones).to(tn.dtype), tn).float().numpy(),
    )
    mixed = flow.nextafter(flow.ones(2), flow.ones(2, dtype=flow.float64) * 2)
    assert mixed.dtype == flow.float64 and mixed[0].item() == np.nextafter(1.0, 2.0)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "bool"])
def test_signbit_integers(dtype):
    x = np.array([-3, 0, 5, 1]).astype(dtype)
    got = flow.signbit(flow.tensor(x))
    assert got.dtype == flow.bool and got.tolist() == torch.signbit(torch.tensor(x)).tolist()


def test_sinc_edges():
    x = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-20, INF, NAN, 3.0]
    for dt in ("float32", "float64"):
        _same(
            flow.sinc(flow.tensor(x).to(getattr(flow, dt))),
            torch.sinc(torch.tensor(x).to(getattr(torch, dt))),
            rtol=1e-6,
            atol=1e-7,
        )
    _same(flow.sinc(flow.tensor([0, 1, -2])), torch.sinc(torch.tensor([0, 1, -2])), 1e-6, 1e-7)


def test_deg2rad_rad2deg_integer_and_bool():
    for x in ([0, 90, -180, 360], [True, False]):
        for name in ("deg2rad", "rad2deg"):
            _same(
                getattr(flow, name)(flow.tensor(x)), getattr(torch, name)(torch.tensor(x)), 1e-6, 0
            )


def test_heaviside():
    for dt in ("float32", "float64", "int64", "int32", "bool", "uint8", "float16"):
        x = torch.tensor([-1.5, 0.0, -0.0, 2.0, NAN] if "float" in dt else [-1, 0, 2, 0, 3])
        v = torch.tensor([0.5, 7.0, 3.0, 0.0, 2.0]) if "float" in dt else torch.tensor([4] * 5)
        x, v = x.to(getattr(torch, dt)), v.to(getattr(torch, dt))
        got = flow.heaviside(flow.tensor(_np(x)), flow.tensor(_np(v)))
        _same(got, torch.heaviside(x, v), 0, 0)
    # broadcasting
    x, v = np.array([[-1.0], [0.0], [2.0]]), np.array([5.0, 6.0])
    _same(
        flow.heaviside(flow.tensor(x), flow.tensor(v)),
        torch.heaviside(torch.tensor(x), torch.tensor(v)),
        0,
        0,
    )


def test_heaviside_has_no_derivative():
    for m in (flow, torch):
        x = m.tensor([0.0, 1.0], requires_grad=True)
        out = m.heaviside(x, m.tensor([0.5, 0.5]))
        assert out.requires_grad
        with pytest.raises(RuntimeError):
            out.sum().backward()


# ---- gradients at special points ------------------------------------------------------------


def _grads(name, a, b):
    out = []
    for m in (flow, torch):
        x = m.tensor(a, dtype=m.float64, requires_grad=True)
        y = m.tensor(b, dtype=m.float64, requires_grad=True)
        getattr(m, name)(x, y).sum().backward()
        out.append((x.grad, y.grad))
    return out


@pytest.mark.parametrize("name", ["hypot", "copysign", "logaddexp", "logaddexp2"])
def test_gradients_at_zero_ties_and_infinities(name):
    a = [0.0, 0.0, -0.0, 3.0, 2.0, -1.0, 1e200, INF, -INF, 5.0, INF, -INF]
    b = [0.0, 4.0, -2.0, 0.0, 2.0, -0.0, 1e200, 1.0, 1.0, -INF, INF, -INF]
    if name in ("hypot", "copysign"):
        # At infinite inputs PyTorch's formulas divide inf by inf (NaN); these give +-1 or 0.
        a, b = a[:7], b[:7]
    (fa, fb), (ta, tb) = _grads(name, a, b)
    _same(fa, ta, rtol=1e-12, atol=0)
    _same(fb, tb, rtol=1e-12, atol=0)


def test_sinc_gradient_at_zero():
    for m in (flow, torch):
        x = m.tensor([0.0, -0.0, 0.5, 1.0, -3.0], dtype=m.float64, requires_grad=True)
        m.sinc(x).sum().backward()
        if m is flow:
            got = x.grad
        else:
            _same(got, x.grad, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2"])
def test_second_derivative(name):
    out = []
    for m in (flow, torch):
        x = m.tensor([0.3, -1.2, 2.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([1.1, 0.4, -2.0], dtype=m.float64, requires_grad=True)
        (gx,) = m.autograd.grad(getattr(m, name)(x, y).sum(), [x], create_graph=True)
        gx.sum().backward()
        out.append((x.grad, y.grad))
    _same(out[0][0], out[1][0], rtol=1e-10, atol=1e-12)
    _same(out[0][1], out[1][1], rtol=1e-10, atol=1e-12)


# ---- integer ops ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize(
    "dtypes",
    [
        ("int64", "int64"),
        ("int32", "int32"),
        ("int32", "int64"),
        ("uint8", "uint8"),
        ("int16", "int8"),
    ],
)
def test_gcd_lcm(name, dtypes):
    rng = np.random.default_rng(5)
    lo = 0 if "uint8" in dtypes else -40
    a = rng.integers(lo, 41, size=(6, 1)).astype(dtypes[0])
    b = rng.integers(lo, 41, size=(1, 5)).astype(dtypes[1])
    a[0, 0], b[0, 0] = 0, 0
    got = getattr(flow, name)(flow.tensor(a), flow.tensor(b))
    _same(got, getattr(torch, name)(torch.tensor(a), torch.tensor(b)), 0, 0)
    big = np.array([2**40 * 3, 1836311903, 0]), np.array([2**35 * 9, 1134903170, 7])
    got = getattr(flow, name)(flow.tensor(big[0]), flow.tensor(big[1]))
    _same(got, getattr(torch, name)(torch.tensor(big[0]), torch.tensor(big[1])), 0, 0)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_reject_floats_and_bools(name):
    for a, b in [([1.0], [2.0]), ([1], [2.0]), ([True], [False])]:
        _raises_like(lambda m, a=a, b=b: getattr(m, name)(m.tensor(a), m.tensor(b)))


# ---- float_power, ldexp, frexp --------------------------------------------------------------


def test_float_power_scalars_and_dtypes():
    cases = [
        lambda m: m.float_power(m.tensor([2, -3, 0]), 2),
        lambda m: m.float_power(m.tensor([2, 3, 0]), 0.5),
        lambda m: m.float_power(m.tensor([1.5, -2.0]), m.tensor([2, 3])),
        lambda m: m.float_power(2.0, m.tensor([1.5, -2.0]).half()),
        lambda m: m.float_power(m.tensor([True, False]), m.tensor([2, 0])),
        lambda m: m.tensor([1.5, 4.0]).float_power(-1),
    ]
    for fn in cases:
        _same(fn(flow), fn(torch), rtol=1e-14, atol=0)


def test_ldexp_rounds_once():
    x = np.array([2.0**-14, 2.0**-24, 1.0, 1.0], dtype=np.float16)
    e = np.array([20, 30, -25, 16])
    for m_other in (lambda m: m.tensor(e), lambda m: m.tensor(e).half()):
        got = flow.ldexp(flow.tensor(x), m_other(flow))
        _same(got, torch.ldexp(torch.tensor(x), m_other(torch)), 0, 0)
    _same(
        flow.ldexp(flow.tensor([1e-30]), flow.tensor([120])),
        torch.ldexp(torch.tensor([1e-30]), torch.tensor([120])),
        1e-6,
        0,
    )


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_frexp(dtype):
    vals = [0.0, -0.0, 1.0, 0.5, -0.75, 3.0, 1024.0, 1e-3, -7e4, INF, -INF, NAN]
    if dtype == "float64":
        vals += [5e-324, 2.0**-1022, 1.7e308, 2.0**1023, np.nextafter(1.0, 0.0), 1e-310]
    if dtype == "float32":
        vals += [1.4e-45, 3.4e38, 2.0**127, float(np.nextafter(np.float32(1), np.float32(0)))]
    if dtype == "float16":
        vals += [65504.0, 6e-8, 2.0**-14]
    rng = np.random.default_rng(7)
    vals += list(rng.standard_normal(50) * 10.0 ** rng.integers(-5, 6, 50))
    t = torch.tensor(vals, dtype=torch.float64).to(getattr(torch, dtype))
    f = flow.tensor(_np(t).astype(np.float64)).to(getattr(flow, dtype))
    (fm, fe), (tm, te) = flow.frexp(f), torch.frexp(t)
    _same(fm, tm, 0, 0)
    assert fe.dtype == flow.int32 and fe.tolist() == te.tolist()
    fm2, fe2 = f.frexp()
    assert fm2.tolist() == fm.tolist() or np.isnan(_np(fm2)).any()


def test_frexp_gradient():
    out = []
    for m in (flow, torch):
        x = m.tensor([0.3, -5.0, 0.0, 1024.0, 7e-5], dtype=m.float64, requires_grad=True)
        mant, _ = m.frexp(x)
        (mant * m.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=m.float64)).sum().backward()
        out.append(x.grad)
    _same(out[0], out[1], 0, 0)


# ---- methods and in-place forms -------------------------------------------------------------

INPLACE = [
    ("hypot_", lambda m: m.tensor([0.5, -2.0, 3.0])),
    ("copysign_", lambda m: m.tensor([-1.0, -0.0, 3.0])),
    ("heaviside_", lambda m: m.tensor([0.5, 0.5, 0.5])),
    ("ldexp_", lambda m: m.tensor([1, -2, 3])),
    ("gcd_", None),
    ("lcm_", None),
]


@pytest.mark.parametrize("name,other", INPLACE)
def test_binary_inplace_modifies_and_returns_self(name, other):
    ints = other is None
    vals = [4, -6, 0] if ints else [1.5, 0.0, -2.0]
    results = []
    for m in (flow, torch):
        x = m.tensor(vals)
        y = m.tensor([6, 4, 5]) if ints else other(m)
        r = getattr(x, name)(y)
        assert r is x
        results.append(x)
    _same(results[0], results[1], 1e-6, 0)


@pytest.mark.parametrize("name", ["sinc_", "deg2rad_", "rad2deg_"])
def test_unary_inplace_modifies_and_returns_self(name):
    results = []
    for m in (flow, torch):
        x = m.tensor([[0.0, 1.5], [-2.0, 0.25]]).t()  # non-contiguous self
        r = getattr(x, name)()
        assert r is x
        results.append(x)
    _same(results[0], results[1], 1e-6, 0)


def test_float_power_inplace_needs_float64():
    x = flow.tensor([2.0, 3.0], dtype=flow.float64)
    assert x.float_power_(2) is x and x.tolist() == [4.0, 9.0]
    y = flow.tensor([2.0, 3.0], dtype=flow.float64)
    y.float_power_(flow.tensor([1, 2]))
    assert y.tolist() == [2.0, 9.0]
    _raises_like(lambda m: m.tensor([2.0]).float_power_(2))
    _raises_like(lambda m: m.tensor([2]).float_power_(2))


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.ones(3, dtype=m.int64).copysign_(m.tensor([1.0, -1.0, 1.0])),
        lambda m: m.ones(3, dtype=m.int64).sinc_(),
        lambda m: m.ones(3, dtype=m.int64).deg2rad_(),
        lambda m: m.ones(3, dtype=m.int64).ldexp_(m.tensor([1, 2, 3])),
        lambda m: m.ones(3).hypot_(m.ones(2, 3)),
        lambda m: m.ones(3).heaviside_(m.ones(3, dtype=m.float64)),
        lambda m: m.ones(3).gcd_(m.ones(3, dtype=m.int64)),
    ],
)
def test_inplace_errors_match_torch(fn):
    _raises_like(fn)


def test_inplace_gradient_through_copysign_():
    out = []
    for m in (flow, torch):
        leaf = m.tensor([1.5, 0.0, -2.0], dtype=m.float64, requires_grad=True)
        x = leaf * 1.0
        x.copysign_(m.tensor([-1.0, -1.0, 1.0], dtype=m.float64))
        (x * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        out.append(leaf.grad)
    _same(out[0], out[1], 0, 0)


def test_methods_match_functions():
    a, b = flow.tensor([1.5, -2.0]), flow.tensor([0.5, 3.0])
    for name in FLOAT_BINARY + ["float_power"]:
        assert getattr(a, name)(b).tolist() == getattr(flow, name)(a, b).tolist()
    for name in FLOAT_UNARY + ["signbit"]:
        assert getattr(a, name)().tolist() == getattr(flow, name)(a).tolist()


# ---- argument errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.hypot(m.tensor([1, 2]), m.tensor([3, 4])),
        lambda m: m.hypot(m.tensor([1.0]), 2.0),
        lambda m: m.hypot(2.0, m.tensor([1.0])),
        lambda m: m.logaddexp(m.tensor([1, 2]), m.tensor([3, 4])),
        lambda m: m.logaddexp2(m.tensor([True]), m.tensor([False])),
        lambda m: m.logaddexp(m.tensor([1.0]), 1.0),
        lambda m: m.heaviside(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
        lambda m: m.heaviside(m.tensor([1]), m.tensor([1.0])),
        lambda m: m.heaviside(m.tensor([1.0]), 0.5),
        lambda m: m.ldexp(m.tensor([1.0]), 2),
        lambda m: m.frexp(m.tensor([1, 2])),
        lambda m: m.frexp(m.tensor([True])),
        lambda m: m.hypot(m.ones(2), m.ones(3)),
        lambda m: m.copysign(m.ones(2), m.ones(3)),
        lambda m: m.gcd(m.tensor([4]), 2),
    ],
)
def test_bad_arguments_raise_like_torch(fn):
    _raises_like(fn)


@pytest.mark.parametrize(
    "values", [[0.0, 100.0], [-1e4, 0.0, 1e4], [-100.0, 0.0, 100.0], [float("-inf"), 0.0, 1.0]]
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logcumsumexp_of_values_far_apart_like_torch(values, dtype):
    a = np.array(values, dtype=dtype)
    x = flow.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    y, z = flow.logcumsumexp(x, 0), torch.logcumsumexp(t, 0)
    np.testing.assert_allclose(y.detach().numpy(), z.detach().numpy(), rtol=1e-6, atol=1e-30)
    y.sum().backward()
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5)
    r = np.random.default_rng(0).standard_normal((3, 37, 5)).astype(dtype) * 30
    for d in (0, 1, -1):
        np.testing.assert_allclose(
            flow.logcumsumexp(flow.tensor(r), d).numpy(),
            torch.logcumsumexp(torch.tensor(r), d).numpy(),
            rtol=1e-5,
            atol=1e-4,
        )
