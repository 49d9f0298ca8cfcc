"""DLPack interop: exchange tensors with other frameworks without copying."""

from oneflow import _oneflow_internal as _internal


def from_dlpack(ext_tensor):
    """A oneflow tensor sharing memory with ``ext_tensor`` (an object with ``__dlpack__``, or
    a DLPack capsule)."""
    return _internal.from_dlpack(ext_tensor)


def to_dlpack(tensor):
    """A DLPack capsule viewing ``tensor``'s memory; it can be consumed once."""
    return _internal.to_dlpack(tensor)
