"""oneflow.linalg's decompositions (cholesky, LU, QR, eigh, SVD) and what is built on them
(solve, lstsq, pinv, cond, slogdet, matrix_exp, ...) against PyTorch: values, gradients (float64
tightly, float32 loosely), errors, batches and broadcasting, empty inputs, and the
torch-namespace and Tensor-method forms. Where a decomposition is unique only up to signs, the
comparisons go through sign-normalised or sign-invariant quantities."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import same_error

# torch.cholesky, torch.lu and torch.lu_solve warn that they are deprecated
pytestmark = pytest.mark.filterwarnings(r"ignore:torch\.\w+ is deprecated:UserWarning")

DTYPES = ["float32", "float64"]
_TORCH = {"float32": torch.float32, "float64": torch.float64}
_FLOW = {"float32": flow.float32, "float64": flow.float64}
# (atol, rtol), scaled by the largest expected magnitude
_TOL = {"float32": (2e-4, 2e-3), "float64": (1e-9, 1e-8)}
_GRAD_TOL = {"float32": (1e-3, 5e-3), "float64": (1e-8, 1e-8)}


def _tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _np(t):
    return t.detach().cpu().numpy()


def _close(actual, expected, tol, what):
    a, e = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    scale = max(1.0, float(np.nanmax(np.abs(e)))) if e.size and np.isfinite(e).any() else 1.0
    np.testing.assert_allclose(a, e, atol=tol[0] * scale, rtol=tol[1], err_msg=what)


def compare(fn, arrays, dtype="float64", grad=True, seed=1, tol=None, grad_tol=None):
    """fn(lib, *inputs) under torch and oneflow on the same inputs: outputs equal in shape,
    dtype and value; gradients of a random linear functional of the floating outputs equal."""
    t_in = [torch.tensor(a, dtype=_TORCH[dtype], requires_grad=grad) for a in arrays]
    f_in = [flow.tensor(a, dtype=_FLOW[dtype], requires_grad=grad) for a in arrays]
    t_out, f_out = _tuple(fn(torch, *t_in)), _tuple(fn(flow, *f_in))
    assert len(t_out) == len(f_out)
    for i, (a, e) in enumerate(zip(f_out, t_out)):
        assert str(a.dtype).split(".")[-1] == str(e.dtype).split(".")[-1], f"output {i} dtype"
        if e.dtype.is_floating_point:
            _close(_np(a), _np(e), tol or _TOL[dtype], f"output {i}")
        else:
            np.testing.assert_array_equal(_np(a), _np(e), err_msg=f"output {i}")
    if not grad:
        return f_out
    rng = np.random.default_rng(seed)
    t_loss = f_loss = 0
    for a, e in zip(f_out, t_out):
        if e.dtype.is_floating_point and e.requires_grad:
            c = rng.standard_normal(tuple(e.shape))
            t_loss = t_loss + (e * torch.tensor(c, dtype=e.dtype)).sum()
            f_loss = f_loss + (a * flow.tensor(c, dtype=a.dtype)).sum()
    t_loss.backward()
    f_loss.backward()
    for i, (fl, tl) in enumerate(zip(f_in, t_in)):
        expected = np.zeros(tl.shape) if tl.grad is None else _np(tl.grad)
        actual = np.zeros(fl.shape) if fl.grad is None else _np(fl.grad)
        _close(actual, expected, grad_tol or _GRAD_TOL[dtype], f"grad of input {i}")
    return f_out


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _eye(lib, x):
    return lib.eye(x.shape[-1], dtype=x.dtype)


def _spd(lib, x):
    """A symmetric positive-definite matrix from any square x (every entry takes part)."""
    return x @ x.mT + x.shape[-1] * _eye(lib, x)


def _well(lib, x):
    """A well-conditioned square matrix."""
    return x + 2 * x.shape[-1] * _eye(lib, x)


def _sym(lib, x):
    return x + x.mT


# ---- cholesky ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 3, 3)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(shape, upper, dtype):
    compare(lambda lib, x: lib.linalg.cholesky(_spd(lib, x), upper=upper), [_rand(*shape)], dtype)


def test_cholesky_ex_info_and_errors():
    a = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]], np.eye(2)])
    L, info = flow.linalg.cholesky_ex(flow.tensor(a))
    assert info.dtype == flow.int32 and info.tolist() == [0, 2, 0]
    with pytest.raises(flow.linalg.LinAlgError, match=r"\(Batch element 1\).*order 2 is not"):
        flow.linalg.cholesky(flow.tensor(a))
    with pytest.raises(RuntimeError, match="linalg.cholesky_ex: .*positive-definite"):
        flow.linalg.cholesky_ex(flow.tensor(a), check_errors=True)
    with pytest.raises(
        flow.linalg.LinAlgError,
        match=r"^linalg.cholesky: The factorization could not be completed because the input is "
        r"not positive-definite \(the leading minor of order 2 is not positive-definite\).$",
    ):
        flow.linalg.cholesky(flow.tensor(a[1]))
    with pytest.raises(
        RuntimeError,
        match="^linalg.cholesky: A must be batches of square matrices, but they are 3 by 2 "
        "matrices$",
    ):
        flow.linalg.cholesky(flow.randn(3, 2))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper):
    def solve(lib, x, b):
        L = lib.linalg.cholesky(_spd(lib, x), upper=upper)
        return lib.cholesky_solve(b, L, upper=upper), b.cholesky_solve(L, upper)

    compare(solve, [_rand(2, 3, 3), _rand(4, 1, 3, 2, seed=1)])

    def inverse(lib, x):
        L = lib.linalg.cholesky(_spd(lib, x), upper=upper)
        return lib.cholesky_inverse(L, upper=upper), L.cholesky_inverse(upper)

    compare(inverse, [_rand(2, 4, 4)])
    # the factor's gradient is the full matrix, as PyTorch's (not its triangle)
    compare(lambda lib, L: lib.cholesky_inverse(_well(lib, L), upper), [_rand(3, 3)])
    compare(
        lambda lib, L, b: lib.cholesky_solve(b, _well(lib, L), upper), [_rand(3, 3), _rand(3, 2)]
    )


# ---- solve ------------------------------------------------------------------------------------

SOLVE_CASES = [
    ((3, 3), (3, 2), True),
    ((3, 3), (3,), True),
    ((2, 3, 3), (2, 3), True),  # a batch of vectors
    ((2, 3, 3), (3,), True),
    ((2, 3, 3), (4, 1, 3, 2), True),  # batch broadcasting
    ((3, 3), (2, 3), False),
    ((2, 1, 4, 4), (3, 5, 4), False),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(SOLVE_CASES)))
def test_solve(case, dtype):
    a, b, left = SOLVE_CASES[case]
    compare(
        lambda lib, x, y: lib.linalg.solve(_well(lib, x), y, left=left),
        [_rand(*a), _rand(*b, seed=1)],
        dtype,
    )


def test_solve_ex_and_singular():
    a = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])
    out = flow.linalg.solve_ex(flow.tensor(a), flow.ones(2, dtype=flow.float64))
    ref = torch.linalg.solve_ex(torch.tensor(a), torch.ones(2, dtype=torch.float64))
    assert out.info.tolist() == ref.info.tolist() == [0, 2]
    np.testing.assert_array_equal(_np(out.result[0]), _np(ref.result[0]))
    with pytest.raises(
        flow.linalg.LinAlgError,
        match=r"^torch.linalg.solve: \(Batch element 1\): The solver failed because the input "
        r"matrix is singular.$",
    ):
        flow.linalg.solve(flow.tensor(a), flow.ones(2, dtype=flow.float64))
    with pytest.raises(flow.linalg.LinAlgError, match="solve_ex"):
        flow.linalg.solve_ex(flow.tensor(a), flow.ones(2, dtype=flow.float64), check_errors=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular(upper, left, unitriangular, dtype):
    b = (4, 1, 3, 2) if left else (4, 1, 2, 3)
    compare(
        lambda lib, x, y: lib.linalg.solve_triangular(
            _well(lib, x), y, upper=upper, left=left, unitriangular=unitriangular
        ),
        [_rand(2, 3, 3), _rand(*b, seed=1)],
        dtype,
    )


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_of_one_matrix_and_many_columns(upper, left):
    # a batch smaller than the thread team: the columns (rows from the right) in blocks
    b = (6, 70) if left else (70, 6)
    compare(
        lambda lib, x, y: lib.linalg.solve_triangular(_well(lib, x), y, upper=upper, left=left),
        [_rand(6, 6), _rand(*b, seed=1)],
        "float64",
    )


# ---- LU ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (3, 5), (2, 5, 3)])
def test_lu_factor_and_lu(shape, dtype):
    compare(lambda lib, x: tuple(lib.linalg.lu_factor(x)), [_rand(*shape)], dtype)
    compare(lambda lib, x: tuple(lib.linalg.lu_factor_ex(x)), [_rand(*shape)], dtype)
    compare(lambda lib, x: tuple(lib.linalg.lu(x)), [_rand(*shape)], dtype)
    # the deprecated forms
    compare(lambda lib, x: lib.lu_unpack(*lib.linalg.lu_factor(x)), [_rand(*shape)], dtype)
    compare(lambda lib, x: tuple(lib.lu(x, get_infos=True)), [_rand(*shape)], dtype)
    compare(lambda lib, x: tuple(x.lu()), [_rand(*shape)], dtype)


def test_lu_errors():
    a = np.zeros((2, 3, 3))
    a[0] = np.eye(3)
    with pytest.raises(RuntimeError, match=r"lu_factor: \(Batch element 1\): U\[1,1\] is zero"):
        flow.linalg.lu_factor(flow.tensor(a))
    info = flow.linalg.lu_factor_ex(flow.tensor(a)).info
    assert info.tolist() == torch.linalg.lu_factor_ex(torch.tensor(a)).info.tolist()
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        flow.linalg.lu_factor(flow.tensor(a), pivot=False)


LU_SOLVE_CASES = [
    ((3, 3), (3, 2)),
    ((2, 3, 3), (4, 1, 3, 2)),
    ((2, 4, 4), (2, 4, 1)),
    ((6, 6), (6, 70)),  # one matrix, many columns: blocks of columns on the threads
    ((2, 5, 5), (5, 40)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(LU_SOLVE_CASES)))
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(case, left, adjoint, dtype):
    a, b = LU_SOLVE_CASES[case]
    if not left:
        b = b[:-2] + (b[-1], b[-2])

    def fn(lib, x, y):
        LU, pivots = lib.linalg.lu_factor(_well(lib, x))
        return lib.linalg.lu_solve(LU, pivots, y, left=left, adjoint=adjoint)

    compare(fn, [_rand(*a), _rand(*b, seed=1)], dtype)
    if left and not adjoint:

        def old(lib, x, y):
            LU, pivots = lib.linalg.lu_factor(_well(lib, x))
            return lib.lu_solve(y, LU, pivots), y.lu_solve(LU, pivots)

        compare(old, [_rand(*a), _rand(*b, seed=1)], dtype)


def test_lu_solve_refuses_pivots_outside_the_rows_like_torch():
    # the solves swap B's rows by the pivots: out-of-range ones must raise, not write anywhere
    LU = np.eye(4) * 2
    B = np.ones((4, 40))
    for pivots in ([0, 2, 3, 4], [-7, 2, 3, 4], [5, 2, 3, 4]):
        for adjoint in (False, True):
            same_error(
                lambda lib, pivots=pivots, adjoint=adjoint: lib.linalg.lu_solve(
                    lib.tensor(LU),
                    lib.tensor(pivots, dtype=lib.int32),
                    lib.tensor(B),
                    adjoint=adjoint,
                )
            )
    got = flow.linalg.lu_solve(
        flow.tensor(LU), flow.tensor([1, 2, 3, 4], dtype=flow.int32), flow.tensor(B)
    )
    np.testing.assert_array_equal(got.numpy(), B / 2)


def test_lu_solve_gradient_of_the_packed_factor():
    # LU itself a leaf: its strictly lower part is L's, the rest U's
    def fn(lib, lu, y):
        pivots = lib.tensor([2, 3, 3], dtype=lib.int32)
        return lib.linalg.lu_solve(_well(lib, lu), pivots, y)

    compare(fn, [_rand(3, 3), _rand(3, 2, seed=1)])


# ---- QR ---------------------------------------------------------------------------------------


def _qr_normalised(lib, x, mode):
    """Q and R with R's diagonal made non-negative: the decomposition's unique form."""
    Q, R = lib.linalg.qr(x, mode=mode)
    k = min(Q.shape[-1], R.shape[-2])
    d = lib.sign(R.diagonal(0, -2, -1).narrow(-1, 0, k))
    d = lib.where(d == 0, lib.ones_like(d), d)
    pad = R.shape[-2] - k  # complete mode with m > n: rows of zeros, columns of Q fixed by sign
    if pad:
        d = lib.cat([d, lib.ones(*d.shape[:-1], pad, dtype=d.dtype)], -1)
    return Q * d.unsqueeze(-2), R * d.unsqueeze(-1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,mode",
    [((4, 3), "reduced"), ((2, 3, 3), "complete"), ((3, 5), "reduced"), ((2, 3, 4), "complete")],
)
def test_qr(shape, mode, dtype):
    compare(lambda lib, x: _qr_normalised(lib, x, mode), [_rand(*shape)], dtype)


def test_qr_modes_without_gradient():
    a = _rand(5, 3)
    Q, R = flow.linalg.qr(flow.tensor(a), mode="complete")
    assert tuple(Q.shape) == (5, 5) and tuple(R.shape) == (5, 3)
    np.testing.assert_allclose(_np(Q @ R), a, atol=1e-12)
    np.testing.assert_allclose(_np(Q.mT @ Q), np.eye(5), atol=1e-12)
    Q, R = flow.linalg.qr(flow.tensor(a), mode="r")
    assert tuple(Q.shape) == (0,) and tuple(R.shape) == (3, 3)
    np.testing.assert_allclose(np.abs(_np(R)), np.abs(_np(torch.linalg.qr(torch.tensor(a))[1])))
    x = flow.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        flow.linalg.qr(x, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        flow.linalg.qr(x, mode="complete").Q.sum().backward()
    Q, R = flow.qr(flow.tensor(a), some=False)
    assert tuple(Q.shape) == (5, 5)
    assert tuple(flow.tensor(a).qr().Q.shape) == (5, 3)


# ---- eigh -------------------------------------------------------------------------------------


def _eigh_invariants(lib, x, uplo):
    w, V = lib.linalg.eigh(_sym(lib, x), UPLO=uplo)
    weights = lib.arange(1, V.shape[-1] + 1, dtype=V.dtype)
    # sign-invariant: the squared eigenvector entries, and V diag(weights) V^T
    return w, V * V, (V * weights) @ V.mT


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(shape, uplo, dtype):
    compare(lambda lib, x: _eigh_invariants(lib, x, uplo), [_rand(*shape)], dtype)
    compare(lambda lib, x: lib.linalg.eigvalsh(_sym(lib, x), UPLO=uplo), [_rand(*shape)], dtype)


def test_eigh_reads_one_triangle():
    a = _rand(4, 4)
    for uplo in "LU":
        f = flow.linalg.eigvalsh(flow.tensor(a), UPLO=uplo)
        t = torch.linalg.eigvalsh(torch.tensor(a), UPLO=uplo)
        np.testing.assert_allclose(_np(f), _np(t), atol=1e-12)
    # repeated eigenvalues: the eigenvalues' gradient stays finite
    x = flow.eye(3, dtype=flow.float64, requires_grad=True)
    flow.linalg.eigvalsh(x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.eye(3), atol=1e-12)


# ---- SVD --------------------------------------------------------------------------------------


def _svd_invariants(lib, x, full):
    U, S, Vh = lib.linalg.svd(x, full_matrices=full)
    k = S.shape[-1]
    U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)  # the rest of a full U is not unique
    return S, U.abs(), Vh.abs(), (U * S.unsqueeze(-2)) @ Vh


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (2, 1, 4, 2)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(shape, full, dtype):
    compare(lambda lib, x: _svd_invariants(lib, x, full), [_rand(*shape)], dtype)
    compare(lambda lib, x: lib.linalg.svdvals(x), [_rand(*shape)], dtype)


def test_svd_shapes_and_torch_svd():
    a = _rand(2, 5, 3)
    U, S, Vh = flow.linalg.svd(flow.tensor(a))
    assert tuple(U.shape) == (2, 5, 5) and tuple(Vh.shape) == (2, 3, 3)
    np.testing.assert_allclose(_np(U.mT @ U), np.broadcast_to(np.eye(5), (2, 5, 5)), atol=1e-12)

    def old(lib, x):
        U, S, V = lib.svd(x)
        return S, U.abs(), V.abs(), x.svd(some=True).S

    compare(old, [a])

    def no_uv(lib, x):
        return tuple(lib.svd(x, compute_uv=False))

    compare(no_uv, [a])
    with pytest.raises(flow.linalg.LinAlgError, match=r"\(Batch element 1\).*non-finite"):
        a[1, 0, 0] = math.nan
        flow.linalg.svd(flow.tensor(a))


# ---- pinv, matrix_rank, lstsq, cond -----------------------------------------------------------


def _rank_deficient(m, n, r, seed=0):
    return _rand(m, r, seed=seed) @ _rand(r, n, seed=seed + 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
def test_pinv(shape, dtype):
    compare(lambda lib, x: lib.linalg.pinv(x), [_rand(*shape)], dtype)
    compare(lambda lib, x: lib.pinverse(x), [_rand(*shape)], dtype)
    compare(
        lambda lib, x: lib.linalg.pinv(_sym(lib, x[..., :2, :2]), hermitian=True),
        [_rand(*shape)],
        dtype,
    )


def test_pinv_tolerances_and_rank():
    a = _rank_deficient(5, 4, 2)
    for kwargs in [{}, {"atol": 1.0}, {"rtol": 0.3}, {"atol": 0.5, "rtol": 0.1}]:
        compare(lambda lib, x, kw=kwargs: lib.linalg.pinv(x, **kw), [a], grad=False)
        compare(lambda lib, x, kw=kwargs: lib.linalg.matrix_rank(x, **kw), [a], grad=False)
    compare(lambda lib, x: lib.linalg.pinv(x, 0.2), [a], grad=False)  # rcond
    compare(lambda lib, x: lib.linalg.matrix_rank(x, 1.0), [a], grad=False)  # tol
    b = np.stack([a[:4], _rand(4, 4)])
    compare(lambda lib, x: lib.linalg.matrix_rank(x), [b], grad=False)
    compare(lambda lib, x: lib.linalg.matrix_rank(_sym(lib, x), hermitian=True), [b], grad=False)
    atol = np.array([0.0, 3.0])
    compare(
        lambda lib, x: lib.linalg.matrix_rank(x, atol=lib.tensor(atol, dtype=x.dtype)),
        [b],
        grad=False,
    )


LSTSQ_CASES = [
    ((5, 3), (5, 2)),
    ((5, 3), (5,)),
    ((2, 5, 3), (1, 5, 2)),
    ((2, 5, 3), (2, 5)),
    ((3, 5), (3, 2)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(LSTSQ_CASES)))
def test_lstsq(case, dtype):
    a, b = LSTSQ_CASES[case]
    compare(
        lambda lib, x, y: lib.linalg.lstsq(x, y).solution, [_rand(*a), _rand(*b, seed=1)], dtype
    )
    for driver in ["gelsy", "gelsd", "gelss", "gels"]:
        compare(
            lambda lib, x, y, d=driver: tuple(lib.linalg.lstsq(x, y, driver=d)),
            [_rand(*a), _rand(*b, seed=1)],
            dtype,
        )


def test_lstsq_rank_deficient():
    a, b = _rank_deficient(5, 4, 2), _rand(5, 3, seed=3)
    for driver in [None, "gelsd"]:
        compare(
            lambda lib, x, y, d=driver: tuple(lib.linalg.lstsq(x, y, driver=d)), [a, b], grad=False
        )
    # rcond cuts at a clear gap: the same rank (gelsy's truncated solution is not the SVD's, so
    # only exactly rank-deficient solutions are compared)
    u, _, vh = np.linalg.svd(_rand(4, 3))
    c = (u[:, :3] * [10.0, 1.0, 1e-4]) @ vh
    compare(lambda lib, x, y: lib.linalg.lstsq(x, y, rcond=1e-2).rank, [c, b[:4]], grad=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond(p, dtype):
    # PyTorch differentiates cond only through the singular values
    grad = p in (None, 2, -2, "nuc")
    compare(lambda lib, x: lib.linalg.cond(_well(lib, x), p), [_rand(2, 3, 3)], dtype, grad=grad)


def test_cond_singular_and_empty():
    for a in [np.zeros((3, 3)), np.array([[1.0, 2.0], [2.0, 4.0]])]:
        for p in [None, 1, -1, math.inf, "fro", "nuc"]:
            f = flow.linalg.cond(flow.tensor(a), p).item()
            t = torch.linalg.cond(torch.tensor(a), p).item()
            assert f == t or (math.isnan(f) and math.isnan(t)) or (f > 1e15 and t > 1e15), (a, p)
    for shape, p in [((2, 0, 0), 1), ((0, 3), None), ((0, 0), "fro")]:
        f, t = flow.linalg.cond(flow.zeros(*shape), p), torch.linalg.cond(torch.zeros(*shape), p)
        assert tuple(f.shape) == tuple(t.shape) and not f.numpy().any()


# ---- determinants, matrix exponential, norms --------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_slogdet_and_logdet(shape, dtype):
    compare(lambda lib, x: tuple(lib.linalg.slogdet(x)), [_rand(*shape)], dtype)
    compare(lambda lib, x: tuple(lib.slogdet(x)), [_rand(*shape)], dtype)
    compare(lambda lib, x: lib.logdet(_spd(lib, x)), [_rand(*shape)], dtype)
    compare(lambda lib, x: x.logdet(), [_rand(*shape)], dtype, grad=False)  # NaN where det < 0


def test_slogdet_singular():
    for a in [np.zeros((2, 2)), np.array([[0.0, 1.0], [1.0, 0.0]]), np.zeros((0, 0))]:
        f, t = flow.linalg.slogdet(flow.tensor(a)), torch.linalg.slogdet(torch.tensor(a))
        assert f.sign.item() == t.sign.item() and f.logabsdet.item() == t.logabsdet.item()
        fl, tl = flow.logdet(flow.tensor(a)).item(), torch.logdet(torch.tensor(a)).item()
        assert fl == tl or (math.isnan(fl) and math.isnan(tl))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,scale", [((3, 3), 0.01), ((3, 3), 0.3), ((2, 4, 4), 1.0), ((2, 3, 3), 4.0)]
)
def test_matrix_exp(shape, scale, dtype):
    x = _rand(*shape) * scale
    if len(shape) == 3:
        x[0] *= 0.1  # matrices of the batch scaled differently
    tol = {"float32": (1e-4, 1e-3), "float64": (1e-12, 1e-10)}[dtype]
    compare(lambda lib, a: lib.linalg.matrix_exp(a), [x], dtype, tol=tol)
    compare(lambda lib, a: (lib.matrix_exp(a), a.matrix_exp()), [x], dtype, tol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_matrix_norm(ord, dtype):
    compare(lambda lib, x: lib.linalg.matrix_norm(x, ord), [_rand(2, 3, 4)], dtype)
    compare(
        lambda lib, x: lib.linalg.matrix_norm(x, ord, dim=(0, 2), keepdim=True),
        [_rand(3, 2, 4)],
        dtype,
    )
    compare(lambda lib, x: lib.linalg.norm(x, ord), [_rand(4, 3)], dtype)
    compare(lambda lib, x: lib.linalg.norm(x, ord, dim=(-1, -2)), [_rand(2, 4, 3)], dtype)
    compare(lambda lib, x: lib.linalg.norm(x, 2), [_rand(5)], dtype)  # a vector norm still


# ---- second-order gradients ------------------------------------------------------------------

SECOND_ORDER = [
    lambda lib, x, y: lib.linalg.cholesky(_spd(lib, x)),
    lambda lib, x, y: lib.linalg.solve(_well(lib, x), y),
    lambda lib, x, y: lib.linalg.solve_triangular(_well(lib, x), y, upper=False),
    lambda lib, x, y: lib.linalg.lu_solve(*lib.linalg.lu_factor(_well(lib, x)), y, adjoint=True),
    lambda lib, x, y: lib.linalg.lu(x).L + lib.linalg.lu(x).U,
    lambda lib, x, y: _qr_normalised(lib, x, "reduced")[0],
    lambda lib, x, y: _eigh_invariants(lib, x, "L")[1],
    lambda lib, x, y: _svd_invariants(lib, x, False)[1],
    lambda lib, x, y: lib.linalg.pinv(x) @ y,
    lambda lib, x, y: lib.linalg.lstsq(x[:, :2], y).solution,
    lambda lib, x, y: lib.linalg.slogdet(_well(lib, x)).logabsdet,
    lambda lib, x, y: lib.linalg.matrix_exp(x * 0.5),
    lambda lib, x, y: lib.cholesky_solve(y, lib.linalg.cholesky(_spd(lib, x))),
]


@pytest.mark.parametrize("case", range(len(SECOND_ORDER)))
def test_second_order_gradients(case):
    # the rules recompute the factors differentiably under create_graph
    a, b = _rand(3, 3), _rand(3, 2, seed=1)
    grads = []
    for lib in (torch, flow):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = SECOND_ORDER[case](lib, x, y)
        gx, gy = lib.autograd.grad((out * out).sum(), (x, y), create_graph=True, allow_unused=True)
        total = (gx * gx).sum() + (0 if gy is None else (gy * gy).sum())
        grads.append(lib.autograd.grad(total, (x, y), allow_unused=True))
    for t, f in zip(*grads):
        assert (t is None) == (f is None)
        if t is not None:
            _close(_np(f), _np(t), (1e-8, 1e-7), "second-order gradient")


# ---- errors and empty inputs ------------------------------------------------------------------


def _t(lib, *shape, dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float32)


ERRORS = [
    lambda lib: lib.linalg.cholesky(_t(lib, 3)),
    lambda lib: lib.linalg.cholesky(_t(lib, 3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.cholesky(_t(lib, 3, 3, dtype=lib.float16)),
    lambda lib: lib.linalg.solve(_t(lib, 3, 2), _t(lib, 3)),
    lambda lib: lib.linalg.solve(_t(lib, 3, 3), _t(lib, 2)),
    lambda lib: lib.linalg.solve(_t(lib, 3, 3), _t(lib, 3), left=False),
    lambda lib: lib.linalg.solve(_t(lib, 3, 3), _t(lib, 3, dtype=lib.float64)),
    lambda lib: lib.linalg.solve(_t(lib, 3, 3, dtype=lib.int64), _t(lib, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.solve(_t(lib, 2, 3, 3), _t(lib, 4, 3, 1)),
    lambda lib: lib.linalg.solve_triangular(_t(lib, 3, 3), _t(lib, 3), upper=True),
    lambda lib: lib.linalg.solve_triangular(_t(lib, 3, 3), _t(lib, 2, 3), upper=True),
    lambda lib: lib.linalg.solve_triangular(_t(lib, 3, 3), _t(lib, 3, 2)),
    lambda lib: lib.linalg.solve_triangular(
        _t(lib, 3, 3, dtype=lib.int64), _t(lib, 3, 2, dtype=lib.int64), upper=True
    ),
    lambda lib: lib.linalg.lu_factor(_t(lib, 3)),
    lambda lib: lib.linalg.lu_factor(_t(lib, 3, 3, dtype=lib.int32)),
    lambda lib: lib.linalg.lu_factor(lib.zeros(2, 2)),
    lambda lib: lib.linalg.lu(_t(lib, 3, 3), pivot=False),
    lambda lib: lib.linalg.lu_solve(_t(lib, 3, 3), lib.ones(3, dtype=lib.int32), _t(lib, 2, 3)),
    lambda lib: lib.linalg.lu_solve(_t(lib, 3, 3), lib.ones(3, dtype=lib.int32), _t(lib, 3)),
    lambda lib: lib.linalg.qr(_t(lib, 3)),
    lambda lib: lib.linalg.qr(_t(lib, 3, 3), mode="bad"),
    lambda lib: lib.linalg.qr(_t(lib, 3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.eigh(_t(lib, 3, 2)),
    lambda lib: lib.linalg.eigh(_t(lib, 3, 3), UPLO="X"),
    lambda lib: lib.linalg.eigvalsh(_t(lib, 3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.svd(_t(lib, 3)),
    lambda lib: lib.linalg.svd(_t(lib, 3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.svd(lib.full((3, 3), float("nan"))),
    lambda lib: lib.linalg.svdvals(_t(lib, 3, 3, dtype=lib.float16)),
    lambda lib: lib.linalg.svdvals(_t(lib, 3, 3), driver="gesvd"),
    lambda lib: lib.linalg.pinv(_t(lib, 3)),
    lambda lib: lib.linalg.pinv(_t(lib, 3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.matrix_rank(_t(lib, 3)),
    lambda lib: lib.linalg.lstsq(_t(lib, 3), _t(lib, 3)),
    lambda lib: lib.linalg.lstsq(_t(lib, 4, 3), _t(lib, 3)),
    lambda lib: lib.linalg.lstsq(_t(lib, 4, 3), _t(lib, 3, 2)),
    lambda lib: lib.linalg.lstsq(_t(lib, 4, 3), _t(lib, 4, 2, dtype=lib.float64)),
    lambda lib: lib.linalg.lstsq(_t(lib, 3, 3), _t(lib, 2, 2, 3, 3)),
    lambda lib: lib.linalg.lstsq(_t(lib, 4, 3), _t(lib, 4, 2), driver="bad"),
    lambda lib: lib.linalg.cond(_t(lib, 3)),
    lambda lib: lib.linalg.cond(_t(lib, 3, 2), "fro"),
    lambda lib: lib.linalg.cond(_t(lib, 3, 2), 1),
    lambda lib: lib.linalg.cond(_t(lib, 3, 3), 3),
    lambda lib: lib.linalg.slogdet(_t(lib, 3, 2)),
    lambda lib: lib.linalg.slogdet(_t(lib, 3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.slogdet(_t(lib, 3, 3, dtype=lib.float16)),
    lambda lib: lib.logdet(_t(lib, 3, 2)),
    lambda lib: lib.linalg.matrix_exp(_t(lib, 3, 2)),
    lambda lib: lib.linalg.matrix_exp(_t(lib, 3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.matrix_norm(_t(lib, 3), 2),
    lambda lib: lib.linalg.matrix_norm(_t(lib, 3, 3, dtype=lib.int64), "nuc"),
    lambda lib: lib.cholesky_solve(_t(lib, 3), _t(lib, 2, 2)),
    lambda lib: lib.cholesky_solve(_t(lib, 3, 2), _t(lib, 2, 2)),
    lambda lib: lib.cholesky_solve(_t(lib, 2, 2), _t(lib, 2, 2, dtype=lib.float64)),
    lambda lib: lib.cholesky_inverse(_t(lib, 3, 2)),
    lambda lib: lib.cholesky_inverse(_t(lib, 3, 3, dtype=lib.int64)),
    lambda lib: lib.cholesky(lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib: lib.linalg.eigvalsh(_t(lib, 3, 2)),
    lambda lib: lib.linalg.pinv(_t(lib, 3, 2), hermitian=True),
    lambda lib: lib.lu_unpack(_t(lib, 3), lib.ones(3, dtype=lib.int32)),
    lambda lib: lib.linalg.matrix_norm(lib.zeros(2, 0, 3), -2),
    lambda lib: lib.linalg.lu_solve(_t(lib, 3, 3), lib.ones(2, dtype=lib.int32), _t(lib, 3, 2)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    same_error(ERRORS[case])


EMPTY = [
    lambda lib, x: lib.linalg.cholesky(x.reshape(0, 0)),
    lambda lib, x: tuple(lib.linalg.lu(x.reshape(0, 3))),
    lambda lib, x: tuple(lib.linalg.lu_factor(x.reshape(0, 3))),
    lambda lib, x: tuple(lib.linalg.qr(x.reshape(0, 3))),
    lambda lib, x: tuple(lib.linalg.qr(x.reshape(3, 0), mode="complete")),
    lambda lib, x: tuple(lib.linalg.qr(x.reshape(3, 0), mode="r")),
    lambda lib, x: tuple(lib.linalg.eigh(x.reshape(2, 0, 0))),
    lambda lib, x: tuple(lib.linalg.svd(x.reshape(0, 3))),
    lambda lib, x: tuple(lib.linalg.svd(x.reshape(2, 0, 3), full_matrices=False)),
    lambda lib, x: lib.linalg.svdvals(x.reshape(0, 2, 2)),
    lambda lib, x: lib.linalg.pinv(x.reshape(0, 3)),
    lambda lib, x: lib.linalg.matrix_rank(x.reshape(0, 3)),
    lambda lib, x: tuple(lib.linalg.slogdet(x.reshape(0, 0))),
    lambda lib, x: lib.linalg.matrix_exp(x.reshape(0, 0)),
    lambda lib, x: lib.linalg.matrix_exp(x.reshape(0, 2, 2)),
    lambda lib, x: lib.linalg.solve(x.reshape(0, 0), x.reshape(0)),
    lambda lib, x: lib.linalg.solve(x.reshape(0, 2, 2), x.reshape(0, 2)),
    lambda lib, x: lib.linalg.solve_triangular(x.reshape(0, 0), x.reshape(0, 2), upper=True),
    lambda lib, x: tuple(lib.linalg.lstsq(x.reshape(0, 3), x.reshape(0, 2))),
    lambda lib, x: tuple(lib.linalg.lstsq(x.reshape(3, 0), lib.ones(3, 2, dtype=x.dtype))),
    lambda lib, x: lib.linalg.matrix_norm(x.reshape(0, 3), "nuc"),
    lambda lib, x: lib.cholesky_inverse(x.reshape(0, 0)),
]


@pytest.mark.parametrize("case", range(len(EMPTY)))
def test_empty_inputs(case):
    compare(EMPTY[case], [np.zeros(0)], grad=False)


def _views(a):
    """a as a transposed (column-major) view, the layout LAPACK works in."""
    return flow.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).mT


VIEW_CASES = [
    ("cholesky", lambda lib, x, b: lib.linalg.cholesky(x @ x.mT + 4 * _eye(lib, x))),
    ("lu_factor", lambda lib, x, b: lib.linalg.lu_factor(x).LU),
    ("qr", lambda lib, x, b: lib.linalg.qr(x).R.abs()),
    ("eigvalsh", lambda lib, x, b: lib.linalg.eigvalsh(x)),
    ("svdvals", lambda lib, x, b: lib.linalg.svdvals(x)),
    ("solve", lambda lib, x, b: lib.linalg.solve(_well(lib, x), b)),
    ("solve_right", lambda lib, x, b: lib.linalg.solve(_well(lib, x), b.mT, left=False)),
    (
        "solve_triangular",
        lambda lib, x, b: lib.linalg.solve_triangular(_well(lib, x), b, upper=True),
    ),
    ("lu_solve", lambda lib, x, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(_well(lib, x)), b)),
]


@pytest.mark.parametrize("case", range(len(VIEW_CASES)))
@pytest.mark.parametrize("column", [False, True])
def test_inputs_are_left_alone(case, column):
    # column-major views and single columns (both row- and column-major) are read, not written
    name, fn = VIEW_CASES[case]
    a, b = _rand(2, 4, 4), _rand(2, 4, 1 if column else 3, seed=1)
    fa, fb = _views(a), (flow.tensor(b) if column else _views(b))
    out = fn(flow, fa, fb)
    expected = fn(torch, torch.tensor(a), torch.tensor(b))
    np.testing.assert_array_equal(_np(fa), a, err_msg=f"{name} wrote into A")
    np.testing.assert_array_equal(_np(fb), b, err_msg=f"{name} wrote into B")
    _close(_np(out), _np(expected), _TOL["float64"], name)


def test_names():
    for name in ["cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd", "slogdet"]:
        assert callable(getattr(flow, name)) and callable(getattr(flow.Tensor, name)), name
    for name in ["logdet", "matrix_exp", "pinverse", "lu", "lu_solve"]:
        assert callable(getattr(flow, name)) and callable(getattr(flow.Tensor, name)), name
    assert callable(flow.lu_unpack)
    for name in ["cholesky_ex", "solve_ex", "lu_factor_ex", "eigvalsh", "svdvals", "cond"]:
        assert callable(getattr(flow.linalg, name)), name
