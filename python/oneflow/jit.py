"""oneflow.jit: the parts of torch.jit that model code calls outside TorchScript. Nothing here
scripts or traces: is_scripting() and is_tracing() are False, the decorators return what they
decorate, fork runs its function at once and hands back a completed future. script, trace,
save and load raise NotImplementedError: TorchScript is not supported (oneflow.compile and
nn.Graph compile models)."""

import typing

__all__ = [
    "Final",
    "annotate",
    "export",
    "fork",
    "ignore",
    "is_scripting",
    "is_tracing",
    "load",
    "save",
    "script",
    "trace",
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


def _not_supported(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(
            f"oneflow.jit.{name}: TorchScript is not supported; compile models with "
            "oneflow.compile or nn.Graph"
        )

    fn.__name__ = name
    return fn


script = _not_supported("script")
trace = _not_supported("trace")
trace_module = _not_supported("trace_module")
save = _not_supported("save")
load = _not_supported("load")
