"""oneflow.distributions.pareto: Pareto (PyTorch's module path)."""

from oneflow.distributions.univariate import Pareto

__all__ = ["Pareto"]
