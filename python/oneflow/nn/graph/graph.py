"""oneflow.nn.Graph: a module's forward (and, with optimizers, its training step) recorded once
and replayed.

The first call with a given input signature runs `build()` eagerly while the C++ tracer
(`_graph_trace_begin/_end`) records every kernel, then compiles the recording into a plan;
later calls with the same signature replay the plan on the new inputs. Parameters, buffers and
optimizer state are captured by reference, so replays update the modules' own tensors in place
(and `Module.load_state_dict`, which copies in place, reaches a compiled graph). Gradients live
inside the graph: parameters' `.grad` is None after a call.

What lives elsewhere: the per-step optimizer numbers fed as tensors (`optimizer_update.py`),
the module proxy (`graph_block.py`), the settings (`graph_config.py`).
"""

import collections
import dataclasses
import warnings
from collections import OrderedDict

import oneflow
import oneflow._oneflow_internal as _internal
from oneflow import autograd as _autograd
from oneflow import one_embedding
from oneflow._oneflow_internal import Tensor
from oneflow.amp import GradScaler, StaticGradScaler
from oneflow.framework import global_tensor as _global_tensor
from oneflow.nn.graph.graph_block import GraphModule
from oneflow.nn.graph.graph_config import GraphConfig
from oneflow.nn.graph.optimizer_update import make_updater
from oneflow.nn.modules import dataset as _dataset
from oneflow.nn.modules.module import Module
from oneflow.nn.modules.module import _structure_version as _module_structure_version
from oneflow.optim.optimizer import Optimizer

# ---- flattening nested (tuple / list / dict) arguments and results ----


def _flatten(obj, tensors, keep_values):
    """Appends the tensors of `obj` to `tensors` and returns its structure: ("T",) for a tensor,
    ("seq", type, children), ("dict", type, default_factory, ((key, child), ...)),
    ("dc", type, ((field, child), ...)) for a dataclass, ("V", value) otherwise. Without
    `keep_values` a value is a hashable key of it. Other objects holding tensors are refused:
    a replay could neither feed nor rebuild their tensors."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        return ("T",)
    if isinstance(obj, (tuple, list)):
        return ("seq", type(obj), tuple(_flatten(o, tensors, keep_values) for o in obj))
    if isinstance(obj, dict):
        items = tuple((k, _flatten(v, tensors, keep_values)) for k, v in obj.items())
        return ("dict", type(obj), getattr(obj, "default_factory", None), items)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = tuple(
            (f.name, _flatten(getattr(obj, f.name), tensors, keep_values))
            for f in dataclasses.fields(obj)
        )
        return ("dc", type(obj), fields)
    if isinstance(obj, _dataset.TensorBuffer):
        raise TypeError(
            "nn.Graph: a TensorBuffer (a batch of items of different shapes) can't be a graph "
            "input or output; decode it to tensors inside build()"
        )
    if any(isinstance(v, Tensor) for v in getattr(obj, "__dict__", {}).values()):
        raise TypeError(
            f"nn.Graph: a {type(obj).__name__} holding tensors can't be a graph input or output; "
            "use tensors, or tuples, lists, dicts or dataclasses of them"
        )
    return ("V", obj if keep_values else _value_key(obj))


def _rebuild(spec, it):
    kind = spec[0]
    if kind == "T":
        return next(it)
    if kind == "seq":
        typ, children = spec[1], [_rebuild(c, it) for c in spec[2]]
        return typ(*children) if hasattr(typ, "_fields") else typ(children)
    if kind == "dict":
        typ, factory, items = spec[1], spec[2], spec[3]
        pairs = [(k, _rebuild(c, it)) for k, c in items]
        if factory is not None or issubclass(typ, collections.defaultdict):
            out = typ(factory)
            out.update(pairs)
            return out
        return typ(pairs)
    if kind == "dc":
        typ, fields = spec[1], spec[2]
        values = {name: _rebuild(c, it) for name, c in fields}
        out = typ.__new__(typ)
        for name, v in values.items():
            object.__setattr__(out, name, v)  # frozen dataclasses too
        return out
    return spec[1]


class _loss_scale:
    """While build() is traced with a grad scaler: backward() seeds the loss gradient with
    the scale tensor (oneflow.autograd._graph_loss_scale)."""

    def __init__(self, scale):
        self.scale = scale

    def __enter__(self):
        self.saved = _autograd._graph_loss_scale
        _autograd._graph_loss_scale = self.scale

    def __exit__(self, *exc):
        _autograd._graph_loss_scale = self.saved


# OneFlow's key of a graph's training calls in its state_dict.
_TRAIN_STEP = "System-Train-TrainStep"

# What _replay returns when the plan must be traced again.
_STALE = object()
# Compiled plans kept per graph (oldest dropped first).
_MAX_PLANS = 16


def _value_key(obj):
    """A hashable key for a non-tensor argument: the value itself when hashable, the bytes of a
    NumPy array (a repr elides the middle of big ones), else the type and repr."""
    if hasattr(obj, "tobytes") and hasattr(obj, "dtype") and hasattr(obj, "shape"):
        return (type(obj).__qualname__, str(obj.dtype), tuple(obj.shape), obj.tobytes())
    try:
        hash(obj)
        return (type(obj).__qualname__, obj)
    except TypeError:
        return (type(obj).__qualname__, repr(obj))


def _tensor_signature(t):
    if t.is_global:
        return (tuple(t.shape), t.dtype) + _global_layout(t)
    return (tuple(t.shape), tuple(t.stride()), t.dtype, str(t.device))


# ---- global tensors: a program runs on this rank's shards (Note [Collectives in a graph]) ----


def _frozen(ranks):
    return tuple(_frozen(r) for r in ranks) if isinstance(ranks, (list, tuple)) else ranks


def _global_layout(t):
    kind, ranks = _internal._global_placement(t)
    return (kind, _frozen(ranks), tuple(_internal._global_nd_sbp(t)))


def _local(t):
    """The tensor a program sees for `t`: its shard when global."""
    return _internal._global_to_local(t) if t.is_global else t


def _global_outputs(tensors):
    """How to make each output global again from its shard (None for local outputs)."""
    return [(_global_layout(t), tuple(t.shape)) if t.is_global else None for t in tensors]


def _wrap_global(outputs, layouts):
    out = []
    for t, lay in zip(outputs, layouts):
        if lay is not None:
            (kind, ranks, nd_sbp), shape = lay
            t = _internal._global_from_local(
                t, kind, ranks, list(nd_sbp), -1, check_meta=False, shape=list(shape)
            )
        out.append(t)
    return out


# ---- saved plans (runtime_state_dict): structures as values oneflow.save can store ----

_SPEC_TYPES = {"tuple": tuple, "list": list, "dict": dict, "OrderedDict": OrderedDict}


def _plain_value(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    return type(v) is tuple and all(_plain_value(e) for e in v)


def _encode_spec(spec, graph_name):
    """A _flatten structure with type names for types, refusing what oneflow.save can't hold."""
    kind = spec[0]
    if kind == "T":
        return ("T",)
    if kind in ("seq", "dict"):
        names = [n for n, t in _SPEC_TYPES.items() if t is spec[1]]
        if names and (kind == "seq" or spec[2] is None):
            if kind == "seq":
                return ("seq", names[0], tuple(_encode_spec(c, graph_name) for c in spec[2]))
            items = spec[3]
            if all(_plain_value(k) for k, _ in items):
                return ("dict", names[0], tuple((k, _encode_spec(c, graph_name)) for k, c in items))
    elif kind == "V" and _plain_value(spec[1]):
        return ("V", spec[1])
    raise NotImplementedError(
        f"nn.Graph {graph_name}.runtime_state_dict: the graph's arguments and results must be "
        "tensors, numbers, strings or None in tuples, lists and dicts to be saved; found "
        f"{spec[1] if kind == 'V' else spec[1].__name__!r}"
    )


def _decode_spec(spec):
    kind = spec[0]
    if kind == "T":
        return ("T",)
    if kind == "seq":
        return ("seq", _SPEC_TYPES[spec[1]], tuple(_decode_spec(c) for c in spec[2]))
    if kind == "dict":
        return ("dict", _SPEC_TYPES[spec[1]], None, tuple((k, _decode_spec(c)) for k, c in spec[2]))
    return ("V", spec[1])


def _encode_signature(sig):
    shape, stride, dtype, device = sig
    return (shape, stride, str(dtype).split(".")[-1], device)


def _decode_signature(sig):
    shape, stride, dtype, device = sig
    return (tuple(shape), tuple(stride), getattr(oneflow, dtype), device)


class _OptimizerEntry:
    def __init__(self, optimizer, lr_sch, updater):
        self.optimizer = optimizer
        self.lr_sch = lr_sch
        self.updater = updater


class _Plan:
    def __init__(self, compiled, out_spec, layouts, flags):
        self.compiled = compiled
        self.out_spec = out_spec
        self.layouts = layouts
        # optimizer index -> position among the program's extra outputs of its "gradients
        # finite" flag (a dynamic grad scaler): its host-side counters advance only when set
        self.flags = flags
        # the data pipeline's calls in build(), run on the host before each replay
        self.host = None
        # per output, the global layout and shape its shard is wrapped in (None: local)
        self.global_outputs = []
        self.global_inputs = False


def _run_backwards(calls, outer):
    """Runs held-back backward() calls now (with the caller's deferral state around them)."""
    inner, _autograd._deferred_backwards = _autograd._deferred_backwards, outer
    try:
        for call in calls:
            _autograd.backward(*call)
    finally:
        _autograd._deferred_backwards = inner


def _stages_after_mine(transfers, groups, parameters):
    """How many stages come after this process's in a pipeline, or None for GPipe's order.

    Stages are the sets of processes joined by a placement (a parameter's, or either end of a
    move between placements) or by a collective's group (`groups`: the ranks of each collective
    this process took part in while the first micro-batch was traced); a move from one stage to
    another is an edge. Each process traces w micro-batches' forwards ahead, w the longest path
    of edges from its stage: the stages it sends to then have fewer ahead, so every backward
    finds its gradients coming (1F1B). Every process runs every move, so all agree on the
    stages. None (GPipe's order) without moves between stages, with a cycle among them (a later
    stage sends back to an earlier one's processes), or when a collective spans several stages
    (a world all_gather of to_global's meta check on a local tensor, a flow.comm call: it joins
    them into one): under 1F1B a later stage would reach that collective in its next forward
    only after the gradient it sent back had been received, which the earlier stage does only
    after that forward. (A subgroup's collective is seen by its members only: one over some
    but not all processes of two stages is not covered.)"""
    parent = {}

    def find(r):
        while parent.setdefault(r, r) != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    def join(ranks):
        for r in ranks[1:]:
            parent[find(r)] = find(ranks[0])

    for p in parameters:
        if p.is_global:
            join(list(_global_tensor._flat_ranks(p.placement)))
    for src, dst in transfers:
        join(list(src))
        join(list(dst))
    for ranks in groups:
        join(list(ranks))
    edges = {}
    for src, dst in transfers:
        a, b = find(src[0]), find(dst[0])
        if a != b:
            edges.setdefault(a, set()).add(b)
    if not edges:
        return None
    depth, visiting = {}, set()

    def longest(c):  # longest path of edges from stage c; None on a cycle
        if c in depth:
            return depth[c]
        if c in visiting:
            return None
        visiting.add(c)
        best = 0
        for nxt in edges.get(c, ()):
            d = longest(nxt)
            if d is None:
                return None
            best = max(best, d + 1)
        visiting.discard(c)
        depth[c] = best
        return best

    for c in list(edges):
        if longest(c) is None:
            return None
    me = oneflow.env.get_rank()
    return depth.get(find(me), 0) if me in parent else 0


class Graph:
    """Base class of static graphs: subclass, assign modules in `__init__`, register optimizers
    with `add_optimizer`, and write the step in `build()`. Calling the graph runs it.

    Example::

        class TrainGraph(flow.nn.Graph):
            def __init__(self):
                super().__init__()
                self.model = model
                self.loss_fn = flow.nn.MSELoss()
                self.add_optimizer(flow.optim.SGD(model.parameters(), lr=0.1))

            def build(self, x, y):
                loss = self.loss_fn(self.model(x), y)
                loss.backward()
                return loss
    """

    _child_init_cnt = {}

    def __init__(self):
        cls_name = type(self).__name__
        index = Graph._child_init_cnt.get(cls_name, 0)
        Graph._child_init_cnt[cls_name] = index + 1
        d = self.__dict__
        d["_name"] = f"{cls_name}_{index}"
        d["config"] = GraphConfig()
        d["_modules"] = OrderedDict()
        d["_optimizers"] = []
        d["_plans"] = {}
        d["_debug_level"] = -1
        d["_debug_options"] = {}
        d["_grad_scaler"] = None

    # ---- registration ----

    @property
    def name(self):
        return self._name

    @property
    def training(self):
        return bool(self._optimizers)

    @property
    def is_compiled(self):
        return bool(self._plans)

    def __setattr__(self, name, value):
        if "_modules" not in self.__dict__:
            raise AttributeError(
                f"nn.Graph: call super().__init__() in {type(self).__name__}.__init__ before "
                f"assigning attribute '{name}'"
            )
        if isinstance(value, Optimizer):
            raise AttributeError(
                f"nn.Graph {self._name}: an optimizer can't be an attribute ('{name}'); "
                "register it with self.add_optimizer(optimizer)"
            )
        if isinstance(value, Module):
            value = GraphModule(value, name)
        if isinstance(value, GraphModule):
            self._modules[name] = value
            self.__dict__["_members_cache"] = None
        else:
            self._modules.pop(name, None)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self._modules.pop(name, None)
        object.__delattr__(self, name)

    def add_optimizer(self, optimizer, *, lr_sch=None, is_sparse=False):
        """Registers an optimizer (and its learning-rate scheduler, stepped once per call);
        the graph then trains: build() computes a loss and calls backward() on it."""
        if is_sparse:
            raise NotImplementedError(
                "nn.Graph.add_optimizer: sparse updates (is_sparse=True) are not implemented yet"
            )
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"nn.Graph.add_optimizer: expected an optimizer, got {type(optimizer).__name__}"
            )
        if lr_sch is not None and getattr(lr_sch, "optimizer", optimizer) is not optimizer:
            raise ValueError(
                "nn.Graph.add_optimizer: lr_sch must be a scheduler of the same optimizer"
            )
        updater = make_updater(optimizer)
        self.__dict__["_members_cache"] = None
        self._optimizers.append(_OptimizerEntry(optimizer, lr_sch, updater))
        self.config.training = True

    def set_grad_scaler(self, grad_scaler=None):
        """Loss scaling for the training step (OneFlow's): `loss.backward()` in build() seeds
        the gradient with the scale, the gradients are divided by it before the update, and
        with a dynamic `oneflow.amp.GradScaler` a step whose gradients hold inf or NaN leaves
        the parameters and optimizer state as they were while the scale backs off (and grows
        after `growth_interval` finite steps), inside the program: the scale lives in a 0-d
        tensor on the parameters' device (`grad_scaler.get_scale()` reads it). The host reads
        each optimizer's "gradients finite" flag once per call (as eager GradScaler.step()
        does), so a skipped step advances no step count. `oneflow.amp.StaticGradScaler` keeps
        a fixed scale and skips nothing."""
        if grad_scaler is not None and not isinstance(grad_scaler, GradScaler):
            raise TypeError(
                "nn.Graph.set_grad_scaler: expected a oneflow.amp.GradScaler or "
                f"StaticGradScaler, got {type(grad_scaler).__name__}"
            )
        self.__dict__["_grad_scaler"] = grad_scaler

    def build(self, *args, **kwargs):
        raise NotImplementedError(
            f"nn.Graph: {type(self).__name__} must override build(self, *args, **kwargs) "
            "with the computation the graph runs"
        )

    def debug(
        self,
        v_level=0,
        *,
        ranks=None,
        max_py_stack_depth=2,
        only_user_py_stack=True,
        op_repr_with_py_stack=False,
    ):
        """v_level -1: silent (the default); 0: a line per compiled plan; 1 and up: also the
        plan's program, one line per step."""
        self.__dict__["_debug_level"] = int(v_level)
        self.__dict__["_debug_options"] = dict(
            ranks=ranks,
            max_py_stack_depth=max_py_stack_depth,
            only_user_py_stack=only_user_py_stack,
            op_repr_with_py_stack=op_repr_with_py_stack,
        )

    # ---- running ----

    def _parameters(self):
        seen, out = set(), []
        groups = [m.origin.parameters() for m in self._modules.values()]
        groups += [g["params"] for e in self._optimizers for g in e.optimizer.param_groups]
        for params in groups:
            for p in params:
                if id(p) not in seen:
                    seen.add(id(p))
                    out.append(p)
        return out

    def _members(self):
        """(every module, every parameter) of the graph, listed again only when some module's
        parameters or children changed: walking the module tree at every call cost more than a
        small model's replay."""
        cached = self.__dict__.get("_members_cache")
        version = _module_structure_version[0]
        if cached is None or cached[2] != version:
            modules = [m for gm in self._modules.values() for m in gm.origin.modules()]
            cached = (modules, self._parameters(), version)
            self.__dict__["_members_cache"] = cached
        return cached[:2]

    def _mode_signature(self):
        """What a plan depends on besides its inputs: the modules' train/eval flags, which
        parameters train, and the optimizers' state objects (replaced by load_state_dict)."""
        modules, params = self._members()
        modes = tuple(
            (
                m.training,
                tuple(m._forward_hooks),
                tuple(m._forward_pre_hooks),
                tuple(m._backward_hooks),
                tuple(m._backward_pre_hooks),
            )
            for m in modules
        )
        # a replaced parameter (`module.weight = Parameter(...)`) is another tensor to capture
        trains = tuple((id(p), p.requires_grad) for p in params)
        opts = tuple(
            (
                getattr(e.optimizer, "_state_version", 0),
                len(e.optimizer.param_groups),
                e.updater.hyper_signature(),
            )
            for e in self._optimizers
        )
        settings = self.config.settings
        amp = (settings.get("enable_amp", False), settings.get("amp_dtype"))
        scaler = self._scaler()
        scaling = None
        if scaler is not None:
            scaling = (
                id(scaler),
                type(scaler),
                scaler.get_growth_factor(),
                scaler.get_backoff_factor(),
                scaler.get_growth_interval(),
            )
        steps = settings.get("gradient_accumulation_steps", 1)
        return modes, trains, opts, amp, steps, scaling

    def _amp(self, arg_tensors):
        """config.enable_amp's autocast on the parameters' (else the inputs') device type."""
        enabled = self.config.settings.get("enable_amp", False)
        tensors = self._parameters() or arg_tensors
        device_type = tensors[0].device.type if tensors else "cpu"
        device_type = "cuda" if device_type == "cuda" else "cpu"
        return oneflow.amp.autocast(
            device_type, self.config.settings.get("amp_dtype"), enabled=enabled
        )

    def _variables(self):
        """The tensors a trace may capture: parameters, buffers, optimizer state and the grad
        scaler's scale."""
        out = list(self._parameters())
        for gm in self._modules.values():
            out.extend(gm.origin.buffers())
        for e in self._optimizers:
            out.extend(e.updater.state_tensors())
        scaler = self._scaler()
        if scaler is not None:
            out.extend(scaler._graph_state(self._scaler_device()))
        return out

    def _scaler(self):
        scaler = self.__dict__.get("_grad_scaler")
        if scaler is None or not scaler.is_enabled() or not self.training:
            return None
        return scaler

    def _scaler_device(self):
        params = self._parameters()
        return params[0].device if params else oneflow.device("cpu")

    def _unscale(self, scaler, scale):
        """Inside a trace, under no_grad: divides every optimizer's gradients by `scale`;
        returns, per optimizer, a 0-d bool tensor saying whether its gradients are all finite
        (None for an optimizer without gradients, and for every one with a static scale)."""
        inv = scale.reciprocal()
        flags = []
        for e in self._optimizers:
            for g in e.optimizer.param_groups:
                for p in g["params"]:
                    if "_one_embedding" in p.__dict__:
                        raise NotImplementedError(
                            f"nn.Graph {self._name}: a grad scaler with a one_embedding table "
                            "in the optimizer is not supported yet (use GradScaler eagerly)"
                        )
            grads = [
                p.grad for g in e.optimizer.param_groups for p in g["params"] if p.grad is not None
            ]
            for g in grads:
                g.mul_(inv.to(g.dtype))
            finite = None
            if grads and not isinstance(scaler, StaticGradScaler):
                finite = oneflow.stack([oneflow.isfinite(g).all() for g in grads]).all()
            flags.append(finite)
        return flags

    @staticmethod
    def _updated_tensors(entry):
        """The tensors an optimizer's update writes: its parameters with gradients and their
        state tensors ("step" counters advance on the host, optimizer_update.py)."""
        out = []
        for g in entry.optimizer.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                out.append(p)
                st = entry.optimizer.state.get(p, {})
                out.extend(v for k, v in st.items() if isinstance(v, Tensor) and k != "step")
        return out

    @staticmethod
    def _read_flags(indices, flags):
        """{optimizer index: whether its gradients were finite}: a host read per call, as eager
        GradScaler.step() makes, so that a skipped step does not advance the step counts the
        next call's numbers are computed from."""
        return {i: bool(f.item()) for i, f in zip(indices, flags)}

    @staticmethod
    def _next_scale(scaler, good, scale, tracker):
        """The dynamic scale's update, as GradScaler.update(), in tensor ops: back off after
        a step with inf/NaN gradients, grow after growth_interval finite steps in a row."""
        counted = oneflow.where(good, tracker + 1, 0.0)
        grow = counted >= float(scaler.get_growth_interval())
        grown = oneflow.where(grow, scale * scaler.get_growth_factor(), scale)
        scale.copy_(oneflow.where(good, grown, scale * scaler.get_backoff_factor()))
        tracker.copy_(oneflow.where(grow, 0.0, counted))

    def __call__(self, *args, **kwargs):
        if _internal._graph_tracing():
            raise RuntimeError(
                f"nn.Graph {self._name}: a graph can't be called while another graph is being "
                "traced (inside its build())"
            )
        tensors = []
        spec = _flatten((args, kwargs), tensors, keep_values=False)
        key = (spec, tuple(_tensor_signature(t) for t in tensors), self._mode_signature())
        plan = self._plans.get(key)
        outputs = _STALE if plan is None else self._replay(plan, tensors)
        if outputs is _STALE:
            if plan is not None:  # a captured tensor changed: every plan may hold it
                self._plans.clear()
            outputs = self._compile(key, tensors, args, kwargs)
        if self._optimizers and self.training:
            self.__dict__["_train_steps"] = self.__dict__.get("_train_steps", 0) + 1
        for entry in self._optimizers:
            if entry.lr_sch is not None:
                # the program stepped the optimizer (lr_scheduler's order check)
                entry.optimizer.__dict__["_opt_called"] = True
                entry.lr_sch.step()
        return outputs

    def _compile(self, key, arg_tensors, args, kwargs):
        self.__dict__["_members_cache"] = None
        # build() sees detached inputs: a graph computes no gradients for its inputs (as
        # OneFlow's), and an input's existing .grad must not be captured and accumulated into.
        arg_tensors = [t.detach() for t in arg_tensors]
        args, kwargs = _rebuild(_flatten((args, kwargs), [], keep_values=True), iter(arg_tensors))
        params = self._parameters()
        for p in params:
            p.grad = None
        created = [e.updater.prepare() for e in self._optimizers]
        layouts = [e.updater.layout() for e in self._optimizers]
        scalars = [
            e.updater.scalar_tensors(lay, e.updater.first_candidates(lay))
            for e, lay in zip(self._optimizers, layouts)
        ]
        began = False
        host = _dataset.HostProgram()  # the data pipeline's calls in build()
        _dataset._tracing.stack.append(host)
        try:
            _internal._graph_trace_begin(
                [_local(t) for t in arg_tensors] + [t for s in scalars for t in s],
                [t for t in self._variables() if not t.is_global],
            )
            began = True
            grad_mode = oneflow.enable_grad() if self.training else oneflow.no_grad()
            scaler = self._scaler()
            scale = tracker = None
            if scaler is not None:
                if not isinstance(scaler, StaticGradScaler) and any(
                    p.is_global for p in self._parameters()
                ):
                    raise NotImplementedError(
                        f"nn.Graph {self._name}: a dynamic GradScaler with global parameters "
                        "is not supported in graphs yet (use StaticGradScaler, or GradScaler "
                        "eagerly)"
                    )
                scale, tracker = scaler._graph_state(self._scaler_device())
            with grad_mode, self._amp(arg_tensors), _loss_scale(scale):
                steps = self.config.settings.get("gradient_accumulation_steps", 1)
                if steps == 1:
                    result = self.build(*args, **kwargs)
                else:
                    result = self._build_micro_batches(steps, arg_tensors, args, kwargs)
            out_tensors = []
            out_spec = _flatten(result, out_tensors, keep_values=True)
            # A pipeline tensor is refreshed in place before each replay: return copies.
            out_tensors = [t.clone() if host.made(t) else t for t in out_tensors]
            with oneflow.no_grad():
                flags = [None] * len(self._optimizers)
                if scaler is not None:
                    flags = self._unscale(scaler, scale)
                for e, lay, s, finite in zip(self._optimizers, layouts, scalars, flags):
                    # a skipped step (gradients not finite) puts back what the update wrote
                    kept = []
                    if finite is not None:
                        kept = [(t, t.clone()) for t in self._updated_tensors(e)]
                    e.updater.trace_step(lay, s)
                    for t, old in kept:
                        t.copy_(oneflow.where(finite, t, old))
                flag_of = {i: f for i, f in enumerate(flags) if f is not None}
                if flag_of:
                    good = oneflow.stack(list(flag_of.values())).all()
                    self._next_scale(scaler, good, scale, tracker)
            compiled = _internal._graph_trace_end(
                [_local(t) for t in out_tensors] + list(flag_of.values())
            )
        except BaseException:
            if began:
                _internal._graph_trace_abort()
            for e, c in zip(self._optimizers, created):
                e.updater.discard(c)
            raise
        finally:
            _dataset._tracing.stack.pop()
            for p in params:
                p.grad = None
        finite = self._read_flags(list(flag_of), list(flag_of.values()))
        for i, (e, c, lay) in enumerate(zip(self._optimizers, created, layouts)):
            e.updater.discard(c, lay)
            if finite.get(i, True):
                e.updater.commit(lay)
        plan = _Plan(compiled, out_spec, layouts, list(flag_of))
        plan.global_outputs = _global_outputs(out_tensors)
        plan.global_inputs = any(t.is_global for t in arg_tensors)
        plan.host = host if host.steps else None
        if len(self._plans) >= _MAX_PLANS:
            # a signature that changes at every call (a step number argument, a scheduler
            # cycling momentum) traces at every call: keep memory bounded, and say so once
            self._plans.pop(next(iter(self._plans)))
            if not self.__dict__.get("_warned_plans"):
                self.__dict__["_warned_plans"] = True
                warnings.warn(
                    f"nn.Graph {self._name}: more than {_MAX_PLANS} compiled plans; the oldest "
                    "are dropped. Arguments that differ at every call (non-tensor values, "
                    "hyper-parameters a scheduler changes other than lr) trace every call.",
                    stacklevel=3,
                )
        self._plans[key] = plan
        self._report(plan, arg_tensors)
        return _rebuild(out_spec, iter([t.detach() for t in out_tensors]))

    def _pipelined(self):
        """Whether the parameters sit on more than one placement (pipeline stages)."""
        return len({repr(p.placement) for p in self._parameters() if p.is_global}) > 1

    def _build_micro_batches(self, steps, arg_tensors, args, kwargs):
        """build() on each of `steps` slices of dim 0 of the inputs, traced one after another:
        backward() accumulates into .grad, which is divided by `steps` before the optimizers'
        update; outputs are joined along dim 0 (0-d ones stacked).

        In a pipeline (parameters on several placements) the backward() calls are held back
        and run in micro-batch order on the 1F1B schedule: a process whose stage has w stages
        after it (read from the first micro-batch's moves between placements) traces w
        micro-batches' forwards ahead, then one backward after each further forward. A stage
        works on the next micro-batches while the later ones work on the first, and holds the
        activations of at most w + 1 micro-batches. Where the stages are no chain of placements
        (the loss back on the first stage's processes: a cycle) or a collective spans several
        stages (see _stages_after_mine), every forward goes before the backwards (GPipe's
        order). The gradients are the same sums in the same order."""
        for i, t in enumerate(arg_tensors):
            if t.ndim == 0 or t.shape[0] % steps != 0:
                raise ValueError(
                    f"nn.Graph {self._name}: with {steps} gradient accumulation steps every "
                    f"input tensor is split along dim 0 into {steps} micro-batches, but input "
                    f"tensor {i} has shape {tuple(t.shape)}"
                )
        spec = _flatten((args, kwargs), [], keep_values=True)
        results, specs = [], []
        pipelined = self.training and self._pipelined()
        deferred = [] if pipelined else None
        ahead, held = None, []  # held: each micro-batch's backward() calls, not yet run
        saved, _autograd._deferred_backwards = _autograd._deferred_backwards, deferred
        saved_log = _global_tensor.transfer_log
        try:
            for k in range(steps):
                micro = [
                    t.narrow(0, k * (t.shape[0] // steps), t.shape[0] // steps) for t in arg_tensors
                ]
                margs, mkwargs = _rebuild(spec, iter(micro))
                tensors = []
                if pipelined and k == 0:
                    _global_tensor.transfer_log = []
                    _internal._comm_log_collectives(True)
                specs.append(_flatten(self.build(*margs, **mkwargs), tensors, keep_values=True))
                results.append(tensors)
                if specs[-1] != specs[0]:
                    raise ValueError(
                        f"nn.Graph {self._name}: build() returned differently structured "
                        "outputs for two micro-batches of one call (gradient accumulation)"
                    )
                if not pipelined:
                    continue
                if k == 0:
                    groups = _internal._comm_logged_collectives()
                    _internal._comm_log_collectives(False)
                    ahead = _stages_after_mine(
                        _global_tensor.transfer_log, groups, self._parameters()
                    )
                    _global_tensor.transfer_log = saved_log
                held.append(list(deferred))
                deferred.clear()
                if ahead is not None and k >= ahead:
                    _run_backwards(held[k - ahead], saved)
                    held[k - ahead] = []
        finally:
            _autograd._deferred_backwards = saved
            _global_tensor.transfer_log = saved_log
            if pipelined:
                _internal._comm_log_collectives(False)
        for calls in held:
            _run_backwards(calls, saved)
        with oneflow.no_grad():
            if self.training:
                for p in self._parameters():
                    if p.grad is not None:
                        p.grad.div_(steps)
                        # a one_embedding table's gradients wait in its store
                        one_embedding._scale_pending(p, 1.0 / steps)
            joined = [
                oneflow.stack(ts) if ts[0].ndim == 0 else oneflow.cat(ts, dim=0)
                for ts in zip(*results)
            ]
        return _rebuild(specs[0], iter(joined))

    def _replay(self, plan, arg_tensors):
        """The plan's outputs on new inputs, or _STALE when the plan no longer fits."""
        scalars = []
        for e, lay in zip(self._optimizers, plan.layouts):
            if not e.updater.consistent(lay):
                return _STALE
            scalars.extend(e.updater.scalar_tensors(lay))
        if plan.host is not None:
            if not plan.compiled.current:
                return _STALE  # traced again: the trace reads the next batch itself
            plan.host.run()  # the next batch into the tensors the program captured
        outputs = plan.compiled.run([_local(t) for t in arg_tensors] + scalars)
        if outputs is None:
            return _STALE
        if plan.flags:
            finite = self._read_flags(plan.flags, outputs[-len(plan.flags) :])
            outputs = outputs[: -len(plan.flags)]
        else:
            finite = {}
        for i, (e, lay) in enumerate(zip(self._optimizers, plan.layouts)):
            if finite.get(i, True):
                e.updater.commit(lay)
        # An output that is an input or a parameter comes back as that tensor: detach it, as
        # the first call does.
        outputs = [t.detach() if t.requires_grad else t for t in outputs]
        if any(lay is not None for lay in plan.global_outputs):
            outputs = _wrap_global(outputs, plan.global_outputs)
        return _rebuild(plan.out_spec, iter(outputs))

    def _report(self, plan, arg_tensors):
        if self._debug_level < 0:
            return
        shapes = ", ".join(str(tuple(t.shape)) for t in arg_tensors)
        print(
            f"(GRAPH:{self._name}) compiled plan {len(self._plans)} for inputs [{shapes}]: "
            f"{plan.compiled.num_steps} steps"
        )
        if self._debug_level >= 1:
            print(plan.compiled.ir())

    # ---- saved plans ----

    def _named_variables(self):
        """(name, tensor) of every parameter and buffer, named as in state_dict():
        "<module attribute>.<name in the module>"."""
        out = []
        for attr, gm in self._modules.items():
            for name, p in gm.origin.named_parameters():
                out.append((f"{attr}.{name}", p))
            for name, b in gm.origin.named_buffers():
                out.append((f"{attr}.{name}", b))
        return out

    def runtime_state_dict(self, destination=None, with_eager=False):
        """The compiled plans, so that a graph of the same modules can run them without tracing
        build() again (load_runtime_state_dict), in this process or another one: each plan's
        program in the protobuf IR (core/graph/graph.proto), the input signature it was compiled
        for and the structure of its arguments and results. Parameters and buffers are saved by
        name (bound to the loading graph's own tensors), other tensors the program captured
        (constants) by value. With `with_eager`, also the modules' state (state_dict()).
        Plans of other train/eval modes or parameters than the current ones are left out.
        Store it with oneflow.save. Graphs with optimizers, and modules with hooks, raise
        NotImplementedError."""
        if any(plan.host is not None for plan in self._plans.values()):
            raise NotImplementedError(
                f"nn.Graph {self._name}.runtime_state_dict: a plan that reads its data in "
                "build() (OFRecord readers, decoders) can't be saved: a loaded plan would "
                "replay one batch"
            )
        if any(
            plan.global_inputs or any(lay is not None for lay in plan.global_outputs)
            for plan in self._plans.values()
        ) or any(t.is_global for t in self._parameters()):
            raise NotImplementedError(
                f"nn.Graph {self._name}.runtime_state_dict: a graph on global tensors can't be "
                "saved yet"
            )
        if self._optimizers:
            raise NotImplementedError(
                f"nn.Graph {self._name}.runtime_state_dict: graphs with optimizers (training "
                "steps) can't be saved yet; save the modules and optimizers' state_dict() instead"
            )
        variables = self._named_variables()
        modules, _ = self._members()
        hooked = [
            type(m).__name__
            for m in modules
            if m._forward_hooks
            or m._forward_pre_hooks
            or m._backward_hooks
            or m._backward_pre_hooks
        ]
        if hooked:
            raise NotImplementedError(
                f"nn.Graph {self._name}.runtime_state_dict: modules with hooks ({hooked}) can't "
                "be saved: a loaded program would run what the hooks did when it was traced"
            )
        mode = self._mode_signature()
        settings = self.config.settings
        plans = []
        for key, plan in self._plans.items():
            spec, signatures, plan_mode = key
            # plans of other modes (train/eval, replaced parameters) or whose captured tensors
            # changed since the trace would not run again: not saved
            if plan_mode != mode or not plan.compiled.current:
                continue
            plans.append(
                {
                    "program": _internal._graph_save(plan.compiled, variables),
                    "arguments": _encode_spec(spec, self._name),
                    "inputs": tuple(_encode_signature(s) for s in signatures),
                    "results": _encode_spec(plan.out_spec, self._name),
                    "training": tuple(m.training for m in modules),
                    "amp": (
                        bool(settings.get("enable_amp", False)),
                        str(settings.get("amp_dtype")),
                    ),
                }
            )
        out = OrderedDict() if destination is None else destination
        out["oneflow_graph"] = 1
        out["name"] = self._name
        out["plans"] = plans
        if with_eager:
            out["states"] = self.state_dict()
        return out

    def load_runtime_state_dict(self, state_dict, *, warmup_with_run=False):
        """Adds the plans runtime_state_dict() saved to this graph: calls whose arguments have a
        saved signature run the saved program at once, without tracing build(). The graph must
        hold the same modules (parameters and buffers of the saved names and layouts, in the
        saved train/eval modes); `states`, when saved, are loaded into them first."""
        if state_dict.get("oneflow_graph") != 1 or "plans" not in state_dict:
            raise ValueError(
                f"nn.Graph {self._name}.load_runtime_state_dict: not a state saved by "
                "runtime_state_dict() of this version"
            )
        if self._optimizers:
            raise NotImplementedError(
                f"nn.Graph {self._name}.load_runtime_state_dict: graphs with optimizers can't "
                "load saved plans yet"
            )
        if "states" in state_dict:
            self.load_state_dict(state_dict["states"])
        variables = self._named_variables()
        names = {n for n, _ in variables}
        modules, _ = self._members()
        training = tuple(m.training for m in modules)
        settings = self.config.settings
        amp = (bool(settings.get("enable_amp", False)), str(settings.get("amp_dtype")))
        loaded = []
        for saved in state_dict["plans"]:
            missing = sorted(set(_internal._graph_variables(saved["program"])) - names)
            if missing:
                raise KeyError(
                    f"nn.Graph {self._name}.load_runtime_state_dict: the saved plan uses "
                    f"{missing}, which this graph's modules do not have"
                )
            if tuple(saved["training"]) != training:
                raise ValueError(
                    f"nn.Graph {self._name}.load_runtime_state_dict: a plan was saved with the "
                    f"modules' training flags {tuple(saved['training'])}, the graph's modules "
                    f"have {training} (call train() or eval() as when it was saved)"
                )
            if tuple(saved.get("amp", (False, "None"))) != amp:
                raise ValueError(
                    f"nn.Graph {self._name}.load_runtime_state_dict: a plan was saved with "
                    f"config.enable_amp {tuple(saved.get('amp', (False, 'None')))}, this graph "
                    f"has {amp}"
                )
            compiled = _internal._graph_load(saved["program"], variables)
            key = (
                _decode_spec(saved["arguments"]),
                tuple(_decode_signature(s) for s in saved["inputs"]),
                self._mode_signature(),
            )
            loaded.append((key, _Plan(compiled, _decode_spec(saved["results"]), [], [])))
        for key, plan in loaded:
            self._plans[key] = plan
        # warm-up runs the programs as calls would (a train-mode BatchNorm updates its
        # statistics, random steps draw), on zeros of the saved layouts
        if warmup_with_run:
            for key, plan in loaded:
                inputs = []
                for shape, stride, dtype, device in key[1]:
                    span = 1 + sum((n - 1) * st for n, st in zip(shape, stride))
                    span = span if all(n > 0 for n in shape) else 0
                    base = oneflow.zeros(span, dtype=dtype, device=device)
                    inputs.append(base.as_strided(shape, stride))
                plan.compiled.run(inputs)

    # ---- state ----

    def state_dict(self, destination=None):
        """{module attribute: module.state_dict(), "optimizer_<i>": optimizer.state_dict(),
        "lr_scheduler_<i>": its lr_sch's state_dict(), and OneFlow's "System-Train-TrainStep":
        the training calls so far}, so that a resumed graph follows the same schedule."""
        out = OrderedDict() if destination is None else destination
        for name, gm in self._modules.items():
            out[name] = gm.origin.state_dict()
        for i, e in enumerate(self._optimizers):
            out[f"optimizer_{i}"] = e.optimizer.state_dict()
            if e.lr_sch is not None:
                out[f"lr_scheduler_{i}"] = e.lr_sch.state_dict()
        if self._optimizers:
            steps = self.__dict__.get("_train_steps", 0)
            out[_TRAIN_STEP] = oneflow.tensor(steps, dtype=oneflow.int64)
        return out

    def load_state_dict(self, state_dict, strict=True):
        """The inverse of state_dict(), in place: compiled plans keep using the same tensors
        and see the loaded values."""
        expected = list(self._modules) + [f"optimizer_{i}" for i in range(len(self._optimizers))]
        optional = [_TRAIN_STEP] + [f"lr_scheduler_{i}" for i in range(len(self._optimizers))]
        if strict:
            unexpected = [k for k in state_dict if k not in expected + optional]
            missing = [k for k in expected if k not in state_dict]
            if unexpected or missing:
                raise KeyError(
                    f"nn.Graph {self._name}.load_state_dict: unexpected keys {unexpected}, "
                    f"missing keys {missing}"
                )
        for name, gm in self._modules.items():
            if name in state_dict:
                gm.origin.load_state_dict(state_dict[name], strict=strict)
        for i, e in enumerate(self._optimizers):
            if f"optimizer_{i}" in state_dict:
                e.updater.load_state_dict(state_dict[f"optimizer_{i}"])
            if e.lr_sch is not None and f"lr_scheduler_{i}" in state_dict:
                e.lr_sch.load_state_dict(state_dict[f"lr_scheduler_{i}"])
        if _TRAIN_STEP in state_dict:
            self.__dict__["_train_steps"] = int(state_dict[_TRAIN_STEP])

    def __repr__(self):
        lines = [f"(CONFIG:config:{self.config!r})"]
        lines += [repr(gm) for gm in self._modules.values()]
        for i, e in enumerate(self._optimizers):
            lines.append(f"(OPTIMIZER:optimizer_{i}:{type(e.optimizer).__name__})")
        if self._plans:
            steps = ", ".join(str(p.compiled.num_steps) for p in self._plans.values())
            lines.append(f"(COMPILED:{len(self._plans)} plan(s), steps [{steps}])")
        body = "\n".join("  " + line.replace("\n", "\n  ") for line in lines)
        return f"(GRAPH:{self._name}:{type(self).__name__}): (\n{body}\n)"
