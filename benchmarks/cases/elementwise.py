"""Large elementwise ops on 16M float32 elements, reported in GB/s of memory traffic."""

from benchmarks.cases._util import FLOAT_BYTES, MB, op, randn
from benchmarks.registry import Case, register

NUMEL = 16 * MB


def _build_binary(symbol):
    def build(fw):
        a, b = randn(fw, NUMEL), randn(fw, NUMEL)
        if symbol == "+":
            return lambda: a + b
        return lambda: a * b

    return build


def _build_unary(paths):
    def build(fw):
        fn = op(fw, paths[fw.name])
        a = randn(fw, NUMEL)
        return lambda: fn(a)

    return build


_EXP = {"oneflow": "exp", "torch": "exp", "numpy": "exp"}
_GELU = {"oneflow": "nn.functional.gelu", "torch": "nn.functional.gelu"}

register(Case("add 16M f32", "elementwise", "GB/s", _build_binary("+"), 3 * NUMEL * FLOAT_BYTES))
register(Case("mul 16M f32", "elementwise", "GB/s", _build_binary("*"), 3 * NUMEL * FLOAT_BYTES))
register(Case("exp 16M f32", "elementwise", "GB/s", _build_unary(_EXP), 2 * NUMEL * FLOAT_BYTES))
register(
    Case(
        "gelu 16M f32",
        "elementwise",
        "GB/s",
        _build_unary(_GELU),
        2 * NUMEL * FLOAT_BYTES,
        frameworks=("oneflow", "torch"),
    )
)
