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
