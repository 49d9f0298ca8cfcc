"""Saved tensor hooks (oneflow.autograd.graph, Note [Saved tensor hooks]) and activation
checkpointing (oneflow.utils.checkpoint) against PyTorch and against training without them."""

import warnings
import weakref

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from oneflow.utils.checkpoint import checkpoint, checkpoint_sequential


def _chain(lib, x, w):
    return ((x.tanh() * w).exp() + x.sigmoid() * 3).sum()


def test_hooks_see_and_replace_saved_tensors_like_torch():
    # exp keeps its result and mul its operands in both frameworks: doubled by the pack hook,
    # they double the gradients
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    results = []
    for lib in (flow, torch):
        x = lib.tensor(xv, requires_grad=True)
        w = lib.tensor(wv, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
            loss = (x * w).sum() + x.exp().sum()
        loss.backward()
        results.append((x.grad.numpy().copy(), w.grad.numpy().copy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(results[0][0], 2 * wv + 2 * np.exp(xv), rtol=1e-12)
    # copies in and out change nothing
    x = flow.tensor(xv, requires_grad=True)
    w = flow.tensor(wv, requires_grad=True)
    _chain(flow, x, w).backward()
    want = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    packed = []
    with saved_tensors_hooks(lambda t: packed.append(1) or t.detach().clone(), lambda t: t):
        loss = _chain(flow, x, w)
    loss.backward()
    assert len(packed) >= 4
    np.testing.assert_allclose(x.grad.numpy(), want[0], rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), want[1], rtol=1e-12)


def test_packed_tensors_are_not_kept_and_unpack_gives_them_back():
    refs, kept = [], []

    def pack(t):
        refs.append(weakref.ref(t))
        kept.append(t.detach().clone())
        return len(kept) - 1

    x = flow.randn(50, 50, requires_grad=True)
    with saved_tensors_hooks(pack, kept.__getitem__):
        y = x.tanh().exp().sum()
    assert refs and all(r() is None for r in refs)  # the nodes keep only the indices
    y.backward()
    expected = (1 - x.tanh() ** 2) * x.tanh().exp()
    np.testing.assert_allclose(x.grad.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-7)


def test_hook_errors_versions_nesting_and_disabling():
    x = flow.randn(4, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: "not a tensor"):
        y = x.exp().sum()
    with pytest.raises(TypeError, match="unpack hook must return a Tensor"):
        y.backward()

    def bad_pack(t):
        raise ValueError("pack failed")

    with pytest.raises(ValueError, match="pack failed"):
        with saved_tensors_hooks(bad_pack, lambda t: t):
            x.exp()
    x.exp().sum().backward()  # no hook left behind

    # the innermost pair applies; the hook's own ops are not packed
    outer, inner = [], []
    with saved_tensors_hooks(lambda t: outer.append(1) or t, lambda t: t):
        with saved_tensors_hooks(lambda t: inner.append(1) or (t * 1).exp().log(), lambda t: t):
            x.exp()
        x.tanh()
    assert len(inner) == 1 and len(outer) == 1

    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    with pytest.raises(TypeError, match="callable"):
        with saved_tensors_hooks(1, lambda t: t):
            pass


def test_save_on_cpu_gives_the_same_gradients():
    x = flow.randn(6, 5, requires_grad=True)
    w = flow.randn(6, 5, requires_grad=True)
    _chain(flow, x, w).backward()
    want = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    with save_on_cpu(pin_memory=False):
        loss = _chain(flow, x, w)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), want[0], rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), want[1], rtol=1e-6)


def _model():
    flow.manual_seed(0)
    return flow.nn.Sequential(
        flow.nn.Linear(8, 32), flow.nn.Tanh(), flow.nn.Dropout(0.3), flow.nn.Linear(32, 4)
    )


def _grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()], x.grad.numpy().copy()


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_gradients_equal_training_without_it(use_reentrant):
    model = _model()
    x = flow.randn(5, 8, requires_grad=True)
    flow.manual_seed(1)
    model(x).square().sum().backward()
    want = _grads(model, x)
    model.zero_grad()
    x.grad = None
    calls = []

    def run(t):
        calls.append(1)
        return model(t)

    flow.manual_seed(1)  # the same dropout mask: the rerun restores the forward's random state
    out = checkpoint(run, x, use_reentrant=use_reentrant)
    assert len(calls) == 1
    out.square().sum().backward()
    assert len(calls) == 2  # one rerun in backward
    for a, b in zip(_grads(model, x)[0], want[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(x.grad.numpy(), want[1], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_keeps_only_its_output(use_reentrant):
    layers = [flow.nn.Sequential(flow.nn.Linear(256, 256), flow.nn.Tanh()) for _ in range(6)]
    model = flow.nn.Sequential(*layers)
    x = flow.randn(128, 256, requires_grad=True)

    def held(fn):
        flow.cpu.synchronize()
        base = flow._oneflow_internal.memory_allocated("cpu")
        y = fn()
        flow.cpu.synchronize()
        n = flow._oneflow_internal.memory_allocated("cpu") - base
        y.sum().backward()
        return n

    plain = held(lambda: model(x))
    ck = held(lambda: checkpoint(model, x, use_reentrant=use_reentrant))
    out_bytes = 128 * 256 * 4
    assert plain >= 6 * out_bytes and ck <= 2 * out_bytes


def test_non_reentrant_checkpoint_with_autograd_grad_kwargs_and_frozen_inputs():
    model = _model().eval()
    x = flow.randn(5, 8)  # does not require grad: the parameters still get gradients
    want = flow.autograd.grad(
        model(
            x,
        ).sum(),
        list(model.parameters()),
    )

    def run(t, scale=1.0):
        return model(t) * scale

    got = flow.autograd.grad(
        checkpoint(run, x, scale=2.0, use_reentrant=False).sum(), list(model.parameters())
    )
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), 2 * b.numpy(), rtol=1e-5, atol=1e-7)
    assert all(p.grad is None for p in model.parameters())  # autograd.grad left .grad alone


def test_nested_non_reentrant_checkpoints():
    model = _model().eval()
    x = flow.randn(5, 8, requires_grad=True)
    model(x).sin().sum().backward()
    want = _grads(model, x)
    model.zero_grad()
    x.grad = None

    def outer(t):
        h = checkpoint(model[0], t, use_reentrant=False)
        return checkpoint(lambda u: model[3](model[1](u)), h, use_reentrant=False)

    checkpoint(outer, x, use_reentrant=False).sin().sum().backward()
    for a, b in zip(_grads(model, x)[0], want[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(x.grad.numpy(), want[1], rtol=1e-5, atol=1e-7)


def test_checkpoint_arguments_like_torch():
    model = _model()
    x = flow.randn(2, 8, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(model, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda t, scale: model(t) * scale, x, scale=2, use_reentrant=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(model, flow.randn(2, 8), use_reentrant=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with flow.no_grad():
            out = checkpoint(model, x, use_reentrant=False)
        assert not out.requires_grad


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_sequential_equals_the_sequence(use_reentrant):
    flow.manual_seed(2)
    model = flow.nn.Sequential(*[flow.nn.Linear(6, 6) for _ in range(5)], flow.nn.Tanh())
    x = flow.randn(3, 6, requires_grad=True)
    model(x).sum().backward()
    want = _grads(model, x)
    model.zero_grad()
    x.grad = None
    checkpoint_sequential(model, 3, x, use_reentrant=use_reentrant).sum().backward()
    for a, b in zip(_grads(model, x)[0], want[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(x.grad.numpy(), want[1], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_inside_a_graph_trains_as_eager(use_reentrant):
    def make():
        flow.manual_seed(3)
        m = flow.nn.Sequential(flow.nn.Linear(4, 8), flow.nn.Tanh(), flow.nn.Linear(8, 2))
        return m, flow.optim.SGD(m.parameters(), lr=0.1)

    x = flow.randn(3, 4)
    m1, o1 = make()
    m2, o2 = make()

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m2
            self.add_optimizer(o2)

        def build(self, x):
            loss = checkpoint(self.m, x, use_reentrant=use_reentrant).square().sum()
            loss.backward()
            return loss

    g = G()
    for _ in range(3):
        loss1 = m1(x).square().sum()
        o1.zero_grad()
        loss1.backward()
        o1.step()
        np.testing.assert_allclose(g(x).numpy(), loss1.numpy(), rtol=1e-6)


def test_second_order_gradients_through_checkpoints_and_hooks_like_torch():
    def run(lib, how):
        x = lib.tensor([1.0, 2.0, -0.5], requires_grad=True)
        if how == "checkpoint":
            y = lib.utils.checkpoint.checkpoint(lambda t: (t**3).sum(), x, use_reentrant=False)
        else:
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
                y = (x * x * x.sin()).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return x.grad

    for how in ("checkpoint", "hooks"):
        np.testing.assert_allclose(run(flow, how).numpy(), run(torch, how).numpy(), rtol=1e-6)


def test_non_reentrant_checkpoint_frees_its_recomputation():
    w = flow.randn(1 << 18, requires_grad=True)
    x = flow.randn(1 << 18, requires_grad=True)

    def step():
        checkpoint(lambda t: (t * w).sin(), x, use_reentrant=False).sum().backward()

    step()
    flow.cpu.synchronize()
    base = flow._oneflow_internal.memory_allocated("cpu")
    for _ in range(5):
        step()
    flow.cpu.synchronize()
    assert flow._oneflow_internal.memory_allocated("cpu") - base < (1 << 20)


def test_reentrant_checkpoint_refuses_autograd_grad_like_torch():
    lin = flow.nn.Linear(3, 3)
    x = flow.randn(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="incompatible with .grad"):
        flow.autograd.grad(checkpoint(lin, x, use_reentrant=True).sum(), x)
    assert lin.weight.grad is None


def test_checkpoint_reruns_under_the_forwards_autocast():
    flow.manual_seed(5)
    w = flow.randn(8, 8, requires_grad=True)
    x = flow.randn(4, 8, requires_grad=True)

    def fn(a):
        return (a @ w).relu() @ w.t()

    with flow.autocast("cpu", dtype=flow.bfloat16):
        y = fn(x)
    y.float().sum().backward()
    want = x.grad.numpy().copy(), w.grad.numpy().copy()
    for use_reentrant in (False, True):
        x.grad = w.grad = None
        with flow.autocast("cpu", dtype=flow.bfloat16):
            y = checkpoint(fn, x, use_reentrant=use_reentrant)
        y.float().sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), want[0])
        np.testing.assert_array_equal(w.grad.numpy(), want[1])


def test_recomputation_with_other_shapes_raises_checkpoint_error():
    calls = []

    def fn(t):
        calls.append(1)
        return (t[: 4 - len(calls)] * 2).exp().sum()

    x = flow.randn(4, requires_grad=True)
    y = checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(flow.utils.checkpoint.CheckpointError, match="different metadata"):
        y.backward()


def test_hooks_run_without_grad_skip_version_checks_and_refuse_disabling():
    seen = []
    x = flow.randn(3, requires_grad=True)
    with saved_tensors_hooks(
        lambda t: seen.append(flow.is_grad_enabled()) or t.detach().clone(), lambda t: t
    ):
        a = x * 1
        y = (a * a).sum()
    assert seen and not any(seen)  # PyTorch runs pack hooks without grad mode
    a.add_(1)  # the packed copy is used: no version error, as PyTorch's
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy(), rtol=1e-6)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="no hooks now"):
            with disable_saved_tensors_hooks("no hooks now"):
                pass
