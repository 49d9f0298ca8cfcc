"""oneflow.distributions against torch.distributions, continued from test_distributions_extra.py
(whose helpers it uses): VonMises, LowRankMultivariateNormal, Wishart and LKJCholesky against
torch and their analytic moments; ContinuousBernoulli, FisherSnedecor, GeneralizedPareto,
HalfCauchy, InverseGamma, Kumaraswamy, LogisticNormal and OneHotCategoricalStraightThrough; the
transforms added with them; the KL divergences of the new distributions and the exponential
families."""

import math
import warnings

import numpy as np
import pytest
import torch
from test_distributions_extra import (
    N_SAMPLES,
    TD,
    TT,
    _build,
    _check_moments,
    _one_hot,
    _pos,
    _raised,
    _simplex,
    _spd,
    _sym,
    _unit,
    close,
    leaves,
    np_of,
    pair,
    torch_value,
)

import oneflow as flow
import oneflow.distributions as D
from oneflow.distributions import transforms as T

# ---- VonMises -----------------------------------------------------------------------------


def test_von_mises_matches_torch(device):
    rng = np.random.default_rng(61)
    params = {"loc": rng.standard_normal((2, 1)) * 2, "concentration": _pos(rng, (3,), 0.05, 30)}
    fp, tp = leaves(params, device)
    f, t = D.VonMises(**fp), TD.VonMises(**tp)
    assert f.batch_shape == tuple(t.batch_shape) == (2, 3) and f.event_shape == ()
    assert not f.has_rsample and f.support is D.constraints.real
    assert set(f.arg_constraints) == set(t.arg_constraints)
    fv, tv = pair(rng.uniform(-9, 9, size=(4, 2, 3)), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob", rtol=1e-5, atol=2e-5)
    for attr in ["mean", "mode", "variance"]:
        close(getattr(f, attr), getattr(t, attr), attr, rtol=1e-5, atol=1e-6)
    (f.log_prob(fv).sum() + f.variance.sum()).backward()
    (t.log_prob(tv).sum() + t.variance.sum()).backward()
    for key in fp:
        close(fp[key].grad, tp[key].grad, f"grad {key}", rtol=1e-4, atol=1e-4)
    assert tuple(f.sample((5,)).shape) == (5, 2, 3)
    e = f.expand((4, 2, 3))
    assert type(e) is D.VonMises and tuple(e.sample((2,)).shape) == (2, 4, 2, 3)
    close(e.log_prob(fv[0]), f.log_prob(fv[0]).expand(4, 2, 3), "expanded log_prob")
    with pytest.raises(NotImplementedError):
        f.rsample()
    with pytest.raises(ValueError):
        D.VonMises(flow.tensor([0.0]), flow.tensor([-1.0]))


def test_von_mises_density_integrates_to_one():
    grid = np.linspace(-math.pi, math.pi, 20001)
    d = D.VonMises(flow.tensor([[0.3], [2.5]]), flow.tensor([[0.01, 1.0, 8.0, 200.0]]))
    density = np.exp(np_of(d.log_prob(flow.tensor(grid[:, None, None], dtype=flow.float32))))
    integral = density[:-1].sum(0) * (grid[1] - grid[0])
    np.testing.assert_allclose(integral, 1.0, rtol=1e-4)


def test_von_mises_sampling_statistics(device):
    loc = np.array([0.5, -3.0, 2.0, 3.1])
    conc = np.array([1e-6, 0.5, 4.0, 300.0])
    d = D.VonMises(pair(loc, device)[0], pair(conc, device)[0])
    x = np_of(d.sample((N_SAMPLES,))).astype(np.float64)
    assert x.shape == (N_SAMPLES, 4) and x.dtype == np.float64
    assert np.all(x >= -math.pi) and np.all(x < math.pi)
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance, and E[sin(x - loc)] = 0.
    cos, sin = np.cos(x - loc), np.sin(x - loc)
    n_se = 5 / math.sqrt(N_SAMPLES)
    assert np.all(np.abs(cos.mean(0) - (1 - np_of(d.variance))) < n_se * cos.std(0) + 1e-6)
    assert np.all(np.abs(sin.mean(0)) < n_se * sin.std(0) + 1e-6)
    # Frequencies against the density on a few arcs.
    edges = np.linspace(-math.pi, math.pi, 9)
    grid = np.linspace(-math.pi, math.pi, 8001)
    density = np.exp(
        np_of(
            D.VonMises(flow.tensor(loc), flow.tensor(conc)).log_prob(
                flow.tensor(grid[:, None], dtype=flow.float32)
            )
        )
    )
    for j in range(4):
        for a, b in zip(edges[:-1], edges[1:]):
            inside = (grid >= a) & (grid < b)
            p = density[inside, j].sum() * (grid[1] - grid[0])
            freq = ((x[:, j] >= a) & (x[:, j] < b)).mean()
            assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / N_SAMPLES) + 2e-3, (j, a, freq, p)


def test_von_mises_sample_reproducible_under_manual_seed():
    d = D.VonMises(flow.tensor([0.0, 1.0]), flow.tensor([0.5, 5.0]))
    flow.manual_seed(123)
    a = d.sample((50,))
    flow.manual_seed(123)
    b = d.sample((50,))
    assert bool((a == b).all())
    assert not bool((a == d.sample((50,))).all())


# ---- LowRankMultivariateNormal ------------------------------------------------------------


def _low_rank_params(rng):
    return {
        "loc": rng.standard_normal((4, 5)),
        "cov_factor": rng.standard_normal((2, 1, 5, 2)),
        "cov_diag": _pos(rng, (5,), 0.3, 2.0),
    }


def test_low_rank_multivariate_normal_matches_torch(device):
    rng = np.random.default_rng(67)
    fp, tp = leaves(_low_rank_params(rng), device)
    f, t = D.LowRankMultivariateNormal(**fp), TD.LowRankMultivariateNormal(**tp)
    assert f.batch_shape == tuple(t.batch_shape) == (2, 4) and f.event_shape == (5,)
    assert f.has_rsample and set(f.arg_constraints) == set(t.arg_constraints)
    fv, tv = pair(rng.standard_normal((3, 2, 4, 5)), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob", rtol=1e-5, atol=1e-5)
    close(f.entropy(), t.entropy(), "entropy")
    for attr in [
        "mean",
        "mode",
        "variance",
        "stddev",
        "scale_tril",
        "covariance_matrix",
        "precision_matrix",
    ]:
        close(getattr(f, attr), getattr(t, attr), attr, rtol=1e-5, atol=1e-5)
    for lib_d, lib_v in ((f, fv), (t, tv)):
        (
            lib_d.log_prob(lib_v).sum()
            + lib_d.entropy().sum()
            + lib_d.precision_matrix.sum() * 0.1
            + lib_d.scale_tril.sum() * 0.1
        ).backward()
    for key in fp:
        close(fp[key].grad, tp[key].grad, f"grad {key}", rtol=1e-4, atol=1e-4)
    assert tuple(f.rsample((6,)).shape) == (6, 2, 4, 5)
    e = f.expand((3, 2, 4))
    assert type(e) is D.LowRankMultivariateNormal and e.batch_shape == (3, 2, 4)
    assert tuple(e.cov_factor.shape) == (3, 2, 4, 5, 2) and tuple(e.sample().shape) == (3, 2, 4, 5)
    close(e.log_prob(fv[0]), f.log_prob(fv[0]).expand(3, 2, 4), "expanded log_prob", atol=1e-5)
    close(e.entropy(), f.entropy().expand(3, 2, 4), "expanded entropy")


def test_low_rank_multivariate_normal_agrees_with_full_covariance(device):
    rng = np.random.default_rng(71)
    fp, _ = leaves(_low_rank_params(rng), device, requires_grad=False)
    low = D.LowRankMultivariateNormal(**fp)
    full = D.MultivariateNormal(low.loc, covariance_matrix=low.covariance_matrix)
    fv, _ = pair(rng.standard_normal((3, 2, 4, 5)), device)
    close(low.log_prob(fv), full.log_prob(fv), "log_prob", rtol=1e-4, atol=1e-4)
    close(low.entropy(), full.entropy(), "entropy", rtol=1e-5, atol=1e-5)


def test_low_rank_multivariate_normal_sampling(device):
    loc = np.array([1.0, -2.0, 0.5, 0.0])
    W = np.array([[1.0, 0.2], [0.5, -0.4], [-1.0, 0.3], [0.0, 1.0]])
    diag = np.array([0.5, 1.0, 0.2, 0.3])
    fp, _ = leaves({"loc": loc, "cov_factor": W, "cov_diag": diag}, device)
    d = D.LowRankMultivariateNormal(**fp)
    cov = W @ W.T + np.diag(diag)
    x = np_of(d.sample((N_SAMPLES,))).astype(np.float64)
    assert not d.sample().requires_grad
    _check_moments(x, loc, np.diag(cov), "LowRankMultivariateNormal")
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    # Pathwise gradients: E[sum x^2] = |loc|^2 + sum W^2 + sum diag, so the mean over samples of
    # d(sum x^2) estimates 2 loc, 2 W and 1.
    y = d.rsample((N_SAMPLES,))
    assert y.requires_grad
    (y.pow(2).sum() / N_SAMPLES).backward()
    np.testing.assert_allclose(np_of(fp["loc"].grad), 2 * loc, atol=0.06)
    np.testing.assert_allclose(np_of(fp["cov_factor"].grad), 2 * W, atol=0.08)
    np.testing.assert_allclose(np_of(fp["cov_diag"].grad), np.ones(4), atol=0.08)


def test_low_rank_multivariate_normal_errors_match_torch():
    cases = [
        lambda lib: (lib.tensor(0.0), lib.ones(1, 1), lib.ones(1)),
        lambda lib: (lib.zeros(3), lib.ones(3), lib.ones(3)),
        lambda lib: (lib.zeros(3), lib.ones(2, 1), lib.ones(3)),
        lambda lib: (lib.zeros(3), lib.ones(3, 1), lib.ones(2)),
        lambda lib: (lib.zeros(2, 3), lib.ones(4, 3, 1), lib.ones(3)),
    ]
    for make in cases:
        t_err = _raised(lambda make=make: TD.LowRankMultivariateNormal(*make(torch)))
        f_err = _raised(lambda make=make: D.LowRankMultivariateNormal(*make(flow)))
        assert t_err is not None and f_err is not None and f_err[0] is t_err[0], (f_err, t_err)
    # A nonpositive cov_diag: torch's Cholesky factorisation of the capacitance matrix fails
    # before its argument check; here the check comes first and raises ValueError.
    with pytest.raises(ValueError, match="cov_diag"):
        D.LowRankMultivariateNormal(flow.zeros(3), flow.ones(3, 1), -flow.ones(3))


# ---- Wishart ------------------------------------------------------------------------------


def _wishart_params(rng, kind):
    cov = _spd(rng, (2,), 3)
    matrix = np.linalg.cholesky(cov) if kind == "scale_tril" else cov
    if kind == "precision_matrix":
        matrix = np.linalg.inv(cov)
        matrix = (matrix + matrix.swapaxes(-1, -2)) / 2
    return {"df": np.array([3.5, 6.0]), kind: matrix}, cov


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_matches_torch(kind, device):
    rng = np.random.default_rng(73)
    params, cov = _wishart_params(rng, kind)
    fp, tp = leaves(params, device)
    f, t = D.Wishart(**fp), TD.Wishart(**tp)
    assert f.batch_shape == tuple(t.batch_shape) == (2,) and f.event_shape == (3, 3)
    assert f.has_rsample and set(f.arg_constraints) == set(t.arg_constraints)
    b = rng.standard_normal((4, 2, 3, 3))
    fv, tv = pair(b @ b.swapaxes(-1, -2) + np.eye(3), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob", rtol=1e-4, atol=1e-4)
    close(f.entropy(), t.entropy(), "entropy", rtol=1e-5, atol=1e-4)
    for attr in ["mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"]:
        fa, ta = np_of(getattr(f, attr)), np_of(getattr(t, attr))
        np.testing.assert_allclose(fa, ta, rtol=1e-4, atol=1e-4, err_msg=attr)  # NaN modes too
    assert np.isnan(np_of(f.mode)[0]).all() and not np.isnan(np_of(f.mode)[1]).any()
    (f.log_prob(fv).sum() + f.entropy().sum() + f.mean.sum() * 0.1).backward()
    (t.log_prob(tv).sum() + t.entropy().sum() + t.mean.sum() * 0.1).backward()
    close(fp["df"].grad, tp["df"].grad, "grad df", rtol=1e-4, atol=1e-4)
    fg, tg = np_of(fp[kind].grad), np_of(tp[kind].grad)
    fg, tg = (np.tril(fg), np.tril(tg)) if kind == "scale_tril" else (_sym(fg), _sym(tg))
    np.testing.assert_allclose(fg, tg, rtol=1e-3, atol=1e-3, err_msg=f"grad {kind}")


def test_wishart_number_df_and_expand(device):
    cov = _spd(np.random.default_rng(79), (2,), 3)
    fc, tc = pair(cov, device)
    f, t = D.Wishart(5, covariance_matrix=fc), TD.Wishart(5, covariance_matrix=tc)
    assert f.batch_shape == (2,) and tuple(f.df.shape) == (2,)
    b = np.random.default_rng(1).standard_normal((2, 3, 3))
    fv, tv = pair(b @ b.swapaxes(-1, -2) + np.eye(3), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob", rtol=1e-4, atol=1e-4)
    close(f.entropy(), t.entropy(), "entropy", rtol=1e-5, atol=1e-4)
    close(f.mean, 5 * t.covariance_matrix, "mean", rtol=1e-5, atol=1e-5)
    e = f.expand((4, 2))
    assert type(e) is D.Wishart and e.batch_shape == (4, 2) and e.event_shape == (3, 3)
    assert tuple(e.covariance_matrix.shape) == (4, 2, 3, 3)
    assert tuple(e.rsample((5,)).shape) == (5, 4, 2, 3, 3)
    close(e.log_prob(fv), f.log_prob(fv).expand(4, 2), "expanded log_prob", atol=1e-5)
    close(e.entropy(), f.entropy().expand(4, 2), "expanded entropy", atol=1e-5)


def test_wishart_sampling_statistics(device):
    cov = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 0.8]])
    with pytest.warns(UserWarning, match="Low df"):
        d = D.Wishart(
            pair(np.array([2.5, 4.0, 11.0]), device)[0], covariance_matrix=pair(cov, device)[0]
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a singular draw (df < 3) is redrawn, with a warning
        x = d.sample((N_SAMPLES,))
    assert tuple(x.shape) == (N_SAMPLES, 3, 3, 3) and not x.requires_grad
    assert bool(d.support.check(x).all())
    _check_moments(np_of(x), np_of(d.mean), np_of(d.variance), "Wishart")


def test_wishart_rsample_gradient_of_mean(device):
    """The mean over samples of d(sample)/d(parameter) estimates d(mean)/d(parameter)."""
    cov = np.array([[1.5, 0.4], [0.4, 0.8]])
    L = np.linalg.cholesky(cov)
    fp, _ = leaves({"df": np.array([2.5, 6.0]), "scale_tril": L}, device)
    d = D.Wishart(**fp)
    weights = np.array([[1.0, 0.3], [0.3, 2.0]])
    x = d.rsample((N_SAMPLES,))
    assert x.requires_grad
    (x * pair(weights, device)[0]).sum().backward()
    tp = {
        k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
        for k, v in {"df": np.array([2.5, 6.0]), "scale_tril": L}.items()
    }
    (TD.Wishart(**tp).mean * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(np_of(fp["df"].grad) / N_SAMPLES, tp["df"].grad.numpy(), rtol=0.03)
    np.testing.assert_allclose(
        np.tril(np_of(fp["scale_tril"].grad)) / N_SAMPLES,
        np.tril(tp["scale_tril"].grad.numpy()),
        rtol=0.03,
        atol=0.05,
    )


def test_wishart_errors_match_torch():
    eye = np.eye(3)
    cases = [
        lambda lib: lib.distributions.Wishart(4.0),
        lambda lib: lib.distributions.Wishart(
            4.0, covariance_matrix=lib.tensor(eye), scale_tril=lib.tensor(eye)
        ),
        lambda lib: lib.distributions.Wishart(4.0, covariance_matrix=lib.ones(3)),
        lambda lib: lib.distributions.Wishart(2.0, covariance_matrix=lib.tensor(eye)),
        lambda lib: lib.distributions.Wishart(
            4.0, covariance_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]])
        ),
        lambda lib: lib.distributions.Wishart(
            4.0, scale_tril=lib.tensor([[1.0, 0.0], [0.5, -1.0]])
        ),
    ]
    for make in cases:
        t_err, f_err = _raised(lambda make=make: make(torch)), _raised(lambda make=make: make(flow))
        assert t_err is not None and f_err is not None and f_err[0] is t_err[0], (f_err, t_err)
    with pytest.warns(UserWarning, match="Low df"):
        D.Wishart(2.5, covariance_matrix=flow.eye(3))


# ---- LKJCholesky --------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 3, 5])
def test_lkj_cholesky_matches_torch(dim, device):
    rng = np.random.default_rng(83 + dim)
    fp, tp = leaves({"concentration": _pos(rng, (2, 3), 0.3, 4.0)}, device)
    f, t = D.LKJCholesky(dim, **fp), TD.LKJCholesky(dim, **tp)
    assert f.batch_shape == tuple(t.batch_shape) == (2, 3)
    assert f.event_shape == tuple(t.event_shape) == (dim, dim) and not f.has_rsample
    torch.manual_seed(dim)
    tv = t.sample((4,))
    fv = flow.tensor(tv.numpy(), device=device)
    assert bool(f.support.check(fv).all())
    close(f.log_prob(fv), t.log_prob(tv), "log_prob", rtol=1e-5, atol=1e-5)
    own = f.sample((4,))
    close(f.log_prob(own), t.log_prob(torch.tensor(np_of(own))), "log_prob", rtol=1e-5, atol=1e-5)
    f.log_prob(fv).sum().backward()
    t.log_prob(tv).sum().backward()
    close(fp["concentration"].grad, tp["concentration"].grad, "grad", rtol=1e-4, atol=1e-4)
    e = f.expand((4, 2, 3))
    assert type(e) is D.LKJCholesky and e.batch_shape == (4, 2, 3)
    assert tuple(e.sample((2,)).shape) == (2, 4, 2, 3, dim, dim)
    close(e.log_prob(fv[0]), f.log_prob(fv[0]).expand(4, 2, 3), "expanded log_prob")
    d = D.LKJCholesky(dim, 0.5)
    assert d.batch_shape == () and tuple(d.sample().shape) == (dim, dim)


def test_lkj_cholesky_density_normalised_in_two_dimensions():
    # L = [[1, 0], [r, sqrt(1 - r^2)]]: the density of L is that of the correlation r.
    r = np.linspace(-1, 1, 200001)[1:-1]
    L = np.zeros((r.size, 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1, r, np.sqrt(1 - r * r)
    d = D.LKJCholesky(2, flow.tensor([0.7, 1.0, 3.0], dtype=flow.float64))
    density = np.exp(np_of(d.log_prob(flow.tensor(L[:, None], dtype=flow.float64))))
    np.testing.assert_allclose(density.sum(0) * (r[1] - r[0]), 1.0, rtol=1e-3)


@pytest.mark.parametrize("dim,eta", [(2, 0.6), (4, 1.0), (5, 2.5)])
def test_lkj_cholesky_sampling_marginals(dim, eta, device):
    """Each off-diagonal correlation of L L^T is 2 Beta(b, b) - 1 with b = eta - 1 + dim / 2:
    mean 0 and variance 1 / (2 b + 1), in every row."""
    d = D.LKJCholesky(dim, flow.tensor(eta, device=device))
    L = np_of(d.sample((N_SAMPLES,))).astype(np.float64)
    assert L.shape == (N_SAMPLES, dim, dim)
    assert bool(d.support.check(flow.tensor(L, dtype=flow.float32)).all())
    C = L @ L.swapaxes(-1, -2)
    np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, atol=1e-5)
    i, j = np.tril_indices(dim, -1)
    r = C[:, i, j]
    b = eta - 1 + dim / 2
    var = 1 / (2 * b + 1)
    # The fourth moment of 2 Beta(b, b) - 1 is 3 / ((2b + 1)(2b + 3)).
    var_of_sq = 3 / ((2 * b + 1) * (2 * b + 3)) - var**2
    _check_moments(r, np.zeros(r.shape[1]), var, "LKJCholesky")
    assert np.all(np.abs((r**2).mean(0) - var) < 5 * math.sqrt(var_of_sq / N_SAMPLES))


def test_lkj_cholesky_errors_match_torch():
    for make in (
        lambda lib: lib.distributions.LKJCholesky(1, 1.0),
        lambda lib: lib.distributions.LKJCholesky(3, lib.tensor([1.0, -0.5])),
    ):
        t_err, f_err = _raised(lambda make=make: make(torch)), _raised(lambda make=make: make(flow))
        assert t_err is not None and f_err is not None and f_err[0] is t_err[0], (f_err, t_err)
    assert not bool(D.constraints.corr_cholesky.check(flow.tensor([[1.0, 0.0], [0.8, 0.8]])).item())


# ---- ContinuousBernoulli, FisherSnedecor, GeneralizedPareto, HalfCauchy, InverseGamma, ----
# ---- Kumaraswamy, LogisticNormal -----------------------------------------------------------


def _cb_probs(rng, shape):
    """Probabilities for ContinuousBernoulli, some inside its Taylor window around 1/2."""
    p = rng.uniform(0.03, 0.97, size=shape)
    p.flat[:4] = [0.5, 0.4995, 0.5008, 0.45]
    return p


NEW_SPECS = {
    # name: (parameters, values (a function of rng and the torch distribution), torch has cdf)
    "ContinuousBernoulli": (
        lambda r: {"probs": _cb_probs(r, (2, 4))},
        lambda r, t: r.uniform(0.0, 1.0, size=(3, 2, 4)),
        True,
    ),
    "FisherSnedecor": (
        lambda r: {"df1": _pos(r, (2, 3), 1.0, 8.0), "df2": _pos(r, (3,), 4.5, 10.0)},
        lambda r, t: _pos(r, (2, 3), 0.05, 5.0),
        False,
    ),
    "GeneralizedPareto": (
        lambda r: {
            "loc": r.standard_normal((2, 1)),
            "scale": _pos(r, (2, 3)),
            "concentration": np.array([-0.4, 0.0, 0.3]),
        },
        lambda r, t: t.icdf(torch.tensor(r.uniform(0.01, 0.99, size=(4, 2, 3)))).detach().numpy(),
        True,
    ),
    "HalfCauchy": (
        lambda r: {"scale": _pos(r, (2, 3))},
        lambda r, t: np.concatenate([np.zeros((1, 3)), _pos(r, (1, 3), 0.01, 6.0)]),
        True,
    ),
    "InverseGamma": (
        lambda r: {"concentration": _pos(r, (2, 3), 2.5, 6.0), "rate": _pos(r, (3,))},
        lambda r, t: _pos(r, (2, 3), 0.05, 4.0),
        True,
    ),
    "Kumaraswamy": (
        lambda r: {"concentration1": _pos(r, (2, 3), 0.4, 4.0), "concentration0": _pos(r, (3,))},
        lambda r, t: r.uniform(0.02, 0.98, size=(2, 3)),
        True,
    ),
    "LogisticNormal": (
        lambda r: {"loc": r.standard_normal((2, 3)), "scale": _pos(r, (3,), 0.3, 2.0)},
        lambda r, t: _simplex(r, (5, 2, 4)),
        False,
    ),
}

# Kumaraswamy's mode is compared with the density's maximum instead (torch's is NaN).
_NOT_AS_TORCH = {("Kumaraswamy", "mode")}


def _build_new(name, rng, device, requires_grad=True):
    make_params, make_value, has_cdf = NEW_SPECS[name]
    fp, tp, f, t = _build(name, make_params(rng), device, requires_grad)
    fv, tv = pair(make_value(rng, t), device)
    return fp, tp, f, t, fv, tv


@pytest.mark.parametrize("name", sorted(NEW_SPECS))
def test_new_distributions_values_match_torch(name, device):
    rng = np.random.default_rng(101)
    for _ in range(2):
        _, _, f, t, fv, tv = _build_new(name, rng, device)
        assert type(f).__name__ == type(t).__name__
        assert f.batch_shape == tuple(t.batch_shape) and f.event_shape == tuple(t.event_shape)
        assert set(f.arg_constraints) == set(t.arg_constraints)
        assert f.has_rsample == t.has_rsample
        assert isinstance(f, D.ExponentialFamily) == isinstance(t, TD.ExponentialFamily)
        assert isinstance(f, D.TransformedDistribution) == isinstance(t, TD.TransformedDistribution)
        close(f.log_prob(fv), t.log_prob(tv), f"{name}.log_prob", rtol=1e-5, atol=2e-5)
        expected = torch_value(t.entropy)
        if expected is None:
            with pytest.raises(NotImplementedError):
                f.entropy()
        else:
            close(f.entropy(), expected, f"{name}.entropy")
        for attr in ["mean", "mode", "variance", "stddev"]:
            expected = torch_value(lambda t=t, attr=attr: getattr(t, attr))
            if expected is None:
                with pytest.raises(NotImplementedError):
                    getattr(f, attr)
            elif (name, attr) not in _NOT_AS_TORCH:
                close(getattr(f, attr), expected, f"{name}.{attr}", rtol=1e-5, atol=1e-5)
        if NEW_SPECS[name][2]:
            close(f.cdf(fv), t.cdf(tv), f"{name}.cdf", rtol=1e-5, atol=1e-5)
            q = rng.uniform(0.02, 0.98, size=tuple(t.batch_shape))
            fq, tq = pair(q, device)
            expected = torch_value(lambda t=t, tq=tq: t.icdf(tq))
            if expected is not None:
                close(f.icdf(fq), expected, f"{name}.icdf", rtol=1e-4, atol=1e-5)
        assert bool(f.support.check(fv).all()) and bool(t.support.check(tv).all())


@pytest.mark.parametrize("name", sorted(NEW_SPECS))
def test_new_distributions_gradients_match_torch(name, device):
    rng = np.random.default_rng(103)
    fp, tp, f, t, fv, tv = _build_new(name, rng, device)
    losses = []
    for lib_d, v in ((f, fv), (t, tv)):
        loss = lib_d.log_prob(v).sum()
        for attr, w in (("mean", 0.3), ("variance", 0.2)):
            value = torch_value(lambda lib_d=lib_d, attr=attr: getattr(lib_d, attr))
            if value is not None:
                loss = loss + w * value.sum()
        if torch_value(t.entropy) is not None:
            loss = loss + 0.5 * lib_d.entropy().sum()
        if NEW_SPECS[name][2] and name != "InverseGamma":  # igamma: no derivative in a
            loss = loss + lib_d.cdf(v).sum()
        losses.append(loss)
    for loss in losses:
        loss.backward()
    for key in fp:
        close(fp[key].grad, tp[key].grad, f"{name} grad {key}", rtol=1e-4, atol=1e-4)


def test_new_distributions_nan_and_infinite_moments(device):
    df = np.array([1.5, 2.0, 3.0, 4.0, 5.0])
    f = D.FisherSnedecor(pair(df, device)[0], pair(df[::-1].copy(), device)[0])
    t = TD.FisherSnedecor(pair(df)[1], pair(df[::-1].copy())[1])
    for attr in ["mean", "mode", "variance"]:
        close(getattr(f, attr), getattr(t, attr), f"FisherSnedecor.{attr}")
    c = np.array([-1.0, -0.2, 0.0, 0.5, 0.7, 1.0, 1.5])
    f = D.GeneralizedPareto(0.5, 2.0, pair(c, device)[0])
    t = TD.GeneralizedPareto(0.5, 2.0, pair(c)[1])
    for attr in ["mean", "variance"]:
        close(getattr(f, attr), getattr(t, attr), f"GeneralizedPareto.{attr}")
    close(f.entropy(), t.entropy(), "GeneralizedPareto.entropy")
    a = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    f = D.InverseGamma(pair(a, device)[0], pair(np.full(5, 2.0), device)[0])
    t = TD.InverseGamma(pair(a)[1], pair(np.full(5, 2.0))[1])
    for attr in ["mean", "mode", "variance"]:
        close(getattr(f, attr), getattr(t, attr), f"InverseGamma.{attr}")
    f, t = D.HalfCauchy(pair(a, device)[0]), TD.HalfCauchy(pair(a)[1])
    for attr in ["mean", "mode", "variance"]:
        close(getattr(f, attr), getattr(t, attr), f"HalfCauchy.{attr}")


def test_generalized_pareto_support_and_tails(device):
    loc, scale, c = np.array([0.5, 0.5, 0.5]), np.array([2.0, 2.0, 2.0]), np.array([-0.5, 0.0, 0.4])
    fp, tp = leaves({"loc": loc, "scale": scale, "concentration": c}, device)
    f, t = D.GeneralizedPareto(**fp), TD.GeneralizedPareto(**tp)
    # [loc, loc - scale / c] for c < 0, [loc, inf) otherwise.
    close(f.support.lower_bound, t.support.lower_bound, "lower bound")
    close(f.support.upper_bound, t.support.upper_bound, "upper bound")
    assert np.allclose(np_of(f.support.upper_bound), [4.5, math.inf, math.inf])
    fv, tv = pair(np.array([[0.5, 0.6, 0.7], [4.4, 10.0, 40.0]]), device)
    close(f.log_survival_function(fv), t.log_survival_function(tv), "log survival")
    close(f.log_cdf(fv), t.log_cdf(tv), "log cdf", atol=1e-5)
    assert bool(f.support.check(fv).all())
    with pytest.raises(ValueError):
        f.log_prob(flow.tensor([0.0, 1.0, 1.0], device=device))  # below loc
    with pytest.raises(ValueError):
        f.log_prob(flow.tensor([5.0, 1.0, 1.0], device=device))  # above loc - scale / c
    # c = -1 is the uniform distribution on [loc, loc + scale], its density finite at the top.
    u = D.GeneralizedPareto(0.0, 2.0, -1.0)
    close(u.log_prob(flow.tensor([0.0, 1.0, 2.0])), flow.full((3,), -math.log(2.0)), "uniform")
    # c = 0 is the exponential distribution of rate 1 / scale.
    e = D.GeneralizedPareto(0.0, 2.0, 0.0)
    x = flow.tensor([0.0, 1.0, 5.0])
    close(e.log_prob(x), D.Exponential(0.5).log_prob(x), "exponential")
    close(e.cdf(x), D.Exponential(0.5).cdf(x), "exponential cdf")


def test_kumaraswamy_mode_is_the_density_maximum():
    a = np.array([2.0, 3.0, 1.0, 5.0, 0.5, 2.0, 1.0])
    b = np.array([2.0, 1.5, 3.0, 1.0, 2.0, 0.7, 1.0])
    d = D.Kumaraswamy(flow.tensor(a, dtype=flow.float64), flow.tensor(b, dtype=flow.float64))
    mode = np_of(d.mode)
    grid = np.linspace(1e-6, 1 - 1e-6, 200001)
    log_density = np_of(d.log_prob(flow.tensor(grid[:, None], dtype=flow.float64)))
    defined = (a >= 1) & (b >= 1) & ((a > 1) | (b > 1))
    np.testing.assert_allclose(mode[defined], grid[log_density.argmax(0)][defined], atol=2e-5)
    assert np.isnan(mode[~defined]).all()


def test_logistic_normal_scalar_and_stick_breaking(device):
    f, t = D.LogisticNormal(0.3, 1.5), TD.LogisticNormal(0.3, 1.5)
    assert f.batch_shape == tuple(t.batch_shape) == () and f.event_shape == (2,)
    fv, tv = pair(np.array([[0.3, 0.7], [0.9, 0.1]]), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob")
    fp, tp = leaves({"loc": np.array([0.5, -1.0]), "scale": np.array([1.0, 0.5])}, device)
    f = D.LogisticNormal(fp["loc"], fp["scale"])
    assert f.loc is fp["loc"] and f.scale is fp["scale"]
    # The logits of the stick-breaking map of the samples are Normal(loc, scale).
    x = f.sample((N_SAMPLES,))
    assert tuple(x.shape) == (N_SAMPLES, 3) and bool(f.support.check(x).all())
    z = np_of(T.StickBreakingTransform().inv(x))
    _check_moments(z, np.array([0.5, -1.0]), np.array([1.0, 0.25]), "LogisticNormal")


NEW_SAMPLING = {
    # name: (parameters, analytic mean and variance or None: the empirical CDF is checked)
    "ContinuousBernoulli": {"probs": np.array([0.05, 0.3, 0.5, 0.7, 0.999])},
    "FisherSnedecor": {"df1": np.array([3.0, 10.0]), "df2": np.array([12.0, 20.0])},
    "GeneralizedPareto": {
        "loc": np.array([0.0, 1.0, -1.0]),
        "scale": np.array([1.0, 2.0, 0.5]),
        "concentration": np.array([-0.5, 0.0, 0.2]),
    },
    "HalfCauchy": {"scale": np.array([0.5, 2.0])},
    "InverseGamma": {"concentration": np.array([5.0, 9.0]), "rate": np.array([1.0, 3.0])},
    "Kumaraswamy": {
        "concentration1": np.array([0.5, 2.0, 5.0]),
        "concentration0": np.array([0.7, 3.0, 1.0]),
    },
    "LogisticNormal": {"loc": np.array([0.0, 1.0]), "scale": np.array([0.5, 1.0])},
}


@pytest.mark.parametrize("name", sorted(NEW_SAMPLING))
def test_new_distributions_sampling_statistics(name, device):
    fp, _ = leaves(NEW_SAMPLING[name], device, requires_grad=False)
    d = getattr(D, name)(**fp)
    x = d.sample((N_SAMPLES,))
    assert tuple(x.shape) == (N_SAMPLES,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert not x.requires_grad and bool(d.support.check(x).all()), name
    if name not in ("HalfCauchy", "LogisticNormal"):  # no finite moments / no closed form
        _check_moments(np_of(x), np_of(d.mean), np_of(d.variance), name)
    if name not in ("FisherSnedecor", "LogisticNormal"):  # no cdf (checked elsewhere)
        # torch's CDF at the sample quantiles.
        # (float32: torch's GeneralizedPareto compares float64 parameters with a float32 zero)
        t = getattr(TD, name)(**{k: pair(v)[1] for k, v in NEW_SAMPLING[name].items()})
        xs = np_of(x).astype(np.float64)
        for q in (0.1, 0.25, 0.5, 0.75, 0.9):
            cdf = t.cdf(pair(np.quantile(xs, q, axis=0))[1]).numpy()
            assert np.all(np.abs(cdf - q) < 5 * math.sqrt(q * (1 - q) / N_SAMPLES)), (name, q, cdf)


def test_fisher_snedecor_sampler_frequencies(device):
    df1, df2 = np.array([2.0, 7.0]), np.array([3.0, 15.0])
    d = D.FisherSnedecor(pair(df1, device)[0], pair(df2, device)[0])
    x = np_of(d.sample((N_SAMPLES,))).astype(np.float64)
    # Probabilities of [0, 0.5), [0.5, 1), [1, 2) and [2, inf) by quadrature of torch's density.
    t = TD.FisherSnedecor(torch.tensor(df1), torch.tensor(df2))
    grid = np.linspace(1e-7, 2.0, 400001)
    density = t.log_prob(torch.tensor(grid[:, None])).exp().numpy()
    step = grid[1] - grid[0]
    for a, b in ((0.0, 0.5), (0.5, 1.0), (1.0, 2.0)):
        inside = (grid >= a) & (grid < b)
        p = density[inside].sum(0) * step
        freq = ((x >= a) & (x < b)).mean(0)
        assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / N_SAMPLES) + 2e-3), (a, freq, p)


@pytest.mark.parametrize(
    "name,params",
    [
        ("ContinuousBernoulli", {"probs": np.array([0.2, 0.45, 0.8])}),
        ("FisherSnedecor", {"df1": np.array([4.0, 9.0]), "df2": np.array([8.0, 12.0])}),
        (
            "GeneralizedPareto",
            {
                "loc": np.array([0.0, 1.0]),
                "scale": np.array([1.0, 2.0]),
                "concentration": np.array([-0.4, -0.1]),
            },
        ),
        ("InverseGamma", {"concentration": np.array([4.0, 6.0]), "rate": np.array([1.0, 2.0])}),
        (
            "Kumaraswamy",
            {"concentration1": np.array([0.8, 2.0]), "concentration0": np.array([1.5, 3.0])},
        ),
    ],
)
def test_new_rsample_gradient_of_mean(name, params, device):
    """The mean over samples of d(sample)/d(parameter) estimates d(mean)/d(parameter)."""
    fp, _ = leaves(params, device)
    d = getattr(D, name)(**fp)
    assert d.has_rsample
    x = d.rsample((N_SAMPLES,))
    assert x.requires_grad and tuple(x.shape) == (N_SAMPLES,) + tuple(d.batch_shape)
    tp = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    exact = getattr(TD, name)(**tp).mean
    for j in range(x.shape[1]):
        for v in list(fp.values()) + list(tp.values()):
            v.grad = None
        x[:, j].sum().backward(retain_graph=True)
        exact[j].backward(retain_graph=True)
        for key in fp:
            g = np_of(fp[key].grad) / N_SAMPLES
            tg = np.zeros(g.shape) if tp[key].grad is None else tp[key].grad.numpy()
            np.testing.assert_allclose(g, tg, rtol=0.04, atol=0.01, err_msg=f"{name} {key} {j}")


@pytest.mark.parametrize("name", sorted(NEW_SPECS))
def test_new_distributions_expand_and_shapes(name, device):
    rng = np.random.default_rng(107)
    _, _, f, t, fv, _ = _build_new(name, rng, device, requires_grad=False)
    e = f.expand((3,) + tuple(f.batch_shape))
    assert type(e) is type(f) and e.batch_shape == (3,) + tuple(f.batch_shape)
    assert e.event_shape == f.event_shape and e._validate_args == f._validate_args
    shape = tuple(f.batch_shape) + tuple(f.event_shape)
    assert tuple(e.sample((2,)).shape) == (2, 3) + shape
    assert tuple(f.sample().shape) == shape and tuple(f.rsample((4, 1)).shape) == (4, 1) + shape
    te = t.expand((3,) + tuple(t.batch_shape))
    while fv.ndim > len(shape):
        fv = fv[0]
    close(e.log_prob(fv), f.log_prob(fv).expand(*e.batch_shape), f"{name} expanded", atol=1e-6)
    close(e.log_prob(fv), te.log_prob(torch.tensor(np_of(fv))), f"{name} expanded", atol=2e-5)


def test_new_samples_reproducible_under_manual_seed():
    dists = [
        D.ContinuousBernoulli(flow.tensor([0.2, 0.7])),
        D.FisherSnedecor(flow.tensor([3.0]), flow.tensor([5.0])),
        D.GeneralizedPareto(0.0, 1.0, flow.tensor([0.2, -0.2])),
        D.HalfCauchy(flow.tensor([1.0])),
        D.InverseGamma(flow.tensor([3.0]), 1.0),
        D.Kumaraswamy(flow.tensor([2.0]), flow.tensor([3.0])),
        D.LogisticNormal(flow.zeros(2), flow.ones(2)),
        D.OneHotCategoricalStraightThrough(flow.tensor([0.2, 0.3, 0.5])),
    ]
    for d in dists:
        flow.manual_seed(7)
        a = d.sample((64,))
        flow.manual_seed(7)
        b = d.sample((64,))
        assert bool((a == b).all()), type(d).__name__
        assert not bool((a == d.sample((64,))).all()), type(d).__name__


def test_new_distributions_errors_match_torch():
    cases = [
        lambda lib: lib.distributions.FisherSnedecor(lib.tensor([1.0]), lib.tensor([-1.0])),
        lambda lib: lib.distributions.GeneralizedPareto(0.0, lib.tensor([0.0]), 0.5),
        lambda lib: lib.distributions.GeneralizedPareto(lib.tensor([math.nan]), 1.0, 0.5),
        lambda lib: lib.distributions.HalfCauchy(lib.tensor([-1.0])),
        lambda lib: lib.distributions.InverseGamma(lib.tensor([0.0]), 1.0),
        lambda lib: lib.distributions.InverseGamma(lib.tensor([1.0]), lib.tensor([-2.0])),
        lambda lib: lib.distributions.Kumaraswamy(lib.tensor([1.0]), lib.tensor([-2.0])),
        lambda lib: lib.distributions.LogisticNormal(lib.tensor([0.0]), lib.tensor([0.0])),
        lambda lib: lib.distributions.ContinuousBernoulli(),
        lambda lib: lib.distributions.ContinuousBernoulli(lib.tensor(0.3), lib.tensor(0.1)),
        lambda lib: lib.distributions.HalfCauchy(lib.tensor([1.0])).log_prob(lib.tensor([-1.0])),
        lambda lib: lib.distributions.InverseGamma(1.0, 1.0).log_prob(lib.tensor([-1.0])),
        lambda lib: lib.distributions.Kumaraswamy(1.0, 1.0).log_prob(lib.tensor([1.5])),
        lambda lib: lib.distributions.ContinuousBernoulli(0.3).log_prob(lib.tensor([1.5])),
        lambda lib: lib.distributions.FisherSnedecor(1.0, 2.0).log_prob(lib.tensor([-1.0])),
        lambda lib: lib.distributions.LogisticNormal(lib.tensor([0.0]), lib.tensor([1.0])).log_prob(
            lib.tensor([0.7, 0.7])
        ),
    ]
    for make in cases:
        t_err = _raised(lambda make=make: make(torch))
        f_err = _raised(lambda make=make: make(flow))
        assert t_err is not None and f_err is not None and f_err[0] is t_err[0], (f_err, t_err)
    assert _raised(lambda: D.ContinuousBernoulli()) == _raised(lambda: TD.ContinuousBernoulli())


def test_continuous_bernoulli_parameters(device):
    rng = np.random.default_rng(109)
    logits = rng.standard_normal((2, 3)) * 3
    logits.flat[0] = 30.0  # sigmoid is 1 in float32: clamped
    fp, tp = leaves({"logits": logits}, device)
    f, t = D.ContinuousBernoulli(logits=fp["logits"]), TD.ContinuousBernoulli(logits=tp["logits"])
    assert "probs" not in f.__dict__ and tuple(f.param_shape) == tuple(t.param_shape)
    close(f.probs, t.probs, "probs", atol=1e-7)
    close(f.logits, t.logits, "logits")
    fv, tv = pair(rng.uniform(size=(2, 3)), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob", atol=2e-5)
    close(f.mean, t.mean, "mean")
    (f.log_prob(fv).sum() + f.entropy().sum()).backward()
    (t.log_prob(tv).sum() + t.entropy().sum()).backward()
    close(fp["logits"].grad, tp["logits"].grad, "grad logits", rtol=1e-4, atol=1e-4)
    # probs are clamped into [eps, 1 - eps], so the extremes stay finite.
    f, t = (
        D.ContinuousBernoulli(flow.tensor([0.0, 1.0])),
        TD.ContinuousBernoulli(torch.tensor([0.0, 1.0])),
    )
    close(f.probs, t.probs, "clamped probs")
    close(f.entropy(), t.entropy(), "clamped entropy", atol=1e-5)
    # A number gives a scalar batch; lims are kept by expand.
    f = D.ContinuousBernoulli(0.3, lims=(0.4, 0.6))
    t = TD.ContinuousBernoulli(0.3, lims=(0.4, 0.6))
    assert f.batch_shape == () and f.expand((2,))._lims == (0.4, 0.6)
    close(f.expand((2,)).mean, t.expand((2,)).mean, "expanded mean with lims")
    close(f.log_prob(flow.tensor(0.2)), t.log_prob(torch.tensor(0.2)), "log_prob with lims")
    # Inside the Taylor window the density still integrates to one and the CDF reaches 1.
    grid = np.linspace(0, 1, 20001)
    d = D.ContinuousBernoulli(flow.tensor([0.05, 0.4995, 0.5, 0.8], dtype=flow.float64))
    density = np.exp(np_of(d.log_prob(flow.tensor(grid[:, None], dtype=flow.float64))))
    integral = ((density[1:] + density[:-1]) / 2).sum(0) * (grid[1] - grid[0])
    np.testing.assert_allclose(integral, 1.0, rtol=1e-6)
    cdf = np_of(d.cdf(flow.tensor(np.array([[0.0], [1.0]]), dtype=flow.float64)))
    np.testing.assert_allclose(cdf, [[0.0] * 4, [1.0] * 4], atol=1e-12)


def test_continuous_bernoulli_validation():
    """probs are checked as given whenever validation is on (torch only checks them when
    validate_args is given, and then even when it is False)."""
    bad = flow.tensor([-0.5, 0.3])
    with pytest.raises(ValueError, match="probs"):
        D.ContinuousBernoulli(bad)
    with pytest.raises(ValueError, match="probs"):
        D.ContinuousBernoulli(bad, validate_args=True)
    d = D.ContinuousBernoulli(bad, validate_args=False)  # clamped
    np.testing.assert_allclose(np_of(d.probs), [np.finfo(np.float32).eps, 0.3])
    with pytest.raises(ValueError):
        TD.ContinuousBernoulli(torch.tensor([-0.5, 0.3]), validate_args=True)
    D.ContinuousBernoulli(logits=flow.tensor([-50.0, 50.0]))  # any logits are valid


def test_gamma_cdf_matches_torch(device):
    rng = np.random.default_rng(113)
    concentration = _pos(rng, (2, 3), 0.3, 6)
    fp, tp = leaves({"rate": _pos(rng, (3,))}, device)
    fc, tc = pair(concentration, device)  # no derivative in the concentration, as torch's
    f, t = D.Gamma(fc, fp["rate"]), TD.Gamma(tc, tp["rate"])
    fv, tv = pair(_pos(rng, (4, 2, 3), 0.0, 6), device)
    close(f.cdf(fv), t.cdf(tv), "Gamma.cdf")
    f.cdf(fv).sum().backward()
    t.cdf(tv).sum().backward()
    close(fp["rate"].grad, tp["rate"].grad, "grad rate", rtol=1e-4, atol=1e-5)


# ---- OneHotCategoricalStraightThrough ------------------------------------------------------


def test_one_hot_categorical_straight_through(device):
    rng = np.random.default_rng(127)
    fp, tp = leaves({"logits": rng.standard_normal((2, 3))}, device)
    f = D.OneHotCategoricalStraightThrough(logits=fp["logits"])
    t = TD.OneHotCategoricalStraightThrough(logits=tp["logits"])
    assert isinstance(f, D.OneHotCategorical) and f.has_rsample and t.has_rsample
    assert f.batch_shape == (2,) and f.event_shape == (3,)
    fv, tv = pair(_one_hot(rng, (4, 2, 3)), device)
    close(f.log_prob(fv), t.log_prob(tv), "log_prob")
    close(f.entropy(), t.entropy(), "entropy")
    for attr in ["mean", "mode", "variance"]:
        close(getattr(f, attr), getattr(t, attr), attr)
    x = f.rsample((5,))
    assert tuple(x.shape) == (5, 2, 3) and x.requires_grad
    assert bool(D.constraints.one_hot.check(x.detach()).all())
    # The straight-through gradient: that of probs, whatever was sampled.
    w = rng.standard_normal((5, 2, 3))
    (x * pair(w, device)[0]).sum().backward()
    torch.manual_seed(0)
    (t.rsample((5,)) * torch.tensor(w, dtype=torch.float32)).sum().backward()
    close(fp["logits"].grad, tp["logits"].grad, "straight-through gradient", atol=1e-5)
    e = f.expand((4, 2))
    assert type(e) is D.OneHotCategoricalStraightThrough and tuple(e.rsample().shape) == (4, 2, 3)
    probs = np.array([0.2, 0.3, 0.5])
    s = np_of(D.OneHotCategoricalStraightThrough(pair(probs, device)[0]).sample((N_SAMPLES,)))
    _check_moments(s, probs, probs * (1 - probs), "OneHotCategoricalStraightThrough")


# ---- new transforms ------------------------------------------------------------------------


def _new_transform_cases(rng):
    normal_f = D.Normal(flow.tensor([0.0, 1.0]), flow.tensor([1.0, 2.0]))
    normal_t = TD.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    return {
        # name: (flow transform, torch transform, input)
        "abs": (T.AbsTransform(), TT.AbsTransform(), rng.standard_normal((3, 4))),
        "reshape": (
            T.ReshapeTransform((2, 3), (3, 2)),
            TT.ReshapeTransform((2, 3), (3, 2)),
            rng.standard_normal((4, 2, 3)),
        ),
        "corr_cholesky_2": (
            T.CorrCholeskyTransform(),
            TT.CorrCholeskyTransform(),
            rng.standard_normal((5, 1)),
        ),
        "corr_cholesky_4": (
            T.CorrCholeskyTransform(),
            TT.CorrCholeskyTransform(),
            rng.standard_normal((2, 3, 6)) * 1.5,
        ),
        "positive_definite": (
            T.PositiveDefiniteTransform(),
            TT.PositiveDefiniteTransform(),
            rng.standard_normal((2, 3, 3)),
        ),
        "cat_batch_dim": (
            T.CatTransform(
                [T.ExpTransform(), T.identity_transform, T.SigmoidTransform()], 0, [2, 1, 3]
            ),
            TT.CatTransform(
                [TT.ExpTransform(), TT.identity_transform, TT.SigmoidTransform()], 0, [2, 1, 3]
            ),
            rng.standard_normal((6, 4)),
        ),
        "cat_event_dim": (
            T.CatTransform(
                [T.IndependentTransform(T.ExpTransform(), 1), T.SigmoidTransform()], -1, [2, 3]
            ),
            TT.CatTransform(
                [TT.IndependentTransform(TT.ExpTransform(), 1), TT.SigmoidTransform()], -1, [2, 3]
            ),
            rng.standard_normal((4, 5)),
        ),
        "stack": (
            T.StackTransform(
                [T.ExpTransform(), T.TanhTransform(), T.AffineTransform(1.0, -2.0)], 1
            ),
            TT.StackTransform(
                [TT.ExpTransform(), TT.TanhTransform(), TT.AffineTransform(1.0, -2.0)], 1
            ),
            rng.standard_normal((4, 3, 2)),
        ),
        "stack_negative_dim": (
            T.StackTransform([T.SoftplusTransform(), T.ExpTransform()], -1),
            TT.StackTransform([TT.SoftplusTransform(), TT.ExpTransform()], -1),
            rng.standard_normal((4, 3, 2)),
        ),
        "cumulative_distribution": (
            T.CumulativeDistributionTransform(normal_f),
            TT.CumulativeDistributionTransform(normal_t),
            rng.standard_normal((3, 2)),
        ),
    }


def _constraint_name(c):
    return type(c).__name__.lstrip("_").replace("IndependentConstraint", "Independent")


@pytest.mark.parametrize("name", sorted(_new_transform_cases(np.random.default_rng(0))))
def test_new_transforms_match_torch(name):
    rng = np.random.default_rng(131)
    f_t, t_t, x = _new_transform_cases(rng)[name]
    fx, tx = pair(x)
    fy, ty = f_t(fx), t_t(tx)
    close(fy, ty, f"{name} forward", atol=1e-6)
    close(f_t.inv(fy), t_t.inv(ty), f"{name} inverse", rtol=1e-4, atol=1e-5)
    if t_t.bijective and name != "abs":
        close(f_t.inv(fy), fx, f"{name} round trip", rtol=1e-4, atol=1e-4)
    expected = torch_value(lambda: t_t.log_abs_det_jacobian(tx, ty))
    if expected is None:
        with pytest.raises(NotImplementedError):
            f_t.log_abs_det_jacobian(fx, fy)
    else:
        close(f_t.log_abs_det_jacobian(fx, fy), expected, f"{name} ladj", rtol=1e-4, atol=1e-5)
        close(
            f_t.inv.log_abs_det_jacobian(fy, fx),
            t_t.inv.log_abs_det_jacobian(ty, tx),
            f"{name} inverse ladj",
            rtol=1e-4,
            atol=1e-5,
        )
    assert f_t.bijective == t_t.bijective
    assert f_t.domain.event_dim == t_t.domain.event_dim
    assert f_t.codomain.event_dim == t_t.codomain.event_dim
    assert _constraint_name(f_t.codomain) == _constraint_name(t_t.codomain)
    assert tuple(f_t.forward_shape(x.shape)) == tuple(t_t.forward_shape(torch.Size(x.shape)))
    assert tuple(f_t.inverse_shape(tuple(fy.shape))) == tuple(t_t.inverse_shape(ty.shape))
    assert tuple(f_t.inv.forward_shape(tuple(fy.shape))) == x.shape
    t_check = _raised(lambda: t_t.codomain.check(ty))
    if t_check is not None:  # a cat of parts with different event dims: as torch, an error
        assert _raised(lambda: f_t.codomain.check(fy))[0] is t_check[0]
    else:
        f_check, t_check = f_t.codomain.check(fy), t_t.codomain.check(ty)
        close(f_check.to(flow.int32), t_check.to(torch.int32), f"{name} codomain check")
        assert bool(f_check.all())
    try:
        t_sign = t_t.sign
    except NotImplementedError:
        t_sign = None
    if t_sign is not None and isinstance(t_sign, int):
        assert f_t.sign == t_sign
    # with_cache: the inverse of a value just computed is the input itself.
    cached = f_t.with_cache(1)
    y = cached(fx)
    assert cached.inv(y) is fx and cached(fx) is y


def test_corr_cholesky_log_det_by_finite_differences():
    """log |det dy/dx| of the map from x to the strictly lower entries of y, numerically."""
    rng = np.random.default_rng(137)
    t = T.CorrCholeskyTransform()
    x = rng.standard_normal(6) * 0.8
    n = 4
    rows, cols = np.tril_indices(n, -1)

    def f(v):
        return np_of(t(flow.tensor(v, dtype=flow.float64)))[rows, cols]

    h = 1e-6
    jac = np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(6)], axis=1)
    fx = flow.tensor(x, dtype=flow.float64)
    ladj = float(t.log_abs_det_jacobian(fx, t(fx)))
    np.testing.assert_allclose(ladj, np.log(abs(np.linalg.det(jac))), rtol=1e-6)
    L = np_of(t(fx))
    np.testing.assert_allclose((L**2).sum(-1), 1.0, rtol=1e-12)
    assert np.all(np.diag(L) > 0) and np.allclose(np.triu(L, 1), 0)


def test_corr_cholesky_inverse_of_extreme_inputs_is_finite():
    t = T.CorrCholeskyTransform()
    x = flow.randn(2000, 6) * 4  # many tanh values round to +-1
    y = t(x)
    assert bool(D.constraints.corr_cholesky.check(y).all())
    x_back = t.inv(y)
    assert bool(flow.isfinite(x_back).all())
    assert bool(flow.isfinite(t.log_abs_det_jacobian(x_back, y)).all())
    np.testing.assert_allclose(np_of(t(x_back)), np_of(y), atol=1e-3)  # ill-conditioned there


def test_new_transform_errors_and_equality():
    assert T.AbsTransform() == T.AbsTransform() and T.AbsTransform() != T.ExpTransform()
    assert T.PositiveDefiniteTransform() == T.PositiveDefiniteTransform()
    assert T.PowerTransform(flow.tensor(2.0)) == T.PowerTransform(flow.tensor(2.0))
    assert T.PowerTransform(flow.tensor(2.0)) != T.PowerTransform(flow.tensor(3.0))
    pairs = [
        (lambda M: M.CorrCholeskyTransform(), lambda M: M.CorrCholeskyTransform()),
        (lambda M: M.ReshapeTransform((2,), (2,)), lambda M: M.ReshapeTransform((2,), (2,))),
        (lambda M: M.AbsTransform(), lambda M: M.AbsTransform()),
        (lambda M: M.PositiveDefiniteTransform(), lambda M: M.PositiveDefiniteTransform()),
        (lambda M: M.AbsTransform().inv, lambda M: M.AbsTransform().inv),
    ]
    for a, b in pairs:
        assert (a(T) == b(T)) == (a(TT) == b(TT)), a(T)
    assert isinstance(D.identity_transform, T.ComposeTransform) and not D.identity_transform.parts
    x = flow.randn(3)
    assert D.identity_transform(x) is x
    for make in (
        lambda M, lib: M.ReshapeTransform((2, 3), (5,)),
        lambda M, lib: M.CatTransform([M.ExpTransform()], 0, [1, 2]),
        lambda M, lib: M.CatTransform([M.ExpTransform(), M.ExpTransform()], 0, [1, 2])(lib.ones(4)),
        lambda M, lib: M.CatTransform([M.ExpTransform()], 2, [1])(lib.ones(4)),
        lambda M, lib: M.StackTransform([M.ExpTransform()], 0)(lib.ones(2, 3)),
        lambda M, lib: M.CatTransform([1.0]),
        lambda M, lib: M.CorrCholeskyTransform().forward_shape((4,)),
        lambda M, lib: M.CorrCholeskyTransform().inverse_shape((3, 4)),
        lambda M, lib: M.ReshapeTransform((2, 3), (6,)).forward_shape((3, 2)),
    ):
        f_err = _raised(lambda make=make: make(T, flow))
        t_err = _raised(lambda make=make: make(TT, torch))
        assert t_err is not None and f_err is not None and f_err[0] is t_err[0], (f_err, t_err)


def test_new_constraints_and_registry_match_torch():
    rng = np.random.default_rng(139)
    C, TC = D.constraints, torch.distributions.constraints
    cases = [
        (
            lambda c: c.cat([c.positive, c.real, c.unit_interval], 0, [2, 1, 3]),
            rng.uniform(0.1, 0.9, size=(6, 4)),
        ),
        (lambda c: c.stack([c.positive, c.interval(-1.0, 1.0)], -1), rng.uniform(0.1, 0.9, (3, 2))),
        (lambda c: c.stack([c.simplex, c.simplex], 0), _simplex(rng, (2, 3, 4))),
        (lambda c: c.corr_cholesky, None),
        (lambda c: c.positive_definite, None),
    ]
    for make, value in cases:
        f_c, t_c = make(C), make(TC)
        assert f_c.event_dim == t_c.event_dim and f_c.is_discrete == t_c.is_discrete
        if value is not None:
            v = value.copy()
            v.flat[0] = -1.0  # outside the first part
            fv, tv = pair(v)
            close(f_c.check(fv).to(flow.int32), t_c.check(tv).to(torch.int32), repr(f_c))
        for f_reg, t_reg in ((D.biject_to, TD.biject_to), (D.transform_to, TD.transform_to)):
            t_t = torch_value(lambda t_reg=t_reg, t_c=t_c: t_reg(t_c))
            if t_t is None:
                with pytest.raises(NotImplementedError):
                    f_reg(f_c)
                continue
            f_t = f_reg(f_c)
            assert type(f_t).__name__ == type(t_t).__name__
            shape = tuple(
                t_t.inverse_shape(torch.Size(value.shape if value is not None else (2, 3, 3)))
            )
            x = rng.standard_normal(shape)
            fx, tx = pair(x)
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


def test_new_transforms_in_transformed_distributions(device):
    rng = np.random.default_rng(149)
    # A Gaussian copula: a correlated normal pushed through the normal CDF.
    L = np.linalg.cholesky(np.array([[1.0, 0.6], [0.6, 1.0]]))
    f = D.TransformedDistribution(
        D.MultivariateNormal(flow.zeros(2, device=device), scale_tril=pair(L, device)[0]),
        [T.CumulativeDistributionTransform(D.Normal(*pair(np.array([0.0, 1.0]), device)[0]))],
    )
    t = TD.TransformedDistribution(
        TD.MultivariateNormal(torch.zeros(2), scale_tril=pair(L)[1]),
        [TT.CumulativeDistributionTransform(TD.Normal(0.0, 1.0))],
    )
    assert f.event_shape == tuple(t.event_shape) == (2,)
    fv, tv = pair(rng.uniform(0.05, 0.95, (4, 2)), device)
    close(f.log_prob(fv), t.log_prob(tv), "copula log_prob", rtol=1e-4, atol=1e-5)
    x = f.sample((N_SAMPLES,))
    assert tuple(x.shape) == (N_SAMPLES, 2)
    _check_moments(np_of(x), np.full(2, 0.5), np.full(2, 1 / 12), "copula marginals")
    # A reshaped diagonal normal, and an LKJ-like prior through CorrCholeskyTransform.
    params = {"loc": rng.standard_normal(6) * 0.5, "scale": _pos(rng, (6,), 0.2, 0.7)}
    fp, tp = leaves(params, device)
    f = D.TransformedDistribution(
        D.Independent(D.Normal(fp["loc"], fp["scale"]), 1), [T.ReshapeTransform((6,), (2, 3))]
    )
    t = TD.TransformedDistribution(
        TD.Independent(TD.Normal(tp["loc"], tp["scale"]), 1), [TT.ReshapeTransform((6,), (2, 3))]
    )
    assert f.event_shape == (2, 3) and tuple(f.sample((5,)).shape) == (5, 2, 3)
    fv, tv = pair(rng.standard_normal((5, 2, 3)), device)
    close(f.log_prob(fv), t.log_prob(tv), "reshaped log_prob")
    f = D.TransformedDistribution(
        D.Independent(D.Normal(fp["loc"], fp["scale"]), 1), [T.CorrCholeskyTransform()]
    )
    t = TD.TransformedDistribution(
        TD.Independent(TD.Normal(tp["loc"], tp["scale"]), 1), [TT.CorrCholeskyTransform()]
    )
    assert f.event_shape == tuple(t.event_shape) == (4, 4)
    y = f.sample((3,))
    assert bool(D.constraints.corr_cholesky.check(y).all())
    close(f.log_prob(y), t.log_prob(torch.tensor(np_of(y))), "corr cholesky log_prob", 1e-4, 1e-4)
    f.log_prob(y).sum().backward()
    t.log_prob(torch.tensor(np_of(y))).sum().backward()
    for key in params:
        close(fp[key].grad, tp[key].grad, f"grad {key}", rtol=1e-4, atol=1e-4)


# ---- KL divergences of the new distributions and the exponential families -----------------


def _new_kl_pairs(rng):
    def cb():
        return "ContinuousBernoulli", {"probs": _cb_probs(rng, (2, 3))}

    def cb_logits():
        return "ContinuousBernoulli", {"logits": rng.standard_normal((3,)) * 2}

    def lowrank(batch):
        return "LowRankMultivariateNormal", {
            "loc": rng.standard_normal(batch + (4,)),
            "cov_factor": rng.standard_normal((4, 2)),
            "cov_diag": _pos(rng, (4,)),
        }

    def mvn(batch):
        scale_tril = np.linalg.cholesky(_spd(rng, batch, 4))
        return "MultivariateNormal", {"loc": rng.standard_normal((4,)), "scale_tril": scale_tril}

    return {
        "cb_cb": (cb(), cb_logits()),
        "beta_cb": (
            ("Beta", {"concentration1": _pos(rng, (2, 3)), "concentration0": _pos(rng, (3,))}),
            cb(),
        ),
        "uniform_cb": (
            ("Uniform", {"low": _pos(rng, (2, 3), 0.0, 0.4), "high": _pos(rng, (2, 3), 0.5, 1.0)}),
            cb(),
        ),
        "cb_exponential": (cb(), ("Exponential", {"rate": _pos(rng, (3,))})),
        "cb_normal": (
            cb(),
            ("Normal", {"loc": rng.standard_normal((3,)), "scale": _pos(rng, (2, 3))}),
        ),
        "cb_uniform": (
            cb(),
            ("Uniform", {"low": _pos(rng, (3,), -1.0, -0.1), "high": _pos(rng, (3,), 1.1, 2.0)}),
        ),
        "lowrank_lowrank": (lowrank((2,)), lowrank((3, 1))),
        "mvn_lowrank": (mvn((2,)), lowrank((3, 1))),
        "lowrank_mvn": (lowrank((2,)), mvn((3, 1))),
        "logistic_normal": (
            ("LogisticNormal", {"loc": rng.standard_normal((2, 3)), "scale": _pos(rng, (3,))}),
            ("LogisticNormal", {"loc": rng.standard_normal((3,)), "scale": _pos(rng, (2, 3))}),
        ),
        "inverse_gamma": (
            ("InverseGamma", {"concentration": _pos(rng, (2, 3)), "rate": _pos(rng, (3,))}),
            ("InverseGamma", {"concentration": _pos(rng, (3,)), "rate": _pos(rng, (2, 3))}),
        ),
        "half_cauchy": (
            ("HalfCauchy", {"scale": _pos(rng, (2, 3))}),
            ("HalfCauchy", {"scale": _pos(rng, (3,))}),
        ),
    }


@pytest.mark.parametrize("case", sorted(_new_kl_pairs(np.random.default_rng(0))))
def test_new_kl_matches_torch(case, device):
    rng = np.random.default_rng(151)
    (p_name, p_params), (q_name, q_params) = _new_kl_pairs(rng)[case]
    pf, pt, fp_, tp_ = _build(p_name, p_params, device)
    qf, qt, fq_, tq_ = _build(q_name, q_params, device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ambiguous dispatch
        f_kl = D.kl_divergence(fp_, fq_)
    t_kl = TD.kl_divergence(tp_, tq_)
    close(f_kl, t_kl, f"KL {case}", rtol=1e-4, atol=1e-5)
    assert bool(flow.isfinite(f_kl).all()) and bool((f_kl >= -1e-5).all())
    f_kl.sum().backward()
    t_kl.sum().backward()
    for side_f, side_t in ((pf, pt), (qf, qt)):
        for key in side_f:
            if isinstance(side_f[key], flow.Tensor):
                close(side_f[key].grad, side_t[key].grad, f"KL {case} grad {key}", 1e-3, 1e-4)


def test_new_kl_infinite_pairs_match_torch(device):
    rng = np.random.default_rng(157)
    cb = ("ContinuousBernoulli", {"probs": _unit(rng, (2, 3))})
    others = [
        ("Exponential", {"rate": _pos(rng, (2, 3))}),
        ("Gamma", {"concentration": _pos(rng, (2, 3)), "rate": _pos(rng, (2, 3))}),
        ("Gumbel", {"loc": rng.standard_normal((2, 3)), "scale": _pos(rng, (2, 3))}),
        ("Laplace", {"loc": rng.standard_normal((2, 3)), "scale": _pos(rng, (2, 3))}),
        ("Normal", {"loc": rng.standard_normal((2, 3)), "scale": _pos(rng, (2, 3))}),
        ("Pareto", {"scale": _pos(rng, (2, 3)), "alpha": _pos(rng, (2, 3))}),
    ]
    pairs = [(other, cb) for other in others] + [(cb, others[-1])]
    for (p_name, p_params), (q_name, q_params) in pairs:
        _, _, fp_, tp_ = _build(p_name, p_params, device)
        _, _, fq_, tq_ = _build(q_name, q_params, device)
        f_kl, t_kl = D.kl_divergence(fp_, fq_), TD.kl_divergence(tp_, tq_)
        close(f_kl, t_kl, f"KL {p_name} || {q_name}")
        assert bool(flow.isinf(f_kl).all())


def test_kl_continuous_bernoulli_uniform_boundaries(device):
    """Finite exactly when the supports allow it, [0, 1] against [0, 1] included (torch's are
    infinite there); equal to the quadrature of p log(p / q)."""
    probs = np.array([0.2, 0.5, 0.9, 0.3, 0.6])
    cb = D.ContinuousBernoulli(pair(probs, device)[0])
    low, high = np.array([0.0, -1.0, 0.0, 0.1, 0.0]), np.array([1.0, 1.0, 2.0, 1.0, 0.9])
    kl = np_of(D.kl_divergence(cb, D.Uniform(pair(low, device)[0], pair(high, device)[0])))
    assert np.isinf(kl[3:]).all() and np.isfinite(kl[:3]).all()
    np.testing.assert_allclose(kl[:3], -np_of(cb.entropy())[:3] + np.log(high - low)[:3], 1e-6)
    # Uniform || ContinuousBernoulli against quadrature.
    low, high = np.array([0.0, 0.2, 0.5, -0.1, 0.5]), np.array([1.0, 0.7, 1.0, 0.5, 1.2])
    u = D.Uniform(pair(low, device)[0], pair(high, device)[0])
    kl = np_of(D.kl_divergence(u, cb))
    assert np.isinf(kl[3:]).all() and np.isfinite(kl[:3]).all()
    grid = np.linspace(0, 1, 200001)[:, None]
    mid = (grid[1:] + grid[:-1]) / 2
    log_q = np_of(cb.log_prob(flow.tensor(mid, dtype=flow.float32))).astype(np.float64)
    inside = (mid >= low) & (mid < high)
    log_p = -np.log(high - low)
    integral = np.where(inside, (log_p - log_q) / (high - low), 0).sum(0) * (grid[1] - grid[0])
    np.testing.assert_allclose(kl[:3], integral[:3], rtol=1e-4, atol=1e-5)


EXPONENTIAL_FAMILIES = {
    "Normal": lambda r: {"loc": r.standard_normal((2, 3)), "scale": _pos(r, (3,))},
    "Bernoulli": lambda r: {"probs": _unit(r, (2, 3))},
    "Beta": lambda r: {"concentration1": _pos(r, (2, 3)), "concentration0": _pos(r, (3,))},
    "Dirichlet": lambda r: {"concentration": _pos(r, (2, 4))},
    "Exponential": lambda r: {"rate": _pos(r, (2, 3))},
    "Gamma": lambda r: {"concentration": _pos(r, (2, 3)), "rate": _pos(r, (3,))},
    "Chi2": lambda r: {"df": _pos(r, (2, 3), 1.0, 6.0)},
    "Poisson": lambda r: {"rate": _pos(r, (2, 3))},
    "ContinuousBernoulli": lambda r: {"probs": _cb_probs(r, (2, 3))},
}


def test_exponential_family_classes_match_torch():
    for name in D.__all__:
        cls = getattr(D, name)
        if isinstance(cls, type) and issubclass(cls, D.Distribution):
            assert issubclass(cls, D.ExponentialFamily) == issubclass(
                getattr(TD, name), TD.ExponentialFamily
            ), name


@pytest.mark.parametrize("name", sorted(EXPONENTIAL_FAMILIES))
def test_exponential_family_bregman_kl_and_entropy(name, device):
    """The generic Bregman-divergence KL and entropy against the closed forms (values and
    gradients with respect to both distributions' parameters) and against torch's values; in
    float64, as the closed forms of ContinuousBernoulli cancel in float32 near probs 1/2."""
    rng = np.random.default_rng(163)
    make = EXPONENTIAL_FAMILIES[name]

    def build(params):
        fp = {
            k: flow.tensor(v, dtype=flow.float64, device=device, requires_grad=True)
            for k, v in params.items()
        }
        tp = {k: torch.tensor(v, dtype=torch.float64) for k, v in params.items()}
        return list(fp.values()), getattr(D, name)(**fp), getattr(TD, name)(**tp)

    p_leaves, fp_, tp_ = build(make(rng))
    q_leaves, fq_, tq_ = build(make(rng))
    bregman = D.kl._kl_expfamily_expfamily(fp_, fq_)
    closed = D.kl_divergence(fp_, fq_)
    close(bregman, closed, f"{name} Bregman KL", rtol=1e-9, atol=1e-10)
    close(bregman, TD.kl._kl_expfamily_expfamily(tp_, tq_), f"{name} torch Bregman", 1e-9, 1e-10)
    g_bregman = flow.autograd.grad(bregman.sum(), p_leaves + q_leaves, retain_graph=True)
    g_closed = flow.autograd.grad(closed.sum(), p_leaves + q_leaves, retain_graph=True)
    for a, b in zip(g_bregman, g_closed):
        close(a, b, f"{name} Bregman KL gradient", rtol=1e-7, atol=1e-9)
    expected = torch_value(lambda: TD.ExponentialFamily.entropy(tp_))
    if expected is None:  # no carrier measure (Beta, Dirichlet, Poisson), as torch
        with pytest.raises(NotImplementedError):
            D.ExponentialFamily.entropy(fp_)
        return
    generic = D.ExponentialFamily.entropy(fp_)
    close(generic, expected, f"{name} torch generic entropy", rtol=1e-9, atol=1e-10)
    close(generic, fp_.entropy(), f"{name} closed-form entropy", rtol=1e-9, atol=1e-10)
    g_generic = flow.autograd.grad(generic.sum(), p_leaves, retain_graph=True, allow_unused=True)
    g_closed = flow.autograd.grad(fp_.entropy().sum(), p_leaves, allow_unused=True)
    for a, b, v in zip(g_generic, g_closed, p_leaves):
        a = flow.zeros_like(v) if a is None else a
        b = flow.zeros_like(v) if b is None else b
        close(a, b, f"{name} generic entropy gradient", rtol=1e-7, atol=1e-9)
    with flow.no_grad():
        assert not D.ExponentialFamily.entropy(fp_).requires_grad


def test_wishart_kl_by_bregman_divergence(device):
    rng = np.random.default_rng(167)
    df_p, df_q = np.array([4.0, 6.5]), np.array([5.0, 3.5])
    cov_p, cov_q = _spd(rng, (2,), 3), _spd(rng, (2,), 3)
    fp, tp = leaves({"df": df_p, "covariance_matrix": cov_p}, device)
    fq, tq = leaves({"df": df_q, "covariance_matrix": cov_q}, device)
    p, q = D.Wishart(**fp), D.Wishart(**fq)
    kl = D.kl_divergence(p, q)
    assert tuple(kl.shape) == (2,)
    # torch sums the batched df term over the batch: compared one batch element at a time.
    expected = torch.stack(
        [
            TD.kl_divergence(
                TD.Wishart(tp["df"][i], covariance_matrix=tp["covariance_matrix"][i]),
                TD.Wishart(tq["df"][i], covariance_matrix=tq["covariance_matrix"][i]),
            )
            for i in range(2)
        ]
    )
    close(kl, expected, "Wishart KL", rtol=1e-4, atol=1e-4)
    kl.sum().backward()
    expected.sum().backward()
    close(fq["df"].grad, tq["df"].grad, "grad q df", rtol=1e-3, atol=1e-4)
    fg, tg = _sym(np_of(fq["covariance_matrix"].grad)), _sym(tq["covariance_matrix"].grad.numpy())
    np.testing.assert_allclose(fg, tg, rtol=1e-3, atol=1e-4, err_msg="grad q covariance")
    # torch gives p's parameters no gradient: d KL / d df_p against central differences.
    h = 1e-4
    q64 = D.Wishart(flow.tensor(df_q), covariance_matrix=flow.tensor(cov_q))
    kl_at = [
        np_of(
            D.kl_divergence(D.Wishart(flow.tensor(df), covariance_matrix=flow.tensor(cov_p)), q64)
        )
        for df in (df_p + h, df_p - h)
    ]
    numeric = (kl_at[0] - kl_at[1]) / (2 * h)
    np.testing.assert_allclose(np_of(fp["df"].grad), numeric, rtol=2e-3, atol=2e-4)
    close(D.ExponentialFamily.entropy(p), p.entropy(), "Wishart generic entropy", 1e-4, 1e-4)
    np.testing.assert_allclose(np_of(D.kl_divergence(p, p)), 0, atol=1e-4)
