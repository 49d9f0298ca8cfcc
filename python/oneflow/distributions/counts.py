"""oneflow.distributions.counts: distributions over counts and one-hot vectors, Poisson,
Binomial, Multinomial, NegativeBinomial, Geometric, OneHotCategorical and
OneHotCategoricalStraightThrough.

oneflow has no ``poisson`` or ``binomial`` sampling op: Poisson variates are drawn here by
multiplying uniforms (rates below 10) or Hormann's PTRS transformed rejection (rates of 10 and
more), and binomial variates as sums of Bernoulli trials."""

import math

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.discrete import CategoricalParams
from oneflow.distributions.distribution import Distribution, ExponentialFamily, ProbsOrLogits
from oneflow.distributions.utils import broadcast_all

__all__ = [
    "Binomial",
    "Geometric",
    "Multinomial",
    "NegativeBinomial",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Poisson",
]


def _sample_poisson(rate, generator=None):
    """Poisson variates of the shape of `rate` (detached, nonnegative), of its dtype, drawn with
    `generator` (None: the default generator)."""
    out_dtype = rate.dtype
    with oneflow.no_grad():
        # float64 throughout: PTRS compares log-probabilities of size ~rate * log(rate).
        rate = rate.detach().to(oneflow.float64)
        dtype, device = rate.dtype, rate.device
        shape = tuple(rate.shape)
        result = oneflow.zeros_like(rate)
        # Small rates: count uniforms multiplied before the product drops below exp(-rate).
        small = rate < 10
        if bool(small.any()):
            limit = oneflow.exp(-rate)
            product = oneflow.rand(shape, dtype=dtype, device=device, generator=generator)
            count = oneflow.zeros_like(rate)
            active = small & (product > limit)
            while bool(active.any()):
                count = count + active.to(dtype)
                product = product * oneflow.where(
                    active,
                    oneflow.rand(shape, dtype=dtype, device=device, generator=generator),
                    oneflow.ones_like(rate),
                )
                active = active & (product > limit)
            result = oneflow.where(small, count, result)
        large = ~small
        if bool(large.any()):
            lam = oneflow.where(large, rate, 10 * oneflow.ones_like(rate))
            slam = lam.sqrt()
            loglam = lam.log()
            b = 0.931 + 2.53 * slam
            a = -0.059 + 0.02483 * b
            invalpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2)
            done = small.clone()
            for _ in range(1000):
                u = oneflow.rand(shape, dtype=dtype, device=device, generator=generator) - 0.5
                v = oneflow.rand(shape, dtype=dtype, device=device, generator=generator)
                us = 0.5 - u.abs()
                k = oneflow.floor((2 * a / us + b) * u + lam + 0.43)
                quick = (us >= 0.07) & (v <= vr)
                reject = (k < 0) | ((us < 0.013) & (v > us))
                k_safe = k.clamp(min=0)
                slow = v.clamp(min=oneflow.finfo(dtype).tiny).log() + invalpha.log() - (
                    a / (us * us) + b
                ).log() <= -lam + k_safe * loglam - oneflow.lgamma(k_safe + 1)
                accept = quick | (~reject & slow)
                new = accept & ~done
                result = oneflow.where(new, k_safe, result)
                done = done | accept
                if bool(done.all()):
                    break
        return result.to(out_dtype)


class Poisson(ExponentialFamily):
    """The Poisson distribution with rate `rate` (nonnegative) over 0, 1, 2, ...; samples are
    floats of the rate's dtype."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if not isinstance(rate, oneflow.Tensor) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, ("rate",), batch_shape, _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _sample_poisson(self.rate.expand(*shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        value = value.to(rate.dtype)
        return oneflow.xlogy(value, rate) - rate - oneflow.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (oneflow.log(self.rate),)

    def _log_normalizer(self, x):
        return oneflow.exp(x)


class Binomial(ProbsOrLogits, Distribution):
    """The number of successes in `total_count` independent trials of success probability
    `probs` (or sigmoid(`logits`)). Samples are floats of the parameter's dtype."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        total_count, param = self._init_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.to(param.dtype)
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = ("total_count", "probs", "logits")
        return self._expand_params(Binomial, names, batch_shape, _instance)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with oneflow.no_grad():
            n = self.total_count.detach().expand(*shape)
            p = self.probs.detach().expand(*shape)
            count = oneflow.zeros_like(p)
            max_n = int(n.max().item()) if n.numel() else 0
            chunk = 64
            for start in range(0, max_n, chunk):
                width = min(chunk, max_n - start)
                trial = oneflow.arange(start, start + width, dtype=p.dtype, device=p.device)
                u = oneflow.rand(tuple(shape) + (width,), dtype=p.dtype, device=p.device)
                hits = (u < p.unsqueeze(-1)) & (trial < n.unsqueeze(-1))
                count = count + hits.to(p.dtype).sum(-1)
            return count

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        logits = self.logits
        value = value.to(logits.dtype)
        log_comb = oneflow.lgamma(n + 1) - oneflow.lgamma(value + 1) - oneflow.lgamma(n - value + 1)
        # k log p + (n - k) log(1 - p) = k * logits - n * log(1 + exp(logits)).
        return log_comb + value * logits - n * oneflow.nn.functional.softplus(logits)

    def entropy(self):
        n = int(self.total_count.max().item())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(oneflow.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        n = int(self.total_count.max().item())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = oneflow.arange(1 + n, dtype=self._param.dtype, device=self._param.device)
        values = values.view(-1, *([1] * len(self._batch_shape)))
        if expand:
            values = values.expand(-1, *self._batch_shape)
        return values


class Geometric(ProbsOrLogits, Distribution):
    """The number of failures before the first success in independent trials of success
    probability `probs` (or sigmoid(`logits`)), over 0, 1, 2, ..."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        (param,) = self._init_probs_or_logits(probs, logits)
        super().__init__(param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            if not bool((param > 0).all()):
                raise ValueError(
                    f"Expected parameter probs ({type(param).__name__} of shape "
                    f"{tuple(param.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{param}"
                )

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Geometric, ("probs", "logits"), batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return oneflow.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with oneflow.no_grad():
            p = self.probs.detach().expand(*shape)
            tiny = oneflow.finfo(p.dtype).tiny
            u = oneflow.rand(tuple(shape), dtype=p.dtype, device=p.device).clamp(min=tiny)
            return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        value = value.to(probs.dtype)
        # At probs == 1 the value 0 has probability 1: 0 * log(0) taken as 0.
        safe = oneflow.where((probs == 1) & (value == 0), oneflow.zeros_like(probs), probs)
        return value * (-safe).log1p() + self.probs.log()

    def entropy(self):
        return (
            oneflow.nn.functional.binary_cross_entropy_with_logits(
                self.logits, self.probs, reduction="none"
            )
            / self.probs
        )


class OneHotCategorical(CategoricalParams, Distribution):
    """``Categorical`` with its classes written as one-hot vectors of length K (the event
    shape), of the parameter's dtype."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape, event_shape = self._init_categorical(probs, logits)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_categorical(OneHotCategorical, batch_shape, _instance)

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return oneflow.nn.functional.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return oneflow.nn.functional.one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.argmax(-1)
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = oneflow.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view(n, *([1] * len(self.batch_shape)), n)
        if expand:
            values = values.expand(n, *self.batch_shape, n)
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """``OneHotCategorical`` with the straight-through gradient estimator (Bengio et al., 2013):
    ``rsample`` returns one-hot samples whose gradient is that of ``probs``."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Multinomial(CategoricalParams, Distribution):
    """The counts of each of K classes (the last dimension of `probs` or `logits`) in
    `total_count` independent Categorical draws; samples are float vectors of the parameter's
    dtype. ``total_count`` is an int and only ``log_prob`` accepts other totals (as PyTorch)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        batch_shape, event_shape = self._init_categorical(probs, logits)
        self._binomial = Binomial(total_count=total_count, probs=self._categorical.probs)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_categorical(Multinomial, batch_shape, _instance, ("total_count",))
        new._binomial = self._binomial.expand(tuple(batch_shape) + tuple(self.event_shape))
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        sample_shape = tuple(oneflow.Size(sample_shape))
        probs = self._categorical.probs
        k = probs.shape[-1]
        with oneflow.no_grad():
            draws = self._categorical.sample((self.total_count,) + sample_shape)
            counts = oneflow.nn.functional.one_hot(draws, k).to(probs.dtype).sum(0)
            return counts.reshape(*self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        value = value.to(logits.dtype)
        # A class of probability 0 (logit -inf) drawn 0 times contributes 0, not NaN.
        logits = oneflow.where(
            (value == 0) & oneflow.isinf(logits), oneflow.zeros_like(logits), logits
        )
        log_factorial_n = oneflow.lgamma(value.sum(-1) + 1)
        log_factorial_xs = oneflow.lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        # H = n H(categorical) - log n! + sum_k E[log x_k!], x_k ~ Binomial(n, p_k).
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = oneflow.exp(self._binomial.log_prob(support))
        weights = oneflow.lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum(0).sum(-1)


class NegativeBinomial(ProbsOrLogits, Distribution):
    """The number of successes, each of probability `probs` (or sigmoid(`logits`)), before
    `total_count` failures in independent trials. Samples (floats) are Poisson variates of
    Gamma(total_count, (1 - probs) / probs) rates."""

    arg_constraints = {
        "total_count": constraints.nonnegative,
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        total_count, param = self._init_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.to(param.dtype)
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = ("total_count", "probs", "logits")
        return self._expand_params(NegativeBinomial, names, batch_shape, _instance)

    @property
    def mean(self):
        return self.total_count * oneflow.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * oneflow.exp(self.logits)).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / oneflow.sigmoid(-self.logits)

    def sample(self, sample_shape=()):
        from oneflow.distributions.univariate import _standard_gamma

        shape = self._extended_shape(sample_shape)
        with oneflow.no_grad():
            r = self.total_count.detach().expand(*shape)
            odds = oneflow.exp(self.logits.detach()).expand(*shape)
            rate = _standard_gamma(r.clamp(min=oneflow.finfo(r.dtype).tiny)) * odds
            rate = oneflow.where(r > 0, rate, oneflow.zeros_like(rate))
            return _sample_poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = oneflow.nn.functional.logsigmoid
        r = self.total_count
        value = value.to(r.dtype)
        log_unnormalized = r * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = (
            -oneflow.lgamma(r + value) + oneflow.lgamma(1.0 + value) + oneflow.lgamma(r)
        )
        # total_count + value == 0 (a point mass at 0): log_normalization 0 there.
        log_normalization = oneflow.where(
            r + value == 0, oneflow.zeros_like(log_normalization), log_normalization
        )
        return log_unnormalized - log_normalization
