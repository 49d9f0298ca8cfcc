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


def _pair(values, dtype="float32"):
    a = np.asarray(values, dtype=dtype)
    return flow.tensor(a), torch.tensor(a)


@pytest.mark.parametrize(
    "name, args",
    [
        ("multiply_", (2.0,)),
        ("subtract_", (1.5,)),
        ("divide_", (4.0,)),
        ("true_divide_", (3.0,)),
        ("greater_", (0.0,)),
        ("greater_equal_", (0.5,)),
        ("less_", (0.0,)),
        ("less_equal_", (0.5,)),
        ("not_equal_", (0.5,)),
        ("absolute_", ()),
        ("arctan2_", ("other",)),
        ("sgn_", ()),
        ("cumprod_", (1,)),
    ],
)
def test_in_place_aliases_like_torch(name, args):
    rng = np.random.default_rng(4)
    values = rng.standard_normal((3, 4)).astype(np.float32)
    other = rng.standard_normal((3, 4)).astype(np.float32)
    results = []
    for lib in (flow, torch):
        t = lib.tensor(values)
        call = [lib.tensor(other) if a == "other" else a for a in args]
        out = getattr(t, name)(*call)
        assert out is t
        results.append(t.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-7)
    f, t = _pair(values)
    np.testing.assert_array_equal(flow.sgn(f).numpy(), torch.sgn(t).numpy())
    np.testing.assert_array_equal(f.sgn().numpy(), t.sgn().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_product_sums_and_their_in_place_forms_like_torch(dtype):
    rng = np.random.default_rng(5)
    r = lambda *s: rng.standard_normal(s).astype(dtype)  # noqa: E731
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    cases = [
        ("addmm", (r(3, 4), r(3, 5), r(5, 4))),
        ("baddbmm", (r(2, 3, 4), r(2, 3, 5), r(2, 5, 4))),
        ("addmv", (r(3), r(3, 5), r(5))),
        ("addbmm", (r(3, 4), r(6, 3, 5), r(6, 5, 4))),
        ("addr", (r(3, 4), r(3), r(4))),
    ]
    for name, arrays in cases:
        for beta, alpha in [(1, 1), (0.5, 2.0), (0, 1)]:
            got, want = [], []
            for lib, out in ((flow, got), (torch, want)):
                ts = [lib.tensor(a, requires_grad=True) for a in arrays]
                y = getattr(lib, name)(*ts, beta=beta, alpha=alpha)
                (y * y).sum().backward()
                out.append(y.detach().numpy())
                out += [t.grad.numpy() for t in ts]
                base = lib.tensor(arrays[0])
                assert getattr(base, name + "_")(*map(lib.tensor, arrays[1:]), beta=beta) is base
                out.append(base.numpy())
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, **tol, err_msg=name)
    with pytest.raises(RuntimeError, match="1-D"):
        flow.addr(flow.ones(2, 2), flow.ones(2, 1), flow.ones(2))


def test_fill_diagonal_and_put_like_torch():
    for shape, wrap in [((5, 3), True), ((5, 3), False), ((3, 5), True), ((4, 4, 4), False)]:
        f, t = flow.zeros(*shape), torch.zeros(*shape)
        assert f.fill_diagonal_(2.5, wrap=wrap) is f
        t.fill_diagonal_(2.5, wrap=wrap)
        np.testing.assert_array_equal(f.numpy(), t.numpy())
    strided_f, strided_t = flow.zeros(4, 6)[:, ::2], torch.zeros(4, 6)[:, ::2]
    strided_f.fill_diagonal_(1)
    strided_t.fill_diagonal_(1)
    np.testing.assert_array_equal(strided_f.numpy(), strided_t.numpy())
    for bad in [flow.zeros(3), flow.zeros(2, 3, 3)]:
        with pytest.raises(RuntimeError, match="dimensions"):
            bad.fill_diagonal_(1)
    for accumulate in (False, True):
        f, t = flow.zeros(3, 4), torch.zeros(3, 4)
        index = [0, -1, 5, 5]
        src = [1.0, 2.0, 3.0, 4.0]
        f.put_(flow.tensor(index), flow.tensor(src), accumulate=accumulate)
        t.put_(torch.tensor(index), torch.tensor(src), accumulate=accumulate)
        if accumulate:
            np.testing.assert_array_equal(f.numpy(), t.numpy())
        else:  # a repeated index takes one of its values in both
            mask = np.ones((3, 4), bool)
            mask.flat[5] = False
            np.testing.assert_array_equal(f.numpy()[mask], t.numpy()[mask])
    g, u = flow.zeros(4, 6)[:, 1::2], torch.zeros(4, 6)[:, 1::2]
    g.put_(flow.tensor([[1, 7], [11, 0]]), flow.tensor([[1.0, 2.0], [3.0, 4.0]]))
    u.put_(torch.tensor([[1, 7], [11, 0]]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(g.numpy(), u.numpy())
    with pytest.raises(IndexError, match="out of range"):
        flow.zeros(2, 2).put_(flow.tensor([4]), flow.tensor([1.0]))
    with pytest.raises(RuntimeError, match="same number of elements"):
        flow.zeros(2, 2).put_(flow.tensor([0, 1]), flow.tensor([1.0]))


def test_distribution_fills_in_place():
    # Values cannot equal PyTorch's (other generators); their distributions must be right:
    # means and medians of 200k draws within a few standard errors, supports, dtypes kept.
    flow.manual_seed(0)
    n = 200000
    x = flow.empty(n, dtype=flow.float64)
    assert x.exponential_(2.0) is x
    assert abs(x.mean().item() - 0.5) < 0.01 and x.min().item() >= 0
    x.cauchy_(1.0, 2.0)
    assert abs(x.median().item() - 1.0) < 0.03
    assert abs(((x - 1).abs() < 2).double().mean().item() - 0.5) < 0.01  # quartiles at +-sigma
    x.log_normal_(0.5, 0.25)
    assert abs(x.log().mean().item() - 0.5) < 0.005 and abs(x.log().std().item() - 0.25) < 0.005
    x.geometric_(0.25)
    assert abs(x.mean().item() - 4.0) < 0.06 and x.min().item() == 1
    assert (x == x.round()).all()
    r = flow.empty(n, dtype=flow.int64).random_(3, 7)
    assert r.dtype == flow.int64 and r.min().item() == 3 and r.max().item() == 6
    assert flow.empty(1000).random_(10).max().item() == 9
    assert flow.empty(1000, dtype=flow.int8).random_().min().item() >= 0
    assert flow.empty(1000, dtype=flow.bool).random_().dtype == flow.bool
    for bad in [lambda: x.exponential_(0.0), lambda: x.geometric_(1.5), lambda: r.random_(5, 2)]:
        with pytest.raises(RuntimeError):
            bad()


@pytest.mark.parametrize(
    "name, args",
    [
        ("relu_", ()),
        ("leaky_relu_", (0.2,)),
        ("elu_", (0.7,)),
        ("celu_", (1.3,)),
        ("selu_", ()),
        ("hardtanh_", (-0.5, 0.25)),
        ("threshold_", (0.1, -2.0)),
    ],
)
def test_functional_in_place_activations_like_torch(name, args):
    values = np.random.default_rng(6).standard_normal((4, 5)).astype(np.float32)
    f, t = flow.tensor(values), torch.tensor(values)
    assert getattr(flow.nn.functional, name)(f, *args) is f
    getattr(torch.nn.functional, name)(t, *args)
    np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


def test_hardshrink_and_threshold_in_the_oneflow_namespace():
    values = np.random.default_rng(7).standard_normal(20).astype(np.float32)
    f, t = flow.tensor(values), torch.tensor(values)
    np.testing.assert_array_equal(flow.hardshrink(f, 0.3).numpy(), torch.hardshrink(t, 0.3).numpy())
    np.testing.assert_array_equal(f.hardshrink(0.3).numpy(), t.hardshrink(0.3).numpy())
    np.testing.assert_array_equal(
        flow.threshold(f, 0.2, 9.0).numpy(), torch.threshold(t, 0.2, 9.0).numpy()
    )


@pytest.mark.parametrize(
    "name, args",
    [("t_", ()), ("transpose_", (0, 2)), ("swapaxes_", (1, -1)), ("swapdims_", (2, 1))],
)
def test_in_place_transposes_like_torch(name, args):
    shape = (2, 3) if name == "t_" else (2, 3, 4)
    values = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got, want = [], []
    for lib, out in ((flow, got), (torch, want)):
        a = lib.tensor(values, requires_grad=True)
        b = a * 2
        assert getattr(b, name)(*args) is b
        out += [tuple(b.shape), b.stride(), b.detach().numpy().copy()]
        (
            b * lib.tensor(np.arange(b.numel(), dtype=np.float32).reshape(tuple(b.shape)))
        ).sum().backward()
        out.append(a.grad.numpy())
        with pytest.raises(RuntimeError):
            getattr(lib.ones(*shape, requires_grad=True), name)(*args)  # a leaf needing grad
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_resize_like_torch():
    # The storage read contiguously from the offset: shrinking keeps the storage (old views
    # still see it), growing keeps the values; a strided tensor reads its storage in order.
    got, want = [], []
    for lib, out in ((flow, got), (torch, want)):
        x = lib.arange(6.0)
        y = x.view(2, 3)
        assert x.resize_(2, 2) is x
        out += [tuple(x.shape), x.stride(), x.tolist(), y.tolist()]
        x[0, 0] = 7.0
        out.append(y.tolist())  # the same storage
        x.resize_((10,))
        out += [tuple(x.shape), x[:6].tolist()]
        z = lib.arange(8.0)[2::2]
        z.resize_(3)  # the same size: unchanged
        out += [z.stride(), z.tolist()]
        z.resize_(4)
        out += [z.stride(), z.tolist(), z.storage_offset()]
        out.append(tuple(lib.ones(2, 3).resize_as_(lib.ones(4)).shape))
        with pytest.raises(RuntimeError, match="require grad"):
            lib.ones(2, requires_grad=True).resize_(3)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
