"""autograd.grad's PyTorch options: dict inputs, materialize_grads, is_grads_batched,
only_inputs, and their errors, against PyTorch."""

import numpy as np
import pytest
import torch

import oneflow as flow


def _run(lib, **kw):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = lib.tensor([1.0], requires_grad=True)
    y = (x * x).sum() * 2 + (x.sin() * x)
    out = lib.autograd.grad(y, {"x": x, "z": z}, retain_graph=True, **kw)
    return {k: (None if v is None else v.detach().numpy()) for k, v in out.items()}


@pytest.mark.parametrize(
    "kw",
    [
        dict(grad_outputs=None, allow_unused=True),
        dict(grad_outputs="ones", materialize_grads=True),
        dict(grad_outputs="eye", is_grads_batched=True, allow_unused=True),
        dict(grad_outputs="eye", is_grads_batched=True, materialize_grads=True),
    ],
)
def test_grad_options_like_torch(kw):
    results = []
    for lib in (flow, torch):
        k = dict(kw)
        if k.get("grad_outputs") == "eye":
            k["grad_outputs"] = lib.eye(3)
        elif "grad_outputs" in k:
            k["grad_outputs"] = lib.ones(3)
        results.append(_run(lib, **k))
    assert list(results[0]) == list(results[1])
    for key in results[1]:
        a, b = results[0][key], results[1][key]
        assert (a is None) == (b is None), key
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=key)


def test_grad_option_errors_like_torch():
    x = flow.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="Expected allow_unused to be True"):
        flow.autograd.grad((x * 2).sum(), x, materialize_grads=True, allow_unused=False)
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        flow.autograd.grad((x * 2).sum(), x, only_inputs=False)
    import collections

    with pytest.raises(TypeError, match="must be a dict"):
        flow.autograd.grad((x * 2).sum(), collections.OrderedDict(x=x))
    with pytest.raises(RuntimeError, match="is_grads_batched"):
        flow.autograd.grad((x * 2).sum(), x, is_grads_batched=True)


def test_gradgradcheck_passes_and_catches_a_wrong_double_backward():
    x = flow.randn(3, 2, dtype=flow.float64, requires_grad=True)
    w = flow.randn(2, 4, dtype=flow.float64, requires_grad=True)
    assert flow.autograd.gradgradcheck(lambda a, b: (a @ b).tanh(), (x, w))
    assert flow.autograd.gradgradcheck(lambda a: (a.sin() * a).sum(), (x,))

    class WrongSecond(flow.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 3 * a.detach() * a.detach()  # first order right, no second order

    assert flow.autograd.gradcheck(WrongSecond.apply, (x,))
    assert not flow.autograd.gradgradcheck(WrongSecond.apply, (x,), raise_exception=False)
    t = flow.ones(2)
    assert flow.autograd.Variable(t, requires_grad=True) is t and t.requires_grad
    with flow.autograd.set_multithreading_enabled(False):
        assert not flow.autograd.is_multithreading_enabled()
    assert flow.autograd.is_multithreading_enabled()


@pytest.mark.parametrize("op", ["mul_", "div_", "pow_", "sigmoid_", "exp_"])
def test_second_order_gradients_through_in_place_ops_like_torch(op):
    # the copy of the old values an in-place op keeps for its gradient has their history
    def run(lib):
        x = lib.tensor([[0.5, -1.0, 2.0]], requires_grad=True, dtype=lib.float64)
        y = x * 2
        if op in ("sigmoid_", "exp_"):
            getattr(y, op)()
        else:
            getattr(y, op)(x.abs() + 0.5 if op != "pow_" else 2.0)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        return lib.autograd.grad((g**2).sum(), x)[0].detach().numpy()

    np.testing.assert_allclose(run(flow), run(torch), rtol=1e-10)


def test_post_accumulate_grad_hook_like_torch():
    import torch

    seen = {}
    for T in (torch, flow):
        w = T.ones(3, requires_grad=True)
        log = seen.setdefault(T.__name__, [])
        h = w.register_post_accumulate_grad_hook(lambda p, log=log: log.append(p.grad.tolist()))
        (w * 2).sum().backward()
        (w * w).sum().backward()
        T.autograd.grad((w * 5).sum(), w)  # accumulates nothing: no call
        h.remove()
        (w * 2).sum().backward()
        with pytest.raises(RuntimeError, match="non-leaf"):
            (w * 2).register_post_accumulate_grad_hook(lambda p: None)
        with pytest.raises(RuntimeError, match="require"):
            T.ones(2).register_post_accumulate_grad_hook(lambda p: None)
    assert seen["oneflow"] == seen["torch"] == [[2.0] * 3, [4.0] * 3]


def test_post_accumulate_grad_hook_steps_an_optimizer_per_parameter():
    model = flow.nn.Linear(3, 2)
    ref = flow.nn.Linear(3, 2)
    ref.load_state_dict(model.state_dict())
    opts = {p: flow.optim.SGD([p], lr=0.1) for p in model.parameters()}

    def step(p):
        opts[p].step()
        opts[p].zero_grad()

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step)
    ref_opt = flow.optim.SGD(ref.parameters(), lr=0.1)
    x = flow.randn(4, 3)
    for _ in range(3):
        model(x).square().sum().backward()
        ref(x).square().sum().backward()
        ref_opt.step()
        ref_opt.zero_grad()
    for a, b in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
        assert a.grad is None or not a.grad.abs().sum().item()


@pytest.mark.parametrize("create_graph", [False, True])
def test_backward_inputs_accumulates_only_there_like_torch(create_graph):
    import torch

    res = {}
    for T in (torch, flow):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0], requires_grad=True)
        z = (x * y * x).sum()
        z.backward(inputs=[x], create_graph=create_graph)
        T.autograd.backward((x * y).sum(), inputs=x)  # accumulates onto x.grad
        with pytest.raises(RuntimeError, match="empty"):
            (x * 2).sum().backward(inputs=[])
        res[T.__name__] = (x.grad.detach().tolist(), y.grad)
    assert res["oneflow"][0] == res["torch"][0]
    assert res["oneflow"][1] is None and res["torch"][1] is None
