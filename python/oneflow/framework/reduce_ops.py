"""Reductions, scans and sorting of ``oneflow.*`` and ``oneflow.Tensor`` (PyTorch signatures):
the kernels' prod/amax/amin/max/min/argmax/all/any/cumsum/cumprod/sort from ``_C`` and the
statistics composed from them (var, std, logsumexp, norm, median, topk, ...)."""

import builtins
import collections
import math

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


def all(input, dim=None, keepdim=False):
    return _C.all(input, _dims(dim), keepdim)


def any(input, dim=None, keepdim=False):
    return _C.any(input, _dims(dim), keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(unbiased, (int, list, tuple)) and not isinstance(unbiased, builtins.bool):
        dim, unbiased = unbiased, None  # var(x, 0) style positional dim
    c = _correction(unbiased, correction)
    dims = _dims(dim)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"var: expected a floating point input, got {input.dtype}")
    n = input.numel() if dims is None else math.prod(input.shape[d] for d in dims)
    mean = _C.mean(input, dims, True)
    diff = _C.sub(input, mean)
    total = _C.sum(_C.mul(diff, diff), dims, keepdim)
    return _C.div(total, builtins.max(n - c, 0))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _C.sqrt(var(input, dim, unbiased, keepdim, correction=correction))


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
    valid = _C.eq(input, input)
    total = nansum(input, dim, keepdim, dtype=dtype)
    return _C.div(total, _C.sum(valid, _dims(dim), keepdim))


def count_nonzero(input, dim=None):
    return _C.sum(_C.ne(input, 0), _dims(dim), False)


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: expected a floating point input, got {x.dtype}")
    dims = _dims(dim)
    a = _C.abs(x)
    if ord == math.inf:
        return _C.amax(a, dims, keepdim)
    if ord == -math.inf:
        return _C.amin(a, dims, keepdim)
    if ord == 0:
        return _C.sum(_C.ne(x, 0), dims, keepdim, dtype=x.dtype)
    if ord == 1:
        return _C.sum(a, dims, keepdim)
    if ord == 2:
        return _C.sqrt(_C.sum(_C.mul(x, x), dims, keepdim))
    return _C.pow(_C.sum(_C.pow(a, ord), dims, keepdim), 1.0 / ord)


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype)
    d0, d1 = dim
    if ord == "fro":
        return vector_norm(x, 2, dim, keepdim)
    if ord in (1, -1, math.inf, -math.inf):
        # 1: max column sum of |x|; inf: max row sum.
        sum_dim, pick_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = _C.sum(_C.abs(x), [sum_dim], True)
        out = (_C.amax if ord > 0 else _C.amin)(sums, [pick_dim], True)
        if not keepdim:
            out = _C.squeeze(out, [d0 % x.ndim, d1 % x.ndim])
        return out
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
    return _pair("topk", _C.topk(input, k, dim, largest))


def _kth(op, input, k, dim, keepdim, nan_wins):
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
            raise RuntimeError("median: expected a non-empty input")
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
