"""oneflow.distributions.kumaraswamy: Kumaraswamy (PyTorch's module path)."""

from oneflow.distributions.transformed_distribution import Kumaraswamy

__all__ = ["Kumaraswamy"]
