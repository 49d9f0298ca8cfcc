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
    dp = flow.nn.DataParallel(_linear(flow), device_ids=[0])  # the module moves to cuda:0
    out = dp(flow.ones(4, 3))  # a CPU input, moved to cuda:0
    assert out.device == flow.device("cuda", 0)
    dp.module.cpu()
    with pytest.raises(RuntimeError, match="must have its parameters and buffers on device"):
        dp(flow.ones(1, 3))
    with pytest.raises(ValueError, match="Expected a cuda device"):
        flow.nn.DataParallel(_linear(flow), device_ids=["cpu"])


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
    assert m[0].weight.grad is not None and not cm.__dict__["_graphs"]
    # Inference: a graph plan per input signature, the same values as eager.
    m.eval()
    with flow.no_grad():
        got, want = cm(x), m(x)
        (graph,) = cm.__dict__["_graphs"].values()
        assert len(graph._plans) == 1
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        cm(x[:3])
        assert len(graph._plans) == 2
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
    assert not eager.__dict__["_graphs"]
    with pytest.raises(RuntimeError, match="Either mode or options"):
        flow.compile(f.__wrapped__, mode="default", options={})


class _Scaled(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.calls = 0
        self.register_buffer("shift", flow.zeros(3))

    def forward(self, x):
        return x * self.scale + self.shift


def test_compile_guards_attributes_buffers_and_side_effects():
    x = flow.ones(3)
    m = _Scaled().eval()
    cm = flow.compile(m)
    with flow.no_grad():
        assert cm(x).tolist() == [1, 1, 1]
        m.scale = 3.0  # a plain attribute the forward reads: another plan
        assert cm(x).tolist() == [3, 3, 3]
        m.shift = flow.full((3,), 5.0)  # a buffer rebound: another plan
        assert cm(x).tolist() == [8, 8, 8]
        m.scale = 1.0
        assert cm(x).tolist() == [6, 6, 6] and cm.compile_error is None

    class Counting(_Scaled):
        def forward(self, x):
            self.calls += 1  # a Python side effect: eager from the first call on
            return x + self.calls

    c = flow.compile(Counting().eval())
    with flow.no_grad():
        assert [c(x).tolist()[0] for _ in range(3)] == [2, 3, 4]
    assert c._orig_mod.calls == 3 and isinstance(c.compile_error, RuntimeError)


def test_compile_failed_trace_does_not_repeat_side_effects():
    class CountThenRead(_Scaled):
        def forward(self, x):
            self.calls += 1
            return x * 2 if x.sum() > 0 else x

    c = flow.compile(CountThenRead().eval())
    with flow.no_grad():
        assert c(flow.ones(2)).tolist() == [2, 2]
    assert c._orig_mod.calls == 1  # the failed trace's increment was put back

    class WriteThenRead(flow.nn.Module):
        def forward(self, t):
            t.add_(1)
            return t * 2 if t.sum() > 0 else t

    w = flow.compile(WriteThenRead().eval())
    t = flow.ones(2)
    with flow.no_grad(), pytest.raises(RuntimeError, match="written tensors in place"):
        w(t)
    assert t.tolist() == [2, 2]  # written once, not twice


def test_compile_runs_eagerly_under_autocast_hooks_and_for_functions_of_training_modules():
    m = _mlp(flow).eval()
    cm = flow.compile(m)
    x = flow.ones(2, 8)
    with flow.no_grad(), flow.autocast("cpu"):
        assert cm(x).dtype == flow.bfloat16
    seen = []
    h = m[0].register_forward_hook(lambda mod, i, o: seen.append(1))
    with flow.no_grad():
        cm(x)
        cm(x)
    assert len(seen) == 2 and not cm.__dict__["_graphs"]
    h.remove()
    drop = flow.nn.Dropout(0.5).train()
    f = flow.compile(lambda t: drop(t))
    with flow.no_grad():
        assert (f(flow.ones(1000)) == 0).any()
        drop.eval()
        assert f(flow.ones(1000)).tolist() == [1.0] * 1000


def test_compiled_modules_copy_pickle_and_forward_attributes():
    import copy
    import pickle

    m = _Scaled().eval()
    cm = flow.compile(m)
    with flow.no_grad():
        cm(flow.ones(3))
    for twin in (copy.deepcopy(cm), pickle.loads(pickle.dumps(cm))):
        assert isinstance(twin, type(cm)) and twin._orig_mod is not m
        with flow.no_grad():
            assert twin(flow.ones(3)).tolist() == [1, 1, 1]
    cm.scale = 2.0  # set on the original module, as PyTorch's OptimizedModule
    assert m.scale == 2.0 and "scale" not in cm.__dict__
    m.train()
    assert cm.training is True
    cm.eval()
    assert m.training is False
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        flow.compile(m, mode="fastest")
    with pytest.raises(NotImplementedError, match="FX"):
        flow.compile(m, backend=lambda gm, inputs: gm)


def test_tensor_attributes_and_buffer_markings_survive_copies_like_torch():
    import copy
    import io
    import pickle

    for lib in (torch, flow):
        t = lib.ones(2)
        t.note = {"step": 3}
        b = lib.nn.Buffer(lib.ones(2), persistent=False)
        for twin_t, twin_b in (
            (copy.deepcopy(t), copy.deepcopy(b)),
            (pickle.loads(pickle.dumps(t)), pickle.loads(pickle.dumps(b))),
        ):
            assert twin_t.note == {"step": 3} and twin_t.note is not t.note
            assert isinstance(twin_b, lib.nn.Buffer) and twin_b.persistent is False
        if lib is flow:
            buf = io.BytesIO()
            flow.save({"b": b}, buf)
            buf.seek(0)
            loaded = flow.load(buf)["b"]
            np.testing.assert_array_equal(loaded.numpy(), [1.0, 1.0])


def test_normal_of_tensors_like_torch():
    for lib in (torch, flow):
        lib.manual_seed(0)
        m = lib.zeros(3, requires_grad=True)
        s = lib.ones(3, requires_grad=True)
        y = lib.normal(m, s)
        assert tuple(y.shape) == (3,) and y.requires_grad
        y.sum().backward()  # the draw is not reparameterised: zero gradients, as PyTorch
        np.testing.assert_array_equal(m.grad.numpy(), [0.0, 0.0, 0.0])
        np.testing.assert_array_equal(s.grad.numpy(), [0.0, 0.0, 0.0])
        assert tuple(lib.normal(lib.zeros(3)).shape) == (3,)
        assert tuple(lib.normal(0.0, lib.ones(2, 3)).shape) == (2, 3)
        assert lib.normal(lib.zeros(3, dtype=lib.float64), 2.0).dtype == lib.float64
        assert lib.normal(lib.zeros(3), lib.ones(3, dtype=lib.float64)).dtype == lib.float32
        with pytest.raises(RuntimeError):
            lib.normal(lib.zeros(3), lib.ones(2))
        with pytest.raises(RuntimeError, match="std >= 0.0"):
            lib.normal(lib.zeros(3), -lib.ones(3))
        with pytest.raises(NotImplementedError, match="Long"):
            lib.normal(lib.zeros(3, dtype=lib.int64), lib.ones(3))
        x = lib.normal(lib.full((200000,), 3.0), lib.full((200000,), 2.0))
        assert abs(float(x.mean()) - 3.0) < 0.05 and abs(float(x.std()) - 2.0) < 0.05


def test_dynamo_namespace_and_its_recompile_limit():
    # torch._dynamo's names around compile; recompile_limit (alias cache_size_limit) bounds the
    # plans a compiled object keeps before it runs eagerly
    import oneflow._dynamo.config as config

    assert config.cache_size_limit == config.recompile_limit == 8
    x = flow.ones(3)
    m = _Scaled().eval()
    cm = flow.compile(m)
    saved = config.recompile_limit
    flow._dynamo.config.cache_size_limit = 2
    try:
        assert flow._dynamo.config.recompile_limit == 2
        with flow.no_grad():
            for scale in (1.0, 2.0, 3.0):  # three module states, two plans
                m.scale = scale
                assert cm(x).tolist() == [scale] * 3
        assert isinstance(cm.compile_error, RuntimeError)
        assert "changed 2 times" in str(cm.compile_error)
    finally:
        config.recompile_limit = saved
    flow._dynamo.config.suppress_errors = True  # accepted, as scripts set it
    f = flow._dynamo.disable(lambda t: t + 1)
    assert flow.compile(f) is f and not flow._dynamo.is_compiling()
    g = flow._dynamo.optimize("inductor")(lambda t: t * 2)
    assert g(x).tolist() == [2.0, 2.0, 2.0]
    flow._dynamo.mark_dynamic(x, 0)
    flow._dynamo.reset()
