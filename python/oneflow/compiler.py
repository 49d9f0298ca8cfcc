"""oneflow.compiler (torch.compiler): compile, and the markers model code uses around it."""

import functools

import oneflow._oneflow_internal as _internal

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "list_backends",
    "reset",
    "set_stance",
]


def compile(*args, **kwargs):
    from oneflow.framework.compile import compile as _compile

    return _compile(*args, **kwargs)


def is_compiling():
    """True while oneflow.compile or nn.Graph traces a forward."""
    return bool(_internal._graph_tracing())


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive=True, *, reason=None):
    """Marks fn to run eagerly: oneflow.compile returns a disabled function or module as it is.
    (A disabled function called inside a traced forward is traced with it.)"""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    try:
        fn._oneflow_compile_disabled = True
    except AttributeError:
        pass
    return fn


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


# The backends oneflow.compile takes, with PyTorch's tags of them.
_BACKEND_TAGS = {"aot_eager": ("debug",), "cudagraphs": (), "eager": ("debug",), "inductor": ()}


def list_backends(exclude_tags=("debug", "experimental")):
    """The names of the backends compile() accepts, without those tagged with one of
    `exclude_tags` (None: all of them)."""
    excluded = set(exclude_tags or ())
    return sorted(n for n, tags in _BACKEND_TAGS.items() if not excluded.intersection(tags))


def reset():
    """Compiled plans live on their compiled objects; nothing global to clear."""


def cudagraph_mark_step_begin():
    """Marks the start of an inference or training step for PyTorch's CUDA graph trees; oneflow
    does not replay compiled code through CUDA graphs: nothing to mark."""


# The stances compiled calls follow (set_stance): (stance, force_backend).
STANCES = (
    "default",
    "force_eager",
    "eager_on_recompile",
    "fail_on_recompile",
    "eager_then_compile",
    "aot_eager_then_compile",
)
_stance = ["default", None]


class set_stance:
    """Sets how compiled modules and functions run, as a function, context manager or decorator
    (torch.compiler.set_stance): "default"; "force_eager" (they run eagerly); "eager_on_recompile"
    (a call that would compile a new plan for changed module state runs eagerly instead);
    "fail_on_recompile" (such a call raises RuntimeError); "eager_then_compile" and
    "aot_eager_then_compile" (the first call of each compiled object runs eagerly).
    `force_backend` (with "default") makes every compiled object use that backend. A name
    that is not a stance raises RuntimeError at the next compiled call, as PyTorch's."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = (stance, force_backend)
        self.prev = _set(self.stance)

    def __call__(self, fn):
        _set(self.prev)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def __enter__(self):
        _set(self.stance)

    def __exit__(self, *exc):
        _set(self.prev)

    def clone(self):
        stance = type(self).__new__(type(self))
        stance.stance, stance.prev = self.stance, _stance_now()
        return stance


def _stance_now():
    return tuple(_stance)


def _set(stance):
    if is_compiling():
        raise RuntimeError("attempted to set_stance in a torch.compile region")
    prev = _stance_now()
    _stance[:] = stance
    return prev
