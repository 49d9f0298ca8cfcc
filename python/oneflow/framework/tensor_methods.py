"""Methods of oneflow.Tensor written in Python on top of oneflow._C (the C++ binding defines
the metadata, autograd attributes and numpy())."""

import builtins
import types
import weakref

import numpy as np

from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import _C, Tensor
from oneflow._oneflow_internal import dtype as _DType
from oneflow.framework.indexing import getitem, index_put, index_put_, setitem
from oneflow.framework.tensor_str import tensor_repr


def size(self, dim=None):
    if dim is None:
        return self.shape
    nd = len(self._shape)
    if not -builtins.max(nd, 1) <= dim < builtins.max(nd, 1):
        raise IndexError(
            f"size: dimension out of range (expected to be in range of "
            f"[{-builtins.max(nd, 1)}, {builtins.max(nd, 1) - 1}], but got {dim})"
        )
    return self._shape[dim]


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    from oneflow import autograd

    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_post_accumulate_grad_hook(self, hook):
    """Calls hook(tensor) after backward() has accumulated this leaf's gradient into .grad:
    when the backward pass ends (autograd.grad, which accumulates nothing, does not call it).
    Returns a handle with remove()."""
    from oneflow import autograd

    if not self.is_leaf:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    ref = weakref.ref(self)

    def after_accumulation(grad):
        if autograd._backward_depth:
            autograd._queue_callback(lambda: _call_post_hook(hook, ref))

    return register_hook(self, after_accumulation)


def _call_post_hook(hook, ref):
    t = ref()
    if t is not None:
        hook(t)


class _HookHandle:
    def __init__(self, tensor, hook_id):
        self._tensor, self.id = tensor, hook_id

    def remove(self):
        if self._tensor is not None:
            self._tensor._remove_hook(self.id)
            self._tensor = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _rebuild_tensor(array, dtype_name, requires_grad, attributes=None):
    import oneflow

    t = oneflow.tensor(array, dtype=getattr(oneflow, dtype_name))
    if requires_grad:
        t.requires_grad_(requires_grad)
    if attributes:
        t.__dict__.update(attributes)
    return t


def _rebuild_meta_tensor(shape, stride, dtype_name, requires_grad, attributes=None):
    import oneflow

    t = oneflow.empty_strided(shape, stride, dtype=getattr(oneflow, dtype_name), device="meta")
    if requires_grad:
        t.requires_grad_(requires_grad)
    if attributes:
        t.__dict__.update(attributes)
    return t


def __reduce_ex__(self, protocol):
    """Pickles the values (moved to the host), dtype, requires_grad and the Python attributes
    set on the tensor (as PyTorch: nn.Buffer's marking, user attributes). A meta tensor is
    pickled as its shape, strides and dtype."""
    t = self.detach()
    dtype_name = str(self.dtype).split(".")[-1]
    attributes = dict(getattr(self, "__dict__", None) or {})
    if self.is_meta:
        args = (tuple(self.shape), tuple(self.stride()), dtype_name)
        args += (bool(self.requires_grad and self.is_leaf), attributes)
        return (_rebuild_meta_tensor, args)
    array = (t.float() if dtype_name == "bfloat16" else t).cpu()._numpy_copy()
    args = (array, dtype_name, bool(self.requires_grad and self.is_leaf))
    return (_rebuild_tensor, args + (attributes,) if attributes else args)


def __deepcopy__(self, memo):
    if id(self) in memo:
        return memo[id(self)]
    if not self.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment."
        )
    out = _C.clone(self.detach())
    if self.requires_grad:
        out.requires_grad_(True)
    memo[id(self)] = out
    if self.grad is not None:
        out.grad = __deepcopy__(self.grad, memo)
    attributes = getattr(self, "__dict__", None)
    if attributes:  # Python attributes set on the tensor, as PyTorch
        import copy

        out.__dict__.update(copy.deepcopy(attributes, memo))
    return out


def register_hook(self, hook):
    """Calls hook(grad) whenever a gradient for this tensor is computed; a returned Tensor
    replaces the gradient. Returns a handle with remove()."""
    return _HookHandle(self, self._register_hook(hook))


def requires_grad_(self, requires_grad=True):
    self.requires_grad = requires_grad
    return self


def item(self):
    if self.numel() != 1:
        raise RuntimeError(
            f"item: a Tensor with {self.numel()} elements cannot be converted to Scalar"
        )
    return _python_values(self, "Tensor.item()").reshape(()).item()


def tolist(self):
    return _python_values(self, "Tensor.tolist()").tolist()


def _python_values(self, op):
    if self.is_meta:
        raise NotImplementedError(f"{op} cannot be called on meta tensors: they have no values")
    # NumPy has no bfloat16; its values are exact in float32 (PyTorch's item() gives them too).
    if self.dtype == _internal.bfloat16:
        return _C.to(self, _internal.float32, None)._numpy_copy()
    return self._numpy_copy()


def _to(self, *args, **kwargs):
    """to(dtype), to(device), to(device, dtype), to(other), with copy=False."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to: unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, _internal.dtype):
            dtype = a
        elif isinstance(a, (str, _internal.device)):
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, builtins.bool):
            copy = a  # to(dtype, non_blocking, copy) positionally
        else:
            raise TypeError(f"to: unexpected argument of type {type(a).__name__}")
    out = _C.to(self, dtype, device, copy)
    if memory_format is not None or not self._is_contiguous():
        from oneflow.framework import memory_format as fmt

        if memory_format is None or memory_format is fmt.preserve_format:
            out = fmt.keep_layout(out, self)
        else:
            out = fmt.contiguous(out, memory_format)
    return out


def cuda(self, device=None):
    if device is None:
        device = "cuda"
    elif isinstance(device, builtins.int):
        device = f"cuda:{device}"
    return _C.to(self, None, device)


def cpu(self):
    return _C.to(self, None, "cpu")


def _bernoulli_method(self, p=None, *, generator=None):
    import oneflow

    return oneflow.bernoulli(self, p, generator=generator)


def _cast(dtype):
    def method(self):
        out = _C.to(self, dtype, None)
        if self._is_contiguous():
            return out
        from oneflow.framework import memory_format as fmt

        return fmt.keep_layout(out, self)

    return method


def _in_place_view(self, name, view_fn, *args):
    """squeeze_ / unsqueeze_ / as_strided_: self takes the layout (and autograd history) of the
    view `view_fn(self, *args)`."""
    if self.requires_grad and self.is_leaf and _internal.autograd.is_grad_enabled():
        raise RuntimeError(
            f"{name}: a leaf Variable that requires grad is being used in an in-place operation."
        )
    self._take_view(view_fn(self, *args))
    return self


def __array__(self, dtype=None, copy=None):
    # NumPy 2 passes copy=True for np.array(t) and np.copy(t) and trusts the result to be a copy
    a = self.numpy()
    if dtype is not None and a.dtype != dtype:
        if copy is False:
            raise ValueError("__array__: a cast to another dtype cannot avoid a copy")
        return a.astype(dtype)
    return a.copy() if copy else a


def __format__(self, spec):
    # a 0-d tensor formats as its number (f"{loss:.4f}"), as PyTorch
    if self.ndim == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def _comparison(fn, unequal):
    def compare(self, other):
        try:
            return fn(self, other)
        except TypeError:
            if other is None or isinstance(other, (str, list, tuple, dict, set)):
                return unequal  # None, strings and containers are unequal to a tensor (PyTorch)
            raise

    compare.__name__ = fn.__name__
    return compare


def _dtype_from_name(name):
    return getattr(_internal, name)


def _device_from_str(text):
    return _internal.device(text)


def __len__(self):
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self._shape[0]


def __bool__(self):
    if self.numel() != 1:
        raise RuntimeError(
            f"bool: Boolean value of Tensor with {self.numel()} elements is ambiguous"
        )
    return builtins.bool(self.item())


def __iter__(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self._shape[0]):
        yield _select(self, i)


def _select(self, i):
    return _C.select(self, 0, i)


def chunk(self, chunks, dim=0):
    if self.ndim == 0:
        raise RuntimeError("chunk: expected a tensor with at least 1 dimension, got a 0-d tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk: chunks must be greater than 0, got {chunks}")
    size = self.size(dim)
    if size == 0:  # as PyTorch: `chunks` empty pieces
        return _C.split_with_sizes(self, [0] * chunks, dim)
    step = max(-(-size // chunks), 1)
    return split(self, step, dim)


def split(self, split_size_or_sections=None, dim=0, *, split_size=None):
    """Views of consecutive sections along dim, from one op whose gradient is one cat."""
    if split_size is not None:  # Tensor.split's keyword name in PyTorch
        split_size_or_sections = split_size
    if split_size_or_sections is None:
        raise TypeError("split() missing required argument 'split_size_or_sections'")
    if self.ndim == 0:
        raise RuntimeError("split: expected a tensor with at least 1 dimension, got a 0-d tensor")
    size = self.size(dim)
    if isinstance(split_size_or_sections, builtins.int):
        step = split_size_or_sections
        if step <= 0 and size > 0:
            raise RuntimeError(f"split: split_size must be positive, got {step}")
        sections = [min(step, size - s) for s in range(0, size, step)] if size else [0]
    else:
        sections = [builtins.int(s) for s in split_size_or_sections]
    return _C.split_with_sizes(self, sections, dim)


def unbind(self, dim=0):
    # one split and a squeeze per slice: the split's gradient is one cat, where a select per
    # slice scattered each slice's gradient into zeros of the whole size (quadratic)
    n = self.size(dim)
    if n == 0:
        return ()
    return tuple(t.squeeze(dim) for t in _C.split_with_sizes(self, [1] * n, dim))


# The wrappers below pass a keyword argument to _C only when it is not its default: pybind11
# matches keywords by building and hashing their names on every call (~0.3 us per op).
def _sum(self, dim=None, keepdim=False, dtype=None):
    if dtype is None:
        return _C.sum(self, dim, keepdim)
    return _C.sum(self, dim, keepdim, dtype=dtype)


def _sizes_keyword(method, name, given, value):
    """The sizes of a method called with PyTorch's keyword for them (x.reshape(shape=...))."""
    if given:
        raise TypeError(f"{method}() got multiple values for argument '{name}'")
    if not isinstance(value, (tuple, list)):
        raise TypeError(
            f"{method}(): argument '{name}' must be tuple of ints, not {type(value).__name__}"
        )
    return tuple(value)


def _reshape(self, *sizes, shape=None):
    if shape is not None:
        sizes = _sizes_keyword("reshape", "shape", sizes, shape)
    return _C.reshape(self, *sizes)


def _view(self, *shape, **kwargs):
    # view(*shape), view(size=...), or view(dtype) (the same bytes as another dtype)
    if kwargs:
        (key, value), *rest = kwargs.items()
        if rest or shape or key not in ("dtype", "size"):
            raise TypeError(f"view() got unexpected arguments {sorted(kwargs)}")
        shape = (value,)
    if len(shape) == 1 and isinstance(shape[0], _DType):
        return _C.view_dtype(self, shape[0])
    return _C.view(self, *shape)


def _permute(self, *dims_, dims=None):
    if dims is not None:
        dims_ = _sizes_keyword("permute", "dims", dims_, dims)
    return _C.permute(self, *dims_)


def _expand(self, *sizes, size=None, implicit=False):
    # implicit: PyTorch's flag for expansions that broadcasting inserted; no effect on the result
    if size is not None:
        sizes = _sizes_keyword("expand", "size", sizes, size)
    return _C.expand(self, *sizes)


def _flip_t(self):
    if self.ndim > 2:
        import warnings

        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated; use x.permute(*range(x.ndim - 1, -1, -1)) instead",
            UserWarning,
            stacklevel=2,
        )
        return _C.permute(self, *range(self.ndim - 1, -1, -1))
    return _C.transpose(self, 0, 1) if self.ndim == 2 else self


def _zero_(self):
    return _C.fill_(self, 0)


def _rsub(self, other):
    return _C.sub(other, self)


def _rmatmul(self, other):
    return _C.matmul(other, self)


def _rtruediv(self, other):
    # number / tensor is reciprocal(tensor) * number, as PyTorch computes it: the same bits, and
    # the gradient reads the reciprocal (the output), not the divisor.
    return _C.mul(_C.reciprocal(self), other)


def _mean(self, dim=None, keepdim=False, dtype=None):
    if dtype is None:
        return _C.mean(self, dim, keepdim)
    return _C.mean(self, dim, keepdim, dtype=dtype)


def _check_one_element(self, kind):
    if self.numel() != 1:
        raise ValueError(
            f"{kind}: only one element tensors can be converted to Python scalars, got a "
            f"Tensor with {self.numel()} elements"
        )


def _float_value(self):
    _check_one_element(self, "float")
    return builtins.float(self.item())


def _int_value(self):
    _check_one_element(self, "int")
    return builtins.int(self.item())


def __dlpack__(self, stream=None):
    return _internal.to_dlpack(self)


def __dlpack_device__(self):
    return (1, 0) if self.device.type == "cpu" else (2, self.device.index)


def _where_new(self, device, placement, sbp):
    """Where a new_* tensor goes: placement= and sbp= when given (sbp alone keeps a global
    self's placement); else `device`, or self's device; a global self's placement (the new
    tensor broadcast) unless a device is given."""
    if placement is None and self.is_global and (device is None or sbp is not None):
        from oneflow.sbp import broadcast

        return {"placement": self.placement, "sbp": broadcast if sbp is None else sbp}
    if placement is not None or sbp is not None:
        return {"placement": placement, "sbp": sbp}
    return {"device": device or self.device}


def _new_creation(fn):
    name = "new_" + fn.__name__

    def method(
        self,
        *sizes,
        size=None,
        dtype=None,
        device=None,
        requires_grad=False,
        placement=None,
        sbp=None,
    ):
        if size is not None:
            sizes = (_sizes_keyword(name, "size", sizes, size),)
        return fn(
            *sizes,
            dtype=dtype or self.dtype,
            requires_grad=requires_grad,
            **_where_new(self, device, placement, sbp),
        )

    return method


def new_full(
    self,
    size,
    fill_value,
    dtype=None,
    device=None,
    requires_grad=False,
    placement=None,
    sbp=None,
):
    from oneflow.framework.creation import full

    return full(
        size,
        fill_value,
        dtype=dtype or self.dtype,
        requires_grad=requires_grad,
        **_where_new(self, device, placement, sbp),
    )


def new_tensor(self, data, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
    from oneflow.framework.creation import tensor

    return tensor(
        data,
        dtype=dtype or self.dtype,
        requires_grad=requires_grad,
        **_where_new(self, device, placement, sbp),
    )


def normal_(self, mean=0.0, std=1.0, generator=None):
    from oneflow.framework.creation import normal, randn

    if self.is_global:  # the same numbers as a global randn of this layout
        with _grad_off():
            r = randn(*self.shape, dtype=self.dtype, generator=generator, **_layout_of(self))
            _C.copy_(self, r * std + mean)
        return self
    if self.dtype.is_complex:  # each part normal with mean `mean` and std std / sqrt(2), as PyTorch
        with _grad_off():
            r = randn(*self.shape, dtype=self.dtype, generator=generator, device=self.device)
            _C.copy_(self, r * std + complex(mean, mean))
        return self
    with _grad_off():
        _C.copy_(
            self,
            normal(
                mean,
                std,
                tuple(self.shape),
                dtype=self.dtype,
                device=self.device,
                generator=generator,
            ),
        )
    return self


def uniform_(self, a=0.0, b=1.0, generator=None):
    from oneflow.framework.creation import rand

    with _grad_off():
        where = _layout_of(self) if self.is_global else {"device": self.device}
        r = rand(*self.shape, dtype=self.dtype, generator=generator, **where)
        _C.copy_(self, r * (b - a) + a)
    return self


def _layout_of(t):
    """placement= and sbp= of a global tensor's random fill (partial sums: broadcast)."""
    from oneflow.sbp import broadcast

    sbp = tuple(broadcast if s.kind == "partial_sum" else s for s in t.sbp)
    return {"placement": t.placement, "sbp": sbp}


def _grad_off():
    from oneflow.autograd import no_grad

    return no_grad()


def _mT(self):
    if self.ndim < 2:
        raise RuntimeError(f"mT: expected a tensor with 2 or more dims, got {self.ndim}")
    return _C.transpose(self, -2, -1)


def _conj_t(self, name, min_2d_text):
    """H / mH / adjoint(): the conjugate (matrix) transpose (a copy for complex tensors: there
    is no lazy conjugate bit)."""
    if self.ndim == 0:
        import warnings

        warnings.warn(
            f"{name} is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=3,
        )
        return _C.conj_physical(self)
    if self.ndim < 2 or (name == "Tensor.H" and self.ndim != 2):
        raise RuntimeError(
            f"{name.lower()} is only supported on {min_2d_text}. Got {self.ndim}-D tensor."
        )
    return _C.conj_physical(_C.transpose(self, -2, -1))


def _h(self):
    return _conj_t(self, "Tensor.H", "matrices (2-D tensors)")


def _mh(self):
    return _conj_t(self, "Tensor.mH", "matrices or batches of matrices")


def adjoint(self):
    return _conj_t(self, "adjoint()", "matrices or batches of matrices")


_UNSIGNED = (_internal.uint8, _internal.bool)


def is_signed(self):
    return self.dtype not in _UNSIGNED


def unflatten(self, dim, sizes):
    shape = list(self.shape)
    if not shape:
        raise RuntimeError("unflatten: dimension specified as 0 but tensor has no dimensions")
    if not -len(shape) <= dim < len(shape):
        raise IndexError(
            f"unflatten: dimension out of range (expected to be in range of [{-len(shape)}, "
            f"{len(shape) - 1}], but got {dim})"
        )
    d = dim % len(shape)
    return _C.reshape(self, *(shape[:d] + list(sizes) + shape[d + 1 :]))


def _nonzero(self, as_tuple=False):
    return _C.nonzero(self) if as_tuple else _C.argwhere(self)


def _with_arrays(fn, true_divide=False):
    """fn, also taking a NumPy array as the second operand: PyTorch leaves tensor + array to
    NumPy, so the result has NumPy's dtype (float32 + float64 array is float64)."""

    def op(input, other, *args, **kwargs):
        if isinstance(other, np.ndarray) and isinstance(input, Tensor):
            if input.dtype == _internal.bfloat16:
                other = _internal.from_numpy(np.ascontiguousarray(other))
            else:
                dtype = np.result_type(str(input.dtype).split(".")[-1], other.dtype)
                if true_divide and dtype.kind != "f":
                    dtype = np.dtype(np.float64)
                dtype = getattr(_internal, dtype.name)
                input = _C.to(input, dtype, None)
                other = _C.to(_internal.from_numpy(np.ascontiguousarray(other)), dtype, None)
            other = _C.to(other, None, input.device)
        return fn(input, other, *args, **kwargs)

    op.__name__ = fn.__name__
    return op


def _fast_method_fallbacks():
    """The functions the C fast methods (+, -, *, / and add/sub/mul/div(_)) call for the
    operands they do not take themselves."""
    fallbacks = types.ModuleType("oneflow._fast_method_fallbacks")
    fallbacks.add = _with_arrays(_C.add)
    fallbacks.sub = _with_arrays(_C.sub)
    fallbacks.mul = _with_arrays(_C.mul)
    fallbacks.div = _with_arrays(_C.div, true_divide=True)
    fallbacks.add_ = _C.add_
    fallbacks.mul_ = _C.mul_
    return fallbacks


def install():
    from oneflow.framework import creation

    methods = {
        "size": size,
        "__repr__": tensor_repr,
        "__str__": tensor_repr,
        "backward": backward,
        "requires_grad_": requires_grad_,
        "register_hook": register_hook,
        "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
        "__reduce_ex__": __reduce_ex__,
        "__deepcopy__": __deepcopy__,
        "item": item,
        "tolist": tolist,
        "to": _to,
        "cuda": cuda,
        "cpu": cpu,
        "float": _cast(_internal.float32),
        "double": _cast(_internal.float64),
        "half": _cast(_internal.float16),
        "bfloat16": _cast(_internal.bfloat16),
        "long": _cast(_internal.int64),
        "int": _cast(_internal.int32),
        "short": _cast(_internal.int16),
        "char": _cast(_internal.int8),
        "byte": _cast(_internal.uint8),
        "bool": _cast(_internal.bool),
        "cfloat": _cast(_internal.complex64),
        "cdouble": _cast(_internal.complex128),
        "__array__": __array__,
        "__len__": __len__,
        "__bool__": __bool__,
        "__float__": _float_value,
        "__int__": _int_value,
        "__index__": _int_value,
        "__iter__": __iter__,
        "__getitem__": getitem,
        "__dlpack__": __dlpack__,
        "__dlpack_device__": __dlpack_device__,
        "__setitem__": setitem,
        "index_put_": index_put_,
        "index_put": index_put,
        "nonzero": lambda self, as_tuple=False: _nonzero(self, as_tuple),
        "narrow": _C.narrow,
        "as_strided": _C.as_strided,
        "diagonal": _C.diagonal,
        "unfold": _C.unfold,
        "bernoulli": _bernoulli_method,
        "multinomial": _C.multinomial,
        "select": _C.select,
        "squeeze": lambda self, dim=None: _C.squeeze(self, dim),
        "unsqueeze": _C.unsqueeze,
        "squeeze_": lambda self, dim=None: _in_place_view(self, "squeeze_", _C.squeeze, dim),
        "unsqueeze_": lambda self, dim: _in_place_view(self, "unsqueeze_", _C.unsqueeze, dim),
        "as_strided_": lambda self, size, stride, storage_offset=None: _in_place_view(
            self, "as_strided_", _C.as_strided, size, stride, storage_offset
        ),
        "transpose_": lambda self, dim0, dim1: _in_place_view(
            self, "transpose_", _C.transpose, dim0, dim1
        ),
        "swapaxes_": lambda self, axis0, axis1: _in_place_view(
            self, "swapaxes_", _C.transpose, axis0, axis1
        ),
        "swapdims_": lambda self, dim0, dim1: _in_place_view(
            self, "swapdims_", _C.transpose, dim0, dim1
        ),
        "t_": lambda self: _in_place_view(self, "t_", lambda t: t.t()),
        "flatten": lambda self, start_dim=0, end_dim=-1: _C.flatten(self, start_dim, end_dim),
        "copy_": _C.copy_,
        "fill_": _C.fill_,
        "chunk": chunk,
        "split": split,
        "unbind": unbind,
        "add": lambda self, other, alpha=1: _C.add(self, other, alpha=alpha),
        "add_": lambda self, other, alpha=1: _C.add_(self, other, alpha=alpha),
        "sub": lambda self, other, alpha=1: _C.sub(self, other, alpha=alpha),
        "mul": _C.mul,
        "mul_": _C.mul_,
        "neg": _C.neg,
        "matmul": _C.matmul,
        "mm": lambda self, other: __import__("oneflow").mm(self, other),
        "relu": _C.relu,
        "relu_": lambda self: _C.copy_(self, _C.relu(self)),
        "sum": _sum,
        "reshape": _reshape,
        "view": _view,
        "permute": _permute,
        "transpose": _C.transpose,
        "expand": _expand,
        "expand_as": lambda self, other: _C.expand(self, *other.shape),
        "contiguous": _C.contiguous,
        "clone": _C.clone,
        "detach": _C.detach,
        "zero_": _zero_,
        "T": property(_flip_t),
        "mT": property(_mT),
        "H": property(_h),
        "mH": property(_mh),
        "adjoint": adjoint,
        "itemsize": property(lambda self: self.element_size()),
        "nbytes": property(lambda self: self.numel() * self.element_size()),
        "is_signed": is_signed,
        "is_complex": lambda self: self.dtype.is_complex,
        "__complex__": lambda self: complex(self.item()),
        "is_same_size": lambda self, other: self.shape == other.shape,
        "is_cpu": property(lambda self: self.device.type == "cpu"),
        "is_sparse": False,
        "is_quantized": False,
        "unflatten": unflatten,
        "new_zeros": _new_creation(creation.zeros),
        "new_ones": _new_creation(creation.ones),
        "new_empty": _new_creation(creation.empty),
        "new_full": new_full,
        "new_tensor": new_tensor,
        "normal_": normal_,
        "uniform_": uniform_,
        "__add__": _C.add,
        "__radd__": _C.add,
        "__iadd__": _C.add_,
        "__sub__": _C.sub,
        "__rsub__": _rsub,
        "__mul__": _C.mul,
        "__rmul__": _C.mul,
        "__imul__": _C.mul_,
        "__neg__": _C.neg,
        "__matmul__": _C.matmul,
        "__rmatmul__": _rmatmul,
        "__truediv__": _C.div,
        "__rtruediv__": _rtruediv,
        "div": _C.div,
        "exp": _C.exp,
        "mean": _mean,
        "softmax": lambda self, dim=None, dtype=None: (
            _C.softmax(self, dim) if dtype is None else _C.softmax(self, dim, dtype=dtype)
        ),
        "gelu": lambda self, approximate="none": (
            _C.gelu(self) if approximate == "none" else _C.gelu(self, approximate=approximate)
        ),
        "__pos__": lambda self: self,
        "__eq__": _comparison(_C.eq, False),
        "__ne__": _comparison(_C.ne, True),
        "__format__": __format__,
        "__array_priority__": 1000,  # NumPy scalars and arrays defer to the tensor's operators
        "__lt__": _C.lt,
        "__le__": _C.le,
        "__gt__": _C.gt,
        "__ge__": _C.ge,
        "__abs__": _C.abs,
        "__pow__": _C.pow,
        "__rpow__": lambda self, other: _C.pow(other, self),
        "pow": _C.pow,
        "maximum": _C.maximum,
        "minimum": _C.minimum,
        "clamp": lambda self, min=None, max=None: _C.clamp(self, min, max),
        "clip": lambda self, min=None, max=None: _C.clamp(self, min, max),
        "__hash__": object.__hash__,
        "abs": _C.abs,
        "sqrt": _C.sqrt,
        "rsqrt": _C.rsqrt,
        "log": _C.log,
        "log1p": _C.log1p,
        "sin": _C.sin,
        "cos": _C.cos,
        "tanh": _C.tanh,
        "sigmoid": _C.sigmoid,
        "floor": _C.floor,
        "ceil": _C.ceil,
        "round": _C.round,
        "reciprocal": _C.reciprocal,
        "eq": _C.eq,
        "ne": _C.ne,
        "lt": _C.lt,
        "le": _C.le,
        "gt": _C.gt,
        "ge": _C.ge,
    }
    from oneflow.framework import (
        linalg_decomp,
        linalg_ops,
        math_extra,
        math_ops,
        misc_ops,
        movement_ops,
        reduce_ops,
        special_extra,
        spectral,
        tensor_extra,
        torch_compat,
    )
    from oneflow.nn import functional as nnf

    activations = {
        name: getattr(nnf, name)
        for name in [
            "selu",
            "silu",
            "mish",
            "softplus",
            "softsign",
            "log_softmax",
            "relu6",
            "hardswish",
            "hardsigmoid",
            "logsigmoid",
            "elu",
            "celu",
            "leaky_relu",
        ]
    }
    methods = {
        **torch_compat.methods(),
        **tensor_extra.methods(),
        **special_extra.methods(),
        **activations,
        **linalg_ops.methods(),
        **linalg_decomp.methods(),
        **misc_ops.methods(),
        **math_ops.methods(),
        **math_extra.methods(),
        **reduce_ops.methods(),
        **movement_ops.methods(),
        **spectral.methods(),
        **methods,
    }
    methods["clamp"] = methods["clip"] = math_ops.clamp
    # +, -, *, / and add/sub/mul/div(_) as C method descriptors (no Python frame per call);
    # calls they don't take go to the _C functions above.
    methods.update(_internal._fast_tensor_methods(_fast_method_fallbacks()))
    for name, fn in methods.items():
        if type(fn).__name__ == "builtin_function_or_method":
            fn = _internal._tensor_method(fn)
        setattr(Tensor, name, fn)
    # dtypes and devices pickle (and deepcopy) by name, as PyTorch's
    _internal.dtype.__reduce__ = lambda self: (_dtype_from_name, (str(self).split(".")[-1],))
    _internal.device.__reduce__ = lambda self: (_device_from_str, (str(self),))
