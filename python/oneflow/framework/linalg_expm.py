"""linalg.matrix_exp: Pade approximants with scaling and squaring (Higham 2005) on the LAPACK
solves of linalg_decomp.py, PyTorch's block-matrix backward, complex matrices through their
real block matrix."""

import numpy as np

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.autograd import Function
from oneflow.framework import linalg_complex as _lc
from oneflow.framework.linalg_decomp import (
    _batch,
    _check_floating,
    _check_square,
    _eye,
    _getrf,
    _getrs,
    _lapack_dtype,
    _mm,
    _mT,
)

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": Pade
# approximant degrees, their coefficients and the 1-norm bounds below which each is accurate to
# double precision.
_PADE_COEFFICIENTS = {
    3: [120.0, 60.0, 12.0, 1.0],
    5: [30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0],
    7: [17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0],
    9: [
        17643225600.0,
        8821612800.0,
        2075673600.0,
        302702400.0,
        30270240.0,
        2162160.0,
        110880.0,
        3960.0,
        90.0,
        1.0,
    ],
    13: [
        64764752532480000.0,
        32382376266240000.0,
        7771770303897600.0,
        1187353796428800.0,
        129060195264000.0,
        10559470521600.0,
        670442572800.0,
        33522128640.0,
        1323241920.0,
        40840800.0,
        960960.0,
        16380.0,
        182.0,
        1.0,
    ],
}
_PADE_THETA = [
    (3, 1.495585217958292e-2),
    (5, 2.539398330063230e-1),
    (7, 9.504178996162932e-1),
    (9, 2.097847961257068e0),
]
_PADE_THETA_13 = 5.371920351148152


def _pade(A, degree):
    """r(A) = q(A)^{-1} p(A), p(A) = V + U, q(A) = V - U (U the odd part, V the even)."""
    b = _PADE_COEFFICIENTS[degree]
    eye = _eye(A.shape[-1], _batch(A), A)
    A2 = _mm(A, A)
    if degree == 13:
        A4 = _mm(A2, A2)
        A6 = _mm(A4, A2)

        def poly(c6, c4, c2, c0):
            return _C.add(
                _C.add(_C.mul(A6, c6), _C.mul(A4, c4)), _C.add(_C.mul(A2, c2), _C.mul(eye, c0))
            )

        U = _mm(A, _C.add(_mm(A6, poly(b[13], b[11], b[9], 0.0)), poly(b[7], b[5], b[3], b[1])))
        V = _C.add(_mm(A6, poly(b[12], b[10], b[8], 0.0)), poly(b[6], b[4], b[2], b[0]))
    else:
        powers = [eye, A2]
        while len(powers) < (degree + 1) // 2:
            powers.append(_mm(powers[-1], A2))
        U = V = None
        for j, P in enumerate(powers):
            odd, even = _C.mul(P, b[2 * j + 1]), _C.mul(P, b[2 * j])
            U = odd if U is None else _C.add(U, odd)
            V = even if V is None else _C.add(V, even)
        U = _mm(A, U)
    LU, pivots, _ = _getrf(_C.sub(V, U))
    return _getrs(LU, pivots, _C.add(V, U), False)


def _expm(A):
    """Scaling and squaring: the degree from the largest 1-norm in the batch, then for degree
    13 each matrix scaled by its own 2^-s and squared s times."""
    if A.numel() == 0:
        return oneflow.zeros_like(A)
    norms = _C.amax(_C.sum(_C.abs(A), [-2], False), [-1], False)
    largest = float(norms.max())
    for degree, theta in _PADE_THETA:
        if largest <= theta:
            return _pade(A, degree)
    s = np.nan_to_num(np.ceil(np.log2(norms.numpy().astype(np.float64) / _PADE_THETA_13)))
    s = np.clip(s, 0, 1100).astype(np.int64)
    from oneflow.framework.global_tensor import constant_like

    scale = constant_like(A, oneflow.tensor(np.ldexp(1.0, -s), dtype=A.dtype, device=A.device))
    X = _pade(_C.mul(A, scale.unsqueeze(-1).unsqueeze(-1)), 13)
    squared = constant_like(A, oneflow.tensor(s, device=A.device))
    for i in range(int(s.max(initial=0))):
        X = _C.where(_C.gt(squared, i).unsqueeze(-1).unsqueeze(-1), _mm(X, X), X)
    return X


class _MatrixExp(Function):
    """PyTorch's backward: exp([[A^T, G], [0, A^T]]) holds the gradient in its upper right
    block (Mathias 1996)."""

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return _expm(A)

    @staticmethod
    def backward(ctx, g):
        (A,) = ctx.saved_tensors
        n = A.shape[-1]
        At = _mT(A)
        top = oneflow.cat([At, g], -1)
        bottom = oneflow.cat([oneflow.zeros_like(At), At], -1)
        big = matrix_exp(oneflow.cat([top, bottom], -2))
        return big.narrow(-2, 0, n).narrow(-1, n, n)


def matrix_exp(A):
    op = "linalg.matrix_exp"
    _check_square(op, A)
    if A.dtype.is_complex:  # the real block matrix keeps products, so exp too
        n = A.shape[-1]
        return _lc.from_real_block(matrix_exp(_lc.real_block(A)), n, n)
    _check_floating(op, A)
    if not _lapack_dtype(A.dtype):  # half types: computed in float32, as their precision allows
        return _MatrixExp.apply(A.to(oneflow.float32)).to(A.dtype)
    return _MatrixExp.apply(A)
