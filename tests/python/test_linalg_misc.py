"""einsum, inverse/det, cummax/cummin, mode and the remaining oneflow.* helpers against
PyTorch."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import check

EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ijk,jl,lm->ikm", [(2, 3, 4), (3, 5), (5, 6)]),
    ("i,i", [(5,), (5,)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ji", [(3, 4)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(EINSUM)))
def test_einsum(case, dtype, device):
    eq, shapes = EINSUM[case]
    check(lambda lib, *xs: lib.einsum(eq, *xs), shapes, dtype=dtype, device=device)


def _well_conditioned(lib, t, i):
    n = t.shape[-1]
    return t + lib.eye(n, dtype=t.dtype, device=t.device) * n


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1)])
def test_inverse_and_det(shape, dtype, device):
    check(
        lambda lib, a: lib.linalg.inv(a),
        [shape],
        dtype=dtype,
        device=device,
        transform=_well_conditioned,
    )
    check(
        lambda lib, a: lib.linalg.det(a),
        [shape],
        dtype=dtype,
        device=device,
        transform=_well_conditioned,
    )
    check(
        lambda lib, a: a.inverse(), [shape], dtype=dtype, device=device, transform=_well_conditioned
    )
    check(
        lambda lib, a: lib.logdet(a),
        [shape],
        dtype=dtype,
        device=device,
        transform=_well_conditioned,
    )


def test_det_of_singular_and_sign():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert flow.linalg.det(flow.tensor(a)).item() == 0.0
    b = np.array([[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(flow.det(flow.tensor(b)).numpy(), -1.0)
    sign, logabs = flow.linalg.slogdet(flow.tensor(b))
    assert sign.item() == -1.0 and abs(logabs.item()) < 1e-12
    # torch.linalg.LinAlgError, a RuntimeError; raised by the kernel: at the read
    with pytest.raises(flow.linalg.LinAlgError, match="singular"):
        flow.linalg.inv(flow.tensor(a)).numpy()
    with pytest.raises(RuntimeError, match="square"):
        flow.linalg.inv(flow.ones(2, 3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batched_inverse_and_det_on_the_team_like_torch(dtype):
    # Batches large enough to spread over the OpenMP team, one LAPACK call per matrix on one
    # thread; a singular matrix in the middle of a batch raises, its determinant is 0.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((24, 20, 20)).astype(dtype) + 20 * np.eye(20, dtype=dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(
        flow.linalg.inv(flow.tensor(a)).numpy(),
        torch.linalg.inv(torch.tensor(a)).numpy(),
        rtol=tol,
        atol=tol,
    )
    np.testing.assert_allclose(
        flow.linalg.det(flow.tensor(a)).numpy(),
        torch.linalg.det(torch.tensor(a)).numpy(),
        rtol=tol,
    )
    big = rng.standard_normal((200, 200)).astype(dtype) + 30 * np.eye(200, dtype=dtype)
    np.testing.assert_allclose(
        flow.linalg.det(flow.tensor(big)).numpy(),
        torch.linalg.det(torch.tensor(big)).numpy(),
        rtol=tol * 10,
    )
    a[13] = 0.0
    a[13, :, 0] = 1.0  # rank 1
    assert flow.linalg.det(flow.tensor(a)).numpy()[13] == 0.0
    with pytest.raises(flow.linalg.LinAlgError, match="singular"):
        flow.linalg.inv(flow.tensor(a)).numpy()
    assert flow.linalg.inv(flow.tensor(a[:13])).shape == (13, 20, 20)  # still usable


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin(name, device):
    check(lambda lib, a: getattr(lib, name)(a, 1).values, [(3, 6)], device=device)
    check(lambda lib, a: getattr(lib, name)(a, 0)[1], [(5, 2)], device=device, grad=False)
    x = [1.0, 3.0, 2.0, 3.0, math.nan, 1.0]
    f, t = getattr(flow, name)(flow.tensor(x), 0), getattr(torch, name)(torch.tensor(x), 0)
    np.testing.assert_array_equal(f.values.numpy(), t.values.numpy())
    np.testing.assert_array_equal(f.indices.numpy(), t.indices.numpy())


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_along_every_dim_like_torch(name):
    """Along the last dim (one line at a time, a NaN ends the search) and along outer dims (whole
    rows, a running extreme per column, blocks split between threads): values and indices equal
    PyTorch's, with ties (the later index wins), NaNs (they stay, with their index), integers
    and a transposed input."""
    rng = np.random.default_rng(5)
    a = np.round(rng.standard_normal((6, 300, 70)) * 3)
    a[rng.random(a.shape) < 0.002] = np.nan
    a[0, 0, :5] = np.nan  # NaN in the first row
    cases = [a.astype(np.float32), a.astype(np.float64), np.nan_to_num(a).astype(np.int64)]
    for x in cases:
        for dim in (0, 1, 2, -1):
            f = getattr(flow, name)(flow.tensor(x), dim)
            t = getattr(torch, name)(torch.tensor(x), dim)
            np.testing.assert_array_equal(f.values.numpy(), t.values.numpy(), f"{dim}")
            np.testing.assert_array_equal(f.indices.numpy(), t.indices.numpy(), f"{dim}")
    xt = cases[0][0]  # (300, 70), transposed: strided lines
    f = getattr(flow, name)(flow.tensor(xt).t(), 0)
    t = getattr(torch, name)(torch.tensor(xt).t(), 0)
    np.testing.assert_array_equal(f.values.numpy(), t.values.numpy())
    np.testing.assert_array_equal(f.indices.numpy(), t.indices.numpy())


def test_mode():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(5, 9))
    for dim, keepdim in [(1, False), (0, True), (-1, True)]:
        f = flow.mode(flow.tensor(x), dim, keepdim)
        t = torch.mode(torch.tensor(x), dim, keepdim)
        np.testing.assert_array_equal(f.values.numpy(), t.values.numpy())
        np.testing.assert_array_equal(f.indices.numpy(), t.indices.numpy())
    check(lambda lib, a: lib.mode(a.round(), 1).values, [(4, 7)], dtype="float64")


def test_legacy_types_and_casts():
    assert flow.FloatTensor(2, 3).dtype == flow.float32
    assert flow.LongTensor([1, 2]).dtype == flow.int64
    assert isinstance(flow.ones(2), flow.FloatTensor)
    assert not isinstance(flow.ones(2), flow.DoubleTensor)
    assert flow.ones(2).type() == "oneflow.FloatTensor"
    assert flow.ones(2).type(flow.DoubleTensor).dtype == flow.float64
    assert flow.ones(2).type_as(flow.ones(1, dtype=flow.int32)).dtype == flow.int32
    assert flow.cast(flow.ones(2), flow.int8).dtype == flow.int8
    assert flow.is_floating_point(flow.ones(1)) and not flow.ones(1).long().is_floating_point()
    assert flow.is_nonzero(flow.tensor([2])) and not flow.is_nonzero(flow.tensor(0.0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        flow.is_nonzero(flow.ones(2))
    assert flow.ones(2, 3).ndimension() == 2 and flow.ones(2).get_device() == -1


def test_splits_and_helpers():
    x = np.arange(24).reshape(4, 6)
    for fn, args in [
        ("tensor_split", (3, 1)),
        ("tensor_split", ([1, 4], 1)),
        ("hsplit", (2,)),
        ("vsplit", ([1, 3],)),
    ]:
        fo = getattr(flow, fn)(flow.tensor(x), *args)
        to = getattr(torch, fn)(torch.tensor(x), *args)
        assert len(fo) == len(to)
        for a, b in zip(fo, to):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    for periodic in [True, False]:
        np.testing.assert_allclose(
            flow.hann_window(7, periodic).numpy(), torch.hann_window(7, periodic).numpy(), atol=1e-6
        )
    q = np.random.default_rng(1).standard_normal((4, 5))
    for interp in ["linear", "lower", "higher", "midpoint", "nearest"]:
        np.testing.assert_allclose(
            flow.quantile(flow.tensor(q), 0.3, dim=1, interpolation=interp).numpy(),
            torch.quantile(torch.tensor(q), 0.3, dim=1, interpolation=interp).numpy(),
        )
    np.testing.assert_allclose(
        flow.quantile(flow.tensor(q), flow.tensor([0.1, 0.9], dtype=flow.float64)).numpy(),
        torch.quantile(torch.tensor(q), torch.tensor([0.1, 0.9], dtype=torch.float64)).numpy(),
    )
    np.testing.assert_allclose(
        flow.quick_gelu(flow.tensor(q)).numpy(), q / (1 + np.exp(-1.702 * q)), rtol=1e-6
    )
    np.testing.assert_allclose(flow.square_relu(flow.tensor(q)).numpy(), np.maximum(q, 0) ** 2)


def test_oneflow_indexing_ops():
    p = flow.arange(24).reshape(2, 3, 4)
    idx = flow.tensor([[0, 1], [1, 2]])
    np.testing.assert_array_equal(flow.gather_nd(p, idx).numpy(), p.numpy()[[0, 1], [1, 2]])
    out = flow.scatter_nd(flow.tensor([[1], [3]]), flow.tensor([5.0, 7.0]), (5,))
    assert out.numpy().tolist() == [0, 5, 0, 7, 0]
    upd = flow.tensor_scatter_nd_update(flow.zeros(3), flow.tensor([[2]]), flow.tensor([1.0]))
    assert upd.numpy().tolist() == [0, 0, 1]
    bg = flow.batch_gather(flow.arange(12).reshape(2, 3, 2), flow.tensor([[2, 0], [1, 1]]))
    assert bg.numpy().tolist() == [[[4, 5], [0, 1]], [[8, 9], [8, 9]]]
    sl = flow.slice(flow.arange(10).reshape(2, 5), [[0, 2, 1], [1, 5, 2]])
    assert sl.numpy().tolist() == [[1, 3], [6, 8]]
    su = flow.slice_update(flow.zeros(2, 5), flow.ones(2, 2), [[0, 2, 1], [1, 5, 2]])
    assert su.numpy().tolist() == [[0, 1, 0, 1, 0], [0, 1, 0, 1, 0]]
    # OneFlow's documented examples: slice_update writes into its input; batch_gather with 1-D
    # indices selects along dim 0, with k-dim indices along dim k - 1 below k - 1 batch dims
    x = flow.ones(5)
    assert flow.slice_update(x, flow.tensor([2.0, 3, 4]), slice_tup_list=[[1, 4, 1]]) is x
    assert x.numpy().tolist() == [1, 2, 3, 4, 1]
    m = flow.tensor([[1.0, 2, 3], [4, 5, 6]])
    assert flow.batch_gather(m, flow.tensor([1, 0])).numpy().tolist() == [[4, 5, 6], [1, 2, 3]]
    t = flow.arange(24).reshape(2, 3, 4)
    bg3 = flow.batch_gather(t, flow.tensor([[[3, 0], [1, 1], [0, 2]], [[2, 2], [0, 1], [3, 3]]]))
    ref = np.take_along_axis(
        t.numpy(), np.array([[[3, 0], [1, 1], [0, 2]], [[2, 2], [0, 1], [3, 3]]]), 2
    )
    assert bg3.numpy().tolist() == ref.tolist()
    with pytest.raises(RuntimeError, match="batch_gather"):
        flow.batch_gather(m, flow.tensor([[0], [1], [0]]))
    w = flow.argwhere(flow.tensor([[0, 1, 0], [2, 0, 2]]), dtype=flow.int32)
    assert w.dtype == flow.int32 and w.numpy().tolist() == [[0, 1], [1, 0], [1, 2]]
    assert flow.in_top_k(
        flow.tensor([1, 0]), flow.tensor([[0.1, 0.9], [0.2, 0.5]]), 1
    ).numpy().tolist() == [True, False]


def test_nms_and_auc():
    boxes = flow.tensor([[0, 0, 1, 1], [0, 0, 1, 1.1], [2, 2, 3, 3.0], [0.1, 0, 1.1, 1]])
    keep = flow.nms(boxes, flow.tensor([0.9, 0.8, 0.7, 0.95]), 0.5)
    assert keep.numpy().tolist() == [3, 2]
    auc = flow.roc_auc_score(flow.tensor([0, 0, 1, 1]), flow.tensor([0.1, 0.4, 0.35, 0.8]))
    assert tuple(auc.shape) == (1,) and abs(auc.item() - 0.75) < 1e-6  # OneFlow's [1]


def test_inplace_top_level_forms():
    x = flow.tensor([0.4, 1.6])
    flow.floor_(x)
    assert x.numpy().tolist() == [0.0, 1.0]
    y = flow.tensor([0.25])
    flow.sin_(y)
    np.testing.assert_allclose(y.numpy(), np.sin([0.25]), rtol=1e-6)


def test_linalg_diagonal_like_torch():
    a = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    for kw in [{}, {"offset": 1}, {"offset": -2}, {"dim1": 0, "dim2": 2}]:
        got = flow.linalg.diagonal(flow.tensor(a), **kw)
        want = torch.linalg.diagonal(torch.tensor(a), **kw)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    x = flow.tensor(a, requires_grad=True)
    flow.linalg.diagonal(x, offset=1).sum().backward()
    t = torch.tensor(a, requires_grad=True)
    torch.linalg.diagonal(t, offset=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_linalg_matmul_matrix_power_vecdot_vander_multi_dot_like_torch():
    rng = np.random.default_rng(12)
    r = lambda *s: rng.standard_normal(s)  # noqa: E731
    a, b = r(3, 4, 5), r(5, 2)
    np.testing.assert_allclose(
        flow.linalg.matmul(flow.tensor(a), flow.tensor(b)).numpy(),
        torch.linalg.matmul(torch.tensor(a), torch.tensor(b)).numpy(),
        rtol=1e-12,
    )
    m = r(2, 4, 4)
    for n in (-2, 0, 1, 3):
        np.testing.assert_allclose(
            flow.linalg.matrix_power(flow.tensor(m), n).numpy(),
            torch.linalg.matrix_power(torch.tensor(m), n).numpy(),
            rtol=1e-9,
            atol=1e-9,
        )
    x, y = r(3, 1, 6), r(4, 6)
    np.testing.assert_allclose(
        flow.linalg.vecdot(flow.tensor(x), flow.tensor(y)).numpy(),
        torch.linalg.vecdot(torch.tensor(x), torch.tensor(y)).numpy(),
        rtol=1e-12,
    )
    for v, n in [(r(5), None), (r(2, 3), 4), (np.array([1, 2, 3]), None)]:
        np.testing.assert_allclose(
            flow.linalg.vander(flow.tensor(v), N=n).numpy(),
            torch.linalg.vander(torch.tensor(v), N=n).numpy(),
            rtol=1e-12,
        )
    chains = [[r(7), r(7, 3), r(3, 9), r(9)], [r(2, 50), r(50, 3), r(3, 40)], [r(4, 4), r(4)]]
    for chain in chains:
        ft = [flow.tensor(c, requires_grad=True) for c in chain]
        tt = [torch.tensor(c, requires_grad=True) for c in chain]
        fo, to = flow.linalg.multi_dot(ft), torch.linalg.multi_dot(tt)
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-10)
        fo.sum().backward()
        to.sum().backward()
        for f, t in zip(ft, tt):
            np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-10)
    with pytest.raises(RuntimeError, match="multi_dot"):
        flow.linalg.multi_dot([flow.ones(2, 3), flow.ones(2, 3)])
    inverse, info = flow.linalg.inv_ex(flow.tensor(m))
    np.testing.assert_allclose(inverse.numpy(), np.linalg.inv(m), rtol=1e-9, atol=1e-9)
    assert info.dtype == flow.int32 and info.tolist() == [0, 0]
