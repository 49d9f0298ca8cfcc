"""oneflow.nn.modules.sparse: the embedding layers (PyTorch's module path)."""

from oneflow.nn.modules.extra2 import (  # noqa: F401
    EmbeddingBag,
)
from oneflow.nn.modules.layers import (  # noqa: F401
    Embedding,
)

__all__ = [
    "Embedding",
    "EmbeddingBag",
]
