"""Tensor creation: flow.tensor, zeros/ones/full/randn and the default generator's seed."""

import builtins

import numpy as np

from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import _C


def _infer_numpy(data):
    """Data as a NumPy array with PyTorch's dtype inference for Python values."""
    if isinstance(data, np.ndarray):
        return data
    arr = np.array(data)
    if arr.dtype == np.float64:
        return arr  # cast to the default dtype below
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError("tensor: Overflow when unpacking long long (a Python int past int64)")
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind == "O" or arr.dtype.kind in "USV":
        raise TypeError(
            f"tensor: could not infer dtype of {type(data).__name__} "
            f"(expected nested sequences of numbers or bools)"
        )
    return arr


_INT_RANGE = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _check_fits(op, values, dtype):
    """PyTorch's check when Python numbers become integers of `dtype`: RuntimeError for NaN,
    infinities and values past the type's range (negative ones wrap into uint8 down to -255)."""
    name = str(dtype).split(".")[-1]
    if name not in _INT_RANGE or values.size == 0 or values.dtype.kind not in "iuf":
        return
    lo, hi = _INT_RANGE[name]
    if name == "uint8":
        lo = -hi
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        bad = True
    else:
        bad = values.min() < lo or values.max() > hi
    if bad:
        raise RuntimeError(f"{op}: value cannot be converted to type {name} without overflow")


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, NumPy arrays, numbers, tensors)."""
    if isinstance(data, _internal.Tensor):
        t = _C.to(data.detach(), dtype, device, copy=True)
    else:
        if isinstance(data, np.generic):  # a NumPy scalar keeps its dtype, as in PyTorch
            data = np.asarray(data)
        from_python = not isinstance(data, np.ndarray)
        arr = _infer_numpy(data)
        if arr.dtype == np.float64 and from_python and dtype is None:
            dtype = _internal.get_default_dtype()
        if from_python and dtype is not None:
            _check_fits("tensor", arr, dtype)
        arr = np.require(arr, requirements="C")  # keeps 0-dim arrays 0-dim
        t = _C.to(_internal.from_numpy(arr), dtype, device, copy=True)
    if requires_grad:
        t.requires_grad = True
    return t


def as_tensor(data, dtype=None, device=None):
    """Shares memory with ``data`` when it is already a suitable tensor or NumPy array."""
    if isinstance(data, _internal.Tensor):
        return _C.to(data, dtype, device)
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return _C.to(_internal.from_numpy(data), dtype, device)
    return tensor(data, dtype=dtype, device=device)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return size


def zeros(*size, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
    return _C.zeros(
        *_size(size),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )


def ones(*size, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
    return _C.ones(
        *_size(size),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )


def randn(
    *size, dtype=None, device=None, requires_grad=False, placement=None, sbp=None, generator=None
):
    return _C.randn(
        *_size(size),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
        generator=generator,
    )


def rand(
    *size, dtype=None, device=None, requires_grad=False, placement=None, sbp=None, generator=None
):
    return _C.rand(
        *_size(size),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
        generator=generator,
    )


def randint(low, high=None, size=None, dtype=None, device=None, generator=None, **kwargs):
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high  # randint(high, size)
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint: missing the size argument")
    if isinstance(size, builtins.int):
        size = (size,)
    return _C.randint(low, high, tuple(size), dtype=dtype, device=device, generator=generator)


def normal(mean, std, size, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Numbers from N(mean, std**2) of the given size (float mean and std)."""
    if isinstance(size, builtins.int):
        size = (size,)
    return _C.normal(
        builtins.float(mean),
        builtins.float(std),
        tuple(size),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        generator=generator,
    )


def empty(*size, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
    """A tensor of the given size; its values are unspecified (this build zero-fills)."""
    return zeros(
        *size, dtype=dtype, device=device, requires_grad=requires_grad, placement=placement, sbp=sbp
    )


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    return full(
        tuple(input.shape),
        fill_value,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
    )


def empty_like(input, dtype=None, device=None, requires_grad=False):
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad=False, generator=None):
    return rand(
        *input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
        generator=generator,
    )


def randn_like(input, dtype=None, device=None, requires_grad=False, generator=None):
    return randn(
        *input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
        generator=generator,
    )


def get_rng_state():
    """The default generator's state as a uint8 tensor (seed and counter offset)."""
    return _C.get_rng_state()


def set_rng_state(state):
    _C.set_rng_state(state)


def full(size, fill_value, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
    if isinstance(size, builtins.int):
        size = (size,)
    if dtype is not None and isinstance(fill_value, (builtins.int, builtins.float)):
        _check_fits("full", np.asarray(fill_value), dtype)
    return _C.full(
        tuple(size),
        fill_value,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )


def zeros_like(input, dtype=None, device=None, requires_grad=False):
    return zeros(
        *input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
    )


def ones_like(input, dtype=None, device=None, requires_grad=False):
    return ones(
        *input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
    )


def manual_seed(seed):
    """Seeds the default (Philox) generator; the same seed gives the same numbers."""
    _C.manual_seed(builtins.int(seed))


def initial_seed():
    return _C.initial_seed()


def seed():
    import random

    s = random.getrandbits(63)
    manual_seed(s)
    return s


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """A 2-D tensor with ones on the diagonal."""
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"eye: n and m must be greater or equal to 0, got n={n}, m={m}")
    t = zeros(n * m, dtype=dtype, device=device)
    t[:: m + 1][: builtins.min(n, m)] = 1
    t = t.reshape(n, m)
    if requires_grad:
        t.requires_grad_()
    return t


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    """``steps`` numbers from base**start to base**end, evenly spaced in the exponent."""
    import math

    exps = _C.linspace(start, end, steps, dtype=_internal.float64, device=device)
    t = _C.exp(exps * math.log(base))
    t = _C.to(t, dtype or _internal.get_default_dtype(), None)
    if requires_grad:
        t.requires_grad_()
    return t
