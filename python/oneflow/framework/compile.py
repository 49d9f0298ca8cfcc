"""oneflow.compile: PyTorch's torch.compile entry point on oneflow's graph compiler.

A compiled module (or function) runs as nn.Graph plans while gradients are off (under no_grad
or inference_mode, modules in eval mode): the forward is traced once per input signature and
replayed (oneflow's compiled path, with its plan cache and stale-plan checks). While gradients
are recorded, and for modules in training mode, it runs eagerly: an nn.Graph compiles a whole
training step (forward, backward and optimizer together), which torch.compile's module form
does not express. A forward that cannot be traced (one that reads tensor values on the host,
takes arguments nn.Graph cannot, ...) runs eagerly from then on, its reason kept in
``compile_error``; with ``fullgraph=True`` the tracing error is raised instead (PyTorch's graph
break rule). ``backend="eager"`` never compiles. ``mode``, ``dynamic`` and ``options`` are
accepted and not used. State dicts carry PyTorch's ``_orig_mod.`` prefix."""

import oneflow
from oneflow.nn.modules.module import Module

_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "onnxrt", "tvm", "openxla")


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


class OptimizedModule(Module):
    """The module compile() returns for a module: calls go to ``_orig_mod`` (attributes too)."""

    def __init__(self, mod, *, fullgraph=False, backend="inductor"):
        super().__init__()
        self._orig_mod = mod
        self.__dict__.update(_fullgraph=fullgraph, _backend=backend, _graph=None)
        self.__dict__["compile_error"] = None

    def _compiled(self):
        return (
            self.__dict__["_backend"] != "eager"
            and self.__dict__["compile_error"] is None
            and not oneflow.is_grad_enabled()
            and not self._orig_mod.training
            and not oneflow._oneflow_internal._graph_tracing()
        )

    def forward(self, *args, **kwargs):
        if not self._compiled():
            return self._orig_mod(*args, **kwargs)
        graph = self.__dict__["_graph"]
        if graph is None:
            graph = self.__dict__["_graph"] = _Forward(self._orig_mod)
        try:
            return graph(*args, **kwargs)
        except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
            if self.__dict__["_fullgraph"]:
                raise
            # Not traceable: eager from now on (the eager call raises the error if it is the
            # forward's own).
            self.__dict__["compile_error"] = e
            self.__dict__["_graph"] = None
            return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"


class _CompiledFunction:
    def __init__(self, fn, **options):
        self._module = OptimizedModule(_FunctionModule(fn), **options)
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
    if not (callable(backend) or backend in _BACKENDS):
        raise ValueError(f"oneflow.compile: unknown backend {backend!r}")
    backend = backend if isinstance(backend, str) else "inductor"

    def wrap(m):
        if disable:
            return m
        if isinstance(m, Module):
            return OptimizedModule(m, fullgraph=fullgraph, backend=backend)
        if not callable(m):
            raise RuntimeError("compile: the model must be a Module or a callable")
        return _CompiledFunction(m, fullgraph=fullgraph, backend=backend)

    return wrap if model is None else wrap(model)
