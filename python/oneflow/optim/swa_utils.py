"""Stochastic weight averaging and exponential moving averages of a model's weights (PyTorch's
torch.optim.swa_utils): AveragedModel, the averaging functions, SWALR and update_bn."""

import copy
import itertools
import math

import oneflow
from oneflow.nn.modules.layers import _BatchNorm
from oneflow.nn.modules.module import Module
from oneflow.optim.lr_scheduler import LRScheduler

__all__ = [
    "AveragedModel",
    "SWALR",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_multi_avg_fn(decay=0.999):
    """In place over lists of averaged and current parameters (of one dtype and device):
    ema = decay ema + (1 - decay) p."""
    _check_decay(decay)

    @oneflow.no_grad()
    def ema_update(ema_params, current_params, num_averaged):
        for e, p in zip(ema_params, current_params):
            if e.dtype.is_floating_point:
                e.mul_(decay).add_(p, alpha=1 - decay)
            else:  # integer buffers (BatchNorm's num_batches_tracked): computed, then cast
                e.copy_(e * decay + p * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """In place over lists of averaged and current parameters: the running mean."""

    @oneflow.no_grad()
    def swa_update(averaged_params, current_params, num_averaged):
        n = float(num_averaged) if not isinstance(num_averaged, oneflow.Tensor) else None
        for a, p in zip(averaged_params, current_params):
            if a.dtype.is_floating_point:
                count = n if n is not None else num_averaged.to(a.dtype)
                a.add_((p - a) / (count + 1))
            else:
                count = n if n is not None else float(num_averaged)
                a.copy_(a + (p - a) / (count + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    _check_decay(decay)

    @oneflow.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    @oneflow.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) hold an average
    of the model's over the calls of ``update_parameters``: the running mean by default, or
    ``avg_fn(averaged, current, n)`` per tensor, or ``multi_avg_fn`` over the lists in place."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", oneflow.tensor(0, dtype=oneflow.int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    @oneflow.no_grad()
    def update_parameters(self, model):
        averaged = [p.detach() for p in self._tensors(self.module)]
        current = [p.detach().to(a.device) for p, a in zip(self._tensors(model), averaged)]
        n = int(self.n_averaged.item())
        if n == 0:
            for a, p in zip(averaged, current):
                a.copy_(p)
        elif self.multi_avg_fn is not None:
            # one call per dtype and device, as PyTorch's (BatchNorm's integer counter apart)
            groups = {}
            for a, p in zip(averaged, current):
                groups.setdefault((a.dtype, str(a.device)), ([], []))
                groups[(a.dtype, str(a.device))][0].append(a)
                groups[(a.dtype, str(a.device))][1].append(p)
            for group_avg, group_cur in groups.values():
                self.multi_avg_fn(group_avg, group_cur, self.n_averaged.to(group_avg[0].device))
        else:
            avg_fn = self.avg_fn or get_swa_avg_fn()
            for a, p in zip(averaged, current):
                a.copy_(avg_fn(a, p, self.n_averaged.to(a.device)))
        if not self.use_buffers:
            # buffers (BatchNorm statistics) follow the model's; update_bn recomputes them
            for b_avg, b in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b.detach().to(b_avg.device))
        self.n_averaged += 1


@oneflow.no_grad()
def update_bn(loader, model, device=None):
    """Recomputes the running statistics of the BatchNorm layers of ``model`` in one pass over
    ``loader`` (each batch, or its first element, is the input), as a cumulative average."""
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's rate to its ``swa_lr`` over ``anneal_epochs`` steps (cosine or
    linear) and keeps it there."""

    def __init__(
        self,
        optimizer,
        swa_lr,
        anneal_epochs=10,
        anneal_strategy="cos",
        last_epoch=-1,
        last_step=None,
    ):
        n = len(optimizer.param_groups)
        swa_lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * n
        if len(swa_lrs) != n:
            raise ValueError(
                f"swa_lr must have the same length as optimizer.param_groups: swa_lr has "
                f"{len(swa_lrs)}, optimizer.param_groups has {n}"
            )
        for lr, g in zip(swa_lrs, optimizer.param_groups):
            g["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch, last_step=last_step)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
            for g in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            g["swa_lr"] * alpha + lr * (1 - alpha)
            for g, lr in zip(self.optimizer.param_groups, prev_lrs)
        ]

    def state_dict(self):
        d = super().state_dict()
        d.pop("anneal_func", None)
        # PyTorch's key and position: first
        strategy = "cos" if self.anneal_func == self._cosine_anneal else "linear"
        return {"_anneal_strategy": strategy, **d}

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        strategy = state_dict.pop("_anneal_strategy", state_dict.pop("anneal_strategy", "cos"))
        super().load_state_dict(state_dict)
        self.anneal_func = self._cosine_anneal if strategy == "cos" else self._linear_anneal
