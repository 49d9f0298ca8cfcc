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
from oneflow.distributions.multivariate import Dirichlet, Independent, MultivariateNormal
from oneflow.distributions.transformed_distribution import TransformedDistribution
from oneflow.distributions.univariate import (
    Beta,
    Cauchy,
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
