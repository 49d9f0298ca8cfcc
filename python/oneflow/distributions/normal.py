"""oneflow.distributions.normal: Normal (PyTorch's module path)."""

from oneflow.distributions.continuous import Normal

__all__ = ["Normal"]
