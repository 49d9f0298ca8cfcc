"""NAdam, RAdam, Adamax, ASGD, Rprop and SparseAdam with PyTorch's update rules, defaults,
argument checks and per-parameter state names. Updates run in place on the parameters under
no_grad; the common optimizers live in algorithms.py."""

import math

import oneflow
from oneflow._oneflow_internal import Tensor
from oneflow.optim.algorithms import _closure_loss
from oneflow.optim.optimizer import Optimizer


def _to_scalar(value):
    return float(value.item()) if isinstance(value, Tensor) else value


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    # `not 0 <= x` rather than `x < 0`, so that NaN is rejected too (as PyTorch).
    if not 0.0 <= _to_scalar(lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_nonnegative(name, value):
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")


def _check_betas(betas):
    for i in range(2):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def _new_step():
    # The step counter is a scalar tensor of the default dtype, as PyTorch's (not the
    # parameter's dtype), so that state dicts have the same contents.
    return oneflow.tensor(0.0)


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat), with PyTorch's momentum-decay schedule
    mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _check_lr(lr)
        _check_nonnegative("epsilon", eps)
        _check_betas(betas)
        _check_nonnegative("weight_decay", weight_decay)
        _check_nonnegative("momentum_decay", momentum_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                momentum_decay=momentum_decay,
                decoupled_weight_decay=decoupled_weight_decay,
                maximize=maximize,
                # PyTorch's implementation switches, kept as given (one implementation here)
                foreach=foreach,
                capturable=capturable,
                differentiable=differentiable,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            b1, b2 = g["betas"]
            lr, wd, psi = _to_scalar(g["lr"]), g["weight_decay"], g["momentum_decay"]
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                st = self.state[p]
                if not st:
                    st["step"] = _new_step()
                    # A scalar tensor like PyTorch's: the running product is rounded to its
                    # dtype at every step, which the updates then see.
                    st["mu_product"] = oneflow.tensor(1.0)
                    st["exp_avg"] = oneflow.zeros_like(p)
                    st["exp_avg_sq"] = oneflow.zeros_like(p)
                st["step"] += 1
                step = self._step_value(p, st["step"])
                c2 = 1 - b2**step
                if wd != 0:
                    if g["decoupled_weight_decay"]:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                mu = b1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
                mu_next = b1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
                st["mu_product"] *= mu
                mu_product = float(st["mu_product"].item())
                mu_product_next = mu_product * mu_next
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m.lerp_(grad, 1 - b1)
                v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
                denom = v.div(c2).sqrt().add_(g["eps"])
                p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
                p.addcdiv_(m, denom, value=-lr * mu_next / (1.0 - mu_product_next))
        return loss


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.): plain momentum SGD until the variance estimate's
    approximated SMA length exceeds 5, then Adam scaled by the rectification term."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _check_lr(lr)
        _check_nonnegative("epsilon", eps)
        _check_betas(betas)
        _check_nonnegative("weight_decay", weight_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                maximize=maximize,
                # PyTorch's implementation switches, kept as given (one implementation here)
                foreach=foreach,
                capturable=capturable,
                decoupled_weight_decay=decoupled_weight_decay,
                differentiable=differentiable,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            b1, b2 = g["betas"]
            lr, wd = _to_scalar(g["lr"]), g["weight_decay"]
            rho_inf = 2 / (1 - b2) - 1
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                st = self.state[p]
                if not st:
                    st["step"] = _new_step()
                    st["exp_avg"] = oneflow.zeros_like(p)
                    st["exp_avg_sq"] = oneflow.zeros_like(p)
                st["step"] += 1
                step = self._step_value(p, st["step"])
                if wd != 0:
                    if g["decoupled_weight_decay"]:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m.lerp_(grad, 1 - b1)
                v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
                c1 = 1 - b1**step
                c2 = 1 - b2**step
                m_hat = m / c1
                rho_t = rho_inf - 2 * step * (b2**step) / c2
                if rho_t > 5.0:
                    rect = (
                        (rho_t - 4)
                        * (rho_t - 2)
                        * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                    ) ** 0.5
                    adaptive_lr = (c2**0.5) / v.sqrt().add_(g["eps"])
                    p.add_(m_hat * lr * adaptive_lr * rect, alpha=-1.0)
                else:
                    p.add_(m_hat * lr, alpha=-1.0)
        return loss


class Adamax(Optimizer):
    """Adam with the infinity norm (Kingma & Ba, section 7.1): the second moment is an
    exponentially decayed running maximum of |grad|."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_lr(lr)
        _check_nonnegative("epsilon", eps)
        _check_betas(betas)
        _check_nonnegative("weight_decay", weight_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                # PyTorch's implementation switches, kept as given (one implementation here)
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                capturable=capturable,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            b1, b2 = g["betas"]
            lr, wd = _to_scalar(g["lr"]), g["weight_decay"]
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                st = self.state[p]
                if not st:
                    st["step"] = _new_step()
                    st["exp_avg"] = oneflow.zeros_like(p)
                    st["exp_inf"] = oneflow.zeros_like(p)
                st["step"] += 1
                step = self._step_value(p, st["step"])
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                m, u = st["exp_avg"], st["exp_inf"]
                m.lerp_(grad, 1 - b1)
                u.copy_(oneflow.maximum(u.mul_(b2), grad.abs().add_(g["eps"])))
                p.addcdiv_(m, u, value=-lr / (1 - b1**step))
        return loss


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern) as PyTorch's: the second moment of a matrix kept as its row
    and column means (factored over the last two dims), the step relative to the parameter's
    RMS (at least eps[1]) times min(lr, 1/sqrt(t)), updates clipped to RMS d."""

    def __init__(
        self,
        params,
        lr=1e-2,
        beta2_decay=-0.8,
        eps=(None, 1e-3),
        d=1.0,
        weight_decay=0.0,
        *,
        foreach=None,
        maximize=False,
    ):
        _check_lr(lr)
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        _check_nonnegative("weight_decay", weight_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                beta2_decay=beta2_decay,
                eps=eps,
                d=d,
                weight_decay=weight_decay,
                maximize=maximize,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            lr, wd, d = _to_scalar(g["lr"]), g["weight_decay"], g["d"]
            eps1, eps2 = g["eps"]
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                e1 = eps1 if eps1 is not None else oneflow.finfo(p.dtype).eps
                st = self.state[p]
                if not st:
                    st["step"] = _new_step()
                    if grad.ndim > 1:
                        row = list(grad.shape)
                        row[-1] = 1
                        col = list(grad.shape)
                        col[-2] = 1
                        st["row_var"] = oneflow.zeros(*row, dtype=p.dtype, device=p.device)
                        st["col_var"] = oneflow.zeros(*col, dtype=p.dtype, device=p.device)
                    else:
                        st["variance"] = oneflow.zeros_like(p)
                st["step"] += 1
                t = float(self._step_value(p, st["step"]))
                one_minus_beta2 = t ** g["beta2_decay"]
                rho = min(lr, 1.0 / t**0.5)
                rms = (
                    float(oneflow.linalg.vector_norm(p)) / (p.numel() ** 0.5) if p.numel() else 0.0
                )
                alpha = max(eps2, rms) * rho
                if wd != 0:
                    p.mul_(1 - lr * wd)
                if grad.ndim > 1:
                    row_mean = grad.square().mean(dim=-1, keepdim=True)
                    col_mean = grad.square().mean(dim=-2, keepdim=True)
                    st["row_var"].lerp_(row_mean, one_minus_beta2)
                    st["col_var"].lerp_(col_mean, one_minus_beta2)
                    var = st["row_var"] @ st["col_var"]
                    var = var / st["row_var"].mean(dim=-2, keepdim=True).clamp(min=e1)
                else:
                    st["variance"].lerp_(grad.square(), one_minus_beta2)
                    var = st["variance"].clone()
                update = var.clamp(min=e1 * e1).rsqrt() * grad
                norm = float(oneflow.linalg.vector_norm(update))
                denom = max(1.0, norm / ((update.numel() ** 0.5) * d)) if update.numel() else 1.0
                p.add_(update, alpha=-alpha / denom)
        return loss


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky): SGD with a decaying step size eta, and in state "ax"
    the running average of the iterates from step t0 on."""

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        foreach=None,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_lr(lr)
        _check_nonnegative("weight_decay", weight_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                lambd=lambd,
                alpha=alpha,
                t0=t0,
                weight_decay=weight_decay,
                # PyTorch's implementation switches, kept as given (one implementation here)
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                capturable=capturable,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            lr, lambd, wd = _to_scalar(g["lr"]), g["lambd"], g["weight_decay"]
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                st = self.state[p]
                if not st:
                    # eta and mu are scalar tensors of the default dtype, as PyTorch's: their
                    # rounding shows in the updates.
                    st["step"] = _new_step()
                    st["eta"] = oneflow.tensor(float(lr))
                    st["mu"] = oneflow.tensor(1.0)
                    st["ax"] = oneflow.zeros_like(p)
                st["step"] += 1
                step = self._step_value(p, st["step"])
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                eta = float(st["eta"].item())
                p.mul_(1 - lambd * eta)
                p.add_(grad, alpha=-eta)
                mu = float(st["mu"].item())
                if mu != 1:
                    st["ax"].add_(p.sub(st["ax"]).mul_(mu))
                else:
                    st["ax"].copy_(p)
                st["eta"].copy_(oneflow.tensor(lr / ((1 + lambd * lr * step) ** g["alpha"])))
                st["mu"].copy_(oneflow.tensor(1 / max(1, step - g["t0"])))
        return loss


class Rprop(Optimizer):
    """Resilient backpropagation: a per-element step size grown by etaplus while the gradient
    keeps its sign and shrunk by etaminus when it flips; only the gradient's sign is used."""

    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(
            params,
            dict(
                lr=lr,
                etas=etas,
                step_sizes=step_sizes,
                # PyTorch's implementation switches, kept as given (one implementation here)
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                capturable=capturable,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            etaminus, etaplus = g["etas"]
            size_min, size_max = g["step_sizes"]
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                st = self.state[p]
                if not st:
                    st["step"] = _new_step()
                    st["prev"] = oneflow.zeros_like(p)
                    st["step_size"] = oneflow.full_like(grad, _to_scalar(g["lr"]))
                st["step"] += 1
                sign = grad.mul(st["prev"]).sign()
                flipped = sign.lt(0)
                # Same sign: grow; flipped: shrink; a zero product keeps the size. A NaN product
                # stays NaN, as in PyTorch's masked assignments.
                factor = oneflow.where(
                    sign.gt(0),
                    etaplus,
                    oneflow.where(flipped, etaminus, oneflow.where(sign.eq(0), 1.0, sign)),
                )
                st["step_size"].mul_(factor).clamp_(size_min, size_max)
                # After a sign flip the step is skipped and the gradient forgotten, so the next
                # step neither grows nor shrinks.
                grad = oneflow.where(flipped, 0.0, grad)
                p.addcmul_(grad.sign(), st["step_size"], value=-1)
                st["prev"].copy_(grad)
        return loss


class SparseAdam(Optimizer):
    """Lazy Adam for embedding tables: each step updates the moments and the parameter only in
    the rows its gradient touches, with the step count of the whole parameter (PyTorch's
    SparseAdam). Gradients are dense here (`nn.Embedding(sparse=True)` gives a dense gradient):
    the rows touched are those with a nonzero gradient, which are the rows a sparse gradient
    would hold (a looked-up row whose gradient is exactly zero is left alone)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_lr(lr)
        _check_nonnegative("epsilon", eps)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            b1, b2 = g["betas"]
            lr, eps = _to_scalar(g["lr"]), g["eps"]
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                st = self.state[p]
                if not st:
                    st["step"] = _new_step()
                    st["exp_avg"] = oneflow.zeros_like(p)
                    st["exp_avg_sq"] = oneflow.zeros_like(p)
                st["step"] += 1
                step = self._step_value(p, st["step"])
                rows = grad.reshape(grad.shape[0], -1) if grad.ndim > 1 else grad.reshape(-1, 1)
                touched = oneflow.nonzero(rows.ne(0).any(1)).reshape(-1)
                if touched.numel() == 0:
                    continue
                values = grad.index_select(0, touched)
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m_rows = m.index_select(0, touched)
                v_rows = v.index_select(0, touched)
                m_rows = m_rows.add((values - m_rows) * (1 - b1))
                v_rows = v_rows.add((values * values - v_rows) * (1 - b2))
                m.index_copy_(0, touched, m_rows)
                v.index_copy_(0, touched, v_rows)
                step_size = lr * math.sqrt(1 - b2**step) / (1 - b1**step)
                update = m_rows / (v_rows.sqrt() + eps) * -step_size
                p.index_add_(0, touched, update)
        return loss
