"""oneflow.distributions.geometric: Geometric (PyTorch's module path)."""

from oneflow.distributions.counts import Geometric

__all__ = ["Geometric"]
