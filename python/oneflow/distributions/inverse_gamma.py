"""oneflow.distributions.inverse_gamma: InverseGamma (PyTorch's module path)."""

from oneflow.distributions.transformed_distribution import InverseGamma

__all__ = ["InverseGamma"]
