"""Lazy convolutions and normalisations: channels from the first input, the placeholder
parameters resized in place (an optimizer built before the first call trains them), the plain
class afterwards, PyTorch's shapes, state_dict keys and outputs."""

import numpy as np
import pytest
import torch

import oneflow as flow

CASES = [
    ("LazyConv1d", (4, 3), (2, 5, 9)),
    ("LazyConv2d", (4, 3), (2, 5, 7, 7)),
    ("LazyConv2d", (4, 3), (5, 7, 7)),  # unbatched
    ("LazyConv3d", (2, 2), (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), (2, 5, 6)),
    ("LazyConvTranspose2d", (4, 2), (2, 3, 5, 5)),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), (4, 6)),
    ("LazyBatchNorm1d", (), (4, 6, 5)),
    ("LazyBatchNorm2d", (), (3, 4, 5, 5)),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (3, 4, 5)),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_lazy_modules_like_torch(case):
    name, args, shape = CASES[case]
    fm, tm = getattr(flow.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert type(fm).__name__ == name
    x = np.random.default_rng(case).standard_normal(shape).astype(np.float32)
    to = tm(torch.tensor(x))
    fo = fm(flow.tensor(x))
    assert type(fm).__name__ == type(tm).__name__ and type(fm) is getattr(
        flow.nn, type(tm).__name__
    )
    assert tuple(fo.shape) == tuple(to.shape)
    assert list(fm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        assert tuple(fm.state_dict()[k].shape) == tuple(v.shape), k
    # with PyTorch's values (its state after one training forward), the same outputs
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    fm.eval()
    tm.eval()
    np.testing.assert_allclose(
        fm(flow.tensor(x)).detach().numpy(),
        tm(torch.tensor(x)).detach().numpy(),
        rtol=1e-4,
        atol=1e-5,
    )


def test_an_optimizer_built_before_the_first_call_trains_the_parameters():
    model = flow.nn.Sequential(flow.nn.LazyConv2d(4, 3), flow.nn.LazyBatchNorm2d(), flow.nn.ReLU())
    opt = flow.optim.SGD(model.parameters(), lr=0.5)
    params = list(model.parameters())
    x = flow.randn(2, 3, 6, 6)
    model(x).sum().backward()
    before = [p.numpy().copy() for p in params]
    assert params[0].shape == (4, 3, 3, 3) and params[0] is model[0].weight
    opt.step()
    assert all(not np.allclose(b, p.numpy()) for b, p in zip(before, params))
    assert model[0].weight.requires_grad and model[0].weight.is_leaf


def test_lazy_module_errors_and_flags():
    m = flow.nn.LazyConv2d(4, 3)
    with pytest.raises(ValueError, match="expected a 3-D"):
        m(flow.randn(2, 3))
    b = flow.nn.LazyBatchNorm1d(affine=False).eval()
    out = b(flow.randn(4, 6))
    assert not b.training and b.weight is None and tuple(out.shape) == (4, 6)
    assert (
        flow.nn.LazyInstanceNorm2d().affine
        and not flow.nn.LazyInstanceNorm2d(1e-5, 0.1, False).affine
    )


def test_lazy_reprs_like_torch():
    for name, args in (
        ("LazyConv2d", (4, 3)),
        ("LazyBatchNorm2d", ()),
        ("LazyConvTranspose1d", (2, 2)),
    ):
        assert repr(getattr(flow.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


def test_uninitialized_parameters_until_the_first_call_like_torch():
    for lib in (flow, torch):
        m = lib.nn.LazyConv2d(4, 3)
        assert isinstance(m.weight, lib.nn.UninitializedParameter)
        assert isinstance(m.weight, lib.nn.Parameter)
        assert lib.nn.parameter.is_lazy(m.weight)
        weight = m.weight
        m(lib.randn(1, 2, 5, 5))
        assert type(m.weight) is lib.nn.Parameter and m.weight is weight
        assert not lib.nn.parameter.is_lazy(m.weight)
        b = lib.nn.LazyBatchNorm1d()
        assert isinstance(b.running_mean, lib.nn.UninitializedBuffer)
        b(lib.randn(3, 2))
        assert not isinstance(b.running_mean, lib.nn.UninitializedBuffer)
