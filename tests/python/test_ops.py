"""The slice's ops (add, sub, mul, matmul, sum, relu) against PyTorch and NumPy: random shapes,
broadcasting, non-contiguous inputs, dtypes, values and gradients."""

import itertools

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import check

FLOAT_DTYPES = ["float32", "float64"]


def random_shape(rng, ndim, lo=1, hi=6):
    return tuple(int(s) for s in rng.integers(lo, hi, size=ndim))


def broadcast_pair(rng):
    nd = int(rng.integers(0, 4))
    a = list(random_shape(rng, nd))
    b = list(a)
    for i in range(nd):
        r = rng.random()
        if r < 0.25:
            a[i] = 1
        elif r < 0.5:
            b[i] = 1
    drop = int(rng.integers(0, nd + 1))
    return tuple(a), tuple(b[drop:])


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize(
    "op",
    [
        lambda lib, a, b: a + b,
        lambda lib, a, b: a * b,
        lambda lib, a, b: a - b,
        lambda lib, a, b: lib.add(a, b, alpha=2.5),
        lambda lib, a, b: (a * 2 + 1) * b - 0.5,
    ],
    ids=["add", "mul", "sub", "add_alpha", "scalar_mix"],
)
def test_binary_broadcast(op, dtype, seed, device):
    rng = np.random.default_rng(seed)
    sa, sb = broadcast_pair(rng)
    check(op, [sa, sb], dtype=dtype, device=device, seed=seed)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_binary_integer_and_bool(dtype, device):
    check(lambda lib, a, b: a + b, [(3, 4), (4,)], dtype=dtype, device=device)
    check(lambda lib, a, b: a * b, [(2, 3), (2, 1)], dtype=dtype, device=device)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_relu(dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, int(rng.integers(0, 4)))
    check(
        lambda lib, a: a.relu(),
        [shape],
        dtype=dtype,
        device=device,
        seed=seed,
        numpy_fn=lambda a: np.maximum(a, 0),
    )


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_sum_dims(dtype, seed, device):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 5))
    shape = random_shape(rng, nd)
    k = int(rng.integers(1, nd + 1))
    dims = sorted(int(d) for d in rng.choice(nd, size=k, replace=False))
    dims = [d - nd if rng.random() < 0.5 else d for d in dims]
    keepdim = bool(rng.random() < 0.5)
    check(
        lambda lib, a: a.sum(dims, keepdim=keepdim),
        [shape],
        dtype=dtype,
        device=device,
        seed=seed,
        numpy_fn=lambda a: a.sum(axis=tuple(dims), keepdims=keepdim),
    )
    check(lambda lib, a: a.sum(), [shape], dtype=dtype, device=device, seed=seed)


def test_sum_integer_promotes_to_int64(device):
    check(lambda lib, a: a.sum(0), [(4, 3)], dtype="int32", device=device)
    check(lambda lib, a: a.sum(), [(4, 3)], dtype="bool", device=device)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "shapes",
    [
        [(3, 4), (4, 5)],
        [(4,), (4, 5)],
        [(3, 4), (4,)],
        [(4,), (4,)],
        [(2, 3, 4), (4, 5)],
        [(2, 3, 4), (2, 4, 5)],
        [(2, 1, 3, 4), (5, 4, 2)],
        [(3, 4), (2, 4, 5)],
        [(1, 64), (64, 33)],
    ],
    ids=lambda s: "x".join(str(d) for d in s),
)
def test_matmul_forms(shapes, seed, device):
    check(
        lambda lib, a, b: lib.matmul(a, b),
        shapes,
        device=device,
        seed=seed,
        numpy_fn=np.matmul,
    )


@pytest.mark.parametrize(
    "batch,m,k,n", [(1, 3, 5, 4), (1, 37, 70, 51), (3, 9, 16, 7), (2, 256, 256, 257)]
)
def test_float32_matmul_operand_layouts_like_numpy(batch, m, k, n):
    # float32 products go through oneDNN's sgemm (single matrices, and batches of large ones) or
    # its matmul primitive (batches of small ones): every operand layout BLAS can take (rows or
    # columns of unit stride, leading dimensions past the width) and the ones it cannot
    # (overlapping rows, a broadcast batch), against float64 NumPy.
    import oneflow as flow

    rng = np.random.default_rng(batch * 1000 + m)
    big_a = rng.standard_normal((batch, m + 3, k + 5)).astype(np.float32)
    big_b = rng.standard_normal((batch, k + 2, n + 6)).astype(np.float32)
    fa, fb = flow.tensor(big_a), flow.tensor(big_b)
    a_views = {
        "contiguous": (flow.tensor(big_a[:, :m, :k].copy()), big_a[:, :m, :k]),
        "sliced": (fa[:, 1 : m + 1, 2 : k + 2], big_a[:, 1 : m + 1, 2 : k + 2]),
        "transposed": (
            flow.tensor(big_a[:, :m, :k].transpose(0, 2, 1).copy()).transpose(1, 2),
            big_a[:, :m, :k],
        ),
    }
    b_views = {
        "contiguous": (flow.tensor(big_b[:, :k, :n].copy()), big_b[:, :k, :n]),
        "sliced": (fb[:, 2 : k + 2, 3 : n + 3], big_b[:, 2 : k + 2, 3 : n + 3]),
        "transposed": (fb.transpose(1, 2)[:, :n, :k].transpose(1, 2), big_b[:, :k, :n]),
        "broadcast batch": (
            flow.tensor(big_b[:1, :k, :n].copy()).expand(batch, k, n),
            np.broadcast_to(big_b[:1, :k, :n], (batch, k, n)),
        ),
    }
    for (an, (ta, na)), (bn, (tb, nb)) in itertools.product(a_views.items(), b_views.items()):
        got = flow.matmul(ta, tb).numpy()
        want = np.matmul(na.astype(np.float64), nb.astype(np.float64))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * k, err_msg=f"{an} @ {bn}")
    # rows that overlap (a stride below the width): no BLAS layout
    flat = rng.standard_normal(m + k + 8).astype(np.float32)
    ov = flow.tensor(flat).as_strided((m, k), (1, 1))
    want = np.lib.stride_tricks.sliding_window_view(flat, k)[:m].astype(np.float64)
    got = flow.matmul(ov, flow.tensor(big_b[0, :k, :n].copy())).numpy()
    np.testing.assert_allclose(got, want @ big_b[0, :k, :n], rtol=1e-4, atol=1e-4 * k)


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_matmul_dtypes(dtype, device):
    if device == "cuda" and dtype == "int64":
        pytest.skip("integer matmul is CPU only")
    check(lambda lib, a, b: a @ b, [(5, 7), (7, 3)], dtype=dtype, device=device)


@pytest.mark.parametrize("seed", range(4))
def test_non_contiguous_inputs(seed, device):
    def transposed(lib, t, i):
        return t.transpose(0, 1)

    check(lambda lib, a, b: a @ b, [(6, 5), (7, 6)], device=device, seed=seed, transform=transposed)
    check(
        lambda lib, a, b: (a + b).relu() * a,
        [(4, 3), (4, 3)],
        device=device,
        seed=seed,
        transform=transposed,
    )
    check(lambda lib, a: a.sum(0), [(5, 3)], device=device, seed=seed, transform=transposed)


def test_zero_size_dims(device):
    check(lambda lib, a, b: a + b, [(0, 3), (3,)], device=device)
    check(lambda lib, a: a.sum(0), [(0, 3)], device=device)
    check(lambda lib, a, b: a @ b, [(2, 0), (0, 3)], device=device)
    check(lambda lib, a: a.relu(), [(0,)], device=device)


def test_large_parallel_elementwise(device):
    check(lambda lib, a, b: (a * b + a).relu().sum(1), [(300, 1000), (1000,)], device=device)


def test_large_sums_split_across_threads(device):
    # full reductions and few-output reductions take the split-and-combine path
    check(lambda lib, a: a.sum(), [(1000, 1000)], device=device, grad=False)
    check(lambda lib, a: a.sum(1), [(2, 300000)], device=device, grad=False)
    check(lambda lib, a: a.sum((0, 2)), [(64, 3, 4096)], device=device, grad=False)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_div_broadcast(dtype, seed, device):
    rng = np.random.default_rng(seed)
    sa, sb = broadcast_pair(rng)

    def transform(lib, t, i):
        # keep divisors away from zero so the comparison is about the op, not about 1/0
        return t if i == 0 else t * t + 0.5

    check(
        lambda lib, a, b: a / b,
        [sa, sb],
        dtype=dtype,
        device=device,
        seed=seed,
        transform=transform,
    )
    check(lambda lib, a: 2.5 / (a * a + 1), [sa], dtype=dtype, device=device, seed=seed)
    check(lambda lib, a: lib.div(a, 4), [sa], dtype=dtype, device=device, seed=seed)


def test_div_of_integers_is_floating(device):
    check(lambda lib, a, b: a / (b * b + 1), [(3, 4), (4,)], dtype="int64", device=device)
    check(lambda lib, a: a / 2, [(5,)], dtype="int32", device=device)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_exp_gelu(dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, int(rng.integers(0, 4)), hi=40)
    check(
        lambda lib, a: lib.exp(a), [shape], dtype=dtype, device=device, seed=seed, numpy_fn=np.exp
    )
    check(
        lambda lib, a: a.exp(),
        [shape],
        dtype=dtype,
        device=device,
        seed=seed,
        transform=lambda lib, t, i: t.transpose(0, -1) if t.ndim > 1 else t,
    )
    for approximate in ["none", "tanh"]:
        check(
            lambda lib, a, approximate=approximate: lib.nn.functional.gelu(
                a, approximate=approximate
            ),
            [shape],
            dtype=dtype,
            device=device,
            seed=seed,
        )


def test_exp_of_integers_is_floating(device):
    check(lambda lib, a: lib.exp(a), [(7,)], dtype="int64", device=device)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax(dtype, seed, device):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 4))
    shape = random_shape(rng, nd, hi=9)
    dim = int(rng.integers(-nd, nd))
    check(
        lambda lib, a: lib.softmax(a * 3, dim=dim), [shape], dtype=dtype, device=device, seed=seed
    )
    check(
        lambda lib, a: lib.nn.functional.softmax(a, dim=0),
        [shape],
        dtype=dtype,
        device=device,
        seed=seed,
        transform=lambda lib, t, i: t.transpose(0, -1),
    )


def test_softmax_wide_rows_and_extremes(device):
    check(lambda lib, a: a.softmax(-1), [(3, 5000)], device=device)
    check(lambda lib, a: (a * 1000).softmax(1), [(4, 7)], device=device)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_mean(dtype, seed, device):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 4))
    shape = random_shape(rng, nd)
    dims = sorted(int(d) for d in rng.choice(nd, size=int(rng.integers(1, nd + 1)), replace=False))
    keepdim = bool(rng.random() < 0.5)
    check(
        lambda lib, a: a.mean(dims, keepdim=keepdim),
        [shape],
        dtype=dtype,
        device=device,
        seed=seed,
        numpy_fn=lambda a: a.mean(axis=tuple(dims), keepdims=keepdim),
    )
    check(lambda lib, a: lib.mean(a), [shape], dtype=dtype, device=device, seed=seed)


@pytest.mark.parametrize("seed", range(6))
def test_where(seed, device):
    rng = np.random.default_rng(seed)
    sa, sb = broadcast_pair(rng)
    check(
        lambda lib, a, b: lib.where(lib.tensor(rng_mask(sa, seed), device=a.device), a, b),
        [sa, sb],
        device=device,
        seed=seed,
    )
    check(
        lambda lib, a: lib.where(lib.tensor(rng_mask(sa, seed), device=a.device), a, 0.5),
        [sa],
        device=device,
        seed=seed,
    )


def rng_mask(shape, seed):
    return np.random.default_rng(seed + 100).random(shape) > 0.5


DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]
SCALARS = [True, 3, 2.5]


@pytest.mark.parametrize("op", ["add", "mul", "div", "where"])
def test_promotion_table_matches_torch(op):
    torch = pytest.importorskip("torch")
    import oneflow as flow

    def make(lib, dt, ndim):
        t = lib.ones([2] * ndim, dtype=getattr(lib, dt))
        return t

    def run(lib, a, b):
        if op == "where":
            return lib.where(lib.ones(2, dtype=lib.bool), a, b)
        return getattr(lib, op)(a, b)

    mismatches = []
    for da in DTYPES:
        for db in DTYPES:
            for nd_b in (1, 0):
                f = run(flow, make(flow, da, 1), make(flow, db, nd_b)).dtype
                t = run(torch, make(torch, da, 1), make(torch, db, nd_b)).dtype
                if str(f).split(".")[-1] != str(t).split(".")[-1]:
                    mismatches.append((da, db, nd_b, f, t))
        for s in SCALARS:
            f = run(flow, make(flow, da, 1), s).dtype
            t = run(torch, make(torch, da, 1), s).dtype
            if str(f).split(".")[-1] != str(t).split(".")[-1]:
                mismatches.append((da, s, f, t))
    assert not mismatches, mismatches


UNARY = [
    "abs",
    "sqrt",
    "rsqrt",
    "log",
    "log1p",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "floor",
    "ceil",
    "round",
    "reciprocal",
]
POSITIVE = {"sqrt", "rsqrt", "log", "log1p", "reciprocal"}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_math(name, dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, int(rng.integers(0, 4)), hi=30)

    def positive(lib, t, i):
        return t * t + 0.5 if name in POSITIVE else t * 3

    check(
        lambda lib, a: getattr(lib, name)(a),
        [shape],
        dtype=dtype,
        device=device,
        seed=seed,
        transform=positive,
    )
    check(
        lambda lib, a: getattr(a, name)(),
        [shape],
        dtype=dtype,
        device=device,
        seed=seed,
        transform=lambda lib, t, i: (
            positive(lib, t, i).transpose(0, -1) if t.ndim > 1 else positive(lib, t, i)
        ),
    )


@pytest.mark.parametrize("name", ["abs", "floor", "ceil", "round", "sqrt", "sigmoid"])
def test_unary_on_integers(name, device):
    check(
        lambda lib, a: getattr(lib, name)(a * a if name == "sqrt" else a),
        [(9,)],
        dtype="int64",
        device=device,
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons(op, seed, device):
    rng = np.random.default_rng(seed)
    sa, sb = broadcast_pair(rng)
    for dtype in ["float32", "int64", "bool"]:
        check(
            lambda lib, a, b: getattr(lib, op)(a, b),
            [sa, sb],
            dtype=dtype,
            device=device,
            seed=seed,
            grad=False,
        )
    check(lambda lib, a: getattr(lib, op)(a, 0.5), [sa], device=device, seed=seed, grad=False)
    sym = {
        "eq": "__eq__",
        "ne": "__ne__",
        "lt": "__lt__",
        "le": "__le__",
        "gt": "__gt__",
        "ge": "__ge__",
    }[op]
    check(
        lambda lib, a, b: getattr(a, sym)(b),
        [sa, sb],
        dtype="int32",
        device=device,
        seed=seed,
        grad=False,
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_pow(dtype, seed, device):
    rng = np.random.default_rng(seed)
    sa, sb = broadcast_pair(rng)

    def positive(lib, t, i):
        return t * t + 0.5 if i == 0 else t

    check(
        lambda lib, a, b: lib.pow(a, b),
        [sa, sb],
        dtype=dtype,
        device=device,
        seed=seed,
        transform=positive,
    )
    check(
        lambda lib, a: a**2 + a**3.5 + 2.0**a,
        [sa],
        dtype=dtype,
        device=device,
        seed=seed,
        transform=positive,
    )


def test_pow_integer_and_errors(device):
    check(lambda lib, a: a**2, [(5,)], dtype="int64", device=device)


@pytest.mark.parametrize("seed", range(4))
def test_maximum_minimum_clamp(seed, device):
    rng = np.random.default_rng(seed)
    sa, sb = broadcast_pair(rng)
    check(
        lambda lib, a, b: lib.maximum(a, b) + lib.minimum(a, b) * 2,
        [sa, sb],
        device=device,
        seed=seed,
    )
    check(lambda lib, a: a.clamp(-0.5, 0.7), [sa], device=device, seed=seed)
    check(lambda lib, a: lib.clamp(a, min=0.1), [sa], device=device, seed=seed)
    check(lambda lib, a: a.clip(max=0.2), [sa], dtype="float64", device=device, seed=seed)


def _unary_grads(name, a, weights):
    """x.grad of `name`(x) summed (weights None) or weighted by weights^T, in OneFlow and in
    PyTorch, as float64 arrays."""
    import torch

    import oneflow as flow

    grads = []
    for lib in (flow, torch):
        x = lib.tensor(a, requires_grad=True)
        y = getattr(lib, name)(x)
        loss = y.sum() if weights is None else (y * lib.tensor(weights).t()).sum()
        loss.backward()
        grads.append(x.grad.double().numpy() if lib is torch else x.grad.numpy().astype("f8"))
    return grads


_INPUT_GRAD_DOMAINS = {
    # name: (values in the domain, edge values). The random values keep away from the edges,
    # where 1 - x^2 (x^2 - 1) cancels: there one rounding more or less of x^2 (PyTorch rounds it
    # as an op of its own) changes the gradient by far more than the tolerance.
    "asin": (lambda a: 0.9 * np.tanh(a), [0.0, 1.0, -1.0, np.nan]),
    "acos": (lambda a: 0.9 * np.tanh(a), [0.0, 1.0, -1.0, np.nan]),
    "atan": (lambda a: a, [0.0, np.inf, -np.inf, np.nan]),
    "asinh": (lambda a: a, [0.0, np.inf, -np.inf, np.nan]),
    "acosh": (lambda a: 1.2 + np.abs(a), [1.0, np.inf, 0.5, np.nan]),
    "atanh": (lambda a: 0.9 * np.tanh(a), [0.0, 1.0, -1.0, np.nan]),
    "log1p": (lambda a: np.abs(a) - 0.9, [0.0, -1.0, np.inf, np.nan]),
    "log2": (lambda a: np.abs(a) + 1e-3, [0.0, 1.0, np.inf, np.nan]),
    "log10": (lambda a: np.abs(a) + 1e-3, [0.0, 1.0, np.inf, np.nan]),
}


@pytest.mark.parametrize("name", sorted(_INPUT_GRAD_DOMAINS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_one_pass_gradients_from_the_input_like_torch(name, dtype):
    # asin, acos, atan, asinh, acosh, atanh, log1p, log2 and log10 differentiate from their input
    # in one UnaryGrad pass (the composites remain under create_graph): random, broadcast (the
    # gradient of a sum) and strided incoming gradients, the domain's edges, NaN.
    import torch

    import oneflow as flow

    rng = np.random.default_rng(11)
    domain, edges = _INPUT_GRAD_DOMAINS[name]
    a = domain(rng.standard_normal((37, 41)) * 2)
    a[0, :4] = edges
    a = a.astype(dtype)
    w = rng.standard_normal((41, 37)).astype(dtype)
    for weights in (None, w):
        grads = _unary_grads(name, a, weights)
        # 16-bit floats: ours rounds once from float32, PyTorch after each of its ops.
        tol = {"float16": 1e-2, "float32": 2e-6, "float64": 1e-12}[dtype]
        np.testing.assert_allclose(grads[0], grads[1], rtol=tol, atol=tol)
    # under create_graph the composite runs and is differentiable again
    x = flow.tensor(a[1:], requires_grad=True)
    (g,) = flow.autograd.grad(getattr(flow, name)(x).sum(), x, create_graph=True)
    (gg,) = flow.autograd.grad(g.sum(), x)
    xt = torch.tensor(a[1:], requires_grad=True)
    (gt,) = torch.autograd.grad(getattr(torch, name)(xt).sum(), xt, create_graph=True)
    (ggt,) = torch.autograd.grad(gt.sum(), xt)
    tol = {"float16": 2e-2, "float32": 1e-4, "float64": 1e-10}[dtype]
    np.testing.assert_allclose(gg.numpy().astype("f8"), ggt.double().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "sin", "cos"])
def test_float32_gradients_through_a_vector_function_like_torch(name):
    # float32 on the CPU: erf, erfc, sin and cos differentiate from the input, erfinv from its
    # output, in one UnaryGrad pass that runs the tier's vector exp / cos / sin on chunks of the
    # argument (unary_grad_takes_vector_fn): contiguous, broadcast (the gradient of a sum) and
    # strided incoming gradients, a strided input, chunk tails, special values; float64 keeps
    # the composite.
    import torch

    import oneflow as flow

    rng = np.random.default_rng(5)
    a = rng.standard_normal((37, 301)) * 2
    if name == "erfinv":
        a = np.tanh(a)
        a[0, :4] = [0.0, 1.0, -1.0, np.nan]
    else:
        a[0, :4] = [0.0, np.inf, -np.inf, np.nan]
    w = rng.standard_normal((301, 37))
    for dtype in ("float32", "float64"):
        av, wv = a.astype(dtype), w.astype(dtype)
        for weights, strided in ((None, False), (wv, False), (wv, True)):
            grads = []
            for lib in (flow, torch):
                base = lib.tensor(av.T.copy() if strided else av)
                x = (base.t() if strided else base).detach().requires_grad_(True)
                y = getattr(lib, name)(x)
                loss = y.sum() if weights is None else (y * lib.tensor(weights).t()).sum()
                loss.backward()
                grads.append(x.grad.numpy().astype("f8"))
            tol = {"float32": 3e-6, "float64": 1e-9}[dtype]
            np.testing.assert_allclose(grads[0], grads[1], rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "name", ["sigmoid", "tanh", "sqrt", "rsqrt", "reciprocal", "exp2", "expm1", "tan"]
)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_gradients_from_the_output_like_torch(name, dtype):
    # sigmoid, tanh, sqrt, rsqrt, reciprocal, exp2, expm1 and tan differentiate from their output
    # in one pass (UnaryGrad): random, broadcast (the gradient of a sum) and strided incoming
    # gradients, special values.

    rng = np.random.default_rng(7)
    a = rng.standard_normal((37, 41)) * 3
    if name in ("sqrt", "rsqrt"):
        a = np.abs(a) + (0.1 if name == "rsqrt" else 0.0)
    if name in ("exp2", "expm1") and dtype == "float16":
        a = np.clip(a, -8, 8)  # 2^16 and e^11 overflow float16 in the product
    a[0, :4] = [0.0, np.inf, -np.inf if name not in ("sqrt", "rsqrt") else 1e-30, np.nan]
    a = a.astype(dtype)
    w = rng.standard_normal((41, 37)).astype(dtype)
    for weights in (None, w):
        grads = _unary_grads(name, a, weights)
        tol = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-12}[dtype]
        np.testing.assert_allclose(grads[0], grads[1], rtol=tol, atol=tol)


def test_reduction_and_activation_keywords_like_torch():
    # The Python wrappers pass dtype= / approximate= to the binding only when given (the default
    # path passes none): both paths must give PyTorch's values and dtypes.
    a = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    f, t = flow.tensor(a), torch.tensor(a)
    F, TF = flow.nn.functional, torch.nn.functional
    pairs = [
        (f.sum(), t.sum()),
        (f.sum(dtype=flow.float64), t.sum(dtype=torch.float64)),
        (f.sum(1, True, dtype=flow.float64), t.sum(1, True, dtype=torch.float64)),
        (f.mean(), t.mean()),
        (f.mean(0, dtype=flow.float64), t.mean(0, dtype=torch.float64)),
        (f.softmax(1), t.softmax(1)),
        (f.softmax(1, dtype=flow.float64), t.softmax(1, dtype=torch.float64)),
        (F.softmax(f, 0, dtype=flow.float64), TF.softmax(t, 0, dtype=torch.float64)),
        # gelu against float64: PyTorch's float32 gelu loses digits in the negative tail
        (f.gelu(), TF.gelu(t.double()).float()),
        (f.gelu(approximate="tanh"), TF.gelu(t.double(), approximate="tanh").float()),
        (F.gelu(f, approximate="tanh"), TF.gelu(t.double(), approximate="tanh").float()),
    ]
    for i, (got, want) in enumerate(pairs):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], i
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6, err_msg=str(i))


def _round_to(x, dtype):
    return torch.tensor(x).to(getattr(torch, dtype)).double().numpy()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize(
    "a_shape,b_shape,ta,tb",
    [
        ((64, 96), (96, 80), False, False),
        ((64, 96), (80, 96), False, True),  # x @ W.t()
        ((96, 64), (96, 80), True, False),
        ((3, 17, 33), (3, 33, 9), False, False),
        ((3, 17, 33), (33, 9), False, False),  # a broadcast right operand
        ((1, 40), (40, 1), False, False),
        ((200, 300), (300, 150), False, False),
    ],
)
def test_16_bit_matmul_rounds_the_float32_sum_once(dtype, a_shape, b_shape, ta, tb):
    # as PyTorch: float32 accumulation, one rounding of each result (oneDNN's 16-bit matmul, or
    # the operands widened to float32 where the CPU has no kernel for the type)
    rng = np.random.default_rng(len(a_shape) * 7 + a_shape[-1])
    a = _round_to(rng.standard_normal(a_shape), dtype)
    b = _round_to(rng.standard_normal(b_shape), dtype)
    fa = flow.tensor(a, dtype=getattr(flow, dtype))
    fb = flow.tensor(b, dtype=getattr(flow, dtype))
    fa = fa.t() if ta else fa
    fb = fb.t() if tb else fb
    na, nb = (a.T if ta else a), (b.T if tb else b)
    got = (fa @ fb).double().numpy()
    exact = na @ nb
    assert got.dtype == np.float64 and (fa @ fb).dtype == getattr(flow, dtype)
    # within one rounding of the exact sum (plus float32 accumulation error)
    ulp = 2.0**-7 if dtype == "bfloat16" else 2.0**-10
    k = na.shape[-1]
    tol = ulp * np.abs(exact) + 1e-6 * k * (np.abs(na) @ np.abs(nb))
    assert (np.abs(got - exact) <= tol + 1e-30).all()
    want = (
        torch.tensor(na).to(getattr(torch, dtype)) @ torch.tensor(nb).to(getattr(torch, dtype))
    ).double()
    np.testing.assert_allclose(got, want.numpy(), rtol=2 * ulp, atol=1e-3)


def test_bfloat16_autocast_linear_gradients_match_torch():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((32, 48)).astype(np.float32)
    x = rng.standard_normal((16, 48)).astype(np.float32)
    res = []
    for T in (torch, flow):
        wt, xt = T.tensor(w, requires_grad=True), T.tensor(x, requires_grad=True)
        with T.autocast("cpu", dtype=T.bfloat16):
            y = T.nn.functional.linear(xt, wt)
        assert y.dtype == T.bfloat16
        y.float().square().sum().backward()
        res.append((y.float().detach().numpy(), wt.grad.numpy(), xt.grad.numpy()))
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)


UNARY_16 = {
    "exp": lambda T, x: T.exp(x),
    "tanh": lambda T, x: T.tanh(x),
    "sigmoid": lambda T, x: T.sigmoid(x),
    "erf": lambda T, x: T.erf(x),
    "log1p": lambda T, x: T.log1p(x.abs()),
    "sin": lambda T, x: T.sin(x),
    "gelu": lambda T, x: T.nn.functional.gelu(x),
    "gelu_tanh": lambda T, x: T.nn.functional.gelu(x, approximate="tanh"),
    "softmax": lambda T, x: x.softmax(-1),
    "log_softmax": lambda T, x: x.log_softmax(-1),
    "softmax_strided": lambda T, x: x.t().softmax(-1),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(UNARY_16))
def test_16_bit_vector_paths_match_torch(name, dtype):
    # 16-bit floats run the float vector kernels on widened chunks and round once, as PyTorch
    fn = UNARY_16[name]
    a = np.random.default_rng(5).standard_normal((37, 301)).astype(np.float32) * 3
    ft = flow.tensor(a).to(getattr(flow, dtype)).requires_grad_()
    tt = torch.tensor(a).to(getattr(torch, dtype)).requires_grad_()
    fy, ty = fn(flow, ft), fn(torch, tt)
    assert fy.dtype == getattr(flow, dtype)
    ulp = 2.0**-7 if dtype == "bfloat16" else 2.0**-10
    want = ty.detach().float().numpy()
    np.testing.assert_allclose(fy.detach().float().numpy(), want, rtol=2 * ulp, atol=2 * ulp)
    w = np.random.default_rng(6).standard_normal(want.shape).astype(np.float32)
    (fy.float() * flow.tensor(w)).sum().backward()
    (ty.float() * torch.tensor(w)).sum().backward()
    gt = tt.grad.float().numpy()
    np.testing.assert_allclose(
        ft.grad.float().numpy(), gt, rtol=4 * ulp, atol=4 * ulp * np.abs(gt).max()
    )


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack_is_one_kernel_and_matches_torch(dim):
    rng = np.random.default_rng(dim + 5)
    arrays = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(5)]
    fs = [flow.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    fs[2] = fs[2].t().contiguous().t()  # a transposed operand
    fy, ty = flow.stack(fs, dim), torch.stack(ts, dim)
    assert tuple(fy.shape) == tuple(ty.shape)
    np.testing.assert_array_equal(fy.detach().numpy(), ty.detach().numpy())
    w = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    (fy * flow.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    for f, t in zip([fs[0], fs[1], fs[3], fs[4]], [ts[0], ts[1], ts[3], ts[4]]):
        np.testing.assert_array_equal(f.grad.numpy(), t.grad.numpy())


def test_stack_edges_like_torch():
    assert flow.stack([flow.tensor(1), flow.tensor(2.5)]).tolist() == [1.0, 2.5]  # promotes
    assert flow.stack([flow.ones(0, 2)] * 2).shape == (2, 0, 2)
    assert flow.stack((t for t in [flow.ones(2)] * 3), 1).shape == (2, 3)
    with pytest.raises(RuntimeError, match="equal size"):
        flow.stack([flow.ones(2), flow.ones(3)])
    with pytest.raises(IndexError, match="out of range"):
        flow.stack([flow.ones(2)], 2)
    with pytest.raises(RuntimeError, match="non-empty"):
        flow.stack([])
    # second order through stack
    x = flow.tensor([1.0, 2.0], requires_grad=True)
    y = flow.stack([x * x, x], 0).sum()
    (g,) = flow.autograd.grad(y, x, create_graph=True)
    (h,) = flow.autograd.grad(g.sum(), x)
    assert h.tolist() == [2.0, 2.0]


NORMS_16 = {
    "layer_norm": lambda T, x, w, b: T.nn.functional.layer_norm(x, (6,), w, b),
    "group_norm": lambda T, x, w, b: T.nn.functional.group_norm(x, 2, w[:4], b[:4]),
    "batch_norm": lambda T, x, w, b: T.nn.functional.batch_norm(
        x, T.zeros(4, dtype=w.dtype), T.ones(4, dtype=w.dtype), w[:4], b[:4], training=True
    ),
    "instance_norm": lambda T, x, w, b: T.nn.functional.instance_norm(x),
}


@pytest.mark.parametrize("name", sorted(NORMS_16))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("params", ["float32", "same"])
def test_16_bit_normalisations_keep_the_input_dtype_like_torch(name, dtype, params):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    w, b = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    g = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    res = []
    for T in (torch, flow):
        xt = T.tensor(x).to(getattr(T, dtype)).requires_grad_()
        pd = getattr(T, dtype) if params == "same" else T.float32
        wt, bt = T.tensor(w).to(pd).requires_grad_(), T.tensor(b).to(pd).requires_grad_()
        y = NORMS_16[name](T, xt, wt, bt)
        (y.float() * T.tensor(g)).sum().backward()
        res.append(
            (str(y.dtype).split(".")[-1], y.detach().float().numpy(), xt.grad.float().numpy())
        )
    assert res[1][0] == res[0][0] == dtype
    tol = 2.0**-7 if dtype == "bfloat16" else 2.0**-10
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=4 * tol, atol=4 * tol)
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=0.05, atol=0.05 * np.abs(res[0][2]).max())


def test_float64_random_draws_have_53_bits():
    u = flow.rand(200_000, dtype=flow.float64).numpy()
    assert not (u * 2**24 % 1 == 0).all()  # not float32 draws widened
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.005
    z = flow.randn(200_000, dtype=flow.float64).numpy()
    assert not (z == z.astype(np.float32)).all()
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    flow.manual_seed(7)
    a, b = flow.rand(5, dtype=flow.float64), flow.randn(5, dtype=flow.float64)
    flow.manual_seed(7)
    np.testing.assert_array_equal(flow.rand(5, dtype=flow.float64).numpy(), a.numpy())
    np.testing.assert_array_equal(flow.randn(5, dtype=flow.float64).numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), flow.rand(5, dtype=flow.float64).numpy())


def test_randint_in_a_floating_dtype_gives_integers_like_torch():
    for dtype in (flow.float64, flow.float32, flow.float16):
        r = flow.randint(3, 9, (1000,), dtype=dtype)
        assert r.dtype == dtype
        v = r.float().numpy()
        assert (v == np.round(v)).all() and v.min() >= 3 and v.max() <= 8
