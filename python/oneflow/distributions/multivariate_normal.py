"""oneflow.distributions.multivariate_normal: MultivariateNormal (PyTorch's module path)."""

from oneflow.distributions.multivariate import MultivariateNormal

__all__ = ["MultivariateNormal"]
