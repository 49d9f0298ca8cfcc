"""oneflow.nn.modules.batchnorm: the batch normalisation layers (PyTorch's module path)."""

from oneflow.nn.modules.layers import (  # noqa: F401
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    _BatchNorm,
    _NormBase,
)
from oneflow.nn.modules.lazy import (  # noqa: F401
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
)
from oneflow.nn.modules.sync_batch_norm import (  # noqa: F401
    SyncBatchNorm,
)

__all__ = [
    "BatchNorm1d",
    "LazyBatchNorm1d",
    "BatchNorm2d",
    "LazyBatchNorm2d",
    "BatchNorm3d",
    "LazyBatchNorm3d",
    "SyncBatchNorm",
]
