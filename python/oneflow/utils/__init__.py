"""oneflow.utils: DLPack and tensor interop helpers."""

from oneflow.utils import _pytree, checkpoint, data, dlpack, global_view, tensor  # noqa: F401
