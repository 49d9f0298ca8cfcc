"""oneflow.linalg: norms, inverse, determinants and the decompositions (LU from LAPACK)."""

from oneflow._oneflow_internal import _C
from oneflow._oneflow_internal import _LinAlgError as LinAlgError
from oneflow.framework.linalg_decomp import (
    cholesky,
    cholesky_ex,
    cond,
    eigh,
    eigvalsh,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_exp,
    matrix_norm,
    matrix_rank,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
    svd,
    svdvals,
)
from oneflow.framework.linalg_eig import eig, eigvals
from oneflow.framework.linalg_ops import cross as _cross
from oneflow.framework.linalg_ops import det, inv
from oneflow.framework.reduce_ops import vector_norm


def cross(input, other, dim=-1):
    return _cross(input, other, dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices in A's last two dims (oneflow.diagonal with batch-first
    defaults)."""
    from oneflow._oneflow_internal import _C

    return _C.diagonal(A, offset, dim1, dim2)


def matmul(input, other):
    return _C.matmul(input, other)


def matrix_power(A, n):
    import oneflow

    return oneflow.matrix_power(A, n)


def inv_ex(A, *, check_errors=False):
    """(inverse, info) as PyTorch's: info is 0 for every matrix (a singular one raises here
    whether or not check_errors is set)."""
    import oneflow

    out = inv(A)
    return _InvEx(out, oneflow.zeros(tuple(A.shape[:-2]), dtype=oneflow.int32, device=A.device))


def vecdot(x, y, *, dim=-1):
    """The dot products of x and y along dim, broadcasting the other dims; a complex x is
    conjugated, as PyTorch's sum(x.conj() * y)."""
    if x.dtype.is_complex:
        x = _C.conj_physical(x)
    return _C.sum(_C.mul(x, y), [dim], False)


def vander(x, *, N=None):
    """Powers x^0, x^1, ..., x^(N - 1) along a new last dim (increasing, unlike oneflow.vander)."""
    import oneflow

    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n < 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {n}")
    from oneflow.framework.global_tensor import constant_like

    powers = constant_like(x, oneflow.arange(n, device=x.device))
    if not x.dtype.is_floating_point:
        return oneflow.pow(x.unsqueeze(-1).to(oneflow.int64), powers).to(x.dtype)
    return oneflow.pow(x.unsqueeze(-1), powers.to(x.dtype))


def multi_dot(tensors):
    """The product of a chain of matrices in the order of fewest multiplications (dynamic
    programming over the split points), the first and last may be 1-D (a row and a column)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        if t.ndim != 2 and not (t.ndim == 1 and i in (0, n - 1)):
            raise RuntimeError(
                f"multi_dot(): tensor {i} must be 2D"
                + (" or 1D" if i in (0, n - 1) else "")
                + f" but got {t.ndim}D"
            )
    mats = list(tensors)
    first_1d, last_1d = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_1d:
        mats[0] = mats[0].unsqueeze(0)
    if last_1d:
        mats[-1] = mats[-1].unsqueeze(1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(tensors[i].shape)} and "
                f"{tuple(tensors[i + 1].shape)} cannot be multiplied"
            )
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return _C.matmul(product(i, k), product(k + 1, j))

    out = product(0, n - 1)
    if first_1d:
        out = out.squeeze(0)
    if last_1d:
        out = out.squeeze(-1)
    return out


def _inv_ex_type():
    import collections

    return collections.namedtuple("inv_ex", ["inverse", "info"])


_InvEx = _inv_ex_type()

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "inv_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "vander",
    "vecdot",
    "vector_norm",
]
