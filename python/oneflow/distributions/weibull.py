"""oneflow.distributions.weibull: Weibull (PyTorch's module path)."""

from oneflow.distributions.univariate import Weibull

__all__ = ["Weibull"]
