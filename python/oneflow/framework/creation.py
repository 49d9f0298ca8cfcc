"""Tensor creation: flow.tensor, zeros/ones/full/randn and the default generator's seed."""

import builtins
import math

import numpy as np

from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import _C, Tensor
from oneflow.framework import memory_format as _fmt

_KEEP = _fmt.preserve_format  # the *_like factories' default layout


def _infer_numpy(data):
    """Data as a NumPy array with PyTorch's dtype inference for Python values."""
    if isinstance(data, np.ndarray):
        return data
    arr = np.array(data)
    if arr.dtype == np.float64 or arr.dtype == np.complex128:
        return arr  # cast to the default (complex) dtype below
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError("tensor: Overflow when unpacking long long (a Python int past int64)")
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind == "O" or arr.dtype.kind in "USV":
        raise TypeError(
            f"tensor: could not infer dtype of {type(data).__name__} "
            f"(expected nested sequences of numbers or bools)"
        )
    return arr


_PYTHON_SCALARS = {builtins.bool, builtins.int, builtins.float, builtins.complex}


def _default_complex():
    return (
        _internal.complex128
        if _internal.get_default_dtype() == _internal.float64
        else _internal.complex64
    )


def _promote(a, b):
    return b if a is None else _internal.promote_types(a, b)


def _list_dtype(seq):
    """PyTorch's dtype inference for a list: the promotion of its elements' dtypes, where NumPy
    scalars, arrays and tensors keep theirs, a Python int is int64 and a Python float the
    default dtype. Returns the dtype (None for an empty list), whether any element was a NumPy
    value or a tensor (if not, the usual inference applies), and whether any was a tensor."""
    dtype, found, has_tensor = None, False, False
    for ty in set(map(type, seq)):
        if ty is builtins.float:
            dtype = _promote(dtype, _internal.get_default_dtype())
        elif ty is builtins.complex:
            dtype = _promote(dtype, _default_complex())
        elif ty is builtins.int:
            dtype = _promote(dtype, _internal.int64)
        elif ty is builtins.bool:
            dtype = _promote(dtype, _internal.bool)
        elif issubclass(ty, (list, tuple)):
            for item in seq:
                if type(item) is ty:
                    d, f, t = _list_dtype(item)
                    dtype = dtype if d is None else _promote(dtype, d)
                    found, has_tensor = found or f, has_tensor or t
        elif issubclass(ty, (np.ndarray, np.generic)):
            found = True
            for item in seq:
                if type(item) is ty:
                    dtype = _promote(dtype, getattr(_internal, item.dtype.name))
        elif issubclass(ty, _internal.Tensor):
            found = has_tensor = True
            for item in seq:
                if type(item) is ty:
                    dtype = _promote(dtype, item.dtype)
    return dtype, found, has_tensor


def _tensors_as_scalars(seq):
    """A list's tensors as Python numbers, as PyTorch reads them (one element each)."""
    out = []
    for item in seq:
        if isinstance(item, (list, tuple)):
            item = _tensors_as_scalars(item)
        elif isinstance(item, _internal.Tensor):
            if item.numel() != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            item = item.item()
        out.append(item)
    return out


_INT_RANGE = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _check_fits(op, values, dtype):
    """PyTorch's check when Python numbers become integers of `dtype`: RuntimeError for NaN,
    infinities and values past the type's range (negative ones wrap into uint8 down to -255)."""
    name = str(dtype).split(".")[-1]
    if name not in _INT_RANGE or values.size == 0 or values.dtype.kind not in "iuf":
        return
    lo, hi = _INT_RANGE[name]
    if name == "uint8":
        lo = -hi
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        bad = True
    else:
        bad = values.min() < lo or values.max() > hi
    if bad:
        raise RuntimeError(f"{op}: value cannot be converted to type {name} without overflow")


def tensor(
    data, dtype=None, device=None, requires_grad=False, pin_memory=False, placement=None, sbp=None
):
    """A new tensor holding a copy of ``data`` (nested lists, NumPy arrays, numbers, tensors);
    with placement= and sbp=, a global tensor holding rank 0's data."""
    placement, sbp = _layout(placement, sbp)
    if isinstance(data, _internal.Tensor) and data.is_global:
        # a copy of the global value, on the placement and sbp given (else data's own)
        t = _C.to(data.detach(), dtype, None, copy=True)
        if placement is not None or sbp is not None:
            t = t.to_global(placement or t.placement, sbp if sbp is not None else t.sbp)
        return t.requires_grad_() if requires_grad else t
    if placement is not None or sbp is not None:
        return _global(
            lambda dev: tensor(data, dtype=dtype, device=dev), placement, sbp, requires_grad, True
        )
    if device is None:
        device = _C._get_default_device()
    if isinstance(data, _internal.Tensor):
        t = _C.to(data.detach(), dtype, device, copy=True)
    else:
        if isinstance(data, np.generic):  # a NumPy scalar keeps its dtype, as in PyTorch
            data = np.asarray(data)
        elif isinstance(data, (list, tuple)) and not set(map(type, data)) <= _PYTHON_SCALARS:
            inferred, found, has_tensor = _list_dtype(data)
            if has_tensor:
                data = _tensors_as_scalars(data)
            if found and inferred is not None:
                dtype = dtype or inferred
                name = "float32" if inferred == _internal.bfloat16 else str(inferred).split(".")[-1]
                data = np.array(data, dtype=name)  # exact: every value fits the promoted dtype
        from_python = not isinstance(data, np.ndarray)
        arr = _infer_numpy(data)
        if arr.dtype == np.float64 and from_python and dtype is None:
            dtype = _internal.get_default_dtype()
        elif arr.dtype == np.complex128 and from_python and dtype is None:
            dtype = _default_complex()
        if from_python and dtype is not None:
            _check_fits("tensor", arr, dtype)
        arr = np.require(arr, requirements="C")  # keeps 0-dim arrays 0-dim
        t = _C.to(_internal._copy_from_numpy(arr), dtype, device)  # already a copy
    if requires_grad:
        t.requires_grad = True
    return t


def as_tensor(data, dtype=None, device=None):
    """Shares memory with ``data`` when it is already a suitable tensor or NumPy array."""
    if device is None:
        device = _C._get_default_device()
    if isinstance(data, _internal.Tensor):
        return _C.to(data, dtype, device)
    if isinstance(data, np.ndarray) and data.dtype.kind in "biufc":
        return _C.to(_internal.from_numpy(data), dtype, device)
    return tensor(data, dtype=dtype, device=device)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return size


def _size_keyword(op, sizes, size):
    """The sizes of a factory called with PyTorch's `size=` keyword (zeros(size=(2, 3)))."""
    if sizes:
        raise TypeError(f"{op}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{op}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return (tuple(size),)


# The global_mode scopes entered in any thread (oneflow.utils.global_view); when there are
# none, creation ops pay one list test.
_global_modes = []


def _layout(placement, sbp):
    """placement and sbp from the innermost global_mode of this thread when none are given."""
    if placement is None and _global_modes:
        from oneflow.utils.global_view import _stack

        mode = _stack()[-1]
        if mode.is_enabled:
            return mode.placement, mode.sbp if sbp is None else sbp
    return placement, sbp


def _global(make, placement, sbp, requires_grad, random=False):
    """A creation op with placement=: the whole value is made on every rank (random values are
    rank 0's, broadcast) and laid out as sbp."""
    from oneflow.framework import global_tensor

    if sbp is not None and placement is None:
        raise ValueError("oneflow: sbp was given without a placement")
    global_tensor._check_placement(placement, "oneflow")
    from oneflow.utils.global_view import global_mode

    with global_mode(False):  # `make` may call the public creation ops again
        local = make(global_tensor._local_device(placement))
    return global_tensor.make_global(local, placement, sbp, requires_grad, sync=random)


def zeros(
    *sizes, size=None, dtype=None, device=None, requires_grad=False, placement=None, sbp=None
):
    if size is not None:
        sizes = _size_keyword("zeros", sizes, size)
    placement, sbp = _layout(placement, sbp)
    if placement is not None:
        return _global(
            lambda dev: _C.zeros(*_size(sizes), dtype=dtype, device=dev),
            placement,
            sbp,
            requires_grad,
        )
    return _C.zeros(
        *_size(sizes),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
    if size is not None:
        sizes = _size_keyword("ones", sizes, size)
    placement, sbp = _layout(placement, sbp)
    if placement is not None:
        return _global(
            lambda dev: _C.ones(*_size(sizes), dtype=dtype, device=dev),
            placement,
            sbp,
            requires_grad,
        )
    return _C.ones(
        *_size(sizes),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )


def randn(
    *sizes,
    size=None,
    dtype=None,
    device=None,
    requires_grad=False,
    placement=None,
    sbp=None,
    generator=None,
):
    if size is not None:
        sizes = _size_keyword("randn", sizes, size)
    placement, sbp = _layout(placement, sbp)
    if placement is not None:
        return _global(
            lambda dev: _C.randn(*_size(sizes), dtype=dtype, device=dev, generator=generator),
            placement,
            sbp,
            requires_grad,
            random=True,
        )
    return _C.randn(
        *_size(sizes),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
        generator=generator,
    )


def rand(
    *sizes,
    size=None,
    dtype=None,
    device=None,
    requires_grad=False,
    placement=None,
    sbp=None,
    generator=None,
):
    if size is not None:
        sizes = _size_keyword("rand", sizes, size)
    placement, sbp = _layout(placement, sbp)
    if placement is not None:
        return _global(
            lambda dev: _C.rand(*_size(sizes), dtype=dtype, device=dev, generator=generator),
            placement,
            sbp,
            requires_grad,
            random=True,
        )
    return _C.rand(
        *_size(sizes),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
        generator=generator,
    )


def randint(
    low=None,
    high=None,
    size=None,
    dtype=None,
    device=None,
    generator=None,
    placement=None,
    sbp=None,
    **kwargs,
):
    placement, sbp = _layout(placement, sbp)
    if placement is not None or sbp is not None:
        return _global(
            lambda dev: randint(low, high, size, dtype=dtype, device=dev, generator=generator),
            placement,
            sbp,
            False,
            random=True,
        )
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high  # randint(high, size)
    if high is None:
        low, high = 0, low
    elif low is None:  # randint(high=5, size=...)
        low = 0
    if high is None:
        raise TypeError("randint() missing the argument 'high'")
    if size is None:
        raise TypeError("randint: missing the size argument")
    if isinstance(size, builtins.int):
        size = (size,)
    return _C.randint(low, high, tuple(size), dtype=dtype, device=device, generator=generator)


def _normal_of_tensors(mean, std, size, generator):
    # torch.normal(Tensor mean, Tensor std) / (Tensor, float) / (float, Tensor): one draw per
    # element of the broadcast shape, in the dtype and on the device of mean (else std). As
    # PyTorch's, the result requires grad when an input does, and the gradients are zeros (the
    # draw is not reparameterised).
    import oneflow

    if size is not None:
        raise TypeError("normal(): size is only taken with a float mean and a float std")
    ref = mean if isinstance(mean, Tensor) else std
    if not ref.dtype.is_floating_point:
        name = {"int64": "Long", "int32": "Int", "bool": "Bool"}.get(
            str(ref.dtype).split(".")[-1], str(ref.dtype).split(".")[-1]
        )
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{name}'")
    if isinstance(std, Tensor):
        if std.numel() and bool((std < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    shapes = [t.shape for t in (mean, std) if isinstance(t, Tensor)]
    shape = oneflow.broadcast_shapes(*shapes)
    z = oneflow.randn(*shape, dtype=ref.dtype, device=ref.device, generator=generator)
    with oneflow.no_grad():
        value = (mean + std * z).to(ref.dtype)
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if oneflow.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return _zero_gradient().apply(value, *tensors)
    return value


_ZERO_GRADIENT = []


def _zero_gradient():
    """An autograd Function: `value` as the result of the inputs, with zero gradients for them
    (torch.normal's). Made at first use (oneflow.autograd imports this module)."""
    if not _ZERO_GRADIENT:
        import oneflow

        class ZeroGradient(oneflow.autograd.Function):
            @staticmethod
            def forward(ctx, value, *inputs):
                ctx.metas = [(t.shape, t.dtype, t.device) for t in inputs]
                return value.clone()

            @staticmethod
            def backward(ctx, grad):
                zeros = [oneflow.zeros(s, dtype=d, device=dev) for s, d, dev in ctx.metas]
                return (None, *zeros)

        _ZERO_GRADIENT.append(ZeroGradient)
    return _ZERO_GRADIENT[0]


def normal(
    mean,
    std=1.0,
    size=None,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad=False,
    placement=None,
    sbp=None,
):
    """Numbers from N(mean, std**2): of the given size for a float mean and std, or one per
    element of the broadcast tensors mean and std (torch.normal's forms); with placement= and
    sbp= (float mean and std), a global tensor holding rank 0's numbers."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if placement is not None or sbp is not None:
            raise TypeError("normal(): placement and sbp are only taken with a float mean and std")
        return _normal_of_tensors(mean, std, size, generator)
    if size is None:
        raise TypeError("normal(): a float mean and a float std take a size")
    if isinstance(size, builtins.int):
        size = (size,)
    placement, sbp = _layout(placement, sbp)
    if placement is not None or sbp is not None:
        return _global(
            lambda dev: normal(mean, std, size, generator=generator, dtype=dtype, device=dev),
            placement,
            sbp,
            requires_grad,
            random=True,
        )
    return _C.normal(
        builtins.float(mean),
        builtins.float(std),
        tuple(size),
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        generator=generator,
    )


def empty(
    *sizes,
    size=None,
    dtype=None,
    device=None,
    requires_grad=False,
    placement=None,
    sbp=None,
    pin_memory=False,
    memory_format=None,
):
    """A tensor of the given size; its values are unspecified (no kernel fills it; global
    tensors, and tensors made while an nn.Graph traces, are zero-filled)."""
    if size is not None:
        sizes = _size_keyword("empty", sizes, size)
    make = zeros if placement is not None or sbp is not None else _C.empty
    t = make(
        *_size(sizes) if make is _C.empty else sizes,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )
    if pin_memory:
        t = t.pin_memory()
    return _fmt.apply("empty", t, t, memory_format)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """A view with the given size and strides of a new buffer large enough to hold it; its
    values are unspecified."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(
            f"empty_strided: mismatch in length of strides and shape: {len(stride)} strides "
            f"for {len(size)} dims"
        )
    n = 0 if 0 in size else 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride))
    t = _C.as_strided(zeros(n, dtype=dtype, device=device), size, stride, 0)
    return t.requires_grad_() if requires_grad else t


def scalar_tensor(value, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor holding ``value``, of the default dtype unless ``dtype`` is given."""
    return full(
        (),
        value,
        dtype=dtype or _internal.get_default_dtype(),
        device=device,
        requires_grad=requires_grad,
    )


def _tri_indices(op, np_fn, row, col, offset, dtype, device):
    dtype = dtype or _internal.int64
    if dtype.is_floating_point or dtype == _internal.bool:
        raise RuntimeError(f"{op}: expected an integer dtype, got {dtype}")
    if row < 0 or col < 0:
        raise RuntimeError(f"{op}: row and col must be non-negative, got {row} and {col}")
    rows, cols = np_fn(row, offset, col)
    t = _internal.from_numpy(np.stack([rows, cols]).astype(np.int64).reshape(2, -1))
    return _C.to(t, dtype, device or _C._get_default_device(), copy=True)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    """Indices (2 x N, row-major order) of the lower triangle of a row x col matrix."""
    return _tri_indices("tril_indices", np.tril_indices, row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    """Indices (2 x N, row-major order) of the upper triangle of a row x col matrix."""
    return _tri_indices("triu_indices", np.triu_indices, row, col, offset, dtype, device)


def _like_layout(input, placement=None, sbp=None):
    """The placement and sbp of a tensor made like `input`: those given (sbp alone keeps a
    global input's placement), else a global input's (partial sums become broadcast: a constant
    is not the sum of its shards); None for a local input without them."""
    if placement is not None or not input.is_global:
        return placement, sbp
    if sbp is None:
        b = _broadcast_sbp()
        sbp = tuple(b if s.kind == "partial_sum" else s for s in input.sbp)
    return input.placement, sbp


def _broadcast_sbp():
    from oneflow.sbp import broadcast

    return broadcast


def full_like(
    input,
    fill_value,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=_KEEP,
    placement=None,
    sbp=None,
):
    placement, sbp = _like_layout(input, placement, sbp)
    return _fmt.apply(
        "full_like",
        input,
        _full_like(input, fill_value, dtype, device, requires_grad, placement, sbp),
        memory_format,
    )


def _full_like(input, fill_value, dtype, device, requires_grad, placement, sbp):
    return full(
        tuple(input.shape),
        fill_value,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )


def empty_like(
    input,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=_KEEP,
    placement=None,
    sbp=None,
):
    placement, sbp = _like_layout(input, placement, sbp)
    t = empty(
        *input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )
    return _fmt.apply("empty_like", input, t, memory_format)


def rand_like(
    input,
    dtype=None,
    device=None,
    requires_grad=False,
    generator=None,
    memory_format=_KEEP,
    placement=None,
    sbp=None,
):
    placement, sbp = _like_layout(input, placement, sbp)
    t = rand(
        *input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
        generator=generator,
        placement=placement,
        sbp=sbp,
    )
    return _fmt.apply("rand_like", input, t, memory_format)


def randn_like(
    input,
    dtype=None,
    device=None,
    requires_grad=False,
    generator=None,
    memory_format=_KEEP,
    placement=None,
    sbp=None,
):
    placement, sbp = _like_layout(input, placement, sbp)
    t = randn(
        *input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
        generator=generator,
        placement=placement,
        sbp=sbp,
    )
    return _fmt.apply("randn_like", input, t, memory_format)


def randint_like(
    input, low=0, high=None, *, dtype=None, device=None, generator=None, placement=None, sbp=None
):
    if high is None:
        low, high = 0, low
    placement, sbp = _like_layout(input, placement, sbp)
    return randint(
        low,
        high,
        tuple(input.shape),
        dtype=dtype or input.dtype,
        device=device or input.device,
        generator=generator,
        placement=placement,
        sbp=sbp,
    )


def get_rng_state():
    """The default generator's state as a uint8 tensor (seed and counter offset)."""
    return _C.get_rng_state()


def set_rng_state(state=None, *, new_state=None):
    _C.set_rng_state(new_state if state is None else state)


def full(size, fill_value, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
    if isinstance(size, builtins.int):
        size = (size,)
    if isinstance(fill_value, builtins.complex):  # the real part, then the imaginary one
        out = full(
            size, fill_value.real, dtype or _default_complex(), device, False, placement, sbp
        )
        out.imag.fill_(fill_value.imag)
        return out.requires_grad_(requires_grad)
    if dtype is not None and isinstance(fill_value, (builtins.int, builtins.float)):
        _check_fits("full", np.asarray(fill_value), dtype)
    placement, sbp = _layout(placement, sbp)
    if placement is not None:
        return _global(
            lambda dev: _C.full(tuple(size), fill_value, dtype=dtype, device=dev),
            placement,
            sbp,
            requires_grad,
        )
    return _C.full(
        tuple(size),
        fill_value,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )


def zeros_like(
    input,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=_KEEP,
    placement=None,
    sbp=None,
):
    placement, sbp = _like_layout(input, placement, sbp)
    t = zeros(
        *input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )
    return _fmt.apply("zeros_like", input, t, memory_format)


def ones_like(
    input,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=_KEEP,
    placement=None,
    sbp=None,
):
    placement, sbp = _like_layout(input, placement, sbp)
    t = ones(
        *input.shape,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
        placement=placement,
        sbp=sbp,
    )
    return _fmt.apply("ones_like", input, t, memory_format)


def manual_seed(seed):
    """Seeds the default (Philox) generator, and returns it, as PyTorch; the same seed gives the
    same numbers."""
    _C.manual_seed(builtins.int(seed))
    import oneflow

    return oneflow.default_generator


def initial_seed():
    return _C.initial_seed()


def seed():
    import random

    s = random.getrandbits(63)
    manual_seed(s)
    return s


def eye(n, m=None, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
    """A 2-D tensor with ones on the diagonal."""
    placement, sbp = _layout(placement, sbp)
    if placement is not None or sbp is not None:
        return _global(lambda dev: eye(n, m, dtype, dev), placement, sbp, requires_grad)
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"eye: n and m must be greater or equal to 0, got n={n}, m={m}")
    t = zeros(n * m, dtype=dtype, device=device)
    t[:: m + 1][: builtins.min(n, m)] = 1
    t = t.reshape(n, m)
    if requires_grad:
        t.requires_grad_()
    return t


def arange(
    start,
    end=None,
    step=1,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    placement=None,
    sbp=None,
):
    """Numbers from start (0 with one argument) up to end, step apart. PyTorch's checks: finite
    bounds, no bool dtype, and a step that stays nonzero in an integer dtype."""
    placement, sbp = _layout(placement, sbp)
    if placement is not None or sbp is not None:
        return _global(
            lambda dev: arange(start, end, step, dtype=dtype, device=dev),
            placement,
            sbp,
            requires_grad,
        )
    if type(start) is builtins.float or type(end) is builtins.float:
        lo, hi = (0, start) if end is None else (start, end)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"arange: unsupported range: {lo} -> {hi}")
    if dtype is not None:
        if dtype == _internal.bool:
            raise NotImplementedError("arange: not implemented for 'Bool'")
        if type(step) is builtins.float and not dtype.is_floating_point and int(step) == 0:
            raise ValueError("arange: step must be nonzero")
        return _C.arange(start, end, step, dtype=dtype, device=device, requires_grad=requires_grad)
    if device is None and not requires_grad:
        return _C.arange(start, end, step)
    return _C.arange(start, end, step, device=device, requires_grad=requires_grad)


def logspace(
    start,
    end,
    steps,
    base=10.0,
    dtype=None,
    device=None,
    requires_grad=False,
    placement=None,
    sbp=None,
):
    """``steps`` numbers from base**start to base**end, evenly spaced in the exponent, as pow
    gives them (a negative base gives NaN at non-integer exponents)."""
    placement, sbp = _layout(placement, sbp)
    if placement is not None or sbp is not None:
        return _global(
            lambda dev: logspace(start, end, steps, base, dtype, dev), placement, sbp, requires_grad
        )
    exps = _C.linspace(start, end, steps, dtype=_internal.float64, device=device)
    t = _C.pow(builtins.float(base), exps)
    t = _C.to(t, dtype or _internal.get_default_dtype(), None)
    if requires_grad:
        t.requires_grad_()
    return t


def linspace(
    start, end, steps, *, dtype=None, device=None, requires_grad=False, placement=None, sbp=None
):
    """``steps`` numbers evenly spaced from start to end."""
    placement, sbp = _layout(placement, sbp)
    if placement is not None or sbp is not None:
        return _global(
            lambda dev: _C.linspace(start, end, steps, dtype=dtype, device=dev),
            placement,
            sbp,
            requires_grad,
        )
    return _C.linspace(start, end, steps, dtype=dtype, device=device, requires_grad=requires_grad)


def randperm(
    n, *, generator=None, dtype=None, device=None, requires_grad=False, placement=None, sbp=None
):
    """A random permutation of 0 .. n - 1 (int64 unless dtype is given); with placement= and
    sbp=, a global tensor holding rank 0's permutation."""
    placement, sbp = _layout(placement, sbp)
    if placement is not None or sbp is not None:
        return _global(
            lambda dev: _C.randperm(n, dtype=dtype, device=dev, generator=generator),
            placement,
            sbp,
            requires_grad,
            random=True,
        )
    t = _C.randperm(n, dtype=dtype, device=device, generator=generator)
    return t.requires_grad_() if requires_grad else t
