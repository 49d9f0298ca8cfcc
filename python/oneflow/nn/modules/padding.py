"""oneflow.nn.modules.padding: the padding layers (PyTorch's module path)."""

from oneflow.nn.modules.extra2 import (  # noqa: F401
    ZeroPad1d,
    ZeroPad3d,
)
from oneflow.nn.modules.layers import (  # noqa: F401
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad2d,
    _CircularPadNd,
    _ConstantPadNd,
    _ReflectionPadNd,
    _ReplicationPadNd,
)

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]
