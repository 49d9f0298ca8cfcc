"""oneflow.distributions.univariate: more scalar continuous distributions, Laplace, Exponential,
Gamma, Chi2, Beta, StudentT, HalfNormal, Cauchy, Gumbel, Weibull, Pareto, FisherSnedecor,
GeneralizedPareto, ContinuousBernoulli and the circular VonMises, and the Marsaglia-Tsang gamma
sampler that Gamma, Chi2, Beta, StudentT and FisherSnedecor build on.

oneflow has no gamma sampling op, so gamma variates are drawn here with tensor ops (Marsaglia and
Tsang's rejection method). Their gradient with respect to the concentration is the implicit
reparameterization gradient, as PyTorch's: the derivative of the incomplete gamma function is
computed from its series (Wilson-Hilferty's approximation above concentration 200); it agrees with
``torch._standard_gamma_grad`` to about 1e-3 relative."""

import math

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.distribution import Distribution, ExponentialFamily, ProbsOrLogits
from oneflow.distributions.utils import broadcast_all, clamp_probs, lazy_property

__all__ = [
    "Beta",
    "Cauchy",
    "Chi2",
    "ContinuousBernoulli",
    "Exponential",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Gumbel",
    "HalfNormal",
    "Laplace",
    "Pareto",
    "StudentT",
    "VonMises",
    "Weibull",
]


def _all_numbers(*given):
    return all(not isinstance(v, oneflow.Tensor) for v in given)


def _standard_gamma(concentration):
    """Gamma(concentration, 1) variates of the shape of `concentration`, by Marsaglia and
    Tsang's squeeze-rejection method (for concentration < 1 from concentration + 1, times
    U ** (1 / concentration)). Not differentiable: run under no_grad on detached values."""
    with oneflow.no_grad():
        alpha = concentration.detach()
        dtype, device = alpha.dtype, alpha.device
        small = alpha < 1
        boosted = oneflow.where(small, alpha + 1, alpha)
        d = boosted - 1.0 / 3.0
        c = 1.0 / (9.0 * d).sqrt()
        result = oneflow.zeros_like(alpha)
        done = oneflow.zeros(alpha.shape, dtype=oneflow.bool, device=device)
        for _ in range(1000):
            x = oneflow.randn(tuple(alpha.shape), dtype=dtype, device=device)
            u = oneflow.rand(tuple(alpha.shape), dtype=dtype, device=device)
            v = (1 + c * x) ** 3
            positive = v > 0
            v_safe = oneflow.where(positive, v, oneflow.ones_like(v))
            accept = positive & (
                u.clamp(min=oneflow.finfo(dtype).tiny).log()
                < 0.5 * x * x + d - d * v_safe + d * v_safe.log()
            )
            new = accept & ~done
            result = oneflow.where(new, d * v_safe, result)
            done = done | accept
            if bool(done.all()):
                break
        u = oneflow.rand(tuple(alpha.shape), dtype=dtype, device=device)
        boost = u.clamp(min=oneflow.finfo(dtype).tiny).pow(1.0 / alpha)
        result = oneflow.where(small, result * boost, result)
        return result.clamp(min=oneflow.finfo(dtype).tiny)


def _standard_gamma_grad(alpha, x):
    """d x / d alpha of a Gamma(alpha, 1) variate x held at a fixed CDF value (implicit
    reparameterization): -(dP(alpha, x)/d alpha) / pdf(x), P the regularized lower incomplete
    gamma function. For alpha < 200 P comes from its series x^a e^-x / Gamma(a+1) * S,
    S = sum_n x^n Gamma(a+1) / Gamma(a+n+1), computed in float64, which gives
    dx/da = -(x S / a) (log x - digamma(a+1) + S'/S); above that from the Wilson-Hilferty
    approximation x = a (1 - c + z sqrt(c))^3, c = 1 / (9a), at a fixed z."""
    with oneflow.no_grad():
        a = alpha.detach().to(oneflow.float64)
        x = x.detach().to(oneflow.float64)
        large = a >= 200
        # Wilson-Hilferty, for large concentrations.
        a_wh = oneflow.where(large, a, 200 * oneflow.ones_like(a))
        c = 1.0 / (9.0 * a_wh)
        u = (x / a_wh).pow(1.0 / 3.0)
        z = (u - 1 + c) / c.sqrt()
        du = c / a_wh - z * c.sqrt() / (2 * a_wh)
        grad_wh = u.pow(3) + 3 * a_wh * u.pow(2) * du
        # The series, for the rest.
        a_s = oneflow.where(large, oneflow.ones_like(a), a)
        x_s = oneflow.where(large, oneflow.ones_like(x), x)
        log_x = x_s.log()
        total = oneflow.ones_like(x_s)
        total_d = oneflow.zeros_like(x_s)
        log_term = oneflow.zeros_like(x_s)
        harmonic = oneflow.zeros_like(x_s)  # digamma(a+1) - digamma(a+n+1) = -sum 1/(a+k)
        x_max = float(x_s.max().item()) if x_s.numel() else 0.0
        n_terms = int(math.ceil(x_max + 12 * math.sqrt(x_max) + 40))
        for n in range(1, n_terms + 1):
            log_term = log_term + log_x - (a_s + n).log()
            harmonic = harmonic - 1.0 / (a_s + n)
            term = log_term.exp()
            total = total + term
            total_d = total_d + term * harmonic
            if n % 16 == 0 and bool((term < 1e-17 * total).all()):
                break
        dlog_p = log_x - oneflow.digamma(a_s + 1) + total_d / total
        grad_series = -(x_s * total / a_s) * dlog_p
        return oneflow.where(large, grad_wh, grad_series).to(alpha.dtype)


def _reparameterized_gamma(concentration):
    """Gamma(concentration, 1) variates whose gradient with respect to `concentration` is the
    implicit reparameterization gradient (value x, derivative _standard_gamma_grad)."""
    x = _standard_gamma(concentration)
    if not (concentration.requires_grad and oneflow.is_grad_enabled()):
        return x
    grad = _standard_gamma_grad(concentration, x)
    return x + (concentration - concentration.detach()) * grad


class Laplace(Distribution):
    """The Laplace distribution with location `loc` and scale `scale`: density
    exp(-|x - loc| / scale) / (2 scale)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if _all_numbers(loc, scale) else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = oneflow.finfo(self.loc.dtype).eps
        u = oneflow.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        u = (2 * u - 1).clamp(min=eps - 1)  # in (-1, 1)
        return self.loc - self.scale * u.sign() * oneflow.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -oneflow.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * oneflow.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * oneflow.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + oneflow.log(2 * self.scale)


class Exponential(ExponentialFamily):
    """The exponential distribution with rate `rate`: density rate * exp(-rate * x), x >= 0."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if _all_numbers(rate) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, ("rate",), batch_shape, _instance)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return oneflow.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = oneflow.rand(tuple(shape), dtype=self.rate.dtype, device=self.rate.device)
        return -oneflow.log1p(-u) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - oneflow.exp(-self.rate * value)

    def icdf(self, value):
        return -oneflow.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - oneflow.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -oneflow.log(-x)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape `concentration` and inverse scale `rate`: density
    rate^a x^(a-1) exp(-rate x) / Gamma(a).

    Samples are drawn by Marsaglia-Tsang rejection; ``rsample`` is differentiable with respect
    to `rate` exactly and to `concentration` by implicit reparameterization (first order only:
    no second derivatives). ``cdf`` is the regularized incomplete gamma function, differentiable
    with respect to the value and `rate` only (as PyTorch's)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = () if _all_numbers(concentration, rate) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, ("concentration", "rate"), batch_shape, _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = _reparameterized_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)
        return value.clamp(min=oneflow.finfo(value.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = oneflow.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        a = self.concentration
        return (
            oneflow.xlogy(a, self.rate)
            + oneflow.xlogy(a - 1, value)
            - self.rate * value
            - oneflow.lgamma(a)
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return oneflow.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - oneflow.log(self.rate) + oneflow.lgamma(a) + (1.0 - a) * oneflow.digamma(a)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        # eta = (a - 1, -rate): A = lgamma(a) - a log(rate).
        return oneflow.lgamma(x + 1) + (x + 1) * oneflow.log(-y.reciprocal())


class Beta(ExponentialFamily):
    """The beta distribution on [0, 1] with concentrations `concentration1` (alpha) and
    `concentration0` (beta): density x^(a-1) (1-x)^(b-1) / B(a, b).

    Samples are X / (X + Y) for gamma variates X, Y, differentiable (first order) with respect
    to the concentrations as ``Gamma.rsample``."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        batch_shape = (
            () if _all_numbers(concentration1, concentration0) else self.concentration1.shape
        )
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            Beta, ("concentration1", "concentration0"), batch_shape, _instance
        )

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        # The Dirichlet mode of (a, b), as PyTorch: (a-1)+ / ((a-1)+ + (b-1)+) (NaN when both
        # clamped terms are 0), and 1 when a and b are both below 1 (the density is U-shaped).
        a, b = self.concentration1, self.concentration0
        a1, b1 = (a - 1).clamp(min=0), (b - 1).clamp(min=0)
        interior = a1 / (a1 + b1)
        return oneflow.where((a < 1) & (b < 1), oneflow.ones_like(interior), interior)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _reparameterized_gamma(self.concentration1.expand(*shape))
        y = _reparameterized_gamma(self.concentration0.expand(*shape))
        eps = oneflow.finfo(x.dtype).eps
        return (x / (x + y)).clamp(min=eps, max=1 - eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = oneflow.as_tensor(value, dtype=self.concentration1.dtype)
        a, b = self.concentration1, self.concentration0
        return (
            oneflow.xlogy(a - 1, value)
            + oneflow.xlogy(b - 1, 1 - value)
            - (oneflow.lgamma(a) + oneflow.lgamma(b) - oneflow.lgamma(a + b))
        )

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        log_beta = oneflow.lgamma(a) + oneflow.lgamma(b) - oneflow.lgamma(total)
        return (
            log_beta
            - (a - 1) * oneflow.digamma(a)
            - (b - 1) * oneflow.digamma(b)
            + (total - 2) * oneflow.digamma(total)
        )

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return oneflow.lgamma(x) + oneflow.lgamma(y) - oneflow.lgamma(x + y)


class StudentT(Distribution):
    """Student's t distribution with `df` degrees of freedom, location `loc` and scale `scale`.
    Samples are loc + scale * Z / sqrt(V / df) for a standard normal Z and chi-square V (a gamma
    variate): ``rsample`` is differentiable (first order) with respect to all three."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        batch_shape = () if _all_numbers(df, loc, scale) else self.df.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(StudentT, ("df", "loc", "scale"), batch_shape, _instance)

    @property
    def mean(self):
        return oneflow.where(self.df > 1, self.loc, math.nan * oneflow.ones_like(self.loc))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2).clamp(min=oneflow.finfo(df.dtype).tiny)
        result = oneflow.where(df > 2, finite, math.inf * oneflow.ones_like(finite))
        return oneflow.where(df <= 1, math.nan * oneflow.ones_like(finite), result)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        z = oneflow.randn(tuple(shape), dtype=self.df.dtype, device=self.df.device)
        chi2 = 2 * _reparameterized_gamma(0.5 * self.df.expand(*shape))
        return self.loc + self.scale * z * (chi2 / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (
            self.scale.log()
            + 0.5 * df.log()
            + 0.5 * math.log(math.pi)
            + oneflow.lgamma(0.5 * df)
            - oneflow.lgamma(0.5 * (df + 1.0))
        )
        return -0.5 * (df + 1.0) * oneflow.log1p(y.pow(2) / df) - z

    def entropy(self):
        df = self.df
        log_beta = oneflow.lgamma(0.5 * df) + math.lgamma(0.5) - oneflow.lgamma(0.5 * (df + 1))
        return (
            self.scale.log()
            + 0.5 * (df + 1) * (oneflow.digamma(0.5 * (df + 1)) - oneflow.digamma(0.5 * df))
            + 0.5 * df.log()
            + log_beta
        )


class Chi2(Gamma):
    """The chi-square distribution with `df` degrees of freedom: Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class HalfNormal(Distribution):
    """|X| for X ~ Normal(0, `scale`), on the nonnegative reals."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        (self.scale,) = broadcast_all(scale)
        batch_shape = () if _all_numbers(scale) else self.scale.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(HalfNormal, ("scale",), batch_shape, _instance)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return oneflow.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = oneflow.randn(tuple(shape), dtype=self.scale.dtype, device=self.scale.device)
        return (eps * self.scale).abs()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = (
            -(value**2) / (2 * self.scale.pow(2)) - self.scale.log() + 0.5 * math.log(2 / math.pi)
        )
        return oneflow.where(value >= 0, log_prob, -math.inf * oneflow.ones_like(log_prob))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return oneflow.erf(value / (self.scale * math.sqrt(2)))

    def icdf(self, prob):
        return self.scale * oneflow.erfinv(prob) * math.sqrt(2)

    def entropy(self):
        return 0.5 * math.log(math.pi * math.e / 2) + self.scale.log()


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution with median `loc` and half width `scale`; its mean is
    undefined (NaN) and its variance infinite."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if _all_numbers(loc, scale) else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self):
        return math.nan * oneflow.ones_like(self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return math.inf * oneflow.ones_like(self.loc)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = oneflow.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * oneflow.tan(math.pi * (u - 0.5))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - oneflow.log1p(z.pow(2))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return oneflow.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return oneflow.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


_EULER_GAMMA = 0.57721566490153286061


class Gumbel(Distribution):
    """The Gumbel (type I extreme value) distribution with location `loc` and scale `scale`:
    CDF exp(-exp(-(x - loc) / scale))."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if _all_numbers(loc, scale) else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gumbel, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self):
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        finfo = oneflow.finfo(self.loc.dtype)
        u = oneflow.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        u = u.clamp(min=finfo.tiny, max=1 - finfo.eps)
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -(z + oneflow.exp(-z)) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return oneflow.exp(-oneflow.exp(-(value - self.loc) / self.scale))

    def icdf(self, value):
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self):
        return self.scale.log() + (1 + _EULER_GAMMA)


class Weibull(Distribution):
    """The Weibull distribution with scale `scale` and shape `concentration` k: CDF
    1 - exp(-(x / scale)^k) on the positive reals. Its mode is 0 for k <= 1 (PyTorch's formula
    gives other values there)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        batch_shape = () if _all_numbers(scale, concentration) else self.scale.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Weibull, ("scale", "concentration"), batch_shape, _instance)

    @property
    def mean(self):
        return self.scale * oneflow.exp(oneflow.lgamma(1 + self.concentration.reciprocal()))

    @property
    def mode(self):
        k = self.concentration
        ratio = ((k - 1) / k).clamp(min=0)
        return self.scale * ratio.pow(k.reciprocal())

    @property
    def variance(self):
        k_inv = self.concentration.reciprocal()
        return self.scale.pow(2) * (
            oneflow.exp(oneflow.lgamma(1 + 2 * k_inv)) - oneflow.exp(2 * oneflow.lgamma(1 + k_inv))
        )

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = oneflow.rand(tuple(shape), dtype=self.scale.dtype, device=self.scale.device)
        u = u.clamp(min=oneflow.finfo(u.dtype).tiny)
        return self.scale * (-u.log()).pow(self.concentration.reciprocal())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        z = value / self.scale
        return (k / self.scale).log() + (k - 1) * z.log() - z.pow(k)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -oneflow.expm1(-(value / self.scale).pow(self.concentration))

    def icdf(self, value):
        return self.scale * (-oneflow.log1p(-value)).pow(self.concentration.reciprocal())

    def entropy(self):
        k = self.concentration
        return _EULER_GAMMA * (1 - k.reciprocal()) + (self.scale / k).log() + 1


class Pareto(Distribution):
    """The Pareto (type I) distribution with minimum `scale` and tail index `alpha`: density
    alpha scale^alpha / x^(alpha + 1) for x >= scale."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        batch_shape = () if _all_numbers(scale, alpha) else self.scale.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Pareto, ("scale", "alpha"), batch_shape, _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1 + oneflow.finfo(self.alpha.dtype).eps)
        finite = a * self.scale / (a - 1)
        return oneflow.where(self.alpha > 1, finite, math.inf * oneflow.ones_like(finite))

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2 + 2 * oneflow.finfo(self.alpha.dtype).eps)
        finite = self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))
        return oneflow.where(self.alpha > 2, finite, math.inf * oneflow.ones_like(finite))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = oneflow.rand(tuple(shape), dtype=self.scale.dtype, device=self.scale.device)
        return self.scale * oneflow.exp(-oneflow.log1p(-u) / self.alpha)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.alpha.log() + self.alpha * self.scale.log() - (self.alpha + 1) * value.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (self.scale / value).pow(self.alpha)

    def icdf(self, value):
        return self.scale * oneflow.exp(-oneflow.log1p(-value) / self.alpha)

    def entropy(self):
        return (self.scale / self.alpha).log() + self.alpha.reciprocal() + 1


def _log_bessel_i0(x):
    """log I0(x) for x > 0 (I0 the modified Bessel function of the first kind), from the
    exponentially scaled ``i0e`` so that it stays finite for large x."""
    return oneflow.special.i0e(x).log() + x


class VonMises(Distribution):
    """The von Mises distribution on the circle with mean direction `loc` and concentration
    `concentration` = k (positive): density exp(k cos(x - loc)) / (2 pi I0(k)).

    Angles are in radians; `loc` and the values given to ``log_prob`` may be any reals (taken
    modulo 2 pi), samples lie in [-pi, pi). ``mean`` and ``variance`` are the circular ones:
    the mean direction and 1 - I1(k) / I0(k). Samples are drawn by Best
    and Fisher's rejection method (1979) in float64; there is no reparameterized sample."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, ("loc", "concentration"), batch_shape, _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        k = self.concentration
        return 1 - oneflow.special.i1e(k) / oneflow.special.i0e(k)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with oneflow.no_grad():
            loc = self.loc.detach().to(oneflow.float64).expand(*shape)
            k = self.concentration.detach().to(oneflow.float64).expand(*shape)
            dtype, device = k.dtype, k.device
            # The wrapped Cauchy envelope's parameter r; 1 / k + k to second order for tiny k.
            tau = 1 + (1 + 4 * k * k).sqrt()
            rho = (tau - (2 * tau).sqrt()) / (2 * k)
            r = oneflow.where(k < 1e-5, 1 / k + k, (1 + rho * rho) / (2 * rho))
            theta = oneflow.zeros(shape, dtype=dtype, device=device)
            done = oneflow.zeros(shape, dtype=oneflow.bool, device=device)
            # Each round accepts with probability above 0.65, so 1000 rounds leave nothing
            # undone in practice.
            for _ in range(1000):
                u1 = oneflow.rand(shape, dtype=dtype, device=device)
                u2 = oneflow.rand(shape, dtype=dtype, device=device)
                u3 = oneflow.rand(shape, dtype=dtype, device=device)
                z = oneflow.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                accept = (c * (2 - c) > u2) | ((c / u2).log() + 1 - c >= 0)
                angle = oneflow.sign(u3 - 0.5) * oneflow.acos(f.clamp(min=-1, max=1))
                theta = oneflow.where(accept & ~done, angle, theta)
                done = done | accept
                if bool(done.all()):
                    break
            return ((theta + loc + math.pi) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * oneflow.cos(value - self.loc) - math.log(2 * math.pi) - _log_bessel_i0(k)


class FisherSnedecor(Distribution):
    """The F distribution with `df1` and `df2` degrees of freedom: the law of (U1 / df1) /
    (U2 / df2) for independent chi-square variates U1, U2 with those degrees of freedom, which
    is how samples are drawn (from gamma variates, so ``rsample`` is differentiable, to first
    order, with respect to both)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        batch_shape = () if _all_numbers(df1, df2) else self.df1.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(FisherSnedecor, ("df1", "df2"), batch_shape, _instance)

    @property
    def mean(self):
        # df2 / (df2 - 2), defined for df2 > 2 (NaN elsewhere).
        df2 = self.df2
        safe = oneflow.where(df2 > 2, df2, 3 * oneflow.ones_like(df2))
        return oneflow.where(df2 > 2, safe / (safe - 2), math.nan * oneflow.ones_like(df2))

    @property
    def mode(self):
        # (df1 - 2) / df1 * df2 / (df2 + 2) for df1 > 2, NaN elsewhere.
        df1, df2 = self.df1, self.df2
        mode = (df1 - 2) / df1 * df2 / (df2 + 2)
        return oneflow.where(df1 > 2, mode, math.nan * oneflow.ones_like(mode))

    @property
    def variance(self):
        # 2 df2^2 (df1 + df2 - 2) / (df1 (df2 - 2)^2 (df2 - 4)) for df2 > 4, NaN elsewhere.
        df1, df2 = self.df1, self.df2
        safe = oneflow.where(df2 > 4, df2, 5 * oneflow.ones_like(df2))
        var = 2 * safe.pow(2) * (df1 + safe - 2) / (df1 * (safe - 2).pow(2) * (safe - 4))
        return oneflow.where(df2 > 4, var, math.nan * oneflow.ones_like(var))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = oneflow.finfo(self.df1.dtype).tiny
        # U / df = 2 G / df for G ~ Gamma(df / 2, 1): the factors 2 cancel in the ratio.
        x1 = _reparameterized_gamma(0.5 * self.df1.expand(*shape)) / self.df1
        x2 = _reparameterized_gamma(0.5 * self.df2.expand(*shape)) / self.df2
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = 0.5 * self.df1, 0.5 * self.df2
        ratio = self.df1 / self.df2
        log_beta = oneflow.lgamma(half1) + oneflow.lgamma(half2) - oneflow.lgamma(half1 + half2)
        return (
            half1 * ratio.log()
            + (half1 - 1) * oneflow.log(value)
            - (half1 + half2) * oneflow.log1p(ratio * value)
            - log_beta
        )


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with location `loc`, scale `scale` and shape
    `concentration` c: survival function (1 + c z)^(-1/c) of z = (x - loc) / scale, exp(-z)
    at c = 0 (|c| <= 1e-8 is taken as 0). The support is [loc, inf) for c >= 0 and
    [loc, loc - scale / c] for c < 0; c = 0 is the exponential distribution, c = -1 the uniform
    one. Samples are the inverse CDF of uniform variates (``rsample`` differentiable; at c = 0
    they do not depend on c, so have no gradient with respect to it, as PyTorch's)."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        batch_shape = () if _all_numbers(loc, scale, concentration) else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = ("loc", "scale", "concentration")
        return self._expand_params(GeneralizedPareto, names, batch_shape, _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        c = self.concentration
        upper = oneflow.where(c < 0, self.loc - self.scale / c, math.inf * oneflow.ones_like(c))
        return constraints.interval(self.loc, upper)

    def _zero_and_safe_concentration(self):
        """(c == 0 within 1e-8, c with those replaced by 1) for the c != 0 formulas."""
        c = self.concentration
        zero = c.abs() <= 1e-8
        return zero, oneflow.where(zero, oneflow.ones_like(c), c)

    @property
    def mean(self):
        c = self.concentration
        safe = oneflow.where(c < 1, c, 0.5 * oneflow.ones_like(c))
        mean = self.loc + self.scale / (1 - safe)
        return oneflow.where(c < 1, mean, math.nan * oneflow.ones_like(mean))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        c = self.concentration
        safe = oneflow.where(c < 0.5, c, 0.25 * oneflow.ones_like(c))
        var = self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe))
        return oneflow.where(c < 0.5, var, math.nan * oneflow.ones_like(var))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = oneflow.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._zero_and_safe_concentration()
        # (1 / c + 1) log(1 + c z), taken as 0 where 1 / c + 1 is (c = -1, the uniform case, whose
        # log(1 + c z) is -inf at the upper end).
        factor = 1 / c + oneflow.ones_like(z)
        nonzero = oneflow.where(factor == 0, factor, factor * oneflow.log1p(c * z))
        return -self.scale.log() - oneflow.where(zero, z, nonzero)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._zero_and_safe_concentration()
        return oneflow.where(zero, -z, -oneflow.log1p(c * z) / c)

    def log_cdf(self, value):
        return oneflow.log1p(-oneflow.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return oneflow.exp(self.log_cdf(value))

    def icdf(self, value):
        zero, c = self._zero_and_safe_concentration()
        log_survival = oneflow.log1p(-value)
        nonzero = self.loc + self.scale / c * oneflow.expm1(-c * log_survival)
        return oneflow.where(zero, self.loc - self.scale * log_survival, nonzero)

    def entropy(self):
        h = self.scale.log() + self.concentration + 1
        return h.expand(*self._batch_shape) if len(self._batch_shape) else h


_NARROW_FLOATS = (oneflow.float16, oneflow.bfloat16, oneflow.float32)


class ContinuousBernoulli(ProbsOrLogits, ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019):
    density C(p) p^x (1 - p)^(1 - x) with C(p) = 2 atanh(1 - 2p) / (1 - 2p) (2 at p = 1/2),
    parameterised by `probs` p in (0, 1) or by `logits` log(p / (1 - p)), as ``Bernoulli``
    (neither is a probability or log-odds of this distribution). The given probs, and those
    computed from logits, are clamped into [eps, 1 - eps].

    Near p = 1/2 the closed forms cancel catastrophically: for p in (`lims`[0], `lims`[1]]
    the normaliser, mean and variance come from their Taylor expansions about 1/2, and the CDF
    and its inverse are those of the uniform distribution (within 2 |p - 1/2| x (1 - x) <= 5e-4
    for the default lims), as PyTorch's. The normaliser, mean and variance of lower-precision
    probs are computed in float64 and rounded: in float32 their closed forms keep few digits
    next to that window (PyTorch's float32 variance at p = 0.49 is 1.2% off). Samples are the
    inverse CDF of uniform variates (``rsample`` differentiable, with no gradient with respect
    to p inside that window)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        (param,) = self._init_probs_or_logits(probs, logits)
        self._lims = lims
        # Validated as given, then clamped.
        super().__init__(param.shape, validate_args=validate_args)
        if probs is not None:
            self.probs = clamp_probs(param)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            ContinuousBernoulli, ("probs", "logits"), batch_shape, _instance, shared=("_lims",)
        )

    @lazy_property
    def probs(self):
        return clamp_probs(oneflow.sigmoid(self.logits))

    def _stable(self, p=None):
        """Where p lies outside (lims[0], lims[1]], the closed forms are used."""
        p = self.probs if p is None else p
        return (p <= self._lims[0]) | (p > self._lims[1])

    def _cut_probs(self, p=None):
        """p where the closed forms are used, lims[0] elsewhere (so that they stay finite)."""
        p = self.probs if p is None else p
        return oneflow.where(self._stable(p), p, self._lims[0] * oneflow.ones_like(p))

    def _wide_probs(self):
        """probs in float64 where they are a lower-precision float."""
        p = self.probs
        return p.double() if p.dtype in _NARROW_FLOATS else p

    def _log_logit_ratio(self, p):
        """log(1 - p) - log(p) = -logit(p)."""
        return oneflow.log1p(-p) - oneflow.log(p)

    def _cont_bern_log_norm(self):
        """log C(p): log(|log((1 - p) / p)|) - log(|1 - 2p|), or log 2 + 4/3 d^2 + 104/45 d^4 for
        d = p - 1/2 near 1/2."""
        wide = self._wide_probs()
        p = self._cut_probs(wide)
        below = p <= 0.5
        # log|1 - 2p| from whichever side keeps it accurate.
        log_gap = oneflow.where(
            below,
            oneflow.log1p(-2.0 * oneflow.where(below, p, oneflow.zeros_like(p))),
            oneflow.log(2.0 * oneflow.where(p >= 0.5, p, oneflow.ones_like(p)) - 1.0),
        )
        exact = oneflow.log(self._log_logit_ratio(p).abs()) - log_gap
        d2 = (wide - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * d2) * d2
        return oneflow.where(self._stable(wide), exact, taylor).to(self.probs.dtype)

    @property
    def mean(self):
        wide = self._wide_probs()
        p = self._cut_probs(wide)
        exact = p / (2.0 * p - 1.0) + 1.0 / self._log_logit_ratio(p)
        d = wide - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * d.pow(2)) * d
        return oneflow.where(self._stable(wide), exact, taylor).to(self.probs.dtype)

    @property
    def variance(self):
        wide = self._wide_probs()
        p = self._cut_probs(wide)
        exact = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / self._log_logit_ratio(p).pow(2)
        d2 = (wide - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * d2) * d2
        return oneflow.where(self._stable(wide), exact, taylor).to(self.probs.dtype)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = oneflow.rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_kernel = -oneflow.nn.functional.binary_cross_entropy_with_logits(
            logits, value.to(logits.dtype), reduction="none"
        )
        return log_kernel + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        exact = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = oneflow.where(self._stable(), exact, value)
        return oneflow.where(
            value <= 0.0,
            oneflow.zeros_like(inside),
            oneflow.where(value >= 1.0, oneflow.ones_like(inside), inside),
        )

    def icdf(self, value):
        p = self._cut_probs()
        exact = (oneflow.log1p(-p + value * (2.0 * p - 1.0)) - oneflow.log1p(-p)) / (
            oneflow.log(p) - oneflow.log1p(-p)
        )
        return oneflow.where(self._stable(), exact, value)

    def entropy(self):
        log_q = oneflow.log1p(-self.probs)
        return self.mean * (log_q - oneflow.log(self.probs)) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        # A(eta) = log((exp(eta) - 1) / eta), or eta / 2 + eta^2 / 24 - eta^4 / 2880 near 0.
        stable = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = oneflow.where(stable, x, (self._lims[0] - 0.5) * oneflow.ones_like(x))
        exact = oneflow.log(oneflow.expm1(cut).abs()) - oneflow.log(cut.abs())
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return oneflow.where(stable, exact, taylor)
