"""oneflow.testing: assert_close and make_tensor (PyTorch's torch.testing)."""

import cmath
import collections.abc
import math

import numpy as np

import oneflow

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# (rtol, atol) by dtype, PyTorch's defaults
_TOLERANCES = {
    oneflow.float16: (1e-3, 1e-5),
    oneflow.bfloat16: (1.6e-2, 1e-5),
    oneflow.float32: (1.3e-6, 1e-5),
    oneflow.float64: (1e-7, 1e-7),
    oneflow.complex64: (1.3e-6, 1e-5),
    oneflow.complex128: (1e-7, 1e-7),
}


def _tolerances(dtype, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    if rtol is not None:
        return rtol, atol
    return _TOLERANCES.get(dtype, (0.0, 0.0))


class _Mismatch(AssertionError):
    pass


def _fail(msg, default, path):
    text = default if msg is None else (msg(default) if callable(msg) else msg)
    if path and msg is None:
        text += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)
    raise _Mismatch(text)


def _compare_tensors(
    actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg, path
):
    for attr, check in (("shape", True), ("device", check_device), ("dtype", check_dtype)):
        a, b = getattr(actual, attr), getattr(expected, attr)
        if check and a != b:
            _fail(msg, f"The values for attribute '{attr}' do not match: {a} != {b}.", path)
    if check_stride and actual.stride() != expected.stride():
        _fail(
            msg,
            f"The values for attribute 'stride()' do not match: {actual.stride()} != "
            f"{expected.stride()}.",
            path,
        )
    if actual.dtype != expected.dtype:
        common = oneflow.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    rtol, atol = _tolerances(actual.dtype, rtol, atol)
    a = (
        actual.detach().cpu().to(oneflow.float64).numpy()
        if actual.dtype.is_floating_point
        else (actual.detach().cpu().numpy())
    )
    b = (
        expected.detach().cpu().to(oneflow.float64).numpy()
        if expected.dtype.is_floating_point
        else (expected.detach().cpu().numpy())
    )
    if a.dtype == np.bool_:
        bad = a != b
    else:
        # complex values compare as PyTorch's: |a - b| <= atol + rtol * |b|
        wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
        a = a.astype(wide)
        b = b.astype(wide)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
            close |= a == b  # infinities of the same sign
        bad = ~close
    if not bad.any():
        return
    n_bad, total = int(bad.sum()), bad.size
    lines = ["Tensor-likes are not close!", ""]
    lines.append(f"Mismatched elements: {n_bad} / {total} ({100.0 * n_bad / total:.1f}%)")
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.abs(a - b).astype(np.float64)
        diff = np.where(bad, diff, 0.0)
        rel = np.where(bad, diff / np.abs(b).astype(np.float64), 0.0)
    ai = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), -1, diff))), diff.shape)
    ri = np.unravel_index(int(np.nanargmax(np.where(np.isnan(rel), -1, rel))), rel.shape)
    lines.append(
        f"Greatest absolute difference: {diff[ai]} at index {tuple(int(i) for i in ai)} "
        f"(up to {atol} allowed)"
    )
    lines.append(
        f"Greatest relative difference: {rel[ri]} at index {tuple(int(i) for i in ri)} "
        f"(up to {rtol} allowed)"
    )
    _fail(msg, "\n".join(lines), path)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path):
    if check_dtype and type(actual) is not type(expected):
        _fail(
            msg,
            f"The values for attribute 'type' do not match: {type(actual)} != {type(expected)}.",
            path,
        )
    if isinstance(actual, complex) or isinstance(expected, complex):
        dtype = oneflow.complex128
    elif isinstance(actual, float) or isinstance(expected, float):
        dtype = oneflow.float64
    else:
        dtype = None
    rtol, atol = _tolerances(dtype, rtol, atol)
    if cmath.isnan(actual) or cmath.isnan(expected):
        if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
    elif actual == expected or abs(actual - expected) <= atol + rtol * abs(expected):
        return
    diff = abs(actual - expected)
    rel = diff / abs(expected) if expected != 0 else math.inf
    _fail(
        msg,
        f"Scalars are not close!\n\nExpected {expected} but got {actual}.\n"
        f"Absolute difference: {diff} (up to {atol} allowed)\n"
        f"Relative difference: {rel} (up to {rtol} allowed)",
        path,
    )


def _is_tensor_like(x):
    return isinstance(x, (oneflow.Tensor, np.ndarray))


def _compare(actual, expected, path, **kw):
    if isinstance(actual, np.ndarray):
        actual = oneflow.tensor(actual)
    if isinstance(expected, np.ndarray):
        expected = oneflow.tensor(expected)
    if isinstance(actual, oneflow.Tensor) or isinstance(expected, oneflow.Tensor):
        if not (isinstance(actual, oneflow.Tensor) and isinstance(expected, oneflow.Tensor)):
            if kw["allow_subclasses"] is False or not (
                isinstance(actual, (oneflow.Tensor, int, float, bool, complex))
                and isinstance(expected, (oneflow.Tensor, int, float, bool, complex))
            ):
                raise TypeError(
                    f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}."
                )
            _fail(
                kw["msg"],
                f"Except for Python scalars, type equality is required if allow_subclasses=False, "
                f"but got {type(actual)} and {type(expected)} instead.",
                path,
            )
        _compare_tensors(
            actual,
            expected,
            kw["rtol"],
            kw["atol"],
            kw["equal_nan"],
            kw["check_device"],
            kw["check_dtype"],
            kw["check_stride"],
            kw["msg"],
            path,
        )
        return
    numbers = (bool, int, float, complex)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        _compare_numbers(
            actual,
            expected,
            kw["rtol"],
            kw["atol"],
            kw["equal_nan"],
            kw["check_dtype"],
            kw["msg"],
            path,
        )
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(
        expected, collections.abc.Mapping
    ):
        if set(actual) != set(expected):
            _fail(
                kw["msg"],
                f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                f"{sorted(map(repr, set(expected) - set(actual)))}\nExtra keys in the actual "
                f"mapping: {sorted(map(repr, set(actual) - set(expected)))}",
                path,
            )
        for k in expected:
            _compare(actual[k], expected[k], path + [k], **kw)
        return
    seq = (collections.abc.Sequence,)
    if (
        isinstance(actual, seq)
        and isinstance(expected, seq)
        and not isinstance(actual, str)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            _fail(
                kw["msg"],
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                path,
            )
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, path + [i], **kw)
        return
    if actual is None and expected is None:
        return
    raise TypeError(
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}."
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    msg=None,
):
    """Raises AssertionError unless actual and expected (tensors, arrays, numbers, or sequences
    and mappings of them) are close: |actual - expected| <= atol + rtol |expected| elementwise,
    with PyTorch's default tolerances per dtype and its messages."""
    try:
        _compare(
            actual,
            expected,
            [],
            allow_subclasses=allow_subclasses,
            rtol=rtol,
            atol=atol,
            equal_nan=equal_nan,
            check_device=check_device,
            check_dtype=check_dtype,
            check_stride=check_stride,
            msg=msg,
        )
    except _Mismatch as e:
        raise AssertionError(str(e)) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The older form: dtypes need not match, NaNs compare equal by default."""
    if not isinstance(actual, oneflow.Tensor):
        actual = oneflow.tensor(actual)
    if not isinstance(expected, oneflow.Tensor):
        expected = oneflow.tensor(expected, dtype=actual.dtype)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        msg=msg or None,
    )


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad=False,
    noncontiguous=False,
    exclude_zero=False,
    memory_format=None,
):
    """A tensor of `shape` with values drawn uniformly from [low, high) (PyTorch's defaults per
    dtype: [-9, 9) for numbers, booleans at random)."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, oneflow.Size)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if low is not None and high is not None and low > high:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
    if dtype == oneflow.bool:
        t = oneflow.randint(0, 2, shape, device=device).to(oneflow.bool)
    elif dtype in (oneflow.uint8,):
        lo = 0 if low is None else max(0, int(math.ceil(low)))
        hi = 10 if high is None else int(high)
        t = oneflow.randint(lo, max(hi, lo + 1), shape, device=device, dtype=dtype)
    elif not dtype.is_floating_point:
        lo = -9 if low is None else int(math.ceil(low))
        hi = 10 if high is None else int(high)
        t = oneflow.randint(lo, max(hi, lo + 1), shape, device=device, dtype=dtype)
    else:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        t = (oneflow.rand(*shape, device=device, dtype=oneflow.float64) * (hi - lo) + lo).to(dtype)
    if exclude_zero:
        replacement = 1 if not dtype.is_floating_point else oneflow.finfo(dtype).tiny
        t = oneflow.where(t == 0, oneflow.full_like(t, replacement), t)
    if noncontiguous and t.numel() > 1:
        wide = oneflow.repeat_interleave(t.reshape(-1), 2).reshape(*shape[:-1], 2 * shape[-1])
        t = wide[..., ::2]
    if requires_grad:
        t.requires_grad_(True)
    return t
