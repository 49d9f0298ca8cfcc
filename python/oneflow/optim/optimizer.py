"""Optimizer base: parameter groups with per-group hyper-parameters, per-parameter state,
state_dict/load_state_dict (PyTorch's layout: state keyed by parameter index), zero_grad,
OneFlow's per-group gradient clipping (clip_grad)."""

from collections import defaultdict
from copy import deepcopy

import oneflow
from oneflow import one_embedding as _one_embedding
from oneflow._oneflow_internal import Tensor


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


# Hooks run around every optimizer's step (register_optimizer_step_pre_hook / _post_hook).
_global_step_pre_hooks, _global_step_post_hooks = {}, {}


def _add(hooks, hook):
    from oneflow.utils.hooks import RemovableHandle

    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) before every optimizer's step; it may return new
    (args, kwargs)."""
    return _add(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs) after every optimizer's step."""
    return _add(_global_step_post_hooks, hook)


def _with_step_hooks(step):
    import functools

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        args = (self,) + args  # the hooks see the optimizer among the arguments, as PyTorch's
        own_pre = self.__dict__.get("_step_pre_hooks", {})
        for hook in list(_global_step_pre_hooks.values()) + list(own_pre.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but "
                        f"got {result}."
                    )
                args, kwargs = result
        self.__dict__["_opt_called"] = True  # for lr_scheduler's order check
        out = step(*args, **kwargs)
        own_post = self.__dict__.get("_step_post_hooks", {})
        for hook in list(own_post.values()) + list(_global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper._with_step_hooks = True
    return wrapper


def _state_value(p, val):
    """A loaded state entry on p's device, floating ones in p's dtype; for a complex parameter,
    whose state is kept on its real view, a complex entry (PyTorch's) becomes its pairs."""
    if not isinstance(val, Tensor):
        return val
    if p.is_global:  # the parameter's placement, and its layout for entries of its shape
        sbp = p.sbp if tuple(val.shape) == tuple(p.shape) else oneflow.sbp.broadcast
        if not val.is_global:
            val = val.to_global(placement=p.placement, sbp=oneflow.sbp.broadcast)
        val = val.to_global(placement=p.placement, sbp=sbp)
        return val.to(dtype=p.dtype) if val.dtype.is_floating_point else val
    if val.is_global:
        from oneflow.framework.global_tensor import whole_value

        val = whole_value(val)
    if p.dtype.is_complex:
        if val.dtype.is_complex:
            return oneflow.view_as_real(val.to(device=p.device, dtype=p.dtype)).clone()
        real = oneflow.view_as_real(p.detach()).dtype
        return val.to(device=p.device, dtype=real if val.dtype.is_floating_point else None)
    return val.to(device=p.device, dtype=p.dtype if val.dtype.is_floating_point else None)


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_with_step_hooks", False):
            cls.step = _with_step_hooks(step)

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) before this optimizer's step; it may return new
        (args, kwargs)."""
        return _add(self.__dict__.setdefault("_step_pre_hooks", {}), hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) after this optimizer's step."""
        return _add(self.__dict__.setdefault("_step_post_hooks", {}), hook)

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__name__}"
            )
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Adds a group: its "params" are tensors, or (name, tensor) pairs as
        `module.named_parameters()` gives (PyTorch 2.x), whose names go to the group's
        "param_names" (every group of an optimizer named, or none)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list "
                "instead."
            )
        params = [params] if isinstance(params, Tensor) else list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            group["param_names"] = names
        for g in self.param_groups:
            if ("param_names" in group) != ("param_names" in g):
                which = "with names" if "param_names" in group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {k}"
                )
            group.setdefault(k, v)
        if any("_one_embedding" in p.__dict__ for p in group["params"]):
            _one_embedding.embedding_rule(self, group)  # NotImplementedError for the others
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if "_one_embedding" in p.__dict__:
                    _one_embedding._clear_pending(p)
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    # In place, as PyTorch: the gradient tensor (and its memory) stays.
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def _step_value(self, p, step):
        """The value of a parameter's step counter after this step's increment, without reading
        a step tensor back (a read waits for every queued op): the count is kept on the host
        next to the tensor and read from it only when the tensor is a new one (a fresh state or
        a loaded state dict)."""
        if not isinstance(step, oneflow.Tensor):
            return float(step)
        counts = self.__dict__.setdefault("_step_counts", {})
        known = counts.get(id(p))
        value = known[1] + 1 if known is not None and known[0] is step else float(step.item())
        counts[id(p)] = (step, value)
        return value

    def clip_grad(self, error_if_nonfinite=False):
        """OneFlow's per-group gradient clipping: the gradients of each param group that has a
        `clip_grad_max_norm` are scaled together so that their joint norm of order
        `clip_grad_norm_type` (default 2) is at most that value (see
        `oneflow.nn.utils.clip_grad_norm_`). Eager training calls it before `step()`; an
        nn.Graph applies it before its update."""
        from oneflow.nn.utils import clip_grad_norm_

        for group in self.param_groups:
            if group.get("clip_grad_max_norm") is None:
                continue
            params = self._params_with_grad(group, step=False)
            if params:
                clip_grad_norm_(
                    params,
                    group["clip_grad_max_norm"],
                    group.get("clip_grad_norm_type", 2.0),
                    error_if_nonfinite,
                )

    def _params_with_grad(self, group, step=True):
        """The parameters a step updates. The shadows of one_embedding tables are left out:
        with `step`, their tables are updated here, in the store, which holds their rows'
        gradients."""
        out = []
        for p in group["params"]:
            if "_one_embedding" in p.__dict__:
                if step:
                    _one_embedding._step_embedding(self, group, p)
            elif p.grad is not None:
                out.append(self._real_view(p) if p.dtype.is_complex else p)
        return out

    def _real_view(self, p):
        """A complex parameter as its (real, imaginary) pairs, as PyTorch's optimizers step one:
        updates, gradient and state all on the real view (its state is keyed by the view, which
        this optimizer keeps for the parameter; state_dict() maps it back)."""
        views = self.__dict__.setdefault("_real_views", {})
        rv = views.get(id(p))
        if rv is None or rv.data_ptr() != p.data_ptr() or rv.__dict__["_optim_param"] is not p:
            rv = oneflow.view_as_real(p.detach())
            rv.__dict__["_optim_param"] = p
            views[id(p)] = rv
            if p in self.state:  # state made or loaded for the parameter itself
                self.state[rv] = {
                    k: oneflow.view_as_real(v)
                    if isinstance(v, Tensor) and v.dtype.is_complex
                    else v
                    for k, v in self.state.pop(p).items()
                }
        rv.grad = oneflow.view_as_real(p.grad.detach())
        return rv

    def state_dict(self):
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {
            index[id(p)]: v
            for p, v in ((self._by_id(k), v) for k, v in self.state.items())
            if id(p) in index
        }
        return {"state": state, "param_groups": groups}

    def _by_id(self, key):
        return key.__dict__.get("_optim_param", key)  # a complex parameter's real view

    def load_state_dict(self, state_dict):
        # Compiled nn.Graphs captured the state tensors this replaces: they trace again.
        self._state_version = getattr(self, "_state_version", 0) + 1
        state_dict = deepcopy(state_dict)
        groups, saved = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(groups, saved):
            if len(g["params"]) != len(s["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't "
                    "match the size of optimizer's group"
                )
        id_map = {}
        for g, s in zip(groups, saved):
            for p, i in zip(g["params"], s["params"]):
                id_map[i] = p
        self.state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            p = id_map.get(int(k))
            if p is None:
                continue
            self.state[p] = {name: _state_value(p, val) for name, val in v.items()}
        for g, s in zip(groups, saved):
            for k, v in s.items():
                if k != "params":
                    g[k] = v

    def step(self, closure=None):
        raise NotImplementedError

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(group):
                if k != "params":
                    lines.append(f"    {k}: {group[k]}")
        lines.append(")")
        return "\n".join(lines)
