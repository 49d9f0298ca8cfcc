"""oneflow.utils: DLPack and tensor interop helpers."""

from oneflow.utils import dlpack, tensor  # noqa: F401
