"""oneflow.distributions.binomial: Binomial (PyTorch's module path)."""

from oneflow.distributions.counts import Binomial

__all__ = ["Binomial"]
