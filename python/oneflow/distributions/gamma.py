"""oneflow.distributions.gamma: Gamma (PyTorch's module path)."""

from oneflow.distributions.univariate import Gamma

__all__ = ["Gamma"]
