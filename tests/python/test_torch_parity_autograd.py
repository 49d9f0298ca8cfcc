"""Autograd behaviour that must match PyTorch: the grad-mode switches as context managers and
decorators, custom autograd.Function checks, and the dtype of seeded gradients; each case runs
the same code on torch and oneflow and compares."""

import importlib

import numpy as np
import pytest
import torch

import oneflow as flow

LIBS = [torch, flow]


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    """A failing case must not leave grad mode off for the tests after it."""
    yield
    for m in LIBS:
        m.set_grad_enabled(True)


def _both(fn):
    """fn(torch) and fn(flow) must be equal."""
    expected, got = fn(torch), fn(flow)
    assert got == expected, f"torch: {expected}, oneflow: {got}"


def _raises_both(fn, match):
    for m in LIBS:
        with pytest.raises(RuntimeError, match=match):
            fn(m)


def _np(t):
    return t.detach().numpy()


# ---- grad mode ----------------------------------------------------------------------------


def test_set_grad_enabled_as_decorator():
    def case(m):
        x = m.ones(2, requires_grad=True)

        @m.set_grad_enabled(False)
        def f(x):
            return (x * 2).requires_grad, m.is_grad_enabled()

        after_decorating = m.is_grad_enabled()
        return after_decorating, f(x), m.is_grad_enabled(), (x * 2).requires_grad

    _both(case)


def test_set_grad_enabled_call_and_context():
    def case(m):
        m.set_grad_enabled(False)
        after_call = m.is_grad_enabled()
        m.set_grad_enabled(True)
        with m.set_grad_enabled(False):
            inside = m.is_grad_enabled()
        with m.no_grad():
            with m.set_grad_enabled(True):
                nested = m.is_grad_enabled()
            restored = m.is_grad_enabled()
        return after_call, inside, m.is_grad_enabled(), nested, restored

    _both(case)


@pytest.mark.parametrize("name", ["no_grad", "enable_grad"])
def test_grad_mode_without_parentheses(name):
    def case(m):
        x = m.ones(2, requires_grad=True)

        @getattr(m, name)
        def f(x):
            return (x * 2).requires_grad

        with m.set_grad_enabled(name == "no_grad"):
            return f(x), m.is_grad_enabled()

    _both(case)


def test_grad_mode_context_returns_none():
    def case(m):
        with m.no_grad() as a, m.enable_grad() as b, m.inference_mode() as c:
            return a, b, c

    _both(case)


@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode"])
def test_grad_mode_decorates_generators(name):
    def case(m):
        x = m.ones(2, requires_grad=True)

        @getattr(m, name)()
        def gen(x):
            for _ in range(2):
                yield (x * 2).requires_grad, m.is_grad_enabled()

        outside = []
        with m.set_grad_enabled(name != "enable_grad"):
            it = gen(x)
            seen = [next(it)]
            outside.append(m.is_grad_enabled())
            seen.append(next(it))
            outside.append(m.is_grad_enabled())
        return seen, outside

    _both(case)


def test_set_grad_enabled_decorates_generator():
    def case(m):
        x = m.ones(2, requires_grad=True)

        @m.set_grad_enabled(False)
        def gen(x):
            yield (x * 2).requires_grad

        return list(gen(x)), m.is_grad_enabled()

    _both(case)


# ---- custom autograd.Function --------------------------------------------------------------


def _function(m, forward, backward, **statics):
    attrs = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    attrs.update({k: staticmethod(v) for k, v in statics.items()})
    return type("Fn", (m.autograd.Function,), attrs)


def test_function_saved_tensor_modified_in_place():
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 2

    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a

    def case(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        z = _function(m, forward, backward).apply(y)
        y.add_(1)
        z.sum().backward()

    _raises_both(case, "modified by an inplace operation")


def test_function_saved_tensor_unmodified():
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 2 * g * a

    def case(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        _function(m, forward, backward).apply(x * 1).sum().backward()
        return x.grad.tolist()

    _both(case)


def test_function_too_few_gradients():
    def case(m):
        x = m.ones(2, requires_grad=True)
        fn = _function(m, lambda ctx, a, b: a * b, lambda ctx, g: g)
        fn.apply(x, x).sum().backward()

    _raises_both(case, r"incorrect number of gradients \(expected 2, got 1\)")


def test_function_extra_none_gradients_are_dropped():
    def case(m):
        x = m.ones(2, requires_grad=True)
        fn = _function(m, lambda ctx, a: a * 2, lambda ctx, g: (2 * g, None, None))
        fn.apply(x).sum().backward()
        return x.grad.tolist()

    _both(case)


def test_function_gradient_for_non_tensor_input():
    def case(m):
        x = m.ones(2, requires_grad=True)
        fn = _function(m, lambda ctx, a, k: a * k, lambda ctx, g: (g, g))
        fn.apply(x, 3.0).sum().backward()

    _raises_both(case, "different than None at position 2")


def test_function_materialize_grads_false():
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        return a * 2, a * 3

    def case(m):
        x = m.ones(3, requires_grad=True)
        seen = []

        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return 2 * g1

        _function(m, forward, backward).apply(x)[0].sum().backward()
        return seen, x.grad.tolist()

    _both(case)


def test_function_materialized_grads_are_zeros():
    def case(m):
        x = m.ones(3, requires_grad=True)
        seen = []

        def backward(ctx, g1, g2):
            seen.append(_np(g2).tolist())
            return g1

        _function(m, lambda ctx, a: (a * 2, a * 3), backward).apply(x)[0].sum().backward()
        return seen

    _both(case)


def test_function_non_tensor_output_gets_none_gradient():
    def case(m):
        x = m.ones(3, requires_grad=True)
        seen = []

        def backward(ctx, g, g_number):
            seen.append(g_number)
            return g * 2

        out = _function(m, lambda ctx, a: (a * 2, 5), backward).apply(x)
        out[0].sum().backward()
        return out[1], seen, x.grad.tolist()

    _both(case)


def _dirty_forward(ctx, a):
    ctx.mark_dirty(a)
    a.mul_(2)
    return a


def test_function_mark_dirty_on_leaf_raises():
    def case(m):
        x = m.ones(2, requires_grad=True)
        _function(m, _dirty_forward, lambda ctx, g: 2 * g).apply(x)

    _raises_both(case, "leaf Variable that requires grad")


def test_function_mark_dirty_returns_the_input():
    def case(m):
        x = m.ones(2, requires_grad=True)
        y = x * 1
        z = _function(m, _dirty_forward, lambda ctx, g: 2 * g).apply(y)
        same = z is y
        z.sum().backward()
        return same, z.requires_grad, z.is_leaf, _np(y).tolist(), x.grad.tolist()

    _both(case)


def test_function_called_on_instance_raises():
    def case(m):
        fn = _function(m, lambda ctx, a: a * 2, lambda ctx, g: g)
        with pytest.warns(DeprecationWarning) if m is torch else _no_warning():
            instance = fn()
        instance(m.ones(2, requires_grad=True))

    _raises_both(case, "(?i)legacy autograd function")


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_function_setup_context():
    def forward(a, k=3.0):
        return a * k

    def setup_context(ctx, inputs, output):
        a, k = inputs
        ctx.k = k
        ctx.save_for_backward(a)

    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * ctx.k * a, None

    def case(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = _function(m, forward, backward, setup_context=setup_context).apply(x)
        y.sum().backward()
        return _np(y).tolist(), x.grad.tolist()

    _both(case)


def test_once_differentiable():
    def case(m):
        once = importlib.import_module(m.__name__ + ".autograd.function").once_differentiable

        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a**2

        @once
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

        fn = _function(m, forward, backward)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        v = m.ones(2, requires_grad=True)
        (gx,) = m.autograd.grad(fn.apply(x), x, grad_outputs=v, create_graph=True)
        values = _np(gx).tolist(), gx.requires_grad
        try:
            gx.sum().backward()
        except RuntimeError as e:
            return values, "differentiate twice" in str(e)
        return values, None

    _both(case)


# ---- seeded gradients -----------------------------------------------------------------------


@pytest.mark.parametrize("seed_dtype", ["float64", "float16"])
def test_backward_seed_cast_to_output_dtype(seed_dtype):
    def case(m):
        x = m.ones(2, requires_grad=True)
        (x * 2).backward(m.ones(2, dtype=getattr(m, seed_dtype)))
        return str(x.grad.dtype).split(".")[-1], x.grad.tolist()

    _both(case)


def test_grad_seed_cast_to_output_dtype():
    def case(m):
        x = m.ones(2, requires_grad=True)
        (g,) = m.autograd.grad(x * 2, x, grad_outputs=m.ones(2, dtype=m.float64))
        y = m.ones(2, dtype=m.float64, requires_grad=True)
        (h,) = m.autograd.grad([y * 2], [y], grad_outputs=[m.ones(2)])
        return [str(t.dtype).split(".")[-1] for t in (g, h)], np.allclose(_np(h), 2)

    _both(case)


def _retained_and_second_backward(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    s = y.sum()
    s.backward(retain_graph=True)
    s.backward()  # a retained gradient accumulates, as a leaf's
    z = m.tensor([1.0, 2.0], requires_grad=True)
    w = (z + 2).sum()
    w.backward()
    w.backward()  # nothing saved, nothing freed: a second pass is fine
    return y.grad.numpy(), x.grad.numpy(), z.grad.numpy()


def test_retained_gradients_accumulate_and_graphs_without_saved_tensors_rerun():
    for got, want in zip(_retained_and_second_backward(flow), _retained_and_second_backward(torch)):
        np.testing.assert_array_equal(got, want)
    x = flow.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()  # x * x saved its inputs: they are freed


@pytest.mark.parametrize("hook", [lambda g: g.sum(), lambda g: g.double()])
@pytest.mark.parametrize("leaf", [True, False])
def test_hooks_may_not_change_the_size_or_type_of_a_gradient(hook, leaf):
    for m in (flow, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x if leaf else x * 1
        y.register_hook(hook)
        with pytest.raises(RuntimeError, match="changed the (size|type)"):
            (y * 2).sum().backward()


def _retained_after_in_place(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y * 5
    y.mul_(3)  # the retained gradient is the new version's
    (z + y).sum().backward()
    return y.grad.numpy(), x.grad.numpy()


def test_retained_gradient_follows_in_place_ops():
    for got, want in zip(_retained_after_in_place(flow), _retained_after_in_place(torch)):
        np.testing.assert_array_equal(got, want)


INPLACE_AFTER = {
    "batch_norm_relu_": lambda T, x: T.nn.functional.relu(
        T.nn.functional.batch_norm(x, None, None, training=True), inplace=True
    ),
    "batch_norm_add_identity": lambda T, x: T.nn.functional.batch_norm(
        x, None, None, training=True
    ).add_(x),
    "layer_norm_relu_": lambda T, x: T.nn.functional.layer_norm(x, x.shape[-2:]).relu_(),
    "group_norm_silu_": lambda T, x: T.nn.functional.silu(
        T.nn.functional.group_norm(x, 2), inplace=True
    ),
    "instance_norm_mul_": lambda T, x: T.nn.functional.instance_norm(x).mul_(3.0),
    "max_pool_add_": lambda T, x: T.nn.functional.max_pool2d(x, 2).add_(1.0),
    "adaptive_max_pool_mul_": lambda T, x: T.nn.functional.adaptive_max_pool2d(x, 3).mul_(2.0),
}


@pytest.mark.parametrize("name", sorted(INPLACE_AFTER))
def test_in_place_ops_on_norm_and_pool_outputs_match_torch(name):
    # Note [Unread saved outputs]: these results are not saved for backward, as in PyTorch
    fn = INPLACE_AFTER[name]
    a = np.random.default_rng(7).standard_normal((2, 4, 6, 6)).astype(np.float32)
    w = np.random.default_rng(8).standard_normal(fn(torch, torch.tensor(a)).shape)
    grads = []
    for T in (torch, flow):
        x = T.tensor(a, requires_grad=True)
        y = fn(T, x * 1.0)
        (y * T.tensor(w.astype(np.float32))).sum().backward()
        grads.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-3, atol=1e-4)


def test_resnet_block_with_in_place_relu_and_residual_trains_like_torch():
    def block(T):
        nn = T.nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
                self.bn1 = nn.BatchNorm2d(4)
                self.relu = nn.ReLU(inplace=True)
                self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
                self.bn2 = nn.BatchNorm2d(4)

            def forward(self, x):
                out = self.relu(self.bn1(self.conv1(x)))
                out = self.bn2(self.conv2(out))
                out += x
                return self.relu(out)

        return Block()

    torch.manual_seed(0)
    tb, fb = block(torch), block(flow)
    fb.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tb.state_dict().items()})
    a = np.random.default_rng(1).standard_normal((2, 4, 5, 5)).astype(np.float32)
    tx, fx = torch.tensor(a, requires_grad=True), flow.tensor(a, requires_grad=True)
    tb(tx).square().sum().backward()
    fb(fx).square().sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for p, q in zip(fb.parameters(), tb.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-4)


SCATTER_IN_PLACE = {
    "scatter_add_": lambda T, buf, idx, src: buf.scatter_add_(0, idx, src),
    "scatter_": lambda T, buf, idx, src: buf.scatter_(0, idx, src),
    "scatter_reduce_sum": lambda T, buf, idx, src: buf.scatter_reduce_(0, idx, src, "sum"),
    "scatter_reduce_amax": lambda T, buf, idx, src: buf.scatter_reduce_(0, idx, src, "amax"),
    "index_add_": lambda T, buf, idx, src: buf.index_add_(0, idx[:, 0], src),
}


@pytest.mark.parametrize("name", sorted(SCATTER_IN_PLACE))
@pytest.mark.parametrize("self_grad", [False, True])
def test_in_place_scatter_into_a_buffer_matches_torch(name, self_grad):
    # GNN aggregation: messages scattered into a fresh buffer, in place (Note [Unread saved
    # tensors]: the buffer's old values are not needed for the sum's gradient)
    fn = SCATTER_IN_PLACE[name]
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    out = []
    for T in (torch, flow):
        src = T.tensor(a, requires_grad=True)
        base = T.tensor(b, requires_grad=self_grad)
        idx = T.tensor([0, 1, 0, 3, 1]).unsqueeze(1).expand(5, 3)
        buf = base * 1.0 if self_grad else T.zeros(4, 3)
        y = fn(T, buf, idx, src)
        (y * T.tensor(w)).sum().backward()
        out.append(
            (y.detach().numpy().copy(), src.grad.numpy().copy(), base.grad if self_grad else None)
        )
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6)
    if self_grad:
        np.testing.assert_allclose(out[1][2].numpy(), out[0][2].numpy(), rtol=1e-6)
