"""oneflow.distributions.log_normal: LogNormal (PyTorch's module path)."""

from oneflow.distributions.transformed_distribution import LogNormal

__all__ = ["LogNormal"]
