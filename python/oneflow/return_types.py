"""oneflow.return_types (torch.return_types): the named-tuple types of the results of the ops
that return several tensors, by the op's name (oneflow.return_types.max is the type of
oneflow.max(x, dim)). They are the classes the ops return, so isinstance checks hold."""

from oneflow import linalg as _linalg
from oneflow.framework import linalg_decomp as _decomp
from oneflow.framework import linalg_eig as _eig
from oneflow.framework import math_extra as _math_extra
from oneflow.framework import reduce_ops as _reduce_ops
from oneflow.framework import tensor_extra as _tensor_extra
from oneflow.framework import torch_extra_functions as _extra

_values_indices = _reduce_ops._values_indices
max = _values_indices["max"]
min = _values_indices["min"]
sort = _values_indices["sort"]
topk = _values_indices["topk"]
median = _values_indices["median"]
nanmedian = _values_indices["nanmedian"]
kthvalue = _values_indices["kthvalue"]
mode = _values_indices["mode"]
cummax = _values_indices["cummax"]
cummin = _values_indices["cummin"]
aminmax = _reduce_ops._aminmax
frexp = _math_extra.frexp_result
histogram = _tensor_extra.histogram_result
triangular_solve = _extra.TriangularSolveResult
slogdet = _decomp.TorchSlogdetResult
qr = _decomp.TorchQrResult
svd = _decomp.TorchSvdResult
lu_unpack = _decomp.LuUnpackResult
linalg_cholesky_ex = _decomp.CholeskyExResult
linalg_eig = _eig.EigResult
linalg_eigh = _decomp.EighResult
linalg_inv_ex = _linalg._InvEx
linalg_lstsq = _decomp.LstsqResult
linalg_lu = _decomp.LuResult
linalg_lu_factor = _decomp.LuFactorResult
linalg_lu_factor_ex = _decomp.LuFactorExResult
linalg_qr = _decomp.QrResult
linalg_slogdet = _decomp.SlogdetResult
linalg_solve_ex = _decomp.SolveExResult
linalg_svd = _decomp.SvdResult

__all__ = [
    "aminmax",
    "cummax",
    "cummin",
    "frexp",
    "histogram",
    "kthvalue",
    "linalg_cholesky_ex",
    "linalg_eig",
    "linalg_eigh",
    "linalg_inv_ex",
    "linalg_lstsq",
    "linalg_lu",
    "linalg_lu_factor",
    "linalg_lu_factor_ex",
    "linalg_qr",
    "linalg_slogdet",
    "linalg_solve_ex",
    "linalg_svd",
    "lu_unpack",
    "max",
    "median",
    "min",
    "mode",
    "nanmedian",
    "qr",
    "slogdet",
    "sort",
    "svd",
    "topk",
    "triangular_solve",
]
all_return_types = [globals()[name] for name in __all__]
