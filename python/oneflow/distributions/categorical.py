"""oneflow.distributions.categorical: Categorical (PyTorch's module path)."""

from oneflow.distributions.discrete import Categorical

__all__ = ["Categorical"]
