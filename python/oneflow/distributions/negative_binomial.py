"""oneflow.distributions.negative_binomial: NegativeBinomial (PyTorch's module path)."""

from oneflow.distributions.counts import NegativeBinomial

__all__ = ["NegativeBinomial"]
