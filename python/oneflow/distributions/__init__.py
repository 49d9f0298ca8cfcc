"""oneflow.distributions: parameterised probability distributions with PyTorch's
``torch.distributions`` interface.

Distributions: ``Bernoulli``, ``Beta``, ``Binomial``, ``Categorical``, ``Cauchy``, ``Chi2``,
``Dirichlet``, ``Exponential``, ``Gamma``, ``Geometric``, ``Gumbel``, ``HalfNormal``,
``Independent``, ``LKJCholesky``, ``Laplace``, ``LogNormal``, ``LowRankMultivariateNormal``,
``MixtureSameFamily``, ``Multinomial``, ``MultivariateNormal``, ``NegativeBinomial``, ``Normal``,
``OneHotCategorical``, ``Pareto``, ``Poisson``, ``StudentT``, ``TransformedDistribution``,
``Uniform``, ``VonMises``, ``Weibull``, ``Wishart`` and the Gumbel-softmax relaxations
``RelaxedBernoulli`` and ``RelaxedOneHotCategorical`` (their logit / log-space bases are in
module ``relaxed``), all subclasses of ``Distribution``.

``kl_divergence(p, q)`` computes KL(p || q) from the formulas registered with ``register_kl``
(module ``kl``); ``transforms`` holds the invertible maps (``ExpTransform``, ``AffineTransform``,
``SigmoidTransform``, ``TanhTransform``, ``SoftplusTransform``, ``PowerTransform``,
``ComposeTransform``, ..., also importable from here) that ``TransformedDistribution`` pushes a
distribution through, ``constraints`` the sets that arguments are validated against, and
``biject_to`` / ``transform_to`` the transforms from the reals onto those sets.

Differences from PyTorch: gamma variates (behind ``Gamma``, ``Chi2``, ``Beta``, ``Dirichlet``,
``StudentT`` and ``Wishart``) are drawn by Marsaglia-Tsang rejection with tensor ops, with implicit
reparameterization gradients (first order only); ``Gamma`` has no ``cdf``; ``Poisson`` and
``Binomial`` / ``NegativeBinomial`` samples come from samplers written here (oneflow has no such
ops); ``LKJCholesky`` samples follow the LKJ marginals in every row (PyTorch's rows after the
second do not; the densities agree). The rarer distributions (Kumaraswamy, ContinuousBernoulli,
...) are not here."""

from oneflow.distributions import constraints, kl, relaxed, transforms
from oneflow.distributions.constraint_registry import biject_to, transform_to
from oneflow.distributions.continuous import Normal, Uniform
from oneflow.distributions.counts import (
    Binomial,
    Geometric,
    Multinomial,
    NegativeBinomial,
    OneHotCategorical,
    Poisson,
)
from oneflow.distributions.discrete import Bernoulli, Categorical
from oneflow.distributions.distribution import Distribution
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
from oneflow.distributions.transformed_distribution import LogNormal, TransformedDistribution
from oneflow.distributions.transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
)
from oneflow.distributions.univariate import (
    Beta,
    Cauchy,
    Chi2,
    Exponential,
    Gamma,
    Gumbel,
    HalfNormal,
    Laplace,
    Pareto,
    StudentT,
    VonMises,
    Weibull,
)

__all__ = [
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "Pareto",
    "Poisson",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
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
    "kl",
    "kl_divergence",
    "register_kl",
    "relaxed",
    "transform_to",
    "transforms",
]
