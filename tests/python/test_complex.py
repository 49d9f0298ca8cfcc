"""Complex dtypes (complex64, complex128) against PyTorch: dtype objects, construction and NumPy
interop, type promotion, view_as_real / view_as_complex, the real and imag views, complex and
polar, conj / abs / angle, copies and casts, factories, cat / stack, view ops, arithmetic,
sum / mean, matmul, exp, and the gradients of real losses built from complex leaves. Any other
op given a complex tensor must raise TypeError naming the op.

Values are compared as (real, imag) pairs with NumPy. differential.py compares through float64,
which would drop imaginary parts, so it is not used here. Gradients follow PyTorch's convention:
the gradient of a complex leaf under a real loss L is dL/dRe + i dL/dIm.
"""

import operator
import re
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
from differential import _TOL

CDTYPES = ("complex64", "complex128")
REAL_OF = {"complex64": "float32", "complex128": "float64"}
# Every dtype the promotion tests pair with a complex operand.
PROMOTED = ("bool", "int64", "float16", "float32", "float64", "complex64", "complex128")
TOL = {**_TOL, "complex64": _TOL["float32"], "complex128": _TOL["float64"]}


# ---- helpers -------------------------------------------------------------------------------


def _name(dtype):
    return str(dtype).split(".")[-1]


def crandn(rng, shape, dtype="complex64", away=False):
    """Standard complex normal values; away: |z| >= 0.5 (denominators, abs/angle gradients)."""
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if away:
        a = a + 0.5 * a / np.maximum(np.abs(a), 1e-12)
    return np.asarray(a, dtype=dtype)


def rand_array(rng, shape, dtype, away=False):
    if dtype in CDTYPES:
        return crandn(rng, shape, dtype, away)
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    if dtype == "int64":
        if away:
            return np.asarray(rng.integers(1, 6, shape) * rng.choice([-1, 1], shape), np.int64)
        return np.asarray(rng.integers(-5, 6, shape), np.int64)
    a = rng.standard_normal(shape)
    if away:
        a = np.sign(a) * (np.abs(a) + 0.5)
    return np.asarray(a, dtype=dtype)


def rand_shape(rng, ndim=None, zero=True):
    """0 to 3 dims of sizes 1..4; with zero, one dim is 0 a fifth of the time."""
    if ndim is None:
        ndim = int(rng.integers(0, 4))
    shape = [int(s) for s in rng.integers(1, 5, ndim)]
    if zero and ndim and rng.random() < 0.2:
        shape[int(rng.integers(ndim))] = 0
    return tuple(shape)


def to_np(t):
    """A NumPy copy of t (.numpy() shares the tensor's memory); PyTorch's lazy conj and neg
    bits resolved first."""
    t = t.detach().cpu()
    if isinstance(t, torch.Tensor):
        t = t.resolve_conj().resolve_neg()
    return np.array(t.numpy())


def _parts(a):
    a = np.asarray(a)
    if np.iscomplexobj(a):
        return np.stack([a.real, a.imag], -1).astype(np.float64)
    return a.astype(np.float64)


def assert_close(got, want, what="", tol=1.0):
    """got (oneflow) matches want (torch): dtype, shape, and values within the dtype's tolerance."""
    assert _name(got.dtype) == _name(want.dtype), f"{what}: dtype {got.dtype} != {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape} != {want.shape}"
    atol, rtol = TOL.get(_name(want.dtype), (0, 0))
    np.testing.assert_allclose(
        _parts(to_np(got)), _parts(to_np(want)), atol=atol * tol, rtol=rtol * tol, err_msg=what
    )


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _cot_dtype(t):
    name = _name(t.dtype)
    return REAL_OF.get(name, name)


def leaves(arrays, device, grad=True):
    """The same arrays as torch leaves (CPU) and oneflow leaves (device); floating and complex
    leaves require grad."""

    def make(lib, dev):
        return [
            lib.tensor(a, device=dev, requires_grad=grad and a.dtype.kind in "fc") for a in arrays
        ]

    return make(torch, "cpu"), make(flow, device)


def real_loss(lib, out, cot, device):
    """sum(out * cot) over the real view: every real and imaginary part of out matters."""
    if out.is_complex():
        if lib is torch:  # PyTorch's view_as_real rejects its lazily conjugated tensors
            out = out.resolve_conj()
        out = lib.view_as_real(out)
    return (out * lib.tensor(cot, device=device)).sum()


def check(fn, arrays, device, grad=True, tol=1.0, seed=0):
    """Runs fn(lib, *leaves) in oneflow and torch on the same arrays; compares the outputs and,
    under a random real loss of the outputs, the leaves' gradients. Returns (oneflow, torch)."""
    t_in, f_in = leaves(arrays, device, grad)
    t_out, f_out = fn(torch, *t_in), fn(flow, *f_in)
    t_outs, f_outs = _as_list(t_out), _as_list(f_out)
    assert len(f_outs) == len(t_outs), f"{len(f_outs)} outputs != {len(t_outs)}"
    for i, (f, t) in enumerate(zip(f_outs, t_outs)):
        assert_close(f, t, f"output {i}", tol)
    pairs = [(f, t) for f, t in zip(f_outs, t_outs) if t.requires_grad]
    if not grad or not pairs:
        return f_out, t_out
    rng = np.random.default_rng(seed + 1000)
    f_loss, t_loss = 0, 0
    for f, t in pairs:
        extra = (2,) if t.is_complex() else ()
        cot = rng.standard_normal(tuple(t.shape) + extra).astype(_cot_dtype(t))
        f_loss = f_loss + real_loss(flow, f, cot, device)
        t_loss = t_loss + real_loss(torch, t, cot, "cpu")
    t_loss.backward()
    f_loss.backward()
    for i, (f, t) in enumerate(zip(f_in, t_in)):
        if not t.requires_grad:
            continue
        if t.grad is None:
            assert f.grad is None or not to_np(f.grad).any(), f"input {i}: torch has no grad"
            continue
        assert f.grad is not None, f"input {i} got no gradient"
        # A gradient is only as precise as the outputs it came through (a complex128 operand of
        # a complex64 result gets a complex64-precise gradient).
        coarsest = max(TOL.get(_name(o.dtype), (0, 0))[1] for o in t_outs)
        scale = max(1.0, coarsest / max(TOL.get(_name(t.grad.dtype), (0, 1))[1], 1e-300))
        assert_close(f.grad, t.grad, f"grad of input {i}", tol * scale)
    return f_out, t_out


def error_type(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None


def same_error(make):
    """make(lib) raises under torch, and oneflow raises the same exception type."""
    want = error_type(lambda: make(torch))
    assert want is not None, "torch accepted the case"
    got = error_type(lambda: make(flow))
    assert got is want, f"oneflow raised {got}, torch {want}"


# ---- dtype objects -------------------------------------------------------------------------


def test_complex_dtype_objects_and_aliases():
    assert flow.cfloat is flow.complex64 and flow.cdouble is flow.complex128
    assert repr(flow.complex64) == "oneflow.complex64"
    assert repr(flow.complex128) == "oneflow.complex128"
    assert flow.complex64 != flow.complex128 and flow.complex64 != flow.float32
    assert (flow.complex64.itemsize, flow.complex128.itemsize) == (8, 16)
    for name in CDTYPES:
        f, t = getattr(flow, name), getattr(torch, name)
        assert f.is_complex and not f.is_floating_point
        assert (f.is_complex, f.is_floating_point, f.itemsize) == (
            t.is_complex,
            t.is_floating_point,
            t.itemsize,
        )
    for name in ("bool", "int64", "float16", "float32", "float64"):
        assert not getattr(flow, name).is_complex, name


@pytest.mark.parametrize("dtype", PROMOTED)
def test_tensor_is_complex(dtype, device):
    a = rand_array(np.random.default_rng(0), (2, 3), dtype)
    f, t = flow.tensor(a, device=device), torch.tensor(a)
    assert f.is_complex() == t.is_complex() == (dtype in CDTYPES)
    assert flow.is_complex(f) == t.is_complex()
    assert f.is_floating_point() == t.is_floating_point()
    assert _name(f.dtype) == dtype


# ---- construction and NumPy ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(6))
def test_numpy_round_trip(dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng) if seed > 1 else [(), (3, 0, 2)][seed]
    a = crandn(rng, shape, dtype)
    original = a.copy()
    f = flow.tensor(a, device=device)
    assert f.dtype is getattr(flow, dtype) and tuple(f.shape) == shape
    back = f.cpu().numpy()
    assert back.dtype == a.dtype and back.shape == a.shape
    np.testing.assert_array_equal(back, a)
    a[...] = 7 + 7j  # flow.tensor copied the array
    np.testing.assert_array_equal(f.cpu().numpy(), original)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_from_numpy_shares_memory(dtype):
    a = crandn(np.random.default_rng(1), (3, 4), dtype)
    f = flow.from_numpy(a)
    assert f.dtype is getattr(flow, dtype)
    a[1, 2] = 5 - 6j
    assert f.numpy()[1, 2] == 5 - 6j
    n = f.numpy()
    n[0, 0] = 1j
    assert a[0, 0] == 1j
    ft = flow.from_numpy(a.T)  # a non-contiguous array keeps its strides
    assert ft.stride() == torch.from_numpy(a.T).stride() == (1, 4)
    np.testing.assert_array_equal(ft.numpy(), a.T)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_non_contiguous_numpy_and_tensors(dtype, device):
    rng = np.random.default_rng(2)
    base = crandn(rng, (4, 6), dtype)
    real = rng.standard_normal((3, 8)).astype(REAL_OF[dtype])
    for a in (base[:, ::2], base.T, base[1::2, 1:5], base[:, 3], real.view(dtype)):
        f, t = flow.tensor(a, device=device), torch.tensor(a.copy())
        assert_close(f, t, f"strides {a.strides}", tol=0)
    f = flow.tensor(base, device=device)
    views = {
        "T": (f.T, base.T),
        "step": (f[:, 1::2], base[:, 1::2]),
        "permuted_step": (f.permute(1, 0)[::3], base.T[::3]),
        "column": (f[:, 2], base[:, 2]),
    }
    for what, (v, want) in views.items():
        got = v.cpu().numpy()
        assert got.dtype == want.dtype, what
        np.testing.assert_array_equal(got, want, err_msg=what)


def test_tensor_dtype_argument_casts_to_complex(device):
    rng = np.random.default_rng(3)
    z = crandn(rng, (3,), "complex64")
    x = rng.standard_normal(4).astype(np.float32)
    cases = [
        (z, "complex128"),
        (z.astype(np.complex128), "complex64"),
        (x, "complex64"),
        (x.astype(np.float64), "complex128"),
        (np.arange(5), "complex64"),
    ]
    for a, dtype in cases:
        f = flow.tensor(a, dtype=getattr(flow, dtype), device=device)
        t = torch.tensor(a, dtype=getattr(torch, dtype))
        assert_close(f, t, f"{a.dtype} -> {dtype}")


PY_VALUES = {
    "complex_and_int": [1 + 2j, 3],
    "nested": [[1, 2.5], [1j, 0]],
    "scalar": 1 + 1j,
    "zero_imag_scalar": 2 + 0j,
    "bool_and_complex": [True, 2j],
    "column": [[-0.5j], [2]],
    "float_int_complex": [1j, 2.0, 3],
}


@pytest.mark.parametrize("data", PY_VALUES.values(), ids=PY_VALUES.keys())
def test_tensor_from_python_complex_values(data, device):
    assert_close(flow.tensor(data, device=device), torch.tensor(data))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_tensor_from_python_values_with_complex_dtype(dtype, device):
    for data in [*PY_VALUES.values(), [], [1, 2], [[0.5]]]:
        f = flow.tensor(data, dtype=getattr(flow, dtype), device=device)
        assert_close(f, torch.tensor(data, dtype=getattr(torch, dtype)), repr(data))


def test_python_complex_values_follow_the_default_dtype():
    # complex values infer the complex dtype of the default floating dtype, as in PyTorch
    before = flow.get_default_dtype(), torch.get_default_dtype()
    flow.set_default_dtype(flow.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for data in ([1j, 2], 1 + 1j):
            assert_close(flow.tensor(data), torch.tensor(data))
            assert flow.tensor(data).dtype is flow.complex128
    finally:
        flow.set_default_dtype(before[0])
        torch.set_default_dtype(before[1])


# ---- type promotion ------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["add", "mul"])
@pytest.mark.parametrize("other", PROMOTED)
@pytest.mark.parametrize("cdtype", CDTYPES)
def test_promotion_with_a_complex_operand(cdtype, other, op, device):
    rng = np.random.default_rng(4)
    z, x = crandn(rng, (3, 4), cdtype), rand_array(rng, (3, 4), other)
    for args in ((z, x), (x, z)):
        check(lambda lib, a, b: getattr(operator, op)(a, b), list(args), device)
        check(lambda lib, a, b: getattr(lib, op)(a, b), list(args), device, grad=False)


@pytest.mark.parametrize("other", PROMOTED)
@pytest.mark.parametrize("cdtype", CDTYPES)
def test_promotion_with_a_zero_dim_operand(cdtype, other, device):
    # A 0-dim tensor takes part in promotion only through its category (bool < integer <
    # floating < complex): complex64 tensor + float64 0-dim tensor is complex64, float32 tensor
    # + complex128 0-dim tensor is complex64.
    rng = np.random.default_rng(5)
    z, x = crandn(rng, (3,), cdtype), rand_array(rng, (3,), other)
    z0, x0 = crandn(rng, (), cdtype), rand_array(rng, (), other)
    cases = [(z, x0), (x0, z)]
    if other != "float16":  # PyTorch makes float16 tensor + complex 0-dim complex32 (no complex32)
        cases += [(x, z0), (z0, x)]
    for a, b in cases:
        check(lambda lib, a, b: a + b, [a, b], device, grad=False)
        check(lambda lib, a, b: a * b, [a, b], device, grad=False)


@pytest.mark.parametrize("scalar", [2, -3, 0, 0.5, -2.75])
@pytest.mark.parametrize("dtype", CDTYPES)
def test_python_scalar_arithmetic(dtype, scalar, device):
    a = crandn(np.random.default_rng(6), (3, 2), dtype, away=True)
    s = scalar
    fns = [
        lambda lib, z: z + s,
        lambda lib, z: s + z,
        lambda lib, z: z - s,
        lambda lib, z: s - z,
        lambda lib, z: z * s,
        lambda lib, z: s * z,
        lambda lib, z: s / z,
        lambda lib, z: lib.add(z, s),
        lambda lib, z: lib.sub(z, s),
        lambda lib, z: lib.mul(z, s),
    ]
    if s != 0:
        fns += [lambda lib, z: z / s, lambda lib, z: lib.div(z, s)]
    for i, fn in enumerate(fns):
        f, _ = check(fn, [a], device)
        assert f.dtype is getattr(flow, dtype), f"case {i}: {f.dtype}"


# ---- view_as_real / view_as_complex --------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(6))
def test_view_as_real(dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng) if seed > 0 else ()
    perm = [int(p) for p in rng.permutation(len(shape))]
    f, t = check(
        lambda lib, z: lib.view_as_real(z.permute(perm)), [crandn(rng, shape, dtype)], device
    )
    assert f.dtype is getattr(flow, REAL_OF[dtype])
    assert tuple(f.shape) == tuple(t.shape) == tuple(shape[p] for p in perm) + (2,)
    assert f.stride() == t.stride()


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(6))
def test_view_as_complex(dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng) if seed > 0 else ()
    x = rng.standard_normal(shape + (2,)).astype(REAL_OF[dtype])
    perm = [int(p) for p in rng.permutation(len(shape))] + [len(shape)]
    f, t = check(lambda lib, x: lib.view_as_complex(x.permute(perm)), [x], device)
    assert f.dtype is getattr(flow, dtype)
    assert tuple(f.shape) == tuple(t.shape) == tuple(shape[p] for p in perm[:-1])
    assert f.stride() == t.stride()


@pytest.mark.parametrize("dtype", CDTYPES)
def test_view_as_real_and_view_as_complex_share_memory(dtype, device):
    rng = np.random.default_rng(7)
    za, wa = crandn(rng, (3, 4), dtype), crandn(rng, (4,), dtype)

    def steps(lib, z, w):
        r = lib.view_as_real(z)
        r[1, 2, 1] = 7.0  # the imaginary part of z[1, 2]
        r[0].mul_(2)
        z[2].copy_(w)
        c = lib.view_as_complex(r)
        c[:, 3].copy_(w[:3])
        r[..., 0].fill_(-1.0)  # every real part
        return [z.clone(), r.clone(), c.clone()]

    check(steps, [za, wa], device, grad=False)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_views_of_views_as_real_write_through(dtype, device):
    rng = np.random.default_rng(8)
    za, wa = crandn(rng, (4, 5), dtype), crandn(rng, (2, 5), dtype)

    def steps(lib, z, w):
        v = z.T[1:4:2]  # non-contiguous: the real view keeps the complex strides
        r = lib.view_as_real(v)
        r[..., 0].mul_(-1)
        lib.view_as_complex(lib.view_as_real(z[::2])).copy_(w)
        return z

    check(steps, [za, wa], device, grad=False)


VIEW_AS_COMPLEX_BAD = {
    "last_dim_3": lambda lib: lib.zeros(3, 3),
    "last_dim_1": lambda lib: lib.zeros(3, 1),
    "zero_dim": lambda lib: lib.tensor(1.0),
    "last_stride_not_1": lambda lib: lib.zeros(2, 3).t(),
    "odd_stride": lambda lib: lib.zeros(3, 3)[:, :2],
    "odd_storage_offset": lambda lib: lib.zeros(7)[1:].view(3, 2),
    "int64": lambda lib: lib.zeros(3, 2, dtype=lib.int64),
    "bool": lambda lib: lib.zeros(3, 2, dtype=lib.bool),
}


@pytest.mark.parametrize("case", VIEW_AS_COMPLEX_BAD)
def test_view_as_complex_rejects_like_torch(case):
    same_error(lambda lib: lib.view_as_complex(VIEW_AS_COMPLEX_BAD[case](lib)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "bool"])
def test_view_as_real_rejects_real_tensors_like_torch(dtype):
    same_error(lambda lib: lib.view_as_real(lib.zeros(3, 2, dtype=getattr(lib, dtype))))


# ---- real / imag ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(4))
def test_real_and_imag(dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng) if seed > 0 else ()
    a = crandn(rng, shape, dtype)
    fns = {
        "real": lambda lib, z: z.real,
        "imag": lambda lib, z: z.imag,
        "flow.real": lambda lib, z: lib.real(z),
        "flow.imag": lambda lib, z: lib.imag(z),
        "permuted.real": lambda lib, z: z.permute(list(reversed(range(z.ndim)))).real,
        "both": lambda lib, z: [z.imag, z.real],
    }
    for what, fn in fns.items():
        f, t = check(fn, [a], device)
        for fo, to in zip(_as_list(f), _as_list(t)):
            assert fo.dtype is getattr(flow, REAL_OF[dtype]), what
            assert fo.stride() == to.stride(), what


@pytest.mark.parametrize("dtype", CDTYPES)
def test_real_and_imag_write_through(dtype, device):
    rng = np.random.default_rng(9)
    za, wa = crandn(rng, (3, 4), dtype), crandn(rng, (3, 4), dtype)

    def steps(lib, z, w):
        re, im = z.real, lib.imag(z)
        re[0] = 5.0
        z.imag[:, 1] = -2.0
        im.mul_(3)
        z[2].copy_(w[2])  # seen by the earlier views
        out = [z.clone(), re.clone(), im.clone()]
        lib.real(z).copy_(w.imag)
        return out + [z]

    check(steps, [za, wa], device, grad=False)


def test_real_of_a_real_tensor_and_imag_rejects_it(device):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(lambda lib, x: [lib.real(x), x.real], [x], device)
    same_error(lambda lib: lib.imag(lib.ones(2)))
    same_error(lambda lib: lib.ones(2).imag)


# ---- complex / polar -----------------------------------------------------------------------


SHAPE_PAIRS = {
    "same": ((3, 4), (3, 4)),
    "broadcast": ((2, 1, 4), (3, 1)),
    "zero_dim": ((), ()),
    "zero_size": ((0, 3), (3,)),
}


@pytest.mark.parametrize("shapes", SHAPE_PAIRS.values(), ids=SHAPE_PAIRS.keys())
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_and_polar(dtype, shapes, device):
    rng = np.random.default_rng(10)
    re, im = (rng.standard_normal(s).astype(dtype) for s in shapes)
    f, _ = check(lambda lib, a, b: lib.complex(a, b), [re, im], device)
    assert f.dtype is {"float32": flow.complex64, "float64": flow.complex128}[dtype]
    r = (np.abs(re) + 0.1).astype(dtype)
    check(lambda lib, r, th: lib.polar(r, th), [r, im], device)


def test_complex_rejects_mixed_and_integer_parts_like_torch():
    same_error(lambda lib: lib.complex(lib.ones(2), lib.ones(2, dtype=lib.float64)))
    same_error(lambda lib: lib.complex(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)))


# ---- conj / abs / angle --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(3))
def test_conj_family(dtype, seed, device):
    rng = np.random.default_rng(seed)
    a = crandn(rng, rand_shape(rng) if seed else (), dtype)
    fns = [
        lambda lib, z: z.conj(),
        lambda lib, z: lib.conj(z),
        lambda lib, z: z.conj_physical(),
        lambda lib, z: lib.conj_physical(z),
        lambda lib, z: z.conj().resolve_conj(),
        lambda lib, z: lib.resolve_conj(z),
        lambda lib, z: z.permute(list(reversed(range(z.ndim)))).conj(),
        lambda lib, z: z.conj() * z,
    ]
    for fn in fns:
        check(fn, [a], device)


def test_conj_is_materialised(device):
    z = flow.tensor(crandn(np.random.default_rng(11), (2, 3)), device=device)
    before = z.cpu().numpy().copy()
    for c in (z.conj(), z.conj_physical(), flow.conj(z)):
        assert not c.is_conj() and not z.is_conj()
        c.copy_(flow.zeros(2, 3, dtype=flow.complex64, device=device))
        np.testing.assert_array_equal(z.cpu().numpy(), before)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_conj_of_a_real_tensor_is_itself(dtype, device):
    a = rand_array(np.random.default_rng(12), (2, 3), dtype)
    check(lambda lib, x: [x.conj(), lib.conj(x), x.conj_physical(), x.resolve_conj()], [a], device)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(4))
def test_abs_and_angle(dtype, seed, device):
    rng = np.random.default_rng(seed)
    a = crandn(rng, rand_shape(rng) if seed else (), dtype, away=True)
    fns = [
        lambda lib, z: z.abs(),
        lambda lib, z: lib.abs(z),
        lambda lib, z: z.angle(),
        lambda lib, z: lib.angle(z),
        lambda lib, z: [z.abs(), z.angle()],
    ]
    for fn in fns:
        f, _ = check(fn, [a], device)
        for out in _as_list(f):
            assert out.dtype is getattr(flow, REAL_OF[dtype])


@pytest.mark.parametrize("dtype", CDTYPES)
def test_abs_and_angle_at_zero_have_zero_gradient(dtype, device):
    a = np.array([0, 1 + 1j, -2 + 0j, 3j, 0.5 - 2j, 0], dtype=dtype)
    check(lambda lib, z: [z.abs(), z.angle()], [a], device)
    check(lambda lib, z: (z * 2).abs().sum() + (z * 2).angle().sum(), [a], device)


# ---- copies and casts ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(3))
def test_clone_and_contiguous(dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng, ndim=int(rng.integers(2, 4)))
    a = crandn(rng, shape, dtype)
    perm = list(reversed(range(len(shape))))
    check(lambda lib, z: z.clone(), [a], device)
    f, t = check(lambda lib, z: z.permute(perm).contiguous(), [a], device)
    assert f.is_contiguous() and (f.numel() == 0 or f.stride() == t.stride())
    check(lambda lib, z: z[:, ::2].clone(), [a], device)
    z = flow.tensor(a, device=device)
    c = z.clone()
    z.copy_(flow.zeros(shape, dtype=z.dtype, device=device))
    np.testing.assert_array_equal(c.cpu().numpy(), a)


COPY_SOURCES = ("complex64", "complex128", "float16", "float32", "float64", "int64", "bool")


@pytest.mark.parametrize("src", COPY_SOURCES)
@pytest.mark.parametrize("dst", CDTYPES)
def test_copy_into_a_complex_tensor(dst, src, device):
    rng = np.random.default_rng(13)
    za, sa = crandn(rng, (3, 4), dst), rand_array(rng, (3, 4), src)

    def fn(lib, z, s):
        full = z * 1
        full.copy_(s)
        row = z * 1
        row.copy_(s[1])  # broadcast
        part = z * 1
        part[:, ::2].copy_(s[:, 1::2])  # a strided destination
        trans = z * 1
        trans.T.copy_(s.T)
        return [full, row, part, trans]

    check(fn, [za, sa], device)


TO_PAIRS = [
    ("complex64", "complex128"),
    ("complex128", "complex64"),
    ("complex64", "complex64"),
    ("float32", "complex64"),
    ("float64", "complex64"),
    ("float32", "complex128"),
    ("float16", "complex64"),
    ("int64", "complex64"),
    ("bool", "complex128"),
]


@pytest.mark.parametrize("src,dst", TO_PAIRS)
def test_to_complex_dtype(src, dst, device):
    rng = np.random.default_rng(14)
    for shape in [(3, 4), (), (0, 2)]:
        a = rand_array(rng, shape, src)
        f, _ = check(lambda lib, x: x.to(getattr(lib, dst)), [a], device)
        assert f.dtype is getattr(flow, dst)
    check(lambda lib, x: x.T.to(getattr(lib, dst)), [rand_array(rng, (2, 3), src)], device)


def _imaginary_part_warning(record):
    return [
        w
        for w in record
        if issubclass(w.category, UserWarning) and "imaginary part" in str(w.message)
    ]


@pytest.mark.parametrize("target", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_to_real_warns_and_drops_the_imaginary_part(dtype, target, device):
    # PyTorch warns once per process ("Casting complex values to real discards the imaginary
    # part"); oneflow raises the UserWarning on every cast and the warnings filter decides.
    a = crandn(np.random.default_rng(15), (3, 4), dtype) * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_to = torch.tensor(a).to(getattr(torch, target))
        t_copy = torch.zeros(3, 4, dtype=getattr(torch, target)).copy_(torch.tensor(a))
    z = flow.tensor(a, device=device)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        f_to = z.to(getattr(flow, target))
    assert _imaginary_part_warning(record), [str(w.message) for w in record]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        f_copy = flow.zeros(3, 4, dtype=getattr(flow, target), device=device).copy_(z)
    assert _imaginary_part_warning(record), [str(w.message) for w in record]
    assert_close(f_to, t_to, "to")
    assert_close(f_copy, t_copy, "copy_")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_to_real_gradient(dtype, device):
    a = crandn(np.random.default_rng(16), (2, 3), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda lib, z: (z * 2).to(getattr(lib, REAL_OF[dtype])), [a], device)
        check(lambda lib, z: z.to(lib.float32) * z.abs(), [a], device)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_to_device_and_back(dtype, device):
    a = crandn(np.random.default_rng(17), (3, 2), dtype)
    f = flow.tensor(a).to(device)
    assert f.device.type == device and f.dtype is getattr(flow, dtype)
    np.testing.assert_array_equal(f.cpu().numpy(), a)
    g = f.to(device, flow.complex128)
    assert g.dtype is flow.complex128
    np.testing.assert_array_equal(g.cpu().numpy(), a.astype(np.complex128))
    # gradient through the device round trip lands on the device leaf
    check(lambda lib, z: (z.to("cpu") * 2).to(z.device), [a], device)


# ---- factories -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (3, 0, 2)])
@pytest.mark.parametrize("dtype", CDTYPES)
def test_factories(dtype, shape, device):
    like_c = crandn(np.random.default_rng(18), shape, dtype)
    like_r = np.ones(shape, dtype=np.float32)

    def make(lib, dev):
        d = getattr(lib, dtype)
        zc, zr = lib.tensor(like_c, device=dev), lib.tensor(like_r, device=dev)
        return [
            lib.zeros(shape, dtype=d, device=dev),
            lib.ones(shape, dtype=d, device=dev),
            lib.full(shape, 2.5, dtype=d, device=dev),
            lib.full(shape, -3, dtype=d, device=dev),
            lib.zeros_like(zc),
            lib.ones_like(zc),
            lib.zeros_like(zr, dtype=d),
            lib.ones_like(zr, dtype=d),
        ]

    for i, (f, t) in enumerate(zip(make(flow, device), make(torch, "cpu"))):
        assert_close(f, t, f"factory {i}", tol=0)
        assert f.device.type == device
    e = flow.empty(shape, dtype=getattr(flow, dtype), device=device)
    assert e.dtype is getattr(flow, dtype) and tuple(e.shape) == shape


@pytest.mark.parametrize("dtype", CDTYPES)
def test_randn_complex_statistics(dtype, device):
    # PyTorch's complex randn: real and imaginary parts independent, each of variance 1/2
    def stats(z):
        a = to_np(z).ravel()
        re, im = a.real, a.imag
        return re.mean(), im.mean(), re.var(), im.var(), (re * im).mean()

    n = 40_000
    flow.manual_seed(1)
    f = flow.randn(200, n // 200, dtype=getattr(flow, dtype), device=device)
    assert f.dtype is getattr(flow, dtype) and tuple(f.shape) == (200, n // 200)
    for lib, values in (
        ("oneflow", stats(f)),
        ("torch", stats(torch.randn(n, dtype=getattr(torch, dtype)))),
    ):
        mean_re, mean_im, var_re, var_im, cov = values
        assert abs(mean_re) < 0.02 and abs(mean_im) < 0.02, (lib, values)
        assert abs(var_re - 0.5) < 0.03 and abs(var_im - 0.5) < 0.03, (lib, values)
        assert abs(cov) < 0.02, (lib, values)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_randn_complex_seeding_and_shapes(dtype, device):
    d = getattr(flow, dtype)
    flow.manual_seed(3)
    a = flow.randn(4, 5, dtype=d, device=device)
    flow.manual_seed(3)
    b = flow.randn(4, 5, dtype=d, device=device)
    np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())
    assert (a.cpu().numpy().imag != 0).all()
    for shape in [(0, 3), (2, 0), (1,)]:
        r = flow.randn(*shape, dtype=d, device=device)
        assert r.dtype is d and tuple(r.shape) == shape


# ---- cat / stack ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(5))
def test_cat_and_stack(dtype, seed, device):
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(1, 4))
    base = list(rand_shape(rng, ndim=ndim))
    d = int(rng.integers(-ndim, ndim))
    pieces = []
    for _ in range(3):
        s = list(base)
        s[d] = int(rng.integers(0, 4))
        pieces.append(crandn(rng, tuple(s), dtype))
    check(lambda lib, *xs: lib.cat(xs, d), pieces, device)
    check(lambda lib, *xs: lib.cat([x.conj() for x in xs], dim=d), pieces, device)
    same = [crandn(rng, tuple(base), dtype) for _ in range(3)]
    sd = int(rng.integers(-ndim - 1, ndim + 1))
    check(lambda lib, *xs: lib.stack(xs, sd), same, device)
    check(lambda lib, *xs: lib.stack(xs[:1]), same, device)


def test_stack_of_zero_dim_complex_tensors(device):
    rng = np.random.default_rng(19)
    xs = [crandn(rng, (), "complex64") for _ in range(3)]
    check(lambda lib, *xs: lib.stack(xs), xs, device)


@pytest.mark.parametrize(
    "dtypes",
    [("complex64", "float32"), ("float64", "complex64"), ("complex64", "complex128")],
)
def test_cat_promotes_mixed_real_and_complex(dtypes, device):
    rng = np.random.default_rng(20)
    arrays = [rand_array(rng, (i + 1, 3), dt) for i, dt in enumerate(dtypes)]
    check(lambda lib, a, b: lib.cat([a, b]), arrays, device)


# ---- view ops ------------------------------------------------------------------------------

# Each op gets a (2, m, 4) tensor, m in {3, 0}, contiguous or a permuted view.
VIEW_OPS = {
    "reshape": lambda lib, z: z.reshape(4, z.shape[1], 2),
    "view": lambda lib, z: z.contiguous().view(2, z.shape[1] * 4),
    "flatten": lambda lib, z: z.flatten(),
    "flatten_1": lambda lib, z: z.flatten(1),
    "permute": lambda lib, z: z.permute(2, 0, 1),
    "transpose": lambda lib, z: z.transpose(0, 2),
    "slice": lambda lib, z: z[1:, ::2, -3:],
    "slice_steps": lambda lib, z: z[..., 1::2],
    "index_none": lambda lib, z: z[:, None, ..., 0],
    "select": lambda lib, z: z.select(0, 1),
    "select_neg": lambda lib, z: z.select(2, -1),
    "narrow": lambda lib, z: z.narrow(2, 1, 2),
    "unsqueeze": lambda lib, z: z.unsqueeze(-1),
    "squeeze": lambda lib, z: z.unsqueeze(0)[:, :, :1].squeeze(),
    "squeeze_dim": lambda lib, z: z[:1].squeeze(0),
    "expand": lambda lib, z: z.unsqueeze(1).expand(2, 3, z.shape[1], 4),
    "expand_as": lambda lib, z: z[:, :, :1].expand_as(z),
    "unbind": lambda lib, z: z.unbind(2),
    "chunk": lambda lib, z: z.chunk(2, dim=2),
    "split": lambda lib, z: z.split(3, dim=2),
    "split_sizes": lambda lib, z: z.split([1, 3], dim=-1),
    "t_of_select": lambda lib, z: z[0].t(),
}


@pytest.mark.parametrize("layout", ["contiguous", "permuted"])
@pytest.mark.parametrize("m", [3, 0])
@pytest.mark.parametrize("op", VIEW_OPS)
def test_view_ops(op, m, layout, device):
    rng = np.random.default_rng(21)
    if layout == "contiguous":
        a = crandn(rng, (2, m, 4))
        f, t = check(VIEW_OPS[op], [a], device)
    else:
        a = crandn(rng, (4, 2, m))
        f, t = check(lambda lib, z: VIEW_OPS[op](lib, z.permute(1, 2, 0)), [a], device)
    for fo, to in zip(_as_list(f), _as_list(t)):
        if to.numel():  # the strides of an empty tensor are not pinned down
            assert fo.stride() == to.stride(), op


def random_key(rng, shape):
    items = []
    for size in shape:
        r = rng.random()
        if r < 0.3 and size:
            items.append(int(rng.integers(-size, size)))
        elif r < 0.8:
            start = int(rng.integers(-size - 1, size + 2))
            stop = int(rng.integers(-size - 1, size + 2))
            items.append(slice(start, stop, int(rng.integers(1, 4))))
        else:
            items.append(slice(None))
        if rng.random() < 0.15:
            items.append(None)
    return tuple(items)


@pytest.mark.parametrize("seed", range(12))
def test_random_indexing(seed, device):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng, ndim=int(rng.integers(1, 4)))
    key = random_key(rng, shape)
    a = crandn(rng, shape, CDTYPES[seed % 2])
    check(lambda lib, z: z[key], [a], device)
    # the same key on a non-contiguous view of the same shape
    at = np.ascontiguousarray(a.T)
    check(lambda lib, z: z.permute(list(reversed(range(z.ndim))))[key], [at], device)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_writes_through_view_ops(dtype, device):
    rng = np.random.default_rng(22)
    za, wa = crandn(rng, (3, 4), dtype), crandn(rng, (3, 4), dtype)

    def steps(lib, z, w):
        z[1].copy_(w[0])
        z[:, ::2].copy_(w[:, 1::2])
        z.permute(1, 0)[3].copy_(w[:, 0])
        z.view(12)[5:7].copy_(w.reshape(12)[:2])
        z.unsqueeze(0).narrow(2, 3, 1).copy_(w[:, :1].conj())
        z.T.select(0, 0).copy_(w.sum(1))
        for part in z.split(2, dim=0):
            part[-1].copy_(part[0])
        return z

    check(steps, [za, wa], device, grad=False)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_setitem_with_complex_tensors(dtype, device):
    rng = np.random.default_rng(23)
    za, wa = crandn(rng, (3, 4), dtype), crandn(rng, (4,), dtype)

    def steps(lib, z, w):
        z[0] = w
        z[1:, 1] = w[2]  # a 0-dim complex tensor
        z[2, ::3] = w[:2]
        return z

    check(steps, [za, wa], device, grad=False)


def test_view_ops_gradients_accumulate_across_views(device):
    a = crandn(np.random.default_rng(24), (3, 4))

    def fn(lib, z):
        return z[0] * z.T[:, 1] + z.reshape(4, 3)[:, 0] * z.narrow(1, 1, 3)[2].sum()

    check(fn, [a], device)


# ---- arithmetic ----------------------------------------------------------------------------

BINARY = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
}
BINARY_DTYPES = [
    ("complex64", "complex64"),
    ("complex128", "complex128"),
    ("complex64", "complex128"),
    ("complex64", "float32"),
    ("float32", "complex64"),
    ("complex128", "float32"),
    ("float64", "complex64"),
    ("complex64", "int64"),
    ("int64", "complex128"),
]
BINARY_SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
    ((), (3,)),
    ((3,), ()),
    ((), ()),
    ((0, 4), (4,)),
    ((2, 0), (1, 1)),
]


@pytest.mark.parametrize("dtypes", BINARY_DTYPES, ids="-".join)
@pytest.mark.parametrize("op", BINARY)
def test_binary_arithmetic(op, dtypes, device):
    rng = np.random.default_rng(25)
    for shapes in BINARY_SHAPES:
        arrays = [rand_array(rng, s, dt, away=True) for s, dt in zip(shapes, dtypes)]
        check(lambda lib, a, b: BINARY[op](a, b), arrays, device)
        check(lambda lib, a, b: getattr(lib, op)(a, b), arrays, device, grad=False)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_binary_arithmetic_on_non_contiguous_operands(dtype, device):
    rng = np.random.default_rng(26)
    za, wa = crandn(rng, (4, 3), dtype), crandn(rng, (3, 8), dtype, away=True)
    for op in BINARY.values():
        check(lambda lib, z, w, op=op: op(z.T, w[:, ::2]), [za, wa], device)
        check(lambda lib, z, w, op=op: op(z.T[::2], w[0, ::2].conj()), [za, wa], device)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(4))
def test_exp_and_neg(dtype, seed, device):
    rng = np.random.default_rng(seed)
    a = crandn(rng, rand_shape(rng) if seed else (), dtype)
    fns = [
        lambda lib, z: z.exp(),
        lambda lib, z: lib.exp(z),
        lambda lib, z: -z,
        lambda lib, z: lib.neg(z),
        lambda lib, z: z.neg(),
        lambda lib, z: lib.exp(-z * 0.5) / lib.exp(z.conj()),
    ]
    for fn in fns:
        check(fn, [a], device)


# ---- sum / mean ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("seed", range(10))
def test_sum_and_mean(dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = rand_shape(rng) if seed > 1 else [(), (2, 0, 3)][seed]
    a = crandn(rng, shape, dtype)
    ndim = len(shape)
    n = int(rng.integers(1, ndim + 1)) if ndim else 0
    dims = tuple(int(d) - ndim * int(rng.integers(0, 2)) for d in rng.permutation(ndim)[:n])
    keepdim = bool(rng.integers(0, 2))
    fns = [
        lambda lib, z: z.sum(),
        lambda lib, z: lib.sum(z),
        lambda lib, z: z.mean(),
        lambda lib, z: lib.mean(z),
    ]
    if ndim:
        fns += [
            lambda lib, z: z.sum(dims, keepdim),
            lambda lib, z: lib.sum(z, dim=dims, keepdim=keepdim),
            lambda lib, z: z.sum(dims[0]),
            lambda lib, z: z.mean(dims, keepdim=keepdim),
            lambda lib, z: lib.mean(z, dim=dims[0], keepdim=keepdim),
        ]
    for i, fn in enumerate(fns):
        f, _ = check(fn, [a], device)
        assert f.dtype is getattr(flow, dtype), i


def test_sum_of_a_permuted_complex_tensor(device):
    a = crandn(np.random.default_rng(27), (3, 5, 4), "complex128")
    check(lambda lib, z: z.permute(2, 0, 1)[:, ::2].sum(dim=(0, 2), keepdim=True), [a], device)
    check(lambda lib, z: z.transpose(0, 2).mean(1), [a], device)


# ---- matmul --------------------------------------------------------------------------------

MATMUL_SHAPES = {
    "mm": ((3, 4), (4, 5)),
    "batched_mm": ((2, 3, 4), (4, 2)),
    "broadcast_batch": ((2, 1, 3, 4), (3, 4, 2)),
    "vm": ((4,), (4, 3)),
    "mv": ((3, 4), (4,)),
    "dot": ((4,), (4,)),
    "empty_inner": ((3, 0), (0, 2)),
    "empty_outer": ((0, 3), (3, 2)),
}


@pytest.mark.parametrize("shapes", MATMUL_SHAPES.values(), ids=MATMUL_SHAPES.keys())
@pytest.mark.parametrize("dtype", CDTYPES)
def test_matmul(dtype, shapes, device):
    rng = np.random.default_rng(28)
    a, b = (crandn(rng, s, dtype) for s in shapes)
    check(lambda lib, x, y: lib.matmul(x, y), [a, b], device, tol=2)
    check(lambda lib, x, y: x @ y, [a, b], device, tol=2)
    if b.ndim >= 2:  # a transposed (non-contiguous) right operand
        bt = np.ascontiguousarray(np.swapaxes(b, -1, -2))
        check(lambda lib, x, y: x @ y.transpose(-1, -2), [a, bt], device, tol=2)
        check(lambda lib, x, y: x @ y.transpose(-1, -2).conj(), [a, bt], device, tol=2)


# ---- gradients of real losses --------------------------------------------------------------


def _c(rng, *shape, dtype="complex64"):
    return crandn(rng, shape, dtype, away=True)


def _r(rng, *shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


# name -> (loss(lib, *leaves), leaf arrays(rng))
LOSSES = {
    "abs_of_product": (
        lambda lib, z, w: (z * w).abs().sum(),
        lambda rng: [_c(rng, 3, 4), _c(rng, 3, 4)],
    ),
    "view_as_real_of_matmul": (
        lambda lib, z, w: lib.view_as_real(z @ w).pow(2).sum(),
        lambda rng: [_c(rng, 3, 4), _c(rng, 4, 2)],
    ),
    "polar_times_complex": (
        lambda lib, r, th, c: (lib.polar(r, th) * c).real.sum(),
        lambda rng: [np.abs(_r(rng, 5)) + 0.1, _r(rng, 5), _c(rng, 5)],
    ),
    "conj_product_imag": (
        lambda lib, z, w: (z.conj() * w).imag.sum(),
        lambda rng: [_c(rng, 2, 3), _c(rng, 3)],
    ),
    "abs_squared_mean": (
        lambda lib, z: (z.abs() ** 2).mean(),
        lambda rng: [_c(rng, 4, 2, dtype="complex128")],
    ),
    "angle_of_quotient": (
        lambda lib, z, w: (z / w).angle().sum(),
        lambda rng: [_c(rng, 6), _c(rng, 6)],
    ),
    "complex_from_parts_then_exp": (
        lambda lib, x, y: lib.complex(x, y).exp().imag.mean(),
        lambda rng: [_r(rng, 3, 3), _r(rng, 3, 3)],
    ),
    "view_as_complex_div": (
        lambda lib, x, w: (lib.view_as_complex(x) / w).real.sum(),
        lambda rng: [_r(rng, 4, 2, dtype="float64"), _c(rng, 4, dtype="complex128")],
    ),
    "sum_keepdim_then_abs": (
        lambda lib, z: z.sum(dim=1, keepdim=True).abs().sum(),
        lambda rng: [_c(rng, 3, 5)],
    ),
    "stack_cat_mean": (
        lambda lib, z, w: lib.cat([lib.stack([z, w.conj()]).mean(0), z]).abs().sum(),
        lambda rng: [_c(rng, 2, 3), _c(rng, 2, 3)],
    ),
    "real_imag_cross": (
        lambda lib, z, w: (z.real * w.imag - z.imag * w.real).sum(),
        lambda rng: [_c(rng, 4), _c(rng, 4)],
    ),
    "mixed_real_leaf": (
        lambda lib, x, z: (x * z + x - z / 2).abs().sum(),
        lambda rng: [_r(rng, 3, 1), _c(rng, 3, 4)],
    ),
    "promote_to_complex128": (
        lambda lib, z, w: (z.to(lib.complex128) * w).abs().sum(),
        lambda rng: [_c(rng, 3), _c(rng, 3, dtype="complex128")],
    ),
    "real_cast_to_complex": (
        lambda lib, x, z: (x.to(lib.complex64) * z).imag.sum(),
        lambda rng: [_r(rng, 3), _c(rng, 3)],
    ),
    "views_and_scalars": (
        lambda lib, z: (2 - z.T[1:] * 0.5).reshape(-1).abs().sum(),
        lambda rng: [_c(rng, 3, 4)],
    ),
    "zero_dim_leaf": (
        lambda lib, s, z: (s * z).exp().real.sum(),
        lambda rng: [_c(rng), _c(rng, 3)],
    ),
    "zero_size_leaf": (
        lambda lib, z, w: (z @ w).abs().sum() + z.sum().abs(),
        lambda rng: [_c(rng, 2, 0), _c(rng, 0, 3)],
    ),
}


@pytest.mark.parametrize("name", LOSSES)
def test_real_loss_gradients(name, device):
    loss, make = LOSSES[name]
    arrays = make(np.random.default_rng(29))
    t_in, f_in = leaves(arrays, device)
    t_loss, f_loss = loss(torch, *t_in), loss(flow, *f_in)
    assert_close(f_loss, t_loss, "loss", tol=2)
    assert tuple(f_loss.shape) == () and not f_loss.is_complex()
    t_loss.backward()
    f_loss.backward()
    for i, (f, t) in enumerate(zip(f_in, t_in)):
        assert f.grad is not None, f"leaf {i} got no gradient"
        assert f.grad.dtype is f.dtype, f"leaf {i}: grad dtype {f.grad.dtype}"
        assert_close(f.grad, t.grad, f"grad of leaf {i}", tol=2)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_backward_with_a_complex_gradient(dtype, device):
    rng = np.random.default_rng(30)
    arrays = [crandn(rng, (3, 2), dtype), crandn(rng, (3, 2), dtype)]
    g = crandn(rng, (3, 2), dtype)
    t_in, f_in = leaves(arrays, device)
    (t_in[0] * t_in[1] + t_in[0].conj()).backward(torch.tensor(g))
    (f_in[0] * f_in[1] + f_in[0].conj()).backward(flow.tensor(g, device=device))
    for f, t in zip(f_in, t_in):
        assert_close(f.grad, t.grad)


def test_backward_of_a_complex_scalar_needs_a_gradient():
    def make(lib):
        z = lib.tensor([1 + 2j, 3j], requires_grad=True)
        (z * 2).sum().backward()

    same_error(make)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_gradients_accumulate_and_autograd_grad(dtype, device):
    rng = np.random.default_rng(31)
    arrays = [crandn(rng, (4,), dtype), crandn(rng, (4,), dtype)]
    t_in, f_in = leaves(arrays, device)
    for z, w in (t_in, f_in):
        (z * w).abs().sum().backward()
        (z.exp() * w).real.sum().backward()
    assert_close(f_in[0].grad, t_in[0].grad, "accumulated")
    (t_gz,) = torch.autograd.grad((t_in[0] @ t_in[1]).abs(), [t_in[0]])
    (f_gz,) = flow.autograd.grad((f_in[0] @ f_in[1]).abs(), [f_in[0]])
    assert_close(f_gz, t_gz, "autograd.grad")


# ---- pointwise functions -------------------------------------------------------------------

POINTWISE = [
    "sqrt",
    "rsqrt",
    "log",
    "log2",
    "log10",
    "sin",
    "cos",
    "sinh",
    "cosh",
    "reciprocal",
    "tan",
    "tanh",
    "sigmoid",
    "exp2",
    "expm1",
    "log1p",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
]


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", POINTWISE)
def test_pointwise_functions_like_torch(name, dtype, device):
    rng = np.random.default_rng(41)
    a = crandn(rng, (3, 5), dtype, away=True)
    off_cut = a.copy()
    a[0, :4] = [-4, complex(-4, -0.0), 2j, -2j]  # the branch cut, from both sides
    if name in ("asin", "acos"):
        # values on the cut match; the gradient there is taken from the other side than
        # PyTorch's formula (1 / sqrt(1 - z^2)) takes it, so it is compared off the cut
        check(lambda lib, z: getattr(lib, name)(z), [a], device, grad=False)
        check(lambda lib, z: getattr(lib, name)(z), [off_cut], device)
        return
    check(lambda lib, z: getattr(lib, name)(z), [a], device)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_scans_and_products_like_torch(dtype, device):
    rng = np.random.default_rng(43)
    for shape, dim in [((5,), 0), ((3, 7), 1), ((4, 6, 3), 0), ((2, 1), -1), ((9, 2), -2)]:
        a = crandn(rng, shape, dtype)
        check(lambda lib, z, d=dim: lib.cumsum(z, d), [a], device)
        check(lambda lib, z, d=dim: z.cumprod(d), [a], device)
        check(lambda lib, z, d=dim: lib.prod(z, d), [a], device)
        check(lambda lib, z, d=dim: z.prod(d, keepdim=True), [a], device)
        check(lambda lib, z: lib.prod(z), [a], device)
    for shape in [(0, 3), ()]:  # empty products are 1, a 0-dim scan is a copy
        a = crandn(rng, shape, dtype)
        check(lambda lib, z: lib.prod(z, 0), [a], device, grad=False)
        check(lambda lib, z: lib.cumsum(z, 0), [a], device, grad=False)
        check(lambda lib, z: lib.cumprod(z, 0), [a], device, grad=False)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_powers_like_torch(dtype, device):
    rng = np.random.default_rng(42)
    a, b = crandn(rng, (4, 3), dtype, away=True), crandn(rng, (3,), dtype, away=True)
    r = np.abs(rng.standard_normal((4, 3))) + 0.5
    for e in (2, 3, 0, 1, -1, -2, 0.5, 1.7, -0.3):
        # z ** 0 is a constant here (PyTorch keeps a history whose gradient is zero)
        check(lambda lib, z, e=e: z**e, [a], device, grad=e != 0)
    check(lambda lib, z, w: lib.pow(z, w), [a, b], device)
    check(lambda lib, z, x: z**x, [a, r.astype(REAL_OF[dtype])], device)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_equality_and_classification_like_torch(dtype, device):
    a = np.array([1 + 2j, complex(np.nan, 1), complex(1, np.inf), 3j, 0j, 2 + 0j], dtype=dtype)
    b = np.array([1 + 2j, complex(np.nan, 1), complex(1, np.inf), 3.5j, -0.0 + 0j, 2 + 1j], dtype)
    for fn in (
        lambda lib, z, w: z == w,
        lambda lib, z, w: z != w,
        lambda lib, z, w: lib.eq(z, 2),
        lambda lib, z, w: lib.isnan(z),
        lambda lib, z, w: lib.isinf(z),
        lambda lib, z, w: lib.isfinite(z),
        lambda lib, z, w: lib.isreal(z),
    ):
        check(fn, [a, b], device, grad=False)
    z = flow.tensor(a, device=device)
    for fn in (lambda: z < z, lambda: flow.gt(z, z), lambda: z >= 1):
        with pytest.raises(TypeError, match="complex"):
            fn()


# ---- ops without complex support -----------------------------------------------------------

# name -> (call, pattern the message must match: the op, or the internal op it runs as). PyTorch
# rejects some of these too and computes others; oneflow rejects all (TypeError, or
# NotImplementedError where a floating input is required) until they are implemented.
UNSUPPORTED = {
    "relu": (lambda lib, z: lib.nn.functional.relu(z), "relu"),
    "softmax": (lambda lib, z: lib.nn.functional.softmax(z, dim=0), "softmax"),
    "sort": (lambda lib, z: lib.sort(z), "sort"),
    "topk": (lambda lib, z: lib.topk(z, 1), "topk|sort"),
    "max": (lambda lib, z: lib.max(z), "max"),
    "argmax": (lambda lib, z: lib.argmax(z), "argmax|max"),
    "floor": (lambda lib, z: lib.floor(z), "floor"),
    "clamp": (lambda lib, z: lib.clamp(z, 0, 1), "clamp|lt|gt"),
    "maximum_with_real": (lambda lib, z: lib.maximum(z.real, z), "maximum"),
    "gt": (lambda lib, z: lib.gt(z, z), "gt|greater"),
}
TORCH_REJECTS = {
    "relu",
    "softmax",
    "sort",
    "topk",
    "max",
    "argmax",
    "floor",
    "clamp",
    "maximum_with_real",
    "gt",
}


@pytest.mark.parametrize("name", UNSUPPORTED)
def test_unsupported_op_raises_type_error(name, device):
    call, pattern = UNSUPPORTED[name]
    a = crandn(np.random.default_rng(32), (3, 2))
    errors = (TypeError, NotImplementedError)
    with pytest.raises(errors, match=re.compile(pattern, re.IGNORECASE)):
        call(flow, flow.tensor(a, device=device))
    with pytest.raises(errors, match=re.compile(pattern, re.IGNORECASE)):
        call(flow, flow.tensor(a[0, 0], device=device))  # 0-dim
    if name in TORCH_REJECTS:
        with pytest.raises((RuntimeError, NotImplementedError)):
            call(torch, torch.tensor(a))
