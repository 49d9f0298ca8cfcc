"""oneflow.distributions.continuous_bernoulli: ContinuousBernoulli (PyTorch's module path)."""

from oneflow.distributions.univariate import ContinuousBernoulli

__all__ = ["ContinuousBernoulli"]
