"""oneflow.distributions.relaxed: the continuous relaxations of the discrete distributions
(Gumbel-softmax / Concrete, Maddison et al. 2017; Jang et al. 2017) that have reparameterized
samples: LogitRelaxedBernoulli and RelaxedBernoulli, ExpRelaxedCategorical and
RelaxedOneHotCategorical, each with a `temperature` (lower is closer to discrete)."""

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.discrete import CategoricalParams
from oneflow.distributions.distribution import Distribution, ProbsOrLogits
from oneflow.distributions.transformed_distribution import TransformedDistribution
from oneflow.distributions.transforms import ExpTransform, SigmoidTransform
from oneflow.distributions.utils import broadcast_all, clamp_probs

__all__ = [
    "ExpRelaxedCategorical",
    "LogitRelaxedBernoulli",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
]


class _RelaxedParams:
    """Mixin of the relaxed distributions (TransformedDistributions): their parameters read from
    the base distribution."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class LogitRelaxedBernoulli(ProbsOrLogits, Distribution):
    """The logit of a RelaxedBernoulli sample: (logits + log U - log(1 - U)) / temperature for
    U uniform on (0, 1), with `temperature` a positive tensor and `probs` / `logits` as
    ``Bernoulli``'s."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        (param,) = self._init_probs_or_logits(probs, logits)
        self.temperature = temperature
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            LogitRelaxedBernoulli,
            ("probs", "logits"),
            batch_shape,
            _instance,
            shared=("temperature",),
        )

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(*shape))
        u = clamp_probs(oneflow.rand(tuple(shape), dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return (
            oneflow.log(oneflow.as_tensor(self.temperature, dtype=diff.dtype, device=diff.device))
            + diff
            - 2 * oneflow.nn.functional.softplus(diff)
        )


class RelaxedBernoulli(_RelaxedParams, TransformedDistribution):
    """A relaxed Bernoulli on (0, 1): the sigmoid of a LogitRelaxedBernoulli sample."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)


class ExpRelaxedCategorical(CategoricalParams, Distribution):
    """The log of a RelaxedOneHotCategorical sample: log_softmax((logits + G) / temperature) for
    standard Gumbel noise G, over vectors of length K (the event shape); `probs` / `logits` as
    ``Categorical``'s."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        batch_shape, event_shape = self._init_categorical(probs, logits)
        self.temperature = temperature
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        shared = ("temperature",)
        return self._expand_categorical(ExpRelaxedCategorical, batch_shape, _instance, shared)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        u = clamp_probs(oneflow.rand(tuple(shape), dtype=logits.dtype, device=logits.device))
        gumbels = -((-(u.log())).log())
        scores = (logits + gumbels) / self.temperature
        return scores - oneflow.logsumexp(scores, -1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self._categorical.num_events
        logits, value = broadcast_all(self.logits, value)
        temperature = oneflow.as_tensor(self.temperature, dtype=logits.dtype, device=logits.device)
        log_scale = oneflow.lgamma(oneflow.full_like(temperature, float(k))) + (k - 1) * (
            temperature.log()
        )
        score = logits - value * temperature
        score = (score - oneflow.logsumexp(score, -1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_RelaxedParams, TransformedDistribution):
    """A relaxed one-hot categorical on the simplex (the Gumbel-softmax / Concrete
    distribution): the exp of an ExpRelaxedCategorical sample."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)
