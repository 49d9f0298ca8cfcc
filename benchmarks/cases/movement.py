"""Data movement and scans on 2048x2048 float32 with random int64 indices: gather, scatter_add,
scatter along an outer dim, cumsum along an outer dim, sort of rows. Rates count the bytes of
the input, index and output once."""

from benchmarks.cases._util import FLOAT_BYTES, op, randn
from benchmarks.registry import Case, register

N = 2048
_INDEX_BYTES = 8


def _index(fw):
    fw.module.manual_seed(1)
    return fw.module.randint(0, N, (N, N), device=fw.device)


def _build_gather(fw):
    gather, x, i = op(fw, "gather"), randn(fw, N, N), _index(fw)
    return lambda: gather(x, 1, i)


def _build_scatter_add(fw):
    scatter_add, x, i = op(fw, "scatter_add"), randn(fw, N, N), _index(fw)
    return lambda: scatter_add(x, 1, i, x)


def _build_scatter(fw):
    scatter, x = op(fw, "scatter"), randn(fw, N, N)
    fw.module.manual_seed(2)
    i = fw.module.rand(N, N, device=fw.device).argsort(0)  # a permutation per column
    return lambda: scatter(x, 0, i, x)


def _build_cumsum(fw):
    cumsum, x = op(fw, "cumsum"), randn(fw, N, N)
    return lambda: cumsum(x, 0)


def _build_sort(fw):
    sort, x = op(fw, "sort"), randn(fw, N, N)
    return lambda: sort(x, 1)


_ELEMS = N * N
_BOTH = ("oneflow", "torch")
for name, build, nbytes in [
    (f"gather(dim=1) {N}x{N}", _build_gather, _ELEMS * (2 * FLOAT_BYTES + _INDEX_BYTES)),
    (f"scatter_add(dim=1) {N}x{N}", _build_scatter_add, _ELEMS * (3 * FLOAT_BYTES + _INDEX_BYTES)),
    (f"scatter(dim=0) {N}x{N}", _build_scatter, _ELEMS * (3 * FLOAT_BYTES + _INDEX_BYTES)),
    (f"cumsum(dim=0) {N}x{N}", _build_cumsum, _ELEMS * 2 * FLOAT_BYTES),
    (f"sort(dim=1) {N}x{N}", _build_sort, _ELEMS * (2 * FLOAT_BYTES + _INDEX_BYTES)),
]:
    register(Case(name, "movement", "GB/s", build, nbytes, frameworks=_BOTH))
