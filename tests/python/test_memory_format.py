"""Memory formats (channels_last) against PyTorch: strides, values and gradients."""

import pickle

import numpy as np
import pytest
import torch

import oneflow as flow

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def both(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return flow.tensor(a), torch.tensor(a)


def same(f, t):
    assert tuple(f.shape) == tuple(t.shape)
    assert f.stride() == t.stride()
    np.testing.assert_array_equal(f.numpy().copy(), t.detach().numpy())


def test_format_objects():
    for name in FORMATS:
        fmt = getattr(flow, name)
        assert isinstance(fmt, flow.memory_format)
        assert repr(fmt) == "oneflow." + name
        assert pickle.loads(pickle.dumps(fmt)) is fmt


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 1), (2, 1, 4, 5), (0, 3, 2, 2)])
def test_contiguous_channels_last(shape):
    f, t = both(shape)
    fc, tc = (
        f.contiguous(memory_format=flow.channels_last),
        t.contiguous(memory_format=torch.channels_last),
    )
    same(fc, tc)
    for fmt in ("contiguous_format", "channels_last"):
        for a, b in ((f, t), (fc, tc)):
            assert a.is_contiguous(memory_format=getattr(flow, fmt)) == b.is_contiguous(
                memory_format=getattr(torch, fmt)
            )
    # already channels-last: the same tensor back
    assert fc.contiguous(memory_format=flow.channels_last) is fc
    if fc.numel():  # PyTorch hands back an empty tensor whatever its strides
        same(fc.contiguous(), tc.contiguous())


def test_channels_last_3d_and_rank_errors():
    f, t = both((2, 3, 2, 4, 5))
    same(
        f.contiguous(memory_format=flow.channels_last_3d),
        t.contiguous(memory_format=torch.channels_last_3d),
    )
    with pytest.raises(RuntimeError, match="rank 4"):
        f.contiguous(memory_format=flow.channels_last)
    with pytest.raises(RuntimeError, match="rank 5"):
        flow.zeros(2, 3, 4, 5).contiguous(memory_format=flow.channels_last_3d)
    with pytest.raises(TypeError, match="memory_format"):
        flow.zeros(2, 3, 4, 5).contiguous(memory_format="channels_last")


def test_is_contiguous_on_views_matches_torch():
    f, t = both((4, 6, 5, 3))
    views = [
        lambda x: x.permute(0, 2, 3, 1),
        lambda x: x.permute(0, 3, 1, 2),
        lambda x: x[:, :, ::2],
        lambda x: x.contiguous(
            memory_format=(flow if x.__class__ is flow.Tensor else torch).channels_last
        )[:, :2],
        lambda x: x.transpose(2, 3),
    ]
    for v in views:
        a, b = v(f), v(t)
        for fmt in ("contiguous_format", "channels_last"):
            assert a.is_contiguous(memory_format=getattr(flow, fmt)) == b.is_contiguous(
                memory_format=getattr(torch, fmt)
            )


def test_clone_and_like_factories_preserve_layout():
    f, t = both((2, 3, 4, 5))
    fc, tc = (
        f.contiguous(memory_format=flow.channels_last),
        t.contiguous(memory_format=torch.channels_last),
    )
    same(fc.clone(), tc.clone())
    same(flow.clone(fc), torch.clone(tc))
    same(
        fc.clone(memory_format=flow.contiguous_format),
        tc.clone(memory_format=torch.contiguous_format),
    )
    same(f.clone(memory_format=flow.channels_last), t.clone(memory_format=torch.channels_last))
    # a dense permutation keeps its strides
    fp, tp = f.permute(3, 1, 0, 2), t.permute(3, 1, 0, 2)
    same(fp.clone(), tp.clone())
    # a strided (non-dense) view becomes contiguous
    same(f[:, :, ::2].clone(), t[:, :, ::2].clone())
    for name in ("zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"):
        a, b = getattr(flow, name)(fc), getattr(torch, name)(tc)
        assert a.stride() == b.stride(), name
        a = getattr(flow, name)(fc, memory_format=flow.contiguous_format)
        assert a.is_contiguous(), name
        a = getattr(flow, name)(f, memory_format=flow.channels_last)
        assert a.stride() == tc.stride(), name
    full = flow.full_like(fc, 2.5)
    assert full.stride() == tc.stride()
    assert (full.numpy() == 2.5).all()
    assert flow.ones_like(fc).numpy().sum() == fc.numel()
    e = flow.empty(2, 3, 4, 5, memory_format=flow.channels_last)
    assert e.stride() == torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    z = flow.zeros_like(fc, requires_grad=True)
    assert z.is_leaf and z.requires_grad and z.stride() == tc.stride()


def test_clone_keeps_gradient():
    f, t = both((2, 3, 4, 5))
    f.requires_grad_(), t.requires_grad_()
    w = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    for fmt in ("channels_last", "preserve_format", "contiguous_format"):
        f.grad = None
        t.grad = None
        a = f.contiguous(memory_format=flow.channels_last).clone(memory_format=getattr(flow, fmt))
        b = t.contiguous(memory_format=torch.channels_last).clone(memory_format=getattr(torch, fmt))
        assert a.stride() == b.stride()
        (a * flow.tensor(w)).sum().backward()
        (b * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy())


def test_tensor_to_and_module_to():
    f, t = both((2, 3, 4, 5))
    same(f.to(memory_format=flow.channels_last), t.to(memory_format=torch.channels_last))
    a = f.to(flow.float64, memory_format=flow.channels_last)
    assert a.dtype == flow.float64 and a.stride() == (60, 1, 15, 3)
    torch.manual_seed(0)
    tm = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.Linear(2, 2)
    )
    fm = flow.nn.Sequential(flow.nn.Conv2d(3, 8, 3), flow.nn.BatchNorm2d(8), flow.nn.Linear(2, 2))
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    params = list(fm.parameters())
    tm.to(memory_format=torch.channels_last)
    fm.to(memory_format=flow.channels_last)
    assert list(fm.parameters()) == params  # the same Parameter objects
    assert isinstance(fm[0].weight, flow.nn.Parameter)
    for (kf, vf), (kt, vt) in zip(fm.state_dict().items(), tm.state_dict().items()):
        assert kf == kt and vf.stride() == vt.stride(), kf
    with pytest.raises(TypeError, match="unexpected keyword"):
        fm.to(memory_fromat=flow.channels_last)


def test_channels_last_training_matches_torch():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 4, 1),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
    )
    fm = flow.nn.Sequential(
        flow.nn.Conv2d(3, 8, 3, padding=1),
        flow.nn.BatchNorm2d(8),
        flow.nn.ReLU(),
        flow.nn.MaxPool2d(2),
        flow.nn.Conv2d(8, 4, 1),
        flow.nn.AdaptiveAvgPool2d(1),
        flow.nn.Flatten(),
    )
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tm.to(memory_format=torch.channels_last)
    fm.to(memory_format=flow.channels_last)
    f, t = both((4, 3, 8, 8))
    fx = f.to(memory_format=flow.channels_last).requires_grad_()
    tx = t.to(memory_format=torch.channels_last).requires_grad_()
    fy, ty = fm(fx), tm(tx)
    np.testing.assert_allclose(fy.numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    fy.square().sum().backward()
    ty.square().sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for pf, pt in zip(fm.parameters(), tm.parameters()):
        np.testing.assert_allclose(pf.grad.numpy(), pt.grad.numpy(), rtol=1e-4, atol=1e-4)
    # elementwise ops keep the channels-last order, as in PyTorch
    same((fx * 2).relu(), (tx * 2).relu())


def test_convert_conv_weight_memory_format():
    m = flow.nn.Sequential(flow.nn.Conv2d(3, 4, 3), flow.nn.Linear(3, 3), flow.nn.Conv3d(2, 2, 1))
    flow.nn.utils.convert_conv2d_weight_memory_format(m, flow.channels_last)
    assert m[0].weight.is_contiguous(memory_format=flow.channels_last)
    assert not m[0].weight.is_contiguous()
    assert m[1].weight.is_contiguous() and m[2].weight.is_contiguous()
    flow.nn.utils.convert_conv3d_weight_memory_format(m, flow.channels_last_3d)
    assert m[2].weight.is_contiguous(memory_format=flow.channels_last_3d)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.arange(12.0).reshape(3, 4).t(),
        lambda lib: lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
        lambda lib: lib.arange(24.0).reshape(2, 3, 4)[:, ::2],
        lambda lib: (
            lib.arange(120.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1)[:, ::2].permute(0, 3, 1, 2)
        ),
    ],
)
@pytest.mark.parametrize(
    "convert",
    [
        lambda t, lib: t.to(lib.float64),
        lambda t, lib: t.double(),
        lambda t, lib: t.half(),
        lambda t, lib: t.to(lib.int32),
        lambda t, lib: t.to(t.dtype, copy=True),
        lambda t, lib: t.to(lib.float64, memory_format=lib.contiguous_format),
        lambda t, lib: t.float(),
    ],
)
def test_conversions_keep_the_layout_like_torch(make, convert):
    ours, ref = convert(make(flow), flow), convert(make(torch), torch)
    assert ours.stride() == ref.stride()
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_fold_with_padding_is_contiguous_like_torch():
    x = np.random.default_rng(0).standard_normal((1, 12, 30)).astype("float32")
    ours = flow.nn.functional.fold(flow.tensor(x), (4, 5), 2, padding=1)
    ref = torch.nn.functional.fold(torch.tensor(x), (4, 5), 2, padding=1)
    assert ours.is_contiguous() and ours.stride() == ref.stride()
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6)
