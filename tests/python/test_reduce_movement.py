"""Reductions, scans, sorting and data movement against PyTorch (values and gradients, float32
and float64 with differential.py's tolerances; integer dtypes where PyTorch supports them)."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import TORCH_HAS_HALF_TRACE, check


def _distinct(lib, t, i):
    # Values without ties, so that the max/min/sort gradients are unambiguous.
    n = t.numel()
    ramp = lib.arange(n, dtype=t.dtype, device=t.device).reshape(t.shape) * 0.01
    return t + ramp


# name -> (fn(lib, *inputs), input shapes, transform or None)
CASES = {
    "prod_all": (lambda lib, a: lib.prod(a), [(3, 4)], None),
    "prod_dim": (lambda lib, a: a.prod(1, keepdim=True), [(3, 4, 2)], None),
    "prod_with_zero": (lambda lib, a: lib.prod(a * (a > -0.3), 0), [(5, 3)], None),
    "amax": (lambda lib, a: lib.amax(a, (0, 2)), [(3, 4, 5)], _distinct),
    "amin_keepdim": (lambda lib, a: a.amin(-1, keepdim=True), [(3, 4)], _distinct),
    "max_all": (lambda lib, a: lib.max(a), [(4, 5)], _distinct),
    "max_dim_values": (lambda lib, a: lib.max(a, 1).values, [(4, 5)], _distinct),
    "max_dim_indices": (lambda lib, a: lib.max(a, 1, keepdim=True)[1], [(4, 5)], None),
    "min_dim_values": (lambda lib, a: a.min(dim=0).values, [(4, 5)], _distinct),
    "max_binary": (lambda lib, a, b: lib.max(a, b), [(3, 4), (4,)], None),
    "argmax": (lambda lib, a: lib.argmax(a), [(4, 5)], None),
    "argmin_dim": (lambda lib, a: a.argmin(0, keepdim=True), [(4, 5)], None),
    "var": (lambda lib, a: lib.var(a), [(5, 6)], None),
    "var_dim_biased": (lambda lib, a: a.var(1, unbiased=False, keepdim=True), [(5, 6)], None),
    "std_correction": (lambda lib, a: lib.std(a, dim=(0, 1), correction=0), [(3, 4, 2)], None),
    "logsumexp": (lambda lib, a: lib.logsumexp(a * 10, 1), [(3, 7)], None),
    "norm_fro": (lambda lib, a: lib.norm(a), [(3, 4)], None),
    "norm_p3_dim": (lambda lib, a: lib.norm(a, 3, dim=1), [(3, 4)], None),
    "vector_norm_inf": (lambda lib, a: lib.linalg.vector_norm(a, math.inf, 1), [(3, 4)], _distinct),
    "matrix_norm_1": (lambda lib, a: lib.linalg.matrix_norm(a, 1), [(2, 3, 4)], None),
    "cumsum": (lambda lib, a: lib.cumsum(a, 1), [(3, 5, 2)], None),
    "cumsum_neg_dim": (lambda lib, a: a.cumsum(-1), [(3, 5)], None),
    "cumprod": (lambda lib, a: lib.cumprod(a, 0), [(4, 3)], lambda lib, t, i: t.abs() + 0.5),
    "logcumsumexp": (lambda lib, a: lib.logcumsumexp(a, 1), [(3, 4)], None),
    "sort": (lambda lib, a: lib.sort(a, 1).values, [(3, 6)], _distinct),
    "sort_desc_idx": (lambda lib, a: lib.sort(a, 0, descending=True)[1], [(6, 3)], _distinct),
    "argsort": (lambda lib, a: lib.argsort(a), [(3, 6)], _distinct),
    "topk": (lambda lib, a: lib.topk(a, 3).values, [(4, 7)], _distinct),
    "topk_smallest_idx": (lambda lib, a: a.topk(2, dim=0, largest=False)[1], [(5, 3)], _distinct),
    "kthvalue": (lambda lib, a: lib.kthvalue(a, 2, 1).values, [(4, 5)], _distinct),
    "median_all": (lambda lib, a: lib.median(a), [(4, 5)], _distinct),
    "median_dim": (lambda lib, a: a.median(1).values, [(4, 5)], _distinct),
    "nansum": (lambda lib, a: lib.nansum(a, 0), [(4, 5)], None),
    "cat": (lambda lib, a, b: lib.cat([a, b], 1), [(2, 3), (2, 4)], None),
    "cat_neg_dim": (lambda lib, a, b: lib.cat((a, b), -1), [(2, 3, 1), (2, 3, 2)], None),
    "stack": (lambda lib, a, b: lib.stack([a, b], 1), [(2, 3), (2, 3)], None),
    "hstack": (lambda lib, a, b: lib.hstack([a, b]), [(2, 3), (2, 1)], None),
    "vstack": (lambda lib, a, b: lib.vstack([a, b]), [(3,), (2, 3)], None),
    "dstack": (lambda lib, a, b: lib.dstack([a, b]), [(2, 3), (2, 3)], None),
    "column_stack": (lambda lib, a, b: lib.column_stack([a, b]), [(3,), (3, 2)], None),
    "gather": (
        lambda lib, a: lib.gather(a, 1, lib.tensor([[0, 2], [1, 1], [3, 0]])),
        [(3, 4)],
        None,
    ),
    "scatter": (lambda lib, a, b: a.scatter(0, lib.tensor([[2, 1, 0]]), b), [(3, 3), (1, 3)], None),
    "scatter_add": (
        lambda lib, a, b: lib.scatter_add(a, 1, lib.tensor([[0, 0], [2, 0]]), b),
        [(2, 3), (2, 2)],
        None,
    ),
    "index_select": (lambda lib, a: lib.index_select(a, 1, lib.tensor([2, 0, 2])), [(3, 4)], None),
    "index_add": (
        lambda lib, a, b: a.index_add(0, lib.tensor([0, 2, 0]), b, alpha=2),
        [(3, 2), (3, 2)],
        None,
    ),
    "masked_fill": (lambda lib, a: a.masked_fill(a > 0, 0.5), [(3, 4)], None),
    "masked_select": (lambda lib, a: lib.masked_select(a, a > 0), [(3, 4)], None),
    "masked_select_bcast": (
        lambda lib, a: lib.masked_select(a, a * a.reshape(1, 3) > 0),
        [(3, 1)],
        None,
    ),
    "bool_getitem": (lambda lib, a: a[a > 0], [(4, 5)], None),
    "masked_scatter": (
        lambda lib, a, b: lib.masked_scatter(a, a > 0, b),
        [(3, 4), (2, 7)],
        None,
    ),
    "masked_scatter_bcast": (
        lambda lib, a, c: a.masked_scatter(a[:1] > 0, c),
        [(3, 4), (15,)],
        None,
    ),
    "take": (lambda lib, a: lib.take(a, lib.tensor([[0, 5], [11, 3]])), [(3, 4)], None),
    "flip": (lambda lib, a: lib.flip(a, [0, 2]), [(2, 3, 4)], None),
    "roll": (lambda lib, a: lib.roll(a, (1, -2), (0, 1)), [(3, 4)], None),
    "roll_flat": (lambda lib, a: a.roll(3), [(3, 4)], None),
    "rot90": (lambda lib, a: lib.rot90(a, 1, (0, 1)), [(2, 3)], None),
    "repeat": (lambda lib, a: a.repeat(2, 1, 3), [(2, 3)], None),
    "tile": (lambda lib, a: lib.tile(a, (2,)), [(2, 3)], None),
    "repeat_interleave": (lambda lib, a: lib.repeat_interleave(a, 2, dim=1), [(2, 3)], None),
    "repeat_interleave_t": (
        lambda lib, a: a.repeat_interleave(lib.tensor([1, 0, 2]), dim=0),
        [(3, 2)],
        None,
    ),
    "tril": (lambda lib, a: lib.tril(a, -1), [(4, 5)], None),
    "triu_batched": (lambda lib, a: a.triu(1), [(2, 4, 3)], None),
    "diag_1d": (lambda lib, a: lib.diag(a, 1), [(3,)], None),
    "diag_2d": (lambda lib, a: lib.diag(a, -1), [(3, 4)], None),
    "diag_embed": (lambda lib, a: lib.diag_embed(a), [(2, 3)], None),
    "movedim": (lambda lib, a: lib.movedim(a, (0, 1), (2, 0)), [(2, 3, 4)], None),
    "swapaxes": (lambda lib, a: lib.swapaxes(a, 0, 2), [(2, 3, 4)], None),
    "t": (lambda lib, a: a.t(), [(2, 3)], None),
    "broadcast_to": (lambda lib, a: lib.broadcast_to(a, (4, 2, 3)), [(2, 1)], None),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name, dtype, device):
    fn, shapes, transform = CASES[name]
    grad = not name.endswith(("_idx", "indices")) and name not in (
        "argmax",
        "argmin_dim",
        "argsort",
    )
    check(fn, shapes, dtype=dtype, device=device, grad=grad, transform=transform)


@pytest.mark.parametrize(
    "name",
    [
        "prod_all",
        "amax",
        "max_dim_indices",
        "cumsum",
        "sort",
        "cat",
        "gather",
        "flip",
        "repeat",
        "tril",
        "argmax",
    ],
)
def test_integer_inputs(name, device):
    fn, shapes, _ = CASES[name]
    check(fn, shapes, dtype="int64", device=device)


def test_all_any_and_count():
    x = np.array([[0, 1, 2], [3, 0, 0]])
    for dtype in [np.int64, np.float32, np.bool_]:
        a, t = flow.tensor(x.astype(dtype)), torch.tensor(x.astype(dtype))
        for fn in ["all", "any"]:
            assert getattr(flow, fn)(a).numpy() == getattr(torch, fn)(t).numpy()
            np.testing.assert_array_equal(getattr(a, fn)(1).numpy(), getattr(t, fn)(1).numpy())
        np.testing.assert_array_equal(
            flow.count_nonzero(a, 0).numpy(), torch.count_nonzero(t, 0).numpy()
        )
    assert flow.all(flow.ones(0)).numpy() and not flow.any(flow.ones(0)).numpy()


def test_nan_handling_matches_torch():
    x = [[1.0, math.nan, 3.0], [2.0, 0.0, -1.0]]
    a, t = flow.tensor(x), torch.tensor(x)
    for name in ["amax", "amin"]:
        np.testing.assert_array_equal(
            getattr(flow, name)(a, 1).numpy(), getattr(torch, name)(t, 1).numpy()
        )
    fv, fi = flow.max(a, 1)
    tv, ti = torch.max(t, 1)
    np.testing.assert_array_equal(fv.numpy(), tv.numpy())
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    np.testing.assert_array_equal(flow.argmin(a, 1).numpy(), torch.argmin(t, 1).numpy())
    for desc in [False, True]:
        fs, ti_ = flow.sort(a, 1, descending=desc), torch.sort(t, 1, descending=desc)
        np.testing.assert_array_equal(fs.values.numpy(), ti_.values.numpy())
        np.testing.assert_array_equal(fs.indices.numpy(), ti_.indices.numpy())


def test_ties_gradients():
    x = [[2.0, 2.0, 1.0]]
    a = flow.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    flow.amax(a).backward()
    torch.amax(t).backward()
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())  # split evenly
    a.grad = None
    t.grad = None
    flow.max(a, 1).values.sum().backward()
    torch.max(t, 1).values.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())  # the first one


def test_unique_and_counting():
    x = np.array([3, 1, 3, 2, 1, 3])
    fu = flow.unique(flow.tensor(x), return_inverse=True, return_counts=True)
    tu = torch.unique(torch.tensor(x), return_inverse=True, return_counts=True)
    for f, t in zip(fu, tu):
        np.testing.assert_array_equal(f.numpy(), t.numpy())
    np.testing.assert_array_equal(
        flow.bincount(flow.tensor(x), minlength=6).numpy(),
        torch.bincount(torch.tensor(x), minlength=6).numpy(),
    )
    w = np.array([0.5, 1, 2, 3, 4, 5])
    np.testing.assert_allclose(
        flow.bincount(flow.tensor(x), flow.tensor(w)).numpy(),
        torch.bincount(torch.tensor(x), torch.tensor(w)).numpy(),
    )
    h = np.array([0.1, 0.5, 0.5, 0.9, 2.0, -1.0], dtype=np.float32)
    np.testing.assert_array_equal(
        flow.histc(flow.tensor(h), 4, 0, 1).numpy(), torch.histc(torch.tensor(h), 4, 0, 1).numpy()
    )
    seq = torch.tensor([1, 3, 5, 7])
    vals = torch.tensor([[0, 3, 8], [5, 6, 1]])
    for right in [False, True]:
        np.testing.assert_array_equal(
            flow.searchsorted(
                flow.tensor(seq.numpy()), flow.tensor(vals.numpy()), right=right
            ).numpy(),
            torch.searchsorted(seq, vals, right=right).numpy(),
        )
        np.testing.assert_array_equal(
            flow.bucketize(
                flow.tensor(vals.numpy()), flow.tensor(seq.numpy()), right=right
            ).numpy(),
            torch.bucketize(vals, seq, right=right).numpy(),
        )


@pytest.mark.parametrize(
    "dtype", ["int64", "int32", "uint8", "bool", "float32", "float64", "float16", "bfloat16"]
)
def test_unique_dim_like_torch(dtype):
    """unique(dim=): distinct slices in lexicographic order with inverse and counts, every dim
    (negative too), wide slices (several merge rounds), 64-bit values beyond 2^31 apart, strided
    inputs, an empty selected dim; PyTorch's errors for bad dims and other empty dims."""
    rng = np.random.default_rng(7)
    cases = [(7,), (6, 3), (5, 4, 3), (40, 9), (3, 200), (1, 5), (5, 1), (300, 70)]
    for shape in cases:
        for high in [2, 5]:
            a = rng.integers(0, high, shape)
            if dtype == "int64" and high == 5:
                a = a * 2**40 - 2**41  # a range past 2^31: the 64-bit keys path
            for dim in range(-len(shape), len(shape)):
                # Even dims read a strided view (every other element of a doubled last dim).
                src = np.repeat(a, 2, -1) if dim % 2 == 0 else a
                t = torch.tensor(src).to(getattr(torch, dtype))
                f = flow.tensor(src).to(getattr(flow, dtype))
                if dim % 2 == 0:
                    t, f = t[..., ::2], f[..., ::2]
                    assert not f.is_contiguous()
                want = torch.unique(t, dim=dim, return_inverse=True, return_counts=True)
                got = flow.unique(f, dim=dim, return_inverse=True, return_counts=True)
                for w, g in zip(want, got):
                    assert tuple(g.shape) == tuple(w.shape)
                    np.testing.assert_array_equal(g.float().numpy(), w.float().numpy())
                np.testing.assert_array_equal(
                    flow.unique(f, dim=dim).float().numpy(),
                    torch.unique(t, dim=dim).float().numpy(),
                )
    for lib in (torch, flow):
        values, inverse, counts = lib.unique(
            lib.zeros(0, 3), dim=0, return_inverse=True, return_counts=True
        )
        assert tuple(values.shape) == (0, 3) and inverse.numel() == 0 and counts.numel() == 0
    for call, error in [
        (lambda lib: lib.unique(lib.zeros(3, 0), dim=0), RuntimeError),
        (lambda lib: lib.unique(lib.zeros(2, 2), dim=2), IndexError),
        (lambda lib: lib.unique(lib.tensor(5.0), dim=0), IndexError),
    ]:
        with pytest.raises(error):
            call(torch)
        with pytest.raises(error):
            call(flow)


def _same_positions(fn):
    """fn(lib) on both libraries: equal int positions, shapes and dtypes."""
    want, got = fn(torch), fn(flow)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.uint8, np.int8])
def test_searchsorted_binary_search_like_torch(dtype):
    # Lengths around the eight-value blocks and the power-of-two window steps, many ties,
    # values outside the range, 1-D and per-line boundaries, a sorter, int32 output.
    rng = np.random.default_rng(5)
    for length in [0, 1, 2, 3, 7, 8, 9, 64, 65, 1000]:
        seq = np.sort(rng.integers(0, 40, length)).astype(dtype)
        for shape in [(), (0,), (1,), (13,), (3, 70)]:
            vals = rng.integers(0, 48, shape).astype(dtype)
            for right in [False, True]:
                _same_positions(
                    lambda lib, s=seq, v=vals, r=right: lib.searchsorted(
                        lib.tensor(s), lib.tensor(v), right=r
                    )
                )
                _same_positions(
                    lambda lib, s=seq, v=vals, r=right: lib.bucketize(
                        lib.tensor(v), lib.tensor(s), right=r, out_int32=True
                    )
                )
        lines = np.sort(rng.integers(0, 40, (2, 3, length)), -1).astype(dtype)
        vals = rng.integers(0, 48, (2, 3, 11)).astype(dtype)
        shuffled = rng.permuted(lines, axis=-1)
        sorter = np.argsort(shuffled, -1, kind="stable")
        for side in ["left", "right"]:
            _same_positions(
                lambda lib, s=lines, v=vals, side=side: lib.searchsorted(
                    lib.tensor(s), lib.tensor(v), side=side
                )
            )
            _same_positions(
                lambda lib, s=shuffled, v=vals, side=side, o=sorter: lib.searchsorted(
                    lib.tensor(s), lib.tensor(v), side=side, sorter=lib.tensor(o)
                )
            )


def test_searchsorted_promotion_nan_layouts_and_errors():
    # Mixed dtypes and Python numbers promote as in PyTorch (an int sequence searched for 2.5).
    _same_positions(lambda lib: lib.searchsorted(lib.tensor([1, 2, 3]), lib.tensor([1.5, 2.5])))
    _same_positions(lambda lib: lib.searchsorted(lib.tensor([1.0, 2, 3]), lib.tensor([1, 2])))
    _same_positions(lambda lib: lib.searchsorted(lib.tensor([1, 2, 3]), 2.5))
    _same_positions(lambda lib: lib.searchsorted(lib.tensor([1.0, 2, 3]), 2, right=True))
    for dt in ["float16", "bfloat16"]:
        _same_positions(
            lambda lib, dt=dt: lib.searchsorted(
                lib.tensor([1.0, 2, 3], dtype=getattr(lib, dt)),
                lib.tensor([2.5, 1, -1], dtype=getattr(lib, dt)),
            )
        )
    # Enough values for the blocks to run in parallel.
    big = np.sort(np.random.default_rng(3).standard_normal(5000)).astype(np.float32)
    many = np.random.default_rng(4).standard_normal(20011).astype(np.float32)
    _same_positions(lambda lib: lib.searchsorted(lib.tensor(big), lib.tensor(many), right=True))
    # Non-contiguous boundaries and values.
    seq = np.sort(np.random.default_rng(1).standard_normal((30, 4)), 0).astype(np.float32)
    vals = np.random.default_rng(2).standard_normal((5, 6)).astype(np.float32)
    _same_positions(lambda lib: lib.searchsorted(lib.tensor(seq)[:, 1], lib.tensor(vals).t()))
    _same_positions(lambda lib: lib.searchsorted(lib.tensor(seq).t(), lib.tensor(vals)[:, :4].t()))
    # NaN values go to the end of number-only boundaries (PyTorch); with NaN boundaries, NaN
    # follows every number and equals itself (NumPy: PyTorch's answer depends on its probes).
    v = np.array([np.nan, 2, 0.5, 5, -np.inf, np.inf], np.float32)
    _same_positions(lambda lib: lib.searchsorted(lib.tensor([1.0, 2, 2, 3]), lib.tensor(v)))
    s = np.array([1.0, 2, 2, 3, np.nan, np.nan], np.float32)
    for side in ["left", "right"]:
        np.testing.assert_array_equal(
            flow.searchsorted(flow.tensor(s), flow.tensor(v), side=side).numpy(),
            np.searchsorted(s, v, side),
        )
    bad = [
        lambda lib: lib.searchsorted(lib.tensor([[1.0, 2], [3, 4]]), lib.tensor([1.0])),
        lambda lib: lib.searchsorted(lib.tensor(3.0), lib.tensor([1.0])),
        lambda lib: lib.searchsorted(lib.tensor([1.0, 2]), lib.tensor([1.0]), side="lft"),
        lambda lib: lib.searchsorted(lib.tensor([1.0]), lib.tensor([1.0]), side="left", right=True),
        lambda lib: lib.searchsorted(
            lib.tensor([1.0, 2]), lib.tensor([1.0]), sorter=lib.tensor([0])
        ),
        lambda lib: lib.searchsorted(
            lib.tensor([1.0, 2]), lib.tensor([1.0]), sorter=lib.tensor([0, 5])
        ).tolist(),
        lambda lib: lib.searchsorted(lib.tensor([True, False]), lib.tensor([True])),
    ]
    for call in bad:
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(want.type):
            call(flow)
    # The engine stays usable after the sorter error surfaced.
    assert flow.searchsorted(flow.tensor([1.0, 2]), flow.tensor([1.5])).tolist() == [1]


def test_meshgrid_and_broadcast_helpers():
    a, b = np.arange(3), np.arange(4)
    for indexing in ["ij", "xy"]:
        for f, t in zip(
            flow.meshgrid(flow.tensor(a), flow.tensor(b), indexing=indexing),
            torch.meshgrid(torch.tensor(a), torch.tensor(b), indexing=indexing),
        ):
            np.testing.assert_array_equal(f.numpy(), t.numpy())
    assert tuple(flow.broadcast_shapes((2, 1), (3,))) == (2, 3)
    outs = flow.broadcast_tensors(flow.ones(2, 1), flow.ones(3))
    assert [tuple(o.shape) for o in outs] == [(2, 3), (2, 3)]


def test_inplace_movement_methods():
    a = flow.zeros(2, 3)
    a.masked_fill_(flow.tensor([[True, False, True], [False, False, True]]), 2.0)
    a.scatter_(1, flow.tensor([[1], [0]]), 5.0)
    t = torch.zeros(2, 3)
    t.masked_fill_(torch.tensor([[True, False, True], [False, False, True]]), 2.0)
    t.scatter_(1, torch.tensor([[1], [0]]), 5.0)
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    c = flow.arange(4.0)
    c.cumsum_(0)
    assert c.numpy().tolist() == [0, 1, 3, 6]


def test_errors_name_the_op():
    x = flow.ones(3, 4)
    # Index ranges are checked by the kernels: the error comes at the next read.
    with pytest.raises(RuntimeError, match=r"gather: index 4 is out of bounds for dimension 1"):
        flow.gather(x, 1, flow.tensor([[4]])).numpy()
    with pytest.raises(RuntimeError, match="gather: expected dtype int64"):
        flow.gather(x, 1, flow.tensor([[0.0]]))
    with pytest.raises(RuntimeError, match="gather: index tensor must have the same number"):
        flow.gather(x, 1, flow.tensor([0]))
    with pytest.raises(RuntimeError, match="scatter: index -1 is out of bounds"):
        x.scatter(0, flow.tensor([[-1]]), 1.0).numpy()
    with pytest.raises(RuntimeError, match=r"cat: sizes of tensors must match"):
        flow.cat([x, flow.ones(2, 5)])
    with pytest.raises(RuntimeError, match="cat: zero-dimensional tensor"):
        flow.cat([flow.tensor(1.0)])
    with pytest.raises(RuntimeError, match="stack: expects each tensor to be equal size"):
        flow.stack([x, flow.ones(4, 3)])
    with pytest.raises(IndexError, match="amax"):
        flow.amax(flow.ones(0, 3), 0)
    with pytest.raises(RuntimeError, match="topk"):
        flow.topk(x, 5)
    with pytest.raises(IndexError, match="max|out of range"):
        flow.max(x, 2)
    with pytest.raises(RuntimeError, match="dtype"):
        x.scatter(0, flow.tensor([[0]]), flow.tensor([[1]]))


def test_cat_promotes_and_skips_legacy_empty():
    out = flow.cat([flow.tensor([1, 2]), flow.tensor([0.5]), flow.tensor([])])
    ref = torch.cat([torch.tensor([1, 2]), torch.tensor([0.5]), torch.tensor([])])
    assert out.dtype == flow.float32 and ref.dtype == torch.float32
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    z = flow.cat([flow.ones(0, 3), flow.ones(2, 3)])
    assert tuple(z.shape) == (2, 3)


def _layouts_run(lib, a, src, idx, perm, dim, dt, ishape):
    x = lib.tensor(a * 10).to(getattr(lib, dt))
    s = lib.tensor(src * 10).to(getattr(lib, dt))
    i, p = lib.tensor(idx), lib.tensor(perm)
    out = [lib.gather(x, dim, i), x.scatter(dim, p, s), x.scatter_add(dim, i, s)]
    out.append(x.scatter(dim, p, s.transpose(0, 2).contiguous().transpose(0, 2)))
    # src shaped as the index (the row path when dim is not the last)
    same = s[: ishape[0], : ishape[1], : ishape[2]].contiguous()
    out += [x.scatter(dim, p, same), x.scatter_add(dim, i, same)]
    out.append(x.scatter_reduce(dim, i, same, "amax"))
    for reduce in ("sum", "prod", "amax", "amin"):
        out.append(x.scatter_reduce(dim, i, s, reduce))
    out += [lib.cumsum(x, dim), lib.cumprod(x / 10 if dt != "int64" else x, dim)]
    return [t.numpy() for t in out]


@pytest.mark.parametrize("seed", range(6))
def test_gather_scatter_scan_layouts_match_torch(seed):
    """The kernels' line and row paths: gather/scatter along every dim of 3-D tensors (index
    smaller than self, src larger than the index or shaped as it, strided src), all scatter
    reductions (with duplicate indices where the result does not depend on order),
    cumsum/cumprod along outer dims with rows wider than one task's chunk, for several dtypes."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(v) for v in rng.integers(1, 6, 3))
    if seed == 5:
        shape = (3, 2, 1500)  # rows wider than the kernels' 1024-element chunks
    for dim in range(3):
        ishape = tuple(int(rng.integers(1, s + 1)) for s in shape)
        ishape = tuple(shape[d] if d == dim else ishape[d] for d in range(3))
        a = rng.standard_normal(shape)
        idx = rng.integers(0, shape[dim], ishape)
        # An index with distinct values along `dim` (a permutation per line) for plain scatter.
        perm = np.argsort(rng.random(ishape), axis=dim)
        src = rng.standard_normal(tuple(s + 1 for s in ishape))
        for dt in ("float32", "float64", "int64"):
            args = (a, src, idx, perm, dim, dt, ishape)
            for got, want in zip(_layouts_run(flow, *args), _layouts_run(torch, *args)):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    b = rng.random((4, 3, 5)) > 0.5  # bool scans along an outer dim
    np.testing.assert_array_equal(
        flow.cumsum(flow.tensor(b), 0).numpy(), torch.cumsum(torch.tensor(b), 0).numpy()
    )


def _scatter_fused_run(lib, a, src, idx, perm, dim, dt, view):
    x = lib.tensor(a).to(getattr(lib, dt))
    if view == "transposed":
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    elif view == "stepped":
        x = x.repeat(1, 2)[:, ::2]
    s = lib.tensor(src).to(getattr(lib, dt))
    i, p = lib.tensor(idx), lib.tensor(perm)
    out = [x.scatter(dim, p, s[tuple(slice(0, n) for n in perm.shape)]), x.scatter_add(dim, i, s)]
    if dt != "bool":
        for reduce in ("sum", "prod", "amax", "amin"):
            out.append(x.scatter_reduce(dim, i, s, reduce))
        out.append(x.scatter(dim, i, 2.5 if dt.startswith("float") else 3, reduce="add"))
    return [t.float().numpy() for t in out]


@pytest.mark.parametrize("view", ["contiguous", "transposed", "stepped"])
@pytest.mark.parametrize(
    "shape,dim,length",
    [((4, 7), 1, 7), ((4, 7), 1, 3), ((4, 7), 1, 12), ((6, 5), 0, 9), ((64, 2048), 1, 2048)],
)
def test_scatter_when_the_index_covers_every_line_like_torch(shape, dim, length, view):
    """Scatter's line path when the index has a line for every line of the output: each line is
    copied from self and then scattered into (Note [Scatter copies each line before it writes
    there]). Self contiguous, transposed or strided; index lines shorter, as long as and longer
    than self's along `dim`; every reduction with duplicate indices, plain scatter with a
    permutation; small and parallel sizes; five dtypes."""
    rng = np.random.default_rng(sum(shape) + dim + length)
    ishape = tuple(length if d == dim else shape[d] for d in range(2))
    a = rng.standard_normal(shape) * 4
    idx = rng.integers(0, shape[dim], ishape)
    pshape = tuple(min(length, shape[dim]) if d == dim else shape[d] for d in range(2))
    perm = np.argsort(rng.random(tuple(shape[d] for d in range(2))), axis=dim)
    perm = perm[tuple(slice(0, n) for n in pshape)]
    src = rng.standard_normal(tuple(n + 1 for n in ishape)) * 4
    for dt in ("float32", "float64", "int64", "float16", "bool"):
        got = _scatter_fused_run(flow, a, src, idx, perm, dim, dt, view)
        want = _scatter_fused_run(torch, a, src, idx, perm, dim, dt, view)
        tol = 2e-2 if dt == "float16" else 1e-5
        for k, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"{dt} output {k}")


@pytest.mark.parametrize("shape,dim", [((1024, 300), 0), ((2048, 100), 0), ((2, 600, 70), 1)])
def test_scatter_along_an_outer_dim_in_column_chunks_like_torch(shape, dim):
    """Scatter along an outer dim with src shaped as the index walks rows in column chunks
    sized so that the chunk's output rows stay in cache (32 to 1024 columns: here 64 to 512,
    with a partial last chunk): a permutation per column, and duplicate indices with sum and
    amax, in float32 and float64."""
    rng = np.random.default_rng(sum(shape) + dim)
    perm = np.argsort(rng.random(shape), axis=dim)
    idx = rng.integers(0, shape[dim], shape)
    for dt in ("float32", "float64"):
        a = rng.standard_normal(shape).astype(dt)
        src = rng.standard_normal(shape).astype(dt)
        for lib in (flow, torch):
            x, s = lib.tensor(a), lib.tensor(src)
            p, i = lib.tensor(perm), lib.tensor(idx)
            outs = [
                x.scatter(dim, p, s),
                x.scatter_add(dim, i, s),
                x.scatter_reduce(dim, i, s, "amax"),
            ]
            if lib is flow:
                got = [t.numpy() for t in outs]
            else:
                want = [t.numpy() for t in outs]
        for k, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{dt} output {k}")


@pytest.mark.parametrize(
    "shape,dim", [((4, 7), 1), ((64, 2048), 1), ((2048, 64), 0), ((3, 4, 5), 1)]
)
def test_scatter_reports_the_first_bad_index_and_leaves_self_alone(shape, dim):
    """An out-of-range index in the middle of the index (the bounds are tested in the scatter's
    own pass): RuntimeError naming the first bad index in index order, self unchanged by the
    in-place form, and the engine usable after."""
    rng = np.random.default_rng(len(shape) + dim)
    a = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(0, shape[dim], shape)
    flat = idx.reshape(-1)
    flat[flat.size // 2] = shape[dim] + 5
    flat[flat.size // 2 + 1] = -1
    x = flow.tensor(a)
    with pytest.raises(
        RuntimeError, match=rf"scatter: index {shape[dim] + 5} is out of bounds for dimension"
    ):
        flow.scatter_add(x, dim, flow.tensor(idx), x).numpy()
    with pytest.raises(RuntimeError, match="scatter: index"):
        x.scatter_(dim, flow.tensor(idx), 1.0)
        x.numpy()
    np.testing.assert_array_equal(x.numpy(), a)
    ok = rng.integers(0, shape[dim], shape)
    np.testing.assert_allclose(
        flow.scatter_add(x, dim, flow.tensor(ok), x).numpy(),
        torch.scatter_add(torch.tensor(a), dim, torch.tensor(ok), torch.tensor(a)).numpy(),
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "shape", [(9, 5), (4, 37), (7, 3), (65536, 3), (3, 20011), (1, 100003), (50001,), (5, 0)]
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "bool"])
def test_scans_along_the_last_dim_like_torch(shape, dtype):
    """cumsum/cumprod along the last dim: lines four at a time (counts of lines around groups of
    four), and few long lines cut into segments whose starting values come from a first pass
    (sums and products across segment boundaries, integer products that wrap)."""
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    if dtype == "bool":
        a = rng.random(shape) > 0.3
    elif dtype.startswith("int"):
        a = rng.integers(-3, 4, shape).astype(dtype)
    else:
        a = rng.standard_normal(shape).astype(dtype)
    # Float products of many factors near 1 stay in range; integer factors are +-1 with some
    # 2s and 3s, so long lines overflow and wrap (the same bits in any grouping).
    m = rng.choice([1, -1, 2, 3], shape, p=[0.45, 0.45, 0.05, 0.05])
    if dtype == "bool":
        pa = a
    elif dtype.startswith("float"):
        pa = (1 + 0.001 * a).astype(dtype)
    else:
        pa = m.astype(dtype)
    tol = {"float16": 2e-2, "float32": 2e-5}.get(dtype, 1e-12)
    for fn, x in (("cumsum", a), ("cumprod", pa)):
        got = getattr(flow, fn)(flow.tensor(x), -1)
        want = getattr(torch, fn)(torch.tensor(x), -1)
        assert got.dtype == getattr(flow, str(want.dtype).split(".")[1]), fn
        g, w = got.numpy(), want.numpy()
        if dtype.startswith("float"):
            x64 = np.abs(x.astype(np.float64))
            scale = np.maximum(1.0, np.cumsum(x64, -1) if fn == "cumsum" else np.abs(w))
            assert np.all(np.abs(g.astype(np.float64) - w.astype(np.float64)) <= tol * scale), fn
        else:
            np.testing.assert_array_equal(g, w, err_msg=fn)


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"]
)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_special_values_and_ties_match_torch_stable(dtype, descending):
    # Sorting keys: NaN last (first when descending), -0.0 equal to 0.0, ties in input order.
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (4, 37)).astype(np.float64)
    if dtype.startswith("float"):
        a[0, ::5] = np.nan
        a[1, ::3] = -0.0
        a[2, :] = np.where(rng.random(37) < 0.3, np.inf, a[2])
        a[3, ::4] = -np.inf
    elif dtype == "uint8":
        a = np.abs(a)
    for dim in (0, 1):
        got = flow.sort(flow.tensor(a).to(getattr(flow, dtype)), dim, descending)
        want = torch.sort(
            torch.tensor(a).to(getattr(torch, dtype)), dim=dim, descending=descending, stable=True
        )
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_reduce_blocks_match_torch(dtype):
    """amax/amin/prod/all/any over consecutive dims of contiguous inputs (the (outer, red,
    inner) kernels: rows of accumulators, lane accumulators, a full reduction split between
    threads), with NaN placed inside and at the ends of runs."""
    rng = np.random.default_rng(3)
    cases = [((3, 40000), [1]), ((40000, 3), [0]), ((70000,), [0]), ((5, 6, 7, 8), [1, 2])]
    cases += [((5, 6, 7, 8), [2, 3]), ((5, 6, 7, 8), [0, 1]), ((4, 1500), [0, 1]), ((2, 3), [0])]
    for shape, dims in cases:
        if dtype == "int64":
            a = rng.integers(-50, 50, size=shape)
        else:
            a = rng.standard_normal(shape).astype(dtype)
            flat = a.reshape(-1)
            for i in rng.integers(0, flat.size, size=3):
                flat[i] = np.nan
            flat[-1] = np.nan
        p = np.clip(a, -1.05, 1.05) if dtype != "int64" else np.clip(a, -1, 2)
        x, xt = flow.tensor(a), torch.tensor(a)
        for name in ("amax", "amin"):
            for keepdim in (False, True):
                got = getattr(flow, name)(x, dims, keepdim=keepdim).numpy()
                want = getattr(torch, name)(xt, dims, keepdim=keepdim).numpy()
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {shape} {dims}")
        if len(dims) == 1:
            got = flow.prod(flow.tensor(p), dims[0]).numpy()
            want = torch.prod(torch.tensor(p), dims[0]).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"prod {shape} {dims}")
        for name in ("all", "any"):
            b = a > 0 if dtype == "int64" else ~np.isnan(a)
            got = getattr(flow, name)(flow.tensor(b), dims[0]).numpy()
            want = getattr(torch, name)(torch.tensor(b), dims[0]).numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {shape} {dims}")
    big = np.ones(100000, dtype=bool)
    assert flow.tensor(big).all().item() and not flow.tensor(~big).any().item()
    big[77777] = False
    assert not flow.tensor(big).all().item()


def test_integer_prod_wraps_like_torch():
    """int64 products that overflow wrap modulo 2**64 as in PyTorch, in every reduction layout
    (the lane accumulators multiply in another order than a serial loop: wrapping is
    order-independent, signed overflow would be undefined)."""
    rng = np.random.default_rng(4)
    a = rng.integers(-(2**40), 2**40, size=(6, 70))
    a[:, 5] = 0
    a[2, 5] = 7
    for dim in (0, 1):
        got = flow.prod(flow.tensor(a), dim).numpy()
        want = torch.prod(torch.tensor(a), dim).numpy()
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        flow.tensor(a[2]).prod().numpy(), torch.tensor(a[2]).prod().numpy()
    )
    strided = a[:, ::3]
    np.testing.assert_array_equal(
        flow.prod(flow.tensor(strided), 1).numpy(), torch.prod(torch.tensor(strided), 1).numpy()
    )


def _line_data(rng, shape, dtype):
    if dtype in ("int64", "int32", "uint8"):
        return rng.integers(0, 9, size=shape).astype(dtype)  # many ties
    a = np.round(rng.standard_normal(shape) * 3, 1)  # ties at one decimal
    flat = a.reshape(-1)
    if flat.size > 6:
        flat[rng.choice(flat.size, size=3, replace=False)] = [np.nan, np.inf, -np.inf]
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8"])
def test_topk_kthvalue_median_select_like_torch(dtype):
    """topk / kthvalue / median select (not sort) along a line: values and indices equal
    PyTorch's for ties (the earlier position first), NaN (larger than every number; median
    propagates it) and infinities, along each dim of non-contiguous inputs, incl. k = 0 and
    k = n."""
    rng = np.random.default_rng(11)
    for shape in [(7,), (5, 9), (4, 6, 3), (3, 1000), (1, 1)]:
        a = _line_data(rng, shape, dtype)
        x, xt = flow.tensor(a), torch.tensor(a)
        for dim in range(-len(shape), len(shape)):
            n = shape[dim]
            for k in sorted({0, 1, 2, min(16, n), n // 2, n}):
                for largest in (True, False):
                    if k > n:
                        continue
                    got = x.topk(k, dim, largest=largest)
                    want = xt.topk(k, dim, largest=largest)
                    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
                    # PyTorch's order among equal values is not specified: compare the values
                    # the indices pick, and that they are distinct positions.
                    idx = got.indices.numpy()
                    picked = np.take_along_axis(a, idx, axis=dim % len(shape))
                    np.testing.assert_array_equal(picked, want.values.numpy())
                    srt = np.sort(idx, axis=dim % len(shape))
                    assert (np.diff(srt, axis=dim % len(shape)) > 0).all()
            for k in sorted({1, n, (n + 1) // 2}):
                for keepdim in (False, True):
                    got, want = x.kthvalue(k, dim, keepdim), xt.kthvalue(k, dim, keepdim)
                    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
                    picked = np.take_along_axis(
                        a,
                        got.indices.numpy().reshape(
                            want.values.shape
                            if keepdim
                            else np.expand_dims(want.values.numpy(), dim).shape
                        ),
                        axis=dim % len(shape),
                    )
                    np.testing.assert_array_equal(
                        picked.reshape(want.values.shape), want.values.numpy()
                    )
            got, want = x.median(dim), xt.median(dim)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            if not dtype.startswith(("int", "uint")):
                np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        np.testing.assert_array_equal(x.median().numpy(), xt.median().numpy())
        if len(shape) > 1:  # a transposed view
            got, want = x.transpose(0, 1).topk(1, 0), xt.transpose(0, 1).topk(1, 0)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    with pytest.raises(RuntimeError, match="kthvalue"):
        flow.ones(3).kthvalue(0)
    with pytest.raises(RuntimeError, match="topk"):
        flow.ones(3).topk(-1)
    # A 0-d input is its one element for k = 0 and 1 (k = 0 wrote nothing: leftover memory).
    for k in (0, 1):
        got, want = flow.tensor(2.5).topk(k), torch.tensor(2.5).topk(k)
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


def test_topk_kthvalue_median_gradients_match_torch():
    a = np.random.default_rng(4).permutation(60).reshape(4, 15).astype("float64") * 0.1
    for fn in (
        lambda lib, x: lib.topk(x, 4, 1).values,
        lambda lib, x: lib.topk(x, 2, 0, largest=False).values,
        lambda lib, x: lib.kthvalue(x, 3, 1).values,
        lambda lib, x: lib.median(x, 0, keepdim=True).values,
        lambda lib, x: lib.median(x),
    ):
        grads = []
        for lib in (flow, torch):
            x = lib.tensor(a, requires_grad=True)
            y = fn(lib, x)
            (y * lib.arange(1, y.numel() + 1, dtype=y.dtype).reshape(y.shape)).sum().backward()
            grads.append(x.grad.numpy())
        np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16"])
def test_flip_is_a_reversed_copy_like_torch(dtype):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4, 5, 6)) * 4
    a = a > 0 if dtype == "bool" else a.astype(dtype)
    x, xt = flow.tensor(a), torch.tensor(a)
    for dims in ([0], [1], [3], [-1], [0, 3], [1, 2], [3, 0, 1], [0, 1, 2, 3], []):
        np.testing.assert_array_equal(x.flip(dims).numpy(), xt.flip(dims).numpy())
        # non-contiguous input: a permuted view and a slice with a step
        got = x.permute(2, 0, 3, 1).flip(dims).numpy()
        np.testing.assert_array_equal(got, xt.permute(2, 0, 3, 1).flip(dims).numpy())
        got = x[:, ::2, 1:].flip(dims).numpy()
        np.testing.assert_array_equal(got, xt[:, ::2, 1:].flip(dims).numpy())
    out = flow.flip(x, 1)
    out.fill_(0)  # a copy, not a view: the input is untouched
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal(flow.flip(flow.ones(0, 3), [0, 1]).numpy(), np.ones((0, 3)))
    np.testing.assert_array_equal(flow.tensor(2.5).flip([0]).numpy(), np.array(2.5))
    for fn in (
        lambda lib, t: lib.fliplr(t),
        lambda lib, t: lib.flipud(t),
        lambda lib, t: lib.rot90(t, 1, (1, 2)),
    ):
        np.testing.assert_array_equal(fn(flow, x).numpy(), fn(torch, xt).numpy())
    with pytest.raises(RuntimeError, match="flip: dim 0 appears multiple times"):
        x.flip([0, -4])
    with pytest.raises(IndexError, match="flip"):
        x.flip([4])


def test_flip_gradient_matches_torch():
    a = np.random.default_rng(3).standard_normal((4, 5, 3))
    grads = []
    for lib in (flow, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x.transpose(0, 2).flip([0, 2])
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("dtype", ["uint8", "bool", "float16", "int32", "float32", "float64"])
def test_transposing_copies_like_numpy(dtype):
    """Copies whose output runs across the input's rows (transposes, permutes moving the
    contiguous dim) go by tiles: every item size, sizes off the tile grid, leading and
    broadcast dims, sliced inputs, and copies into a strided destination."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 67, 301)) * 50
    a = a > 0 if dtype == "bool" else a.astype(dtype)
    x = flow.tensor(a)
    cases = [
        (lambda t: t.transpose(1, 2), lambda n: n.transpose(0, 2, 1)),
        (lambda t: t.permute(2, 0, 1), lambda n: n.transpose(2, 0, 1)),
        (lambda t: t.permute(1, 2, 0), lambda n: n.transpose(1, 2, 0)),
        (lambda t: t[:, 3:60, 5:290:1].transpose(1, 2), lambda n: n[:, 3:60, 5:290].swapaxes(1, 2)),
        (lambda t: t[1].t(), lambda n: n[1].T),
        (
            lambda t: t[0, :40].t().unsqueeze(0).expand(4, 301, 40),
            lambda n: np.broadcast_to(n[0, :40].T, (4, 301, 40)),
        ),
    ]
    for view, ref in cases:
        got = view(x).contiguous().numpy()
        np.testing.assert_array_equal(got, np.ascontiguousarray(ref(a)))
    # into a strided destination: y.t()[...] = x
    y = flow.zeros(301, 67, dtype=x.dtype)
    y.t().copy_(x[2])
    np.testing.assert_array_equal(y.numpy(), a[2].T)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16", "uint8"])
def test_tril_triu_like_torch(dtype):
    """tril/triu: every diagonal from far below to far above, square/wide/tall and batched
    matrices, zero-size dims, non-contiguous inputs (transposed, stepped slices, broadcast),
    a copy rather than a view, and the error for fewer than 2 dims."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3, 7, 5)) * 4
    a = a > 0 if dtype == "bool" else a.astype(dtype)
    x, xt = flow.tensor(a), torch.tensor(a)
    views = [
        (lambda t: t),
        (lambda t: t.transpose(-1, -2)),
        (lambda t: t[:, 1:, ::2, 1:]),
        (lambda t: t.permute(2, 0, 3, 1)),
        (lambda t: t[0, 0, :1].expand(6, 5)),
        (lambda t: t[:, :, :0]),
        (lambda t: t[0, 0]),
    ]
    for view in views:
        for d in (-9, -6, -2, -1, 0, 1, 2, 4, 5, 9):
            for name in ("tril", "triu"):
                got = getattr(flow, name)(view(x), d).numpy()
                want = getattr(torch, name)(view(xt), d).numpy()
                assert got.shape == want.shape, name
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {d}")
                got = getattr(view(x), name)(diagonal=d).numpy()
                np.testing.assert_array_equal(got, want, err_msg=f"Tensor.{name} {d}")
    out = flow.tril(x)
    out.fill_(0)  # a copy, not a view: the input is untouched
    np.testing.assert_array_equal(x.numpy(), a)
    for name in ("tril", "triu"):
        with pytest.raises(RuntimeError, match=f"{name}: input tensor must have at least 2"):
            getattr(flow, name)(flow.ones(3))


def test_tril_triu_gradients_match_torch():
    a = np.random.default_rng(6).standard_normal((3, 4, 6))
    for name, d in (("tril", 0), ("tril", -2), ("triu", 1), ("triu", -1)):
        grads = []
        for lib in (flow, torch):
            x = lib.tensor(a, requires_grad=True)
            y = getattr(x.transpose(1, 2), name)(d)
            (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
            grads.append(x.grad.numpy())
        np.testing.assert_array_equal(*grads, err_msg=f"{name} {d}")


@pytest.mark.parametrize("dtype", ["bool", "uint8", "float16", "int32", "float32", "int64"])
def test_index_select_single_elements_like_torch(dtype):
    """Gathers of single elements (the indexed dim is the last): every item size, repeated and
    negative indices, leading dims, and a 1-D input; x[..., idx] too."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4, 37)) * 5
    a = a > 0 if dtype == "bool" else a.astype(dtype)
    idx = np.array([0, 36, 5, 5, -1, -37, 12] * 9)
    x, xt = flow.tensor(a), torch.tensor(a)
    for dim, size in ((2, 37), (-1, 37)):
        i = idx % size
        got = flow.index_select(x, dim, flow.tensor(i)).numpy()
        np.testing.assert_array_equal(got, torch.index_select(xt, dim, torch.tensor(i)).numpy())
    np.testing.assert_array_equal(x[..., flow.tensor(idx)].numpy(), xt[..., torch.tensor(idx)])
    flat = a.reshape(-1)
    i = rng.integers(0, flat.size, 50000)  # past the parallel grain
    got = flow.index_select(flow.tensor(flat), 0, flow.tensor(i)).numpy()
    np.testing.assert_array_equal(got, flat[i])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_column_reductions_over_wide_rows_like_torch(dtype):
    """Reductions over leading dims of wide rows run by blocks of columns shared between
    threads: row widths off the block size, one and several output rows, strided inputs."""
    rng = np.random.default_rng(9)
    a = (rng.standard_normal((3, 41, 1000)) * 3).astype(dtype)
    x, xt = flow.tensor(a), torch.tensor(a)
    # PyTorch adds float32 in float32, this library in double: cancellations differ by ~1 ulp
    # of the addends
    tol = dict(rtol=1e-5, atol=2e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    for dims in ((0,), (1,), (0, 1)):
        for name in ("sum", "amax", "amin"):
            got = getattr(x, name)(dims).numpy()
            want = getattr(xt, name)(dims).numpy()
            np.testing.assert_allclose(got, want, **tol)
        got = x[:, :, ::3].sum(dims).numpy()
        want = xt[:, :, ::3].sum(dims).numpy()
        np.testing.assert_allclose(got, want, **tol)
    b = a[:, :5] / 3 if dtype != "int64" else a[:, :5] % 3 + 1
    np.testing.assert_allclose(
        flow.tensor(b).prod(1).numpy(), torch.tensor(b).prod(1).numpy(), rtol=1e-5
    )
    # Narrow rows (fewer column blocks than threads): the reduced rows are split between
    # threads and the partial sums added in order; a reduction over two leading dims as well.
    c = (rng.standard_normal((40, 130, 3)) * 3).astype(dtype)
    for dims in ((0,), (0, 1), (1,)):
        np.testing.assert_allclose(
            flow.tensor(c).sum(dims).numpy(), torch.tensor(c).sum(dims).numpy(), **tol
        )
    d = (rng.standard_normal((64, 80, 256))).astype(dtype)
    np.testing.assert_allclose(
        flow.tensor(d).sum((0, 1)).numpy(), torch.tensor(d).sum((0, 1)).numpy(), **tol
    )
    # Rows wider than one block (9001 = 3 blocks of 3001), reduced row counts off the 4-row step
    # and the 64-row float block; few reduced rows (narrower blocks shared between threads).
    for shape, dims in (((603, 9001), (0,)), ((2, 517, 4100), (1,)), ((101, 5000), (0,))):
        e = (rng.standard_normal(shape) * 3).astype(dtype)
        got = flow.tensor(e).sum(dims).numpy()
        if dtype == "int64":
            np.testing.assert_array_equal(got, e.sum(dims))
            continue
        # Against a float64 sum; the bound is a few units of rounding of the addends' magnitude.
        exact = e.astype(np.float64).sum(dims)
        bound = 4 * np.finfo(dtype).eps * np.abs(e).astype(np.float64).sum(dims)
        assert np.all(np.abs(got - exact) <= bound), np.max(np.abs(got - exact) / bound)


@pytest.mark.parametrize(
    "shape", [(), (0,), (7,), (3, 4), (2, 0, 3), (2, 3, 4, 5), (70001,), (3, 300, 301)]
)
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_nonzero_and_masked_select_like_torch(shape, density):
    # Sizes past one 64K block and off every chunk boundary, all-false and all-true masks.
    rng = np.random.default_rng(len(shape) + int(density * 10))
    a = rng.standard_normal(shape).astype(np.float32)
    m = rng.random(shape) < density
    fx, tx = flow.tensor(a), torch.tensor(a)
    fm, tm = flow.tensor(m), torch.tensor(m)
    np.testing.assert_array_equal(flow.nonzero(fm).numpy(), torch.nonzero(tm).numpy())
    np.testing.assert_array_equal(flow.argwhere(fm).numpy(), torch.argwhere(tm).numpy())
    for f, t in zip(fm.nonzero(as_tuple=True), tm.nonzero(as_tuple=True), strict=True):
        np.testing.assert_array_equal(f.numpy(), t.numpy())
    np.testing.assert_array_equal(
        flow.masked_select(fx, fm).numpy(), torch.masked_select(tx, tm).numpy()
    )
    if m.ndim:
        np.testing.assert_array_equal(fx[fm].numpy(), tx[tm].numpy())
        src = rng.standard_normal(m.size + 1).astype(np.float32)
        np.testing.assert_array_equal(
            fx.masked_scatter(fm, flow.tensor(src)).numpy(),
            tx.masked_scatter(tm, torch.tensor(src)).numpy(),
        )
    # Non-bool input to nonzero: the truth of each element.
    ints = (a * 3).astype(np.int64)
    np.testing.assert_array_equal(
        flow.tensor(ints).nonzero().numpy(), torch.tensor(ints).nonzero().numpy()
    )


def test_masked_select_and_scatter_on_strided_inputs_and_dtypes():
    rng = np.random.default_rng(5)
    for dtype in ["int8", "int32", "int64", "float16", "bool", "float64"]:
        a = (rng.standard_normal((6, 9)) * 4).astype(dtype)
        m = rng.random((9, 6)) < 0.5
        fx, tx = flow.tensor(a).t(), torch.tensor(a).t()
        fm, tm = flow.tensor(m), torch.tensor(m)
        np.testing.assert_array_equal(
            flow.masked_select(fx, fm).numpy(), torch.masked_select(tx, tm).numpy()
        )
        src = (rng.standard_normal(60) * 4).astype(dtype)
        f = fx.clone()
        t = tx.clone()
        f.masked_scatter_(fm, flow.tensor(src))
        t.masked_scatter_(tm, torch.tensor(src))
        np.testing.assert_array_equal(f.numpy(), t.numpy())
        # x[mask] = scalar takes the elementwise path
        f[fm] = 3
        t[tm] = 3
        np.testing.assert_array_equal(f.numpy(), t.numpy())


def test_masked_ops_reject_bad_arguments():
    x = flow.randn(3, 4)
    with pytest.raises(RuntimeError, match="masked_select: expected BoolTensor for mask"):
        flow.masked_select(x, flow.ones(3, 4))
    with pytest.raises(RuntimeError, match="masked_select"):
        flow.masked_select(x, flow.ones(2, 4, dtype=flow.bool))
    with pytest.raises(RuntimeError, match="masked_scatter: Number of elements of source"):
        flow.masked_scatter(x, flow.ones(3, 4, dtype=flow.bool), flow.randn(11))
    with pytest.raises(RuntimeError, match="masked_scatter: expected self and source"):
        flow.masked_scatter(x, x > 0, flow.randn(12, dtype=flow.float64))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_one_pass_like_torch(dtype):
    # The one-pass kernel: values on every bin edge (PyTorch's (x - min) * bins / (max - min) in
    # the input's type decides them), min and max themselves, values outside, NaN and infinities,
    # 300k values (per-thread counts), one bin, and the range taken from the data.
    rng = np.random.default_rng(8)
    edges = np.linspace(-1.5, 2.5, 38)
    x = np.concatenate(
        [rng.uniform(-2, 3, 300000), edges, [np.nan, np.inf, -np.inf, -1.5, 2.5, 2.50001]]
    ).astype(dtype)
    for bins, lo, hi in ((37, -1.5, 2.5), (1, 0, 1), (100, 0, 0), (7, -0.3, 0.1)):
        f = flow.histc(flow.tensor(x[np.isfinite(x)] if (lo, hi) == (0, 0) else x), bins, lo, hi)
        t = torch.histc(torch.tensor(x[np.isfinite(x)] if (lo, hi) == (0, 0) else x), bins, lo, hi)
        assert f.dtype == flow.float32 if dtype == "float32" else f.dtype == flow.float64
        np.testing.assert_array_equal(f.numpy(), t.numpy())
    with pytest.raises(RuntimeError):
        flow.histc(flow.tensor(x), 4, 2, 1)


@pytest.mark.parametrize("shape,classes", [((0,), 3), ((7,), 4), ((3, 5), 6), ((40000,), 10)])
def test_one_hot_one_pass_like_torch(shape, classes):
    rng = np.random.default_rng(len(shape) * classes)
    x = rng.integers(0, classes, size=shape)
    for n in (classes, classes + 3, -1):
        if n == -1 and not x.size:
            for lib in (flow, torch):
                with pytest.raises(RuntimeError, match="infer total number of classes"):
                    lib.nn.functional.one_hot(lib.tensor(x), n)
            continue
        got = flow.nn.functional.one_hot(flow.tensor(x), n)
        want = torch.nn.functional.one_hot(torch.tensor(x), n)
        assert got.dtype == flow.int64 and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    # a transposed (non-contiguous) index
    if len(shape) == 2:
        np.testing.assert_array_equal(
            flow.nn.functional.one_hot(flow.tensor(x).t(), classes).numpy(),
            torch.nn.functional.one_hot(torch.tensor(x).t(), classes).numpy(),
        )


def test_one_hot_range_errors_name_the_value():
    for bad, match in (
        ([0, 7, 1], "smaller than num_classes, got 7 with num_classes=3"),
        ([0, -2], "non-negative, got -2"),
    ):
        with pytest.raises(RuntimeError, match=f"^one_hot: .*{match}"):
            flow.nn.functional.one_hot(flow.tensor(bad), 3).numpy()
        with pytest.raises(RuntimeError):
            torch.nn.functional.one_hot(torch.tensor(bad), 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        flow.nn.functional.one_hot(flow.tensor([-1, -3])).numpy()
    # the engine stays usable after the error
    assert flow.nn.functional.one_hot(flow.tensor([1]), 2).numpy().tolist() == [[0, 1]]


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("n", [0, 9, 50000])
def test_bincount_one_pass_like_torch(dtype, n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 100 if dtype != "int8" else 50, size=n).astype(dtype)
    for minlength in (0, 120):
        got = flow.bincount(flow.tensor(x), minlength=minlength)
        want = torch.bincount(torch.tensor(x), minlength=minlength)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for wdtype in ("float32", "float64", "int32"):
        w = (
            rng.standard_normal(n).astype(wdtype)
            if wdtype != "int32"
            else rng.integers(-5, 5, size=n).astype(wdtype)
        )
        got = flow.bincount(flow.tensor(x), flow.tensor(w))
        want = torch.bincount(torch.tensor(x), torch.tensor(w))
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        # float32 weights: summed in float64 here, in float32 by PyTorch
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-3)


def test_bincount_errors_like_torch():
    with pytest.raises(RuntimeError, match="^bincount: input must be non-negative, got -4"):
        flow.bincount(flow.tensor([1, -4, 2])).numpy()
    with pytest.raises(RuntimeError):
        torch.bincount(torch.tensor([1, -4, 2]))
    with pytest.raises(RuntimeError, match="same length"):
        flow.bincount(flow.tensor([1, 2]), flow.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="minlength"):
        flow.bincount(flow.tensor([1, 2]), minlength=-1)
    assert flow.bincount(flow.tensor([2])).numpy().tolist() == [0, 0, 1]


@pytest.mark.parametrize(
    "sa,sb,dim",
    [
        ((5, 3), (5, 3), 1),
        ((3, 7), (3, 7), 0),
        ((4, 3, 6), (4, 3, 6), 1),
        ((2, 3), (1, 3), -1),
        ((6, 1, 3), (1, 5, 3), -1),
        ((3, 40000), (3, 40000), 0),
        ((20000, 3), (20000, 3), 1),
        ((0, 3), (0, 3), 1),
    ],
)
def test_cross_one_pass_like_torch(sa, sb, dim):
    rng = np.random.default_rng(sum(sa))
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    for dtype in ("float32", "float64"):
        fa = flow.tensor(a.astype(dtype), requires_grad=True)
        fb = flow.tensor(b.astype(dtype), requires_grad=True)
        ta = torch.tensor(a.astype(dtype), requires_grad=True)
        tb = torch.tensor(b.astype(dtype), requires_grad=True)
        fy, ty = flow.linalg.cross(fa, fb, dim=dim), torch.linalg.cross(ta, tb, dim=dim)
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(fy.numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
        g = rng.standard_normal(ty.shape).astype(dtype)
        fy.backward(flow.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(fb.grad.numpy(), tb.grad.numpy(), rtol=tol, atol=tol)
    # integers, and a non-contiguous input
    ia, ib = rng.integers(-9, 9, size=sa), rng.integers(-9, 9, size=sb)
    np.testing.assert_array_equal(
        flow.linalg.cross(flow.tensor(ia), flow.tensor(ib), dim=dim).numpy(),
        torch.linalg.cross(torch.tensor(ia), torch.tensor(ib), dim=dim).numpy(),
    )
    if len(sa) == 2 and sa == sb and a.size:
        fa = flow.tensor(a).t().contiguous().t()  # a strided view of a
        assert not fa.is_contiguous()
        np.testing.assert_allclose(
            flow.cross(fa, flow.tensor(b), dim=dim).numpy(),
            torch.cross(torch.tensor(a), torch.tensor(b), dim=dim).numpy(),
        )


def test_cross_rank_and_size_errors_like_torch():
    for sa, sb in (((6, 1, 3), (5, 3)), ((2, 3), (2, 4)), ((2, 4), (2, 4))):
        with pytest.raises(RuntimeError, match="^cross: "):
            flow.linalg.cross(flow.ones(*sa), flow.ones(*sb))
        with pytest.raises(RuntimeError):
            torch.linalg.cross(torch.ones(*sa), torch.ones(*sb))


def test_cross_of_0d_tensors_with_a_dim_raises_like_torch():
    # 0 and -1 are valid dims of a 0-d tensor for most ops; cross needs a dimension (it read
    # past the empty shape and crashed).
    for dim in (0, -1):
        for lib in (torch, flow):
            a = lib.tensor(0)
            with pytest.raises(IndexError, match="no dimensions"):
                lib.cross(a, a, dim)
            with pytest.raises(IndexError, match="no dimensions"):
                lib.linalg.cross(a, a, dim=dim)


def test_cross_mixed_dtypes_raise_like_torch():
    a = np.arange(6).reshape(2, 3)
    b = np.linspace(0, 1, 6).reshape(2, 3).astype(np.float32)
    with pytest.raises(RuntimeError, match="^cross: expected both inputs to have the same dtype"):
        flow.cross(flow.tensor(a), flow.tensor(b), dim=1)
    with pytest.raises(RuntimeError):
        torch.cross(torch.tensor(a), torch.tensor(b), dim=1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "int64", "float16"])
@pytest.mark.parametrize("n", [0, 1, 37, 5000])
def test_dot_one_kernel_like_torch(dtype, n):
    rng = np.random.default_rng(n)
    if dtype.startswith("int"):
        a, b = rng.integers(-100, 100, n).astype(dtype), rng.integers(-100, 100, n).astype(dtype)
    else:
        a, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    got, want = (
        flow.dot(flow.tensor(a), flow.tensor(b)),
        torch.dot(torch.tensor(a), torch.tensor(b)),
    )
    assert got.shape == () and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    tol = {"float16": 1e-2 * max(1, n**0.5), "float32": 1e-4, "float64": 1e-10}.get(dtype, 0)
    np.testing.assert_allclose(
        got.numpy().astype(np.float64), want.numpy().astype(np.float64), rtol=tol, atol=tol
    )
    if dtype in ("float32", "float64"):
        fa, fb = flow.tensor(a, requires_grad=True), flow.tensor(b, requires_grad=True)
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        flow.dot(fa[::1], fb).mul(3.0).backward()
        torch.dot(ta, tb).mul(3.0).backward()
        np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(fb.grad.numpy(), tb.grad.numpy(), rtol=1e-6)


def test_dot_outer_trace_errors_like_torch():
    cases = [
        lambda lib: lib.dot(lib.ones(3), lib.ones(4)),
        lambda lib: lib.dot(lib.ones(3, 1), lib.ones(3)),
        lambda lib: lib.dot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
        lambda lib: lib.outer(lib.ones(3, 1), lib.ones(3)),
        lambda lib: lib.trace(lib.ones(3)),
    ]
    for case in cases:
        with pytest.raises(RuntimeError):
            case(torch)
        with pytest.raises(RuntimeError):
            case(flow)
    # a strided operand
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(
        flow.dot(flow.tensor(x)[:, 1], flow.tensor(x)[:, 2]).numpy(),
        torch.dot(torch.tensor(x)[:, 1], torch.tensor(x)[:, 2]).numpy(),
    )


def test_trace_kernel_strides_dtypes_and_double_backward():
    """trace reads the diagonal through the input's strides (transposed, stepped, offset,
    expanded), sums integers to int64 with PyTorch's wrapping, and its gradient is
    differentiable in the incoming gradient."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((7, 9))
    views = [
        lambda t: t,
        lambda t: t.t(),
        lambda t: t[1::2, 2::3],
        lambda t: t[:, 4:5].expand(7, 6),
    ]
    for view in views:
        got = flow.trace(view(flow.tensor(x)))
        want = torch.trace(view(torch.tensor(x)))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    big = np.full((9, 9), 2**31 - 1, dtype=np.int32)  # 9: the kernel's four-way loop and its tail
    for dt in ("int32", "uint8", "int16"):
        a = big.astype(dt)
        got, want = flow.trace(flow.tensor(a)), torch.trace(torch.tensor(a))
        assert got.dtype == flow.int64 and int(got) == int(want)
    half = rng.standard_normal((40, 40)).astype(np.float16)
    t_half = torch.tensor(half)
    # (a PyTorch older than the reference has no float16 trace on CPU: float32's, rounded)
    want = torch.trace(t_half) if TORCH_HAS_HALF_TRACE else torch.trace(t_half.float()).half()
    np.testing.assert_allclose(
        flow.trace(flow.tensor(half)).float().numpy(), want.float().numpy(), rtol=2e-3
    )
    # grad of grad: d/dg <trace'(g), v> = trace(v)
    for lib in (flow, torch):
        a = lib.tensor(x, requires_grad=True)
        w = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        (g2,) = lib.autograd.grad(lib.trace(a) * w, a, create_graph=True)
        (gw,) = lib.autograd.grad((g2 * lib.tensor(x)).sum(), w)
        np.testing.assert_allclose(float(gw), np.trace(x), rtol=1e-12)


def test_outer_kernel_promotion_strides_and_gradients():
    """outer: the one-pass kernel (small products) and the broadcasting mul (large ones) with
    promoted operands, strided and expanded vectors, bool, and gradients g @ b and g^T @ a
    against PyTorch."""
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(301), rng.standard_normal(517)
    for n, m in ((301, 517), (101, 97)):
        for lib_view in (lambda t: t, lambda t: t[::2], lambda t: t[3:4].expand(150)):
            got = flow.outer(lib_view(flow.tensor(a[:n])), lib_view(flow.tensor(b[:m])))
            want = torch.outer(lib_view(torch.tensor(a[:n])), lib_view(torch.tensor(b[:m])))
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-15)
    ai = rng.integers(-5, 5, 6).astype(np.int32)
    got = flow.outer(flow.tensor(ai), flow.tensor(b[:4]).float())
    want = torch.outer(torch.tensor(ai), torch.tensor(b[:4]).float())
    assert got.dtype == flow.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    m = rng.random(5) > 0.5
    got = flow.outer(flow.tensor(m), flow.tensor(m[::-1].copy()))
    assert got.dtype == flow.bool
    np.testing.assert_array_equal(got.numpy(), np.outer(m, m[::-1]))
    for n, m in ((301, 517), (31, 47)):
        g = rng.standard_normal((n, m))
        fa, fb = flow.tensor(a[:n], requires_grad=True), flow.tensor(b[:m], requires_grad=True)
        ta, tb = torch.tensor(a[:n], requires_grad=True), torch.tensor(b[:m], requires_grad=True)
        flow.outer(fa, fb).backward(flow.tensor(g))
        torch.outer(ta, tb).backward(torch.tensor(g))
        np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(fb.grad.numpy(), tb.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize(
    "shape,lo,hi", [((7,), 0, 3), ((40, 25), -128, 127), ((3000,), -5, 1000), ((5,), 0, 10**6)]
)
def test_unique_of_dense_and_sparse_integers_like_torch(dtype, shape, lo, hi):
    info = np.iinfo(dtype)
    lo, hi = max(lo, info.min), min(hi, info.max)
    x = np.random.default_rng(hi - lo).integers(lo, hi + 1, size=shape).astype(dtype)
    got = flow.unique(flow.tensor(x), return_inverse=True, return_counts=True)
    want = torch.unique(torch.tensor(x), return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    np.testing.assert_array_equal(flow.unique(flow.tensor(x)).numpy(), np.unique(x))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "bool", "float16"])
def test_permuted_copy_of_short_rows_every_run_length(dtype):
    # A permute that keeps the innermost dim copies one run per row (attention's heads): runs of
    # every length around the vector widths, into contiguous and strided destinations.
    rng = np.random.default_rng(4)
    for inner in (1, 3, 8, 9, 16, 31, 32, 33, 63, 64, 65, 127, 128, 129, 257):
        a = rng.standard_normal((2, 5, 3, inner)) * 4
        a = a > 0 if dtype == "bool" else a.astype(dtype)
        x = flow.tensor(a)
        got = x.permute(0, 2, 1, 3).contiguous()
        np.testing.assert_array_equal(got.numpy(), a.transpose(0, 2, 1, 3), err_msg=str(inner))
        # into a preallocated strided destination (a slice of a bigger tensor)
        big = flow.zeros(3, 5, inner + 2, dtype=x.dtype)
        big[:, :, 1 : inner + 1] = x[1].permute(1, 0, 2)
        want = np.zeros((3, 5, inner + 2), a.dtype)
        want[:, :, 1 : inner + 1] = a[1].transpose(1, 0, 2)
        np.testing.assert_array_equal(big.numpy(), want, err_msg=str(inner))
