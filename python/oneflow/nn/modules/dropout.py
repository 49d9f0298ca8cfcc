"""oneflow.nn.modules.dropout: the dropout layers (PyTorch's module path)."""

from oneflow.nn.modules.extra2 import (  # noqa: F401
    FeatureAlphaDropout,
)
from oneflow.nn.modules.layers import (
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
)
from oneflow.nn.modules.layers import (  # noqa: F401
    _Dropout as _DropoutNd,
)

__all__ = [
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
]
