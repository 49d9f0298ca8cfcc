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


def _build_linear(batch, features):
    """nn.Linear's forward: x @ W.t() + b, with W stored (out, in) as both frameworks keep it."""

    def build(fw):
        x, w, b = randn(fw, batch, features), randn(fw, features, features), randn(fw, features)
        linear = fw.module.nn.functional.linear
        return lambda: linear(x, w, b)

    return build


for _b, _f in ((64, 1024), (256, 2048)):
    register(
        Case(
            f"linear forward {_b}x{_f} -> {_f} f32",
            "matmul",
            "GFLOP/s",
            _build_linear(_b, _f),
            2 * _b * _f * _f,
        )
    )
