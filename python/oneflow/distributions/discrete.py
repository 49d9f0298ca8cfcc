"""oneflow.distributions.discrete: the distributions over a finite set, Categorical (classes
0..K-1) and Bernoulli ({0, 1}), each parameterised by probabilities or by logits. Both enumerate
their support; neither has a reparameterized sample."""

import math

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.distribution import Distribution, ExponentialFamily, ProbsOrLogits
from oneflow.distributions.utils import broadcast_all

__all__ = ["Bernoulli", "Categorical"]


class Categorical(ProbsOrLogits, Distribution):
    """The distribution over the classes 0..K-1 (K = the size of the last dimension of `probs`
    or `logits`) that ``oneflow.multinomial`` samples from; leading dimensions are a batch.

    `probs` must be nonnegative with a nonzero sum and is normalised to sum to 1 over the last
    dimension; `logits` are unnormalised log probabilities, normalised to ``logits -
    logsumexp(logits)``. The ``probs`` and ``logits`` attributes are these normalised values
    (the one not given is computed on first use)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        (param,) = self._init_probs_or_logits(probs, logits)
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            Categorical,
            ("probs", "logits"),
            batch_shape,
            _instance,
            param_shape=(self._num_events,),
            shared=("_num_events",),
        )

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def num_events(self):
        return self._num_events

    @property
    def mean(self):
        # A class index has no meaningful mean: NaN, as PyTorch.
        return oneflow.full(
            self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device
        )

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return oneflow.full(
            self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device
        )

    def sample(self, sample_shape=()):
        """Class indices (int64) of shape sample_shape + batch_shape, drawn with replacement by
        ``oneflow.multinomial`` (so ``oneflow.manual_seed`` makes them reproducible)."""
        sample_shape = oneflow.Size(sample_shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        samples_2d = oneflow.multinomial(probs_2d, sample_shape.numel(), True).transpose(0, 1)
        return samples_2d.reshape(*self._extended_shape(sample_shape))

    def log_prob(self, value):
        """log P(value): `value` (class indices) broadcasts against batch_shape."""
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = oneflow.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        # A class of probability 0 has logit -inf: clamped to the dtype's lowest finite value so
        # that 0 * logit contributes 0 rather than NaN.
        logits = oneflow.clamp(self.logits, min=oneflow.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = oneflow.arange(self._num_events, dtype=oneflow.int64, device=self._param.device)
        values = values.view(-1, *([1] * len(self._batch_shape)))
        if expand:
            values = values.expand(-1, *self._batch_shape)
        return values


class Bernoulli(ProbsOrLogits, ExponentialFamily):
    """The distribution over {0, 1} with P(1) = `probs`, or = sigmoid(`logits`) for log-odds
    `logits`; numbers or tensors (a tensor's shape is the batch shape)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        (param,) = self._init_probs_or_logits(probs, logits)
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Bernoulli, ("probs", "logits"), batch_shape, _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        # 1 where P(1) > 1/2, 0 where below, NaN at exactly 1/2 (no unique mode).
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return oneflow.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with oneflow.no_grad():
            return oneflow.bernoulli(self.probs.expand(*shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -oneflow.nn.functional.binary_cross_entropy_with_logits(
            logits, value.to(logits.dtype), reduction="none"
        )

    def entropy(self):
        return oneflow.nn.functional.binary_cross_entropy_with_logits(
            self.logits, self.probs, reduction="none"
        )

    def enumerate_support(self, expand=True):
        values = oneflow.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view(-1, *([1] * len(self._batch_shape)))
        if expand:
            values = values.expand(-1, *self._batch_shape)
        return values

    @property
    def _natural_params(self):
        return (oneflow.logit(self.probs),)

    def _log_normalizer(self, x):
        return oneflow.log1p(oneflow.exp(x))


class CategoricalParams:
    """Mixin (listed before Distribution) of the distributions built on a ``Categorical`` held as
    ``_categorical`` (OneHotCategorical, Multinomial, ExpRelaxedCategorical): its batch shape,
    its number of classes as the event shape, and its parameters read through."""

    def _init_categorical(self, probs, logits):
        """Builds the Categorical (errors as Categorical's); returns (batch_shape, event_shape)."""
        self._categorical = Categorical(probs, logits)
        return self._categorical.batch_shape, self._categorical.param_shape[-1:]

    def _expand_categorical(self, cls, batch_shape, _instance=None, shared=()):
        new = self._expand_params(cls, (), batch_shape, _instance, shared=shared)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape
