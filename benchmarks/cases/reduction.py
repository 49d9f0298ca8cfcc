"""Reductions over a 4096x4096 float32 matrix, reported in GB/s of input read."""

from benchmarks.cases._util import FLOAT_BYTES, op, randn
from benchmarks.registry import Case, register

ROWS = COLS = 4096
READ_BYTES = ROWS * COLS * FLOAT_BYTES


def _build_method(name, *args):
    def build(fw):
        x = randn(fw, ROWS, COLS)
        method = getattr(x, name)
        return lambda: method(*args)

    return build


def _build_softmax(fw):
    softmax = op(fw, "nn.functional.softmax")
    x = randn(fw, ROWS, COLS)
    return lambda: softmax(x, dim=1)


register(Case("sum(dim=1) 4096x4096", "reduction", "GB/s", _build_method("sum", 1), READ_BYTES))
register(Case("sum() 4096x4096", "reduction", "GB/s", _build_method("sum"), READ_BYTES))
register(Case("mean(dim=1) 4096x4096", "reduction", "GB/s", _build_method("mean", 1), READ_BYTES))
register(
    Case(
        "softmax(dim=1) 4096x4096",
        "reduction",
        "GB/s",
        _build_softmax,
        2 * READ_BYTES,
        frameworks=("oneflow", "torch"),
    )
)
