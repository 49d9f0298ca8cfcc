"""Square float32 matrix multiplication, reported in GFLOP/s (2 n^3 flops per product)."""

from benchmarks.cases._util import randn
from benchmarks.registry import Case, register


def _build_matmul(n):
    def build(fw):
        a, b = randn(fw, n, n), randn(fw, n, n)
        return lambda: a @ b

    return build


for _n in (256, 1024, 2048):
    register(Case(f"matmul {_n}x{_n} f32", "matmul", "GFLOP/s", _build_matmul(_n), 2 * _n**3))
