"""The one-pass CPU kernels of grid_sample (4-D bilinear / nearest), pdist, ctc_loss and the
scatter-max of embedding_bag(mode="max") against PyTorch: values and gradients over dtypes,
modes and edge cases (infinite inputs, NaN grids, duplicate rows, impossible alignments, empty
bags), and that the composed path (bicubic) still agrees with the kernel where both apply."""

import numpy as np
import pytest
import torch

import oneflow as flow

F = flow.nn.functional
TF = torch.nn.functional


def _both(arr, requires_grad=True):
    return (
        flow.tensor(arr, requires_grad=requires_grad),
        torch.tensor(arr, requires_grad=requires_grad),
    )


def _close(got, want, tol):
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)


# ---- grid_sample -------------------------------------------------------------------------


@pytest.mark.parametrize("spatial", [2, 3])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-11), ("float32", 2e-5)])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_kernel_like_torch(spatial, dtype, tol, mode, padding_mode, align_corners):
    rng = np.random.default_rng(7)
    if spatial == 2:
        x = rng.standard_normal((3, 4, 6, 9)).astype(dtype)
        grid = rng.uniform(-1.4, 1.4, (3, 5, 7, 2)).astype(dtype)
        grid[0, 0, 0] = [1.0, -1.0]  # exactly on the corners
        grid[0, 0, 1] = [-1.0, 1.0]
    else:
        x = rng.standard_normal((2, 3, 4, 5, 6)).astype(dtype)
        grid = rng.uniform(-1.4, 1.4, (2, 3, 4, 5, 3)).astype(dtype)
        grid[0, 0, 0, 0] = [1.0, -1.0, 1.0]
    fx, tx = _both(x)
    fg, tg = _both(grid)
    got = F.grid_sample(fx, fg, mode, padding_mode, align_corners)
    want = TF.grid_sample(tx, tg, mode, padding_mode, align_corners)
    _close(got, want, tol)
    w = rng.standard_normal(tuple(want.shape)).astype(dtype)
    (got * flow.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    _close(fx.grad, tx.grad, tol)
    _close(fg.grad, tg.grad, tol * 10)


def test_grid_sample_kernel_edge_cases():
    rng = np.random.default_rng(1)
    # An infinite input value outside every tap must not reach the output (no 0 * inf).
    x = rng.standard_normal((1, 2, 4, 4))
    x[0, :, 0, 0] = np.inf
    grid = np.array([[[[0.9, 0.9], [2.5, 2.5], [-3.0, 0.0]]]])
    got = F.grid_sample(flow.tensor(x), flow.tensor(grid), align_corners=False)
    want = TF.grid_sample(torch.tensor(x), torch.tensor(grid), align_corners=False)
    _close(got, want, 1e-12)
    assert np.isfinite(got.numpy()).all()
    # A non-contiguous input and grid, and an empty batch.
    xt = rng.standard_normal((2, 5, 6, 3)).transpose(0, 3, 1, 2)
    gt = rng.uniform(-1, 1, (2, 2, 4, 3))[..., :2]
    got = F.grid_sample(flow.tensor(xt), flow.tensor(gt), align_corners=True)
    want = TF.grid_sample(torch.tensor(xt), torch.tensor(gt), align_corners=True)
    _close(got, want, 1e-12)
    empty = F.grid_sample(flow.zeros(0, 3, 4, 4), flow.zeros(0, 2, 2, 2), align_corners=False)
    assert tuple(empty.shape) == (0, 3, 2, 2)
    # Only the input needs a gradient; then only the grid.
    fx, tx = _both(rng.standard_normal((2, 3, 5, 5)))
    g = rng.uniform(-1, 1, (2, 3, 3, 2))
    F.grid_sample(fx, flow.tensor(g), align_corners=False).sum().backward()
    TF.grid_sample(tx, torch.tensor(g), align_corners=False).sum().backward()
    _close(fx.grad, tx.grad, 1e-12)
    fg, tg = _both(g)
    F.grid_sample(flow.tensor(tx.detach().numpy()), fg, align_corners=False).sum().backward()
    TF.grid_sample(tx.detach(), tg, align_corners=False).sum().backward()
    _close(fg.grad, tg.grad, 1e-11)


def test_grid_sample_kernel_matches_composed_path():
    # float16 still takes the composition; in float32 it agrees with the kernel.
    rng = np.random.default_rng(3)
    x = flow.tensor(rng.standard_normal((2, 3, 5, 6)).astype("float32"))
    g = flow.tensor(rng.uniform(-1.2, 1.2, (2, 4, 4, 2)).astype("float32"))
    kernel = F.grid_sample(x, g, align_corners=False)
    composed = F.grid_sample(x.half(), g.half(), align_corners=False).float()
    np.testing.assert_allclose(composed.numpy(), kernel.numpy(), atol=2e-2)


# ---- pdist -------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-4)])
def test_pdist_kernel_like_torch(p, dtype, tol):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((9, 6)).astype(dtype)
    x[4] = x[2]  # a pair at distance 0: zero gradient, not NaN
    x[5, 1] = x[6, 1]  # one equal component
    fx = _pdist_values_and_gradients_like_torch(x, p, tol, rng)
    assert np.isfinite(fx.grad.numpy()).all()


def _pdist_values_and_gradients_like_torch(x, p, tol, rng):
    fx, tx = _both(x)
    got, want = F.pdist(fx, p), TF.pdist(tx, p)
    _close(got, want, tol)
    w = rng.standard_normal(tuple(want.shape)).astype(x.dtype)
    (got * flow.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    _close(fx.grad, tx.grad, tol * 10)
    return fx


@pytest.mark.parametrize("p", [0, 1, 2, float("inf")])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-4)])
def test_pdist_kernel_long_rows_like_torch(p, dtype, tol):
    """Rows with more than 64 later rows take the blocks of vector sums (and the rest the
    per-pair loop): values and gradients against PyTorch, equal rows and components too."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((203, 37)).astype(dtype)
    x[150] = x[3]
    x[100:180, 5] = x[0, 5]
    _pdist_values_and_gradients_like_torch(x, p, tol, rng)


@pytest.mark.parametrize("n", [10, 150])
def test_pdist_non_finite_entries_like_torch(n):
    """A NaN in a row makes its distances NaN for every p (p = 0 counted it as a difference and
    p = inf's maximum dropped it), an infinity makes them infinite: the per-pair loop (10 rows)
    and the vector blocks (150 rows)."""
    x = np.random.default_rng(6).standard_normal((n, 5)).astype(np.float32)
    x[1, 1] = np.nan
    x[7, 2] = np.inf
    for p in (0, 0.5, 1, 2, 3, float("inf")):
        got = F.pdist(flow.tensor(x), p).numpy()
        want = TF.pdist(torch.tensor(x), p).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, equal_nan=True, err_msg=str(p))


def test_grid_sample_of_an_empty_plane_raises_like_torch():
    for shape, grid in (((1, 1, 0, 4), (1, 2, 2, 2)), ((1, 1, 2, 0, 4), (1, 2, 2, 2, 3))):
        for mode in ("bilinear", "nearest"):
            with pytest.raises(RuntimeError, match="non-empty spatial dimensions"):
                F.grid_sample(flow.zeros(*shape), flow.zeros(*grid), mode, align_corners=False)
            with pytest.raises(RuntimeError, match="non-empty spatial dimensions"):
                TF.grid_sample(torch.zeros(*shape), torch.zeros(*grid), mode, align_corners=False)


def test_pdist_kernel_edge_shapes():
    for shape in [(0, 3), (1, 3), (2, 0), (5, 1)]:
        x = np.random.default_rng(0).standard_normal(shape)
        fx, tx = _both(x)
        got, want = F.pdist(fx), TF.pdist(tx)
        assert tuple(got.shape) == tuple(want.shape)
        _close(got, want, 1e-12)
        got.sum().backward()
        if shape[0] == 0:  # PyTorch 2.13's pdist backward crashes on zero rows
            assert tuple(fx.grad.shape) == shape
            continue
        want.sum().backward()
        _close(fx.grad, tx.grad, 1e-12)
    # a larger case that runs the parallel path, and the namespace form
    x = np.random.default_rng(2).standard_normal((300, 40))
    _close(flow.pdist(flow.tensor(x)), torch.pdist(torch.tensor(x)), 1e-10)
    with pytest.raises(RuntimeError, match="pdist only supports 2D"):
        F.pdist(flow.ones(3))
    with pytest.raises(RuntimeError, match="non-negative"):
        F.pdist(flow.ones(3, 2), -1)


# ---- ctc_loss ----------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("flat", [False, True])
def test_ctc_kernel_like_torch(reduction, zero_infinity, flat):
    rng = np.random.default_rng(5)
    T, N, C = 15, 4, 6
    logits = rng.standard_normal((T, N, C))
    # Raw log-probabilities (not renormalised): PyTorch's gradient convention shows.
    lp = logits - 1.5
    targets = rng.integers(1, C, (N, 5))
    targets[1, 1] = targets[1, 0]
    in_len, tgt_len = [15, 11, 3, 9], [5, 2, 3, 0]  # sequence 2 cannot align: infinite loss
    if flat:
        tg = np.concatenate([targets[b, : tgt_len[b]] for b in range(N)])
    else:
        tg = targets
    fl, tl = _both(lp)
    got = F.ctc_loss(
        fl, flow.tensor(tg), flow.tensor(in_len), flow.tensor(tgt_len), 0, reduction, zero_infinity
    )
    want = TF.ctc_loss(
        tl, torch.tensor(tg), torch.tensor(in_len), torch.tensor(tgt_len), 0, reduction,
        zero_infinity,
    )  # fmt: skip
    _close(got, want, 1e-10)
    got.sum().backward()
    want.sum().backward()
    _close(fl.grad, tl.grad, 1e-10)


def test_ctc_kernel_edge_cases():
    rng = np.random.default_rng(9)
    T, N, C = 8, 3, 5
    lp = rng.standard_normal((T, N, C)).astype("float32")
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    targets = rng.integers(0, C - 1, (N, 3))  # blank is C - 1 here
    in_len, tgt_len = [8, 0, 5], [3, 0, 2]  # an empty input with an empty target: loss 0
    fl, tl = _both(lp)
    args = (in_len, tgt_len)
    got = F.ctc_loss(
        fl, flow.tensor(targets), *map(flow.tensor, args), blank=C - 1, reduction="sum"
    )
    want = TF.ctc_loss(
        tl, torch.tensor(targets), *map(torch.tensor, args), blank=C - 1, reduction="sum"
    )
    _close(got, want, 1e-4)
    got.backward()
    want.backward()
    _close(fl.grad, tl.grad, 1e-5)
    # unbatched input with 0-d lengths, through the module
    one = flow.tensor(lp[:, 0])
    loss = flow.nn.CTCLoss(blank=C - 1)(
        one, flow.tensor(targets[0]), flow.tensor(8), flow.tensor(3)
    )
    ref = torch.nn.CTCLoss(blank=C - 1)(
        torch.tensor(lp[:, 0]), torch.tensor(targets[0]), torch.tensor(8), torch.tensor(3)
    )
    _close(loss, ref, 1e-5)
    with pytest.raises(RuntimeError, match="ctc_loss: target 7 of sequence 0"):
        F.ctc_loss(
            flow.tensor(lp),
            flow.tensor([[7, 1, 1]] * N),
            flow.tensor([8] * N),
            flow.tensor([3] * N),
        )
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(fl, flow.tensor(targets), *map(flow.tensor, args), blank=C)


# ---- embedding_bag(mode="max") -------------------------------------------------------------


def test_embedding_bag_max_like_torch():
    rng = np.random.default_rng(11)
    weight = rng.standard_normal((20, 7))
    idx = rng.integers(0, 20, 30)
    idx[3] = idx[2]  # the same row twice in one bag
    offsets = np.array([0, 4, 4, 13, 22])  # bag 1 is empty
    fw, tw = _both(weight)
    got = F.embedding_bag(flow.tensor(idx), fw, flow.tensor(offsets), mode="max")
    want = TF.embedding_bag(torch.tensor(idx), tw, torch.tensor(offsets), mode="max")
    _close(got, want, 1e-12)
    assert (got.numpy()[1] == 0).all()
    g = rng.standard_normal(tuple(want.shape))
    (got * flow.tensor(g)).sum().backward()
    (want * torch.tensor(g)).sum().backward()
    _close(fw.grad, tw.grad, 1e-12)
    # 2-D input, padding_idx left out of every maximum
    idx2 = rng.integers(0, 20, (4, 5))
    idx2[0] = 3
    got = F.embedding_bag(flow.tensor(idx2), flow.tensor(weight), mode="max", padding_idx=3)
    want = TF.embedding_bag(torch.tensor(idx2), torch.tensor(weight), mode="max", padding_idx=3)
    _close(got, want, 1e-12)


@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embedding_bag_max_reads_the_weight_in_place_like_torch(include_last_offset):
    """The max kernel reads the (non-contiguous) weight's rows itself and its gradient lands in
    the weight's shape: bags over the threads, rows in several bags, empty bags; float32 and
    float64 against PyTorch. (With include_last_offset, a last offset below the number of
    indices is outside PyTorch's documented use: its max and mean modes then disagree with its
    own sum mode about where the last bag ends.)"""
    rng = np.random.default_rng(12)
    for dtype, tol in ((np.float32, 1e-6), (np.float64, 1e-12)):
        base = rng.standard_normal((64, 3000)).astype(dtype)  # weight = base.T: 3000 x 64
        idx = rng.integers(0, 3000, 4000)
        idx[100:110] = 7  # one row many times, in two bags
        cuts = np.sort(rng.integers(0, 3900, 300))
        offsets = np.concatenate([[0, 0], cuts, [4000] if include_last_offset else [3950]])
        grads = []
        for lib in (torch, flow):
            b = lib.tensor(base, requires_grad=True)
            out = lib.nn.functional.embedding_bag(
                lib.tensor(idx),
                b.t(),
                lib.tensor(offsets),
                mode="max",
                include_last_offset=include_last_offset,
            )
            g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(dtype)
            (out * lib.tensor(g)).sum().backward()
            grads.append((out.detach().numpy(), b.grad.numpy()))
        np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=tol, atol=tol)
        np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=tol, atol=tol)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_kernel_non_finite_positions_like_torch(padding_mode, mode):
    inf, nan = float("inf"), float("nan")
    grid = np.array([[[[1.0, -1e3], [inf, 0.0], [nan, 0.5], [-inf, inf], [0.3, -inf]]]])
    x = np.random.default_rng(2).standard_normal((1, 2, 3, 3))
    got = F.grid_sample(flow.tensor(x), flow.tensor(grid), mode, padding_mode, False)
    want = TF.grid_sample(torch.tensor(x), torch.tensor(grid), mode, padding_mode, False)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(
    "mode,spatial", [("bilinear", 2), ("bilinear", 3), ("nearest", 2), ("bicubic", 2)]
)
def test_grid_sample_gradients_at_non_finite_and_huge_positions_like_torch(
    mode, spatial, align_corners
):
    """Zeros padding: a NaN or infinite position reads nothing (the input's gradient gets 0 from
    it; bilinear 2-D and bicubic give NaN values and grid gradients as PyTorch's vectorised
    kernels); a coordinate of 1e38 is far outside, not an overflow to NaN."""
    inf, nan = float("inf"), float("nan")
    rows = [[1e38, 0.2], [-1e38, 0.1], [nan, 0.5], [0.2, inf], [-inf, 0.3], [0.3, -0.4]]
    grid = np.array([[r + [0.1] * (spatial - 2) for r in rows]], dtype=np.float32)
    grid = grid.reshape((1,) * spatial + (len(rows), spatial))
    x = np.random.default_rng(3).standard_normal((1, 2) + (3, 4, 5)[3 - spatial :])
    results = []
    for lib in (torch, flow):
        xi = lib.tensor(x.astype(np.float32), requires_grad=True)
        gi = lib.tensor(grid, requires_grad=True)
        out = lib.nn.functional.grid_sample(
            xi, gi, mode=mode, padding_mode="zeros", align_corners=align_corners
        )
        out.sum().backward()
        results.append([t.detach().numpy() for t in (out, xi.grad, gi.grad)])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5, equal_nan=True)
    assert np.isfinite(results[1][1]).all()


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d_non_finite_positions_with_padding_like_torch(mode):
    """Volumes: PyTorch's scalar kernel clamps NaN (and a reflected infinity) to the last index,
    where its 2-D kernel takes the first."""
    x = np.arange(1.0, 25.0).reshape(1, 1, 2, 3, 4)
    rows = []
    for v in (float("nan"), float("inf"), -float("inf")):
        for axis in range(3):
            row = [0.1, 0.2, -0.3]
            row[axis] = v
            rows.append(row)
    grid = np.array(rows).reshape(1, 1, 1, len(rows), 3)
    for padding in ("border", "reflection"):
        for align in (False, True):
            got = F.grid_sample(flow.tensor(x), flow.tensor(grid), mode, padding, align)
            want = TF.grid_sample(torch.tensor(x), torch.tensor(grid), mode, padding, align)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("n,c", [(2, 0), (0, 2)])
def test_grid_sample_without_channels_or_batch_like_torch(mode, n, c):
    """NaN positions put NaN into the grid's gradient only through the channels' values; empty
    batches and channels give empty outputs (bicubic raised a reshape error)."""
    results = []
    for lib in (torch, flow):
        x = lib.zeros(n, c, 4, 5, requires_grad=True)
        g = lib.full((n, 3, 3, 2), float("nan"), requires_grad=True)
        out = lib.nn.functional.grid_sample(x, g, mode=mode, align_corners=False)
        out.sum().backward()
        results.append((tuple(out.shape), g.grad.numpy(), x.grad.numpy()))
    assert results[1][0] == results[0][0]
    for ours, theirs in zip(results[1][1:], results[0][1:]):
        np.testing.assert_array_equal(ours, theirs)


def test_grid_sample_bicubic_non_finite_positions_with_padding():
    """Border and reflection padding of a NaN or infinite position: NaN values and grid
    gradients as PyTorch (its input gradient is NaN there too; here the point adds nothing)."""
    inf, nan = float("inf"), float("nan")
    grid = np.array([[[[nan, 0.5], [0.2, inf], [-inf, 0.3], [0.3, -0.4], [1e38, 0.0]]]])
    x = np.random.default_rng(4).standard_normal((1, 2, 4, 5))
    for padding in ("border", "reflection"):
        results = []
        for lib in (torch, flow):
            xi = lib.tensor(x, requires_grad=True)
            gi = lib.tensor(
                grid[..., :4, :] if padding == "reflection" else grid, requires_grad=True
            )
            out = lib.nn.functional.grid_sample(xi, gi, mode="bicubic", padding_mode=padding)
            out.sum().backward()
            results.append([t.detach().numpy() for t in (out, gi.grad)] + [xi.grad.numpy()])
        for ours, theirs in zip(results[1][:2], results[0][:2]):
            np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9, equal_nan=True)
        assert np.isfinite(results[1][2]).all()


def test_embedding_bag_max_ties_go_to_the_first_row_like_torch():
    """Two different rows with equal values in one bag: the first takes the gradient (PyTorch's
    strict comparison), float32 and float64."""
    for dtype in (np.float32, np.float64):
        weight = np.random.default_rng(5).standard_normal((6, 3)).astype(dtype)
        weight[4] = weight[2]
        idx = np.array([2, 4, 1, 4, 2, 5])
        offsets = np.array([0, 2, 4])
        grads = []
        for lib in (torch, flow):
            w = lib.tensor(weight, requires_grad=True)
            out = lib.nn.functional.embedding_bag(
                lib.tensor(idx), w, lib.tensor(offsets), mode="max"
            )
            (out * lib.tensor(np.arange(9.0).reshape(3, 3).astype(dtype))).sum().backward()
            grads.append((out.detach().numpy(), w.grad.numpy()))
        np.testing.assert_array_equal(grads[1][0], grads[0][0])
        np.testing.assert_array_equal(grads[1][1], grads[0][1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_grid_sample_16_bit_through_the_float_kernel_like_torch(dtype):
    """16-bit inputs run the float32 kernel and round once: dtypes as PyTorch's, values at
    least as close to the float64 result as PyTorch's 16-bit kernel (whose grid gradient
    accumulates in 16 bits)."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    g = rng.uniform(-1.1, 1.1, (2, 4, 4, 2)).astype(np.float32)
    results = []
    for lib, dt_name in ((torch, dtype), (flow, dtype), (torch, "float64")):
        dt = getattr(lib, dtype)
        # the same 16-bit values for every run
        xi = lib.tensor(x).to(dt).to(getattr(lib, dt_name)).requires_grad_()
        gi = lib.tensor(g).to(dt).to(getattr(lib, dt_name)).requires_grad_()
        out = lib.nn.functional.grid_sample(xi, gi, align_corners=False)
        out.double().sum().backward()
        assert out.dtype == getattr(lib, dt_name) and xi.grad.dtype == out.dtype
        results.append([t.double().detach().numpy() for t in (out, xi.grad, gi.grad)])
    theirs, ours, exact = results
    ulp = 2**-7 if dtype == "bfloat16" else 2**-10
    for t, o, e in zip(theirs, ours, exact):
        assert np.all(np.abs(o - e) <= np.maximum(np.abs(t - e), ulp * np.abs(e)) + 1e-6)


def test_grid_sample_composed_path_takes_non_finite_positions():
    """The path composed of ops (global tensors, CUDA) gathered at a wild index for a NaN position
    and raised; now such a point reads nothing (0; the CPU kernel's 2-D bilinear gives NaN) and
    the other points equal the kernel's."""
    placement, broadcast = flow.placement("cpu", [0]), flow.sbp.broadcast
    x = np.arange(1.0, 31.0).reshape(1, 1, 5, 6)
    grid = np.array([[[[float("nan"), 0.1], [0.2, 0.3], [float("inf"), -0.2]]]])
    for mode in ("bilinear", "nearest"):
        local = F.grid_sample(flow.tensor(x), flow.tensor(grid), mode, "zeros", False).numpy()
        composed = F.grid_sample(
            flow.tensor(x).to_global(placement, broadcast),
            flow.tensor(grid).to_global(placement, broadcast),
            mode,
            "zeros",
            False,
        )
        composed = composed.to_local().numpy()
        np.testing.assert_allclose(composed[..., 1], local[..., 1], rtol=1e-12)
        np.testing.assert_array_equal(composed[..., [0, 2]], 0.0)
