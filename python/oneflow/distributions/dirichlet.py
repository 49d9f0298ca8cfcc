"""oneflow.distributions.dirichlet: Dirichlet (PyTorch's module path)."""

from oneflow.distributions.multivariate import Dirichlet

__all__ = ["Dirichlet"]
