"""Per-op dispatch overhead: ``x + 1`` on tiny tensors, reported in microseconds per op."""

from benchmarks.cases._util import randn
from benchmarks.registry import Case, register

OPS_PER_CALL = 100


def _build_add_scalar(numel):
    def build(fw):
        x = randn(fw, numel)

        def run():
            for _ in range(OPS_PER_CALL):
                x + 1

        return run

    return build


for _numel in (1, 64):
    register(
        Case(
            name=f"x + 1, {_numel} elem",
            family="dispatch",
            metric="us/op",
            build=_build_add_scalar(_numel),
            ops_per_call=OPS_PER_CALL,
        )
    )


CHAIN_OPS = 100


def _build_chain(fw):
    """100 dependent elementwise ops on a 256x256 tensor (25 x mul, add, tanh, relu)."""
    x = randn(fw, 256, 256)

    def run():
        y = x
        for _ in range(CHAIN_OPS // 4):
            y = (y * 0.5 + 1.0).tanh().relu()
        return y

    return run


register(
    Case(
        name="chain of 100 elementwise ops, 256x256",
        family="dispatch",
        metric="us/op",
        build=_build_chain,
        ops_per_call=CHAIN_OPS,
        frameworks=("oneflow", "torch"),
    )
)


def _build_small(make):
    """OPS_PER_CALL calls of one op on tiny operands: make(fw) gives the zero-argument call."""

    def build(fw):
        call = make(fw)

        def run():
            for _ in range(OPS_PER_CALL):
                call()

        return run

    return build


def _trace_8x8(fw):
    x = randn(fw, 8, 8)
    return lambda: fw.module.trace(x)


def _outer_64(fw):
    a, b = randn(fw, 64), randn(fw, 64)
    return lambda: fw.module.outer(a, b)


def _dot_64(fw):
    a, b = randn(fw, 64), randn(fw, 64)
    return lambda: fw.module.dot(a, b)


def _abs_method_64(fw):
    x = randn(fw, 64)
    return lambda: x.abs()


for _name, _make in (
    ("trace 8x8", _trace_8x8),
    ("outer 64 x 64", _outer_64),
    ("dot 64", _dot_64),
    ("x.abs() method, 64 elem", _abs_method_64),
):
    register(
        Case(
            name=_name,
            family="dispatch",
            metric="us/op",
            build=_build_small(_make),
            ops_per_call=OPS_PER_CALL,
            frameworks=("oneflow", "torch"),
        )
    )
