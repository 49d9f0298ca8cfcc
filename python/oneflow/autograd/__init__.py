"""oneflow.autograd: backward, grad, and the grad-mode switches."""

import functools

from oneflow._oneflow_internal import autograd as _engine


def _as_list(x):
    if x is None:
        return None
    return [x] if not isinstance(x, (list, tuple)) else list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    if retain_graph is None:
        retain_graph = create_graph
    _engine.backward(_as_list(tensors), _as_list(grad_tensors), retain_graph, create_graph)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=False,
):
    if retain_graph is None:
        retain_graph = create_graph
    return _engine.grad(
        _as_list(outputs),
        _as_list(inputs),
        _as_list(grad_outputs),
        retain_graph,
        create_graph,
        allow_unused,
    )


def is_grad_enabled():
    return _engine.is_grad_enabled()


class _GradModeContext:
    """Base of the grad-mode context managers; also usable as decorators."""

    _enabled = True

    def __enter__(self):
        self._prev = _engine.is_grad_enabled()
        _engine.set_grad_enabled(self._enabled)
        return self

    def __exit__(self, *exc):
        _engine.set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    _enabled = False


class enable_grad(_GradModeContext):
    _enabled = True


class inference_mode(_GradModeContext):
    def __init__(self, mode=True):
        self._enabled = not mode

    def __call__(self, fn):
        mode = not self._enabled

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper


class set_grad_enabled(_GradModeContext):
    def __init__(self, mode):
        self._enabled = bool(mode)
        self._prev = _engine.is_grad_enabled()
        _engine.set_grad_enabled(self._enabled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _engine.set_grad_enabled(self._prev)
        return False
