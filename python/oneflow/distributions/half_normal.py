"""oneflow.distributions.half_normal: HalfNormal (PyTorch's module path)."""

from oneflow.distributions.univariate import HalfNormal

__all__ = ["HalfNormal"]
