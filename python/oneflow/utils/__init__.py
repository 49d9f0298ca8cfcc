"""oneflow.utils: DLPack and tensor interop helpers."""

from oneflow.utils import data, dlpack, tensor  # noqa: F401
