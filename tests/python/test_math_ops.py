"""Pointwise math against PyTorch: the unary and binary kernel families, their composites,
in-place forms and operators. Tolerances are differential.py's (float32 1e-5 abs / 1e-4 rel,
float64 1e-10 / 1e-9, float16 1e-2); gradients are compared in float32 and float64 (the float64
comparison is the gradcheck: PyTorch's analytic gradients to 1e-9)."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from test_ops import broadcast_pair, random_shape

import oneflow as flow
from differential import check

# name -> input transform into the function's domain (t is standard normal).
UNARY_DOMAINS = {
    "trunc": lambda t: t * 3,
    "sign": lambda t: t,
    "neg": lambda t: t,
    "exp2": lambda t: t,
    "expm1": lambda t: t,
    "log2": lambda t: t * t + 0.5,
    "log10": lambda t: t * t + 0.5,
    "tan": lambda t: t * 0.5,
    "asin": lambda t: t.tanh() * 0.9,
    "acos": lambda t: t.tanh() * 0.9,
    "atan": lambda t: t * 2,
    "sinh": lambda t: t,
    "cosh": lambda t: t,
    "asinh": lambda t: t * 2,
    "acosh": lambda t: t * t + 1.5,
    "atanh": lambda t: t.tanh() * 0.9,
    "erf": lambda t: t,
    "erfc": lambda t: t,
    "erfinv": lambda t: t.tanh() * 0.95,
    "lgamma": lambda t: t * 3,
    "digamma": lambda t: t * t + 0.3,
    "square": lambda t: t,
    "frac": lambda t: t * 3,
    "logit": lambda t: t.sigmoid(),
    "arcsin": lambda t: t.tanh() * 0.9,
    "arctan": lambda t: t,
    "negative": lambda t: t,
}
NO_GRAD = {"trunc", "sign"}  # piecewise constant: PyTorch's gradient is 0, ours too


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY_DOMAINS))
def test_unary_functions(name, dtype, seed, device):
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, int(rng.integers(0, 4)), hi=20)
    dom = UNARY_DOMAINS[name]
    check(
        lambda lib, a: getattr(lib, name)(a),
        [shape],
        dtype=dtype,
        device=device,
        seed=seed,
        transform=lambda lib, t, i: dom(t),
    )
    # The Tensor method on a non-contiguous input.
    check(
        lambda lib, a: getattr(a, name)(),
        [shape + (3,)],
        dtype=dtype,
        device=device,
        seed=seed,
        transform=lambda lib, t, i: dom(t).transpose(0, -1),
    )


@pytest.mark.parametrize("name", ["exp2", "expm1", "log2", "tan", "atan", "erf", "sinh", "neg"])
def test_unary_float16(name, device):
    check(
        lambda lib, a: getattr(lib, name)(a),
        [(40,)],
        dtype="float16",
        device=device,
        grad=False,
        transform=lambda lib, t, i: UNARY_DOMAINS[name](t),
    )


@pytest.mark.parametrize("name", ["trunc", "sign", "neg", "abs", "log2", "erf", "square"])
def test_unary_on_integers(name, device):
    check(lambda lib, a: getattr(lib, name)(a), [(11,)], dtype="int64", device=device)


def test_unary_special_values():
    x = [-math.inf, -2.0, -1.0, -0.0, 0.0, 0.5, 1.0, math.inf, math.nan]
    for name in ["sign", "trunc", "frac", "erfinv", "lgamma", "digamma", "atanh", "acosh", "log2"]:
        a = getattr(flow, name)(flow.tensor(x, dtype=flow.float64)).numpy()
        e = getattr(torch, name)(torch.tensor(x, dtype=torch.float64)).numpy()
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=0, equal_nan=True, err_msg=name)


def test_bitwise_not_and_logical_not(device):
    check(lambda lib, a: lib.bitwise_not(a), [(7,)], dtype="int64", device=device)
    check(lambda lib, a: ~a, [(2, 3)], dtype="bool", device=device)
    for dtype in ["float32", "int64", "bool"]:
        check(lambda lib, a: lib.logical_not(a), [(5,)], dtype=dtype, device=device, grad=False)
    with pytest.raises(NotImplementedError, match="bitwise_not"):  # as torch
        flow.bitwise_not(flow.ones(2))


DIFFERENTIABLE_BINARY = ["maximum", "minimum", "fmax", "fmin", "fmod", "remainder", "atan2"]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", DIFFERENTIABLE_BINARY + ["floor_divide"])
def test_binary_floating(name, dtype, seed, device):
    rng = np.random.default_rng(seed)
    sa, sb = broadcast_pair(rng)

    def away_from_zero(lib, t, i):  # keeps divisors away from 0 and quotients off integers
        return t * 3 + 0.1 if i == 0 else t.sign() * (t.abs() + 0.5) + 0.01

    check(
        lambda lib, a, b: getattr(lib, name)(a, b),
        [sa, sb],
        dtype=dtype,
        device=device,
        seed=seed,
        grad=name != "floor_divide",
        transform=away_from_zero,
    )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "name",
    ["maximum", "minimum", "fmod", "remainder", "floor_divide", "bitwise_and", "bitwise_or"]
    + ["bitwise_xor"],
)
def test_binary_integers(name, seed, device):
    rng = np.random.default_rng(seed)
    sa, sb = broadcast_pair(rng)

    def nonzero(lib, t, i):
        return t if i == 0 else t * 2 + (t >= 0).long()

    for dtype in ["int64", "int32"]:
        check(
            lambda lib, a, b: getattr(lib, name)(a, b),
            [sa, sb],
            dtype=dtype,
            device=device,
            seed=seed,
            transform=nonzero,
        )


@pytest.mark.parametrize(
    "name",
    ["logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"],
)
def test_binary_bool_and_logical(name, device):
    rng = np.random.default_rng(1)
    sa, sb = broadcast_pair(rng)
    check(lambda lib, a, b: getattr(lib, name)(a, b), [sa, sb], dtype="bool", device=device)
    if name.startswith("logical"):
        check(
            lambda lib, a, b: getattr(lib, name)(a, b),
            [sa, sb],
            dtype="float32",
            device=device,
            grad=False,
        )


def test_operators_match_torch(device):
    for dtype in ["int64", "float32"]:
        check(
            lambda lib, a, b: a // b,
            [(4, 3), (3,)],
            dtype=dtype,
            device=device,
            grad=False,
            transform=lambda lib, t, i: t if i == 0 else t * 2 + (t >= 0).long() * 1,
        )
        check(
            lambda lib, a, b: a % b,
            [(4, 3), (3,)],
            dtype=dtype,
            device=device,
            transform=lambda lib, t, i: t if i == 0 else t * 2 + (t >= 0).long() * 1,
        )
        check(
            lambda lib, a: 7 // a,
            [(6,)],
            dtype=dtype,
            device=device,
            grad=False,
            transform=lambda lib, t, i: t * 2 + (t >= 0).long(),
        )
        check(lambda lib, a: a % 3, [(6,)], dtype=dtype, device=device)
        check(
            lambda lib, a: 5 % a,
            [(6,)],
            dtype=dtype,
            device=device,
            grad=False,
            transform=lambda lib, t, i: t * 2 + (t >= 0).long(),
        )
    check(lambda lib, a, b: (a & b) | (a ^ b), [(5,), (5,)], dtype="int32", device=device)
    check(lambda lib, a: (a & 6) | 1, [(5,)], dtype="int64", device=device)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_div_rounding_modes(mode, device):
    for dtype in ["float32", "float64", "int64"]:
        check(
            lambda lib, a, b: lib.div(a, b, rounding_mode=mode),
            [(3, 4), (4,)],
            dtype=dtype,
            device=device,
            grad=False,
            transform=lambda lib, t, i: (
                t * 4
                if i == 0
                else t.sign() * (t.abs() + 0.5)
                if t.dtype.is_floating_point
                else t * 2 + (t >= 0).long()
            ),
        )
    with pytest.raises(RuntimeError, match="rounding_mode"):  # as torch
        flow.div(flow.ones(2), flow.ones(2), rounding_mode="round")


def test_integer_division_by_zero_raises():
    a = flow.tensor([4, 5])
    for fn in [flow.floor_divide, flow.fmod, flow.remainder]:
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(a, flow.tensor([1, 0]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        _ = a // 0
    # floating division by zero follows IEEE, as in PyTorch
    np.testing.assert_array_equal(
        flow.floor_divide(flow.tensor([1.0, -1.0]), 0.0).numpy(), [math.inf, -math.inf]
    )


def test_int_min_over_minus_one_does_not_trap():
    a = flow.tensor([-(2**63), 7])
    b = flow.tensor([-1, -1])
    assert flow.floor_divide(a, b).numpy().tolist() == [-(2**63), -7]
    assert flow.fmod(a, b).numpy().tolist() == [0, 0]


def test_maximum_nan_and_ties():
    a = flow.tensor([1.0, math.nan, 2.0, 3.0], requires_grad=True)
    b = flow.tensor([1.0, 0.0, math.nan, 1.0], requires_grad=True)
    ta = torch.tensor([1.0, math.nan, 2.0, 3.0], requires_grad=True)
    tb = torch.tensor([1.0, 0.0, math.nan, 1.0], requires_grad=True)
    for name in ["maximum", "minimum", "fmax", "fmin"]:
        out, tout = getattr(flow, name)(a, b), getattr(torch, name)(ta, tb)
        np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
    flow.maximum(a, b).sum().backward()
    torch.maximum(ta, tb).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_composites(dtype, device):
    check(
        lambda lib, a, b, w: lib.lerp(a, b, w), [(3, 4), (4,), (3, 1)], dtype=dtype, device=device
    )
    check(lambda lib, a, b: lib.lerp(a, b, 0.3), [(3, 4), (4,)], dtype=dtype, device=device)
    check(
        lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5),
        [(2, 3), (3,), (2, 1)],
        dtype=dtype,
        device=device,
    )
    check(
        lambda lib, a, b, c: lib.addcdiv(a, b, c, value=-2),
        [(2, 3), (3,), (2, 1)],
        dtype=dtype,
        device=device,
        transform=lambda lib, t, i: t.abs() + 1 if i == 2 else t,
    )
    check(
        lambda lib, a, lo, hi: lib.clamp(a, lo, hi),
        [(4, 5), (5,), (4, 1)],
        dtype=dtype,
        device=device,
        transform=lambda lib, t, i: t - 1 if i == 1 else (t + 1 if i == 2 else t),
    )
    check(lambda lib, a, lo: lib.clamp(a, min=lo), [(4, 5), (5,)], dtype=dtype, device=device)
    check(lambda lib, a: lib.clamp_min(a, 0.1), [(6,)], dtype=dtype, device=device)
    check(lambda lib, a: lib.clamp_max(a, 0.1), [(6,)], dtype=dtype, device=device)
    check(
        lambda lib, a, b: lib.xlogy(a, b),
        [(6,), (6,)],
        dtype=dtype,
        device=device,
        transform=lambda lib, t, i: t.abs() + 0.1,
    )


def test_nan_inf_predicates_and_nan_to_num():
    vals = [math.nan, math.inf, -math.inf, 0.0, -1.5, 3.0]
    for dtype in [flow.float32, flow.float64]:
        x = flow.tensor(vals, dtype=dtype)
        tx = torch.tensor(vals, dtype=getattr(torch, str(dtype).split(".")[-1]))
        for name in ["isnan", "isinf", "isfinite", "isposinf", "isneginf"]:
            np.testing.assert_array_equal(
                getattr(flow, name)(x).numpy(), getattr(torch, name)(tx).numpy(), err_msg=name
            )
        np.testing.assert_array_equal(flow.nan_to_num(x).numpy(), torch.nan_to_num(tx).numpy())
        np.testing.assert_array_equal(
            flow.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0).numpy(),
            torch.nan_to_num(tx, nan=1.0, posinf=2.0, neginf=-2.0).numpy(),
        )
    i = flow.tensor([1, 2])
    assert flow.isnan(i).numpy().tolist() == [False, False]
    assert flow.isfinite(i).numpy().tolist() == [True, True]


def test_isclose_allclose_equal():
    a = flow.tensor([1.0, 2.0, math.nan, math.inf, 1e-9])
    b = flow.tensor([1.0 + 1e-6, 2.1, math.nan, math.inf, 0.0])
    ta, tb = torch.tensor(a.numpy()), torch.tensor(b.numpy())
    for equal_nan in [False, True]:
        np.testing.assert_array_equal(
            flow.isclose(a, b, equal_nan=equal_nan).numpy(),
            torch.isclose(ta, tb, equal_nan=equal_nan).numpy(),
        )
    assert flow.allclose(a[:2], b[:2], rtol=0.1) == torch.allclose(ta[:2], tb[:2], rtol=0.1)
    assert not flow.allclose(a, b)
    assert flow.equal(flow.tensor([1, 2]), flow.tensor([1, 2]))
    assert not flow.equal(flow.tensor([1, 2]), flow.tensor([1, 3]))
    assert not flow.equal(flow.tensor([1, 2]), flow.tensor([1, 2, 3]))
    assert flow.tensor([1, 2]).equal(flow.tensor([1, 2]))


def test_inplace_forms():
    for name in ["sin_", "floor_", "square_", "clamp_", "frac_", "atan2_", "fmod_", "lerp_"]:
        args = {"clamp_": (-0.5, 0.5), "atan2_": (0.7,), "fmod_": (0.3,), "lerp_": (1.0, 0.25)}
        a = flow.tensor([0.5, -1.25, 2.0])
        t = torch.tensor([0.5, -1.25, 2.0])
        fa = args.get(name, ())
        ft = tuple(
            torch.tensor(v) if name in ("atan2_", "lerp_") and k == 0 else v
            for k, v in enumerate(fa)
        )
        out = getattr(a, name)(*fa)
        getattr(t, name)(*ft)
        assert out is a
        np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=1e-6, err_msg=name)
    x = flow.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.sqrt_()
    y = flow.tensor([6, 7])
    y //= 4
    y %= 2
    assert y.numpy().tolist() == [1, 1]
    z = flow.tensor([True, False])
    z &= flow.tensor([True, True])
    z |= flow.tensor([False, False])
    assert z.numpy().tolist() == [True, False]


def test_inplace_keeps_autograd_history():
    a = flow.tensor([0.3, 0.6], requires_grad=True)
    ta = torch.tensor([0.3, 0.6], requires_grad=True)
    b = a * 2
    tb = ta * 2
    b.sin_()
    tb.sin_()
    b.sum().backward()
    tb.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)


def test_dtype_errors():
    # The exception types of torch: NotImplementedError for a dtype an op has no kernel for.
    with pytest.raises(NotImplementedError, match="fmod.*bool"):
        flow.fmod(flow.tensor([True]), flow.tensor([True]))
    with pytest.raises(NotImplementedError, match="bitwise_and"):
        flow.bitwise_and(flow.ones(2), flow.ones(2))
    with pytest.raises(RuntimeError, match="neg"):
        flow.neg(flow.tensor([True]))
    with pytest.raises(RuntimeError, match="broadcast|shape"):
        flow.fmax(flow.ones(2, 3), flow.ones(4))


def test_aliases_resolve():
    x = flow.tensor([0.25, 0.5])
    for alias, target in [
        ("arcsin", "asin"),
        ("arccos", "acos"),
        ("arctanh", "atanh"),
        ("negative", "neg"),
        ("greater_equal", "ge"),
        ("not_equal", "ne"),
        ("fix", "trunc"),
    ]:
        if target in ("ge", "ne"):
            a, b = getattr(flow, alias)(x, 0.3), getattr(flow, target)(x, 0.3)
        else:
            a, b = getattr(flow, alias)(x), getattr(flow, target)(x)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_roundings_bitwise_torch_on_long_runs():
    """floor/ceil/trunc/round of float32 (vector rounding on contiguous runs): the same bits as
    PyTorch, signed zeros, halves (to even), NaN and infinities included, across run tails."""
    rng = np.random.default_rng(0)
    special = [0.5, -0.5, 1.5, 2.5, -2.5, -0.4, -0.0, 0.0, 1e30, -1e30, np.inf, -np.inf, np.nan]
    a = np.concatenate([rng.standard_normal(70001) * 10, np.array(special)]).astype(np.float32)
    a[::7] = np.round(a[::7]) + 0.5  # many exact halves
    for name in ("floor", "ceil", "trunc", "round"):
        for x in (a, a[:13], a[5:1000]):
            got = getattr(flow, name)(flow.tensor(x)).numpy()
            want = getattr(torch, name)(torch.tensor(x)).numpy()
            np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32), err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_round_decimals_like_torch(dtype):
    """round(x, decimals=d): the same values as PyTorch (x * 10^d rounded to even, divided back;
    16-bit floats through float32), in the function, method and in-place forms, on strided
    inputs; a zero gradient; integers refused as PyTorch does."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((40, 250)) * 10.0 ** rng.integers(-3, 6, (40, 250))
    a[0, :6] = [0.125, -0.125, 2.5, 1e30, np.inf, np.nan]
    x, t = flow.tensor(a).to(getattr(flow, dtype)), torch.tensor(a).to(getattr(torch, dtype))
    for d in [-3, -1, 0, 1, 2, 5, 8]:
        want = torch.round(t, decimals=d).double().numpy()
        np.testing.assert_array_equal(flow.round(x, decimals=d).double().numpy(), want)
        np.testing.assert_array_equal(x.round(decimals=d).double().numpy(), want)
        view = flow.round(x.t()[::3], decimals=d).double().numpy()
        np.testing.assert_array_equal(view, torch.round(t.t()[::3], decimals=d).double().numpy())
        y = x.clone()
        y.round_(decimals=d)
        np.testing.assert_array_equal(y.double().numpy(), want)
    w = flow.tensor(a[:2, :5], requires_grad=True)
    flow.round(w, decimals=2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros((2, 5)))
    with pytest.raises(NotImplementedError):
        torch.round(torch.tensor([15, 25]), decimals=-1)
    with pytest.raises(NotImplementedError, match="round"):
        flow.round(flow.tensor([15, 25]), decimals=-1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["atan2", "fmod", "remainder", "maximum", "minimum", "pow"])
def test_vector_binary_functions_match_torch_on_long_runs(name, dtype):
    """atan2 / fmod / remainder / maximum / minimum / pow run vector kernels on contiguous runs
    and on runs against one broadcast value: compared with PyTorch over special values (signed
    zeros, infinities, NaN, zero and negative divisors or bases, exact multiples, integer
    exponents), run tails, and strided (scalar-path) operands. fmod, remainder, maximum and
    minimum are exact; atan2 and pow within 2 ulp (each side is within 1 ulp of the true
    value)."""
    rng = np.random.default_rng(3)
    special = np.array([0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 7.5, -7.5, np.inf, -np.inf, np.nan])
    n = 20003
    a = np.concatenate([rng.standard_normal(n) * 10, np.repeat(special, len(special))])
    b = np.concatenate([rng.standard_normal(n) * 3, np.tile(special, len(special))])
    a[:300] = b[:300] * rng.integers(-4, 5, 300)  # exact multiples: remainder/fmod give +-0
    a, b = a.astype(dtype), b.astype(dtype)
    if name == "pow":  # bases of either sign, integer and fractional exponents, over/underflow
        b = np.where(np.arange(len(b)) % 3 == 0, np.round(b), b).astype(dtype)
    tol = None
    if name in ("atan2", "pow"):
        tol = dict(rtol=2.5e-7 if dtype == "float32" else 4.5e-16, atol=0)

    def compare(x, y):
        got = getattr(flow, name)(flow.tensor(x), flow.tensor(y)).numpy()
        want = getattr(torch, name)(torch.tensor(x), torch.tensor(y)).numpy()
        if tol is None:  # the same bits (signed zeros too), NaN where PyTorch has NaN
            assert np.array_equal(np.isnan(got), np.isnan(want)), name
            ok = ~np.isnan(want)
            if name in ("fmod", "remainder"):  # a zero result has a's sign
                np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]), name)
            # (maximum(+0, -0): PyTorch's own sign depends on the element's place in its vector
            # loop - b in the body, a in some tails - so the sign of a tie of zeros is not
            # compared.)
            np.testing.assert_array_equal(got[ok], want[ok], err_msg=name)
        else:
            np.testing.assert_allclose(got, want, **tol, err_msg=name)

    compare(a, b)
    compare(a[:13], b[5:18])  # short runs: only the tail
    compare(a[::3], b[::3].copy())  # a strided operand: the scalar path
    for s in (0.0, -0.0, 2.5, -2.5, np.inf, np.nan):  # one value broadcast on either side
        compare(a, np.array(s, dtype=dtype))
        compare(np.array(s, dtype=dtype), b)


# name -> (oneflow / torch function of a tensor, input transform, differentiable).
_VECTOR_UNARY = {
    "sqrt": (lambda lib, x: lib.sqrt(x), np.abs, True),
    "rsqrt": (lambda lib, x: lib.rsqrt(x), np.abs, True),
    "abs": (lambda lib, x: lib.abs(x), None, False),
    "neg": (lambda lib, x: lib.neg(x), None, True),
    "reciprocal": (lambda lib, x: lib.reciprocal(x), None, True),
    "exp": (lambda lib, x: lib.exp(x), lambda a: a * 10, True),
    "log": (lambda lib, x: lib.log(x), np.abs, True),
    "sin": (lambda lib, x: lib.sin(x), None, True),
    "tanh": (lambda lib, x: lib.tanh(x), None, True),
    "sigmoid": (lambda lib, x: lib.sigmoid(x), lambda a: a * 10, True),
    "gelu": (lambda lib, x: lib.nn.functional.gelu(x), None, True),
    "gelu_tanh": (lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"), None, True),
    "elu": (lambda lib, x: lib.nn.functional.elu(x), None, True),
    "silu": (lambda lib, x: lib.nn.functional.silu(x), lambda a: a * 10, True),
    "mish": (lambda lib, x: lib.nn.functional.mish(x), None, True),
    "softplus": (lambda lib, x: lib.nn.functional.softplus(x), lambda a: a * 10, True),
    "hardswish": (lambda lib, x: lib.nn.functional.hardswish(x), None, True),
}
# IEEE operations: NumPy's bits (PyTorch's float32 sqrt is not always correctly rounded:
# sqrt(88.7f) is 9.418067 there, 1 ulp from the nearest float 9.418068).
_EXACT = {
    "sqrt": np.sqrt,
    "rsqrt": lambda a: np.reciprocal(np.sqrt(a)),
    "abs": np.abs,
    "neg": np.negative,
    "reciprocal": np.reciprocal,
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(_VECTOR_UNARY))
def test_vector_unary_functions_match_torch_on_long_runs(name, dtype):
    """The unary functions and activations with vector kernels (the tier of
    oneflow.backends.cpu.get_cpu_capability()) against PyTorch over long contiguous runs, short
    runs (only the masked or padded tail), strided inputs and special values (signed zeros,
    infinities, NaN, subnormals, the ends of exp's range); gradients too. Within 1e-6 relative
    + 1e-6 absolute of PyTorch in float32 (gelu's erf is an approximation to 1.5e-7), 1e-12 in
    float64; sqrt, rsqrt, abs, neg and reciprocal give NumPy's bits (IEEE rounding)."""
    fn, dom, grad = _VECTOR_UNARY[name]
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1.0, -1.0, np.nan, 1e-40, -1e-40, 88.7, 89.0]
    special += [-87.5, -103.9, -110.0, 1e30, -1e30, 0.5, 2.5]
    if not name.startswith("gelu"):  # PyTorch's float32 gelu(inf) is NaN; ours is inf
        special += [np.inf, -np.inf]
    a = rng.standard_normal(20011)
    if dom is not None:
        a = dom(a)
    a = np.concatenate([a, np.array(special)]).astype(dtype)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)

    def compare(x, what):
        xs = [flow.tensor(x, requires_grad=grad), torch.tensor(x, requires_grad=grad)]
        ys = [fn(flow, xs[0]), fn(torch, xs[1])]
        got, want = ys[0].numpy(), ys[1].detach().numpy()
        assert np.array_equal(np.isnan(got), np.isnan(want)), f"{name} {what}: NaN places"
        np.testing.assert_allclose(got, want, **tol, err_msg=f"{name} {what}")
        if name in _EXACT:
            with np.errstate(all="ignore"):
                ref = _EXACT[name](x)
            np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8), f"{name} {what}")
        if grad:
            g = np.linspace(-1, 1, x.size).astype(dtype).reshape(x.shape)
            ys[0].backward(flow.tensor(g))
            ys[1].backward(torch.tensor(g))
            gg, gw = xs[0].grad.numpy(), xs[1].grad.numpy()
            fin = np.isfinite(gw) & (np.abs(x) < 1e20) & (np.abs(x) > 1e-30)
            np.testing.assert_allclose(gg[fin], gw[fin], **tol, err_msg=f"{name} {what} grad")

    compare(a, "long run")
    compare(a[-23:].copy(), "short run")
    compare(a[1:8].copy(), "tail only")
    compare(a[::3].copy().reshape(-1), "every third")  # a copy: contiguous again
    xt = a[: 2000 * 3].reshape(2000, 3)
    got = fn(flow, flow.tensor(xt).t()).numpy()  # a strided input
    np.testing.assert_allclose(got, fn(torch, torch.tensor(xt).t()).numpy(), **tol, err_msg=name)


def _best_cpu_capability():
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    if {"avx512f", "avx512dq", "avx512bw", "avx512vl", "avx2", "fma"} <= flags:
        return "AVX512"
    return "AVX2" if {"avx2", "fma"} <= flags else "DEFAULT"


def test_cpu_capability_reports_the_tier():
    """oneflow.backends.cpu.get_cpu_capability(): the CPU's widest tier, capped by
    ONEFLOW_CPU_CAPABILITY (the subprocess runs below set it)."""
    best = _best_cpu_capability()
    want = os.environ.get("ONEFLOW_CPU_CAPABILITY")
    order = ["DEFAULT", "AVX2", "AVX512"]
    expected = best
    if want is not None and want.upper() in order:
        expected = order[min(order.index(want.upper()), order.index(best))]
    assert flow.backends.cpu.get_cpu_capability() == expected


@pytest.mark.skipif(
    "ONEFLOW_CPU_CAPABILITY" in os.environ, reason="already running at a capped tier"
)
@pytest.mark.parametrize("tier", ["avx2", "default"])
def test_lower_vector_tiers_match_torch(tier):
    """The vector kernels of the lower tiers (the AVX2 and the SSE2 builds, which a CPU with
    AVX-512 never reaches by itself) pass the long-run tests too, in a process capped by
    ONEFLOW_CPU_CAPABILITY."""
    if tier == "avx2" and _best_cpu_capability() == "DEFAULT":
        pytest.skip("the CPU has no AVX2")
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, ONEFLOW_CPU_CAPABILITY=tier)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-x",
            os.path.join(here, "test_math_ops.py"),
            "-k",
            "long_runs or capability",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_shifts_like_torch(dtype):
    # PyTorch's rules at the edges: a negative shift or one of the width or more gives 0 to the
    # left and the sign fill to the right.
    rng = np.random.default_rng(11)
    info = np.iinfo(dtype)
    bits = info.bits
    a = rng.integers(info.min, info.max, (6, 40), endpoint=True).astype(dtype)
    lo = 0 if info.min == 0 else -3
    b = rng.integers(lo, bits + 3, (40,)).astype(dtype)  # broadcast along rows
    fa, fb = flow.tensor(a), flow.tensor(b)
    ta, tb = torch.tensor(a), torch.tensor(b)
    pairs = [
        (fa << fb, ta << tb),
        (fa >> fb, ta >> tb),
        (flow.bitwise_left_shift(fa, 3), torch.bitwise_left_shift(ta, 3)),
        (flow.bitwise_right_shift(fa, 2), torch.bitwise_right_shift(ta, 2)),
        (fa.bitwise_left_shift(fb), ta.bitwise_left_shift(tb)),
        (5 << fb, 5 << tb),
        (100 >> fb, 100 >> tb),
        (fa[:, ::2] >> fb[::2], ta[:, ::2] >> tb[::2]),  # strided
        (fa[:0] << fb, ta[:0] << tb),  # empty
    ]
    for f, t in pairs:
        assert str(f.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(f.numpy(), t.numpy())
    fi, ti = fa.clone(), ta.clone()
    fi <<= fb
    ti <<= tb
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    fi >>= 1
    ti >>= 1
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    fa.bitwise_right_shift_(fb)
    ta.bitwise_right_shift_(tb)
    np.testing.assert_array_equal(fa.numpy(), ta.numpy())


def test_shifts_reject_floating_and_bool_like_torch():
    for lib in (flow, torch):
        with pytest.raises(NotImplementedError):
            lib.tensor([1.5]) << 1
        with pytest.raises(NotImplementedError):
            lib.tensor([True]) >> lib.tensor([True])
        # bool with an integer number promotes to int64, as PyTorch
        assert (lib.tensor([True, False]) << 2).tolist() == [4, 0]


@pytest.mark.parametrize("n", [0, 1, 2, 5])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_diff_like_torch(n, dim):
    rng = np.random.default_rng(12)
    a = rng.standard_normal((4, 3, 5)).astype(np.float32)
    pre = rng.standard_normal((4, 3, 5)).astype(np.float32)
    pre = np.take(pre, [0], axis=dim)
    for use_pre in (False, True):
        f = flow.tensor(a, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        kw_f = {"prepend": flow.tensor(pre)} if use_pre else {}
        kw_t = {"prepend": torch.tensor(pre)} if use_pre else {}
        fy, ty = flow.diff(f, n=n, dim=dim, **kw_f), torch.diff(t, n=n, dim=dim, **kw_t)
        np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=1e-6, atol=1e-6)
        if fy.numel():
            w = rng.standard_normal(tuple(fy.shape)).astype(np.float32)
            (fy * flow.tensor(w)).sum().backward()
            (ty * torch.tensor(w)).sum().backward()
            np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-6)
    b = rng.random((3, 7)) < 0.5  # bool: whether neighbours differ
    np.testing.assert_array_equal(
        flow.diff(flow.tensor(b), n=n).numpy(), torch.diff(torch.tensor(b), n=n).numpy()
    )
    i = rng.integers(-9, 9, (3, 7))
    assert flow.tensor(i).diff(n=n).tolist() == torch.tensor(i).diff(n=n).tolist()


def test_diff_bad_arguments_like_torch():
    for lib in (flow, torch):
        with pytest.raises(RuntimeError):
            lib.diff(lib.tensor(1.0))
        with pytest.raises(RuntimeError):
            lib.diff(lib.tensor([1.0, 2.0]), n=-1)


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_values_and_gradients_like_torch(p):
    rng = np.random.default_rng(13)
    a = rng.standard_normal((2, 5, 3))
    b = rng.standard_normal((1, 4, 3))  # batch dims broadcast
    b[0, 1] = a[0, 2]  # a zero distance: zero gradient there (p >= 1), as PyTorch
    for dtype in (np.float32, np.float64):
        f1, f2 = (flow.tensor(v.astype(dtype), requires_grad=True) for v in (a, b))
        t1, t2 = (torch.tensor(v.astype(dtype), requires_grad=True) for v in (a, b))
        fy, ty = flow.cdist(f1, f2, p=p), torch.cdist(t1, t2, p=p)
        tol = 1e-5 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
        if p >= 1:
            w = rng.standard_normal(tuple(ty.shape)).astype(dtype)
            (fy * flow.tensor(w)).sum().backward()
            (ty * torch.tensor(w)).sum().backward()
            for fg, tg in ((f1.grad, t1.grad), (f2.grad, t2.grad)):
                np.testing.assert_allclose(fg.numpy(), tg.numpy(), rtol=tol * 10, atol=tol * 10)


def test_cdist_bad_arguments_like_torch():
    for lib in (flow, torch):
        x = lib.ones(3, 2)
        for bad in (
            (lib.ones(3), x, 2.0),  # 1-D
            (x, lib.ones(3, 4), 2.0),  # columns differ
            (x, x, -1.0),  # negative p
            (lib.ones(3, 2, dtype=lib.int64), lib.ones(3, 2, dtype=lib.int64), 2.0),
        ):
            with pytest.raises(RuntimeError):
                lib.cdist(*bad)


def test_special_namespace_like_torch():
    """oneflow.special: the aliases give the functions' values; zeta against PyTorch (float64
    and float32, broadcasting, numbers for either argument, the poles and undefined points,
    negative non-integer q, large x, q far below 0)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 5)) * 0.9
    for name in ["digamma", "psi", "erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "expit"]:
        for dtype in ["float32", "float64"]:
            got = getattr(flow.special, name)(flow.tensor(a).to(getattr(flow, dtype)))
            want = getattr(torch.special, name)(torch.tensor(a).to(getattr(torch, dtype)))
            assert str(got.dtype) == str(want.dtype).replace("torch", "oneflow")
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    for name, args, kwargs in [
        ("round", (), {"decimals": 1}),
        ("logsumexp", (1,), {}),
        ("softmax", (1,), {}),
        ("log_softmax", (0,), {"dtype": "float64"}),
        ("logit", (), {}),
        ("gammaln", (), {}),
        ("ndtr", (), {}),
    ]:
        kw = {k: getattr(flow, v) for k, v in kwargs.items() if k == "dtype"}
        tkw = {k: getattr(torch, v) for k, v in kwargs.items() if k == "dtype"}
        kw.update({k: v for k, v in kwargs.items() if k != "dtype"})
        tkw.update({k: v for k, v in kwargs.items() if k != "dtype"})
        x = np.abs(a) * 0.5 + 0.1 if name in ("logit", "gammaln") else a
        got = getattr(flow.special, name)(flow.tensor(x).float(), *args, **kw)
        want = getattr(torch.special, name)(torch.tensor(x).float(), *args, **tkw)
        assert str(got.dtype) == str(want.dtype).replace("torch", "oneflow"), name
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    x = np.concatenate([rng.uniform(1.01, 12, 40), [2, 3, 1, 0.5, 4, 2, 2, 2, 60, np.nan, 3]])
    q = np.concatenate([rng.uniform(-20, 30, 40), [1, 2, 1, 1, -1, -1.5, 0, -60.5, 0.3, 1, np.inf]])
    for dtype, rtol in [("float64", 1e-12), ("float32", 2e-6)]:
        got = flow.special.zeta(flow.tensor(x).to(getattr(flow, dtype)), flow.tensor(q))
        want = torch.special.zeta(torch.tensor(x).to(getattr(torch, dtype)), torch.tensor(q))
        assert str(got.dtype) == str(want.dtype).replace("torch", "oneflow")
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, equal_nan=True)
    grid = flow.special.zeta(flow.tensor([[2.0], [3.0]]), flow.tensor([1.0, 2.0, 5.0]))
    want = torch.special.zeta(torch.tensor([[2.0], [3.0]]), torch.tensor([1.0, 2.0, 5.0]))
    np.testing.assert_allclose(grid.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(
        flow.special.zeta(flow.tensor([2.0, 4.0]), 1.0).numpy(),
        torch.special.zeta(torch.tensor([2.0, 4.0]), 1.0).numpy(),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        flow.special.zeta(2.0, flow.tensor([1.0, 3.0])).numpy(),
        torch.special.zeta(2.0, torch.tensor([1.0, 3.0])).numpy(),
        rtol=1e-6,
    )
    # Every q infinite (the loop bound must not overflow): NaN, as PyTorch's 0 * inf tail.
    np.testing.assert_array_equal(
        flow.special.zeta(flow.tensor([2.0]), flow.tensor([np.inf])).numpy(),
        torch.special.zeta(torch.tensor([2.0]), torch.tensor([np.inf])).numpy(),
    )
    ints = flow.special.zeta(flow.tensor([2, 3]), flow.tensor([1, 2]))
    assert ints.dtype == flow.float32
    np.testing.assert_allclose(ints.numpy(), [math.pi**2 / 6, 1.2020569 - 1], rtol=1e-6)


def _scalar_cases(lib):
    u8, i8 = lib.tensor([3, 200], dtype=lib.uint8), lib.tensor([-128, 5], dtype=lib.int8)
    h = lib.tensor([1e-3, 0.0, 2.0, -7.5], dtype=lib.float16)
    b = lib.tensor([1.0, 2.0, 3e38], dtype=lib.bfloat16)
    cases = {
        # number - tensor in the promoted type (negating an unsigned tensor first wrapped)
        "2.5 - uint8": lambda: 2.5 - u8,
        "2.5 - int8": lambda: 2.5 - i8,
        "3 - int64": lambda: 3 - lib.tensor([1, 2]),
        "sub(2, uint8, alpha=2)": lambda: lib.sub(2, u8, alpha=2),
        "sub(1.5, float, alpha=3)": lambda: lib.sub(1.5, lib.tensor([1.0, 2.0]), alpha=3),
        # 16-bit floats times or over numbers they cannot hold: in float32, rounded once (add
        # and sub cast the number to the tensor's type, as PyTorch)
        "f16 * 1e5": lambda: h * 1e5,
        "f16 + 1e5": lambda: h + 1e5,
        "1e5 - f16": lambda: 1e5 - h,
        "f16 / 1e5": lambda: h / 1e5,
        "1e5 / f16": lambda: 1e5 / h,
        "f16 + 0.1": lambda: h + 0.1,
        "f16 - 0.1": lambda: h - 0.1,
        "0.1 - f16": lambda: 0.1 - h,
        "f16 * 100000 (int)": lambda: h * 100000,
        "bf16 * 0.1": lambda: b * 0.1,
        "bf16 + 1e-3": lambda: b + 1e-3,
        "f16 * 0.5 (exact)": lambda: h * 0.5,
    }

    def inplace_mul():
        x = h.clone()
        x.mul_(1e5)
        return x

    def inplace_add():
        x = h.clone()
        x.add_(0.1)
        return x

    # in-place results narrowed within their kind, as PyTorch allows
    def f32_add_f64():
        x = lib.tensor([1.0, 2.0])
        x += lib.tensor([0.1, 1.0], dtype=lib.float64)
        return x

    def i32_add_i64():
        x = lib.ones(2, dtype=lib.int32)
        x.add_(lib.tensor([5, 2**33 + 1]))
        return x

    def u8_mul_i64():
        x = lib.tensor([3, 4], dtype=lib.uint8)
        x.mul_(lib.tensor([100, 2]))
        return x

    def addcmul_f64():
        x = lib.ones(3)
        x.addcmul_(lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64), lib.ones(3))
        return x

    cases.update(
        {
            "f16.mul_(1e5)": inplace_mul,
            "f16.add_(0.1)": inplace_add,
            "f32 += f64": f32_add_f64,
            "i32.add_(i64)": i32_add_i64,
            "u8.mul_(i64)": u8_mul_i64,
            "f32.addcmul_(f64)": addcmul_f64,
        }
    )
    return cases


def test_numbers_and_narrowing_in_place_results_like_torch():
    got, want = _scalar_cases(flow), _scalar_cases(torch)
    for name, f in want.items():
        w, g = f(), got[name]()
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], name
        np.testing.assert_array_equal(g.float().numpy(), w.float().numpy(), err_msg=name)


def _refused(lib):
    return [
        lambda: True - lib.tensor([1, 2]),
        lambda: 1.5 - lib.tensor([True]),
        lambda: lib.sub(2, lib.tensor([1, 2]), alpha=1.5),
        lambda: lib.add(lib.tensor([1]), lib.tensor([1]), alpha=2.5),
        lambda: lib.ones(2, dtype=lib.int32).add_(lib.ones(2)),
        lambda: lib.ones(2, dtype=lib.bool).add_(lib.ones(2, dtype=lib.int64)),
    ]


def test_bool_subtraction_and_float_alpha_errors_like_torch():
    for lib in (flow, torch):
        for f in _refused(lib):
            with pytest.raises(RuntimeError):
                f()


def _edge_gradient_cases(lib):
    def grads(f, *values):
        ts = [lib.tensor(v, requires_grad=True) for v in values]
        (f(*ts) * lib.arange(1.0, 1.0 + ts[0].numel()).reshape(ts[0].shape)).sum().backward()
        return [t.grad for t in ts]

    return {
        # zeros in the scanned line: the first gets the product of the others, the rest 0
        "cumprod zeros": lambda: grads(lambda x: lib.cumprod(x, 0), [2.0, 0.0, 3.0, 0.0, 4.0]),
        "cumprod rows": lambda: grads(
            lambda x: lib.cumprod(x, 1), [[0.0, 2.0, 0.0, 3.0], [1.0, 2.0, 3.0, 4.0]]
        ),
        "cumprod no zeros": lambda: grads(lambda x: lib.cumprod(x, 0), [2.0, -1.5, 3.0]),
        "pow(x, 0)": lambda: grads(lambda x: lib.pow(x, 0.0), [0.0, 1.0, -2.0]),
        "pow(0, e)": lambda: grads(lambda e: lib.pow(0.0, e), [0.0, 1.0, 2.5]),
        "pow(b, e) at 0": lambda: grads(lib.pow, [0.0, 0.0, 2.0], [0.0, 1.0, 0.0]),
        "atan2 origin": lambda: grads(lib.atan2, [0.0, 1.0], [0.0, -2.0]),
        "xlogy zeros": lambda: grads(lambda x: lib.xlogy(x, lib.tensor([0.0, 3.0])), [0.0, 2.0]),
        # ties with a tensor bound keep the gradient on the input, as PyTorch
        "clamp min ties": lambda: grads(lib.clamp, [1.0, 2.0, 3.0], [1.0, 0.0, 3.0]),
        "clamp max ties": lambda: grads(
            lambda x, hi: lib.clamp(x, None, hi), [1.0, 2.0, 3.0], [1.0, 5.0, 3.0]
        ),
        "clamp both": lambda: grads(
            lambda x, lo, hi: lib.clamp(x, lo, hi),
            [0.5, 2.0, 1.0],
            [1.0, 1.0, 1.0],
            [1.5, 1.5, 1.0],
        ),
    }


def test_gradients_at_zeros_and_ties_like_torch():
    got, want = _edge_gradient_cases(flow), _edge_gradient_cases(torch)
    for name in want:
        for g, w in zip(got[name](), want[name]()):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, err_msg=name)


def test_clamp_with_nan_and_tensor_bounds_like_torch():
    nan = float("nan")
    for lo, hi in [
        (nan, 1.0),
        (0.0, nan),
        ([1.0, nan, 0.0, 1.0], None),
        ([1.0, nan, 0.0, 1.0], [1.5, 1.5, 1.5, 0.5]),
    ]:
        for grad in (False, True):
            res = []
            for lib in (flow, torch):
                x = lib.tensor([0.5, 2.0, nan, 1.0], requires_grad=grad)
                b, c = (lib.tensor(v) if isinstance(v, list) else v for v in (lo, hi))
                res.append(lib.clamp(x, b, c).detach().numpy())
            np.testing.assert_array_equal(res[0], res[1], err_msg=f"{lo} {hi} {grad}")
    # an integer input with a float bound promotes; lo > hi gives hi
    for args in [([1, 5], [2.5, 0.0], None), ([1.0, 5.0], [3.0, 3.0], [2.0, 2.0])]:
        f, t = (
            lib.clamp(*(lib.tensor(a) if a is not None else None for a in args))
            for lib in (flow, torch)
        )
        assert str(f.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(f.numpy(), t.numpy())


def _range_edge_cases(lib):
    big = [1e20, -1e30, 3e38, 1e5, -2.5, 0.0, math.inf, -math.inf, math.nan, 1.5e18, 2e18]
    a = [1e30, -1e30, 5.0, 1e30, math.inf, 1.0, math.nan, 7.5, 1e38]
    b = [1e-30, 3e-20, 0.0, 7.0, 2.0, math.inf, 1.0, -2.0, 3e-38]
    cases = {
        # Sleef's float asinh/acosh overflowed from ~1.8e19 (x^2)
        "asinh big": lambda: lib.asinh(lib.tensor(big)),
        "acosh big": lambda: lib.acosh(lib.tensor([1e20, 3e38, -1e20, 1.0, 0.5, math.inf, 2e18])),
        # each element cast before the sum; 16-bit means accumulate in float32
        "sum int dtype": lambda: lib.tensor([1.6, -4.6, 2.5]).sum(dtype=lib.int32),
        "sum float64 dtype": lambda: lib.sum(lib.tensor([1e8, 1.0, -1e8]), dtype=lib.float64),
        "mean f16": lambda: lib.tensor([60000.0, 60000.0], dtype=lib.float16).mean(),
        "mean bf16 dim": lambda: lib.tensor([[3e38, 3e38], [1.0, 2.0]], dtype=lib.bfloat16).mean(1),
    }
    for dt in ("float32", "float64"):
        for op in ("fmod", "remainder", "floor_divide"):
            # Sleef's fmod gave NaN once a / b left its range (fmod(1e30, 1e-30))
            cases[f"{op} {dt}"] = lambda op=op, dt=dt: getattr(lib, op)(
                lib.tensor(a, dtype=getattr(lib, dt)), lib.tensor(b, dtype=getattr(lib, dt))
            )
    return cases


def test_results_at_the_edges_of_the_float_range_like_torch():
    got, want = _range_edge_cases(flow), _range_edge_cases(torch)
    for name in want:
        g, w = got[name](), want[name]()
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], name
        np.testing.assert_allclose(g.float().numpy(), w.float().numpy(), rtol=2e-7, err_msg=name)


def test_bool_add_with_alpha_and_huge_python_ints_like_torch():
    for a, b, alpha in [([True, False], True, 2), ([1, 2], True, 2), ([True, False], True, 0)]:
        got, want = (
            flow.add(flow.tensor(a), b, alpha=alpha),
            torch.add(torch.tensor(a), b, alpha=alpha),
        )
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    t = flow.tensor([1.0, 2.0])
    for f in (
        lambda: flow.pow(t, 2**70),
        lambda: flow.clamp(t, 2**70),
        lambda: flow.add(t, 1, alpha=2**70),
        lambda: flow.tensor([1, 2]) * 2**64,
    ):
        with pytest.raises(OverflowError):
            f()


def test_median_of_all_elements_shares_its_gradient_among_ties_like_torch():
    nan, inf = math.nan, math.inf
    for v in (
        [1.0, 2.0, 2.0, 3.0],
        [1.0, nan, nan, 3.0],
        [[1.0, 2.0], [2.0, 3.0]],
        [inf, inf, 1.0],
    ):
        res = []
        for lib in (flow, torch):
            x = lib.tensor(v, requires_grad=True)
            m = x.median()
            (m * 3).backward()
            res.append((m.detach().numpy(), x.grad.numpy()))
        np.testing.assert_array_equal(res[0][0], res[1][0])
        np.testing.assert_array_equal(res[0][1], res[1][1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("form", ["add", "sub", "add_", "add_view_", "add_broadcast", "add_int"])
def test_add_and_sub_with_alpha_like_torch(form, dtype):
    # Same-shape floating operands take one fused pass (Note [Fused alpha]); broadcast and
    # integer operands multiply first. Values and gradients against PyTorch.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((37, 129))
    b = rng.standard_normal((129,) if form == "add_broadcast" else (37, 129))
    results = {}
    for lib in (flow, torch):
        dt = getattr(lib, dtype)
        if form == "add_int":
            x = lib.tensor((a * 10).astype(np.int64))
            y = lib.tensor((b * 10).astype(np.int64))
            results[lib.__name__] = [lib.add(x, y, alpha=-3), lib.sub(x, y, alpha=7)]
            continue
        x = lib.tensor(a, dtype=dt, requires_grad=not form.endswith("_"))
        y = lib.tensor(b, dtype=dt, requires_grad=True)
        if form == "add":
            out = lib.add(x, y, alpha=-0.37)
        elif form == "add_broadcast":
            out = lib.add(x, y, alpha=2.5)
        elif form == "sub":
            out = lib.sub(x, y, alpha=1.7)
        elif form == "add_":
            out = x.clone().add_(y, alpha=-0.01)
        else:  # in place through a transposed view of a buffer
            base = lib.tensor(a.T.copy(), dtype=dt)
            out = base.t().add_(y, alpha=3)
        grads = lib.autograd.grad((out.float() * 1.5).sum(), [t for t in (x, y) if t.requires_grad])
        results[lib.__name__] = [out] + list(grads)
    tol = {"float32": 1e-6, "float64": 1e-14, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]  # 1 ulp
    for got, want in zip(results["oneflow"], results["torch"]):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(
            got.detach().float().numpy(), want.detach().float().numpy(), rtol=tol, atol=tol
        )


@pytest.mark.parametrize(
    "mode",
    [
        "use_mm_for_euclid_dist_if_necessary",
        "use_mm_for_euclid_dist",
        "donot_use_mm_for_euclid_dist",
    ],
)
def test_cdist_compute_modes_match_torch(mode):
    import torch

    rng = np.random.default_rng(4)
    a = rng.random((2, 40, 16)).astype(np.float32)
    b = rng.random((2, 30, 16)).astype(np.float32)
    fa, fb = flow.tensor(a, requires_grad=True), flow.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    fo, to = flow.cdist(fa, fb, compute_mode=mode), torch.cdist(ta, tb, compute_mode=mode)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    fo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(fb.grad.numpy(), tb.grad.numpy(), rtol=1e-3, atol=1e-4)
    with pytest.raises(ValueError, match="compute_mode"):
        flow.cdist(fa, fb, compute_mode="fast")
