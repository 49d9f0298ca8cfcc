"""oneflow.types: the type aliases PyTorch's torch.types gives annotations (Number, Device,
_int, _float, _size, _TensorOrTensors, ...), over oneflow's classes. oneflow has no symbolic
shapes: the *LikeType aliases are the plain Python types and py_sym_types is empty."""

import os
from typing import IO, List, Optional, Sequence, Tuple, Union

from oneflow._oneflow_internal import Tensor
from oneflow._oneflow_internal import device as _device_class
from oneflow._oneflow_internal import dtype as _dtype_class
from oneflow.framework.misc_ops import layout as _layout_class
from oneflow.framework.size import Size
from oneflow.framework.storage import TypedStorage, UntypedStorage

__all__ = ["Number", "Device", "FileLike", "Storage"]

_int = int
_float = float
_bool = bool
_complex = complex
_str = str
_bytes = bytes
_dtype = _dtype_class
_device = _device_class
_layout = _layout_class

IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
py_sym_types = ()

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Optional[Tensor], Sequence[Optional[Tensor]]]
_size = Union[Size, List[int], Tuple[int, ...]]
_symsize = _size

Number = Union[int, float, bool]
_Number = (int, float, bool)
Device = Optional[Union[_device, str, int]]
FileLike = Union[str, os.PathLike, IO[bytes]]
Storage = Union[TypedStorage, UntypedStorage]
