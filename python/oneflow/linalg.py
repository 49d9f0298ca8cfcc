"""oneflow.linalg: norms (the decompositions are not implemented yet)."""

from oneflow.framework.reduce_ops import matrix_norm, norm, vector_norm

__all__ = ["matrix_norm", "norm", "vector_norm"]
