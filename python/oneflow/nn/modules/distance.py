"""oneflow.nn.modules.distance: the distance modules (PyTorch's module path)."""

from oneflow.nn.modules.layers import (  # noqa: F401
    CosineSimilarity,
    PairwiseDistance,
)

__all__ = [
    "PairwiseDistance",
    "CosineSimilarity",
]
