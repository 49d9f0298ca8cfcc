"""max_unpool1d/2d/3d and MaxUnpool modules, weight_norm / remove_weight_norm, RMSLayerNorm,
SquareReLU and Module.register_state_dict_pre_hook against PyTorch."""

import numpy as np
import pytest
import torch

import oneflow as flow

# PyTorch's reference weight_norm warns that it is deprecated in favour of parametrizations.
pytestmark = pytest.mark.filterwarnings("ignore:.*weight_norm.*deprecated")


@pytest.mark.parametrize(
    "dims,shape,kernel,stride,padding",
    [
        (1, (2, 3, 11), 3, 2, 1),
        (2, (2, 3, 8, 9), 2, None, 0),
        (2, (3, 7, 7), 3, 2, 1),  # unbatched
        (3, (1, 2, 5, 4, 6), 2, (1, 2, 2), 0),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_unpool_values_and_gradients_like_torch(dims, shape, kernel, stride, padding, dtype):
    a = np.random.default_rng(dims).standard_normal(shape)
    results = []
    for lib in (torch, flow):
        x = lib.tensor(a).to(getattr(lib, dtype))
        pool = getattr(lib.nn.functional, f"max_pool{dims}d")
        y, idx = pool(x, kernel, stride, padding, return_indices=True)
        y = y.detach().requires_grad_(True)
        size = x.shape[-dims:]  # the input's size: within one stride of the default
        out = getattr(lib.nn.functional, f"max_unpool{dims}d")(
            y, idx, kernel, stride, padding, output_size=size
        )
        module = getattr(lib.nn, f"MaxUnpool{dims}d")(kernel, stride, padding)
        again = module(y, idx, output_size=list(size))
        w = lib.tensor(np.arange(out.numel()).reshape(tuple(out.shape)) % 7).to(out.dtype)
        (out * w).sum().backward()
        results.append((out.detach().numpy(), again.detach().numpy(), y.grad.numpy()))
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)


def test_max_unpool_errors_like_torch():
    for lib in (torch, flow):
        y, idx = lib.nn.functional.max_pool2d(lib.randn(1, 2, 8, 8), 2, return_indices=True)
        assert tuple(lib.nn.functional.max_unpool2d(y, idx, 2).shape) == (1, 2, 8, 8)
        with pytest.raises(ValueError):
            lib.nn.functional.max_unpool2d(y, idx, 2, output_size=(12, 12))
        with pytest.raises(RuntimeError):
            lib.nn.functional.max_unpool2d(y, idx * 100, 2)
        with pytest.raises(RuntimeError):
            lib.nn.functional.max_unpool2d(y, idx.int(), 2)
    assert "kernel_size=2" in repr(flow.nn.MaxUnpool2d(2))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_like_torch(dim):
    w = np.random.default_rng(0).standard_normal((4, 3))
    x = np.random.default_rng(1).standard_normal((5, 3))
    out = []
    for lib in (torch, flow):
        lin = lib.nn.Linear(3, 4)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w, dtype=lib.float32))
            lin.bias.zero_()
        wn = (
            torch.nn.utils.weight_norm(lin, dim=dim)
            if lib is torch
            else flow.nn.utils.weight_norm(lin, dim=dim)
        )
        names = sorted(n for n, _ in wn.named_parameters())
        with lib.no_grad():
            wn.weight_g.mul_(2.0)  # the weight follows its parameters at the next forward
        y = wn(lib.tensor(x, dtype=lib.float32))
        y.sum().backward()
        grads = (wn.weight_g.grad.numpy(), wn.weight_v.grad.numpy())
        lib.nn.utils.remove_weight_norm(wn)
        out.append((names, y.detach().numpy(), grads, wn.weight.detach().numpy()))
        assert sorted(n for n, _ in wn.named_parameters()) == ["bias", "weight"]
    assert out[0][0] == out[1][0] == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-6)
    for g, t in zip(out[1][2], out[0][2]):
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1][3], out[0][3], rtol=1e-5, atol=1e-6)


def test_rms_layer_norm_square_relu_and_state_dict_pre_hook():
    a = np.random.default_rng(2).standard_normal((2, 4, 6)).astype(np.float32)
    m = flow.nn.RMSLayerNorm(6, eps=1e-6)
    with flow.no_grad():
        m.weight.copy_(flow.arange(6.0) / 3)
    want = a / np.sqrt((a.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(
        m(flow.tensor(a)).detach().numpy(), want * np.arange(6) / 3, rtol=1e-5
    )
    half = m(flow.tensor(a).half())
    assert half.dtype == flow.float32  # the float32 weight scales the float32 statistics
    np.testing.assert_allclose(half.detach().numpy(), want * np.arange(6) / 3, rtol=2e-3, atol=2e-3)
    x = flow.tensor([-2.0, -0.5, 0.0, 1.5, 3.0], requires_grad=True)
    y = flow.nn.SquareReLU()(x)
    y.sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), [0, 0, 0, 2.25, 9])
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0, 3, 6])
    calls = []
    for lib in (torch, flow):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2))
        handle = net[0].register_state_dict_pre_hook(
            lambda mod, prefix, keep_vars, lib=lib: calls.append((lib.__name__, prefix, keep_vars))
        )
        net.state_dict()
        handle.remove()
        net.state_dict()
    assert calls == [("torch", "0.", False), ("oneflow", "0.", False)]
