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
