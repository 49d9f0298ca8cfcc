"""oneflow.nn.modules.flatten: Flatten and Unflatten (PyTorch's module path)."""

from oneflow.nn.modules.layers import (  # noqa: F401
    Flatten,
    Unflatten,
)

__all__ = [
    "Flatten",
    "Unflatten",
]
