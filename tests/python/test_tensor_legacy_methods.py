"""angle, nonzero_static, as_strided_scatter (namespace and methods) and the Tensor methods
new, put, resize, resize_as, dim_order, is_set_to, against PyTorch."""

import math
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow


def test_angle_like_torch():
    v = [-1.5, 0.0, 2.0, math.nan, -0.0, -math.inf, math.inf]
    for dtype in ("float32", "float64"):
        f = flow.angle(flow.tensor(v, dtype=getattr(flow, dtype)))
        t = torch.angle(torch.tensor(v, dtype=getattr(torch, dtype)))
        assert f.dtype == getattr(flow, dtype)
        np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-7)
    np.testing.assert_allclose(
        flow.tensor([1, -2]).angle().numpy(), torch.tensor([1, -2]).angle().numpy(), rtol=1e-6
    )


@pytest.mark.parametrize("size", [0, 1, 3, 6])
def test_nonzero_static_like_torch(size):
    a = np.array([[0, 1, 0], [2, 0, 3]])
    f = flow.nonzero_static(flow.tensor(a), size=size, fill_value=-7)
    t = torch.nonzero_static(torch.tensor(a), size=size, fill_value=-7)
    np.testing.assert_array_equal(f.numpy(), t.numpy())
    np.testing.assert_array_equal(
        flow.tensor(a).nonzero_static(size=size).numpy(),
        torch.tensor(a).nonzero_static(size=size).numpy(),
    )


def test_as_strided_scatter_and_put_like_torch():
    a = np.arange(9.0).reshape(3, 3).astype(np.float32)
    src = np.array([10.0, 20.0], dtype=np.float32)
    f = flow.as_strided_scatter(flow.tensor(a), flow.tensor(src), (2,), (4,), 1)
    t = torch.as_strided_scatter(torch.tensor(a), torch.tensor(src), (2,), (4,), 1)
    np.testing.assert_array_equal(f.numpy(), t.numpy())
    x = np.arange(6.0).astype(np.float32)
    idx, val = np.array([0, 5, 0]), np.array([1.0, 2.0, 3.0], dtype=np.float32)
    for acc in (False, True):
        f = flow.tensor(x).put(flow.tensor(idx), flow.tensor(val), accumulate=acc)
        t = torch.tensor(x).put(torch.tensor(idx), torch.tensor(val), accumulate=acc)
        if acc:
            np.testing.assert_array_equal(f.numpy(), t.numpy())
        else:  # index 0 twice: either value may win, as PyTorch's
            assert f.numpy()[5] == 2.0 and f.numpy()[0] in (1.0, 3.0)


def test_legacy_constructors_and_layout_queries_like_torch():
    for lib in (flow, torch):
        x = lib.ones(2, 3, dtype=lib.float64)
        assert tuple(x.new(4, 5).shape) == (4, 5) and x.new(4, 5).dtype == lib.float64
        assert x.new([1, 2]).dtype == lib.float64 and x.new().numel() == 0
        assert tuple(x.new(lib.Size([2, 2])).shape) == (2, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert tuple(x.resize(3, 2).shape) == (3, 2)
            assert tuple(x.resize_as(lib.zeros(6)).shape) == (6,)
        assert x.dim_order() == (0, 1) and x.t().dim_order() == (1, 0)
        assert x.is_set_to(x) and not x.is_set_to(x.clone())
