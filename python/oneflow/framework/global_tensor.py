"""Global tensors: Tensor.to_global / to_local / placement / sbp, creation with placement= and
sbp=, and host reads of global values (DESIGN.md section 8).

The core (framework/global.h, dispatch/global_dispatch.cpp) holds the layout and runs ops on
the shards; here the conversions get their gradients: the gradient of a layout change is the
same change back (a partial_sum source takes its gradient as broadcast), to_local's gradient
is the local gradient made global with the tensor's sbp.

A layout here is a tuple of sbp, one per hierarchy axis of the placement (one for 1-D
placements; Note [N-D placements] in framework/global.h).
"""

import builtins

from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import Tensor
from oneflow.framework.placement import placement as _placement
from oneflow.sbp import broadcast as _broadcast
from oneflow.sbp import sbp as _sbp
from oneflow.sbp import split as _split


def _check_sbp(sbp, ndim, op, axes=1):
    """One sbp, or a sequence of `axes` sbp (one per hierarchy axis of the placement), as a
    layout: a tuple of sbp objects with split axes counted from 0."""
    if isinstance(sbp, (tuple, list)):
        if len(sbp) != axes:
            raise ValueError(
                f"{op}: expected {axes} sbp (one per hierarchy axis of the placement), got "
                f"{len(sbp)}"
            )
        sbps = tuple(sbp)
    elif axes == 1:
        sbps = (sbp,)
    elif isinstance(sbp, _sbp) and sbp.kind == "broadcast":
        sbps = (sbp,) * axes  # the whole value on every rank: one meaning on any placement
    else:
        raise ValueError(
            f"{op}: an {axes}-D placement needs a tuple of {axes} sbp (one per hierarchy "
            f"axis), got one sbp ({sbp})"
        )
    out = []
    for s in sbps:
        if not isinstance(s, _sbp):
            raise TypeError(f"{op}: expected an oneflow.sbp value, got {type(s).__name__}")
        if s.kind == "split" and not -builtins.max(ndim, 1) <= s.axis < builtins.max(ndim, 1):
            raise IndexError(f"{op}: split axis {s.axis} is out of range for a {ndim}-d tensor")
        out.append(_split(s.axis + ndim) if s.kind == "split" and s.axis < 0 else s)
    return tuple(out)


def _axes(placement):
    return len(placement.hierarchy)


def _sbp_arg(layout):
    """A layout as the core's (kind, axis) arguments."""
    if len(layout) == 1:
        return layout[0].kind, _axis(layout[0])
    return [(s.kind, _axis(s)) for s in layout], -1


def _check_placement(placement, op):
    if not isinstance(placement, _placement):
        raise TypeError(f"{op}: expected an oneflow.placement, got {type(placement).__name__}")
    from oneflow import comm, env

    if env.get_world_size() > 1:  # a launcher's run: join the group on the first global op
        comm._ensure_initialized(op)
    _internal._global_check_placement(placement.type, placement._ranks)
    return placement


def _sbp_of(t):
    """t's layout: a tuple of sbp, one per hierarchy axis of its placement."""
    return tuple(
        _split(axis) if kind == "split" else _sbp(kind)
        for kind, axis in _internal._global_nd_sbp(t)
    )


def _placement_of(t):
    device_type, ranks = _internal._global_placement(t)
    return _placement(device_type, ranks)


def _box(t, layout):
    return _internal._global_box(t, *_sbp_arg(layout))


def _grad_sbp(layout):
    """The layout a gradient takes back through a conversion from `layout`."""
    return tuple(_broadcast if s.kind == "partial_sum" else s for s in layout)


def _local_device(placement):
    if placement.type == "cpu":
        return "cpu"
    from oneflow import env

    return f"cuda:{env.get_local_rank()}"


def _function():
    from oneflow.autograd import Function

    return Function


class _Conversions:
    """autograd.Function classes, made on first use (oneflow.autograd imports tensors)."""

    _made = None

    @classmethod
    def get(cls):
        if cls._made is None:
            Function = _function()

            class LocalToGlobal(Function):
                @staticmethod
                def forward(ctx, x, placement, sbp, grad_sbp, check_meta):
                    ctx.sbp, ctx.grad_sbp = sbp, grad_sbp
                    ctx.shape, ctx.dtype, ctx.device = x.shape, x.dtype, x.device
                    return _internal._global_from_local(
                        x, placement.type, placement._ranks, *_sbp_arg(sbp), check_meta, True
                    )

                @staticmethod
                def backward(ctx, dy):
                    # (grad_sbp is for global sources only, as in OneFlow: a local source's
                    # gradient is its shard of the global gradient.)
                    target = _grad_sbp(ctx.sbp)
                    if not _internal._global_holds(dy):  # x's values were not used here
                        import oneflow

                        dx = oneflow.zeros(ctx.shape, dtype=ctx.dtype, device=ctx.device)
                        return dx, None, None, None, None
                    return _internal._global_to_local(_box(dy, target)), None, None, None, None

            class GlobalToGlobal(Function):
                @staticmethod
                def forward(ctx, x, sbp, grad_sbp):
                    ctx.src, ctx.grad_sbp = _sbp_of(x), grad_sbp
                    return _box(x, sbp)

                @staticmethod
                def backward(ctx, dy):
                    grad_sbp = ctx.grad_sbp or _grad_sbp(ctx.src)
                    return GlobalToGlobal.apply(dy, grad_sbp, None), None, None

            class Transfer(Function):
                @staticmethod
                def forward(ctx, x, placement, sbp, grad_sbp):
                    ctx.src, ctx.placement, ctx.grad_sbp = _sbp_of(x), _placement_of(x), grad_sbp
                    if transfer_log is not None:
                        transfer_log.append((_flat_ranks(ctx.placement), _flat_ranks(placement)))
                    return _transfer(x, placement, sbp)

                @staticmethod
                def backward(ctx, dy):
                    grad_sbp = ctx.grad_sbp or _grad_sbp(ctx.src)
                    # through apply: differentiable again (second derivatives)
                    return Transfer.apply(dy, ctx.placement, grad_sbp, None), None, None, None

            class GlobalToLocal(Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.placement, ctx.sbp, ctx.shape = _placement_of(x), _sbp_of(x), x.shape
                    if not _internal._global_holds(x):  # a process the placement leaves out
                        return _empty_shard(x)
                    return _internal._global_to_local(x)

                @staticmethod
                def backward(ctx, dy):
                    # The adjoint of taking this rank's shard: a split stays split; the copies
                    # of a broadcast value sum (partial_sum); partial sums all get dy.
                    p = ctx.placement
                    swap = {"broadcast": "partial_sum", "partial_sum": "broadcast"}
                    layout = tuple(_sbp(swap[s.kind]) if s.kind in swap else s for s in ctx.sbp)
                    return _internal._global_from_local(
                        dy.contiguous(), p.type, p._ranks, *_sbp_arg(layout), False, False,
                        ctx.shape,
                    )  # fmt: skip

            class ShardToGlobal(Function):
                @staticmethod
                def forward(ctx, x, like):
                    ctx.sbp = _sbp_of(like)
                    p, s = _placement_of(like), ctx.sbp
                    return _internal._global_from_local(
                        x.contiguous(), p.type, p._ranks, *_sbp_arg(s), False, False,
                        list(like.shape),
                    )  # fmt: skip

                @staticmethod
                def backward(ctx, dy):
                    return _internal._global_to_local(_box(dy, ctx.sbp)), None

            cls._made = (LocalToGlobal, GlobalToGlobal, GlobalToLocal, ShardToGlobal, Transfer)
        return cls._made


def shard_to_global(local, like):
    """`local`, this rank's shard of a value laid out as the global tensor `like` (same shape,
    placement and sbp), as a global tensor: nothing is checked or sent; differentiable."""
    return _Conversions.get()[3].apply(local, like)


def _axis(sbp):
    return sbp.axis if sbp.kind == "split" else -1


# While a list: every move of a value between placements appends (source ranks, destination
# ranks) to it (nn.Graph reads a pipeline's stages from them). Every process runs each move.
transfer_log = None


def _flat_ranks(placement):
    """A placement's ranks as a flat tuple (N-D placements too)."""
    return tuple(int(r) for r in placement._flat_ranks())


def _transfer(t, placement, sbp):
    """t's value on another placement, laid out as sbp (no autograd)."""
    return _internal._global_transfer(t, placement.type, placement._ranks, *_sbp_arg(sbp))


def _empty_shard(t):
    """What to_local() gives where t's placement leaves this process out (as OneFlow): an
    empty tensor with t's number of dims (a 0-d tensor holds a zero)."""
    import oneflow

    device = _local_device(_placement_of(t))
    return oneflow.zeros(*([0] * t.ndim), dtype=t.dtype, device=device)  # 0-d: a zero


def to_global(self, placement=None, sbp=None, *, grad_sbp=None, check_meta=True, copy=False):
    """A global tensor. From a local tensor: this process's tensor is its shard of a value laid
    out as `sbp` on `placement` (split: the shards are concatenated in rank order; broadcast:
    every rank holds the whole value; partial_sum: the value is the sum of the shards). From a
    global tensor: the same value laid out as `sbp` (collectives move the data); `grad_sbp`
    chooses the layout of the gradient flowing back."""
    to_g, g_to_g = _Conversions.get()[:2]
    if self.is_global:
        src = self.placement
        if grad_sbp is not None:
            grad_sbp = _check_sbp(grad_sbp, self.ndim, "to_global", _axes(src))
        if placement is not None:
            _check_placement(placement, "to_global")
        dst = src if placement is None else placement
        if sbp is None:
            if _axes(dst) != _axes(src):
                raise ValueError(
                    f"to_global: the placement {dst} has {_axes(dst)} hierarchy axes, the "
                    f"tensor's {_axes(src)}: pass its sbp"
                )
            sbp = self.sbp
        sbp = _check_sbp(sbp, self.ndim, "to_global", _axes(dst))
        if placement is not None:
            if placement != src:
                return _Conversions.get()[4].apply(self, placement, sbp, grad_sbp)
        out = g_to_g.apply(self, sbp, grad_sbp)
        if copy and out is self:
            out = self.clone()
        return out
    if placement is None:
        raise ValueError("to_global: a local tensor needs a placement")
    if sbp is None:
        raise ValueError("to_global: a local tensor needs an sbp")
    _check_placement(placement, "to_global")
    from oneflow import env

    if grad_sbp is not None:
        grad_sbp = _check_sbp(grad_sbp, self.ndim, "to_global", _axes(placement))
    if env.get_rank() in placement._flat_ranks():
        sbp = _check_sbp(sbp, self.ndim, "to_global", _axes(placement))
    else:  # a process the placement leaves out: its tensor is ignored (the members' sbp wins)
        sbp = _check_sbp(sbp, 1 << 30, "to_global", _axes(placement))
    x = self
    if str(x.device).split(":")[0] != placement.type:
        x = x.to(_local_device(placement))
    elif copy:
        x = x.clone()
    return to_g.apply(x, placement, sbp, grad_sbp, check_meta)


def to_local(self, *, copy=False):
    """This process's shard of a global tensor (it shares the shard's memory unless copy)."""
    if not self.is_global:
        return self.clone() if copy else self
    out = _Conversions.get()[2].apply(self)
    return out.clone() if copy else out


def local_to_global(self, placement=None, sbp=None, *, check_meta=True, copy=False):
    if self.is_global:
        raise RuntimeError("local_to_global: expected a local tensor, got a global one")
    return to_global(self, placement, sbp, check_meta=check_meta, copy=copy)


def global_to_global(
    self, placement=None, sbp=None, *, grad_sbp=None, check_meta=False, copy=False
):
    if not self.is_global:
        raise RuntimeError("global_to_global: expected a global tensor, got a local one")
    return to_global(self, placement, sbp, grad_sbp=grad_sbp, copy=copy)


def to_consistent(self, *args, **kwargs):
    """The old name of to_global; no longer available (as in OneFlow)."""
    raise RuntimeError(
        "to_consistent: this interface is no longer available, please use "
        "oneflow.Tensor.to_global() instead"
    )


def _placement_property(self):
    if not self.is_global:
        raise RuntimeError("placement: only global tensors have a placement; this one is local")
    return _placement_of(self)


def _sbp_property(self):
    if not self.is_global:
        raise RuntimeError("sbp: only global tensors have an sbp; this one is local")
    return _sbp_of(self)


def whole_value(t):
    """The local tensor holding a global tensor's whole value on every process (every process
    must call this, also those its placement leaves out)."""
    return _internal._global_whole(t)


def constant_like(ref, value):
    """`value`, a local tensor holding the same whole value on every process (indices or
    weights an op computes from shapes), as a broadcast global tensor on ref's placement when
    ref is global (nothing is sent); `value` itself otherwise."""
    if not getattr(ref, "is_global", False) or value.is_global:
        return value
    p = _placement_of(ref)
    if p.type != "cpu" and value.device.type == "cpu":
        value = value.to(_local_device(p))
    return _internal._global_from_local(
        value.contiguous(), p.type, p._ranks, "broadcast", -1, False, False, list(value.shape)
    )


def make_global(local, placement, sbp, requires_grad=False, sync=False):
    """Creation ops with placement=: `local` holds the whole value, the same on every rank
    (with sync, rank 0's values are sent to the others first: random values)."""
    _check_placement(placement, "oneflow")
    axes = _axes(placement)
    sbp = _check_sbp(sbp if sbp is not None else (_broadcast,) * axes, local.ndim, "oneflow", axes)
    if placement.type != "cpu" and local.device.type == "cpu":
        local = local.to(_local_device(placement))
    t = _internal._global_from_local(
        local.detach().contiguous(), placement.type, placement._ranks, "broadcast", -1, False, sync
    )
    if any(s.kind != "broadcast" for s in sbp):
        t = _box(t, sbp)
    if requires_grad:
        t.requires_grad_(True)
    return t


def install():
    """Adds the global-tensor methods to oneflow.Tensor and makes numpy() of a global tensor
    its whole value."""
    numpy, numpy_copy = Tensor.numpy, Tensor._numpy_copy

    # `force` is a positional-or-keyword parameter (PyTorch's is keyword-only): CPython
    # specializes calls of functions without keyword-only parameters, which keeps x.numpy()
    # as fast as it was.
    def numpy_method(self, force=False):
        if force:  # PyTorch's: detached, on the CPU (the same memory when already there)
            t = self.detach()
            return numpy((whole_value(t) if t.is_global else t).cpu())
        return numpy(whole_value(self) if self.is_global else self)

    def numpy_copy_method(self):
        return numpy_copy(whole_value(self) if self.is_global else self)

    numpy_method.__doc__ = numpy.__doc__
    to = Tensor.to

    def to_method(self, *args, **kwargs):
        if not self.is_global:
            return to(self, *args, **kwargs)
        # A global tensor keeps its placement: a device of the placement's type is accepted
        # (what global_mode lets local code do), and dtype casts run on the shards.
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        for a in args:
            if isinstance(a, _internal.dtype):
                dtype = a
            elif isinstance(a, (str, _internal.device)):
                device = a
            else:
                return to(self, *args, **kwargs)
        if device is not None and str(device).split(":")[0] != self.placement.type:
            raise NotImplementedError(
                f"to: a global tensor on {self.placement} cannot move to device {device}; "
                "use to_global with another placement"
            )
        return self if dtype is None or dtype == self.dtype else to(self, dtype)

    to_method.__doc__ = to.__doc__
    for name, fn in {
        "to_global": to_global,
        "to_local": to_local,
        "local_to_global": local_to_global,
        "global_to_global": global_to_global,
        "to_consistent": to_consistent,
        "numpy": numpy_method,
        "to": to_method,
        "_numpy_copy": numpy_copy_method,
    }.items():
        setattr(Tensor, name, fn)
    Tensor.placement = property(_placement_property)
    Tensor.sbp = property(_sbp_property)
