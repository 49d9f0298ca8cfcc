"""oneflow.distributions.lkj_cholesky: LKJCholesky (PyTorch's module path)."""

from oneflow.distributions.matrix import LKJCholesky

__all__ = ["LKJCholesky"]
