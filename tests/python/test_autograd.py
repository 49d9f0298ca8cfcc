"""Autograd through the slice: backward, accumulation, retain_graph, autograd.grad, grad modes,
the version-counter check."""

import numpy as np
import pytest
import torch

import oneflow as flow


def test_issue_example_gradient(device):
    x = flow.randn(3, 4, requires_grad=True, device=device)
    (x.relu() @ flow.ones(4, 2, device=device)).sum().backward()
    expected = (x.detach().cpu().numpy() > 0) * 2.0
    np.testing.assert_array_equal(x.grad.cpu().numpy(), expected)


def test_leaf_and_grad_fn(device):
    x = flow.ones(2, 2, device=device, requires_grad=True)
    y = (x * 3).sum()
    assert x.is_leaf and not y.is_leaf
    assert y.grad_fn is not None and x.grad_fn is None
    assert "sumBackward" in repr(y.grad_fn)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 3.0))


def test_gradients_accumulate(device):
    x = flow.tensor([1.0, 2.0], device=device, requires_grad=True)
    for _ in range(3):
        (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_gradients_accumulate_in_place_and_never_alias_other_tensors(device):
    # As PyTorch: .grad is updated in place (a tensor read from it earlier sees the sum); a
    # first gradient that is someone else's memory (a hook's tensor, an expanded gradient) is
    # copied, so that the accumulation never writes through to it.
    for lib in (flow, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        kept = lib.tensor([5.0, 5.0])
        x.register_hook(lambda g, kept=kept: kept)
        (x * 3).sum().backward()
        first = x.grad
        (x * 3).sum().backward()
        assert first.tolist() == [10.0, 10.0], lib
        assert kept.tolist() == [5.0, 5.0], lib
        y = lib.ones(4, requires_grad=True)
        y.sum().backward()  # the gradient is an expanded view of one value
        y.grad.add_(1)
        assert y.grad.tolist() == [2.0] * 4, lib
        (y * 2).sum().backward()
        assert y.grad.tolist() == [4.0] * 4, lib
    z = flow.randn(256, 256, device=device, requires_grad=True)
    for _ in range(3):
        z.grad = None  # a fresh gradient each step, as optimizer.zero_grad() leaves it
        w = z * 2
        w.sum().backward()
        grad = z.grad
        w.add_(1)  # the forward output is not the gradient's memory
        np.testing.assert_array_equal(grad.cpu().numpy(), np.full((256, 256), 2.0, "float32"))


def test_backward_twice_needs_retain_graph(device):
    x = flow.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_non_scalar_backward_needs_gradient(device):
    x = flow.ones(3, device=device, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="scalar outputs"):
        y.backward()
    y.backward(flow.tensor([1.0, 2.0, 3.0], device=device))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_autograd_grad_and_higher_order(device):
    x = flow.tensor([2.0], device=device, requires_grad=True)
    y = (x * x * x).sum()
    (g,) = flow.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [12.0])
    (g2,) = flow.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), [12.0])
    assert x.grad is None


def test_no_grad_and_set_grad_enabled(device):
    x = flow.ones(2, device=device, requires_grad=True)
    with flow.no_grad():
        y = x * 2
    assert not y.requires_grad
    with flow.set_grad_enabled(False):
        assert not flow.is_grad_enabled()
    assert flow.is_grad_enabled()

    @flow.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad


def test_inplace_modification_of_saved_tensor_is_an_error(device):
    x = flow.ones(2, device=device, requires_grad=True)
    h = x + 1
    y = (h * h).sum()
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_inplace_on_leaf_requiring_grad_is_an_error(device):
    x = flow.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.add_(1)
    with flow.no_grad():
        x.add_(1)
    np.testing.assert_array_equal(x.numpy(), [2.0, 2.0])


def test_retain_grad_on_non_leaf(device):
    x = flow.ones(2, device=device, requires_grad=True)
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), [6.0, 6.0])


def test_mlp_gradients_match_torch():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((8, 5)).astype(np.float32)
    w1 = rng.standard_normal((5, 7)).astype(np.float32)
    w2 = rng.standard_normal((7, 3)).astype(np.float32)

    def run(lib):
        x = lib.tensor(xs)
        a = lib.tensor(w1, requires_grad=True)
        b = lib.tensor(w2, requires_grad=True)
        loss = ((x @ a).relu() @ b).sum()
        loss.backward()
        return loss.item(), a.grad.numpy(), b.grad.numpy()

    lf, af, bf = run(flow)
    lt, at, bt = run(torch)
    assert abs(lf - lt) < 1e-4
    np.testing.assert_allclose(af, at, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bf, bt, rtol=1e-5, atol=1e-5)


SECOND_ORDER = {
    "gelu": (lambda m, x: m.nn.functional.gelu(x), None),
    "gelu_tanh": (lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), None),
    "softmax": (lambda m, x: m.softmax(x, 1) ** 2, None),
    "log_softmax": (lambda m, x: m.log_softmax(x, 1) ** 2, None),
    "layer_norm": (lambda m, x: m.nn.functional.layer_norm(x, (5,)) ** 3, None),
    "layer_norm_affine": (
        lambda m, x, w, b: m.nn.functional.layer_norm(x, (5,), w, b) ** 3,
        [(5,), (5,)],
    ),
    "exp": (lambda m, x: m.exp(x) * x, None),
    "sigmoid": (lambda m, x: m.sigmoid(x) ** 2, None),
    "tanh": (lambda m, x: m.tanh(x) ** 2, None),
    "sqrt": (lambda m, x: m.sqrt(x.abs() + 1), None),
    "relu_mul": (lambda m, x: m.relu(x) * x, None),
    # the fused PairLoss / PairLossGrad pair: the gradient's own gradient, also through dy
    "mse": (lambda m, x, t: m.nn.functional.mse_loss(x, t) * 7, [(3, 5)]),
    "mse_sum_squared": (
        lambda m, x, t: m.nn.functional.mse_loss(x, t, reduction="sum") ** 2,
        [(3, 5)],
    ),
    # the same pair with smooth_l1 and huber: f'' inside the kink, 0 outside
    "smooth_l1": (lambda m, x, t: m.nn.functional.smooth_l1_loss(x, t, beta=1.5) * 7, [(3, 5)]),
    "huber_sum_squared": (
        lambda m, x, t: m.nn.functional.huber_loss(x, t, reduction="sum", delta=0.8) ** 2,
        [(3, 5)],
    ),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_gradients_match_torch(name):
    """grad of (sum of squared first-order gradients), through each op's backward, as PyTorch."""
    fn, extra = SECOND_ORDER[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((3, 5))] + [rng.standard_normal(s) for s in (extra or [])]

    def run(m, tensor):
        xs = [tensor(a, requires_grad=True) for a in arrays]
        y = fn(m, *xs).sum()
        gs = m.autograd.grad(y, xs, create_graph=True)
        z = sum((g * g).sum() for g in gs)
        return [g.detach().numpy() for g in m.autograd.grad(z, xs)]

    got = run(flow, flow.tensor)
    want = run(torch, torch.tensor)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_second_order_gradients_through_max_pool(dims):
    rng = np.random.default_rng(dims)
    a = rng.standard_normal((2, 3) + (6,) * dims)

    def run(m, tensor):
        x = tensor(a, requires_grad=True)
        pool = getattr(m.nn.functional, f"max_pool{dims}d")
        y = pool(x * x, 2, stride=2, padding=1)
        (g,) = m.autograd.grad((y * y).sum(), [x], create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), [x])
        return g.detach().numpy(), gg.numpy()

    for got, want in zip(run(flow, flow.tensor), run(torch, torch.tensor)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_inplace_ops_whose_gradient_reads_the_overwritten_input_match_torch():
    # x.mul_(y): the gradient for y needs x's values from before the write.
    def run(lib):
        a = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        b = lib.tensor([2.0, 0.5, -1.0], requires_grad=True)
        x = a * 2
        x.mul_(3)
        x.mul_(b)
        x.add_(b, alpha=2)
        x.div_(b)
        (x * x).sum().backward()
        return a.grad.numpy(), b.grad.numpy()

    for got, want in zip(run(flow), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "name,fn",
    [
        ("neg", lambda x: -x),
        ("mul_scalar", lambda x: x * 3),
        ("div_scalar", lambda x: x / 2),
        ("view_times_one", lambda x: x.t() * 1),
        ("floor", lambda x: x.floor()),
        ("number_over_tensor", lambda x: 2 / x),  # reciprocal(x) * 2: reads the output
        ("where_branch", lambda x: x.where(x.detach() > 1.5, x.new_zeros(()))),  # reads the mask
        ("matmul_by_constant", lambda x: x @ x.new_ones(3, 2)),  # reads only the constant
    ],
)
def test_inplace_change_of_an_input_the_gradient_does_not_read_is_allowed(name, fn):
    # As in PyTorch: x * 3 keeps no claim on x's values, so x may change in place before backward.
    grads = []
    for lib in (flow, torch):
        a = lib.ones(2, 3, requires_grad=True)
        x = a * 2
        y = fn(x)
        x.add_(1)
        y.sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_inplace_change_of_an_input_the_gradient_reads_is_still_an_error():
    a = flow.ones(3, requires_grad=True)
    x = a * 2
    y = x * x  # reads x for both gradients
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    # x @ w with w requiring grad: dw = x^T @ dy reads x (PyTorch raises too)
    for lib in (flow, torch):
        w = lib.ones(3, 2, requires_grad=True)
        x = lib.ones(4, 3, requires_grad=True) * 2
        y = x @ w
        x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def _error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is compared with PyTorch's
        return type(e).__name__, str(e).split(".")[0].split(": ")[-1]
    return None


def test_inference_mode_makes_inference_tensors_like_torch():
    def run(lib):
        w = lib.ones(3, requires_grad=True)
        normal = lib.ones(3)
        seen = {}
        with lib.inference_mode():
            x = lib.arange(3.0) * 2
            seen["inside"] = (
                x.is_inference(),
                x.requires_grad,
                (w * 2).requires_grad,
                normal[:2].is_inference(),
                lib.is_grad_enabled(),
                lib.is_inference_mode_enabled(),
            )
            x.add_(1)  # allowed inside
            normal.add_(1)  # so is a normal tensor
            with lib.enable_grad():
                seen["enable_grad inside"] = ((w * 2).requires_grad, (w * 2).is_inference())
            with lib.inference_mode(False):
                seen["nested off"] = (lib.ones(1).is_inference(), lib.is_grad_enabled())
        seen["after"] = (lib.is_inference_mode_enabled(), lib.is_grad_enabled())
        seen["views"] = (x[1:].is_inference(), x.detach().is_inference(), x.clone().is_inference())
        # Reading inference tensors is fine; ops whose gradient reads them are not.
        seen["add"] = (w + x).requires_grad
        seen["errors"] = [
            _error_of(lambda: x.add_(1)),
            _error_of(lambda: x.__setitem__(0, 5.0)),
            _error_of(lambda: x.requires_grad_()),
            _error_of(lambda: x._version),
            _error_of(lambda: (w * x).sum().backward()),
            _error_of(lambda: x[1:].mul_(2)),
        ]
        y = x.clone().requires_grad_()
        (y * y).sum().backward()
        seen["clone grad"] = (y.grad / y).tolist()

        @lib.inference_mode
        def bare():
            return lib.ones(1).is_inference(), lib.is_grad_enabled()

        @lib.inference_mode()
        def called():
            return lib.ones(1).is_inference()

        seen["decorators"] = (bare(), called(), lib.ones(1).is_inference())
        return seen

    got, want = run(flow), run(torch)
    assert got == want


def test_refused_inplace_update_of_an_inference_tensor_leaves_it_unchanged():
    # PyTorch raises after writing; the values here stay as they were.
    with flow.inference_mode():
        x = flow.arange(3.0)
    for write in (lambda: x.add_(1), lambda: x.__setitem__(0, 5.0), lambda: x[1:].mul_(2)):
        with pytest.raises(RuntimeError, match="inference tensor outside InferenceMode"):
            write()
    assert x.tolist() == [0.0, 1.0, 2.0]


def test_inference_mode_is_per_thread():
    import threading

    seen = []
    with flow.inference_mode():
        t = threading.Thread(target=lambda: seen.append(flow.ones(1).is_inference()))
        t.start()
        t.join()
        seen.append(flow.ones(1).is_inference())
    assert seen == [False, True]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "bool"])
def test_number_over_tensor_is_bitwise_torch(dtype):
    # PyTorch computes `n / t` as t.reciprocal() * n; so does oneflow, to the bit.
    a = np.random.default_rng(0).standard_normal(10000)
    a[:3] = [0.0, -0.0, np.inf]
    got = (3 / flow.tensor(a).to(getattr(flow, dtype))).numpy()
    want = (3 / torch.tensor(a).to(getattr(torch, dtype))).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
