"""linalg.eig and linalg.eigvals: the eigendecomposition of general square matrices (LAPACK's
geev). Eigenvalues and eigenvectors are complex, the eigenvectors columns of unit norm, for real
and complex input alike; the gradient is PyTorch's linalg_eig_backward."""

import collections

import oneflow
from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import _C
from oneflow.autograd import Function
from oneflow.framework.linalg_decomp import (
    _batch,
    _check_gauge,
    _check_square,
    _diag,
    _dtype_name,
    _lapack,
    _mH,
    _mm,
    _needs_grad,
    solve,
)

EigResult = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])

_COMPLEX_OF = {
    oneflow.float32: oneflow.complex64,
    oneflow.float64: oneflow.complex128,
    oneflow.complex64: oneflow.complex64,
    oneflow.complex128: oneflow.complex128,
}


def _checks(op, A):
    _check_square(op, A)
    if A.dtype not in _COMPLEX_OF:
        raise NotImplementedError(
            f"\"linalg_eig_cpu\" not implemented for '{_dtype_name(A.dtype)}'"
        )
    if A.numel() and not A.is_meta and not bool(oneflow.isfinite(A).all()):
        raise RuntimeError(f"torch.{op}: input tensor should not contain infs or NaNs.")


def _geev(A, compute_v):
    if A.numel() == 0 or A.is_meta:  # meta: the shapes alone
        n, dt = A.shape[-1], _COMPLEX_OF[A.dtype]
        L = oneflow.zeros(_batch(A) + (n,), dtype=dt, device=A.device)
        V = oneflow.zeros(_batch(A) + (n, n) if compute_v else (0,), dtype=dt, device=A.device)
        return L, V
    return _lapack(_internal._lapack_eig, A, compute_v)


class _Eig(Function):
    """A V = V diag(L). With gV: gA = V^{-H} [diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) /
    (conj(L_j) - conj(L_i))] V^H, the diagonal of the bracket gL; real A takes the real part."""

    @staticmethod
    def forward(ctx, A):
        ctx.set_materialize_grads(False)
        L, V = _geev(A, True)
        ctx.real_input = not A.dtype.is_complex
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        if gL is None and gV is None:
            return None
        Vh = _mH(V)
        if gV is None:
            inner = oneflow.diag_embed(gL.to(V.dtype))
        else:
            VhgV = _mm(Vh, gV)
            _check_gauge("linalg_eig_backward", VhgV)
            VhgV = _C.sub(VhgV, _mm(Vh, _C.mul(V, _diag(VhgV).real.unsqueeze(-2))))
            Lc = L.conj()
            E = _C.sub(Lc.unsqueeze(-2), Lc.unsqueeze(-1))
            n = L.shape[-1]
            eye = oneflow.eye(n, dtype=E.dtype, device=E.device)
            inner = _C.div(VhgV, _C.add(E, eye))  # any non-zero on the diagonal
            if gL is not None:
                inner = _C.sub(inner, oneflow.diag_embed(_diag(inner)))
                inner = _C.add(inner, oneflow.diag_embed(gL.to(V.dtype)))
        gA = solve(Vh, _mm(inner, Vh))
        return gA.real if ctx.real_input else gA


def eig(A):
    """Eigenvalues and right eigenvectors (columns of unit norm) of square matrices."""
    _checks("linalg.eig", A)
    return EigResult(*_Eig.apply(A))


def eigvals(A):
    """The eigenvalues of square matrices (complex)."""
    _checks("linalg.eigvals", A)
    return _Eig.apply(A)[0] if _needs_grad(A) else _geev(A, False)[0]
