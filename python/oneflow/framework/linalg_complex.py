"""Complex linear algebra on top of the real routines (linalg_decomp.py): the real block matrix
[[Re Z, -Im Z], [Im Z, Re Z]] keeps sums, products and conjugate transposes, so solves, inverses,
pseudo-inverses, least squares, exponentials, eigenvalues and singular values of complex
matrices come from the real ones of twice the size; determinants, Cholesky and QR factors run
one column per step of batched complex ops, differentiable through them or with PyTorch's
gradient formula."""

import oneflow
from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import _C
from oneflow.autograd import Function


def real_block(Z):
    """The real matrix [[Re Z, -Im Z], [Im Z, Re Z]] of a complex one: Z -> block(Z) keeps sums
    and products, so complex systems solve as real ones of twice the size."""
    r, i = Z.real, Z.imag
    return _C.cat([_C.cat([r, _C.neg(i)], -1), _C.cat([i, r], -1)], -2)


def from_real_block(X, m, k):
    """The complex matrix whose real block is X (2m x 2k): its first column of blocks."""
    return oneflow.complex(X[..., :m, :k], X[..., m:, :k])


def hermitian_part(A, upper):
    """The Hermitian matrix LAPACK reads from one triangle of A (the diagonal's real part)."""
    strict = oneflow.triu(A, 1) if upper else oneflow.tril(A, -1)
    d = A.diagonal(dim1=-2, dim2=-1).real
    return strict + strict.mH + oneflow.diag_embed(oneflow.complex(d, _C.zeros_like(d)))


def lu_pivots(A):
    """The pivots of Gaussian elimination with partial pivoting of the complex matrices in A's
    last two dims, and the sign (+1 / -1) of their row permutations: det A = parity * prod.
    One step per column, each of batched tensor ops (differentiable, without in-place updates);
    a zero pivot is divided by 1 instead, its column being zero already. Without a gradient to
    take, CPU matrices go to LAPACK's cgetrf/zgetrf instead."""
    n = A.shape[-1]
    batch = tuple(A.shape[:-2])
    real = A.real.dtype
    if (
        A.device.type == "cpu"
        and not A.is_global
        and A.numel() > 0
        and not (A.requires_grad and oneflow.is_grad_enabled())
    ):
        LU, rows, _ = _internal._lapack_lu(A)
        swaps = _C.ne(rows, oneflow.arange(1, n + 1, dtype=rows.dtype)).sum(-1)
        parity = _C.where(_C.eq(swaps % 2, 1), -1.0, 1.0).to(real)
        return LU.diagonal(0, -2, -1), parity
    pivots = []
    parity = _C.ones_like(A.real.sum([-2, -1])) if n else oneflow.ones(batch, dtype=real)
    M = A
    for k in range(n):
        m = n - k
        p = _C.argmax(_C.abs(M[..., :, 0]), -1, True)  # (batch..., 1)
        rows = oneflow.arange(m, device=A.device).expand(*batch, m)
        perm = _C.where(_C.eq(rows, 0), p, _C.where(_C.eq(rows, p), 0, rows))
        M = _C.gather(M, -2, perm.unsqueeze(-1).expand(*batch, m, m))
        parity = _C.where(_C.eq(p.squeeze(-1), 0), parity, _C.neg(parity))
        piv = M[..., 0, 0]
        pivots.append(piv)
        if m > 1:
            safe = _C.where(_C.eq(_C.abs(piv), 0), 1.0, piv)
            factors = M[..., 1:, 0] / safe.unsqueeze(-1)
            M = M[..., 1:, 1:] - factors.unsqueeze(-1) * M[..., 0:1, 1:]
    if not pivots:
        return oneflow.ones(*batch, 0, dtype=A.dtype, device=A.device), parity
    return oneflow.stack(pivots, -1), parity


def det(A):
    pivots, parity = lu_pivots(A)
    return _C.prod(pivots, -1) * parity


def slogdet(A):
    pivots, parity = lu_pivots(A)
    sign = _C.prod(oneflow.sgn(pivots), -1) * parity
    return sign, _C.sum(_C.log(_C.abs(pivots)), [-1], False)


def cholesky_raw(A, upper):
    """(L, info) of the Hermitian matrices LAPACK reads from A's lower (upper) triangle, A =
    L L^H (L^H returned when upper); info is the order of the first leading minor that is not
    positive-definite (0: none). CPU matrices go to LAPACK's cpotrf/zpotrf (which stop at that
    minor); elsewhere one column per step of batched ops, going on with a pivot of 1 there."""
    if A.device.type == "cpu" and not A.is_global:
        return _internal._lapack_cholesky(A, upper)
    n = A.shape[-1]
    M = hermitian_part(A, upper)
    info = _C.zeros_like(A.real.sum([-2, -1])).to(oneflow.int32)
    cols = []
    for k in range(n):
        d = M[..., 0, 0].real
        bad = _C.logical_not(_C.gt(d, 0))  # not positive, or NaN
        info = _C.where(_C.logical_and(_C.eq(info, 0), bad), k + 1, info)
        root = _C.sqrt(_C.where(bad, 1.0, d))
        col = M[..., 1:, 0] / root.unsqueeze(-1)
        head = oneflow.complex(root, _C.zeros_like(root)).unsqueeze(-1)
        pad = oneflow.zeros(*A.shape[:-2], k, dtype=A.dtype, device=A.device)
        cols.append(oneflow.cat([pad, head, col], -1))
        if k + 1 < n:
            M = M[..., 1:, 1:] - col.unsqueeze(-1) * col.conj().unsqueeze(-2)
    if not cols:
        return A.clone(), info
    L = oneflow.stack(cols, -1)
    return (L.mH if upper else L), info


class Cholesky(Function):
    """The complex form of _Cholesky: gA = L^-H Phi(L^H gL) L^-1 (solves on the real block
    matrix), Phi the lower triangle with its diagonal halved, made Hermitian."""

    @staticmethod
    def forward(ctx, A, upper):
        with oneflow.no_grad():
            L, info = cholesky_raw(A, upper)
        ctx.upper = upper
        ctx.save_for_backward(L)
        ctx.mark_non_differentiable(info)
        return L, info

    @staticmethod
    def backward(ctx, gL, _info):
        (L,) = ctx.saved_tensors
        if ctx.upper:
            L, gL = L.mH, gL.mH
        P = oneflow.tril(L.mH @ gL)
        phi = (P + oneflow.tril(P, -1).mH) * 0.5
        from oneflow.framework.linalg_decomp import solve

        gA = solve(L.mH, phi)
        return solve(L, gA, left=False), None


def qr(A, mode):
    """Householder QR of complex matrices with LAPACK's conventions (zgeqrf / zungqr): column k's
    reflector H = I - tau v v^H, v = (1, x_1.. / (alpha - beta)), beta = -sign(Re alpha) |x|
    (so R's diagonal is real), tau = (beta - alpha) / beta, and 0 where x has nothing below alpha
    to reflect and alpha is real. One step of batched ops per column, differentiable through
    them. Q = H_1 H_2 ... applied to the identity's first (all, for 'complete') columns."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    R = A
    vs, taus = [], []
    for j in range(k):
        x = R[..., j:, j]
        alpha = x[..., 0]
        below = (x[..., 1:].abs() ** 2).sum(-1)
        identity = _C.logical_and(_C.eq(below, 0), _C.eq(alpha.imag, 0))
        norm = _C.sqrt(alpha.real**2 + alpha.imag**2 + below)
        sign = _C.where(_C.lt(alpha.real, 0), -1.0, 1.0)
        beta = _C.where(identity, alpha.real, _C.neg(sign * norm))
        safe_beta = _C.where(_C.eq(beta, 0), 1.0, beta)
        tau = _C.where(identity, 0.0, (beta - alpha) / safe_beta)
        denom = _C.where(identity, 1.0, alpha - beta)
        v = oneflow.cat(
            [oneflow.ones_like(alpha).unsqueeze(-1), x[..., 1:] / denom.unsqueeze(-1)], -1
        )
        # R[j:, j:] <- H^H R[j:, j:] = R - conj(tau) v (v^H R)
        block = R[..., j:, j:]
        w = (v.conj().unsqueeze(-1) * block).sum(-2)  # v^H R, (batch, n - j)
        block = block - (tau.conj().unsqueeze(-1) * v).unsqueeze(-1) * w.unsqueeze(-2)
        top = R[..., :j, :]
        left = R[..., j:, :j]
        R = oneflow.cat([top, oneflow.cat([left, block], -1)], -2)
        vs.append(v)
        taus.append(tau)
    R = oneflow.triu(R)
    if mode == "r":
        return oneflow.zeros(0, dtype=A.dtype, device=A.device), (R if m <= n else R[..., :k, :])
    cols = m if mode == "complete" else k
    eye = oneflow.eye(m, cols, dtype=A.real.dtype, device=A.device)
    Q = oneflow.complex(eye, _C.zeros_like(eye)).expand(*batch, m, cols)
    for j in reversed(range(k)):  # Q <- H_j Q, from the last reflector back
        v, tau = vs[j], taus[j]
        block = Q[..., j:, :]
        w = (v.conj().unsqueeze(-1) * block).sum(-2)
        block = block - (tau.unsqueeze(-1) * v).unsqueeze(-1) * w.unsqueeze(-2)
        Q = oneflow.cat([Q[..., :j, :], block], -2)
    if mode == "complete":
        return Q, R
    return Q, R[..., :k, :]


def lstsq(A, B, rcond, driver):
    """(X, residuals, rank, singular values) of min ||A X - B||: the minimum-norm solution of the
    real block system is the block of A's (pinv(block(A)) block(B) = block(pinv(A) B)); its
    rank, singular values and residuals come in pairs."""
    from oneflow.framework import linalg_decomp

    n, k = A.shape[-1], B.shape[-1]
    X, res, rank, S = linalg_decomp.lstsq(real_block(A), real_block(B), rcond, driver=driver)
    X = from_real_block(X, n, k)
    if res.numel():
        res = res[..., :k]
    if rank.numel():
        rank = _C.floor_divide(rank, 2)
    if S.numel():
        S = S[..., ::2]
    return X, res, rank, S


def eigvalsh(A, upper):
    """The real block matrix of a Hermitian one is symmetric, with each eigenvalue twice. Values
    from the one triangle, the gradient as PyTorch's: the Hermitian V diag(g) V^H (through
    (A + A^H) / 2, which adds nothing to the value)."""
    from oneflow.framework import linalg_decomp

    s = (A + A.mH) * 0.5
    h = hermitian_part(A.detach(), upper) + (s - s.detach())
    return linalg_decomp.eigvalsh(real_block(h))[..., ::2]
