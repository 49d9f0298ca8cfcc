"""Reductions, scans and sorting of ``oneflow.*`` and ``oneflow.Tensor`` (PyTorch signatures):
the kernels' prod/amax/amin/max/min/argmax/all/any/cumsum/cumprod/sort from ``_C`` and the
statistics composed from them (var, std, logsumexp, norm, median, topk, ...)."""

import builtins
import collections
import math

from oneflow import _oneflow_internal as _internal
from oneflow._oneflow_internal import _C, Tensor

_values_indices = {
    name: collections.namedtuple(name, ["values", "indices"])
    for name in [
        "max",
        "min",
        "sort",
        "topk",
        "median",
        "nanmedian",
        "kthvalue",
        "mode",
        "cummax",
        "cummin",
    ]
}


_aminmax = collections.namedtuple("aminmax", ["min", "max"])


def _pair(name, pair):
    return _values_indices[name](*pair)


def _dims(dim):
    if dim is None:
        return None
    return [dim] if isinstance(dim, int) else list(dim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    return _C.prod(input, dim, keepdim, dtype=dtype)


def _extreme(name, reduce_all, with_dim, elementwise):
    def fn(input, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return elementwise(input, dim)
        if dim is None:
            return reduce_all(input)
        return _pair(name, with_dim(input, dim, keepdim))

    fn.__name__ = name
    return fn


max = _extreme("max", _C.amax, _C.max_dim, _C.maximum)
min = _extreme("min", _C.amin, _C.min_dim, _C.minimum)


def amax(input, dim=(), keepdim=False):
    return _C.amax(input, _dims(dim) or None, keepdim)


def amin(input, dim=(), keepdim=False):
    return _C.amin(input, _dims(dim) or None, keepdim)


def aminmax(input, *, dim=None, keepdim=False):
    mn = amin(input, () if dim is None else dim, keepdim)
    mx = amax(input, () if dim is None else dim, keepdim)
    return _aminmax(mn, mx)


def _bool_result(input, out):
    # PyTorch keeps uint8 for all/any of a uint8 tensor (bool for every other dtype).
    return out.to(input.dtype) if input.dtype == _internal.uint8 else out


def all(input, dim=None, keepdim=False):
    return _bool_result(input, _C.all(input, _dims(dim), keepdim))


def any(input, dim=None, keepdim=False):
    return _bool_result(input, _C.any(input, _dims(dim), keepdim))


def _floating_only(op, input, error=NotImplementedError):
    if not input.dtype.is_floating_point:
        raise error(f"{op}: expected a floating point input, got {input.dtype}")


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _wide(input):
    """The dtype var and std are computed in: float32 for 16-bit floats (PyTorch's accumulation
    type), so the squares do not overflow; float32 stays (the sums accumulate in double)."""
    if input.dtype in (_internal.float16, _internal.bfloat16):
        return _internal.float32
    return input.dtype


def _centered(op, input, dim, unbiased, correction):
    """input (in its wide dtype) minus its mean over dim, the reduced dims, the divisor
    n - correction, and that mean."""
    if isinstance(unbiased, (int, list, tuple)) and not isinstance(unbiased, builtins.bool):
        dim, unbiased = unbiased, None  # var(x, 0) style positional dim
    c = _correction(unbiased, correction)
    dims = _dims(dim)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {input.dtype}")
    nd = builtins.max(input.ndim, 1)
    for d in dims or ():
        if not -nd <= d < nd:
            raise IndexError(
                f"{op}: dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                f"but got {d})"
            )
    shape = input.shape if input.ndim else (1,)  # a 0-d input reduces over its one element
    n = input.numel() if not dims else math.prod(shape[d] for d in dims)
    wide = _wide(input)
    x = input if wide == input.dtype else input.to(wide)
    mean = _C.mean(x, dims, True)
    return _C.sub(x, mean), dims, builtins.max(n - c, 0), mean


def _narrow_mean(input, mean, dims, keepdim):
    """The kept-dims mean of _centered in var_mean's shape and input's dtype."""
    if not keepdim:
        if dims and input.ndim:
            mean = _C.squeeze(mean, [d % input.ndim for d in dims])
        else:
            mean = mean.reshape(())
    return mean.to(input.dtype)


def _var(input, dim, unbiased, keepdim, correction):
    if input.dtype.is_complex:  # E|z - mean|^2: the real parts' variance plus the imaginary's
        re = _var(input.real, dim, unbiased, keepdim, correction)
        im = _var(input.imag, dim, unbiased, keepdim, correction)
        return _C.add(re[0], im[0]), _C.complex(re[1], im[1])
    diff, dims, divisor, mean = _centered("var", input, dim, unbiased, correction)
    v = _C.div(_C.sum(_C.mul(diff, diff), dims, keepdim), divisor)
    return v.to(input.dtype), _narrow_mean(input, mean, dims, keepdim)


def _std(input, dim, unbiased, keepdim, correction):
    if input.dtype.is_complex:
        v, mean = _var(input, dim, unbiased, keepdim, correction)
        return _C.sqrt(v), mean
    # The norm of the deviations: where they are all zero the gradient is zero, not NaN (as
    # PyTorch), which sqrt(var) would give.
    diff, dims, divisor, mean = _centered("std", input, dim, unbiased, correction)
    if divisor == 0:  # no degrees of freedom left: NaN, and NaN gradients, as PyTorch
        s = _C.sqrt(_C.div(_C.sum(_C.mul(diff, diff), dims, keepdim), 0.0))
        return s.to(input.dtype), _narrow_mean(input, mean, dims, keepdim)
    if diff.dtype == _internal.float32:
        # The squares in double, as PyTorch's float std: deviations past ~1.8e19 would overflow
        # float (3e30, 4e30, 5e30 -> 1e30, not inf); the float result is rounded once.
        diff = diff.to(_internal.float64)
    s = _C.div(vector_norm(diff, 2, dims, keepdim), math.sqrt(divisor))
    return s.to(input.dtype), _narrow_mean(input, mean, dims, keepdim)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var(input, dim, unbiased, keepdim, correction)[0]


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _std(input, dim, unbiased, keepdim, correction)[0]


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var(input, dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _std(input, dim, unbiased, keepdim, correction)


def logsumexp(input, dim, keepdim=False):
    dims = _dims(dim)
    if input.dtype.is_complex:
        raise TypeError(f"logsumexp: {input.dtype} inputs are not supported yet")
    if not input.dtype.is_floating_point:
        input = input.float()
    if input.numel() == 0:
        return _C.log(_C.sum(_C.exp(input), dims, keepdim))
    m = _C.amax(input, dims, True).detach()
    m = _C.where(_C.eq(_C.abs(m), math.inf), 0.0, m)
    out = _C.add(_C.log(_C.sum(_C.exp(_C.sub(input, m)), dims, True)), m)
    if not keepdim:
        out = _C.squeeze(out, dims if dims is not None else None)
    return out


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    x = _C.where(_C.ne(input, input), 0, input) if input.dtype.is_floating_point else input
    if dtype is not None and dtype != x.dtype:
        x = x.to(dtype)  # each element cast before the sum, as PyTorch
    return _C.sum(x, _dims(dim), keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    _floating_only("nanmean", input, RuntimeError)
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(
            f"nanmean: could not infer output dtype; dtype must be a floating point dtype, "
            f"got {dtype}"
        )
    valid = _C.eq(input, input)
    total = nansum(input, dim, keepdim, dtype=dtype)
    return _C.div(total, _C.sum(valid, _dims(dim), keepdim))


def count_nonzero(input, dim=None):
    # A bool input is its own mask (ne(mask, 0) would promote it to int64 first).
    mask = input if input.dtype == _internal.bool else _C.ne(input, 0)
    return _C.sum(mask, _dims(dim), False)


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype)
    if x.dtype.is_complex:  # the norm of the magnitudes, in the real dtype
        x = _C.abs(x)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: expected a floating point input, got {x.dtype}")
    dims = _dims(dim)
    if ord == 2:
        if x.device.type == "cpu":
            # One pass, and a zero gradient where the norm is zero (as PyTorch). Half types
            # are summed in float32, as PyTorch does.
            if x.dtype in (_internal.float32, _internal.float64):
                return _C.vector_norm2(x, dims, keepdim)
            return _C.vector_norm2(x.to(_internal.float32), dims, keepdim).to(x.dtype)
        return _C.sqrt(_C.sum(_C.mul(x, x), dims, keepdim))
    if ord == 0:
        if not x.requires_grad:
            return _C.sum(_C.ne(x, 0), dims, keepdim, dtype=x.dtype)
        # The count, attached to x with a zero gradient (as PyTorch); NaN counts as non-zero.
        return _C.sum(_C.where(_C.ne(x, x), 1.0, _C.sign(_C.abs(x))), dims, keepdim)
    a = _C.abs(x)
    if ord == math.inf:
        return _C.amax(a, dims, keepdim)
    if ord == -math.inf:
        return _C.amin(a, dims, keepdim)
    if ord == 1:
        return _C.sum(a, dims, keepdim)
    return _C.pow(_C.sum(_C.pow(a, ord), dims, keepdim), 1.0 / ord)


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype)
    if x.ndim < 2:
        raise RuntimeError(
            f"linalg.matrix_norm: expected an input of at least 2 dimensions, got {x.ndim}-D"
        )
    if x.dtype.is_complex:  # these norms depend on the magnitudes only
        x = _C.abs(x)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_norm: expected a floating point input, got {x.dtype}")
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple, got {dim}")
    d0, d1 = dim
    for d in dim:
        if not -x.ndim <= d < x.ndim:
            raise IndexError(
                f"linalg.matrix_norm: dimension out of range (expected to be in range of "
                f"[{-x.ndim}, {x.ndim - 1}], but got {d})"
            )
    if d0 % x.ndim == d1 % x.ndim:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different, got ({d0}, {d1})")
    if ord == "fro":
        return vector_norm(x, 2, dim, keepdim)
    if ord in (1, -1, math.inf, -math.inf):
        # 1: max column sum of |x|; inf: max row sum.
        sum_dim, pick_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = _C.sum(_C.abs(x), [sum_dim], True)
        # The norm of a matrix with no rows or no columns is 0.
        pick = _C.sum if sums.shape[pick_dim] == 0 else (_C.amax if ord > 0 else _C.amin)
        out = pick(sums, [pick_dim], True)
        if not keepdim:
            out = _C.squeeze(out, [d0 % x.ndim, d1 % x.ndim])
        return out
    if ord not in (2, -2, "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: order {ord!r} not supported")
    if x.dtype in (_internal.float16, _internal.bfloat16):
        raise RuntimeError(
            f"linalg.matrix_norm: ord={ord!r} does not support low precision dtypes, got {x.dtype}"
        )
    # The spectral and nuclear norms come from the singular values (LAPACK's gesdd).
    from oneflow.framework import linalg_decomp

    return linalg_decomp.matrix_norm(input, ord, dim, keepdim, dtype=dtype)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """oneflow.linalg.norm: a vector norm over one dim (or all of a 1-D input), a matrix norm
    over two (or all of a 2-D input); with ord=None the 2-norm of the flattened dims."""
    dims = _dims(dim)
    if dims is not None and len(dims) not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: if dim is specified, it must be of length 1 or 2, got {dims}"
        )
    if ord is None:
        return vector_norm(A, 2, dims, keepdim, dtype=dtype)
    if dims is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: if dim is not specified but ord is, the input must be 1-D or "
                f"2-D, got {A.ndim}-D"
            )
        dims = list(range(A.ndim))
    if len(dims) == 2 or isinstance(ord, str):
        return matrix_norm(A, ord, tuple(dims) if len(dims) == 2 else dim, keepdim, dtype=dtype)
    return vector_norm(A, ord, dims, keepdim, dtype=dtype)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    # As torch.norm: a number p is the vector p-norm over dim (over all of a tuple of dims),
    # "fro" the 2-norm, and only "nuc" (or "fro" over more than two dims) a matrix norm.
    dims = _dims(dim)
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        if dims is None:
            dims = list(range(input.ndim))
        return matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return vector_norm(input, 2 if p is None else p, dims, keepdim, dtype=dtype)


def cumsum(input, dim, *, dtype=None):
    return _C.cumsum(input, dim, dtype=dtype)


def cumprod(input, dim, *, dtype=None):
    return _C.cumprod(input, dim, dtype=dtype)


def logcumsumexp(input, dim):
    _floating_only("logcumsumexp", input)
    if input.numel() == 0:
        return _C.cumsum(input, dim)
    # A prefix scan of logaddexp (associative), log2(n) steps of whole-tensor ops: each step
    # adds the partial result s positions back. Every combination is logaddexp's stable form, so
    # values far apart (0 and 100, or -1e4 and 1e4) keep their precision, which subtracting one
    # maximum per line before a cumsum of exponentials does not.
    dim = dim % input.ndim if input.ndim else 0
    if input.ndim == 0:
        return input.clone()
    n = input.shape[dim]
    out = input
    step = 1
    while step < n:
        pad_shape = list(input.shape)
        pad_shape[dim] = step
        pad = _C.full(pad_shape, -math.inf, dtype=input.dtype, device=input.device)
        if input.is_global:
            from oneflow.framework.global_tensor import constant_like

            pad = constant_like(input, pad)
        shifted = _C.cat([pad, out.narrow(dim, 0, n - step)], dim)
        out = _C.logaddexp(out, shifted)
        step *= 2
    return out if out is not input else input.clone()


def cummax(input, dim):
    return _pair("cummax", _C.cummax(input, dim))


def cummin(input, dim):
    return _pair("cummin", _C.cummin(input, dim))


def mode(input, dim=-1, keepdim=False):
    return _pair("mode", _C.mode(input, dim, keepdim))


def sort(input, dim=-1, descending=False, stable=False):
    return _pair("sort", _C.sort(input, dim, descending))


def argsort(input, dim=-1, descending=False, stable=False):
    return _C.sort(input, dim, descending)[1]


def msort(input):
    return _C.sort(input, 0, False)[0]


def topk(input, k, dim=-1, largest=True, sorted=True):
    if str(input.dtype) == "oneflow.bool":
        raise RuntimeError("topk: bool inputs are not supported, expected a numeric dtype")
    if input.ndim == 0 and k == 0:
        k = 1  # a 0-d input gives its one element for k = 0 as well, as PyTorch
    return _pair("topk", _C.topk(input, k, dim, largest))


def _kth(op, input, k, dim, keepdim, nan_wins):
    if input.dtype == _internal.bool:
        raise NotImplementedError(f"{op}: bool inputs are not supported")
    v, i = _C.kthvalue(input, k, dim, nan_wins)
    if not keepdim and input.ndim:
        d = dim % input.ndim
        v, i = _C.squeeze(v, [d]), _C.squeeze(i, [d])
    return _pair(op, (v, i))


def kthvalue(input, k, dim=-1, keepdim=False):
    return _kth("kthvalue", input, k, dim, keepdim, False)


_EVENLY_SHARED = []


def _evenly_shared(input, value):
    """value, one element chosen from input, whose gradient is shared evenly by the elements
    equal to it (the NaN ones for a NaN value), as PyTorch's median of all elements."""
    import oneflow

    if not _EVENLY_SHARED:

        class EvenlyShared(oneflow.autograd.Function):
            @staticmethod
            def forward(ctx, input, value):
                ctx.save_for_backward(input, value)
                return _C.clone(value)

            @staticmethod
            def backward(ctx, grad):
                input, value = ctx.saved_tensors
                same = _C.logical_or(
                    _C.eq(input, value),
                    _C.logical_and(_C.ne(input, input), _C.ne(value, value)),
                )
                share = _C.div(grad, _C.sum(same, None, False))
                return _C.where(same, share, _C.zeros_like(input)), None

        _EVENLY_SHARED.append(EvenlyShared)
    if input.requires_grad and oneflow.is_grad_enabled():
        return _EVENLY_SHARED[0].apply(input, value.detach())
    return value


def median(input, dim=None, keepdim=False):
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            if input.dtype.is_floating_point:
                return _C.mul(_C.sum(input, None, False), math.nan)  # NaN, as PyTorch
            raise RuntimeError("median: expected a non-empty input")
        if input.dtype == _internal.bool:
            raise NotImplementedError("median: bool inputs are not supported")
        value = _C.kthvalue(flat, (flat.numel() - 1) // 2 + 1, 0, True)[0].reshape(())
        return _evenly_shared(input, value)
    n = input.shape[dim] if input.ndim else 1
    return _kth("median", input, (n - 1) // 2 + 1, dim, keepdim, True)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the non-NaN values (NaN where a slice has none): each slice sorted,
    NaN last, and the value at (count - 1) // 2 of its non-NaN count."""
    if input.dtype == _internal.bool:
        raise NotImplementedError("nanmedian: bool inputs are not supported")
    if dim is None:
        if input.numel() == 0:
            return median(input)
        x = input.reshape(-1)
    else:
        nd = builtins.max(input.ndim, 1)
        if not -nd <= dim < nd:
            raise IndexError(
                f"nanmedian: dimension out of range (expected to be in range of [{-nd}, "
                f"{nd - 1}], but got {dim})"
            )
        if input.ndim:
            d = dim % input.ndim
            x = _C.permute(input, *[a for a in range(input.ndim) if a != d], d)
        else:
            x = input.reshape(1)
        if x.shape[-1] == 0:
            raise IndexError(f"nanmedian: expected reduction dim {dim} to have non-zero size")
    values, indices = _C.sort(x, -1, False)
    count = _C.sum(_C.eq(values, values), [-1], True)
    k = _C.clamp(_C.floor_divide(_C.sub(count, 1), 2), 0, None)
    v = _C.squeeze(_C.gather(values, -1, k), [-1])
    if dim is None:
        return v
    i = _C.squeeze(_C.gather(indices, -1, k), [-1])
    if keepdim and input.ndim:
        d = dim % input.ndim
        v, i = _C.unsqueeze(v, d), _C.unsqueeze(i, d)
    return _pair("nanmedian", (v, i))


def functions():
    return dict(
        prod=prod,
        max=max,
        min=min,
        amax=amax,
        amin=amin,
        aminmax=aminmax,
        all=all,
        any=any,
        argmax=_C.argmax,
        argmin=_C.argmin,
        var=var,
        std=std,
        var_mean=var_mean,
        std_mean=std_mean,
        logsumexp=logsumexp,
        nansum=nansum,
        nanmean=nanmean,
        count_nonzero=count_nonzero,
        norm=norm,
        cumsum=cumsum,
        cumprod=cumprod,
        logcumsumexp=logcumsumexp,
        sort=sort,
        argsort=argsort,
        msort=msort,
        topk=topk,
        kthvalue=kthvalue,
        median=median,
        nanmedian=nanmedian,
        cummax=cummax,
        cummin=cummin,
        mode=mode,
    )


def methods():
    out = functions()
    out["cumsum_"] = lambda self, dim, *, dtype=None: _C.copy_(self, cumsum(self, dim, dtype=dtype))
    out["cumprod_"] = lambda self, dim, *, dtype=None: _C.copy_(
        self, cumprod(self, dim, dtype=dtype)
    )
    return out
