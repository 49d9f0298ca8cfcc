"""oneflow._dynamo (torch._dynamo): the names training scripts touch around torch.compile.

oneflow.compile traces with nn.Graph rather than a bytecode tracer, so these map onto it:
``disable``, ``reset``, ``is_compiling``, ``allow_in_graph`` and ``assume_constant_result`` are
oneflow.compiler's; ``optimize(backend)`` is oneflow.compile as a decorator (``nopython`` is
``fullgraph``); ``config`` holds PyTorch's settings, of which ``cache_size_limit`` (plans per
compiled object before it runs eagerly) is read by oneflow.compile. A forward that cannot be
traced always falls back to eager execution (``suppress_errors``' behaviour), except under
``fullgraph=True``. ``mark_dynamic`` and its relatives have nothing to mark: every input
signature gets a plan of its own."""

from oneflow import compiler as _compiler
from oneflow._dynamo import config, eval_frame  # noqa: F401

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "graph_break",
    "is_compiling",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "maybe_mark_dynamic",
    "optimize",
    "reset",
]

allow_in_graph = _compiler.allow_in_graph
assume_constant_result = _compiler.assume_constant_result
disable = _compiler.disable
is_compiling = _compiler.is_compiling
list_backends = _compiler.list_backends
reset = _compiler.reset


def graph_break():
    """Marks where PyTorch's tracer splits the graph; nothing to do when running eagerly (a
    forward traced by oneflow.compile is traced whole)."""


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False):
    """A decorator compiling its function or module with oneflow.compile."""
    import oneflow

    def wrap(fn):
        return oneflow.compile(
            fn, backend=backend, fullgraph=nopython, dynamic=dynamic, disable=disable
        )

    return wrap


def mark_dynamic(t, index, *, min=None, max=None):
    """Nothing to mark: each input signature is traced into its own plan."""


def maybe_mark_dynamic(t, index):
    """Nothing to mark: each input signature is traced into its own plan."""


def mark_static(t, index=None):
    """Nothing to mark: each input signature is traced into its own plan."""
