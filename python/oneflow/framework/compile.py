"""oneflow.compile: PyTorch's torch.compile entry point on oneflow's graph compiler.

A compiled module (or function) runs as nn.Graph plans while gradients are off (under no_grad
or inference_mode) and every module it uses is in eval mode: the forward is traced once per
input signature and replayed (oneflow's compiled path). It runs eagerly while gradients are
recorded, in training mode, under autocast, with forward hooks, or for inputs that require
grad: an nn.Graph compiles whole training steps, which torch.compile's module form does not
express.

Note [Compile guards]: a replay repeats the traced kernels and nothing else, so what the
forward reads besides its inputs must not have changed, and what it did besides kernels must
not matter. Before each call the modules it reaches (the compiled module's tree; for a
function, the modules in its closure, in the globals it names and among its arguments) are
summarised: their plain attributes (numbers, strings, None, container lengths) and the
identities of their tensors. A changed summary selects (or traces) another plan. A trace that
changes a summary (a counter, a cache, a buffer rebound out of place) shows that the forward
has Python side effects: it runs eagerly from then on. A forward that cannot be traced (host
reads of values, arguments nn.Graph refuses) runs eagerly from then on, its reason in
``compile_error``, after the attributes the failed trace changed are put back; if it had
already written tensors in place, the error is raised instead of running the forward twice.
``fullgraph=True`` raises tracing errors (PyTorch's graph-break rule). State a forward reads
from elsewhere (other globals, objects in containers) is not guarded.

``backend="eager"`` never compiles; ``mode``, ``dynamic`` and ``options`` are checked and
accepted; callable backends (which take an FX graph) are refused. State dicts carry PyTorch's
``_orig_mod.`` prefix. ``oneflow.compiler.set_stance`` can make compiled calls run eagerly
(always, the first time, or instead of a new plan) or refuse new plans. ``nn.Module.compile()``
puts a compiled forward (CompiledForward) in the module itself."""

import itertools

import oneflow
from oneflow import compiler as _compiler
from oneflow._oneflow_internal import Tensor
from oneflow.nn.modules.module import Module

_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")
_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _max_guards():
    """Plans for this many different summaries, then eager (torch._dynamo.config's
    recompile_limit, also named cache_size_limit)."""
    from oneflow._dynamo import config

    return config.recompile_limit


_PLAIN = (bool, int, float, str, bytes, type(None))


class _Forward(oneflow.nn.Graph):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def build(self, *args, **kwargs):
        return self.module(*args, **kwargs)


class _FunctionModule(Module):
    def __init__(self, fn):
        super().__init__()
        self.__dict__["_fn"] = fn

    def forward(self, *args, **kwargs):
        return self.__dict__["_fn"](*args, **kwargs)


def _value_summary(v):
    t = type(v)
    if t in _PLAIN_TYPES:
        return repr(v) if t is float and v == 0 else v  # -0.0 and 0.0 differ
    if isinstance(v, Tensor):
        return ("tensor", id(v))
    if isinstance(v, (list, tuple, dict, set)):
        return (t.__name__, len(v))
    if callable(v):
        return None  # methods and functions bound as attributes
    return ("object", id(v))


_PLAIN_TYPES = frozenset(_PLAIN)
_REGISTRIES = ("_parameters", "_buffers", "_modules")
_MODULE_KEYS = None  # a fresh Module's own attributes (hooks, flags): guarded elsewhere


def _module_summary(m):
    global _MODULE_KEYS
    if _MODULE_KEYS is None:
        _MODULE_KEYS = frozenset(Module().__dict__) - set(_REGISTRIES)
    d = m.__dict__
    return (
        id(m),
        tuple(map(id, d["_parameters"].values())),
        tuple(map(id, d["_buffers"].values())),
        tuple(map(id, d["_modules"].values())),
        tuple(
            (k, _value_summary(v))
            for k, v in d.items()
            if k not in _MODULE_KEYS and k not in _REGISTRIES
        ),
    )


def _modules_of_function(fn, args, kwargs):
    found = []
    cells = [c.cell_contents for c in (getattr(fn, "__closure__", None) or ()) if _filled(c)]
    code = getattr(fn, "__code__", None)
    globs = getattr(fn, "__globals__", {})
    named = [globs[n] for n in (code.co_names if code else ()) if n in globs]
    owner = [fn.__self__] if isinstance(getattr(fn, "__self__", None), Module) else []
    for v in itertools.chain(owner, cells, named, args, kwargs.values()):
        if isinstance(v, Module):
            found.extend(v.modules())
    return found


def _filled(cell):
    try:
        _ = cell.cell_contents
        return True
    except ValueError:
        return False


class OptimizedModule(Module):
    """The module compile() returns for a module: calls go to ``_orig_mod``, and so do
    attributes it does not have (reading and setting), as PyTorch's OptimizedModule."""

    _OWN = ("_orig_mod", "_fullgraph", "_backend", "_graphs", "compile_error", "_function")

    def __init__(self, mod, *, fullgraph=False, backend="inductor", function=None):
        super().__init__()
        self._orig_mod = mod
        self.__dict__.update(
            _fullgraph=fullgraph,
            _backend=backend,
            _graphs={},
            compile_error=None,
            _function=function,
        )

    # ---- attributes ----

    @property
    def training(self):
        return self.__dict__["_modules"]["_orig_mod"].training

    @training.setter
    def training(self, value):
        if "_modules" in self.__dict__ and "_orig_mod" in self.__dict__["_modules"]:
            self.__dict__["_modules"]["_orig_mod"].training = value

    def __getattr__(self, name):
        d = self.__dict__
        if "_modules" in d and "_orig_mod" in d["_modules"]:
            if name == "_orig_mod":
                return d["_modules"]["_orig_mod"]
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(d["_modules"]["_orig_mod"], name)
        raise AttributeError(name)

    def __setattr__(self, name, value):
        d = self.__dict__
        if name in self._OWN or name == "training" or "_modules" not in d:
            return super().__setattr__(name, value)
        if "_orig_mod" not in d["_modules"]:
            return super().__setattr__(name, value)
        setattr(d["_modules"]["_orig_mod"], name, value)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_graphs"] = {}  # compiled plans are not kept (PyTorch drops its code too)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __deepcopy__(self, memo):
        import copy

        new = OptimizedModule.__new__(OptimizedModule)
        memo[id(self)] = new
        state = self.__getstate__()
        new.__dict__.update({k: copy.deepcopy(v, memo) for k, v in state.items()})
        return new

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"

    # ---- calls ----

    def _reached(self, args, kwargs):
        fn = self.__dict__["_function"]
        if fn is None:
            return list(self._orig_mod.modules())
        return _modules_of_function(fn, args, kwargs)

    def _compiles(self, modules, args, kwargs):
        if (
            self.__dict__["_backend"] == "eager"
            or self.__dict__["compile_error"] is not None
            or oneflow.is_grad_enabled()
            or oneflow._oneflow_internal._graph_tracing()
            or oneflow.is_autocast_enabled("cpu")
            or oneflow.is_autocast_enabled("cuda")
        ):
            return False
        for m in modules:
            if m.training or m._forward_hooks or m._forward_pre_hooks:
                return False
        tensors = [a for a in itertools.chain(args, kwargs.values()) if isinstance(a, Tensor)]
        return not any(t.requires_grad for t in tensors)

    def _eager_from_now(self, error):
        self.__dict__["compile_error"] = error
        self.__dict__["_graphs"] = {}

    def _eager_by_stance(self, stance, backend):
        """Whether compiler.set_stance's stance (or forced backend) runs this call eagerly."""
        if stance not in _compiler.STANCES:
            raise RuntimeError(f"invalid oneflow.compile stance '{stance}'")
        if stance == "force_eager" or backend == "eager":
            return True
        if stance in ("eager_then_compile", "aot_eager_then_compile"):
            if not self.__dict__.get("_ran_eagerly"):
                self.__dict__["_ran_eagerly"] = True
                return True
        return False

    def forward(self, *args, **kwargs):
        stance, backend = _compiler._stance
        if (stance != "default" or backend is not None) and self._eager_by_stance(stance, backend):
            return self._orig_mod(*args, **kwargs)
        modules = self._reached(args, kwargs)
        if not self._compiles(modules, args, kwargs):
            return self._orig_mod(*args, **kwargs)
        before = tuple(_module_summary(m) for m in modules)
        graphs = self.__dict__["_graphs"]
        graph = graphs.get(before)
        if graph is not None:
            return graph(*args, **kwargs)
        if graphs and stance == "eager_on_recompile":
            return self._orig_mod(*args, **kwargs)
        if graphs and stance == "fail_on_recompile":
            raise RuntimeError(
                "Detected recompile when oneflow.compile stance is 'fail_on_recompile': the "
                "modules' attributes changed since the compiled plans were made"
            )
        if len(graphs) >= _max_guards():
            self._eager_from_now(
                RuntimeError(
                    f"compile: the modules' attributes changed {_max_guards()} times; running "
                    "eagerly (Note [Compile guards])"
                )
            )
            return self._orig_mod(*args, **kwargs)
        saved = [(m, dict(m.__dict__)) for m in modules]
        versions = _versions(modules, args, kwargs)
        graph = _Forward(self._orig_mod)
        try:
            out = graph(*args, **kwargs)
        except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
            if self.__dict__["_fullgraph"]:
                raise
            for m, d in saved:  # Python side effects of the failed trace
                m.__dict__.clear()
                m.__dict__.update(d)
            if _versions(modules, args, kwargs) != versions:
                raise RuntimeError(
                    "compile: the forward could not be traced "
                    f"({type(e).__name__}: {e}) after it had written tensors in place; it is "
                    "not run again (compile it with backend='eager')"
                ) from e
            out = self._orig_mod(*args, **kwargs)  # the forward's own errors come from here
            self._eager_from_now(e)
            return out
        if tuple(_module_summary(m) for m in modules) != before:
            # Python side effects: this call's happened once (the trace ran the forward);
            # a replay would not repeat them.
            self._eager_from_now(
                RuntimeError(
                    "compile: the forward changes module attributes (Python side effects a "
                    "replay would not repeat); running eagerly"
                )
            )
            return out
        graphs[before] = graph
        return out


def _versions(modules, args, kwargs):
    ts = [t for m in modules for t in itertools.chain(m._parameters.values(), m._buffers.values())]
    ts += [a for a in itertools.chain(args, kwargs.values()) if isinstance(a, Tensor)]
    return tuple(t._version if t is not None else None for t in ts)


class _CompiledFunction:
    def __init__(self, fn, **options):
        self._module = OptimizedModule(_FunctionModule(fn), function=fn, **options)
        self._module.eval()
        self.__wrapped__ = fn
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            if hasattr(fn, attr):
                setattr(self, attr, getattr(fn, attr))

    @property
    def compile_error(self):
        return self._module.compile_error

    def __call__(self, *args, **kwargs):
        return self._module(*args, **kwargs)

    def __deepcopy__(self, memo):
        return _CompiledFunction(
            self.__wrapped__,
            fullgraph=self._module.__dict__["_fullgraph"],
            backend=self._module.__dict__["_backend"],
        )


class CompiledForward:
    """What nn.Module.compile() puts in a module's ``forward``: the class's forward of that
    module, compiled (oneflow.compile of the bound method). The module's own calls and hooks
    stay eager; copies and pickles of the module get a compiled forward of their own."""

    def __init__(self, module, options):
        self._options = dict(options)
        bound = type(module).forward.__get__(module)
        self._compiled = compile(bound, **self._options)
        self.__wrapped__ = bound

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    @property
    def compile_error(self):
        return getattr(self._compiled, "compile_error", None)

    def __reduce__(self):
        return (CompiledForward, (self.__wrapped__.__self__, self._options))

    def __deepcopy__(self, memo):
        import copy

        return CompiledForward(copy.deepcopy(self.__wrapped__.__self__, memo), self._options)


def compile(
    model=None,
    *,
    fullgraph=False,
    dynamic=None,
    backend="inductor",
    mode=None,
    options=None,
    disable=False,
):
    """torch.compile: an OptimizedModule for a module, a compiled callable for a function, a
    decorator when called without one. See the module's docstring for what compiles."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if callable(backend):
        raise NotImplementedError(
            "compile: custom backends take PyTorch's FX graphs, which oneflow does not build"
        )
    if backend not in _BACKENDS:
        raise ValueError(f"compile: unknown backend {backend!r}")

    def wrap(m):
        if disable or getattr(m, "_oneflow_compile_disabled", False):  # compiler.disable
            return m
        if isinstance(m, Module):
            return OptimizedModule(m, fullgraph=fullgraph, backend=backend)
        if not callable(m):
            raise RuntimeError("compile: the model must be a Module or a callable")
        return _CompiledFunction(m, fullgraph=fullgraph, backend=backend)

    return wrap if model is None else wrap(model)
