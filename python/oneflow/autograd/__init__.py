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


class inference_mode:
    """Context manager and decorator: no autograd recording, and every tensor made inside is an
    inference tensor (``Tensor.is_inference()``), which outside inference mode cannot be modified
    in place or saved for backward. ``inference_mode(False)`` turns it off again inside.
    ``@inference_mode`` works with and without the parentheses."""

    def __new__(cls, mode=True):
        if callable(mode):  # used as @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self._prev = (_engine.is_grad_enabled(), _engine.is_inference_mode_enabled())
        _engine.set_grad_enabled(not self.mode)
        _engine.set_inference_mode(self.mode)
        return self

    def __exit__(self, *exc):
        _engine.set_grad_enabled(self._prev[0])
        _engine.set_inference_mode(self._prev[1])
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled():
    return _engine.is_inference_mode_enabled()


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


# ---- custom functions -------------------------------------------------------------------


class FunctionCtx:
    """The `ctx` of an autograd.Function: tensors saved for backward and flags."""

    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()
        self._non_differentiable = set()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self.saved_tensors = tuple(tensors)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call with apply()."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for "
            "your custom autograd.Function to use it with backward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        from oneflow._oneflow_internal import Tensor

        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            outputs = cls.forward(ctx, *args, **kwargs)
        tracked = is_grad_enabled() and any(ctx.needs_input_grad)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if not tracked:
            return outputs
        tensor_pos = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
        inputs = [a if isinstance(a, Tensor) and a.requires_grad else None for a in args]

        def backward(*grads):
            result = cls.backward(ctx, *grads)
            result = result if isinstance(result, tuple) else (result,)
            if len(result) < len(args):
                result = result + (None,) * (len(args) - len(result))
            return tuple(
                g if inputs[i] is not None else None for i, g in enumerate(result[: len(args)])
            )

        diff = [id(outs[i]) not in ctx._non_differentiable for i in tensor_pos]
        attached = _engine._attach_function(
            backward, cls.__name__ + "Backward", inputs, [outs[i] for i in tensor_pos], diff
        )
        new = list(outs)
        for i, t in zip(tensor_pos, attached):
            new[i] = t
        return new[0] if single else tuple(new)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **kwargs):
    """Compares the analytical gradients of `func` at `inputs` (float64 tensors that require
    grad) with central finite differences."""
    import numpy as np

    import oneflow

    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    diff_inputs = [t for t in inputs if isinstance(t, oneflow.Tensor) and t.requires_grad]

    def outputs_of(args):
        out = func(*args)
        return out if isinstance(out, tuple) else (out,)

    outs = outputs_of(inputs)
    # Analytical Jacobians first (the finite differences below modify the inputs in place).
    analytical = {}
    for k, out in enumerate(outs):
        if not out.requires_grad:
            continue
        n_out = out.numel()
        for xi, x in enumerate(diff_inputs):
            jac = np.zeros((x.numel(), n_out))
            for j in range(n_out):
                cot = oneflow.zeros(n_out, dtype=out.dtype)
                cot[j] = 1.0
                grads = grad(out, [x], cot.reshape(out.shape), retain_graph=True, allow_unused=True)
                if grads[0] is not None:
                    jac[:, j] = grads[0].numpy().reshape(-1)
            analytical[k, xi] = jac
    for (k, xi), jac in analytical.items():
        x = diff_inputs[xi]
        numerical = np.zeros_like(jac)
        base = x.detach().numpy().copy()
        for i in range(x.numel()):
            for sign in (1, -1):
                perturbed = base.copy().reshape(-1)
                perturbed[i] += sign * eps
                with no_grad():
                    x.copy_(oneflow.tensor(perturbed.reshape(base.shape), dtype=x.dtype))
                    value = outputs_of(inputs)[k].numpy().reshape(-1)
                numerical[i] += sign * value / (2 * eps)
        with no_grad():
            x.copy_(oneflow.tensor(base, dtype=x.dtype))
        if not np.allclose(jac, numerical, atol=atol, rtol=rtol):
            if raise_exception:
                raise RuntimeError(
                    f"gradcheck: Jacobian mismatch for output {k} with respect to an input of "
                    f"shape {tuple(x.shape)},\nnumerical:{numerical}\nanalytical:{jac}"
                )
            return False
    return True


from oneflow.autograd import functional  # noqa: E402,F401
