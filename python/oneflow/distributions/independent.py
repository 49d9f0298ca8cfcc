"""oneflow.distributions.independent: Independent (PyTorch's module path)."""

from oneflow.distributions.multivariate import Independent

__all__ = ["Independent"]
