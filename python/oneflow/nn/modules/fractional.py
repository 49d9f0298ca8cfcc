"""Fractional max pooling (Graham, 2014) as PyTorch's: F.fractional_max_pool2d/3d (and
_with_indices) and nn.FractionalMaxPool2d/3d. Each plane's window starts follow PyTorch's
pseudo-random sequence from one sample u in [0, 1) per dim: start_i = int((i + u) alpha) -
int(u alpha), alpha = (in - k) / (out - 1), the last window at in - k. The windows are gathered
and reduced with ops, so gradients flow through the gather to the chosen elements."""

import oneflow
from oneflow.framework.autocast_fp32 import fp32 as _fp32
from oneflow.nn.modules.module import Module

__all__ = [
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _starts(sample, size_in, size_out, k):
    """(N, C) samples -> (N, C, size_out) window starts, in the samples' dtype as PyTorch's."""
    i = oneflow.arange(size_out, dtype=sample.dtype, device=sample.device)
    if size_out > 1:
        alpha = oneflow.tensor((size_in - k) / (size_out - 1), dtype=sample.dtype)
        u = sample.unsqueeze(-1)
        starts = ((i + u) * alpha).to(oneflow.int64) - (u * alpha).to(oneflow.int64)
        last = oneflow.full_like(starts[..., :1], size_in - k)
        return oneflow.cat([starts[..., :-1], last], dim=-1)
    return oneflow.full((*sample.shape, size_out), size_in - k, dtype=oneflow.int64)


def _fractional_max_pool(name, input, kernel_size, output_size, output_ratio, samples, dims):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    k = _tuple(kernel_size, dims)
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: {input.ndim}D"
        )
    batched = input.ndim == dims + 2
    x = input if batched else input.unsqueeze(0)
    spatial = tuple(x.shape[2:])
    if output_size is None:
        ratio = _tuple(output_ratio, dims)
        if any(not 0 < r < 1 for r in ratio):
            raise ValueError(
                f"{name} requires output_ratio to be in the range (0, 1), got {output_ratio}"
            )
        output_size = tuple(int(s * r) for s, r in zip(spatial, ratio))
    out = _tuple(output_size, dims)
    for d, (s, o, kk) in enumerate(zip(spatial, out, k)):
        if o + kk - 1 > s:
            raise RuntimeError(
                f"{name}(): pool size {kk} too large relative to input size {s} along dim "
                f"{d} for output size {o}"
            )
    n, c = x.shape[0], x.shape[1]
    if samples is None:
        samples = oneflow.rand(n, c, dims, dtype=x.dtype, device=x.device)
    if tuple(samples.shape) != (n, c, dims):
        raise RuntimeError(
            f"{name}(): expected _random_samples of shape {(n, c, dims)}, got "
            f"{tuple(samples.shape)}"
        )
    # PyTorch's sample order: 2-d takes (width, height), 3-d (depth, height, width)
    order = [1, 0] if dims == 2 else [0, 1, 2]
    starts = [_starts(samples[..., order[d]], spatial[d], out[d], k[d]) for d in range(dims)]
    # the flat index (within the plane) of every element of every window:
    # (N, C, out_0, ..., out_{d-1}, k_0, ..., k_{d-1})
    strides = [1] * dims
    for d in range(dims - 2, -1, -1):
        strides[d] = strides[d + 1] * spatial[d + 1]
    flat = None
    for d in range(dims):
        offs = oneflow.arange(k[d], device=x.device)
        pos = starts[d].unsqueeze(-1) + offs  # (N, C, out_d, k_d)
        shape = [n, c] + [1] * (2 * dims)
        shape[2 + d] = out[d]
        shape[2 + dims + d] = k[d]
        term = (pos * strides[d]).reshape(shape)
        flat = term if flat is None else flat + term
    window = 1
    for kk in k:
        window *= kk
    flat = flat.expand(n, c, *out, *k).reshape(n, c, -1, window)
    plane = x.reshape(n, c, -1)
    values = plane.gather(2, flat.reshape(n, c, -1)).reshape(n, c, -1, window)
    # PyTorch's rule: the first maximum, or the last NaN
    nan = oneflow.isnan(values)
    first_max = values.argmax(dim=-1, keepdim=True)
    last_nan = (window - 1) - nan.flip(-1).to(oneflow.int64).argmax(dim=-1, keepdim=True)
    choice = oneflow.where(nan.any(dim=-1, keepdim=True), last_nan, first_max)
    result = values.gather(-1, choice).reshape(n, c, *out)
    indices = flat.gather(-1, choice).reshape(n, c, *out)
    if not batched:
        result, indices = result.squeeze(0), indices.squeeze(0)
    return result, indices


def _functions(dims):
    """fractional_max_pool{dims}d and its _with_indices form, PyTorch's signatures."""
    name = f"fractional_max_pool{dims}d"

    def with_indices(
        input,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices=False,
        _random_samples=None,
    ):
        return _fractional_max_pool(
            name, input, kernel_size, output_size, output_ratio, _random_samples, dims
        )

    def pool(
        input,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices=False,
        _random_samples=None,
    ):
        out, idx = with_indices(
            input, kernel_size, output_size, output_ratio, return_indices, _random_samples
        )
        return (out, idx) if return_indices else out

    with_indices.__name__ = with_indices.__qualname__ = name + "_with_indices"
    pool.__name__ = pool.__qualname__ = name
    return _fp32(pool), _fp32(with_indices)  # on PyTorch's float32 autocast list


fractional_max_pool2d, fractional_max_pool2d_with_indices = _functions(2)
fractional_max_pool3d, fractional_max_pool3d_with_indices = _functions(3)


class _FractionalMaxPoolNd(Module):
    _dims = 2

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices=False,
        _random_samples=None,
    ):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._dims)
        self.output_size = None if output_size is None else _tuple(output_size, self._dims)
        self.output_ratio = None if output_ratio is None else _tuple(output_ratio, self._dims)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"FractionalMaxPool{self._dims}d requires specifying either an output size, or "
                "a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and any(not 0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = fractional_max_pool2d if self._dims == 2 else fractional_max_pool3d
        return fn(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _dims = 3
