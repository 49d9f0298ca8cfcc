"""The names of ``oneflow.nn.functional`` that OneFlow has and PyTorch does not, with
TensorFlow's conventions: the per-example sparse softmax cross entropy and the greedy (best
path) CTC decoder. Both are composites of existing kernels; the loss's gradient comes from
theirs, the decoder's outputs are not differentiable."""

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.nn._activations_losses import log_softmax


def sparse_softmax_cross_entropy(labels, logits):
    """-log softmax(logits)[..., labels]: the cross entropy of each example, no reduction.

    labels: integer class indices in [0, C), of shape [d_0, ..., d_{r-1}]; logits: floating,
    of shape [d_0, ..., d_{r-1}, C]. Returns a tensor of the labels' shape and the logits' dtype
    (as ``cross_entropy(..., reduction="none")`` with the classes last)."""
    op = "sparse_softmax_cross_entropy"
    if not logits.is_floating_point():
        raise RuntimeError(f"{op}: expected floating point logits, got {logits.dtype}")
    if labels.is_floating_point() or labels.dtype == oneflow.bool:
        raise RuntimeError(f"{op}: expected integer labels (class indices), got {labels.dtype}")
    if logits.ndim < 1 or tuple(labels.shape) != tuple(logits.shape[:-1]):
        raise ValueError(
            f"{op}: expected labels of shape logits.shape[:-1] = {tuple(logits.shape[:-1])} for "
            f"logits of shape {tuple(logits.shape)}, got labels of shape {tuple(labels.shape)}"
        )
    log_probs = log_softmax(logits, -1)
    index = _C.unsqueeze(labels.to(oneflow.int64), -1)
    # gather checks the labels' range: IndexError "sparse_softmax_cross_entropy: target 7 is out
    # of bounds (expected values in [0, 5))".
    picked = _C.gather(log_probs, -1, index, _target_of=op)
    return _C.neg(_C.squeeze(picked, [-1]))


def ctc_greedy_decoder(log_probs, input_lengths, merge_repeated=True):
    """Greedy (best path) CTC decoding of log_probs [T, N, C], as OneFlow's op.

    At each of the first input_lengths[n] steps of sequence n the most likely class (the first
    of equal maxima) is taken; with merge_repeated a class equal to the previous step's is
    dropped, then the blank, which is the last class C - 1 as in TensorFlow, is dropped. Returns
    (decoded, neg_sum_logits): decoded [N, T] int64, the classes emitted left-aligned and padded
    with 0; neg_sum_logits [N, 1] of log_probs' dtype, minus the sum of the maxima taken."""
    op = "ctc_greedy_decoder"
    if log_probs.ndim != 3:
        raise RuntimeError(
            f"{op}: expected log_probs of shape [T, N, C], got shape {tuple(log_probs.shape)}"
        )
    if not log_probs.is_floating_point():
        raise RuntimeError(f"{op}: expected floating point log_probs, got {log_probs.dtype}")
    T, N, C = log_probs.shape
    if not isinstance(input_lengths, oneflow.Tensor):
        input_lengths = oneflow.tensor(list(input_lengths), dtype=oneflow.int64)
    if input_lengths.is_floating_point() or input_lengths.dtype == oneflow.bool:
        raise RuntimeError(f"{op}: expected integer input_lengths, got {input_lengths.dtype}")
    if tuple(input_lengths.shape) != (N,):
        raise RuntimeError(
            f"{op}: expected input_lengths of shape [batch_size] = ({N},), got "
            f"{tuple(input_lengths.shape)}"
        )
    lengths = input_lengths.to(device=log_probs.device, dtype=oneflow.int64)
    if N and (bool((lengths > T).any()) or bool((lengths < 0).any())):
        bad = [v for v in lengths.cpu().numpy().tolist() if v > T or v < 0][0]
        raise RuntimeError(
            f"{op}: expected input_lengths to have values in [0, {T}] (the length of log_probs' "
            f"time dimension), but got value {bad}"
        )
    with oneflow.no_grad():
        best, labels = log_probs.max(dim=-1)  # [T, N]
        steps = oneflow.arange(T, device=log_probs.device).unsqueeze(1)  # [T, 1]
        within = steps < lengths.unsqueeze(0)
        neg_sum_logits = -oneflow.where(within, best, 0.0).sum(0).reshape(N, 1)
        emit = within & (labels != C - 1)
        if merge_repeated:
            # The previous step's class, blanks included: "a - a" (- the blank) emits a twice.
            previous = oneflow.cat(
                [
                    oneflow.full((1, N), -1, dtype=oneflow.int64, device=log_probs.device),
                    labels[:-1],
                ]
            )
            emit = emit & (labels != previous)
        # Left-align the emitted classes, keeping their order: sort the steps by (dropped, step).
        key, order = oneflow.sort(oneflow.where(emit, steps, steps + T), dim=0)
        decoded = oneflow.where(key < T, labels.gather(0, order), 0)
    return decoded.transpose(0, 1).contiguous(), neg_sum_logits.to(log_probs.dtype)


__all__ = ["ctc_greedy_decoder", "sparse_softmax_cross_entropy"]
