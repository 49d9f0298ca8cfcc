"""Names of PyTorch's top-level namespace that scripts use and oneflow lacked: the math
constants, the `*_copy` forms of the view ops, `kl_div`, `typename`, `get_device`, `vmap`.

Nothing here replaces a name oneflow already has: functions() drops those."""

import math
import threading

import oneflow._oneflow_internal as _internal

Tensor = _internal.Tensor
_C = _internal._C


def _flow():
    import oneflow

    return oneflow


# ---- the *_copy ops: the view op's result as a fresh contiguous tensor ----------------------


def _fresh(t):
    return t.clone(memory_format=_flow().contiguous_format) if t.is_contiguous() else t.contiguous()


def _copy_of(name, view):
    def fn(input, *args, **kwargs):
        out = kwargs.pop("out", None) if name in _SEVERAL else None
        result = view(input, *args, **kwargs)
        if not isinstance(result, (tuple, list)):
            return _fresh(result)
        if out is None:
            return tuple(_fresh(r) for r in result)
        if len(out) != len(result):
            raise RuntimeError(
                f"{name}: expected an out= argument of size {len(result)}, got size {len(out)}"
            )
        flow = _flow()
        with flow.no_grad():
            for o, r in zip(out, result):
                if tuple(o.shape) != tuple(r.shape):
                    o.resize_(*r.shape)
                o.copy_(r)
        return None

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The result of the view op as a new contiguous tensor (torch.{name})."
    return fn


_SEVERAL = ("split_copy", "split_with_sizes_copy", "unbind_copy")  # out= takes a list


def _slice(input, dim=0, start=None, end=None, step=1):
    index = [slice(None)] * input.ndim
    index[dim if dim >= 0 else dim + input.ndim] = slice(start, end, step)
    return input[tuple(index)]


def _view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], _internal.dtype):
        return input.view(shape[0])
    return input.view(*shape)


def _expand(input, size, *, implicit=False):
    return input.expand(*size)


def _copies():
    flow = _flow()
    views = {
        "alias_copy": lambda x: x.view(x.shape),
        "as_strided_copy": flow.as_strided,
        "detach_copy": lambda x: x.detach(),
        "diagonal_copy": flow.diagonal,
        "expand_copy": _expand,
        "permute_copy": flow.permute,
        "select_copy": flow.select,
        "slice_copy": _slice,
        "split_copy": flow.split,
        "split_with_sizes_copy": lambda x, split_sizes, dim=0: flow.split(
            x, list(split_sizes), dim
        ),
        "squeeze_copy": flow.squeeze,
        "t_copy": lambda x: x.t(),
        "transpose_copy": flow.transpose,
        "unbind_copy": flow.unbind,
        "unfold_copy": lambda x, dimension, size, step: x.unfold(dimension, size, step),
        "unsqueeze_copy": flow.unsqueeze,
        "view_copy": _view,
    }
    return {name: _copy_of(name, view) for name, view in views.items()}


# ---- the rest ---------------------------------------------------------------------------------


def kl_div(input, target, reduction=0, *, log_target=False):
    """torch.kl_div: the pointwise KL divergence with reduction 0 (none), 1 (mean) or 2 (sum)."""
    flow = _flow()
    if reduction not in (0, 1, 2):
        raise ValueError(
            f"kl_div: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}"
        )
    name = ("none", "mean", "sum")[reduction]
    if reduction == 1:  # the mean over elements, not batchmean
        return flow.nn.functional.kl_div(
            input, target, reduction="none", log_target=log_target
        ).mean()
    return flow.nn.functional.kl_div(input, target, reduction=name, log_target=log_target)


def typename(obj):
    """The type name PyTorch prints: oneflow.FloatTensor for tensors, else the qualified
    class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        qualname, module = type(obj).__qualname__, type(obj).__module__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def get_device(input):
    """The CUDA index of the tensor's device, -1 on the CPU."""
    return input.get_device()


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.vmap: oneflow.func.vmap."""
    from oneflow.func import vmap as _vmap

    return _vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


# ---- the default device ------------------------------------------------------------------------


def set_default_device(device):
    """Factory calls without a device (zeros, randn, tensor, arange, ..., and so the parameters
    of new modules) make their tensors on `device` from now on, in this thread; None restores
    the CPU."""
    _C._set_default_device(device)


def get_default_device():
    return _C._get_default_device() or _internal.device("cpu")


_DEVICE_STACK = threading.local()


def _device_enter(self):
    """`with oneflow.device("cuda"):` makes the device the default of the factories inside."""
    stack = _DEVICE_STACK.__dict__.setdefault("stack", [])
    stack.append(_C._get_default_device())
    _C._set_default_device(self)
    return self


def _device_exit(self, *exc):
    _C._set_default_device(_DEVICE_STACK.stack.pop())
    return False


def install():
    _internal.device.__enter__ = _device_enter
    _internal.device.__exit__ = _device_exit


def functions():
    flow = _flow()
    out = dict(_copies())
    out.update(kl_div=kl_div, typename=typename, get_device=get_device, vmap=vmap)
    out.update(set_default_device=set_default_device, get_default_device=get_default_device)
    out.update(pi=math.pi, e=math.e, inf=math.inf, nan=math.nan, newaxis=None)
    out["OutOfMemoryError"] = _internal.OutOfMemoryError
    return {name: fn for name, fn in out.items() if name not in vars(flow)}
