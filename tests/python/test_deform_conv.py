"""oneflow.nn.functional.deform_conv2d: zero offsets against torch conv2d (values and gradients),
random fractional offsets and masks against a direct NumPy loop, finite-difference gradients
for offset, mask and input in float64, and argument checking."""

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.nn.functional as F


def _t(a, device, requires_grad=False):
    t = flow.tensor(np.ascontiguousarray(a)).to(device)
    return t.requires_grad_() if requires_grad else t


def _np(t):
    return t.detach().cpu().numpy()


def _bilinear(img, y, x):
    """Bilinear sample of a 2-D image; neighbours outside it count as zero."""
    h, w = img.shape
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    total = 0.0
    for yy in (y0, y0 + 1):
        for xx in (x0, x0 + 1):
            if 0 <= yy < h and 0 <= xx < w:
                total += (1 - abs(y - yy)) * (1 - abs(x - xx)) * img[yy, xx]
    return total


def _reference(inp, offset, weight, bias, stride, padding, dilation, mask):
    n, c_in, _, _ = inp.shape
    c_out, cpg, kh, kw = weight.shape
    _, off_ch, out_h, out_w = offset.shape
    ogroups = off_ch // (2 * kh * kw)
    wgroups = c_in // cpg
    out = np.zeros((n, c_out, out_h, out_w))
    for b in range(n):
        for oc in range(c_out):
            wg = oc // (c_out // wgroups)
            for oy in range(out_h):
                for ox in range(out_w):
                    acc = 0.0 if bias is None else bias[oc]
                    for ci in range(cpg):
                        c = wg * cpg + ci
                        g = c // (c_in // ogroups)
                        for i in range(kh):
                            for j in range(kw):
                                tap = i * kw + j
                                dy = offset[b, (g * kh * kw + tap) * 2, oy, ox]
                                dx = offset[b, (g * kh * kw + tap) * 2 + 1, oy, ox]
                                y = oy * stride[0] - padding[0] + i * dilation[0] + dy
                                x = ox * stride[1] - padding[1] + j * dilation[1] + dx
                                v = _bilinear(inp[b, c], y, x)
                                if mask is not None:
                                    v *= mask[b, g * kh * kw + tap, oy, ox]
                                acc += weight[oc, ci, i, j] * v
                    out[b, oc, oy, ox] = acc
    return out


def _out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


@pytest.mark.parametrize("seed", range(8))
def test_zero_offset_matches_conv2d(seed, device):
    rng = np.random.default_rng(seed)
    groups = int(rng.integers(1, 4))
    c_in = groups * int(rng.integers(1, 4))
    c_out = groups * int(rng.integers(1, 3))
    kh, kw = (int(v) for v in rng.integers(1, 4, size=2))
    stride = tuple(int(v) for v in rng.integers(1, 3, size=2))
    padding = tuple(int(v) for v in rng.integers(0, 3, size=2))
    dilation = tuple(int(v) for v in rng.integers(1, 3, size=2))
    n = int(rng.integers(1, 3))
    h, w = (int(v) for v in rng.integers(5, 10, size=2))
    out_h = _out_size(h, kh, stride[0], padding[0], dilation[0])
    out_w = _out_size(w, kw, stride[1], padding[1], dilation[1])
    ogroups = int(rng.choice([g for g in (1, 2, 3) if c_in % g == 0]))

    x = rng.standard_normal((n, c_in, h, w))
    wt = rng.standard_normal((c_out, c_in // groups, kh, kw))
    b = rng.standard_normal(c_out)
    cot = rng.standard_normal((n, c_out, out_h, out_w))

    fx, fw, fb = (_t(a, device, True) for a in (x, wt, b))
    offset = _t(np.zeros((n, 2 * ogroups * kh * kw, out_h, out_w)), device)
    got = F.deform_conv2d(fx, offset, fw, fb, stride, padding, dilation)
    (got * _t(cot, device)).sum().backward()

    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, wt, b))
    want = torch.nn.functional.conv2d(tx, tw, tb, stride, padding, dilation, groups)
    (want * torch.tensor(cot)).sum().backward()

    tol = dict(rtol=1e-10, atol=1e-10)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(_np(got), want.detach().numpy(), **tol)
    np.testing.assert_allclose(_np(fx.grad), tx.grad.numpy(), **tol)
    np.testing.assert_allclose(_np(fw.grad), tw.grad.numpy(), **tol)
    np.testing.assert_allclose(_np(fb.grad), tb.grad.numpy(), **tol)

    # A mask of ones is the identity; its gradient is then d(out)/d(mask) at scale 1.
    ones = _t(np.ones((n, ogroups * kh * kw, out_h, out_w)), device)
    masked = F.deform_conv2d(fx, offset, fw, fb, stride, padding, dilation, mask=ones)
    np.testing.assert_allclose(_np(masked), want.detach().numpy(), **tol)


def test_zero_offset_float32_and_int_arguments(device):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 8, 12, 12)).astype(np.float32)
    wt = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
    offset = np.zeros((2, 18, 6, 6), dtype=np.float32)
    got = F.deform_conv2d(_t(x, device), _t(offset, device), _t(wt, device), stride=2, padding=1)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(wt), stride=2, padding=1)
    assert got.dtype == flow.float32
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "shape",
    [
        # n, c_in, h, w, c_out, wgroups, ogroups, kh, kw, stride, padding, dilation
        (1, 2, 5, 4, 3, 1, 1, 3, 3, (1, 1), (1, 1), (1, 1)),
        (2, 4, 6, 5, 4, 2, 2, 2, 3, (2, 1), (1, 0), (1, 2)),
        (1, 6, 5, 6, 2, 1, 3, 3, 2, (1, 2), (2, 1), (2, 1)),
        (2, 4, 4, 4, 6, 2, 1, 1, 1, (1, 1), (0, 0), (1, 1)),
    ],
)
@pytest.mark.parametrize("use_mask", [False, True])
def test_random_offsets_match_numpy_loop(shape, use_mask, device):
    n, c_in, h, w, c_out, wgroups, ogroups, kh, kw, stride, padding, dilation = shape
    rng = np.random.default_rng(sum(shape[:9]) + use_mask)
    out_h = _out_size(h, kh, stride[0], padding[0], dilation[0])
    out_w = _out_size(w, kw, stride[1], padding[1], dilation[1])
    x = rng.standard_normal((n, c_in, h, w))
    wt = rng.standard_normal((c_out, c_in // wgroups, kh, kw))
    b = rng.standard_normal(c_out)
    # Wide enough that many samples land partly or wholly outside the image.
    offset = rng.uniform(-3.5, 3.5, (n, 2 * ogroups * kh * kw, out_h, out_w))
    offset[0, 0, 0, 0] = -h - 4.3  # far outside: contributes zero
    offset[0, 1, 0, 0] = 0.5
    mask = rng.uniform(-1, 2, (n, ogroups * kh * kw, out_h, out_w)) if use_mask else None

    got = F.deform_conv2d(
        _t(x, device),
        _t(offset, device),
        _t(wt, device),
        _t(b, device),
        stride,
        padding,
        dilation,
        mask=None if mask is None else _t(mask, device),
    )
    want = _reference(x, offset, wt, b, stride, padding, dilation, mask)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(_np(got), want, rtol=1e-10, atol=1e-10)
    # The offsets matter: the result is not the plain convolution.
    plain = _reference(x, np.zeros_like(offset), wt, b, stride, padding, dilation, None)
    assert np.abs(want - plain).max() > 0.1


def test_offset_sample_on_border_cells():
    # One pixel, one tap: the sample's value is the bilinear blend, zero-padded past the edge.
    img = np.arange(12, dtype=np.float64).reshape(1, 1, 3, 4)
    wt = np.ones((1, 1, 1, 1))
    cases = [
        ((0.5, 0.5), 2.5),
        ((-0.5, 1.0), 0.5),
        ((2.25, 3.0), 8.25),
        ((0.0, 3.5), 1.5),
        ((-1.0, 0.0), 0.0),
        ((3.0, 0.0), 0.0),
    ]
    for (dy, dx), value in cases:
        offset = np.zeros((1, 2, 3, 4))
        offset[0, :, 0, 0] = (dy, dx)
        got = F.deform_conv2d(flow.tensor(img), flow.tensor(offset), flow.tensor(wt))
        assert _np(got)[0, 0, 0, 0] == pytest.approx(value, abs=1e-12)
        np.testing.assert_allclose(_np(got)[0, 0].ravel()[1:], img.ravel()[1:])


def _fractional_offsets(rng, shape):
    # Integers plus a fraction in [0.2, 0.8]: away from the grid lines where bilinear
    # interpolation has a kink, so central differences are exact up to rounding.
    return rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape)


@pytest.mark.parametrize("ogroups,wgroups", [(1, 1), (2, 2)])
def test_gradients_match_finite_differences(ogroups, wgroups, device):
    rng = np.random.default_rng(10 * ogroups + wgroups)
    n, c_in, h, w, c_out, kh, kw = 2, 4, 5, 4, 4, 2, 3
    stride, padding, dilation = (1, 2), (1, 1), (2, 1)
    out_h = _out_size(h, kh, stride[0], padding[0], dilation[0])
    out_w = _out_size(w, kw, stride[1], padding[1], dilation[1])
    x = rng.standard_normal((n, c_in, h, w))
    wt = rng.standard_normal((c_out, c_in // wgroups, kh, kw))
    b = rng.standard_normal(c_out)
    offset = _fractional_offsets(rng, (n, 2 * ogroups * kh * kw, out_h, out_w))
    mask = rng.uniform(-1, 2, (n, ogroups * kh * kw, out_h, out_w))
    cot = rng.standard_normal((n, c_out, out_h, out_w))

    def loss(x_, off_, m_):
        out = F.deform_conv2d(
            _t(x_, device),
            _t(off_, device),
            _t(wt, device),
            _t(b, device),
            stride,
            padding,
            dilation,
            mask=_t(m_, device),
        )
        return float((_np(out) * cot).sum())

    tensors = [_t(a, device, True) for a in (x, offset, mask)]
    args = (_t(wt, device), _t(b, device), stride, padding, dilation)
    out = F.deform_conv2d(tensors[0], tensors[1], *args, mask=tensors[2])
    (out * _t(cot, device)).sum().backward()

    eps = 1e-6
    arrays = [x, offset, mask]
    for k, arr in enumerate(arrays):
        numeric = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            numeric[idx] = (loss(*plus) - loss(*minus)) / (2 * eps)
        analytic = _np(tensors[k].grad)
        assert np.abs(numeric).max() > 0.1
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6)


def test_gradients_without_mask_match_finite_differences(device):
    rng = np.random.default_rng(3)
    n, c_in, h, w, c_out, k = 1, 2, 4, 4, 2, 2
    x = rng.standard_normal((n, c_in, h, w))
    wt = rng.standard_normal((c_out, c_in, k, k))
    # padding 1 with a 2x2 kernel: a 5x5 output.
    offset = _fractional_offsets(rng, (n, 2 * k * k, 5, 5))
    cot = rng.standard_normal((n, c_out, 5, 5))

    def loss(off_):
        out = F.deform_conv2d(_t(x, device), _t(off_, device), _t(wt, device), padding=1)
        return float((_np(out) * cot).sum())

    off_t = _t(offset, device, True)
    wt_t = _t(wt, device, True)
    out = F.deform_conv2d(_t(x, device), off_t, wt_t, padding=1)
    (out * _t(cot, device)).sum().backward()
    eps = 1e-6
    numeric = np.zeros_like(offset)
    for idx in np.ndindex(offset.shape):
        plus, minus = offset.copy(), offset.copy()
        plus[idx] += eps
        minus[idx] -= eps
        numeric[idx] = (loss(plus) - loss(minus)) / (2 * eps)
    np.testing.assert_allclose(_np(off_t.grad), numeric, rtol=1e-6, atol=1e-6)
    # The output is linear in weight: its gradient is exact against the column sums.
    eye = np.eye(c_in * k * k).reshape(-1, c_in, k, k)
    cols = _reference(x, offset, eye, None, (1, 1), (1, 1), (1, 1), None)
    want_w = np.einsum("nohw,nkhw->ok", cot, cols).reshape(wt.shape)
    np.testing.assert_allclose(_np(wt_t.grad), want_w, rtol=1e-10, atol=1e-10)


def _args(**over):
    a = dict(
        input=flow.randn(2, 4, 6, 6),
        offset=flow.randn(2, 18, 4, 4),
        weight=flow.randn(3, 4, 3, 3),
        bias=None,
        mask=None,
    )
    a.update(over)
    return a


@pytest.mark.parametrize(
    "over,exc,message",
    [
        (dict(input=flow.randn(4, 6, 6)), RuntimeError, "input to be a 4-D"),
        (dict(offset=flow.randn(2, 18, 16)), RuntimeError, "offset to be a 4-D"),
        (dict(weight=flow.randn(3, 4, 9)), RuntimeError, "weight to be a 4-D"),
        (dict(offset=flow.randn(2, 17, 4, 4)), RuntimeError, "multiple of 2 \\* kernel"),
        (dict(offset=flow.randn(2, 0, 4, 4)), RuntimeError, "multiple of 2 \\* kernel"),
        (dict(offset=flow.randn(1, 18, 4, 4)), RuntimeError, r"offset of shape \(2, 18, 4, 4\)"),
        (dict(offset=flow.randn(2, 18, 5, 4)), RuntimeError, r"got \(2, 18, 5, 4\)"),
        (dict(offset=flow.randn(2, 54, 4, 4)), RuntimeError, "offset groups"),
        (dict(weight=flow.randn(3, 3, 3, 3)), RuntimeError, "multiple of weight.shape"),
        (dict(weight=flow.randn(3, 2, 3, 3)), RuntimeError, "weight groups"),
        (dict(mask=flow.randn(2, 18, 4, 4)), RuntimeError, r"mask of shape \(2, 9, 4, 4\)"),
        (dict(mask=flow.randn(2, 9, 4)), RuntimeError, "mask to be a 4-D"),
        (dict(bias=flow.randn(4)), RuntimeError, r"bias of shape \(3,\)"),
        (dict(offset=flow.randn(2, 18, 4, 4).double()), RuntimeError, "offset of dtype"),
        (dict(input=flow.randn(2, 4, 1, 1)), RuntimeError, "output size"),
        (dict(input=np.zeros((2, 4, 6, 6))), TypeError, "input must be a Tensor"),
    ],
)
def test_bad_arguments_raise(over, exc, message):
    with pytest.raises(exc, match="deform_conv2d: " + ".*" + message):
        F.deform_conv2d(**_args(**over))


@pytest.mark.parametrize(
    "kw,message",
    [
        (dict(stride=0), "stride must be >= 1"),
        (dict(stride=(1, 1, 1)), "stride must be an int or a pair"),
        (dict(padding=-1), "padding must be >= 0"),
        (dict(dilation=(1, 0)), "dilation must be >= 1"),
        (dict(dilation=(1.5, 1)), "dilation must be an int or a pair"),
    ],
)
def test_bad_conv_parameters_raise(kw, message):
    with pytest.raises(ValueError, match="deform_conv2d: " + message):
        F.deform_conv2d(**_args(), **kw)
