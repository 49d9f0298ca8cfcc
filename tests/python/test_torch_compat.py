"""oneflow against PyTorch on the torch-namespace functions of framework/torch_compat.py:
construction and predicates, linear-algebra helpers, sets and calculus, *_scatter, windows, the
torch.<name> forms of functional ops and the namespace in-place forms. Values, dtypes, shapes,
gradients (float64), zero-size and non-contiguous inputs, and error types."""

import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import check

F64 = 1e-10  # float64 tolerance (atol and rtol) for composites of a few ops


def _np(t):
    return t.detach().cpu().numpy()


def _same(got, want, atol=0.0, rtol=0.0):
    """Same structure, dtypes, shapes and values (NaN where NaN)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _same(g, w, atol, rtol)
        return
    if isinstance(want, torch.Tensor):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (
            got.dtype,
            want.dtype,
        )
        assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
        g, w = _np(got), _np(want)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, atol=atol, rtol=rtol, equal_nan=True)
        return
    assert got == want, (got, want)


def _run(fn, arrays, atol, rtol, grad=True, seed=0):
    """fn(lib, *tensors) in both libraries on the same arrays; values and, for floating
    inputs, gradients of a random projection of every floating output."""
    outs, grads = [], []
    for lib in (flow, torch):
        leaves = [
            lib.tensor(a, requires_grad=grad and a.dtype.kind == "f")
            if isinstance(a, np.ndarray)
            else a
            for a in arrays
        ]
        out = fn(lib, *leaves)
        outs.append(out)
        floats = [
            o
            for o in (out if isinstance(out, (tuple, list)) else [out])
            if o.dtype.is_floating_point and o.requires_grad
        ]
        if grad and floats:
            rng = np.random.default_rng(seed)
            total = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in floats)
            total.backward()
        grads.append(
            [
                leaf.grad
                for leaf, a in zip(leaves, arrays)
                if isinstance(a, np.ndarray) and a.dtype.kind == "f" and grad
            ]
        )
    _same(outs[0], outs[1], atol, rtol)
    for g, w in zip(*grads):
        assert (g is None) == (w is None), (g, w)
        if w is not None:
            _same(g, w, atol, rtol)
    return outs


def _raises_like(fn):
    """fn(oneflow) raises the exception type fn(torch) raises."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(flow)
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)


def _rand(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_no_existing_name_replaced():
    from oneflow.framework import torch_compat

    # Names the module defines but oneflow had before are filtered out, not overwritten.
    assert flow.hann_window.__module__ == "oneflow.framework.misc_ops"
    assert flow.Tensor.unflatten is not torch_compat.unflatten
    for name in torch_compat.functions():
        assert hasattr(torch, name), name


# ---- construction and predicates --------------------------------------------------------------


def test_asarray_numpy_shares_memory_like_torch():
    for dtype in [np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_]:
        a = np.arange(6).reshape(2, 3).astype(dtype)
        f, t = flow.asarray(a), torch.asarray(a)
        _same(f, t)
        a[0, 0] = 1 if dtype is not np.bool_ else True
        assert f[0, 0].item() == t[0, 0].item() == a[0, 0], dtype  # both alias the array
    a = np.arange(12.0).reshape(3, 4).T  # non-contiguous view
    f, t = flow.asarray(a), torch.asarray(a)
    a[1, 0] = -7
    _same(f, t)


def test_asarray_copy_and_dtype():
    a = np.arange(4.0)
    for kwargs in [dict(copy=True), dict(dtype="float32"), dict(dtype="float32", copy=True)]:

        def make(lib, a=a, kwargs=kwargs):
            kw = dict(kwargs)
            if "dtype" in kw:
                kw["dtype"] = getattr(lib, kw["dtype"])
            return lib.asarray(a, **kw)

        f, t = make(flow), make(torch)
        a[0] += 1
        _same(f, t)
    _raises_like(lambda lib: lib.asarray(np.arange(3.0), dtype=lib.float32, copy=False))
    _raises_like(lambda lib: lib.asarray([1, 2], copy=False))


@pytest.mark.parametrize(
    "obj", [[1, 2, 3], [1.5, -2.0], 3, 2.5, True, [[1, 2], [3, 4]], [], [[True, False]]]
)
def test_asarray_python_objects(obj):
    _same(flow.asarray(obj), torch.asarray(obj))
    _same(flow.asarray(obj, dtype=flow.float64), torch.asarray(obj, dtype=torch.float64))
    f = flow.asarray(obj, dtype=flow.float64, requires_grad=True)
    assert (
        f.requires_grad == torch.asarray(obj, dtype=torch.float64, requires_grad=True).requires_grad
    )


def test_asarray_tensor_aliases_unless_copied():
    f, t = flow.arange(4.0), torch.arange(4.0)
    fa, ta = flow.asarray(f), torch.asarray(t)
    fc, tc = flow.asarray(f, copy=True), torch.asarray(t, copy=True)
    fd, td = flow.asarray(f, dtype=flow.float64), torch.asarray(t, dtype=torch.float64)
    f[0], t[0] = 9.0, 9.0
    _same(fa, ta)
    _same(fc, tc)
    _same(fd, td)
    _raises_like(lambda lib: lib.asarray(lib.arange(3.0), dtype=lib.float64, copy=False))


def test_predicates():
    for dtype in ["float32", "float64", "int64", "int8", "uint8", "bool", "float16"]:
        f, t = (
            flow.zeros(2, dtype=getattr(flow, dtype)),
            torch.zeros(2, dtype=getattr(torch, dtype)),
        )
        assert flow.is_complex(f) == torch.is_complex(t)
        assert flow.is_signed(f) == torch.is_signed(t), dtype
        _same(flow.isreal(f), torch.isreal(t))
    assert flow.is_same_size(flow.zeros(2, 3), flow.zeros(2, 3))
    assert not flow.is_same_size(flow.zeros(2, 3), flow.zeros(3, 2))
    assert torch.is_same_size(torch.zeros(2, 3), torch.zeros(2, 3))


def test_positive_ravel_unflatten():
    x = _rand((3, 4))
    _run(lambda lib, a: lib.positive(a) * 2, [x], F64, F64)
    _run(lambda lib, a: a.positive(), [x], F64, F64)
    _raises_like(lambda lib: lib.positive(lib.ones(2, dtype=lib.bool)))
    _run(lambda lib, a: lib.ravel(a.t()), [x], F64, F64)  # non-contiguous
    _run(lambda lib, a: a.ravel(), [np.zeros((0, 3))], F64, F64)
    _run(lambda lib, a: lib.unflatten(a, 1, (2, 2)), [x], F64, F64)
    _run(lambda lib, a: lib.unflatten(a, -1, (-1, 2)), [x], F64, F64)


@pytest.mark.parametrize("shape", [(7,), (2, 3, 4), (5, 1), (0, 3)])
def test_unravel_index(shape):
    total = int(np.prod(shape))
    idx = np.random.default_rng(1).integers(-total, max(total, 1), size=(3, 2))
    if total == 0:
        idx = idx[:0]
    _same(
        flow.unravel_index(flow.tensor(idx), shape), torch.unravel_index(torch.tensor(idx), shape)
    )
    _same(flow.unravel_index(flow.tensor(4), 10), torch.unravel_index(torch.tensor(4), 10))
    _raises_like(lambda lib: lib.unravel_index(lib.tensor([1.0]), (3,)))
    # No bounds check in torch: indices wrap.
    _same(
        flow.unravel_index(flow.tensor([100, -1, -13]), (3, 4)),
        torch.unravel_index(torch.tensor([100, -1, -13]), (3, 4)),
    )


def test_rsub_zero_fill():
    a, b = _rand((3, 4)), _rand((4,), 1)
    _run(lambda lib, x, y: lib.rsub(x, y), [a, b], F64, F64)
    _run(lambda lib, x, y: lib.rsub(x, y, alpha=2.5), [a, b], F64, F64)
    _run(lambda lib, x: lib.rsub(x, 3.0), [a], F64, F64)
    _same(flow.rsub(flow.arange(4), 1), torch.rsub(torch.arange(4), 1))
    for lib in (flow, torch):
        t = lib.ones(2, 3).t()
        assert lib.zero_(t) is t and float(t.abs().sum()) == 0
        assert lib.fill_(t, 2.0) is t and float(t.sum()) == 12
    _same(flow.fill(flow.arange(3), 5), torch.fill(torch.arange(3), 5))
    _run(lambda lib, x, v: lib.fill(x, v.sum()), [a, b], F64, F64)
    _raises_like(lambda lib: lib.fill(lib.ones(2), lib.ones(2)))


# ---- linear algebra ---------------------------------------------------------------------------


def test_vdot_inner():
    _run(lambda lib, a, b: lib.vdot(a, b), [_rand(5), _rand(5, 1)], F64, F64)
    _run(lambda lib, a, b: a.vdot(b), [_rand(0), _rand(0, 1)], F64, F64)
    _raises_like(lambda lib: lib.vdot(lib.ones(2, 2), lib.ones(2, 2)))
    _raises_like(lambda lib: lib.vdot(lib.ones(2), lib.ones(2, dtype=lib.float64)))
    _raises_like(lambda lib: lib.vdot(lib.ones(2), lib.ones(3)))
    _run(lambda lib, a, b: lib.inner(a, b), [_rand((2, 3, 4)), _rand((5, 4), 1)], F64, F64)
    _run(lambda lib, a, b: a.inner(b.t()), [_rand((3, 4)), _rand((4, 2), 1)], F64, F64)
    _run(lambda lib, a, b: lib.inner(a, b), [_rand(()), _rand((2, 3), 1)], F64, F64)
    _same(flow.inner(flow.arange(3), flow.arange(3)), torch.inner(torch.arange(3), torch.arange(3)))
    _raises_like(lambda lib: lib.inner(lib.arange(3), lib.arange(3.0)))
    _raises_like(lambda lib: lib.inner(lib.ones(2, 3), lib.ones(2)))


@pytest.mark.parametrize(
    "sa,sb", [((2, 3), (4, 5)), ((3,), (2, 2)), ((2, 1, 3), (3, 2)), ((0, 2), (3, 1)), ((), (3,))]
)
def test_kron(sa, sb):
    _run(lambda lib, a, b: lib.kron(a, b), [_rand(sa), _rand(sb, 1)], F64, F64)
    _run(lambda lib, a, b: a.kron(b), [_rand(sa), _rand(sb, 1)], F64, F64)


def test_kron_int_and_noncontiguous():
    a = np.arange(6).reshape(2, 3)
    _same(flow.kron(flow.tensor(a), flow.tensor(a)), torch.kron(torch.tensor(a), torch.tensor(a)))
    # torch.kron fails on this transposed view (a view() inside): torch gets a contiguous copy.
    _run(
        lambda lib, a, b: lib.kron(a.t().contiguous() if lib is torch else a.t(), b),
        [_rand((3, 2)), _rand((2, 2), 1)],
        F64,
        F64,
    )


def test_block_diag():
    blocks = [_rand((2, 3)), _rand(4, 1), _rand((), 2), _rand((0, 2), 3), _rand((1, 0), 4)]
    _run(lambda lib, *b: lib.block_diag(*b), blocks, F64, F64)
    _same(
        flow.block_diag(flow.ones(2, dtype=flow.int32), flow.ones(1, 1)),
        torch.block_diag(torch.ones(2, dtype=torch.int32), torch.ones(1, 1)),
    )
    _same(flow.block_diag(), torch.block_diag())
    _raises_like(lambda lib: lib.block_diag(lib.ones(1, 1, 1)))


def test_chain_matmul_matrix_power():
    mats = [_rand((3, 4)), _rand((4, 2), 1), _rand((2, 5), 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch deprecates chain_matmul
        _run(lambda lib, *m: lib.chain_matmul(*m), mats, F64, F64)
        _run(lambda lib, m: lib.chain_matmul(m), mats[:1], F64, F64)
        _raises_like(lambda lib: lib.chain_matmul(lib.ones(2)))
    a = _rand((2, 3, 3), 5) * 0.5 + np.eye(3)
    for n in [0, 1, 2, 3, 6, -1, -3]:
        _run(lambda lib, x, n=n: lib.matrix_power(x, n), [a], 1e-9, 1e-9)
    _run(lambda lib, x: x.matrix_power(2), [_rand((4, 4))], F64, F64)
    _run(lambda lib, x: lib.matrix_power(x, 3), [_rand((0, 2, 2))], F64, F64)
    _same(
        flow.matrix_power(flow.tensor([[1, 1], [1, 0]]), 10),
        torch.matrix_power(torch.tensor([[1, 1], [1, 0]]), 10),
    )
    _raises_like(lambda lib: lib.matrix_power(lib.ones(2, 3), 2))


@pytest.mark.parametrize("p", [2, 1, 3.5, float("inf"), 0])
def test_dist(p):
    # p=0 counts nonzero differences: no gradient to compare.
    _run(lambda lib, a, b: lib.dist(a, b, p), [_rand((3, 4)), _rand(4, 1)], F64, F64, grad=p != 0)
    _run(
        lambda lib, a, b: a.dist(b.t(), p), [_rand((2, 3)), _rand((3, 2), 1)], F64, F64, grad=p != 0
    )


@pytest.mark.parametrize("shape", [(3, 7), (6,), (1, 5), (4, 2)])
@pytest.mark.parametrize("correction", [1, 0, 2])
@pytest.mark.filterwarnings("ignore:cov")  # correction >= observations: warned in both
def test_cov(shape, correction):
    _run(lambda lib, x: lib.cov(x, correction=correction), [_rand(shape)], 1e-9, 1e-9)
    _run(lambda lib, x: x.t().cov(correction=correction), [_rand(shape[::-1])], 1e-9, 1e-9)


def test_cov_warns_without_degrees_of_freedom():
    for lib in (flow, torch):
        with pytest.warns(UserWarning, match="degrees of freedom"):
            lib.cov(lib.ones(2, 2, dtype=lib.float64), correction=2)


def test_cov_weights():
    n = 6
    x = _rand((3, n))
    fw = np.random.default_rng(2).integers(1, 4, size=n)
    aw = np.random.default_rng(3).random(n) + 0.1

    def fn(lib, x, aw):
        return lib.cov(x, fweights=lib.tensor(fw), aweights=aw)

    _run(fn, [x, aw], 1e-9, 1e-9)
    _run(lambda lib, x: lib.cov(x, fweights=lib.tensor(fw)), [x], 1e-9, 1e-9)
    _run(lambda lib, x, aw: lib.cov(x, aweights=aw, correction=0), [x, aw], 1e-9, 1e-9)
    # Integer input computes in the default float dtype; the products' summation order is the
    # GEMM's (oneDNN here, MKL or OpenBLAS in PyTorch), so the last bit may differ by machine.
    _same(
        flow.cov(flow.tensor([[1, 2, 4], [0, 3, 3]])),
        torch.cov(torch.tensor([[1, 2, 4], [0, 3, 3]])),
        rtol=1e-6,
    )


def test_corrcoef():
    _run(lambda lib, x: lib.corrcoef(x), [_rand((4, 9))], 1e-9, 1e-9)
    _run(lambda lib, x: x.corrcoef(), [_rand(5)], 1e-9, 1e-9, grad=False)


@pytest.mark.parametrize(
    "N,increasing", [(None, False), (4, True), (1, False), (0, True), (6, False)]
)
def test_vander(N, increasing):
    # torch.vander has no working backward (an in-place cumprod): values here, gradients against
    # the same matrix built from pow below.
    _run(lambda lib, x: lib.vander(x, N, increasing), [_rand(5)], F64, F64, grad=False)
    n = 5 if N is None else N
    if n <= 1:
        return  # a constant (or empty) matrix: outside the graph in both
    powers = np.arange(n) if increasing else np.arange(n)[::-1].copy()
    _run(
        lambda lib, x: (
            lib.vander(x, N, increasing) if lib is flow else x[:, None] ** lib.tensor(powers)
        ),
        [_rand(5)],
        F64,
        F64,
    )
    _same(
        flow.vander(flow.tensor([1, 2, 3], dtype=flow.int32), N, increasing),
        torch.vander(torch.tensor([1, 2, 3], dtype=torch.int32), N, increasing),
    )
    _raises_like(lambda lib: lib.vander(lib.ones(2, 2)))
    _raises_like(lambda lib: lib.vander(lib.ones(2), N=-1))


def test_cartesian_prod_combinations():
    _run(
        lambda lib, a, b, c: lib.cartesian_prod(a, b, c),
        [_rand(3), _rand(2, 1), _rand(4, 2)],
        F64,
        F64,
    )
    _run(lambda lib, a: lib.cartesian_prod(a), [_rand(3)], F64, F64)
    _run(lambda lib, a, b: lib.cartesian_prod(a, b), [_rand(0), _rand(2, 1)], F64, F64)
    _raises_like(lambda lib: lib.cartesian_prod(lib.ones(2, 2)))
    for r in [0, 1, 2, 3, 6]:
        for rep in [False, True]:
            _run(lambda lib, a, r=r, rep=rep: lib.combinations(a, r, rep), [_rand(5)], F64, F64)
    _same(flow.combinations(flow.arange(4), 2), torch.combinations(torch.arange(4), 2))
    _raises_like(lambda lib: lib.combinations(lib.ones(2, 2)))


# ---- sets and calculus ------------------------------------------------------------------------


def test_isin():
    rng = np.random.default_rng(0)
    e, s = rng.integers(0, 8, (3, 5)), rng.integers(0, 8, (2, 3))
    for invert in [False, True]:
        _same(
            flow.isin(flow.tensor(e), flow.tensor(s), invert=invert),
            torch.isin(torch.tensor(e), torch.tensor(s), invert=invert),
        )
    _same(flow.isin(flow.tensor(e), 3), torch.isin(torch.tensor(e), 3))
    _same(flow.isin(3, flow.tensor(s)), torch.isin(3, torch.tensor(s)))
    _same(
        flow.isin(flow.tensor([1.0, 2.5, float("nan")]), flow.tensor([2.5, float("nan")])),
        torch.isin(torch.tensor([1.0, 2.5, float("nan")]), torch.tensor([2.5, float("nan")])),
    )
    _same(flow.isin(flow.zeros(0), flow.ones(3)), torch.isin(torch.zeros(0), torch.ones(3)))


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_unique_consecutive(dim):
    x = np.array([[1, 1, 2, 2], [1, 1, 2, 2], [3, 1, 1, 2], [3, 1, 1, 2], [3, 1, 1, 2]])
    for inv in [False, True]:
        for cnt in [False, True]:
            # Keywords: torch's Python wrapper misreads these flags when positional.
            kw = dict(return_inverse=inv, return_counts=cnt, dim=dim)
            f = flow.unique_consecutive(flow.tensor(x), **kw)
            t = torch.unique_consecutive(torch.tensor(x), **kw)
            _same(f, t)
            _same(flow.tensor(x).unique_consecutive(**kw), t)
    empty = np.zeros((0, 3), dtype=np.int64)
    if dim in (None, 0):
        _same(
            flow.unique_consecutive(flow.tensor(empty), True, True, dim),
            torch.unique_consecutive(torch.tensor(empty), True, True, dim),
        )
    nan = [1.0, float("nan"), float("nan"), 2.0, 2.0]
    _same(
        flow.unique_consecutive(flow.tensor(nan), return_counts=True),
        torch.unique_consecutive(torch.tensor(nan), return_counts=True),
    )


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoid(name):
    y = _rand((3, 6))
    _run(lambda lib, y: getattr(lib, name)(y), [y], F64, F64)
    _run(lambda lib, y: getattr(lib, name)(y, dx=0.5, dim=0), [y], F64, F64)
    xs = np.sort(_rand(6, 1))
    _run(lambda lib, y, x: getattr(lib, name)(y, x), [y, xs], F64, F64)
    x2 = np.sort(_rand((3, 6), 2), axis=1)
    _run(lambda lib, y, x: getattr(lib, name)(y, x, dim=1), [y, x2], F64, F64)
    _run(lambda lib, y: getattr(lib, name)(y.t(), dim=0), [y], F64, F64)  # non-contiguous
    _run(lambda lib, y: getattr(lib, name)(y), [np.zeros((2, 0))], F64, F64)
    _run(lambda lib, y: getattr(lib, name)(y), [np.zeros((2, 1))], F64, F64)
    _same(getattr(flow, name)(flow.arange(5)), getattr(torch, name)(torch.arange(5)), 1e-6, 1e-6)
    _raises_like(lambda lib: getattr(lib, name)(lib.ones(3, 4), lib.ones(3)))
    _raises_like(lambda lib: getattr(lib, name)(lib.ones(3, 4), dim=2))


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(edge_order):
    x = _rand((4, 5, 6))
    _run(lambda lib, a: lib.gradient(a, edge_order=edge_order), [x], 1e-9, 1e-9)
    _run(lambda lib, a: lib.gradient(a, spacing=0.5, dim=1, edge_order=edge_order), [x], 1e-9, 1e-9)
    _run(
        lambda lib, a: lib.gradient(a, spacing=[2.0, 3.0], dim=[0, -1], edge_order=edge_order),
        [x],
        1e-9,
        1e-9,
    )
    c0, c2 = np.sort(_rand(4, 1)), np.cumsum(np.random.default_rng(2).random(6) + 0.2)

    def coords(lib, a, c0, c2):
        return lib.gradient(a, spacing=(c0, c2), dim=(0, 2), edge_order=edge_order)

    _run(coords, [x, c0, c2], 1e-8, 1e-8)
    _run(lambda lib, a: lib.gradient(a.transpose(0, 2), edge_order=edge_order), [x], 1e-9, 1e-9)
    _raises_like(lambda lib: lib.gradient(lib.ones(edge_order, 3), edge_order=edge_order))
    _raises_like(lambda lib: lib.gradient(lib.ones(4, 4), spacing=[1.0, 2.0, 3.0]))


def test_gradient_bad_edge_order():
    _raises_like(lambda lib: lib.gradient(lib.ones(5), edge_order=3))


def test_scatter_family():
    _run(lambda lib, a, s: lib.diagonal_scatter(a, s), [_rand((4, 4)), _rand(4, 1)], F64, F64)
    _run(lambda lib, a, s: a.diagonal_scatter(s, 1), [_rand((3, 5)), _rand(3, 1)], F64, F64)
    _run(
        lambda lib, a, s: lib.diagonal_scatter(a, s, -1, 1, 2),
        [_rand((2, 4, 3)), _rand((2, 3), 1)],
        F64,
        F64,
    )
    _run(
        lambda lib, a, s: lib.select_scatter(a, s, 1, -2),
        [_rand((3, 4, 2)), _rand((3, 2), 1)],
        F64,
        F64,
    )
    _run(lambda lib, a, s: a.t().select_scatter(s, 0, 1), [_rand((3, 4)), _rand(3, 1)], F64, F64)
    _run(
        lambda lib, a, s: lib.slice_scatter(a, s, 1, 1, 5, 2),
        [_rand((3, 6)), _rand((3, 2), 1)],
        F64,
        F64,
    )
    _run(lambda lib, a, s: a.slice_scatter(s), [_rand((3, 2)), _rand((3, 2), 1)], F64, F64)
    _run(
        lambda lib, a, s: lib.slice_scatter(a, s, 0, 2, 2),
        [_rand((3, 2)), _rand((0, 2), 1)],
        F64,
        F64,
    )
    _raises_like(lambda lib: lib.select_scatter(lib.ones(3, 4), lib.ones(3), 0, 1))
    _raises_like(lambda lib: lib.diagonal_scatter(lib.ones(3, 3), lib.ones(2)))


# ---- windows ----------------------------------------------------------------------------------


WINDOWS = [
    ("hamming_window", {}),
    ("hamming_window", {"alpha": 0.5, "beta": 0.3}),
    ("blackman_window", {}),
    ("bartlett_window", {}),
    ("kaiser_window", {}),
    ("kaiser_window", {"beta": 3.5}),
]


@pytest.mark.parametrize("name,kwargs", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(name, kwargs, n, periodic):
    # torch computes in the output dtype: float32 rounding is the tolerance.
    for dtype, tol in [("float32", 1e-6), ("float64", 1e-12)]:
        f = getattr(flow, name)(n, periodic, dtype=getattr(flow, dtype), **kwargs)
        t = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype), **kwargs)
        _same(f, t, tol, tol)
    _same(getattr(flow, name)(n), getattr(torch, name)(n), 1e-6, 1e-6)
    assert getattr(flow, name)(n, requires_grad=True).requires_grad


@pytest.mark.parametrize("name", sorted({w for w, _ in WINDOWS}))
def test_window_errors(name):
    _raises_like(lambda lib: getattr(lib, name)(-1))
    _raises_like(lambda lib: getattr(lib, name)(4, dtype=lib.int64))


# ---- torch.<name> forms of functional ops -----------------------------------------------------


def test_dropout_namespace_forms():
    x = _rand((4, 6))
    for name in ["dropout", "alpha_dropout", "feature_alpha_dropout"]:
        _run(lambda lib, a, name=name: getattr(lib, name)(a, 0.3, False), [x], 0, 0)
        _run(lambda lib, a, name=name: getattr(lib, name)(a, 0.0, True), [x], 1e-12, 1e-12)
    f = flow.dropout(flow.ones(1000, dtype=flow.float64), 0.25, True)
    assert set(np.unique(_np(f)).tolist()) <= {0.0, 1 / 0.75}
    # feature_alpha_dropout: one draw per (sample, channel); kept units are the affine map of
    # the input, dropped ones the affine image of alpha'. Mean stays near 0 on standard input.
    g = flow.feature_alpha_dropout(flow.tensor(_rand((200, 50, 3))), 0.5, True)
    per_channel = _np(g).std(axis=2)
    kept = per_channel > 1e-9
    assert 0.3 < kept.mean() < 0.7 and abs(_np(g).mean()) < 0.1
    for lib in (flow, torch):
        t = lib.ones(3, 3)
        assert lib.dropout_(t, 0.5, False) is t


def test_norm_namespace_forms():
    x = _rand((2, 4, 3, 5))
    w, b = _rand(4, 1), _rand(4, 2)
    rm, rv = _rand(4, 3), np.abs(_rand(4, 4)) + 0.5
    _run(lambda lib, a, w, b: lib.layer_norm(a, (3, 5), None, None, 1e-5), [x, w, b], 1e-9, 1e-9)
    lw, lb = _rand((3, 5), 5), _rand((3, 5), 6)
    _run(lambda lib, a, w, b: lib.layer_norm(a, [3, 5], w, b), [x, lw, lb], 1e-9, 1e-9)
    _run(lambda lib, a, w, b: lib.group_norm(a, 2, w, b, 1e-5, True), [x, w, b], 1e-9, 1e-9)

    def bn(lib, a, w, b, training):
        m, v = lib.tensor(rm), lib.tensor(rv)
        out = lib.batch_norm(a, w, b, m, v, training, 0.1, 1e-5, True)
        return out, m, v  # running statistics updated alike

    _run(lambda lib, a, w, b: bn(lib, a, w, b, True), [x, w, b], 1e-9, 1e-9)
    _run(lambda lib, a, w, b: bn(lib, a, w, b, False), [x, w, b], 1e-9, 1e-9)

    def inorm(lib, a, w, b):
        return lib.instance_norm(a, w, b, None, None, True, 0.1, 1e-5, True)

    _run(inorm, [x, w, b], 1e-9, 1e-9)


def test_embedding_namespace_form():
    weight = _rand((6, 3))
    idx = np.array([[0, 2, 5], [5, 1, 2]])
    _run(lambda lib, w: lib.embedding(w, lib.tensor(idx)), [weight], F64, F64)
    _run(lambda lib, w: lib.embedding(w, lib.tensor(idx), 2), [weight], F64, F64)
    _run(lambda lib, w: lib.embedding(w, lib.tensor(idx), -1, True), [weight], F64, F64)


def test_shuffles_and_pads():
    x = _rand((2, 8, 3, 4))
    _run(lambda lib, a: lib.pixel_shuffle(a, 2), [x], 0, 0)
    _run(lambda lib, a: lib.pixel_unshuffle(a.transpose(2, 3)[:, :, :, :2], 2), [x], 0, 0)
    for g in [1, 2, 4, 8]:
        _run(lambda lib, a, g=g: lib.channel_shuffle(a, g), [x], 0, 0)
    _run(lambda lib, a: lib.channel_shuffle(a, 2), [_rand((2, 4, 5))], 0, 0)
    _raises_like(lambda lib: lib.channel_shuffle(lib.ones(2, 6, 3), 4))
    _raises_like(lambda lib: lib.channel_shuffle(lib.ones(2, 6), 2))
    _run(lambda lib, a: lib.constant_pad_nd(a, (1, 2, 0, 1), 3.5), [x], 0, 0)
    _run(lambda lib, a: lib.constant_pad_nd(a, [2, 1]), [x], 0, 0)


def test_distances_namespace_forms():
    a, b = _rand((5, 4)), _rand((5, 4), 1)
    _run(lambda lib, x, y: lib.cosine_similarity(x, y), [a, b], 1e-9, 1e-9)
    _run(lambda lib, x, y: lib.cosine_similarity(x, y, 0, 1e-6), [a, b], 1e-9, 1e-9)
    _run(lambda lib, x, y: lib.pairwise_distance(x, y, 3.0, 1e-6, True), [a, b], 1e-9, 1e-9)
    for p in [2, 1, 0.5, 3, float("inf")]:
        _run(lambda lib, x, p=p: lib.pdist(x, p), [a], 1e-9, 1e-9)
    _run(lambda lib, x: lib.pdist(x), [_rand((1, 3))], F64, F64)
    _run(lambda lib, x: lib.pdist(x.t()), [_rand((3, 4))], 1e-9, 1e-9)
    _raises_like(lambda lib: lib.pdist(lib.ones(3)))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_losses_namespace_forms(reduction):
    a, b = _rand((6, 4)), _rand((6, 4), 1)
    c = _rand((6, 4), 2)
    sign = np.where(_rand(6, 3) > 0, 1.0, -1.0)
    s1 = np.where(_rand((6, 4), 4) > 0, 1.0, -1.0)
    tol = 1e-9

    _run(
        lambda lib, x, y: lib.margin_ranking_loss(x, y, lib.tensor(s1), 0.2, reduction),
        [a, b],
        tol,
        tol,
    )
    _run(
        lambda lib, x, y, z: lib.triplet_margin_loss(x, y, z, 1.0, 2.0, 1e-6, True, reduction),
        [a, b, c],
        tol,
        tol,
    )
    _run(lambda lib, x: lib.hinge_embedding_loss(x, lib.tensor(s1), 0.5, reduction), [a], tol, tol)
    pos = np.abs(b) + 0.1
    for log_input, full in [(True, False), (False, True), (True, True)]:
        _run(
            lambda lib, x, t, li=log_input, fu=full: lib.poisson_nll_loss(
                x if li else x.abs() + 0.1, t, li, fu, 1e-8, reduction
            ),
            [a, pos * 3],
            tol,
            tol,
        )
    _run(
        lambda lib, x, y: lib.cosine_embedding_loss(x, y, lib.tensor(sign), 0.1, reduction),
        [a, b],
        tol,
        tol,
    )


def test_ctc_loss_namespace_form():
    T, N, C, S = 8, 2, 5, 3
    logits = _rand((T, N, C))
    targets = np.array([[1, 2, 2], [3, 1, 0]])

    def fn(lib, x, reduction):
        lp = x.log_softmax(2)
        return lib.ctc_loss(lp, lib.tensor(targets), [T, 7], [S, 2], 0, reduction, False)

    for reduction in [0, 1, 2]:
        _run(lambda lib, x, r=reduction: fn(lib, x, r), [logits], 1e-8, 1e-8)


def test_bilinear_and_activations():
    x1, x2, w, b = _rand((3, 4)), _rand((3, 5), 1), _rand((2, 4, 5), 2), _rand(2, 3)
    _run(lambda lib, a, c, w, b: lib.bilinear(a, c, w, b), [x1, x2, w, b], 1e-9, 1e-9)
    _run(lambda lib, a, c, w: lib.bilinear(a, c, w), [x1, x2, w], 1e-9, 1e-9)
    x = _rand((4, 5))
    _run(lambda lib, a: lib.rrelu(a), [x], F64, F64)
    _run(lambda lib, a: lib.rrelu(a, 0.1, 0.3, False), [x], F64, F64)
    for name, args in [("relu_", ()), ("selu_", ()), ("celu_", (0.7,)), ("rrelu_", ())]:
        # oneflow's float64 celu gradient (F.celu itself) is good to about 2e-8 relative.
        tol = 1e-7 if name == "celu_" else F64
        _run(lambda lib, a, name=name, args=args: getattr(lib, name)(a * 1.0, *args), [x], tol, tol)
        for lib in (flow, torch):
            t = lib.tensor(x)
            assert getattr(lib, name)(t, *args) is t
    r = flow.rrelu(flow.tensor(-np.ones(1000)), 0.1, 0.3, True)
    assert ((_np(r) >= -0.3) & (_np(r) <= -0.1)).all()


def test_max_pool1d_with_indices():
    x = _rand((2, 3, 11))
    _run(lambda lib, a: lib.max_pool1d_with_indices(a, 3), [x], F64, F64)
    _run(lambda lib, a: lib.max_pool1d_with_indices(a, 3, 2, 1, 1, True), [x], F64, F64)
    _run(lambda lib, a: lib.max_pool1d_with_indices(a, [2], [1], [1], [2]), [x], F64, F64)


def test_detach():
    for lib in (flow, torch):
        a = lib.ones(3, requires_grad=True)
        b = a * 2
        d = lib.detach(b)
        assert not d.requires_grad and b.requires_grad
        assert lib.detach_(b) is b and not b.requires_grad


# ---- namespace in-place forms -----------------------------------------------------------------


INPLACE_UNARY = [
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "cos_", "cosh_", "deg2rad_", "erf_",
    "erfc_", "exp2_", "exp_", "expm1_", "fix_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "rsqrt_", "sigmoid_", "sinc_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_",
]  # fmt: skip


@pytest.mark.parametrize("name", INPLACE_UNARY)
def test_inplace_unary_namespace(name):
    # Inputs in (1.1, 1.9): inside every function's domain (acosh, atanh after scaling).
    x = np.linspace(1.1, 1.9, 12).reshape(3, 4)
    if name in ("atanh_", "arctanh_", "acos_", "arccos_", "asin_", "arcsin_", "logit_"):
        x = x / 2
    outs = []
    for lib in (flow, torch):
        t = lib.tensor(x)
        view = t.t()  # non-contiguous, written through
        assert getattr(lib, name)(view) is view
        outs.append(t)
    _same(outs[0], outs[1], 1e-12, 1e-12)


@pytest.mark.parametrize(
    "name,args",
    [
        ("clamp_", (-0.5, 0.5)),
        ("clip_", (None, 0.2)),
        ("clamp_min_", (0.1,)),
        ("clamp_max_", (0.1,)),
        ("xlogy_", (2.0,)),
        ("ldexp_", ("t",)),
        ("fill_", (3.0,)),
        ("zero_", ()),
    ],
)
def test_inplace_with_args_namespace(name, args):
    x = _rand((3, 4))
    outs = []
    for lib in (flow, torch):
        t = lib.tensor(np.abs(x) if name == "xlogy_" else x)
        a = [lib.tensor(np.arange(4.0)) if v == "t" else v for v in args]
        assert getattr(lib, name)(t, *a) is t
        outs.append(t)
    # oneflow's float64 xlogy is good to about 3e-9 relative.
    tol = 1e-8 if name == "xlogy_" else 1e-12
    _same(outs[0], outs[1], tol, tol)


def test_gcd_lcm_inplace_namespace():
    a, b = np.array([4, 6, 9, 0]), np.array([6, 4, 3, 5])
    for name in ["gcd_", "lcm_"]:
        outs = []
        for lib in (flow, torch):
            t = lib.tensor(a)
            getattr(lib, name)(t, lib.tensor(b))
            outs.append(t)
        _same(outs[0], outs[1])


def test_existing_differential_helper_on_compat_ops():
    # The shared helper: random float32 inputs, per-dtype tolerances, gradients.
    check(lambda m, a, b: m.kron(a, b), [(2, 3), (3, 2)])
    check(lambda m, a, b: m.inner(a, b), [(2, 3), (4, 3)], dtype="float64")
