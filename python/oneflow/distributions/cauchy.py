"""oneflow.distributions.cauchy: Cauchy (PyTorch's module path)."""

from oneflow.distributions.univariate import Cauchy

__all__ = ["Cauchy"]
