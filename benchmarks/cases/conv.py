"""Convolution and pooling on a ResNet-like layer: N=8, 64 channels, 56x56, float32.

conv2d forward+backward (3x3, padding 1, with bias; gradients of input, weight and bias) in
GFLOP/s, and max_pool2d 3x3 stride 2 forward in GB/s.
"""

from benchmarks.cases._util import FLOAT_BYTES, op, randn
from benchmarks.registry import Case, register

N, C, H, W, K = 8, 64, 56, 56, 3


def _conv_flops():
    """Forward, backward-data and backward-weights: 2 * N * O * H * W * C * K * K each."""
    return 3 * 2 * N * C * H * W * C * K * K


def _build_conv_step(fw):
    conv2d = op(fw, "nn.functional.conv2d")
    x = randn(fw, N, C, H, W).requires_grad_(True)
    w = randn(fw, C, C, K, K).requires_grad_(True)
    b = randn(fw, C).requires_grad_(True)

    def step():
        x.grad = w.grad = b.grad = None
        conv2d(x, w, b, padding=1).sum().backward()
        return w.grad

    return step


def _build_max_pool(fw):
    max_pool2d = op(fw, "nn.functional.max_pool2d")
    x = randn(fw, N, C, H, W)
    return lambda: max_pool2d(x, 3, 2)


_POOL_OUT = (H - 3) // 2 + 1

register(
    Case(
        f"conv2d fwd+bwd {N}x{C}x{H}x{W} 3x3 p1 f32",
        "conv",
        "GFLOP/s",
        _build_conv_step,
        _conv_flops(),
        frameworks=("oneflow", "torch"),
    )
)
register(
    Case(
        f"max_pool2d 3x3 s2 {N}x{C}x{H}x{W} f32",
        "conv",
        "GB/s",
        _build_max_pool,
        (N * C * H * W + N * C * _POOL_OUT * _POOL_OUT) * FLOAT_BYTES,
        frameworks=("oneflow", "torch"),
    )
)
