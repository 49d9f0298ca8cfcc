"""oneflow.fft, oneflow.stft and oneflow.istft against PyTorch: every transform in every norm mode
over random shapes (odd and prime sizes), float32/float64 and complex64/complex128 inputs, n and
s larger and smaller than the input, negative and multiple dims; the gradients of real losses of
the outputs; the argument errors (types and messages); out=; fftfreq, rfftfreq, fftshift and
ifftshift; round trips; stft and istft against torch.stft / torch.istft and against each other.

Complex values are compared with NumPy (assert_allclose handles complex arrays). Tolerances are
1e-4 for float32 / complex64 and 1e-10 for float64 / complex128, relative and, absolute, scaled
by the largest expected magnitude (the transforms sum n terms). Gradients follow PyTorch's
convention: the gradient of a complex leaf under a real loss L is dL/dRe + i dL/dIm.
"""

import warnings
import zlib

import numpy as np
import pytest
import torch

import oneflow as flow

NORMS = [None, "backward", "ortho", "forward"]
COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
TOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}


# ---- helpers -------------------------------------------------------------------------------


def _name(dtype):
    return str(dtype).split(".")[-1]


def to_np(t):
    """A NumPy copy of t (PyTorch's lazy conjugation resolved first)."""
    t = t.detach().cpu()
    if isinstance(t, torch.Tensor):
        t = t.resolve_conj().resolve_neg()
    return np.array(t.numpy())


def assert_close(got, want, what="", tol=1.0):
    """got (oneflow) matches want (torch): dtype, shape and values."""
    assert _name(got.dtype) == _name(want.dtype), f"{what}: dtype {got.dtype} != {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape} != {want.shape}"
    a, b = to_np(got), to_np(want)
    scale = max(1.0, float(np.abs(b).max())) if b.size else 1.0
    t = TOL[_name(want.dtype)] * tol
    np.testing.assert_allclose(a, b, rtol=t, atol=t * scale, err_msg=what)


def seed_of(*parts):
    """A seed fixed by the test's parameters (hash() of strings changes between runs)."""
    return zlib.crc32("-".join(map(str, parts)).encode())


def rand(rng, shape, dtype):
    """Standard normal values of a real or complex dtype name."""
    a = rng.standard_normal(shape)
    if dtype in ("complex64", "complex128"):
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a, dtype=dtype)


def leaves(arrays, device, grad=True):
    """The same arrays as torch leaves (CPU) and oneflow leaves (device)."""

    def make(lib, dev):
        return [
            lib.tensor(a, device=dev, requires_grad=grad and a.dtype.kind in "fc") for a in arrays
        ]

    return make(torch, "cpu"), make(flow, device)


def real_loss(lib, out, cot):
    """sum(out * cot) over the real view: every real and imaginary part of out counts."""
    if out.dtype.is_complex:
        if lib is torch:  # PyTorch's view_as_real rejects its lazily conjugated tensors
            out = out.resolve_conj()
        out = lib.view_as_real(out)
    return (out * lib.tensor(cot, device=out.device)).sum()


def check(fn, arrays, device, grad=True, tol=1.0, seed=0):
    """fn(lib, *leaves) in oneflow and torch on the same arrays: the outputs, and under a random
    real loss of the output the leaves' gradients. Returns (oneflow, torch) outputs."""
    t_in, f_in = leaves(arrays, device, grad)
    t_out, f_out = fn(torch, *t_in), fn(flow, *f_in)
    assert_close(f_out, t_out, "output", tol)
    if not grad:
        return f_out, t_out
    rng = np.random.default_rng(seed + 1000)
    extra = (2,) if t_out.dtype.is_complex else ()
    real = {"complex64": "float32", "complex128": "float64"}.get(_name(t_out.dtype))
    cot = rng.standard_normal(tuple(t_out.shape) + extra).astype(real or _name(t_out.dtype))
    real_loss(torch, t_out, cot).backward()
    real_loss(flow, f_out, cot).backward()
    for i, (f, t) in enumerate(zip(f_in, t_in)):
        if not t.requires_grad:
            continue
        assert f.grad is not None, f"input {i} got no gradient"
        assert_close(f.grad, t.grad, f"grad of input {i}", tol)
    return f_out, t_out


def same_error(make, message=True):
    """make(lib) raises under torch, and under oneflow the same exception type with the same
    first line of message (message=False: the type only)."""
    try:
        make(torch)
    except Exception as e:  # noqa: BLE001
        want = e
    else:
        raise AssertionError("torch accepted the case")
    with pytest.raises(type(want)) as info:
        make(flow)
    if message:
        assert str(info.value).splitlines()[0] == str(want).splitlines()[0]


def _fft(lib):
    return lib.fft


# ---- one-dimensional transforms ----------------------------------------------------------------

# (shape, n, dim): odd, even and prime sizes; n None, larger and smaller than the dim.
CASES_1D = [
    ((7,), None, -1),
    ((13,), 20, 0),
    ((4, 97), 50, -1),
    ((5, 8, 3), 16, 1),
    ((6, 9), 1, 0),
    ((2, 3, 13), 7, -2),
    ((3, 10), 10, -1),
    ((4, 11), 12, 1),
    ((2, 97), 101, -1),
]
# name -> input kinds: "real" and/or "complex"
ONE_DIM = {
    "fft": ("real", "complex"),
    "ifft": ("real", "complex"),
    "rfft": ("real",),
    "ihfft": ("real",),
    "irfft": ("complex",),
    "hfft": ("complex",),
}


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(ONE_DIM))
def test_one_dim_transforms_match_torch(name, dtype, norm, device):
    rng = np.random.default_rng(seed_of(name, dtype, norm))
    for kind in ONE_DIM[name]:
        for shape, n, dim in CASES_1D:
            if name in ("irfft", "hfft") and n is None and shape[dim] < 2:
                continue
            a = rand(rng, shape, COMPLEX_OF[dtype] if kind == "complex" else dtype)
            check(
                lambda lib, x, n=n, dim=dim: getattr(lib.fft, name)(x, n=n, dim=dim, norm=norm),
                [a],
                device,
                seed=len(shape),
            )


@pytest.mark.parametrize("name", sorted(ONE_DIM))
def test_one_dim_positional_arguments(name, device):
    rng = np.random.default_rng(1)
    dtype = "complex128" if name in ("irfft", "hfft") else "float64"
    a = rand(rng, (6, 9), dtype)
    check(lambda lib, x: getattr(lib.fft, name)(x, 11, 0, "ortho"), [a], device)
    check(lambda lib, x: getattr(lib.fft, name)(x), [a], device)


@pytest.mark.parametrize("name", ["fft", "ifft", "fftn", "ifftn", "rfft", "ihfft", "rfftn"])
def test_integer_and_bool_inputs_promote_to_the_default_dtype(name, device):
    a = np.arange(-6, 6).reshape(3, 4)
    for array in (a, a > 0):
        t = getattr(torch.fft, name)(torch.tensor(array))
        f = getattr(flow.fft, name)(flow.tensor(array, device=device))
        assert_close(f, t, name)
    previous, torch_previous = flow.get_default_dtype(), torch.get_default_dtype()
    flow.set_default_dtype(flow.float64)
    torch.set_default_dtype(torch.float64)
    try:
        t = getattr(torch.fft, name)(torch.tensor(a))
        f = getattr(flow.fft, name)(flow.tensor(a, device=device))
        assert _name(f.dtype) == _name(t.dtype) == "complex128"
        assert_close(f, t, name)
    finally:
        flow.set_default_dtype(previous)
        torch.set_default_dtype(torch_previous)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "fftn", "rfft2", "ihfftn"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_inputs_are_rejected_as_on_torch_cpu(name, dtype):
    same_error(lambda lib: getattr(lib.fft, name)(lib.ones(4, 4, dtype=getattr(lib, dtype))))


def test_noncontiguous_inputs(device):
    rng = np.random.default_rng(2)
    a = rand(rng, (9, 13), "complex128")
    check(lambda lib, x: lib.fft.fft(x.t(), dim=0), [a], device)
    check(lambda lib, x: lib.fft.fftn(x[::2, 1:]), [a], device)
    b = rand(rng, (10, 7), "float64")
    check(lambda lib, x: lib.fft.rfft(x.t(), n=9), [b], device)
    check(lambda lib, x: lib.fft.irfft(lib.fft.rfft(x).t(), dim=0), [b], device)


# ---- n-dimensional transforms ------------------------------------------------------------------

# (shape, s, dim)
CASES_ND = [
    ((5, 7), None, None),
    ((4, 6, 13), (8, -1), (0, 2)),
    ((3, 97), None, (-1,)),
    ((2, 5, 6), (3, 4), None),
    ((6, 5, 4), (7, 2, 5), (-1, 0, 1)),
    ((3, 4, 5), None, (2, 0)),
    ((7, 13), (13, 7), None),
    ((2, 3, 4), (5,), None),
    ((3, 4, 6), None, -2),
    ((4, 3, 7), 9, None),
]
N_DIM = {
    "fftn": ("real", "complex"),
    "ifftn": ("real", "complex"),
    "rfftn": ("real",),
    "ihfftn": ("real",),
    "irfftn": ("complex",),
    "hfftn": ("complex",),
}


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(N_DIM))
def test_n_dim_transforms_match_torch(name, dtype, norm, device):
    rng = np.random.default_rng(seed_of(name, dtype, norm, "nd"))
    for kind in N_DIM[name]:
        for shape, s, dim in CASES_ND:
            a = rand(rng, shape, COMPLEX_OF[dtype] if kind == "complex" else dtype)
            check(
                lambda lib, x, s=s, dim=dim: getattr(lib.fft, name)(x, s=s, dim=dim, norm=norm),
                [a],
                device,
            )


# (shape, s, dim) for the 2-D forms; dim None means the default (-2, -1).
CASES_2D = [
    ((5, 7), None, None),
    ((3, 4, 6), (5, 9), None),
    ((2, 13, 97), (-1, 20), None),
    ((4, 5, 6), None, (0, 2)),
    ((4, 5, 6), (3, 8), (2, -3)),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"])
def test_two_dim_transforms_match_torch(name, dtype, norm, device):
    rng = np.random.default_rng(seed_of(name, dtype, norm, "2d"))
    kinds = N_DIM[name[:-1] + "n"]
    for kind in kinds:
        for shape, s, dim in CASES_2D:
            a = rand(rng, shape, COMPLEX_OF[dtype] if kind == "complex" else dtype)
            if dim is None:
                fn = lambda lib, x, s=s: getattr(lib.fft, name)(x, s, norm=norm)  # noqa: E731
            else:
                fn = lambda lib, x, s=s, dim=dim: getattr(lib.fft, name)(  # noqa: E731
                    x, s=s, dim=dim, norm=norm
                )
            check(fn, [a], device)


def test_fftn_of_no_dims_and_of_a_scalar(device):
    rng = np.random.default_rng(3)
    for dtype in ("float32", "complex128"):
        a = rand(rng, (3, 4), dtype)
        check(lambda lib, x: lib.fft.fftn(x, dim=()), [a], device)
        check(lambda lib, x: lib.fft.ifftn(x, dim=[]), [a], device)
    check(lambda lib, x: lib.fft.fftn(x), [np.array(2.5)], device)
    z = flow.tensor(rand(rng, (3,), "complex64"), device=device)
    out = flow.fft.fftn(z, dim=())
    flow.view_as_real(out)[0] = 0  # a copy, not the input
    assert to_np(z)[0] != 0


def test_hfftn_and_ihfftn_invert_each_other(device):
    rng = np.random.default_rng(4)
    for shape in [(5, 7), (4, 6, 9), (13, 97)]:
        x = flow.tensor(rand(rng, shape, "float64"), device=device)
        for norm in NORMS:
            half = flow.fft.ihfftn(x, norm=norm)
            back = flow.fft.hfftn(half, s=shape, norm=norm)
            np.testing.assert_allclose(to_np(back), to_np(x), atol=1e-10)


# ---- gradients of common real losses -------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_of_abs_squared_and_view_as_real_losses(dtype, device):
    rng = np.random.default_rng(5)
    a = rand(rng, (6, 13), COMPLEX_OF[dtype])
    r = rand(rng, (6, 13), dtype)
    cases = [
        (lambda lib, x: (lib.fft.fft(x, n=17).abs() ** 2).sum(), a),
        (lambda lib, x: lib.view_as_real(lib.fft.ifft2(x, s=(4, 20), norm="ortho")).sum(), a),
        (lambda lib, x: (lib.fft.rfft(x, dim=0).abs() ** 2).sum(), r),
        (lambda lib, x: lib.view_as_real(lib.fft.fftn(x, dim=(0, -1))).sum(), r),
        (lambda lib, x: (lib.fft.irfft(x, n=11) ** 2).sum(), a),
        (lambda lib, x: lib.fft.hfft(x, norm="forward").sum(), a),
        (lambda lib, x: (lib.fft.ihfft2(x).abs() ** 2).sum(), r),
    ]
    for fn, array in cases:
        (t,), (f,) = leaves([array], device)
        fn(torch, t).backward()
        fn(flow, f).backward()
        assert_close(f.grad, t.grad, "grad")


# ---- errors ----------------------------------------------------------------------------------


def _r(lib, *shape):
    return lib.tensor(np.ones(shape, dtype=np.float32))


def _c(lib, *shape):
    return lib.tensor(np.ones(shape, dtype=np.complex64))


ERRORS = {
    "n zero": lambda lib: lib.fft.fft(_r(lib, 8), n=0),
    "n negative": lambda lib: lib.fft.ifft(_c(lib, 8), n=-1),
    "dim out of range": lambda lib: lib.fft.fft(_r(lib, 8), dim=1),
    "negative dim out of range": lambda lib: lib.fft.rfft(_r(lib, 8), dim=-2),
    "zero-dim input": lambda lib: lib.fft.fft(lib.tensor(1.0)),
    "bad norm": lambda lib: lib.fft.fft(_r(lib, 8), norm="foo"),
    "bad norm nd": lambda lib: lib.fft.irfftn(_c(lib, 3, 4), norm="Ortho"),
    "rfft of complex": lambda lib: lib.fft.rfft(_c(lib, 8)),
    "ihfft of complex": lambda lib: lib.fft.ihfft(_c(lib, 8)),
    "rfftn of complex": lambda lib: lib.fft.rfftn(_c(lib, 3, 4)),
    "rfft2 of complex": lambda lib: lib.fft.rfft2(_c(lib, 3, 4)),
    "ihfftn of complex": lambda lib: lib.fft.ihfftn(_c(lib, 3, 4)),
    "irfft of one point": lambda lib: lib.fft.irfft(_c(lib, 1)),
    "hfft of one point": lambda lib: lib.fft.hfft(_c(lib, 3, 1)),
    "irfftn of one point": lambda lib: lib.fft.irfftn(_c(lib, 3, 1)),
    "s longer than ndim": lambda lib: lib.fft.fftn(_r(lib, 8), s=(4, 4)),
    "s and dim lengths": lambda lib: lib.fft.fftn(_r(lib, 3, 4), s=(4,), dim=(0, 1)),
    "s and dim lengths 2": lambda lib: lib.fft.fftn(_r(lib, 3, 4), s=[-1], dim=[0, 1]),
    "duplicate dims": lambda lib: lib.fft.fftn(_r(lib, 3, 4), dim=(0, 0)),
    "duplicate wrapped dims": lambda lib: lib.fft.fft2(_r(lib, 3, 4), dim=(0, -2)),
    "zero size in s": lambda lib: lib.fft.fftn(_r(lib, 3, 4), s=(0, 4)),
    "negative size in s": lambda lib: lib.fft.ifftn(_r(lib, 3, 4), s=(-2, 6)),
    "fft2 of 1-d": lambda lib: lib.fft.fft2(_r(lib, 4)),
    "fftn dim out of range": lambda lib: lib.fft.fftn(_r(lib, 3, 4), dim=2),
    "rfftn of no dims": lambda lib: lib.fft.rfftn(_r(lib, 3, 4), dim=()),
    "irfftn of no dims": lambda lib: lib.fft.irfftn(_c(lib, 3, 4), dim=()),
    "hfft2 of no dims": lambda lib: lib.fft.hfft2(_c(lib, 3, 4), dim=()),
    "ihfftn of no dims": lambda lib: lib.fft.ihfftn(_r(lib, 3, 4), dim=()),
    "empty signal": lambda lib: lib.fft.fft(_r(lib, 0)),
    "float n": lambda lib: lib.fft.fft(_r(lib, 8), n=2.0),
    "float dim": lambda lib: lib.fft.fft(_r(lib, 8), dim=1.0),
    "list input": lambda lib: lib.fft.fft([1.0, 2.0]),
    "real out for fft": lambda lib: lib.fft.fft(_r(lib, 8), out=_r(lib, 8)),
    "real out for fftn": lambda lib: lib.fft.fftn(_c(lib, 2, 3), out=_r(lib, 0)),
    "real out for rfft": lambda lib: lib.fft.rfft(_r(lib, 8), out=_r(lib, 0)),
    "real out for ihfft2": lambda lib: lib.fft.ihfft2(_r(lib, 3, 4), out=_r(lib, 0)),
    "complex out for irfft": lambda lib: lib.fft.irfft(_c(lib, 8), out=_c(lib, 0)),
    "complex out for hfftn": lambda lib: lib.fft.hfftn(_c(lib, 3, 4), out=_c(lib, 0)),
    "fftfreq of integers": lambda lib: lib.fft.fftfreq(5, dtype=lib.int64),
    "rfftfreq into integers": lambda lib: lib.fft.rfftfreq(5, out=lib.zeros(0, dtype=lib.int64)),
    "fftfreq of complex": lambda lib: lib.fft.fftfreq(5, dtype=lib.complex64),
    "fftfreq of negative n": lambda lib: lib.fft.fftfreq(-1),
    "fftshift of a scalar": lambda lib: lib.fft.fftshift(lib.tensor(1.0)),
    "fftshift of no dims": lambda lib: lib.fft.ifftshift(_r(lib, 3), dim=()),
    "fftshift of scalar dim": lambda lib: lib.fft.fftshift(lib.tensor(1.0), dim=0),
    "fftshift dim out of range": lambda lib: lib.fft.fftshift(_r(lib, 8), dim=3),
}
# torch's own wording that oneflow does not copy: the MKL backend, the arange kernel's name.
MESSAGE_DIFFERS = {"fftfreq of complex", "fftfreq of negative n"}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    same_error(ERRORS[case], message=case not in MESSAGE_DIFFERS)


def test_grad_with_out_is_refused():
    for lib in (torch, flow):
        x = lib.tensor(np.ones(4, dtype=np.float32), requires_grad=True)
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            lib.fft.fft(x, out=lib.zeros(0, dtype=lib.complex64))


# ---- out= ----------------------------------------------------------------------------------


def test_out_receives_the_result(device):
    rng = np.random.default_rng(6)
    a = rand(rng, (4, 9), "complex64")
    r = rand(rng, (4, 9), "float32")
    cases = [
        (lambda lib, out: lib.fft.fft(lib.tensor(a), n=12, out=out), "complex64", (0,)),
        (lambda lib, out: lib.fft.fft(lib.tensor(r), out=out), "complex128", (0,)),
        (lambda lib, out: lib.fft.rfft2(lib.tensor(r), out=out), "complex64", (4, 5)),
        (lambda lib, out: lib.fft.ihfft(lib.tensor(r), out=out), "complex64", (0,)),
        (lambda lib, out: lib.fft.irfftn(lib.tensor(a), out=out), "float64", (0,)),
        (lambda lib, out: lib.fft.hfft(lib.tensor(a), n=7, out=out), "float32", (0,)),
        (lambda lib, out: lib.fft.fftfreq(6, 0.5, out=out), "float64", (0,)),
        (lambda lib, out: lib.fft.rfftfreq(7, out=out), "float32", (0,)),
    ]
    for i, (fn, dtype, shape) in enumerate(cases):
        t_out = torch.zeros(shape, dtype=getattr(torch, dtype))
        f_out = flow.zeros(shape, dtype=getattr(flow, dtype))
        t_res, f_res = fn(torch, t_out), fn(flow, f_out)
        assert f_res is f_out
        # the second and fifth cases compute in single precision and only then widen into `out`
        tol = TOL["complex64"] / TOL["complex128"] if i in (1, 4) else 1.0
        assert_close(f_out, t_out, dtype, tol)
        assert_close(f_res, t_res, dtype, tol)


def test_out_with_elements_is_resized_with_a_warning():
    a = np.ones(8, dtype=np.complex64)
    out = flow.zeros(3, dtype=flow.complex64)
    with pytest.warns(UserWarning, match="was resized"):
        flow.fft.fft(flow.tensor(a), out=out)
    assert tuple(out.shape) == (8,)
    np.testing.assert_allclose(to_np(out), np.fft.fft(a), atol=1e-5)


# ---- frequencies and shifts --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_frequencies_match_torch(name, dtype, device):
    for n in (0, 1, 2, 5, 8, 13, 97):
        for d in (1.0, 0.1, 2.5, -0.5, 3):
            kwargs = {} if dtype is None else {"dtype": getattr(torch, dtype)}
            t = getattr(torch.fft, name)(n, d, **kwargs)
            kwargs = {} if dtype is None else {"dtype": getattr(flow, dtype)}
            f = getattr(flow.fft, name)(n, d, device=device, **kwargs)
            assert_close(f, t, f"{name}({n}, {d})")
            assert not f.requires_grad
    f = getattr(flow.fft, name)(6, requires_grad=True)
    assert f.requires_grad and f.is_leaf
    # d = 0 divides by zero as PyTorch does: inf, and nan at frequency 0
    f, t = getattr(flow.fft, name)(4, d=0.0), getattr(torch.fft, name)(4, d=0.0)
    np.testing.assert_array_equal(to_np(f), to_np(t))


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("dtype", ["float32", "complex128", "int64"])
def test_shifts_match_torch(name, dtype, device):
    rng = np.random.default_rng(7)
    for shape, dim in [
        ((7,), None),
        ((8,), 0),
        ((5, 6), None),
        ((5, 6), -1),
        ((3, 4, 7), (0, 2)),
        ((3, 4, 7), [-1, -3, 1]),
        ((1, 9), None),
        ((2, 3), (0, 0)),
    ]:
        if dtype == "int64":
            a = rng.integers(-9, 9, shape)
        else:
            a = rand(rng, shape, dtype)
        t = getattr(torch.fft, name)(torch.tensor(a), dim=dim)
        f = getattr(flow.fft, name)(flow.tensor(a, device=device), dim=dim)
        np.testing.assert_array_equal(to_np(f), to_np(t))
        assert _name(f.dtype) == _name(t.dtype)


def test_shifts_invert_each_other_and_order_frequencies(device):
    rng = np.random.default_rng(8)
    for shape in [(7,), (6, 9), (2, 5, 4)]:
        x = flow.tensor(rand(rng, shape, "complex64"), device=device)
        back = flow.fft.ifftshift(flow.fft.fftshift(x))
        np.testing.assert_array_equal(to_np(back), to_np(x))
    for n in (7, 8):
        freq = flow.fft.fftshift(flow.fft.fftfreq(n, device=device))
        assert np.all(np.diff(to_np(freq)) > 0)
    x = flow.ones(1, 1)
    y = flow.fft.fftshift(x)
    y[0, 0] = 5  # a new tensor even when nothing moves, as torch.roll's
    assert to_np(x)[0, 0] == 1


def test_shift_gradients(device):
    rng = np.random.default_rng(9)
    a = rand(rng, (5, 6), "complex128")
    check(lambda lib, x: lib.fft.fftshift(lib.fft.fft2(x)), [a], device)
    check(lambda lib, x: lib.fft.ifftshift(x, dim=0), [rand(rng, (5, 6), "float64")], device)


# ---- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_trips(norm, dtype, device):
    rng = np.random.default_rng(10)
    tol = TOL[dtype] * 10
    for n in (7, 8, 13, 97):
        z = flow.tensor(rand(rng, (3, n), COMPLEX_OF[dtype]), device=device)
        x = flow.tensor(rand(rng, (3, n), dtype), device=device)
        pairs = [
            (flow.fft.ifft(flow.fft.fft(z, norm=norm), norm=norm), z),
            (flow.fft.irfft(flow.fft.rfft(x, norm=norm), n=n, norm=norm), x),
            (flow.fft.hfft(flow.fft.ihfft(x, norm=norm), n=n, norm=norm), x),
            (flow.fft.ifftn(flow.fft.fftn(z, norm=norm), norm=norm), z),
            (flow.fft.irfftn(flow.fft.rfftn(x, norm=norm), s=x.shape, norm=norm), x),
            (flow.fft.irfft2(flow.fft.rfft2(x, norm=norm), s=x.shape, norm=norm), x),
        ]
        for got, want in pairs:
            assert _name(got.dtype) == _name(want.dtype)
            np.testing.assert_allclose(to_np(got), to_np(want), rtol=tol, atol=tol)


def test_transforms_match_numpy(device):
    # An independent reference for a few values (numpy.fft computes in double precision).
    rng = np.random.default_rng(11)
    a = rand(rng, (4, 13), "complex128")
    x = rand(rng, (4, 13), "float64")
    fa, fx = flow.tensor(a, device=device), flow.tensor(x, device=device)
    for got, want in [
        (flow.fft.fft(fa, n=20), np.fft.fft(a, n=20)),
        (flow.fft.ifft(fa, dim=0, norm="ortho"), np.fft.ifft(a, axis=0, norm="ortho")),
        (flow.fft.rfft(fx, n=9), np.fft.rfft(x, n=9)),
        (flow.fft.irfft(fa, n=15), np.fft.irfft(a, n=15)),
        (flow.fft.hfft(fa, n=11), np.fft.hfft(a, n=11)),
        (flow.fft.ihfft(fx), np.fft.ihfft(x)),
        (flow.fft.fftn(fa, s=(5, 7)), np.fft.fftn(a, s=(5, 7), axes=(0, 1))),
        (flow.fft.rfftn(fx, norm="forward"), np.fft.rfftn(x, norm="forward")),
        (flow.fft.irfft2(fa, s=(3, 10)), np.fft.irfft2(a, s=(3, 10), axes=(0, 1))),
    ]:
        np.testing.assert_allclose(to_np(got), want, rtol=1e-10, atol=1e-10)


# ---- module ----------------------------------------------------------------------------------


def test_module_exports():
    import oneflow.fft as fft_module

    assert flow.fft is fft_module
    for name in fft_module.__all__:
        assert callable(getattr(flow.fft, name)), name
        assert hasattr(torch.fft, name), name
    assert callable(flow.stft) and callable(flow.istft)
    assert callable(flow.Tensor.stft) and callable(flow.Tensor.istft)


# ---- stft ----------------------------------------------------------------------------------


def _window(lib, kind, size, dtype, device="cpu"):
    if kind is None:
        return None
    if kind == "hann":  # periodic, as torch.hann_window's default
        w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(size) / size)
    else:
        w = np.random.default_rng(size).uniform(0.5, 1.5, size)
    return lib.tensor(w.astype(dtype), device=device)


STFT_CASES = [
    dict(n_fft=16, window="hann"),
    dict(n_fft=15, hop_length=3, window="hann"),
    dict(n_fft=16, hop_length=5, win_length=10, window="rand"),
    dict(n_fft=13, win_length=9, window=None),
    dict(n_fft=16, center=False, window="hann"),
    dict(n_fft=16, pad_mode="constant", window="hann"),
    dict(n_fft=16, pad_mode="replicate", window="rand"),
    dict(n_fft=16, pad_mode="circular", window="hann"),
    dict(n_fft=16, normalized=True, window="hann"),
    dict(n_fft=16, onesided=False, window="hann"),
    dict(n_fft=16, hop_length=4, win_length=10, center=False, align_to_window=True, window="rand"),
    dict(n_fft=16, hop_length=3, win_length=9, center=False, align_to_window=False, window="rand"),
    dict(n_fft=8, hop_length=1, window="rand"),
    dict(n_fft=7, window=None, return_complex=False),
]


def _stft_call(lib, x, case, window_dtype):
    kwargs = dict(case)
    n_fft = kwargs.pop("n_fft")
    size = kwargs.get("win_length") or n_fft
    kwargs["window"] = _window(lib, kwargs["window"], size, window_dtype, x.device)
    kwargs.setdefault("return_complex", True)
    return lib.stft(x, n_fft, **kwargs)


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.filterwarnings("ignore:stft with return_complex=False")
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(97,), (3, 64)])
@pytest.mark.parametrize("case", range(len(STFT_CASES)))
def test_stft_matches_torch(case, shape, dtype, device):
    params = STFT_CASES[case]
    complex_input = dtype.startswith("complex")
    if complex_input and params.get("onesided"):
        pytest.skip("a complex input has no one-sided transform")
    window_dtype = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    a = rand(np.random.default_rng(case), shape, dtype)
    check(lambda lib, x: _stft_call(lib, x, params, window_dtype), [a], device, seed=case)


@pytest.mark.filterwarnings("ignore:A window was not provided")
def test_stft_window_gradient_and_mixed_dtypes(device):
    rng = np.random.default_rng(12)
    x = rand(rng, (2, 50), "float64")
    w = rng.uniform(0.5, 1.5, 12)
    check(
        lambda lib, x, w: lib.stft(x, 16, 4, win_length=12, window=w, return_complex=True),
        [x, w],
        device,
    )
    # a float32 signal with a float64 window computes in float64, as torch's
    xf = x.astype(np.float32)
    check(
        lambda lib, x, w: lib.stft(x, 12, window=w, return_complex=True),
        [xf, rng.uniform(0.5, 1.5, 12)],
        device,
    )
    # a real signal with a complex window: a two-sided complex transform
    wc = rand(rng, (16,), "complex128")
    check(lambda lib, x, w: lib.stft(x, 16, window=w), [x, wc], device)


def test_stft_frames_against_the_definition(device):
    # X[w, m] = sum_k window[k] x[m * hop + k] exp(-2 pi i w k / n_fft), without centring
    rng = np.random.default_rng(13)
    x, w = rng.standard_normal(70), rng.uniform(0.5, 1.5, 16)
    got = flow.stft(
        flow.tensor(x, device=device),
        16,
        5,
        window=flow.tensor(w, device=device),
        center=False,
        return_complex=True,
    )
    frames = np.stack([x[m * 5 : m * 5 + 16] * w for m in range(1 + (70 - 16) // 5)])
    np.testing.assert_allclose(to_np(got), np.fft.rfft(frames).T, rtol=1e-10, atol=1e-10)


# ---- istft ---------------------------------------------------------------------------------

ISTFT_CASES = [
    dict(n_fft=16, window="hann"),
    dict(n_fft=15, hop_length=3, window="hann"),
    dict(n_fft=16, hop_length=4, win_length=12, window="rand"),
    dict(n_fft=16, center=False, window="rand"),
    dict(n_fft=16, normalized=True, window="hann"),
    dict(n_fft=16, onesided=False, window="hann"),
    dict(n_fft=16, window="hann", length=50),
    dict(n_fft=16, window="hann", length=120),
    dict(n_fft=16, window="rand", center=False, length=70),
    dict(n_fft=16, window="hann", onesided=False, return_complex=True),
    dict(n_fft=12, window=None),
    dict(n_fft=13, hop_length=13, window=None, center=False),
]


def _istft_call(lib, spec, case, window_dtype):
    kwargs = dict(case)
    n_fft = kwargs.pop("n_fft")
    size = kwargs.get("win_length") or n_fft
    kwargs["window"] = _window(lib, kwargs["window"], size, window_dtype, spec.device)
    return lib.istft(spec, n_fft, **kwargs)


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.filterwarnings("ignore:The length of signal is shorter")
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("batch", [(), (3,)])
@pytest.mark.parametrize("case", range(len(ISTFT_CASES)))
def test_istft_matches_torch(case, batch, dtype, device):
    params = ISTFT_CASES[case]
    n_fft = params["n_fft"]
    two_sided = params.get("onesided") is False
    rows = n_fft if two_sided else n_fft // 2 + 1
    # An arbitrary spectrogram, not an stft's: istft is its least-squares signal either way.
    spec = rand(np.random.default_rng(case), batch + (rows, 20), dtype)
    window_dtype = {"complex64": "float32", "complex128": "float64"}[dtype]
    check(lambda lib, s: _istft_call(lib, s, params, window_dtype), [spec], device, seed=case)


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_stft_istft_round_trip(dtype, device):
    rng = np.random.default_rng(14)
    tol = 1e-4 if dtype == "float32" else 1e-10
    complex_input = dtype.startswith("complex")
    real = "float64" if complex_input else dtype
    for shape, n_fft, hop, window, center in [
        ((100,), 16, 4, "hann", True),
        ((2, 97), 15, 5, "hann", True),
        ((3, 64), 16, 8, "rand", False),
        ((81,), 9, 3, None, True),
    ]:
        x = flow.tensor(rand(rng, shape, dtype), device=device)
        w = _window(flow, window, n_fft, real, device)
        spec = flow.stft(x, n_fft, hop, window=w, center=center, return_complex=True)
        back = flow.istft(
            spec,
            n_fft,
            hop,
            window=w,
            center=center,
            length=shape[-1],
            return_complex=complex_input,
        )
        assert tuple(back.shape) == shape and _name(back.dtype) == dtype
        frames_end = (
            shape[-1]
            if center
            else n_fft + hop * ((shape[-1] - n_fft) // hop)  # what the frames cover
        )
        got, want = to_np(back)[..., :frames_end], to_np(x)[..., :frames_end]
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_istft_pads_a_longer_length_with_zeros(device):
    rng = np.random.default_rng(15)
    spec = flow.tensor(rand(rng, (9, 10), "complex64"), device=device)
    w = _window(flow, "hann", 16, "float32", device)
    with pytest.warns(UserWarning, match="The length of signal is shorter"):
        y = flow.istft(spec, 16, window=w, length=60)
    assert tuple(y.shape) == (60,)
    assert not to_np(y)[16 + 4 * 9 - 8 :].any()


# ---- stft and istft warnings and errors ---------------------------------------------------------


def test_stft_warnings(device):
    x = flow.tensor(np.ones(40, dtype=np.float32), device=device)
    with pytest.warns(UserWarning, match="A window was not provided"):
        flow.stft(x, 8, return_complex=True)
    w = flow.ones(8, device=device)
    with pytest.warns(UserWarning, match="stft with return_complex=False is deprecated"):
        out = flow.stft(x, 8, window=w, return_complex=False)
    assert tuple(out.shape) == (5, 21, 2) and out.dtype == flow.float32
    spec = flow.stft(x, 8, window=w, return_complex=True)
    with pytest.warns(UserWarning, match="A window was not provided"):
        flow.istft(spec, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flow.istft(spec, 8, window=w)


def _sig(lib, n=100, dtype=np.float32):
    return lib.tensor(np.linspace(-1, 1, n).astype(dtype))


def _win(lib, n=16):
    return lib.tensor(np.hanning(n + 1)[:-1].astype(np.float32))


def _spec(lib, rows=9, frames=26):
    return lib.tensor(np.ones((rows, frames), dtype=np.complex64))


STFT_ERRORS = {
    "no return_complex": lambda lib: lib.stft(_sig(lib), 16, window=_win(lib)),
    "integer signal": lambda lib: lib.stft(
        lib.tensor(np.arange(100)), 16, window=_win(lib), return_complex=True
    ),
    "3-d signal": lambda lib: lib.stft(
        lib.tensor(np.ones((2, 5, 10), np.float32)),
        4,
        window=_win(lib, 4),
        return_complex=True,
    ),
    "n_fft too large": lambda lib: lib.stft(
        _sig(lib), 200, window=_win(lib, 200), return_complex=True, center=False
    ),
    "zero hop": lambda lib: lib.stft(
        _sig(lib), 16, hop_length=0, window=_win(lib), return_complex=True
    ),
    "win_length too large": lambda lib: lib.stft(_sig(lib), 16, win_length=20, return_complex=True),
    "window size": lambda lib: lib.stft(
        _sig(lib), 16, win_length=10, window=_win(lib), return_complex=True
    ),
    "2-d window": lambda lib: lib.stft(
        _sig(lib), 16, window=_win(lib).reshape(4, 4), return_complex=True
    ),
    "align with center": lambda lib: lib.stft(
        _sig(lib), 16, window=_win(lib), return_complex=True, align_to_window=True
    ),
    "onesided complex": lambda lib: lib.stft(
        _sig(lib, dtype=np.complex64), 16, window=_win(lib), onesided=True
    ),
    "bad pad mode": lambda lib: lib.stft(
        _sig(lib), 16, window=_win(lib), return_complex=True, pad_mode="foo"
    ),
    "istft of a real input": lambda lib: lib.istft(
        lib.tensor(np.ones((9, 26, 2), np.float32)), 16, window=_win(lib)
    ),
    "istft of an empty input": lambda lib: lib.istft(_spec(lib, 0), 16, window=_win(lib)),
    "istft of a 1-d input": lambda lib: lib.istft(_spec(lib)[0], 16, window=_win(lib)),
    "istft of a 4-d input": lambda lib: lib.istft(
        _spec(lib).reshape(1, 1, 9, 26), 16, window=_win(lib)
    ),
    "istft two-sided rows": lambda lib: lib.istft(_spec(lib), 16, window=_win(lib), onesided=False),
    "istft one-sided rows": lambda lib: lib.istft(_spec(lib), 18, window=_win(lib, 18)),
    "istft onesided complex": lambda lib: lib.istft(
        _spec(lib), 16, window=_win(lib), return_complex=True
    ),
    "istft hop too large": lambda lib: lib.istft(_spec(lib), 16, hop_length=20, window=_win(lib)),
    "istft zero hop": lambda lib: lib.istft(_spec(lib), 16, hop_length=0, window=_win(lib)),
    "istft win_length too large": lambda lib: lib.istft(
        _spec(lib), 16, win_length=20, window=_win(lib)
    ),
    "istft window size": lambda lib: lib.istft(_spec(lib), 16, window=_win(lib, 8)),
    "istft NOLA": lambda lib: lib.istft(_spec(lib), 16, window=_win(lib), center=False),
    "istft zero window": lambda lib: lib.istft(_spec(lib), 16, window=lib.zeros(16)),
    "istft complex window": lambda lib: lib.istft(
        _spec(lib), 16, window=_win(lib).to(lib.complex64)
    ),
}
# The part of the message after stft's description of its arguments, which names the tensor
# types in each framework's words.
NO_TAIL = {"bad pad mode", "istft of a 1-d input"}
NOLA = {"istft NOLA", "istft zero window"}


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("case", sorted(STFT_ERRORS))
def test_stft_istft_errors_match_torch(case):
    make = STFT_ERRORS[case]
    try:
        make(torch)
    except Exception as e:  # noqa: BLE001
        want = e
    else:
        raise AssertionError("torch accepted the case")
    with pytest.raises(type(want)) as info:
        make(flow)
    if case in NO_TAIL:
        return
    if case in NOLA:  # torch prints the comparison's boolean, oneflow the smallest value
        assert "window overlap add min:" in str(info.value)
        return
    tail = str(want).splitlines()[0].rsplit(") ", 1)[-1]
    assert str(info.value).splitlines()[0].endswith(tail), (str(info.value), str(want))


# ---- Tensor methods ------------------------------------------------------------------------


def test_tensor_methods(device):
    rng = np.random.default_rng(16)
    x = flow.tensor(rand(rng, (2, 60), "float32"), device=device)
    w = _window(flow, "hann", 16, "float32", device)
    spec = x.stft(16, 4, window=w, return_complex=True)
    assert_close(spec, torch.tensor(to_np(flow.stft(x, 16, 4, window=w, return_complex=True))))
    back = spec.istft(16, 4, window=w, length=60)
    np.testing.assert_allclose(to_np(back), to_np(x), rtol=1e-4, atol=1e-4)
