"""oneflow.distributions.generalized_pareto: GeneralizedPareto (PyTorch's module path)."""

from oneflow.distributions.univariate import GeneralizedPareto

__all__ = ["GeneralizedPareto"]
