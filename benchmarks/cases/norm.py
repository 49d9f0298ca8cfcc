"""Softmax and normalisation layers, float32 (oneDNN kernels in OneFlow).

Forward-only cases report the bytes read and written; forward+backward cases report the bytes of
the forward (input and output) and the backward (output gradient, input, input gradient).
"""

from benchmarks.cases._util import FLOAT_BYTES, op, randn
from benchmarks.registry import Case, register

ROWS, COLS = 4096, 4096
ATT_ROWS, ATT_COLS = 32 * 4 * 64, 64  # the char-GPT's attention rows: batch x heads x queries
SDPA = (32, 4, 64, 32)  # the char-GPT's attention: batch, heads, queries, head width
LN_ROWS, LN_COLS = 8192, 1024
N, C, H, W = 8, 64, 56, 56


def _fwd_bwd(fw, forward, *shape):
    x = randn(fw, *shape).requires_grad_(True)
    g = randn(fw, *shape)

    def step():
        x.grad = None
        forward(x).backward(g)
        return x.grad

    return step


def _build_log_softmax(fw):
    log_softmax = op(fw, "nn.functional.log_softmax")
    x = randn(fw, ROWS, COLS)
    return lambda: log_softmax(x, dim=1)


def _build_attention_softmax(fw):
    softmax = op(fw, "nn.functional.softmax")
    return _fwd_bwd(fw, lambda x: softmax(x, dim=-1), ATT_ROWS, ATT_COLS)


def _attention_inputs(fw, *shape):
    return [randn(fw, *shape).requires_grad_(True) for _ in range(3)]


def _build_attention(fw):
    """The char-GPT's causal attention: q, k, v of (batch, heads, queries, head width)."""
    sdpa = op(fw, "nn.functional.scaled_dot_product_attention")
    q, k, v = _attention_inputs(fw, *SDPA)
    return lambda: sdpa(q, k, v, is_causal=True)


def _build_attention_fwd_bwd(fw):
    sdpa = op(fw, "nn.functional.scaled_dot_product_attention")
    q, k, v = _attention_inputs(fw, *SDPA)
    g = randn(fw, *SDPA)

    def step():
        q.grad = k.grad = v.grad = None
        sdpa(q, k, v, is_causal=True).backward(g)
        return q.grad

    return step


def _build_layer_norm(fw):
    layer_norm = op(fw, "nn.functional.layer_norm")
    w = randn(fw, LN_COLS).requires_grad_(True)
    b = randn(fw, LN_COLS).requires_grad_(True)
    return _fwd_bwd(fw, lambda x: layer_norm(x, (LN_COLS,), w, b), LN_ROWS, LN_COLS)


def _build_batch_norm_eval(fw):
    batch_norm = op(fw, "nn.functional.batch_norm")
    x = randn(fw, N, C, H, W)
    mean, var, w, b = randn(fw, C), randn(fw, C).abs() + 0.5, randn(fw, C), randn(fw, C)
    return lambda: batch_norm(x, mean, var, w, b, training=False)


def _build_batch_norm_train(fw):
    batch_norm = op(fw, "nn.functional.batch_norm")
    mean, var = randn(fw, C) * 0, randn(fw, C) * 0 + 1
    w = randn(fw, C).requires_grad_(True)
    b = randn(fw, C).requires_grad_(True)
    return _fwd_bwd(fw, lambda x: batch_norm(x, mean, var, w, b, training=True), N, C, H, W)


def _build_group_norm(fw):
    group_norm = op(fw, "nn.functional.group_norm")
    w = randn(fw, C).requires_grad_(True)
    b = randn(fw, C).requires_grad_(True)
    return _fwd_bwd(fw, lambda x: group_norm(x, 32, w, b), N, C, H, W)


def _build_instance_norm(fw):
    instance_norm = op(fw, "nn.functional.instance_norm")
    w = randn(fw, C).requires_grad_(True)
    b = randn(fw, C).requires_grad_(True)
    return _fwd_bwd(fw, lambda x: instance_norm(x, weight=w, bias=b), N, C, H, W)


_BOTH = ("oneflow", "torch")
_IMG = N * C * H * W * FLOAT_BYTES
register(
    Case(
        f"log_softmax(dim=1) {ROWS}x{COLS}",
        "norm",
        "GB/s",
        _build_log_softmax,
        2 * ROWS * COLS * FLOAT_BYTES,
        frameworks=_BOTH,
    )
)
register(
    Case(
        f"softmax fwd+bwd {ATT_ROWS}x{ATT_COLS} (attention rows)",
        "norm",
        "GB/s",
        _build_attention_softmax,
        5 * ATT_ROWS * ATT_COLS * FLOAT_BYTES,
        frameworks=_BOTH,
    )
)
_SDPA_BYTES = SDPA[0] * SDPA[1] * SDPA[2] * SDPA[3] * FLOAT_BYTES
register(
    Case(
        "scaled_dot_product_attention causal 32x4x64x32",
        "norm",
        "GB/s",
        _build_attention,
        4 * _SDPA_BYTES,  # q, k, v read, output written
        frameworks=_BOTH,
    )
)
register(
    Case(
        "scaled_dot_product_attention causal fwd+bwd 32x4x64x32",
        "norm",
        "GB/s",
        _build_attention_fwd_bwd,
        12 * _SDPA_BYTES,  # forward 4, backward: q, k, v, out, dout read, dq, dk, dv written
        frameworks=_BOTH,
    )
)
register(
    Case(
        f"layer_norm fwd+bwd {LN_ROWS}x{LN_COLS}",
        "norm",
        "GB/s",
        _build_layer_norm,
        5 * LN_ROWS * LN_COLS * FLOAT_BYTES,
        frameworks=_BOTH,
    )
)
register(
    Case(
        f"batch_norm eval {N}x{C}x{H}x{W}",
        "norm",
        "GB/s",
        _build_batch_norm_eval,
        2 * _IMG,
        frameworks=_BOTH,
    )
)
for name, build in [
    ("batch_norm train", _build_batch_norm_train),
    ("group_norm (32 groups)", _build_group_norm),
    ("instance_norm", _build_instance_norm),
]:
    register(
        Case(f"{name} fwd+bwd {N}x{C}x{H}x{W}", "norm", "GB/s", build, 5 * _IMG, frameworks=_BOTH)
    )
