"""Complex tensors at the edges, against PyTorch and NumPy: transforms over many lines on every
thread, empty signals, division at extreme magnitudes, views whose gradient goes through
as_strided, in-place products under autograd, functions that must not drop imaginary parts, and
creation ops asked for a complex dtype they cannot make."""

import numpy as np
import pytest
import torch

import oneflow as flow


def cplx(rng, shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("n", [53, 61, 143, 106, 427, 1009])
def test_transforms_of_many_lines_agree_with_numpy(n):
    # Many lines spread over the OpenMP threads, sizes with the generic butterfly's prime factors
    # (each thread needs its own plan) and with Bluestein's.
    rng = np.random.default_rng(n)
    x = cplx(rng, (400, n))
    for _ in range(3):
        np.testing.assert_allclose(
            flow.fft.fft(flow.tensor(x)).numpy(), np.fft.fft(x), rtol=1e-9, atol=1e-9 * n
        )
    r = rng.standard_normal((400, n))
    np.testing.assert_allclose(
        flow.fft.rfft(flow.tensor(r)).numpy(), np.fft.rfft(r), rtol=1e-9, atol=1e-9 * n
    )
    h = np.fft.rfft(r)
    np.testing.assert_allclose(
        flow.fft.irfft(flow.tensor(h), n=n).numpy(), np.fft.irfft(h, n=n), rtol=1e-9, atol=1e-9
    )


def test_empty_signals_raise():
    for fn in (
        lambda: flow._C.fft_r2c(flow.zeros(3, 0), [1], 0, True),
        lambda: flow._C.fft_c2c(flow.zeros(3, 0, dtype=flow.complex64), [1], 0, True),
    ):
        with pytest.raises(RuntimeError, match="Invalid number of data points"):
            fn()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_division_at_extreme_magnitudes_like_torch(dtype):
    big = 1e20 if dtype == "complex64" else 1e200
    small = 1e-20 if dtype == "complex64" else 1e-200
    a = np.array([big + big * 1j, 1 + 0j, small + small * 1j, 3 - 4j], dtype=dtype)
    b = np.array([big + big * 1j, big + big * 1j, small - small * 1j, 0.5 + 2j], dtype=dtype)
    got = (flow.tensor(a) / flow.tensor(b)).numpy()
    want = (torch.tensor(a) / torch.tensor(b)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose((1 / flow.tensor(b)).numpy(), (1 / torch.tensor(b)).numpy(), 1e-5)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["tanh", "sigmoid", "tan", "expm1", "log1p", "asinh", "atanh"])
def test_functions_at_extreme_and_tiny_arguments_like_torch(name, dtype):
    # tanh / sigmoid / tan stay finite where e^(2x) overflows (PyTorch's complex64 sigmoid
    # gives NaN at -400 + 3i); near 0 the results keep their relative precision (no cancellation
    # in expm1, log1p, asinh, atanh). Compared with PyTorch in complex128.
    z = np.array(
        [
            30 + 1j,
            -30 - 2j,
            400 + 0.5j,
            -400 + 3j,
            0.5 + 40j,
            -2 - 300j,
            1e-6 + 1e-6j,
            -1e-5 + 2e-6j,
        ]
        + [1e-3 - 1e-4j, 0j, complex(-0.0, 0.5)],
        dtype=dtype,
    )
    got = getattr(flow, name)(flow.tensor(z)).numpy()
    want = getattr(torch, name)(torch.tensor(z).to(torch.complex128)).numpy()
    fits = np.abs(want) < np.finfo(got.real.dtype).max  # e^400 overflows float32, as it should
    assert np.isfinite(got[fits]).all()
    got, want = got[fits], want[fits]
    tol = 2e-5 if dtype == "complex64" else 1e-12
    tiny = np.finfo(got.real.dtype).tiny  # results below it underflow
    err = np.abs(got - want) / np.maximum(np.abs(want), tiny)  # relative to |f(z)|
    assert (err < tol).all(), f"{name}: {list(zip(z, got, want, err))}"


def test_vdot_conjugates_its_first_argument():
    rng = np.random.default_rng(1)
    a, b = cplx(rng, 5), cplx(rng, 5)
    got = flow.vdot(flow.tensor(a), flow.tensor(b)).numpy()
    np.testing.assert_allclose(got, torch.vdot(torch.tensor(a), torch.tensor(b)).numpy())


def test_can_cast_and_out_refuse_complex_to_real_like_torch():
    names = ["bool", "int64", "float32", "float64", "complex64", "complex128"]
    for src in names:
        for dst in names:
            got = flow.can_cast(getattr(flow, src), getattr(flow, dst))
            assert got == torch.can_cast(getattr(torch, src), getattr(torch, dst)), (src, dst)
    x = flow.ones(3)
    with pytest.raises(RuntimeError):
        flow.add(x, flow.ones(3, dtype=flow.complex64), out=x)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, z: lib.diagonal(z),
        lambda lib, z: z.unfold(1, 2, 1),
        lambda lib, z: lib.as_strided(z, (2, 2), (1, 2), 1),
    ],
)
def test_gradients_through_as_strided_views_like_torch(fn):
    rng = np.random.default_rng(2)
    a = cplx(rng, (3, 4))
    grads = []
    for lib in (torch, flow):
        z = lib.tensor(a, requires_grad=True)
        lib.view_as_real(fn(lib, z * 1)).pow(2).sum().backward()
        grads.append(z.grad.numpy().copy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_in_place_products_keep_their_gradients_like_torch():
    rng = np.random.default_rng(3)
    a, r = cplx(rng, 4), rng.standard_normal(4)
    grads = []
    for lib in (torch, flow):
        z = lib.tensor(a, requires_grad=True)
        v = lib.tensor(r, requires_grad=True)
        w = z * 1
        w.mul_(v * 2)
        w *= 2j
        w.mul_(z)
        y = z.abs()
        y.add_(1)
        (lib.view_as_real(w).sum() + y.sum()).backward()
        grads.append((z.grad.numpy().copy(), v.grad.numpy().copy()))
    for g, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(g, t, rtol=1e-12)


def test_number_to_a_complex_power_like_torch():
    rng = np.random.default_rng(4)
    a = cplx(rng, 5)
    np.testing.assert_allclose((2 ** flow.tensor(a)).numpy(), (2 ** torch.tensor(a)).numpy(), 1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda z: flow.sinc(z),
        lambda z: flow.deg2rad(z),
        lambda z: flow.logsumexp(z, 0),
        lambda z: flow.trapezoid(z),
        lambda z: flow.logit(z),
        lambda z: flow.xlogy(z, z),
        lambda z: flow.special.xlogy(z, z),
        lambda z: flow.float_power(z, 2),
    ],
)
def test_functions_without_complex_forms_refuse_rather_than_drop_imaginary_parts(call):
    z = flow.tensor(cplx(np.random.default_rng(5), (3, 4)))
    with pytest.raises(TypeError, match="complex"):
        call(z)


@pytest.mark.parametrize(
    "call",
    [
        lambda: flow.arange(4, dtype=flow.complex64),
        lambda: flow.linspace(0, 1, 5, dtype=flow.complex64),
        lambda: flow.randint(0, 4, (3,), dtype=flow.complex64),
    ],
)
def test_creation_ops_refuse_complex_dtypes_at_the_call(call):
    with pytest.raises(TypeError, match="complex64"):
        call()


def test_isclose_allclose_and_conjugate_transposes_like_torch():
    a, b = [1 + 1j, 2 - 1j, complex(np.nan, 1)], [1 + 5j, 2 - 1j + 1e-9, complex(np.nan, 1)]
    for kw in ({}, {"equal_nan": True}):
        got = flow.isclose(flow.tensor(a), flow.tensor(b), **kw).numpy()
        want = torch.isclose(torch.tensor(a), torch.tensor(b), **kw).numpy()
        np.testing.assert_array_equal(got, want)
    assert not flow.allclose(flow.tensor(a[:2]), flow.tensor(b[:2]))
    q = cplx(np.random.default_rng(6), (2, 3, 3))
    for attr in ("mH", "adjoint"):
        got, want = getattr(flow.tensor(q), attr), getattr(torch.tensor(q), attr)
        got, want = (got(), want()) if attr == "adjoint" else (got, want)
        np.testing.assert_array_equal(got.numpy(), want.resolve_conj().numpy())
    want = torch.tensor(q[0]).H.resolve_conj().numpy()
    np.testing.assert_array_equal(flow.tensor(q[0]).H.numpy(), want)


def test_where_masked_fill_and_sgn_like_torch():
    rng = np.random.default_rng(7)
    a, b, m = cplx(rng, (3, 4)), cplx(rng, (4,)), rng.random((3, 4)) > 0.5
    a[0, 0] = 0
    for fn in (
        lambda lib, z, w: lib.where(lib.tensor(m), z, w),
        lambda lib, z, w: z.masked_fill(lib.tensor(m), 2 - 1j),
        lambda lib, z, w: z.masked_fill(lib.tensor(m), 3.0),
        lambda lib, z, w: lib.sgn(z),
    ):
        grads = []
        for lib in (torch, flow):
            z, w = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
            out = fn(lib, z, w)
            lib.view_as_real(out).pow(2).sum().backward()
            grads.append((out.detach().numpy().copy(), z.grad.numpy().copy()))
        for g, t in zip(grads[1], grads[0]):
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-15)


def test_complex_values_fill_and_assign_like_torch():
    results = []
    for lib in (torch, flow):
        z = lib.full((2, 3), 1j)
        z[0, 1] = 5 + 6j
        z[1] = 2 - 1j
        z.real = lib.ones(2, 3) * 7
        w = lib.zeros(3, dtype=lib.complex128)
        w.fill_(1 - 2j)
        w.imag = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        results.append((z.numpy().copy(), w.numpy().copy(), complex(z[0, 1]), z.dtype))
    f, t = results[1], results[0]
    np.testing.assert_array_equal(f[0], t[0])
    np.testing.assert_array_equal(f[1], t[1])
    assert f[2] == t[2] and str(f[3]).split(".")[-1] == str(t[3]).split(".")[-1]
    shown = repr(flow.tensor([553.2606 - 307.0623j, 217.6006 + 1508.0723j]))
    assert shown.startswith("tensor([553.2606-307.0623j, 217.6006+1508.0723j]")


@pytest.mark.parametrize(
    "name, kw",
    [
        ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
        ("Adam", {"lr": 0.01, "amsgrad": True}),
        ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
        ("RMSprop", {"lr": 0.01}),
        ("Adagrad", {"lr": 0.1}),
    ],
)
def test_optimizers_step_complex_parameters_like_torch(name, kw):
    rng = np.random.default_rng(8)
    w0, x0 = cplx(rng, (4, 3)), cplx(rng, (5, 4))
    results = []
    for lib in (torch, flow):
        w = lib.nn.Parameter(lib.tensor(w0))
        opt = getattr(lib.optim, name)([w], **kw)
        for _ in range(4):
            opt.zero_grad()
            (lib.tensor(x0) @ w).abs().pow(2).sum().backward()
            opt.step()
        results.append(w.detach().numpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)
    # the state survives a round trip through state_dict
    w = flow.nn.Parameter(flow.tensor(w0))
    opt = getattr(flow.optim, name)([w], **kw)
    w.abs().sum().backward()
    opt.step()
    again = getattr(flow.optim, name)([w], **kw)
    again.load_state_dict(opt.state_dict())
    assert set(again.state_dict()["state"][0]) == set(opt.state_dict()["state"][0])
    again.step()


INDEXING = {
    "bool mask": lambda lib, z, m, i: z[m],
    "abs mask": lambda lib, z, m, i: z[z.abs() > 1],
    "index": lambda lib, z, m, i: z[i],
    "index dim 1": lambda lib, z, m, i: z[:, i],
    "ellipsis": lambda lib, z, m, i: z[..., 1],
    "index_select": lambda lib, z, m, i: z.index_select(1, i),
    "flip": lambda lib, z, m, i: z.flip(-1),
    "gather": lambda lib, z, m, i: z.gather(1, i.reshape(1, 3).expand(4, 3)),
    "masked_select": lambda lib, z, m, i: lib.masked_select(z, m[0]),
}


@pytest.mark.parametrize("name", INDEXING)
def test_indexing_complex_tensors_like_torch(name):
    rng = np.random.default_rng(9)
    a, m, i = cplx(rng, (4, 5)), rng.random((4, 5)) > 0.5, np.array([2, 0, 3])
    results = []
    for lib in (torch, flow):
        z = lib.tensor(a, requires_grad=True)
        out = INDEXING[name](lib, z, lib.tensor(m), lib.tensor(i))
        lib.view_as_real(out).pow(2).sum().backward()
        results.append((out.detach().numpy().copy(), z.grad.numpy().copy()))
    for f, t in zip(results[1], results[0]):
        np.testing.assert_array_equal(f, t)


def test_assigning_into_complex_tensors_by_index_like_torch():
    rng = np.random.default_rng(10)
    a, m = cplx(rng, (4, 5)), rng.random((4, 5)) > 0.5
    results = []
    for lib in (torch, flow):
        z = lib.tensor(a)
        z[lib.tensor(m)] = 1j
        z[lib.tensor([2, 0, 3]), 1] = lib.tensor([1 + 1j, 2 + 2j, 3 + 3j], dtype=lib.complex128)
        z[3] = 2 - 2j
        results.append(z.numpy().copy())
    np.testing.assert_array_equal(results[1], results[0])


LINEAR_ALGEBRA = {
    "linear": lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
    "dot": lambda lib, x, w, b: lib.dot(x[0], w[0]),
    "outer": lambda lib, x, w, b: lib.outer(x[0], b),
    "vector_norm": lambda lib, x, w, b: lib.linalg.vector_norm(x, dim=1),
    "norm": lambda lib, x, w, b: x.norm(),
    "normalize": lambda lib, x, w, b: lib.nn.functional.normalize(x, dim=-1),
}


@pytest.mark.parametrize("name", LINEAR_ALGEBRA)
def test_linear_layers_products_and_norms_like_torch(name):
    rng = np.random.default_rng(11)
    arrays = cplx(rng, (3, 8)), cplx(rng, (4, 8)), cplx(rng, 4)
    results = []
    for lib in (torch, flow):
        x, w, b = (lib.tensor(t, requires_grad=True) for t in arrays)
        out = LINEAR_ALGEBRA[name](lib, x, w, b)
        (lib.view_as_real(out) if out.is_complex() else out).pow(2).sum().backward()
        results.append((out.detach().numpy().copy(), x.grad.numpy().copy()))
    for f, t in zip(results[1], results[0]):
        np.testing.assert_allclose(f, t, rtol=1e-12, atol=1e-12)
    layer = flow.nn.Linear(8, 4, dtype=flow.cfloat)
    assert layer(flow.tensor(arrays[0], dtype=flow.cfloat)).dtype == flow.complex64
    p = flow.nn.Parameter(flow.tensor(arrays[0]))
    p.abs().sum().backward()
    assert flow.nn.utils.clip_grad_norm_([p], 1.0).item() == pytest.approx(24**0.5)


PADS_AND_SPREADS = {
    "pad": lambda lib, z: lib.nn.functional.pad(z, (1, 2)),
    "pad two dims": lambda lib, z: lib.nn.functional.pad(z, (1, 2, 0, 1)),
    "pad value": lambda lib, z: lib.nn.functional.pad(z, (1, 2), value=3.0),
    "pad reflect": lambda lib, z: lib.nn.functional.pad(z, (1, 2), mode="reflect"),
    "pad circular": lambda lib, z: lib.nn.functional.pad(z, (1, 1, 1, 1), mode="circular"),
    "var": lambda lib, z: z.var(dim=1),
    "std": lambda lib, z: z.std(),
    "var_mean": lambda lib, z: lib.var_mean(z, dim=2)[0],
    "tril": lambda lib, z: lib.tril(z, -1),
    "triu": lambda lib, z: z.triu(1),
    "trace": lambda lib, z: lib.trace(z[0]),
}


@pytest.mark.parametrize("name", PADS_AND_SPREADS)
def test_padding_and_variances_like_torch(name):
    a = cplx(np.random.default_rng(12), (3, 4, 5))
    results = []
    for lib in (torch, flow):
        z = lib.tensor(a, requires_grad=True)
        out = PADS_AND_SPREADS[name](lib, z)
        (lib.view_as_real(out) if out.is_complex() else out).pow(2).sum().backward()
        results.append((out.detach().numpy().copy(), z.grad.numpy().copy()))
    for f, t in zip(results[1], results[0]):
        np.testing.assert_allclose(f, t, rtol=1e-12, atol=1e-12)


def test_truth_values_of_complex_tensors_like_torch():
    a = np.array([[0j, 1j], [2 + 0j, 0j]])
    results = []
    for lib in (torch, flow):
        z = lib.tensor(a)
        results.append(
            (
                z.any().item(),
                z.all().item(),
                z.nonzero().tolist(),
                lib.count_nonzero(z).item(),
                z.bool().tolist(),
                z.to(lib.bool).tolist(),
                bool(z[0, 1]),
            )
        )
    assert results[1] == results[0]


@pytest.mark.parametrize(
    "call",
    [
        lambda: flow.complex(None, None),
        lambda: flow.polar(flow.ones(2), None),
        lambda: flow.view_as_real(None),
        lambda: flow.view_as_complex(None),
        lambda: flow._C.fft_c2c(None, [0], 0, True),
        lambda: flow._C.fft_r2c(None, [0], 0, True),
        lambda: flow._C.fft_c2r(None, [0], 0, 4),
    ],
)
def test_none_arguments_raise_type_errors(call):
    with pytest.raises(TypeError, match="expected .* to be a Tensor"):
        call()


def _both(fn, arrays, grad=True):
    """fn(lib, *tensors) in oneflow and torch; the values and (for a real loss of the real and
    imaginary parts) the gradients of the complex inputs agree."""

    def np_of(t):
        t = t.detach()
        return (t.resolve_conj() if isinstance(t, torch.Tensor) else t).numpy()

    outs, grads = [], []
    for lib in (flow, torch):
        ts = [lib.tensor(a, requires_grad=grad and np.iscomplexobj(a)) for a in arrays]
        out = fn(lib, *ts)
        outs.append(np_of(out))
        if grad:
            w = out.resolve_conj() if lib is torch else out
            w = lib.view_as_real(w) if w.is_complex() else w
            (w.sum() + (w * w).sum()).backward()
            grads.append(
                [np.zeros_like(a) if t.grad is None else np_of(t.grad) for a, t in zip(arrays, ts)]
            )
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)
    if grad:
        for g, h in zip(*grads):
            np.testing.assert_allclose(g, h, rtol=1e-5, atol=1e-6)


SCATTERING = {
    "scatter": lambda lib, z, w: z.scatter(1, lib.tensor([[2, 0], [1, 3]]), w[:, :2]),
    "scatter_add": lambda lib, z, w: z.scatter_add(0, lib.tensor([[1, 0, 1, 0], [0, 0, 1, 1]]), w),
    "diag": lambda lib, z, w: lib.diag(z[0], 1),
    "diag_embed": lambda lib, z, w: lib.diag_embed(z, offset=-1),
    "diagflat": lambda lib, z, w: lib.diagflat(z[:, :2]),
    "index_fill": lambda lib, z, w: z.index_fill(1, lib.tensor([0, 2]), 0.5),
    "masked_scatter": lambda lib, z, w: z.masked_scatter(z.real > 0, w),
    "silu": lambda lib, z, w: lib.nn.functional.silu(z),
    "lerp": lambda lib, z, w: lib.lerp(z, w, 0.3),
    "vecdot": lambda lib, z, w: lib.linalg.vecdot(z, w),
    "nan_to_num": lambda lib, z, w: lib.nan_to_num(z / z.real.round(), nan=0.5, posinf=2.0),
}


@pytest.mark.parametrize("name", sorted(SCATTERING))
def test_scatters_diagonals_and_other_composed_ops_like_torch(name):
    rng = np.random.default_rng(17)
    z, w = cplx(rng, (2, 4)), cplx(rng, (2, 4))
    # PyTorch has no complex gradient of silu
    _both(SCATTERING[name], [z, w], grad=name not in ("nan_to_num", "silu"))


def test_python_complex_numbers_and_complex_dtype_helpers_like_torch():
    rng = np.random.default_rng(18)
    z, x = cplx(rng, (3,), np.complex64), rng.standard_normal(3).astype(np.float32)
    m = np.array([True, False, True])
    for fn in (
        lambda lib, z, x, m: lib.where(m, z, 0j),
        lambda lib, z, x, m: lib.where(m, x, 1j),
        lambda lib, z, x, m: lib.where(m, 2 + 1j, 0.5),
        lambda lib, z, x, m: lib.where(m, x.double(), 1j),
        lambda lib, z, x, m: x.cfloat() * z,
        lambda lib, z, x, m: x.cdouble(),
    ):
        got = fn(flow, flow.tensor(z), flow.tensor(x), flow.tensor(m))
        want = fn(torch, torch.tensor(z), torch.tensor(x), torch.tensor(m))
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    for make in (
        lambda lib: (lib.ones(2), 1j),
        lambda lib: (lib.ones(2, dtype=lib.float64), 1j),
        lambda lib: (lib.ones(2, dtype=lib.int64), 1j),
        lambda lib: (3, 1j),
    ):
        got, want = flow.result_type(*make(flow)), torch.result_type(*make(torch))
        assert str(got).split(".")[-1] == str(want).split(".")[-1]
    assert flow.tensor(z).type() == "oneflow.ComplexFloatTensor"
    assert flow.tensor(z).cdouble().type() == "oneflow.ComplexDoubleTensor"
    assert flow.finfo(flow.complex64).eps == torch.finfo(torch.complex64).eps
    assert flow.finfo(flow.complex128).max == torch.finfo(torch.complex128).max
    lin = flow.nn.Linear(3, 2).to(flow.complex64)
    assert lin.weight.dtype == flow.complex64 and lin.bias.dtype == flow.complex64
    assert lin(flow.tensor(z)).dtype == flow.complex64


LINALG = {
    "solve": lambda lib, a, b, v: lib.linalg.solve(a, b),
    "solve_vector": lambda lib, a, b, v: lib.linalg.solve(a, v),
    "solve_right": lambda lib, a, b, v: lib.linalg.solve(a, b.transpose(-1, -2), left=False),
    "inv": lambda lib, a, b, v: lib.linalg.inv(a),
    "inverse": lambda lib, a, b, v: lib.inverse(a),
    "matrix_norm_fro": lambda lib, a, b, v: lib.linalg.matrix_norm(a),
    "matrix_norm_1": lambda lib, a, b, v: lib.linalg.matrix_norm(a, ord=1),
    "matrix_norm_inf": lambda lib, a, b, v: lib.linalg.matrix_norm(a, ord=float("inf")),
    "eigvalsh": lambda lib, a, b, v: lib.linalg.eigvalsh(a),
    "eigvalsh_upper": lambda lib, a, b, v: lib.linalg.eigvalsh(a, UPLO="U"),
    "svdvals": lambda lib, a, b, v: lib.linalg.svdvals(b),
    "matrix_norm_2": lambda lib, a, b, v: lib.linalg.matrix_norm(b, ord=2),
    "matrix_norm_nuc": lambda lib, a, b, v: lib.linalg.matrix_norm(b, ord="nuc"),
    "cond": lambda lib, a, b, v: lib.linalg.cond(a),
    "solve_triangular": lambda lib, a, b, v: lib.linalg.solve_triangular(a, b, upper=True),
    "solve_triangular_unit_right": lambda lib, a, b, v: lib.linalg.solve_triangular(
        a, b.mH, upper=False, left=False, unitriangular=True
    ),
    "pinv": lambda lib, a, b, v: lib.linalg.pinv(b),
    "pinv_hermitian": lambda lib, a, b, v: lib.linalg.pinv(a + a.mH, hermitian=True),
    "matrix_exp": lambda lib, a, b, v: lib.linalg.matrix_exp(a * 0.3),
    "lstsq": lambda lib, a, b, v: lib.linalg.lstsq(b, a[..., :2]).solution,
    "lstsq_vector": lambda lib, a, b, v: lib.linalg.lstsq(a, v).solution,
    "lstsq_gelsd_residuals": lambda lib, a, b, v: (
        lib.linalg.lstsq(b, a[..., :2], driver="gelsd").residuals
    ),
    "det": lambda lib, a, b, v: lib.linalg.det(a),
    "det_of_singular": lambda lib, a, b, v: lib.det(a * lib.tensor([1.0, 0.0, 1.0, 1.0])),
    "slogdet_sign": lambda lib, a, b, v: lib.linalg.slogdet(a)[0],
    "slogdet_logabsdet": lambda lib, a, b, v: lib.linalg.slogdet(a)[1],
    "logdet": lambda lib, a, b, v: lib.logdet(a),
    "cross": lambda lib, a, b, v: lib.linalg.cross(b[..., :3, :], b[..., 1:, :], dim=-2),
    "cov": lambda lib, a, b, v: lib.cov(b[0]),
    "cov_weighted": lambda lib, a, b, v: lib.cov(
        b[1],
        fweights=lib.tensor([1, 2, 3]),
        aweights=lib.tensor([0.5, 1.0, 0.25], dtype=lib.float64),
    ),
    "corrcoef": lambda lib, a, b, v: lib.corrcoef(b[0]),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_complex_solves_inverses_and_norms_like_torch(name):
    # solves, inverses, eigenvalues and singular values run on the real block matrix
    # [[Re, -Im], [Im, Re]] (which has each eigenvalue and singular value twice); determinants
    # by Gaussian elimination in complex arithmetic
    rng = np.random.default_rng(19)
    a = cplx(rng, (2, 4, 4)) + 3 * np.eye(4)
    _both(LINALG[name], [a, cplx(rng, (2, 4, 3)), cplx(rng, (2, 4))])


CONVS = {
    "conv1d": lambda lib, x, w, b: lib.nn.functional.conv1d(x[..., 0], w[..., 0], b, stride=2),
    "conv2d": lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1),
    "conv2d_groups": lambda lib, x, w, b: lib.nn.functional.conv2d(
        x[:, :2], w[:2, :1], None, groups=2
    ),
    "conv_transpose2d": lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(
        x[:, :2], w[:2], b[:3], stride=2
    ),
}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_complex_convolutions_like_torch(name):
    # four real convolutions of the parts
    rng = np.random.default_rng(20)
    _both(CONVS[name], [cplx(rng, (2, 3, 7, 6)), cplx(rng, (4, 3, 3, 3)), cplx(rng, (4,))])


def test_normal_fills_complex_tensors_like_torch():
    # each part: mean `mean`, standard deviation std / sqrt(2)
    z = flow.empty(200000, dtype=flow.complex64).normal_(1.0, 2.0)
    for part in (z.real, z.imag):
        assert abs(float(part.mean()) - 1.0) < 0.02
        assert abs(float(part.std()) - 2.0 / np.sqrt(2.0)) < 0.02
    w = flow.nn.init.normal_(flow.empty(3, 4, dtype=flow.complex128), 0.0, 0.1)
    assert w.dtype == flow.complex128 and bool(flow.isfinite(w).all())


@pytest.mark.parametrize("upper", [False, True])
def test_complex_cholesky_like_torch(upper):
    # one triangle is read (the matrix need not be Hermitian), the gradient is PyTorch's
    # Hermitian one
    rng = np.random.default_rng(21)
    b = cplx(rng, (2, 4, 4))
    a = b @ np.conj(np.swapaxes(b, -1, -2)) + 0.5 * np.eye(4) + 0.1 * cplx(rng, (2, 4, 4))
    _both(lambda lib, a: lib.linalg.cholesky(a, upper=upper), [a])
    _both(lambda lib, a: lib.linalg.cholesky_ex(a, upper=upper)[0], [a])
    not_pd = flow.tensor(np.diag([1.0, -1.0, 2.0]).astype(np.complex64))
    with pytest.raises(flow.linalg.LinAlgError, match="order 2 is not positive-definite"):
        flow.linalg.cholesky(not_pd, upper=upper)
    assert int(flow.linalg.cholesky_ex(not_pd).info) == 2


@pytest.mark.parametrize("shape", [(2, 5, 3), (4, 4), (3, 6), (1, 1)])
def test_complex_qr_like_torch(shape):
    # LAPACK's Householder conventions (R's diagonal real), so Q and R match PyTorch's exactly
    rng = np.random.default_rng(22)
    a = cplx(rng, shape)
    for mode in ("reduced", "complete", "r"):
        got = flow.linalg.qr(flow.tensor(a), mode=mode)
        want = torch.linalg.qr(torch.tensor(a), mode=mode)
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-8, atol=1e-10)
    _both(lambda lib, a: lib.linalg.qr(a)[0] * 0.5 + lib.linalg.qr(a)[1][..., :1, :1], [a])
    _both(lambda lib, a: lib.linalg.qr(a)[1], [a])


def test_view_as_complex_ignores_the_strides_of_size_one_dims_like_torch():
    t = flow.empty(2, 1, 1).permute(1, 2, 0)  # strides (1, 1, 1)
    assert (
        flow.view_as_complex(t).stride()
        == torch.view_as_complex(torch.empty(2, 1, 1).permute(1, 2, 0)).stride()
    )
    z = flow.tensor([[1 + 2j]])
    assert flow.triu(z).numpy()[0, 0] == 1 + 2j


def test_complex_lstsq_rank_and_singular_values_like_torch():
    rng = np.random.default_rng(23)
    a, b = cplx(rng, (2, 5, 3)), cplx(rng, (2, 5, 2))
    for driver in ("gelsy", "gelsd", "gelss", "gels"):
        got = flow.linalg.lstsq(flow.tensor(a), flow.tensor(b), driver=driver)
        want = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape), driver
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-8, atol=1e-10)
    assert flow.linalg.matrix_rank(flow.tensor(a)).tolist() == [3, 3]
