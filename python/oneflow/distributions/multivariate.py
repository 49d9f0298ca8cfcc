"""oneflow.distributions.multivariate: distributions over vectors, Independent (batch dimensions
reinterpreted as event dimensions), Dirichlet, MultivariateNormal, LowRankMultivariateNormal and
MixtureSameFamily."""

import math

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.discrete import Categorical
from oneflow.distributions.distribution import Distribution, ExponentialFamily
from oneflow.distributions.univariate import _reparameterized_gamma
from oneflow.distributions.utils import lazy_property, sum_rightmost

__all__ = [
    "Dirichlet",
    "Independent",
    "LowRankMultivariateNormal",
    "MixtureSameFamily",
    "MultivariateNormal",
]


class Independent(Distribution):
    """`base_distribution` with its `reinterpreted_batch_ndims` rightmost batch dimensions made
    event dimensions: ``log_prob`` and ``entropy`` sum over them (a diagonal Normal as a
    distribution over vectors is ``Independent(Normal(loc, scale), 1)``)."""

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = reinterpreted_batch_ndims
        if n > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {n} vs {len(base_distribution.batch_shape)}"
            )
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = n + len(base_distribution.event_shape)
        batch_shape = shape[: len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim :]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = oneflow.Size(batch_shape)
        n = self.reinterpreted_batch_ndims
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + tuple(self.event_shape[:n]))
        new.reinterpreted_batch_ndims = n
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the probability simplex (the last dimension) with
    concentrations `concentration` (positive, at least one-dimensional).

    Samples are normalised gamma variates, differentiable (first order) with respect to
    `concentration` as ``Gamma.rsample``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = oneflow.Size(batch_shape)
        new.concentration = self.concentration.expand(*batch_shape, *self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        a = self.concentration
        shifted = (a - 1).clamp(min=0)
        mode = shifted / shifted.sum(-1, keepdim=True)
        # When every concentration is below 1 the density is unbounded at every vertex: the
        # first one, as PyTorch.
        vertex = oneflow.zeros_like(a)
        vertex[..., 0] = 1
        all_small = (a < 1).all(-1, keepdim=True)
        return oneflow.where(all_small, vertex, mode)

    @property
    def variance(self):
        a = self.concentration
        total = a.sum(-1, keepdim=True)
        return a * (total - a) / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = _reparameterized_gamma(self.concentration.expand(*shape))
        x = g / g.sum(-1, keepdim=True)
        return x.clamp(min=oneflow.finfo(x.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (
            oneflow.xlogy(a - 1.0, value).sum(-1)
            + oneflow.lgamma(a.sum(-1))
            - oneflow.lgamma(a).sum(-1)
        )

    def entropy(self):
        a = self.concentration
        k = a.shape[-1]
        total = a.sum(-1)
        return (
            oneflow.lgamma(a).sum(-1)
            - oneflow.lgamma(total)
            - (k - total) * oneflow.digamma(total)
            - ((a - 1.0) * oneflow.digamma(a)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return oneflow.lgamma(x).sum(-1) - oneflow.lgamma(x.sum(-1))


def _batch_mahalanobis(scale_tril, diff):
    """||L^{-1} diff||^2 over the last dimension, L broadcast over diff's leading dimensions."""
    k = diff.shape[-1]
    shape = oneflow.broadcast_shapes(tuple(diff.shape[:-1]), tuple(scale_tril.shape[:-2]))
    L = scale_tril.expand(*shape, k, k)
    d = diff.expand(*shape, k).unsqueeze(-1)
    solved = oneflow.linalg.solve_triangular(L, d, upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


_MATRIX_PARAMETERS = ("covariance_matrix", "precision_matrix", "scale_tril")


def _given_matrix(error, covariance_matrix, precision_matrix, scale_tril):
    """(name, matrix) of the one of `covariance_matrix`, `precision_matrix` and `scale_tril`
    given (MultivariateNormal, Wishart); raises `error` unless exactly one is."""
    given = [
        (name, m)
        for name, m in zip(_MATRIX_PARAMETERS, (covariance_matrix, precision_matrix, scale_tril))
        if m is not None
    ]
    if len(given) != 1:
        raise error(
            "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
        )
    return given[0]


def _scale_tril_of(name, matrix):
    """The lower Cholesky factor of the covariance matrix from the matrix `name` given."""
    if name == "scale_tril":
        return matrix
    if name == "covariance_matrix":
        return oneflow.linalg.cholesky(matrix)
    return oneflow.linalg.cholesky(oneflow.linalg.inv(matrix))


def _expand_matrices(old, new, shape):
    """Copies to `new` the matrix parameters that `old` holds, expanded to `shape`."""
    for name in _MATRIX_PARAMETERS:
        if name in old.__dict__:
            setattr(new, name, old.__dict__[name].expand(*shape))


class MultivariateNormal(Distribution):
    """The multivariate normal distribution with mean `loc` (..., k) and one of
    `covariance_matrix`, `precision_matrix` or `scale_tril` (..., k, k): the covariance, its
    inverse, or its lower Cholesky factor (positive diagonal). Batch dimensions of `loc` and the
    matrix broadcast together. ``scale_tril`` is computed with ``oneflow.linalg.cholesky``."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, matrix = _given_matrix(ValueError, covariance_matrix, precision_matrix, scale_tril)
        if matrix.ndim < 2:
            raise ValueError(
                "scale_tril, covariance_matrix or precision_matrix matrix must be at least "
                "two-dimensional, with optional leading batch dimensions"
            )
        batch_shape = oneflow.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        k = loc.shape[-1]
        setattr(self, name, matrix.expand(*batch_shape, k, k))
        self.loc = loc.expand(*batch_shape, k)
        # Validated before the factorisation, so that a bad matrix raises ValueError.
        super().__init__(batch_shape, (k,), validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(name, matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = oneflow.Size(batch_shape)
        k = self.event_shape[0]
        new.loc = self.loc.expand(*batch_shape, k)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        _expand_matrices(self, new, (*batch_shape, k, k))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        k = self.event_shape[0]
        return self._unbroadcasted_scale_tril.expand(*self.batch_shape, k, k)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        k = self.event_shape[0]
        return (L @ L.transpose(-1, -2)).expand(*self.batch_shape, k, k)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        k = self.event_shape[0]
        eye = oneflow.eye(k, dtype=L.dtype, device=L.device).expand_as(L)
        L_inv = oneflow.linalg.solve_triangular(L, eye, upper=False)
        return (L_inv.transpose(-1, -2) @ L_inv).expand(*self.batch_shape, k, k)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        k = self.event_shape[0]
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self.batch_shape, k)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = oneflow.randn(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        k = self.event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        k = self.event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self.batch_shape) == 0:
            return h
        return h.expand(*self.batch_shape)


def _capacitance_tril(W, D):
    """The lower Cholesky factor of the capacitance matrix I + W^T diag(D)^-1 W (m x m) of a
    covariance W W^T + diag(D), W of shape (..., n, m) and D of shape (..., n)."""
    m = W.shape[-1]
    K = (W.transpose(-1, -2) / D.unsqueeze(-2)) @ W
    return oneflow.linalg.cholesky(K + oneflow.eye(m, dtype=W.dtype, device=W.device))


def _lowrank_logdet(D, capacitance_tril):
    """log det(W W^T + diag(D)) = log det(capacitance) + log det(diag(D)) (the matrix
    determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + diag(D))^-1 x over the last dimension, by the Woodbury identity:
    x^T D^-1 x - |C^-1 W^T D^-1 x|^2 for C the capacitance matrix's Cholesky factor."""
    Wt_Dinv_x = ((x / D).unsqueeze(-2) @ W).squeeze(-2)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal distribution with mean `loc` (..., n) and the covariance matrix
    ``cov_factor @ cov_factor^T + diag(cov_diag)`` of a low-rank part, `cov_factor` (..., n, m),
    and a positive diagonal, `cov_diag` (..., n). The batch dimensions of the three broadcast
    together.

    The log density and entropy use only the m x m capacitance matrix
    ``I + cov_factor^T diag(cov_diag)^-1 cov_factor`` (the Woodbury identity and the matrix
    determinant lemma), so they stay cheap for m much smaller than n."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.ndim < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if cov_factor.shape[-2] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {(n,)}")
        try:
            loc_, self.cov_factor, cov_diag_ = oneflow.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1)
            )
        except RuntimeError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        # Validated before the factorisation, so that a bad cov_diag raises ValueError.
        super().__init__(self.loc.shape[:-1], (n,), validate_args=validate_args)
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(
            LowRankMultivariateNormal,
            ("loc", "cov_diag"),
            batch_shape,
            _instance,
            param_shape=self.event_shape,
            shared=("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_capacitance_tril"),
        )
        shape = tuple(new.batch_shape) + tuple(self.cov_factor.shape[-2:])
        new.cov_factor = self.cov_factor.expand(*shape)
        return new

    def _matrix_shape(self):
        return tuple(self.batch_shape) + tuple(self.event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(*self.batch_shape, *self.event_shape)

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2, and the middle matrix has
        # eigenvalues of at least 1: a well-conditioned Cholesky factorisation.
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        n = self.event_shape[0]
        sqrt_d = D.sqrt().unsqueeze(-1)
        scaled = W / sqrt_d
        K = scaled @ scaled.transpose(-1, -2) + oneflow.eye(n, dtype=W.dtype, device=W.device)
        return (sqrt_d * oneflow.linalg.cholesky(K)).expand(*self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        cov = W @ W.transpose(-1, -2) + oneflow.diag_embed(D)
        return cov.expand(*self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: (W W^T + D)^-1 = D^-1 - (C^-1 W^T D^-1)^T (C^-1 W^T D^-1).
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.transpose(-1, -2) / D.unsqueeze(-2)
        A = oneflow.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        precision = oneflow.diag_embed(D.reciprocal()) - A.transpose(-1, -2) @ A
        return precision.expand(*self._matrix_shape())

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        m = self.cov_factor.shape[-1]
        dtype, device = self.loc.dtype, self.loc.device
        eps_w = oneflow.randn(shape[:-1] + (m,), dtype=dtype, device=device)
        eps_d = oneflow.randn(shape, dtype=dtype, device=device)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self.loc + (W @ eps_w.unsqueeze(-1)).squeeze(-1) + D.sqrt() * eps_d

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        m = _lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _lowrank_logdet(D, self._capacitance_tril)
        return -0.5 * (self.event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self):
        log_det = _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self.batch_shape) == 0:
            return h
        return h.expand(*self.batch_shape)


class MixtureSameFamily(Distribution):
    """A mixture of the components of `component_distribution` (whose rightmost batch dimension
    indexes them) weighted by `mixture_distribution`, a ``Categorical`` over that dimension."""

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                "The Mixture distribution needs to be an instance of oneflow.distributions."
                "Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution need to be an instance of oneflow.distributions."
                "Distribution"
            )
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape)[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                    f"`component_distribution.batch_shape`({cdbs})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({kc})"
            )
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,)
        )
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad_mixture_dimensions(self, x):
        """x (batch..., K) reshaped to broadcast against component values (batch..., K,
        event...)."""
        return x.reshape(*x.shape, *([1] * self._event_ndims))

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self._component_distribution.variance).sum(dim)
        mean = self.mean.unsqueeze(dim)
        var_cond_mean = (probs * (self._component_distribution.mean - mean).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = x.unsqueeze(-1 - self._event_ndims)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = x.unsqueeze(-1 - self._event_ndims)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix_prob = oneflow.log_softmax(self._mixture_distribution.logits, dim=-1)
        return oneflow.logsumexp(log_prob_x + log_mix_prob, -1)

    def sample(self, sample_shape=()):
        with oneflow.no_grad():
            sample_shape = tuple(oneflow.Size(sample_shape))
            n_batch = len(self.batch_shape)
            mix_sample = self._mixture_distribution.sample(sample_shape)
            # The mixture's batch shape broadcasts against the components': align it right.
            mix_batch = tuple(self._mixture_distribution.batch_shape)
            padding = (1,) * (n_batch - len(mix_batch))
            mix_sample = mix_sample.reshape(*sample_shape, *padding, *mix_batch)
            mix_sample = mix_sample.expand(*sample_shape, *self.batch_shape)
            comp_samples = self._component_distribution.sample(sample_shape)
            es = tuple(self.event_shape)
            index = mix_sample.reshape(*mix_sample.shape, 1, *([1] * len(es)))
            index = index.expand(*mix_sample.shape, 1, *es)
            return comp_samples.gather(len(sample_shape) + n_batch, index).squeeze(
                len(sample_shape) + n_batch
            )

    def __repr__(self):
        return (
            f"{type(self).__name__}(\n  {self._mixture_distribution!r},\n  "
            f"{self._component_distribution!r})"
        )
