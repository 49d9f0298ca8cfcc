"""oneflow.distributions: parameterised probability distributions with PyTorch's
``torch.distributions`` interface: the ``Distribution`` base class, ``Categorical``,
``Bernoulli``, ``Normal`` and ``Uniform``, and the ``constraints`` their arguments are validated
against. KL divergences, transforms and the other distributions of PyTorch are not here."""

from oneflow.distributions import constraints
from oneflow.distributions.continuous import Normal, Uniform
from oneflow.distributions.discrete import Bernoulli, Categorical
from oneflow.distributions.distribution import Distribution

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "constraints"]
