"""oneflow.distributions.exp_family: ExponentialFamily (PyTorch's module path)."""

from oneflow.distributions.distribution import ExponentialFamily

__all__ = ["ExponentialFamily"]
