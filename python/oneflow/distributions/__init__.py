"""oneflow.distributions: parameterised probability distributions with PyTorch's
``torch.distributions`` interface.

Distributions: ``Bernoulli``, ``Beta``, ``Binomial``, ``Categorical``, ``Cauchy``, ``Chi2``,
``ContinuousBernoulli``, ``Dirichlet``, ``Exponential``, ``FisherSnedecor``, ``Gamma``,
``GeneralizedPareto``, ``Geometric``, ``Gumbel``, ``HalfCauchy``, ``HalfNormal``,
``Independent``, ``InverseGamma``, ``Kumaraswamy``, ``LKJCholesky``, ``Laplace``, ``LogNormal``,
``LogisticNormal``, ``LowRankMultivariateNormal``, ``MixtureSameFamily``, ``Multinomial``,
``MultivariateNormal``, ``NegativeBinomial``, ``Normal``, ``OneHotCategorical``,
``OneHotCategoricalStraightThrough``, ``Pareto``, ``Poisson``, ``StudentT``,
``TransformedDistribution``, ``Uniform``, ``VonMises``, ``Weibull``, ``Wishart`` and the
Gumbel-softmax relaxations ``RelaxedBernoulli`` and ``RelaxedOneHotCategorical`` (their logit /
log-space bases are in module ``relaxed``), all subclasses of ``Distribution``; those that are
exponential families (Bernoulli, Beta, ContinuousBernoulli, Dirichlet, Exponential, Gamma,
Normal, Poisson, Wishart) of ``ExponentialFamily``.

``kl_divergence(p, q)`` computes KL(p || q) from the formulas registered with ``register_kl``
(module ``kl``); ``transforms`` holds the invertible maps (``ExpTransform``, ``AffineTransform``,
``SigmoidTransform``, ``TanhTransform``, ``SoftplusTransform``, ``PowerTransform``,
``ComposeTransform``, ``CatTransform``, ``StackTransform``, ``ReshapeTransform``,
``CorrCholeskyTransform``, ``CumulativeDistributionTransform``, ..., also importable from here)
that ``TransformedDistribution`` pushes a distribution through, ``constraints`` the sets that
arguments are validated against, and ``biject_to`` / ``transform_to`` the transforms from the
reals onto those sets.

Differences from PyTorch: gamma variates (behind ``Gamma``, ``Chi2``, ``Beta``, ``Dirichlet``,
``StudentT``, ``FisherSnedecor``, ``InverseGamma`` and ``Wishart``) are drawn by Marsaglia-Tsang
rejection with tensor ops, with implicit reparameterization gradients (first order only);
``Poisson`` and ``Binomial`` / ``NegativeBinomial`` samples come from samplers written here
(oneflow has no such ops); ``LKJCholesky`` samples follow the LKJ marginals in every row
(PyTorch's rows after the second do not; the densities agree). ``Kumaraswamy.mode`` is the mode
where it exists (PyTorch's is NaN throughout); the KL divergences between ``ContinuousBernoulli``
and ``Uniform`` are finite when the uniform's interval is [0, 1] (PyTorch's are infinite there);
``ContinuousBernoulli`` validates `probs` as any distribution does (PyTorch skips the check
unless `validate_args` is given, and then checks even when it is False); the exponential-family
entropy and KL divergence (Bregman divergence) are differentiable with respect to every
parameter and sum each natural parameter over its own event dimensions (PyTorch's sum a batched
Wishart's df term over the batch)."""

from oneflow.distributions import constraints, kl, relaxed, transforms
from oneflow.distributions.constraint_registry import biject_to, transform_to
from oneflow.distributions.continuous import Normal, Uniform
from oneflow.distributions.counts import (
    Binomial,
    Geometric,
    Multinomial,
    NegativeBinomial,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from oneflow.distributions.discrete import Bernoulli, Categorical
from oneflow.distributions.distribution import Distribution, ExponentialFamily
from oneflow.distributions.kl import kl_divergence, register_kl
from oneflow.distributions.matrix import LKJCholesky, Wishart
from oneflow.distributions.multivariate import (
    Dirichlet,
    Independent,
    LowRankMultivariateNormal,
    MixtureSameFamily,
    MultivariateNormal,
)
from oneflow.distributions.relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from oneflow.distributions.transformed_distribution import (
    HalfCauchy,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    LogNormal,
    TransformedDistribution,
)
from oneflow.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from oneflow.distributions.univariate import (
    Beta,
    Cauchy,
    Chi2,
    ContinuousBernoulli,
    Exponential,
    FisherSnedecor,
    Gamma,
    GeneralizedPareto,
    Gumbel,
    HalfNormal,
    Laplace,
    Pareto,
    StudentT,
    VonMises,
    Weibull,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "constraints",
    "identity_transform",
    "kl",
    "kl_divergence",
    "register_kl",
    "relaxed",
    "transform_to",
    "transforms",
]

# PyTorch's module paths (oneflow.distributions.normal, ...), importable as attributes as well.
from oneflow.distributions import (  # noqa: E402,F401
    bernoulli,
    beta,
    binomial,
    categorical,
    cauchy,
    chi2,
    continuous_bernoulli,
    dirichlet,
    exp_family,
    exponential,
    fishersnedecor,
    gamma,
    generalized_pareto,
    geometric,
    gumbel,
    half_cauchy,
    half_normal,
    independent,
    inverse_gamma,
    kumaraswamy,
    laplace,
    lkj_cholesky,
    log_normal,
    logistic_normal,
    lowrank_multivariate_normal,
    mixture_same_family,
    multinomial,
    multivariate_normal,
    negative_binomial,
    normal,
    one_hot_categorical,
    pareto,
    poisson,
    relaxed_bernoulli,
    relaxed_categorical,
    studentT,
    uniform,
    von_mises,
    weibull,
    wishart,
)
