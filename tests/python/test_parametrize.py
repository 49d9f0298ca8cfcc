"""nn.utils.parametrize and nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal)
and the hook-based spectral_norm, against PyTorch: state_dict keys, values, gradients,
assignment through right_inverse, removal, caching, errors."""

import copy

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow.nn.utils import parametrize


def _same_weights(fm, tm):
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})


class _Symmetric:
    @staticmethod
    def build(lib):
        class Symmetric(lib.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(-1, -2)

            def right_inverse(self, a):
                return a.triu()

        return Symmetric()


def _scale(lib, k):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * k

        def right_inverse(self, y):
            return y / k

    return Scale()


def test_register_parametrization_like_torch():
    torch.manual_seed(0)
    tm = torch.nn.Linear(4, 4)
    fm = flow.nn.Linear(4, 4)
    _same_weights(fm, tm)
    for lib, m in ((flow, fm), (torch, tm)):
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _Symmetric.build(lib))
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _scale(lib, 2.0))
    assert type(fm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(fm) is flow.nn.Linear
    assert list(fm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(fm.state_dict()[k].numpy(), v.numpy(), rtol=1e-6, err_msg=k)
    w = fm.weight.numpy()
    np.testing.assert_allclose(w, w.T, rtol=1e-6)
    np.testing.assert_allclose(w, tm.weight.detach().numpy(), rtol=1e-6)
    # gradients reach the original through both parametrizations
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    fm(flow.tensor(x)).square().sum().backward()
    tm(torch.tensor(x)).square().sum().backward()
    np.testing.assert_allclose(
        fm.parametrizations.weight.original.grad.numpy(),
        tm.parametrizations.weight.original.grad.numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
    # assignment goes through right_inverse, in reverse order
    a = np.random.default_rng(2).standard_normal((4, 4)).astype(np.float32)
    a = a + a.T
    fm.weight = flow.tensor(a)
    tm.weight = torch.tensor(a)
    np.testing.assert_allclose(fm.weight.numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(fm.weight.numpy(), a, rtol=1e-6)
    assert parametrize.is_parametrized(fm) and parametrize.is_parametrized(fm, "weight")
    assert not parametrize.is_parametrized(fm, "bias")


def test_the_original_parameter_object_stays_for_optimizers():
    m = flow.nn.Linear(3, 3)
    weight = m.weight
    opt = flow.optim.SGD(m.parameters(), lr=0.1)
    parametrize.register_parametrization(m, "weight", _Symmetric.build(flow))
    assert m.parametrizations.weight.original is weight
    before = m.weight.numpy().copy()
    m(flow.randn(2, 3)).sum().backward()
    opt.step()
    assert not np.allclose(m.weight.numpy(), before)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_like_torch(leave):
    torch.manual_seed(3)
    tm = torch.nn.Linear(3, 3)
    fm = flow.nn.Linear(3, 3)
    _same_weights(fm, tm)
    for lib, m in ((flow, fm), (torch, tm)):
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _scale(lib, 3.0))
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
    assert type(fm) is flow.nn.Linear and not hasattr(fm, "parametrizations")
    assert isinstance(fm.weight, flow.nn.Parameter)
    np.testing.assert_allclose(fm.weight.numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    assert list(fm.state_dict()) == list(tm.state_dict())
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(fm, "weight")


def test_cached_computes_once_and_errors():
    calls = []

    class Count(flow.nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1

    m = flow.nn.Linear(2, 2)
    parametrize.register_parametrization(m, "weight", Count())
    calls.clear()
    with parametrize.cached():
        first, second = m.weight, m.weight
    assert len(calls) == 1 and first is second
    assert m.weight is not first
    assert len(calls) == 2

    class Wrong(flow.nn.Module):
        def forward(self, x):
            return x[0]

    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(flow.nn.Linear(2, 2), "weight", Wrong())
    parametrize.register_parametrization(flow.nn.Linear(2, 2), "weight", Wrong(), unsafe=True)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(flow.nn.Linear(2, 2), "nothing", Count())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m.weight = flow.zeros(2, 2)
    copy.deepcopy(m)  # a parametrized module copies
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        m.__getstate__()


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization_like_torch(dim):
    torch.manual_seed(4)
    tm = torch.nn.Conv2d(3, 4, 3)
    fm = flow.nn.Conv2d(3, 4, 3)
    _same_weights(fm, tm)
    torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
    flow.nn.utils.parametrizations.weight_norm(fm, dim=dim)
    assert list(fm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(fm.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, err_msg=k)
    x = np.random.default_rng(5).standard_normal((2, 3, 6, 6)).astype(np.float32)
    fo, to = fm(flow.tensor(x)), tm(torch.tensor(x))
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    fo.square().sum().backward()
    to.square().sum().backward()
    for i in range(2):
        np.testing.assert_allclose(
            getattr(fm.parametrizations.weight, f"original{i}").grad.numpy(),
            getattr(tm.parametrizations.weight, f"original{i}").grad.numpy(),
            rtol=1e-4,
            atol=1e-5,
        )


@pytest.mark.parametrize("module", ["linear", "conv_transpose"])
def test_spectral_norm_parametrization_like_torch(module):
    torch.manual_seed(6)
    if module == "linear":
        tm, fm = torch.nn.Linear(5, 4), flow.nn.Linear(5, 4)
    else:
        tm, fm = torch.nn.ConvTranspose2d(3, 4, 2), flow.nn.ConvTranspose2d(3, 4, 2)
    _same_weights(fm, tm)
    torch.nn.utils.parametrizations.spectral_norm(tm)
    flow.nn.utils.parametrizations.spectral_norm(fm)
    assert list(fm.state_dict()) == list(tm.state_dict())
    _same_weights(fm, tm)  # the random start vectors u and v from PyTorch's
    shape = (2, 5) if module == "linear" else (2, 3, 4, 4)
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    for _ in range(3):  # training: one power iteration per forward
        fo, to = fm(flow.tensor(x)), tm(torch.tensor(x))
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    fo.square().sum().backward()
    to.square().sum().backward()
    np.testing.assert_allclose(
        fm.parametrizations.weight.original.grad.numpy(),
        tm.parametrizations.weight.original.grad.numpy(),
        rtol=1e-3,
        atol=1e-5,
    )
    # the largest singular value of the normalised weight (dim 1 first for the transposed
    # convolution) is ~1
    w = fm.weight.detach().numpy()
    w = (w if module == "linear" else np.moveaxis(w, 1, 0)).reshape(
        w.shape[0 if module == "linear" else 1], -1
    )
    assert abs(np.linalg.svd(w, compute_uv=False)[0] - 1) < 0.05


def test_hook_based_spectral_norm_like_torch():
    torch.manual_seed(8)
    tm, fm = torch.nn.Linear(5, 4), flow.nn.Linear(5, 4)
    _same_weights(fm, tm)
    torch.nn.utils.spectral_norm(tm)
    flow.nn.utils.spectral_norm(fm)
    assert sorted(fm.state_dict()) == sorted(tm.state_dict())
    _same_weights(fm, tm)
    x = np.random.default_rng(9).standard_normal((3, 5)).astype(np.float32)
    for _ in range(3):
        fo, to = fm(flow.tensor(x)), tm(torch.tensor(x))
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    fo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(
        fm.weight_orig.grad.numpy(), tm.weight_orig.grad.numpy(), rtol=1e-3, atol=1e-5
    )
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        flow.nn.utils.spectral_norm(fm)
    flow.nn.utils.remove_spectral_norm(fm)
    torch.nn.utils.remove_spectral_norm(tm)
    assert sorted(fm.state_dict()) == sorted(tm.state_dict())
    np.testing.assert_allclose(fm.weight.numpy(), tm.weight.detach().numpy(), rtol=1e-4)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (6, 2)])
def test_orthogonal_stays_orthogonal_while_training(orthogonal_map, shape):
    flow.manual_seed(10)
    m = flow.nn.Linear(shape[1], shape[0], bias=False)
    flow.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)
    opt = flow.optim.SGD(m.parameters(), lr=0.1)

    def check():
        w = m.weight.detach().numpy().astype(np.float64)
        small = min(shape)
        gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
        np.testing.assert_allclose(gram, np.eye(small), atol=1e-4)

    check()
    for _ in range(3):
        opt.zero_grad()
        m(flow.randn(5, shape[1])).square().sum().backward()
        opt.step()
        check()
    # assigning an orthogonal matrix keeps it
    q = np.linalg.qr(np.random.default_rng(11).standard_normal((max(shape), min(shape))))[0]
    q = (q if shape[0] >= shape[1] else q.T).astype(np.float32)
    m.weight = flow.tensor(q)
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-4)


def test_orthogonal_square_matches_torch():
    torch.manual_seed(12)
    tm, fm = torch.nn.Linear(4, 4, bias=False), flow.nn.Linear(4, 4, bias=False)
    _same_weights(fm, tm)
    torch.nn.utils.parametrizations.orthogonal(tm)
    flow.nn.utils.parametrizations.orthogonal(fm)
    assert list(fm.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(fm.weight.detach().numpy(), tm.weight.detach().numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        flow.nn.utils.parametrizations.orthogonal(flow.nn.Linear(2, 2), orthogonal_map="x")
    with pytest.raises(ValueError, match="Expected a matrix"):
        flow.nn.utils.parametrizations.orthogonal(flow.nn.Linear(2, 2), name="bias")
