"""oneflow.distributions.continuous: Normal(loc, scale) and Uniform(low, high) over the reals,
with reparameterized samples (``rsample``: a fixed-noise transform of the parameters, so
gradients flow to them), log densities, CDFs and their inverses."""

import math

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.distribution import Distribution, ExponentialFamily
from oneflow.distributions.utils import broadcast_all

__all__ = ["Normal", "Uniform"]


def _all_numbers(*given):
    """Whether every parameter was given as a number (the distribution then has no batch dims)."""
    return all(not isinstance(v, oneflow.Tensor) for v in given)


class Normal(ExponentialFamily):
    """The normal (Gaussian) distribution with mean `loc` and standard deviation `scale`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if _all_numbers(loc, scale) else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Normal, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = oneflow.randn(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale.pow(2)
        return (
            -((value - self.loc) ** 2) / (2 * var)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + oneflow.erf((value - self.loc) / self.scale / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * oneflow.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + oneflow.log(self.scale)

    @property
    def _natural_params(self):
        precision = self.scale.pow(2).reciprocal()
        return (self.loc * precision, -0.5 * precision)

    def _log_normalizer(self, x, y):
        # eta = (mu / s^2, -1 / (2 s^2)): A = mu^2 / (2 s^2) + log(s sqrt(2 pi)).
        return -0.25 * x.pow(2) / y + 0.5 * oneflow.log(-math.pi / y)


class Uniform(Distribution):
    """The uniform distribution on the half-open interval [`low`, `high`)."""

    has_rsample = True

    @property
    def arg_constraints(self):
        return {
            "low": constraints.less_than(self.high),
            "high": constraints.greater_than(self.low),
        }

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = () if _all_numbers(low, high) else self.low.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Uniform, ("low", "high"), batch_shape, _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high  # every point of the interval is a mode

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = oneflow.rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value) & (self.high > value)
        # log(1) or log(0) = -inf outside, minus the log of the interval's length.
        return oneflow.log(inside.to(self.low.dtype)) - oneflow.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return oneflow.log(self.high - self.low)
