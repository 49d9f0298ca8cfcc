"""oneflow.distributions.exponential: Exponential (PyTorch's module path)."""

from oneflow.distributions.univariate import Exponential

__all__ = ["Exponential"]
