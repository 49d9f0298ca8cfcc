"""oneflow.distributions.half_cauchy: HalfCauchy (PyTorch's module path)."""

from oneflow.distributions.transformed_distribution import HalfCauchy

__all__ = ["HalfCauchy"]
