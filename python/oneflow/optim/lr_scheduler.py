"""Learning-rate schedulers with PyTorch's formulas (closed forms where PyTorch's chainable
updates equal them), state_dict, get_last_lr, and OneFlow's forms.

state_dict() has the keys and values PyTorch's schedulers have (functions, which pickle cannot
store, become None or a callable object's __dict__, as in PyTorch), so a PyTorch scheduler's
state dict loads here and one saved here loads in PyTorch.

OneFlow's forms are accepted too:

- every scheduler taking PyTorch's ``last_epoch`` also takes OneFlow's ``last_step`` (the
  same counter; pass one of them), and schedulers (ReduceLROnPlateau too) have a ``last_step``
  attribute, an alias of ``last_epoch`` (readable and writable);
- a scheduler in OneFlow's form (built with ``last_step=``, one of OneFlow's own schedulers:
  CosineDecayLR, WarmupLR, PolynomialLR with OneFlow's arguments, or a subclass overriding
  OneFlow's ``get_lr(base_lr, step)``) also stores ``"last_step"`` in its state_dict; the
  others keep exactly PyTorch's keys. A state dict with either counter, or both, loads;
- a subclass may override OneFlow's ``get_lr(self, base_lr, step)`` (one rate for one base
  rate, closed form in the step) instead of PyTorch's ``get_lr(self)`` (the list of rates):
  the override's signature tells which;
- ``WarmUpLR`` is OneFlow's other name of ``WarmupLR``; PolynomialLR takes OneFlow's
  ``decay_batch``/``end_learning_rate``/``cycle``; SequentialLR takes ``interval_rescaling``.
"""

import inspect
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter

from oneflow.optim.optimizer import Optimizer


def _resolve_last(last_epoch, last_step):
    """The step counter from PyTorch's last_epoch or OneFlow's last_step (the same number)."""
    if last_step is None:
        return last_epoch
    if last_epoch != -1 and last_epoch != last_step:
        raise ValueError(
            f"got last_epoch={last_epoch} and last_step={last_step}: they are the same "
            "counter (PyTorch's and OneFlow's name), pass one of them"
        )
    return last_step


_get_lr_forms = weakref.WeakKeyDictionary()


def _takes_base_lr_and_step(get_lr):
    """Whether a get_lr has OneFlow's form get_lr(self, base_lr, step), returning one rate for
    one base rate, rather than PyTorch's get_lr(self), returning the list of rates: it takes
    two positional arguments after self, the first one required."""
    try:
        return _get_lr_forms[get_lr]
    except (KeyError, TypeError):
        pass
    try:
        sig = inspect.signature(get_lr)
    except (TypeError, ValueError):
        return False
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    positional = [p for p in sig.parameters.values() if p.kind in kinds]
    form = len(positional) >= 3 and positional[1].default is inspect.Parameter.empty
    try:
        _get_lr_forms[get_lr] = form
    except TypeError:  # not weakly referenceable: not cached
        pass
    return form


def _with_counter(state_dict):
    """A state dict with PyTorch's counter (last_epoch) from OneFlow's (last_step) where only
    that one is there; last_step itself is left out (it is an alias of last_epoch here)."""
    state_dict = dict(state_dict)
    step = state_dict.pop("last_step", None)
    if step is not None and "last_epoch" not in state_dict:
        state_dict["last_epoch"] = step
    return state_dict


class _StepAlias:
    """OneFlow's name of the step counter: last_step is last_epoch."""

    @property
    def last_step(self):
        return self.last_epoch

    @last_step.setter
    def last_step(self, value):
        self.last_epoch = value


def _track_optimizer_steps(optimizer):
    """From the first scheduler made on `optimizer` on, its step() notes that it ran
    (Optimizer's step wrapper sets _opt_called), as PyTorch's schedulers track it."""
    d = optimizer.__dict__
    if not d.get("_opt_step_tracked"):
        d["_opt_step_tracked"] = True
        d["_opt_called"] = False


def _warn_if_optimizer_not_stepped(optimizer):
    if not optimizer.__dict__.get("_opt_called", True):
        warnings.warn(
            "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
            "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
            "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
            "will result in PyTorch skipping the first value of the learning rate schedule. "
            "See more details at "
            "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
            UserWarning,
            stacklevel=3,
        )


class LRScheduler(_StepAlias):
    # True for OneFlow's own schedulers: their state_dict also has OneFlow's "last_step".
    _oneflow_state = False

    def __init__(self, optimizer, last_epoch=-1, verbose=False, last_step=None):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if last_step is not None:  # OneFlow's form: its state_dict has "last_step" too
            self._oneflow_state = True
        last_epoch = _resolve_last(last_epoch, last_step)
        self.optimizer = optimizer
        if last_epoch == -1:
            for g in optimizer.param_groups:
                g.setdefault("initial_lr", g["lr"])
        else:
            for i, g in enumerate(optimizer.param_groups):
                if "initial_lr" not in g:
                    raise KeyError(
                        f"{type(self).__name__}: param 'initial_lr' is not specified in "
                        f"param_groups[{i}] when resuming a scheduler with last_epoch={last_epoch}"
                    )
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        _track_optimizer_steps(optimizer)
        self._initial_step()

    # True during the step the constructor takes: a scheduler resumed with last_epoch >= 0 then
    # keeps the optimizer's rates instead of moving them one step further.
    _is_initial = False
    # True while step() computes the new rates with get_lr().
    _get_lr_called_within_step = False

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError

    def _compute_lrs(self):
        """The rates at last_epoch from get_lr, in PyTorch's form (get_lr() -> list) or in
        OneFlow's (get_lr(base_lr, step) -> one rate)."""
        if _takes_base_lr_and_step(type(self).get_lr):
            return [self.get_lr(base, self.last_epoch) for base in self.base_lrs]
        return self.get_lr()

    def get_last_lr(self):
        return self._last_lr

    def _closed_form(self, epoch):
        """The rates at `epoch` without stepping (schedulers whose get_lr is closed-form)."""
        saved = self.last_epoch
        self.last_epoch = epoch
        try:
            return self._compute_lrs()
        finally:
            self.last_epoch = saved

    def step(self, epoch=None):
        if self._step_count == 1:  # PyTorch's check: the first step after the constructor's
            _warn_if_optimizer_not_stepped(self.optimizer)
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """Moves to the next epoch (or to `epoch`) and sets the groups' rates."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                lrs = self._compute_lrs()
            else:  # an explicit epoch takes the closed form where there is one, as in PyTorch
                self.last_epoch = epoch
                closed = type(self)._closed_form is not LRScheduler._closed_form
                lrs = self._closed_form(epoch) if closed else self._compute_lrs()
        finally:
            self._get_lr_called_within_step = False
        self.update_lrs(lrs)

    def update_lrs(self, lrs):
        """Sets the groups' rates to `lrs` (OneFlow's LRScheduler.update_lrs)."""
        for g, lr in zip(self.optimizer.param_groups, lrs):
            g["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _writes_last_step(self):
        return self._oneflow_state or _takes_base_lr_and_step(type(self).get_lr)

    def _own_state(self, exclude=()):
        """self.__dict__ without the optimizer (and `exclude`), with OneFlow's "last_step" for a
        scheduler in OneFlow's form."""
        skip = ("optimizer", "_oneflow_state", *exclude)
        d = {k: v for k, v in self.__dict__.items() if k not in skip}
        if self._writes_last_step() and "last_epoch" in self.__dict__:
            d["last_step"] = self.last_epoch
        return d

    def state_dict(self):
        return self._own_state()

    def load_state_dict(self, state_dict):
        self.__dict__.update(_with_counter(state_dict))


_LRScheduler = LRScheduler


def _function_state(fn):
    """What state_dict stores for a user function: None for a plain function or lambda, which
    is passed again at construction, and a callable object's attributes."""
    if fn is None or isinstance(fn, types.FunctionType):
        return None
    return dict(fn.__dict__)


class _LambdaState:
    """state_dict for schedulers holding lr_lambdas."""

    def state_dict(self):
        d = self._own_state(exclude=("lr_lambdas",))
        d["lr_lambdas"] = [_function_state(f) for f in self.lr_lambdas]
        return d

    def load_state_dict(self, state_dict):
        state_dict = _with_counter(state_dict)
        saved = state_dict.pop("lr_lambdas", None) or []
        self.__dict__.update(state_dict)
        for f, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                f.__dict__.update(attrs)


class LambdaLR(_LambdaState, LRScheduler):
    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False, last_step=None):
        n = len(optimizer.param_groups)
        self.lr_lambdas = (
            list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        )
        if len(self.lr_lambdas) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def get_lr(self):
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False, last_step=None):
        n = len(optimizer.param_groups)
        self.lr_lambdas = (
            list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        )
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def get_lr(self):
        if not self._is_initial:
            return [
                g["lr"] * f(self.last_epoch)
                for g, f in zip(self.optimizer.param_groups, self.lr_lambdas)
            ]
        return [g["lr"] for g in self.optimizer.param_groups]


class StepLR(LRScheduler):
    def __init__(
        self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False, last_step=None
    ):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def get_lr(self):
        # PyTorch's chainable (recursive) form, so that ChainedScheduler composes.
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _closed_form(self, epoch):
        return [b * self.gamma ** (epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    def __init__(
        self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False, last_step=None
    ):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return [g["lr"] for g in self.optimizer.param_groups]
        f = self.gamma ** self.milestones[self.last_epoch]
        return [g["lr"] * f for g in self.optimizer.param_groups]

    def _closed_form(self, epoch):
        ms = sorted(self.milestones.elements())
        return [b * self.gamma ** bisect_right(ms, epoch) for b in self.base_lrs]


class ConstantLR(LRScheduler):
    def __init__(
        self,
        optimizer,
        factor=1.0 / 3,
        total_iters=5,
        last_epoch=-1,
        verbose=False,
        last_step=None,
    ):
        if not 0 <= factor <= 1:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def get_lr(self):
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self.last_epoch == 0:
            return [lr * self.factor for lr in lrs]
        if self.last_epoch != self.total_iters:
            return lrs
        return [lr * (1.0 / self.factor) for lr in lrs]

    def _closed_form(self, epoch):
        f = self.factor if epoch < self.total_iters else 1.0
        return [b * f for b in self.base_lrs]


class LinearLR(LRScheduler):
    def __init__(
        self,
        optimizer,
        start_factor=1.0 / 3,
        end_factor=1.0,
        total_iters=5,
        last_epoch=-1,
        verbose=False,
        last_step=None,
    ):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError("Starting and ending multiplicative factors expected to be in (0, 1]")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def get_lr(self):
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in lrs]
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        d = self.end_factor - self.start_factor
        f = 1.0 + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d)
        return [lr * f for lr in lrs]

    def _closed_form(self, epoch):
        t = min(epoch, self.total_iters)
        f = self.start_factor + (self.end_factor - self.start_factor) * t / self.total_iters
        return [b * f for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False, last_step=None):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def get_lr(self):
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        return lrs if self._is_initial else [lr * self.gamma for lr in lrs]

    def _closed_form(self, epoch):
        return [b * self.gamma**epoch for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Polynomial decay, in PyTorch's form or in OneFlow's.

    PyTorch's ``PolynomialLR(optimizer, total_iters=5, power=1.0, last_epoch=-1)``: the rate
    is ``base * (1 - min(step, total_iters) / total_iters) ** power`` (it decays to 0).

    OneFlow's ``PolynomialLR(optimizer, decay_batch, end_learning_rate=0.0001, power=1.0,
    cycle=False, last_step=-1)``: the rate is ``(base - end_lr) * (1 - t / D) ** power + end_lr``
    with, without cycle, ``t = min(step, decay_batch)`` and ``D = decay_batch``; with cycle,
    ``t = max(step, 1)`` and ``D = decay_batch * ceil(t / decay_batch)`` (the decay restarts
    from the base rate's height over the next multiple of decay_batch; as OneFlow computes
    it, step 0 counts as step 1 then).

    OneFlow's formula applies when any of OneFlow's own arguments (``decay_batch``,
    ``end_learning_rate``, ``cycle``, ``last_step``) is given by keyword; otherwise PyTorch's.
    The second positional argument is the number of steps in both (PyTorch's total_iters,
    OneFlow's decay_batch); the positions after it follow PyTorch's signature (power,
    last_epoch), so OneFlow's end_learning_rate, power and cycle must be passed by keyword.
    """

    # OneFlow's formula when set (OneFlow's form); None: PyTorch's.
    end_learning_rate = None
    cycle = False

    def __init__(
        self,
        optimizer,
        total_iters=None,
        power=1.0,
        last_epoch=-1,
        verbose=False,
        *,
        decay_batch=None,
        end_learning_rate=None,
        cycle=None,
        last_step=None,
    ):
        if total_iters is not None and decay_batch is not None:
            raise TypeError(
                "PolynomialLR got total_iters and decay_batch: they are the same number of "
                "steps (PyTorch's and OneFlow's name), pass one of them"
            )
        steps = decay_batch if decay_batch is not None else total_iters
        oneflow_form = (decay_batch, end_learning_rate, cycle, last_step) != (None,) * 4
        if oneflow_form:
            if steps is None:
                raise TypeError("PolynomialLR: OneFlow's form needs decay_batch")
            if steps <= 0:
                raise ValueError(f"decay_batch must greater than zero, but got {steps}")
            self.end_learning_rate = 0.0001 if end_learning_rate is None else end_learning_rate
            self.cycle = bool(cycle)
            self._oneflow_state = True
        self.total_iters = 5 if steps is None else steps
        self.power = power
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def _oneflow_lr(self, base, step):
        decay = self.total_iters
        if self.cycle:
            step = max(step, 1)
            decay = decay * math.ceil(step / decay)
        else:
            step = min(step, decay)
        end = self.end_learning_rate
        return (base - end) * (1.0 - step / decay) ** self.power + end

    def get_lr(self):
        if self.end_learning_rate is not None:
            return self._closed_form(self.last_epoch)
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        f = (
            (1.0 - self.last_epoch / self.total_iters)
            / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return [lr * f for lr in lrs]

    def _closed_form(self, epoch):
        if self.end_learning_rate is not None:
            return [self._oneflow_lr(b, epoch) for b in self.base_lrs]
        t = min(self.total_iters, epoch)
        return [b * (1.0 - t / self.total_iters) ** self.power for b in self.base_lrs]

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        if "max_decay_steps" in state_dict:  # OneFlow's name of the number of steps
            state_dict["total_iters"] = state_dict.pop("max_decay_steps")
        super().load_state_dict(state_dict)
        if self.end_learning_rate is not None:
            self._oneflow_state = True


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1, verbose=False, last_step=None):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def _closed_form(self, epoch):
        return [
            self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2
            for b in self.base_lrs
        ]

    def get_lr(self):
        # PyTorch's recursive form; it differs from the closed form once last_epoch > T_max.
        e, T = self.last_epoch, self.T_max
        if self._is_initial:
            return [g["lr"] for g in self.optimizer.param_groups]
        if self._step_count == 1 and e > 0:
            return self._closed_form(e)
        if (e - 1 - T) % (2 * T) == 0:
            return [
                g["lr"] + (b - self.eta_min) * (1 - math.cos(math.pi / T)) / 2
                for b, g in zip(self.base_lrs, self.optimizer.param_groups)
            ]
        return [
            (1 + math.cos(math.pi * e / T))
            / (1 + math.cos(math.pi * (e - 1) / T))
            * (g["lr"] - self.eta_min)
            + self.eta_min
            for g in self.optimizer.param_groups
        ]


class CosineDecayLR(LRScheduler):
    """OneFlow's cosine decay: for step < decay_steps the rate is
    base * ((1 - alpha) * 0.5 * (1 + cos(pi * step / decay_steps)) + alpha), then base * alpha."""

    _oneflow_state = True

    def __init__(self, optimizer, decay_steps, alpha=0.0, last_step=-1, verbose=False):
        if decay_steps <= 0:
            raise ValueError(f"CosineDecayLR: decay_steps must be positive, got {decay_steps}")
        self.decay_steps, self.alpha = decay_steps, alpha
        super().__init__(optimizer, last_step)

    def get_lr(self):
        return self._closed_form(self.last_epoch)

    def _closed_form(self, step):
        if step >= self.decay_steps:
            return [b * self.alpha for b in self.base_lrs]
        cos_decay = 0.5 * (1 + math.cos(math.pi * step / self.decay_steps))
        return [b * ((1 - self.alpha) * cos_decay + self.alpha) for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    def __init__(
        self,
        optimizer,
        T_0,
        T_mult=1,
        eta_min=0.0,
        last_epoch=-1,
        verbose=False,
        last_step=None,
    ):
        last_epoch = _resolve_last(last_epoch, last_step)
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch, last_step=last_step)

    def get_lr(self):
        return [
            self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for b in self.base_lrs
        ]

    def step(self, epoch=None):
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        # as in PyTorch, this step() leaves _step_count (0 from the constructor) as it is
        self._get_lr_called_within_step = True
        try:
            lrs = self._compute_lrs()
        finally:
            self._get_lr_called_within_step = False
        self.update_lrs(lrs)


class OneCycleLR(LRScheduler):
    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=None,
        epochs=None,
        steps_per_epoch=None,
        pct_start=0.3,
        anneal_strategy="cos",
        cycle_momentum=True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor=25.0,
        final_div_factor=1e4,
        three_phase=False,
        last_epoch=-1,
        verbose=False,
        last_step=None,
    ):
        last_epoch = _resolve_last(last_epoch, last_step)
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(
                    "You must define either total_steps OR (epochs AND steps_per_epoch)"
                )
            total_steps = epochs * steps_per_epoch
        self.total_steps = total_steps
        n = len(optimizer.param_groups)
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * n
        # per phase: its last step and the param_group keys of the rates and momenta it
        # anneals between (PyTorch's _schedule_phases)
        if three_phase:
            phases = [
                (float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum",
                 "base_momentum"),
                (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                 "max_momentum"),
                (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]  # fmt: skip
        else:
            phases = [
                (float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum",
                 "base_momentum"),
                (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]  # fmt: skip
        names = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases = [dict(zip(names, phase)) for phase in phases]
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        self.cycle_momentum = cycle_momentum
        for g, m in zip(optimizer.param_groups, max_lrs):
            if last_epoch == -1:
                g["initial_lr"] = m / div_factor
                g["max_lr"] = m
                g["min_lr"] = g["initial_lr"] / final_div_factor
        if cycle_momentum:
            self.use_beta1 = "betas" in optimizer.defaults
            for g in optimizer.param_groups:
                if last_epoch == -1:
                    g["max_momentum"], g["base_momentum"] = max_momentum, base_momentum
                    if self.use_beta1:
                        g["betas"] = (max_momentum, *g["betas"][1:])
                    else:
                        g["momentum"] = max_momentum
        super().__init__(optimizer, last_epoch, last_step=last_step)

    @staticmethod
    def _cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps "
                f"is {self.total_steps}"
            )
        lrs = []
        phases = self._schedule_phases
        anneal = self._cos if self._anneal_func_type == "cos" else self._linear
        for g in self.optimizer.param_groups:
            start = 0
            for i, phase in enumerate(phases):
                end = phase["end_step"]
                if step <= end or i == len(phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = anneal(g[phase["start_lr"]], g[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        mom = anneal(g[phase["start_momentum"]], g[phase["end_momentum"]], pct)
                    break
                start = end
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    g["betas"] = (mom, *g["betas"][1:])
                else:
                    g["momentum"] = mom
        return lrs

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        # the names an earlier version of this class stored
        if "_phases" in state_dict:
            names = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
            phases = state_dict.pop("_phases")
            state_dict["_schedule_phases"] = [dict(zip(names, p)) for p in phases]
        if "anneal_strategy" in state_dict:
            state_dict["_anneal_func_type"] = state_dict.pop("anneal_strategy")
        if "_use_beta" in state_dict:
            state_dict["use_beta1"] = state_dict.pop("_use_beta")
        super().load_state_dict(state_dict)


class CyclicLR(LRScheduler):
    """Cycles each group's rate between base_lr and max_lr (PyTorch's CyclicLR): up over
    step_size_up steps, down over step_size_down, the height scaled per cycle (triangular,
    triangular2) or per step (exp_range), momentum cycled the other way."""

    def __init__(
        self,
        optimizer,
        base_lr,
        max_lr,
        step_size_up=2000,
        step_size_down=None,
        mode="triangular",
        gamma=1.0,
        scale_fn=None,
        scale_mode="cycle",
        cycle_momentum=True,
        base_momentum=0.8,
        max_momentum=0.9,
        last_epoch=-1,
        verbose=False,
        last_step=None,
    ):
        last_epoch = _resolve_last(last_epoch, last_step)
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        base_lrs = self._per_group(optimizer, "base_lr", base_lr)
        if last_epoch == -1:
            for lr, g in zip(base_lrs, optimizer.param_groups):
                g["lr"] = lr
        self.max_lrs = self._per_group(optimizer, "max_lr", max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        if scale_fn is None:
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = self._per_group(optimizer, "base_momentum", base_momentum)
            self.max_momentums = self._per_group(optimizer, "max_momentum", max_momentum)
            if last_epoch == -1:
                for m, b, g in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    if self.use_beta1:
                        g["betas"] = (m, *g["betas"][1:])
                    else:
                        g["momentum"] = m
                    g["max_momentum"], g["base_momentum"] = m, b
        super().__init__(optimizer, last_epoch, last_step=last_step)
        self.base_lrs = base_lrs

    @staticmethod
    def _per_group(optimizer, name, value):
        n = len(optimizer.param_groups)
        if isinstance(value, (list, tuple)):
            if len(value) != n:
                raise ValueError(f"expected {n} values for {name}, got {len(value)}")
            return list(value)
        return [value] * n

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [b + (m - b) * scale_factor * scale for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            groups = self.optimizer.param_groups
            for b, m, g in zip(self.base_momentums, self.max_momentums, groups):
                momentum = m - (m - b) * scale_factor * scale
                if self.use_beta1:
                    g["betas"] = (momentum, *g["betas"][1:])
                else:
                    g["momentum"] = momentum
        return lrs

    def state_dict(self):
        d = super().state_dict()
        # a function is passed again at construction; a callable object's attributes are kept
        d["_scale_fn_custom"] = _function_state(d.pop("_scale_fn_custom", None))
        return d

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        attrs = state_dict.pop("_scale_fn_custom", None)
        super().load_state_dict(state_dict)
        if attrs is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(attrs)


class SequentialLR(LRScheduler):
    """Runs `schedulers` one after the other, switching at the `milestones` (PyTorch's
    SequentialLR: at a milestone the next scheduler restarts from step 0).

    OneFlow's ``interval_rescaling`` (a bool, or one per milestone) is accepted, by keyword or
    as the fourth positional argument (where PyTorch has last_epoch: a bool or a list there is
    OneFlow's interval_rescaling, and the fifth is then OneFlow's last_step). As in OneFlow, a
    scheduler whose milestone has interval_rescaling=True counts its steps from its milestone
    (PyTorch's restart) and one with False is given the global step (its closed form there,
    as ``step(epoch)``). Left out, every scheduler restarts at its milestone as in PyTorch
    (OneFlow's default is False: pass it to have OneFlow's)."""

    # OneFlow's interval_rescaling, one per milestone; None: PyTorch's restarts
    interval_rescaling = None

    def __init__(
        self,
        optimizer,
        schedulers,
        milestones,
        last_epoch=-1,
        verbose=False,
        interval_rescaling=None,
        last_step=None,
    ):
        if isinstance(last_epoch, (bool, list, tuple)):  # OneFlow's positional order
            if interval_rescaling is not None:
                raise TypeError("SequentialLR got interval_rescaling twice")
            interval_rescaling, last_epoch = last_epoch, -1
            if not isinstance(verbose, bool) and isinstance(verbose, int):
                if last_step is not None:
                    raise TypeError("SequentialLR got last_step twice")
                last_step, verbose = verbose, False
        if last_step is not None:
            self._oneflow_state = True
        last_epoch = _resolve_last(last_epoch, last_step)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be "
                "one more than the number of milestone points"
            )
        if interval_rescaling is not None:
            if isinstance(interval_rescaling, (list, tuple)):
                if len(interval_rescaling) != len(milestones):
                    raise ValueError(
                        "'interval_rescaling' expects a bool or a list of bool with length "
                        "equal to the number of milestones, but got number of milestones "
                        f"{len(milestones)} and the length of list of interval_rescaling "
                        f"{len(interval_rescaling)}"
                    )
                rescaling = [bool(r) for r in interval_rescaling]
            else:
                rescaling = [bool(interval_rescaling)] * len(milestones)
            self.interval_rescaling = rescaling
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for g in optimizer.param_groups:
            g["lr"] = g["initial_lr"]
        self._undo_initial_steps(self)
        # only the scheduler that runs at step 0 takes its initial step
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = self._schedulers[idx].get_last_lr()

    @classmethod
    def _undo_initial_steps(cls, s):
        """Takes back the step each scheduler's constructor took, in nested ones too."""
        if hasattr(s, "_schedulers"):
            for inner in s._schedulers:
                cls._undo_initial_steps(inner)
        elif hasattr(s, "last_epoch"):
            s.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        s = self._schedulers[idx]
        if idx > 0 and self.interval_rescaling is not None and not self.interval_rescaling[idx - 1]:
            # OneFlow's interval_rescaling=False: the scheduler is at the global step
            if isinstance(s, (SequentialLR, ChainedScheduler)):
                s.step()
            else:
                s.step(self.last_epoch)
        elif idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            s._update_lr(0)  # restarts at epoch 0; as in PyTorch, not counted in _step_count
        else:
            s.step()
        self._last_lr = s.get_last_lr()

    def state_dict(self):
        d = self._own_state(exclude=("_schedulers",))
        d["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return d

    def load_state_dict(self, state_dict):
        state_dict = _with_counter(state_dict)
        # OneFlow's names of the nested schedulers' states and of the milestones
        subs = state_dict.pop("_schedulers", None)
        if subs is None:
            subs = state_dict.pop("schedulers")
        if "milestones" in state_dict:
            state_dict["_milestones"] = list(state_dict.pop("milestones"))
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, subs):
            s.load_state_dict(sd)


class ChainedScheduler(LRScheduler):
    def __init__(self, schedulers, optimizer=None):
        self._schedulers = list(schedulers)
        self.optimizer = optimizer or self._schedulers[0].optimizer
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def step(self):
        for s in self._schedulers:
            s.step()
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict


class ReduceLROnPlateau(_StepAlias):
    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        threshold=1e-4,
        threshold_mode="rel",
        cooldown=0,
        min_lr=0,
        eps=1e-8,
        verbose=False,
    ):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            # None: min_lrs is per group and cannot follow a change in the number of groups
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * n
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]
        self._init_is_better(mode, threshold, threshold_mode)
        self.best = self.mode_worse
        self.cooldown_counter, self.num_bad_epochs = 0, 0

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf  # the worst metric
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def _better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def step(self, metrics, epoch=None):
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            groups = self.optimizer.param_groups
            if len(groups) != len(self.min_lrs):
                if self.default_min_lr is None:
                    raise RuntimeError(
                        f"The number of param groups in the `optimizer` ({len(groups)}) "
                        f"differs from when `ReduceLROnPlateau` was initialized "
                        f"({len(self.min_lrs)}), usually due to a new param group being added "
                        "to the optimizer. Please modify the `min_lrs` field to match the "
                        "length of the `optimizer` param groups."
                    )
                self.min_lrs = [self.default_min_lr] * len(groups)
            for g, min_lr in zip(groups, self.min_lrs):
                new = max(g["lr"] * self.factor, min_lr)
                if g["lr"] - new > self.eps:
                    g["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self):
        return self._last_lr

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(_with_counter(state_dict))
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


class WarmupLR(LRScheduler):
    """OneFlow's warmup: for the first `warmup_iters` steps the rate is multiplied by a factor
    ramping linearly from `warmup_factor` to 1 (or held at it, "constant"). Wrapping a scheduler,
    warmup_prefix=False applies the factor on top of that scheduler's own schedule;
    warmup_prefix=True starts the scheduler after the warmup, which runs on the base rate.
    WarmUpLR is OneFlow's other name of it."""

    _oneflow_state = True

    def __init__(
        self,
        scheduler_or_optimizer,
        warmup_factor=1.0 / 3,
        warmup_iters=5,
        warmup_method="linear",
        warmup_prefix=False,
        last_step=-1,
        verbose=False,
    ):
        if warmup_method not in ("linear", "constant"):
            raise ValueError(f"warmup_method must be 'linear' or 'constant', got {warmup_method}")
        if isinstance(scheduler_or_optimizer, Optimizer):
            optimizer, self.scheduler = scheduler_or_optimizer, None
        else:
            self.scheduler = scheduler_or_optimizer
            optimizer = self.scheduler.optimizer
        self.warmup_factor, self.warmup_iters = warmup_factor, warmup_iters
        self.warmup_method, self.warmup_prefix = warmup_method, warmup_prefix
        super().__init__(optimizer, last_step)

    def _factor(self, t):
        if t >= self.warmup_iters:
            return 1.0
        if self.warmup_method == "constant":
            return self.warmup_factor
        return self.warmup_factor + (1 - self.warmup_factor) * t / self.warmup_iters

    def get_lr(self):
        t = self.last_epoch
        if self.scheduler is None:
            base = self.base_lrs
        elif self.warmup_prefix and t < self.warmup_iters:
            base = self.base_lrs
        else:
            step = t - self.warmup_iters if self.warmup_prefix else t
            base = self.scheduler._closed_form(max(step, 0))
        return [b * self._factor(t) for b in base]


WarmUpLR = WarmupLR  # OneFlow's other name
