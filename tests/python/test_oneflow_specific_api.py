"""Names of OneFlow's API that PyTorch lacks: nn.functional.sparse_softmax_cross_entropy (against
torch's cross_entropy without reduction), nn.functional.ctc_greedy_decoder (against a NumPy
reference), and the autograd.Function ctx class at oneflow._oneflow_internal.autograd.Function
.FunctionCtx."""

import numpy as np
import pytest
import torch

import oneflow as flow

F = flow.nn.functional


# ---- sparse_softmax_cross_entropy ----------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("label_dtype", ["int32", "int64"])
def test_sparse_softmax_cross_entropy_matches_torch(dtype, label_dtype, device):
    rng = np.random.default_rng(0)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    for shape in [(5,), (4, 3), (2, 3, 2)]:
        C = int(rng.integers(2, 7))
        logits = rng.standard_normal(shape + (C,)) * 4
        labels = rng.integers(0, C, size=shape)
        fx = flow.tensor(logits, dtype=getattr(flow, dtype), device=device, requires_grad=True)
        tx = torch.tensor(logits, dtype=getattr(torch, dtype), requires_grad=True)
        fl = flow.tensor(labels, dtype=getattr(flow, label_dtype), device=device)
        out = F.sparse_softmax_cross_entropy(labels=fl, logits=fx)
        ref = torch.nn.functional.cross_entropy(
            tx.reshape(-1, C), torch.tensor(labels).reshape(-1), reduction="none"
        ).reshape(shape)
        assert tuple(out.shape) == shape and out.dtype == getattr(flow, dtype)
        np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), **tol)
        cot = rng.standard_normal(shape)
        (out * flow.tensor(cot, dtype=out.dtype, device=device)).sum().backward()
        (ref * torch.tensor(cot, dtype=ref.dtype)).sum().backward()
        np.testing.assert_allclose(fx.grad.cpu().numpy(), tx.grad.numpy(), **tol)


def test_sparse_softmax_cross_entropy_example_and_errors():
    # The example of OneFlow's documentation (positional order: labels, then logits).
    logits = flow.tensor(
        [[2.0, -5.0, 0.5, -0.1], [0.0, 0.0, 1.9, 1.4], [-100.0, 100.0, -100.0, -100.0]]
    )
    out = F.sparse_softmax_cross_entropy(flow.tensor([0, 3, 1], dtype=flow.int32), logits)
    np.testing.assert_allclose(out.numpy(), [2.9751e-01, 1.1448e00, 0.0], atol=1e-4)
    with pytest.raises(IndexError, match="out of bounds"):
        # (the kernel's error surfaces at the next synchronisation point: numpy())
        F.sparse_softmax_cross_entropy(flow.tensor([0, 4, 1]), logits).numpy()
    with pytest.raises(ValueError, match="shape"):
        F.sparse_softmax_cross_entropy(flow.tensor([0, 1]), logits)
    with pytest.raises(RuntimeError, match="integer labels"):
        F.sparse_softmax_cross_entropy(flow.tensor([0.0, 1.0, 1.0]), logits)
    with pytest.raises(RuntimeError, match="floating point logits"):
        F.sparse_softmax_cross_entropy(flow.tensor([0, 1, 1]), flow.ones(3, 4, dtype=flow.int64))


# ---- ctc_greedy_decoder ---------------------------------------------------------------------


def greedy_decode_reference(log_probs, lengths, merge_repeated):
    """Best-path CTC decoding, one sequence at a time; the blank is the last class."""
    T, N, C = log_probs.shape
    decoded = np.zeros((N, T), dtype=np.int64)
    neg_sum = np.zeros((N, 1), dtype=log_probs.dtype)
    for n in range(N):
        out, previous = [], None
        for t in range(lengths[n]):
            k = int(np.argmax(log_probs[t, n]))
            neg_sum[n, 0] -= log_probs[t, n, k]
            if k != C - 1 and not (merge_repeated and k == previous):
                out.append(k)
            previous = k
        decoded[n, : len(out)] = out
    return decoded, neg_sum


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctc_greedy_decoder_matches_numpy(dtype, device):
    rng = np.random.default_rng(1)
    for _ in range(12):
        T, N, C = (int(v) for v in rng.integers(1, 7, size=3))
        C += 1
        # Few classes and coarse values: repeats, blanks and ties (first maximum wins) happen.
        log_probs = rng.integers(-3, 1, size=(T, N, C)).astype(dtype) + 0.25 * rng.random((T, N, 1))
        log_probs = log_probs.astype(dtype)
        lengths = rng.integers(0, T + 1, size=N)
        for merge in (True, False):
            decoded, neg_sum = F.ctc_greedy_decoder(
                flow.tensor(log_probs, device=device),
                flow.tensor(lengths, device=device),
                merge_repeated=merge,
            )
            ref_decoded, ref_neg_sum = greedy_decode_reference(log_probs, lengths, merge)
            assert decoded.dtype == flow.int64 and tuple(decoded.shape) == (N, T)
            assert neg_sum.dtype == getattr(flow, dtype) and tuple(neg_sum.shape) == (N, 1)
            np.testing.assert_array_equal(decoded.cpu().numpy(), ref_decoded)
            np.testing.assert_allclose(neg_sum.cpu().numpy(), ref_neg_sum, rtol=1e-6)


def test_ctc_greedy_decoder_example_and_errors():
    # The example of OneFlow's documentation: class 4 (the last) is the blank.
    log_probs = flow.tensor(
        [
            [[-1.54, -1.20, -1.95, -1.65, -1.81], [-1.84, -1.74, -1.58, -1.55, -1.12]],
            [[-1.68, -1.48, -1.89, -1.30, -2.07], [-1.13, -1.45, -1.24, -1.61, -1.66]],
            [[-1.56, -1.40, -2.83, -1.67, -1.48], [-1.20, -2.01, -2.05, -1.95, -1.24]],
            [[-2.09, -1.76, -1.36, -1.67, -1.45], [-1.85, -1.48, -1.34, -2.16, -1.55]],
        ]
    )
    decoded, neg_sum_logits = F.ctc_greedy_decoder(log_probs, flow.tensor([4, 4]))
    assert decoded.numpy().tolist() == [[1, 3, 1, 2], [0, 2, 0, 0]]
    np.testing.assert_allclose(neg_sum_logits.numpy(), [[5.26], [4.79]], rtol=1e-6)
    # "a a - a" (- the blank, class 2) merges to "a a" and, without merging, stays "a a a".
    steps = np.full((4, 1, 3), -5.0, dtype=np.float32)
    for t, k in enumerate([1, 1, 2, 1]):
        steps[t, 0, k] = 0.0
    x = flow.tensor(steps)
    assert F.ctc_greedy_decoder(x, [4])[0].numpy().tolist() == [[1, 1, 0, 0]]
    assert F.ctc_greedy_decoder(x, [4], False)[0].numpy().tolist() == [[1, 1, 1, 0]]
    assert F.ctc_greedy_decoder(x, [3], False)[0].numpy().tolist() == [[1, 1, 0, 0]]
    with pytest.raises(RuntimeError, match="at most|in \\[0, 4\\]"):
        F.ctc_greedy_decoder(log_probs, flow.tensor([5, 4]))
    with pytest.raises(RuntimeError, match="shape"):
        F.ctc_greedy_decoder(log_probs, flow.tensor([4, 4, 4]))
    with pytest.raises(RuntimeError, match="\\[T, N, C\\]"):
        F.ctc_greedy_decoder(log_probs[0], flow.tensor([4, 4]))
    with pytest.raises(RuntimeError, match="integer input_lengths"):
        F.ctc_greedy_decoder(log_probs, flow.tensor([4.0, 4.0]))


# ---- autograd.Function's ctx at its OneFlow path ------------------------------------------


def test_function_ctx_path_resolves_to_the_ctx_class():
    FunctionCtx = flow._oneflow_internal.autograd.Function.FunctionCtx
    assert FunctionCtx is flow.autograd.function.FunctionCtx
    # The extension's own autograd functions are still there.
    assert callable(flow._oneflow_internal.autograd.backward)
    seen = {}

    class MulAndIndex(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            seen["ctx"] = ctx
            ctx.save_for_backward(x, y)
            index = flow.argmax(x)
            ctx.mark_non_differentiable(index)
            return x * y, index

        @staticmethod
        def backward(ctx, grad, grad_index):
            x, y = ctx.saved_tensors
            return grad * y, grad * x

    x = flow.tensor([1.0, 3.0, 2.0], requires_grad=True)
    y = flow.tensor([4.0, 5.0, 6.0], requires_grad=True)
    out, index = MulAndIndex.apply(x, y)
    assert isinstance(seen["ctx"], FunctionCtx)
    saved = seen["ctx"].saved_tensors
    assert len(saved) == 2 and saved[0] is x and saved[1] is y
    assert out.requires_grad and not index.requires_grad and int(index) == 1
    out.sum().backward()
    assert x.grad.numpy().tolist() == [4.0, 5.0, 6.0]
    assert y.grad.numpy().tolist() == [1.0, 3.0, 2.0]
    # The members are those of the class at the API path.
    for name in ["save_for_backward", "saved_tensors", "mark_non_differentiable"]:
        assert hasattr(FunctionCtx, name)
