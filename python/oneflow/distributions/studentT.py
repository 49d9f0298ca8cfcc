"""oneflow.distributions.studentT: StudentT (PyTorch's module path)."""

from oneflow.distributions.univariate import StudentT

__all__ = ["StudentT"]
