"""oneflow.distributions.beta: Beta (PyTorch's module path)."""

from oneflow.distributions.univariate import Beta

__all__ = ["Beta"]
