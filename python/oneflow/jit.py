"""oneflow.jit: the parts of torch.jit that model code calls, without TorchScript.

Nothing is compiled: ``script(obj)`` returns `obj` unchanged (a function, a module or a class),
so helpers decorated with ``@jit.script`` run as ordinary Python. ``trace(func, example_inputs)``
calls `func` once on the example inputs (so a wrong input raises there, as in PyTorch) and
returns `func` itself; ``trace_module(mod, {"method": inputs})`` calls each named method once and
returns `mod`. ``script_if_tracing``, ``script_method``, ``interface``, ``ignore``, ``unused``
and ``export`` return what they decorate. ``freeze`` (of a module in eval mode) and
``optimize_for_inference`` (which puts the module in eval mode) return the module.
``is_scripting()`` and ``is_tracing()`` are False, also while trace runs its example. ``fork``
runs its function at once and hands back a completed future.

``save`` and ``load`` raise NotImplementedError: there is no TorchScript serialisation (save a
``state_dict`` with ``oneflow.save``; oneflow.compile and nn.Graph compile models).
``ScriptModule``, ``ScriptFunction``, ``RecursiveScriptModule``, ``TracedModule`` and
``TopLevelTracedModule`` exist for isinstance checks: nothing script or trace returns is an
instance of them."""

import typing

import oneflow
from oneflow.nn.modules.module import Module

__all__ = [
    "Final",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "TopLevelTracedModule",
    "TracedModule",
    "TracerWarning",
    "annotate",
    "export",
    "fork",
    "freeze",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "load",
    "optimize_for_inference",
    "save",
    "script",
    "script_if_tracing",
    "script_method",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

Final = typing.Final


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


def _decorator(fn=None, **kwargs):
    if fn is None or isinstance(fn, bool):
        return lambda f: f  # @ignore(drop=True)
    return fn


def ignore(drop=False, **kwargs):
    return _decorator(drop, **kwargs)


def unused(fn):
    return fn


def export(fn):
    return fn


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """`obj` itself: functions, modules and classes run as Python."""
    return obj


def script_if_tracing(fn):
    return fn


def script_method(fn):
    return fn


def interface(obj):
    return obj


def _run_example(fn, example_inputs, example_kwarg_inputs):
    if example_kwarg_inputs is not None:
        if not isinstance(example_kwarg_inputs, dict):
            raise TypeError("trace: example_kwarg_inputs must be a dict of keyword arguments")
        return fn(**example_kwarg_inputs)
    if example_inputs is None:
        raise TypeError("trace: example_inputs (or example_kwarg_inputs) must be given")
    if isinstance(example_inputs, oneflow.Tensor):
        return fn(example_inputs)
    return fn(*example_inputs)


def trace(
    func,
    example_inputs=None,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_kwarg_inputs=None,
    _store_inputs=True,
):
    """`func` itself, after one call on `example_inputs` (a tensor or a tuple of arguments) or
    on `example_kwarg_inputs` (a dict of keyword arguments)."""
    _run_example(func, example_inputs, example_kwarg_inputs)
    return func


def trace_module(
    mod,
    inputs,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_inputs_is_kwarg=False,
    _store_inputs=True,
):
    """`mod` itself, after calling each method named in `inputs` (method name -> example
    inputs) once."""
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            _run_example(method, None, example)
        else:
            _run_example(method, example, None)
    return mod


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """`mod` itself; as PyTorch, only a module in eval mode can be frozen."""
    if getattr(mod, "training", False):
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. Please call "
            ".eval() on your module before freezing."
        )
    return mod


def optimize_for_inference(mod, other_methods=None):
    """`mod` itself, in eval mode."""
    if isinstance(mod, Module):
        mod.eval()
    return mod


class Future:
    """The result of fork(): already computed."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def done(self):
        return True

    def value(self):
        return self._value


def fork(func, *args, **kwargs):
    return Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


class ScriptModule(Module):
    """PyTorch's compiled-module class; script and trace return plain modules, which are not
    ScriptModules. A model written as a subclass (with ``@jit.script_method`` methods) runs as
    an ordinary Module."""


class RecursiveScriptModule(ScriptModule):
    pass


class TracedModule(ScriptModule):
    pass


class TopLevelTracedModule(TracedModule):
    pass


class ScriptFunction:
    """PyTorch's compiled-function class; nothing here is an instance of it."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("ScriptFunction cannot be constructed: there is no TorchScript")


class TracerWarning(Warning):
    pass


def _not_supported(name, advice):
    def fn(*args, **kwargs):
        raise NotImplementedError(
            f"oneflow.jit.{name}: TorchScript serialisation is not supported; {advice}"
        )

    fn.__name__ = name
    return fn


save = _not_supported(
    "save", "save the model's state_dict with oneflow.save (or the module itself)"
)
load = _not_supported(
    "load", "rebuild the model in Python and load its state_dict saved with oneflow.save"
)
