"""oneflow.linalg: norms, inverse and determinants (LU from LAPACK)."""

from oneflow._oneflow_internal import _C
from oneflow._oneflow_internal import _LinAlgError as LinAlgError
from oneflow.framework.linalg_ops import det, inv, slogdet
from oneflow.framework.reduce_ops import linalg_norm as norm
from oneflow.framework.reduce_ops import matrix_norm, vector_norm


def cross(input, other, dim=-1):
    return _C._cross(input, other, dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices in A's last two dims (oneflow.diagonal with batch-first
    defaults)."""
    from oneflow._oneflow_internal import _C

    return _C.diagonal(A, offset, dim1, dim2)


__all__ = [
    "LinAlgError",
    "cross",
    "det",
    "diagonal",
    "inv",
    "matrix_norm",
    "norm",
    "slogdet",
    "vector_norm",
]
