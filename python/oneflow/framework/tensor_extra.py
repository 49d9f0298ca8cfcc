"""Tensor methods of torch that oneflow's Tensor lacked, composed of existing oneflow ops, and
their torch.<name> forms: split and narrow variants (split_with_sizes, unsafe_*, narrow_copy,
dsplit), sum_to_size, new_empty_strided, renorm, index_reduce, histogram, the complex and
lazy-negation no-ops of a real-only framework (conj, resolve_neg, real, ...), apply_ / map_ with
Python callables, and the special functions mvlgamma and polygamma.

Nothing here replaces a name oneflow already has: functions() and methods() drop those."""

import builtins
import collections
import math
import numbers

from oneflow._oneflow_internal import _C, Tensor


def _flow():
    import oneflow

    return oneflow


def _dim(dim, ndim):
    """A dimension index wrapped into [0, ndim), IndexError outside (as torch)."""
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def _sizes(size):
    """f(2, 3), f((2, 3)) and f(flow.Size([2, 3])) all as a tuple of ints."""
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = size[0]
    return tuple(int(s) for s in size)


def _float_input(input):
    """Integer and bool inputs of the special functions compute in the default float dtype."""
    flow = _flow()
    if input.dtype.is_complex:
        raise TypeError(f"{input.dtype} inputs are not supported by this function yet")
    return input if input.dtype.is_floating_point else input.to(flow.get_default_dtype())


# ---- splitting and narrowing ------------------------------------------------------------------


def split_with_sizes(input, split_sizes, dim=0):
    split_sizes = [int(s) for s in split_sizes]
    d = _dim(dim, input.ndim)
    total = input.shape[d] if input.ndim else 1
    if builtins.sum(split_sizes) != total or builtins.min(split_sizes, default=0) < 0:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {total} (input tensor's size "
            f"at dimension {dim}), but got split_sizes={split_sizes}"
        )
    return input.split(split_sizes, dim)


def unsafe_chunk(input, chunks, dim=0):
    return input.chunk(chunks, dim)


def unsafe_split(input, split_size, dim=0):
    return input.split(split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return split_with_sizes(input, split_sizes, dim)


def dsplit(input, indices_or_sections):
    return _flow().dsplit(input, indices_or_sections)


def narrow_copy(input, dim, start, length):
    view = _C.narrow(input, dim, start, length)
    out = view.contiguous()
    # contiguous() hands back the view itself when it already is contiguous
    return view.clone() if out is view else out


def sum_to_size(self, *size):
    """Sums the leading dimensions away and the dimensions size has as 1 (kept as 1); size must
    be expandable to self's shape."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    size = _sizes(size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if size == shape:
        return self
    out = self.sum(tuple(range(lead))) if lead else self
    dims = tuple(i for i, (s, n) in enumerate(zip(size, shape[lead:])) if s == 1 and n != 1)
    return out.sum(dims, keepdim=True) if dims else out


def new_empty_strided(
    self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
    pin_memory=False,
):  # fmt: skip
    flow = _flow()
    out = flow.empty_strided(
        tuple(size),
        tuple(stride),
        dtype=self.dtype if dtype is None else dtype,
        device=self.device if device is None else device,
    )
    return out.requires_grad_(True) if requires_grad else out


# ---- renorm and index_reduce ------------------------------------------------------------------


def renorm(input, p, dim, maxnorm):
    """Each slice along dim with a p-norm above maxnorm scaled to norm maxnorm. The same formula
    as torch (maxnorm / (norm + 1e-7) where norm > maxnorm), so autograd through it gives torch's
    renorm_backward."""
    flow = _flow()
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim < 2:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions"
        )
    d = _dim(dim, input.ndim)
    reduce_dims = tuple(i for i in range(input.ndim) if i != d)
    norm = flow.linalg.vector_norm(input, p, dim=reduce_dims, keepdim=True)
    factor = flow.where(norm > maxnorm, maxnorm / (norm + 1e-7), flow.ones_like(norm))
    return input * factor


def renorm_(self, p, dim, maxnorm):
    return self.copy_(renorm(self, p, dim, maxnorm))


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """source's slices reduced into input's slices index[i] along dim, as scatter_reduce with the
    index broadcast over source's other dimensions."""
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    if index.dtype.is_floating_point or str(index.dtype).split(".")[-1] not in ("int32", "int64"):
        raise RuntimeError(
            "index_reduce_(): Expected dtype int32/int64 for index but got: "
            f"{str(index.dtype).split('.')[-1]}"
        )
    d = _dim(dim, input.ndim)
    index = index.reshape(-1)
    n = source.shape[d] if source.ndim else 1
    if index.numel() != n:
        raise RuntimeError(
            f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim): ({n}), for dim: {dim}"
        )
    # negative indices are out of range too, as in torch
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= input.shape[d]):
        raise IndexError("index out of range in self")
    index = index.to(_flow().int64)
    if input.ndim == 0:
        return input.reshape(1).scatter_reduce(0, index, source.reshape(1), reduce,
                                                include_self=include_self).reshape(())  # fmt: skip
    view = [1] * source.ndim
    view[d] = -1
    expanded = index.view(view).expand(tuple(source.shape))
    return input.scatter_reduce(d, expanded, source, reduce, include_self=include_self)


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return self.copy_(index_reduce(self, dim, index, source, reduce, include_self=include_self))


# ---- histogram --------------------------------------------------------------------------------

histogram_result = collections.namedtuple("histogram", ["hist", "bin_edges"])


def _linspace_edges(left, right, bins, dtype):
    """torch's CPU linspace: steps from the start in the first half and back from the end in the
    second, so both ends are exact and the extreme elements land inside."""
    flow = _flow()
    steps = bins + 1
    i = flow.arange(steps, dtype=dtype)
    start = flow.tensor(left, dtype=dtype)
    end = flow.tensor(right, dtype=dtype)
    step = (end - start) / bins
    return flow.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))


def histogram(input, bins, *, range=None, weight=None, density=False):
    """torch.histogram: bins as a count of equal bins over range (default the input's min and
    max) or as a 1-D tensor of increasing edges. The last bin includes its right edge; elements
    outside the edges are not counted."""
    flow = _flow()
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{str(input.dtype).split('.')[-1]}'"
        )
    x = input.detach().reshape(-1)
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension")
        if bins.dtype != input.dtype:
            raise RuntimeError("torch.histogram: input tensor and bins tensors should have the "
                               "same dtype")  # fmt: skip
        edges = bins.detach()
        nbins = edges.numel() - 1
    else:
        nbins = int(bins)
        if nbins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {nbins} for "
                               "dimension 0")  # fmt: skip
        if range is not None:
            left, right = float(range[0]), float(range[1])
        elif x.numel():
            left, right = float(x.min()), float(x.max())
        else:
            left, right = 0.0, 1.0
        if left > right:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{left:g} max {right:g} for dimension 0")  # fmt: skip
        if not (math.isfinite(left) and math.isfinite(right)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{left:g}, {right:g}] is "
                               "not finite")  # fmt: skip
        if left == right:
            left, right = left - 0.5, right + 0.5
        edges = _linspace_edges(left, right, nbins, input.dtype)
    w = flow.ones_like(x) if weight is None else weight.detach().reshape(-1).to(input.dtype)
    if nbins < 1:
        hist = flow.zeros(0, dtype=input.dtype)
    else:
        pos = flow.bucketize(x, edges, right=True) - 1
        # the right edge closes the last bin
        pos = flow.where(x == edges[-1], flow.full_like(pos, nbins - 1), pos)
        inside = (x >= edges[0]) & (x <= edges[-1])
        # everything outside goes to an extra bin that is dropped
        pos = flow.where(inside, pos, flow.full_like(pos, nbins))
        hist = flow.zeros(nbins + 1, dtype=input.dtype).scatter_add(0, pos, w)[:nbins]
    if density:
        hist = hist / hist.sum()
        hist = hist / (edges[1:] - edges[:-1])
    return histogram_result(hist, edges)


# ---- complex and lazy-negation no-ops of real tensors -----------------------------------------


def is_conj(input):
    return False


def is_neg(input):
    return False


def is_shared(self):
    return False


def _identity(name):
    def fn(input):
        return input

    fn.__name__ = fn.__qualname__ = name
    return fn


resolve_conj = _identity("resolve_conj")
resolve_neg = _identity("resolve_neg")


def conj(input):
    """The complex conjugate, as a new tensor (there is no lazy conjugate bit); a real tensor
    itself."""
    return _C.conj_physical(input)


def conj_physical(input):
    return _C.conj_physical(input)


def conj_physical_(input):
    if input.dtype.is_complex:
        input.copy_(_C.conj_physical(input))
    return input


def real(input):
    """A view of the real parts of a complex tensor; a real tensor itself."""
    return _C.real(input)


def imag(input):
    """A view of the imaginary parts of a complex tensor."""
    return _C.imag(input)


# ---- Python callables -------------------------------------------------------------------------


def _check_callable_target(self, name):
    if self.requires_grad:
        raise RuntimeError(
            f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
            "instead."
        )
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _write_values(self, values):
    flow = _flow()
    self.copy_(flow.tensor(values, dtype=self.dtype).reshape(tuple(self.shape)))
    return self


def apply_(self, callable):
    """Replaces each element x by callable(x), called with Python numbers."""
    _check_callable_target(self, "apply_")
    return _write_values(self, [callable(v) for v in self.detach().reshape(-1).tolist()])


def map_(self, tensor, callable):
    """Replaces each element x by callable(x, y), y the element of tensor broadcast to self."""
    _check_callable_target(self, "map_")
    if tensor.requires_grad:
        raise RuntimeError(
            "Can't call map_() on Variable that requires grad. Use var.detach().map_() instead."
        )
    other = tensor.detach().to(self.dtype).expand(tuple(self.shape)).reshape(-1).tolist()
    mine = self.detach().reshape(-1).tolist()
    return _write_values(self, [callable(a, b) for a, b in zip(mine, other)])


# ---- special functions ------------------------------------------------------------------------


def mvlgamma(input, p):
    """Multivariate log-gamma: sum_{i<p} lgamma(x - i/2) + p(p-1)/4 log(pi), torch's formula."""
    flow = _flow()
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _float_input(input)
    args = flow.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=x.dtype)
    return (x.unsqueeze(-1) + args).lgamma().sum(-1) + (p * (p - 1)) * math.log(math.pi) * 0.25


def mvlgamma_(self, p):
    return self.copy_(mvlgamma(self, p))


def _trigamma_value(x):
    """torch's calc_trigamma: reflection below 1/2, six recurrence steps, then the asymptotic
    series."""
    flow = _flow()
    reflect = x < 0.5
    sin_pi_x = flow.sin(math.pi * x)
    result = flow.where(reflect, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), flow.zeros_like(x))
    x = flow.where(reflect, 1 - x, x)
    for _ in builtins.range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    series = (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    result = result + series
    return flow.where(reflect, -result, result)


_TRIGAMMA = []
_DIGAMMA = []


def _digamma(x):
    """digamma whose gradient is torch's trigamma."""
    if not _DIGAMMA:
        flow = _flow()

        class Digamma(flow.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return flow.digamma(a)

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                return grad * _trigamma(a)

        _DIGAMMA.append(Digamma)
    return _DIGAMMA[0].apply(x)


def _trigamma(x):
    """trigamma with torch's value and torch's gradient, polygamma(2, x)."""
    if not _TRIGAMMA:
        flow = _flow()

        class Trigamma(flow.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return _trigamma_value(a)

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                return grad * polygamma(2, a)

        _TRIGAMMA.append(Trigamma)
    return _TRIGAMMA[0].apply(x)


def polygamma(n, input):
    """n-th derivative of digamma: digamma for n = 0, torch's trigamma for n = 1 and
    (-1)^(n+1) n! zeta(n+1, x) above, as torch computes them."""
    flow = _flow()
    n = int(n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _float_input(input)
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    sign = 1.0 if n % 2 else -1.0
    factor = sign * math.exp(math.lgamma(n + 1.0))
    return factor * flow.special.zeta(flow.full_like(x, n + 1.0), x)


def _polygamma_method(self, n):
    return polygamma(n, self)


def polygamma_(self, n):
    return self.copy_(polygamma(n, self))


# ---- registration -----------------------------------------------------------------------------

_FUNCTIONS = [
    split_with_sizes, unsafe_chunk, unsafe_split, unsafe_split_with_sizes, dsplit, narrow_copy,
    renorm, index_reduce, histogram, is_conj, is_neg, resolve_conj, resolve_neg, conj,
    conj_physical, conj_physical_, real, imag, mvlgamma, polygamma,
]  # fmt: skip

_METHODS = [
    split_with_sizes, unsafe_chunk, unsafe_split, unsafe_split_with_sizes, dsplit, narrow_copy,
    sum_to_size, new_empty_strided, renorm, renorm_, index_reduce, index_reduce_, histogram,
    is_conj, is_neg, is_shared, resolve_conj, resolve_neg, conj, conj_physical, conj_physical_,
    apply_, map_, mvlgamma, mvlgamma_, polygamma_,
]  # fmt: skip

# Attributes, not methods, in torch.
_PROPERTIES = {
    "real": property(real, lambda self, value: real(self).copy_(value)),
    "imag": property(imag, lambda self, value: imag(self).copy_(value)),
}


def functions():
    """Name -> function for the oneflow namespace, only names oneflow doesn't have yet."""
    flow = _flow()
    out = {fn.__name__: fn for fn in _FUNCTIONS}
    return {name: fn for name, fn in out.items() if name not in vars(flow)}


def methods():
    """Name -> Tensor method or property, only names oneflow's Tensor doesn't have yet."""
    out = {fn.__name__: fn for fn in _METHODS}
    out["polygamma"] = _polygamma_method
    out.update(_PROPERTIES)
    return {name: fn for name, fn in out.items() if not hasattr(Tensor, name)}
