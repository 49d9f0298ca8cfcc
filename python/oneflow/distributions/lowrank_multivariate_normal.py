"""oneflow.distributions.lowrank_multivariate_normal: LowRankMultivariateNormal
(PyTorch's module path)."""

from oneflow.distributions.multivariate import LowRankMultivariateNormal

__all__ = ["LowRankMultivariateNormal"]
