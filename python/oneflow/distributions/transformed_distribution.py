"""oneflow.distributions.transformed_distribution: TransformedDistribution (a base distribution
pushed through a sequence of transforms) and the distributions built that way: LogNormal (a
Normal through exp), HalfCauchy (|Cauchy|), InverseGamma (1 / Gamma), Kumaraswamy (from a
uniform variate) and LogisticNormal (a Normal vector through the stick-breaking map)."""

import math

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.continuous import Normal, Uniform
from oneflow.distributions.distribution import Distribution
from oneflow.distributions.multivariate import Independent
from oneflow.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    StickBreakingTransform,
    Transform,
)
from oneflow.distributions.univariate import Cauchy, Gamma
from oneflow.distributions.utils import broadcast_all, sum_rightmost

__all__ = [
    "HalfCauchy",
    "InverseGamma",
    "Kumaraswamy",
    "LogNormal",
    "LogisticNormal",
    "TransformedDistribution",
]

_EULER_GAMMA = 0.57721566490153286061


class TransformedDistribution(Distribution):
    """The distribution of ``t_n(...t_1(X))`` for X drawn from `base_distribution` and
    `transforms` (a Transform or a list of them) t_1..t_n. ``log_prob`` applies the change of
    variables formula with each transform's ``log_abs_det_jacobian``; ``cdf`` and ``icdf`` exist
    for monotone elementwise transforms when the base distribution has them."""

    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(
                f"base_distribution needs to have shape with size at least "
                f"{transform.domain.event_dim}, but got {base_shape}."
            )
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[: len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        transform_change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + transform_change)
        batch_shape = forward_shape[: len(forward_shape) - event_dim]
        event_shape = forward_shape[len(forward_shape) - event_dim :]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = oneflow.Size(batch_shape)
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch_shape = shape[: len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        with oneflow.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(
                t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim
            )
            y = x
        return log_prob + sum_rightmost(
            self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape)
        )

    def _monotonize_cdf(self, value):
        """value, or 1 - value when the composed transform is decreasing."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        value = self.base_dist.cdf(value)
        return self._monotonize_cdf(value)

    def icdf(self, value):
        value = self._monotonize_cdf(value)
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value


class LogNormal(TransformedDistribution):
    """The distribution of exp(X) for X ~ Normal(`loc`, `scale`)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class HalfCauchy(TransformedDistribution):
    """|X| for X ~ Cauchy(0, `scale`), on the nonnegative reals; its mean and variance are
    infinite."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return oneflow.full(
            tuple(self._extended_shape()),
            math.inf,
            dtype=self.scale.dtype,
            device=self.scale.device,
        )

    @property
    def mode(self):
        return oneflow.zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        # |X| folds the Cauchy density onto x >= 0: twice it there, 0 (log -inf) below.
        if self._validate_args:
            self._validate_sample(value)
        scale = self.base_dist.scale
        value = oneflow.as_tensor(value, dtype=scale.dtype, device=scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return oneflow.where(value >= 0, log_prob, -math.inf * oneflow.ones_like(log_prob))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(`concentration`, `rate`): density
    rate^a x^(-a-1) exp(-rate / x) / Gamma(a) on the positive reals."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        rate = base_dist.rate
        minus_one = -oneflow.ones((), dtype=rate.dtype, device=rate.device)
        super().__init__(base_dist, PowerTransform(minus_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        a = self.concentration
        mean = self.rate / (a - 1)
        return oneflow.where(a > 1, mean, math.inf * oneflow.ones_like(mean))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        var = self.rate.pow(2) / ((a - 1).pow(2) * (a - 2))
        return oneflow.where(a > 2, var, math.inf * oneflow.ones_like(var))

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + oneflow.lgamma(a) - (1 + a) * oneflow.digamma(a)


def _kumaraswamy_moment(a, b, n):
    """E[X^n] of Kumaraswamy(a, b): b B(1 + n / a, b)."""
    shifted = 1 + n / a
    return b * oneflow.exp(
        oneflow.lgamma(shifted) + oneflow.lgamma(b) - oneflow.lgamma(shifted + b)
    )


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on [0, 1] with concentrations `concentration1` (a) and
    `concentration0` (b): density a b x^(a-1) (1 - x^a)^(b-1), CDF 1 - (1 - x^a)^b. Samples are
    (1 - U^(1/b))^(1/a) for a uniform U (the transforms of a Uniform(0, 1) base)."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        c0 = self.concentration0
        base_dist = Uniform(
            oneflow.zeros_like(c0), oneflow.ones_like(c0), validate_args=validate_args
        )
        transforms = [
            PowerTransform(c0.reciprocal()),
            AffineTransform(1.0, -1.0),
            PowerTransform(self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(*batch_shape)
        new.concentration0 = self.concentration0.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1 / a) where a >= 1 and b >= 1 but not both 1 (0 for a = 1,
        # 1 for b = 1); NaN elsewhere (the density is unbounded or, for a = b = 1, flat).
        a, b = self.concentration1, self.concentration0
        defined = (a >= 1) & (b >= 1) & ((a > 1) | (b > 1))
        safe_a = oneflow.where(defined, a, 2 * oneflow.ones_like(a))
        safe_b = oneflow.where(defined, b, 2 * oneflow.ones_like(b))
        mode = ((safe_a - 1) / (safe_a * safe_b - 1)).pow(safe_a.reciprocal())
        return oneflow.where(defined, mode, math.nan * oneflow.ones_like(mode))

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _kumaraswamy_moment(a, b, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = oneflow.digamma(b + 1) + _EULER_GAMMA
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic_b - a.log() - b.log()


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution on the simplex of K + 1 entries: the stick-breaking
    map (``StickBreakingTransform``) of a vector X of K independent Normal(`loc`, `scale`)
    entries, `loc` and `scale` broadcasting to (..., K). A scalar Normal is taken as K = 1."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand((1,))
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
