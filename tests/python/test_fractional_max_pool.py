"""Fractional max pooling against PyTorch with the same random samples: values, indices,
gradients, ratios, unbatched inputs, NaN, the modules and the errors."""

import numpy as np
import pytest
import torch

import oneflow as flow

CASES = [
    (2, (2, 3, 11, 13), (3, 2), dict(output_size=(5, 7))),
    (2, (3, 9, 9), 2, dict(output_size=4)),  # unbatched
    (2, (1, 2, 10, 12), 3, dict(output_ratio=(0.5, 0.7))),
    (2, (2, 1, 6, 6), 2, dict(output_size=(1, 5))),  # one output row
    (3, (2, 3, 7, 9, 8), 2, dict(output_size=(4, 5, 3))),
    (3, (2, 5, 6, 7), (2, 3, 2), dict(output_ratio=0.5)),  # unbatched
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_indices_and_gradients_like_torch(case):
    dims, shape, k, kw = CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(shape).astype(np.float32)
    n = 1 if len(shape) == dims + 1 else shape[0]
    samples = rng.random((n, shape[-dims - 1], dims)).astype(np.float32)
    ffn = getattr(flow.nn.functional, f"fractional_max_pool{dims}d")
    tfn = getattr(torch.nn.functional, f"fractional_max_pool{dims}d")
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fo, fi = ffn(fx, k, return_indices=True, _random_samples=flow.tensor(samples), **kw)
    to, ti = tfn(tx, k, return_indices=True, _random_samples=torch.tensor(samples), **kw)
    np.testing.assert_array_equal(fo.detach().numpy(), to.detach().numpy())
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    w = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    (fo * flow.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_nan_and_ties_like_torch():
    x = np.zeros((1, 1, 6, 6), dtype=np.float32)
    x[0, 0, 1, 1] = np.nan
    x[0, 0, 2, 2] = np.nan
    s = np.array([[[0.3, 0.6]]], dtype=np.float32)
    fo, fi = flow.nn.functional.fractional_max_pool2d(
        flow.tensor(x), 3, output_size=2, return_indices=True, _random_samples=flow.tensor(s)
    )
    to, ti = torch.nn.functional.fractional_max_pool2d(
        torch.tensor(x), 3, output_size=2, return_indices=True, _random_samples=torch.tensor(s)
    )
    np.testing.assert_array_equal(fo.numpy(), to.numpy())
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())


def test_modules_random_samples_and_errors():
    x = flow.randn(2, 3, 12, 12)
    out, idx = flow.nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True)(x)
    assert tuple(out.shape) == (2, 3, 6, 6)
    # every output is the value at its index, and the maximum of a 3x3 window there
    flat = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(
        flat.gather(2, idx.reshape(2, 3, -1)).reshape(2, 3, 6, 6).numpy(), out.numpy()
    )
    m = flow.nn.FractionalMaxPool3d(2, output_size=(2, 2, 2))
    assert tuple(m(flow.randn(1, 2, 5, 5, 5)).shape) == (1, 2, 2, 2, 2)
    with pytest.raises(ValueError, match="either an output size, or a pooling ratio"):
        flow.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        flow.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError, match="too large relative to input"):
        flow.nn.functional.fractional_max_pool2d(flow.randn(1, 1, 4, 4), 3, output_size=3)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        flow.nn.functional.fractional_max_pool2d(flow.randn(4, 4), 2, output_size=2)
