"""Functions of the torch namespace composed of existing oneflow ops: construction and predicates
(asarray, is_complex, ...), linear-algebra helpers (kron, cov, matrix_power, ...), set and
calculus helpers (isin, unique_consecutive, trapezoid, gradient, *_scatter), window functions,
the namespace forms of functional ops with torch's own signatures (torch.batch_norm takes weight
before the running statistics, torch.embedding takes the weight first, losses take an integer
reduction) and the namespace in-place forms of Tensor methods (torch.exp_(t) is t.exp_()).

Nothing here replaces a name oneflow already has: functions() and methods() drop those."""

import itertools
import math
import numbers
import warnings

import numpy as np

from oneflow._oneflow_internal import Tensor
from oneflow.framework.math_ops import inplace


def _flow():
    import oneflow

    return oneflow


def _F():
    from oneflow.nn import functional

    return functional


def _dim(dim, ndim):
    """A dimension index wrapped into [0, ndim), IndexError outside (as torch)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def _float_dtype(dtype):
    flow = _flow()
    return dtype if dtype.is_floating_point else flow.get_default_dtype()


# ---- construction and predicates --------------------------------------------------------------


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: shares memory with a tensor or NumPy array when dtype and device allow and
    copy is not True; copy=False raises ValueError where a copy would be needed."""
    flow = _flow()
    if isinstance(obj, Tensor):
        same = (dtype is None or obj.dtype == dtype) and (
            device is None or flow.device(device) == obj.device
        )
        if copy is False and not same:
            raise ValueError("asarray: can't alias the tensor: a dtype or device change is needed")
        if copy or not same:
            out = obj.to(dtype=dtype or obj.dtype, device=device or obj.device, copy=True)
            out = out.detach()
        else:
            out = obj
        return out.requires_grad_(requires_grad) if requires_grad else out
    if isinstance(obj, np.ndarray) and copy is not True:
        native = obj.dtype.isnative and obj.dtype.kind in "biuf"
        shareable = native and (device is None or flow.device(device).type == "cpu")
        if shareable:
            out = flow.from_numpy(obj)
            if dtype is None or out.dtype == dtype:
                return out.requires_grad_(requires_grad) if requires_grad else out
        if copy is False:
            raise ValueError("asarray: can't alias the NumPy array: a copy is needed")
    elif copy is False:
        raise ValueError(f"asarray: can't alias an object of type {type(obj).__name__}")
    return flow.tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)


def is_complex(input):
    return bool(getattr(input.dtype, "is_complex", False))


def is_signed(input):
    return input.dtype.is_signed


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def positive(input):
    if input.dtype == _flow().bool:
        raise RuntimeError(
            "The `+` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return input


def ravel(input):
    return input.reshape(-1)


def angle(input):
    """The argument of each (real) element: pi for negative values, 0 otherwise (-0 too), NaN
    for NaN; integers give the default float dtype."""
    flow = _flow()
    if input.dtype.is_complex:
        return flow._C._complex_angle(input)
    x = input if input.dtype.is_floating_point else input.to(flow.get_default_dtype())
    signs = flow.where(x < 0, flow.full_like(x, math.pi), flow.zeros_like(x))
    return flow.where(flow.isnan(x), x, signs)


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero() cut or padded with fill_value rows to exactly `size` rows."""
    flow = _flow()
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    idx = flow.nonzero(input)
    n = idx.shape[0]
    if n >= size:
        return idx[:size]
    pad = flow.full(
        (size - n, max(input.ndim, 1) if input.ndim else 0),
        fill_value,
        dtype=idx.dtype,
        device=idx.device,
    )
    return flow.cat([idx, pad], dim=0)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with src written where input.as_strided(size, stride, storage_offset)
    looks (input taken as contiguous)."""
    out = input.clone().contiguous()
    out.as_strided(size, stride, storage_offset or 0).copy_(src)
    return out


def new(self, *args, **kwargs):
    """The legacy constructor: sizes give an uninitialised tensor, data a tensor of it; self's
    dtype and device."""
    flow = _flow()
    opts = {"dtype": kwargs.pop("dtype", self.dtype), "device": kwargs.pop("device", self.device)}
    if kwargs:
        raise TypeError(f"new(): unexpected keyword arguments {sorted(kwargs)}")
    if not args:
        return flow.empty(0, **opts)
    if (
        len(args) == 1
        and isinstance(args[0], (list, tuple, np.ndarray, Tensor))
        and not (isinstance(args[0], flow.Size))
    ):
        return flow.tensor(args[0], **opts)
    sizes = args[0] if len(args) == 1 and isinstance(args[0], flow.Size) else args
    return flow.empty(*sizes, **opts)


def legacy_construct(*args, dtype=None, device=None, placement=None, sbp=None):
    """flow.Tensor(...) with keywords or a Size: sizes give an uninitialised tensor, data a copy
    in the default dtype (or `dtype`, OneFlow's keyword); on `device`, or a global tensor on
    `placement` with `sbp` (OneFlow's form)."""
    flow = _flow()
    if len(args) == 1 and isinstance(args[0], flow.Size):
        args = tuple(args[0])
    opts = {"dtype": dtype if dtype is not None else flow.get_default_dtype(), "device": device}
    if not args:
        t = flow.empty(0, **opts)
    elif all(isinstance(a, int) for a in args):
        t = flow.empty(*args, **opts)
    elif len(args) == 1:
        t = flow.tensor(args[0], **opts)
    else:
        raise TypeError(f"Tensor(): expected sizes or one sequence of data, got {len(args)} args")
    if placement is not None or sbp is not None:
        if placement is None or sbp is None:
            raise ValueError("Tensor(): a global tensor needs both placement and sbp")
        t = t.to_global(placement, sbp)
    return t


def put(self, index, source, accumulate=False):
    return self.clone().put_(index, source, accumulate)


def resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    return self.reshape(*sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return self.reshape(tensor.shape)


def dim_order(self):
    """The dims from the outermost (largest stride) to the innermost, ties in dim order."""
    strides = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


def is_set_to(self, tensor):
    """Whether both tensors view the same memory with the same sizes and strides."""
    return (
        self.data_ptr() == tensor.data_ptr()
        and tuple(self.shape) == tuple(tensor.shape)
        and tuple(self.stride()) == tuple(tensor.stride())
    )


def unflatten(input, dim, sizes):
    return input.unflatten(dim, sizes)


def unravel_index(indices, shape):
    flow = _flow()
    if not isinstance(indices, Tensor):
        indices = flow.tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype == flow.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    # As torch: no bounds check; an index wraps modulo the size (negative ones from the end).
    rest = indices.to(flow.int64) % max(math.prod(shape), 1)
    coords = []
    for s in reversed(shape):
        coords.append(rest % s if s else rest)
        rest = rest // s if s else rest
    return tuple(reversed(coords))


def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return _flow().sub(other, input, alpha=alpha)


def zero_(input):
    return input.zero_()


def fill(input, value):
    flow = _flow()
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                "fill only supports 0-dimension value tensor but got tensor with "
                f"{value.dim()} dimensions."
            )
        value = value.to(input.dtype)
    else:
        value = flow.full_like(input, value)
    # where() keeps input in the graph with a zero gradient, and value's gradient is the sum of
    # the output's, as torch's FillBackward.
    return flow.where(flow.zeros_like(input, dtype=flow.bool), input, value)


def fill_(input, value):
    return input.fill_(value)


# ---- linear algebra ---------------------------------------------------------------------------


def _no_complex(name, *tensors):
    for t in tensors:
        if isinstance(t, Tensor) and t.dtype.is_complex:
            raise TypeError(f"{name}: {t.dtype} inputs are not supported yet")


def vdot(input, other):
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    if input.dtype != other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{input.dtype} and {other.dtype}"
        )
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size: {input.shape[0]} and {other.shape[0]} elements"
        )
    return (input.conj() * other).sum()  # the first vector conjugated, as PyTorch


def inner(input, other):
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    k = input.shape[-1]
    if other.shape[-1] != k:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"inner: both inputs should have same dtype, got {input.dtype} and {other.dtype}"
        )
    flow = _flow()
    a, b = input.reshape(-1, k), other.reshape(-1, k)
    return flow.matmul(a, b.t()).reshape(*input.shape[:-1], *other.shape[:-1])


def kron(input, other):
    n = max(input.dim(), other.dim())
    a_shape = (1,) * (n - input.dim()) + tuple(input.shape)
    b_shape = (1,) * (n - other.dim()) + tuple(other.shape)
    # a[i] * b[j] lands at i * len(b) + j: interleave a's and b's axes, then merge each pair.
    a = input.reshape([d for s in a_shape for d in (s, 1)])
    b = other.reshape([d for s in b_shape for d in (1, s)])
    return (a * b).reshape([x * y for x, y in zip(a_shape, b_shape)])


def block_diag(*tensors):
    flow = _flow()
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} "
                f"has {t.dim()} dimensions"
            )
        blocks.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not blocks:
        return flow.empty(1, 0)
    dtype = blocks[0].dtype
    for t in blocks[1:]:
        dtype = flow.promote_types(dtype, t.dtype)
    device = blocks[0].device
    cols = sum(t.shape[1] for t in blocks)
    rows, left = [], 0
    for t in blocks:
        r, c = t.shape
        from oneflow.framework.global_tensor import constant_like

        parts = [
            constant_like(t, flow.zeros(r, left, dtype=dtype, device=device)),
            t.to(dtype),
            constant_like(t, flow.zeros(r, cols - left - c, dtype=dtype, device=device)),
        ]
        rows.append(flow.cat(parts, dim=1))
        left += c
    return flow.cat(rows, dim=0)


def chain_matmul(*matrices):
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    out = matrices[0]
    for m in matrices[1:]:
        out = _flow().matmul(out, m)
    return out


def matrix_power(input, n):
    flow = _flow()
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{input.shape[-2] if input.dim() >= 2 else 1} by {input.shape[-1]} matrices"
        )
    if n == 0:
        eye = flow.eye(input.shape[-1], dtype=input.dtype, device=input.device)
        # where() keeps input in the graph with a zero gradient, as torch's.
        return flow.where(flow.zeros_like(input, dtype=flow.bool), input, eye)
    base = flow.linalg.inv(input) if n < 0 else input
    n = abs(n)
    # Square-and-multiply: log2(n) products.
    result = None
    while n:
        if n & 1:
            result = base if result is None else flow.matmul(result, base)
        n >>= 1
        if n:
            base = flow.matmul(base, base)
    return result if result is not input else input.clone()


def dist(input, other, p=2):
    return _flow().linalg.vector_norm(input - other, ord=p)


def cov(input, *, correction=1, fweights=None, aweights=None):
    flow = _flow()
    if input.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input "
            f"with {input.dim()} dimensions"
        )
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(flow.get_default_dtype())
    real = x.real.dtype if x.dtype.is_complex else x.dtype  # of the weights and the normaliser
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1 or fweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected fweights to be a 1-D integer tensor")
        w = fweights
    if aweights is not None:
        if aweights.dim() > 1 or not aweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to be a 1-D floating point tensor")
        w = aweights if w is None else w * aweights
    if w is not None:
        w = w.to(real)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights.to(real)).sum() / w_sum
    else:
        w_sum = n_obs
        avg = x.sum(1) / max(n_obs, 1) if n_obs else x.sum(1) / 0.0
        norm = flow.tensor(float(n_obs - correction), dtype=real, device=x.device)
    # A non-positive normaliser gives inf/nan entries, with torch's warning.
    if float(norm) <= 0:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than "
            "the number of observations.",
            UserWarning,
            stacklevel=2,
        )
    norm = flow.clamp(norm, min=0.0)
    xc = x - avg.unsqueeze(1)
    c = flow.matmul(xc, (xc if w is None else xc * w).mH)  # conjugated for complex x
    return (c / norm).squeeze()


def corrcoef(input):
    flow = _flow()
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = flow.diagonal(c)
    std = flow.sqrt(d.real if d.dtype.is_complex else d)
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if c.dtype.is_complex:  # each part clipped, as PyTorch
        return flow.complex(flow.clamp(c.real, -1, 1), flow.clamp(c.imag, -1, 1))
    return flow.clamp(c, -1, 1)


def vander(x, N=None, increasing=False):
    flow = _flow()
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        N = x.shape[0]
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = flow.promote_types(x.dtype, flow.int64)
    from oneflow.framework.global_tensor import constant_like

    ones = constant_like(x, flow.ones(x.shape[0], min(N, 1), dtype=dtype, device=x.device))
    if N > 1:
        powers = x.to(dtype).unsqueeze(1).expand(x.shape[0], N - 1)
        out = flow.cat([ones, flow.cumprod(powers, dim=1)], dim=1)
    else:
        out = ones
    return out if increasing else flow.flip(out, [1])


def cartesian_prod(*tensors):
    flow = _flow()
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = flow.meshgrid(*tensors, indexing="ij")
    return flow.stack([g.reshape(-1) for g in grids], dim=1)


def combinations(input, r=2, with_replacement=False):
    flow = _flow()
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return flow.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = list(pick(range(input.shape[0]), r))
    index = flow.tensor(idx, dtype=flow.int64, device=input.device).reshape(-1, r)
    return input[index.reshape(-1)].reshape(-1, r)


# ---- sets and calculus ------------------------------------------------------------------------


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    flow = _flow()
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments")
    if not isinstance(elements, Tensor):
        elements = flow.tensor(elements, device=test_elements.device)
    if not isinstance(test_elements, Tensor):
        test_elements = flow.tensor(test_elements, device=elements.device)
    dtype = flow.result_type(elements, test_elements)
    flat = test_elements.to(dtype).reshape(-1)
    hit = (elements.to(dtype).unsqueeze(-1) == flat).any(-1)
    return flow.logical_not(hit) if invert else hit


def isreal(input):
    """True where an element is real: every element of a real tensor, those with a zero
    imaginary part of a complex one."""
    if input.dtype.is_complex:
        return input.imag == 0
    return _flow().ones_like(input, dtype=_flow().bool)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    flow = _flow()
    if dim is None:
        x = input.reshape(-1)
        n = x.shape[0]
        change = x[1:] != x[:-1]
    else:
        dim = _dim(dim, input.dim())
        x = flow.movedim(input, dim, 0)
        n = x.shape[0]
        rows = x.reshape(n, math.prod(x.shape[1:]))
        change = (rows[1:] != rows[:-1]).any(1) if n else rows[:0, 0].to(flow.bool)
    from oneflow.framework.global_tensor import constant_like

    first = constant_like(input, flow.ones(min(n, 1), dtype=flow.bool, device=input.device))
    starts = flow.cat([first, change]) if n else first
    keep = flow.nonzero(starts).reshape(-1)
    out = x[keep]
    if dim is not None:
        out = flow.movedim(out, 0, dim)
    result = [out]
    if return_inverse:
        inverse = flow.cumsum(starts.to(flow.int64), 0) - 1
        result.append(inverse.reshape(input.shape) if dim is None else inverse)
    if return_counts:
        ends = flow.cat([keep[1:], flow.tensor([n], dtype=flow.int64, device=input.device)])
        result.append(ends - keep if n else keep)
    return result[0] if len(result) == 1 else tuple(result)


def _trapezoid_steps(y, x, dx, dim):
    """y's left and right neighbours along dim, and the step between them (tensor or number)."""
    n = y.shape[dim]
    left, right = y.narrow(dim, 0, max(n - 1, 0)), y.narrow(dim, min(1, n), max(n - 1, 0))
    if x is None:
        return left, right, 1 if dx is None else dx
    if x.dim() == 1:
        if x.shape[0] != n:
            raise RuntimeError(
                f"trapezoid: There must be one `x` value for each sample point, but got "
                f"{x.shape[0]} `x` values and {n} sample points"
            )
        step = x[1:] - x[:-1]
        view = [1] * y.dim()
        view[dim] = step.shape[0]
        return left, right, step.reshape(view)
    xd = x.shape[dim] if x.dim() == y.dim() else None
    m = xd if xd is not None else n
    step = x.narrow(dim, 1, max(m - 1, 0)) - x.narrow(dim, 0, max(m - 1, 0))
    return left, right, step


def trapezoid(y, x=None, *, dx=None, dim=-1):
    _no_complex("trapezoid", y)
    flow = _flow()
    if x is not None and dx is not None:
        raise RuntimeError("trapezoid: received both x and dx")
    dim = _dim(dim, y.dim())
    if not y.dtype.is_floating_point:
        y = y.to(flow.get_default_dtype())
    if y.shape[dim] == 0:  # torch: zeros outside the graph
        shape = [s for i, s in enumerate(y.shape) if i != dim]
        return flow.zeros(shape, dtype=y.dtype, device=y.device)
    left, right, step = _trapezoid_steps(y, x, dx, dim)
    return ((left + right) * step).sum(dim) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    _no_complex("cumulative_trapezoid", y)
    flow = _flow()
    dim = _dim(dim, y.dim())
    if not y.dtype.is_floating_point:
        y = y.to(flow.get_default_dtype())
    left, right, step = _trapezoid_steps(y, x, dx, dim)
    return flow.cumsum((left + right) * step / 2, dim)


def _gradient_along(f, dim, h, edge_order):
    """numpy.gradient's second-order interior and first/second-order edges along dim; h is a
    number (uniform spacing) or a 1-D tensor of coordinates."""
    flow = _flow()
    n = f.shape[dim]

    def at(start, length):
        return f.narrow(dim, start, length)

    view = [1] * f.dim()
    view[dim] = -1
    if isinstance(h, Tensor):
        x = h.to(f.dtype)
        dx = x[1:] - x[:-1]
        hl, hr = dx[:-1].reshape(view), dx[1:].reshape(view)
        a = -hr / (hl * (hl + hr))
        b = (hr - hl) / (hl * hr)
        c = hl / (hr * (hl + hr))
        interior = a * at(0, n - 2) + b * at(1, n - 2) + c * at(2, n - 2)
        if edge_order == 1:
            first = (at(1, 1) - at(0, 1)) / dx[0]
            last = (at(n - 1, 1) - at(n - 2, 1)) / dx[-1]
        else:
            h1, h2 = dx[0], dx[1]
            first = (
                -(2 * h1 + h2) / (h1 * (h1 + h2)) * at(0, 1)
                + (h1 + h2) / (h1 * h2) * at(1, 1)
                - h1 / (h2 * (h1 + h2)) * at(2, 1)
            )
            h1, h2 = dx[-1], dx[-2]
            last = (
                h1 / (h2 * (h1 + h2)) * at(n - 3, 1)
                - (h1 + h2) / (h1 * h2) * at(n - 2, 1)
                + (2 * h1 + h2) / (h1 * (h1 + h2)) * at(n - 1, 1)
            )
    else:
        interior = (at(2, n - 2) - at(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (at(1, 1) - at(0, 1)) / h
            last = (at(n - 1, 1) - at(n - 2, 1)) / h
        else:
            first = (-1.5 * at(0, 1) + 2 * at(1, 1) - 0.5 * at(2, 1)) / h
            last = (0.5 * at(n - 3, 1) - 2 * at(n - 2, 1) + 1.5 * at(n - 1, 1)) / h
    return flow.cat([first, interior, last], dim=dim)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    flow = _flow()
    if edge_order not in (1, 2):
        raise RuntimeError(
            f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}"
        )
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, numbers.Integral):
        dims = [_dim(dim, input.dim())]
    else:
        dims = [_dim(d, input.dim()) for d in dim]
    if isinstance(spacing, (numbers.Number, Tensor)) and not (
        isinstance(spacing, Tensor) and spacing.dim() > 0
    ):
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) == 1 and len(dims) > 1 and not isinstance(spacing[0], Tensor):
        spacing = spacing * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
            f"dim arguments to have the same length, but got a spacing argument of length "
            f"{len(spacing)} and a dim argument of length {len(dims)}."
        )
    f = input if input.dtype.is_floating_point else input.to(flow.get_default_dtype())
    out = []
    for d, h in zip(dims, spacing):
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
        if isinstance(h, Tensor) and h.dim() == 0:
            h = h.item()
        out.append(_gradient_along(f, d, h, edge_order))
    return tuple(out)


def _scatter_into(input, src, view):
    """A copy of input whose region view(copy) holds src; differentiable in both."""
    out = input.clone()
    region = view(out)
    if tuple(region.shape) != tuple(src.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(region.shape)}"
        )
    region.copy_(src)
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def select_scatter(input, src, dim, index):
    return _scatter_into(input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    def view(t):
        index = [slice(None)] * t.dim()
        index[_dim(dim, t.dim())] = slice(start, end, step)
        return t[tuple(index)]

    return _scatter_into(input, src, view)


# ---- window functions -------------------------------------------------------------------------


def _window(name, window_length, periodic, dtype, device, requires_grad, values):
    """values(n) gives the symmetric window of n points in float64 (NumPy); periodic windows
    are the symmetric window of one more point, without its last."""
    flow = _flow()
    dtype = dtype or flow.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    if window_length <= 1:
        w = np.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        w = values(n)[:window_length]
    out = flow.tensor(w, dtype=dtype, device=device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def hamming_window(
    window_length,
    periodic=True,
    alpha=0.54,
    beta=0.46,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
):
    def values(n):
        return alpha - beta * np.cos(2 * np.pi * np.arange(n) / (n - 1))

    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, values)


def blackman_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    def values(n):
        k = 2 * np.pi * np.arange(n) / (n - 1)
        return 0.42 - 0.5 * np.cos(k) + 0.08 * np.cos(2 * k)

    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, values)


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    def values(n):
        return 1 - np.abs(2 * np.arange(n) / (n - 1) - 1)

    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, values)


def kaiser_window(
    window_length, periodic=True, beta=12.0, *, dtype=None, device=None, requires_grad=False
):
    def values(n):
        r = (np.arange(n) - (n - 1) / 2) / ((n - 1) / 2)
        return np.i0(beta * np.sqrt(np.clip(1 - r * r, 0, None))) / np.i0(beta)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, values)


# ---- torch.<name> forms of functional ops -----------------------------------------------------

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction):
    """ATen's integer reduction (0 none, 1 mean, 2 sum); the string form passes through."""
    return _REDUCTIONS[reduction] if isinstance(reduction, int) else reduction


def dropout(input, p, train):
    return _F().dropout(input, p, train)


def dropout_(input, p, train):
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    """Alpha dropout that drops whole channels (dim 1): one mask value per (sample, channel)."""
    if not train or p == 0:
        return input
    flow = _flow()
    if p == 1:
        return input * 0
    alpha = -1.7580993408473766  # -selu scale * selu alpha: the value a dropped unit takes
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    keep = (flow.rand(*shape, device=input.device) >= p).to(input.dtype)
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = -a * alpha * p
    return (input * keep + alpha * (1 - keep)) * a + b


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return _F().group_norm(input, num_groups, weight, bias, eps)


def batch_norm(
    input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled
):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled
):
    return _F().instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # ATen's -1 means "no padding index" (F.embedding's None).
    padding_idx = None if padding_idx == -1 else padding_idx
    return _F().embedding(indices, weight, padding_idx, None, 2.0, scale_grad_by_freq, sparse)


def pixel_shuffle(input, upscale_factor):
    return _F().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return _F().pixel_unshuffle(input, downscale_factor)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    return _F().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    return _F().pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2):
    """Distances between all pairs of rows i < j, in row-major order of (i, j)."""
    return _flow().nn.functional.pdist(input, p)


def ctc_loss(
    log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False
):
    return _F().ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank,
        _reduction(reduction),
        zero_infinity,
    )


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(
    anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=1
):
    return _F().triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction)
    )


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    flow = _flow()
    if log_input:
        loss = flow.exp(input) - target * input
    else:
        loss = input - target * flow.log(input + eps)
    if full:
        # Stirling's approximation of log(target!), for targets above 1 only (as torch).
        stirling = target * flow.log(target) - target + 0.5 * flow.log(2 * math.pi * target)
        loss = loss + flow.where(target > 1, stirling, flow.zeros_like(stirling))
    reduction = _reduction(reduction)
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return _F().cosine_embedding_loss(
        input1, input2, target, margin, reduction=_reduction(reduction)
    )


def bilinear(input1, input2, weight, bias=None):
    return _F().bilinear(input1, input2, weight, bias)


def rrelu(input, lower=0.125, upper=0.3333333333333333, training=False, generator=None):
    return _F().rrelu(input, lower, upper, training)


# The in-place activations go through math_ops.inplace, which computes from a copy when input is
# in an autograd graph (its saved value must not change) and then writes into input.


def rrelu_(input, lower=0.125, upper=0.3333333333333333, training=False, generator=None):
    return inplace("rrelu_", _F().rrelu)(input, lower, upper, training)


def relu_(input):
    return inplace("relu_", _F().relu)(input)


def selu_(input):
    return inplace("selu_", _F().selu)(input)


def celu_(input, alpha=1.0):
    return inplace("celu_", _F().celu)(input, alpha)


def channel_shuffle(input, groups):
    if input.dim() < 3:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    n, rest = input.shape[0], input.shape[2:]
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


def constant_pad_nd(input, pad, value=0):
    return _F().pad(input, list(pad), mode="constant", value=value)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    stride = stride if stride not in ((), [], None) else kernel_size
    return _F().max_pool1d(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True
    )


def detach(input):
    return input.detach()


def detach_(input):
    return input.detach_()


# ---- registration ---------------------------------------------------------------------------


def _inplace_forwarder(name):
    """torch.<name>_(t, ...) as t.<name>_(...)."""

    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    return fn


# torch's namespace in-place forms whose Tensor method oneflow has.
_INPLACE_FORWARDS = [
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_",
    "expm1_", "fix_", "gcd_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_",
    "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "rsqrt_",
    "sigmoid_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_",
]  # fmt: skip

_FUNCTIONS = [
    asarray, is_complex, is_signed, is_same_size, positive, ravel, unflatten, unravel_index,
    rsub, zero_, fill, fill_,
    vdot, inner, kron, block_diag, chain_matmul, matrix_power, dist, cov, corrcoef, vander,
    cartesian_prod, combinations,
    isin, isreal, unique_consecutive, trapezoid, trapz, cumulative_trapezoid, gradient,
    diagonal_scatter, select_scatter, slice_scatter,
    hamming_window, blackman_window, bartlett_window, kaiser_window,
    dropout, dropout_, alpha_dropout, alpha_dropout_, feature_alpha_dropout, layer_norm,
    group_norm, batch_norm, instance_norm, embedding, pixel_shuffle, pixel_unshuffle,
    cosine_similarity, pairwise_distance, pdist, ctc_loss, margin_ranking_loss,
    triplet_margin_loss, hinge_embedding_loss, poisson_nll_loss, cosine_embedding_loss, bilinear,
    rrelu, rrelu_, relu_, selu_, celu_, channel_shuffle, constant_pad_nd,
    max_pool1d_with_indices, detach, detach_, angle, nonzero_static, as_strided_scatter,
]  # fmt: skip

# Tensor methods torch has and oneflow's Tensor lacks (self is the first argument).
_METHODS = [
    positive, ravel, vdot, inner, kron, matrix_power, dist, cov, corrcoef, isreal,
    unique_consecutive, diagonal_scatter, select_scatter, slice_scatter, angle, nonzero_static,
    as_strided_scatter, new, put, resize, resize_as, dim_order, is_set_to,
]  # fmt: skip


def functions():
    """Name -> function for the oneflow namespace, only names oneflow doesn't have yet."""
    flow = _flow()
    out = {fn.__name__: fn for fn in _FUNCTIONS}
    # torch's namespace also holds these functional ops
    for name in ("conv_tbc", "native_channel_shuffle"):
        out[name] = getattr(flow.nn.functional, name)
    out.update({name: _inplace_forwarder(name) for name in _INPLACE_FORWARDS})
    return {name: fn for name, fn in out.items() if name not in vars(flow)}


def methods():
    """Name -> Tensor method, only names oneflow's Tensor doesn't have yet."""
    return {fn.__name__: fn for fn in _METHODS if not hasattr(Tensor, fn.__name__)}
