"""oneflow.nn.modules.channelshuffle: ChannelShuffle (PyTorch's module path)."""

from oneflow.nn.modules.extra2 import (  # noqa: F401
    ChannelShuffle,
)

__all__ = [
    "ChannelShuffle",
]
