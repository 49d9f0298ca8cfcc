"""linalg.det / slogdet / logdet on LAPACK's LU with PyTorch's gradients: real and complex,
batched, singular matrices (the cofactors through the SVD) and second order."""

import numpy as np
import pytest
import torch

import oneflow as flow

DTYPES = [("float64", 1e-9), ("float32", 2e-4), ("complex128", 1e-9), ("complex64", 2e-4)]


def _random(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _pair(a):
    return (
        flow.tensor(a, requires_grad=True),
        torch.tensor(a, requires_grad=True),
    )


def _close(ours, ref, tol):
    np.testing.assert_allclose(
        ours.detach().numpy(), ref.detach().resolve_conj().numpy(), rtol=tol, atol=tol
    )


def _weights(shape, dtype, seed):
    w = _random(shape, dtype, seed)
    return flow.tensor(w), torch.tensor(w)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 5, 5), (1, 1), (0, 0), (3, 0, 0)])
def test_det_values_and_gradients_like_torch(dtype, tol, shape):
    a = _random(shape, dtype, 1)
    ours, ref = _pair(a)
    d, e = flow.linalg.det(ours), torch.linalg.det(ref)
    _close(d, e, tol)
    assert d.dtype == getattr(flow, dtype)
    w_o, w_t = _weights(d.shape, dtype, 2)
    (d * w_o).real.sum().backward()
    (e * w_t).real.sum().backward()
    _close(ours.grad, ref.grad, tol * 10)


@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_det_gradient_of_singular_matrices_is_the_cofactor_matrix(dtype, tol):
    # rank n - 1 (a cofactor matrix of rank one), rank n - 2 (zero cofactors) and a regular one
    b = _random((3, 4, 3), dtype, 4)
    c = _random((3, 3, 4), dtype, 5)
    a = b @ c
    a[1, :, 2:] = 0
    a[1, 1, 1] = 0
    a[1, 2, 1] = 0
    a[2] = _random((4, 4), dtype, 6)
    a[0, 3] = a[0, 0] * 2  # an exactly dependent row: LU finds a zero pivot
    ours, ref = _pair(a)
    d = flow.linalg.det(ours)
    d.real.sum().backward()
    # PyTorch's create_graph path is the SVD formula; its first-order path gives zeros for
    # exactly singular inputs instead of the cofactors. Matrix 0 is compared with its cofactors
    # only: where rounding leaves its last LU pivot at ~1e-7 instead of 0, PyTorch's complex64
    # SVD formula gave other values than the cofactors on some CPUs (ours equal them).
    e = torch.linalg.det(ref)
    (g,) = torch.autograd.grad(e.real.sum(), ref, create_graph=True)
    _close(ours.grad[1:], g[1:], tol * 100)
    if dtype != "complex64":
        _close(ours.grad, g, tol * 100)
    cof = np.zeros((4, 4), np.complex128)
    for i in range(4):
        for j in range(4):
            minor = np.delete(np.delete(a[0], i, 0), j, 1)
            cof[i, j] = (-1) ** (i + j) * np.linalg.det(minor.astype(np.complex128))
    np.testing.assert_allclose(ours.grad.numpy()[0], cof.conj(), rtol=tol * 100, atol=tol * 100)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_det_second_order_like_torch(dtype):
    a = _random((2, 3, 3), dtype, 7)
    ours, ref = _pair(a)
    (g_o,) = flow.autograd.grad(flow.linalg.det(ours).real.sum(), ours, create_graph=True)
    (g_t,) = torch.autograd.grad(torch.linalg.det(ref).real.sum(), ref, create_graph=True)
    _close(g_o, g_t, 1e-8)
    w_o, w_t = _weights(a.shape, dtype, 8)
    (h_o,) = flow.autograd.grad((g_o * w_o).real.sum(), ours)
    (h_t,) = torch.autograd.grad((g_t * w_t).real.sum(), ref)
    _close(h_o, h_t, 1e-7)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("use", ["logabsdet", "sign", "both"])
def test_slogdet_values_and_gradients_like_torch(dtype, tol, use):
    a = _random((2, 4, 4), dtype, 9)
    ours, ref = _pair(a)
    s_o, l_o = flow.linalg.slogdet(ours)
    s_t, l_t = torch.linalg.slogdet(ref)
    _close(s_o, s_t, tol)
    _close(l_o, l_t, tol)
    if use == "sign" and not dtype.startswith("complex"):
        return  # the real sign is piecewise constant: no gradient to compare
    w_o, w_t = _weights((2,), dtype, 10)

    def loss(s, ell, w):
        terms = []
        if use in ("sign", "both"):
            terms.append((s * w).real.sum())
        if use in ("logabsdet", "both"):
            terms.append((ell * w.real).sum())
        return sum(terms)

    loss(s_o, l_o, w_o).backward()
    loss(s_t, l_t, w_t).backward()
    _close(ours.grad, ref.grad, tol * 10)


@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_logdet_of_complex_and_real_matrices_like_torch(dtype, tol):
    a = _random((3, 3, 3), dtype, 11)
    ours, ref = _pair(a)
    v_o, v_t = flow.logdet(ours), torch.logdet(ref)
    _close(v_o, v_t, tol)
    mask = torch.isfinite(v_t).numpy() if not dtype.startswith("complex") else None
    if mask is not None and not mask.all():
        v_o = v_o[flow.tensor(mask)]
        v_t = v_t[torch.tensor(mask)]
    v_o.real.sum().backward()
    v_t.real.sum().backward()
    _close(ours.grad, ref.grad, tol * 10)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_slogdet_and_det_gradients_of_an_infinite_upstream_gradient_like_torch(dtype):
    """g I is built with g on the diagonal only (as eye * g, 0 * inf put NaN off it)."""
    a = np.array([[2, 1, 0.5], [1, 3, 0.2], [0.3, 0.1, 4]]).astype(dtype)
    grads = []
    for lib in (torch, flow):
        x = lib.tensor(a, requires_grad=True)
        lib.linalg.slogdet(x)[1].backward(lib.tensor(float("inf"), dtype=lib.float64))
        y = lib.tensor(a, requires_grad=True)
        lib.linalg.det(y).real.backward(lib.tensor(float("inf"), dtype=lib.float64))
        grads.append((x.grad.numpy(), y.grad.numpy()))
    for ours, theirs in zip(grads[1], grads[0]):
        np.testing.assert_array_equal(ours, theirs)


def test_complex_slogdet_second_order_like_torch():
    a = _random((3, 3), "complex128", 12)
    ours, ref = _pair(a)
    s_o, l_o = flow.linalg.slogdet(ours)
    s_t, l_t = torch.linalg.slogdet(ref)
    (g_o,) = flow.autograd.grad(l_o + s_o.imag, ours, create_graph=True)
    (g_t,) = torch.autograd.grad(l_t + s_t.imag, ref, create_graph=True)
    _close(g_o, g_t, 1e-9)
    (h_o,) = flow.autograd.grad((g_o * g_o.conj()).real.sum(), ours)
    (h_t,) = torch.autograd.grad((g_t * g_t.conj()).real.sum(), ref)
    _close(h_o, h_t, 1e-7)


def test_det_without_grad_keeps_the_fast_path_and_errors():
    with pytest.raises(RuntimeError, match="square"):
        flow.linalg.det(flow.randn(2, 3, requires_grad=True))
    with pytest.raises(RuntimeError, match="square"):
        flow.linalg.det(flow.randn(2, 3, dtype=flow.complex64))
    x = flow.randn(4, 4)
    np.testing.assert_allclose(flow.linalg.det(x).numpy(), np.linalg.det(x.numpy()), rtol=1e-4)
