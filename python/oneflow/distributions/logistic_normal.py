"""oneflow.distributions.logistic_normal: LogisticNormal (PyTorch's module path)."""

from oneflow.distributions.transformed_distribution import LogisticNormal

__all__ = ["LogisticNormal"]
