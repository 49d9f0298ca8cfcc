"""SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, LAMB and LBFGS with PyTorch's update rules and
defaults. Updates run in place on the parameters under no_grad.

Each also takes OneFlow's ``contiguous_params`` keyword. In OneFlow, True packs the parameters
(and gradients) of the optimizer into one contiguous buffer, a memory-layout optimisation
that leaves the updates unchanged; here it is accepted and changes nothing (False or True).
``fused`` is accepted by all of them; it selects an implementation in PyTorch and OneFlow and
the updates are the same whatever its value (SGD, Adam and AdamW on the CPU use fused kernels
where they can regardless)."""

import math

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.optim._line_search import strong_wolfe
from oneflow.optim.optimizer import Optimizer, required


def _closure_loss(closure):
    if closure is None:
        return None
    with oneflow.enable_grad():
        return closure()


def _fusable(p, *others):
    """The fused update kernels take contiguous CPU float tensors of one dtype and shape."""
    if p.is_cuda or p.dtype not in (oneflow.float32, oneflow.float64) or not p.is_contiguous():
        return False
    return all(
        t.dtype == p.dtype and tuple(t.shape) == tuple(p.shape) and not t.is_cuda for t in others
    )


def _check(name, value, low=0.0):
    if value < low:
        raise ValueError(f"Invalid {name}: {value}")


class SGD(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
        contiguous_params=False,
    ):
        if lr is not required:
            _check("learning rate", lr)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
                # PyTorch's implementation switches, kept as given (one implementation here)
                foreach=foreach,
                differentiable=differentiable,
                fused=fused,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            for p in self._params_with_grad(g):
                if not g["maximize"] and _fusable(p, p.grad):
                    st = self.state[p]
                    buf = st.get("momentum_buffer")
                    first = g["momentum"] != 0 and buf is None
                    if first:
                        buf = st["momentum_buffer"] = oneflow.empty_like(p)
                    _C._sgd_update_(
                        p,
                        p.grad,
                        buf if g["momentum"] else None,
                        g["lr"],
                        g["momentum"],
                        g["dampening"],
                        g["weight_decay"],
                        g["nesterov"],
                        first,
                    )
                    continue
                d = p.grad if not g["maximize"] else -p.grad
                if g["weight_decay"]:
                    d = d + p * g["weight_decay"]
                if g["momentum"]:
                    st = self.state[p]
                    buf = st.get("momentum_buffer")
                    if buf is None:
                        buf = st["momentum_buffer"] = d.clone()
                    else:
                        buf.mul_(g["momentum"]).add_(d, alpha=1 - g["dampening"])
                    d = d + buf * g["momentum"] if g["nesterov"] else buf
                p.add_(d, alpha=-g["lr"])
        return loss


class Adam(Optimizer):
    _decoupled = False

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
        do_bias_correction=True,
        contiguous_params=False,
    ):
        _check("learning rate", lr)
        if decoupled_weight_decay:  # Adam(decoupled_weight_decay=True) is AdamW, as PyTorch
            self._decoupled = True
        _check("epsilon value", eps)
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Invalid beta parameters: {betas}")
        _check("weight_decay value", weight_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=tuple(betas),
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
                do_bias_correction=do_bias_correction,
                foreach=foreach,
                capturable=capturable,
                differentiable=differentiable,
                fused=fused,
                decoupled_weight_decay=self._decoupled,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            b1, b2 = g["betas"]
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                st = self.state[p]
                if not st:
                    st["step"] = oneflow.tensor(0.0)
                    st["exp_avg"] = oneflow.zeros_like(p)
                    st["exp_avg_sq"] = oneflow.zeros_like(p)
                    if g["amsgrad"]:
                        st["max_exp_avg_sq"] = oneflow.zeros_like(p)
                st["step"] += 1
                step = self._step_value(p, st["step"])
                c1 = 1 - b1**step if g["do_bias_correction"] else 1.0
                c2 = 1 - b2**step if g["do_bias_correction"] else 1.0
                if (
                    not g["amsgrad"]
                    and not g["maximize"]
                    and _fusable(p, p.grad, st["exp_avg"], st["exp_avg_sq"])
                ):
                    _C._adam_update_(
                        p,
                        p.grad,
                        st["exp_avg"],
                        st["exp_avg_sq"],
                        g["lr"],
                        b1,
                        b2,
                        g["eps"],
                        g["weight_decay"],
                        self._decoupled,
                        c1,
                        c2,
                    )
                    continue
                if g["weight_decay"]:
                    if self._decoupled:
                        p.mul_(1 - g["lr"] * g["weight_decay"])
                    else:
                        grad = grad + p * g["weight_decay"]
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m.lerp_(grad, 1 - b1)
                v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
                c1 = 1 - b1**step if g["do_bias_correction"] else 1.0
                c2 = 1 - b2**step if g["do_bias_correction"] else 1.0
                if g["amsgrad"]:
                    st["max_exp_avg_sq"].copy_(oneflow.maximum(st["max_exp_avg_sq"], v))
                    v = st["max_exp_avg_sq"]
                denom = (v.sqrt() / math.sqrt(c2)).add_(g["eps"])
                p.addcdiv_(m, denom, value=-g["lr"] / c1)
        return loss


class AdamW(Adam):
    _decoupled = True

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
        do_bias_correction=True,
        contiguous_params=False,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            do_bias_correction=do_bias_correction,
            contiguous_params=contiguous_params,
        )


def _rmsprop_denominator(st, grad, alpha, eps, centered):
    """RMSprop's running averages updated in place (square_avg, and grad_avg when centered)
    and the step's denominator sqrt(square_avg (- grad_avg^2)) + eps; nn.Graph's update
    (nn/graph/optimizer_update.py) shares it."""
    sq = st["square_avg"]
    sq.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
    if centered:
        ga = st["grad_avg"]
        ga.lerp_(grad, 1 - alpha)
        return (sq - ga * ga).sqrt_().add_(eps)
    return sq.sqrt().add_(eps)


class RMSprop(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
        *,
        contiguous_params=False,
        fused=None,
    ):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("momentum value", momentum)
        _check("alpha value", alpha)
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                alpha=alpha,
                eps=eps,
                centered=centered,
                weight_decay=weight_decay,
                # PyTorch's implementation switches, kept as given (one implementation here)
                capturable=capturable,
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                st = self.state[p]
                if not st:
                    # a float32 scalar tensor, as PyTorch's (state dicts have its contents)
                    st["step"] = oneflow.tensor(0.0)
                    st["square_avg"] = oneflow.zeros_like(p)
                    if g["momentum"] > 0:
                        st["momentum_buffer"] = oneflow.zeros_like(p)
                    if g["centered"]:
                        st["grad_avg"] = oneflow.zeros_like(p)
                st["step"] += 1
                if g["weight_decay"]:
                    grad = grad + p * g["weight_decay"]
                avg = _rmsprop_denominator(st, grad, g["alpha"], g["eps"], g["centered"])
                if g["momentum"] > 0:
                    buf = st["momentum_buffer"]
                    buf.mul_(g["momentum"]).addcdiv_(grad, avg)
                    p.add_(buf, alpha=-g["lr"])
                else:
                    p.addcdiv_(grad, avg, value=-g["lr"])
        return loss


class Adagrad(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
        contiguous_params=False,
    ):
        _check("learning rate", lr)
        _check("lr_decay value", lr_decay)
        _check("weight_decay value", weight_decay)
        _check("initial_accumulator_value value", initial_accumulator_value)
        _check("epsilon value", eps)
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                eps=eps,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                # PyTorch's implementation switches, kept as given (one implementation here)
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                fused=fused,
            ),
        )
        for g in self.param_groups:
            for p in g["params"]:
                self._init_state(p)

    def _init_state(self, p):
        # As PyTorch: the constructor's initial_accumulator_value, also for groups added later
        # (whose state is created at their first step).
        self.state[p]["step"] = 0
        self.state[p]["sum"] = oneflow.full_like(p, self.defaults["initial_accumulator_value"])

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                if not self.state[p]:
                    self._init_state(p)
                st = self.state[p]
                st["step"] += 1
                if g["weight_decay"]:
                    grad = grad + p * g["weight_decay"]
                clr = g["lr"] / (1 + (st["step"] - 1) * g["lr_decay"])
                st["sum"].addcmul_(grad, grad, value=1)
                p.addcdiv_(grad, st["sum"].sqrt().add_(g["eps"]), value=-clr)
        return loss


class Adadelta(Optimizer):
    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
        contiguous_params=False,
        fused=None,
    ):
        _check("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check("epsilon value", eps)
        super().__init__(
            params,
            dict(
                lr=lr,
                rho=rho,
                eps=eps,
                weight_decay=weight_decay,
                maximize=maximize,
                # PyTorch's implementation switches, kept as given (one implementation here)
                capturable=capturable,
                foreach=foreach,
                differentiable=differentiable,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            for p in self._params_with_grad(g):
                grad = p.grad if not g["maximize"] else -p.grad
                st = self.state[p]
                if not st:
                    st["step"] = oneflow.tensor(0.0)  # a float32 scalar tensor, as PyTorch's
                    st["square_avg"] = oneflow.zeros_like(p)
                    st["acc_delta"] = oneflow.zeros_like(p)
                st["step"] += 1
                if g["weight_decay"]:
                    grad = grad + p * g["weight_decay"]
                sq, acc = st["square_avg"], st["acc_delta"]
                sq.mul_(g["rho"]).addcmul_(grad, grad, value=1 - g["rho"])
                delta = (acc + g["eps"]).sqrt() / (sq + g["eps"]).sqrt() * grad
                acc.mul_(g["rho"]).addcmul_(delta, delta, value=1 - g["rho"])
                p.add_(delta, alpha=-g["lr"])
        return loss


class LAMB(Optimizer):
    """Layer-wise adaptive moments (You et al.): Adam's direction scaled per parameter by
    ||p|| / ||update||."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-6,
        weight_decay=0,
        adam_w_mode=True,
        do_bias_correction=True,
        amsgrad=False,
        contiguous_params=False,
        *,
        fused=None,
    ):
        if amsgrad:
            raise RuntimeError("LAMB does not support AMSGrad variant.")
        _check("learning rate", lr)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=tuple(betas),
                eps=eps,
                weight_decay=weight_decay,
                adam_w_mode=adam_w_mode,
                do_bias_correction=do_bias_correction,
            ),
        )

    @oneflow.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for g in self.param_groups:
            b1, b2 = g["betas"]
            for p in self._params_with_grad(g):
                grad = p.grad
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = oneflow.zeros_like(p)
                    st["exp_avg_sq"] = oneflow.zeros_like(p)
                st["step"] += 1
                if g["weight_decay"] and not g["adam_w_mode"]:
                    grad = grad + p * g["weight_decay"]
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m.mul_(b1).add_(grad, alpha=1 - b1)
                v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
                c1 = 1 - b1 ** st["step"] if g["do_bias_correction"] else 1.0
                c2 = 1 - b2 ** st["step"] if g["do_bias_correction"] else 1.0
                update = (m / c1) / ((v / c2).sqrt() + g["eps"])
                if g["weight_decay"] and g["adam_w_mode"]:
                    update = update + p * g["weight_decay"]
                w_norm = float(p.norm().item())
                u_norm = float(update.norm().item())
                trust = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
                p.add_(update, alpha=-g["lr"] * trust)
        return loss


class _LineSearchError(ValueError, RuntimeError):
    """An unsupported ``line_search_fn``. PyTorch raises RuntimeError for it (from ``step``);
    this error is both a ValueError and a RuntimeError."""


def _check_line_search(name):
    if name is not None and name != "strong_wolfe":
        raise _LineSearchError("only 'strong_wolfe' is supported")


class LBFGS(Optimizer):
    """Limited-memory BFGS with PyTorch's update rule, either with a fixed step (``lr``) or with
    a strong Wolfe line search (``line_search_fn="strong_wolfe"``).

    Scalars computed from the flat gradient (curvatures, step coefficients, slopes) are 0-d
    tensors of the parameters' dtype, so they carry the parameters' precision.
    """

    def __init__(
        self,
        params,
        lr=1,
        max_iter=20,
        max_eval=None,
        tolerance_grad=1e-7,
        tolerance_change=1e-9,
        history_size=100,
        line_search_fn=None,
        contiguous_params=False,
        *,
        fused=None,
    ):
        if isinstance(lr, oneflow.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check("learning rate", lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        _check_line_search(line_search_fn)
        super().__init__(
            params,
            dict(
                lr=lr,
                max_iter=max_iter,
                max_eval=max_eval,
                tolerance_grad=tolerance_grad,
                tolerance_change=tolerance_change,
                history_size=history_size,
                line_search_fn=line_search_fn,
            ),
        )
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        parts = [
            (p.grad if p.grad is not None else oneflow.zeros_like(p)).reshape(-1)
            for p in self._params
        ]
        return oneflow.cat(parts, 0)

    def _add(self, step, direction):
        step = float(step)
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset : offset + n].reshape(p.shape), alpha=step)
            offset += n

    def _evaluate_at(self, closure, x, step, direction):
        """Loss and flat gradient at ``x + step * direction``; the parameters return to ``x``."""
        self._add(step, direction)
        loss = float(_closure_loss(closure))
        flat = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat

    @oneflow.no_grad()
    def step(self, closure):
        g = self.param_groups[0]
        lr, max_iter, max_eval = g["lr"], g["max_iter"], g["max_eval"]
        if isinstance(lr, oneflow.Tensor):
            lr = lr.item()
        tol_grad, tol_change, history = (
            g["tolerance_grad"],
            g["tolerance_change"],
            g["history_size"],
        )
        line_search = g["line_search_fn"]
        _check_line_search(line_search)
        st = self.state[self._params[0]]
        st.setdefault("func_evals", 0)
        st.setdefault("n_iter", 0)
        orig_loss = _closure_loss(closure)
        loss = float(orig_loss)
        evals = 1
        st["func_evals"] += 1
        flat = self._flat_grad()
        if flat.abs().max() <= tol_grad:
            return orig_loss
        d, t = st.get("d"), st.get("t")
        old_dirs, old_stps = st.get("old_dirs"), st.get("old_stps")
        ro, H_diag = st.get("ro"), st.get("H_diag")
        prev_flat, prev_loss = st.get("prev_flat_grad"), st.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            st["n_iter"] += 1
            if st["n_iter"] == 1:
                d = flat.neg()
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                # Update the curvature pairs (y, s), then apply the two-loop recursion.
                y = flat - prev_flat
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if "al" not in st:
                    st["al"] = [None] * history
                al = st["al"]
                q = flat.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-float(al[i]))
                d = oneflow.mul(q, H_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(d) * ro[i]
                    d.add_(old_stps[i], alpha=float(al[i] - be_i))
            prev_flat = flat.clone()
            prev_loss = loss
            t = min(1.0, 1.0 / flat.abs().sum()) * lr if st["n_iter"] == 1 else lr
            gtd = flat.dot(d)
            if gtd > -tol_change:
                break
            if line_search is not None:
                x = [p.clone() for p in self._params]
                loss, flat, t, ls_evals = strong_wolfe(
                    lambda step, x=x, d=d: self._evaluate_at(closure, x, step, d),
                    t,
                    d,
                    loss,
                    flat,
                    gtd,
                    max_ls=max_eval - evals,
                )
                self._add(t, d)
                opt_cond = flat.abs().max() <= tol_grad
            else:
                self._add(t, d)
                ls_evals = 0
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(_closure_loss(closure))
                    flat = self._flat_grad()
                    opt_cond = flat.abs().max() <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            st["func_evals"] += ls_evals
            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tol_change or abs(loss - prev_loss) < tol_change:
                break
        st.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=H_diag,
            prev_flat_grad=prev_flat,
            prev_loss=prev_loss,
        )
        return orig_loss
