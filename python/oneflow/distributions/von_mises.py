"""oneflow.distributions.von_mises: VonMises (PyTorch's module path)."""

from oneflow.distributions.univariate import VonMises

__all__ = ["VonMises"]
