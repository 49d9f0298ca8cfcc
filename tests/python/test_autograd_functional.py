"""oneflow.autograd.functional against torch.autograd.functional: values, shapes and tuple
structure of jacobian, hessian, vjp, jvp, vhp and hvp; create_graph and strict."""

import numpy as np
import pytest
import torch

import oneflow as flow


def _f_single(lib, x):
    return (x.sin() * x).sum(-1) + x[..., :1].exp().squeeze(-1)


def _f_pair(lib, x, y):
    return (x * y).tanh() + x**2, (x - y).sum()


def _f_scalar(lib, x, y):
    return (x.exp() * y).sum() + (x * x * y).sum()


def _to(lib, arrays):
    return tuple(lib.tensor(a) for a in arrays)


def _flatten(out):
    if isinstance(out, (tuple, list)):
        for o in out:
            yield from _flatten(o)
    else:
        yield out


def _same(got, want, rtol=1e-10):
    got, want = list(_flatten(got)), list(_flatten(want))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=rtol, atol=1e-12)


rng = np.random.default_rng(0)
X = rng.standard_normal((2, 3))
Y = rng.standard_normal((2, 3))


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_and_hessian_like_torch(create_graph):
    for lib_fn, args in [(_f_single, (X,)), (_f_pair, (X, Y))]:
        inputs = [_to(lib, args) for lib in (flow, torch)]
        got = flow.autograd.functional.jacobian(
            lambda *a, f=lib_fn: f(flow, *a),
            inputs[0] if len(args) > 1 else inputs[0][0],
            create_graph=create_graph,
        )
        want = torch.autograd.functional.jacobian(
            lambda *a, f=lib_fn: f(torch, *a),
            inputs[1] if len(args) > 1 else inputs[1][0],
            create_graph=create_graph,
        )
        _same(got, want)
    got = flow.autograd.functional.hessian(lambda *a: _f_scalar(flow, *a), _to(flow, (X, Y)))
    want = torch.autograd.functional.hessian(lambda *a: _f_scalar(torch, *a), _to(torch, (X, Y)))
    _same(got, want)
    got = flow.autograd.functional.hessian(lambda a: _f_scalar(flow, a, a), flow.tensor(X))
    want = torch.autograd.functional.hessian(lambda a: _f_scalar(torch, a, a), torch.tensor(X))
    _same(got, want)


def test_vector_products_like_torch():
    v_out = (rng.standard_normal((2, 3)), rng.standard_normal(()))
    v_in = (rng.standard_normal((2, 3)), rng.standard_normal((2, 3)))
    for name, fn, v in [("vjp", _f_pair, v_out), ("jvp", _f_pair, v_in)]:
        got = getattr(flow.autograd.functional, name)(
            lambda *a, f=fn: f(flow, *a), _to(flow, (X, Y)), _to(flow, v)
        )
        want = getattr(torch.autograd.functional, name)(
            lambda *a, f=fn: f(torch, *a), _to(torch, (X, Y)), _to(torch, v)
        )
        _same(got, want)
    for name in ["vhp", "hvp"]:
        got = getattr(flow.autograd.functional, name)(
            lambda *a: _f_scalar(flow, *a), _to(flow, (X, Y)), _to(flow, v_in)
        )
        want = getattr(torch.autograd.functional, name)(
            lambda *a: _f_scalar(torch, *a), _to(torch, (X, Y)), _to(torch, v_in)
        )
        _same(got, want)
    # Single tensors in, single tensor out: the structure is a tensor, not a tuple.
    out, g = flow.autograd.functional.vjp(lambda a: (a * a).sum(), flow.tensor(X))
    assert isinstance(g, flow.Tensor) and tuple(g.shape) == (2, 3)
    np.testing.assert_allclose(g.numpy(), 2 * X)
    out, j = flow.autograd.functional.jvp(lambda a: a * 3, flow.tensor([2.0]))
    np.testing.assert_allclose(j.numpy(), [3.0])


def test_create_graph_strict_and_errors():
    x = flow.tensor(X, requires_grad=True)
    _, g = flow.autograd.functional.vjp(lambda a: (a**3).sum(), x, create_graph=True)
    g.sum().backward()  # differentiable: d/dx sum(3 x^2) = 6 x
    np.testing.assert_allclose(x.grad.numpy(), 6 * X, rtol=1e-12)
    _, g = flow.autograd.functional.vjp(lambda a: (a**3).sum(), flow.tensor(X))
    assert not g.requires_grad
    # An output that does not depend on an input: zeros, or an error with strict.
    j = flow.autograd.functional.jacobian(lambda a, b: a * 2, _to(flow, (X, Y)))
    np.testing.assert_array_equal(j[1].numpy(), np.zeros((2, 3, 2, 3)))
    with pytest.raises(RuntimeError):
        flow.autograd.functional.jacobian(lambda a, b: a * 2, _to(flow, (X, Y)), strict=True)
    with pytest.raises(RuntimeError):
        flow.autograd.functional.vjp(lambda a: a * 2, flow.tensor(X))  # v needed
    with pytest.raises(RuntimeError):
        flow.autograd.functional.vhp(lambda a: a * 2, flow.tensor(X), flow.tensor(X))
    with pytest.raises(TypeError):
        flow.autograd.functional.jacobian(lambda a: a, [1.0])
