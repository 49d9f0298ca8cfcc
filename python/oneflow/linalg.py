"""oneflow.linalg: norms, inverse and determinants (LU from LAPACK)."""

from oneflow._oneflow_internal import _LinAlgError as LinAlgError
from oneflow.framework.linalg_ops import det, inv, slogdet
from oneflow.framework.reduce_ops import matrix_norm, norm, vector_norm


def cross(input, other, dim=-1):
    from oneflow.framework.linalg_ops import cross as _cross

    return _cross(input, other, dim)


__all__ = ["LinAlgError", "cross", "det", "inv", "matrix_norm", "norm", "slogdet", "vector_norm"]
