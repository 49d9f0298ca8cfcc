"""oneflow.utils.checkpoint: activation checkpointing (PyTorch's torch.utils.checkpoint).
``checkpoint(fn, *args)`` runs ``fn`` keeping none of the tensors its ops save for backward and
runs it again during backward to get them back, trading compute for memory.

- ``use_reentrant=False`` (PyTorch's recommended form): the forward runs under
  ``saved_tensors_hooks`` that keep an index per saved tensor; the first unpack in backward
  reruns ``fn`` once, under hooks that collect what it saves, and hands out the tensor with
  that index. Works with ``autograd.grad``, inputs that do not require grad, and nesting.
- ``use_reentrant=True`` (PyTorch's default, with its warning when not given): an
  autograd.Function that runs ``fn`` without grad and, in its backward, reruns it with grad
  and calls backward on the result. Gradients reach the tensor arguments and, through
  ``.grad``, the parameters ``fn`` uses.

Both restore the random state of the forward before the rerun (``preserve_rng_state``), so
dropout draws the same mask. Inside ``nn.Graph.build()`` the function runs as it is: gradients
are the same, and no memory is saved.
"""

import contextlib
import warnings

import oneflow
from oneflow.autograd.graph import saved_tensors_hooks

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential"]


def _cuda_devices(args):
    devices = set()
    for a in args:
        if isinstance(a, oneflow.Tensor) and a.device.type == "cuda":
            devices.add(a.device.index or 0)
    return sorted(devices)


class _RngState:
    """The CPU generator's state and that of the CUDA devices the arguments live on."""

    def __init__(self, args):
        self.cpu = oneflow.get_rng_state()
        self.devices = _cuda_devices(args)
        self.cuda = [oneflow.cuda.get_rng_state(f"cuda:{d}") for d in self.devices]

    @contextlib.contextmanager
    def restored(self):
        cpu = oneflow.get_rng_state()
        cuda = [oneflow.cuda.get_rng_state(f"cuda:{d}") for d in self.devices]
        oneflow.set_rng_state(self.cpu)
        for d, s in zip(self.devices, self.cuda):
            oneflow.cuda.set_rng_state(s, f"cuda:{d}")
        try:
            yield
        finally:
            oneflow.set_rng_state(cpu)
            for d, s in zip(self.devices, cuda):
                oneflow.cuda.set_rng_state(s, f"cuda:{d}")


class CheckpointError(RuntimeError):
    """The recomputation differs from the forward (PyTorch's CheckpointError)."""


class _AutocastState:
    """Autocast as it was at the forward, re-entered for the rerun (backward runs outside
    autocast)."""

    def __init__(self):
        self.states = [
            (d, oneflow.is_autocast_enabled(d), oneflow.get_autocast_dtype(d))
            for d in ("cpu", "cuda")
        ]

    @contextlib.contextmanager
    def restored(self):
        with contextlib.ExitStack() as stack:
            for device, enabled, dtype in self.states:
                if enabled:
                    stack.enter_context(oneflow.autocast(device, dtype=dtype))
            yield


def _detached_like(args):
    """The tensor arguments detached, requiring grad as the originals did."""
    out = []
    for a in args:
        if isinstance(a, oneflow.Tensor):
            d = a.detach()
            d.requires_grad_(a.requires_grad)
            out.append(d)
        else:
            out.append(a)
    return out


class _Reentrant(oneflow.autograd.Function):
    @staticmethod
    def forward(ctx, run, preserve, kwargs, *args):
        ctx.run, ctx.kwargs = run, kwargs
        ctx.rng = _RngState(args) if preserve else None
        ctx.autocast = _AutocastState()
        ctx.tensor_positions = [i for i, a in enumerate(args) if isinstance(a, oneflow.Tensor)]
        ctx.others = [None if isinstance(a, oneflow.Tensor) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_positions))
        with oneflow.no_grad():
            return run(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        if not oneflow._oneflow_internal.autograd._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, oneflow.utils.checkpoint is incompatible with .grad() or "
                "passing an inputs parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument."
            )
        args = list(ctx.others)
        for i, t in zip(ctx.tensor_positions, ctx.saved_tensors):
            args[i] = t
        args = _detached_like(args)
        rng = ctx.rng.restored() if ctx.rng is not None else contextlib.nullcontext()
        with rng, ctx.autocast.restored(), oneflow.enable_grad():
            outputs = ctx.run(*args, **ctx.kwargs)
        if isinstance(outputs, oneflow.Tensor):
            outputs = (outputs,)
        pairs = [
            (o, g)
            for o, g in zip(outputs, grads)
            if isinstance(o, oneflow.Tensor) and o.requires_grad and g is not None
        ]
        if not pairs:
            raise RuntimeError(
                "checkpoint: none of the outputs of the checkpointed function requires grad"
            )
        oneflow.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None) + tuple(
            a.grad if isinstance(a, oneflow.Tensor) else None for a in args
        )


class _Recomputation:
    """The state of one non-reentrant checkpoint: indices handed out in the forward, the
    tensors the rerun saved."""

    def __init__(self, run, args, kwargs, preserve, check):
        self.run, self.kwargs = run, kwargs
        self.args = list(args)
        self.rng = _RngState(args) if preserve else None
        self.autocast = _AutocastState()
        self.check = check
        self.metadata = []
        self.saved = None

    def pack(self, tensor):
        self.metadata.append((tuple(tensor.shape), tensor.dtype, str(tensor.device)))
        return len(self.metadata) - 1

    def unpack(self, index):
        if self.saved is None:
            self._rerun()
        if index >= len(self.saved):
            raise CheckpointError(
                "checkpoint: the recomputed forward saved fewer tensors than the original "
                f"({len(self.saved)} against {len(self.metadata)}); the checkpointed function "
                "must run the same ops each time"
            )
        t = self.saved[index]
        if self.check:
            meta = (tuple(t.shape), t.dtype, str(t.device))
            if meta != self.metadata[index]:
                raise CheckpointError(
                    "oneflow.utils.checkpoint: Recomputed values for the following tensors have "
                    f"different metadata than during the forward pass.\ntensor at position "
                    f"{index}:\nsaved metadata: {self.metadata[index]}\nrecomputed metadata: "
                    f"{meta}\n"
                )
        return t

    def _rerun(self):
        saved = []

        def keep(t):
            # detached: a recomputed tensor's history would hold this list again (a cycle
            # the collector cannot see); under create_graph the unpacked tensor takes the
            # original's place in the graph (SavedTensor::unpack)
            saved.append(t.detach())
            return len(saved) - 1

        args = _detached_like(self.args)
        rng = self.rng.restored() if self.rng is not None else contextlib.nullcontext()
        with rng, self.autocast.restored(), oneflow.enable_grad():
            with saved_tensors_hooks(keep, saved.__getitem__):
                self.run(*args, **self.kwargs)
        self.saved = saved


def checkpoint(
    function,
    *args,
    use_reentrant=None,
    context_fn=None,
    determinism_check="default",
    debug=False,
    preserve_rng_state=True,
    **kwargs,
):
    """Runs ``function(*args, **kwargs)`` without keeping the tensors its ops save for backward;
    backward runs it again to get them."""
    if use_reentrant is None:
        warnings.warn(
            "oneflow.utils.checkpoint: the use_reentrant parameter should be passed explicitly; "
            "use_reentrant=False is recommended, use_reentrant=True keeps the current default",
            stacklevel=2,
        )
        use_reentrant = True
    if context_fn is not None:
        raise NotImplementedError("checkpoint: context_fn is not implemented")
    if determinism_check not in ("default", "none"):
        raise ValueError(
            "checkpoint: determinism_check should be one of ['default', 'none'], got "
            f"{determinism_check!r}"
        )
    if oneflow._oneflow_internal._graph_tracing():
        # inside nn.Graph.build(): the traced program keeps what it keeps (the graph compiler
        # plans memory); the function runs as it is, its gradients unchanged
        return function(*args, **kwargs)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if oneflow.is_grad_enabled() and not any(
            isinstance(a, oneflow.Tensor) and a.requires_grad for a in args
        ):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None",
                stacklevel=2,
            )
        return _Reentrant.apply(function, preserve_rng_state, {}, *args)
    if not oneflow.is_grad_enabled():
        return function(*args, **kwargs)
    state = _Recomputation(
        function, args, kwargs, preserve_rng_state, determinism_check == "default"
    )
    with saved_tensors_hooks(state.pack, state.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs the modules (or functions) in ``functions`` one after another, checkpointing them in
    ``segments`` groups; the last group runs without checkpointing, as PyTorch's."""
    if use_reentrant is None:
        warnings.warn(
            "oneflow.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly; use_reentrant=False is recommended",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, oneflow.nn.Sequential):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for f in functions[start : end + 1]:
                x = f(x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(end + 1, len(functions) - 1)(input)
