"""oneflow.distributions.discrete: the distributions over a finite set, Categorical (classes
0..K-1) and Bernoulli ({0, 1}), each parameterised by probabilities or by logits. Both enumerate
their support; neither has a reparameterized sample."""

import math

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.distribution import Distribution
from oneflow.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Bernoulli", "Categorical"]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Categorical(Distribution):
    """The distribution over the classes 0..K-1 (K = the size of the last dimension of `probs`
    or `logits`) that ``oneflow.multinomial`` samples from; leading dimensions are a batch.

    `probs` must be nonnegative with a nonzero sum and is normalised to sum to 1 over the last
    dimension; `logits` are unnormalised log probabilities, normalised to ``logits -
    logsumexp(logits)``. The ``probs`` and ``logits`` attributes are these normalised values
    (the one not given is computed on first use)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._param = self.probs
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - oneflow.logsumexp(logits, -1, keepdim=True)
            self._param = self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.ndim > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = oneflow.Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(*param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(*param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.shape

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


class Bernoulli(Distribution):
    """The distribution over {0, 1} with P(1) = `probs`, or = sigmoid(`logits`) for log-odds
    `logits`; numbers or tensors (a tensor's shape is the batch shape)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        is_scalar = not isinstance(given, oneflow.Tensor)
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(() if is_scalar else param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = oneflow.Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(*batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(*batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape

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
