"""oneflow.distributions.distribution: the base class of the probability distributions, with
PyTorch's interface (batch and event shapes, sampling, log_prob, moments, expand) and its
argument validation."""

import warnings

import oneflow
from oneflow.distributions import constraints
from oneflow.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    sum_rightmost,
)

__all__ = ["Distribution", "ExponentialFamily"]


class Distribution:
    """Abstract base class for probability distributions.

    ``batch_shape`` is the shape over which parameters are batched, ``event_shape`` the shape of a
    single sample. With ``validate_args`` on (the default, None, follows
    ``Distribution.set_default_validate_args``, which starts on unless Python runs with -O) the
    parameters are checked against ``arg_constraints`` when the distribution is built and values
    given to ``log_prob`` / ``cdf`` against ``support``; a violation raises ValueError."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = oneflow.Size(batch_shape)
        self._event_shape = oneflow.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{type(self)} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # depends on other parameters: cannot be checked alone
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param, None), lazy_property
                ):
                    continue  # not built from the arguments given (logits when given probs)
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}"
                    )

    def expand(self, batch_shape, _instance=None):
        """A new distribution of the same kind with its batch dimensions expanded to
        `batch_shape` (parameters are expanded views; arguments are not checked again)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """A dict from each tensor parameter's name to the constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint that the values of this distribution satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of shape sample_shape + batch_shape + event_shape, not differentiable."""
        with oneflow.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution, enumerated along dimension 0: shape
        (cardinality,) + batch_shape + event_shape, or with the batch dimensions of size 1 when
        `expand` is False."""
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return oneflow.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        """sample_shape + batch_shape + event_shape."""
        return oneflow.Size(
            tuple(oneflow.Size(sample_shape)) + tuple(self._batch_shape) + tuple(self._event_shape)
        )

    def _validate_sample(self, value):
        """Raises ValueError unless `value` is a tensor whose rightmost dimensions match the event
        shape, that broadcasts with batch_shape + event_shape, and that lies in the support."""
        if not isinstance(value, oneflow.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        event = tuple(self._event_shape)
        if shape[len(shape) - len(event) :] != event:
            raise ValueError(
                f"The right-most size of value must match event_shape: {shape} vs {event}."
            )
        expected = tuple(self._batch_shape) + event
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{shape} vs {expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{type(self)} does not define `support` to enable sample validation. Please "
                "initialize the distribution with `validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {shape}) to be within "
                f"the support ({support!r}) of the distribution {self!r}, but found invalid "
                f"values:\n{value}"
            )

    def _expand_params(self, cls, names, batch_shape, _instance=None, param_shape=(), shared=()):
        """expand() of a distribution whose parameters `names` all have the shape batch_shape +
        `param_shape`: each parameter expanded (one computed on first use, such as the logits of
        a distribution given probs, only once it has been), the attributes `shared` shared, the
        event shape and the rest as in self."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = oneflow.Size(batch_shape)
        shape = tuple(batch_shape) + tuple(param_shape)
        for name in names:
            if name in self.__dict__ or not isinstance(
                getattr(type(self), name, None), lazy_property
            ):
                setattr(new, name, getattr(self, name).expand(*shape))
        for name in shared:
            setattr(new, name, getattr(self, name))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        """The instance `expand` fills: `_instance`, or a new uninitialised one of this type."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        parts = []
        for name in names:
            value = self.__dict__[name]
            parts.append(f"{name}: {value if value.numel() == 1 else value.size()}")
        return f"{type(self).__name__}({', '.join(parts)})"


class ExponentialFamily(Distribution):
    """Base of the exponential families, densities p(x) = h(x) exp(<eta, t(x)> - A(eta)) in the
    natural parameters eta (``_natural_params``, a tuple of tensors) with log normaliser A
    (``_log_normalizer(*eta)``) and carrier measure h, E_p[log h(x)] being
    ``_mean_carrier_measure``.

    Since grad A(eta) = E[t(x)], the entropy is A(eta) - <eta, grad A(eta)> - E[log h(x)], and
    the KL divergence between two members of one family is the Bregman divergence of A
    (``kl_divergence`` falls back on it): both come from A alone, its gradient taken by autograd.
    They are differentiable with respect to the parameters (PyTorch's are not with respect to
    those of the distribution whose gradient of A they use)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def _log_normalizer_and_gradients(self):
        """(eta, A(eta), grad A(eta)): eta the natural parameters (as leaves requiring grad where
        they did not), the gradient differentiable (create_graph)."""
        with oneflow.enable_grad():
            params = [
                p if p.requires_grad else p.detach().requires_grad_() for p in self._natural_params
            ]
            log_normalizer = self._log_normalizer(*params)
            gradients = oneflow.autograd.grad(log_normalizer.sum(), params, create_graph=True)
        return params, log_normalizer, gradients

    def entropy(self):
        grad_enabled = oneflow.is_grad_enabled()
        params, log_normalizer, gradients = self._log_normalizer_and_gradients()
        with oneflow.enable_grad():
            result = log_normalizer - self._mean_carrier_measure
            n_batch = len(self._batch_shape)
            for eta, grad in zip(params, gradients):
                term = eta * grad
                result = result - sum_rightmost(term, max(term.ndim - n_batch, 0))
        return result if grad_enabled else result.detach()


class ProbsOrLogits:
    """Mixin (listed before Distribution) of the distributions parameterised by exactly one of
    `probs` or `logits`: Bernoulli, Binomial, Geometric, NegativeBinomial, LogitRelaxedBernoulli,
    ContinuousBernoulli (``binary``: a probability and its log-odds, elementwise) and
    Categorical (not ``binary``:
    probabilities over the last dimension and their logs). The one given is stored as an
    attribute; the other is computed from it on first use."""

    binary = True

    def _init_probs_or_logits(self, probs, logits, *others):
        """Stores whichever of `probs` and `logits` is given (ValueError unless exactly one is)
        and returns the tensors (`others`..., parameter). Binary: the parameter broadcast with
        `others` (numbers become tensors, see ``broadcast_all``). Otherwise: the parameter, at
        least one-dimensional, normalised over its last dimension."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        if self.binary:
            *others, param = broadcast_all(*others, given)
        else:
            if given.ndim < 1:
                raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
            if probs is not None:
                param = probs / probs.sum(-1, keepdim=True)
            else:
                param = logits - oneflow.logsumexp(logits, -1, keepdim=True)
        setattr(self, name, param)
        return (*others, param)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self.binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self.binary)

    @property
    def _param(self):
        """The stored parameter (probs when both have been computed)."""
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @property
    def param_shape(self):
        return self._param.shape
