"""oneflow.distributions.laplace: Laplace (PyTorch's module path)."""

from oneflow.distributions.univariate import Laplace

__all__ = ["Laplace"]
