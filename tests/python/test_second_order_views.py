"""Second-order gradients through strided views (as_strided, diagonal, unfold, a reshape of a
transposed tensor, a batched product with a transposed operand) against PyTorch: the gradient
must keep its history under create_graph and the Hessian-vector values must agree."""

import numpy as np
import pytest
import torch

import oneflow as flow

CASES = {
    "matmul_4d_transposed": (
        lambda L, a, b: (a @ b.transpose(-1, -2)).pow(2).sum(),
        [(2, 2, 3, 4), (2, 2, 5, 4)],
    ),
    "x_xT_4d": (lambda L, a: (a @ a.transpose(-1, -2)).pow(2).sum(), [(1, 2, 3, 4)]),
    "einsum": (lambda L, a, b: L.einsum("bid,bjd->bij", a, b).pow(2).sum(), [(2, 3, 4), (2, 5, 4)]),
    "tensordot": (
        lambda L, a, b: L.tensordot(a, b, dims=([1, 2], [0, 1])).pow(2).sum(),
        [(2, 3, 4), (3, 4, 5)],
    ),
    "reshape_of_transposed": (
        lambda L, a: a.transpose(-1, -2).reshape(2, 4, 3).pow(3).sum(),
        [(1, 2, 3, 4)],
    ),
    "clone_of_mT": (lambda L, a: a.mT.clone().pow(3).sum(), [(2, 3, 4)]),
    "diagonal": (lambda L, a: a.diagonal(0, -2, -1).pow(3).sum(), [(2, 4, 4)]),
    "diag": (lambda L, a: L.diag(a).pow(3).sum(), [(4, 4)]),
    "unfold": (lambda L, a: a.unfold(1, 3, 1).pow(3).sum(), [(2, 6)]),
    "as_strided_overlapping": (lambda L, a: a.as_strided((3, 3), (1, 1)).pow(3).sum(), [(6,)]),
}


def _hessian_terms(lib, fn, shapes):
    rng = np.random.default_rng(0)
    xs = [lib.tensor(rng.standard_normal(s), dtype=lib.float64, requires_grad=True) for s in shapes]
    grads = lib.autograd.grad(fn(lib, *xs), xs, create_graph=True)
    assert all(g.requires_grad for g in grads)
    total = sum((g * g).sum() for g in grads)
    return [g.detach().numpy() for g in grads], [h.numpy() for h in lib.autograd.grad(total, xs)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_order_through_strided_views_like_torch(name):
    fn, shapes = CASES[name]
    g_o, h_o = _hessian_terms(flow, fn, shapes)
    g_t, h_t = _hessian_terms(torch, fn, shapes)
    for a, b in zip(g_o + h_o, g_t + h_t):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_second_derivatives_without_a_rule_raise_instead_of_dropping_terms():
    x = flow.randn(1, 1, 4, 4, dtype=flow.float64, requires_grad=True)
    grid = flow.randn(1, 3, 3, 2, dtype=flow.float64).tanh().requires_grad_()
    out = flow.nn.functional.grid_sample(x, grid, align_corners=False).pow(2).sum()
    with pytest.raises(NotImplementedError, match="grid_sample"):
        flow.autograd.grad(out, [x, grid], create_graph=True)
    (g,) = flow.autograd.grad(
        flow.nn.functional.grid_sample(x, grid, align_corners=False).sum(), x
    )  # first order as before
    assert tuple(g.shape) == (1, 1, 4, 4)
    p = flow.randn(4, 3, dtype=flow.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="pdist"):
        flow.autograd.grad(flow.nn.functional.pdist(p).pow(2).sum(), p, create_graph=True)
