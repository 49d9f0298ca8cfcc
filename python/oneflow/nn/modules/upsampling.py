"""oneflow.nn.modules.upsampling: the upsampling layers (PyTorch's module path)."""

from oneflow.nn.modules.layers import (  # noqa: F401
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ = [
    "Upsample",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
]
