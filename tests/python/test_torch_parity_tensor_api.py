"""Tensor attributes, creation functions, list dtype inference, deepcopy and tensor-array
arithmetic compared against PyTorch."""

import copy
import operator
import pickle
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow


def _name(dtype):
    return str(dtype).split(".")[-1]


def _same(f, t):
    assert _name(f.dtype) == _name(t.dtype)
    assert tuple(f.shape) == tuple(t.shape)
    np.testing.assert_array_equal(f.float().numpy(), t.float().numpy())


def test_tensor_size_and_kind_queries():
    for dt in ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32"]:
        f = flow.zeros(2, 3, dtype=getattr(flow, dt))
        t = torch.zeros(2, 3, dtype=getattr(torch, dt))
        assert (f.itemsize, f.nbytes, f.is_signed()) == (t.itemsize, t.nbytes, t.is_signed())
    f, t = flow.ones(2), torch.ones(2)
    for attr in ["is_cpu", "is_sparse", "is_quantized", "is_meta"]:
        assert getattr(f, attr) == getattr(t, attr)
    assert f.is_complex() is False
    assert f.is_same_size(flow.zeros(2)) and not f.is_same_size(flow.zeros(3))
    assert f.layout is flow.strided and repr(flow.strided) == "oneflow.strided"
    assert pickle.loads(pickle.dumps(flow.strided)) is flow.strided
    assert flow.short is flow.int16


def test_conjugate_transposes():
    m = np.arange(12.0, dtype=np.float32)
    for shape in [(3, 4), (2, 2, 3)]:
        f, t = flow.tensor(m.reshape(shape)), torch.tensor(m.reshape(shape))
        _same(f.mH, t.mH)
        _same(f.adjoint(), t.adjoint())
    _same(flow.tensor(m.reshape(3, 4)).H, torch.tensor(m.reshape(3, 4)).H)
    with pytest.raises(RuntimeError, match="2-D"):
        _ = flow.ones(2, 2, 3).H
    with pytest.raises(RuntimeError, match="matrices"):
        _ = flow.ones(3).mH
    with pytest.raises(RuntimeError, match="matrices"):
        flow.ones(3).adjoint()
    with pytest.warns(UserWarning, match="deprecated on 0-D"):
        assert flow.tensor(2.0).H.item() == 2.0


def test_is_nonzero_and_detach_():
    assert flow.tensor([3]).is_nonzero() and not flow.tensor([0.0]).is_nonzero()
    for bad in [flow.tensor([]), flow.ones(2)]:
        with pytest.raises(RuntimeError, match="ambiguous"):
            bad.is_nonzero()
    a = flow.ones(2, requires_grad=True)
    assert a.detach_() is a and not a.requires_grad and a.is_leaf


def test_detach_in_place_of_a_non_leaf_like_torch():
    # The tensor becomes a leaf without history; what was computed from it keeps its graph;
    # views are refused (their history is their base's).
    for lib in (flow, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        z = y * 3
        assert y.detach_() is y
        assert y.is_leaf and not y.requires_grad and y.grad_fn is None
        z.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0, 6.0])
        (y * x).sum().backward()  # y is a constant now
        np.testing.assert_array_equal(x.grad.numpy(), [8.0, 8.0, 8.0])
        for view in [(x * 2)[1:], lib.ones(3)[1:]]:
            with pytest.raises(RuntimeError, match="Can't detach views in-place"):
                view.detach_()


def test_tri_indices():
    for row, col, offset in [(3, 3, 0), (3, 4, 1), (4, 3, -1), (5, 2, 3), (2, 5, -3), (0, 3, 0)]:
        _same(flow.tril_indices(row, col, offset), torch.tril_indices(row, col, offset))
        _same(flow.triu_indices(row, col, offset), torch.triu_indices(row, col, offset))
    _same(
        flow.tril_indices(4, 3, -1, dtype=flow.int32),
        torch.tril_indices(4, 3, -1, dtype=torch.int32),
    )


def test_empty_strided_scalar_tensor_can_cast():
    for size, stride in [((2, 3), (1, 2)), ((2, 0), (1, 2)), ((), ())]:
        f = flow.empty_strided(size, stride, dtype=flow.float64)
        t = torch.empty_strided(size, stride, dtype=torch.float64)
        assert tuple(f.shape) == tuple(t.shape) and f.dtype == flow.float64
        if f.numel():
            assert f.stride() == t.stride()
    _same(flow.scalar_tensor(3), torch.scalar_tensor(3))
    _same(flow.scalar_tensor(1.5, dtype=flow.int32), torch.scalar_tensor(1.5, dtype=torch.int32))
    names = ["bool", "uint8", "int8", "int64", "float16", "bfloat16", "float32", "float64"]
    for a in names:
        for b in names:
            want = torch.can_cast(getattr(torch, a), getattr(torch, b))
            assert flow.can_cast(getattr(flow, a), getattr(flow, b)) == want, (a, b)


def _list_cases(lib):
    T = lib.tensor
    return [
        [np.float64(1.5), 2],
        [np.int32(1), np.int32(2)],
        [np.int32(1), 2],
        [np.int32(1), 2.5],
        [np.uint8(1)],
        [np.uint8(1), np.int8(2)],
        [np.zeros(2, np.int32)],
        [np.zeros(2, np.float16), [1, 2]],
        [[np.int16(1)], [2]],
        [T(1.0, dtype=lib.float64), T(2.0, dtype=lib.float64)],
        [T([1.0]), T([2.0])],
        [T(1, dtype=lib.int32), 3],
        [[T(1.0)], [2]],
    ]


def test_tensor_from_list_keeps_numpy_and_tensor_dtypes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns about lists of arrays
        for f, t in zip(_list_cases(flow), _list_cases(torch)):
            _same(flow.tensor(f), torch.tensor(t))
    with pytest.raises(ValueError, match="one element"):
        flow.tensor([flow.tensor([1.0, 3.0]), flow.tensor([2.0, 4.0])])


def test_deepcopy_keeps_grad_and_rejects_non_leaves():
    a = flow.ones(2, requires_grad=True)
    (a * 3).sum().backward()
    b = copy.deepcopy(a)
    assert b.requires_grad and b.is_leaf and b.grad is not a.grad
    np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(a * 2)


def test_arange_checks():
    with pytest.raises(ValueError, match="step must be nonzero"):
        flow.arange(0, 2.5, 0.5, dtype=flow.int64)
    _same(flow.arange(0, 2.5, 1.5, dtype=flow.int64), torch.arange(0, 2.5, 1.5, dtype=torch.int64))
    for end in [float("inf"), float("nan")]:
        with pytest.raises(RuntimeError, match="unsupported range"):
            flow.arange(0, end)
    with pytest.raises(NotImplementedError, match="Bool"):
        flow.arange(3, dtype=flow.bool)


@pytest.mark.parametrize("base", [-2.0, 0.0, 2.0])
@pytest.mark.parametrize("dtype", [None, "int64", "float64"])
def test_logspace_any_base(base, dtype):
    for start, end, steps in [(0, 3, 4), (0, 2, 5)]:
        f = flow.logspace(start, end, steps, base=base, dtype=dtype and getattr(flow, dtype))
        t = torch.logspace(start, end, steps, base=base, dtype=dtype and getattr(torch, dtype))
        assert _name(f.dtype) == _name(t.dtype)
        np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv])
def test_tensor_and_numpy_array_operands(op):
    for data, array in [
        ([1.0], np.array([2.0])),
        ([1.0], np.array(2.0)),
        ([1.0], np.array([2], dtype=np.int32)),
        ([3], np.array([[2], [4]], dtype=np.int8)),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's __array_wrap__ deprecation, in PyTorch
            want = op(torch.tensor(data), array)
        got = op(flow.tensor(data), array)
        assert isinstance(got, flow.Tensor)
        assert _name(got.dtype) == _name(want.dtype)
        np.testing.assert_allclose(got.numpy(), want.numpy())


_VIEW_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "uint8"]


@pytest.mark.parametrize("src", ["float32", "float64", "int16", "uint8"])
def test_view_as_another_dtype_like_torch(src):
    # The same bytes read as another dtype: shape, strides, offset and values as PyTorch's,
    # contiguous and strided inputs, and no autograd.
    rng = np.random.default_rng(3)
    base = (rng.standard_normal((4, 8)) * 100).astype(src)
    for make in [
        lambda lib: lib.tensor(base),
        lambda lib: lib.tensor(base)[1:3],
        lambda lib: lib.tensor(base)[:, 4:],
        lambda lib: lib.tensor(base)[::2],
        lambda lib: lib.tensor(base)[:0],
    ]:
        for dst in _VIEW_DTYPES:
            t, f = make(torch), make(flow)
            try:
                want = t.view(getattr(torch, dst))
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match="view"):
                    f.view(getattr(flow, dst))
                assert "must be" in str(e) or "cannot be" in str(e)
                continue
            got = f.view(getattr(flow, dst))
            assert _name(got.dtype) == dst
            assert tuple(got.shape) == tuple(want.shape)
            assert got.stride() == want.stride()
            assert got.storage_offset() == want.storage_offset()
            np.testing.assert_array_equal(
                got.view(flow.uint8).numpy() if dst == "bfloat16" else got.numpy(),
                want.view(torch.uint8).numpy() if dst == "bfloat16" else want.numpy(),
            )


def test_view_as_another_dtype_shares_memory_and_leaves_autograd():
    x = flow.zeros(2, 4)
    y = x.view(flow.int32)
    y.add_(1)  # writes x's bytes: the smallest subnormal
    np.testing.assert_array_equal(x.numpy(), np.full((2, 4), 1.4e-45, np.float32))
    assert x._version == y._version
    a = flow.randn(2, 4, requires_grad=True)
    v = a.view(flow.float16)
    assert not v.requires_grad and v.grad_fn is None
    assert tuple(a.view(flow.float32).shape) == (2, 4)
    with pytest.raises(RuntimeError, match="cannot be 0"):
        flow.tensor(1.0).view(flow.int16)
    assert flow.tensor(1.0).view(flow.int32).item() == 1065353216
