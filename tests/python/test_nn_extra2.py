"""Local response norm, LP pooling, embedding bags, the triplet loss with a custom distance,
pdist, channel shuffle, feature alpha dropout, the *_with_indices pools, ZeroPad1d/3d,
LazyLinear and the deprecated eye/dirac initialisers against PyTorch: the same inputs through
both, values, gradients, reprs and error types compared."""

import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import LIBS
from differential import leaf_pair as _pair
from differential import same_error as _same_error


def _np(t):
    return t.detach().numpy()


def _check(outs, leaves, rtol, atol, seed=1):
    """Values of the two outputs, then the gradients of each leaf pair under a random cotangent."""
    to, fo = outs
    assert tuple(fo.shape) == tuple(to.shape)
    np.testing.assert_allclose(_np(fo), _np(to), rtol=rtol, atol=atol)
    g = np.random.default_rng(seed).standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g, dtype=to.dtype))
    fo.backward(flow.tensor(g, dtype=fo.dtype))
    for tl, fl in leaves:
        np.testing.assert_allclose(fl.grad.numpy(), tl.grad.numpy(), rtol=rtol, atol=atol)


def _shape(rng, ndim, low=1, high=6):
    return tuple(int(s) for s in rng.integers(low, high, size=ndim))


# ---- local response norm ----------------------------------------------------------------


@pytest.mark.parametrize("ndim", [3, 4, 5])
@pytest.mark.parametrize("seed", [0, 1])
def test_local_response_norm(ndim, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(_shape(rng, ndim, 2, 6))
    size = int(rng.integers(1, 5))
    alpha, beta, k = float(rng.uniform(0.1, 1.0)), float(rng.uniform(0.5, 1.0)), 2.0
    leaves = _pair(a)
    outs = [
        lib.nn.functional.local_response_norm(x, size, alpha, beta, k)
        for lib, x in zip(LIBS, leaves)
    ]
    _check(outs, [leaves], rtol=1e-10, atol=1e-12)
    leaves = _pair(a)
    mods = [lib.nn.LocalResponseNorm(size, alpha, beta, k) for lib in LIBS]
    _check([m(x) for m, x in zip(mods, leaves)], [leaves], rtol=1e-10, atol=1e-12)
    assert repr(mods[1]) == repr(mods[0])


def test_local_response_norm_errors():
    _same_error(lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2))


# ---- LP pooling -------------------------------------------------------------------------


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("norm_type", [1, 2, 3.5, float("inf")])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_lp_pool(dims, norm_type, ceil_mode):
    rng = np.random.default_rng(dims * 10 + int(ceil_mode))
    shape = _shape(rng, 2, 1, 4) + _shape(rng, dims, 4, 8)
    # Positive inputs: a non-integer power of a negative number is NaN in both.
    a = rng.uniform(0.2, 2.0, size=shape)
    kernel = tuple(int(k) for k in rng.integers(1, 4, size=dims))
    stride = tuple(int(s) for s in rng.integers(1, 3, size=dims))
    kernel_arg = kernel[0] if dims == 1 else kernel
    stride_arg = stride[0] if dims == 1 else stride
    for st in (None, stride_arg):
        leaves = _pair(a)
        fns = [getattr(lib.nn.functional, f"lp_pool{dims}d") for lib in LIBS]
        outs = [f(x, norm_type, kernel_arg, st, ceil_mode) for f, x in zip(fns, leaves)]
        _check(outs, [leaves], rtol=1e-9, atol=1e-12)
        leaves = _pair(a)
        mods = [
            getattr(lib.nn, f"LPPool{dims}d")(norm_type, kernel_arg, st, ceil_mode) for lib in LIBS
        ]
        _check([m(x) for m, x in zip(mods, leaves)], [leaves], rtol=1e-9, atol=1e-12)
        assert repr(mods[1]) == repr(mods[0])


# ---- *_with_indices pools ---------------------------------------------------------------


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_pool_with_indices(dims):
    rng = np.random.default_rng(dims)
    a = rng.standard_normal(_shape(rng, 2, 1, 4) + _shape(rng, dims, 4, 8))
    leaves = _pair(a)
    outs = [
        getattr(lib.nn.functional, f"max_pool{dims}d_with_indices")(x, 2, 1, 1)
        for lib, x in zip(LIBS, leaves)
    ]
    np.testing.assert_array_equal(outs[1][1].numpy(), outs[0][1].numpy())  # exact indices
    _check([o[0] for o in outs], [leaves], rtol=0, atol=0)
    leaves = _pair(a)
    outs = [
        getattr(lib.nn.functional, f"adaptive_max_pool{dims}d_with_indices")(x, 3)
        for lib, x in zip(LIBS, leaves)
    ]
    np.testing.assert_array_equal(outs[1][1].numpy(), outs[0][1].numpy())  # exact indices
    _check([o[0] for o in outs], [leaves], rtol=0, atol=0)


# ---- embedding bags ---------------------------------------------------------------------


def _bag_case(rng, n, include_last_offset):
    idx = rng.integers(0, n, size=int(rng.integers(1, 12)))
    cuts = np.sort(rng.integers(0, idx.size + 1, size=int(rng.integers(1, 5))))
    cuts[0] = 0  # an empty bag is allowed, a bag before the first index is not
    if include_last_offset:
        # The last offset closes the last bag at the end of the input. (With indices past it,
        # PyTorch's float64 path adds them to the last bag, its float32 path drops them.)
        cuts = np.append(cuts, idx.size)
    return idx, cuts


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_embedding_bag_offsets(mode, include_last_offset, padding_idx, seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(3, 8)), int(rng.integers(1, 5))
    w = rng.standard_normal((n, d))
    idx, cuts = _bag_case(rng, n, include_last_offset)
    psw = rng.standard_normal(idx.size) if mode == "sum" else None
    leaves = _pair(w)
    psw_leaves = _pair(psw) if psw is not None else (None, None)
    outs = [
        lib.nn.functional.embedding_bag(
            lib.tensor(idx),
            x,
            lib.tensor(cuts),
            mode=mode,
            per_sample_weights=p,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        for lib, x, p in zip(LIBS, leaves, psw_leaves)
    ]
    pairs = [leaves] + ([psw_leaves] if psw is not None else [])
    _check(outs, pairs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_module_and_max_norm(mode):
    rng = np.random.default_rng(3)
    n, d = 7, 4
    w = rng.standard_normal((n, d)) * 2
    idx = rng.integers(0, n, size=(3, 5))
    mods = [lib.nn.EmbeddingBag(n, d, max_norm=1.5, mode=mode, dtype=lib.float64) for lib in LIBS]
    with torch.no_grad():
        mods[0].weight.copy_(torch.tensor(w))
    with flow.no_grad():
        mods[1].weight.copy_(flow.tensor(w))
    outs = [m(lib.tensor(idx)) for m, lib in zip(mods, LIBS)]
    leaves = [(mods[0].weight, mods[1].weight)]
    _check(outs, leaves, rtol=1e-10, atol=1e-12)
    # The renorm writes back into the looked-up rows of the weight.
    np.testing.assert_allclose(_np(mods[1].weight), _np(mods[0].weight), rtol=1e-10, atol=1e-12)
    assert repr(mods[1]) == repr(mods[0])


def test_embedding_bag_from_pretrained():
    rng = np.random.default_rng(4)
    w = rng.standard_normal((5, 3))
    mods = [
        lib.nn.EmbeddingBag.from_pretrained(lib.tensor(w), mode="sum", padding_idx=1)
        for lib in LIBS
    ]
    assert not mods[1].weight.requires_grad and not mods[0].weight.requires_grad
    idx, cuts = np.array([1, 0, 4, 1, 2]), np.array([0, 2])
    outs = [m(lib.tensor(idx), lib.tensor(cuts)) for m, lib in zip(mods, LIBS)]
    np.testing.assert_allclose(_np(outs[1]), _np(outs[0]), rtol=1e-12, atol=1e-12)
    assert repr(mods[1]) == repr(mods[0])
    mods = [lib.nn.EmbeddingBag.from_pretrained(lib.tensor(w), freeze=False) for lib in LIBS]
    assert mods[1].weight.requires_grad and mods[0].weight.requires_grad


def test_embedding_bag_errors():
    def call(lib, idx=(1, 2, 3), off=(0, 1), **kw):
        w = lib.ones(5, 3, dtype=lib.float64)
        offsets = None if off is None else lib.tensor(off)
        return lib.nn.functional.embedding_bag(lib.tensor(idx), w, offsets, **kw)

    _same_error(lambda lib: call(lib, off=(1, 2)))  # offsets[0] != 0
    _same_error(lambda lib: call(lib, off=(0, 5)))  # past the end
    _same_error(lambda lib: call(lib, idx=(1, 2, 7)))  # index out of range
    _same_error(lambda lib: call(lib, mode="median"))
    _same_error(lambda lib: call(lib, idx=(1.0, 2.0)))
    _same_error(lambda lib: call(lib, off=None))
    _same_error(lambda lib: call(lib, idx=[[1, 2]], off=(0,)))
    _same_error(lambda lib: call(lib, idx=[[[1]]], off=None))
    _same_error(lambda lib: call(lib, padding_idx=7))
    _same_error(lambda lib: call(lib, mode="max", scale_grad_by_freq=True))
    _same_error(
        lambda lib: call(lib, mode="mean", per_sample_weights=lib.ones(3, dtype=lib.float64))
    )
    _same_error(
        lambda lib: call(lib, mode="sum", per_sample_weights=lib.ones(2, dtype=lib.float64))
    )
    _same_error(lambda lib: lib.nn.EmbeddingBag(4, 2, padding_idx=4))
    _same_error(lambda lib: lib.nn.EmbeddingBag(4, 2, _weight=lib.ones(3, 2)))
    _same_error(lambda lib: lib.nn.EmbeddingBag.from_pretrained(lib.ones(3)))


# ---- pdist ------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("seed", [0, 1])
def test_pdist(p, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((int(rng.integers(1, 7)), int(rng.integers(1, 5))))
    leaves = _pair(a)
    outs = [lib.nn.functional.pdist(x, p) for lib, x in zip(LIBS, leaves)]
    _check(outs, [leaves], rtol=1e-10, atol=1e-12)


def test_pdist_errors():
    _same_error(lambda lib: lib.nn.functional.pdist(lib.ones(3)))
    _same_error(lambda lib: lib.nn.functional.pdist(lib.ones(3, 2), -1))
    _same_error(lambda lib: lib.nn.functional.pdist(lib.ones(3, 2, dtype=lib.int64)))


# ---- triplet loss with a distance function ----------------------------------------------


def _cosine_distance(lib):
    return lambda x, y: 1.0 - lib.nn.functional.cosine_similarity(x, y)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("distance", [None, "cosine", "module"])
def test_triplet_margin_with_distance_loss(reduction, swap, distance):
    rng = np.random.default_rng(5)
    shape = _shape(rng, 2, 2, 7)
    arrays = [rng.standard_normal(shape) for _ in range(3)]
    margin = float(rng.uniform(0.5, 2.0))
    leaves = [_pair(a) for a in arrays]
    outs = []
    for k, lib in enumerate(LIBS):
        fn = {
            None: None,
            "cosine": _cosine_distance(lib),
            "module": lib.nn.PairwiseDistance(p=1.0),
        }[distance]
        a, p, n = (pair[k] for pair in leaves)
        outs.append(
            lib.nn.functional.triplet_margin_with_distance_loss(
                a, p, n, distance_function=fn, margin=margin, swap=swap, reduction=reduction
            )
        )
    _check(outs, leaves, rtol=1e-10, atol=1e-12)
    leaves = [_pair(a) for a in arrays]
    mods = [
        lib.nn.TripletMarginWithDistanceLoss(margin=margin, swap=swap, reduction=reduction)
        for lib in LIBS
    ]
    outs = [m(*(pair[k] for pair in leaves)) for k, m in enumerate(mods)]
    _check(outs, leaves, rtol=1e-10, atol=1e-12)
    assert repr(mods[1]) == repr(mods[0])


def test_triplet_margin_with_distance_loss_errors():
    F = [lib.nn.functional.triplet_margin_with_distance_loss for lib in LIBS]
    fn = dict(zip(LIBS, F))
    _same_error(lambda lib: fn[lib](lib.ones(2, 3), lib.ones(2, 3), lib.ones(3)))
    _same_error(lambda lib: fn[lib](lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=0))
    _same_error(
        lambda lib: fn[lib](lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), reduction="avg")
    )
    _same_error(lambda lib: fn[lib](lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), None))
    _same_error(lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1.0))
    _same_error(lambda lib: lib.nn.TripletMarginWithDistanceLoss(None))


# ---- channel shuffle --------------------------------------------------------------------


@pytest.mark.parametrize("ndim", [3, 4, 5])
def test_channel_shuffle(ndim):
    rng = np.random.default_rng(ndim)
    groups = int(rng.integers(1, 4))
    shape = (int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))) + _shape(rng, ndim - 2)
    a = rng.standard_normal(shape)
    leaves = _pair(a)
    outs = [lib.nn.functional.channel_shuffle(x, groups) for lib, x in zip(LIBS, leaves)]
    _check(outs, [leaves], rtol=0, atol=0)  # a permutation: exact
    mods = [lib.nn.ChannelShuffle(groups) for lib in LIBS]
    ints = [m(lib.arange(int(np.prod(shape))).reshape(shape)) for m, lib in zip(mods, LIBS)]
    np.testing.assert_array_equal(ints[1].numpy(), ints[0].numpy())
    assert repr(mods[1]) == repr(mods[0])


def test_channel_shuffle_errors():
    _same_error(lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 6), 2))
    _same_error(lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 6, 3), 0))
    _same_error(lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 6, 3), 4))


# ---- feature alpha dropout --------------------------------------------------------------


def test_feature_alpha_dropout_trivial_cases_are_exact():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 4, 5))
    for p, training in ((0.5, False), (0.0, True), (1.0, True)):
        leaves = _pair(a)
        outs = [
            lib.nn.functional.feature_alpha_dropout(x, p, training) for lib, x in zip(LIBS, leaves)
        ]
        _check(outs, [leaves], rtol=0, atol=0)


def test_feature_alpha_dropout_masks_whole_channels_with_torch_affine_values():
    p = 0.3
    a = np.random.default_rng(7).standard_normal((40, 50, 6))
    x = flow.tensor(a, requires_grad=True)
    out = flow.nn.functional.feature_alpha_dropout(x, p, True)
    alpha = 1.7580993408473766
    scale = 1.0 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    kept = np.isclose(_np(out), a * scale + alpha * scale * p, rtol=1e-12, atol=1e-12)
    dropped = np.isclose(_np(out), -alpha * scale + alpha * scale * p, rtol=1e-12, atol=1e-12)
    # Every (sample, channel) is either kept along its whole spatial axis or dropped.
    assert np.all(kept.all(-1) | dropped.all(-1))
    frac = dropped.all(-1).mean()
    assert abs(frac - p) < 0.05  # 2000 channel draws: the drop rate within a few sigma of p
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, scale, 0.0), rtol=1e-12, atol=1e-12)
    mods = [lib.nn.FeatureAlphaDropout(p) for lib in LIBS]
    assert repr(mods[1]) == repr(mods[0])
    assert not mods[1].eval()(flow.tensor(a)).numpy().tolist() != a.tolist()


def test_feature_alpha_dropout_errors():
    _same_error(lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(2, 3), 1.5, True))
    _same_error(lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(3), 0.5, True))
    _same_error(lambda lib: lib.nn.FeatureAlphaDropout(-0.1))


# ---- zero padding -----------------------------------------------------------------------


@pytest.mark.parametrize("name,ndim", [("ZeroPad1d", 3), ("ZeroPad3d", 5)])
def test_zero_pad(name, ndim):
    rng = np.random.default_rng(ndim)
    a = rng.standard_normal(_shape(rng, ndim, 1, 4))
    n_pad = 2 * (ndim - 2)
    for padding in (int(rng.integers(0, 3)), tuple(int(v) for v in rng.integers(0, 3, n_pad))):
        leaves = _pair(a)
        mods = [getattr(lib.nn, name)(padding) for lib in LIBS]
        _check([m(x) for m, x in zip(mods, leaves)], [leaves], rtol=0, atol=0)
        assert repr(mods[1]) == repr(mods[0])


# ---- LazyLinear -------------------------------------------------------------------------


@pytest.mark.parametrize("bias", [True, False])
def test_lazy_linear_infers_in_features_and_trains(bias):
    rng = np.random.default_rng(8)
    in_features, out_features = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    mods = [lib.nn.LazyLinear(out_features, bias=bias, dtype=lib.float64) for lib in LIBS]
    assert repr(mods[1]) == repr(mods[0])
    x = rng.standard_normal((4, 3, in_features))
    for m, lib in zip(mods, LIBS):
        m(lib.tensor(x))
    assert type(mods[1]).__name__ == type(mods[0]).__name__ == "Linear"
    assert repr(mods[1]) == repr(mods[0])
    assert [tuple(p.shape) for p in mods[1].parameters()] == [
        tuple(p.shape) for p in mods[0].parameters()
    ]
    # The same weights, then three SGD steps built after the first call.
    with flow.no_grad():
        for tp, fp in zip(mods[0].parameters(), mods[1].parameters()):
            fp.copy_(flow.tensor(_np(tp)))
    opts = [lib.optim.SGD(m.parameters(), lr=0.1) for lib, m in zip(LIBS, mods)]
    target = rng.standard_normal((4, 3, out_features))
    for _ in range(3):
        for lib, m, opt in zip(LIBS, mods, opts):
            opt.zero_grad()
            loss = ((m(lib.tensor(x)) - lib.tensor(target)) ** 2).mean()
            loss.backward()
            opt.step()
    for tp, fp in zip(mods[0].parameters(), mods[1].parameters()):
        np.testing.assert_allclose(_np(fp), _np(tp), rtol=1e-10, atol=1e-12)


# ---- deprecated initialisers ------------------------------------------------------------


def test_deprecated_eye_and_dirac_warn_and_match():
    for name, shape, kw in (("eye", (3, 5), {}), ("dirac", (4, 2, 3, 3), {"groups": 2})):
        results = []
        for lib in LIBS:
            t = lib.empty(*shape, dtype=lib.float64)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                getattr(lib.nn.init, name)(t, **kw)
            assert [w.category for w in caught] == [FutureWarning]
            results.append((_np(t), str(caught[0].message)))
        np.testing.assert_array_equal(results[1][0], results[0][0])  # 0/1 entries: exact
        assert results[1][1] == results[0][1]
