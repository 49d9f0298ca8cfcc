"""oneflow.distributions.uniform: Uniform (PyTorch's module path)."""

from oneflow.distributions.continuous import Uniform

__all__ = ["Uniform"]
