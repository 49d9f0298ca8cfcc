"""Zero-size and non-contiguous inputs against PyTorch: values, dtypes, shapes and gradients.

Each op runs on the same data in oneflow and PyTorch, once per layout of its inputs:
contiguous, transposed (last two dims swapped), strided (a step and an offset), expanded (a
stride-0 first dim), and on zero-size shapes. Where PyTorch raises (a max over an empty dim),
oneflow must raise too. Also the ops no other file compares with PyTorch: var_mean,
index_copy, embedding max_norm, split, meshgrid gradients, sub with alpha, var correction=,
min over all elements and the indices of min(dim).

Tolerances are differential.py's per-dtype table (float32: atol 1e-5, rtol 1e-4; float64:
atol 1e-10, rtol 1e-9; integers and bools exact) unless a case names its own.
"""

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import OLD_TORCH, TORCH_HAS_AMINMAX_GRAD, assert_close, random_array

# PyTorch warns where a correction leaves no degrees of freedom; the result is compared.
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")

LAYOUTS = ["contiguous", "transposed", "strided", "expanded"]


def _leaf_array(rng, shape, layout, dtype, init):
    """A leaf array and a function view(lib, tensor) giving the input of that layout.

    The input's values are drawn in its own shape (then init, e.g. making a matrix well
    conditioned, is applied) and embedded in the leaf, so every layout sees the same values.
    """
    shape = tuple(shape)
    if layout == "transposed" and len(shape) < 2:
        layout = "strided"
    if layout == "strided" and len(shape) == 0:
        layout = "contiguous"
    if layout == "expanded" and len(shape) == 0:
        layout = "contiguous"
    if layout == "expanded":
        leaf = init(random_array(rng, (1,) + shape[1:], dtype))
        return leaf, lambda lib, t: t.expand(*shape)
    value = init(random_array(rng, shape, dtype))
    if layout == "contiguous":
        return value, lambda lib, t: t
    if layout == "transposed":
        return np.ascontiguousarray(np.swapaxes(value, -1, -2)), lambda lib, t: t.transpose(-1, -2)
    # strided: every other row (from 0) and every other column (from 1)
    big = (shape[0] * 2,) + shape[1:-1] + (shape[-1] * 2 + 1,) if len(shape) > 1 else None
    if big is None:
        leaf = random_array(rng, (shape[0] * 2 + 1,), dtype)
        leaf[1::2] = value
        return leaf, lambda lib, t: t[1::2]
    leaf = random_array(rng, big, dtype)
    leaf[::2, ..., 1::2] = value
    return leaf, lambda lib, t: t[::2, ..., 1::2]


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat(x)]
    return [out]


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def compare(fn, shapes, layout="contiguous", dtype="float32", grad=True, seed=0, init=None):
    """fn(lib, *inputs) in oneflow and in PyTorch on the same data, inputs laid out as layout.

    Compares every output (tuples too: values and indices) and the gradient of each leaf
    under a random cotangent on every differentiable output. If PyTorch raises, oneflow
    must raise as well.
    """
    rng = np.random.default_rng(seed)
    init = init or (lambda a: a)
    inits = init if isinstance(init, (list, tuple)) else [init] * len(shapes)
    built = [_leaf_array(rng, s, layout, dtype, f) for s, f in zip(shapes, inits)]
    floating = dtype.startswith("float")
    grad = grad and floating

    def run(lib):
        leaves = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=grad) for a, _ in built]
        inputs = [view(lib, t) for t, (_, view) in zip(leaves, built)]
        return leaves, fn(lib, *inputs)

    try:
        t_leaves, t_out = run(torch)
        t_outs = _flat(t_out)
        t_live = [o.requires_grad for o in t_outs]
        if grad and any(t_live):
            cots = [random_array(rng, tuple(o.shape), dtype) for o in t_outs]
            torch.autograd.backward(
                [o for o, live in zip(t_outs, t_live) if live],
                [torch.tensor(c) for c, live in zip(cots, t_live) if live],
            )
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        with pytest.raises(Exception):  # noqa: B017  (the message is compared elsewhere)
            _, f_out = run(flow)
            for o in _flat(f_out):
                o.numpy()
        return f"torch raised {type(e).__name__}"

    f_leaves, f_out = run(flow)
    f_outs = _flat(f_out)
    assert len(f_outs) == len(t_outs), f"{len(f_outs)} outputs, torch has {len(t_outs)}"
    for k, (fo, to) in enumerate(zip(f_outs, t_outs)):
        assert _dtype_name(fo) == _dtype_name(to), f"output {k}: {fo.dtype} != {to.dtype}"
        assert tuple(fo.shape) == tuple(to.shape), f"output {k}: {fo.shape} != {to.shape}"
        # tolerance: differential's table for the output dtype (exact for ints and bools)
        assert_close(fo.detach().numpy(), to.detach().numpy(), _dtype_name(to), f"output {k}")
    if grad and any(t_live):
        live = [o for o, lv in zip(f_outs, t_live) if lv]
        for k, o in enumerate(live):
            assert o.requires_grad, f"output {k} does not require grad; torch's does"
        flow.autograd.backward(live, [flow.tensor(c) for c, lv in zip(cots, t_live) if lv])
        for i, (fl, tl) in enumerate(zip(f_leaves, t_leaves)):
            if tl.grad is None:
                assert fl.grad is None or not fl.grad.numpy().any(), f"input {i}: grad not None"
                continue
            assert fl.grad is not None, f"input {i} got no gradient"
            # tolerance: differential's table for the input dtype
            assert_close(fl.grad.numpy(), tl.grad.numpy(), dtype, f"grad of input {i}")
    return None


# ---------------------------------------------------------------------------------------------
# Tables: name -> dict(fn, shapes, zero=[shape lists], and options for compare)


def F(lib):
    return lib.nn.functional


def _strided_index(lib, values):
    """An int64 tensor holding values, itself non-contiguous (every other element of a row)."""
    a = np.asarray(values, dtype=np.int64)
    big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,) if a.ndim else (), dtype=np.int64)
    if a.ndim == 0:
        return lib.tensor(a)
    big[..., ::2] = a
    return lib.tensor(big)[..., ::2]


def _index_for(lib, shape, high, salt=0):
    """Deterministic indices in [0, high) of the given shape, laid out non-contiguously."""
    n = int(np.prod(shape))
    values = (np.arange(n) * 7 + 3 + salt) % max(high, 1)
    return _strided_index(lib, values.reshape(shape))


def _well_conditioned(a):
    return a + 4 * np.eye(a.shape[-1])


def _spd(a):
    return a @ np.swapaxes(a, -1, -2) + 2 * np.eye(a.shape[-1])


def _positive(a):
    return np.abs(a) + 0.5


OPS = {}


def op(name, fn, shapes, zero=(), **kw):
    assert name not in OPS, name
    OPS[name] = dict(fn=fn, shapes=shapes, zero=list(zero), **kw)


_B2 = [(2, 3), (2, 3)]
_BZ = [[(0, 3), (0, 3)], [(2, 0), (1, 0)], [(0, 3), (3,)]]
_T2 = [(3, 4), (4,)]

# Binary and ternary
op("add", lambda lib, a, b: lib.add(a, b), _B2, _BZ)
op("add_alpha_broadcast", lambda lib, a, b: lib.add(a, b, alpha=2.0), _T2, _BZ)
op("sub", lambda lib, a, b: lib.sub(a, b), _B2, _BZ)
op("sub_alpha", lambda lib, a, b: lib.sub(a, b, alpha=0.5), _T2, _BZ)
op("sub_alpha_int", lambda lib, a, b: lib.sub(a, b, alpha=3), _B2, _BZ, dtype="int64")
op("sub_method_alpha", lambda lib, a, b: a.sub(b, alpha=-2.5), _B2, _BZ)
op("mul", lambda lib, a, b: lib.mul(a, b), _T2, _BZ)
op("div", lambda lib, a, b: lib.div(a, b), _B2, _BZ, init=[lambda a: a, _positive])
op("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"), _B2, _BZ)
op("div_trunc", lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"), _T2, _BZ)
op("pow", lambda lib, a, b: lib.pow(a, b), _B2, _BZ, init=[_positive, lambda a: a])
op("pow_scalar", lambda lib, a: lib.pow(a, 3), [(2, 3)], [[(0, 3)]])
op("atan2", lambda lib, a, b: lib.atan2(a, b), _T2, _BZ)
op("fmod", lambda lib, a, b: lib.fmod(a, b), _B2, _BZ, init=[lambda a: a * 3, _positive])
op("remainder", lambda lib, a, b: lib.remainder(a, b), _T2, _BZ, init=[lambda a: a * 3, _positive])
# PyTorch raises "derivative for aten::floor_divide is not implemented"; oneflow's is zero.
op("floor_divide", lambda lib, a, b: lib.floor_divide(a, b), _B2, _BZ, grad=False)
op("floor_divide_int", lambda lib, a, b: lib.floor_divide(a, b.abs() + 1), _B2, _BZ, dtype="int64")
op("maximum", lambda lib, a, b: lib.maximum(a, b), _T2, _BZ)
op("minimum", lambda lib, a, b: lib.minimum(a, b), _B2, _BZ)
op("fmax", lambda lib, a, b: lib.fmax(a, b), _B2, _BZ)
op("fmin", lambda lib, a, b: lib.fmin(a, b), _T2, _BZ)
op("max_binary", lambda lib, a, b: lib.max(a, b), _B2, _BZ)
op("min_binary", lambda lib, a, b: lib.min(a, b), _T2, _BZ)
for _cmp in ["eq", "ne", "lt", "le", "gt", "ge"]:
    op(
        _cmp,
        lambda lib, a, b, c=_cmp: getattr(lib, c)(lib.round(a), lib.round(b)),
        _T2,
        _BZ,
        grad=False,
    )
for _lg in ["logical_and", "logical_or", "logical_xor"]:
    op(_lg, lambda lib, a, b, g=_lg: getattr(lib, g)(lib.round(a), b), _B2, _BZ, grad=False)
for _bw in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
    op(_bw, lambda lib, a, b, g=_bw: getattr(lib, g)(a, b), _T2, _BZ, dtype="int64")
op("bitwise_not", lambda lib, a: lib.bitwise_not(a), [(2, 3)], [[(0, 3)]], dtype="int32")
op("lerp", lambda lib, a, b: lib.lerp(a, b, 0.3), _B2, _BZ)
op("lerp_tensor_weight", lambda lib, a, b, w: lib.lerp(a, b, w), [(2, 3), (2, 3), (3,)], [])
op("where", lambda lib, a, b: lib.where(a > 0, a, b), _T2, _BZ)
op("where_scalar", lambda lib, a: lib.where(a > 0, a, 0.5), [(2, 3)], [[(0, 3)]])
op(
    "clamp_tensor_bounds",
    lambda lib, x, lo, hi: lib.clamp(x, min=lo - 1, max=hi + 1),
    [(2, 3), (2, 3), (2, 3)],
    [[(0, 3), (0, 3), (0, 3)]],
)
op("clamp_scalar", lambda lib, x: lib.clamp(x, -0.5, 0.5), [(2, 3)], [[(0, 3)]])
op("addcmul", lambda lib, x, a, b: lib.addcmul(x, a, b, value=0.5), [(2, 3)] * 3, [[(0, 3)] * 3])
op(
    "addcdiv",
    lambda lib, x, a, b: lib.addcdiv(x, a, b, value=-2),
    [(2, 3)] * 3,
    [[(0, 3)] * 3],
    init=[lambda a: a, lambda a: a, _positive],
)
op("xlogy", lambda lib, a, b: lib.xlogy(a, b), _B2, _BZ, init=[lambda a: a, _positive])


# Reductions: each over dim=None, 0, -1, and keepdim.
def _reduction(name, call, dims=(None, 0, -1), keepdim=True, **kw):
    variants = [(d, False) for d in dims] + ([(dims[-1], True), (0, True)] if keepdim else [])
    for d, k in variants:
        if d is None and k:
            continue
        op(
            f"{name}[dim={d},keepdim={k}]",
            lambda lib, x, d=d, k=k: call(lib, x, d, k),
            [(3, 4)],
            [[(0, 3)], [(2, 0)]],
            **kw,
        )


def _std_call(fname, **extra):
    def call(lib, x, d, k):
        if d is None:
            return getattr(lib, fname)(x, **extra)
        return getattr(lib, fname)(x, dim=d, keepdim=k, **extra)

    return call


for _r in ["sum", "mean", "prod", "nansum", "nanmean", "amax", "amin", "std", "var", "logsumexp"]:
    _reduction(
        _r,
        _std_call(_r)
        if _r != "logsumexp"
        else (lambda lib, x, d, k: lib.logsumexp(x, dim=(0, 1) if d is None else d, keepdim=k)),
        ties=_r in ("amax", "amin"),
    )
_reduction("var_correction0", _std_call("var", correction=0))
_reduction("var_correction2", _std_call("var", correction=2))
_reduction("std_unbiased_false", _std_call("std", unbiased=False))
_reduction("var_mean", _std_call("var_mean"))
_reduction("var_mean_correction0", _std_call("var_mean", correction=0))
_reduction("std_mean", _std_call("std_mean"))
_reduction("norm", lambda lib, x, d, k: lib.norm(x) if d is None else lib.norm(x, dim=d, keepdim=k))
_reduction("norm_p1", lambda lib, x, d, k: lib.norm(x, p=1, dim=d, keepdim=k))
_reduction("vector_norm", lambda lib, x, d, k: lib.linalg.vector_norm(x, dim=d, keepdim=k))
_reduction(
    "vector_norm_inf",
    lambda lib, x, d, k: lib.linalg.vector_norm(x, float("inf"), dim=d, keepdim=k),
    ties=True,
)
_reduction(
    "vector_norm_0",
    lambda lib, x, d, k: lib.linalg.vector_norm(lib.round(x), 0, dim=d, keepdim=k),
)
_reduction(
    "count_nonzero",
    lambda lib, x, d, k: lib.count_nonzero(lib.round(x), dim=d),
    keepdim=False,
    grad=False,
)
_reduction("all", lambda lib, x, d, k: lib.all(x > -1) if d is None else lib.all(x > -1, d, k))
_reduction("any", lambda lib, x, d, k: lib.any(x > 1) if d is None else lib.any(x > 1, d, k))
_reduction(
    "argmax",
    lambda lib, x, d, k: lib.argmax(x) if d is None else lib.argmax(x, dim=d, keepdim=k),
    ties=True,
)
_reduction(
    "argmin",
    lambda lib, x, d, k: lib.argmin(x) if d is None else lib.argmin(x, dim=d, keepdim=k),
    ties=True,
)
for _mm in ["max", "min", "median"]:
    _reduction(
        _mm,
        lambda lib, x, d, k, m=_mm: getattr(lib, m)(x) if d is None else getattr(lib, m)(x, d, k),
        ties=True,
    )
_reduction(
    "kthvalue",
    lambda lib, x, d, k: lib.kthvalue(x, 1, -1 if d is None else d, k),
    ties=True,
)
_reduction(
    "aminmax",
    lambda lib, x, d, k: lib.aminmax(x) if d is None else lib.aminmax(x, dim=d, keepdim=k),
    ties=True,
)
_reduction(
    "quantile",
    lambda lib, x, d, k: lib.quantile(x, 0.4, dim=d, keepdim=k),
    ties=True,
)
_reduction(
    "topk",
    lambda lib, x, d, k: lib.topk(x, 1, dim=-1 if d is None else d),
    keepdim=False,
    ties=True,
)
_reduction(
    "sort",
    lambda lib, x, d, k: lib.sort(x, dim=-1 if d is None else d, descending=k),
    ties=True,
)
_reduction(
    "argsort",
    lambda lib, x, d, k: lib.argsort(x, dim=-1 if d is None else d, descending=k),
    ties=True,
)
for _scan in ["cumsum", "cumprod", "logcumsumexp"]:
    _reduction(
        _scan, lambda lib, x, d, k, s=_scan: getattr(lib, s)(x, dim=d), dims=(0, -1), keepdim=False
    )
for _scan in ["cummax", "cummin"]:
    _reduction(
        _scan,
        lambda lib, x, d, k, s=_scan: getattr(lib, s)(x, dim=d),
        dims=(0, -1),
        keepdim=False,
        ties=True,
    )

# Linear algebra and norms
_MZ = [[(0, 3), (3, 4)], [(2, 0), (0, 4)], [(2, 3), (3, 0)]]
op("matmul", lambda lib, a, b: lib.matmul(a, b), [(2, 3), (3, 4)], _MZ)
op("matmul_3d_2d", lambda lib, a, b: lib.matmul(a, b), [(2, 2, 3), (3, 4)], [[(0, 2, 3), (3, 4)]])
op("matmul_2d_1d", lambda lib, a, b: lib.matmul(a, b), [(2, 3), (3,)], [[(0, 3), (3,)]])
op("matmul_1d_2d", lambda lib, a, b: lib.matmul(a, b), [(3,), (3, 4)], [[(0,), (0, 4)]])
op("matmul_batch_broadcast", lambda lib, a, b: a @ b, [(2, 1, 2, 3), (2, 3, 2)], [])
op("mm", lambda lib, a, b: lib.mm(a, b), [(2, 3), (3, 4)], _MZ)
op(
    "bmm",
    lambda lib, a, b: lib.bmm(a, b),
    [(2, 2, 3), (2, 3, 4)],
    [[(0, 2, 3), (0, 3, 4)], [(2, 2, 0), (2, 0, 4)], [(2, 0, 3), (2, 3, 4)]],
)
op(
    "addmm",
    lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2.0),
    [(2, 4), (2, 3), (3, 4)],
    [[(2, 4), (2, 0), (0, 4)], [(0, 4), (0, 3), (3, 4)]],
)
op(
    "baddbmm",
    lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0.5, alpha=2.0),
    [(2, 2, 4), (2, 2, 3), (2, 3, 4)],
    [[(2, 2, 4), (2, 2, 0), (2, 0, 4)], [(0, 2, 4), (0, 2, 3), (0, 3, 4)]],
)
op("addmv", lambda lib, c, a, b: lib.addmv(c, a, b), [(2,), (2, 3), (3,)], [[(2,), (2, 0), (0,)]])
op("dot", lambda lib, a, b: lib.dot(a, b), [(3,), (3,)], [[(0,), (0,)]])
op("mv", lambda lib, a, b: lib.mv(a, b), [(2, 3), (3,)], [[(0, 3), (3,)], [(2, 0), (0,)]])
op("outer", lambda lib, a, b: lib.outer(a, b), [(2,), (3,)], [[(0,), (3,)]])
op("einsum_ij_jk", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)], _MZ)
op(
    "einsum_batch",
    lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b),
    [(2, 2, 3), (2, 3, 4)],
    [[(0, 2, 3), (0, 3, 4)]],
)
op("einsum_diag", lambda lib, a: lib.einsum("ii->i", a), [(3, 3)], [[(0, 0)]])
op("einsum_sum", lambda lib, a: lib.einsum("ij->", a), [(3, 4)], [[(0, 4)]])
op("einsum_outer", lambda lib, a, b: lib.einsum("i,j->ij", a, b), [(2,), (3,)], [[(0,), (3,)]])
op("tensordot", lambda lib, a, b: lib.tensordot(a, b, dims=1), [(2, 3), (3, 4)], _MZ)
op(
    "tensordot_lists",
    lambda lib, a, b: lib.tensordot(a, b, dims=([0, 1], [1, 0])),
    [(2, 3), (3, 2)],
    [[(0, 3), (3, 0)]],
)
op(
    "inv",
    lambda lib, a: lib.linalg.inv(a),
    [(3, 3)],
    [[(0, 0)], [(0, 3, 3)]],
    init=_well_conditioned,
)
op("inv_batched", lambda lib, a: lib.inverse(a), [(2, 3, 3)], [], init=_well_conditioned)
op("det", lambda lib, a: lib.det(a), [(3, 3)], [[(0, 0)], [(0, 3, 3)]], init=_well_conditioned)
op("det_batched", lambda lib, a: lib.linalg.det(a), [(2, 3, 3)], [], init=_well_conditioned)
op("slogdet", lambda lib, a: lib.slogdet(a), [(3, 3)], [[(0, 0)]], init=_well_conditioned)
op("logdet", lambda lib, a: lib.logdet(a), [(3, 3)], [[(0, 0)]], init=_spd, layouts=LAYOUTS[:3])
op("cross", lambda lib, a, b: lib.cross(a, b, dim=1), [(2, 3), (2, 3)], [[(0, 3), (0, 3)]])
op("linalg_cross", lambda lib, a, b: lib.linalg.cross(a, b), [(4, 3), (4, 3)], [[(0, 3), (0, 3)]])
op("trace", lambda lib, a: lib.trace(a), [(3, 4)], [[(0, 3)], [(3, 0)]])
op("diagonal", lambda lib, a: lib.diagonal(a, 1), [(3, 4)], [[(0, 3)]])
for _ord in ["fro", "nuc", 1, -1, float("inf"), 2, -2]:
    op(
        f"matrix_norm_{_ord}",
        lambda lib, a, o=_ord: lib.linalg.matrix_norm(a, ord=o),
        [(2, 3, 4)],
        [[(0, 3, 4)], [(2, 0, 3)]],
        ties=_ord in (1, -1, float("inf")),
        layouts=LAYOUTS[:3] if _ord in (2, -2, "nuc") else LAYOUTS,
    )
op("linalg_norm", lambda lib, a: lib.linalg.norm(a), [(3, 4)], [[(0, 3)]])
op("linalg_norm_dim", lambda lib, a: lib.linalg.norm(a, 3, dim=1), [(3, 4)], [[(0, 3)]])

# nn kernels
op(
    "conv1d",
    lambda lib, x, w, b: F(lib).conv1d(x, w, b, padding=1),
    [(2, 2, 5), (3, 2, 3), (3,)],
    [[(0, 2, 5), (3, 2, 3), (3,)]],
)
op(
    "conv2d",
    lambda lib, x, w, b: F(lib).conv2d(x, w, b, stride=(2, 1)),
    [(2, 2, 4, 5), (3, 2, 2, 2), (3,)],
    [[(0, 2, 4, 5), (3, 2, 2, 2), (3,)]],
)
op(
    "conv_transpose2d",
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, stride=2),
    [(1, 2, 3, 4), (2, 3, 2, 2)],
    [[(0, 2, 3, 4), (2, 3, 2, 2)]],
)
op(
    "max_pool2d",
    lambda lib, x: F(lib).max_pool2d(x, 2),
    [(2, 2, 4, 5)],
    [[(0, 2, 4, 4)]],
    ties=True,
)
op("avg_pool2d", lambda lib, x: F(lib).avg_pool2d(x, 2, 1), [(2, 2, 4, 5)], [[(0, 2, 4, 4)]])
op("max_pool1d", lambda lib, x: F(lib).max_pool1d(x, 2), [(2, 3, 5)], [[(0, 3, 5)]], ties=True)
op("avg_pool1d", lambda lib, x: F(lib).avg_pool1d(x, 3, 2, 1), [(2, 3, 5)], [[(0, 3, 5)]])
op(
    "adaptive_avg_pool2d",
    lambda lib, x: F(lib).adaptive_avg_pool2d(x, (2, 3)),
    [(1, 2, 4, 5)],
    [[(0, 2, 4, 5)]],
)
op(
    "adaptive_max_pool2d",
    lambda lib, x: F(lib).adaptive_max_pool2d(x, (2, 3)),
    [(1, 2, 4, 5)],
    [[(0, 2, 4, 5)]],
    ties=True,
)


def _bn(training):
    def fn(lib, x, w, b):
        c = x.shape[1]
        rm = lib.zeros(c, dtype=x.dtype) + 0.1
        rv = lib.ones(c, dtype=x.dtype) * 1.5
        out = F(lib).batch_norm(x, rm, rv, w, b, training=training, momentum=0.3)
        return out, rm, rv

    return fn


op("batch_norm_train", _bn(True), [(4, 3), (3,), (3,)], [[(0, 3), (3,), (3,)]])
op("batch_norm_train_3d", _bn(True), [(2, 3, 4), (3,), (3,)], [[(0, 3, 4), (3,), (3,)]])
op("batch_norm_eval", _bn(False), [(2, 3, 4), (3,), (3,)], [[(0, 3, 4), (3,), (3,)]])
op(
    "layer_norm",
    lambda lib, x, w, b: F(lib).layer_norm(x, (4,), w, b),
    [(2, 3, 4), (4,), (4,)],
    [[(0, 4), (4,), (4,)]],
)
op(
    "layer_norm_2d",
    lambda lib, x: F(lib).layer_norm(x, (3, 4)),
    [(2, 3, 4)],
    [[(0, 3, 4)]],
)
op(
    "group_norm",
    lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b),
    [(2, 4, 3), (4,), (4,)],
    [[(0, 4, 3), (4,), (4,)]],
)
op(
    "instance_norm",
    lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b),
    [(2, 3, 4), (3,), (3,)],
    [[(0, 3, 4), (3,), (3,)]],
)
op("softmax", lambda lib, x: F(lib).softmax(x, dim=0), [(3, 4)], [[(0, 3)], [(2, 0)]])
op("log_softmax", lambda lib, x: F(lib).log_softmax(x, dim=-1), [(3, 4)], [[(0, 3)], [(2, 0)]])
op(
    "embedding",
    lambda lib, w: F(lib).embedding(_index_for(lib, (2, 3), 5), w),
    [(5, 4)],
    [[(5, 0)], [(0, 4)]],
)
op(
    "embedding_empty_indices",
    lambda lib, w: F(lib).embedding(_index_for(lib, (0, 3), 5), w),
    [(5, 4)],
)
op(
    "embedding_padding_idx",
    lambda lib, w: F(lib).embedding(_index_for(lib, (2, 3), 5), w, padding_idx=3),
    [(5, 4)],
)
for _mode, _kw, _shape in [
    ("nearest", dict(scale_factor=2), (2, 2, 3, 4)),
    ("nearest", dict(size=5), (2, 2, 4)),
    ("nearest-exact", dict(size=(5, 3)), (2, 2, 3, 4)),
    ("linear", dict(size=7, align_corners=True), (2, 2, 4)),
    ("bilinear", dict(size=(5, 3)), (2, 2, 3, 4)),
    ("bilinear", dict(scale_factor=2, align_corners=True), (2, 2, 3, 4)),
    ("bicubic", dict(size=(5, 6)), (2, 2, 3, 4)),
    ("trilinear", dict(size=(3, 4, 5)), (1, 2, 2, 3, 4)),
    ("area", dict(size=(2, 3)), (2, 2, 3, 4)),
]:
    op(
        f"interpolate_{_mode}_{len(_shape) - 2}d_{'_'.join(f'{k}={v}' for k, v in _kw.items())}",
        lambda lib, x, m=_mode, kw=_kw: F(lib).interpolate(x, mode=m, **kw),
        [_shape],
        [[(0,) + _shape[1:]]],
    )
for _pm, _pad in [
    ("constant", (1, 2, 0, 1)),
    ("reflect", (1, 2, 2, 1)),
    ("replicate", (2, 1, 1, 0)),
    ("circular", (1, 2, 1, 1)),
]:
    op(
        f"pad_{_pm}",
        lambda lib, x, m=_pm, p=_pad: F(lib).pad(x, p, mode=m),
        [(2, 2, 3, 4)],
        [[(0, 2, 3, 4)]],
    )
op(
    "unfold",
    lambda lib, x: F(lib).unfold(x, 2, padding=1, stride=(1, 2)),
    [(2, 2, 3, 4)],
    [[(0, 2, 3, 4)]],
)
op(
    "fold",
    lambda lib, x: F(lib).fold(x, (3, 4), 2),
    [(2, 8, 6)],
    [[(0, 8, 6)]],
)
# PyTorch's backward of an empty pixel_(un)shuffle fails its own shape check: values only.
op(
    "pixel_shuffle",
    lambda lib, x: F(lib).pixel_shuffle(x, 2),
    [(2, 8, 2, 3)],
    [[(0, 8, 2, 3)]],
    zero_kw=dict(grad=False),
)
op("pixel_unshuffle", lambda lib, x: F(lib).pixel_unshuffle(x, 2), [(2, 2, 4, 6)])
op(
    "cosine_similarity",
    lambda lib, a, b: F(lib).cosine_similarity(a, b, dim=-1),
    [(3, 4), (3, 4)],
    [[(0, 4), (0, 4)], [(3, 0), (3, 0)]],
)
op(
    "cosine_similarity_broadcast",
    lambda lib, a, b: F(lib).cosine_similarity(a, b, dim=0),
    [(4, 3), (4, 1)],
    [[(4, 0), (4, 1)]],
)
op(
    "pairwise_distance",
    lambda lib, a, b: F(lib).pairwise_distance(a, b),
    [(3, 4), (3, 4)],
    [[(0, 4), (0, 4)], [(3, 0), (3, 0)]],
)
op(
    "pairwise_distance_p1_keepdim",
    lambda lib, a, b: F(lib).pairwise_distance(a, b, p=1.0, keepdim=True),
    [(3, 4), (4,)],
    [[(0, 4), (4,)]],
)
op("normalize", lambda lib, x: F(lib).normalize(x, dim=0), [(3, 4)], [[(0, 3)], [(3, 0)]])
op("glu", lambda lib, x: F(lib).glu(x, dim=-1), [(3, 4)], [[(0, 4)]])
op("prelu", lambda lib, x, w: F(lib).prelu(x, w), [(2, 3, 4), (3,)], [[(0, 3, 4), (3,)]])


# Losses; class targets are non-contiguous index tensors sized from the input.
def _labels(lib, x, c=None):
    return _index_for(lib, (x.shape[0],) + tuple(x.shape[2:]), c or x.shape[1])


_LZ = [[(0, 4)]]
op("cross_entropy", lambda lib, x: F(lib).cross_entropy(x, _labels(lib, x)), [(3, 4)], _LZ)
op(
    "cross_entropy_sum_weight",
    lambda lib, x: F(lib).cross_entropy(
        x, _labels(lib, x), weight=lib.tensor([0.5, 1, 2, 1.5], dtype=x.dtype), reduction="sum"
    ),
    [(3, 4)],
    _LZ,
)
op(
    "cross_entropy_smoothing_none",
    lambda lib, x: F(lib).cross_entropy(x, _labels(lib, x), label_smoothing=0.2, reduction="none"),
    [(3, 4)],
    _LZ,
)
op(
    "cross_entropy_kdim",
    lambda lib, x: F(lib).cross_entropy(x, _labels(lib, x)),
    [(2, 3, 4)],
    [[(0, 3, 4)], [(2, 3, 0)]],
)
op(
    "cross_entropy_probs",
    lambda lib, x, p: F(lib).cross_entropy(x, p.softmax(-1)),
    [(3, 4), (3, 4)],
    [[(0, 4), (0, 4)]],
)
op(
    "nll_loss_ignore",
    lambda lib, x: F(lib).nll_loss(x, _labels(lib, x), ignore_index=1),
    [(3, 4)],
    _LZ,
)
op(
    "nll_loss_none",
    lambda lib, x: F(lib).nll_loss(x, _labels(lib, x), reduction="none"),
    [(3, 4)],
    _LZ,
)
op(
    "binary_cross_entropy",
    lambda lib, x, t: F(lib).binary_cross_entropy(x.sigmoid(), t.sigmoid()),
    [(3, 4), (3, 4)],
    [[(0, 4), (0, 4)]],
)
op(
    "binary_cross_entropy_weight",
    lambda lib, x, t, w: F(lib).binary_cross_entropy(x.sigmoid(), t.sigmoid(), weight=w.detach()),
    [(3, 4), (3, 4), (4,)],
    [[(0, 4), (0, 4), (4,)]],
)
op(
    "bce_with_logits",
    lambda lib, x, t: F(lib).binary_cross_entropy_with_logits(x, t.sigmoid()),
    [(3, 4), (3, 4)],
    [[(0, 4), (0, 4)]],
)
op(
    "bce_with_logits_pos_weight",
    lambda lib, x, t, pw: F(lib).binary_cross_entropy_with_logits(
        x, t.sigmoid(), weight=t.detach().abs(), pos_weight=pw.detach(), reduction="sum"
    ),
    [(3, 4), (3, 4), (4,)],
    [[(0, 4), (0, 4), (4,)]],
    init=[lambda a: a, lambda a: a, _positive],
)
op("mse_loss", lambda lib, x, t: F(lib).mse_loss(x, t), _B2, _BZ[:1])
op("l1_loss", lambda lib, x, t: F(lib).l1_loss(x, t), _B2, _BZ[:1])
op("l1_loss_none", lambda lib, x, t: F(lib).l1_loss(x, t, reduction="none"), _B2, _BZ[:1])
op("smooth_l1_loss", lambda lib, x, t: F(lib).smooth_l1_loss(x, t, beta=0.5), _B2, _BZ[:1])
op("huber_loss", lambda lib, x, t: F(lib).huber_loss(x, t, delta=0.7), _B2, _BZ[:1])
op(
    "kl_div",
    lambda lib, x, t: F(lib).kl_div(x.log_softmax(-1), t.softmax(-1), reduction="batchmean"),
    _B2,
    _BZ[:1],
)
op(
    "kl_div_log_target",
    lambda lib, x, t: F(lib).kl_div(x, t, reduction="sum", log_target=True),
    _B2,
    _BZ[:1],
)
op(
    "margin_ranking_loss",
    lambda lib, a, b, y: F(lib).margin_ranking_loss(a, b, y.sign(), margin=0.1),
    [(4,), (4,), (4,)],
    [[(0,), (0,), (0,)]],
)
op(
    "triplet_margin_loss",
    lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=2.0),
    [(3, 4)] * 3,
    [[(0, 4)] * 3],
)
op(
    "triplet_margin_loss_p1_swap",
    lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=2.0, p=1.0, swap=True),
    [(3, 4)] * 3,
    [[(0, 4)] * 3],
)
op(
    "cosine_embedding_loss",
    lambda lib, a, b, y: F(lib).cosine_embedding_loss(a, b, y.sign().detach(), margin=-0.5),
    [(3, 4), (3, 4), (3,)],
    [[(0, 4), (0, 4), (0,)]],
)
op(
    "hinge_embedding_loss",
    lambda lib, x, y: F(lib).hinge_embedding_loss(x, y.sign().detach()),
    _B2,
    _BZ[:1],
)
op(
    "soft_margin_loss",
    lambda lib, x, y: F(lib).soft_margin_loss(x, y.sign().detach()),
    _B2,
    _BZ[:1],
)
op("poisson_nll_loss", lambda lib, x, t: F(lib).poisson_nll_loss(x, t.abs()), _B2, _BZ[:1])
op(
    "gaussian_nll_loss",
    lambda lib, x, t, v: F(lib).gaussian_nll_loss(x, t, v.abs() + 0.5),
    [(3, 4)] * 3,
    [[(0, 4)] * 3],
)


def _ctc(lib, x):
    # x: (T, N, C)
    n = x.shape[1]
    targets = _strided_index(lib, [[1, 2], [2, 2], [1, 1]][:n])
    lengths = _strided_index(lib, [2, 1, 2][:n])
    return F(lib).ctc_loss(
        x.log_softmax(2), targets, _strided_index(lib, [x.shape[0]] * n), lengths
    )


op("ctc_loss", _ctc, [(5, 3, 4)], [[(5, 0, 4)]], layouts=LAYOUTS[:3])

# Movement
op("cat", lambda lib, a, b: lib.cat([a, b]), [(2, 3), (1, 3)], [[(0, 3), (2, 3)], [(0, 3), (0, 3)]])
op("cat_dim1", lambda lib, a, b: lib.cat([a, b], 1), [(2, 3), (2, 2)], [[(2, 0), (2, 3)]])
op("stack", lambda lib, a, b: lib.stack([a, b], 1), [(2, 3), (2, 3)], [[(0, 3), (0, 3)]])
op(
    "gather",
    lambda lib, x: lib.gather(x, 1, _index_for(lib, (x.shape[0], 2), x.shape[1])),
    [(3, 4)],
    [[(0, 4)]],
)
op(
    "gather_dim0",
    lambda lib, x: lib.gather(x, 0, _index_for(lib, (2, x.shape[1]), x.shape[0])),
    [(3, 4)],
    [[(3, 0)]],
)
op(
    "scatter",
    lambda lib, x, s: lib.scatter(x, 0, _strided_index(lib, [[2, 0, 1, 0], [1, 2, 0, 2]]), s),
    [(3, 4), (2, 4)],
)
op(
    "scatter_add",
    lambda lib, x, s: lib.scatter_add(x, 1, _index_for(lib, s.shape, x.shape[1]), s),
    [(3, 4), (3, 2)],
    [[(0, 4), (0, 2)], [(3, 4), (3, 0)]],
)
for _red in ["sum", "prod", "mean", "amax", "amin"]:
    for _self in [True, False]:
        op(
            f"scatter_reduce_{_red}_include_self={_self}",
            lambda lib, x, s, r=_red, i=_self: lib.scatter_reduce(
                x, 1, _index_for(lib, s.shape, x.shape[1]), s, r, include_self=i
            ),
            [(3, 4), (3, 5)],
            [[(0, 4), (0, 5)], [(3, 4), (3, 0)]],
        )
        op(
            f"scatter_reduce_{_red}_include_self={_self}_int64",
            lambda lib, x, s, r=_red, i=_self: lib.scatter_reduce(
                x, 1, _index_for(lib, s.shape, x.shape[1]), s, r, include_self=i
            ),
            [(3, 4), (3, 5)],
            dtype="int64",
            # Beyond 2**53 for amax/amin: values a double cannot hold.
            init=(lambda a: a + 2**62) if _red in ("amax", "amin") else None,
        )
# Ties in amax/amin (the gradient is shared evenly) and zeros in prod, against PyTorch.
op(
    "scatter_reduce_amax_ties",
    lambda lib, x, s: lib.scatter_reduce(x, 1, _index_for(lib, s.shape, 4), s, "amax"),
    [(3, 4), (3, 5)],
    init=np.round,
)
op(
    "scatter_reduce_prod_zeros",
    lambda lib, x, s: lib.scatter_reduce(x, 1, _index_for(lib, s.shape, 4), s, "prod"),
    [(3, 4), (3, 5)],
    init=np.round,
)
op(
    "index_select",
    lambda lib, x: lib.index_select(x, 0, _strided_index(lib, [2, 0, 2])),
    [(3, 4)],
    [[(3, 0)]],
)
op(
    "index_select_dim1_empty_index",
    lambda lib, x: lib.index_select(x, 1, _strided_index(lib, np.zeros(0, np.int64))),
    [(3, 4)],
)
op(
    "index_add",
    lambda lib, x, s: lib.index_add(x, 0, _strided_index(lib, [2, 0, 2]), s, alpha=0.5),
    [(3, 4), (3, 4)],
    [[(3, 0), (3, 0)]],
)
op(
    "index_copy",
    lambda lib, x, s: lib.index_copy(x, 0, _strided_index(lib, [2, 0]), s),
    [(3, 4), (2, 4)],
    [[(3, 0), (2, 0)]],
)
op(
    "index_copy_dim1",
    lambda lib, x, s: lib.index_copy(x, 1, _strided_index(lib, [3, 1]), s),
    [(3, 4), (3, 2)],
    [[(0, 4), (0, 2)]],
)
op("masked_fill", lambda lib, x: lib.masked_fill(x, x > 0.3, -1.0), [(3, 4)], [[(0, 4)]])
op(
    "masked_fill_strided_mask",
    lambda lib, x: lib.masked_fill(x, _strided_index(lib, [[1, 0, 0, 1]] * 3) > 0, 2.0),
    [(3, 4)],
)
op(
    "masked_scatter",
    lambda lib, x, s: lib.masked_scatter(x, x > 0, s),
    [(3, 4), (3, 4)],
    [[(0, 4), (0, 4)]],
)
op("take", lambda lib, x: lib.take(x, _strided_index(lib, [[5, 0], [11, 2]])), [(3, 4)])
op(
    "take_along_dim",
    lambda lib, x: lib.take_along_dim(x, _index_for(lib, (x.shape[0], 2), x.shape[1]), dim=1),
    [(3, 4)],
    [[(0, 4)]],
)
op("flip", lambda lib, x: lib.flip(x, (0, 1)), [(3, 4)], [[(0, 4)]])
op("roll", lambda lib, x: lib.roll(x, (1, -2), (0, 1)), [(3, 4)], [[(0, 4)], [(3, 0)]])
op("roll_flat", lambda lib, x: lib.roll(x, 5), [(3, 4)], [[(0, 4)]])
for _k in [1, 2, -1]:
    op(f"rot90_k{_k}", lambda lib, x, k=_k: lib.rot90(x, k), [(3, 4)], [[(0, 4)]])
op("repeat", lambda lib, x: x.repeat(2, 1, 2), [(3, 4)], [[(0, 4)]])
op("tile", lambda lib, x: lib.tile(x, (2, 1)), [(3, 4)], [[(0, 4)]])
op("repeat_interleave", lambda lib, x: lib.repeat_interleave(x, 2, dim=1), [(3, 4)], [[(0, 4)]])
op(
    "repeat_interleave_tensor",
    lambda lib, x: lib.repeat_interleave(x, _strided_index(lib, [1, 0, 2]), dim=0),
    [(3, 4)],
    [[(3, 0)]],
)
op("tril", lambda lib, x: lib.tril(x, -1), [(3, 4)], [[(0, 4)]])
op("triu", lambda lib, x: lib.triu(x, 1), [(2, 3, 4)], [[(0, 3, 4)], [(2, 0, 4)]])
op("diag_1d", lambda lib, x: lib.diag(x, 1), [(3,)], [[(0,)]])
op("diag_2d", lambda lib, x: lib.diag(x, -1), [(3, 4)], [[(0, 4)]])
op("diag_embed", lambda lib, x: lib.diag_embed(x, 1, 0, 2), [(2, 3)], [[(0, 3)]])
op("split", lambda lib, x: lib.split(x, [1, 3], dim=1), [(3, 4)], [[(0, 4)]])
op("split_int", lambda lib, x: lib.split(x, 2), [(3, 4)], [[(0, 4)]])
op("chunk", lambda lib, x: lib.chunk(x, 2, dim=1), [(3, 4)], [[(0, 4)]])
op("unbind", lambda lib, x: lib.unbind(x, 1), [(3, 4)], [[(0, 4)]])
op("meshgrid", lambda lib, a, b: lib.meshgrid(a, b, indexing="ij"), [(2,), (3,)], [[(0,), (3,)]])
op("meshgrid_xy", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy"), [(2,), (3,)], [])
op("narrow", lambda lib, x: lib.narrow(x, 1, 1, 2), [(3, 4)], [[(0, 4)]])
op("tensor_unfold", lambda lib, x: x.unfold(1, 2, 1), [(3, 4)], [[(0, 4)]])


# Cases oneflow does not implement yet, with the reason (none at present).
NOT_IMPLEMENTED = {}
# Where PyTorch raises as well, oneflow's NotImplementedError passes.
BOTH_RAISE = {("matrix_norm_-2", "zero", 1)}  # no smallest singular value of a 2x0x3 input


def _params():
    for name, spec in OPS.items():
        variants = [(layout, 0) for layout in spec.get("layouts", LAYOUTS)]
        if spec.get("dtype", "float32") == "float32" and "transposed" in spec.get(
            "layouts", LAYOUTS
        ):
            variants.append(("transposed-float64", 0))  # the float64 kernels' strided paths
        variants += [("zero", z) for z in range(len(spec["zero"]))]
        for layout, z in variants:
            if layout == "expanded" and spec.get("ties"):
                continue  # a stride-0 dim makes ties, whose gradient and indices are arbitrary
            marks = []
            if name in NOT_IMPLEMENTED and (name, layout, z) not in BOTH_RAISE:
                marks = [pytest.mark.xfail(strict=True, reason=NOT_IMPLEMENTED[name])]
            pid = f"{name}-{layout}" if layout != "zero" else f"{name}-zero{z}"
            yield pytest.param(name, layout, z, id=pid, marks=marks)


@pytest.mark.parametrize("name,layout,z", list(_params()))
def test_layout(name, layout, z):
    spec = OPS[name]
    if name.startswith("aminmax") and not TORCH_HAS_AMINMAX_GRAD:
        pytest.skip(f"{OLD_TORCH}: no aminmax derivative to compare with")
    kw = {k: spec[k] for k in ("dtype", "grad", "init") if k in spec}
    if layout == "zero":
        compare(spec["fn"], spec["zero"][z], "contiguous", **{**kw, **spec.get("zero_kw", {})})
    elif layout == "transposed-float64":
        compare(spec["fn"], spec["shapes"], "transposed", **{**kw, "dtype": "float64"})
    else:
        compare(spec["fn"], spec["shapes"], layout, **kw)


# ---------------------------------------------------------------------------------------------
# Ops without any other comparison with PyTorch


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 2)])
def test_var_mean_and_var_correction(dim, correction, dtype):
    for fname in ["var", "var_mean", "std", "std_mean"]:
        compare(
            lambda lib, x, f=fname: getattr(lib, f)(x, dim=dim, correction=correction),
            [(3, 4, 2)],
            dtype=dtype,
        )
    compare(lambda lib, x: lib.var_mean(x, dim=dim, keepdim=True, unbiased=False), [(3, 4, 2)])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_index_copy_values_and_grads(dtype):
    for dim, idx, shapes in [
        (0, [2, 0], [(3, 4), (2, 4)]),
        (1, [3, 0, 1], [(2, 4), (2, 3)]),
        (-1, [1], [(2, 2, 3), (2, 2, 1)]),
        (0, [], [(3, 4), (0, 4)]),
    ]:
        compare(
            lambda lib, x, s, d=dim, i=idx: lib.index_copy(x, d, lib.tensor(i, dtype=lib.int64), s),
            shapes,
            dtype=dtype,
        )
        compare(
            lambda lib, x, s, d=dim, i=idx: (x * 1).index_copy_(
                d, lib.tensor(i, dtype=lib.int64), s
            ),
            shapes,
            dtype=dtype,
        )
        compare(
            lambda lib, x, s, d=dim, i=idx: x.index_copy(d, lib.tensor(i, dtype=lib.int64), s),
            shapes,
            "transposed",
            dtype=dtype,
        )


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_max_norm_renormalises_weight_in_place(norm_type):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((5, 3)).astype(np.float32) * 2
    idx = np.array([[0, 3, 3], [4, 0, 1]])
    results = {}
    for lib in (flow, torch):
        w = lib.tensor(w0, requires_grad=True)
        out = lib.nn.functional.embedding(
            lib.tensor(idx, dtype=lib.int64), w, max_norm=1.0, norm_type=norm_type
        )
        cot = lib.tensor(np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape)))
        (out * cot).sum().backward()
        results[lib.__name__] = (out.detach().numpy(), w.detach().numpy(), w.grad.numpy())
    for k, what in enumerate(["output", "weight after the call", "weight grad"]):
        # float32: atol 1e-5, rtol 1e-4 (differential's table)
        assert_close(results["oneflow"][k], results["torch"][k], "float32", what)
    # Rows 0, 1, 3, 4 were looked up: their norm is now at most max_norm; row 2 is untouched.
    assert not np.allclose(results["torch"][1][[0, 1, 3, 4]], w0[[0, 1, 3, 4]])
    np.testing.assert_array_equal(results["oneflow"][1][2], w0[2])


def test_embedding_module_max_norm():
    for lib in (flow, torch):
        lib.manual_seed(0)
    emb_f = flow.nn.Embedding(4, 3, max_norm=0.5)
    emb_t = torch.nn.Embedding(4, 3, max_norm=0.5)
    w0 = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    with flow.no_grad():
        emb_f.weight.copy_(flow.tensor(w0))
    with torch.no_grad():
        emb_t.weight.copy_(torch.tensor(w0))
    idx = [2, 0, 2]
    out_f = emb_f(flow.tensor(idx, dtype=flow.int64))
    out_t = emb_t(torch.tensor(idx))
    # float32: atol 1e-5, rtol 1e-4 (differential's table)
    assert_close(out_f.detach().numpy(), out_t.detach().numpy(), "float32", "output")
    assert_close(emb_f.weight.detach().numpy(), emb_t.weight.detach().numpy(), "float32", "weight")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.split(x, 2),
        lambda lib, x: lib.split(x, 3, dim=1),
        lambda lib, x: lib.split(x, [1, 2, 1], dim=1),
        lambda lib, x: x.split([2, 1], dim=0),
        lambda lib, x: x.split(1, dim=-1),
        lambda lib, x: lib.split(x, [0, 4], dim=1),
        lambda lib, x: [p * (i + 1) for i, p in enumerate(lib.split(x, 2, 1))],
    ],
    ids=["int", "int_dim1", "sizes", "method_sizes", "ones_last", "empty_piece", "scaled"],
)
def test_split_values_and_grads(call, layout):
    compare(call, [(3, 4)], layout)
    compare(call, [(3, 4)], layout, dtype="float64")


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_meshgrid_values_and_grads(indexing, dtype):
    compare(lambda lib, a, b: lib.meshgrid(a, b, indexing=indexing), [(2,), (3,)], dtype=dtype)
    compare(
        lambda lib, a, b, c: lib.meshgrid([a, b, c], indexing=indexing),
        [(2,), (3,), (4,)],
        "strided",
        dtype=dtype,
    )
    compare(
        lambda lib, a, b: [g * g for g in lib.meshgrid(a, b, indexing=indexing)],
        [(3,), (1,)],
        dtype=dtype,
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_sub_alpha(dtype):
    for alpha in [2, -3, 0] if dtype.startswith("int") else [0.5, -2.0, 0.0, 3]:
        compare(lambda lib, a, b, al=alpha: lib.sub(a, b, alpha=al), [(2, 3), (3,)], dtype=dtype)
        compare(lambda lib, a, b, al=alpha: a.sub(b, alpha=al), [(2, 3), (2, 3)], dtype=dtype)
        compare(lambda lib, a, b, al=alpha: (a * 1).sub_(b, alpha=al), [(2, 3), (3,)], dtype=dtype)
        compare(lambda lib, a, al=alpha: lib.sub(a, 2, alpha=al), [(2, 3)], dtype=dtype)
        compare(lambda lib, a, b, al=alpha: lib.subtract(a, b, alpha=al), [(2, 3)] * 2, dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_min_max_whole_tensor_and_dim_indices(dtype):
    def ties(a):
        return np.round(a)  # integer-valued: many ties; torch returns the first index

    for fname in ["min", "max"]:
        compare(lambda lib, x, f=fname: getattr(lib, f)(x), [(3, 4)], dtype=dtype)
        compare(lambda lib, x, f=fname: getattr(x, f)(), [(3, 4)], dtype=dtype)
        for dim in [0, 1, -1]:
            for keepdim in [False, True]:

                def fn(lib, x, f=fname, d=dim, k=keepdim):
                    r = getattr(lib, f)(x, dim=d, keepdim=k)
                    return r.values, r.indices, r[0], r[1]

                compare(fn, [(3, 4)], dtype=dtype)
                compare(fn, [(3, 4)], "transposed", dtype=dtype)
                compare(fn, [(3, 4)], dtype=dtype, init=ties)


@pytest.mark.parametrize("how", ["same tensor", "an output and its consumer", "via autograd.grad"])
def test_backward_from_one_node_twice(how):
    """Roots that share a node: their gradients add up (the node was once counted twice, and
    every gradient below it was lost)."""

    def fn(lib, x):
        if how == "same tensor":
            y = x * 2
            return y, y
        r = lib.max(x, dim=1)
        return r.values, r[0] * 3

    compare(fn, [(3, 4)])
    if how == "via autograd.grad":
        grads = {}
        for lib in (flow, torch):
            x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
            y = x * x
            g = lib.ones(2, 3, dtype=x.dtype)
            grads[lib.__name__] = lib.autograd.grad([y, y], [x], [g, g * 2])[0].numpy()
        # exact: small integers
        np.testing.assert_array_equal(grads["oneflow"], grads["torch"])


def test_pixel_unshuffle_of_an_empty_batch():
    # PyTorch 2.13 returns an empty batch of pixel_unshuffle unchanged, shape (0, 2, 4, 6), and
    # its pixel_shuffle backward fails on it; the shape follows the rule for a non-empty batch.
    x = flow.zeros(0, 2, 4, 6, requires_grad=True)
    out = flow.nn.functional.pixel_unshuffle(x, 2)
    assert tuple(out.shape) == (0, 8, 2, 3)
    out.sum().backward()
    assert tuple(x.grad.shape) == (0, 2, 4, 6)


@pytest.mark.parametrize("value", [2**53 + 1, 2**63 - 1, -(2**62) - 1])
def test_large_int64_scalars_are_exact(value):
    """Python ints beyond 2**53 reach int64 tensors exactly (they once passed through a double:
    2**63 - 1 became -2**63)."""
    for fn in [
        lambda lib: lib.full((2,), value, dtype=lib.int64),
        lambda lib: lib.full_like(lib.zeros(2, dtype=lib.int64), value),
        lambda lib: lib.zeros(2, dtype=lib.int64).fill_(value),
        lambda lib: lib.zeros(3, dtype=lib.int64).masked_fill(
            lib.tensor([True, False, True]), value
        ),
        lambda lib: lib.zeros(3, dtype=lib.int64).index_fill(0, lib.tensor([1]), value),
        lambda lib: lib.zeros(3, dtype=lib.int64).scatter(0, lib.tensor([2]), value),
        lambda lib: lib.where(lib.tensor([True, False]), value, lib.zeros(2, dtype=lib.int64)),
        lambda lib: lib.zeros(3, dtype=lib.int64) - value,
        lambda lib: lib.clamp(lib.full((2,), 2**63 - 1, dtype=lib.int64), max=value),
    ]:
        # exact: integers
        np.testing.assert_array_equal(fn(flow).numpy(), fn(torch).numpy())


def _permuted(lib, a, perm):
    """a's values in a tensor whose memory holds its dims in the order `perm`."""
    inv = np.argsort(perm)
    return lib.tensor(np.ascontiguousarray(a.transpose(perm))).permute(*inv)


_ELEMENTWISE = {
    "mul_scalar": lambda lib, x, y, c: x * 2,
    "exp": lambda lib, x, y, c: lib.exp(x),
    "relu": lambda lib, x, y, c: lib.relu(x),
    "sigmoid": lambda lib, x, y, c: lib.sigmoid(x),
    "add_same_layout": lambda lib, x, y, c: x + y,
    "sub_bias": lambda lib, x, y, c: x - c,
    "bias_first": lambda lib, x, y, c: c * x,
    "compare": lambda lib, x, y, c: x > y,
    "where": lambda lib, x, y, c: lib.where(x > 0, x, y),
    "addcmul": lambda lib, x, y, c: lib.addcmul(x, x, y, value=0.5),
    "maximum": lambda lib, x, y, c: lib.maximum(x, y),
    "pow": lambda lib, x, y, c: lib.pow(x.abs(), 1.5),
}


@pytest.mark.parametrize("perm", [(1, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0)])
@pytest.mark.parametrize("op", sorted(_ELEMENTWISE))
def test_elementwise_results_keep_the_inputs_memory_order_like_torch(op, perm):
    # An elementwise result takes the dim order of its first input of the result's shape
    # (a transposed input gives a transposed result), as PyTorch's do: same strides, values.
    rng = np.random.default_rng(len(perm) * 10 + len(op))
    shape = (5, 6) if len(perm) == 2 else (3, 5, 6)
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    c = rng.standard_normal(shape[-1]).astype(np.float32)
    res = []
    for lib in (flow, torch):
        x, y = _permuted(lib, a, perm), _permuted(lib, b, perm)
        res.append(_ELEMENTWISE[op](lib, x, y, lib.tensor(c)))
    f, t = res
    assert f.stride() == t.stride(), (f.stride(), t.stride())
    assert f.is_contiguous() == t.is_contiguous()
    np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


def test_elementwise_layout_edge_cases_like_torch():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 1, 6)).astype(np.float32)
    for build in (
        lambda lib: lib.tensor(a).permute(2, 1, 0),  # a size-1 dim between the swapped ones
        lambda lib: lib.tensor(a)[:, :, ::2].transpose(0, 2),  # strided and transposed: dense
        lambda lib: lib.tensor(a[:, :, :1]).expand(4, 5, 1).transpose(0, 1),  # stride 0
        lambda lib: lib.tensor(a).transpose(0, 2)[1:3],  # sliced transpose
    ):
        f, t = build(flow) + 1, build(torch) + 1
        np.testing.assert_array_equal(f.numpy(), t.numpy())
        assert f.is_contiguous() == t.is_contiguous()
        if not t.is_contiguous():
            assert f.stride() == t.stride()
    # A transposed result views like PyTorch's: view needs contiguity, reshape copies.
    f, t = flow.ones(3, 4).t() * 2, torch.ones(3, 4).t() * 2
    with pytest.raises(RuntimeError):
        t.view(12)
    with pytest.raises(RuntimeError):
        f.view(12)
    np.testing.assert_array_equal(f.reshape(12).numpy(), t.reshape(12).numpy())
    # in place on a transposed view writes through it
    res = []
    for lib in (flow, torch):
        base = lib.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4))
        base.t().mul_(lib.tensor(np.arange(3.0, dtype=np.float32)))
        res.append(base.numpy())
    np.testing.assert_array_equal(res[0], res[1])


def test_gradients_through_transposed_elementwise_results_like_torch():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((4, 6)).astype(np.float64)
    g = rng.standard_normal((6, 4)).astype(np.float64)
    grads = []
    for lib in (flow, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tanh(x.t() * 3) + x.t().exp()
        (y * lib.tensor(g)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("perm", [(1, 0), (2, 0, 1), (1, 2, 0), (0, 2, 1)])
@pytest.mark.parametrize("fn", ["sum", "amax", "amin", "prod", "mean", "logsumexp"])
def test_reductions_of_permuted_inputs_like_torch(fn, perm):
    # Reductions read a permuted input in memory order: all dims, each single dim, and pairs.
    rng = np.random.default_rng(len(fn) + sum(perm))
    shape = (40, 70) if len(perm) == 2 else (6, 40, 70)
    a = rng.uniform(0.9, 1.1, shape).astype(np.float32)
    f, t = _permuted(flow, a, perm), _permuted(torch, a, perm)
    call = {
        "sum": lambda lib, x, d: x.sum(d) if d is not None else x.sum(),
        "amax": lambda lib, x, d: x.amax(d) if d is not None else x.amax(),
        "amin": lambda lib, x, d: x.amin(d) if d is not None else x.amin(),
        "prod": lambda lib, x, d: x.prod(d) if d is not None else x.prod(),
        "mean": lambda lib, x, d: x.mean(d) if d is not None else x.mean(),
        "logsumexp": lambda lib, x, d: lib.logsumexp(
            x, d if d is not None else tuple(range(x.ndim))
        ),
    }[fn]
    dims = [None] + list(range(len(shape)))
    if len(shape) == 3:
        dims += [(0, 1), (1, 2), (0, 2)]
    for d in dims:
        if fn == "prod" and isinstance(d, tuple):
            continue  # prod takes one dim
        fo, to = call(flow, f, d), call(torch, t, d)
        np.testing.assert_allclose(fo.numpy(), to.numpy(), rtol=2e-5, atol=1e-6, err_msg=str(d))


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "int64"])
@pytest.mark.parametrize(
    "shape, perm",
    [
        ((16, 8, 24, 2, 40, 2), (0, 1, 4, 2, 5, 3)),  # pixel_shuffle's view: 2-element runs
        ((3, 3, 60, 200), (0, 2, 3, 1)),  # NCHW -> NHWC with 3 channels
        ((2, 70, 3000), (0, 2, 1)),  # a few planes: tiles split across threads
        ((700, 50), (1, 0)),  # one plane
        ((4, 9, 6, 64), (0, 2, 1, 3)),  # a shared contiguous dim: row copies
    ],
)
def test_permuted_copies_like_numpy(shape, perm, dtype):
    # contiguous() of a permuted view: the tiled copy (from 32768 elements: short or long runs of
    # the output across the input's rows, many or few planes) and the row copies, every element
    # size.
    x = (np.arange(np.prod(shape)) % 251).astype(dtype).reshape(shape)
    got = flow.tensor(x).permute(*perm).contiguous()
    assert got.is_contiguous()
    np.testing.assert_array_equal(got.numpy(), np.ascontiguousarray(x.transpose(perm)))
    # into a strided destination (a transposed view of a fresh tensor) as well
    dst = flow.zeros(*reversed([shape[p] for p in perm]), dtype=got.dtype).permute(
        *reversed(range(len(shape)))
    )
    dst.copy_(flow.tensor(x).permute(*perm))
    np.testing.assert_array_equal(dst.numpy(), np.ascontiguousarray(x.transpose(perm)))


@pytest.mark.parametrize(
    "shape,dtype",
    [
        ((32, 128, 8, 32), "float32"),  # attention's heads: 128-byte rows, parallel
        ((4, 6, 3, 64), "float32"),  # 256-byte rows, small
        ((3, 40, 5, 9), "float32"),  # 36-byte rows: the last 32-byte move overlaps
        ((2, 70, 3, 33), "int8"),  # 33-byte rows
        ((5, 9, 2, 128), "float32"),  # 512-byte rows, the longest of the path
        ((5, 9, 2, 129), "float32"),  # 516 bytes: a memcpy per row instead
        ((6, 7, 3, 16), "float64"),
        ((6, 7, 3, 17), "bool"),  # 17 bytes: too short for the path
        ((300, 2, 1, 20), "int64"),  # a size-1 dim between
    ],
)
def test_copies_of_short_contiguous_rows_like_numpy(shape, dtype):
    """contiguous() of views whose innermost run is contiguous in the input but short (Note
    [Short rows] in kernels/cpu/copy.cpp): permutes that keep the last dim, with a flipped and
    a sliced outer dim, a broadcast (expanded) dim, and rows of 2-D slices split across
    threads; every row length around the path's bounds and several dtypes."""
    rng = np.random.default_rng(sum(shape))
    if dtype == "bool":
        x = rng.random(shape) > 0.5
    else:
        x = (rng.standard_normal(shape) * 50).astype(dtype)
    t = flow.tensor(x)
    cases = [
        (t.permute(0, 2, 1, 3), x.transpose(0, 2, 1, 3)),
        (t.permute(2, 1, 0, 3), x.transpose(2, 1, 0, 3)),
        (t.flip(1).permute(0, 2, 1, 3), x[:, ::-1].transpose(0, 2, 1, 3)),
        (t[:, ::2].permute(1, 0, 2, 3), x[:, ::2].transpose(1, 0, 2, 3)),
        (t[:1].expand(3, *shape[1:]), np.broadcast_to(x[:1], (3, *shape[1:]))),
        (t.reshape(-1, shape[-1])[:, : shape[-1]], x.reshape(-1, shape[-1])),
    ]
    two_d = t.reshape(shape[0] * shape[1], shape[2] * shape[3])
    half = max(1, (shape[2] * shape[3]) // 2)
    cases.append((two_d[:, :half], x.reshape(shape[0] * shape[1], -1)[:, :half]))
    for k, (view, want) in enumerate(cases):
        got = view.contiguous()
        assert got.is_contiguous()
        np.testing.assert_array_equal(got.numpy(), np.ascontiguousarray(want), err_msg=f"case {k}")
        out = flow.empty(*want.shape, dtype=t.dtype)
        out.copy_(view)
        np.testing.assert_array_equal(out.numpy(), np.ascontiguousarray(want), err_msg=f"copy_ {k}")


@pytest.mark.parametrize("r", [2, 3])
def test_pixel_shuffle_round_trip_like_torch(r):
    x = np.random.default_rng(r).standard_normal((4, 8 * r * r, 12, 40)).astype(np.float32)
    f = flow.nn.functional.pixel_shuffle(flow.tensor(x), r)
    t = torch.nn.functional.pixel_shuffle(torch.tensor(x), r)
    np.testing.assert_array_equal(f.numpy(), t.numpy())
    back = flow.nn.functional.pixel_unshuffle(f, r)
    np.testing.assert_array_equal(back.numpy(), x)
