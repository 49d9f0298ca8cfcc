"""Numerical float64 gradient checks: each op's analytic gradient (its backward) against central
finite differences of its own forward, element by element of the full Jacobian.

The reference is the op itself, not PyTorch: a backward formula that agrees with PyTorch's but
not with the forward (both wrong, or a forward computed at float32 precision) fails here.
Inputs are tiny and drawn away from kinks, poles and ties, where no derivative exists.

Every case is written against a module argument ``lib``; ``GRADCHECK_LIB=torch`` runs the same
cases on PyTorch, which shows that a failing point is oneflow's fault and not the point's.
"""

import os

import numpy as np
import pytest

import oneflow as flow

if os.environ.get("GRADCHECK_LIB") == "torch":
    import torch as LIB
else:
    LIB = flow


def _outputs(out):
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if o.is_floating_point()]


def _numpy(t):
    return t.detach().cpu().numpy().astype(np.float64).reshape(-1)


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, lib=flow):
    """Checks the gradient of fn(lib, *tensors) against central differences in float64.

    inputs: float64 NumPy arrays, one per differentiable input. fn returns a tensor or a tuple
    (its floating outputs are checked together). Every Jacobian entry must satisfy
    |analytic - numerical| <= atol + rtol * |numerical|.
    """
    arrays = [np.array(a, dtype=np.float64) for a in inputs]
    leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    outs = _outputs(fn(lib, *leaves))
    for k, o in enumerate(outs):
        assert o.dtype == lib.float64, f"output {k} is {o.dtype}, not float64"
        # As in PyTorch, even where the derivative is zero (floor, a count).
        assert o.requires_grad, f"output {k} does not require grad"
    sizes = [int(o.numel()) for o in outs]
    n_out = sum(sizes)

    # Analytic Jacobian, one row per output element: the backward of a one-hot cotangent.
    analytic = [np.zeros((n_out, a.size)) for a in arrays]
    live = [k for k, o in enumerate(outs) if o.requires_grad]
    row = 0
    for k in range(len(outs)):
        for j in range(sizes[k]):
            if k in live:
                cots = []
                for kk in live:
                    c = np.zeros(sizes[kk])
                    if kk == k:
                        c[j] = 1.0
                    cots.append(lib.tensor(c.reshape(tuple(outs[kk].shape)), dtype=lib.float64))
                grads = lib.autograd.grad(
                    [outs[kk] for kk in live], leaves, cots, retain_graph=True, allow_unused=True
                )
                for i, g in enumerate(grads):
                    if g is not None:
                        assert tuple(g.shape) == arrays[i].shape, (
                            f"grad of input {i}: shape {tuple(g.shape)} != {arrays[i].shape}"
                        )
                        analytic[i][row] = _numpy(g)
            row += 1

    # Numerical Jacobian, one column per input element.
    def forward(values):
        with lib.no_grad():
            ts = [lib.tensor(v, dtype=lib.float64) for v in values]
            return np.concatenate([_numpy(o) for o in _outputs(fn(lib, *ts))] or [np.zeros(0)])

    for i, a in enumerate(arrays):
        numerical = np.zeros((n_out, a.size))
        for e in range(a.size):
            plus, minus = [x.copy() for x in arrays], [x.copy() for x in arrays]
            plus[i].flat[e] += eps
            minus[i].flat[e] -= eps
            numerical[:, e] = (forward(plus) - forward(minus)) / (2 * eps)
        err = np.abs(analytic[i] - numerical) - (atol + rtol * np.abs(numerical))
        if (err > 0).any():
            r, c = np.unravel_index(np.argmax(err), err.shape)
            raise AssertionError(
                f"input {i} (shape {a.shape}): d out[{r}] / d in[{c}] analytic "
                f"{analytic[i][r, c]:.10g} vs numerical {numerical[r, c]:.10g}; "
                f"{int((err > 0).sum())} of {err.size} entries differ\n"
                f"analytic:\n{analytic[i]}\nnumerical:\n{numerical}"
            )


# ---------------------------------------------------------------------------------------------
# Inputs

_rng = np.random.default_rng(20261201)


def U(*shape, lo=-2.0, hi=2.0, avoid=(), margin=0.1):
    """Uniform on [lo, hi], at least margin from every point in avoid (kinks, poles, jumps)."""
    x = _rng.uniform(lo, hi, size=shape)
    for _ in range(1000):
        bad = np.zeros(x.shape, bool)
        for p in avoid:
            bad |= np.abs(x - p) < margin
        if not bad.any():
            return x
        x[bad] = _rng.uniform(lo, hi, size=int(bad.sum()))
    raise ValueError("no values found away from the excluded points")


def D(*shape, gap=0.3):
    """Distinct values, pairwise at least gap apart: no ties for max, sort, median, pools."""
    n = int(np.prod(shape))
    return (_rng.permutation(n) * gap - n * gap / 2 + _rng.uniform(0, gap / 3, n)).reshape(shape)


def apart(a, lo=0.2, hi=1.0):
    """An array that differs from a by lo..hi in each element, with a random sign."""
    return a + _rng.choice([-1.0, 1.0], size=a.shape) * _rng.uniform(lo, hi, size=a.shape)


def spd(n):
    """A well-conditioned symmetric positive definite matrix."""
    b = _rng.uniform(-1, 1, size=(n, n))
    return b @ b.T + n * np.eye(n)


def quotients(shape, sign=1.0):
    """(a, b) with b in 0.5..1.5 (times sign) and a / b 0.15 away from every integer."""
    b = sign * _rng.uniform(0.5, 1.5, size=shape)
    q = _rng.integers(-3, 3, size=shape) + _rng.uniform(0.15, 0.85, size=shape)
    return q * b, b


def F(lib):
    return lib.nn.functional


def i64(lib, values):
    return lib.tensor(values, dtype=lib.int64)


def f64(lib, values):
    return lib.tensor(values, dtype=lib.float64)


def boolean(lib, values):
    return lib.tensor(values, dtype=lib.bool)


CASES = {}


def case(name, fn, *inputs, **tol):
    assert name not in CASES, name
    CASES[name] = (fn, inputs, tol)


# ---------------------------------------------------------------------------------------------
# Unary math. Step functions (ceil, floor, ...) have a zero derivative away from their jumps.

_INT = tuple(range(-3, 4))
_HALF = tuple(k + 0.5 for k in range(-3, 3))
UNARY = {
    "abs": (lambda lib, x: lib.abs(x), dict(avoid=(0,))),
    "neg": (lambda lib, x: lib.neg(x), {}),
    "exp": (lambda lib, x: lib.exp(x), {}),
    "exp2": (lambda lib, x: lib.exp2(x), {}),
    "expm1": (lambda lib, x: lib.expm1(x), {}),
    "log": (lambda lib, x: lib.log(x), dict(lo=0.2, hi=3)),
    "log2": (lambda lib, x: lib.log2(x), dict(lo=0.2, hi=3)),
    "log10": (lambda lib, x: lib.log10(x), dict(lo=0.2, hi=3)),
    "log1p": (lambda lib, x: lib.log1p(x), dict(lo=-0.8, hi=3)),
    "sqrt": (lambda lib, x: lib.sqrt(x), dict(lo=0.2, hi=3)),
    "rsqrt": (lambda lib, x: lib.rsqrt(x), dict(lo=0.2, hi=3)),
    "reciprocal": (lambda lib, x: lib.reciprocal(x), dict(avoid=(0,), margin=0.3)),
    "square": (lambda lib, x: lib.square(x), {}),
    "sin": (lambda lib, x: lib.sin(x), {}),
    "cos": (lambda lib, x: lib.cos(x), {}),
    "tan": (lambda lib, x: lib.tan(x), dict(lo=-1.2, hi=1.2)),
    "asin": (lambda lib, x: lib.asin(x), dict(lo=-0.9, hi=0.9)),
    "acos": (lambda lib, x: lib.acos(x), dict(lo=-0.9, hi=0.9)),
    "atan": (lambda lib, x: lib.atan(x), {}),
    "sinh": (lambda lib, x: lib.sinh(x), {}),
    "cosh": (lambda lib, x: lib.cosh(x), {}),
    "tanh": (lambda lib, x: lib.tanh(x), {}),
    "asinh": (lambda lib, x: lib.asinh(x), {}),
    "acosh": (lambda lib, x: lib.acosh(x), dict(lo=1.2, hi=3)),
    "atanh": (lambda lib, x: lib.atanh(x), dict(lo=-0.9, hi=0.9)),
    "sigmoid": (lambda lib, x: lib.sigmoid(x), {}),
    "erf": (lambda lib, x: lib.erf(x), {}),
    "erfc": (lambda lib, x: lib.erfc(x), {}),
    "erfinv": (lambda lib, x: lib.erfinv(x), dict(lo=-0.9, hi=0.9)),
    "lgamma": (lambda lib, x: lib.lgamma(x), dict(lo=0.3, hi=3)),
    "digamma": (lambda lib, x: lib.digamma(x), dict(lo=0.3, hi=3)),
    "logit": (lambda lib, x: lib.logit(x), dict(lo=0.1, hi=0.9)),
    "logit_eps": (lambda lib, x: lib.logit(x, eps=0.3), dict(lo=0.05, hi=0.95, avoid=(0.3, 0.7))),
    "ceil": (lambda lib, x: lib.ceil(x), dict(avoid=_INT)),
    "floor": (lambda lib, x: lib.floor(x), dict(avoid=_INT)),
    "round": (lambda lib, x: lib.round(x), dict(avoid=_HALF)),
    "trunc": (lambda lib, x: lib.trunc(x), dict(avoid=_INT)),
    "sign": (lambda lib, x: lib.sign(x), dict(avoid=(0,))),
    "frac": (lambda lib, x: lib.frac(x), dict(avoid=_INT)),
    "nan_to_num": (lambda lib, x: lib.nan_to_num(x), {}),
    "pow_2": (lambda lib, x: lib.pow(x, 2), {}),
    "pow_3": (lambda lib, x: x**3, {}),
    "pow_half": (lambda lib, x: x**0.5, dict(lo=0.2, hi=3)),
    "pow_neg": (lambda lib, x: lib.pow(x, -1.5), dict(lo=0.2, hi=3)),
    "rpow": (lambda lib, x: 2.0**x, {}),
    "clamp_scalar": (lambda lib, x: lib.clamp(x, -0.5, 0.7), dict(avoid=(-0.5, 0.7))),
    "clamp_min": (lambda lib, x: lib.clamp_min(x, 0.2), dict(avoid=(0.2,))),
    "clamp_max": (lambda lib, x: lib.clamp_max(x, 0.2), dict(avoid=(0.2,))),
    "rsub_scalar": (lambda lib, x: 1.5 - x, {}),
    "rdiv_scalar": (lambda lib, x: 1.5 / x, dict(avoid=(0,), margin=0.3)),
}
for _name, (_fn, _dom) in UNARY.items():
    case(_name, _fn, U(2, 3, **_dom))

# ---------------------------------------------------------------------------------------------
# Activations

case("relu", lambda lib, x: lib.relu(x), U(2, 3, avoid=(0,)))
case("relu6", lambda lib, x: F(lib).relu6(x), U(2, 4, lo=-2, hi=8, avoid=(0, 6)))
case("leaky_relu", lambda lib, x: F(lib).leaky_relu(x, 0.2), U(2, 3, avoid=(0,)))
case("elu", lambda lib, x: F(lib).elu(x, alpha=1.3), U(2, 3, avoid=(0,)))
case("selu", lambda lib, x: F(lib).selu(x), U(2, 3, avoid=(0,)))
case("celu", lambda lib, x: F(lib).celu(x, alpha=0.7), U(2, 3, avoid=(0,)))
case("gelu", lambda lib, x: F(lib).gelu(x), U(2, 3))
case("gelu_tanh", lambda lib, x: F(lib).gelu(x, approximate="tanh"), U(2, 3))
case("silu", lambda lib, x: F(lib).silu(x), U(2, 3))
case("mish", lambda lib, x: F(lib).mish(x), U(2, 3))
case("softplus", lambda lib, x: F(lib).softplus(x), U(2, 3))
case(
    "softplus_beta_threshold",
    lambda lib, x: F(lib).softplus(x, beta=2.0, threshold=3.0),
    U(2, 4, lo=-3, hi=3, avoid=(1.5,)),
)
case("softsign", lambda lib, x: F(lib).softsign(x), U(2, 3, avoid=(0,)))
case("hardtanh", lambda lib, x: F(lib).hardtanh(x, -0.5, 0.8), U(2, 4, avoid=(-0.5, 0.8)))
case("hardsigmoid", lambda lib, x: F(lib).hardsigmoid(x), U(2, 4, lo=-5, hi=5, avoid=(-3, 3)))
case("hardswish", lambda lib, x: F(lib).hardswish(x), U(2, 4, lo=-5, hi=5, avoid=(-3, 3)))
case("hardshrink", lambda lib, x: F(lib).hardshrink(x, 0.5), U(2, 4, avoid=(-0.5, 0.5)))
case("softshrink", lambda lib, x: F(lib).softshrink(x, 0.5), U(2, 4, avoid=(-0.5, 0.5)))
case("tanhshrink", lambda lib, x: F(lib).tanhshrink(x), U(2, 3))
case("logsigmoid", lambda lib, x: F(lib).logsigmoid(x), U(2, 3, lo=-4, hi=4))
case("prelu", lambda lib, x, w: F(lib).prelu(x, w), U(2, 3, 2, avoid=(0,)), U(3))
case("prelu_shared", lambda lib, x, w: F(lib).prelu(x, w), U(2, 3, avoid=(0,)), U(1))
case("glu", lambda lib, x: F(lib).glu(x), U(2, 4))
case("glu_dim0", lambda lib, x: F(lib).glu(x, dim=0), U(4, 3))
case("threshold", lambda lib, x: F(lib).threshold(x, 0.3, -1.0), U(2, 4, avoid=(0.3,)))
case("softmin", lambda lib, x: F(lib).softmin(x, dim=1), U(2, 3))
case("rrelu_eval", lambda lib, x: F(lib).rrelu(x, training=False), U(2, 3, avoid=(0,)))

# ---------------------------------------------------------------------------------------------
# Binary and ternary ops, with broadcasting so that gradients are summed back to shape.

_fa, _fb = quotients((2, 3))
_ra, _rb = quotients((2, 3), sign=-1.0)
_mx = U(2, 3)
case("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2.0), U(2, 3), U(3))
case("sub_alpha", lambda lib, a, b: lib.sub(a, b, alpha=0.5), U(2, 3), U(2, 1))
case("mul", lambda lib, a, b: lib.mul(a, b), U(2, 1), U(1, 3))
case("div", lambda lib, a, b: lib.div(a, b), U(2, 3), U(3, avoid=(0,), margin=0.4))
case("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"), _fa, _fb)
case("div_trunc", lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"), _ra, _rb)
case("pow", lambda lib, a, b: lib.pow(a, b), U(2, 3, lo=0.3, hi=2), U(2, 3))
case("pow_broadcast", lambda lib, a, b: lib.pow(a, b), U(2, 3, lo=0.3, hi=2), U(1, 3))
case("atan2", lambda lib, a, b: lib.atan2(a, b), U(2, 3), U(2, 3, avoid=(0,), margin=0.3))
case("maximum", lambda lib, a, b: lib.maximum(a, b), _mx, apart(_mx))
case("minimum", lambda lib, a, b: lib.minimum(a, b), _mx, apart(_mx))
case("fmax", lambda lib, a, b: lib.fmax(a, b), _mx, apart(_mx))
case("fmin", lambda lib, a, b: lib.fmin(a, b), _mx, apart(_mx))
case("lerp_scalar", lambda lib, a, b: lib.lerp(a, b, 0.3), U(2, 3), U(2, 3))
case("lerp_tensor", lambda lib, a, b, w: lib.lerp(a, b, w), U(2, 3), U(3), U(2, 1))
case(
    "where",
    lambda lib, a, b: lib.where(boolean(lib, [[True, False, True], [False, False, True]]), a, b),
    U(2, 3),
    U(3),
)
_cx = U(2, 3, lo=-1.5, hi=1.5)
case(
    "clamp_tensor_bounds",
    lambda lib, x, lo, hi: lib.clamp(x, min=lo, max=hi),
    _cx,
    apart(np.full((2, 3), -0.5), 0.0, 0.3),
    apart(np.full((1, 3), 0.5), 0.0, 0.3),
)
case("addcmul", lambda lib, x, a, b: lib.addcmul(x, a, b, value=0.7), U(2, 3), U(2, 3), U(3))
case(
    "addcdiv",
    lambda lib, x, a, b: lib.addcdiv(x, a, b, value=-0.4),
    U(2, 3),
    U(2, 3),
    U(2, 3, avoid=(0,), margin=0.4),
)
case("fmod", lambda lib, a, b: lib.fmod(a, b), *quotients((2, 3)))
case("fmod_negative_divisor", lambda lib, a, b: lib.fmod(a, b), *quotients((2, 3), sign=-1.0))
case("fmod_scalar", lambda lib, a: lib.fmod(a, 0.7), quotients((2, 3))[0] / _fb * 0.7)
case("remainder", lambda lib, a, b: lib.remainder(a, b), *quotients((2, 3)))
case("remainder_negative", lambda lib, a, b: lib.remainder(a, b), *quotients((2, 3), sign=-1.0))
case("xlogy", lambda lib, a, b: lib.xlogy(a, b), U(2, 3), U(2, 3, lo=0.2, hi=3))

# ---------------------------------------------------------------------------------------------
# Reductions, scans and selections. Values are distinct (D) where ties would lose the derivative.

_z1 = U(2, 3, avoid=(0,))
_z1[0, 1] = 0.0
_z2 = U(2, 3, avoid=(0,))
_z2[1, 0] = _z2[1, 2] = 0.0
_cp = U(2, 4, lo=-1.5, hi=1.5, avoid=(0,))
_cp[0, 1] = 0.0
_cp[1, 3] = 0.0
case("sum", lambda lib, x: lib.sum(x), U(2, 3))
case("sum_dim", lambda lib, x: lib.sum(x, dim=1), U(2, 3))
case("sum_dims_keepdim", lambda lib, x: lib.sum(x, dim=(0, 2), keepdim=True), U(2, 3, 2))
case("mean", lambda lib, x: lib.mean(x), U(2, 3))
case("mean_dim_keepdim", lambda lib, x: lib.mean(x, dim=-1, keepdim=True), U(2, 3))
case("prod", lambda lib, x: lib.prod(x), U(2, 3, avoid=(0,)))
case("prod_dim", lambda lib, x: lib.prod(x, dim=1), U(2, 3, avoid=(0,)))
case("prod_one_zero", lambda lib, x: lib.prod(x), _z1)
case("prod_dim_zeros", lambda lib, x: lib.prod(x, dim=1), _z2)
case("prod_dim0_zeros", lambda lib, x: lib.prod(x, dim=0, keepdim=True), _z2)
case("amax", lambda lib, x: lib.amax(x, dim=1), D(2, 3))
case("amax_all", lambda lib, x: lib.amax(x, dim=(0, 1)), D(2, 3))
case("amin_keepdim", lambda lib, x: lib.amin(x, dim=0, keepdim=True), D(2, 3))
case("max_all", lambda lib, x: lib.max(x), D(2, 3))
case("max_dim", lambda lib, x: lib.max(x, dim=1)[0], D(2, 3))
case("max_dim_keepdim", lambda lib, x: lib.max(x, dim=0, keepdim=True)[0], D(2, 3))
case("min_all", lambda lib, x: lib.min(x), D(2, 3))
case("min_dim", lambda lib, x: lib.min(x, dim=-1)[0], D(2, 3))
case("std", lambda lib, x: lib.std(x), U(2, 3))
case("std_dim_unbiased_false", lambda lib, x: lib.std(x, dim=1, unbiased=False), U(2, 3))
case("std_correction", lambda lib, x: lib.std(x, dim=0, correction=0, keepdim=True), U(3, 2))
case("var", lambda lib, x: lib.var(x), U(2, 3))
case("var_dim", lambda lib, x: lib.var(x, dim=1), U(2, 4))
case("var_correction_2", lambda lib, x: lib.var(x, dim=1, correction=2), U(2, 4))
case("var_correction_0_all", lambda lib, x: lib.var(x, correction=0), U(2, 3))
case("var_mean", lambda lib, x: lib.var_mean(x, dim=1), U(2, 4))
case("var_mean_all_correction", lambda lib, x: lib.var_mean(x, correction=0), U(2, 3))
case("std_mean", lambda lib, x: lib.std_mean(x, dim=0), U(3, 2))
case("norm", lambda lib, x: lib.norm(x), U(2, 3))
case("norm_p1", lambda lib, x: lib.norm(x, p=1), U(2, 3, avoid=(0,)))
case("norm_p3_dim", lambda lib, x: lib.norm(x, p=3, dim=1), U(2, 3, avoid=(0,)))
case("norm_fro", lambda lib, x: lib.norm(x, p="fro"), U(2, 3))
case("norm_inf", lambda lib, x: lib.norm(x, p=float("inf")), D(2, 3))
case("vector_norm", lambda lib, x: lib.linalg.vector_norm(x), U(2, 3))
case("vector_norm_1_dim", lambda lib, x: lib.linalg.vector_norm(x, 1, dim=1), U(2, 3, avoid=(0,)))
case("vector_norm_inf", lambda lib, x: lib.linalg.vector_norm(x, float("inf"), dim=0), D(2, 3))
case("vector_norm_neg_inf", lambda lib, x: lib.linalg.vector_norm(x, float("-inf")), D(2, 3))
case(
    "vector_norm_half_keepdim",
    lambda lib, x: lib.linalg.vector_norm(x, 0.5, dim=-1, keepdim=True),
    U(2, 3, avoid=(0,), margin=0.3),
)
case("vector_norm_3", lambda lib, x: lib.linalg.vector_norm(x, 3), U(2, 3, avoid=(0,)))
for _ord in ["fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")]:
    # Distinct column and row sums, distinct singular values: each norm is differentiable.
    case(f"matrix_norm_{_ord}", lambda lib, x, o=_ord: lib.linalg.matrix_norm(x, ord=o), D(3, 3))
case("matrix_norm_batched", lambda lib, x: lib.linalg.matrix_norm(x), U(2, 2, 3))
case("linalg_norm", lambda lib, x: lib.linalg.norm(x), U(2, 3))
case("logsumexp", lambda lib, x: lib.logsumexp(x, dim=1), U(2, 3))
case("logsumexp_keepdim", lambda lib, x: lib.logsumexp(x, dim=0, keepdim=True), U(2, 3))
case("cumsum", lambda lib, x: lib.cumsum(x, dim=1), U(2, 3))
case("cumsum_dim0", lambda lib, x: lib.cumsum(x, dim=0), U(3, 2))
case("cumprod", lambda lib, x: lib.cumprod(x, dim=1), U(2, 4, avoid=(0,)))
case("cumprod_with_zeros", lambda lib, x: lib.cumprod(x, dim=1), _cp)
case("cumprod_dim0_with_zero", lambda lib, x: lib.cumprod(x, dim=0), _cp.T.copy())
case("cummax", lambda lib, x: lib.cummax(x, dim=1)[0], D(2, 4))
case("cummin", lambda lib, x: lib.cummin(x, dim=0)[0], D(4, 2))
case("logcumsumexp", lambda lib, x: lib.logcumsumexp(x, dim=1), U(2, 3))
case("median_all", lambda lib, x: lib.median(x), D(3, 3))
case("median_dim", lambda lib, x: lib.median(x, dim=1)[0], D(2, 5))
case("median_even", lambda lib, x: lib.median(x, dim=0)[0], D(4, 2))
case("kthvalue", lambda lib, x: lib.kthvalue(x, 2, dim=1)[0], D(2, 4))
case("kthvalue_dim0_keepdim", lambda lib, x: lib.kthvalue(x, 3, 0, True)[0], D(4, 2))
case("topk", lambda lib, x: lib.topk(x, 2, dim=1)[0], D(2, 4))
case("sort", lambda lib, x: lib.sort(x, dim=1)[0], D(2, 4))
case("sort_descending", lambda lib, x: lib.sort(x, dim=0, descending=True)[0], D(3, 2))
case("quantile", lambda lib, x: lib.quantile(x, 0.3, dim=1), D(2, 4))
case("nansum", lambda lib, x: lib.nansum(x, dim=1), U(2, 3))
case("nanmean", lambda lib, x: lib.nanmean(x), U(2, 3))

# ---------------------------------------------------------------------------------------------
# Linear algebra

case("matmul_1d_1d", lambda lib, a, b: lib.matmul(a, b), U(3), U(3))
case("matmul_2d_1d", lambda lib, a, b: lib.matmul(a, b), U(2, 3), U(3))
case("matmul_1d_2d", lambda lib, a, b: lib.matmul(a, b), U(3), U(3, 2))
case("matmul_2d_2d", lambda lib, a, b: lib.matmul(a, b), U(2, 3), U(3, 2))
case("matmul_3d_2d", lambda lib, a, b: lib.matmul(a, b), U(2, 2, 3), U(3, 2))
case("matmul_2d_3d", lambda lib, a, b: lib.matmul(a, b), U(2, 3), U(2, 3, 2))
case("matmul_3d_1d", lambda lib, a, b: lib.matmul(a, b), U(2, 2, 3), U(3))
case("matmul_1d_3d", lambda lib, a, b: lib.matmul(a, b), U(3), U(2, 3, 2))
case("matmul_broadcast_batch", lambda lib, a, b: lib.matmul(a, b), U(2, 1, 2, 3), U(2, 3, 2))
case("matmul_transposed", lambda lib, a, b: lib.matmul(a.t(), b.t()), U(3, 2), U(2, 3))
case("mm", lambda lib, a, b: lib.mm(a, b), U(2, 3), U(3, 2))
case("bmm", lambda lib, a, b: lib.bmm(a, b), U(2, 2, 3), U(2, 3, 2))
case(
    "addmm",
    lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2.0),
    U(2, 2),
    U(2, 3),
    U(3, 2),
)
case("addmm_broadcast", lambda lib, c, a, b: lib.addmm(c, a, b), U(2), U(2, 3), U(3, 2))
case(
    "baddbmm",
    lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=-0.5, alpha=1.5),
    U(2, 2, 2),
    U(2, 2, 3),
    U(2, 3, 2),
)
case("addmv", lambda lib, c, a, b: lib.addmv(c, a, b, beta=0.3, alpha=2), U(2), U(2, 3), U(3))
case("dot", lambda lib, a, b: lib.dot(a, b), U(3), U(3))
case("mv", lambda lib, a, b: lib.mv(a, b), U(2, 3), U(3))
case("outer", lambda lib, a, b: lib.outer(a, b), U(2), U(3))
case("ger", lambda lib, a, b: lib.ger(a, b), U(3), U(2))
for _eq, _shapes in {
    "ij,jk->ik": [(2, 3), (3, 2)],
    "bij,bjk->bik": [(2, 2, 3), (2, 3, 2)],
    "ii->i": [(3, 3)],
    "ii": [(3, 3)],
    "ij->ji": [(2, 3)],
    "i,i->": [(3,), (3,)],
    "ij,ij->i": [(2, 3), (2, 3)],
    "bi,bj->bij": [(2, 2), (2, 3)],
    "ijk->k": [(2, 2, 3)],
    "i,j,k->ijk": [(2,), (2,), (3,)],
    "...ij,...jk": [(2, 2, 3), (3, 2)],
}.items():
    case(
        f"einsum[{_eq}]",
        lambda lib, *xs, e=_eq: lib.einsum(e, *xs),
        *[U(*s) for s in _shapes],
    )
case("tensordot_int", lambda lib, a, b: lib.tensordot(a, b, dims=1), U(2, 3), U(3, 2))
case(
    "tensordot_lists",
    lambda lib, a, b: lib.tensordot(a, b, dims=([1, 0], [0, 1])),
    U(2, 3, 2),
    U(3, 2, 2),
)
case("inv", lambda lib, a: lib.linalg.inv(a), U(3, 3) + 3 * np.eye(3))
case("inverse_batched", lambda lib, a: lib.inverse(a), U(2, 2, 2) + 3 * np.eye(2))
case("det", lambda lib, a: lib.det(a), U(3, 3) + 2 * np.eye(3))
case("det_batched", lambda lib, a: lib.linalg.det(a), U(2, 2, 2) + 2 * np.eye(2))
case("logdet", lambda lib, a: lib.logdet(a), spd(3))
case("slogdet", lambda lib, a: lib.slogdet(a)[1], U(3, 3) - 2 * np.eye(3))
case("cross", lambda lib, a, b: lib.cross(a, b, dim=1), U(2, 3), U(2, 3))
case("linalg_cross", lambda lib, a, b: lib.linalg.cross(a, b), U(2, 3), U(1, 3))
case("trace", lambda lib, a: lib.trace(a), U(3, 3))
case("trace_rect", lambda lib, a: lib.trace(a), U(2, 3))
case("diagonal", lambda lib, a: lib.diagonal(a, offset=1), U(3, 3))
case("linear", lambda lib, x, w, b: F(lib).linear(x, w, b), U(2, 3), U(4, 3), U(4))
case(
    "bilinear",
    lambda lib, a, b, w, c: F(lib).bilinear(a, b, w, c),
    U(2, 2),
    U(2, 3),
    U(2, 2, 3),
    U(2),
)

# ---------------------------------------------------------------------------------------------
# nn kernels

case("conv1d", lambda lib, x, w, b: F(lib).conv1d(x, w, b, padding=1), U(1, 2, 5), U(3, 2, 3), U(3))
case(
    "conv1d_stride_dilation_groups",
    lambda lib, x, w: F(lib).conv1d(x, w, stride=2, dilation=2, groups=2),
    U(2, 2, 7),
    U(4, 1, 2),
)
case("conv2d", lambda lib, x, w, b: F(lib).conv2d(x, w, b), U(1, 2, 3, 3), U(2, 2, 2, 2), U(2))
case(
    "conv2d_stride_padding",
    lambda lib, x, w: F(lib).conv2d(x, w, stride=2, padding=1),
    U(1, 1, 4, 3),
    U(2, 1, 2, 2),
)
case(
    "conv2d_groups",
    lambda lib, x, w, b: F(lib).conv2d(x, w, b, groups=2, padding=(0, 1)),
    U(1, 2, 3, 2),
    U(2, 1, 2, 2),
    U(2),
)
case(
    "conv3d", lambda lib, x, w, b: F(lib).conv3d(x, w, b), U(1, 1, 3, 3, 2), U(2, 1, 2, 2, 2), U(2)
)
case(
    "conv3d_stride_padding",
    lambda lib, x, w: F(lib).conv3d(x, w, stride=2, padding=1),
    U(1, 2, 2, 2, 2),
    U(1, 2, 2, 2, 2),
)
case(
    "conv_transpose1d",
    lambda lib, x, w, b: F(lib).conv_transpose1d(x, w, b, stride=2, output_padding=1),
    U(1, 2, 3),
    U(2, 3, 2),
    U(3),
)
case(
    "conv_transpose1d_groups_padding",
    lambda lib, x, w: F(lib).conv_transpose1d(x, w, padding=1, groups=2, dilation=2),
    U(1, 2, 4),
    U(2, 1, 3),
)
case(
    "conv_transpose2d",
    lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, stride=2),
    U(1, 2, 2, 2),
    U(2, 1, 2, 2),
    U(1),
)
case(
    "conv_transpose2d_groups",
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, groups=2, padding=1, stride=(2, 1)),
    U(1, 2, 2, 3),
    U(2, 1, 3, 2),
)
case(
    "conv_transpose3d",
    lambda lib, x, w, b: F(lib).conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1),
    U(1, 1, 2, 2, 2),
    U(1, 2, 2, 2, 2),
    U(2),
)
case("max_pool1d", lambda lib, x: F(lib).max_pool1d(x, 2), D(1, 2, 5))
case("max_pool1d_pad", lambda lib, x: F(lib).max_pool1d(x, 3, 1, 1), D(1, 1, 5))
case("max_pool2d", lambda lib, x: F(lib).max_pool2d(x, 2), D(1, 2, 4, 4))
case(
    "max_pool2d_stride_pad_ceil",
    lambda lib, x: F(lib).max_pool2d(x, 2, stride=2, padding=1, ceil_mode=True),
    D(1, 1, 4, 3),
)
case("max_pool2d_dilation", lambda lib, x: F(lib).max_pool2d(x, 2, 1, 0, 2), D(1, 1, 4, 4))
case("max_pool3d", lambda lib, x: F(lib).max_pool3d(x, 2), D(1, 1, 2, 4, 2))
case("avg_pool1d", lambda lib, x: F(lib).avg_pool1d(x, 2), U(1, 2, 5))
case(
    "avg_pool1d_pad_exclude",
    lambda lib, x: F(lib).avg_pool1d(x, 3, 2, 1, count_include_pad=False),
    U(1, 1, 5),
)
case("avg_pool2d", lambda lib, x: F(lib).avg_pool2d(x, 2), U(1, 2, 4, 4))
case(
    "avg_pool2d_ceil_pad",
    lambda lib, x: F(lib).avg_pool2d(x, 3, 2, 1, ceil_mode=True),
    U(1, 1, 4, 3),
)
case(
    "avg_pool2d_divisor",
    lambda lib, x: F(lib).avg_pool2d(x, 2, divisor_override=3),
    U(1, 1, 4, 2),
)
case("avg_pool3d", lambda lib, x: F(lib).avg_pool3d(x, 2, padding=1), U(1, 1, 2, 3, 2))
case("adaptive_avg_pool1d", lambda lib, x: F(lib).adaptive_avg_pool1d(x, 3), U(1, 2, 5))
case("adaptive_avg_pool2d", lambda lib, x: F(lib).adaptive_avg_pool2d(x, (2, 3)), U(1, 1, 3, 4))
case("adaptive_avg_pool3d", lambda lib, x: F(lib).adaptive_avg_pool3d(x, 2), U(1, 1, 3, 3, 2))
case("adaptive_max_pool1d", lambda lib, x: F(lib).adaptive_max_pool1d(x, 3), D(1, 2, 5))
case("adaptive_max_pool2d", lambda lib, x: F(lib).adaptive_max_pool2d(x, (2, 3)), D(1, 1, 3, 4))
case("adaptive_max_pool3d", lambda lib, x: F(lib).adaptive_max_pool3d(x, 2), D(1, 1, 3, 3, 2))


def _batch_norm_train(lib, x, w, b):
    return F(lib).batch_norm(x, None, None, w, b, training=True, eps=1e-3)


def _batch_norm_stats(lib, x, w, b):
    rm = lib.tensor([0.1, -0.2], dtype=lib.float64)
    rv = lib.tensor([0.5, 1.5], dtype=lib.float64)
    return F(lib).batch_norm(x, rm, rv, w, b, training=True, momentum=0.3)


def _batch_norm_eval(lib, x, w, b):
    rm = lib.tensor([0.1, -0.2], dtype=lib.float64)
    rv = lib.tensor([0.5, 1.5], dtype=lib.float64)
    return F(lib).batch_norm(x, rm, rv, w, b, training=False)


case("batch_norm_train", _batch_norm_train, U(3, 2, 2), U(2), U(2))
case("batch_norm_train_stats_2d", _batch_norm_stats, U(4, 2), U(2), U(2))
case("batch_norm_eval", _batch_norm_eval, U(2, 2, 3), U(2), U(2))
case("layer_norm", lambda lib, x, w, b: F(lib).layer_norm(x, (3,), w, b), U(2, 3), U(3), U(3))
case("layer_norm_2d", lambda lib, x: F(lib).layer_norm(x, (2, 3), eps=1e-3), U(2, 2, 3))
case(
    "group_norm",
    lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b),
    U(2, 4, 2),
    U(4),
    U(4),
)
case(
    "instance_norm",
    lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b),
    U(2, 2, 3),
    U(2),
    U(2),
)
case("instance_norm_2d", lambda lib, x: F(lib).instance_norm(x), U(1, 2, 2, 2))
case("softmax", lambda lib, x: F(lib).softmax(x, dim=1), U(2, 3))
case("softmax_dim0", lambda lib, x: lib.softmax(x, dim=0), U(3, 2))
case("log_softmax", lambda lib, x: F(lib).log_softmax(x, dim=-1), U(2, 3))
case("log_softmax_dim0", lambda lib, x: F(lib).log_softmax(x, dim=0), U(3, 2))
case("embedding", lambda lib, w: F(lib).embedding(i64(lib, [[0, 2], [2, 3]]), w), U(4, 2))
for _mode, _kw, _shape in [
    ("nearest", dict(scale_factor=2), (1, 1, 3)),
    ("nearest", dict(size=(3, 5)), (1, 1, 2, 3)),
    ("nearest_down", dict(size=(2, 2)), (1, 1, 3, 4)),
    ("nearest-exact", dict(size=5), (1, 1, 3)),
    ("linear", dict(size=5), (1, 2, 3)),
    ("linear", dict(size=5, align_corners=True), (1, 1, 3)),
    ("bilinear", dict(size=(3, 4)), (1, 1, 2, 2)),
    ("bilinear", dict(scale_factor=2, align_corners=True), (1, 1, 2, 2)),
    ("bilinear_down", dict(size=(2, 2)), (1, 1, 3, 4)),
    ("bicubic", dict(size=(3, 4)), (1, 1, 2, 3)),
    ("bicubic", dict(size=(3, 3), align_corners=True), (1, 1, 2, 2)),
    ("trilinear", dict(size=(2, 3, 3)), (1, 1, 2, 2, 2)),
    ("trilinear", dict(scale_factor=2, align_corners=True), (1, 1, 1, 2, 2)),
    ("area", dict(size=(2, 3)), (1, 1, 3, 5)),
]:
    _args = "_".join(f"{k}={v}" for k, v in _kw.items()).replace(" ", "")
    _m = _mode.split("_")[0]
    case(
        f"interpolate_{_mode}_{len(_shape) - 2}d_{_args}",
        lambda lib, x, m=_m, kw=_kw: F(lib).interpolate(x, mode=m, **kw),
        U(*_shape),
    )
for _pmode, _pad, _shape in [
    ("constant", (1, 2), (1, 2, 3)),
    ("constant", (1, 0, 0, 2), (1, 2, 2)),
    ("reflect", (2, 1), (1, 1, 4)),
    ("reflect", (1, 1, 1, 2), (1, 1, 3, 3)),
    ("replicate", (2, 1), (1, 1, 3)),
    ("replicate", (1, 0, 1, 2), (1, 1, 2, 2)),
    ("replicate", (1, 0, 1, 0, 0, 1), (1, 1, 2, 2, 1)),
    ("circular", (1, 2), (1, 1, 3)),
    ("circular", (1, 1, 0, 1), (1, 1, 2, 3)),
    ("reflect", (1, 1, 1, 0, 1, 1), (1, 1, 2, 2, 3)),
]:
    case(
        f"pad_{_pmode}_{len(_pad) // 2}d_{'_'.join(map(str, _pad))}",
        lambda lib, x, m=_pmode, p=_pad: F(lib).pad(
            x, p, mode=m, **(dict(value=0.5) if m == "constant" else {})
        ),
        U(*_shape),
    )
case("unfold", lambda lib, x: F(lib).unfold(x, 2, padding=1, stride=2), U(1, 2, 3, 3))
case("unfold_dilation", lambda lib, x: F(lib).unfold(x, (2, 1), dilation=(1, 2)), U(1, 1, 3, 3))
case("fold", lambda lib, x: F(lib).fold(x, (3, 3), 2), U(1, 4, 4))
case(
    "fold_stride_padding", lambda lib, x: F(lib).fold(x, (3, 4), 2, padding=1, stride=2), U(1, 4, 6)
)
case("pixel_shuffle", lambda lib, x: F(lib).pixel_shuffle(x, 2), U(1, 4, 1, 2))
case("pixel_unshuffle", lambda lib, x: F(lib).pixel_unshuffle(x, 2), U(1, 1, 2, 4))
case("cosine_similarity", lambda lib, a, b: F(lib).cosine_similarity(a, b), U(2, 3), U(2, 3))
case(
    "cosine_similarity_broadcast_dim0",
    lambda lib, a, b: F(lib).cosine_similarity(a, b, dim=0),
    U(3, 2),
    U(3, 1),
)
case("pairwise_distance", lambda lib, a, b: F(lib).pairwise_distance(a, b), U(2, 3), U(2, 3))
case(
    "pairwise_distance_p1_keepdim",
    lambda lib, a, b: F(lib).pairwise_distance(a, b, p=1.0, keepdim=True),
    _mx,
    apart(_mx),
)
case("pairwise_distance_p3", lambda lib, a, b: F(lib).pairwise_distance(a, b, p=3.0), U(2, 3), U(3))
case("normalize", lambda lib, x: F(lib).normalize(x, dim=1), U(2, 3))
case("normalize_p1", lambda lib, x: F(lib).normalize(x, p=1.0, dim=0), U(2, 3, avoid=(0,)))

# ---------------------------------------------------------------------------------------------
# Losses. Class targets and masks are fixed inside the function; probabilities are positive.


def _probs(*shape):
    p = _rng.uniform(0.1, 1.0, size=shape)
    return p / p.sum(axis=-1, keepdims=True)


def _nll_input(lib, x):
    return F(lib).log_softmax(x, dim=1)


_T3 = [0, 3, 1]
case("cross_entropy", lambda lib, x: F(lib).cross_entropy(x, i64(lib, _T3)), U(3, 4))
case(
    "cross_entropy_sum",
    lambda lib, x: F(lib).cross_entropy(x, i64(lib, _T3), reduction="sum"),
    U(3, 4),
)
case(
    "cross_entropy_none",
    lambda lib, x: F(lib).cross_entropy(x, i64(lib, _T3), reduction="none"),
    U(3, 4),
)
case(
    "cross_entropy_weight",
    lambda lib, x: F(lib).cross_entropy(x, i64(lib, _T3), weight=f64(lib, [0.5, 1, 2, 0.7])),
    U(3, 4),
)
case(
    "cross_entropy_ignore_index",
    lambda lib, x: F(lib).cross_entropy(x, i64(lib, [0, -100, 2])),
    U(3, 4),
)
case(
    "cross_entropy_label_smoothing",
    lambda lib, x: F(lib).cross_entropy(x, i64(lib, _T3), label_smoothing=0.2),
    U(3, 4),
)
case(
    "cross_entropy_probs",
    lambda lib, x, p: F(lib).cross_entropy(x, p),
    U(2, 3),
    _probs(2, 3),
)
case(
    "cross_entropy_probs_smoothing_weight",
    lambda lib, x, p: F(lib).cross_entropy(
        x, p, weight=f64(lib, [0.5, 1.0, 2.0]), label_smoothing=0.1
    ),
    U(2, 3),
    _probs(2, 3),
)
case(
    "cross_entropy_kdim",
    lambda lib, x: F(lib).cross_entropy(x, i64(lib, [[0, 2], [1, 1]])),
    U(2, 3, 2),
)
case("nll_loss", lambda lib, x: F(lib).nll_loss(_nll_input(lib, x), i64(lib, _T3)), U(3, 4))
case(
    "nll_loss_weight_ignore",
    lambda lib, x: F(lib).nll_loss(
        x, i64(lib, [1, 3, 3]), weight=f64(lib, [0.5, 1, 2, 0.7]), ignore_index=1
    ),
    U(3, 4),
)
case(
    "nll_loss_sum",
    lambda lib, x: F(lib).nll_loss(x, i64(lib, _T3), reduction="sum"),
    U(3, 4),
)
case(
    "nll_loss_none_kdim",
    lambda lib, x: F(lib).nll_loss(x, i64(lib, [[0, 2], [1, 1]]), reduction="none"),
    U(2, 3, 2),
)
case(
    "binary_cross_entropy",
    lambda lib, x, t: F(lib).binary_cross_entropy(x, t),
    U(2, 3, lo=0.1, hi=0.9),
    U(2, 3, lo=0, hi=1),
)
case(
    "binary_cross_entropy_weight_sum",
    lambda lib, x, t: F(lib).binary_cross_entropy(
        x, t, weight=f64(lib, [0.5, 2.0, 1.3]), reduction="sum"
    ),
    U(2, 3, lo=0.1, hi=0.9),
    U(2, 3, lo=0, hi=1),
)
case(
    "bce_with_logits",
    lambda lib, x, t: F(lib).binary_cross_entropy_with_logits(x, t),
    U(2, 3),
    U(2, 3, lo=0, hi=1),
)
case(
    "bce_with_logits_pos_weight_weight",
    lambda lib, x, t, pw: F(lib).binary_cross_entropy_with_logits(
        x, t, weight=f64(lib, [[0.5], [1.7]]), pos_weight=pw, reduction="none"
    ),
    U(2, 3),
    U(2, 3, lo=0, hi=1),
    U(3, lo=0.3, hi=2),
)
ONEFLOW_ONLY = {"bce_with_logits_pos_weight_weight"}  # PyTorch has no gradient for pos_weight
case("mse_loss", lambda lib, x, t: F(lib).mse_loss(x, t), U(2, 3), U(2, 3))
case("mse_loss_none", lambda lib, x, t: F(lib).mse_loss(x, t, reduction="none"), U(2, 3), U(2, 3))
case("l1_loss", lambda lib, x, t: F(lib).l1_loss(x, t), _mx, apart(_mx))
case("l1_loss_sum", lambda lib, x, t: F(lib).l1_loss(x, t, reduction="sum"), _mx, apart(_mx))
_sx = U(2, 4)
_sd = _rng.choice([-1.0, 1.0], (2, 4)) * np.array([[0.1, 0.3, 0.8, 1.5], [0.2, 0.7, 1.1, 0.05]])
case(
    "smooth_l1_loss",
    lambda lib, x, t: F(lib).smooth_l1_loss(x, t, beta=0.5),
    _sx,
    _sx + _sd,
)
case(
    "smooth_l1_loss_default_none",
    lambda lib, x, t: F(lib).smooth_l1_loss(x, t, reduction="none"),
    _sx,
    _sx + _sd,
)
case("huber_loss", lambda lib, x, t: F(lib).huber_loss(x, t, delta=0.5), _sx, _sx + _sd)
case(
    "huber_loss_sum",
    lambda lib, x, t: F(lib).huber_loss(x, t, reduction="sum", delta=0.6),
    _sx,
    _sx + _sd,
)
case(
    "kl_div_batchmean",
    lambda lib, x, t: F(lib).kl_div(F(lib).log_softmax(x, 1), t, reduction="batchmean"),
    U(2, 3),
    _probs(2, 3),
)
case(
    "kl_div_log_target",
    lambda lib, x, t: F(lib).kl_div(x, t, reduction="sum", log_target=True),
    U(2, 3, lo=-3, hi=-0.1),
    U(2, 3, lo=-3, hi=-0.1),
)
case(
    "kl_div_none",
    lambda lib, x, t: F(lib).kl_div(x, t, reduction="none"),
    U(2, 3, lo=-3, hi=-0.1),
    U(2, 3, lo=0.1, hi=1),
)
_y = [1.0, -1.0, 1.0, -1.0]
_m1 = U(4)
_m2 = _m1 - np.array(_y) * np.array([0.5, -0.6, -0.3, 0.8])  # y*(x1-x2) - 0.2 never near 0
case(
    "margin_ranking_loss",
    lambda lib, a, b: F(lib).margin_ranking_loss(
        a, b, lib.tensor(_y, dtype=lib.float64), margin=0.2
    ),
    _m1,
    _m2,
)
case(
    "margin_ranking_loss_none",
    lambda lib, a, b: F(lib).margin_ranking_loss(
        a, b, lib.tensor(_y, dtype=lib.float64), margin=0.2, reduction="none"
    ),
    _m1,
    _m2,
)
_anc = U(3, 4)
_pos = _anc + U(3, 4, lo=-0.3, hi=0.3)
_neg = _anc + U(3, 4, lo=-1.0, hi=1.0)
case(
    "triplet_margin_loss",
    lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=0.5, reduction="none"),
    _anc,
    _pos,
    _neg,
)
case(
    "triplet_margin_loss_p1_swap",
    lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=2.0, p=1.0, swap=True),
    _anc,
    _pos,
    _neg,
)
case(
    "cosine_embedding_loss",
    lambda lib, a, b: F(lib).cosine_embedding_loss(
        a, b, lib.tensor([1.0, -1.0, -1.0], dtype=lib.float64), margin=-0.9, reduction="none"
    ),
    U(3, 4),
    U(3, 4),
)
case(
    "hinge_embedding_loss",
    lambda lib, x: F(lib).hinge_embedding_loss(
        x, lib.tensor([[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0]], dtype=lib.float64), margin=1.0
    ),
    U(2, 3, avoid=(1.0,)),
)
case(
    "soft_margin_loss",
    lambda lib, x: F(lib).soft_margin_loss(
        x, lib.tensor([[1.0, -1.0, -1.0], [-1.0, 1.0, 1.0]], dtype=lib.float64)
    ),
    U(2, 3),
)
case(
    "poisson_nll_loss",
    lambda lib, x, t: F(lib).poisson_nll_loss(x, t),
    U(2, 3),
    U(2, 3, lo=0, hi=3),
)
case(
    "gaussian_nll_loss",
    lambda lib, x, t, v: F(lib).gaussian_nll_loss(x, t, v),
    U(2, 3),
    U(2, 3),
    U(2, 3, lo=0.3, hi=2),
)


def _ctc(reduction, lengths):
    def fn(lib, x):
        # Through log_softmax: PyTorch's CTC backward is the gradient of the normalised
        # log-probabilities, which equals the true one only composed with log_softmax.
        lp = F(lib).log_softmax(x, dim=2)
        targets = i64(lib, [[1, 2], [2, 2]])
        return F(lib).ctc_loss(
            lp,
            targets,
            i64(lib, [4, 3]),
            i64(lib, lengths),
            reduction=reduction,
            zero_infinity=False,
        )

    return fn


case("ctc_loss", _ctc("mean", [2, 1]), U(4, 2, 3))
case("ctc_loss_sum_repeat", _ctc("sum", [2, 2]), U(4, 2, 3))
case("ctc_loss_none", _ctc("none", [1, 2]), U(4, 2, 3))

# ---------------------------------------------------------------------------------------------
# Movement, indexing and scatter


case("cat_dim0", lambda lib, a, b, c: lib.cat([a, b, c]), U(1, 2), U(2, 2), U(1, 2))
case("cat_dim1", lambda lib, a, b: lib.cat([a, b], dim=1), U(2, 1), U(2, 3))
case("stack", lambda lib, a, b: lib.stack([a, b], dim=1), U(2, 3), U(2, 3))
case("stack_last", lambda lib, a, b: lib.stack([a, b], dim=-1), U(3), U(3))
case("gather", lambda lib, x: lib.gather(x, 1, i64(lib, [[0, 0, 2], [1, 2, 1]])), U(2, 3))
case("gather_dim0", lambda lib, x: lib.gather(x, 0, i64(lib, [[1, 0], [1, 1]])), U(3, 2))
case(
    "scatter",
    lambda lib, x, s: lib.scatter(x, 1, i64(lib, [[2, 0], [1, 2]]), s),
    U(2, 3),
    U(2, 2),
)
case(
    "scatter_value",
    lambda lib, x: lib.scatter(x, 0, i64(lib, [[1, 0, 1]]), 0.5),
    U(2, 3),
)
case(
    "scatter_add",
    lambda lib, x, s: lib.scatter_add(x, 1, i64(lib, [[2, 2, 0], [1, 1, 1]]), s),
    U(2, 3),
    U(2, 3),
)
case(
    "scatter_reduce_sum",
    lambda lib, x, s: lib.scatter_reduce(x, 0, i64(lib, [0, 2, 0, 1]), s, "sum"),
    U(3),
    U(4),
)
case(
    "scatter_reduce_mean_exclude_self",
    lambda lib, x, s: lib.scatter_reduce(
        x, 0, i64(lib, [0, 2, 0, 2]), s, "mean", include_self=False
    ),
    U(3),
    U(4),
)
case(
    "scatter_reduce_amax",
    lambda lib, x, s: lib.scatter_reduce(x, 0, i64(lib, [0, 2, 0, 1]), s, "amax"),
    D(3),
    D(4) + 0.05,
)
case(
    "scatter_reduce_prod",
    lambda lib, x, s: lib.scatter_reduce(x, 0, i64(lib, [0, 2, 0, 1]), s, "prod"),
    U(3, avoid=(0,)),
    U(4, avoid=(0,)),
)
_I24 = [[0, 2, 0, 1], [3, 3, 1, 3]]
case(
    "scatter_reduce_mean_2d",
    lambda lib, x, s: lib.scatter_reduce(x, 1, i64(lib, _I24), s, "mean"),
    U(2, 4),
    U(2, 4),
)
case(
    "scatter_reduce_sum_exclude_self",
    lambda lib, x, s: lib.scatter_reduce(x, 1, i64(lib, _I24), s, "sum", include_self=False),
    U(2, 4),
    U(2, 4),
)
case(
    "scatter_reduce_amin_2d",
    lambda lib, x, s: lib.scatter_reduce(x, 1, i64(lib, _I24), s, "amin"),
    D(2, 4),
    D(2, 4) + 0.05,
)
case(
    "scatter_reduce_amax_exclude_self",
    lambda lib, x, s: lib.scatter_reduce(x, 1, i64(lib, _I24), s, "amax", include_self=False),
    D(2, 4),
    D(2, 4) + 0.05,
)
case(
    "scatter_reduce_prod_exclude_self",
    lambda lib, x, s: lib.scatter_reduce(x, 1, i64(lib, _I24), s, "prod", include_self=False),
    U(2, 4, avoid=(0,)),
    U(2, 4, avoid=(0,)),
)
# Zeros: in self (row 0, position 1), one src zero at a position (row 0, index 0), two src
# zeros at one position (row 1, index 3).
_ps, _pz = U(2, 4, avoid=(0,)), U(2, 4, avoid=(0,))
_ps[0, 1] = 0.0
_pz[0, 0] = _pz[1, 0] = _pz[1, 3] = 0.0
case(
    "scatter_reduce_prod_zeros",
    lambda lib, x, s: lib.scatter_reduce(x, 1, i64(lib, _I24), s, "prod"),
    _ps,
    _pz,
)
case("index_select", lambda lib, x: lib.index_select(x, 0, i64(lib, [2, 0, 2])), U(3, 2))
case("index_select_dim1", lambda lib, x: lib.index_select(x, 1, i64(lib, [1, 1])), U(2, 3))
case(
    "index_add",
    lambda lib, x, s: lib.index_add(x, 0, i64(lib, [2, 0, 2]), s, alpha=2.0),
    U(3, 2),
    U(3, 2),
)
case(
    "index_add_dim1",
    lambda lib, x, s: lib.index_add(x, 1, i64(lib, [1, 1]), s),
    U(2, 3),
    U(2, 2),
)
case(
    "index_copy",
    lambda lib, x, s: lib.index_copy(x, 0, i64(lib, [2, 0]), s),
    U(3, 2),
    U(2, 2),
)
case(
    "index_copy_dim1",
    lambda lib, x, s: lib.index_copy(x, 1, i64(lib, [1]), s),
    U(2, 3),
    U(2, 1),
)
_MASK = [[True, False, True], [False, False, True]]
case("masked_fill", lambda lib, x: lib.masked_fill(x, boolean(lib, _MASK), 0.5), U(2, 3))
case(
    "masked_fill_broadcast",
    lambda lib, x: lib.masked_fill(x, boolean(lib, [False, True, True]), -1.0),
    U(2, 3),
)
case(
    "masked_scatter",
    lambda lib, x, s: lib.masked_scatter(x, boolean(lib, _MASK), s),
    U(2, 3),
    U(2, 3),
)
case("take", lambda lib, x: lib.take(x, i64(lib, [[5, 0], [5, 2]])), U(2, 3))
case(
    "take_along_dim",
    lambda lib, x: lib.take_along_dim(x, i64(lib, [[0, 2], [1, 1]]), dim=1),
    U(2, 3),
)
case("flip", lambda lib, x: lib.flip(x, (0, 1)), U(2, 3))
case("flip_dim1", lambda lib, x: lib.flip(x, [-1]), U(2, 3, 2))
case("roll", lambda lib, x: lib.roll(x, (1, -2), (0, 1)), U(2, 3))
case("roll_flat", lambda lib, x: lib.roll(x, 4), U(2, 3))
for _k in [1, 2, 3, -1]:
    case(f"rot90_k{_k}", lambda lib, x, k=_k: lib.rot90(x, k, (0, 1)), U(2, 3))
case("rot90_dims_1_2", lambda lib, x: lib.rot90(x, 1, (2, 1)), U(2, 2, 3))
case("repeat", lambda lib, x: x.repeat(2, 1, 2), U(2, 3))
case("tile", lambda lib, x: lib.tile(x, (2, 1)), U(2, 3))
case("tile_short", lambda lib, x: lib.tile(x, (2,)), U(2, 3))
case("repeat_interleave", lambda lib, x: lib.repeat_interleave(x, 2, dim=0), U(2, 3))
case("repeat_interleave_flat", lambda lib, x: lib.repeat_interleave(x, 2), U(2, 3))
case(
    "repeat_interleave_tensor",
    lambda lib, x: lib.repeat_interleave(x, i64(lib, [0, 3, 1]), dim=1),
    U(2, 3),
)
case("tril", lambda lib, x: lib.tril(x), U(3, 3))
case("tril_diag", lambda lib, x: lib.tril(x, -1), U(2, 3, 3))
case("triu", lambda lib, x: lib.triu(x, 1), U(3, 4))
case("diag_1d", lambda lib, x: lib.diag(x, 1), U(3))
case("diag_2d", lambda lib, x: lib.diag(x, -1), U(3, 3))
case("diag_embed", lambda lib, x: lib.diag_embed(x), U(2, 3))
case("diag_embed_offset_dims", lambda lib, x: lib.diag_embed(x, 1, 0, 2), U(2, 3))
case("diagflat", lambda lib, x: lib.diagflat(x), U(2, 2))
case("expand", lambda lib, x: x.expand(2, 3, 2), U(3, 1))
case("permute", lambda lib, x: x.permute(2, 0, 1) * 1.5, U(2, 3, 2))
case("transpose_contiguous", lambda lib, x: x.transpose(0, 1).contiguous(), U(2, 3))
case("narrow", lambda lib, x: lib.narrow(x, 1, 1, 2), U(2, 3))
case("slicing_steps", lambda lib, x: x[::2, 1::2], U(3, 4))
case("index_tensor", lambda lib, x: x[i64(lib, [2, 0, 2])], U(3, 2))
case("select", lambda lib, x: lib.select(x, 1, 2), U(2, 3))
case("unbind", lambda lib, x: lib.unbind(x, 1), U(2, 3))
case("split_sizes", lambda lib, x: lib.split(x, [1, 2], dim=1), U(2, 3))
case("split_int", lambda lib, x: lib.split(x, 2), U(3, 2))
case("chunk", lambda lib, x: lib.chunk(x, 2, dim=1), U(2, 3))
case("movedim", lambda lib, x: lib.movedim(x, 0, -1), U(2, 3, 2))
case("tensor_unfold", lambda lib, x: x.unfold(1, 2, 1), U(2, 4))
case("broadcast_to", lambda lib, x: lib.broadcast_to(x, (2, 2, 3)), U(3))
case("squeeze_unsqueeze", lambda lib, x: lib.unsqueeze(lib.squeeze(x, 1), 0), U(2, 1, 3))
case("reshape_noncontiguous", lambda lib, x: x.t().reshape(6), U(2, 3))
case("meshgrid", lambda lib, a, b: lib.meshgrid(a, b, indexing="ij"), U(2), U(3))
case("meshgrid_xy", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy"), U(2), U(3))


# Cases oneflow does not implement yet, with the reason (none at present).
NOT_IMPLEMENTED = {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=NOT_IMPLEMENTED[n]))
        if n in NOT_IMPLEMENTED and LIB is flow
        else n
        for n in CASES
    ],
)
def test_gradcheck(name):
    if LIB is not flow and name in ONEFLOW_ONLY:
        pytest.skip("PyTorch lacks this gradient")
    fn, inputs, tol = CASES[name]
    gradcheck(fn, inputs, lib=LIB, **tol)


def test_gradcheck_catches_a_wrong_gradient():
    """The helper itself: a custom op whose backward is off by 1 % must fail."""

    def fn(lib, x):
        # Forward x * x; backward 2x + 0.01x.
        return x * x + 0.01 * (x.detach() * x - (x.detach() * x).detach())

    gradcheck(lambda lib, x: x * x, [U(3)], lib=LIB)
    with pytest.raises(AssertionError, match="analytic"):
        gradcheck(fn, [U(3, lo=0.5, hi=1.0)], lib=LIB)
