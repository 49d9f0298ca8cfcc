"""oneflow.distributions.wishart: Wishart (PyTorch's module path)."""

from oneflow.distributions.matrix import Wishart

__all__ = ["Wishart"]
