"""Every op against PyTorch in every dtype: float32, float64, float16, bfloat16, int8, int16,
int32, int64, uint8 and bool.

Each case is one computation written once against ``lib`` (oneflow or torch) and run on the
same inputs in both. Where PyTorch computes a dtype on CPU, oneflow must give the same output
dtype, shape and values (and, for floating inputs, the same input gradients for a random
cotangent). Where PyTorch rejects the dtype, oneflow must reject it too, with the same
exception type.

Tolerances: integer and bool outputs are exact. Floating outputs use differential.py's table
(float16 ~10 ulp, bfloat16 ~4 ulp of eps 2^-10 / 2^-7), times ``tol`` for ops whose result
amplifies input rounding (sums of many terms, cancellation); the factor is written beside the
case with its reason.
"""

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import (
    _FLOW_DTYPES,
    _TOL,
    _TORCH_DTYPES,
    OLD_TORCH,
    TORCH_HAS_HALF_TRACE,
    _to_numpy,
    random_array,
)

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int8", "int16", "int32", "int64", "uint8")
DTYPES = FLOATS + INTS + ("bool",)


def F(lib):
    return lib.nn.functional


def _dt(lib, name):
    return (_FLOW_DTYPES if lib is flow else _TORCH_DTYPES)[name]


def _idx(lib, values, device="cpu"):
    return lib.tensor(values, dtype=lib.int64, device=device)


@dataclass
class Case:
    fn: Callable
    shapes: list
    domain: tuple = ()  # one input domain per shape (see _inputs); missing ones are "any"
    tol: float = 1.0  # multiplies the half/float tolerance; reason written beside the case
    grad: bool = True
    # PyTorch's float64 backward rounds a constant (1/alpha, 1/6) to float32: its float64
    # gradient is only float32-accurate, so it is compared with float32's tolerance.
    torch_grad64_is_f32: bool = False


def _round(a, dtype):
    """Rounds float values to the dtype (float32 array for bfloat16, as in differential.py)."""
    if dtype == "bool":
        return a != 0
    if dtype in ("float16", "bfloat16"):
        t = torch.from_numpy(np.asarray(a, dtype=np.float32)).to(_TORCH_DTYPES[dtype])
        return t.float().numpy()
    if dtype in FLOATS:
        return np.asarray(a, dtype=dtype)
    return np.asarray(a).astype(dtype)


def _inputs(rng, shape, dtype, domain):
    """Random values of a dtype inside an op's domain.

    any: differential.random_array; pos: > 0, away from 0; nonzero: |x| >= 0.5 (integer
    divisors); unit: |x| < 0.9 (asin, atanh); prob: in (0.05, 0.95); ge1: > 1 (acosh);
    nonneg: >= 0 (bincount); small: integers in [0, 3] (integer exponents); sorted: ascending
    along the last dim (searchsorted).
    """
    floating = dtype in FLOATS
    lo = 0 if dtype in ("uint8", "bool") else -5
    if domain == "any":
        return random_array(rng, shape, dtype)
    if domain == "pos":
        a = np.abs(rng.standard_normal(shape)) + 0.5 if floating else rng.integers(1, 11, shape)
    elif domain == "nonzero":
        if floating:
            a = rng.standard_normal(shape)
            a = np.sign(a) * (np.abs(a) + 0.5)
        else:
            a = rng.integers(1, 6, shape) * (1 if lo == 0 else rng.choice([-1, 1], shape))
    elif domain == "unit":
        a = rng.uniform(-0.9, 0.9, shape) if floating else rng.integers(max(lo, -1), 2, shape)
    elif domain == "prob":
        a = rng.uniform(0.05, 0.95, shape) if floating else rng.integers(0, 2, shape)
    elif domain == "ge1":
        a = 1.1 + np.abs(rng.standard_normal(shape)) if floating else rng.integers(1, 11, shape)
    elif domain == "nonneg":
        a = np.abs(rng.standard_normal(shape)) * 3 if floating else rng.integers(0, 8, shape)
    elif domain == "small":
        a = rng.standard_normal(shape) if floating else rng.integers(0, 4, shape)
    elif domain == "sorted":
        a = np.sort(random_array(rng, shape, dtype).astype(np.float64), axis=-1)
    else:
        raise ValueError(domain)
    return _round(a, dtype)


# ---------------------------------------------------------------------------------------------
# The cases. Shapes are small: the file runs every case in every dtype.

X = [(3, 4)]
XY = [(3, 4), (3, 4)]
XB = [(3, 4), (4,)]  # broadcasting

UNARY = {
    "abs": Case(lambda lib, a: lib.abs(a), X),
    "neg": Case(lambda lib, a: lib.neg(a), X),
    "sign": Case(lambda lib, a: lib.sign(a), X),
    "square": Case(lambda lib, a: lib.square(a), X),
    "exp": Case(lambda lib, a: lib.exp(a), X),
    "exp2": Case(lambda lib, a: lib.exp2(a), X),
    "expm1": Case(lambda lib, a: lib.expm1(a), X),
    "log": Case(lambda lib, a: lib.log(a), X, ("pos",)),
    "log2": Case(lambda lib, a: lib.log2(a), X, ("pos",)),
    "log10": Case(lambda lib, a: lib.log10(a), X, ("pos",)),
    "log1p": Case(lambda lib, a: lib.log1p(a), X, ("pos",)),
    "sqrt": Case(lambda lib, a: lib.sqrt(a), X, ("pos",)),
    "rsqrt": Case(lambda lib, a: lib.rsqrt(a), X, ("pos",)),
    "reciprocal": Case(lambda lib, a: lib.reciprocal(a), X, ("nonzero",)),
    "sin": Case(lambda lib, a: lib.sin(a), X),
    "cos": Case(lambda lib, a: lib.cos(a), X),
    "tan": Case(lambda lib, a: lib.tan(a), X, ("unit",)),
    "asin": Case(lambda lib, a: lib.asin(a), X, ("unit",)),
    "acos": Case(lambda lib, a: lib.acos(a), X, ("unit",)),
    "atan": Case(lambda lib, a: lib.atan(a), X),
    "sinh": Case(lambda lib, a: lib.sinh(a), X),
    "cosh": Case(lambda lib, a: lib.cosh(a), X),
    "tanh": Case(lambda lib, a: lib.tanh(a), X),
    "asinh": Case(lambda lib, a: lib.asinh(a), X),
    "acosh": Case(lambda lib, a: lib.acosh(a), X, ("ge1",)),
    "atanh": Case(lambda lib, a: lib.atanh(a), X, ("unit",)),
    "erf": Case(lambda lib, a: lib.erf(a), X),
    "erfc": Case(lambda lib, a: lib.erfc(a), X),
    "erfinv": Case(lambda lib, a: lib.erfinv(a), X, ("unit",)),
    "lgamma": Case(lambda lib, a: lib.lgamma(a), X, ("pos",)),
    "digamma": Case(lambda lib, a: lib.digamma(a), X, ("pos",)),
    "floor": Case(lambda lib, a: lib.floor(a * 3), X),
    "ceil": Case(lambda lib, a: lib.ceil(a * 3), X),
    "round": Case(lambda lib, a: lib.round(a * 3), X),
    "trunc": Case(lambda lib, a: lib.trunc(a * 3), X),
    "frac": Case(lambda lib, a: lib.frac(a * 3), X),
    "sigmoid": Case(lambda lib, a: lib.sigmoid(a), X),
    "logit": Case(lambda lib, a: lib.logit(a), X, ("prob",)),
    "isnan": Case(lambda lib, a: lib.isnan(a), X),
    "isinf": Case(lambda lib, a: lib.isinf(a), X),
    "isfinite": Case(lambda lib, a: lib.isfinite(a), X),
    "nan_to_num": Case(lambda lib, a: lib.nan_to_num(lib.log(a), neginf=-7.0), X),
    "clamp": Case(lambda lib, a: lib.clamp(a, -2, 3), X),
    "clamp_min": Case(lambda lib, a: lib.clamp_min(a, 1), X),
    "clamp_max": Case(lambda lib, a: lib.clamp_max(a, 1), X),
    "clamp_tensor": Case(lambda lib, a, lo, hi: lib.clamp(a, lo, hi), [(3, 4), (4,), (3, 1)]),
    "pow_scalar": Case(lambda lib, a: lib.pow(a, 2), X),
    "pow_float_scalar": Case(lambda lib, a: lib.pow(a, 0.5), X, ("pos",)),
    "rpow_scalar": Case(lambda lib, a: lib.pow(2, a), X),
}

ACTIVATIONS = {
    "relu": Case(lambda lib, a: F(lib).relu(a), X),
    "relu6": Case(lambda lib, a: F(lib).relu6(a * 3), X),
    "leaky_relu": Case(lambda lib, a: F(lib).leaky_relu(a, 0.2), X),
    "elu": Case(lambda lib, a: F(lib).elu(a, 0.7), X),
    "selu": Case(lambda lib, a: F(lib).selu(a), X),
    "celu": Case(lambda lib, a: F(lib).celu(a, 1.3), X, torch_grad64_is_f32=True),
    "gelu": Case(lambda lib, a: F(lib).gelu(a), X),
    "gelu_tanh": Case(lambda lib, a: F(lib).gelu(a, approximate="tanh"), X),
    "silu": Case(lambda lib, a: F(lib).silu(a), X),
    "mish": Case(lambda lib, a: F(lib).mish(a), X),
    "softplus": Case(lambda lib, a: F(lib).softplus(a, beta=2, threshold=3), X),
    "softsign": Case(lambda lib, a: F(lib).softsign(a), X),
    "hardsigmoid": Case(lambda lib, a: F(lib).hardsigmoid(a * 3), X, torch_grad64_is_f32=True),
    "hardswish": Case(lambda lib, a: F(lib).hardswish(a * 3), X),
    "hardtanh": Case(lambda lib, a: F(lib).hardtanh(a, -0.5, 1.5), X),
    "hardshrink": Case(lambda lib, a: F(lib).hardshrink(a, 0.3), X),
    "softshrink": Case(lambda lib, a: F(lib).softshrink(a, 0.3), X),
    "tanhshrink": Case(lambda lib, a: F(lib).tanhshrink(a), X),
    "logsigmoid": Case(lambda lib, a: F(lib).logsigmoid(a), X),
    "threshold": Case(lambda lib, a: F(lib).threshold(a, 0.1, -2.0), X),
    "prelu": Case(lambda lib, a, w: F(lib).prelu(a, w), [(2, 3, 4), (3,)]),
    "glu": Case(lambda lib, a: F(lib).glu(a, 1), X),
    "rrelu_eval": Case(lambda lib, a: F(lib).rrelu(a, training=False), X),
    "softmax": Case(lambda lib, a: F(lib).softmax(a, dim=1), X),
    "log_softmax": Case(lambda lib, a: F(lib).log_softmax(a, dim=1), X),
    "softmin": Case(lambda lib, a: F(lib).softmin(a, dim=0), X),
    "softmax_dim0": Case(lambda lib, a: lib.softmax(a, dim=0), X),
    "log_softmax_3d": Case(lambda lib, a: lib.log_softmax(a, dim=1), [(2, 3, 4)]),
}

BINARY = {
    "add": Case(lambda lib, a, b: lib.add(a, b), XB),
    "add_alpha": Case(lambda lib, a, b: lib.add(a, b, alpha=2), XY),
    "sub": Case(lambda lib, a, b: lib.sub(a, b), XB),
    "sub_alpha": Case(lambda lib, a, b: lib.sub(a, b, alpha=2), XY),
    "mul": Case(lambda lib, a, b: lib.mul(a, b), XB),
    "mul_scalar": Case(lambda lib, a: a * 3, X),
    "add_float_scalar": Case(lambda lib, a: a + 1.5, X),
    "div": Case(lambda lib, a, b: lib.div(a, b), XB, ("any", "nonzero")),
    "div_floor": Case(
        lambda lib, a, b: lib.div(a, b, rounding_mode="floor"), XB, ("any", "nonzero")
    ),
    "div_trunc": Case(
        lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"), XB, ("any", "nonzero")
    ),
    "div_scalar": Case(lambda lib, a: a / 2, X),
    # PyTorch has no derivative for floor_divide.
    "floor_divide": Case(
        lambda lib, a, b: lib.floor_divide(a, b), XB, ("any", "nonzero"), grad=False
    ),
    "remainder": Case(lambda lib, a, b: lib.remainder(a, b), XB, ("any", "nonzero")),
    "fmod": Case(lambda lib, a, b: lib.fmod(a, b), XB, ("any", "nonzero")),
    "pow": Case(lambda lib, a, b: lib.pow(a, b), XB, ("pos", "small")),
    "atan2": Case(lambda lib, a, b: lib.atan2(a, b), XB, ("any", "nonzero")),
    "maximum": Case(lambda lib, a, b: lib.maximum(a, b), XB),
    "minimum": Case(lambda lib, a, b: lib.minimum(a, b), XB),
    "fmax": Case(lambda lib, a, b: lib.fmax(a, b), XB),
    "fmin": Case(lambda lib, a, b: lib.fmin(a, b), XB),
    "xlogy": Case(lambda lib, a, b: lib.xlogy(a, b), XB, ("any", "pos")),
    "lerp": Case(lambda lib, a, b: lib.lerp(a, b, 0.3), XB),
    "lerp_tensor": Case(lambda lib, a, b, w: lib.lerp(a, b, w), [(3, 4), (4,), (3, 1)]),
    "addcmul": Case(lambda lib, a, b, c: lib.addcmul(a, b, c, value=2), [(3, 4), (4,), (3, 1)]),
    "addcdiv": Case(
        lambda lib, a, b, c: lib.addcdiv(a, b, c, value=2),
        [(3, 4), (4,), (3, 1)],
        ("any", "any", "nonzero"),
    ),
    "where": Case(lambda lib, a, b: lib.where(a > b, a, b), XB),
    "where_scalar": Case(lambda lib, a, b: lib.where(a > b, a, 0), XB),
    "where_bool_cond": Case(
        lambda lib, a, b: lib.where(lib.tensor([True, False, True, True], device=a.device), a, b),
        XB,
    ),
}

COMPARE_LOGICAL = {
    "eq": Case(lambda lib, a, b: lib.eq(a, b), XB),
    "ne": Case(lambda lib, a, b: lib.ne(a, b), XB),
    "lt": Case(lambda lib, a, b: lib.lt(a, b), XB),
    "le": Case(lambda lib, a, b: lib.le(a, b), XB),
    "gt": Case(lambda lib, a, b: lib.gt(a, b), XB),
    "ge": Case(lambda lib, a, b: lib.ge(a, b), XB),
    "gt_scalar": Case(lambda lib, a: a > 1, X),
    "isclose": Case(lambda lib, a, b: lib.isclose(a, b), XB),
    "equal": Case(lambda lib, a: lib.tensor(lib.equal(a, a.clone())), X),
    "allclose": Case(lambda lib, a, b: lib.tensor(lib.allclose(a, b)), XY),
    "logical_and": Case(lambda lib, a, b: lib.logical_and(a, b), XB),
    "logical_or": Case(lambda lib, a, b: lib.logical_or(a, b), XB),
    "logical_xor": Case(lambda lib, a, b: lib.logical_xor(a, b), XB),
    "logical_not": Case(lambda lib, a: lib.logical_not(a), X),
    "bitwise_and": Case(lambda lib, a, b: lib.bitwise_and(a, b), XB),
    "bitwise_or": Case(lambda lib, a, b: lib.bitwise_or(a, b), XB),
    "bitwise_xor": Case(lambda lib, a, b: lib.bitwise_xor(a, b), XB),
    "bitwise_not": Case(lambda lib, a: lib.bitwise_not(a), X),
}

REDUCTIONS = {
    "sum": Case(lambda lib, a: lib.sum(a), X),
    "sum_dim": Case(lambda lib, a: lib.sum(a, dim=1, keepdim=True), X),
    "nansum": Case(lambda lib, a: lib.nansum(a, dim=0), X),
    "mean": Case(lambda lib, a: lib.mean(a), X),
    "mean_dim": Case(lambda lib, a: lib.mean(a, dim=0), X),
    "nanmean": Case(lambda lib, a: lib.nanmean(a, dim=1), X),
    "prod": Case(lambda lib, a: lib.prod(a), [(2, 3)]),
    "prod_dim": Case(lambda lib, a: lib.prod(a, dim=1), X),
    "amax": Case(lambda lib, a: lib.amax(a, dim=1), X),
    "amin": Case(lambda lib, a: lib.amin(a, dim=0), X),
    "aminmax": Case(lambda lib, a: lib.aminmax(a, dim=1), X),
    "max": Case(lambda lib, a: lib.max(a), X),
    "min": Case(lambda lib, a: lib.min(a), X),
    # Values and the input at the returned indices: ties may pick different indices.
    "max_dim": Case(lambda lib, a: _values_and_taken(lib, a, lib.max(a, dim=1), 1), X),
    "min_dim": Case(lambda lib, a: _values_and_taken(lib, a, lib.min(a, dim=0), 0), X),
    "argmax": Case(lambda lib, a: lib.argmax(a), X),
    "argmax_dim": Case(lambda lib, a: lib.argmax(a, dim=1), X),
    "argmin_dim": Case(lambda lib, a: lib.argmin(a, dim=0), X),
    "std": Case(lambda lib, a: lib.std(a, dim=1), X),
    "var": Case(lambda lib, a: lib.var(a), X),
    "var_correction0": Case(lambda lib, a: lib.var(a, dim=0, correction=0), X),
    "var_mean": Case(lambda lib, a: lib.var_mean(a, dim=1), X),
    "std_mean": Case(lambda lib, a: lib.std_mean(a, dim=0), X),
    "norm": Case(lambda lib, a: lib.norm(a), X),
    "norm_p1_dim": Case(lambda lib, a: lib.norm(a, p=1, dim=1), X),
    "vector_norm_inf": Case(lambda lib, a: lib.linalg.vector_norm(a, ord=math.inf, dim=0), X),
    "matrix_norm_fro": Case(lambda lib, a: lib.linalg.matrix_norm(a), X),
    "logsumexp": Case(lambda lib, a: lib.logsumexp(a, dim=1), X),
    "logcumsumexp": Case(lambda lib, a: lib.logcumsumexp(a, dim=1), X),
    "cumsum": Case(lambda lib, a: lib.cumsum(a, dim=1), X),
    "cumprod": Case(lambda lib, a: lib.cumprod(a, dim=1), X),
    "cummax": Case(lambda lib, a: _values_and_taken(lib, a, lib.cummax(a, dim=1), 1), X),
    "cummin": Case(lambda lib, a: _values_and_taken(lib, a, lib.cummin(a, dim=0), 0), X),
    "count_nonzero": Case(lambda lib, a: lib.count_nonzero(a, dim=1), X),
    "median": Case(lambda lib, a: lib.median(a), X),
    "median_dim": Case(lambda lib, a: _values_and_taken(lib, a, lib.median(a, dim=1), 1), X),
    "mode": Case(lambda lib, a: _values_and_taken(lib, a, lib.mode(a, dim=1), 1), X),
    "kthvalue": Case(lambda lib, a: _values_and_taken(lib, a, lib.kthvalue(a, 2, dim=1), 1), X),
    "quantile": Case(lambda lib, a: lib.quantile(a, 0.3, dim=1), X),
    "all": Case(lambda lib, a: lib.all(a), X),
    "all_dim": Case(lambda lib, a: lib.all(a, dim=1), X),
    "any": Case(lambda lib, a: lib.any(a), X),
    "any_dim": Case(lambda lib, a: lib.any(a, dim=0), X),
    "trace": Case(lambda lib, a: lib.trace(a), X),
}


def _values_and_taken(lib, a, result, dim):
    """The values, and the input at the returned indices (ties may pick different indices)."""
    values, indices = result
    if indices.ndim < a.ndim:  # a reduction over dim
        return values, lib.gather(a, dim, indices.unsqueeze(dim)).squeeze(dim)
    return values, lib.gather(a, dim, indices)


# Products of K terms: rounding grows with K (here K <= 5) for the half types.
MATMUL = {
    "mm": Case(lambda lib, a, b: lib.mm(a, b), [(3, 4), (4, 5)], tol=2),
    "bmm": Case(lambda lib, a, b: lib.bmm(a, b), [(2, 3, 4), (2, 4, 5)], tol=2),
    "matmul_1d_1d": Case(lambda lib, a, b: lib.matmul(a, b), [(4,), (4,)], tol=2),
    "matmul_2d_1d": Case(lambda lib, a, b: lib.matmul(a, b), [(3, 4), (4,)], tol=2),
    "matmul_1d_2d": Case(lambda lib, a, b: lib.matmul(a, b), [(4,), (4, 5)], tol=2),
    "matmul_3d_1d": Case(lambda lib, a, b: lib.matmul(a, b), [(2, 3, 4), (4,)], tol=2),
    "matmul_1d_3d": Case(lambda lib, a, b: lib.matmul(a, b), [(4,), (2, 4, 5)], tol=2),
    "matmul_3d_2d": Case(lambda lib, a, b: lib.matmul(a, b), [(2, 3, 4), (4, 5)], tol=2),
    "matmul_bcast": Case(lambda lib, a, b: lib.matmul(a, b), [(2, 1, 3, 4), (3, 4, 2)], tol=2),
    "dot": Case(lambda lib, a, b: lib.dot(a, b), [(5,), (5,)], tol=2),
    "mv": Case(lambda lib, a, b: lib.mv(a, b), [(3, 4), (4,)], tol=2),
    "outer": Case(lambda lib, a, b: lib.outer(a, b), [(3,), (4,)]),
    "ger": Case(lambda lib, a, b: lib.ger(a, b), [(3,), (4,)]),
    "addmm": Case(
        lambda lib, c, a, b: lib.addmm(c, a, b, beta=2, alpha=3), [(3, 5), (3, 4), (4, 5)], tol=2
    ),
    "addmv": Case(lambda lib, c, a, b: lib.addmv(c, a, b), [(3,), (3, 4), (4,)], tol=2),
    "baddbmm": Case(
        lambda lib, c, a, b: lib.baddbmm(c, a, b, alpha=2),
        [(2, 3, 5), (2, 3, 4), (2, 4, 5)],
        tol=2,
    ),
    "einsum_mm": Case(lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [(3, 4), (4, 5)], tol=2),
    "einsum_batch": Case(
        lambda lib, a, b: lib.einsum("bij,bkj->bik", a, b), [(2, 3, 4), (2, 5, 4)], tol=2
    ),
    "einsum_diag": Case(lambda lib, a: lib.einsum("ii->i", a), [(3, 3)]),
    "tensordot": Case(lambda lib, a, b: lib.tensordot(a, b, dims=1), [(3, 4), (4, 2)], tol=2),
    "cross": Case(lambda lib, a, b: lib.cross(a, b, dim=1), [(2, 3), (2, 3)]),
    "linear": Case(lambda lib, a, w, b: F(lib).linear(a, w, b), [(3, 4), (5, 4), (5,)], tol=2),
    "bilinear": Case(
        lambda lib, a, b, w: F(lib).bilinear(a, b, w), [(2, 3), (2, 4), (2, 3, 4)], tol=4
    ),
}

# Normalisation divides by a standard deviation over few elements: cancellation in x - mean.
NORMS = {
    "layer_norm": Case(
        lambda lib, a, w, b: F(lib).layer_norm(a, (4,), w, b), [(3, 4), (4,), (4,)], tol=2
    ),
    "batch_norm_train": Case(
        lambda lib, a, w, b: F(lib).batch_norm(a, None, None, w, b, training=True),
        [(4, 3, 2), (3,), (3,)],
        tol=2,
    ),
    "batch_norm_eval": Case(
        lambda lib, a, m, v, w, b: F(lib).batch_norm(
            a, m.detach(), v.detach(), w, b, training=False
        ),
        [(4, 3, 2), (3,), (3,), (3,), (3,)],
        ("any", "any", "pos", "any", "any"),
        tol=2,
    ),
    "group_norm": Case(
        lambda lib, a, w, b: F(lib).group_norm(a, 2, w, b), [(2, 4, 3), (4,), (4,)], tol=2
    ),
    "instance_norm": Case(lambda lib, a: F(lib).instance_norm(a), [(2, 3, 4)], tol=2),
    "rms_norm": Case(lambda lib, a, w: F(lib).rms_norm(a, (4,), w), [(3, 4), (4,)], tol=2),
    "normalize": Case(lambda lib, a: F(lib).normalize(a, dim=1), X),
    "cosine_similarity": Case(lambda lib, a, b: F(lib).cosine_similarity(a, b), XY, tol=2),
    "pairwise_distance": Case(lambda lib, a, b: F(lib).pairwise_distance(a, b), XY, tol=2),
}

CONV_POOL = {
    "conv1d": Case(
        lambda lib, a, w, b: F(lib).conv1d(a, w, b, padding=1),
        [(2, 3, 5), (4, 3, 3), (4,)],
        tol=4,
    ),
    "conv2d": Case(
        lambda lib, a, w, b: F(lib).conv2d(a, w, b, stride=1, padding=1),
        [(1, 2, 4, 4), (3, 2, 3, 3), (3,)],
        tol=4,
    ),
    "conv2d_groups_stride": Case(
        lambda lib, a, w: F(lib).conv2d(a, w, stride=2, groups=2),
        [(1, 4, 5, 5), (2, 2, 2, 2)],
        tol=4,
    ),
    "conv3d": Case(
        lambda lib, a, w: F(lib).conv3d(a, w, padding=1), [(1, 2, 3, 3, 3), (2, 2, 2, 2, 2)], tol=4
    ),
    "conv_transpose1d": Case(
        lambda lib, a, w: F(lib).conv_transpose1d(a, w, stride=2), [(1, 2, 4), (2, 3, 3)], tol=4
    ),
    "conv_transpose2d": Case(
        lambda lib, a, w, b: F(lib).conv_transpose2d(a, w, b, stride=2, padding=1),
        [(1, 2, 3, 3), (2, 3, 3, 3), (3,)],
        tol=4,
    ),
    "conv_transpose3d": Case(
        lambda lib, a, w: F(lib).conv_transpose3d(a, w), [(1, 2, 2, 2, 2), (2, 1, 2, 2, 2)], tol=4
    ),
    "max_pool1d": Case(lambda lib, a: F(lib).max_pool1d(a, 2), [(1, 2, 6)]),
    "max_pool2d": Case(lambda lib, a: F(lib).max_pool2d(a, 2, stride=1), [(1, 2, 4, 4)]),
    "max_pool3d": Case(lambda lib, a: F(lib).max_pool3d(a, 2), [(1, 1, 4, 4, 4)]),
    "max_pool2d_pad_ceil": Case(
        lambda lib, a: F(lib).max_pool2d(a, 3, stride=2, padding=1, ceil_mode=True),
        [(1, 2, 5, 4)],
    ),
    "avg_pool1d": Case(lambda lib, a: F(lib).avg_pool1d(a, 2), [(1, 2, 6)]),
    "avg_pool2d": Case(lambda lib, a: F(lib).avg_pool2d(a, 2, padding=1), [(1, 2, 4, 4)]),
    "avg_pool3d": Case(lambda lib, a: F(lib).avg_pool3d(a, 2), [(1, 1, 4, 4, 4)]),
    "avg_pool2d_ceil_nopad": Case(
        lambda lib, a: F(lib).avg_pool2d(
            a, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False
        ),
        [(1, 2, 5, 4)],
    ),
    "avg_pool2d_divisor": Case(
        lambda lib, a: F(lib).avg_pool2d(a, 2, divisor_override=3), [(1, 2, 4, 4)]
    ),
    "adaptive_avg_pool2d": Case(lambda lib, a: F(lib).adaptive_avg_pool2d(a, 3), [(1, 2, 5, 5)]),
    "adaptive_max_pool2d": Case(lambda lib, a: F(lib).adaptive_max_pool2d(a, 2), [(1, 2, 5, 5)]),
    "adaptive_avg_pool1d": Case(lambda lib, a: F(lib).adaptive_avg_pool1d(a, 3), [(1, 2, 7)]),
    "adaptive_avg_pool3d": Case(lambda lib, a: F(lib).adaptive_avg_pool3d(a, 2), [(1, 1, 3, 4, 3)]),
    "adaptive_max_pool1d": Case(lambda lib, a: F(lib).adaptive_max_pool1d(a, 3), [(1, 2, 7)]),
    "adaptive_max_pool3d": Case(lambda lib, a: F(lib).adaptive_max_pool3d(a, 2), [(1, 1, 3, 4, 3)]),
}

SPATIAL = {
    "interp_nearest_1d": Case(
        lambda lib, a: F(lib).interpolate(a, scale_factor=2, mode="nearest"), [(1, 2, 3)]
    ),
    "interp_nearest_2d": Case(
        lambda lib, a: F(lib).interpolate(a, size=(5, 3), mode="nearest"), [(1, 2, 3, 4)]
    ),
    "interp_nearest_3d": Case(
        lambda lib, a: F(lib).interpolate(a, scale_factor=2, mode="nearest"), [(1, 1, 2, 2, 2)]
    ),
    "interp_linear": Case(
        lambda lib, a: F(lib).interpolate(a, size=5, mode="linear", align_corners=False),
        [(1, 2, 3)],
    ),
    "interp_bilinear": Case(
        lambda lib, a: F(lib).interpolate(a, size=(5, 3), mode="bilinear", align_corners=False),
        [(1, 2, 3, 4)],
    ),
    "interp_bilinear_ac": Case(
        lambda lib, a: F(lib).interpolate(a, scale_factor=2, mode="bilinear", align_corners=True),
        [(1, 1, 3, 3)],
    ),
    "interp_bicubic": Case(
        lambda lib, a: F(lib).interpolate(a, size=(4, 5), mode="bicubic", align_corners=False),
        [(1, 1, 3, 3)],
        tol=2,
    ),
    "interp_trilinear": Case(
        lambda lib, a: F(lib).interpolate(a, scale_factor=2, mode="trilinear"), [(1, 1, 2, 2, 2)]
    ),
    "pad_constant": Case(lambda lib, a: F(lib).pad(a, (1, 2, 0, 1), value=1.0), [(1, 2, 3)]),
    "pad_reflect": Case(lambda lib, a: F(lib).pad(a, (1, 2), mode="reflect"), [(1, 2, 4)]),
    "pad_replicate": Case(
        lambda lib, a: F(lib).pad(a, (1, 1, 2, 0), mode="replicate"), [(1, 1, 3, 3)]
    ),
    "pad_circular": Case(lambda lib, a: F(lib).pad(a, (1, 2), mode="circular"), [(1, 2, 4)]),
    "pixel_shuffle": Case(lambda lib, a: F(lib).pixel_shuffle(a, 2), [(1, 4, 2, 3)]),
    "pixel_unshuffle": Case(lambda lib, a: F(lib).pixel_unshuffle(a, 2), [(1, 1, 4, 2)]),
    "unfold": Case(lambda lib, a: F(lib).unfold(a, 2, padding=1), [(1, 2, 3, 3)]),
    "fold": Case(lambda lib, a: F(lib).fold(a, (3, 3), 2), [(1, 8, 4)]),
    "embedding": Case(lambda lib, w: F(lib).embedding(_idx(lib, [[0, 2], [3, 0]]), w), [(4, 3)]),
}


def _labels(lib, like):
    return _idx(lib, [1, 0, 3], like.device)


# Loss reductions sum a handful of terms; half types round each one.
LOSSES = {
    "mse_loss": Case(lambda lib, a, b: F(lib).mse_loss(a, b), XY),
    "l1_loss": Case(lambda lib, a, b: F(lib).l1_loss(a, b, reduction="sum"), XY),
    "smooth_l1_loss": Case(lambda lib, a, b: F(lib).smooth_l1_loss(a, b, beta=0.5), XY),
    "huber_loss": Case(lambda lib, a, b: F(lib).huber_loss(a, b, delta=0.7), XY),
    "bce": Case(lambda lib, a, b: F(lib).binary_cross_entropy(a, b), XY, ("prob", "prob")),
    "bce_with_logits": Case(
        lambda lib, a, b: F(lib).binary_cross_entropy_with_logits(a, b), XY, ("any", "prob")
    ),
    "cross_entropy": Case(lambda lib, a: F(lib).cross_entropy(a, _labels(lib, a)), X),
    "cross_entropy_probs": Case(lambda lib, a, b: F(lib).cross_entropy(a, b), XY, ("any", "prob")),
    "nll_loss": Case(lambda lib, a: F(lib).nll_loss(a, _labels(lib, a), reduction="sum"), X),
    "kl_div": Case(
        lambda lib, a, b: F(lib).kl_div(a, b, reduction="batchmean"), XY, ("any", "prob")
    ),
    # PyTorch: "not differentiable with respect to argument 'target'".
    "soft_margin_loss": Case(lambda lib, a, b: F(lib).soft_margin_loss(a, b.detach()), XY),
    "margin_ranking_loss": Case(
        lambda lib, a, b, y: F(lib).margin_ranking_loss(a, b, y.sign(), margin=0.1),
        [(5,), (5,), (5,)],
        ("any", "any", "nonzero"),
    ),
    "hinge_embedding_loss": Case(
        lambda lib, a, y: F(lib).hinge_embedding_loss(a, y.sign()), XY, ("any", "nonzero")
    ),
    "cosine_embedding_loss": Case(
        lambda lib, a, b, y: F(lib).cosine_embedding_loss(a, b, y.sign()),
        [(3, 4), (3, 4), (3,)],
        ("any", "any", "nonzero"),
        tol=2,
    ),
    "triplet_margin_loss": Case(
        lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n), [(3, 4)] * 3, tol=2
    ),
    "poisson_nll_loss": Case(
        lambda lib, a, b: F(lib).poisson_nll_loss(a, b), XY, ("any", "nonneg")
    ),
    "gaussian_nll_loss": Case(
        lambda lib, a, b, v: F(lib).gaussian_nll_loss(a, b, v), [(3, 4)] * 3, ("any", "any", "pos")
    ),
}

MOVEMENT = {
    "cat": Case(lambda lib, a, b: lib.cat([a, b], dim=1), [(3, 4), (3, 2)]),
    "stack": Case(lambda lib, a, b: lib.stack([a, b], dim=1), XY),
    "gather": Case(lambda lib, a: lib.gather(a, 1, _idx(lib, [[0, 3], [2, 2], [1, 0]])), X),
    "take_along_dim": Case(
        lambda lib, a: lib.take_along_dim(a, _idx(lib, [[0], [2], [1]]), dim=1), X
    ),
    "scatter": Case(lambda lib, a, s: a.scatter(0, _idx(lib, [[2, 0, 1, 0]]), s), [(3, 4), (1, 4)]),
    "scatter_add": Case(
        lambda lib, a, s: a.scatter_add(1, _idx(lib, [[0, 0], [3, 1], [2, 2]]), s),
        [(3, 4), (3, 2)],
    ),
    "scatter_reduce_sum": Case(
        lambda lib, a, s: a.scatter_reduce(1, _idx(lib, [[0, 0], [3, 1], [2, 2]]), s, "sum"),
        [(3, 4), (3, 2)],
    ),
    "scatter_reduce_amax": Case(
        lambda lib, a, s: a.scatter_reduce(1, _idx(lib, [[0, 1], [3, 1], [2, 0]]), s, "amax"),
        [(3, 4), (3, 2)],
        grad=False,  # ties between self and src split the gradient; compared in float tests
    ),
    "scatter_reduce_mean": Case(
        lambda lib, a, s: a.scatter_reduce(
            1, _idx(lib, [[0, 0], [3, 1], [2, 2]]), s, "mean", include_self=False
        ),
        [(3, 4), (3, 2)],
    ),
    "index_select": Case(lambda lib, a: lib.index_select(a, 1, _idx(lib, [3, 0, 0])), X),
    "index_add": Case(
        lambda lib, a, s: lib.index_add(a, 0, _idx(lib, [2, 0, 2]), s, alpha=2), [(3, 4), (3, 4)]
    ),
    "index_copy": Case(
        lambda lib, a, s: lib.index_copy(a, 1, _idx(lib, [3, 0]), s), [(3, 4), (3, 2)]
    ),
    "index_fill": Case(lambda lib, a: lib.index_fill(a, 1, _idx(lib, [1, 3]), 2), X),
    "masked_fill": Case(lambda lib, a: lib.masked_fill(a, a > 1, 2), X),
    "masked_select": Case(lambda lib, a: lib.masked_select(a, a > 0), X),
    "masked_scatter": Case(lambda lib, a, s: a.masked_scatter(a > 0, s), [(3, 4), (12,)]),
    "take": Case(lambda lib, a: lib.take(a, _idx(lib, [[0, 11], [5, -1]])), X),
    "roll": Case(lambda lib, a: lib.roll(a, shifts=(1, -2), dims=(0, 1)), X),
    "roll_flat": Case(lambda lib, a: lib.roll(a, 5), X),
    "diag_1d": Case(lambda lib, a: lib.diag(a, 1), [(3,)]),
    "diag_2d": Case(lambda lib, a: lib.diag(a, -1), X),
    "diag_embed": Case(lambda lib, a: lib.diag_embed(a), X),
    "diagonal": Case(lambda lib, a: lib.diagonal(a, offset=1), X),
    "repeat_interleave": Case(lambda lib, a: lib.repeat_interleave(a, 2, dim=0), X),
    "repeat_interleave_t": Case(
        lambda lib, a: lib.repeat_interleave(a, _idx(lib, [1, 0, 2, 1]), dim=1), X
    ),
    "repeat": Case(lambda lib, a: a.repeat(2, 1, 2), X),
    "tile": Case(lambda lib, a: lib.tile(a, (2, 1)), X),
    "sort": Case(lambda lib, a: _values_and_taken(lib, a, lib.sort(a, dim=1), 1), X),
    "sort_desc": Case(
        lambda lib, a: _values_and_taken(lib, a, lib.sort(a, dim=0, descending=True), 0), X
    ),
    "argsort": Case(lambda lib, a: lib.gather(a, 1, lib.argsort(a, dim=1)), X),
    "msort": Case(lambda lib, a: lib.msort(a), X),
    "topk": Case(lambda lib, a: _values_and_taken(lib, a, lib.topk(a, 2, dim=1), 1), X),
    "topk_smallest": Case(
        lambda lib, a: _values_and_taken(lib, a, lib.topk(a, 2, dim=0, largest=False), 0), X
    ),
    # unique, bincount: PyTorch has no derivative.
    "unique": Case(lambda lib, a: lib.unique(a), [(12,)], grad=False),
    "unique_inverse_counts": Case(
        lambda lib, a: lib.unique(a, return_inverse=True, return_counts=True), X, grad=False
    ),
    "searchsorted": Case(
        lambda lib, s, v: lib.searchsorted(s, v), [(2, 5), (2, 3)], ("sorted", "any")
    ),
    "searchsorted_right_i32": Case(
        lambda lib, s, v: lib.searchsorted(s, v, right=True, out_int32=True),
        [(6,), (2, 3)],
        ("sorted", "any"),
    ),
    "bucketize": Case(lambda lib, v, b: lib.bucketize(v, b), [(3, 4), (5,)], ("any", "sorted")),
    "bucketize_right": Case(
        lambda lib, v, b: lib.bucketize(v, b, right=True), [(3, 4), (5,)], ("any", "sorted")
    ),
    "histc": Case(lambda lib, a: lib.histc(a, bins=4, min=0, max=3), [(20,)], grad=False),
    "histc_auto_range": Case(lambda lib, a: lib.histc(a, bins=5), [(20,)], grad=False),
    "bincount": Case(lambda lib, a: lib.bincount(a), [(10,)], ("nonneg",)),
    "bincount_weights": Case(
        lambda lib, w: lib.bincount(_idx(lib, [0, 2, 2, 1, 4], w.device), weights=w),
        [(5,)],
        grad=False,
    ),
    "flip": Case(lambda lib, a: lib.flip(a, [0, 1]), X),
    "tril": Case(lambda lib, a: lib.tril(a, -1), X),
    "triu": Case(lambda lib, a: lib.triu(a, 1), X),
    "rot90": Case(lambda lib, a: lib.rot90(a, 1, [0, 1]), X),
    "transpose_contig": Case(lambda lib, a: a.t().contiguous(), X),
    "narrow": Case(lambda lib, a: lib.narrow(a, 1, 1, 2), X),
    "nonzero": Case(lambda lib, a: lib.nonzero(a), X),
    "clone": Case(lambda lib, a: a.clone(), X),
}

# Casts: every dtype to every other, exercising the conversion kernels.
CASTS = {f"to_{d}": Case(lambda lib, a, d=d: a.to(_dt(lib, d)), X, grad=False) for d in DTYPES}

TABLES = {
    "unary": UNARY,
    "activation": ACTIVATIONS,
    "binary": BINARY,
    "compare": COMPARE_LOGICAL,
    "reduce": REDUCTIONS,
    "matmul": MATMUL,
    "norm": NORMS,
    "conv": CONV_POOL,
    "spatial": SPATIAL,
    "loss": LOSSES,
    "movement": MOVEMENT,
    "cast": CASTS,
}
CASES = {f"{t}.{name}": case for t, table in TABLES.items() for name, case in table.items()}


# ---------------------------------------------------------------------------------------------
# The runner.


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _is_float(t):
    return _dtype_name(t) in FLOATS


def _forward(lib, case, arrays, dtype, grad, device):
    leaves = [
        lib.tensor(a, dtype=_dt(lib, dtype), device=device, requires_grad=grad) for a in arrays
    ]
    return leaves, _flat(case.fn(lib, *leaves))


def _backward(lib, leaves, outs, device, seed):
    """Backward with a seeded random cotangent per floating output; returns the input grads."""
    rng = np.random.default_rng(seed)
    total = None
    for o in outs:
        if not _is_float(o) or not o.requires_grad:
            continue
        cot = random_array(rng, tuple(o.shape), _dtype_name(o))
        term = (o * lib.tensor(cot, dtype=o.dtype, device=device)).sum()
        total = term if total is None else total + term
    if total is not None:
        total.backward()
    return [t.grad for t in leaves]


def _assert_close(actual, expected, dtype, tol, what):
    atol, rtol = _TOL.get(dtype, (0.0, 0.0))
    a, e = _to_numpy(actual), _to_numpy(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    np.testing.assert_allclose(
        a.astype(np.float64), e.astype(np.float64), atol=atol * tol, rtol=rtol * tol, err_msg=what
    )


def run_case(case, dtype, device="cpu", seed=0):
    """Runs one case in one dtype; returns "compared" or "rejected" (by both libraries)."""
    rng = np.random.default_rng(seed)
    domains = tuple(case.domain) + ("any",) * (len(case.shapes) - len(case.domain))
    arrays = [_inputs(rng, s, dtype, d) for s, d in zip(case.shapes, domains)]
    grad = case.grad and dtype in FLOATS

    try:
        t_leaves, t_outs = _forward(torch, case, arrays, dtype, grad, "cpu")
    except (RuntimeError, TypeError) as e:  # NotImplementedError is a RuntimeError
        # PyTorch rejects this dtype: oneflow must reject it too, with the same exception type.
        with pytest.raises(Exception) as info:
            _forward(flow, case, arrays, dtype, grad, device)
        assert info.type is type(e), (
            f"torch raised {type(e).__name__}: {e}\n"
            f"oneflow raised {info.type.__name__}: {info.value}"
        )
        return "rejected"

    f_leaves, f_outs = _forward(flow, case, arrays, dtype, grad, device)
    assert len(f_outs) == len(t_outs), f"{len(f_outs)} outputs != {len(t_outs)}"
    for i, (f, t) in enumerate(zip(f_outs, t_outs)):
        assert _dtype_name(f) == _dtype_name(t), f"output {i}: dtype {f.dtype} != {t.dtype}"
        assert tuple(f.shape) == tuple(t.shape), f"output {i}: shape {f.shape} != {t.shape}"
        _assert_close(f, t, _dtype_name(t), case.tol, f"output {i}")
    if not grad:
        return "compared"
    t_grads = _backward(torch, t_leaves, t_outs, "cpu", seed + 1)
    f_grads = _backward(flow, f_leaves, f_outs, device, seed + 1)
    for i, (f, t) in enumerate(zip(f_grads, t_grads)):
        if f is None and t is None:
            continue
        if f is None or t is None:  # no gradient on one side: the other must be zero
            assert not _to_numpy(t if f is None else f).astype(bool).any(), f"grad of input {i}"
            continue
        grad_dtype = "float32" if case.torch_grad64_is_f32 and dtype == "float64" else dtype
        _assert_close(f, t, grad_dtype, case.tol, f"grad of input {i}")
    return "compared"


# Known differences: (case, dtype) -> reason. Each is strict: fixing it makes the test fail.
_UINT8_RESAMPLE = (
    "PyTorch's uint8 bilinear/bicubic kernels weigh in fixed point (as PIL); oneflow weighs in "
    "float32 and rounds, so some outputs differ by 1"
)
XFAIL = {
    (f"spatial.{op}", "uint8"): _UINT8_RESAMPLE
    for op in ("interp_bilinear", "interp_bilinear_ac", "interp_bicubic")
}


def _params():
    for name in sorted(CASES):
        for dtype in DTYPES:
            reason = XFAIL.get((name, dtype))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, dtype, marks=marks, id=f"{name}-{dtype}")


@pytest.mark.parametrize("name,dtype", list(_params()))
def test_op_dtype(name, dtype, device):
    if name == "reduce.trace" and dtype in ("float16", "bfloat16") and not TORCH_HAS_HALF_TRACE:
        pytest.skip(f"{OLD_TORCH}: its CPU trace has no {dtype}")
    run_case(CASES[name], dtype, device)
