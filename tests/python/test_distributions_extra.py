"""oneflow.distributions against torch.distributions, for the distributions beyond Normal,
Uniform, Categorical and Bernoulli: values of log_prob, entropy, moments, cdf / icdf and their
gradients with respect to the parameters on random float32 parameters with broadcasting batch
shapes; kl_divergence values and gradients and the register_kl dispatch; transforms and
TransformedDistribution; Independent, MultivariateNormal, MixtureSameFamily and the relaxed
(Gumbel-softmax) distributions; implicit reparameterization gradients of gamma variates; sampling
statistics (means and variances within a few standard errors of 20000 samples, fixed seed) and
the shapes of sample, rsample and expand; the probs / logits constructors (errors as torch's,
parameters computed lazily, expand). The distributions added later are in
test_distributions_more.py, which uses the helpers here."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.distributions as D
from oneflow.distributions import transforms as T

TD = torch.distributions
TT = torch.distributions.transforms
RTOL, ATOL = 1e-5, 1e-5
N_SAMPLES = 20000


def np_of(t):
    return t.detach().cpu().numpy() if isinstance(t, flow.Tensor) else t.detach().numpy()


def close(f, t, what="", rtol=RTOL, atol=ATOL):
    assert tuple(f.shape) == tuple(t.shape), f"{what}: shape {tuple(f.shape)} != {tuple(t.shape)}"
    np.testing.assert_allclose(np_of(f), np_of(t), rtol=rtol, atol=atol, err_msg=what)


def leaves(params, device="cpu", requires_grad=True):
    """Params (numpy arrays or numbers) as flow and torch float32 leaves; numbers stay numbers."""
    f, t = {}, {}
    for name, a in params.items():
        if isinstance(a, np.ndarray):
            f[name] = flow.tensor(a, dtype=flow.float32, device=device, requires_grad=requires_grad)
            t[name] = torch.tensor(a, dtype=torch.float32, requires_grad=requires_grad)
        else:
            f[name], t[name] = a, a
    return f, t


def pair(a, device="cpu"):
    return (
        flow.tensor(a, dtype=flow.float32, device=device),
        torch.tensor(a, dtype=torch.float32),
    )


def torch_value(fn):
    """fn() on the torch side, or None where torch does not implement it."""
    try:
        return fn()
    except NotImplementedError:
        return None


# ---- per-distribution specs --------------------------------------------------------------


def _pos(rng, shape, low=0.5, high=3.0):
    return rng.uniform(low, high, size=shape)


def _unit(rng, shape):
    return rng.uniform(0.1, 0.9, size=shape)


def _simplex(rng, shape):
    return rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])


def _one_hot(rng, shape):
    idx = rng.integers(0, shape[-1], size=shape[:-1])
    return np.eye(shape[-1])[idx]


SPECS = {
    "Laplace": (
        lambda r: {"loc": r.standard_normal((3, 1)), "scale": _pos(r, (1, 4))},
        lambda r: r.standard_normal((2, 3, 4)) * 2,
        True,
    ),
    "Exponential": (
        lambda r: {"rate": _pos(r, (2, 3))},
        lambda r: _pos(r, (2, 3), 0.05, 4),
        True,
    ),
    "Gamma": (
        lambda r: {"concentration": _pos(r, (2, 3), 0.3), "rate": _pos(r, (3,))},
        lambda r: _pos(r, (4, 2, 3), 0.05, 5),
        False,
    ),
    "Beta": (
        lambda r: {"concentration1": _pos(r, (2, 3), 0.3), "concentration0": _pos(r, (1, 3), 0.3)},
        lambda r: _unit(r, (2, 3)),
        False,
    ),
    "StudentT": (
        lambda r: {
            "df": _pos(r, (2, 3), 1.0, 8.0),
            "loc": r.standard_normal((3,)),
            "scale": _pos(r, (2, 1)),
        },
        lambda r: r.standard_normal((2, 3)) * 3,
        False,
    ),
    "LogNormal": (
        lambda r: {"loc": r.standard_normal((2, 3)) * 0.5, "scale": _pos(r, (3,), 0.3, 1.5)},
        lambda r: _pos(r, (2, 3), 0.05, 5),
        True,
    ),
    "Chi2": (
        lambda r: {"df": _pos(r, (2, 3), 0.5, 8)},
        lambda r: _pos(r, (2, 3), 0.05, 6),
        False,
    ),
    "HalfNormal": (
        lambda r: {"scale": _pos(r, (2, 3))},
        lambda r: _pos(r, (2, 3), 0.0, 4),
        True,
    ),
    "Cauchy": (
        lambda r: {"loc": r.standard_normal((2, 1)), "scale": _pos(r, (3,))},
        lambda r: r.standard_normal((2, 3)) * 4,
        True,
    ),
    "Gumbel": (
        lambda r: {"loc": r.standard_normal((2, 3)), "scale": _pos(r, (2, 3))},
        lambda r: r.standard_normal((2, 3)) * 2,
        True,
    ),
    "Weibull": (
        lambda r: {"scale": _pos(r, (2, 3)), "concentration": _pos(r, (3,), 1.2, 4)},
        lambda r: _pos(r, (2, 3), 0.05, 4),
        True,
    ),
    "Pareto": (
        lambda r: {"scale": _pos(r, (2, 3), 0.5, 1.0), "alpha": _pos(r, (2, 3), 2.5, 6)},
        lambda r: _pos(r, (2, 3), 1.0, 6),
        True,
    ),
    "NegativeBinomial": (
        lambda r: {"total_count": _pos(r, (2, 3), 0.5, 6), "probs": _unit(r, (2, 3))},
        lambda r: r.integers(0, 12, size=(2, 3)).astype(np.float64),
        False,
    ),
    "Multinomial": (
        lambda r: {"total_count": 6, "probs": _simplex(r, (2, 4))},
        lambda r: r.multinomial(6, [0.25] * 4, size=2).astype(np.float64),
        False,
    ),
    "Poisson": (
        lambda r: {"rate": _pos(r, (2, 3), 0.5, 20)},
        lambda r: r.integers(0, 15, size=(2, 3)).astype(np.float64),
        False,
    ),
    "Geometric": (
        lambda r: {"probs": _unit(r, (2, 3))},
        lambda r: r.integers(0, 8, size=(2, 3)).astype(np.float64),
        False,
    ),
    "Binomial": (
        lambda r: {"total_count": 7.0, "probs": _unit(r, (2, 3))},
        lambda r: r.integers(0, 8, size=(2, 3)).astype(np.float64),
        False,
    ),
    "Dirichlet": (
        lambda r: {"concentration": _pos(r, (2, 4), 0.3)},
        lambda r: _simplex(r, (2, 4)),
        False,
    ),
    "OneHotCategorical": (
        lambda r: {"probs": _simplex(r, (2, 3, 4))},
        lambda r: _one_hot(r, (2, 3, 4)),
        False,
    ),
}


# PyTorch's float32 closed forms of these cancel in places (ContinuousBernoulli's mean and
# variance next to p = 1/2: its variance at p = 0.49 is 1.2% off, where oneflow's are float64
# values rounded): their reference is PyTorch's float64 evaluation of the same float32 values.
_FLOAT64_REFERENCE = {"ContinuousBernoulli"}


def _build(name, params, device="cpu", requires_grad=True):
    fp, tp = leaves(params, device, requires_grad)
    if name in _FLOAT64_REFERENCE:
        tp = {
            k: torch.tensor(
                np.asarray(v, dtype=np.float32), dtype=torch.float64, requires_grad=requires_grad
            )
            if isinstance(v, np.ndarray)
            else v
            for k, v in params.items()
        }
    return fp, tp, getattr(D, name)(**fp), getattr(TD, name)(**tp)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_values_match_torch(name, device):
    make_params, make_value, has_cdf = SPECS[name]
    rng = np.random.default_rng(7)
    for _ in range(3):
        _, _, f, t = _build(name, make_params(rng), device)
        assert f.batch_shape == tuple(t.batch_shape), name
        assert f.event_shape == tuple(t.event_shape), name
        fv, tv = pair(make_value(rng), device)
        close(f.log_prob(fv), t.log_prob(tv), f"{name}.log_prob")
        expected_entropy = torch_value(t.entropy)
        if expected_entropy is not None:
            close(f.entropy(), expected_entropy, f"{name}.entropy")
        for attr in ["mean", "mode", "variance", "stddev"]:
            expected = torch_value(lambda t=t, attr=attr: getattr(t, attr))
            if expected is not None:
                close(getattr(f, attr), expected, f"{name}.{attr}")
        if has_cdf:
            close(f.cdf(fv), t.cdf(tv), f"{name}.cdf")
            q = rng.uniform(0.02, 0.98, size=tuple(t.batch_shape))
            fq, tq = pair(q, device)
            close(f.icdf(fq), t.icdf(tq), f"{name}.icdf", rtol=1e-4)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_gradients_match_torch(name, device):
    make_params, make_value, has_cdf = SPECS[name]
    rng = np.random.default_rng(11)
    fp, tp, f, t = _build(name, make_params(rng), device)
    fv, tv = pair(make_value(rng), device)
    f_loss = f.log_prob(fv).sum() + f.mean.sum() * 0.3 + f.variance.sum() * 0.2
    t_loss = t.log_prob(tv).sum() + t.mean.sum() * 0.3 + t.variance.sum() * 0.2
    if torch_value(t.entropy) is not None:
        f_loss = f_loss + f.entropy().sum() * 0.5
        t_loss = t_loss + t.entropy().sum() * 0.5
    if has_cdf:
        f_loss = f_loss + f.cdf(fv).sum()
        t_loss = t_loss + t.cdf(tv).sum()
    f_loss.backward()
    t_loss.backward()
    for key in fp:
        if isinstance(fp[key], flow.Tensor):
            close(fp[key].grad, tp[key].grad, f"{name} grad {key}", rtol=1e-4, atol=1e-4)


def test_binomial_logits_and_enumerate_support(device):
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((2, 3))
    fp, tp = leaves({"logits": logits}, device)
    f = D.Binomial(total_count=5, logits=fp["logits"])
    t = TD.Binomial(total_count=5, logits=tp["logits"])
    support_f, support_t = f.enumerate_support(), t.enumerate_support()
    close(support_f, support_t, "support")
    close(f.log_prob(support_f), t.log_prob(support_t), "log_prob")
    close(f.entropy(), t.entropy(), "entropy")
    f.entropy().sum().backward()
    t.entropy().sum().backward()
    close(fp["logits"].grad, tp["logits"].grad, "grad", rtol=1e-4, atol=1e-5)
    assert tuple(f.enumerate_support(expand=False).shape) == (6, 1, 1)


def test_onehot_enumerate_support(device):
    probs = _simplex(np.random.default_rng(2), (3, 4))
    fp, tp = pair(probs, device)
    f, t = D.OneHotCategorical(fp), TD.OneHotCategorical(tp)
    close(f.enumerate_support(), t.enumerate_support(), "support")
    close(f.enumerate_support(False), t.enumerate_support(False), "support")
    close(f.log_prob(f.enumerate_support()), t.log_prob(t.enumerate_support()), "log_prob")


def test_beta_mode_at_vertices(device):
    a = np.array([0.5, 2.0, 0.5, 3.0, 0.7, 1.0])
    b = np.array([2.0, 0.5, 0.3, 2.0, 0.9, 0.5])
    f = D.Beta(pair(a, device)[0], pair(b, device)[0])
    t = TD.Beta(torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float32))
    np.testing.assert_allclose(np_of(f.mode), np_of(t.mode), rtol=RTOL)  # NaN where torch's is
    c = np.array([[0.5, 0.9, 0.7], [2.0, 3.0, 0.5], [1.5, 1.5, 4.0]])
    f, t = D.Dirichlet(pair(c, device)[0]), TD.Dirichlet(pair(c)[1])
    close(f.mode, t.mode, "dirichlet mode")


def test_pareto_infinite_moments(device):
    alpha = np.array([0.5, 1.5, 2.5])
    f = D.Pareto(pair(np.ones(3), device)[0], pair(alpha, device)[0])
    t = TD.Pareto(torch.ones(3), torch.tensor(alpha, dtype=torch.float32))
    close(f.mean, t.mean, "mean")
    close(f.variance, t.variance, "variance")


def test_studentt_moments_for_small_df(device):
    df = np.array([0.5, 1.5, 2.5])
    f = D.StudentT(pair(df, device)[0])
    t = TD.StudentT(torch.tensor(df, dtype=torch.float32))
    np.testing.assert_equal(np_of(f.mean), np_of(t.mean))
    np.testing.assert_allclose(np_of(f.variance), np_of(t.variance), rtol=RTOL)


# ---- MultivariateNormal, Independent, MixtureSameFamily -----------------------------------


def _spd(rng, batch, k):
    a = rng.standard_normal(batch + (k, k))
    return a @ np.swapaxes(a, -1, -2) + k * np.eye(k)


def _sym(g):
    return (g + g.swapaxes(-1, -2)) / 2


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_matches_torch(kind, device):
    rng = np.random.default_rng(5)
    k = 3
    cov = _spd(rng, (2, 1), k)
    matrix = np.linalg.cholesky(cov) if kind == "scale_tril" else cov
    params = {"loc": rng.standard_normal((4, k)), kind: matrix}
    fp, tp = leaves(params, device)
    f, t = D.MultivariateNormal(**fp), TD.MultivariateNormal(**tp)
    assert f.batch_shape == (2, 4) and f.event_shape == (k,)
    value = rng.standard_normal((5, 2, 4, k))
    fv, tv = pair(value, device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob", rtol=1e-4)
    close(f.entropy(), t.entropy(), "entropy")
    for attr in ["mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"]:
        close(getattr(f, attr), getattr(t, attr), attr, rtol=1e-4, atol=1e-5)
    (f.log_prob(fv).sum() + f.entropy().sum()).backward()
    (t.log_prob(tv).sum() + t.entropy().sum()).backward()
    close(fp["loc"].grad, tp["loc"].grad, "grad loc", rtol=1e-4, atol=1e-4)
    fg, tg = np_of(fp[kind].grad), np_of(tp[kind].grad)
    if kind == "scale_tril":
        fg, tg = np.tril(fg), np.tril(tg)
    else:  # only the symmetric part of a gradient with respect to a symmetric matrix is defined
        fg, tg = _sym(fg), _sym(tg)
    np.testing.assert_allclose(fg, tg, rtol=1e-3, atol=1e-4)
    assert tuple(f.rsample((6,)).shape) == (6, 2, 4, k)
    assert tuple(f.expand((3, 2, 4)).sample().shape) == (3, 2, 4, k)


def test_multivariate_normal_sampling_statistics(device):
    loc = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 0.5]])
    f = D.MultivariateNormal(pair(loc, device)[0], pair(cov, device)[0])
    x = np_of(f.sample((N_SAMPLES,))).astype(np.float64)
    se = np.sqrt(np.diag(cov) / N_SAMPLES)
    assert np.all(np.abs(x.mean(0) - loc) < 5 * se)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


def test_multivariate_normal_errors():
    loc = flow.zeros(2)
    with pytest.raises(ValueError):
        D.MultivariateNormal(loc)
    with pytest.raises(ValueError):
        D.MultivariateNormal(loc, covariance_matrix=flow.eye(2), scale_tril=flow.eye(2))
    with pytest.raises(ValueError):
        D.MultivariateNormal(loc, covariance_matrix=flow.tensor([[1.0, 2.0], [2.0, 1.0]]))


def test_independent_matches_torch(device):
    rng = np.random.default_rng(9)
    params = {"loc": rng.standard_normal((2, 3, 4)), "scale": _pos(rng, (2, 3, 4))}
    fp, tp = leaves(params, device)
    f = D.Independent(D.Normal(fp["loc"], fp["scale"]), 2)
    t = TD.Independent(TD.Normal(tp["loc"], tp["scale"]), 2)
    assert f.batch_shape == (2,) and f.event_shape == (3, 4)
    assert f.has_rsample and not f.has_enumerate_support
    fv, tv = pair(rng.standard_normal((5, 2, 3, 4)), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob")
    close(f.entropy(), t.entropy(), "entropy")
    close(f.mean, t.mean, "mean")
    close(f.variance, t.variance, "variance")
    f.log_prob(fv).sum().backward()
    t.log_prob(tv).sum().backward()
    close(fp["scale"].grad, tp["scale"].grad, "grad", rtol=1e-4, atol=1e-4)
    assert tuple(f.rsample((7,)).shape) == (7, 2, 3, 4)
    e = f.expand((5, 2))
    assert e.batch_shape == (5, 2) and e.event_shape == (3, 4)
    assert tuple(e.sample().shape) == (5, 2, 3, 4)
    assert bool(f.support.check(fv).all()) and tuple(f.support.check(fv).shape) == (5, 2)
    with pytest.raises(ValueError):
        D.Independent(D.Normal(fp["loc"], fp["scale"]), 4)


def test_mixture_same_family_matches_torch(device):
    rng = np.random.default_rng(4)
    params = {
        "logits": rng.standard_normal((2, 3)),
        "loc": rng.standard_normal((2, 3)),
        "scale": _pos(rng, (2, 3)),
    }
    fp, tp = leaves(params, device)
    f = D.MixtureSameFamily(D.Categorical(logits=fp["logits"]), D.Normal(fp["loc"], fp["scale"]))
    t = TD.MixtureSameFamily(TD.Categorical(logits=tp["logits"]), TD.Normal(tp["loc"], tp["scale"]))
    assert f.batch_shape == (2,) and f.event_shape == ()
    fv, tv = pair(rng.standard_normal((5, 2)) * 2, device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob")
    close(f.cdf(fv), t.cdf(tv), "cdf")
    close(f.mean, t.mean, "mean")
    close(f.variance, t.variance, "variance")
    (f.log_prob(fv).sum() + f.variance.sum()).backward()
    (t.log_prob(tv).sum() + t.variance.sum()).backward()
    for key in params:
        close(fp[key].grad, tp[key].grad, f"grad {key}", rtol=1e-4, atol=1e-5)
    x = f.sample((N_SAMPLES,))
    assert tuple(x.shape) == (N_SAMPLES, 2)
    _check_moments(np_of(x), np_of(f.mean), np_of(f.variance), "mixture")
    assert tuple(f.expand((4, 2)).sample((3,)).shape) == (3, 4, 2)


def test_mixture_weights_broadcast_over_batch(device):
    """One set of mixture weights shared by a batch of component families."""
    loc = flow.tensor([[-5.0, 5.0], [0.0, 10.0], [3.0, 3.0]], device=device)
    f = D.MixtureSameFamily(
        D.Categorical(flow.tensor([0.25, 0.75], device=device)), D.Normal(loc, 0.1)
    )
    assert f.batch_shape == (3,)
    x = f.sample((N_SAMPLES,))
    assert tuple(x.shape) == (N_SAMPLES, 3)
    _check_moments(np_of(x), np_of(f.mean), np_of(f.variance), "mixture broadcast")


def test_mixture_of_multivariate_components(device):
    rng = np.random.default_rng(6)
    probs = _simplex(rng, (3,))
    loc, scale = rng.standard_normal((3, 2)), _pos(rng, (3, 2))
    f = D.MixtureSameFamily(
        D.Categorical(pair(probs, device)[0]),
        D.Independent(D.Normal(pair(loc, device)[0], pair(scale, device)[0]), 1),
    )
    t = TD.MixtureSameFamily(
        TD.Categorical(pair(probs)[1]), TD.Independent(TD.Normal(pair(loc)[1], pair(scale)[1]), 1)
    )
    assert f.batch_shape == () and f.event_shape == (2,)
    fv, tv = pair(rng.standard_normal((4, 2)), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob")
    close(f.mean, t.mean, "mean")
    close(f.variance, t.variance, "variance")
    x = f.sample((N_SAMPLES,))
    assert tuple(x.shape) == (N_SAMPLES, 2)
    _check_moments(np_of(x), np_of(f.mean), np_of(f.variance), "mixture mv")


# ---- relaxed (Gumbel-softmax) distributions -----------------------------------------------


RELAXED = {
    "RelaxedBernoulli": (D.RelaxedBernoulli, TD.RelaxedBernoulli),
    "RelaxedOneHotCategorical": (D.RelaxedOneHotCategorical, TD.RelaxedOneHotCategorical),
    "LogitRelaxedBernoulli": (
        D.relaxed.LogitRelaxedBernoulli,
        torch.distributions.relaxed_bernoulli.LogitRelaxedBernoulli,
    ),
    "ExpRelaxedCategorical": (
        D.relaxed.ExpRelaxedCategorical,
        torch.distributions.relaxed_categorical.ExpRelaxedCategorical,
    ),
}


@pytest.mark.parametrize("name", sorted(RELAXED))
@pytest.mark.parametrize("temperature", ["number", "tensor"])
def test_relaxed_match_torch(name, temperature, device):
    rng = np.random.default_rng(41)
    categorical = "Categorical" in name
    shape = (2, 3, 4) if categorical else (2, 3)
    params = {"logits": rng.standard_normal(shape)}
    fp, tp = leaves(params, device)
    f_temp, t_temp = pair(np.array([0.7]), device)
    if temperature == "number":  # an extension: PyTorch needs a tensor
        f_temp = 0.7
    f = RELAXED[name][0](f_temp, logits=fp["logits"])
    t = RELAXED[name][1](t_temp, logits=tp["logits"])
    assert f.batch_shape == tuple(t.batch_shape) and f.event_shape == tuple(t.event_shape)
    torch.manual_seed(0)
    value = t.sample((5,))
    fv = flow.tensor(value.numpy(), device=device)
    close(f.log_prob(fv), t.log_prob(value), f"{name}.log_prob", rtol=1e-4, atol=1e-4)
    f.log_prob(fv).sum().backward()
    t.log_prob(value).sum().backward()
    close(fp["logits"].grad, tp["logits"].grad, f"{name} grad", rtol=1e-4, atol=1e-4)
    x = f.rsample((7,))
    assert tuple(x.shape) == (7,) + shape and x.requires_grad
    assert bool(flow.isfinite(f.log_prob(x)).all())
    if name.startswith("Relaxed"):
        assert bool(f.support.check(x).all())
    e = f.expand((4,) + tuple(f.batch_shape))
    assert type(e) is type(f) and tuple(e.sample().shape) == (4,) + shape


def test_relaxed_one_hot_low_temperature_frequencies(device):
    probs = np.array([0.2, 0.3, 0.5])
    f = D.RelaxedOneHotCategorical(0.05, probs=pair(probs, device)[0])
    x = np_of(f.sample((N_SAMPLES,)))
    freq = np.bincount(x.argmax(-1), minlength=3) / N_SAMPLES  # argmax is exactly Categorical
    assert np.all(np.abs(freq - probs) < 5 * np.sqrt(probs * (1 - probs) / N_SAMPLES))
    b = D.RelaxedBernoulli(0.05, probs=flow.tensor([0.3, 0.8], device=device))
    y = np_of(b.sample((N_SAMPLES,)))
    assert np.all(np.abs((y > 0.5).mean(0) - [0.3, 0.8]) < 5 * np.sqrt(0.25 / N_SAMPLES))


# ---- transforms ---------------------------------------------------------------------------


def _transform_pairs(rng):
    loc, scale = rng.standard_normal(3), _pos(rng, 3) * np.array([1, -1, 1])
    return [
        (T.ExpTransform(), TT.ExpTransform()),
        (T.SigmoidTransform(), TT.SigmoidTransform()),
        (T.TanhTransform(), TT.TanhTransform()),
        (T.SoftplusTransform(), TT.SoftplusTransform()),
        (
            T.AffineTransform(pair(loc)[0], pair(scale)[0]),
            TT.AffineTransform(pair(loc)[1], pair(scale)[1]),
        ),
        (T.AffineTransform(1.5, -2.0), TT.AffineTransform(1.5, -2.0)),
        (
            T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.TanhTransform()]),
            TT.ComposeTransform([TT.AffineTransform(0.5, 2.0), TT.TanhTransform()]),
        ),
        (
            T.ComposeTransform([T.ExpTransform(), T.PowerTransform(0.5)]),
            TT.ComposeTransform([TT.ExpTransform(), TT.PowerTransform(torch.tensor(0.5))]),
        ),
    ]


def test_transforms_match_torch(device):
    rng = np.random.default_rng(12)
    for f_t, t_t in _transform_pairs(rng):
        fx, tx = pair(rng.standard_normal((4, 3)) * 0.8)
        fy, ty = f_t(fx), t_t(tx)
        close(fy, ty, f"{t_t} forward")
        close(f_t.inv(fy), t_t.inv(ty), f"{t_t} inverse", rtol=1e-4, atol=1e-4)
        close(f_t.log_abs_det_jacobian(fx, fy), t_t.log_abs_det_jacobian(tx, ty), f"{t_t} ladj")
        close(
            f_t.inv.log_abs_det_jacobian(fy, fx),
            t_t.inv.log_abs_det_jacobian(ty, tx),
            f"{t_t} inverse ladj",
        )
        assert f_t.domain.event_dim == t_t.domain.event_dim
        assert f_t.codomain.event_dim == t_t.codomain.event_dim


def test_stick_breaking_and_matrix_transforms(device):
    rng = np.random.default_rng(15)
    fx, tx = pair(rng.standard_normal((2, 3)))
    f, t = T.StickBreakingTransform(), TT.StickBreakingTransform()
    close(f(fx), t(tx), "stick breaking")
    close(f.inv(f(fx)), tx, "stick breaking inverse", rtol=1e-4, atol=1e-4)
    close(f.log_abs_det_jacobian(fx, f(fx)), t.log_abs_det_jacobian(tx, t(tx)), "ladj", 1e-4)
    assert tuple(f.forward_shape((2, 3))) == (2, 4) and tuple(f.inverse_shape((2, 4))) == (2, 3)
    close(T.SoftmaxTransform()(fx), TT.SoftmaxTransform()(tx), "softmax")
    fm, tm = pair(rng.standard_normal((2, 3, 3)))
    close(T.LowerCholeskyTransform()(fm), TT.LowerCholeskyTransform()(tm), "lower cholesky")
    g = T.IndependentTransform(T.ExpTransform(), 1)
    h = TT.IndependentTransform(TT.ExpTransform(), 1)
    close(g.log_abs_det_jacobian(fx, g(fx)), h.log_abs_det_jacobian(tx, h(tx)), "independent")


@pytest.mark.parametrize(
    "make",
    [
        lambda C: C.real,
        lambda C: C.positive,
        lambda C: C.nonnegative,
        lambda C: C.greater_than(2.0),
        lambda C: C.greater_than_eq(-1.0),
        lambda C: C.less_than(3.0),
        lambda C: C.unit_interval,
        lambda C: C.interval(-2.0, 5.0),
        lambda C: C.half_open_interval(0.0, 2.0),
        lambda C: C.simplex,
        lambda C: C.real_vector,
        lambda C: C.independent(C.positive, 1),
        lambda C: C.lower_cholesky,
    ],
)
def test_biject_to_and_transform_to_match_torch(make):
    rng = np.random.default_rng(16)
    f_c, t_c = make(D.constraints), make(torch.distributions.constraints)
    shape = (2, 3, 3) if f_c is D.constraints.lower_cholesky else (2, 3)
    fx, tx = pair(rng.standard_normal(shape))
    for f_reg, t_reg in (
        (D.transform_to, torch.distributions.transform_to),
        (D.biject_to, torch.distributions.biject_to),
    ):
        try:
            t_t = t_reg(t_c)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                f_reg(f_c)
            continue
        f_t = f_reg(f_c)
        fy, ty = f_t(fx), t_t(tx)
        close(fy, ty, f"{f_c} forward", rtol=1e-4, atol=1e-5)
        assert bool(f_c.check(fy).all())
        if t_t.bijective:
            close(
                f_t.log_abs_det_jacobian(fx, fy),
                t_t.log_abs_det_jacobian(tx, ty),
                f"{f_c} ladj",
                rtol=1e-4,
                atol=1e-5,
            )


def test_transform_cache_and_equality():
    t = T.TanhTransform(cache_size=1)
    x = flow.tensor([5.0, 10.0, -12.0])
    y = t(x)
    assert t.inv(y) is x  # atanh(1.0) would be inf: the cache returns the exact input
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.AffineTransform(1.0, 2.0).sign == 1 and T.AffineTransform(1.0, -2.0).sign == -1
    with pytest.raises(ValueError):
        T.ExpTransform(cache_size=2)


def test_affine_event_dim_sums_jacobian():
    f = T.AffineTransform(flow.zeros(3), flow.tensor([1.0, 2.0, 3.0]), event_dim=1)
    x = flow.randn(4, 3)
    ladj = f.log_abs_det_jacobian(x, f(x))
    assert tuple(ladj.shape) == (4,)
    np.testing.assert_allclose(np_of(ladj), np.full(4, math.log(6.0)), rtol=1e-6)


def test_tanh_squashed_gaussian_policy(device):
    """The SAC actor: Normal -> Independent -> tanh -> affine rescale; log_prob, rsample
    gradients."""
    rng = np.random.default_rng(13)
    params = {"loc": rng.standard_normal((5, 2)), "scale": _pos(rng, (5, 2), 0.2, 1.0)}
    fp, tp = leaves(params, device)
    f = D.TransformedDistribution(
        D.Independent(D.Normal(fp["loc"], fp["scale"]), 1),
        [T.TanhTransform(cache_size=1), T.AffineTransform(1.0, 2.0)],
    )
    t = TD.TransformedDistribution(
        TD.Independent(TD.Normal(tp["loc"], tp["scale"]), 1),
        [TT.TanhTransform(cache_size=1), TT.AffineTransform(1.0, 2.0)],
    )
    assert f.batch_shape == (5,) and f.event_shape == (2,) and f.has_rsample
    fv, tv = pair(rng.uniform(-0.9, 2.9, size=(3, 5, 2)), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob", rtol=1e-4, atol=1e-4)
    f.log_prob(fv).sum().backward()
    t.log_prob(tv).sum().backward()
    for key in params:
        close(fp[key].grad, tp[key].grad, f"grad {key}", rtol=1e-4, atol=1e-4)
    a = f.rsample((4,))
    assert tuple(a.shape) == (4, 5, 2)
    assert bool(((a > -1) & (a < 3)).all())
    lp = f.log_prob(a)  # through the cache
    assert tuple(lp.shape) == (4, 5) and bool(flow.isfinite(lp).all())
    fp["loc"].grad = None
    a.sum().backward()
    assert fp["loc"].grad is not None
    assert tuple(f.expand((2, 5)).sample().shape) == (2, 5, 2)


def test_transformed_distribution_cdf_icdf(device):
    rng = np.random.default_rng(14)
    loc, scale = rng.standard_normal(4), _pos(rng, 4)
    f = D.TransformedDistribution(
        D.Normal(pair(loc, device)[0], pair(scale, device)[0]),
        [T.AffineTransform(2.0, -3.0), T.ExpTransform()],
    )
    t = TD.TransformedDistribution(
        TD.Normal(pair(loc)[1], pair(scale)[1]), [TT.AffineTransform(2.0, -3.0), TT.ExpTransform()]
    )
    fv, tv = pair(_pos(rng, 4, 0.01, 5), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob")
    close(f.cdf(fv), t.cdf(tv), "cdf")
    fq, tq = pair(rng.uniform(0.05, 0.95, 4), device)
    close(f.icdf(fq), t.icdf(tq), "icdf", rtol=1e-4)


def test_lognormal_expand_and_shapes(device):
    f = D.LogNormal(flow.zeros(3, device=device), flow.ones(3, device=device))
    e = f.expand((2, 3))
    assert isinstance(e, D.LogNormal) and e.batch_shape == (2, 3)
    assert tuple(e.loc.shape) == (2, 3) and tuple(e.rsample((4,)).shape) == (4, 2, 3)


# ---- KL divergence ------------------------------------------------------------------------


def _kl_specs(rng):
    return {
        "Normal": lambda: {"loc": rng.standard_normal((2, 3)), "scale": _pos(rng, (3,))},
        "Laplace": lambda: {"loc": rng.standard_normal((2, 3)), "scale": _pos(rng, (2, 3))},
        "Exponential": lambda: {"rate": _pos(rng, (2, 3))},
        "Gamma": lambda: {"concentration": _pos(rng, (2, 3)), "rate": _pos(rng, (2, 3))},
        "Beta": lambda: {"concentration1": _pos(rng, (2, 3)), "concentration0": _pos(rng, (3,))},
        "Dirichlet": lambda: {"concentration": _pos(rng, (2, 4))},
        "Poisson": lambda: {"rate": _pos(rng, (2, 3))},
        "HalfNormal": lambda: {"scale": _pos(rng, (2, 3))},
        "Cauchy": lambda: {"loc": rng.standard_normal((2, 3)), "scale": _pos(rng, (3,))},
        "Gumbel": lambda: {"loc": rng.standard_normal((2, 3)), "scale": _pos(rng, (2, 3))},
        "Chi2": lambda: {"df": _pos(rng, (2, 3), 1, 6)},
        "Pareto": lambda: {"scale": _pos(rng, (2, 3), 0.1, 0.5), "alpha": _pos(rng, (2, 3))},
        "Categorical": lambda: {"probs": _simplex(rng, (2, 4))},
        "OneHotCategorical": lambda: {"logits": rng.standard_normal((2, 4))},
        "Bernoulli": lambda: {"probs": _unit(rng, (2, 3))},
        "Geometric": lambda: {"probs": _unit(rng, (2, 3))},
        "Binomial": lambda: {"total_count": 4.0, "logits": rng.standard_normal((2, 3))},
    }


@pytest.mark.parametrize(
    "name",
    [
        "Normal",
        "Laplace",
        "Exponential",
        "Gamma",
        "Beta",
        "Dirichlet",
        "Poisson",
        "HalfNormal",
        "Cauchy",
        "Gumbel",
        "Chi2",
        "Pareto",
        "Categorical",
        "OneHotCategorical",
        "Bernoulli",
        "Geometric",
        "Binomial",
    ],
)
def test_kl_matches_torch(name, device):
    rng = np.random.default_rng(21)
    make = _kl_specs(rng)[name]
    pf, pt, fp_, tp_ = _build(name, make(), device)
    qf, qt, fq_, tq_ = _build(name, make(), device)
    f_kl, t_kl = D.kl_divergence(fp_, fq_), TD.kl_divergence(tp_, tq_)
    close(f_kl, t_kl, f"KL {name}", rtol=1e-4, atol=1e-5)
    assert bool((f_kl >= -1e-5).all())
    f_kl.sum().backward()
    t_kl.sum().backward()
    for side_f, side_t in ((pf, pt), (qf, qt)):
        for key in side_f:
            if isinstance(side_f[key], flow.Tensor):
                close(side_f[key].grad, side_t[key].grad, f"KL {name} grad {key}", 1e-4, 1e-4)
    # KL of a distribution with itself is 0
    np.testing.assert_allclose(np_of(D.kl_divergence(fp_, fp_)), 0, atol=1e-5)


def test_kl_uniform_and_infinite_cases(device):
    low, high = pair(np.array([0.0, 0.0, 1.0]), device), pair(np.array([1.0, 2.0, 2.0]), device)
    low2, high2 = pair(np.array([-1.0, 0.5, 0.0]), device), pair(np.array([2.0, 3.0, 3.0]), device)
    f = D.kl_divergence(D.Uniform(low[0], high[0]), D.Uniform(low2[0], high2[0]))
    t = TD.kl_divergence(TD.Uniform(low[1], high[1]), TD.Uniform(low2[1], high2[1]))
    close(f, t, "uniform")
    # a zero-probability class of q where p has mass: infinite; p's zeros contribute 0
    p = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    q = np.array([[0.3, 0.7, 0.0], [0.5, 0.5, 0.0]])
    f = D.kl_divergence(D.Categorical(pair(p, device)[0]), D.Categorical(pair(q, device)[0]))
    t = TD.kl_divergence(TD.Categorical(pair(p)[1]), TD.Categorical(pair(q)[1]))
    close(f, t, "categorical")
    pb, qb = np.array([0.0, 1.0, 0.3, 0.4]), np.array([0.5, 0.5, 0.0, 1.0])
    f = D.kl_divergence(D.Bernoulli(pair(pb, device)[0]), D.Bernoulli(pair(qb, device)[0]))
    t = TD.kl_divergence(TD.Bernoulli(pair(pb)[1]), TD.Bernoulli(pair(qb)[1]))
    close(f, t, "bernoulli")


def test_kl_multivariate_normal_matches_torch(device):
    rng = np.random.default_rng(22)
    k = 3
    params_p = {
        "loc": rng.standard_normal((2, k)),
        "scale_tril": np.linalg.cholesky(_spd(rng, (2,), k)),
    }
    params_q = {"loc": rng.standard_normal((k,)), "covariance_matrix": _spd(rng, (1,), k)}
    pf, pt = leaves(params_p, device)
    qf, qt = leaves(params_q, device)
    f = D.kl_divergence(D.MultivariateNormal(**pf), D.MultivariateNormal(**qf))
    t = TD.kl_divergence(TD.MultivariateNormal(**pt), TD.MultivariateNormal(**qt))
    close(f, t, "KL mvn", rtol=1e-4)
    f.sum().backward()
    t.sum().backward()
    close(pf["loc"].grad, pt["loc"].grad, "grad p loc", 1e-4, 1e-4)
    close(qf["loc"].grad, qt["loc"].grad, "grad q loc", 1e-4, 1e-4)
    np.testing.assert_allclose(
        np.tril(np_of(pf["scale_tril"].grad)), np.tril(np_of(pt["scale_tril"].grad)), 1e-3, 1e-4
    )
    np.testing.assert_allclose(
        _sym(np_of(qf["covariance_matrix"].grad)),
        _sym(np_of(qt["covariance_matrix"].grad)),
        1e-3,
        1e-4,
    )


def test_kl_independent_and_transformed(device):
    rng = np.random.default_rng(23)
    a = [pair(x, device) for x in (rng.standard_normal((2, 3)), _pos(rng, (2, 3)))]
    b = [pair(x, device) for x in (rng.standard_normal((2, 3)), _pos(rng, (2, 3)))]
    f = D.kl_divergence(
        D.Independent(D.Normal(a[0][0], a[1][0]), 1), D.Independent(D.Normal(b[0][0], b[1][0]), 1)
    )
    t = TD.kl_divergence(
        TD.Independent(TD.Normal(a[0][1], a[1][1]), 1),
        TD.Independent(TD.Normal(b[0][1], b[1][1]), 1),
    )
    close(f, t, "independent")
    assert tuple(f.shape) == (2,)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(
            D.Independent(D.Normal(a[0][0], a[1][0]), 1),
            D.Independent(D.Normal(b[0][0], b[1][0]), 2),
        )
    f = D.kl_divergence(D.LogNormal(a[0][0], a[1][0]), D.LogNormal(b[0][0], b[1][0]))
    t = TD.kl_divergence(TD.LogNormal(a[0][1], a[1][1]), TD.LogNormal(b[0][1], b[1][1]))
    close(f, t, "lognormal")


def test_register_kl_dispatch():
    class MyNormal(D.Normal):
        pass

    class MyOtherNormal(MyNormal):
        pass

    p = MyOtherNormal(0.0, 1.0)
    q = D.Normal(1.0, 2.0)
    # inherited: the Normal-Normal formula (and Chi2 uses Gamma's)
    chi2 = D.kl_divergence(D.Chi2(flow.tensor(3.0)), D.Chi2(flow.tensor(5.0)))
    expected = TD.kl_divergence(TD.Chi2(torch.tensor(3.0)), TD.Chi2(torch.tensor(5.0)))
    np.testing.assert_allclose(float(chi2), float(expected), rtol=1e-5)
    np.testing.assert_allclose(
        np_of(D.kl_divergence(p, q)), np_of(D.kl_divergence(D.Normal(0.0, 1.0), q))
    )

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return flow.tensor(42.0)

    assert float(D.kl_divergence(p, q)) == 42.0  # the most specific registration wins
    assert float(D.kl_divergence(q, p)) != 42.0

    class Unregistered(D.Distribution):
        arg_constraints = {}

    with pytest.raises(NotImplementedError):
        D.kl_divergence(Unregistered(), q)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Beta(1.0, 2.0), D.Normal(0.0, 1.0))
    assert D.kl.kl_divergence is D.kl_divergence and D.TanhTransform is T.TanhTransform
    with pytest.raises(TypeError):
        D.register_kl(1, D.Normal)


# ---- sampling -----------------------------------------------------------------------------


def _check_moments(x, mean, var, what, n_se=5.0):
    """Sample mean and variance along dim 0 within n_se standard errors (the variance's standard
    error estimated from the squared deviations themselves)."""
    x = x.astype(np.float64)
    n = x.shape[0]
    mean, var = np.broadcast_to(mean, x.shape[1:]), np.broadcast_to(var, x.shape[1:])
    se_mean = np.sqrt(var / n)
    assert np.all(np.abs(x.mean(0) - mean) < n_se * se_mean + 1e-6), (
        what,
        x.mean(0),
        mean,
    )
    sq = (x - x.mean(0)) ** 2
    se_var = sq.std(0) / np.sqrt(n)
    assert np.all(np.abs(sq.mean(0) - var) < n_se * se_var + 1e-6), (what, sq.mean(0), var)


SAMPLING = {
    "Laplace": {"loc": np.array([0.0, 2.0]), "scale": np.array([1.0, 0.5])},
    "Exponential": {"rate": np.array([0.5, 3.0])},
    "Gamma": {"concentration": np.array([0.2, 0.7, 1.0, 4.0, 30.0]), "rate": np.array(2.0)},
    "Beta": {
        "concentration1": np.array([0.3, 2.0, 5.0]),
        "concentration0": np.array([0.6, 2.0, 1.0]),
    },
    "StudentT": {"df": np.array([5.0, 9.0]), "loc": np.array([1.0, -1.0]), "scale": np.array(2.0)},
    "LogNormal": {"loc": np.array([0.0, 1.0]), "scale": np.array([0.3, 0.5])},
    "Poisson": {"rate": np.array([0.0, 0.3, 4.0, 9.9, 10.0, 37.0, 400.0, 1e5])},
    "Binomial": {"total_count": np.array([1.0, 10.0, 100.0]), "probs": np.array([0.3, 0.5, 0.9])},
    "Geometric": {"probs": np.array([0.1, 0.5, 0.9])},
    "Chi2": {"df": np.array([0.5, 3.0, 20.0])},
    "HalfNormal": {"scale": np.array([0.5, 2.0])},
    "Gumbel": {"loc": np.array([0.0, 3.0]), "scale": np.array([1.0, 0.5])},
    "Weibull": {"scale": np.array([1.0, 2.0]), "concentration": np.array([0.8, 3.0])},
    "Pareto": {"scale": np.array([1.0, 2.0]), "alpha": np.array([5.0, 9.0])},
    "NegativeBinomial": {
        "total_count": np.array([0.5, 3.0, 20.0]),
        "probs": np.array([0.3, 0.5, 0.8]),
    },
    "Multinomial": {"total_count": 10, "probs": np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])},
    "Dirichlet": {"concentration": np.array([[0.5, 1.0, 3.0], [2.0, 2.0, 2.0]])},
    "OneHotCategorical": {"probs": np.array([0.2, 0.3, 0.5])},
}


@pytest.mark.parametrize("name", sorted(SAMPLING))
def test_sampling_statistics(name, device):
    fp, _ = leaves(SAMPLING[name], device, requires_grad=False)
    d = getattr(D, name)(**fp)
    x = d.sample((N_SAMPLES,))
    assert tuple(x.shape) == (N_SAMPLES,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert bool(d.support.check(x).all()), name
    _check_moments(np_of(x), np_of(d.mean), np_of(d.variance), name)


def test_gamma_sampler_distribution(device):
    """Kolmogorov-Smirnov distance between Gamma samples and torch's Gamma cdf."""
    conc = np.array([0.1, 0.5, 1.5, 8.0])
    d = D.Gamma(pair(conc, device)[0], 1.0)
    x = np.sort(np_of(d.sample((N_SAMPLES,))), axis=0)
    cdf = TD.Gamma(torch.tensor(conc, dtype=torch.float64), 1.0).cdf(
        torch.tensor(x, dtype=torch.float64)
    )
    empirical = np.arange(1, N_SAMPLES + 1)[:, None] / N_SAMPLES
    ks = np.abs(cdf.numpy() - empirical).max(0)
    assert np.all(ks < 1.95 / math.sqrt(N_SAMPLES)), ks  # the 0.1% critical value


def test_poisson_sampler_frequencies(device):
    rates = np.array([2.5, 25.0])
    d = D.Poisson(pair(rates, device)[0])
    x = np_of(d.sample((N_SAMPLES,)))
    assert np.all(x == np.round(x))
    for j, rate in enumerate(rates):
        ks = np.arange(0, int(rate * 3))
        pmf = np.exp(
            np_of(D.Poisson(flow.tensor(rate)).log_prob(flow.tensor(ks, dtype=flow.float32)))
        )
        freq = np.array([(x[:, j] == k).mean() for k in ks])
        assert np.all(np.abs(freq - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / N_SAMPLES) + 1e-4)


@pytest.mark.parametrize(
    "name",
    [
        "Laplace",
        "Exponential",
        "Gamma",
        "Chi2",
        "Beta",
        "StudentT",
        "LogNormal",
        "Dirichlet",
        "HalfNormal",
        "Gumbel",
        "Weibull",
        "Pareto",
    ],
)
def test_rsample_shapes_and_gradients(name, device):
    params = {k: v for k, v in SAMPLING[name].items()}
    fp, _ = leaves(params, device)
    d = getattr(D, name)(**fp)
    assert d.has_rsample
    x = d.rsample((3, 2))
    assert tuple(x.shape) == (3, 2) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert x.requires_grad
    assert not d.sample((3,)).requires_grad
    x.sum().backward()  # every parameter gets a gradient
    for key, v in fp.items():
        assert v.grad is not None and bool(flow.isfinite(v.grad).all()), (name, key)


def test_gamma_implicit_gradient_matches_torch():
    conc = np.array([0.05, 0.4, 1.0, 3.0, 30.0, 150.0, 500.0])
    a = flow.tensor(np.repeat(conc, 200), dtype=flow.float32, requires_grad=True)
    x = D.Gamma(a, 1.0).rsample()
    x.sum().backward()
    expected = torch._standard_gamma_grad(
        torch.tensor(np_of(a), dtype=torch.float32), torch.tensor(np_of(x))
    )
    np.testing.assert_allclose(np_of(a.grad), expected.numpy(), rtol=3e-3, atol=1e-6)


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet", "StudentT"])
def test_rsample_gradient_of_mean(name, device):
    """The mean over samples of d(sample)/d(parameter) estimates d(mean)/d(parameter)."""
    params = {
        "Gamma": {"concentration": np.array([0.3, 2.0, 9.0]), "rate": np.array([1.5, 1.0, 0.5])},
        "Beta": {"concentration1": np.array([0.5, 2.0]), "concentration0": np.array([1.5, 4.0])},
        "Dirichlet": {"concentration": np.array([0.7, 2.0, 3.0])},
        "StudentT": {"df": np.array([6.0]), "loc": np.array([1.0]), "scale": np.array([2.0])},
    }[name]
    fp, _ = leaves(params, device)
    d = getattr(D, name)(**fp)
    x = d.rsample((N_SAMPLES,))
    fn = {"StudentT": lambda v: v.abs()}.get(name, lambda v: v)  # E|T| depends on df
    estimate = fn(x).reshape(N_SAMPLES, -1)
    tp = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    t = getattr(TD, name)(**tp)
    if name == "StudentT":
        # E|T| (E[T] = loc does not depend on df) by quadrature.
        grid = torch.linspace(-60, 60, 200001, dtype=torch.float64)
        density = t.log_prob(grid.unsqueeze(-1)).exp()
        exact = (grid.abs().unsqueeze(-1) * density).sum(0) * (grid[1] - grid[0])
    else:
        exact = t.mean.reshape(-1)
    for j in range(estimate.shape[1]):
        for v in fp.values():
            v.grad = None
        for v in tp.values():
            v.grad = None
        per_sample = []
        estimate[:, j].sum().backward(retain_graph=True)
        exact[j].backward(retain_graph=True)
        for key in fp:
            g = np_of(fp[key].grad) / N_SAMPLES
            tg = tp[key].grad.numpy()
            per_sample.append((key, g, tg))
        for key, g, tg in per_sample:
            np.testing.assert_allclose(g, tg, rtol=0.03, atol=0.005, err_msg=f"{name} {key} {j}")


def test_rsample_gradients_match_pathwise_formula(device):
    """d(sample)/d(rate) for Exponential and Gamma is -sample / rate; for Laplace d/dloc = 1."""
    rate = flow.tensor([0.5, 2.0], requires_grad=True, device=device)
    for d in (D.Exponential(rate), D.Gamma(flow.tensor([3.0, 0.4], device=device), rate)):
        rate.grad = None
        x = d.rsample((1000,))
        x.sum().backward()
        expected = -(x.detach() / rate.detach()).sum(0)
        np.testing.assert_allclose(np_of(rate.grad), np_of(expected), rtol=1e-4)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_expand_shapes(name, device):
    make_params, make_value, _ = SPECS[name]
    rng = np.random.default_rng(31)
    fp, _ = leaves(make_params(rng), device, requires_grad=False)
    d = getattr(D, name)(**fp)
    e = d.expand((5,) + tuple(d.batch_shape))
    assert type(e) is type(d)
    assert e.batch_shape == (5,) + tuple(d.batch_shape) and e.event_shape == d.event_shape
    assert tuple(e.sample((2,)).shape) == (2, 5) + tuple(d.batch_shape) + tuple(d.event_shape)
    v = make_value(rng)
    while v.ndim > len(d.batch_shape) + len(d.event_shape):
        v = v[0]
    v = flow.tensor(v, dtype=flow.float32, device=device)
    lp = e.log_prob(v)
    np.testing.assert_allclose(
        np_of(lp), np.broadcast_to(np_of(d.log_prob(v)), tuple(lp.shape)), rtol=1e-6
    )
    assert tuple(d.sample().shape) == tuple(d.batch_shape) + tuple(d.event_shape)


def test_validation_errors():
    with pytest.raises(ValueError):
        D.Gamma(flow.tensor([-1.0]), flow.tensor([1.0]))
    with pytest.raises(ValueError):
        D.Beta(flow.tensor([1.0]), flow.tensor([0.0]))
    with pytest.raises(ValueError):
        D.Dirichlet(flow.tensor(1.0))
    with pytest.raises(ValueError):
        D.Exponential(flow.tensor([1.0])).log_prob(flow.tensor([-1.0]))
    with pytest.raises(ValueError):
        D.Poisson(flow.tensor([1.0])).log_prob(flow.tensor([0.5]))
    with pytest.raises(ValueError):
        D.Binomial(5, probs=flow.tensor([0.5])).log_prob(flow.tensor([6.0]))
    with pytest.raises(ValueError):
        D.OneHotCategorical(flow.tensor([0.5, 0.5])).log_prob(flow.tensor([1.0, 1.0]))
    with pytest.raises(ValueError):
        D.Binomial(5)


# ---- probs / logits constructors ----------------------------------------------------------

PROBS_OR_LOGITS = {
    # name: (flow constructor, torch constructor, extra arguments, parameter shape)
    "Bernoulli": (D.Bernoulli, TD.Bernoulli, {}, (2, 3)),
    "Binomial": (D.Binomial, TD.Binomial, {"total_count": 5}, (2, 3)),
    "NegativeBinomial": (D.NegativeBinomial, TD.NegativeBinomial, {"total_count": 3.0}, (2, 3)),
    "Geometric": (D.Geometric, TD.Geometric, {}, (2, 3)),
    "Categorical": (D.Categorical, TD.Categorical, {}, (2, 4)),
    "OneHotCategorical": (D.OneHotCategorical, TD.OneHotCategorical, {}, (2, 4)),
    "Multinomial": (D.Multinomial, TD.Multinomial, {"total_count": 4}, (2, 4)),
    "LogitRelaxedBernoulli": (
        D.relaxed.LogitRelaxedBernoulli,
        TD.relaxed_bernoulli.LogitRelaxedBernoulli,
        {"temperature": 0.5},
        (2, 3),
    ),
    "RelaxedBernoulli": (D.RelaxedBernoulli, TD.RelaxedBernoulli, {"temperature": 0.5}, (2, 3)),
    "ExpRelaxedCategorical": (
        D.relaxed.ExpRelaxedCategorical,
        TD.relaxed_categorical.ExpRelaxedCategorical,
        {"temperature": 0.5},
        (2, 4),
    ),
    "RelaxedOneHotCategorical": (
        D.RelaxedOneHotCategorical,
        TD.RelaxedOneHotCategorical,
        {"temperature": 0.5},
        (2, 4),
    ),
}


_HOLDS_PROBS_OR_LOGITS = (
    "Bernoulli",
    "Binomial",
    "NegativeBinomial",
    "Geometric",
    "Categorical",
    "LogitRelaxedBernoulli",
)


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("name", sorted(PROBS_OR_LOGITS))
def test_probs_or_logits_errors_match_torch(name):
    f_cls, t_cls, extra, shape = PROBS_OR_LOGITS[name]
    if name.startswith("Relaxed") or name.startswith("ExpRelaxed") or "Logit" in name:
        f_extra = {"temperature": flow.tensor(extra["temperature"])}
        t_extra = {"temperature": torch.tensor(extra["temperature"])}
    else:
        f_extra = t_extra = extra
    p = np.full(shape, 1.0 / shape[-1])
    for kwargs in ({}, {"probs": p, "logits": np.zeros(shape)}):
        fk = {k: flow.tensor(v, dtype=flow.float32) for k, v in kwargs.items()}
        tk = {k: torch.tensor(v, dtype=torch.float32) for k, v in kwargs.items()}
        f_err = _raised(lambda fk=fk: f_cls(**f_extra, **fk))
        t_err = _raised(lambda tk=tk: t_cls(**t_extra, **tk))
        assert t_err is not None and t_err[0] is ValueError, (name, t_err)
        assert f_err == t_err, (name, f_err, t_err)
    # An invalid probability is rejected with validation on; with it off, as torch (whose
    # wrappers of a Categorical or a base distribution validate that one regardless).
    bad = p.copy()
    bad.flat[0] = -0.5
    with pytest.raises(ValueError):
        f_cls(**f_extra, probs=flow.tensor(bad, dtype=flow.float32))
    with pytest.raises(ValueError):
        t_cls(**t_extra, probs=torch.tensor(bad, dtype=torch.float32))
    f_err = _raised(
        lambda: f_cls(**f_extra, probs=flow.tensor(bad, dtype=flow.float32), validate_args=False)
    )
    t_err = _raised(
        lambda: t_cls(**t_extra, probs=torch.tensor(bad, dtype=torch.float32), validate_args=False)
    )
    assert (f_err is None) == (t_err is None) and (f_err is None or f_err[0] is t_err[0])
    if name in ("Bernoulli", "Binomial", "Geometric", "Categorical", "LogitRelaxedBernoulli"):
        assert f_err is None


@pytest.mark.parametrize("name", sorted(PROBS_OR_LOGITS))
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_probs_or_logits_parameters_match_torch(name, param, device):
    f_cls, t_cls, extra, shape = PROBS_OR_LOGITS[name]
    if "temperature" in extra:
        f_extra = {"temperature": flow.tensor(extra["temperature"], device=device)}
        t_extra = {"temperature": torch.tensor(extra["temperature"])}
    else:
        f_extra = t_extra = extra
    rng = np.random.default_rng(53)
    if param == "probs":
        value = _simplex(rng, shape) if shape[-1] == 4 else _unit(rng, shape)
    else:
        value = rng.standard_normal(shape)
    fp, tp = leaves({param: value}, device)
    f, t = f_cls(**f_extra, **fp), t_cls(**t_extra, **tp)
    other = "logits" if param == "probs" else "probs"
    # The parameter not given is computed on first use only (the wrappers of a Categorical or
    # a base distribution read both when validating their arguments, as torch's).
    lazy = name in _HOLDS_PROBS_OR_LOGITS
    if lazy:
        assert param in f.__dict__ and other not in f.__dict__
    assert f.batch_shape == tuple(t.batch_shape) and f.event_shape == tuple(t.event_shape)
    close(f.probs, t.probs, f"{name}.probs", rtol=1e-5, atol=1e-6)
    close(f.logits, t.logits, f"{name}.logits", rtol=1e-5, atol=1e-5)
    if lazy:
        assert other in f.__dict__
    if hasattr(t, "param_shape"):
        assert tuple(f.param_shape) == tuple(t.param_shape)
    # expand keeps the parameters computed so far, expanded.
    e = f.expand((3,) + tuple(f.batch_shape))
    assert type(e) is type(f) and e.batch_shape == (3,) + tuple(f.batch_shape)
    close(e.probs, t.expand((3,) + tuple(t.batch_shape)).probs, f"{name} expanded", atol=1e-6)
    assert e._validate_args == f._validate_args
    # The expansion of an unevaluated distribution still computes the other lazily.
    g = f_cls(**f_extra, **fp)
    ge = g.expand((3,) + tuple(g.batch_shape))
    if lazy:
        assert param in ge.__dict__ and other not in ge.__dict__
    close(ge.logits, e.logits, f"{name} lazy after expand", atol=1e-5)
    close(ge.probs, e.probs, f"{name} lazy after expand", atol=1e-6)


def test_probs_or_logits_numbers_give_scalar_batch():
    for f in (
        D.Bernoulli(0.3),
        D.Geometric(logits=0.2),
        D.Binomial(4, 0.3),
        D.NegativeBinomial(2.0, logits=-1.0),
        D.relaxed.LogitRelaxedBernoulli(0.5, probs=0.4),
    ):
        assert f.batch_shape == () and f._param.ndim == 0, type(f).__name__
    b = D.Binomial(flow.tensor([3.0, 5.0]), probs=0.5)
    assert b.batch_shape == (2,) and tuple(b.probs.shape) == (2,)
