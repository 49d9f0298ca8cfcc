"""oneflow.distributions.poisson: Poisson (PyTorch's module path)."""

from oneflow.distributions.counts import Poisson

__all__ = ["Poisson"]
