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
    for name in ["max", "min", "sort", "topk", "median", "kthvalue", "mode", "cummax", "cummin"]
}


def _pair(name, pair):
    return _values_indices[name](*pair)


def _dims(dim):
    if dim is None:
        return None
    return [dim] if isinstance(dim, int) else list(dim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    return _C.prod(input, dim, keepdim, dtype=dtype)


def _extreme(name, reduce_all, with_dim, elementwise):
    def fn(input, dim=None, keepdim=False, *, out=None):
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
    return collections.namedtuple("aminmax", ["min", "max"])(mn, mx)


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


def _centered(op, input, dim, unbiased, correction):
    """input minus its mean over dim, the reduced dims, and the divisor n - correction."""
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
    n = input.numel() if dims is None else math.prod(input.shape[d] for d in dims)
    return _C.sub(input, _C.mean(input, dims, True)), dims, builtins.max(n - c, 0)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    diff, dims, divisor = _centered("var", input, dim, unbiased, correction)
    return _C.div(_C.sum(_C.mul(diff, diff), dims, keepdim), divisor)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    # The norm of the deviations: where they are all zero the gradient is zero, not NaN (as
    # PyTorch), which sqrt(var) would give.
    diff, dims, divisor = _centered("std", input, dim, unbiased, correction)
    return _C.div(vector_norm(diff, 2, dims, keepdim), math.sqrt(divisor))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    v = var(input, dim, unbiased, keepdim, correction=correction)
    return v, _C.mean(input, _dims(dim), keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    s = std(input, dim, unbiased, keepdim, correction=correction)
    return s, _C.mean(input, _dims(dim), keepdim)


def logsumexp(input, dim, keepdim=False):
    dims = _dims(dim)
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
    return _C.sum(x, _dims(dim), keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    _floating_only("nanmean", input if dtype is None else input.to(dtype), RuntimeError)
    valid = _C.eq(input, input)
    total = nansum(input, dim, keepdim, dtype=dtype)
    return _C.div(total, _C.sum(valid, _dims(dim), keepdim))


def count_nonzero(input, dim=None):
    # A bool input is its own mask (ne(mask, 0) would promote it to int64 first).
    mask = input if input.dtype == _internal.bool else _C.ne(input, 0)
    return _C.sum(mask, _dims(dim), False)


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype)
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
    d0, d1 = dim
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
    raise NotImplementedError(f"linalg.matrix_norm: ord={ord!r} is not implemented yet")


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("norm: the nuclear norm is not implemented yet")
    if isinstance(dim, (list, tuple)) and len(dim) == 2 and p not in (2,):
        return matrix_norm(input, p, tuple(dim), keepdim, dtype=dtype)
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def cumsum(input, dim, *, dtype=None):
    return _C.cumsum(input, dim, dtype=dtype)


def cumprod(input, dim, *, dtype=None):
    return _C.cumprod(input, dim, dtype=dtype)


def logcumsumexp(input, dim):
    _floating_only("logcumsumexp", input)
    if input.numel() == 0:
        return _C.cumsum(input, dim)
    m = _C.amax(input, [dim], True).detach()
    m = _C.where(_C.eq(_C.abs(m), math.inf), 0.0, m)
    return _C.add(_C.log(_C.cumsum(_C.exp(_C.sub(input, m)), dim)), m)


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


def median(input, dim=None, keepdim=False):
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            if input.dtype.is_floating_point:
                return _C.mul(_C.sum(input, None, False), math.nan)  # NaN, as PyTorch
            raise RuntimeError("median: expected a non-empty input")
        if input.dtype == _internal.bool:
            raise NotImplementedError("median: bool inputs are not supported")
        return _C.kthvalue(flat, (flat.numel() - 1) // 2 + 1, 0, True)[0].reshape(())
    n = input.shape[dim] if input.ndim else 1
    return _kth("median", input, (n - 1) // 2 + 1, dim, keepdim, True)


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
        cummax=cummax,
        cummin=cummin,
        mode=mode,
    )


def methods():
    out = functions()
    out["cumsum_"] = lambda self, dim, *, dtype=None: _C.copy_(self, cumsum(self, dim, dtype=dtype))
    return out
