"""Zero-copy conversion between oneflow and PyTorch tensors (through DLPack)."""

from oneflow.utils.dlpack import from_dlpack


def from_torch(torch_tensor):
    """A oneflow tensor sharing memory with ``torch_tensor``."""
    return from_dlpack(torch_tensor.detach())


def to_torch(flow_tensor):
    """A PyTorch tensor sharing memory with ``flow_tensor``."""
    import torch

    return torch.from_dlpack(flow_tensor)
