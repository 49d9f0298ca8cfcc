"""oneflow.distributions against torch.distributions: the Distribution base class, Categorical
(values, gradients, sampling frequencies, shapes, validation errors), and Bernoulli, Normal and
Uniform (values, reparameterized gradients, errors)."""

import math
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.distributions as D
from differential import check, same_error

TD = torch.distributions
DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def np_of(t):
    return t.detach().cpu().numpy() if isinstance(t, flow.Tensor) else t.detach().numpy()


def close(f, t, dtype="float64"):
    assert tuple(f.shape) == tuple(t.shape), f"shape {tuple(f.shape)} != {tuple(t.shape)}"
    np.testing.assert_allclose(np_of(f), np_of(t), **TOL[dtype])


def pair(a, dtype, device="cpu"):
    return (
        flow.tensor(a, dtype=getattr(flow, dtype), device=device),
        torch.tensor(a, dtype=getattr(torch, dtype)),
    )


def random_shape(rng, max_batch_dims=2):
    batch = tuple(int(s) for s in rng.integers(1, 4, size=rng.integers(0, max_batch_dims + 1)))
    return batch + (int(rng.integers(2, 6)),)


# ---- Categorical: values -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical_values_match_torch(dtype, param, device):
    rng = np.random.default_rng(1)
    for _ in range(6):
        shape = random_shape(rng)
        a = rng.random(shape) + 0.05 if param == "probs" else rng.standard_normal(shape) * 3
        f_in, t_in = pair(a, dtype, device)
        f = D.Categorical(**{param: f_in})
        t = TD.Categorical(**{param: t_in})
        assert f.batch_shape == tuple(t.batch_shape) and f.event_shape == ()
        assert f.param_shape == tuple(t.param_shape) and f.num_events == shape[-1]
        for name in ["probs", "logits", "entropy", "perplexity", "mode"]:
            fv, tv = getattr(f, name), getattr(t, name)
            fv, tv = (fv(), tv()) if callable(fv) else (fv, tv)
            close(fv, tv, dtype)
        assert f.probs.dtype == getattr(flow, dtype)
        # log_prob of every class, and of values broadcast against the batch shape.
        support_f, support_t = f.enumerate_support(), t.enumerate_support()
        close(support_f, support_t)
        close(f.enumerate_support(expand=False), t.enumerate_support(expand=False))
        close(f.log_prob(support_f), t.log_prob(support_t), dtype)
        values = rng.integers(0, shape[-1], size=(3, 1) + shape[:-1][1:])
        close(
            f.log_prob(flow.tensor(values, device=device)), t.log_prob(torch.tensor(values)), dtype
        )
        for name in ["mean", "variance", "stddev"]:
            fv, tv = getattr(f, name), getattr(t, name)
            assert tuple(fv.shape) == tuple(tv.shape) and np.isnan(np_of(fv)).all()


def test_categorical_normalises_and_zero_probabilities(device):
    probs = [[2.0, 0.0, 2.0], [1.0, 1.0, 2.0]]
    f = D.Categorical(probs=flow.tensor(probs, device=device))
    t = TD.Categorical(probs=torch.tensor(probs))
    close(f.probs, t.probs, "float32")
    close(f.logits, t.logits, "float32")  # log of probs clamped at eps: finite
    close(f.entropy(), t.entropy(), "float32")
    # A logit of -inf is a class of probability 0: contributes 0 to the entropy, not NaN.
    logits = [[0.0, -math.inf, 1.0], [-math.inf, 2.0, -1.0]]
    f = D.Categorical(logits=flow.tensor(logits, device=device))
    t = TD.Categorical(logits=torch.tensor(logits))
    assert np.isfinite(np_of(f.entropy())).all()
    close(f.entropy(), t.entropy(), "float32")
    close(f.probs, t.probs, "float32")
    close(f.log_prob(flow.tensor([2, 1])), t.log_prob(torch.tensor([2, 1])), "float32")


@pytest.mark.parametrize("dtype", DTYPES)
def test_categorical_gradients_match_torch(dtype, device):
    values = [[0, 2, 1], [3, 3, 0]]  # sample_shape (2,) + batch (3,)

    def log_prob_of(lib, x):
        return lib.distributions.Categorical(logits=x).log_prob(lib.tensor(values))

    def entropy_of(lib, x):
        return lib.distributions.Categorical(logits=x).entropy()

    def log_prob_from_probs(lib, x):
        return lib.distributions.Categorical(probs=x.exp()).log_prob(lib.tensor(values))

    for fn in [log_prob_of, entropy_of, log_prob_from_probs]:
        check(fn, [(3, 4)], dtype=dtype, device=device)


def test_categorical_expand_matches_torch(device):
    a = np.random.default_rng(2).standard_normal((3, 4))
    for param in ["probs", "logits"]:
        f_in, t_in = pair(np.abs(a) if param == "probs" else a, "float64", device)
        f = D.Categorical(**{param: f_in}).expand((2, 3))
        t = TD.Categorical(**{param: t_in}).expand((2, 3))
        assert f.batch_shape == (2, 3) and f.param_shape == (2, 3, 4)
        assert type(f) is D.Categorical and f._validate_args
        close(f.probs, t.probs)
        close(f.entropy(), t.entropy())
        close(f.log_prob(flow.tensor([[0], [3]])), t.log_prob(torch.tensor([[0], [3]])))
        assert tuple(f.sample((5,)).shape) == (5, 2, 3)


# ---- Categorical: sampling ------------------------------------------------------------------


def test_categorical_sample_shapes_and_seed(device):
    f = D.Categorical(probs=flow.rand(2, 3, 5, device=device))
    for sample_shape, expected in [((), (2, 3)), ((4,), (4, 2, 3)), ((2, 3), (2, 3, 2, 3))]:
        s = f.sample(sample_shape)
        assert tuple(s.shape) == expected and s.dtype == flow.int64
        assert 0 <= int(s.min()) and int(s.max()) < 5
    assert tuple(f.sample(flow.Size([7])).shape) == (7, 2, 3)
    assert tuple(D.Categorical(logits=flow.zeros(4)).sample().shape) == ()
    flow.manual_seed(3)
    first = f.sample((10,)).numpy()
    flow.manual_seed(3)
    assert (f.sample((10,)).numpy() == first).all()
    with pytest.raises(TypeError):
        f.sample(5)  # a sample shape is a sequence, as torch
    with pytest.raises(NotImplementedError):
        f.rsample()


def test_categorical_sample_frequencies_match_probs(device):
    probs = np.array([[0.1, 0.2, 0.3, 0.4, 0.0], [0.5, 0.05, 0.05, 0.0, 0.4]])
    n = 40000
    flow.manual_seed(0)
    samples = D.Categorical(probs=flow.tensor(probs, device=device)).sample((n,)).cpu().numpy()
    for b in range(2):
        counts = np.bincount(samples[:, b], minlength=5)
        assert counts[probs[b] == 0].sum() == 0, "a class of probability 0 was drawn"
        expected = probs[b] * n
        nz = expected > 0
        chi2 = (((counts[nz] - expected[nz]) ** 2) / expected[nz]).sum()
        assert chi2 < 20.0, f"chi-square {chi2} for counts {counts} (df <= 4: p < 0.001)"


# ---- Categorical: errors ------------------------------------------------------------------


def test_categorical_errors_match_torch():
    def dist(lib):
        return lib.distributions

    cases = [
        lambda lib: dist(lib).Categorical(),
        lambda lib: dist(lib).Categorical(probs=lib.ones(3), logits=lib.zeros(3)),
        lambda lib: dist(lib).Categorical(probs=lib.tensor(1.0)),
        lambda lib: dist(lib).Categorical(logits=lib.tensor(1.0)),
        lambda lib: dist(lib).Categorical(probs=lib.tensor([0.5, -0.1, 0.6])),
        lambda lib: dist(lib).Categorical(logits=lib.tensor([0.0, math.nan])),
        lambda lib: dist(lib).Categorical(probs=lib.ones(3)).log_prob(lib.tensor([3])),
        lambda lib: dist(lib).Categorical(probs=lib.ones(3)).log_prob(lib.tensor([-1])),
        lambda lib: dist(lib).Categorical(probs=lib.ones(3)).log_prob(lib.tensor([0.5])),
        lambda lib: dist(lib).Categorical(probs=lib.ones(2, 3)).log_prob(lib.tensor([0, 1, 2])),
        lambda lib: dist(lib).Categorical(probs=lib.ones(3)).log_prob([0]),
        lambda lib: dist(lib).Categorical(probs=lib.ones(3)).rsample(),
    ]
    for make in cases:
        same_error(make)
    for lib in (flow, torch):
        # With validation off the same arguments are accepted.
        dist(lib).Categorical(probs=lib.tensor([0.5, -0.1, 0.6]), validate_args=False)
        dist(lib).Categorical(probs=lib.ones(3), validate_args=False).log_prob(lib.tensor([1]))


# ---- the Distribution base class -----------------------------------------------------------


def test_distribution_base_class():
    d = D.Distribution(flow.Size([2, 3]), flow.Size([4]), validate_args=False)
    t = TD.Distribution(torch.Size([2, 3]), torch.Size([4]), validate_args=False)
    assert d.batch_shape == tuple(t.batch_shape) and d.event_shape == tuple(t.event_shape)
    assert isinstance(d.batch_shape, flow.Size)
    assert d._extended_shape((5,)) == tuple(t._extended_shape((5,))) == (5, 2, 3, 4)
    assert not D.Distribution.has_rsample and not D.Distribution.has_enumerate_support
    for obj in (d, t):
        for call in [
            lambda o: o.rsample(),
            lambda o: o.sample(),
            lambda o: o.log_prob(None),
            lambda o: o.entropy(),
            lambda o: o.mean,
            lambda o: o.variance,
            lambda o: o.stddev,
            lambda o: o.support,
            lambda o: o.arg_constraints,
            lambda o: o.enumerate_support(),
            lambda o: o.expand((1,)),
            lambda o: o.mode,
        ]:
            with pytest.raises(NotImplementedError):
                call(obj)
    assert repr(d) == "Distribution()"  # (torch's repr raises here: no arg_constraints)
    # Validation on, with no arg_constraints: a warning (as torch), not an error.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        D.Distribution(validate_args=True)
    assert any("arg_constraints" in str(w.message) for w in caught)


def test_validate_args_default_and_subclass():
    class Half(D.Distribution):
        """A subclass in user code: the interface is enough to derive stddev and sample."""

        arg_constraints = {"loc": D.constraints.real}
        support = D.constraints.real
        has_rsample = True

        def __init__(self, loc, validate_args=None):
            self.loc = loc
            super().__init__(loc.shape, validate_args=validate_args)

        @property
        def variance(self):
            return flow.full(self.batch_shape, 4.0)

        def rsample(self, sample_shape=()):
            return self.loc.expand(*self._extended_shape(sample_shape)) * 2

    loc = flow.tensor([1.0, -2.0], requires_grad=True)
    h = Half(loc)
    assert h._validate_args  # None means validate, as torch
    assert h.stddev.numpy().tolist() == [2.0, 2.0]
    assert not h.sample((3,)).requires_grad and h.rsample((3,)).requires_grad
    assert tuple(h.sample((3,)).shape) == (3, 2)
    with pytest.raises(ValueError, match="loc"):
        Half(flow.tensor([math.nan]))
    Half(flow.tensor([math.nan]), validate_args=False)
    # A subclass with its own __init__ cannot reuse a parent's expand (as torch).
    with pytest.raises(NotImplementedError, match="custom .expand"):
        h._get_checked_instance(D.Categorical)
    try:
        D.Distribution.set_default_validate_args(False)
        assert not D.Categorical(probs=flow.tensor([1.0, -1.0, 1.0]))._validate_args
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_repr_matches_torch():
    cases = [
        lambda lib: lib.distributions.Categorical(probs=lib.ones(3, 4)),
        lambda lib: lib.distributions.Categorical(logits=lib.zeros(2)),
        lambda lib: lib.distributions.Normal(0.0, 1.0),
        lambda lib: lib.distributions.Uniform(lib.zeros(2, 2), 1.0),
    ]
    for make in cases:
        assert repr(make(flow)) == repr(make(torch)).replace("torch.", "oneflow.")


# ---- Bernoulli, Normal, Uniform -------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli_matches_torch(dtype, device):
    rng = np.random.default_rng(4)
    p = rng.uniform(0.05, 0.95, size=(3, 2))
    for param, a in [("probs", p), ("logits", rng.standard_normal((3, 2)) * 2)]:
        f_in, t_in = pair(a, dtype, device)
        f, t = D.Bernoulli(**{param: f_in}), TD.Bernoulli(**{param: t_in})
        value = rng.integers(0, 2, size=(4, 3, 2)).astype(dtype)
        for name in ["probs", "logits", "mean", "variance", "entropy"]:
            fv, tv = getattr(f, name), getattr(t, name)
            fv, tv = (fv(), tv()) if callable(fv) else (fv, tv)
            close(fv, tv, dtype)
        close(f.log_prob(flow.tensor(value, device=device)), t.log_prob(torch.tensor(value)), dtype)
        close(f.enumerate_support(), t.enumerate_support())
        assert f.batch_shape == (3, 2) and f.param_shape == (3, 2)
    f = D.Bernoulli(probs=flow.tensor([0.2, 0.5, 0.7]))
    np.testing.assert_array_equal(np_of(f.mode), [0.0, np.nan, 1.0])
    scalar = D.Bernoulli(0.3)
    assert scalar.batch_shape == () and tuple(scalar.sample((5,)).shape) == (5,)
    check(
        lambda lib, x: lib.distributions.Bernoulli(logits=x).log_prob(
            lib.tensor([1.0, 0.0, 1.0], dtype=x.dtype)
        ),
        [(3,)],
        dtype=dtype,
        device=device,
    )
    flow.manual_seed(0)
    s = D.Bernoulli(probs=flow.tensor([0.25, 0.9], device=device)).sample((20000,)).cpu().numpy()
    np.testing.assert_allclose(s.mean(0), [0.25, 0.9], atol=0.015)
    for make in [
        lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([1.5])),
        lambda lib: lib.distributions.Bernoulli(),
        lambda lib: lib.distributions.Bernoulli(probs=0.5).log_prob(lib.tensor(2.0)),
        lambda lib: lib.distributions.Bernoulli(probs="0.5"),
    ]:
        same_error(make)


@pytest.mark.parametrize("dtype", DTYPES)
def test_normal_matches_torch(dtype, device):
    rng = np.random.default_rng(5)
    loc, scale = rng.standard_normal((2, 3)), rng.uniform(0.5, 2.0, size=(3,))
    (fl, tl), (fs, ts) = pair(loc, dtype, device), pair(scale, dtype, device)
    f, t = D.Normal(fl, fs), TD.Normal(tl, ts)
    assert f.batch_shape == (2, 3) and f.has_rsample
    value = rng.standard_normal((4, 2, 3))
    fv, tv = pair(value, dtype, device)
    close(f.log_prob(fv), t.log_prob(tv), dtype)
    close(f.cdf(fv), t.cdf(tv), dtype)
    q = rng.uniform(0.05, 0.95, size=(2, 3))
    close(f.icdf(pair(q, dtype, device)[0]), t.icdf(pair(q, dtype)[1]), dtype)
    for name in ["mean", "mode", "stddev", "variance", "entropy"]:
        a, b = getattr(f, name), getattr(t, name)
        close(*((a(), b()) if callable(a) else (a, b)), dtype)
    close(f.expand((4, 2, 3)).log_prob(fv), t.expand((4, 2, 3)).log_prob(tv), dtype)
    check(
        lambda lib, m, s: lib.distributions.Normal(m, s.exp()).log_prob(lib.tensor(value[0])),
        [(2, 3), (3,)],
        dtype=dtype,
        device=device,
    )
    # rsample = loc + eps * scale: d/dloc = 1 per draw, d/dscale = eps = (x - loc) / scale.
    m = flow.tensor(loc, dtype=getattr(flow, dtype), device=device, requires_grad=True)
    s = flow.tensor(scale, dtype=getattr(flow, dtype), device=device, requires_grad=True)
    x = D.Normal(m, s).rsample((500,))
    assert tuple(x.shape) == (500, 2, 3) and x.dtype == getattr(flow, dtype)
    x.sum().backward()
    np.testing.assert_allclose(np_of(m.grad), np.full((2, 3), 500.0))
    eps = (np_of(x) - loc) / scale
    np.testing.assert_allclose(np_of(s.grad), eps.sum((0, 1)), rtol=1e-4, atol=1e-3)
    assert not D.Normal(m, s).sample((2,)).requires_grad
    big = D.Normal(0.0, 2.0).sample((40000,)).numpy()
    assert abs(big.mean()) < 0.05 and abs(big.std() - 2.0) < 0.05
    for make in [
        lambda lib: lib.distributions.Normal(0.0, 0.0),
        lambda lib: lib.distributions.Normal(lib.zeros(2), lib.tensor([1.0, -1.0])),
        lambda lib: lib.distributions.Normal(lib.zeros(2), 1.0).log_prob(lib.zeros(3)),
        lambda lib: lib.distributions.Normal(lib.zeros(2), 1.0).log_prob(1.0),
    ]:
        same_error(make)


@pytest.mark.parametrize("dtype", DTYPES)
def test_uniform_matches_torch(dtype, device):
    rng = np.random.default_rng(6)
    low = rng.standard_normal(3)
    high = low + rng.uniform(0.5, 2.0, size=3)
    (fl, tl), (fh, th) = pair(low, dtype, device), pair(high, dtype, device)
    f, t = D.Uniform(fl, fh), TD.Uniform(tl, th)
    value = low + (high - low) * rng.uniform(0.0, 0.99, size=(5, 3))
    fv, tv = pair(value, dtype, device)
    close(f.log_prob(fv), t.log_prob(tv), dtype)
    close(f.cdf(fv), t.cdf(tv), dtype)
    close(f.icdf(pair(value * 0 + 0.3, dtype, device)[0]), t.icdf(tv * 0 + 0.3), dtype)
    for name in ["mean", "stddev", "variance", "entropy"]:
        a, b = getattr(f, name), getattr(t, name)
        close(*((a(), b()) if callable(a) else (a, b)), dtype)
    assert np.isnan(np_of(f.mode)).all()
    # Outside [low, high): log density -inf when not validating, ValueError when validating.
    outside = [[low[0] - 1, high[1] + 1, low[2]]]
    g = D.Uniform(fl, fh, validate_args=False).log_prob(flow.tensor(outside, device=device))
    h = TD.Uniform(tl, th, validate_args=False).log_prob(torch.tensor(outside))
    close(g.to(flow.float64), h.double())
    # rsample = low + u (high - low): d/dlow = 1 - u, d/dhigh = u.
    lo = flow.tensor(low, dtype=getattr(flow, dtype), device=device, requires_grad=True)
    hi = flow.tensor(high, dtype=getattr(flow, dtype), device=device, requires_grad=True)
    x = D.Uniform(lo, hi).rsample((400,))
    x.sum().backward()
    u = (np_of(x) - low) / (high - low)
    assert (u >= 0).all() and (u < 1).all()
    np.testing.assert_allclose(np_of(hi.grad), u.sum(0), rtol=1e-4)
    np.testing.assert_allclose(np_of(lo.grad), (1 - u).sum(0), rtol=1e-4)
    for make in [
        lambda lib: lib.distributions.Uniform(1.0, 1.0),
        lambda lib: lib.distributions.Uniform(lib.tensor([0.0, 2.0]), 1.0),
        lambda lib: lib.distributions.Uniform(0.0, 1.0).log_prob(lib.tensor(2.0)),
    ]:
        same_error(make)


def test_constraints_check_like_torch():
    C, TC = D.constraints, torch.distributions.constraints
    v = [-1.0, 0.0, 0.5, 1.0, 2.0, math.nan, math.inf]
    fv, tv = flow.tensor(v), torch.tensor(v)
    for name in ["real", "positive", "nonnegative", "unit_interval", "boolean"]:
        np.testing.assert_array_equal(
            getattr(C, name).check(fv).numpy(), getattr(TC, name).check(tv).numpy(), name
        )
    for f, t in [
        (C.integer_interval(0, 1), TC.integer_interval(0, 1)),
        (C.interval(0.0, 1.0), TC.interval(0.0, 1.0)),
        (C.half_open_interval(0.0, 1.0), TC.half_open_interval(0.0, 1.0)),
        (C.greater_than(0.5), TC.greater_than(0.5)),
        (C.less_than(0.5), TC.less_than(0.5)),
    ]:
        np.testing.assert_array_equal(f.check(fv).numpy(), t.check(tv).numpy(), repr(f))
    m = [[0.2, 0.8], [0.5, 0.6], [-0.5, 1.5]]
    np.testing.assert_array_equal(
        C.simplex.check(flow.tensor(m)).numpy(), TC.simplex.check(torch.tensor(m)).numpy()
    )
    assert C.simplex.event_dim == 1 and C.real_vector.event_dim == 1
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    assert C.is_dependent(D.Categorical.support) and D.Categorical.support.is_discrete
    with pytest.raises(ValueError):
        C.dependent.check(fv)
