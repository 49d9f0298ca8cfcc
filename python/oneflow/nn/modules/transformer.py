"""oneflow.nn.modules.transformer: Transformer, its encoder and decoder (PyTorch's module path)."""

from oneflow.nn.modules.extra import (  # noqa: F401
    Transformer,
)
from oneflow.nn.modules.layers import (  # noqa: F401
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]
