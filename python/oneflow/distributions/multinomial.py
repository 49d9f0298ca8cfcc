"""oneflow.distributions.multinomial: Multinomial (PyTorch's module path)."""

from oneflow.distributions.counts import Multinomial

__all__ = ["Multinomial"]
