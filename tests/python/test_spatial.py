"""interpolate, pad, unfold/fold and pixel_shuffle against PyTorch (values and gradients)."""

import pytest

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
    import torch

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
