"""oneflow.distributions.kl: the Kullback-Leibler divergence KL(p || q) between distributions,
``kl_divergence(p, q)``, and ``register_kl`` to add formulas for pairs of distribution types.

The formula used for a pair is the registered one whose types match ``type(p)`` and
``type(q)`` most specifically (nearest in their method resolution orders); a pair with no
formula raises NotImplementedError."""

import math
import warnings
from functools import total_ordering

import oneflow
from oneflow.distributions.continuous import Normal, Uniform
from oneflow.distributions.counts import Binomial, Geometric, OneHotCategorical, Poisson
from oneflow.distributions.discrete import Bernoulli, Categorical
from oneflow.distributions.distribution import ExponentialFamily
from oneflow.distributions.multivariate import (
    Dirichlet,
    Independent,
    LowRankMultivariateNormal,
    MultivariateNormal,
    _batch_mahalanobis,
    _lowrank_logdet,
    _lowrank_mahalanobis,
)
from oneflow.distributions.transformed_distribution import TransformedDistribution
from oneflow.distributions.univariate import (
    Beta,
    Cauchy,
    ContinuousBernoulli,
    Exponential,
    Gamma,
    Gumbel,
    HalfNormal,
    Laplace,
    Pareto,
)
from oneflow.distributions.utils import sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}  # (type_p, type_q) -> fn(p, q)
_KL_MEMOIZE = {}  # (type(p), type(q)) -> the chosen fn


def register_kl(type_p, type_q):
    """Decorator registering a function ``fn(p, q)`` computing KL(p || q) for instances of the
    subclasses `type_p` and `type_q` of Distribution::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q):
            ...
    """
    if not isinstance(type_p, type) or not isinstance(type_q, type):
        raise TypeError(f"Expected type_p and type_q to be classes, got {type_p!r} and {type_q!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn

    return decorator


@total_ordering
class _Match:
    """A registered pair of types, ordered so that more specific (subclass) pairs come first."""

    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [
        (super_p, super_q)
        for super_p, super_q in _KL_REGISTRY
        if issubclass(type_p, super_p) and issubclass(type_q, super_q)
    ]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fn = _KL_REGISTRY[left_p, left_q]
    right_fn = _KL_REGISTRY[right_p, right_q]
    if left_fn is not right_fn:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl"
            f"({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return left_fn


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], of shape batch_shape. Raises NotImplementedError
    when no formula is registered for the types of p and q."""
    key = (type(p), type(q))
    fn = _KL_MEMOIZE.get(key)
    if fn is None:
        fn = _dispatch_kl(*key)
        _KL_MEMOIZE[key] = fn
    if fn is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
            f"{type(q).__name__}"
        )
    return fn(p, q)


def _infinite_like(tensor):
    return oneflow.full_like(tensor, math.inf)


def _where_inf(condition, value):
    return oneflow.where(condition, _infinite_like(value), value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    return 0.5 * (var_ratio - 1 - var_ratio.log())


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return (t1 / (4 * p.scale * q.scale)).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * 0.57721566490153286061
    t3 = oneflow.exp(ct2 + oneflow.lgamma(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + 0.57721566490153286061)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    # p puts mass below q's minimum: infinite.
    return _where_inf(p.scale < q.scale, result)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = oneflow.where((q.probs == 0).expand_as(t), _infinite_like(t), t)
    t = oneflow.where((p.probs == 0).expand_as(t), oneflow.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    softplus = oneflow.nn.functional.softplus
    pp, qp = oneflow.broadcast_tensors(p.probs, q.probs)
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _where_inf(qp == 0, t1)
    t1 = oneflow.where(pp == 0, oneflow.zeros_like(t1), t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _where_inf(qp == 1, t2)
    t2 = oneflow.where(pp == 1, oneflow.zeros_like(t2), t2)
    return t1 + t2


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    softplus = oneflow.nn.functional.softplus
    n = p.total_count
    kl = n * (
        p.probs * (softplus(-q.logits) - softplus(-p.logits))
        + (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    )
    return _where_inf(p.total_count > q.total_count, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # E_p[log q(x)] = log q + E_p[x] log(1 - q), with E_p[x] = 1/p - 1.
    cross = q.probs.log() + (1.0 / p.probs - 1.0) * (-q.probs).log1p()
    return -p.entropy() - cross


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _where_inf((q.low > p.low) | (q.high < p.high), result)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (q.loc - p.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    a1, b1, a2, b2 = p.concentration, p.rate, q.concentration, q.rate
    return (
        (a1 - a2) * oneflow.digamma(a1)
        - oneflow.lgamma(a1)
        + oneflow.lgamma(a2)
        + a2 * (b1.log() - b2.log())
        + a1 * (b2 - b1) / b1
    )


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    lgamma, digamma = oneflow.lgamma, oneflow.digamma
    log_beta_p = lgamma(a1) + lgamma(b1) - lgamma(a1 + b1)
    log_beta_q = lgamma(a2) + lgamma(b2) - lgamma(a2 + b2)
    return (
        log_beta_q
        - log_beta_p
        + (a1 - a2) * digamma(a1)
        + (b1 - b2) * digamma(b1)
        + (a2 - a1 + b2 - b1) * digamma(a1 + b1)
    )


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    ap, aq = p.concentration, q.concentration
    sum_p, sum_q = ap.sum(-1), aq.sum(-1)
    t1 = oneflow.lgamma(sum_p) - oneflow.lgamma(sum_q)
    t2 = (oneflow.lgamma(ap) - oneflow.lgamma(aq)).sum(-1)
    t3 = ap - aq
    t4 = oneflow.digamma(ap) - oneflow.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return oneflow.xlogy(p.rate, p.rate) - oneflow.xlogy(p.rate, q.rate) - (p.rate - q.rate)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes cannot "
            "be computed"
        )
    k = p.event_shape[0]
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_log_det_p = Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    half_log_det_q = Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    batch = oneflow.broadcast_shapes(tuple(Lp.shape[:-2]), tuple(Lq.shape[:-2]))
    Lp_b = Lp.expand(*batch, k, k)
    Lq_b = Lq.expand(*batch, k, k)
    # tr(Sq^-1 Sp) = ||Lq^-1 Lp||_F^2; Mahalanobis term = ||Lq^-1 (mu_q - mu_p)||^2.
    term_trace = oneflow.linalg.solve_triangular(Lq_b, Lp_b, upper=False).pow(2).sum((-2, -1))
    diff = (q.loc - p.loc).expand(*batch, k).unsqueeze(-1)
    term_maha = oneflow.linalg.solve_triangular(Lq_b, diff, upper=False).pow(2).sum((-2, -1))
    result = half_log_det_q - half_log_det_p + 0.5 * (term_trace + term_maha - k)
    return result.expand(*p.batch_shape) if len(p.batch_shape) else result


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    extra_event_dim = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra_event_dim)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # The Bregman divergence of the log normaliser A:
    # KL = A(eta_q) - A(eta_p) - <eta_q - eta_p, grad A(eta_p)>, the inner product summed over
    # each natural parameter's dimensions beyond the batch ones.
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot be computed "
            "using Bregman divergences"
        )
    p_params, p_log_normalizer, gradients = p._log_normalizer_and_gradients()
    q_params = q._natural_params
    n_batch = len(oneflow.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape)))
    result = q._log_normalizer(*q_params) - p_log_normalizer
    for eta_p, eta_q, grad in zip(p_params, q_params, gradients):
        term = (eta_q - eta_p) * grad
        result = result - sum_rightmost(term, max(term.ndim - n_batch, 0))
    return result


# ---- ContinuousBernoulli ------------------------------------------------------------------
# E_p[log q(x)] for q = ContinuousBernoulli(lambda) is E_p[x] logit(lambda) + log(1 - lambda) +
# log C(lambda), so KL(p || q) = -H(p) - that whenever p lives on [0, 1].


def _cross_entropy_continuous_bernoulli(mean, q):
    """-E_p[log q(x)] for p of mean `mean` on [0, 1] and q a ContinuousBernoulli."""
    return -mean * q.logits - oneflow.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    log_norm_p = p._cont_bern_log_norm() + oneflow.log1p(-p.probs)
    log_norm_q = q._cont_bern_log_norm() + oneflow.log1p(-q.probs)
    return p.mean * (p.logits - q.logits) + log_norm_p - log_norm_q


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _cross_entropy_continuous_bernoulli(p.mean, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() + _cross_entropy_continuous_bernoulli(p.mean, q)
    # Infinite where the uniform puts mass outside [0, 1].
    return _where_inf((p.low < 0) | (p.high > 1), result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    # -E_p[log q(x)] = log(sigma sqrt(2 pi)) + E_p[(x - mu)^2] / (2 sigma^2).
    second_moment = p.variance + p.mean.pow(2)
    cross = (
        0.5 * math.log(2.0 * math.pi)
        + q.scale.log()
        + (second_moment - 2.0 * q.loc * p.mean + q.loc.pow(2)) / (2.0 * q.scale.pow(2))
    )
    return -p.entropy() + cross


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # Infinite where [0, 1] is not inside [low, high].
    return _where_inf((q.low > 0) | (q.high < 1), result)


# Distributions with mass outside [0, 1] (or, for Pareto as q, none on most of it): infinite.
@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)


@register_kl(Exponential, ContinuousBernoulli)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Gamma, ContinuousBernoulli)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Normal, ContinuousBernoulli)
def _kl_loc_scale_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Pareto, ContinuousBernoulli)
def _kl_pareto_infinity(p, q):
    return _infinite_like(p.scale)


# ---- (low-rank) multivariate normals ------------------------------------------------------
# KL = (log det S_q - log det S_p + tr(S_q^-1 S_p) + |mu_q - mu_p|^2_{S_q^-1} - n) / 2. With
# S_p = F F^T for a factor F of p's covariance, tr(S_q^-1 S_p) = ||L_q^-1 F||^2 for a Cholesky
# factor L_q of S_q, and for a low-rank S_q = W W^T + D, by Woodbury,
# tr(D^-1 F F^T) - ||A F||^2 with A = C^-1 W^T D^-1 (C the capacitance's Cholesky factor).


def _check_event_shapes(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two (Low Rank) Multivariate Normals with different event "
            "shapes cannot be computed"
        )


def _lowrank_woodbury_factor(q):
    """A = C^-1 W^T D^-1 of a LowRankMultivariateNormal q: S_q^-1 = D^-1 - A^T A."""
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    return oneflow.linalg.solve_triangular(
        q._capacitance_tril, W.transpose(-1, -2) / D.unsqueeze(-2), upper=False
    )


def _lowrank_logdet_of(d):
    return _lowrank_logdet(d._unbroadcasted_cov_diag, d._capacitance_tril)


def _squared_norm(x):
    """The squared Frobenius norms of a batch of matrices."""
    return x.pow(2).sum((-2, -1))


def _gaussian_kl(p, log_det_q, log_det_p, trace, mahalanobis):
    result = 0.5 * (log_det_q - log_det_p + trace + mahalanobis - p.event_shape[0])
    batch = oneflow.broadcast_shapes(tuple(result.shape), tuple(p.batch_shape))
    return result.expand(*batch) if len(batch) else result


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_event_shapes(p, q)
    Wp, Dp = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    Dq = q._unbroadcasted_cov_diag
    A = _lowrank_woodbury_factor(q)
    # F = [Wp, Dp^1/2]: tr(Dq^-1 F F^T) = sum Dp / Dq + ||Dq^-1/2 Wp||^2, and
    # ||A F||^2 = ||A Dp^1/2||^2 + ||A Wp||^2.
    trace = (
        (Dp / Dq).sum(-1)
        + _squared_norm(Wp * Dq.rsqrt().unsqueeze(-1))
        - _squared_norm(A * Dp.sqrt().unsqueeze(-2))
        - _squared_norm(A @ Wp)
    )
    mahalanobis = _lowrank_mahalanobis(
        q._unbroadcasted_cov_factor, Dq, q.loc - p.loc, q._capacitance_tril
    )
    return _gaussian_kl(p, _lowrank_logdet_of(q), _lowrank_logdet_of(p), trace, mahalanobis)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrank(p, q):
    _check_event_shapes(p, q)
    Lp = p._unbroadcasted_scale_tril
    Dq = q._unbroadcasted_cov_diag
    A = _lowrank_woodbury_factor(q)
    trace = _squared_norm(Lp * Dq.rsqrt().unsqueeze(-1)) - _squared_norm(A @ Lp)
    mahalanobis = _lowrank_mahalanobis(
        q._unbroadcasted_cov_factor, Dq, q.loc - p.loc, q._capacitance_tril
    )
    log_det_p = 2 * Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return _gaussian_kl(p, _lowrank_logdet_of(q), log_det_p, trace, mahalanobis)


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    _check_event_shapes(p, q)
    Wp, Dp = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    Lq = q._unbroadcasted_scale_tril
    n, m = Wp.shape[-2], Wp.shape[-1]
    batch = tuple(oneflow.broadcast_shapes(tuple(Lq.shape[:-2]), tuple(Wp.shape[:-2])))
    Lq = Lq.expand(*batch, n, n)
    # F = [Wp, diag(Dp^1/2)].
    trace = _squared_norm(
        oneflow.linalg.solve_triangular(Lq, Wp.expand(*batch, n, m), upper=False)
    ) + _squared_norm(
        oneflow.linalg.solve_triangular(
            Lq, oneflow.diag_embed(Dp.sqrt()).expand(*batch, n, n), upper=False
        )
    )
    mahalanobis = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    log_det_q = 2 * q._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return _gaussian_kl(p, log_det_q, _lowrank_logdet_of(p), trace, mahalanobis)
