"""oneflow.nn.modules.normalization: LayerNorm, GroupNorm, RMSNorm and LocalResponseNorm
(PyTorch's module path)."""

from oneflow.nn.modules.extra2 import (  # noqa: F401
    LocalResponseNorm,
)
from oneflow.nn.modules.layers import (  # noqa: F401
    GroupNorm,
    LayerNorm,
    RMSNorm,
)

__all__ = [
    "LocalResponseNorm",
    "LayerNorm",
    "GroupNorm",
    "RMSNorm",
]
