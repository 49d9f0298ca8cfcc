"""oneflow.nn.modules.linear: the linear layers (PyTorch's module path)."""

from oneflow.nn.modules.layers import (  # noqa: F401
    Bilinear,
    Identity,
    Linear,
    NonDynamicallyQuantizableLinear,
)
from oneflow.nn.modules.lazy import (  # noqa: F401
    LazyLinear,
)

__all__ = [
    "Bilinear",
    "Identity",
    "LazyLinear",
    "Linear",
]
