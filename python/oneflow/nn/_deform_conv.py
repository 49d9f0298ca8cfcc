"""Deformable convolution (oneflow.nn.functional.deform_conv2d), DCNv1 and, with a mask, DCNv2.

Semantics follow torchvision.ops.deform_conv2d, which OneFlow's own kernel mirrors: kernel tap
(i, j) of output pixel (oy, ox) reads the input at

    y = oy * stride_h - pad_h + i * dilation_h + dy
    x = ox * stride_w - pad_w + j * dilation_w + dx

by bilinear interpolation, a neighbour outside the image counting as zero. offset holds, per
offset group and tap, the pair (dy, dx); mask (DCNv2) scales each sampled value. Input channels
split evenly into offset groups, and independently into weight groups of weight.shape[1].

The function is composed of existing tensor ops (gather, elementwise arithmetic, one batched
matmul), so autograd supplies gradients for input, offset, mask, weight and bias. The four
bilinear neighbours of every sample are read with a single gather on the flattened image; a
neighbour outside the image is read at a clamped index and its weight zeroed.
"""

import oneflow

__all__ = ["deform_conv2d"]


def _pair(name, value, minimum):
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    try:
        pair = tuple(int(v) for v in value)
    except TypeError:
        pair = ()
    if len(pair) != 2 or pair != tuple(value):
        raise ValueError(f"deform_conv2d: {name} must be an int or a pair of ints, got {value!r}")
    if min(pair) < minimum:
        raise ValueError(f"deform_conv2d: {name} must be >= {minimum}, got {pair}")
    return pair


def _check_4d(name, t):
    if not isinstance(t, oneflow.Tensor):
        raise TypeError(f"deform_conv2d: {name} must be a Tensor, got {type(t).__name__}")
    if t.ndim != 4:
        raise RuntimeError(
            f"deform_conv2d: expected {name} to be a 4-D tensor, got {t.ndim}-D of shape "
            f"{tuple(t.shape)}"
        )


def deform_conv2d(
    input,
    offset,
    weight,
    bias=None,
    stride=(1, 1),
    padding=(0, 0),
    dilation=(1, 1),
    mask=None,
):
    r"""Deformable convolution, as in torchvision.ops.deform_conv2d.

    Args:
        input (Tensor[N, C_in, H, W]): input tensor.
        offset (Tensor[N, 2 * offset_groups * kh * kw, out_h, out_w]): (dy, dx) per offset group
            and kernel tap.
        weight (Tensor[C_out, C_in // groups, kh, kw]): convolution weights.
        bias (Tensor[C_out], optional): added to every output position.
        stride, padding, dilation (int or Tuple[int, int]): as in conv2d.
        mask (Tensor[N, offset_groups * kh * kw, out_h, out_w], optional): modulation scalars
            (Deformable ConvNets v2); ``None`` gives Deformable ConvNets v1.

    Returns:
        Tensor[N, C_out, out_h, out_w]
    """
    _check_4d("input", input)
    _check_4d("offset", offset)
    _check_4d("weight", weight)
    if mask is not None:
        _check_4d("mask", mask)
    stride_h, stride_w = _pair("stride", stride, 1)
    pad_h, pad_w = _pair("padding", padding, 0)
    dil_h, dil_w = _pair("dilation", dilation, 1)

    n, c_in, in_h, in_w = (int(s) for s in input.shape)
    c_out, c_per_wgroup, kh, kw = (int(s) for s in weight.shape)
    taps = kh * kw
    if taps == 0 or c_per_wgroup == 0:
        raise RuntimeError(
            f"deform_conv2d: weight must have non-empty dims 1-3, got shape {tuple(weight.shape)}"
        )
    if c_in % c_per_wgroup != 0:
        raise RuntimeError(
            f"deform_conv2d: input channels ({c_in}) must be a multiple of weight.shape[1] "
            f"({c_per_wgroup})"
        )
    wgroups = c_in // c_per_wgroup
    if c_out % wgroups != 0:
        raise RuntimeError(
            f"deform_conv2d: weight.shape[0] ({c_out}) must be a multiple of the number of weight "
            f"groups ({wgroups} = input channels {c_in} // weight.shape[1] {c_per_wgroup})"
        )
    off_ch = int(offset.shape[1])
    if off_ch == 0 or off_ch % (2 * taps) != 0:
        raise RuntimeError(
            "deform_conv2d: offset.shape[1] must be a positive multiple of "
            f"2 * kernel_h * kernel_w = {2 * taps}, got {off_ch}"
        )
    ogroups = off_ch // (2 * taps)
    if c_in % ogroups != 0:
        raise RuntimeError(
            f"deform_conv2d: input channels ({c_in}) must be a multiple of the number of offset "
            f"groups ({ogroups} = offset.shape[1] {off_ch} // {2 * taps})"
        )

    out_h = (in_h + 2 * pad_h - dil_h * (kh - 1) - 1) // stride_h + 1
    out_w = (in_w + 2 * pad_w - dil_w * (kw - 1) - 1) // stride_w + 1
    if out_h <= 0 or out_w <= 0:
        raise RuntimeError(
            f"deform_conv2d: computed output size ({out_h}, {out_w}) is empty for input "
            f"({in_h}, {in_w}), kernel ({kh}, {kw}), stride, padding and dilation given"
        )
    want = (n, 2 * ogroups * taps, out_h, out_w)
    if tuple(offset.shape) != want:
        raise RuntimeError(
            f"deform_conv2d: expected offset of shape {want}, got {tuple(offset.shape)}"
        )
    if mask is not None:
        want = (n, ogroups * taps, out_h, out_w)
        if tuple(mask.shape) != want:
            raise RuntimeError(
                f"deform_conv2d: expected mask of shape {want}, got {tuple(mask.shape)}"
            )
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise RuntimeError(
            f"deform_conv2d: expected bias of shape ({c_out},), got {tuple(bias.shape)}"
        )
    for name, t in (("offset", offset), ("weight", weight), ("mask", mask), ("bias", bias)):
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError(
                f"deform_conv2d: expected {name} of dtype {input.dtype}, got {t.dtype}"
            )

    dtype, device = input.dtype, input.device
    positions = out_h * out_w
    cg = c_in // ogroups

    # Sampling positions, (N, offset_groups, taps, out_h, out_w).
    off = offset.reshape(n, ogroups, taps, 2, out_h, out_w)
    tap_i = oneflow.arange(kh, dtype=dtype, device=device).reshape(kh, 1, 1, 1)
    tap_j = oneflow.arange(kw, dtype=dtype, device=device).reshape(1, kw, 1, 1)
    oy = oneflow.arange(out_h, dtype=dtype, device=device).reshape(1, 1, out_h, 1)
    ox = oneflow.arange(out_w, dtype=dtype, device=device).reshape(1, 1, 1, out_w)
    base_y = (oy * stride_h - pad_h + tap_i * dil_h).expand(kh, kw, out_h, out_w)
    base_x = (ox * stride_w - pad_w + tap_j * dil_w).expand(kh, kw, out_h, out_w)
    y = base_y.reshape(1, 1, taps, out_h, out_w) + off[:, :, :, 0]
    x = base_x.reshape(1, 1, taps, out_h, out_w) + off[:, :, :, 1]

    # The integer cell is piecewise constant: no gradient through it, only through the
    # fractional parts.
    y0 = oneflow.floor(y).detach()
    x0 = oneflow.floor(x).detach()
    ly = y - y0
    lx = x - x0
    hy = 1 - ly
    hx = 1 - lx
    y0i = y0.to(oneflow.int64)
    x0i = x0.to(oneflow.int64)
    y1i = y0i + 1
    x1i = x0i + 1

    indices, weights = [], []
    for yi, xi, wgt in (
        (y0i, x0i, hy * hx),
        (y0i, x1i, hy * lx),
        (y1i, x0i, ly * hx),
        (y1i, x1i, ly * lx),
    ):
        inside = (yi >= 0) & (yi < in_h) & (xi >= 0) & (xi < in_w)
        indices.append(yi.clamp(0, in_h - 1) * in_w + xi.clamp(0, in_w - 1))
        weights.append(wgt * inside.to(dtype))
    # (N, G, 4 * taps * positions): the four neighbours side by side, read with one gather.
    index = oneflow.stack(indices, dim=2).reshape(n, ogroups, 1, 4 * taps * positions)
    corner_w = oneflow.stack(weights, dim=2)
    if mask is not None:
        # Modulation folds into the interpolation weights; same result, fewer full-size ops.
        corner_w = corner_w * mask.reshape(n, ogroups, 1, taps, out_h, out_w)
    corner_w = corner_w.reshape(n, ogroups, 1, 4, taps * positions)

    image = input.reshape(n, ogroups, cg, in_h * in_w)
    sampled = oneflow.gather(image, 3, index.expand(n, ogroups, cg, 4 * taps * positions))
    sampled = sampled.reshape(n, ogroups, cg, 4, taps * positions)
    # columns: (N, C_in * taps, positions), channel-major like weight.reshape(C_out, -1).
    columns = (sampled * corner_w).sum(dim=3)

    k = c_per_wgroup * taps
    columns = columns.reshape(n, wgroups, k, positions)
    w = weight.reshape(1, wgroups, c_out // wgroups, k)
    out = oneflow.matmul(w, columns).reshape(n, c_out, out_h, out_w)
    if bias is not None:
        out = out + bias.reshape(1, c_out, 1, 1)
    return out
