"""oneflow.utils: DLPack and tensor interop helpers."""

from oneflow.utils import data, dlpack, global_view, tensor  # noqa: F401
