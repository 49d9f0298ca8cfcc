"""LAPACK's complex routines behind linalg (eigh, svd, lu) and the general eigendecomposition
(eig, eigvals) for real and complex input: values and gradients against PyTorch. Eigen- and
singular vectors are defined up to a phase each, so vectors are compared through quantities
that do not depend on it."""

import numpy as np
import pytest
import torch

import oneflow as flow

CDTYPES = [(np.complex64, 2e-3), (np.complex128, 1e-9)]


def _pair(a):
    return flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(x, y, tol):
    y = y.detach().resolve_conj().numpy() if isinstance(y, torch.Tensor) else y
    np.testing.assert_allclose(x.detach().numpy(), y, rtol=tol, atol=tol)


def _crandn(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype,tol", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (1, 1)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_complex_eigh_values_vectors_and_gradients(dtype, tol, shape, uplo):
    rng = np.random.default_rng(sum(shape))
    a = _crandn(rng, shape, dtype)
    a = a + np.conj(np.swapaxes(a, -1, -2))
    fa, ta = _pair(a)
    w, V = flow.linalg.eigh(fa, UPLO=uplo)
    tw, tV = torch.linalg.eigh(ta, UPLO=uplo)
    assert w.dtype == (flow.float32 if dtype == np.complex64 else flow.float64)
    _close(w, tw, tol * 10)
    rec = V @ flow.diag_embed(w.to(V.dtype)) @ V.conj().transpose(-2, -1)
    _close(rec, a, tol * 20)
    weights = np.linspace(0.5, 2.0, shape[-1])
    f_loss = (w * flow.tensor(weights, dtype=w.dtype)).sum() + (V.abs() ** 2)[..., 0, :].sum()
    t_loss = (tw * torch.tensor(weights, dtype=tw.dtype)).sum() + (tV.abs() ** 2)[..., 0, :].sum()
    f_loss.backward()
    t_loss.backward()
    _close(fa.grad, ta.grad, tol * 50)


def test_complex_eigvalsh_gradient_and_phase_dependent_loss_raises():
    rng = np.random.default_rng(0)
    a = _crandn(rng, (5, 5), np.complex128)
    a = a + a.conj().T
    fa, ta = _pair(a)
    flow.linalg.eigvalsh(fa).pow(2).sum().backward()
    torch.linalg.eigvalsh(ta).pow(2).sum().backward()
    _close(fa.grad, ta.grad, 1e-9)
    _, V = flow.linalg.eigh(flow.tensor(a, requires_grad=True))
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        V.real.sum().backward()


@pytest.mark.parametrize("dtype,tol", CDTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_complex_svd_values_reconstruction_and_gradients(dtype, tol, shape, full):
    rng = np.random.default_rng(7 + sum(shape))
    a = _crandn(rng, shape, dtype)
    fa, ta = _pair(a)
    U, S, Vh = flow.linalg.svd(fa, full_matrices=full)
    tU, tS, tVh = torch.linalg.svd(ta, full_matrices=full)
    assert tuple(U.shape) == tuple(tU.shape) and tuple(Vh.shape) == tuple(tVh.shape)
    assert S.dtype == (flow.float32 if dtype == np.complex64 else flow.float64)
    _close(S, tS, tol * 10)
    k = S.shape[-1]
    rec = U[..., :, :k] @ flow.diag_embed(S.to(U.dtype)) @ Vh[..., :k, :]
    _close(rec, a, tol * 20)
    # U Vh, |U|^2 and S do not depend on the phases
    f_loss = (
        S.sum() + (U[..., :, :k] @ Vh[..., :k, :]).abs().sum() + (U.abs() ** 2)[..., 0, :].sum()
    )
    t_loss = (
        tS.sum() + (tU[..., :, :k] @ tVh[..., :k, :]).abs().sum() + (tU.abs() ** 2)[..., 0, :].sum()
    )
    f_loss.backward()
    t_loss.backward()
    _close(fa.grad, ta.grad, tol * 100)


@pytest.mark.parametrize("dtype,tol", CDTYPES)
def test_complex_svdvals_and_its_gradient(dtype, tol):
    a = _crandn(np.random.default_rng(1), (3, 4, 6), dtype)
    fa, ta = _pair(a)
    s, ts = flow.linalg.svdvals(fa), torch.linalg.svdvals(ta)
    _close(s, ts, tol * 10)
    s.pow(3).sum().backward()
    ts.pow(3).sum().backward()
    _close(fa.grad, ta.grad, tol * 100)


@pytest.mark.parametrize(
    "dtype,tol",
    [(np.float32, 2e-3), (np.float64, 1e-9), (np.complex64, 2e-3), (np.complex128, 1e-9)],
)
@pytest.mark.parametrize("shape", [(4, 4), (3, 6, 6), (1, 1)])
def test_eig_values_vectors_and_gradients(dtype, tol, shape):
    rng = np.random.default_rng(3 + sum(shape))
    a = (
        _crandn(rng, shape, dtype)
        if np.issubdtype(dtype, np.complexfloating)
        else rng.standard_normal(shape).astype(dtype)
    )
    fa, ta = _pair(a)
    L, V = flow.linalg.eig(fa)
    tL, tV = torch.linalg.eig(ta)
    want = flow.complex64 if dtype in (np.float32, np.complex64) else flow.complex128
    assert L.dtype == want and V.dtype == want
    np.testing.assert_allclose(
        np.sort_complex(L.detach().numpy().ravel()),
        np.sort_complex(tL.detach().numpy().ravel()),
        rtol=tol * 10,
        atol=tol * 10,
    )
    _close(fa.to(want) @ V, V * L.unsqueeze(-2), tol * 20)
    _close(flow.linalg.vector_norm(V, dim=-2), np.ones(shape[:-1]), tol * 10)
    # sums over all the eigenpairs do not depend on their order nor on the phases
    f_loss = (L * L).real.sum() + (V.abs() ** 4).sum()
    t_loss = (tL * tL).real.sum() + (tV.abs() ** 4).sum()
    f_loss.backward()
    t_loss.backward()
    assert fa.grad.dtype == fa.dtype
    _close(fa.grad, ta.grad, tol * 200)


def test_eigvals_and_its_gradient():
    a = np.random.default_rng(5).standard_normal((2, 5, 5))
    fa, ta = _pair(a)
    L, tL = flow.linalg.eigvals(fa), torch.linalg.eigvals(ta)
    np.testing.assert_allclose(
        np.sort_complex(L.detach().numpy().ravel()),
        np.sort_complex(tL.detach().numpy().ravel()),
        rtol=1e-9,
        atol=1e-9,
    )
    L.abs().sum().backward()
    tL.abs().sum().backward()
    _close(fa.grad, ta.grad, 1e-8)


def test_eig_of_a_rotation_has_conjugate_pairs():
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    L, V = flow.linalg.eig(flow.tensor(a))
    np.testing.assert_allclose(np.sort_complex(L.numpy()), [-1j, 1j], atol=1e-12)
    np.testing.assert_allclose(a @ V.numpy(), V.numpy() * L.numpy()[None, :], atol=1e-12)


def test_eig_errors():
    with pytest.raises(RuntimeError, match="square"):
        flow.linalg.eig(flow.randn(2, 3))
    with pytest.raises(NotImplementedError, match="Long"):
        flow.linalg.eig(flow.ones(2, 2, dtype=flow.int64))
    with pytest.raises(RuntimeError, match="infs or NaNs"):
        flow.linalg.eig(flow.tensor([[1.0, float("nan")], [0.0, 1.0]]))
    L, V = flow.linalg.eig(flow.randn(0, 0))
    assert tuple(L.shape) == (0,) and tuple(V.shape) == (0, 0) and L.dtype == flow.complex64
    x = flow.randn(3, 3, dtype=flow.complex128, requires_grad=True)
    _, V = flow.linalg.eig(x)
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        V.real.sum().backward()


@pytest.mark.parametrize("dtype,tol", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 4)])
def test_complex_lu_matches_torch(dtype, tol, shape):
    a = _crandn(np.random.default_rng(11 + sum(shape)), shape, dtype)
    fa, ta = _pair(a)
    P, L, U = flow.linalg.lu(fa)
    tP, tL, tU = torch.linalg.lu(ta)
    for x, y in ((P, tP), (L, tL), (U, tU)):
        assert x.dtype == fa.dtype
        _close(x, y, tol * 10)
    (L.abs().sum() + (U * U).real.sum()).backward()
    (tL.abs().sum() + (tU * tU).real.sum()).backward()
    _close(fa.grad, ta.grad, tol * 100)
    LU, piv = flow.linalg.lu_factor(flow.tensor(a))
    tLU, tpiv = torch.linalg.lu_factor(torch.tensor(a))
    _close(LU, tLU, tol * 10)
    np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())


@pytest.mark.parametrize("dtype,tol", CDTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5), (2, 4, 3), (2, 3, 6)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_complex_qr_on_lapack_matches_torch(dtype, tol, shape, mode):
    if mode == "complete" and shape[-2] > shape[-1]:
        pytest.skip("not differentiable, as PyTorch")
    rng = np.random.default_rng(17 + sum(shape))
    a = _crandn(rng, shape, dtype)
    fa, ta = _pair(a)
    Q, R = flow.linalg.qr(fa, mode)
    tQ, tR = torch.linalg.qr(ta, mode)
    _close(R, tR, tol * 10)
    if mode == "r":
        return
    _close(Q, tQ, tol * 10)  # LAPACK's conventions fix the phases: Q and R equal PyTorch's
    wq, wr = _crandn(rng, tuple(Q.shape), dtype), _crandn(rng, tuple(R.shape), dtype)
    ((Q * flow.tensor(wq)).real.sum() + (R * flow.tensor(wr)).imag.sum()).backward()
    ((tQ * torch.tensor(wq)).real.sum() + (tR * torch.tensor(wr)).imag.sum()).backward()
    _close(fa.grad, ta.grad, tol * 100)


@pytest.mark.parametrize("dtype,tol", CDTYPES)
def test_complex_det_without_gradient_on_lapack_matches_torch(dtype, tol):
    rng = np.random.default_rng(23)
    a = _crandn(rng, (4, 6, 6), dtype)
    a[1] = a[1][[1, 0, 2, 3, 4, 5]]  # a row swap flips the sign
    a[2, :, 3] = 0  # singular
    fa, ta = flow.tensor(a), torch.tensor(a)
    _close(flow.linalg.det(fa), torch.linalg.det(ta), tol * 100)
    (s, ld), (ts, tld) = flow.linalg.slogdet(fa), torch.linalg.slogdet(ta)
    _close(s, ts, tol * 10)
    got, want = ld.numpy(), tld.numpy()
    assert np.isneginf(got[2]) and np.isneginf(want[2])
    np.testing.assert_allclose(np.delete(got, 2), np.delete(want, 2), rtol=tol * 10, atol=tol * 10)
    with flow.no_grad():  # a tensor that requires grad, under no_grad, takes LAPACK too
        _close(flow.linalg.det(flow.tensor(a, requires_grad=True)), torch.linalg.det(ta), tol * 100)


@pytest.mark.parametrize("dtype,tol", CDTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_complex_lu_solve_and_solve_on_lapack_match_torch(dtype, tol, left, adjoint):
    rng = np.random.default_rng(29)
    a = _crandn(rng, (2, 4, 4), dtype) + 3 * np.eye(4, dtype=dtype)
    b = _crandn(rng, (2, 4, 3) if left else (2, 3, 4), dtype)
    w = _crandn(rng, b.shape, dtype)
    fa, ta = _pair(a)
    fb, tb = _pair(b)
    LU, piv = flow.linalg.lu_factor(fa)
    tLU, tpiv = torch.linalg.lu_factor(ta)
    x = flow.linalg.lu_solve(LU, piv, fb, left=left, adjoint=adjoint)
    tx = torch.linalg.lu_solve(tLU, tpiv, tb, left=left, adjoint=adjoint)
    _close(x, tx, tol * 10)
    (x * flow.tensor(w)).real.sum().backward()
    (tx * torch.tensor(w)).real.sum().backward()
    _close(fa.grad, ta.grad, tol * 100)
    _close(fb.grad, tb.grad, tol * 100)
    fa2, ta2 = _pair(a)
    fb2, tb2 = _pair(b)
    y = flow.linalg.solve(fa2, fb2, left=left)
    ty = torch.linalg.solve(ta2, tb2, left=left)
    _close(y, ty, tol * 10)
    (y * flow.tensor(w)).imag.sum().backward()
    (ty * torch.tensor(w)).imag.sum().backward()
    _close(fa2.grad, ta2.grad, tol * 100)
    _close(fb2.grad, tb2.grad, tol * 100)


def test_complex_svd_refuses_a_phase_dependent_loss_like_torch():
    a = _crandn(np.random.default_rng(31), (4, 3), np.complex128)
    fa, ta = _pair(a)
    U, S, Vh = flow.linalg.svd(fa, full_matrices=False)
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        (U.real.sum() + Vh.real.sum()).backward()
    tU, tS, tVh = torch.linalg.svd(ta, full_matrices=False)
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        (tU.real.sum() + tVh.real.sum()).backward()


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_empty_complex_cholesky(shape):
    L = flow.linalg.cholesky(flow.zeros(*shape, dtype=flow.complex64))
    assert tuple(L.shape) == shape and L.dtype == flow.complex64
