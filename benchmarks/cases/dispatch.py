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
