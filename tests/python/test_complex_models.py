"""Complex tensors as models use them, against PyTorch: LLaMA's reference rotary embedding (polar,
view_as_complex, a complex product, view_as_real) eagerly and compiled with nn.Graph, a spectrogram
loss through stft, and complex tensors in state dicts and saved files."""

import io

import numpy as np
import pytest
import torch

import oneflow as flow


def precompute_freqs_cis(lib, dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (lib.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = lib.arange(end).float()
    freqs = lib.outer(t, freqs).float()
    return lib.polar(lib.ones_like(freqs), freqs)


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(lib, xq, xk, freqs_cis):
    xq_ = lib.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = lib.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = lib.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = lib.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def rope_inputs(seed=0, shape=(2, 7, 3, 16)):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(
        np.float32
    )


def test_llama_rotary_embedding_like_torch(device):
    q, k = rope_inputs()
    outs, grads = {}, {}
    for lib, dev in ((torch, "cpu"), (flow, device)):
        xq = lib.tensor(q, device=dev, requires_grad=True)
        xk = lib.tensor(k, device=dev, requires_grad=True)
        freqs = precompute_freqs_cis(lib, 16, 32).to(dev)[3:10]
        oq, ok = apply_rotary_emb(lib, xq, xk, freqs)
        (oq * oq.detach() + ok * 2).sum().backward()
        outs[lib] = (oq.detach().cpu().numpy().copy(), ok.detach().cpu().numpy().copy())
        grads[lib] = (xq.grad.cpu().numpy().copy(), xk.grad.cpu().numpy().copy())
    for f, t in zip(outs[flow] + grads[flow], outs[torch] + grads[torch]):
        np.testing.assert_allclose(f, t, rtol=1e-5, atol=1e-5)


def test_rotary_embedding_compiles_in_a_graph(device):
    q, k = rope_inputs(1)

    class Rope(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = flow.nn.Linear(16, 16)
            self.freqs = precompute_freqs_cis(flow, 16, 7).to(device)

        def forward(self, xq, xk):
            oq, ok = apply_rotary_emb(flow, self.proj(xq), xk, self.freqs)
            return oq + ok

    model = Rope().to(device)

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model

        def build(self, xq, xk):
            return self.model(xq, xk)

    xq, xk = flow.tensor(q, device=device), flow.tensor(k, device=device)
    eager = model(xq, xk)
    graph = G()
    for _ in range(2):  # the trace, then a replay
        np.testing.assert_allclose(
            graph(xq, xk).cpu().numpy(), eager.detach().cpu().numpy(), rtol=1e-5, atol=1e-5
        )


def test_spectrogram_loss_like_torch(device):
    rng = np.random.default_rng(3)
    signal = rng.standard_normal((2, 800)).astype(np.float32)
    target = np.abs(rng.standard_normal((2, 65, 11))).astype(np.float32)
    results = {}
    for lib, dev in ((torch, "cpu"), (flow, device)):
        x = lib.tensor(signal, device=dev, requires_grad=True)
        window = lib.hann_window(128, device=dev)
        spec = lib.stft(x, 128, hop_length=80, window=window, return_complex=True)
        mag = spec.abs()
        loss = ((mag - lib.tensor(target, device=dev)) ** 2).mean()
        loss.backward()
        results[lib] = (loss.item(), x.grad.cpu().numpy().copy())
    assert results[flow][0] == pytest.approx(results[torch][0], rel=1e-5)
    np.testing.assert_allclose(results[flow][1], results[torch][1], rtol=1e-4, atol=1e-6)


def test_complex_tensors_save_load_and_move_with_modules(device, tmp_path):
    class M(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("phases", flow.polar(flow.ones(4), flow.arange(4.0)))
            self.w = flow.nn.Parameter(flow.randn(4, dtype=flow.complex64))

    m = M().to(device)
    assert m.phases.dtype == flow.complex64 and m.w.dtype == flow.complex64
    m.half()  # floating parameters only: complex ones keep their dtype, as PyTorch
    assert m.phases.dtype == flow.complex64 and m.w.dtype == flow.complex64
    path = tmp_path / "m.pt"
    flow.save(m.state_dict(), str(path))
    state = flow.load(str(path))
    np.testing.assert_array_equal(state["phases"].cpu().numpy(), m.phases.cpu().numpy())
    np.testing.assert_array_equal(state["w"].cpu().numpy(), m.w.detach().cpu().numpy())
    buf = io.BytesIO()
    flow.save(flow.tensor([1 + 2j, -3j], dtype=flow.complex128), buf)
    buf.seek(0)
    back = flow.load(buf)
    assert back.dtype == flow.complex128
    np.testing.assert_array_equal(back.numpy(), np.array([1 + 2j, -3j]))
