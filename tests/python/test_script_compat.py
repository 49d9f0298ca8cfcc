"""PyTorch script idioms against PyTorch: nn.DataParallel (no CUDA: the module itself; one
device: inputs moved there), nn.Buffer registration, compile (inference as nn.Graph plans,
training eagerly, eager fallback where a forward cannot be traced)."""

import numpy as np
import pytest
import torch

import oneflow as flow


def _linear(lib):
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3).astype(np.float32)))
        m.bias.copy_(lib.tensor(np.array([0.5, -0.5], dtype=np.float32)))
    return m


@pytest.mark.skipif(flow.cuda.is_available(), reason="the CPU form")
def test_data_parallel_without_cuda_is_the_module_like_torch():
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    results = {}
    for lib in (torch, flow):
        dp = lib.nn.DataParallel(_linear(lib))
        assert dp.device_ids == [] and isinstance(dp.module, lib.nn.Linear)
        assert list(dp.state_dict()) == ["module.weight", "module.bias"]
        out = dp(lib.tensor(x))
        out.sum().backward()
        results[lib.__name__] = (out.detach().numpy(), dp.module.weight.grad.numpy())
        # A checkpoint saved from the wrapper loads into the wrapper.
        fresh = lib.nn.DataParallel(lib.nn.Linear(3, 2))
        fresh.load_state_dict(dp.state_dict())
        np.testing.assert_array_equal(
            fresh.module.weight.detach().numpy(), np.arange(6.0).reshape(2, 3)
        )
    for a, b in zip(results["oneflow"], results["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert flow.nn.parallel.DataParallel is flow.nn.DataParallel


@pytest.mark.skipif(not flow.cuda.is_available(), reason="needs a CUDA device")
def test_data_parallel_on_one_device_moves_inputs():
    dp = flow.nn.DataParallel(_linear(flow).cuda(), device_ids=[0])
    out = dp(flow.ones(4, 3))  # a CPU input, moved to cuda:0
    assert out.device == flow.device("cuda", 0)
    with pytest.raises(RuntimeError, match="must have its parameters and buffers on device"):
        flow.nn.DataParallel(_linear(flow), device_ids=[0])(flow.ones(1, 3))


def _module_with_buffers(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = lib.nn.Buffer(lib.ones(2))
            self.scratch = lib.nn.Buffer(lib.zeros(3), persistent=False)
            self.plain = lib.ones(1)  # a plain tensor attribute is not registered

    return M()


def test_buffer_registers_on_assignment_like_torch():
    for lib in (torch, flow):
        m = _module_with_buffers(lib)
        assert list(m.state_dict()) == ["kept"]
        assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
        assert isinstance(m.kept, lib.nn.Buffer) and not isinstance(m.plain, lib.nn.Buffer)
        assert type(m.kept) is lib.Tensor and m.scratch.persistent is False
        src = lib.ones(2, requires_grad=True)
        b = lib.nn.Buffer(src)
        assert b.requires_grad and b.is_leaf and b is not src  # detached, flag kept
        m.kept = lib.nn.Buffer(lib.full((2,), 3.0), persistent=False)  # re-registered
        assert list(m.state_dict()) == []
        m.to(lib.float64)
        assert m.kept.dtype == lib.float64
        with pytest.raises((TypeError, AttributeError)):  # PyTorch: AttributeError
            lib.nn.Buffer([1, 2])


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(
        lib.nn.Linear(8, 16), lib.nn.LayerNorm(16), lib.nn.GELU(), lib.nn.Linear(16, 4)
    )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.compile's own imports
def test_compile_runs_inference_as_graph_plans_and_training_eagerly():
    m = _mlp(flow)
    cm = flow.compile(m)
    assert isinstance(cm, flow.nn.Module) and cm._orig_mod is m
    assert list(cm.state_dict())[:2] == ["_orig_mod.0.weight", "_orig_mod.0.bias"]
    assert list(flow.compile(_mlp(flow)).state_dict()) == list(
        torch.compile(_mlp(torch)).state_dict()
    )
    x = flow.tensor(np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32))
    # Training: eager, gradients flow to the module's parameters.
    loss = cm(x).square().sum()
    loss.backward()
    assert m[0].weight.grad is not None and cm.__dict__["_graph"] is None
    # Inference: a graph plan per input signature, the same values as eager.
    m.eval()
    with flow.no_grad():
        got, want = cm(x), m(x)
        assert cm.__dict__["_graph"] is not None and len(cm.__dict__["_graph"]._plans) == 1
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        cm(x[:3])
        assert len(cm.__dict__["_graph"]._plans) == 2
        # Parameters updated in place are what the plan reads.
        with flow.no_grad():
            m[0].weight.mul_(0.5)
        np.testing.assert_array_equal(cm(x).numpy(), m(x).numpy())
    with flow.inference_mode():
        np.testing.assert_array_equal(cm(x).numpy(), m(x).numpy())
    # Attributes reach the original module.
    m.block_size = 64
    assert cm.block_size == 64 and cm._orig_mod[0] is m[0]


def test_compile_falls_back_to_eager_where_a_forward_reads_values():
    class Branchy(flow.nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x - 1

    cm = flow.compile(Branchy()).eval()
    with flow.no_grad():
        assert cm(flow.ones(2)).tolist() == [2.0, 2.0]
        assert cm(-flow.ones(2)).tolist() == [-2.0, -2.0]
    assert isinstance(cm.compile_error, RuntimeError)
    strict = flow.compile(Branchy(), fullgraph=True).eval()
    with flow.no_grad(), pytest.raises(RuntimeError, match="cannot be part of a graph"):
        strict(flow.ones(2))


def test_compile_functions_decorators_and_options_like_torch():
    @flow.compile
    def f(a, b):
        return a * b + 1

    @flow.compile(mode="max-autotune", dynamic=True)
    def g(a):
        return a.exp()

    a, b = flow.ones(3), flow.full((3,), 2.0)
    with flow.no_grad():
        assert f(a, b).tolist() == [3.0, 3.0, 3.0] and f.compile_error is None
        np.testing.assert_allclose(g(a).numpy(), np.exp(np.ones(3)), rtol=1e-6)
    assert f.__name__ == "f" and f.__wrapped__(a, b).tolist() == [3.0, 3.0, 3.0]
    assert flow.compile(f.__wrapped__, disable=True) is f.__wrapped__
    eager = flow.compile(_mlp(flow), backend="eager").eval()
    with flow.no_grad():
        eager(flow.ones(2, 8))
    assert eager.__dict__["_graph"] is None
    with pytest.raises(RuntimeError, match="Either mode or options"):
        flow.compile(f.__wrapped__, mode="default", options={})
