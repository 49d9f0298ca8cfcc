"""oneflow.distributions.chi2: Chi2 (PyTorch's module path)."""

from oneflow.distributions.univariate import Chi2

__all__ = ["Chi2"]
