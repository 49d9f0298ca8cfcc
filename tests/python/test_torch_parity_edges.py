"""Edge cases where oneflow must behave as PyTorch: values, dtypes, gradients and the type of
the exception raised, checked against torch on the same inputs."""

import numpy as np
import pytest
import torch

import oneflow as flow


def F(lib):
    return lib.nn.functional


def _outcome(fn, lib):
    """fn(lib)'s result as numpy (with its dtype name), or the type of what it raised."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001
        return type(e)
    if isinstance(out, (list, tuple)):
        return [(o.detach().numpy(), str(o.dtype).split(".")[-1]) for o in out]
    return out.detach().numpy(), str(out.dtype).split(".")[-1]


def _same(fn):
    """fn(torch) and fn(flow) give equal values of the same dtype, or raise the same type
    (oneflow's may derive from torch's: `except` clauses written for torch catch it)."""
    expected, got = _outcome(fn, torch), _outcome(fn, flow)
    if isinstance(expected, type) or isinstance(got, type):
        assert isinstance(expected, type) and isinstance(got, type), (
            f"torch: {expected}, oneflow: {got}"
        )
        assert issubclass(got, expected), f"torch: {expected}, oneflow: {got}"
        return
    pairs = expected if isinstance(expected, list) else [expected]
    gots = got if isinstance(got, list) else [got]
    assert len(pairs) == len(gots)
    for (e, edt), (g, gdt) in zip(pairs, gots):
        assert edt == gdt, f"dtype: torch {edt}, oneflow {gdt}"
        assert e.shape == g.shape, f"shape: torch {e.shape}, oneflow {g.shape}"
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, equal_nan=True)


def _grads(fn, arrays):
    """fn(lib, *leaves)'s value and the gradients of its sum, in torch and in oneflow."""
    results = []
    for lib in (torch, flow):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *leaves)
        out.sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in leaves])
    for e, g in zip(*results):
        assert e.shape == g.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


# ---- ctc_loss -----------------------------------------------------------------------------


def _log_probs(lib, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return lib.tensor(x).log_softmax(-1)


def test_ctc_loss_target_lengths_beyond_targets_raise():
    _same(
        lambda lib: F(lib).ctc_loss(
            _log_probs(lib, (12, 1, 5)),
            lib.tensor([[1, 2, 3, 4]]),
            lib.tensor([12]),
            lib.tensor([6]),
        )
    )
    # concatenated targets shorter than the sum of the target lengths
    _same(
        lambda lib: F(lib).ctc_loss(
            _log_probs(lib, (12, 2, 5)),
            lib.tensor([1, 2, 3, 4]),
            lib.tensor([12, 12]),
            lib.tensor([2, 3]),
        )
    )
    _same(
        lambda lib: F(lib).ctc_loss(
            _log_probs(lib, (12, 2, 5)),
            lib.tensor([1, 2, 3, 4]),
            lib.tensor([13, 12]),
            lib.tensor([2, 2]),
        )
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_unbatched_with_0d_lengths(reduction):
    _same(
        lambda lib: F(lib).ctc_loss(
            _log_probs(lib, (12, 5)),
            lib.tensor([1, 2, 2, 4]),
            lib.tensor(12),
            lib.tensor(4),
            reduction=reduction,
        )
    )


# ---- embedding ----------------------------------------------------------------------------


@pytest.mark.parametrize("padding_idx", [None, 0])
def test_embedding_scale_grad_by_freq(padding_idx):
    idx = np.array([[0, 1, 2], [1, 1, 3]])
    g = np.random.default_rng(1).standard_normal((2, 3, 2)).astype(np.float32)
    _grads(
        lambda lib, w: (
            F(lib).embedding(lib.tensor(idx), w, padding_idx=padding_idx, scale_grad_by_freq=True)
            * lib.tensor(g)
        ),
        [np.ones((4, 2), np.float32)],
    )


def test_embedding_module_scale_grad_by_freq():
    grads = []
    for lib in (torch, flow):
        emb = lib.nn.Embedding(3, 2, scale_grad_by_freq=True)
        emb(lib.tensor([0, 1, 1, 1])).sum().backward()
        grads.append(emb.weight.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


# ---- binary_cross_entropy -----------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_at_0_and_1(reduction, weighted):
    x = np.array([0.0, 1.0, 0.3, 0.7, 0.0, 1.0], np.float32)
    y = np.array([0.0, 1.0, 0.2, 1.0, 1.0, 0.0], np.float32)
    w = np.arange(1, 7, dtype=np.float32)
    _grads(
        lambda lib, a: F(lib).binary_cross_entropy(
            a, lib.tensor(y), lib.tensor(w) if weighted else None, reduction=reduction
        ),
        [x],
    )


def test_binary_cross_entropy_target_gradient():
    x = np.array([0.1, 0.3, 0.7, 0.9], np.float32)
    y = np.array([0.0, 1.0, 0.2, 0.6], np.float32)
    _grads(lambda lib, a, b: F(lib).binary_cross_entropy(a, b, reduction="none"), [x, y])


# ---- circular pad -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,pads",
    [
        ((1, 1, 7), (-1, 2)),
        ((1, 1, 7), (2, -1)),
        ((1, 2, 5), (-2, 2)),
        ((1, 2, 5), (1, -3)),
        ((2, 1, 4, 5), (-1, 2, 1, -2)),
        ((2, 1, 4, 5), (2, -1, -1, 1)),
        ((1, 2, 3, 4, 5), (1, -2, -1, 2, 1, 0)),
        ((1, 2, 3, 4, 5), (-2, 1, 2, -1, 0, -1)),
    ],
)
def test_circular_pad_with_negative_pads(shape, pads):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    out_shape = list(shape)
    for k in range(len(pads) // 2):
        out_shape[-1 - k] += pads[2 * k] + pads[2 * k + 1]
    g = np.random.default_rng(3).standard_normal(out_shape).astype(np.float32)
    _grads(lambda lib, a: F(lib).pad(a, pads, mode="circular") * lib.tensor(g), [x])


# ---- index_fill / index_add / index_copy / index_select -----------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.index_fill(lib.zeros(3), 0, lib.tensor([-1]), 5.0),
        lambda lib: lib.index_fill(lib.zeros(2, 3), 1, lib.tensor([-1, 0]), 5.0),
        lambda lib: lib.index_fill(lib.zeros(3), 0, lib.tensor([3]), 5.0),
        lambda lib: lib.index_fill(lib.zeros(3), 0, lib.tensor([-4]), 5.0),
        lambda lib: lib.index_fill(lib.zeros(2, 3), 1, lib.tensor([3]), 5.0),
    ],
)
def test_index_fill_wraps_negative_indices(fn):
    _same(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.index_fill(lib.zeros(()), 0, lib.tensor([0]), 5.0),
        lambda lib: lib.index_fill(lib.zeros(()), 0, lib.tensor(-1), 5.0),
        lambda lib: lib.index_fill(lib.zeros(()), 0, lib.tensor([1]), 5.0),
        lambda lib: lib.index_add(lib.zeros(()), 0, lib.tensor([0]), lib.tensor(2.0)),
        lambda lib: lib.index_add(lib.zeros(()), 0, lib.tensor([0]), lib.tensor([2.0])),
        lambda lib: lib.index_copy(lib.zeros(()), 0, lib.tensor([0]), lib.tensor(2.0)),
        lambda lib: lib.index_copy(lib.zeros(()), 0, lib.tensor([-1]), lib.tensor(2.0)),
        lambda lib: lib.index_select(lib.tensor(3.0), 0, lib.tensor([0])),
        lambda lib: lib.index_select(lib.tensor(3.0), 0, lib.tensor([1])),
    ],
)
def test_index_ops_on_0d_tensors(fn):
    _same(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.index_select(lib.arange(4), 0, lib.tensor([-1])),
        lambda lib: lib.index_select(lib.zeros(0, 3), 0, lib.tensor([0])),
        lambda lib: lib.index_select(lib.zeros(0, 3), 0, lib.tensor([], dtype=lib.int64)),
        lambda lib: lib.index_copy(lib.zeros(3, 2), 0, lib.tensor([0]), lib.ones(3, 2)),
        lambda lib: lib.index_copy(lib.zeros(3, 2), 0, lib.tensor([0]), lib.ones(1, 3)),
        lambda lib: lib.index_copy(lib.zeros(3, 2), 0, lib.tensor([0]), lib.ones(1, 2, 1)),
        lambda lib: lib.index_add(lib.zeros(3, 2), 0, lib.tensor([0]), lib.ones(3, 2)),
        lambda lib: lib.index_add(lib.zeros(3, 2), 0, lib.tensor([0]), lib.ones(1, 3)),
        lambda lib: lib.index_add(lib.zeros(3, 2), 1, lib.tensor([0]), lib.ones(3)),
        lambda lib: lib.index_add(lib.zeros(2, 3), 1, lib.tensor([-1]), lib.ones(2, 1)),
        lambda lib: lib.index_copy(lib.zeros(2, 3), 1, lib.tensor([3]), lib.ones(2, 1)),
    ],
)
def test_index_ops_check_indices_and_source(fn):
    _same(fn)


# ---- out-of-range dims --------------------------------------------------------------------


_DIM_OPS = {
    "index_select": lambda lib, d: lib.index_select(lib.zeros(2, 3), d, lib.tensor([0])),
    "index_add": lambda lib, d: lib.index_add(lib.zeros(2, 3), d, lib.tensor([0]), lib.ones(2, 3)),
    "index_fill": lambda lib, d: lib.index_fill(lib.zeros(2, 3), d, lib.tensor([0]), 1.0),
    "index_copy": lambda lib, d: lib.index_copy(
        lib.zeros(2, 3), d, lib.tensor([0]), lib.ones(2, 3)
    ),
    "take_along_dim": lambda lib, d: lib.take_along_dim(
        lib.zeros(2, 3), lib.zeros(2, 3, dtype=lib.int64), d
    ),
    "movedim_source": lambda lib, d: lib.movedim(lib.zeros(2, 3), d, 0),
    "movedim_destination": lambda lib, d: lib.movedim(lib.zeros(2, 3), 0, d),
    "repeat_interleave": lambda lib, d: lib.repeat_interleave(lib.zeros(2, 3), 2, d),
    "unflatten": lambda lib, d: lib.zeros(2, 3).unflatten(d, (1, 3)),
    "rot90": lambda lib, d: lib.rot90(lib.zeros(2, 3), 1, (0, d)),
}


@pytest.mark.parametrize("dim", [2, -3, 5])
@pytest.mark.parametrize("op", sorted(_DIM_OPS))
def test_out_of_range_dim_raises_index_error(op, dim):
    _same(lambda lib: _DIM_OPS[op](lib, dim))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.movedim(lib.tensor(1.0), 0, 0),
        lambda lib: lib.movedim(lib.tensor(1.0), -1, 0),
        lambda lib: lib.repeat_interleave(lib.tensor(2.0), 2, 0),
        lambda lib: lib.repeat_interleave(lib.tensor(2.0), 2),
        lambda lib: F(lib).pixel_shuffle(lib.ones(1, 4, 2, 2), 0),
        lambda lib: F(lib).pixel_unshuffle(lib.ones(1, 4, 2, 2), 0),
        lambda lib: F(lib).pixel_shuffle(lib.ones(4, 2), 2),
        lambda lib: lib.chunk(lib.tensor(1.0), 1),
        lambda lib: lib.split(lib.tensor(1.0), 1),
        lambda lib: lib.tensor_split(lib.tensor(1.0), 1),
        lambda lib: lib.rot90(lib.ones(2, 2, 2), 1, (0, 1, 2)),
        lambda lib: lib.rot90(lib.ones(2), 1, (0, 1)),
        lambda lib: lib.rot90(lib.ones(2, 2), 1, (0, -2)),
        lambda lib: F(lib).softmax(lib.ones(2, 2), dim=1.0),
        lambda lib: F(lib).softmin(lib.ones(2, 2), dim=1.0),
        lambda lib: F(lib).batch_norm(lib.ones(3), lib.zeros(3), lib.ones(3)),
        lambda lib: F(lib).batch_norm(lib.ones(3), None, None, training=True),
        lambda lib: F(lib).cross_entropy(lib.ones(3, 4), lib.ones(2, 4) / 4),
        lambda lib: F(lib).cross_entropy(lib.ones(3, 4), lib.ones(3, 5) / 5),
        lambda lib: F(lib).cross_entropy(lib.ones(3, 4), lib.tensor([0, 1])),
    ],
)
def test_edge_inputs_match_torch_or_raise_its_exception(fn):
    _same(fn)


@pytest.mark.parametrize("n", [0, 1, 5])
@pytest.mark.parametrize("chunks", [1, 2, 3])
def test_chunk_of_empty_and_short_dims(n, chunks):
    _same(lambda lib: lib.chunk(lib.zeros(n, 4), chunks))


# ---- dropout ------------------------------------------------------------------------------


_DROPOUTS = {
    "dropout": (2, 3),
    "dropout1d": (2, 3, 4),
    "dropout2d": (1, 2, 2, 2),
    "dropout3d": (1, 2, 1, 2, 2),
    "alpha_dropout": (2, 3),
}


@pytest.mark.parametrize("op", sorted(_DROPOUTS))
@pytest.mark.parametrize(
    "dtype,p", [("float32", 0.0), ("float32", 1.0), ("int64", 0.0), ("int64", 0.5), ("int64", 1.0)]
)
def test_dropout_at_p_0_and_1_and_integer_inputs(op, dtype, p):
    _same(
        lambda lib: getattr(F(lib), op)(
            lib.ones(*_DROPOUTS[op], dtype=getattr(lib, dtype)), p=p, training=True
        )
    )


def test_alpha_dropout_keeps_mean_and_variance():
    flow.manual_seed(1)
    y = F(flow).alpha_dropout(flow.randn(100000), 0.3, training=True)
    assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1) < 0.02


# ---- modules ------------------------------------------------------------------------------


def test_instance_norm_momentum_none_keeps_running_stats():
    x = np.random.default_rng(4).standard_normal((3, 2, 5)).astype(np.float32) * 3 + 1
    stats = []
    for lib in (torch, flow):
        m = lib.nn.InstanceNorm1d(2, track_running_stats=True, momentum=None)
        out = m(lib.tensor(x))
        stats.append((out.detach().numpy(), m.running_mean.numpy(), m.running_var.numpy()))
    for e, g in zip(*stats):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("kernel,dilation", [(3, 1), (4, 1), (2, 3)])
def test_conv_same_padding_with_padding_mode(dims, mode, kernel, dilation):
    x = np.random.default_rng(5).standard_normal((1, 2) + (7,) * dims).astype(np.float32)
    convs = [
        getattr(lib.nn, f"Conv{dims}d")(
            2, 2, kernel, padding="same", padding_mode=mode, dilation=dilation
        )
        for lib in (torch, flow)
    ]
    with flow.no_grad():
        convs[1].weight.copy_(flow.tensor(convs[0].weight.detach().numpy()))
        convs[1].bias.copy_(flow.tensor(convs[0].bias.detach().numpy()))
    outs = [c(lib.tensor(x)).detach().numpy() for c, lib in zip(convs, (torch, flow))]
    assert outs[1].shape == outs[0].shape
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-5)


# ---- indexing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.arange(3.0)[lib.tensor([True, False])],
        lambda lib: lib.arange(6.0).reshape(2, 3)[:, lib.tensor([True, False])],
        lambda lib: lib.arange(3.0)[lib.tensor([1, 0, 1], dtype=lib.uint8)],
        lambda lib: lib.arange(3.0)[np.array([1, 0, 1], dtype=np.uint8)],
        lambda lib: lib.arange(6.0).reshape(2, 3)[[]],
        lambda lib: lib.arange(6.0).reshape(2, 3)[[[]]],
        lambda lib: lib.arange(6.0).reshape(2, 3)[:, []],
        lambda lib: lib.arange(9.0).reshape(3, 3)[[[0, 1], [1, 2]]],
        lambda lib: lib.arange(3.0)[1.0],
        lambda lib: lib.arange(3.0).index_put_((lib.tensor([True, False, True]),), lib.tensor(5.0)),
        lambda lib: lib.arange(3.0).index_put_(
            (lib.tensor([True, False, True]),), lib.tensor([5.0, 6.0]), accumulate=True
        ),
    ],
)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_indexing_masks_and_empty_indices(fn):
    _same(fn)


def test_setitem_with_a_short_mask_raises():
    def assign(lib):
        x = lib.arange(3.0)
        x[lib.tensor([True, False])] = 1.0
        return x

    _same(assign)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.index_add(lib.zeros(3), 0, lib.tensor([-1]), lib.ones(1)),
        lambda lib: lib.index_add(lib.zeros(2, 3), 0, lib.tensor([-1]), lib.ones(1, 3)),
        lambda lib: lib.index_add(lib.zeros(2, 3), 0, lib.tensor([2]), lib.ones(1, 3)),
        lambda lib: lib.index_add(lib.zeros(2, 3), 1, lib.tensor([3]), lib.ones(2, 1)),
    ],
)
def test_index_add_out_of_range_index(fn):
    _same(fn)


def test_boolean_mask_of_a_strided_view_like_torch():
    """A column of a matrix (a strided 1-D view) masked by its own values: detection
    post-processing (`scores[scores > t]`), forward and gradient."""
    x = np.random.default_rng(3).random((10, 6))
    results = []
    for lib in (torch, flow):
        pred = lib.tensor(x, requires_grad=True)
        conf = pred[:, 4]
        picked = conf[conf > 0.5]
        every_other = pred[::2, 1][pred[::2, 1] > 0.5]
        selected = lib.masked_select(conf, conf > 0.5)
        (picked.sum() * 2 + every_other.sum() + selected.sum()).backward()
        results.append([picked, every_other, selected, pred.grad])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())


def test_uint8_class_targets_like_torch():
    logits = np.random.default_rng(4).standard_normal((4, 3)).astype(np.float32)
    target = np.array([0, 2, 1, 2], dtype=np.uint8)
    for name in ("cross_entropy", "nll_loss"):
        want = getattr(torch.nn.functional, name)(torch.tensor(logits), torch.tensor(target))
        got = getattr(flow.nn.functional, name)(flow.tensor(logits), flow.tensor(target))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_multinomial_without_replacement_past_the_positive_weights_like_torch():
    """Once every category of positive weight is drawn, the rest are zero-weight ones (each
    once), as PyTorch; all-zero weights still raise."""
    for lib in (torch, flow):
        lib.manual_seed(0)
        w = lib.tensor([[0.1, 0.0, 0.9, 0.0], [0.0, 0.0, 1.0, 0.0]])
        out = lib.multinomial(w, 4, replacement=False).numpy()
        for row, weights in zip(out, w.numpy()):
            assert sorted(row.tolist()) == [0, 1, 2, 3]
            positive = int((weights > 0).sum())
            assert all(weights[c] > 0 for c in row[:positive])
        with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
            lib.multinomial(lib.zeros(4), 2, replacement=False)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_std_without_degrees_of_freedom_like_torch():
    """std with no degrees of freedom left is NaN (inf for nonzero deviations) with NaN
    gradients, as PyTorch; with correction=0 of one element it is 0 with gradient 0."""
    for shape, kw in [((1,), {}), ((3,), {"correction": 3}), ((2, 1), {"dim": 1})]:
        results = []
        for lib in (torch, flow):
            x = lib.tensor([1.0, 2.0, 4.0][: shape[0]]).reshape(shape).requires_grad_()
            y = x.std(**kw)
            y.sum().backward()
            results.append((y.detach().numpy(), x.grad.numpy()))
        np.testing.assert_array_equal(results[1][0], results[0][0])
        np.testing.assert_array_equal(results[1][1], results[0][1])
