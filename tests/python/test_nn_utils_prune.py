"""nn.utils.prune, nn.attention.sdpa_kernel, nn.modules.utils, utils.hooks / model_zoo against
PyTorch."""

import importlib

import numpy as np
import pytest
import torch

import oneflow as flow


def _run(T):
    prune = importlib.import_module(T.__name__ + ".nn.utils.prune")
    m = T.nn.Linear(4, 3)
    w = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    with T.no_grad():
        m.weight.copy_(T.tensor(w))
        m.bias.copy_(T.tensor([0.1, -0.2, 0.3]))
    out = []
    prune.l1_unstructured(m, "weight", amount=0.25)
    out.append(sorted(n for n, _ in m.named_parameters()))
    out.append(sorted(n for n, _ in m.named_buffers()))
    out.append(m.weight_mask.numpy().astype(int).tolist())
    prune.ln_structured(m, "weight", amount=1, n=2, dim=0)  # combined in a PruningContainer
    out.append(m.weight_mask.numpy().astype(int).tolist())
    y = m(T.ones(2, 4))
    out.append(np.round(y.detach().numpy(), 4).tolist())
    y.sum().backward()
    out.append(m.weight_orig.grad.numpy().tolist())
    out.append(prune.is_pruned(m))
    prune.remove(m, "weight")
    out.append(sorted(n for n, _ in m.named_parameters()))
    out.append(m.weight.detach().numpy().tolist())
    out.append(prune.is_pruned(m))
    a, b = T.nn.Linear(3, 2), T.nn.Linear(3, 2)
    with T.no_grad():
        a.weight.copy_(T.tensor([[1.5, -2, 3], [0.5, 4, -6]]))
        b.weight.copy_(T.tensor([[0.1, 7, -0.2], [2, -3, 1]]))
        a.bias.copy_(T.tensor([0.3, 0.4]))
    prune.global_unstructured(
        [(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=4
    )
    out.append(a.weight_mask.numpy().astype(int).tolist())
    out.append(b.weight_mask.numpy().astype(int).tolist())
    prune.custom_from_mask(a, "bias", T.tensor([1.0, 0.0]))
    out.append(a.bias.detach().numpy().tolist())
    prune.random_unstructured(b, "bias", amount=1)
    out.append(int((b.bias_mask == 0).sum()))
    prune.random_structured(a, "weight", amount=1, dim=1)
    out.append(int((a.weight_mask.sum(0) == 0).sum()))
    with pytest.raises(ValueError):
        prune.l1_unstructured(T.nn.Linear(2, 2), "weight", amount=1.5)
    return out


def test_prune_matches_torch():
    flow_out, torch_out = _run(flow), _run(torch)
    assert flow_out == torch_out


def test_pruned_parameter_trains_through_the_mask():
    prune = flow.nn.utils.prune
    m = flow.nn.Linear(4, 2)
    prune.l1_unstructured(m, "weight", amount=0.5)
    opt = flow.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        m(flow.randn(8, 4)).square().sum().backward()
        opt.step()
    assert (m.weight.detach().numpy()[m.weight_mask.numpy() == 0] == 0).all()


@pytest.mark.parametrize("backend", ["MATH", "EFFICIENT_ATTENTION"])
def test_sdpa_kernel_selects_a_backend(backend):
    from oneflow.nn.attention import SDPBackend, sdpa_kernel

    q = flow.randn(2, 2, 5, 4)
    want = flow.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    with sdpa_kernel(getattr(SDPBackend, backend)):
        got = flow.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    mask = flow.ones(5, 5, dtype=flow.bool)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]), pytest.raises(RuntimeError, match="backend"):
        flow.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert flow.nn.attention is importlib.import_module("oneflow.nn.attention")


def test_small_torch_modules():
    from oneflow.nn.modules.utils import _pair, _quadruple, _single, _triple
    from oneflow.utils.hooks import RemovableHandle
    from oneflow.utils.model_zoo import load_url

    assert _pair(3) == (3, 3) and _pair((1, 2)) == (1, 2) and _triple(1) == (1, 1, 1)
    assert _single([4]) == (4,) and _quadruple(0) == (0, 0, 0, 0)
    hooks = {}
    h = RemovableHandle(hooks)
    hooks[h.id] = print
    with h:
        assert h.id in hooks
    assert h.id not in hooks
    assert load_url is flow.hub.load_state_dict_from_url
    from oneflow.nn.utils.fusion import fuse_conv_bn_eval

    assert fuse_conv_bn_eval is flow.nn.utils.fuse_conv_bn_eval


def test_utils_benchmark_timer():
    from oneflow.utils.benchmark import Measurement, Timer

    t = Timer(
        stmt="y = x @ x",
        setup="x = flow.randn(64, 64)",
        globals={"flow": flow},
        label="matmul",
        sub_label="64",
        num_threads=1,
    )
    m = t.timeit(50)
    assert isinstance(m, Measurement) and m.number_per_run == 50 and len(m.times) == 1
    assert 0 < m.mean < 1 and m.median == m.mean
    b = t.blocked_autorange(min_run_time=0.05)
    assert len(b.times) >= 1 and b.number_per_run >= 1 and b.iqr >= 0
    assert "matmul: 64" in repr(b) and "measurement" in repr(b)
    assert flow.get_num_threads() >= 1
    with pytest.raises(ValueError, match="Python"):
        Timer("x", language="c++")
