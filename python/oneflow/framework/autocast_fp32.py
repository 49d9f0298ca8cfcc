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


def _widening(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args = tuple(_C._autocast_to_float(a) if isinstance(a, Tensor) else a for a in args)
        return fn(*args, **kwargs)

    wrapper._autocast_fp32 = True
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
