"""interpolate, pad, unfold/fold and pixel_shuffle against PyTorch (values and gradients)."""

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import check

INTERP = [
    ((1, 2, 7), {"size": 11, "mode": "nearest"}),
    ((1, 2, 7), {"scale_factor": 2.5, "mode": "nearest"}),
    ((1, 2, 7), {"size": 4, "mode": "nearest-exact"}),
    ((2, 1, 6), {"size": 9, "mode": "linear"}),
    ((2, 1, 6), {"size": 4, "mode": "linear", "align_corners": True}),
    ((1, 2, 5, 4), {"size": (7, 9), "mode": "bilinear"}),
    ((1, 2, 5, 4), {"scale_factor": 1.7, "mode": "bilinear", "align_corners": True}),
    ((1, 2, 5, 4), {"size": (3, 8), "mode": "bicubic"}),
    ((1, 2, 5, 4), {"size": (6, 6), "mode": "bicubic", "align_corners": True}),
    ((1, 1, 3, 4, 5), {"size": (5, 3, 7), "mode": "trilinear"}),
    ((1, 1, 3, 4, 5), {"scale_factor": 2, "mode": "nearest"}),
    ((1, 3, 8, 6), {"size": (4, 3), "mode": "area"}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(INTERP)))
def test_interpolate(case, dtype, device):
    shape, kwargs = INTERP[case]
    check(
        lambda lib, x: lib.nn.functional.interpolate(x, **kwargs),
        [shape],
        dtype=dtype,
        device=device,
    )


# Sizes that cross the resampling kernels' work items: rows of more than 256 elements (two
# blocks of accumulator rows in the backward), many rows per thread, down- and upsampling, and
# a zero-size batch.
LARGE_INTERP = [
    ((2, 3, 37, 300), {"size": (70, 513), "mode": "bilinear"}),
    ((2, 3, 37, 300), {"size": (20, 111), "mode": "bilinear", "align_corners": True}),
    ((3, 2, 40, 30), {"scale_factor": 2, "mode": "bicubic"}),
    ((1, 2, 33, 45), {"size": (17, 90), "mode": "bicubic", "align_corners": True}),
    ((2, 2, 9, 10, 11), {"size": (17, 5, 23), "mode": "trilinear"}),
    ((3, 4, 1000), {"size": 1500, "mode": "linear"}),
    ((3, 4, 1000), {"size": 333, "mode": "linear", "align_corners": True}),
    ((0, 2, 5, 4), {"size": (7, 9), "mode": "bilinear"}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(LARGE_INTERP)))
def test_interpolate_large_like_torch(case, dtype, device):
    shape, kwargs = LARGE_INTERP[case]
    check(
        lambda lib, x: lib.nn.functional.interpolate(x, **kwargs),
        [shape],
        dtype=dtype,
        device=device,
    )


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_double_backward_like_torch(mode):
    # The gradient is linear in the output's cotangent: its own gradient (with respect to that
    # cotangent) is the forward resampling again.
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 6, 7))
    v = rng.standard_normal((2, 3, 11, 4))
    u = rng.standard_normal(x.shape)

    def run(lib):
        xt = lib.tensor(x, requires_grad=True)
        vt = lib.tensor(v, requires_grad=True)
        y = lib.nn.functional.interpolate(xt, size=(11, 4), mode=mode)
        (g,) = lib.autograd.grad(y, xt, vt, create_graph=True)
        (g * lib.tensor(u)).sum().backward()
        return g.detach().numpy(), vt.grad.numpy()

    for got, want in zip(run(flow), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_resample_kernel_rejects_bad_taps():
    x = flow.ones(2, 5)
    index = flow.tensor([[0, 4, 5]])
    weight = flow.tensor([[1.0, 0.5, 0.5]], dtype=flow.float64)
    with pytest.raises(IndexError, match="resample"):
        flow._oneflow_internal._C.resample(x, index, weight, 1)
    with pytest.raises(RuntimeError, match="resample"):
        flow._oneflow_internal._C.resample(x, index, weight.float(), 1)
    with pytest.raises(TypeError, match="resample"):
        flow._oneflow_internal._C.resample(x.long(), flow.tensor([[0, 1]]), weight[:, :2], 1)


PADS = [
    ((2, 3, 5), (2, 1), "reflect"),
    ((2, 3, 5), (1, 3), "replicate"),
    ((2, 3, 5), (2, 4), "circular"),
    ((1, 2, 4, 5), (1, 2, 3, 1), "reflect"),
    ((1, 2, 4, 5), (2, 0, 1, 3), "replicate"),
    ((1, 2, 4, 5), (1, 1, 2, 2), "circular"),
    ((1, 2, 3, 4, 5), (1, 1, 1, 1, 1, 1), "replicate"),
    ((2, 3), (1, 2, 0, 1), "constant"),
    ((2, 5), (-1, 2), "constant"),
    ((2, 3, 4, 5), (1, 2, 0, 3, 2, 0), "constant"),
    ((3, 4), (0, 0), "constant"),
]


@pytest.mark.parametrize("case", range(len(PADS)))
def test_pad_modes(case, device):
    shape, pad, mode = PADS[case]
    check(
        lambda lib, x: lib.nn.functional.pad(x, pad, mode=mode),
        [shape],
        dtype="float64",
        device=device,
    )


def test_constant_pad_gradient_is_a_crop_of_broadcast_and_strided_grads():
    """The gradient of a constant pad crops dy through a view: a broadcast dy (the gradient of
    sum), a transposed one, and a gradient that is itself differentiable in dy."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4, 5))
    v = rng.standard_normal((2, 3, 4, 5))
    gy = rng.standard_normal((2, 3, 8, 7))
    pad = (2, 1, 0, 3)
    results = []
    for lib in (flow, torch):
        t = lib.tensor(x, requires_grad=True)
        lib.nn.functional.pad(t, pad, value=1.5).sum().backward()
        u = lib.tensor(x, requires_grad=True)
        g = lib.tensor(gy, requires_grad=True)
        y = lib.nn.functional.pad(u, pad)
        (gx,) = lib.autograd.grad(y, u, g.transpose(2, 3), create_graph=True)
        (gg,) = lib.autograd.grad((gx * lib.tensor(v)).sum(), g)
        results.append((t.grad.numpy(), gx.detach().numpy(), gg.numpy()))
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(results[0][0], np.ones_like(x))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kernel_size": 2},
        {"kernel_size": (2, 3), "stride": 2, "padding": 1},
        {"kernel_size": 3, "dilation": 2, "padding": (1, 2), "stride": (1, 2)},
    ],
)
def test_unfold_fold(kwargs, device):
    check(lambda lib, x: lib.nn.functional.unfold(x, **kwargs), [(2, 3, 7, 8)], device=device)

    cols = torch.nn.functional.unfold(torch.zeros(2, 3, 7, 8), **kwargs)
    check(
        lambda lib, x: lib.nn.functional.fold(x, (7, 8), **kwargs),
        [tuple(cols.shape)],
        dtype="float64",
        device=device,
    )


def test_pixel_shuffle(device):
    check(lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2), [(2, 8, 3, 4)], device=device)
    check(lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2), [(2, 3, 4, 6)], device=device)


def test_spatial_errors():
    F = flow.nn.functional
    with pytest.raises(NotImplementedError, match="bilinear"):  # as torch
        F.interpolate(flow.ones(1, 1, 4), size=3, mode="bilinear")
    with pytest.raises(ValueError, match="exactly one"):
        F.interpolate(flow.ones(1, 1, 4))
    # Spatial sizes of zero, in or out (as torch: RuntimeError).
    with pytest.raises(RuntimeError, match="greater than 0"):
        F.interpolate(flow.ones(1, 1, 2, 2), size=(0, 3), mode="bilinear")
    with pytest.raises(RuntimeError, match="greater than 0"):
        F.interpolate(flow.ones(1, 1, 2, 0), size=(3, 3), mode="nearest")
    with pytest.raises(RuntimeError, match="padding size should be less"):
        F.pad(flow.ones(1, 1, 3), (3, 0), mode="reflect")
    with pytest.raises(RuntimeError, match="pixel_shuffle"):
        F.pixel_shuffle(flow.ones(1, 3, 2, 2), 2)


BORDER_PADS = [
    ((3, 7), (3, 6)),
    ((2, 3, 9), (0, 8)),
    ((2, 2, 5, 6), (4, 5, 0, 4)),
    ((1, 2, 4, 5, 6), (1, 2, 3, 0, 2, 3)),
    ((2, 1, 1, 4), (0, 0, 0, 0)),
    ((0, 2, 3, 4), (1, 1, 2, 2)),
]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("case", range(len(BORDER_PADS)))
def test_border_pad_kernel_like_torch(mode, case):
    # The Pad primitive: padding up to the size (reflect: size - 1), on 1-3 trailing dims,
    # float32 (strided input) and float64 values and gradients, integer and 16-bit values;
    # the constant mode with a fill value and with pads that crop.
    shape, pad = BORDER_PADS[case]
    pad = tuple(min(p, shape[-1 - i // 2] - (mode == "reflect")) for i, p in enumerate(pad))
    kw = {"mode": mode, "value": 2.5} if mode == "constant" else {"mode": mode}
    check(
        lambda lib, x: lib.nn.functional.pad(x, pad, **kw),
        [shape],
        dtype="float64",
    )
    if mode == "constant":
        crop = tuple(-1 if i % 3 == 1 and shape[-1 - i // 2] > 1 else p for i, p in enumerate(pad))
        check(lambda lib, x: lib.nn.functional.pad(x, crop), [shape], dtype="float64")
    check(
        lambda lib, x: lib.nn.functional.pad(x, pad, **kw),
        [shape[:-2] + (shape[-1], shape[-2])] if len(shape) > 2 else [shape],
        transform=(lambda lib, t, i: t.transpose(-1, -2)) if len(shape) > 2 else None,
    )
    import numpy as np
    import torch

    a = np.arange(int(np.prod(shape))).reshape(shape)
    for dtype in ["int64", "int8", "float16", "bool"]:
        arr = (a % 7 == 0) if dtype == "bool" else a.astype(dtype)
        if mode == "constant":
            kw["value"] = 3
        if dtype == "bool" and mode in ("reflect", "replicate"):
            # PyTorch has no bool kernels for these two modes (NotImplementedError).
            with pytest.raises(NotImplementedError, match=f"pad: mode='{mode}'"):
                flow.nn.functional.pad(flow.tensor(arr), pad, **kw)
            continue
        f = flow.nn.functional.pad(flow.tensor(arr), pad, **kw)
        t = torch.nn.functional.pad(torch.tensor(arr).double(), pad, **kw)
        np.testing.assert_array_equal(f.numpy(), t.numpy().astype(arr.dtype))


def test_border_pad_rejects_bad_sizes():
    x = flow.randn(1, 2, 3, 4)
    with pytest.raises(RuntimeError, match="pad: padding size should be less than"):
        flow.nn.functional.pad(x, (4, 0), mode="reflect")
    with pytest.raises(RuntimeError, match="pad: padding value causes wrapping"):
        flow.nn.functional.pad(x, (0, 0, 4, 0), mode="circular")
