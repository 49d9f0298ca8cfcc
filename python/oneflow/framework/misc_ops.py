"""The rest of ``oneflow.*`` / ``oneflow.Tensor`` that OneFlow users reach for: legacy tensor
types (FloatTensor, ...), casts and type queries, splits, OneFlow's own gather_nd/scatter_nd/
batch_gather/slice ops, quantile/mode helpers, windows, nms, in_top_k and roc_auc_score."""

import builtins
import warnings

import numpy as np

from oneflow._oneflow_internal import _C, Tensor


def _flow():
    import oneflow

    return oneflow


# ---- legacy tensor types ----------------------------------------------------------------


class _TensorType(type):
    """oneflow.FloatTensor and friends (oneflow.cuda.FloatTensor with cuda): isinstance checks
    the dtype and the device type; calling one makes a tensor of that dtype on that device."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype() and obj.is_cuda == cls.cuda

    def __call__(cls, *args):
        flow = _flow()
        device = "cpu"
        if cls.cuda:
            if not flow.cuda.is_available():
                raise TypeError(
                    f"type oneflow.cuda.{cls.__name__} not available: "
                    + (
                        "no CUDA GPUs are available"
                        if flow._oneflow_internal.with_cuda
                        else "this oneflow was built without CUDA support"
                    )
                )
            device = "cuda"
        if len(args) == 1 and not isinstance(args[0], int):
            return flow.tensor(args[0], dtype=cls.dtype(), device=device)
        if not args:  # FloatTensor(): an empty 1-D tensor, as PyTorch
            args = (0,)
        return flow.empty(*args, dtype=cls.dtype(), device=device)


def _legacy(name, dtype_name, cuda=False):
    def dtype(cls=None):
        return getattr(_flow(), dtype_name)

    module = "oneflow.cuda" if cuda else "oneflow"
    return _TensorType(name, (), {"dtype": staticmethod(dtype), "cuda": cuda, "__module__": module})


LEGACY_TYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BoolTensor": "bool",
    "ByteTensor": "uint8",
    "CharTensor": "int8",
    "IntTensor": "int32",
    "LongTensor": "int64",
}
_TYPE_CLASSES = {name: _legacy(name, dt) for name, dt in LEGACY_TYPES.items()}
# Tensor.type() names, also of the dtypes without a legacy class here.
_TYPE_NAMES = {
    **{v: k for k, v in LEGACY_TYPES.items()},
    "bfloat16": "BFloat16Tensor",
    "int16": "ShortTensor",
    "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


def set_default_tensor_type(t):
    name = t if isinstance(t, str) else t.__name__
    name = name.split(".")[-1]
    if name not in ("FloatTensor", "DoubleTensor", "HalfTensor"):
        raise TypeError(
            f"set_default_tensor_type: only floating point types are supported, got {t}"
        )
    _flow().set_default_dtype(getattr(_flow(), LEGACY_TYPES[name]))


def tensor_type(self, dtype=None, non_blocking=False):
    """Tensor.type(): the type name, or a cast to the given type (name or class)."""
    if dtype is None:
        name = _TYPE_NAMES[str(self.dtype).split(".")[-1]]
        return f"oneflow.{'cuda.' if self.is_cuda else ''}{name}"
    if isinstance(dtype, str):
        parts = dtype.split(".")
        if parts[-1] not in _TYPE_CLASSES:
            raise ValueError(f"Tensor.type: invalid type: '{dtype}'")
        if len(parts) > 1 and parts[-2] == "cuda":
            dtype = getattr(_flow().cuda, parts[-1])
        else:
            dtype = _TYPE_CLASSES[parts[-1]]
    if isinstance(dtype, _TensorType):
        device = "cuda" if dtype.cuda else "cpu"
        return self.to(device=device, dtype=dtype.dtype())
    return self.to(dtype)


# ---- casts, queries and small helpers -----------------------------------------------------


def cast(input, dtype):
    return input.to(dtype)


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_nonzero(input):
    n = input.numel()
    if n != 1:
        what = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {what} is ambiguous")
    return builtins.bool(input.reshape(()).item())


class layout:
    """How a tensor's elements are laid out in memory: oneflow tensors are all strided."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"oneflow.{self._name}"

    def __reduce__(self):
        return self._name  # pickles (and deepcopies) as the module's singleton


strided = layout("strided")


def can_cast(from_, to):
    """PyTorch's rule: no complex to real, no float to integer or bool, and nothing but bool to
    bool."""
    flow = _flow()
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    return from_ == to or to != flow.bool


def expand(input, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    return _C.expand(input, *sizes)


def broadcast_like(input, like, broadcast_axes=None):
    return _C.expand(input, *like.shape)


def new_ones(input, size=None, dtype=None, device=None, requires_grad=False):
    size = input.shape if size is None else size
    return input.new_ones(size, dtype=dtype, device=device, requires_grad=requires_grad)


def quick_gelu(input):
    return _C.mul(input, _C.sigmoid(_C.mul(input, 1.702)))


def square_relu(input):
    r = _C.relu(input)
    return _C.mul(r, r)


def _inplace_fn(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name + "_")(*args, **kwargs)

    fn.__name__ = name + "_"
    return fn


# ---- splits -----------------------------------------------------------------------------


# More sections than elements give empty tensors; past this many, the tuple of them would not
# fit in memory (PyTorch fails the same way, after a long time).
_MAX_EMPTY_SECTIONS = 1 << 20


def tensor_split(input, indices_or_sections, dim=0):
    if input.ndim == 0:
        raise RuntimeError(
            "tensor_split: expected a tensor with at least 1 dimension, got a 0-d tensor"
        )
    n = input.shape[dim]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {k}")
        if k > builtins.max(n, _MAX_EMPTY_SECTIONS):
            raise RuntimeError(
                f"tensor_split: {k} sections of a dimension of size {n} would be more tensors "
                "than memory holds"
            )
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        bounds = np.cumsum([0] + sizes)
    else:
        idx = [builtins.min(builtins.max(int(i), 0), n) for i in indices_or_sections]
        bounds = [0] + idx + [n]
    return tuple(
        _C.narrow(input, dim, int(bounds[i]), builtins.max(int(bounds[i + 1] - bounds[i]), 0))
        for i in range(len(bounds) - 1)
    )


def _split_even(op, input, sections, dim, min_ndim):
    """hsplit/vsplit/dsplit: PyTorch's checks of the rank and of an int's divisibility."""
    if input.ndim < min_ndim:
        raise RuntimeError(
            f"{op}: expected a tensor with at least {min_ndim} dimensions, got {input.ndim}"
        )
    if isinstance(sections, int) and not isinstance(sections, bool):
        n = input.shape[dim]
        if sections == 0 or n % sections != 0:
            raise RuntimeError(
                f"{op}: attempted to split along dimension {dim}, but the size of the dimension "
                f"{n} is not divisible by the split_size {sections}"
            )
    return tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):
    return _split_even("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    return _split_even("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    return _split_even("dsplit", input, indices_or_sections, 2, 3)


# ---- OneFlow's own indexing ops ---------------------------------------------------------


def gather_nd(params, indices):
    k = indices.shape[-1]
    return params[tuple(_C.select(indices, -1, i) for i in range(k))]


def scatter_nd(indices, updates, shape):
    flow = _flow()
    out = flow.zeros(*shape, dtype=updates.dtype, device=updates.device)
    k = indices.shape[-1]
    return out.index_put(tuple(_C.select(indices, -1, i) for i in range(k)), updates)


def tensor_scatter_nd_update(tensor, indices, updates):
    k = indices.shape[-1]
    return tensor.index_put(tuple(_C.select(indices, -1, i) for i in range(k)), updates)


def batch_gather(input, indices):
    """OneFlow's batch_gather: indices of k dims gather along dim k - 1 of input, the first k - 1
    dims being batch dims (out[b, j, ...] = input[b, indices[b, j], ...]; 1-D indices select
    along dim 0)."""
    flow = _flow()
    k = indices.ndim
    if k == 0 or k > input.ndim:
        raise RuntimeError(
            f"batch_gather: expected indices of 1 to {input.ndim} dims for an input of "
            f"{input.ndim} dims, got {k}"
        )
    if tuple(indices.shape[: k - 1]) != tuple(input.shape[: k - 1]):
        raise RuntimeError(
            f"batch_gather: the leading dims of indices {tuple(indices.shape)} must equal "
            f"those of input {tuple(input.shape)}"
        )
    grids = [
        flow.arange(n, device=input.device).reshape(*([1] * d), n, *([1] * (k - 1 - d)))
        for d, n in enumerate(indices.shape[: k - 1])
    ]
    return input[(*grids, indices)]


def _slices(slice_tup_list):
    return tuple(slice(start, stop, step) for start, stop, step in slice_tup_list)


def slice_op(input, slice_tup_list):
    return input[_slices(slice_tup_list)]


def slice_update(input, update, slice_tup_list):
    """OneFlow's slice_update: input[start:stop:step, ...] = update, in place; returns input."""
    input[_slices(slice_tup_list)] = update
    return input


# ---- statistics and ranking -------------------------------------------------------------


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's quantile: each slice sorted (NaN last), the rank q * (n - 1) (of the non-NaN
    count with ignore_nan; the last index, a NaN, where a slice holds a NaN without it), the
    values at its floor and ceiling, and lerp between them."""
    flow = _flow()
    if input.dtype not in (flow.float32, flow.float64):
        raise RuntimeError(
            f"{op}: input tensor must be either float or double dtype, got {input.dtype}"
        )
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{op}: interpolation must be one of {', '.join(_INTERPOLATIONS)}, "
            f"got {interpolation!r}"
        )
    if input.numel() == 0:
        raise RuntimeError(f"{op}: input tensor must be non-empty")
    nd = builtins.max(input.ndim, 1)
    if dim is not None and not -nd <= dim < nd:
        raise IndexError(
            f"{op}: dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
            f"but got {dim})"
        )
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{op}: q must be a scalar or 1D tensor, got {q.ndim}-D")
        if q.dtype != input.dtype:
            raise RuntimeError(
                f"{op}: q tensor must be same dtype as the input tensor, got {q.dtype} and "
                f"{input.dtype}"
            )
        qv = q.detach().cpu().numpy()
        if not ((qv >= 0) & (qv <= 1)).all():  # NaN fails both
            raise RuntimeError(f"{op}: q values must be in the range [0, 1]")
        qt = q.to(input.device).reshape(-1)
    else:
        qv = np.asarray(q, dtype=np.float64)
        if qv.ndim > 1:
            raise RuntimeError(f"{op}: q must be a scalar or 1D tensor, got {qv.ndim}-D")
        if not ((qv >= 0) & (qv <= 1)).all():
            raise RuntimeError(f"{op}: q must be in the range [0, 1], got {q}")
        from oneflow.framework.global_tensor import constant_like

        qt = flow.tensor(qv.reshape(-1), dtype=input.dtype, device=input.device)
        qt = constant_like(input, qt)
    q_1d = qv.ndim == 1
    if dim is None:
        x = input.reshape(-1)
    elif input.ndim == 0:
        x = input.reshape(1)
    else:
        x = flow.movedim(input, dim, -1)
    values = _C.sort(x, -1, False)[0]  # NaN sorts last
    n = values.shape[-1]
    nan = _C.ne(values, values)
    if ignore_nan:
        count = _C.sum(_C.logical_not(nan), [-1], True)
        ranks = _C.clamp(_C.mul(qt, _C.sub(count, 1).to(input.dtype)), 0, None)
    else:
        ranks = _C.where(_C.any(nan, [-1], True), float(n - 1), _C.mul(qt, float(n - 1)))
    if interpolation == "lower":
        ranks = _C.floor(ranks)
    elif interpolation == "higher":
        ranks = _C.ceil(ranks)
    elif interpolation == "nearest":
        ranks = _C.round(ranks)  # half to even, as PyTorch
    below = ranks.to(flow.int64)
    out = flow.gather(values, -1, below)
    if interpolation in ("linear", "midpoint"):
        weights = _C.sub(ranks, below.to(input.dtype))
        if interpolation == "midpoint":
            weights = _C.add(_C.mul(weights, 0), 0.5)
        above = flow.gather(values, -1, _C.ceil(ranks).to(flow.int64))
        out = flow.lerp(out, above, weights)
    # out: the batch dims, then one per q; q's dim goes first.
    out = flow.movedim(out, -1, 0)
    if keepdim:
        if dim is None:
            out = out.reshape(out.shape[0], *([1] * input.ndim))
        elif input.ndim:
            out = _C.unsqueeze(out, dim % input.ndim + 1)
    return out if q_1d else _C.squeeze(out, [0])


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def hann_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    flow = _flow()
    if window_length == 0:
        return flow.empty(0, dtype=dtype, device=device)
    if window_length == 1:
        return flow.ones(1, dtype=dtype, device=device)
    n = window_length + 1 if periodic else window_length
    k = flow.arange(window_length, dtype=dtype or flow.get_default_dtype(), device=device)
    w = _C.mul(_C.sub(_C.neg(_C.cos(_C.mul(k, 2 * np.pi / (n - 1)))), -1.0), 0.5)
    return w.requires_grad_(requires_grad)


def in_top_k(targets, predictions, k):
    top = _flow().topk(predictions, k, dim=1).indices
    return _C.any(_C.eq(top, _C.unsqueeze(targets, 1)), [1], False)


def nms(boxes, scores, iou_threshold):
    """Indices of the boxes kept by greedy non-maximum suppression, highest score first."""
    b = boxes.detach().cpu().numpy().astype(np.float64)
    order = np.argsort(-scores.detach().cpu().numpy(), kind="stable")
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    suppressed = np.zeros(len(b), dtype=bool)
    keep = []
    for i in order:
        if suppressed[i]:
            continue
        keep.append(i)
        xx1 = np.maximum(b[i, 0], b[:, 0])
        yy1 = np.maximum(b[i, 1], b[:, 1])
        xx2 = np.minimum(b[i, 2], b[:, 2])
        yy2 = np.minimum(b[i, 3], b[:, 3])
        inter = np.clip(xx2 - xx1, 0, None) * np.clip(yy2 - yy1, 0, None)
        iou = inter / (area[i] + area - inter)
        suppressed |= iou > iou_threshold
    return _flow().tensor(np.asarray(keep, dtype=np.int64), device=boxes.device)


def roc_auc_score(label, pred):
    """Area under the ROC curve (ties share their average rank), as OneFlow's: a float32
    tensor of shape [1]."""
    y = label.detach().cpu().numpy().reshape(-1)
    s = pred.detach().cpu().numpy().reshape(-1).astype(np.float64)
    order = np.argsort(s, kind="stable")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    pos = y > 0
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    auc = (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / max(n_pos * n_neg, 1)
    return _flow().tensor([auc], dtype=_flow().float32)


def functions():
    from oneflow.framework.creation import arange, randint_like
    from oneflow.nn import _activations_losses as nnf

    out = dict(_TYPE_CLASSES)
    out.update(
        hardshrink=nnf.hardshrink,
        threshold=nnf.threshold,
        threshold_=nnf.threshold_,
        arange=arange,  # PyTorch's argument checks in front of _C.arange
        set_default_tensor_type=set_default_tensor_type,
        cast=cast,
        is_floating_point=is_floating_point,
        is_nonzero=is_nonzero,
        can_cast=can_cast,
        layout=layout,
        strided=strided,
        expand=expand,
        broadcast_like=broadcast_like,
        new_ones=new_ones,
        randint_like=randint_like,
        quick_gelu=quick_gelu,
        square_relu=square_relu,
        tensor_split=tensor_split,
        hsplit=hsplit,
        vsplit=vsplit,
        dsplit=dsplit,
        gather_nd=gather_nd,
        scatter_nd=scatter_nd,
        tensor_scatter_nd_update=tensor_scatter_nd_update,
        batch_gather=batch_gather,
        slice=slice_op,
        slice_update=slice_update,
        quantile=quantile,
        nanquantile=nanquantile,
        hann_window=hann_window,
        in_top_k=in_top_k,
        nms=nms,
        roc_auc_score=roc_auc_score,
    )
    for name in ["ceil", "floor", "frac", "round", "sin", "lerp"]:
        out[name + "_"] = _inplace_fn(name)
    return out


def _sample_(self, make, generator):
    # Fills self (in place, outside autograd) with make(u), u uniform on [0, 1) in self's
    # floating dtype (float32 for others), as PyTorch's distribution methods.
    from oneflow.autograd import no_grad
    from oneflow.framework.creation import rand

    dt = self.dtype if self.dtype.is_floating_point else None
    # (a global tensor's numbers: drawn with its placement and layout, partial sums broadcast)
    where = {"device": self.device}
    if self.is_global:
        from oneflow.framework.tensor_methods import _layout_of

        where = _layout_of(self)
    with no_grad():
        u = rand(*self.shape, dtype=dt, generator=generator, **where)
        return _C.copy_(self, make(u))


def exponential_(self, lambd=1.0, *, generator=None):
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _sample_(self, lambda u: _C.log1p(-u) * (-1.0 / lambd), generator)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    return _sample_(self, lambda u: _C.tan((u - 0.5) * np.pi) * sigma + median, generator)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    from oneflow.autograd import no_grad
    from oneflow.framework.creation import normal

    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    with no_grad():
        z = normal(
            mean, std, tuple(self.shape), dtype=self.dtype, device=self.device, generator=generator
        )
        return _C.copy_(self, _C.exp(z))


def geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    # the number of Bernoulli(p) trials up to the first success: ceil(log(1 - u) / log(1 - p))
    return _sample_(
        self, lambda u: _C.maximum(_C.ceil(_C.log1p(-u) / np.log1p(-p)), _C.ones_like(u)), generator
    )


def random_(self, from_=0, to=None, *, generator=None, **kwargs):
    # random_(to), random_(from, to), random_(): integers in [from, to), the default upper bound
    # being the largest integer the dtype holds exactly (plus one), as PyTorch.
    from oneflow.framework.creation import randint

    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"random_() got unexpected keyword arguments {sorted(kwargs)}")
    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        dt = self.dtype
        if dt.is_floating_point:
            to = 2 ** {2: 11, 4: 24, 8: 53}[dt.itemsize] + 1
            if dt.itemsize == 2 and str(dt).endswith("bfloat16"):
                to = 2**8 + 1
        elif str(dt).endswith("bool"):
            to = 2
        else:
            to = int(np.iinfo(str(dt).split(".")[-1]).max) + 1
    if from_ >= to:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}"
        )
    from oneflow.autograd import no_grad

    with no_grad():
        r = randint(from_, to, tuple(self.shape), device=self.device, generator=generator)
        return _C.copy_(self, r.to(self.dtype))


def fill_diagonal_(self, fill_value, wrap=False):
    """Writes fill_value where every index is equal (PyTorch's rules: 2-D of any shape, wrapping
    down tall matrices every cols + 1 rows when asked; otherwise all sizes equal)."""
    import oneflow

    if self.ndim < 2:
        raise RuntimeError("fill_diagonal_: dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("fill_diagonal_: all dimensions of input must be of equal length")
    rows, cols = self.shape[0], self.shape[1]
    if self.ndim == 2 and wrap and rows > cols:
        pos = oneflow.arange(0, rows * cols, cols + 1, device=self.device)
        index = (pos // cols, pos % cols)
    else:
        k = oneflow.arange(min(self.shape), device=self.device)
        index = (k,) * self.ndim
    value = oneflow.tensor(fill_value, dtype=self.dtype, device=self.device)
    return self.index_put_(index, value)


def put_(self, index, source, accumulate=False):
    """Writes source into self at the flat (row-major) positions index, as PyTorch's put_."""
    import oneflow

    n = self.numel()
    if index.numel() != source.numel():
        raise RuntimeError(
            f"put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    flat = index.reshape(-1).to(oneflow.int64)
    if flat.numel() and (bool((flat >= n).any()) or bool((flat < -n).any())):
        bad = flat[(flat >= n) | (flat < -n)][0].item()
        raise IndexError(f"put_(): index {bad} out of range for tensor of size {n}")
    flat = oneflow.where(flat < 0, flat + n, flat)
    parts, rest = [], flat
    for size in reversed(self.shape):
        parts.append(rest % size)
        rest = rest // size
    return self.index_put_(tuple(reversed(parts)), source.reshape(-1).to(self.dtype), accumulate)


def resize_(self, *sizes, memory_format=None):
    """The tensor's storage read contiguously from its offset with the new shape (grown, its
    values kept, when too small), as PyTorch's resize_."""
    if (
        len(sizes) == 1
        and isinstance(sizes[0], (tuple, list))
        or (len(sizes) == 1 and type(sizes[0]).__name__ == "Size")
    ):
        sizes = tuple(sizes[0])
    self._resize([int(s) for s in sizes])
    return self


def resize_as_(self, other, memory_format=None):
    return resize_(self, tuple(other.shape))


def pin_memory(self, device=None):
    """A copy in page-locked host memory (returns self when already pinned); needs CUDA."""
    if self._is_pinned():
        return self
    out = self._pin_memory()
    out.requires_grad_(self.requires_grad and self.is_leaf)
    return out


def offload(self):
    """Moves a CUDA tensor's values to host memory, keeping the tensor object (OneFlow's
    offload): its device reads cpu until `load()` brings them back. A CPU tensor stays, with a
    warning."""
    if self.is_global:
        raise NotImplementedError("offload: global tensors are not supported yet")
    if self.__dict__.get("_offloaded_from") is not None:
        warnings.warn("offload: the tensor is already offloaded", stacklevel=2)
        return
    if not self.is_cuda:
        warnings.warn(
            "offload: the tensor is already in host (CPU) memory; nothing is done", stacklevel=2
        )
        return
    device = self.device
    self.data = self.to("cpu")
    self.__dict__["_offloaded_from"] = device


def load(self):
    """Brings an offloaded tensor's values back to the device it was offloaded from; other
    tensors stay, with a warning."""
    device = self.__dict__.pop("_offloaded_from", None)
    if device is None:
        warnings.warn("load: the tensor is not offloaded; nothing is done", stacklevel=2)
        return
    self.data = self.to(device)


def is_offloaded(self):
    return self.__dict__.get("_offloaded_from") is not None


def methods():
    from oneflow.nn import _activations_losses as nnf

    return dict(
        hardshrink=nnf.hardshrink,
        resize_=resize_,
        resize_as_=resize_as_,
        exponential_=exponential_,
        cauchy_=cauchy_,
        log_normal_=log_normal_,
        geometric_=geometric_,
        random_=random_,
        fill_diagonal_=fill_diagonal_,
        put_=put_,
        cast=cast,
        is_floating_point=is_floating_point,
        is_nonzero=is_nonzero,
        layout=property(lambda self: strided),
        ndimension=lambda self: self.ndim,
        type=tensor_type,
        type_as=lambda self, other: self.to(other.dtype),
        where=lambda self, condition, y: _C.where(condition, self, y),
        get_device=lambda self: self.device.index if self.is_cuda else -1,
        is_pinned=lambda self, device=None: self._is_pinned(),
        pin_memory=pin_memory,
        offload=offload,
        load=load,
        is_offloaded=is_offloaded,
        in_top_k=lambda self, predictions, k: in_top_k(self, predictions, k),
        nms=lambda self, scores, iou_threshold: nms(self, scores, iou_threshold),
        quantile=quantile,
        nanquantile=nanquantile,
        tensor_split=tensor_split,
        hsplit=hsplit,
        vsplit=vsplit,
        bernoulli_=lambda self, p=0.5, *, generator=None: _C.copy_(
            self,
            _C.bernoulli(
                _C.mul(_C.ones_like(self), p)
                if not isinstance(p, Tensor)
                else _C.expand(p.to(self.dtype), *self.shape),
                generator=generator,
            ),
        ),
    )
