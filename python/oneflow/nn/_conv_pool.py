"""Convolution and pooling in oneflow.nn.functional, with PyTorch's signatures.

The work happens in oneflow._C (oneflow/api/python/nn.cpp): oneDNN kernels for float32 on CPU,
direct loops for float64; gradients for every tensor argument. float16 and bfloat16 are computed
in float32 and rounded back, as PyTorch's CPU kernels accumulate them in float32 (all but
avg_pool3d, which PyTorch does not implement for them).
"""

import functools

import oneflow
from oneflow._oneflow_internal import _C

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
]


def _half_in_float32(fn):
    """float16/bfloat16 arguments of one dtype run in float32; the result (and, for max pooling
    with indices, its first element) is rounded back. Mixed dtypes go through unchanged, so the
    kernel's dtype checks still raise."""

    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):
        dtype = getattr(input, "dtype", None)
        if dtype not in (oneflow.float16, oneflow.bfloat16):
            return fn(input, *args, **kwargs)
        values = [*args, *kwargs.values()]
        if any(isinstance(v, oneflow.Tensor) and v.dtype != dtype for v in values):
            return fn(input, *args, **kwargs)

        def up(v):
            return v.float() if isinstance(v, oneflow.Tensor) else v

        out = fn(up(input), *map(up, args), **{k: up(v) for k, v in kwargs.items()})
        if isinstance(out, (tuple, list)):
            return (out[0].to(dtype), *out[1:])
        return out.to(dtype)

    return wrapper


@_half_in_float32
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _C.conv1d(input, weight, bias, stride, padding, dilation, groups)


@_half_in_float32
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _C.conv2d(input, weight, bias, stride, padding, dilation, groups)


@_half_in_float32
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _C.conv3d(input, weight, bias, stride, padding, dilation, groups)


@_half_in_float32
def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _C.conv_transpose1d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@_half_in_float32
def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _C.conv_transpose2d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@_half_in_float32
def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _C.conv_transpose3d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def _stride(stride):
    # PyTorch accepts None or an empty list for "same as kernel_size".
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return None
    return stride


@_half_in_float32
def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return _C.max_pool1d(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices
    )


@_half_in_float32
def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return _C.max_pool2d(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices
    )


@_half_in_float32
def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return _C.max_pool3d(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices
    )


@_half_in_float32
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _C.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


@_half_in_float32
def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    return _C.avg_pool2d(
        input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad, divisor_override
    )


def avg_pool3d(  # PyTorch has no float16/bfloat16 avg_pool3d on the CPU
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    return _C.avg_pool3d(
        input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad, divisor_override
    )


@_half_in_float32
def adaptive_avg_pool1d(input, output_size):
    return _C.adaptive_avg_pool1d(input, output_size)


@_half_in_float32
def adaptive_avg_pool2d(input, output_size):
    return _C.adaptive_avg_pool2d(input, output_size)


@_half_in_float32
def adaptive_avg_pool3d(input, output_size):
    return _C.adaptive_avg_pool3d(input, output_size)


@_half_in_float32
def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _C.adaptive_max_pool1d(input, output_size, return_indices)


@_half_in_float32
def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _C.adaptive_max_pool2d(input, output_size, return_indices)


@_half_in_float32
def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _C.adaptive_max_pool3d(input, output_size, return_indices)
