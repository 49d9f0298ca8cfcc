"""Determinants on LAPACK's LU (linalg.det of CPU matrices that need a gradient or are complex,
slogdet, logdet) with PyTorch's gradients: g conj(det) A^-H from the LU (the inverse for real A),
the cofactors through the SVD for singular matrices and second order, and for slogdet's complex
sign g_logabsdet + i Im(conj(sign) g_sign). Split from linalg_decomp.py, whose helpers it uses."""

import math

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.autograd import Function
from oneflow.framework import linalg_complex as _lc
from oneflow.framework.linalg_decomp import (
    SlogdetResult,
    TorchSlogdetResult,
    _check_floating,
    _check_kernel_dtype_or_complex,
    _check_low_precision,
    _check_square,
    _diag,
    _eye,
    _getrf,
    _lu_solve_raw,
    _mH,
    _mm,
    _mT,
    _real_dtype,
    _recompute,
    _Solve,
    svd,
)

# ---- determinants -----------------------------------------------------------------------------


def _permutation_sign(pivots, like):
    """+1 or -1: the sign of the row permutation of LAPACK's 1-based interchanges, in A's real
    dtype."""
    n = pivots.shape[-1]
    from oneflow.framework.global_tensor import constant_like

    steps = oneflow.arange(1, n + 1, dtype=oneflow.int32, device=pivots.device)
    moved = _C.ne(pivots, constant_like(pivots, steps))
    parity = _C.remainder(moved.sum(-1), 2).to(_real_dtype(like))
    return _C.sub(1.0, _C.mul(parity, 2.0))


def _scaled_identity(g, n):
    """g (batch) as g I (batch x n x n), g where an identity is 1 (half of diag_embed's time;
    not eye * g, whose 0 * inf would put NaN off the diagonal)."""
    on_diagonal = _C.ne(_eye(n, (), g), 0)
    return oneflow.where(on_diagonal, g.unsqueeze(-1).unsqueeze(-1), 0.0)


def _exclusive_products(S):
    """prod_{j != i} S_j for each i along the last dim, without dividing (zeros allowed)."""
    ones = _C.ones_like(S[..., :1])
    before = _C.cumprod(_C.cat([ones, S[..., :-1]], -1), -1)
    after = _C.flip(_C.cumprod(_C.flip(_C.cat([S[..., 1:], ones], -1), [-1]), -1), [-1])
    return _C.mul(before, after)


def _det_gradient_by_svd(A, g):
    """g conj(det(U) det(Vh)) U diag(prod_{j != i} S_j) Vh with A = U diag(S) Vh: the gradient of
    det that needs no inverse (singular matrices too)."""
    from oneflow.framework.linalg_ops import det

    U, S, Vh = svd(A)
    phase = det(U) * det(Vh)  # +-1, or a unit complex number
    alpha = g * (phase.conj() if A.dtype.is_complex else phase)
    D = _exclusive_products(S).to(A.dtype) * alpha.unsqueeze(-1)
    return _mm(U * D.unsqueeze(-2), Vh)


class _Det(Function):
    """det from one LU; its gradient g conj(det) A^{-H} (from the same LU for complex A, the
    inverse for real A), and through the SVD for a batch with a singular matrix (the cofactors,
    which need no inverse) and when the gradient itself is differentiated (as PyTorch)."""

    @staticmethod
    def forward(ctx, A):
        if A.dtype.is_complex:
            LU, pivots, _ = _getrf(A)
            d = _C.mul(_C.prod(_diag(LU), -1), _permutation_sign(pivots, A).to(A.dtype))
            ctx.save_for_backward(A, d, LU, pivots)
        else:  # the C++ determinant (its own LU), and the inverse for the gradient
            d = _C.det(A)
            ctx.save_for_backward(A, d)
        return d

    @staticmethod
    def backward(ctx, g):
        A, d = ctx.saved_tensors[:2]
        n = A.shape[-1]
        if _recompute() or (n and bool(_C.eq(d, 0).any())):
            return _det_gradient_by_svd(A, g)
        if A.dtype.is_complex:
            LU, pivots = ctx.saved_tensors[2:]
            scaled = _C.mul(g, d.conj())
            return _lu_solve_raw(LU, pivots, _scaled_identity(scaled, n), True, True)
        scale = _C.mul(g, d).unsqueeze(-1).unsqueeze(-1)
        return _C.mul(_mT(_C.inverse(A)), scale)


def det_lu(A):
    """linalg.det of CPU matrices through _Det (LAPACK's LU, and a gradient)."""
    _check_square("linalg.det", A)
    _check_floating("linalg.det", A)
    _check_low_precision("linalg.det", A)
    _check_kernel_dtype_or_complex("lu_cpu", A)
    return _Det.apply(A)


class _Slogdet(Function):
    """sign and log|det| from one LU. The gradient g_L A^{-H} with g_L = g_logabsdet (real A:
    the sign is piecewise constant) or g_logabsdet + i Im(conj(sign) g_sign) (complex A: the
    sign is the phase of the determinant, exp(i Im log det))."""

    @staticmethod
    def forward(ctx, A):
        LU, pivots, _ = _getrf(A)
        d = _diag(LU)
        perm = _permutation_sign(pivots, A)
        if A.dtype.is_complex:
            sign = _C.mul(_C.prod(oneflow.sgn(d), -1), perm.to(A.dtype))
        else:
            sign = _C.mul(_C.prod(_C.sign(d), -1), perm)
        logabsdet = _C.sum(_C.log(_C.abs(d)), [-1], False)
        ctx.save_for_backward(A, LU, pivots, sign)
        # The sign requires grad, as PyTorch's (its gradient is zero for real A).
        return sign, logabsdet

    @staticmethod
    def backward(ctx, gsign, glogabsdet):
        A, LU, pivots, sign = ctx.saved_tensors
        n = LU.shape[-1]
        if glogabsdet is None:
            glogabsdet = _C.zeros_like(sign.real if A.dtype.is_complex else sign)
        g = glogabsdet
        if A.dtype.is_complex and gsign is not None and _recompute():
            sign = _Slogdet.apply(A)[0]  # with its history, for the second derivative
        if A.dtype.is_complex:
            phase = _C.zeros_like(g) if gsign is None else _C.mul(sign.conj(), gsign).imag
            g = oneflow.complex(g, phase)
        g = _scaled_identity(g, n)
        if _recompute():
            return _Solve.apply(_mH(A), g, True)[0]
        return _lu_solve_raw(LU, pivots, g, True, True)


def _slogdet(op, A):
    _check_square(op, A)
    if A.dtype.is_complex and (A.device.type != "cpu" or A.is_global):
        return _lc.slogdet(A)
    _check_floating(op, A)
    _check_low_precision(op, A)
    _check_kernel_dtype_or_complex("lu_cpu", A)
    return _Slogdet.apply(A)


def slogdet(A):
    return SlogdetResult(*_slogdet("linalg.slogdet", A))


def torch_slogdet(input):
    return TorchSlogdetResult(*_slogdet("linalg.slogdet", input))


def logdet(input):
    """log det A: NaN where the determinant is negative, -inf where it is zero; the complex
    logarithm for complex A."""
    sign, logabsdet = _slogdet("logdet", input)
    if input.dtype.is_complex:
        return oneflow.complex(logabsdet, oneflow.angle(sign))
    return _C.where(_C.eq(sign, -1.0), math.nan, logabsdet)
