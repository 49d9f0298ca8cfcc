"""oneflow.distributions.matrix: distributions over matrices, Wishart (symmetric positive-definite
matrices) and LKJCholesky (lower Cholesky factors of correlation matrices)."""

import math
import numbers
import warnings

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.distribution import Distribution, ExponentialFamily
from oneflow.distributions.multivariate import _expand_matrices, _given_matrix, _scale_tril_of
from oneflow.distributions.univariate import Beta, _reparameterized_gamma
from oneflow.distributions.utils import broadcast_all, lazy_property

__all__ = ["LKJCholesky", "Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function: sum over j < p of digamma(x - j / 2)."""
    offsets = oneflow.arange(p, dtype=x.dtype, device=x.device) / 2
    return oneflow.digamma(x.unsqueeze(-1) - offsets).sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution over p x p symmetric positive-definite matrices with `df`
    degrees of freedom (a number or tensor, above p - 1) and scale matrix given by exactly one
    of `covariance_matrix`, `precision_matrix` (its inverse) or `scale_tril` (its lower
    Cholesky factor L): the distribution of sum_i x_i x_i^T for df draws x_i ~ N(0, L L^T)
    when df is an integer. Batch dimensions of `df` and the matrix broadcast together.

    Samples come from the Bartlett decomposition L A A^T L^T (A lower-triangular with
    sqrt(chi2(df - i)) on the diagonal and standard normals below it); they are differentiable
    with respect to the scale matrix and, through the gamma variates' implicit gradient, `df`.
    A sample that comes out singular (possible for df < p) is drawn again, up to
    `max_try_correction` times."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        # AssertionError (not ValueError) for this one, as PyTorch's Wishart.
        name, param = _given_matrix(AssertionError, covariance_matrix, precision_matrix, scale_tril)
        if param.ndim < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            df = oneflow.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(oneflow.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
        self.df = df.expand(*batch_shape)
        p = param.shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(*batch_shape, p, p))
        if bool((self.df < p).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        # Validated before the factorisation, so that a bad matrix raises ValueError.
        super().__init__(batch_shape, (p, p), validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(name, param)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(
            Wishart, ("df",), batch_shape, _instance, shared=("_unbroadcasted_scale_tril",)
        )
        _expand_matrices(self, new, (*new.batch_shape, *self.event_shape))
        return new

    def _matrix_shape(self):
        return tuple(self.batch_shape) + tuple(self.event_shape)

    def _half_log_det(self):
        """log det(scale_tril) = log det(covariance_matrix) / 2."""
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-1, -2)).expand(*self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = oneflow.eye(self.event_shape[-1], dtype=L.dtype, device=L.device)
        return oneflow.cholesky_solve(eye, L).expand(*self._matrix_shape())

    def _df_matrix(self):
        """df shaped to broadcast against batches of matrices."""
        return self.df.reshape(*self.batch_shape, 1, 1)

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        # (df - p - 1) * covariance; no mode (NaN) where df <= p + 1.
        factor = self.df - self.event_shape[-1] - 1
        factor = oneflow.where(factor > 0, factor, math.nan * oneflow.ones_like(factor))
        return factor.reshape(*self.batch_shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sample(self, sample_shape):
        shape = tuple(oneflow.Size(sample_shape)) + tuple(self.batch_shape)
        p = self.event_shape[-1]
        L = self._unbroadcasted_scale_tril
        dtype, device = L.dtype, L.device
        # A_ii^2 ~ chi2(df - i) = 2 Gamma((df - i) / 2).
        chi2_df = self.df.unsqueeze(-1) - oneflow.arange(p, dtype=dtype, device=device)
        chi2 = 2 * _reparameterized_gamma((chi2_df / 2).expand(*shape, p))
        diagonal = chi2.sqrt().clamp(min=oneflow.finfo(dtype).eps)
        below = oneflow.randn(shape + (p, p), dtype=dtype, device=device).tril(-1)
        factor = L @ (below + oneflow.diag_embed(diagonal))
        return factor @ factor.transpose(-1, -2)

    def rsample(self, sample_shape=(), max_try_correction=None):
        """A sample of shape sample_shape + batch_shape + (p, p); singular samples are redrawn
        up to `max_try_correction` (default 10) times, with a warning. One still singular after
        that has log_prob -inf."""
        if max_try_correction is None:
            max_try_correction = 10
        sample = self._bartlett_sample(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sample(sample_shape)
                sample = oneflow.where(singular[..., None, None], redrawn, sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self.event_shape[-1]
        trace = (
            oneflow.cholesky_solve(value, self._unbroadcasted_scale_tril)
            .diagonal(dim1=-2, dim2=-1)
            .sum(-1)
        )
        return (
            -nu * (p * _LOG_2 / 2 + self._half_log_det())
            - oneflow.mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * oneflow.linalg.slogdet(value)[1]
            - trace / 2
        )

    def entropy(self):
        nu = self.df
        p = self.event_shape[-1]
        return (
            (p + 1) * (p * _LOG_2 / 2 + self._half_log_det())
            + oneflow.mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        p = self.event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        # eta = (-precision / 2, (df - p - 1) / 2), df / 2 = y + (p + 1) / 2:
        # A = df / 2 (log det(covariance) + p log 2) + mvlgamma(df / 2, p).
        p = self.event_shape[-1]
        half_df = y + (p + 1) / 2
        return half_df * (p * _LOG_2 - oneflow.linalg.slogdet(-2 * x)[1]) + oneflow.mvlgamma(
            half_df, p
        )


class LKJCholesky(Distribution):
    """The LKJ distribution (Lewandowski, Kurowicka and Joe, 2009) over lower Cholesky factors
    L of `dim` x `dim` correlation matrices: the correlation matrix L L^T has density
    proportional to det(L L^T) ** (concentration - 1) (uniform for concentration 1; larger
    values favour matrices near the identity).

    Samples (no reparameterized ones) come from the onion method: row k of L (k = 1..dim-1) is
    sqrt(y_k) times a uniform direction in its first k coordinates, with
    y_k ~ Beta(k / 2, concentration + (dim - 2) / 2 - (k - 1) / 2), and sqrt(1 - y_k) on the
    diagonal. Every off-diagonal correlation then has the LKJ marginal, 2 Beta(b, b) - 1 with
    b = concentration - 1 + dim / 2. (PyTorch 2.13 uses Beta(k - 1/2, ...) for rows k >= 2,
    whose correlations are more spread out than that marginal; log_prob is the same.)"""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        k = oneflow.arange(1, dim, dtype=c.dtype, device=c.device)
        marginal = c + 0.5 * (dim - 2)
        self._beta = Beta(k / 2, marginal.unsqueeze(-1) - (k - 1) / 2, validate_args=False)
        super().__init__(c.shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(
            LKJCholesky, ("concentration",), batch_shape, _instance, shared=("dim",)
        )
        new._beta = self._beta.expand(tuple(new.batch_shape) + (self.dim - 1,))
        return new

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with oneflow.no_grad():
            y = self._beta.sample(sample_shape)
            dtype, device = y.dtype, y.device
            tiny = oneflow.finfo(dtype).tiny
            # Row 0 has no off-diagonal part: y = 0 there.
            y = oneflow.cat([oneflow.zeros_like(y[..., :1]), y], -1).unsqueeze(-1)
            direction = oneflow.randn(shape, dtype=dtype, device=device).tril(-1)
            direction = direction / direction.norm(dim=-1, keepdim=True).clamp(min=tiny)
            w = y.sqrt() * direction
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + oneflow.diag_embed(diagonal)

    def log_prob(self, value):
        # The density of C = L L^T is proportional to det(C) ** (eta - 1) = prod_i L_ii **
        # (2 eta - 2), and the map from L to C has Jacobian prod_i L_ii ** (dim - i) (rows
        # i = 1..dim, 1-based): the density of L is proportional to prod_i L_ii ** order_i,
        # order_i = 2 eta - 2 + dim - i.
        if self._validate_args:
            self._validate_sample(value)
        d = self.dim
        eta = self.concentration
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        i = oneflow.arange(2, d + 1, dtype=eta.dtype, device=eta.device)
        order = 2 * (eta - 1).unsqueeze(-1) + d - i
        unnormalized = (order * diagonal.log()).sum(-1)
        # log of the normalising constant (Lewandowski et al. 2009, section 3.2):
        # d (d - 1) / 4 log(pi) + sum_{j < d - 1} lgamma(eta + (d - 2 - j) / 2)
        #   - (d - 1) lgamma(eta + (d - 1) / 2),
        # the sum and part of the pi term being the multivariate log-gamma function.
        alpha = eta + 0.5 * (d - 1)
        log_normalizer = (
            0.5 * (d - 1) * math.log(math.pi)
            + oneflow.mvlgamma(alpha - 0.5, d - 1)
            - (d - 1) * oneflow.lgamma(alpha)
        )
        return unnormalized - log_normalizer
