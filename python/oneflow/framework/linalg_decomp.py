"""Matrix decompositions of ``oneflow.linalg`` (cholesky, LU, QR, eigh, SVD) and what is built
on them (solve, solve_triangular, lu_solve, lstsq, pinv, matrix_rank, cond, slogdet, matrix_exp,
cholesky_solve, cholesky_inverse and the spectral and nuclear matrix norms), with PyTorch's
signatures, errors and derivatives; also their torch-namespace and Tensor-method forms
(torch.svd returns V, torch.qr takes ``some``, ...).

LAPACK runs in C++ (``_oneflow_internal._lapack_*``: float32/float64 and complex on the CPU, GPU
operands copied to the host and back (``_lapack``), each matrix of a batch in turn, numerical
failure reported in ``info`` rather than raised, not differentiable). The autograd.Function
classes here hold the derivative rules, PyTorch's (FunctionsManual.cpp in torch/csrc/autograd),
written with oneflow ops so that they batch. Norms other than 2, -2 and 'nuc', det and inv live
in reduce_ops.py and linalg_ops.py.

Note [Higher-order gradients]: a derivative rule reads the forward's outputs (L, Q, R, U, S, V,
X, ...), saved as plain tensors. When the gradient is itself differentiated (create_graph, so
grad mode is on inside backward) the rule recomputes them through the differentiable functions
from the saved inputs, so that the gradient's graph reaches the inputs through them too, and the
LAPACK shortcuts (solves against a saved LU) become differentiable solves, as PyTorch does.
"""

import collections
import math

import numpy as np

import oneflow
from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import _C
from oneflow._oneflow_internal import _LinAlgError as LinAlgError
from oneflow.autograd import Function
from oneflow.framework import linalg_complex as _lc

# ---- results, as torch.return_types ----------------------------------------------------------

CholeskyExResult = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])
SolveExResult = collections.namedtuple("linalg_solve_ex", ["result", "info"])
LuFactorResult = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
LuFactorExResult = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LuResult = collections.namedtuple("linalg_lu", ["P", "L", "U"])
LuUnpackResult = collections.namedtuple("lu_unpack", ["P", "L", "U"])
QrResult = collections.namedtuple("linalg_qr", ["Q", "R"])
TorchQrResult = collections.namedtuple("qr", ["Q", "R"])
EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
SvdResult = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
TorchSvdResult = collections.namedtuple("svd", ["U", "S", "V"])
LstsqResult = collections.namedtuple(
    "linalg_lstsq", ["solution", "residuals", "rank", "singular_values"]
)
SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
TorchSlogdetResult = collections.namedtuple("slogdet", ["sign", "logabsdet"])

# ---- checks with PyTorch's messages ----------------------------------------------------------

_TORCH_DTYPE_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def _dtype_name(dtype):
    name = str(dtype).split(".")[-1]
    return _TORCH_DTYPE_NAMES.get(name, name)


def _lapack_dtype(dtype):
    return dtype in (oneflow.float32, oneflow.float64)


def _check_matrix(op, A, name="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")


def _check_square(op, A, name="A"):
    _check_matrix(op, A, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{op}: {name} must be batches of square matrices, but they are {A.shape[-2]} by "
            f"{A.shape[-1]} matrices"
        )


def _check_floating(op, A):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got "
            f"{_dtype_name(A.dtype)}"
        )


def _check_low_precision(op, A):
    if A.dtype in (oneflow.float16, oneflow.bfloat16):
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {_dtype_name(A.dtype)}")


def _check_kernel_dtype(kernel, A):
    """PyTorch's dispatch error for a dtype its LAPACK kernel lacks (integers, half types)."""
    if not _lapack_dtype(A.dtype):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype_name(A.dtype)}'")


def _check_same_dtype(op, A, B, a="A", b="B"):
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{op}: Expected {a} and {b} to have the same dtype, but found {a} of type "
            f"{_dtype_name(A.dtype)} and {b} of type {_dtype_name(B.dtype)} instead"
        )


def _check_compatible(op, A, B, left):
    n_a, n_b = (A.shape[-2], B.shape[-2]) if left else (A.shape[-1], B.shape[-1])
    if n_a != n_b:
        raise RuntimeError(
            f"{op}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
            f"{B.shape[-2]}x{B.shape[-1]})"
        )


def _first_failure(info):
    """(flat batch index, value) of the first matrix whose LAPACK info is not 0, or None."""
    if info.numel() == 0 or info.is_meta:
        return None
    values = info.numpy().reshape(-1)
    bad = np.flatnonzero(values)
    if bad.size == 0:
        return None
    return int(bad[0]), int(values[bad[0]])


def _batch_prefix(A, index):
    return f"(Batch element {index}): " if A.ndim > 2 else ""


def _check_finite(op, A):
    """PyTorch's SVD refuses NaN and infinity before LAPACK sees them."""
    if A.numel() == 0 or A.is_meta:
        return
    finite = oneflow.isfinite(A)
    if bool(finite.all()):
        return
    count = math.prod(A.shape[:-2])
    index = int(np.flatnonzero(~finite.reshape(count, -1).numpy().all(-1))[0])
    raise LinAlgError(
        f"{op}: {_batch_prefix(A, index)}The algorithm failed to converge because the input "
        "matrix contained non-finite values."
    )


# ---- small matrix helpers ---------------------------------------------------------------------


def _batch(A):
    return tuple(A.shape[:-2])


def _mT(A):
    return A.transpose(-2, -1)


def _mH(A):
    """The conjugate transpose (the transpose of a real matrix)."""
    return _mT(A).conj() if A.dtype.is_complex else _mT(A)


def _real_dtype(A):
    return {oneflow.complex64: oneflow.float32, oneflow.complex128: oneflow.float64}.get(
        A.dtype, A.dtype
    )


def _check_kernel_dtype_or_complex(kernel, A):
    if not A.dtype.is_complex:
        _check_kernel_dtype(kernel, A)


def _mm(a, b):
    return _C.matmul(a, b)


def _check_gauge(op, VhgV):
    """Complex eigenvectors are defined up to a phase each: a loss that depends on the phases has
    no gradient (PyTorch's check, with its tolerance)."""
    if VhgV.dtype.is_complex and not VhgV.is_meta:
        im = _diag(VhgV).imag
        if not bool(oneflow.allclose(im, oneflow.zeros_like(im), rtol=1e-2, atol=1e-2)):
            raise RuntimeError(
                f"{op}: The eigenvectors in the complex case are specified up to multiplication "
                "by e^{i phi}. The specified loss function depends on this quantity, so it is "
                "ill-defined."
            )


def _diag(A):
    return A.diagonal(0, -2, -1)


def _zeros(shape, like, dtype=None):
    """Zeros beside `like` (a broadcast global tensor beside a global one)."""
    from oneflow.framework.global_tensor import constant_like

    z = oneflow.zeros(tuple(shape), dtype=dtype or like.dtype, device=like.device)
    return constant_like(like, z)


def _eye(n, batch, like):
    from oneflow.framework.global_tensor import constant_like

    eye = oneflow.eye(n, dtype=like.dtype, device=like.device)
    return constant_like(like, eye.expand(*batch, n, n).contiguous())


def _recompute():
    """Whether a backward is being differentiated: see Note [Higher-order gradients]."""
    return oneflow.is_grad_enabled()


def _broadcast_batch(*tensors):
    """Expands the tensors' batch dims (all but the last two) to their broadcast shape."""
    batch = tuple(oneflow.broadcast_shapes(*[_batch(t) for t in tensors]))
    return [t.expand(*batch, *t.shape[-2:]) for t in tensors]


def _tolerance_mask(S, atol, rtol, smax):
    """S > max(atol, rtol * smax), the tolerances as floats or tensors of the batch shape."""

    def as_tensor(x):
        if isinstance(x, oneflow.Tensor):
            return x.to(oneflow.float64).unsqueeze(-1)
        return float(x)

    atol, rtol = as_tensor(atol), as_tensor(rtol)
    smax = smax.to(oneflow.float64)
    if isinstance(atol, float) and isinstance(rtol, float):
        tol = _C.clamp(_C.mul(smax, rtol), atol, None)
    else:
        tol = _C.maximum(_C.mul(smax, rtol), _C.mul(_C.ones_like(smax), atol))
    return _C.gt(S.to(oneflow.float64), tol)


def _default_tolerances(A, atol, rtol):
    """PyTorch's defaults for pinv and matrix_rank: rtol = eps * max(m, n) unless atol > 0."""
    eps_rtol = oneflow.finfo(A.dtype).eps * max(A.shape[-2], A.shape[-1])
    if rtol is None:
        if atol is None:
            rtol = eps_rtol
        elif isinstance(atol, oneflow.Tensor):
            rtol = _C.where(_C.gt(atol, 0), 0.0, eps_rtol).to(oneflow.float64)
        else:
            rtol = 0.0 if atol > 0 else eps_rtol
    return (0.0 if atol is None else atol), rtol


# ---- LAPACK, with PyTorch's answers for empty inputs --------------------------------------------


def _lapack(fn, *args):
    """Runs a LAPACK binding, which takes CPU tensors: operands on a GPU are copied to the host
    and the results back to that GPU (no cuSOLVER kernels yet)."""
    ref = next((a for a in args if isinstance(a, oneflow.Tensor) and a.is_global), None)
    if ref is not None:  # global operands: every process factors the whole value
        from oneflow.framework.global_tensor import constant_like, whole_value

        out = _lapack(fn, *[whole_value(a) if getattr(a, "is_global", False) else a for a in args])
        if isinstance(out, tuple):
            return tuple(constant_like(ref, o) for o in out)
        return constant_like(ref, out)
    gpu = next(
        (a.device for a in args if isinstance(a, oneflow.Tensor) and a.device.type == "cuda"), None
    )
    if gpu is None:
        return fn(*args)
    out = fn(*[a.cpu() if isinstance(a, oneflow.Tensor) else a for a in args])
    if isinstance(out, tuple):
        return tuple(o.to(gpu) for o in out)
    return out.to(gpu)


def _potrf(A, upper):
    if A.numel() == 0 or A.is_meta:  # meta: the shapes alone
        return oneflow.zeros_like(A), _zeros(_batch(A), A, oneflow.int32)
    return _lapack(_internal._lapack_cholesky, A, upper)


def _getrf(A):
    if A.numel() == 0 or A.is_meta:  # meta: the shapes alone
        k = min(A.shape[-2], A.shape[-1])
        return (
            oneflow.zeros_like(A),
            _zeros(_batch(A) + (k,), A, oneflow.int32),
            _zeros(_batch(A), A, oneflow.int32),
        )
    return _lapack(_internal._lapack_lu, A)


def _getrs(LU, pivots, B, adjoint):
    if B.numel() == 0 or B.is_meta:
        return oneflow.zeros_like(B)
    return _lapack(_internal._lapack_lu_solve, LU, pivots, B, adjoint)


def _trsm(A, B, upper, left, unitriangular):
    if B.numel() == 0 or B.is_meta:
        return oneflow.zeros_like(B)
    return _lapack(_internal._lapack_solve_triangular, A, B, upper, left, unitriangular)


def _geqrf(A, mode):
    if A.numel() == 0 or A.is_meta:  # meta: the shapes alone
        m, n = A.shape[-2:]
        k = min(m, n)
        R = _zeros(_batch(A) + ((m if mode == "complete" else k), n), A)
        if mode == "r":
            Q = _zeros((0,), A)
        elif mode == "complete":
            Q = _eye(m, _batch(A), A)
        else:
            Q = _zeros(_batch(A) + (m, k), A)
        return Q, R
    return _lapack(_internal._lapack_qr, A, mode)


def _syevd(A, upper, compute_v):
    if A.numel() == 0 or A.is_meta:  # meta: the shapes alone
        n = A.shape[-1]
        V = _eye(n, _batch(A), A) if compute_v else _zeros((0,), A)
        return _zeros(_batch(A) + (n,), A, _real_dtype(A)), V
    return _lapack(_internal._lapack_eigh, A, upper, compute_v)


def _gesdd(A, full_matrices, compute_uv):
    if A.numel() == 0 or A.is_meta:  # meta: the shapes alone
        m, n = A.shape[-2:]
        k = min(m, n)
        S = _zeros(_batch(A) + (k,), A, _real_dtype(A))
        if not compute_uv:
            return _zeros((0,), A), S, _zeros((0,), A)
        if full_matrices:
            return _eye(m, _batch(A), A), S, _eye(n, _batch(A), A)
        return _zeros(_batch(A) + (m, k), A), S, _zeros(_batch(A) + (k, n), A)
    return _lapack(_internal._lapack_svd, A, full_matrices, compute_uv)


def _lu_solve_raw(LU, pivots, B, left, adjoint):
    """op(A) X = B (left) or X op(A) = B, A = P L U given as (LU, pivots), op(A) = A^H when
    adjoint."""
    if left:
        return _getrs(LU, pivots, B, adjoint)
    # X op(A) = B  <=>  op(A)^H X^H = B^H
    return _mH(_getrs(LU, pivots, _mH(B), not adjoint)).contiguous()


def _permutation(pivots, m, like):
    """P of A = P L U from LAPACK's 1-based row interchanges: row i was swapped with
    pivots[i] - 1, in order."""
    batch = tuple(pivots.shape[:-1])
    if pivots.is_meta:
        return oneflow.zeros(batch + (m, m), dtype=like.dtype, device="meta")
    k = pivots.shape[-1]
    count = math.prod(batch)
    perm = np.tile(np.arange(m), (count, 1))
    rows = np.arange(count)
    swaps = pivots.numpy().reshape(count, k).astype(np.int64) - 1
    for i in range(k):
        j = swaps[:, i]
        row_i = perm[rows, i].copy()
        perm[rows, i] = perm[rows, j]
        perm[rows, j] = row_i
    P = np.zeros((count, m, m))
    P[rows[:, None], perm, np.arange(m)[None, :]] = 1.0
    from oneflow.framework.global_tensor import constant_like

    P = oneflow.tensor(P.reshape(batch + (m, m)), dtype=like.dtype, device=like.device)
    return constant_like(like, P)


def _unpack(LU, pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from a packed LU; L and U are differentiable compositions of LU."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    P = L = U = None
    if unpack_data:
        from oneflow.framework.global_tensor import constant_like

        eye = constant_like(LU, oneflow.eye(m, k, dtype=LU.dtype, device=LU.device))
        L = _C.add(LU.narrow(-1, 0, k).tril(-1), eye)
        U = LU.narrow(-2, 0, k).triu()
    if unpack_pivots:
        P = _permutation(pivots, m, LU)
    return P, L, U


# ---- cholesky ---------------------------------------------------------------------------------


class _Cholesky(Function):
    """A = L L^T; gA = L^{-T} Phi(L^T gL) L^{-1}, Phi the lower triangle with its diagonal
    halved, symmetrised (Murray 2016, arXiv:1602.07527)."""

    @staticmethod
    def forward(ctx, A, upper):
        L, info = _potrf(A, upper)
        ctx.upper = upper
        ctx.save_for_backward(A, L)
        ctx.mark_non_differentiable(info)
        return L, info

    @staticmethod
    def backward(ctx, gL, _info):
        A, L = ctx.saved_tensors
        if _recompute():
            L = _Cholesky.apply(A, ctx.upper)[0]
        if ctx.upper:
            L, gL = _mT(L), _mT(gL)
        gA = _mm(_mT(L), gL).tril()
        gA = _C.mul(_C.add(gA, _mT(gA.tril(-1))), 0.5)
        gA = solve_triangular(_mT(L), gA, upper=True, left=True)
        gA = solve_triangular(L, gA, upper=False, left=False)
        return gA, None


def _cholesky(op, A, upper, check_errors):
    _check_matrix(op, A)
    _check_square(op, A)
    if A.dtype.is_complex:
        L, info = _lc.Cholesky.apply(A, bool(upper))
    else:
        _check_floating(op, A)
        _check_kernel_dtype("cholesky_cpu", A)
        L, info = _Cholesky.apply(A, bool(upper))
    if check_errors:
        failure = _first_failure(info)
        if failure is not None:
            raise LinAlgError(
                f"{op}: {_batch_prefix(A, failure[0])}The factorization could not be completed "
                "because the input is not positive-definite (the leading minor of order "
                f"{failure[1]} is not positive-definite)."
            )
    return L, info


def cholesky(A, *, upper=False):
    return _cholesky("linalg.cholesky", A, upper, True)[0]


def cholesky_ex(A, *, upper=False, check_errors=False):
    return CholeskyExResult(*_cholesky("linalg.cholesky_ex", A, upper, check_errors))


def _cholesky_solve_raw(B, L, upper):
    # lower: L Y = B, then L^T X = Y; upper: U^T Y = B, then U X = Y
    Y = _trsm(_mT(L) if upper else L, B, False, True, False)
    return _trsm(L if upper else _mT(L), Y, True, True, False)


class _CholeskySolve(Function):
    """X = (L L^T)^{-1} B (or (U^T U)^{-1} B); PyTorch's gradient for the factor is the full
    matrix -(gB X^T + X gB^T) L, not its triangle."""

    @staticmethod
    def forward(ctx, B, L, upper):
        X = _cholesky_solve_raw(B, L, upper)
        ctx.upper = upper
        ctx.save_for_backward(B, L, X)
        return X

    @staticmethod
    def backward(ctx, gX):
        B, L, X = ctx.saved_tensors
        if _recompute():
            X = _CholeskySolve.apply(B, L, ctx.upper)
        gB = cholesky_solve(gX, L, upper=ctx.upper)
        gL = None
        if ctx.needs_input_grad[1]:
            common = _mm(gB, _mT(X))
            common = _C.add(common, _mT(common))
            gL = _C.neg(_mm(L, common) if ctx.upper else _mm(common, L))
        return (gB if ctx.needs_input_grad[0] else None), gL, None


def cholesky_solve(input, input2, upper=False):
    """torch.cholesky_solve(B, L, upper=False): solves A X = B with A = L L^T (or U^T U)."""
    B, L = input, input2
    if B.ndim < 2:
        raise RuntimeError(
            f"b should have at least 2 dimensions, but has {B.ndim} dimensions instead"
        )
    if L.ndim < 2:
        raise RuntimeError(
            f"u should have at least 2 dimensions, but has {L.ndim} dimensions instead"
        )
    if B.dtype != L.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {_dtype_name(B.dtype)} "
            f"and A of type {_dtype_name(L.dtype)} instead."
        )
    if L.shape[-1] != L.shape[-2] or L.shape[-1] != B.shape[-2]:
        raise RuntimeError(
            f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-2]} by "
            f"{L.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}"
        )
    _check_kernel_dtype("cholesky_solve_cpu", B)
    B, L = _broadcast_batch(B, L)
    return _CholeskySolve.apply(B, L, bool(upper))


class _CholeskyInverse(Function):
    """(L L^T)^{-1}; gL = -X (G + G^T) X L, X the result (PyTorch's, the full matrix)."""

    @staticmethod
    def forward(ctx, L, upper):
        X = _cholesky_solve_raw(_eye(L.shape[-1], _batch(L), L), L, upper)
        ctx.upper = upper
        ctx.save_for_backward(L, X)
        return X

    @staticmethod
    def backward(ctx, g):
        L, X = ctx.saved_tensors
        if _recompute():
            X = _CholeskyInverse.apply(L, ctx.upper)
        common = _mm(X, _mm(_C.add(g, _mT(g)), X))
        return _C.neg(_mm(L, common) if ctx.upper else _mm(common, L)), None


def cholesky_inverse(input, upper=False):
    """torch.cholesky_inverse(L, upper=False): (L L^T)^{-1} (or (U^T U)^{-1})."""
    _check_square("cholesky_inverse", input)
    _check_kernel_dtype("cholesky_inverse_out_cpu", input)
    return _CholeskyInverse.apply(input, bool(upper))


# ---- triangular solves ------------------------------------------------------------------------


class _SolveTriangular(Function):
    """X = A^{-1} B (left) or B A^{-1}; gB = A^{-T} gX (or gX A^{-T}), gA = -gB X^T (or
    -X^T gB) restricted to A's triangle (and off the diagonal when unitriangular)."""

    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        X = _trsm(A, B, upper, left, unitriangular)
        ctx.flags = (upper, left, unitriangular)
        ctx.save_for_backward(A, B, X)
        return X

    @staticmethod
    def backward(ctx, gX):
        A, B, X = ctx.saved_tensors
        upper, left, unit = ctx.flags
        if _recompute():
            X = _SolveTriangular.apply(A, B, upper, left, unit)
        gB = solve_triangular(_mT(A), gX, upper=not upper, left=left, unitriangular=unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = _C.neg(_mm(gB, _mT(X)) if left else _mm(_mT(X), gB))
            gA = gA.triu(int(unit)) if upper else gA.tril(-int(unit))
        return gA, (gB if ctx.needs_input_grad[1] else None), None, None, None


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    op = "linalg.solve_triangular"
    _check_square(op, A)
    _check_matrix(op, B, "B")
    _check_compatible(op, A, B, left)
    dtype = oneflow.promote_types(A.dtype, B.dtype)
    A, B = A.to(dtype), B.to(dtype)
    if dtype.is_complex:  # the triangle (unit diagonal) as a general complex system
        T = oneflow.triu(A) if upper else oneflow.tril(A)
        if unitriangular:
            d = T.diagonal(dim1=-2, dim2=-1)
            T = T - oneflow.diag_embed(d) + oneflow.diag_embed(oneflow.ones_like(d))
        return solve(T, B, left=left)
    _check_kernel_dtype("triangular_solve_cpu", A)
    A, B = _broadcast_batch(A, B)
    return _SolveTriangular.apply(A, B, bool(upper), bool(left), bool(unitriangular))


# ---- LU ---------------------------------------------------------------------------------------


def _lu_backward(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward (pivoted): A = P L U, L (m, k) unit lower, U (k, n); ^T is
    the conjugate transpose for complex A."""
    m, k = L.shape[-2:]
    n = U.shape[-1]
    if m == n:
        gA = _C.add(_mm(_mH(L), gL).tril(-1), _mm(gU, _mH(U)).triu())
        gA = solve_triangular(_mH(U), gA, upper=False, left=False)
        gA = solve_triangular(_mH(L), gA, upper=True, unitriangular=True)
    elif m < n:
        # A1 = P L^{-T} [gU1 + (L^T gL o 1_L - gU U^T o 1_U) U1^{-T}], A2 = P L^{-T} gU2
        gA = _C.sub(_mm(_mH(L), gL), _mm(gU.triu(), _mH(U)))
        gA = solve_triangular(_mH(U.narrow(-1, 0, k)), gA.tril(-1), upper=False, left=False)
        gA = oneflow.cat([_C.add(gA, gU.narrow(-1, 0, k).triu()), gU.narrow(-1, k, n - k)], -1)
        gA = solve_triangular(_mH(L), gA, upper=True, unitriangular=True)
    else:
        # A1 = P [gL1 + L1^{-T} (gU U^T o 1_U - L^T gL o 1_L)] U^{-T}, A2 = P gL2 U^{-T}
        gA = _C.sub(_mm(gU, _mH(U)), _mm(_mH(L), gL.tril(-1)))
        gA = solve_triangular(_mH(L.narrow(-2, 0, k)), gA.triu(), upper=True, unitriangular=True)
        gA = oneflow.cat([_C.add(gA, gL.narrow(-2, 0, k).tril(-1)), gL.narrow(-2, k, m - k)], -2)
        gA = solve_triangular(_mH(U), gA, upper=False, left=False)
    return _mm(P, gA)


class _LuFactor(Function):
    @staticmethod
    def forward(ctx, A):
        LU, pivots, info = _getrf(A)
        ctx.save_for_backward(A, LU, pivots)
        ctx.mark_non_differentiable(pivots, info)
        return LU, pivots, info

    @staticmethod
    def backward(ctx, gLU, _pivots, _info):
        A, LU, pivots = ctx.saved_tensors
        if _recompute():
            LU = _LuFactor.apply(A)[0]
        k = min(LU.shape[-2], LU.shape[-1])
        P, L, U = _unpack(LU, pivots)
        return _lu_backward(gLU.narrow(-1, 0, k), gLU.narrow(-2, 0, k), P, L, U)


def _lu_checks(op, A, pivot):
    if A.ndim < 2:
        raise RuntimeError(
            f"{op}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead"
        )
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _check_kernel_dtype_or_complex("lu_cpu", A)


def _raise_lu_failure(op, A, info):
    failure = _first_failure(info)
    if failure is not None:
        index, k = failure
        raise RuntimeError(
            f"{op}: {_batch_prefix(A, index)}U[{k},{k}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
        )


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    _lu_checks("torch.lu_factor", A, pivot)
    LU, pivots, info = _LuFactor.apply(A)
    if check_errors:
        _raise_lu_failure("torch.linalg.lu_factor_ex", A, info)
    return LuFactorExResult(LU, pivots, info)


def lu_factor(A, *, pivot=True):
    _lu_checks("torch.lu_factor", A, pivot)
    LU, pivots, info = _LuFactor.apply(A)
    _raise_lu_failure("torch.linalg.lu_factor", A, info)
    return LuFactorResult(LU, pivots)


class _Lu(Function):
    @staticmethod
    def forward(ctx, A):
        LU, pivots, _ = _getrf(A)
        P, L, U = _unpack(LU, pivots)
        ctx.save_for_backward(A, P, L, U)
        ctx.mark_non_differentiable(P)
        return P, L, U

    @staticmethod
    def backward(ctx, _gP, gL, gU):
        A, P, L, U = ctx.saved_tensors
        if _recompute():
            P, L, U = _Lu.apply(A)
        return _lu_backward(gL, gU, P, L, U)


def lu(A, *, pivot=True):
    """A = P L U with partial pivoting; L (m, k) unit lower triangular, U (k, n)."""
    _lu_checks("linalg.lu", A, pivot)
    return LuResult(*_Lu.apply(A))


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """torch.lu_unpack: (P, L, U) from lu_factor's output (empty tensors for what is not
    unpacked); differentiable in LU_data."""
    if LU_data.ndim < 2:
        raise RuntimeError(
            "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(LU_data.shape)} instead"
        )
    P, L, U = _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)
    empty = _zeros((0,), LU_data)
    return LuUnpackResult(
        empty if P is None else P, empty if L is None else L, empty if U is None else U
    )


def _lu_solve_grad_LU(gX, LU, pivots, X, left, adjoint):
    """PyTorch's linalg_lu_solve_LU: the gradient for the packed LU."""
    P, L, U = _unpack(LU, pivots, unpack_pivots=left == adjoint)
    if left != adjoint:
        # gR = U^{-H} op(-gX) op(X)^H, gU = triu(gR), gL = tril(L^{-H} gR U^H, -1)
        rhs = _mm(gX, _mH(X)) if left else _mm(_mH(gX), X)
        gR = solve_triangular(_mH(U), _C.neg(rhs), upper=False)
        gL = solve_triangular(_mH(L), _mm(gR, _mH(U)), upper=True, unitriangular=True)
        return _C.add(gL.tril(-1), gR.triu())
    # gR = -P^H op(X) op(gX)^H P L^{-H}, gL = tril(gR, -1), gU = triu(L^H gR U^{-H})
    gR = _mm(_mm(_mH(P), X if left else _mH(X)), _mH(gX) if left else gX)
    gR = _C.neg(_mm(gR, P))
    gR = solve_triangular(_mH(L), gR, upper=True, left=False, unitriangular=True)
    gU = solve_triangular(_mH(U), _mm(_mH(L), gR), upper=False, left=False)
    return _C.add(gR.tril(-1), gU.triu())


class _LuSolve(Function):
    @staticmethod
    def forward(ctx, LU, pivots, B, left, adjoint):
        X = _lu_solve_raw(LU, pivots, B, left, adjoint)
        ctx.flags = (left, adjoint)
        ctx.save_for_backward(LU, pivots, B, X)
        return X

    @staticmethod
    def backward(ctx, gX):
        LU, pivots, B, X = ctx.saved_tensors
        left, adjoint = ctx.flags
        if _recompute():
            X = _LuSolve.apply(LU, pivots, B, left, adjoint)
        gLU = gB = None
        if ctx.needs_input_grad[2]:
            gB = lu_solve(LU, pivots, gX, left=left, adjoint=not adjoint)
        if ctx.needs_input_grad[0]:
            gLU = _lu_solve_grad_LU(gX, LU, pivots, X, left, adjoint)
        return gLU, None, gB, None, None


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    op = "linalg.lu_solve"
    _check_floating("torch.linalg.lu_solve", LU)
    _check_square(op, LU)
    _check_matrix(op, B, "B")
    _check_compatible(op, LU, B, left)
    if pivots.shape[-1:] != LU.shape[-1:]:
        raise RuntimeError(
            f"{op}: Number of pivots per batch should be same as the dimension of the matrix"
        )
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(
            f"{op}: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with "
            f"shape {list(pivots.shape)} instead"
        )
    if pivots.dtype != oneflow.int32:
        raise RuntimeError(f"{op}: pivots should be a Tensor of scalar type oneflow.int32")
    _check_same_dtype(op, LU, B, "LU", "B")
    _check_kernel_dtype_or_complex("linalg.lu_solve_cpu", LU)
    LU, B = _broadcast_batch(LU, B)
    pivots = pivots.expand(*_batch(LU), LU.shape[-1]).contiguous()
    return _LuSolve.apply(LU, pivots, B, bool(left), bool(adjoint))


# ---- solve ------------------------------------------------------------------------------------


class _Solve(Function):
    """X = A^{-1} B (left) or B A^{-1} through one LU; gB = A^{-H} gX (or gX A^{-H}),
    gA = -gB X^H (or -X^H gB)."""

    @staticmethod
    def forward(ctx, A, B, left):
        LU, pivots, info = _getrf(A)
        X = _lu_solve_raw(LU, pivots, B, left, False)
        ctx.left = left
        ctx.save_for_backward(A, B, LU, pivots, X)
        ctx.mark_non_differentiable(info)
        return X, info

    @staticmethod
    def backward(ctx, gX, _info):
        A, B, LU, pivots, X = ctx.saved_tensors
        left = ctx.left
        if _recompute():
            X = _Solve.apply(A, B, left)[0]
            gB = _Solve.apply(_mH(A), gX, left)[0]
        else:
            gB = _lu_solve_raw(LU, pivots, gX, left, True)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = _C.neg(_mm(gB, _mH(X)) if left else _mm(_mH(X), gB))
        return gA, (gB if ctx.needs_input_grad[1] else None), None


def _solve(op, A, B, left, check_errors):
    _check_same_dtype("linalg.solve", A, B)
    if not A.dtype.is_complex:
        _check_floating("linalg.solve", A)
    _check_square("linalg.solve", A)
    if B.ndim < 1:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    # NumPy's rule: B is a vector (or batch of vectors) when it has one dim less than A
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    B_ = B.unsqueeze(-1) if vector else B
    _check_compatible("linalg.solve", A, B_, left)
    if A.dtype.is_complex and A.device.type == "cuda":  # no complex LAPACK there: the real
        # system of twice the size
        X, info = _solve(op, _lc.real_block(A), _lc.real_block(B_), left, check_errors)
        X = _lc.from_real_block(X, B_.shape[-2], B_.shape[-1])
        return (X.squeeze(-1) if vector else X), info
    _check_kernel_dtype_or_complex("lu_cpu", A)
    A, B_ = _broadcast_batch(A, B_)
    X, info = _Solve.apply(A, B_, bool(left))
    if check_errors:
        failure = _first_failure(info)
        if failure is not None:
            raise LinAlgError(
                f"{op}: {_batch_prefix(A, failure[0])}The solver failed because the input matrix "
                "is singular."
            )
    return (X.squeeze(-1) if vector else X), info


def solve(A, B, *, left=True):
    return _solve("torch.linalg.solve", A, B, left, True)[0]


def solve_ex(A, B, *, left=True, check_errors=False):
    return SolveExResult(*_solve("torch.linalg.solve_ex", A, B, left, check_errors))


def _inv_ex(A):
    """(inverse, info) of square float matrices, differentiable; singular ones give inf/nan."""
    n = A.shape[-1]
    return _solve("torch.linalg.solve", A, _eye(n, _batch(A), A), True, False)


# ---- QR ---------------------------------------------------------------------------------------


class _Qr(Function):
    @staticmethod
    def _square_backward(Q, R, gQ, gR):
        """m >= n: gA = [gQ + Q syminvadj(triu(gR R^H - Q^H gQ))] R^{-H}, syminvadj(T) = T + T^H
        with the real part of its diagonal halved."""
        T = _C.sub(_mm(gR, _mH(R)), _mm(_mH(Q), gQ)).triu()
        T = _C.sub(_C.add(T, _mH(T)), oneflow.diag_embed(_diag(T).real))
        gA = _C.add(_mm(Q, T), gQ)
        return solve_triangular(_mH(R), gA, upper=False, left=False)

    @staticmethod
    def forward(ctx, A, mode):
        Q, R = _geqrf(A, mode)
        ctx.mode = mode
        ctx.save_for_backward(A, Q, R)
        if mode == "r":
            ctx.mark_non_differentiable(Q)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        if ctx.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                "through linalg.qr."
            )
        A, Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
            )
        if _recompute():
            Q, R = _Qr.apply(A, ctx.mode)
        if m >= n:
            return _Qr._square_backward(Q, R, gQ, gR), None
        if Q.dtype.is_complex:
            # A = Q [R1 R2]: the square case for A1 = Q R1, where R2 = Q^H A2 adds A2 gR2^H to
            # gQ, and gA2 = Q gR2
            R1, R2 = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
            gR1, gR2 = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
            gQ1 = _C.add(gQ, _mm(_mm(Q, R2), _mH(gR2)))
            gA1 = _Qr._square_backward(Q, R1, gQ1, gR1)
            return oneflow.cat([gA1, _mm(Q, gR2)], -1), None
        # gA = Q gR + [Q tril(X - X^T) R1^{-T}, 0], X = Q^T gQ - gR R^T
        M = _C.sub(_mm(gR, _mT(R)), _mm(_mT(Q), gQ))
        gA = _mm(Q, _C.sub(_mT(M), M).tril())
        gA = solve_triangular(_mT(R.narrow(-1, 0, m)), gA, upper=False, left=False)
        gA = oneflow.cat([gA, _zeros(_batch(gA) + (m, n - m), gA)], -1)
        return _C.add(gA, _mm(Q, gR)), None


def qr(A, mode="reduced"):
    op = "linalg.qr"
    _check_matrix(op, A)
    if not A.dtype.is_complex:
        _check_floating(op, A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )
    if A.dtype.is_complex and A.device.type == "cuda":  # no complex LAPACK there: steps
        return QrResult(*_lc.qr(A, mode))
    _check_kernel_dtype_or_complex("geqrf_cpu", A)
    return QrResult(*_Qr.apply(A, mode))


# ---- symmetric eigendecomposition -------------------------------------------------------------


class _Eigh(Function):
    """A = V diag(w) V^H; gA = V [diag(gw) + skew(V^H gV) / (w_j - w_i)] V^H, the eigenvalues
    alone giving V diag(gw) V^H (finite for repeated eigenvalues). For complex A, as PyTorch,
    the diagonal of the bracket is gw when given, else the skew part's (imaginary) diagonal."""

    @staticmethod
    def forward(ctx, A, upper):
        ctx.set_materialize_grads(False)
        w, V = _syevd(A, upper, True)
        ctx.upper = upper
        ctx.save_for_backward(A, w, V)
        return w, V

    @staticmethod
    def backward(ctx, gw, gV):
        A, w, V = ctx.saved_tensors
        if _recompute():
            w, V = _Eigh.apply(A, ctx.upper)
        if gV is None:
            if gw is None:
                return None, None
            return _mm(_C.mul(V, gw.unsqueeze(-2)), _mH(V)), None
        VtgV = _mm(_mH(V), gV)
        _check_gauge("linalg_eigh_backward", VtgV)
        VtgV = _C.mul(_C.sub(VtgV, _mH(VtgV)), 0.5)
        gaps = _C.sub(w.unsqueeze(-2), w.unsqueeze(-1))
        gaps = _C.add(gaps, _eye(w.shape[-1], _batch(w.unsqueeze(-1)), w))  # non-zero diagonal
        inner = _C.div(VtgV, gaps)
        if gw is not None:
            if V.dtype.is_complex:  # the diagonal becomes gw
                inner = _C.sub(inner, oneflow.diag_embed(_diag(inner)))
            inner = _C.add(inner, oneflow.diag_embed(gw))
        return _mm(V, _mm(inner, _mH(V))), None


def _uplo(UPLO):
    if not isinstance(UPLO, str) or len(UPLO) != 1 or UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper() == "U"


def _needs_grad(A):
    return A.requires_grad and oneflow.is_grad_enabled()


def eigh(A, UPLO="L"):
    upper = _uplo(UPLO)
    _check_square("linalg.eigh", A)
    _check_kernel_dtype_or_complex("linalg_eigh_cpu", A)
    return EighResult(*_Eigh.apply(A, upper))


def eigvalsh(A, UPLO="L"):
    upper = _uplo(UPLO)
    _check_square("linalg.eigh", A)
    _check_kernel_dtype_or_complex("linalg_eigh_cpu", A)
    if _needs_grad(A):  # the gradient needs the eigenvectors
        return _Eigh.apply(A, upper)[0]
    return _syevd(A, upper, False)[0]


# ---- singular value decomposition -------------------------------------------------------------


class _Svd(Function):
    """PyTorch's svd_backward, ^T the conjugate transpose for complex A (which also adds
    i Im(diag(U^H gU)) / S on the diagonal). With full_matrices only the first k = min(m, n)
    columns of U and rows of Vh take part, as in PyTorch."""

    @staticmethod
    def forward(ctx, A, full_matrices):
        ctx.set_materialize_grads(False)
        U, S, Vh = _gesdd(A, full_matrices, True)
        ctx.full_matrices = full_matrices
        ctx.save_for_backward(A, U, S, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        A, U, S, Vh = ctx.saved_tensors
        if gU is None and gS is None and gVh is None:
            return None, None
        if _recompute():
            U, S, Vh = _Svd.apply(A, ctx.full_matrices)
        k = S.shape[-1]
        if ctx.full_matrices:
            U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
            gU = None if gU is None else gU.narrow(-1, 0, k)
            gVh = None if gVh is None else gVh.narrow(-2, 0, k)
        m, n = U.shape[-2], Vh.shape[-1]
        if gU is None and gVh is None:  # singular values only: U diag(gS) Vh
            if m >= n:
                return _mm(U, _C.mul(gS.unsqueeze(-1), Vh)), None
            return _mm(_C.mul(U, gS.unsqueeze(-2)), Vh), None
        S2 = _C.mul(S, S)
        E = _C.sub(S2.unsqueeze(-2), S2.unsqueeze(-1))
        E = _C.add(E, _eye(k, _batch(S.unsqueeze(-1)), S))  # any non-zero on the diagonal
        UhgU = VhgV = None
        if gU is not None:
            UhgU = _mm(_mH(U), gU)
            UhgU = _C.sub(UhgU, _mH(UhgU))
        if gVh is not None:
            VhgV = _mm(Vh, _mH(gVh))
            VhgV = _C.sub(VhgV, _mH(VhgV))
        if U.dtype.is_complex and not U.is_meta:
            # a loss that depends on the vectors' phases: Im diag(U^H gU + V^H gV) != 0
            im_u = _diag(UhgU).imag if UhgU is not None else oneflow.zeros_like(S)
            im_v = _diag(VhgV).imag if VhgV is not None else oneflow.zeros_like(S)
            if not bool(oneflow.allclose(im_u, _C.neg(im_v), rtol=1e-2, atol=1e-2)):
                raise RuntimeError(
                    "svd_backward: The singular vectors in the complex case are specified up to "
                    "multiplication by e^{i phi}. The specified loss function depends on this "
                    "phase term, making it ill-defined."
                )
        if UhgU is not None and VhgV is not None:
            inner = _C.div(_C.add(_C.mul(UhgU, S.unsqueeze(-2)), _C.mul(S.unsqueeze(-1), VhgV)), E)
        elif UhgU is not None:
            inner = _C.mul(_C.div(UhgU, E), S.unsqueeze(-2))
        else:
            inner = _C.mul(S.unsqueeze(-1), _C.div(VhgV, E))
        if gS is not None:
            inner = _C.add(inner, oneflow.diag_embed(gS))
        if UhgU is not None and U.dtype.is_complex:
            imag = _C.div(_diag(UhgU).imag, _C.mul(S, 2.0))  # UhgU is skew: 2i Im on its diagonal
            inner = _C.add(
                inner, oneflow.diag_embed(oneflow.complex(oneflow.zeros_like(imag), imag))
            )
        if m > n and gU is not None:
            # gA = [U inner + (I - U U^T) gU S^{-1}] Vh
            gA = _mm(U, inner)
            gUSinv = _C.div(gU, S.unsqueeze(-2))
            gA = _C.sub(_C.add(gA, gUSinv), _mm(U, _mm(_mH(U), gUSinv)))
            return _mm(gA, Vh), None
        if m < n and gVh is not None:
            # gA = U [inner Vh + S^{-1} gVh (I - V Vh)]
            gA = _mm(inner, Vh)
            SinvgVh = _C.div(gVh, S.unsqueeze(-1))
            gA = _C.sub(_C.add(gA, SinvgVh), _mm(_mm(SinvgVh, _mH(Vh)), Vh))
            return _mm(U, gA), None
        return _mm(U, _mm(inner, Vh)), None


def _svd_checks(A, driver):
    _check_matrix("linalg.svd", A)
    _check_floating("linalg.svd", A)
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
            "cuSOLVER backend."
        )
    _check_kernel_dtype_or_complex("linalg_svd_cpu", A)
    _check_finite("linalg.svd", A)


def svd(A, full_matrices=True, *, driver=None):
    _svd_checks(A, driver)
    return SvdResult(*_Svd.apply(A, bool(full_matrices)))


def svdvals(A, *, driver=None):
    _svd_checks(A, driver)
    if _needs_grad(A):  # the gradient needs the singular vectors
        return _Svd.apply(A, False)[1]
    return _gesdd(A, False, False)[1]


# ---- pseudo-inverse, rank, least squares, condition number --------------------------------------


def _pinv_raw(A, atol, rtol, hermitian):
    m, n = A.shape[-2:]
    if A.numel() == 0:
        return _zeros(_batch(A) + (n, m), A)
    if hermitian:
        w, V = _syevd(A, False, True)
        absw = _C.abs(w)
        keep = _tolerance_mask(absw, atol, rtol, absw.amax(-1, keepdim=True))
        winv = _C.where(keep, _C.reciprocal(w), _C.zeros_like(w))
        return _mm(_C.mul(V, winv.unsqueeze(-2)), _mT(V))
    U, S, Vh = _gesdd(A, False, True)
    keep = _tolerance_mask(S, atol, rtol, S.narrow(-1, 0, 1))
    Sinv = _C.where(keep, _C.reciprocal(S), _C.zeros_like(S))
    return _mm(_C.mul(_mT(Vh), Sinv.unsqueeze(-2)), _mT(U))


def _pinv_backward(g, pinvA, A):
    """PyTorch's pinv_backward: the derivative of A^+ at constant rank."""
    m, n = A.shape[-2:]
    pinvAt, gt = _mT(pinvA), _mT(g)
    if m <= n:
        K = _mm(gt, pinvA)
        KpinvAt = _mm(K, pinvAt)
        out = _C.sub(KpinvAt, _mT(_mm(pinvA, K)))
        out = _C.sub(out, _mm(_mm(A, pinvA), KpinvAt))
        return _C.add(out, _mm(_mm(pinvAt, pinvA), _C.sub(gt, _mm(K, A))))
    K = _mm(pinvA, gt)
    pinvAtK = _mm(pinvAt, K)
    out = _C.sub(_mm(_mm(_C.sub(gt, _mm(A, K)), pinvA), pinvAt), _mT(_mm(K, pinvA)))
    return _C.sub(_C.add(out, pinvAtK), _mm(_mm(pinvAtK, pinvA), A))


class _Pinv(Function):
    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        out = _pinv_raw(A, atol, rtol, hermitian)
        ctx.args = (atol, rtol, hermitian)
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, g):
        A, pinvA = ctx.saved_tensors
        if _recompute():
            pinvA = _Pinv.apply(A, *ctx.args)
        return _pinv_backward(g, pinvA, A), None, None, None


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The pseudo-inverse: singular values (absolute eigenvalues when hermitian) at most
    max(atol, rtol * largest) are dropped. rcond, NumPy's name, is rtol with atol = 0."""
    if A.ndim < 2 or not (_lapack_dtype(A.dtype) or A.dtype.is_complex):
        raise RuntimeError(
            f"linalg.pinv({_dtype_name(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 "
            "or more dimensions of float, double, cfloat or cdouble types"
        )
    if rcond is not None:
        atol, rtol = 0.0, rcond
    atol, rtol = _default_tolerances(A, atol, rtol)
    if hermitian:
        _check_square("linalg.eigh", A)
    if A.dtype.is_complex:
        # The real block matrix keeps products and conjugate transposes, so its pseudo-inverse
        # is the block of A's (Penrose's conditions), with the same singular values.
        X = pinv(_lc.real_block(A), hermitian=hermitian, atol=atol, rtol=rtol)
        return _lc.from_real_block(X, A.shape[-1], A.shape[-2])
    return _Pinv.apply(A, atol, rtol, bool(hermitian))


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values (absolute eigenvalues when hermitian) above
    max(atol, rtol * largest); tol, the older name, is atol with rtol = 0."""
    if A.ndim < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    if not (_lapack_dtype(A.dtype) or A.dtype.is_complex):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _default_tolerances(A, atol, rtol)
    with oneflow.no_grad():
        if min(A.shape[-2:]) == 0:
            return _zeros(_batch(A), A, oneflow.int64)
        S = _C.abs(eigvalsh(A)) if hermitian else svdvals(A)
        keep = _tolerance_mask(S, atol, rtol, S.amax(-1, keepdim=True))
        return keep.sum(-1).to(oneflow.int64)


class _Lstsq(Function):
    """The minimum-norm least-squares solution through the SVD (singular values at most
    rcond * largest dropped, as gelsy/gelsd do); PyTorch's gradient through pinv(A)."""

    @staticmethod
    def forward(ctx, A, B, rcond):
        m, n = A.shape[-2:]
        k = min(m, n)
        if A.numel() == 0 or B.numel() == 0:
            X = _zeros(_batch(A) + (n, B.shape[-1]), A)
            rank = _zeros(_batch(A), A, oneflow.int64)
            S = _zeros(_batch(A) + (k,), A)
        else:
            U, S, Vh = _gesdd(A, False, True)
            keep = _tolerance_mask(S, 0.0, rcond, S.narrow(-1, 0, 1))
            Sinv = _C.where(keep, _C.reciprocal(S), _C.zeros_like(S))
            X = _mm(_mT(Vh), _C.mul(Sinv.unsqueeze(-1), _mm(_mT(U), B)))
            rank = keep.sum(-1).to(oneflow.int64)
        ctx.save_for_backward(A, B)
        ctx.mark_non_differentiable(rank, S)
        return X, rank, S

    @staticmethod
    def backward(ctx, gX, _rank, _S):
        A, B = ctx.saved_tensors
        tolerances = _default_tolerances(A, None, None)
        if _recompute():
            pinvA = _Pinv.apply(A, *tolerances, False)
        else:
            pinvA = _pinv_raw(A, *tolerances, False)
        gA = gB = None
        if ctx.needs_input_grad[0]:
            gA = _pinv_backward(_mm(gX, _mT(B)), pinvA, A)
        if ctx.needs_input_grad[1]:
            gB = _mm(_mT(pinvA), gX)
        return gA, gB, None


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """min ||A X - B||_F, as PyTorch's CPU drivers report it: residuals for m > n except with
    gelsy (the default; with gelsd/gelss only when every matrix has full rank), rank except with
    gels, singular values with gelsd/gelss."""
    op = "torch.linalg.lstsq"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError(f"{op}: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{op}: Expected input and other to have the same dtype, but got input's dtype "
            f"{_dtype_name(A.dtype)} and other's dtype {_dtype_name(B.dtype)}"
        )
    vector = A.ndim - B.ndim
    if not 0 <= vector <= 1:
        raise RuntimeError(
            f"{op}: input.dim() must be greater or equal to other.dim() and "
            "(input.dim() - other.dim()) <= 1"
        )
    B_ = B.unsqueeze(-1) if vector else B
    if A.shape[-2] != B_.shape[-2]:
        raise RuntimeError(
            f"{op}: input.size(-2) should match other.size({'-1' if vector else '-2'})"
        )
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if not (_lapack_dtype(A.dtype) or A.dtype.is_complex):
        raise RuntimeError("This function doesn't handle types other than float and double")
    m, n = A.shape[-2:]
    if rcond is None:
        rcond = oneflow.finfo(A.dtype).eps * max(m, n)
    if A.dtype.is_complex:
        X, res, rank, S = _lc.lstsq(A, B_, rcond, driver)
        return LstsqResult(X.squeeze(-1) if vector else X, res, rank, S)
    A, B_ = _broadcast_batch(A, B_)
    X, rank, S = _Lstsq.apply(A, B_, 0.0 if driver == "gels" else float(rcond))
    empty = _zeros((0,), A)
    residuals = empty
    if m > n and driver != "gelsy":
        if driver == "gels" or bool(_C.eq(rank, n).all()):
            # Danskin: X is optimal, so only the explicit dependence on A and B is differentiated
            r = _C.sub(_mm(A, X.detach()), B_)
            residuals = _C.sum(_C.mul(r, r), [-2], False)
    if driver == "gels":
        rank = _zeros((0,), A, oneflow.int64)
    if driver not in ("gelsd", "gelss"):
        S = empty
    return LstsqResult(X.squeeze(-1) if vector else X, residuals, rank, S)


_COND_ORDS = (2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def cond(A, p=None):
    """The condition number ||A|| ||A^{-1}|| in the norm p: the ratio of extreme singular
    values for None and +-2; an inverse and a matrix norm for the others (inf where A is
    singular, as PyTorch)."""
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is not None and not any(
        p == q and isinstance(p, str) == isinstance(q, str) for q in _COND_ORDS
    ):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if isinstance(p, str):
        _check_square(f"linalg.cond(ord={p})", A)
    if A.numel() == 0:
        dtype = A.dtype if A.dtype.is_floating_point else oneflow.get_default_dtype()
        return _zeros(_batch(A), A, dtype)
    if p is None or p in (2, -2):
        s = svdvals(A)
        big, small = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (_C.div(small, big) if p == -2 else _C.div(big, small)).squeeze(-1)
    if p == "nuc":
        # through the singular values: the nuclear norm of an inverse full of inf is undefined
        s = svdvals(A)
        return _C.mul(_C.sum(s, [-1], False), _C.sum(_C.reciprocal(s), [-1], False))
    if not isinstance(p, str):
        name = str(p) if isinstance(p, int) or math.isinf(p) else f"{float(p):.6f}"
        _check_square(f"linalg.cond(ord={name})", A)
    _check_floating("linalg.inv", A)
    _check_low_precision("linalg.inv", A)
    inverse, info = _inv_ex(A)
    singular = _C.gt(info, 0).unsqueeze(-1).unsqueeze(-1)
    inverse = _C.where(singular, math.inf, inverse)
    result = _C.mul(matrix_norm(A, p), matrix_norm(inverse, p))
    return _C.where(_C.ne(result, result), math.inf, result)  # 0 * inf, as NumPy


# ---- norms through singular values --------------------------------------------------------------


def _svd_ord(ord):
    if isinstance(ord, str):
        return ord == "nuc"
    return ord in (2, -2)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """linalg.matrix_norm; ord 2, -2 and 'nuc' from the singular values, the others in
    reduce_ops."""
    from oneflow.framework import reduce_ops

    if not _svd_ord(ord):
        return reduce_ops.matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    op = "linalg.matrix_norm"
    x = A if dtype is None else A.to(dtype)
    _check_matrix(op, x)
    if not x.dtype.is_complex:  # complex: singular values of the real block matrix
        _check_floating(op, x)
    _check_low_precision(op, x)
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple, got {dim}")
    for d in dim:
        if not -x.ndim <= d < x.ndim:
            raise IndexError(
                f"{op}: dimension out of range (expected to be in range of [{-x.ndim}, "
                f"{x.ndim - 1}], but got {d})"
            )
    d0, d1 = dim[0] % x.ndim, dim[1] % x.ndim
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different, got ({dim[0]}, {dim[1]})")
    rest = [d for d in range(x.ndim) if d not in (d0, d1)]
    s = svdvals(x.permute(*rest, d0, d1))
    if s.shape[-1] == 0:
        if ord == -2 and s.numel() == 0 and math.prod(s.shape[:-1]):
            raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
        out = _C.sum(s, [-1], False)  # zeros, in the graph (they require grad as PyTorch's)
    elif ord == "nuc":
        out = _C.sum(s, [-1], False)
    else:
        out = (_C.amax if ord == 2 else _C.amin)(s, [-1], False)
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """linalg.norm; the matrix norms 2, -2 and 'nuc' here, the rest in reduce_ops."""
    from oneflow.framework import reduce_ops

    if ord is not None and _svd_ord(ord):
        dims = [dim] if isinstance(dim, int) else (None if dim is None else list(dim))
        if dims is None and A.ndim == 2:
            dims = [0, 1]
        if dims is not None and len(dims) == 2:
            return matrix_norm(A, ord, tuple(dims), keepdim, dtype=dtype)
    return reduce_ops.linalg_norm(A, ord, dim, keepdim, dtype=dtype)


# ---- the torch namespace's older forms ----------------------------------------------------------


def torch_cholesky(input, upper=False):
    """torch.cholesky (deprecated in PyTorch): linalg.cholesky."""
    return _cholesky("cholesky", input, upper, True)[0]


def torch_qr(input, some=True):
    return TorchQrResult(*qr(input, "reduced" if some else "complete"))


def torch_svd(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) with V = Vh^T; without compute_uv, U and V are zero matrices of
    shape (m, m) and (n, n)."""
    if not compute_uv:
        m, n = input.shape[-2:]
        S = svdvals(input)
        U = _zeros(_batch(input) + (m, m), input)
        return TorchSvdResult(U, S, _zeros(_batch(input) + (n, n), input))
    U, S, Vh = svd(input, full_matrices=not some)
    return TorchSvdResult(U, S, _mT(Vh))


def torch_lu(A, pivot=True, get_infos=False):
    """torch.lu (deprecated in PyTorch): (LU, pivots[, infos]) of linalg.lu_factor_ex; a
    singular matrix does not raise."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def torch_lu_solve(b, LU_data, LU_pivots):
    """torch.lu_solve (deprecated in PyTorch): linalg.lu_solve with the arguments reordered."""
    return lu_solve(LU_data, LU_pivots, b)


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def functions():
    """The torch-namespace names, merged into oneflow by oneflow/__init__.py."""
    return {
        "cholesky": torch_cholesky,
        "cholesky_solve": cholesky_solve,
        "cholesky_inverse": cholesky_inverse,
        "qr": torch_qr,
        "svd": torch_svd,
        "lu": torch_lu,
        "lu_solve": torch_lu_solve,
        "lu_unpack": lu_unpack,
        "slogdet": torch_slogdet,
        "logdet": logdet,
        "matrix_exp": matrix_exp,
        "pinverse": pinverse,
    }


def methods():
    """The Tensor methods PyTorch has for these (Tensor.lu_unpack it has not)."""
    out = functions()
    out.pop("lu_unpack")
    return out


# The determinants and the matrix exponential, in modules of their own (imported last: they use
# the helpers above).
from oneflow.framework.linalg_det import (  # noqa: E402, F401
    _slogdet,
    det_lu,
    logdet,
    slogdet,
    torch_slogdet,
)
from oneflow.framework.linalg_expm import matrix_exp  # noqa: E402, F401
