"""oneflow.distributions.bernoulli: Bernoulli (PyTorch's module path)."""

from oneflow.distributions.discrete import Bernoulli

__all__ = ["Bernoulli"]
