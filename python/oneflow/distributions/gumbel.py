"""oneflow.distributions.gumbel: Gumbel (PyTorch's module path)."""

from oneflow.distributions.univariate import Gumbel

__all__ = ["Gumbel"]
