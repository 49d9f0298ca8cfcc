"""flow.finfo / flow.iinfo: numerical properties of floating and integer dtypes."""

import numpy as np

from oneflow import _oneflow_internal as _internal


class finfo:
    """bits, eps, max, min, tiny (smallest normal), resolution and dtype of a floating dtype."""

    def __init__(self, dtype=None):
        dtype = _internal.get_default_dtype() if dtype is None else dtype
        if dtype.is_complex:  # the info of its parts, as PyTorch
            dtype = _internal.float64 if dtype == _internal.complex128 else _internal.float32
        if not dtype.is_floating_point:
            raise TypeError(f"finfo: expected a floating point dtype, got {dtype}")
        self.dtype = str(dtype).split(".")[-1]
        if self.dtype == "bfloat16":
            self.bits, self.eps, self.max, self.tiny = 16, 2.0**-7, 3.3895313892515355e38, 2.0**-126
            self.resolution = 0.01
        else:
            info = np.finfo(getattr(np, self.dtype))
            self.bits = info.bits
            self.eps = float(info.eps)
            self.max = float(info.max)
            self.tiny = float(info.tiny)
            self.resolution = 10.0**-info.precision
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """bits, max and min of an integer (or bool) dtype."""

    def __init__(self, dtype):
        name = str(dtype).split(".")[-1]
        if dtype.is_floating_point:
            raise TypeError(f"iinfo: expected an integer dtype, got {dtype}")
        self.dtype = name
        if name == "bool":
            self.bits, self.min, self.max = 8, 0, 1
        else:
            info = np.iinfo(getattr(np, name))
            self.bits, self.min, self.max = info.bits, int(info.min), int(info.max)

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
