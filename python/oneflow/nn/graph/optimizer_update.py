"""Graph-mode updates of the optimizers an nn.Graph trains with (`Graph.add_optimizer`).

A compiled graph replays recorded kernels, and every Python number an op was called with is
baked into the recording. So the numbers that change from step to step (the learning rate, the
bias corrections of Adam, SGD's first-step momentum rule) are computed here on the host before
each call and fed to the program as 0-d tensor inputs, one set per (param group, dtype, device,
step), and the traced update uses them only through tensor ops. On the CPU the update is the
fused kernel eager `step()` runs, reading its numbers from one float64 tensor ("fed": the
`_adam_update_fed_` / `_sgd_update_fed_` bindings); elsewhere it is composed of tensor ops.
The optimizer state is created eagerly before the first trace, under the keys eager `step()`
uses, so the recording captures it by reference and `optimizer.state_dict()` sees the values
the graph trains.

Hyper-parameters other than `lr` (betas, eps, weight_decay, momentum, dampening, nesterov,
amsgrad, maximize) are read when a plan is traced and stay constant in it: changing them on the
param group later does not change an already compiled graph. `lr` is read on every call, so
learning-rate schedulers work.

Supported: SGD, Adam, AdamW (fused on the CPU), RMSprop and Adagrad (composed). Anything else
raises NotImplementedError at add_optimizer.
"""

import math

import oneflow
import oneflow._oneflow_internal as _internal
from oneflow import one_embedding
from oneflow._oneflow_internal import _C, Tensor
from oneflow._oneflow_internal import _one_embedding as _one_embedding_store
from oneflow.optim.algorithms import SGD, Adagrad, Adam, AdamW, RMSprop, _rmsprop_denominator


class ScalarLayout:
    """The per-step numbers of one optimizer in one plan. `keys` is ordered as the 0-d tensors
    are fed; for each key: its dtype/device, the hyper-parameters traced as constants, the
    names of its numbers, and `members`, the parameters of the key the plan updates."""

    def __init__(self):
        self.keys = []
        self.info = {}
        self.param_key = {}
        self.members = {}
        self.params = {}

    def add(self, key, p, consts, names):
        if key not in self.info:
            self.keys.append(key)
            self.info[key] = (p.dtype, p.device, consts, names)
            self.members[key] = []
        self.param_key[id(p)] = key
        self.params.setdefault(key, p)

    def first_param(self, key):
        """The first parameter laid out under `key`."""
        return self.params[key]


class _Updater:
    """One registered optimizer: creates its state, lays out and computes its per-step numbers,
    and records its update inside a trace."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    # ---- subclass hooks ----

    def _constants(self, group):
        raise NotImplementedError

    def _names(self, consts, fused):
        raise NotImplementedError

    def _fusable(self, p, consts):
        """Whether p's update can be the fused CPU kernel fed with a float64 tensor."""
        return (
            p.device.type == "cpu"
            and p.dtype in (oneflow.float32, oneflow.float64)
            and p.is_contiguous()
            and not consts.get("maximize", False)
            and not consts.get("amsgrad", False)
        )

    def _create_state(self, p, st, consts):
        """Creates missing state tensors; returns True when it created any."""
        raise NotImplementedError

    def _key_extra(self, p):
        return ()

    def _values(self, consts, lr, rep, fused):
        raise NotImplementedError

    def _update(self, p, st, consts, s):
        raise NotImplementedError

    def _committed(self, p):
        pass

    def _forget(self, p):
        pass

    # ---- driver, called by Graph ----

    def _candidates(self):
        for gi, group in enumerate(self.optimizer.param_groups):
            for p in group["params"]:
                if p.requires_grad and "_one_embedding" not in p.__dict__:
                    yield gi, group, p

    def _embeddings(self):
        """The shadows of one_embedding tables: their update runs in the store, fed [lr] (Adam
        [lr, bias corrections]) as one float64 tensor per table."""
        for gi, group in enumerate(self.optimizer.param_groups):
            for p in group["params"]:
                if p.requires_grad and "_one_embedding" in p.__dict__:
                    yield gi, group, p

    def prepare(self):
        """Before a trace: creates the state of every trainable parameter that lacks it (the
        recording must find it existing). Returns the parameters whose state was created."""
        created = []
        for _, group, p in self._candidates():
            # state is a defaultdict: look up without inserting, as eager SGD without momentum
            # keeps no state at all.
            st = self.optimizer.state.get(p)
            fresh = st is None
            st = {} if fresh else st
            if self._create_state(p, st, self._constants(group)):
                created.append(p)
                if fresh:
                    self.optimizer.state[p] = st
        return created

    def layout(self):
        lay = ScalarLayout()
        for gi, group, p in self._candidates():
            consts = self._constants(group)
            fused = self._fusable(p, consts)
            key = (gi, p.dtype, str(p.device), fused) + self._key_extra(p)
            lay.add(key, p, consts, self._names(consts, fused))
        for gi, group, p in self._embeddings():
            kind, hyper = one_embedding.embedding_rule(self.optimizer, group)
            lay.add((gi, "one_embedding", id(p)), p, dict(hyper, kind=kind), ("fed",))
        return lay

    def scalar_tensors(self, lay, reps=None):
        """The 0-d tensors of this call, in layout order. `reps` maps a key to the parameter its
        numbers are computed from (default: the key's first updated member)."""
        out = []
        for key in lay.keys:
            dtype, device, consts, names = lay.info[key]
            if reps is not None:
                rep = reps.get(key)
            else:
                rep = lay.members[key][0] if lay.members[key] else None
            group = self.optimizer.param_groups[key[0]]
            if key[1] == "one_embedding":
                step = self.optimizer.state.get(lay.first_param(key), {}).get("step", 0)
                nums = one_embedding.embedding_numbers(consts["kind"], group, step + 1)
                out.append(_C._float64_tensor(nums))
                continue
            lr = group["lr"]
            values = self._values(consts, float(lr), rep, names == ("fed",))
            if names == ("fed",):
                out.append(_C._float64_tensor([float(v) for v in values]))
            else:
                # 16-bit parameters get float32 numbers: eager's Python numbers are applied in
                # float32 too (PyTorch's opmath), not rounded to the parameter's dtype first.
                if dtype in (oneflow.float16, oneflow.bfloat16):
                    dtype = oneflow.float32
                out.extend(oneflow.full((), v, dtype=dtype, device=device) for v in values)
        return out

    def hyper_signature(self):
        """The traced hyper-parameters of every group (all but lr): a plan fits only while
        they hold (a scheduler cycling momentum or betas makes a new trace)."""
        return tuple(
            (
                tuple(sorted(self._constants(g).items())),
                g.get("clip_grad_max_norm"),
                g.get("clip_grad_norm_type", 2.0),
            )
            for g in self.optimizer.param_groups
        )

    def consistent(self, lay):
        """Whether the parameters sharing a set of numbers in `lay` still agree on them (Adam's
        step counts drift apart when another graph or eager steps update only some of them)."""
        for key in lay.keys:
            members = lay.members[key]
            if len({self._key_extra(p) for p in members}) > 1:
                return False
        return True

    def state_tensors(self):
        """The optimizer's state tensors: variables of the traced program."""
        return [
            v for st in self.optimizer.state.values() for v in st.values() if isinstance(v, Tensor)
        ]

    def first_candidates(self, lay):
        reps = {}
        for _, _, p in self._candidates():
            reps.setdefault(lay.param_key[id(p)], p)
        return reps

    def trace_step(self, lay, tensors):
        """Inside a trace, under no_grad: the update of every parameter that has a gradient,
        with the per-step numbers read from `tensors` (as fed). Records the updated members."""
        # OneFlow's per-group clipping (clip_grad_max_norm) comes first: tensor ops only.
        self.optimizer.clip_grad()
        it = iter(tensors)
        by_key = {}
        for key in lay.keys:
            names = lay.info[key][3]
            by_key[key] = {n: next(it) for n in names}
        for _, _, p in self._candidates():
            if p.grad is None:
                continue
            key = lay.param_key[id(p)]
            consts = lay.info[key][2]
            st = self.optimizer.state.get(p, {})
            if p.is_global and not _internal._global_holds(p):
                pass  # a stage this process is not in: nothing to update here
            elif p.is_global:
                # elementwise on the parameter's layout: the update runs on this rank's shards
                # (its gradient and state have the parameter's layout)
                self._update(*_shards(p, st), consts, by_key[key])
            else:
                self._update(p, st, consts, by_key[key])
            lay.members[key].append(p)
        for _, _, p in self._embeddings():
            if p.grad is None:
                continue
            key = lay.param_key[id(p)]
            consts = dict(lay.info[key][2])
            kind = consts.pop("kind")
            emb = one_embedding._embedding_of(p)
            _one_embedding_store.update(p, by_key[key]["fed"], emb._handle, kind, consts)
            lay.members[key].append(p)

    def commit(self, lay):
        """After a call: advances the host-side counters of the updated parameters."""
        for key in lay.keys:
            for p in lay.members[key]:
                if key[1] == "one_embedding":
                    st = self.optimizer.state[p]
                    st["step"] = st.get("step", 0) + 1
                else:
                    self._committed(p)

    def discard(self, created, lay=None):
        """Drops state created for a trace that the trace did not update (eager `step()` has
        none for parameters without gradients) or for a trace that failed."""
        updated = set()
        if lay is not None:
            updated = {id(p) for key in lay.keys for p in lay.members[key]}
        for p in created:
            if id(p) not in updated:
                self.optimizer.state.pop(p, None)
                self._forget(p)

    def load_state_dict(self, state_dict):
        """optimizer.load_state_dict, keeping the state tensors compiled plans captured: their
        new values are copied in; state missing from `state_dict` restarts from zero."""
        opt = self.optimizer
        old = {p: dict(st) for p, st in opt.state.items()}
        version = getattr(opt, "_state_version", 0)
        opt.load_state_dict(state_dict)
        for p, prev in old.items():
            st = opt.state[p]
            for k, o in prev.items():
                if k == "step" or not isinstance(o, Tensor):
                    continue
                v = st.get(k)
                with oneflow.no_grad():
                    if isinstance(v, Tensor) and tuple(v.shape) == tuple(o.shape):
                        o.copy_(v)
                    else:
                        o.zero_()
                        self._restart(p, st)
                st[k] = o
        # The captured state tensors stay (their values were copied in): plans remain valid,
        # unless state was created that no plan has seen.
        if all(p in old for p in opt.state):
            opt._state_version = version

    def _restart(self, p, st):
        pass


class SGDUpdate(_Updater):
    """p -= lr * d, d = grad (+ wd * p); with momentum, buf = momentum * buf + coef * d, where
    the buffer starts at zero and coef is 1 on its first step (PyTorch's buf = d) and
    1 - dampening after."""

    def __init__(self, optimizer):
        super().__init__(optimizer)
        self._fresh = set()

    def _constants(self, g):
        return dict(
            momentum=g["momentum"],
            dampening=g["dampening"],
            weight_decay=g["weight_decay"],
            nesterov=g["nesterov"],
            maximize=g.get("maximize", False),
        )

    def _names(self, c, fused):
        if fused:
            return ("fed",)
        return ("lr", "buffer_coef") if c["momentum"] else ("lr",)

    def _create_state(self, p, st, c):
        if c["momentum"] and "momentum_buffer" not in st:
            st["momentum_buffer"] = oneflow.zeros_like(p)
            self._fresh.add(id(p))
            return True
        return False

    def _key_extra(self, p):
        return (id(p) in self._fresh,)

    def _values(self, c, lr, rep, fused):
        if not c["momentum"]:
            return (lr, 1.0) if fused else (lr,)
        first = rep is not None and id(rep) in self._fresh
        return (lr, 1.0 if first else 1.0 - c["dampening"])

    def _update(self, p, st, c, s):
        if "fed" in s:
            buf = st["momentum_buffer"] if c["momentum"] else None
            _C._sgd_update_fed_(
                p, p.grad, buf, s["fed"], c["momentum"], c["weight_decay"], c["nesterov"]
            )
            return
        d = -p.grad if c["maximize"] else p.grad
        if c["weight_decay"]:
            d = d + p * c["weight_decay"]
        if c["momentum"]:
            buf = st["momentum_buffer"]
            buf.mul_(c["momentum"]).add_(d * s["buffer_coef"])
            d = d + buf * c["momentum"] if c["nesterov"] else buf
        p.sub_(d * s["lr"])

    def _committed(self, p):
        self._fresh.discard(id(p))

    _forget = _committed

    def _restart(self, p, st):
        self._fresh.add(id(p))


def _shards(p, st):
    """A global parameter's shard (with its gradient's shard as .grad) and its state's shards."""
    local = p.to_local()
    local.grad = p.grad.to_global(sbp=p.sbp).to_local()
    return local, {
        k: v.to_local() if isinstance(v, Tensor) and v.is_global else v for k, v in st.items()
    }


def _peek_step(opt, p, step):
    """The host value of a step counter without advancing it; shares Optimizer._step_value's
    cache, so eager steps after graph steps (and the reverse) count on."""
    if not isinstance(step, Tensor):
        return float(step)
    counts = opt.__dict__.setdefault("_step_counts", {})
    known = counts.get(id(p))
    if known is not None and known[0] is step:
        return known[1]
    value = float(step.item())
    counts[id(p)] = (step, value)
    return value


class AdamUpdate(_Updater):
    """Adam / AdamW: m = lerp(m, g, 1 - b1), v = b2 v + (1 - b2) g^2 (amsgrad: running max),
    p -= step_size * m / (sqrt(v) / sqrt(1 - b2^t) + eps) with step_size = lr / (1 - b1^t);
    AdamW first scales p by 1 - lr * wd."""

    def __init__(self, optimizer):
        super().__init__(optimizer)
        self._decoupled = bool(getattr(optimizer, "_decoupled", False))

    def _constants(self, g):
        return dict(
            betas=tuple(g["betas"]),
            eps=g["eps"],
            weight_decay=g["weight_decay"],
            amsgrad=g["amsgrad"],
            maximize=g.get("maximize", False),
            do_bias_correction=g.get("do_bias_correction", True),
        )

    def _names(self, c, fused):
        if fused:
            return ("fed",)
        names = ("step_size", "bias_correction2_sqrt")
        return names + ("decay",) if self._decoupled and c["weight_decay"] else names

    def _create_state(self, p, st, c):
        created = not st
        if created:
            st["step"] = oneflow.tensor(0.0)
            st["exp_avg"] = oneflow.zeros_like(p)
            st["exp_avg_sq"] = oneflow.zeros_like(p)
        if c["amsgrad"] and "max_exp_avg_sq" not in st:
            st["max_exp_avg_sq"] = oneflow.zeros_like(p)
        return created

    def _step_of(self, p):
        st = self.optimizer.state.get(p)
        if not st or "step" not in st:
            return 0.0
        return _peek_step(self.optimizer, p, st["step"])

    def _key_extra(self, p):
        return (self._step_of(p),)

    def _values(self, c, lr, rep, fused):
        t = (self._step_of(rep) if rep is not None else 0.0) + 1
        b1, b2 = c["betas"]
        c1 = 1 - b1**t if c["do_bias_correction"] else 1.0
        c2 = 1 - b2**t if c["do_bias_correction"] else 1.0
        if fused:
            return (lr, c1, c2)
        values = (lr / c1, math.sqrt(c2))
        if self._decoupled and c["weight_decay"]:
            values += (1 - lr * c["weight_decay"],)
        return values

    def _update(self, p, st, c, s):
        b1, b2 = c["betas"]
        if "fed" in s:
            _C._adam_update_fed_(
                p,
                p.grad,
                st["exp_avg"],
                st["exp_avg_sq"],
                s["fed"],
                b1,
                b2,
                c["eps"],
                c["weight_decay"],
                self._decoupled,
            )
            return
        grad = -p.grad if c["maximize"] else p.grad
        if c["weight_decay"]:
            if self._decoupled:
                p.mul_(s["decay"])
            else:
                grad = grad + p * c["weight_decay"]
        m, v = st["exp_avg"], st["exp_avg_sq"]
        m.lerp_(grad, 1 - b1)
        v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        if c["amsgrad"]:
            st["max_exp_avg_sq"].copy_(oneflow.maximum(st["max_exp_avg_sq"], v))
            v = st["max_exp_avg_sq"]
        denom = (v.sqrt() / s["bias_correction2_sqrt"]).add_(c["eps"])
        p.sub_((m / denom).mul_(s["step_size"]))

    def _committed(self, p):
        st = self.optimizer.state[p]
        st["step"] += 1
        self.optimizer._step_value(p, st["step"])

    def _restart(self, p, st):
        if "step" not in st:
            st["step"] = oneflow.tensor(0.0)


class _ComposedUpdate(_Updater):
    """Updates composed of tensor ops on every device (no fused CPU kernel), with a Python
    step counter in the state as eager step() keeps it."""

    def _fusable(self, p, consts):
        return False

    def _step_of(self, p):
        st = self.optimizer.state.get(p)
        return int(st.get("step", 0)) if st else 0

    def _committed(self, p):
        self.optimizer.state[p]["step"] += 1

    def _restart(self, p, st):
        st.setdefault("step", 0)


class RMSpropUpdate(_ComposedUpdate):
    """sq = alpha sq + (1 - alpha) g^2; centered: ga = lerp(ga, g, 1 - alpha) and
    avg = sqrt(sq - ga^2) + eps, else sqrt(sq) + eps; with momentum buf = momentum buf + g / avg
    and p -= lr buf, else p -= lr g / avg. Only -lr is fed; the last step is an addcmul with it,
    whose rounding is that of eager's addcdiv with value=-lr."""

    def _constants(self, g):
        return dict(
            alpha=g["alpha"],
            eps=g["eps"],
            weight_decay=g["weight_decay"],
            momentum=g["momentum"],
            centered=g["centered"],
            maximize=g.get("maximize", False),
        )

    def _names(self, c, fused):
        return ("neg_lr",)

    def _create_state(self, p, st, c):
        created = not st
        if created:
            st["step"] = 0
            st["square_avg"] = oneflow.zeros_like(p)
        if c["momentum"] > 0 and "momentum_buffer" not in st:
            st["momentum_buffer"] = oneflow.zeros_like(p)
            created = True
        if c["centered"] and "grad_avg" not in st:
            st["grad_avg"] = oneflow.zeros_like(p)
            created = True
        return created

    def _values(self, c, lr, rep, fused):
        return (-lr,)

    def _update(self, p, st, c, s):
        grad = -p.grad if c["maximize"] else p.grad
        if c["weight_decay"]:
            grad = grad + p * c["weight_decay"]
        avg = _rmsprop_denominator(st, grad, c["alpha"], c["eps"], c["centered"])
        if c["momentum"] > 0:
            buf = st["momentum_buffer"]
            buf.mul_(c["momentum"]).addcdiv_(grad, avg)
            p.add_(buf * s["neg_lr"])
        else:
            p.addcmul_(grad / avg, s["neg_lr"])


class AdagradUpdate(_ComposedUpdate):
    """sum += g^2; p -= clr g / (sqrt(sum) + eps) with clr = lr / (1 + (t - 1) lr_decay) at
    step t, fed per step (parameters at different step counts get their own numbers)."""

    def _constants(self, g):
        return dict(
            lr_decay=g["lr_decay"],
            weight_decay=g["weight_decay"],
            eps=g["eps"],
            maximize=g.get("maximize", False),
        )

    def _names(self, c, fused):
        return ("neg_clr",)

    def _create_state(self, p, st, c):
        if st:
            return False
        st["step"] = 0
        st["sum"] = oneflow.full_like(p, self.optimizer.defaults["initial_accumulator_value"])
        return True

    def _key_extra(self, p):
        return (self._step_of(p),)

    def _values(self, c, lr, rep, fused):
        t = (self._step_of(rep) if rep is not None else 0) + 1
        return (-lr / (1 + (t - 1) * c["lr_decay"]),)

    def _update(self, p, st, c, s):
        grad = -p.grad if c["maximize"] else p.grad
        if c["weight_decay"]:
            grad = grad + p * c["weight_decay"]
        st["sum"].addcmul_(grad, grad, value=1)
        p.addcmul_(grad / st["sum"].sqrt().add_(c["eps"]), s["neg_clr"])


_UPDATERS = {
    SGD: SGDUpdate,
    Adam: AdamUpdate,
    AdamW: AdamUpdate,
    RMSprop: RMSpropUpdate,
    Adagrad: AdagradUpdate,
}


def make_updater(optimizer):
    cls = _UPDATERS.get(type(optimizer))
    if cls is None:
        raise NotImplementedError(
            f"nn.Graph.add_optimizer: {type(optimizer).__name__} has no graph-mode update yet "
            f"(supported: {', '.join(sorted(c.__name__ for c in _UPDATERS))})"
        )
    return cls(optimizer)
