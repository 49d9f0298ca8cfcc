"""oneflow.amp: automatic mixed precision, as torch.amp.

`autocast(device_type, dtype=None, enabled=True, cache_enabled=None)` runs, inside its block, the
ops PyTorch's autocast runs in lower precision (matmul, linear, convolutions) on float16 or
bfloat16 inputs, and the losses (and on CUDA softmax, log_softmax and the norms) in float32; the
casts are differentiable, so float32 parameters get float32 gradients. The per-op casts live in
the C++ functional layer (`oneflow/core/functional/autocast.h`). `GradScaler` scales the loss so
that small float16 gradients do not flush to zero, unscales the gradients before the optimizer
step, skips steps whose gradients hold inf or NaN, and adapts the scale. Given to an nn.Graph
(`set_grad_scaler`), a scaler keeps its scale and growth tracker in 0-d tensors on the
parameters' device, which the compiled program updates (no host read per step); `get_scale()`
and `state_dict()` then read them. `StaticGradScaler` is OneFlow's fixed scale for graphs.
"""

import functools
import threading

import oneflow
import oneflow._oneflow_internal as _internal


def _device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(
            f"autocast: expected `device_type` of type `str`, got: `{type(device_type)}`"
        )
    if device_type not in ("cpu", "cuda"):
        raise RuntimeError(
            f"autocast: device type {device_type!r} is not supported (expected 'cpu' or 'cuda')"
        )
    return device_type


def is_autocast_available(device_type):
    """Whether autocast supports `device_type` (a device type string): "cpu" and "cuda"."""
    from oneflow.framework.toplevel_extra import _device_type as _parse

    if not isinstance(device_type, str):
        raise TypeError(
            "is_autocast_available(): argument 'device_type' (position 1) must be str, not "
            f"{type(device_type).__name__}"
        )
    return _parse(device_type) in ("cpu", "cuda")


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for `device_type` on this thread."""
    return _internal._C._autocast_get(_device_type(device_type))[0]


def get_autocast_dtype(device_type):
    """The lower-precision dtype autocast uses for `device_type` on this thread."""
    return _internal._C._autocast_get(_device_type(device_type))[1]


class autocast:
    """Context manager and decorator: ops in its block run in mixed precision on `device_type`.

    dtype defaults to the device's current autocast dtype (float16 on CUDA and bfloat16 on the
    CPU unless an enclosing block set another), as PyTorch's; a dtype other than float16 and
    bfloat16, or CUDA without a device, warns and disables it, as PyTorch;
    `cache_enabled` is accepted (PyTorch caches the casts of leaf weights within the block; here
    each op casts its inputs)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        import warnings

        self.device_type = _device_type(device_type)
        self.device = self.device_type
        if dtype is None:  # the current one (float16 on CUDA, bfloat16 on the CPU at first)
            dtype = get_autocast_dtype(self.device_type)
        enabled = bool(enabled)
        if enabled and self.device_type == "cuda" and not oneflow.cuda.is_available():
            warnings.warn(
                "User provided device_type of 'cuda', but CUDA is not available. Disabling",
                stacklevel=2,
            )
            enabled = False
        if enabled and dtype not in (oneflow.float16, oneflow.bfloat16):
            warnings.warn(
                f"In {self.device_type.upper()} autocast, but the target dtype is not "
                "supported. Disabling autocast.",
                stacklevel=2,
            )
            enabled = False
        self.fast_dtype = dtype
        self._enabled = enabled
        self._cache_enabled = cache_enabled
        self._saved = []

    def __enter__(self):
        self._saved.append(_internal._C._autocast_get(self.device_type))
        _internal._C._autocast_set(self.device_type, self._enabled, self.fast_dtype)
        return self

    def __exit__(self, exc_type, exc, tb):
        enabled, dtype = self._saved.pop()
        _internal._C._autocast_set(self.device_type, enabled, dtype)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)

        return wrapper


# ---- the autocast state as functions (torch.set_autocast_enabled and the legacy forms) ----


def set_autocast_enabled(device_type, enabled=None):
    """set_autocast_enabled(device_type, enabled), or the legacy set_autocast_enabled(enabled)
    for CUDA: turns autocast on or off for this thread without a block."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    device_type = _device_type(device_type)
    _internal._C._autocast_set(device_type, bool(enabled), get_autocast_dtype(device_type))


def set_autocast_dtype(device_type, dtype):
    device_type = _device_type(device_type)
    _internal._C._autocast_set(device_type, is_autocast_enabled(device_type), dtype)


def _deprecated(old, new):
    import warnings

    warnings.warn(
        f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, 3
    )


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


_cache = {"enabled": True}
_nesting = threading.local()


def is_autocast_cache_enabled():
    return _cache["enabled"]


def set_autocast_cache_enabled(enabled):
    _cache["enabled"] = bool(enabled)


def clear_autocast_cache():
    """Nothing to clear: each op casts its inputs (no cache of cast weights is kept)."""


def autocast_increment_nesting():
    _nesting.depth = getattr(_nesting, "depth", 0) + 1
    return _nesting.depth


def autocast_decrement_nesting():
    _nesting.depth = getattr(_nesting, "depth", 0) - 1
    return _nesting.depth


# ---- custom autograd Functions under autocast (torch.amp.custom_fwd / custom_bwd) ----


def _cast(value, device_type, dtype):
    if isinstance(value, oneflow.Tensor):
        if value.is_floating_point() and value.device.type == device_type:
            return value.to(dtype)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates a custom Function's forward: with cast_inputs, inside an autocast block the
    forward runs with autocast off on its floating inputs cast to cast_inputs; without, it runs
    under the caller's autocast state, which custom_bwd then gives the backward."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    device_type = _device_type(device_type)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(
                *_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs)
            )

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates a custom Function's backward: it runs under the autocast state its forward
    ran under (custom_fwd)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    device_type = _device_type(device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd


class GradScaler:
    """Loss scaling for float16 training, as torch.amp.GradScaler.

    `scale(loss)` multiplies by the scale; `unscale_(optimizer)` divides the optimizer's
    gradients by it and notes whether any is inf or NaN; `step(optimizer)` unscales if needed
    and runs the optimizer's step unless a gradient was not finite; `update()` halves the scale
    (backoff_factor) after a skipped step and doubles it (growth_factor) after `growth_interval`
    steps in a row without one. On a CUDA scaler without a CUDA device, as PyTorch, it warns and
    does nothing (every method passes its argument through)."""

    def __init__(
        self,
        device="cuda",
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        assert growth_factor > 1.0, "The growth factor must be > 1.0."
        assert backoff_factor < 1.0, "The backoff factor must be < 1.0."
        self._device = str(device)
        if enabled and self._device.startswith("cuda") and not oneflow.cuda.is_available():
            import warnings

            warnings.warn(
                "oneflow.amp.GradScaler is enabled, but CUDA is not available. Disabling.",
                stacklevel=2,
            )
            enabled = False
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer = {}  # id(optimizer) -> {"unscaled": bool, "found_inf": bool}
        # False until scale() (or load_state_dict, or a graph) first uses the scale: as
        # PyTorch's lazily made scale, unscale_/step/update refuse to run before that.
        self._scale_used = False

    def _check_scale(self, funcname):
        if not self.__dict__.get("_scale_used", True):
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  This may indicate your script did "
                "not use scaler.scale(loss or outputs) earlier in the iteration."
            )

    def is_enabled(self):
        return self._enabled

    def _sync_from_graph(self):
        """Takes back the scale and tracker a graph's program has been updating."""
        tensors = self.__dict__.get("_graph_tensors")
        if tensors is not None:
            self._scale = float(tensors[0].item())
            self._growth_tracker = int(tensors[1].item())

    def _graph_state(self, device):
        """(scale, growth tracker) as float64 0-d tensors on `device` (the host keeps Python
        floats: the same roundings), created once from the host values; a graph captures and
        updates them."""
        self._scale_used = True  # the graph's program scales the loss
        tensors = self.__dict__.get("_graph_tensors")
        if tensors is None or tensors[0].device != device:
            self._sync_from_graph()
            tensors = (
                oneflow.full((), self._scale, dtype=oneflow.float64, device=device),
                oneflow.full((), float(self._growth_tracker), dtype=oneflow.float64, device=device),
            )
            self.__dict__["_graph_tensors"] = tensors
        return tensors

    def get_scale(self):
        self._sync_from_graph()
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def scale(self, outputs):
        """outputs (a tensor or nested tuples/lists of tensors) times the scale."""
        if not self._enabled:
            return outputs
        self._scale_used = True
        self._sync_from_graph()
        if isinstance(outputs, oneflow.Tensor):
            # a float32 0-d factor, as PyTorch's: a 0-d float16 loss becomes float32 instead
            # of overflowing
            return outputs * oneflow.full((), self._scale, device=outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(
            id(optimizer), {"unscaled": False, "found_inf": False, "stepped": False, "grads": 0}
        )

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale, in place (once per step)."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        st = self._state(optimizer)
        if st["unscaled"]:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        inv = 1.0 / self._scale
        found, grads = False, 0
        with oneflow.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if "_one_embedding" in p.__dict__:
                        # the table's gradients wait in its store
                        found = not oneflow.one_embedding._unscale_pending(p, inv) or found
                    if p.grad.dtype == oneflow.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    p.grad.mul_(inv)
                    found = found or not bool(oneflow.isfinite(p.grad).all())
                    grads += 1
        st["unscaled"] = True
        st["found_inf"] = found
        st["grads"] = grads

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(*args, **kwargs) on unscaled gradients, skipped if one is not
        finite; returns its result (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale("step")
        st = self._state(optimizer)
        if st["stepped"]:
            raise RuntimeError("step() has already been called since the last update().")
        if not st["unscaled"]:
            self.unscale_(optimizer)
        assert st["grads"] > 0, "No inf checks were recorded for this optimizer."
        st["stepped"] = True
        if st["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Adapts the scale after the step(s) since the last update (or sets `new_scale`)."""
        if not self._enabled:
            return
        self._check_scale("update")
        self._sync_from_graph()
        if new_scale is not None:
            self._scale = float(
                new_scale.item() if isinstance(new_scale, oneflow.Tensor) else new_scale
            )
        else:
            found = any(st["found_inf"] for st in self._per_optimizer.values())
            if found:
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}
        self._push_to_graph()

    def _push_to_graph(self):
        tensors = self.__dict__.get("_graph_tensors")
        if tensors is not None:  # the graph's copies (captured by its plans) take the values
            tensors[0].fill_(self._scale)
            tensors[1].fill_(float(self._growth_tracker))

    def state_dict(self):
        if not self._enabled:
            return {}
        self._sync_from_graph()
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled "
                "instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
        self._push_to_graph()


class StaticGradScaler(GradScaler):
    """OneFlow's fixed loss scale for nn.Graph (`graph.set_grad_scaler`): the loss gradient is
    multiplied by `scale_factor` and the gradients divided by it before the update; the scale
    never changes and no step is skipped. Eagerly it acts as a GradScaler whose update() keeps
    the scale."""

    def __init__(self, scale_factor):
        if not float(scale_factor) > 0:
            raise ValueError(f"StaticGradScaler: scale_factor must be positive, got {scale_factor}")
        super().__init__(device="cpu", init_scale=float(scale_factor))

    def update(self, new_scale=None):
        self._per_optimizer = {}
