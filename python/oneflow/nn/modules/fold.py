"""oneflow.nn.modules.fold: Fold and Unfold (PyTorch's module path)."""

from oneflow.nn.modules.layers import (  # noqa: F401
    Fold,
    Unfold,
)

__all__ = [
    "Fold",
    "Unfold",
]
