"""oneflow.nn.modules.pixelshuffle: PixelShuffle and PixelUnshuffle (PyTorch's module path)."""

from oneflow.nn.modules.layers import (  # noqa: F401
    PixelShuffle,
    PixelUnshuffle,
)

__all__ = [
    "PixelShuffle",
    "PixelUnshuffle",
]
