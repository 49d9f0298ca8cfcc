"""oneflow.autograd: backward, grad, and the grad-mode switches."""

import collections.abc
import functools
import inspect
import sys
import types
import warnings

from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import Tensor as _Tensor
from oneflow._oneflow_internal import autograd as _engine


def _as_list(x):
    if x is None:
        return None
    return [x] if not isinstance(x, (list, tuple)) else list(x)


def _grads_like(outputs, grads):
    """The gradients seeding a backward pass, each cast to its output's dtype as the gradients
    flowing through the graph are."""
    grads = _as_list(grads)
    if grads is None:
        return None
    return [
        g.to(outputs[i].dtype)
        if i < len(outputs) and isinstance(g, _Tensor) and g.dtype != outputs[i].dtype
        else g
        for i, g in enumerate(grads)
    ]


# Functions queued by gradient hooks during a backward pass (_queue_callback), run when it ends.
_callbacks = []


def _queue_callback(fn):
    """Runs fn() once the current backward pass has finished (every gradient accumulated):
    DistributedDataParallel finishes its gradient reductions there."""
    _callbacks.append(fn)


# The loss scale of an nn.Graph tracing build() with a grad scaler (graph.set_grad_scaler):
# backward() of one-element outputs without explicit gradients seeds them with it, which is how
# OneFlow's graphs scale the loss.
_graph_loss_scale = None


# backward() calls held back while an nn.Graph traces the micro-batches of a pipeline (their
# arguments, in call order), run after every micro-batch's forward; None: run at the call. Every
# process of the pipeline holds them back alike: the messages between two stages pair up by
# their order, so both must issue them in the same order.
_deferred_backwards = None


# How many backward() calls are running (post-accumulate-grad hooks queue only inside one).
_backward_depth = 0


def _accumulate_into(inputs, grads, create_graph):
    """backward(inputs=...): each input's gradient summed into its .grad, as a leaf's."""
    for t, g in zip(inputs, grads):
        if g is None:
            continue
        if t.grad is None:
            t.grad = g if create_graph else g.detach()
        elif create_graph:
            t.grad = t.grad + g
        else:
            with no_grad():
                t.grad.add_(g)


def _scale_like(t, scale):
    """The loss scale as the seed gradient of `t`: for a global loss, a broadcast global tensor
    on its placement (every rank holds the same scale: nothing is sent)."""
    if not t.is_global or scale.is_global:
        return scale
    kind, ranks = _internal._global_placement(t)
    return _internal._global_from_local(
        scale, kind, list(ranks), "broadcast", -1, check_meta=False, shape=list(scale.shape)
    )


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    global _backward_depth
    if _deferred_backwards is not None:
        _deferred_backwards.append((tensors, grad_tensors, retain_graph, create_graph, inputs))
        return
    if retain_graph is None:
        retain_graph = create_graph
    tensors = _as_list(tensors)
    if inputs is not None:
        inputs = [inputs] if isinstance(inputs, _Tensor) else list(inputs)
        if not inputs:
            raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
    if _graph_loss_scale is not None:
        if grad_tensors is None:
            if all(isinstance(t, _Tensor) and t.numel() == 1 for t in tensors):
                # copies: a seed may become a .grad that the unscaling divides in place
                grad_tensors = [
                    _scale_like(t, _graph_loss_scale.to(t.dtype).reshape(t.shape).clone())
                    for t in tensors
                ]
        else:  # explicit gradients are scaled too: the update divides every gradient
            grad_tensors = [
                g * _graph_loss_scale.to(g.dtype) if isinstance(g, _Tensor) else g
                for g in _as_list(grad_tensors)
            ]
    _backward_depth += 1
    try:
        if inputs is None:
            _engine.backward(
                tensors, _grads_like(tensors, grad_tensors), retain_graph, create_graph
            )
        else:
            grads = grad(
                tensors,
                inputs,
                grad_tensors,
                retain_graph=retain_graph,
                create_graph=create_graph,
                allow_unused=True,
            )
            _accumulate_into(inputs, grads, create_graph)
    finally:
        _backward_depth -= 1
        # Callbacks run even when backward failed, so that state they reset stays consistent;
        # one queued by a callback runs too.
        while _callbacks:
            _callbacks.pop(0)()


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    *,
    materialize_grads=False,
):
    """The gradients of `outputs` with respect to `inputs` (a tensor, a sequence, or a dict:
    then a dict by the same keys), PyTorch's torch.autograd.grad. With is_grads_batched the
    first dim of every grad_output is a batch of vectors (one backward per entry here);
    materialize_grads gives zeros instead of None for unused inputs."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    keys = None
    if type(inputs) is dict:
        keys, inputs = list(inputs), list(inputs.values())
    elif isinstance(inputs, collections.abc.Mapping):
        raise TypeError(
            f"`inputs` argument to `grad()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "oneflow.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    if retain_graph is None:
        retain_graph = create_graph
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if is_grads_batched:
        result = _batched_grad(
            outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused
        )
    else:
        result = _engine.grad(
            outputs,
            inputs,
            _grads_like(outputs, grad_outputs),
            retain_graph,
            create_graph,
            allow_unused,
        )
    if materialize_grads:
        import oneflow

        result = tuple(oneflow.zeros_like(x) if g is None else g for g, x in zip(result, inputs))
    if keys is not None:
        return dict(zip(keys, result))
    return result


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """autograd.grad with a batch of grad_outputs along their first dim: one backward per
    entry, the gradients stacked."""
    import oneflow

    grads = _as_list(grad_outputs) if grad_outputs is not None else None
    if grads is None or any(g is None for g in grads):
        raise RuntimeError(
            "autograd.grad: is_grads_batched=True needs a batched grad_output for every output"
        )
    sizes = {g.shape[0] if g.ndim else None for g in grads}
    if len(sizes) != 1 or None in sizes:
        raise RuntimeError(
            "autograd.grad: with is_grads_batched=True every grad_output needs the same batch "
            f"size along its first dim, got {sorted(str(s) for s in sizes)}"
        )
    (n,) = sizes
    per_entry = []
    for i in range(n):
        last = i == n - 1
        per_entry.append(
            _engine.grad(
                outputs,
                inputs,
                [g[i] for g in grads],
                retain_graph if last else True,
                create_graph,
                allow_unused,
            )
        )
    result = []
    for k, x in enumerate(inputs):
        column = [entry[k] for entry in per_entry]
        if all(c is None for c in column):
            result.append(None)
        else:
            column = [oneflow.zeros_like(x) if c is None else c for c in column]
            result.append(oneflow.stack(column))
    return tuple(result)


def is_grad_enabled():
    return _engine.is_grad_enabled()


def _wrap_generator(ctx_factory, gen_fn):
    """Runs each resumption of the generator made by `gen_fn` inside a fresh context from
    `ctx_factory`, and restores the caller's mode at every yield."""

    @functools.wraps(gen_fn)
    def generator_context(*args, **kwargs):
        gen = gen_fn(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException:
                    with ctx_factory():
                        response = gen.throw(*sys.exc_info())
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator_context


class _DecoratorContextManager:
    """Base of the grad-mode context managers; an instance also decorates a function (or a
    generator function), which then runs in a fresh copy of the context on every call."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            cls = fn

            def fn(*args, **kwargs):
                return cls(*args, **kwargs)

        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self.clone, fn)
        ctx_factory = self.clone

        @functools.wraps(fn)
        def decorate_context(*args, **kwargs):
            with ctx_factory():
                return fn(*args, **kwargs)

        return decorate_context

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a decorator without the parentheses: ``@no_grad``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Context manager and decorator that turns gradient recording off."""

    def __enter__(self):
        self.prev = _engine.is_grad_enabled()
        _engine.set_grad_enabled(False)

    def __exit__(self, *exc):
        _engine.set_grad_enabled(self.prev)
        return False


class enable_grad(_NoParamDecoratorContextManager):
    """Context manager and decorator that turns gradient recording on."""

    def __enter__(self):
        self.prev = _engine.is_grad_enabled()
        _engine.set_grad_enabled(True)

    def __exit__(self, *exc):
        _engine.set_grad_enabled(self.prev)
        return False


class inference_mode(_DecoratorContextManager):
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

    def __exit__(self, *exc):
        _engine.set_grad_enabled(self._prev[0])
        _engine.set_inference_mode(self._prev[1])
        return False

    def clone(self):
        return self.__class__(self.mode)


def is_inference_mode_enabled():
    return _engine.is_inference_mode_enabled()


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode to `mode` as soon as it is called; as a context manager it restores the
    previous mode on exit, and as a decorator the function runs with `mode` while the mode
    outside is left as it was."""

    def __init__(self, mode):
        self.prev = _engine.is_grad_enabled()
        self.mode = bool(mode)
        _engine.set_grad_enabled(self.mode)

    def __call__(self, fn):
        _engine.set_grad_enabled(self.prev)
        return super().__call__(fn)

    def __enter__(self):
        _engine.set_grad_enabled(self.mode)

    def __exit__(self, *exc):
        _engine.set_grad_enabled(self.prev)
        return False

    def __repr__(self):
        return f"{type(self).__module__}.{type(self).__name__}(mode={self.mode})"

    def clone(self):
        return self.__class__(self.mode)


# ---- anomaly detection ------------------------------------------------------------------


def _anomaly_state():
    from oneflow._oneflow_internal import _anomaly_mode

    mode = _anomaly_mode()
    return mode != 0, mode == 1


def _set_anomaly(enabled, check_nan):
    from oneflow._oneflow_internal import _set_anomaly_mode

    _set_anomaly_mode(0 if not enabled else 1 if check_nan else 2)


def is_anomaly_enabled():
    return _anomaly_state()[0]


def is_anomaly_check_nan_enabled():
    return _anomaly_state()[1]


def set_anomaly_enabled(enabled, check_nan=True):
    _set_anomaly(bool(enabled), bool(check_nan))


class detect_anomaly(_DecoratorContextManager):
    """Context manager and decorator: backward checks every gradient a function returns and
    raises RuntimeError naming the function that returned NaN (with check_nan=True), as
    torch.autograd.detect_anomaly. Each gradient is waited for and scanned: slow, for debugging."""

    def __init__(self, check_nan=True):
        self.check_nan = bool(check_nan)
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self):
        self.prev = _anomaly_state()
        _set_anomaly(True, self.check_nan)

    def __exit__(self, *exc):
        _set_anomaly(*self.prev)
        return False

    def clone(self):
        return self.__class__(self.check_nan)


class set_detect_anomaly(_DecoratorContextManager):
    """Turns anomaly detection on or off as soon as it is called; as a context manager it
    restores the previous setting on exit (torch.autograd.set_detect_anomaly)."""

    def __init__(self, mode, check_nan=True):
        self.prev = _anomaly_state()
        self.mode, self.check_nan = bool(mode), bool(check_nan)
        _set_anomaly(self.mode, self.check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_anomaly(*self.prev)
        return False

    def clone(self):
        return self.__class__(self.mode, self.check_nan)


# ---- custom functions -------------------------------------------------------------------


def _version_of(t):
    try:
        return t._version
    except RuntimeError:  # inference tensors keep no version counter
        return None


class FunctionCtx:
    """The `ctx` of an autograd.Function: tensors saved for backward and flags."""

    def __init__(self):
        self._saved = ()
        self._saved_versions = ()
        self._name = "autograd.Function"
        self.needs_input_grad = ()
        self._non_differentiable = set()
        self._dirty = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self._saved = tuple(tensors)
        self._saved_versions = tuple(_version_of(t) if t is not None else None for t in tensors)

    @property
    def saved_tensors(self):
        for t, version in zip(self._saved, self._saved_versions):
            if version is not None and t._version != version:
                raise RuntimeError(
                    f"{self._name}: one of the variables needed for gradient computation has "
                    f"been modified by an inplace operation: [{str(t.dtype).split('.')[-1]} "
                    f"{tuple(t.shape)}] is at version {t._version}; expected version {version} "
                    "instead."
                )
        return self._saved

    def _record_saved_versions(self):
        self._saved_versions = tuple(_version_of(t) if t is not None else None for t in self._saved)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty = tuple(tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = value


def _is_setup_context_defined(fn):
    return fn is not Function.setup_context


class Function:
    """Subclass with static forward and backward(ctx, *grads); call with apply(). forward is
    either forward(ctx, *args), or forward(*args) together with setup_context(ctx, inputs,
    output)."""

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{type(self).__name__}: legacy autograd function with non-static forward method is "
            "not supported; expected a subclass with static forward and backward methods, "
            f"called as {type(self).__name__}.apply(...), got a call on an instance."
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for "
            "your custom autograd.Function to use it with backward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        name = cls.__name__ + "Backward"
        ctx = FunctionCtx()
        ctx._name = name
        with_setup_context = _is_setup_context_defined(cls.setup_context)
        if with_setup_context:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx.needs_input_grad = tuple(isinstance(a, _Tensor) and a.requires_grad for a in args)
        with no_grad():
            if with_setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        tracked = is_grad_enabled() and any(ctx.needs_input_grad)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if not tracked:
            return outputs
        out_ids = {id(o) for o in outs}
        for t in ctx._dirty:
            if id(t) not in out_ids:
                raise RuntimeError(
                    f"{name}: every tensor marked dirty in forward must be returned as an "
                    "output; got one that was not returned."
                )
            if t.is_leaf and t.requires_grad:
                raise RuntimeError(
                    f"{name}: a leaf Variable that requires grad has been used in an in-place "
                    "operation."
                )
        tensor_pos = [i for i, o in enumerate(outs) if isinstance(o, _Tensor)]
        inputs = [a if isinstance(a, _Tensor) and a.requires_grad else None for a in args]
        in_dtypes = [a.dtype if a is not None else None for a in inputs]
        is_tensor_input = [isinstance(a, _Tensor) for a in args]
        received = set()

        def backward(*grads):
            full = [None] * len(outs)
            for i, g in zip(tensor_pos, grads):
                if ctx.materialize_grads or i in received:
                    full[i] = g
            received.clear()
            result = cls.backward(ctx, *full)
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            n = len(args)
            if len(result) > n and all(g is None for g in result[n:]):
                result = result[:n]
            if len(result) != n:
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients "
                    f"(expected {n}, got {len(result)})"
                )
            for i, g in enumerate(result):
                if g is not None and not is_tensor_input[i]:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Tensor"
                    )
            # A gradient in another dtype than its input is cast to the input's (as PyTorch's
            # engine does: a forward that computed in float32 for a bfloat16 input).
            return tuple(
                None
                if inputs[i] is None
                else g.to(in_dtypes[i])
                if isinstance(g, _Tensor) and g.dtype != in_dtypes[i]
                else g
                for i, g in enumerate(result)
            )

        diff = [id(outs[i]) not in ctx._non_differentiable for i in tensor_pos]
        attached = _engine._attach_function(
            backward, name, inputs, [outs[i] for i in tensor_pos], diff
        )
        new = list(outs)
        dirty_ids = {id(t) for t in ctx._dirty}
        for i, t in zip(tensor_pos, attached):
            if not ctx.materialize_grads and t.requires_grad:
                t._register_hook(lambda g, i=i: received.add(i))
            if id(outs[i]) in dirty_ids and t.requires_grad:
                # The input modified in place is itself the output: its history continues
                # through this function.
                outs[i].copy_(t)
                t = outs[i]
            new[i] = t
        ctx._record_saved_versions()
        return new[0] if single else tuple(new)


# OneFlow's API names the ctx class by a path in the extension module,
# oneflow._oneflow_internal.autograd.Function.FunctionCtx; here the ctx is this Python class, and
# a namespace on the extension's autograd module (which has no Function of its own) points there.
if not hasattr(_engine, "Function"):
    _engine.Function = types.SimpleNamespace(FunctionCtx=FunctionCtx)


def once_differentiable(fn):
    """Decorates a Function's backward that cannot itself be differentiated: it runs without
    recording, and differentiating its result raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not is_grad_enabled():
            return outputs
        if not any(isinstance(a, _Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        pos = [i for i, o in enumerate(outs) if isinstance(o, _Tensor)]
        leaves = []
        for i in pos:
            leaf = outs[i].detach()
            leaf.requires_grad_(True)
            leaves.append(leaf)

        def fail(*grads):
            raise RuntimeError(
                "trying to differentiate twice a function that was marked with @once_differentiable"
            )

        attached = _engine._attach_function(
            fail, "DelayedError", leaves, leaves, [True] * len(leaves)
        )
        new = list(outs)
        for i, t in zip(pos, attached):
            new[i] = t
        return new[0] if single else tuple(new)

    return wrapper


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


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    gen_non_contig_grad_outputs=False,
    raise_exception=True,
    **kwargs,
):
    """gradcheck of the gradients: the vector-Jacobian product of `func` at `inputs` with
    `grad_outputs` (random in [-1, 1) when not given), checked against finite differences
    with respect to the inputs and the grad_outputs (second derivatives)."""
    import oneflow

    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    outs = func(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    diff_outs = [o for o in outs if isinstance(o, oneflow.Tensor) and o.requires_grad]
    if grad_outputs is None:
        grad_outputs = tuple(
            oneflow.testing.make_tensor(
                *o.shape, dtype=o.dtype, device=o.device, low=-1, high=1, requires_grad=True
            )
            for o in diff_outs
        )
    else:
        grad_outputs = (
            tuple(grad_outputs) if isinstance(grad_outputs, (list, tuple)) else (grad_outputs,)
        )
    n = len(inputs)
    diff_idx = [
        i for i, t in enumerate(inputs) if isinstance(t, oneflow.Tensor) and t.requires_grad
    ]

    def vjp(*args):
        with enable_grad():  # also under gradcheck's finite differences
            return _vjp(*args)

    def _vjp(*args):
        ins, gos = args[:n], args[n:]
        out = func(*ins)
        out = out if isinstance(out, tuple) else (out,)
        diff = [o for o in out if isinstance(o, oneflow.Tensor) and o.requires_grad]
        grads = grad(
            diff, [ins[i] for i in diff_idx], list(gos), create_graph=True, allow_unused=True
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        vjp, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
    )


def Variable(data, requires_grad=False, volatile=False):
    """The deprecated Variable wrapper: the tensor itself (with requires_grad set)."""
    if requires_grad:
        data.requires_grad_(True)
    return data


_multithreading = True


def is_multithreading_enabled():
    return _multithreading


class set_multithreading_enabled:
    """Accepted for PyTorch's API; oneflow's backward runs on the calling thread either way."""

    def __init__(self, mode):
        global _multithreading
        self.prev, _multithreading = _multithreading, bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _multithreading
        _multithreading = self.prev
        return False


from oneflow.autograd import function, functional, grad_mode, graph, profiler  # noqa: E402,F401
