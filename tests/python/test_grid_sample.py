"""affine_grid and grid_sample against PyTorch: 2-D and 3-D, both align_corners settings, every
padding mode, bilinear/trilinear and nearest, values and gradients for input and grid."""

import numpy as np
import pytest
import torch

import oneflow as flow

# PyTorch warns about unit-size grids with align_corners=True; the values are compared.
pytestmark = pytest.mark.filterwarnings("ignore:.*unit-size grids")


@pytest.mark.parametrize("spatial", [2, 3])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 2e-5)])
def test_affine_grid_like_torch(spatial, align_corners, dtype, tol):
    rng = np.random.default_rng(spatial)
    theta = rng.standard_normal((2, spatial, spatial + 1))
    for size in (
        [(2, 3, 4, 5), (2, 1, 1, 7)] if spatial == 2 else [(2, 3, 3, 4, 5), (2, 1, 1, 2, 1)]
    ):
        got_t = flow.tensor(theta).to(getattr(flow, dtype)).requires_grad_()
        want_t = torch.tensor(theta).to(getattr(torch, dtype)).requires_grad_()
        got = flow.nn.functional.affine_grid(got_t, size, align_corners=align_corners)
        want = torch.nn.functional.affine_grid(want_t, size, align_corners=align_corners)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)
        w = rng.standard_normal(tuple(want.shape))
        (got * flow.tensor(w).to(got.dtype)).sum().backward()
        (want * torch.tensor(w).to(want.dtype)).sum().backward()
        np.testing.assert_allclose(got_t.grad.numpy(), want_t.grad.numpy(), rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("spatial", [2, 3])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_values_and_gradients_like_torch(spatial, mode, padding_mode, align_corners):
    if mode == "bicubic" and spatial == 3:
        for lib in (torch, flow):
            with pytest.raises(RuntimeError):
                lib.nn.functional.grid_sample(
                    lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3), mode
                )
        return
    rng = np.random.default_rng(10 * spatial + len(padding_mode))
    size = (2, 3, 4, 5) if spatial == 2 else (2, 2, 3, 4, 5)
    out_grid = (2, 3, 6, 2) if spatial == 2 else (2, 2, 3, 4, 3)
    x = rng.standard_normal(size)
    g = rng.uniform(-1.5, 1.5, out_grid)  # reaches outside: every padding rule matters
    g.reshape(-1)[:4] = [-1.0, 1.0, 0.0, 1.25]  # edges and a reflected point
    for dtype, tol in [("float64", 1e-12), ("float32", 2e-5)]:
        outs = []
        for lib in (flow, torch):
            xi = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
            gi = lib.tensor(g).to(getattr(lib, dtype)).requires_grad_()
            y = lib.nn.functional.grid_sample(
                xi, gi, mode=mode, padding_mode=padding_mode, align_corners=align_corners
            )
            w = lib.tensor(np.arange(y.numel()).reshape(tuple(y.shape)) % 5 - 2.0).to(y.dtype)
            (y * w).sum().backward()
            outs.append((y.detach().numpy(), xi.grad.numpy(), gi.grad.numpy()))
        for got, want in zip(*outs):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


def test_grid_sample_and_affine_grid_errors_like_torch():
    x, g = np.zeros((1, 1, 3, 3)), np.zeros((1, 2, 2, 2))
    bad = [
        lambda lib: lib.nn.functional.grid_sample(lib.tensor(x), lib.tensor(g), mode="cubic"),
        lambda lib: lib.nn.functional.grid_sample(
            lib.tensor(x), lib.tensor(g), padding_mode="wrap"
        ),
        lambda lib: lib.nn.functional.affine_grid(lib.zeros(1, 2, 2), (1, 1, 3, 3)),
    ]
    for call in bad:
        with pytest.raises(ValueError):
            call(torch)
        with pytest.raises(ValueError):
            call(flow)
    with pytest.raises(RuntimeError):
        flow.nn.functional.grid_sample(flow.zeros(1, 1, 3, 3), flow.zeros(1, 2, 2, 3))


def test_affine_grid_differentiated_twice_without_retain_graph_like_torch():
    """PyTorch's affine_grid keeps no saved tensor that backward frees: two grads of one graph
    (and a double backward) work without retain_graph."""
    th = np.random.default_rng(0).standard_normal((2, 2, 3))
    results = []
    for lib in (torch, flow):
        theta = lib.tensor(th, requires_grad=True)
        g = lib.nn.functional.affine_grid(theta, [2, 1, 3, 4], align_corners=False)
        first = lib.autograd.grad(g.sum(), theta)[0]
        second = lib.autograd.grad((g * 2).pow(2).sum(), theta, create_graph=True)[0]
        third = lib.autograd.grad(second.sum(), theta)[0]
        results.append([t.detach().numpy() for t in (first, second, third)])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
