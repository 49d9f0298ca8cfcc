"""A small training step: forward and backward of ``sum(relu(x @ w1) @ w2)``."""

from benchmarks.cases._util import randn
from benchmarks.registry import Case, register

BATCH, HIDDEN, OUT = 256, 1024, 10


def _flops():
    """Forward: two matmuls; backward: grad of h, grad of w2, grad of w1 (x needs none)."""
    mm1 = 2 * BATCH * HIDDEN * HIDDEN
    mm2 = 2 * BATCH * HIDDEN * OUT
    return mm1 + mm2 + mm2 + mm2 + mm1


def _build_step(fw):
    x = randn(fw, BATCH, HIDDEN)
    w1 = randn(fw, HIDDEN, HIDDEN).requires_grad_(True)
    w2 = randn(fw, HIDDEN, OUT).requires_grad_(True)

    def step():
        w1.grad = None
        w2.grad = None
        loss = ((x @ w1).relu() @ w2).sum()
        loss.backward()
        return w1.grad

    return step


register(
    Case(
        "train step MLP 256x1024x1024x10",
        "training",
        "GFLOP/s",
        _build_step,
        _flops(),
        frameworks=("oneflow", "torch"),
    )
)
