"""oneflow.compiler (torch.compiler): compile, and the markers model code uses around it."""

import functools

import oneflow._oneflow_internal as _internal

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "list_backends",
    "reset",
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


def list_backends(exclude_tags=("debug", "experimental")):
    return ["cudagraphs", "inductor"]


def reset():
    """Compiled plans live on their compiled objects; nothing global to clear."""
