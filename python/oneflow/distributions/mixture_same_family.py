"""oneflow.distributions.mixture_same_family: MixtureSameFamily (PyTorch's module path)."""

from oneflow.distributions.multivariate import MixtureSameFamily

__all__ = ["MixtureSameFamily"]
