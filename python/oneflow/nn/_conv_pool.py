"""Convolution and pooling in oneflow.nn.functional, with PyTorch's signatures.

The work happens in oneflow._C (oneflow/api/python/nn.cpp): oneDNN kernels for float32 on CPU,
direct loops for float64; gradients for every tensor argument. float16 and bfloat16 are computed
in float32 and rounded back, as PyTorch's CPU kernels accumulate them in float32 (all but
avg_pool3d, which PyTorch does not implement for them).
"""

import functools
import math

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.framework.autocast_fp32 import fp32 as _fp32

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
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
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


def _complex_parts(fn):
    """A complex input and weight: the convolution is bilinear, so it runs as four real ones,
    (xr * wr - xi * wi) + i (xr * wi + xi * wr), with the bias's parts added to the first of
    each. Anything else goes through unchanged (mixed real and complex operands raise there,
    as PyTorch)."""

    @functools.wraps(fn)
    def wrapper(input, weight, bias=None, *args, **kwargs):
        complex_args = (
            isinstance(input, oneflow.Tensor)
            and isinstance(weight, oneflow.Tensor)
            and input.dtype.is_complex
            and input.dtype == weight.dtype
            and (bias is None or bias.dtype == input.dtype)
        )
        if not complex_args:
            return fn(input, weight, bias, *args, **kwargs)
        xr, xi, wr, wi = input.real, input.imag, weight.real, weight.imag
        br = None if bias is None else bias.real
        bi = None if bias is None else bias.imag
        re = _C.sub(fn(xr, wr, br, *args, **kwargs), fn(xi, wi, None, *args, **kwargs))
        im = _C.add(fn(xr, wi, bi, *args, **kwargs), fn(xi, wr, None, *args, **kwargs))
        return _C.complex(re, im)

    return wrapper


@_complex_parts
@_half_in_float32
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _C.conv1d(input, weight, bias, stride, padding, dilation, groups)


@_complex_parts
@_half_in_float32
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _C.conv2d(input, weight, bias, stride, padding, dilation, groups)


@_complex_parts
@_half_in_float32
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _C.conv3d(input, weight, bias, stride, padding, dilation, groups)


@_complex_parts
@_half_in_float32
def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _C.conv_transpose1d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@_complex_parts
@_half_in_float32
def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _C.conv_transpose2d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@_complex_parts
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


@_fp32  # on PyTorch's float32 autocast list
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


@_fp32  # on PyTorch's float32 autocast list
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


@_fp32  # on PyTorch's float32 autocast list
@_half_in_float32
def adaptive_avg_pool3d(input, output_size):
    return _C.adaptive_avg_pool3d(input, output_size)


@_half_in_float32
def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _C.adaptive_max_pool1d(input, output_size, return_indices)


@_half_in_float32
def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _C.adaptive_max_pool2d(input, output_size, return_indices)


@_fp32  # on PyTorch's float32 autocast list
@_half_in_float32
def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _C.adaptive_max_pool3d(input, output_size, return_indices)


def _tuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _max_unpool(dims, input, indices, kernel_size, stride, padding, output_size):
    """Scatters each plane's values to the flat positions max_pool's indices name, in a zero
    plane of the size the pooling came from (output_size, or (in - 1) * stride - 2 * padding +
    kernel); the gradient gathers at the same positions."""
    name = f"max_unpool{dims}d"
    if indices.dtype != oneflow.int64:
        raise RuntimeError(
            f"{name}: elements in indices should be type int64 but got {indices.dtype}"
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"{name}: expected shape of indices to be same as that of the input tensor "
            f"({tuple(input.shape)}), but got indices tensor with shape {tuple(indices.shape)}"
        )
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{name}: expected a {dims + 1}-D or {dims + 2}-D input, got {input.ndim}-D"
        )
    kernel = _tuple(kernel_size, dims)
    stride = _tuple(stride if stride is not None else kernel_size, dims)
    padding = _tuple(padding, dims)
    spatial = tuple(input.shape[-dims:])
    default = [(spatial[d] - 1) * stride[d] - 2 * padding[d] + kernel[d] for d in range(dims)]
    if output_size is None:
        out = default
    else:
        out = list(output_size)[-dims:]
        if len(out) != dims:
            raise ValueError(
                f"{name}: output_size must have {dims} or {dims + 2} elements, got "
                f"{len(output_size)}"
            )
        for d in range(dims):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < out[d] < hi:
                raise ValueError(
                    f'{name}: invalid output_size "{tuple(output_size)}" (dim {d} must be '
                    f"between {lo + 1} and {hi - 1})"
                )
    lead = tuple(input.shape[:-dims])
    plane = math.prod(out)
    flat_idx = indices.reshape(*lead, -1)
    if indices.numel():
        lo, hi = int(_C.amin(indices)), int(_C.amax(indices))
        if lo < 0 or hi >= plane:
            bad = hi if hi >= plane else lo
            raise RuntimeError(
                f"{name}: found an invalid max index: {bad} (output volumes are of size "
                f"{'x'.join(str(o) for o in out)})"
            )
    zeros = oneflow.zeros(*lead, plane, dtype=input.dtype, device=input.device)
    if input.is_global:  # the planes' zeros: a broadcast tensor on the input's placement
        zeros = zeros.to_global(input.placement, [oneflow.sbp.broadcast] * len(input.sbp))
    result = _C.scatter(zeros, -1, flat_idx, input.reshape(*lead, -1), "none")
    return result.reshape(*lead, *out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


@_fp32  # on PyTorch's float32 autocast list
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


@_fp32  # on PyTorch's float32 autocast list
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)
