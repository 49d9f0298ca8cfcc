"""Resampling and rearranging of spatial data in ``oneflow.nn.functional``: interpolate (nearest,
linear, bilinear, bicubic, trilinear, align_corners), pad (constant, reflect, replicate,
circular), unfold/fold and pixel_shuffle. Source positions and weights are computed once on the
host; on the CPU the linear and cubic modes then run one resampling kernel per dim (forward and
backward), elsewhere the data moves through index_select and index_add, whose kernels carry the
gradients."""

import functools
import math

import numpy as np

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.framework.autocast_fp32 import fp32 as _fp32
from oneflow.framework.autocast_fp32 import fp32_unless_constant


def _global_like(like, t):
    """t, computed from shapes, beside `like`: a broadcast global tensor when like is global."""
    from oneflow.framework.global_tensor import constant_like

    return constant_like(like, t)


def _idx(values, like):
    t = oneflow.tensor(np.asarray(values, dtype=np.int64), device=like.device)
    return _global_like(like, t)


def _along(weights, dim, ndim, like):
    shape = [1] * ndim
    shape[dim] = -1
    t = oneflow.tensor(np.asarray(weights), dtype=like.dtype, device=like.device).reshape(*shape)
    return _global_like(like, t)


def _scale(ct, scale, in_size, out_size):
    """PyTorch's compute_scales_value in the precision ct: 1 / scale_factor when one was given
    (scale holds it), else in_size / out_size."""
    return ct(scale) if scale is not None else ct(in_size) / ct(out_size)


def _source_coords(out_size, in_size, scale, align_corners, cubic, ct):
    """Source positions of the output positions, computed as PyTorch does in its kernels'
    arithmetic type ct (float32 for 16- and 32-bit floats, float64 for float64): rounding the
    scale and the positions in float32 moves large resamplings by up to ~1e-4."""
    dst = np.arange(out_size).astype(ct)
    if align_corners:
        ratio = ct(in_size - 1) / ct(out_size - 1) if out_size > 1 else ct(0)
        return ratio * dst
    f = _scale(ct, scale, in_size, out_size)
    if ct is np.float32:
        # One rounding for f * (dst + 0.5) - 0.5: PyTorch's kernels are built with FMA
        # contraction (an exact float32 product in float64, then one subtraction).
        src = (np.float64(f) * (dst + ct(0.5)).astype(np.float64) - 0.5).astype(ct)
    else:
        src = f * (dst + 0.5) - 0.5
    return src if cubic else np.maximum(src, ct(0))


def _cubic_weights(t, a=-0.75):
    """The cubic-convolution weights (Keys) of the taps at -1, 0, 1, 2 for fractional positions
    t: a NumPy array (interpolate) or a tensor (grid_sample, differentiable)."""

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    u = 1 - t
    return [far(t + 1), near(t), near(u), far(u + 1)]


@functools.lru_cache(maxsize=256)
def _taps(n, out_size, scale, cubic, align_corners, double):
    """(source positions, weights) of each tap of a linear (2 taps) or cubic (4 taps)
    resampling of n positions to out_size, in PyTorch's arithmetic (float64 or float32)."""
    ct = np.float64 if double else np.float32
    if out_size == n and not cubic:
        # PyTorch copies (weights 1 and 0 on the same position).
        src = np.arange(n).astype(ct)
    else:
        src = _source_coords(out_size, n, scale, align_corners, cubic, ct)
    # PyTorch's guard_index_and_lambda: the lower tap at most n - 1, the fraction in [0, 1].
    base = np.minimum(np.floor(src).astype(np.int64), n - 1)
    t = np.clip(src - base.astype(ct), ct(0), ct(1))
    if cubic:
        return [(np.clip(base + k, 0, n - 1), w) for k, w in zip(range(-1, 3), _cubic_weights(t))]
    return [(base, ct(1) - t), (np.minimum(base + 1, n - 1), t)]


@functools.lru_cache(maxsize=256)
def _cpu_taps(n, out_size, scale, cubic, align_corners, double):
    """_taps as the Resample kernel's (taps, out_size) int64 and float64 CPU tensors (never
    written: cached for repeated calls of one geometry)."""
    taps = _taps(n, out_size, scale, cubic, align_corners, double)
    index = oneflow.tensor(np.stack([i for i, _ in taps]).astype(np.int64))
    weight = oneflow.tensor(np.stack([w for _, w in taps]).astype(np.float64))
    return index, weight


def _aa_filter(x, cubic):
    """The antialiasing filters (PIL's): a triangle, or the cubic with a = -0.5."""
    x = np.abs(x)
    if not cubic:
        return np.where(x < 1, 1 - x, 0.0)
    a = -0.5
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = (((x - 5) * x + 8) * x - 4) * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


@functools.lru_cache(maxsize=256)
def _aa_taps(n, out_size, scale, cubic, align_corners):
    """(source positions, weights) of each tap of an antialiased resampling, PyTorch's rule:
    when shrinking, the filter is stretched by the scale, so each output averages every input
    it covers; weights are normalised to sum to 1. Unused taps have weight 0."""
    if align_corners:
        f = (n - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        f = float(scale) if scale is not None else n / out_size
    support = (2.0 if cubic else 1.0) * max(f, 1.0)
    inv = 1.0 / f if f >= 1.0 else 1.0
    taps = int(math.ceil(support)) * 2 + 1
    index = np.zeros((taps, out_size), np.int64)
    weight = np.zeros((taps, out_size), np.float64)
    for i in range(out_size):
        center = f * (i + 0.5)  # (align_corners changes the scale only)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n)
        w = _aa_filter((np.arange(lo, hi) - center + 0.5) * inv, cubic)
        total = w.sum()
        if total != 0:
            w = w / total
        index[: hi - lo, i] = np.arange(lo, hi)
        index[hi - lo :, i] = lo
        weight[: hi - lo, i] = w
    return [(index[k], weight[k]) for k in range(taps)]


def _resample_dim_aa(x, dim, out_size, scale, cubic, align_corners):
    taps = _aa_taps(x.shape[dim], out_size, scale, cubic, align_corners)
    if x.device.type == "cpu":
        index = oneflow.tensor(np.stack([i for i, _ in taps]))
        weight = oneflow.tensor(np.stack([w for _, w in taps]))
        return _C.resample(x, index, weight, dim)
    out = None
    for index, weight in taps:
        term = _C.mul(_C.index(x, [_idx(index, x)], dim), _along(weight, dim, x.ndim, x))
        out = term if out is None else _C.add(out, term)
    return out


def _resample_dim(x, dim, out_size, scale, mode, align_corners):
    n = x.shape[dim]
    if mode in ("nearest", "nearest-exact"):
        # PyTorch's nearest_idx: a float32 scale; the exact mode's half offset in float64.
        f = _scale(np.float32, scale, n, out_size)
        if mode == "nearest":
            pos = np.arange(out_size).astype(np.float32) * f
        else:
            pos = (np.arange(out_size) + 0.5) * np.float64(f)
        src = np.minimum(np.floor(pos.astype(np.float32)).astype(np.int64), n - 1)
        return _C.index(x, [_idx(src, x)], dim)
    cubic = mode == "bicubic"
    double = x.dtype == oneflow.float64
    if x.device.type == "cpu":
        # One kernel per dim (forward and backward) instead of an index, multiply and add
        # per tap.
        index, weight = _cpu_taps(n, out_size, scale, cubic, align_corners, double)
        return _C.resample(x, _global_like(x, index), _global_like(x, weight), dim)
    taps = _taps(n, out_size, scale, cubic, align_corners, double)
    out = None
    for index, weight in taps:
        term = _C.mul(_C.index(x, [_idx(index, x)], dim), _along(weight, dim, x.ndim, x))
        out = term if out is None else _C.add(out, term)
    return out


_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    spatial = input.ndim - 2
    # PyTorch raises NotImplementedError for input ranks a mode does not cover.
    if spatial < 1:
        raise NotImplementedError(
            f"interpolate: expected a 3-D, 4-D or 5-D input, got {input.ndim}-D"
        )
    if mode in _MODE_DIMS and _MODE_DIMS[mode] != spatial:
        raise NotImplementedError(
            f"interpolate: mode {mode!r} expects a {_MODE_DIMS[mode] + 2}-D input, got "
            f"{input.ndim}-D"
        )
    if mode not in _MODE_DIMS and mode not in ("nearest", "nearest-exact", "area"):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented")
    if align_corners is not None and mode not in _MODE_DIMS:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if antialias and mode not in ("bilinear", "bicubic"):
        raise NotImplementedError(
            f"interpolate: anti-alias option is restricted to bilinear and bicubic modes, got "
            f"{mode!r}"
        )
    # PyTorch's CPU kernels: floating dtypes, and uint8 for nearest, bilinear and bicubic.
    uint8_ok = mode in ("nearest", "nearest-exact", "bilinear", "bicubic")
    if not input.dtype.is_floating_point and not (input.dtype == oneflow.uint8 and uint8_ok):
        raise NotImplementedError(
            f"interpolate: mode {mode!r} is not implemented for {input.dtype}"
        )
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: exactly one of size or scale_factor must be defined")
    in_sizes = list(input.shape[2:])
    # scales: 1 / scale_factor per dim, or None where the sizes give the scale.
    if size is not None:
        out_sizes = [size] * spatial if isinstance(size, int) else list(size)
        scales = [None] * spatial
    else:
        factors = (
            [scale_factor] * spatial if isinstance(scale_factor, (int, float)) else scale_factor
        )
        out_sizes = [int(math.floor(i * f)) for i, f in zip(in_sizes, factors)]
        if recompute_scale_factor:
            scales = [None] * spatial
        else:
            scales = [1.0 / f for f in factors]
    if len(out_sizes) != spatial:
        raise ValueError(f"interpolate: expected {spatial} output sizes, got {out_sizes}")
    if mode == "area":
        return adaptive_avg_pool(input, out_sizes)
    if min(in_sizes + out_sizes) <= 0:
        raise RuntimeError(
            f"interpolate: input and output sizes should be greater than 0, but got input "
            f"{tuple(in_sizes)} and output {tuple(out_sizes)}"
        )
    # uint8 bilinear/bicubic weigh in float32 and round (PyTorch's fixed-point kernels can
    # differ by one); nearest only copies.
    out = input.float() if mode in _MODE_DIMS and input.dtype == oneflow.uint8 else input
    for d, (o, s) in enumerate(zip(out_sizes, scales)):
        if antialias:
            out = _resample_dim_aa(out, d + 2, o, s, mode == "bicubic", bool(align_corners))
        else:
            out = _resample_dim(out, d + 2, o, s, mode, bool(align_corners))
    if out.dtype != input.dtype:
        out = _C.clamp(_C.round(out), 0, 255).to(input.dtype)
    return out


def adaptive_avg_pool(input, out_sizes):
    fn = getattr(oneflow.nn.functional, f"adaptive_avg_pool{len(out_sizes)}d")
    return fn(input, out_sizes)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, "bilinear", align_corners=True)


def _pad_indices(n, left, right, mode):
    i = np.arange(-left, n + right)
    if mode == "reflect":
        if left >= n or right >= n:
            raise RuntimeError(
                f"pad: padding size should be less than the corresponding input dimension, "
                f"but got padding ({left}, {right}) at dimension of size {n}"
            )
        i = np.abs(i)
        i = np.where(i >= n, 2 * (n - 1) - i, i)
    elif mode == "replicate":
        i = np.clip(i, 0, n - 1)
    else:  # circular
        if left > n or right > n:
            raise RuntimeError("pad: padding value causes wrapping around more than once")
        kept = n + min(left, 0) + min(right, 0)
        if left > kept or right > kept:
            raise RuntimeError(
                f"pad: circular padding ({left}, {right}) at a dimension of size {n} is larger "
                f"than the {kept} elements the negative padding keeps"
            )
        # As PyTorch: the kept input lies between the positive pads, and each positive pad
        # copies the kept input next to the other side's pad (what a negative pad cropped
        # there does not wrap around).
        j = np.arange(n + left + right)
        i = j - left
        if left > 0:
            i = np.where(j < left, j - left + n + min(right, 0), i)
        if right > 0:
            i = np.where(j >= n + left, j - n - 2 * left + max(left, 0), i)
    return i


@fp32_unless_constant
def pad(input, pad, mode="constant", value=None):
    if len(pad) % 2:
        raise RuntimeError(f"pad: padding length must be divisible by 2, got {len(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"pad: padding length too large for a {input.ndim}-D input")
    for k in range(len(pad) // 2):
        d, left, right = input.ndim - 1 - k, pad[2 * k], pad[2 * k + 1]
        n = input.shape[d]
        if n + left < 0 or n + right < 0 or n + left + right < 0:
            raise RuntimeError(
                f"pad: padding ({left}, {right}) of dimension {d} of size {n} leaves a "
                "negative size"
            )
    if input.dtype.is_complex:  # on the (real, imaginary) pairs: one more dim, not padded
        pairs = oneflow.view_as_real(input)
        filled = 0 if value is None else value
        out = oneflow.view_as_complex(
            globals()["pad"](pairs, (0, 0) + tuple(pad), mode, None).contiguous()
        )
        if mode == "constant" and filled != 0:  # value + 0j in the padded places
            inside = globals()["pad"](oneflow.ones_like(pairs.select(-1, 0)), pad)
            out = oneflow.where(inside.bool(), out, oneflow.full_like(out, filled))
        return out
    if mode == "constant":
        return _pad_constant(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode={mode!r} is not implemented")
    if mode != "circular" and input.dtype == oneflow.bool:  # as PyTorch's CPU kernels
        raise NotImplementedError(f"pad: mode={mode!r} is not implemented for bool")
    if len(pad) <= 6 and min(pad, default=0) >= 0:
        return _C.border_pad(input, list(pad), mode)
    out = input
    for k in range(len(pad) // 2):
        d = input.ndim - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        if left or right:  # negative pads, or more than three padded dims
            idx = _pad_indices(out.shape[d], left, right, mode)
            out = _C.index(out, [_idx(idx, input)], d)
    return out


def _fresh(out):
    """A cropped result in its own memory, as PyTorch's pad (never a view of the input)."""
    return _C.clone(out) if out.is_contiguous() else _C.contiguous(out)


def _pad_constant(input, pad, value):
    if len(pad) <= 6:  # one Pad kernel after cropping the negative pads
        out = input
        for k in range(len(pad) // 2):
            d, left, right = input.ndim - 1 - k, pad[2 * k], pad[2 * k + 1]
            if left < 0:
                out = _C.narrow(out, d, -left, out.shape[d] + left)
            if right < 0:
                out = _C.narrow(out, d, 0, out.shape[d] + right)
        if max(pad, default=0) <= 0:
            return _fresh(out)
        return _C.border_pad(out, [max(p, 0) for p in pad], "constant", float(value))
    out = input
    for k in range(len(pad) // 2):
        d = input.ndim - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        if left < 0:
            out, left = _C.narrow(out, d, -left, out.shape[d] + left), 0
        if right < 0:
            out, right = _C.narrow(out, d, 0, out.shape[d] + right), 0
        parts = []
        for n in (left, None, right):
            if n is None:
                parts.append(out)
            elif n:
                shape = list(out.shape)
                shape[d] = n
                parts.append(oneflow.full(shape, value, dtype=out.dtype, device=out.device))
        out = oneflow.cat(parts, d) if len(parts) > 1 else out
    return _fresh(out) if max(pad, default=0) <= 0 else out


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _patch_index(hp, wp, kernel, dilation, stride):
    (kh, kw), (dh, dw), (sh, sw) = kernel, dilation, stride
    oh = (hp - dh * (kh - 1) - 1) // sh + 1
    ow = (wp - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"unfold: the kernel {kernel} with dilation {dilation} does not fit the padded input "
            f"({hp}, {wp})"
        )
    ki, kj, oi, oj = np.meshgrid(
        np.arange(kh), np.arange(kw), np.arange(oh), np.arange(ow), indexing="ij"
    )
    rows = oi * sh + ki * dh
    cols = oj * sw + kj * dw
    return (rows * wp + cols).reshape(-1), oh * ow


def _no_integers(op, input):
    # PyTorch's im2col/col2im CPU kernels take floating dtypes and bool, not integers.
    if not input.dtype.is_floating_point and input.dtype != oneflow.bool:
        raise NotImplementedError(f"{op}: not implemented for {input.dtype}")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    _no_integers("unfold", input)
    batched = input.ndim == 4
    if input.ndim not in (3, 4):
        raise RuntimeError(f"unfold: expected a 3-D or 4-D input, got {input.ndim}-D")
    x = input if batched else _C.unsqueeze(input, 0)
    kernel, dilation, padding, stride = map(_pair, (kernel_size, dilation, padding, stride))
    x = _pad_constant(x, (padding[1], padding[1], padding[0], padding[0]), 0)
    n, c, hp, wp = x.shape
    index, blocks = _patch_index(hp, wp, kernel, dilation, stride)
    cols = _C.index(x.reshape(n, c, hp * wp), [_idx(index, x)], 2)
    out = cols.reshape(n, c * kernel[0] * kernel[1], blocks)
    return out if batched else _C.squeeze(out, [0])


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    _no_integers("fold", input)
    batched = input.ndim == 3
    if input.ndim not in (2, 3):
        raise RuntimeError(f"fold: expected a 2-D or 3-D input, got {input.ndim}-D")
    x = input if batched else _C.unsqueeze(input, 0)
    kernel, dilation, padding, stride = map(_pair, (kernel_size, dilation, padding, stride))
    (h, w), k = _pair(output_size), kernel[0] * kernel[1]
    if x.shape[1] % k:
        raise RuntimeError(
            f"fold: expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={x.shape[1]} and kernel_size={kernel}"
        )
    hp, wp = h + 2 * padding[0], w + 2 * padding[1]
    index, blocks = _patch_index(hp, wp, kernel, dilation, stride)
    if x.shape[2] != blocks:
        raise RuntimeError(f"fold: expected {blocks} blocks in input's last dim, got {x.shape[2]}")
    n, c = x.shape[0], x.shape[1] // k
    flat = _global_like(x, oneflow.zeros(n, c, hp * wp, dtype=x.dtype, device=x.device))
    out = oneflow.index_add(flat, 2, _idx(index, x), x.reshape(n, c, k * blocks))
    out = out.reshape(n, c, hp, wp)
    if padding[0] or padding[1]:  # the interior, as a tensor of its own (PyTorch's layout)
        out = _C.narrow(_C.narrow(out, 2, padding[0], h), 3, padding[1], w).contiguous()
    return out if batched else _C.squeeze(out, [0])


def _check_pixel_shuffle(op, input, factor, name):
    if input.ndim < 3:
        raise RuntimeError(
            f"{op}: expected input to have at least 3 dimensions, got {input.ndim} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"{op}: expected a positive {name}, got {factor}")


def pixel_shuffle(input, upscale_factor):
    _check_pixel_shuffle("pixel_shuffle", input, upscale_factor, "upscale_factor")
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle: expected input's channels ({c}) to be divisible by "
            f"upscale_factor squared ({r * r})"
        )
    x = input.reshape(-1, c // (r * r), r, r, h, w).permute(0, 1, 4, 2, 5, 3)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    _check_pixel_shuffle("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(
            f"pixel_unshuffle: expected height ({h}) and width ({w}) to be divisible by "
            f"downscale_factor ({r})"
        )
    x = input.reshape(-1, c, h // r, r, w // r, r).permute(0, 1, 3, 5, 2, 4)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# ---- affine_grid and grid_sample ----


def _base_coords(n, align_corners, like):
    """The normalised [-1, 1] coordinates of n pixel centres (corners with align_corners)."""
    if n <= 1:
        return oneflow.zeros(max(n, 0), dtype=like.dtype, device=like.device)
    pos = oneflow.arange(n, dtype=like.dtype, device=like.device)
    if align_corners:
        return _C.sub(_C.mul(pos, 2.0 / (n - 1)), 1.0)
    return _C.sub(_C.div(_C.add(_C.mul(pos, 2.0), 1.0), float(n)), 1.0)


def affine_grid(theta, size, align_corners=False):
    """Sampling grids of the affine maps theta (N x 2 x 3, or N x 3 x 4 for volumes) over the
    output size (N, C, H, W) or (N, C, D, H, W): each output position's normalised (x, y[, z], 1)
    times theta transposed."""
    size = list(size)
    spatial = len(size) - 2
    if spatial not in (2, 3):
        raise NotImplementedError(
            "affine_grid: only 4-D and 5-D sizes are supported (2-D and 3-D affine maps), "
            f"got {size}"
        )
    if not theta.dtype.is_floating_point:
        raise ValueError(
            f"affine_grid: expected theta to have a floating point dtype, got {theta.dtype}"
        )
    want = (size[0], spatial, spatial + 1)
    if tuple(theta.shape) != want:
        raise ValueError(
            f"affine_grid: expected a theta of shape {list(want)} for size {size}, got "
            f"{list(theta.shape)}"
        )
    if min(size[2:]) <= 0:
        raise ValueError(f"affine_grid: expected non-zero, positive output sizes, got {size}")
    axes = [_base_coords(n, align_corners, theta) for n in reversed(size[2:])]  # x, y[, z]
    mesh = oneflow.meshgrid(*reversed(axes), indexing="ij")  # z, y, x order of dims
    ones = oneflow.ones(*size[2:], dtype=theta.dtype, device=theta.device)
    base = oneflow.stack([*reversed(mesh), ones], -1).reshape(1, -1, spatial + 1)
    base = _global_like(theta, base)
    grid = _AffineGrid.apply(theta, base.expand(size[0], -1, -1))
    return grid.reshape(size[0], *size[2:], spatial)


class _AffineGrid(oneflow.autograd.Function):
    """grid = base theta^T, whose backward keeps only the constant base (not a saved tensor
    that backward frees), so a graph through it may be differentiated twice without
    retain_graph, as PyTorch's affine_grid_generator."""

    @staticmethod
    def forward(ctx, theta, base):
        ctx.base = base
        return _C.matmul(base, theta.transpose(1, 2))

    @staticmethod
    def backward(ctx, grad):
        return _C.matmul(grad.transpose(1, 2), ctx.base), None


def _unnormalise(coord, n, align_corners):
    """coord * scale + offset, as PyTorch: a coordinate near the largest float (1e38) stays
    finite, and so outside, where (coord + 1) * n would overflow."""
    scale = (n - 1) / 2 if align_corners else n / 2
    return _C.add(_C.mul(coord, scale), (n - 1) / 2)


def _reflect(coord, low2, high2):
    """Reflects coord into [low2 / 2, high2 / 2] (differentiably: the slope flips in mirrored
    stretches)."""
    if low2 == high2:
        return oneflow.zeros_like(coord)
    lo, span = low2 / 2, (high2 - low2) / 2
    dist = _C.abs(_C.sub(coord, lo))
    extra = _C.fmod(dist, span)
    flips = oneflow.floor(_C.div(dist, span))
    even = _C.eq(_C.remainder(flips, 2.0), 0.0)
    return oneflow.where(even, _C.add(extra, lo), _C.add(_C.sub(span, extra), lo))


def _clip(x, n):
    """x clamped to [0, n - 1], with a gradient only strictly inside (PyTorch's rule for the
    grid: a point clipped onto an edge, or exactly on it, does not move with the grid)."""
    inside = _C.logical_and(_C.gt(x, 0.0), _C.lt(x, float(n - 1)))
    return oneflow.where(inside, x, _C.clamp(x, 0.0, float(n - 1)).detach())


def _source_coord(coord, n, padding_mode, align_corners):
    x = _unnormalise(coord, n, align_corners)
    if padding_mode == "border":
        return _clip(x, n)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (n - 1)) if align_corners else _reflect(x, -1, 2 * n - 1)
        return _clip(x, n)
    return x


def _padded_tap(pos, n, padding_mode, align_corners):
    """An integer tap position under the padding rule (border: clamped; reflection: mirrored,
    then clamped; zeros: as is, masked later)."""
    if padding_mode == "border":
        return _C.clamp(pos, 0.0, float(n - 1))
    if padding_mode == "reflection":
        pos = _reflect(pos, 0, 2 * (n - 1)) if align_corners else _reflect(pos, -1, 2 * n - 1)
        return _C.clamp(pos, 0.0, float(n - 1))
    return pos


@_fp32  # on PyTorch's float32 autocast list
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples input (N, C, H, W) or (N, C, D, H, W) at the normalised positions of grid
    (N, H', W', 2) or (N, D', H', W', 3), as PyTorch: bilinear (trilinear for volumes), nearest
    (half to even) or bicubic (4-D), padding zeros / border / reflection. The taps are gathered
    from the flattened planes, so gradients reach the input (scatter-add) and, through the
    interpolation weights, the grid."""
    if align_corners is None:
        align_corners = False
    spatial = input.ndim - 2
    if spatial not in (2, 3):
        raise RuntimeError(f"grid_sample: expected a 4-D or 5-D input, got {input.ndim}-D")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if mode == "bicubic" and spatial == 3:
        raise RuntimeError("grid_sample: bicubic interpolation only supports 4D input")
    if grid.ndim != input.ndim or grid.shape[-1] != spatial or grid.shape[0] != input.shape[0]:
        raise RuntimeError(
            f"grid_sample: expected a grid of shape (N, ..., {spatial}) with N = "
            f"{input.shape[0]} and {input.ndim} dims for an input of shape "
            f"{tuple(input.shape)}, got {tuple(grid.shape)}"
        )
    if grid.dtype != input.dtype:
        raise RuntimeError(
            f"grid_sample: expected grid and input to have the same dtype, got {grid.dtype} "
            f"and {input.dtype}"
        )
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {d} being empty"
            )
    if (
        mode != "bicubic"
        and input.dtype in (oneflow.float32, oneflow.float64, oneflow.float16, oneflow.bfloat16)
        and not input.is_global
        and input.device.type == "cpu"
    ):
        # 16-bit floats through the float32 kernel, the result rounded once to their dtype
        wide = input.dtype in (oneflow.float16, oneflow.bfloat16)
        out = _C._grid_sample(
            input.float() if wide else input,
            grid.float() if wide else grid,
            0 if mode == "bilinear" else 1,
            ("zeros", "border", "reflection").index(padding_mode),
            bool(align_corners),
        )
        return out.to(input.dtype) if wide else out
    n, c = input.shape[:2]
    sizes = list(input.shape[2:])  # D, H, W
    out_sizes = list(grid.shape[1:-1])
    points = math.prod(out_sizes)
    planes = input.reshape(n, c, math.prod(sizes))  # -1 is ambiguous for n or c = 0
    flat_grid = grid.reshape(n, points, spatial)
    # Source coordinates along W, H[, D] (grid's last dim holds x, y[, z]); bicubic pads its
    # integer taps instead of the coordinate.
    pad_coordinate = padding_mode if mode != "bicubic" else "zeros"
    coords = [
        _source_coord(flat_grid[..., k], sizes[spatial - 1 - k], pad_coordinate, align_corners)
        for k in range(spatial)
    ]
    strides = [math.prod(sizes[spatial - k :]) for k in range(spatial)]  # W: 1, H: W, D: H*W

    def tap(positions, weight):
        """weight (N, P) times the input at integer positions (one per axis, (N, P) each);
        taps outside the input contribute nothing."""
        inside = None
        flat = None
        for k, pos in enumerate(positions):
            n_k = sizes[spatial - 1 - k]
            ok = _C.logical_and(_C.ge(pos, 0), _C.le(pos, n_k - 1))
            inside = ok if inside is None else _C.logical_and(inside, ok)
            # a NaN position (inside is false) reads element 0 rather than a wild index
            safe = oneflow.where(_C.isnan(pos), 0.0, _C.clamp(pos, 0, n_k - 1))
            part = _C.mul(safe.long(), strides[k])
            flat = part if flat is None else _C.add(flat, part)
        index = _C.unsqueeze(flat, 1).expand(n, c, points)
        values = _C.gather(planes, 2, index)
        w = oneflow.where(inside, weight, 0.0)
        return _C.mul(values, _C.unsqueeze(w, 1))

    if mode == "bicubic":
        # A point with a NaN or infinite position reads nothing (its taps at position 0 are
        # weighed by 0) and comes out NaN with a NaN grid gradient, as PyTorch's output.
        bad = None
        for x in coords:
            b = _C.logical_not(oneflow.isfinite(x))
            bad = b if bad is None else _C.logical_or(bad, b)
        coords = [oneflow.where(bad, 0.0, x) for x in coords]
        lows = [oneflow.floor(x) for x in coords]
        weights = [_cubic_weights(_C.sub(x, lo)) for x, lo in zip(coords, lows)]
        weights = [[oneflow.where(bad, 0.0, w) for w in ws] for ws in weights]
        out = None
        for i in range(4):
            px = _padded_tap(_C.add(lows[0], float(i - 1)), sizes[1], padding_mode, align_corners)
            for j in range(4):
                py = _padded_tap(
                    _C.add(lows[1], float(j - 1)), sizes[0], padding_mode, align_corners
                )
                part = tap([px, py], _C.mul(weights[0][i], weights[1][j]))
                out = part if out is None else _C.add(out, part)
        # s * s - s * s is 0 (gradient 0) at finite points and NaN (gradient NaN) at the others
        # (none without channels: there is no value for the NaN to reach)
        if c > 0:
            s = oneflow.where(bad, _C.add(flat_grid[..., 0], flat_grid[..., 1]), 0.0)
            out = _C.add(out, _C.unsqueeze(_C.sub(_C.mul(s, s), _C.mul(s, s)), 1))
        return out.reshape(n, c, *out_sizes)
    if mode == "nearest":
        nearest = [oneflow.round(x) for x in coords]
        # A weight of 1 that depends on the grid (through round's zero gradient), so that the
        # grid gets a zero gradient as in PyTorch; non-finite positions are outside and masked.
        one = _C.add(_C.sub(nearest[0], nearest[0]), 1.0)
        out = tap(nearest, one)
    else:
        lows = [oneflow.floor(x) for x in coords]
        fracs = [_C.sub(x, lo) for x, lo in zip(coords, lows)]
        out = None
        for corner in range(2**spatial):
            positions, weight = [], None
            for k in range(spatial):
                upper = (corner >> k) & 1
                positions.append(_C.add(lows[k], 1.0) if upper else lows[k])
                wk = fracs[k] if upper else _C.sub(1.0, fracs[k])
                weight = wk if weight is None else _C.mul(weight, wk)
            part = tap(positions, weight)
            out = part if out is None else _C.add(out, part)
    return out.reshape(n, c, *out_sizes)


__all__ = [
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "pad",
    "unfold",
    "fold",
    "pixel_shuffle",
    "pixel_unshuffle",
    "affine_grid",
    "grid_sample",
]
