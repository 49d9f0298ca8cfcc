"""The ops PyTorch's autocast runs in float32 (its "fp32" lists) that are written outside the
core's autocast-aware functions: under autocast their 16-bit float tensor arguments are widened
to float32 first, so prod, cdist, trace and the linear-algebra routines give float32 results as
in PyTorch (and do not fail for lack of 16-bit kernels). Outside autocast nothing changes."""

import functools

from oneflow._oneflow_internal import _C, Tensor

# (prod and trace widen in the core, at no cost outside autocast)
_TOP = """
cdist inverse pinverse quantile nanquantile cholesky cholesky_inverse cholesky_solve
lu_solve qr svd triangular_solve geqrf orgqr ormqr
"""
_LINALG = """
inv inv_ex cholesky cholesky_ex svd svdvals qr eig eigh eigvals eigvalsh lstsq solve solve_ex
det slogdet pinv matrix_rank lu lu_factor lu_solve
"""
_METHODS = """
inverse pinverse quantile nanquantile cholesky cholesky_inverse cholesky_solve
lu_solve qr svd triangular_solve
"""


def _autocast_kind(args):
    """The device type whose autocast state applies to a call with these arguments."""
    first = next((a for a in args if isinstance(a, Tensor)), None)
    return "cuda" if first is not None and first.is_cuda else "cpu"


def _run_without_autocast(kind, fn, args, kwargs):
    """fn(*args, **kwargs) with autocast off for `kind`: an op on one of PyTorch's lists is one
    op there, so the ops it is written with here must not be lowered or widened again."""
    enabled, dtype = _C._autocast_get(kind)
    if not enabled:
        return fn(*args, **kwargs)
    _C._autocast_set(kind, False, dtype)
    try:
        return fn(*args, **kwargs)
    finally:
        _C._autocast_set(kind, True, dtype)


def _widening(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        kind = _autocast_kind(args)
        if not _C._autocast_get(kind)[0]:
            return fn(*args, **kwargs)
        args = tuple(_C._autocast_to_float(a) if isinstance(a, Tensor) else a for a in args)
        return _run_without_autocast(kind, fn, args, kwargs)

    wrapper._autocast_fp32 = True
    return wrapper


def fp32(fn):
    """Decorator of an nn function on PyTorch's float32 autocast list: its 16-bit float tensor
    arguments are widened to float32 under autocast (the wrapped function is what its module
    binds, so the nn modules that call it get it too)."""
    return _widening(fn)


def fp32_unless_constant(fn):
    """pad: the reflection and replication pads are on the float32 list, the constant pad not."""

    widened = _widening(fn)

    @functools.wraps(fn)
    def wrapper(input, pad, mode="constant", value=None):
        return (fn if mode == "constant" else widened)(input, pad, mode, value)

    return wrapper


def outside_autocast(fn):
    """Decorator of an op PyTorch's autocast leaves alone (mv, addmv, bilinear) that is written
    with ops it lowers (matmul): it runs with autocast off for its inputs' device, so float32
    inputs give float32 results as in PyTorch."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return _run_without_autocast(_autocast_kind(args), fn, args, kwargs)

    return wrapper


def _wrap(owner, names):
    for name in names.split():
        fn = getattr(owner, name, None)
        if fn is not None and not getattr(fn, "_autocast_fp32", False):
            setattr(owner, name, _widening(fn))


def install(flow):
    _wrap(flow, _TOP)
    _wrap(flow.linalg, _LINALG)
    _wrap(Tensor, _METHODS)
