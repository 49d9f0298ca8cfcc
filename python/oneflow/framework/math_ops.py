"""Pointwise math of ``oneflow.*`` and ``oneflow.Tensor``: the kernels' functions from ``_C``
under their public names, aliases, in-place forms, Python operators, and the composites written
on top of them (square, frac, isnan, lerp, addcmul, isclose, ...)."""

import builtins
import math
import warnings

from oneflow._oneflow_internal import _C, Tensor

# Functions with one kernel each, as the core's X-macro lists name them (op_kinds.h); the name
# is also the Tensor method. trigamma stays internal (digamma's derivative).
UNARY = [name for name in _C._unary_fns if name != "trigamma"]
BINARY = list(_C._binary_fns)
ALIASES = {
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "negative": "neg",
    "absolute": "abs",
    "fix": "trunc",
    "multiply": "mul",
    "subtract": "sub",
    "divide": "div",
    "true_divide": "div",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
    "arctan2": "atan2",
    "clip": "clamp",
    "sgn": "sign",  # for real tensors
}


def _is_float(dtype):
    return dtype.is_floating_point


def _can_cast(src, dst):
    """PyTorch's rule for writing a result of dtype `src` into a tensor of dtype `dst`."""
    if src == dst:
        return True
    if src.is_floating_point and not dst.is_floating_point:
        return False
    if dst == _bool() and src != _bool():
        return False
    return True


def _bool():
    from oneflow._oneflow_internal import bool as b

    return b


def _uint8():
    from oneflow._oneflow_internal import uint8

    return uint8


def inplace(name, fn):
    """The in-place form `name` of an out-of-place function: computes, then writes into self."""

    def method(self, *args, **kwargs):
        # A tensor in an autograd graph is read through a copy, so the function's saved input
        # is not the one the write below modifies.
        result = fn(_C.clone(self) if self.requires_grad else self, *args, **kwargs)
        if not _can_cast(result.dtype, self.dtype):
            raise RuntimeError(
                f"{name}: result type {result.dtype} can't be cast to the desired output type "
                f"{self.dtype}"
            )
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(
                f"{name}: output with shape {tuple(self.shape)} doesn't match the broadcast "
                f"shape {tuple(result.shape)}"
            )
        return _C.copy_(self, result)

    method.__name__ = name
    return method


# ---- composites -------------------------------------------------------------------------


def square(input):
    if input.dtype == _bool():  # PyTorch: pow(bool, 2) is int64
        input = input.long()
    return _C.mul(input, input)


def _floating_only(op, input):
    """The PyTorch CPU kernel of op exists for floating dtypes only."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"{op}: expected a floating point input, got {input.dtype}")


def frac(input):
    _floating_only("frac", input)
    return _C._activation(_C._activation_kinds["frac"], input, 0.0, 0.0, 0.0)  # x - trunc(x)


def isnan(input):
    return _C.ne(input, input)


def isinf(input):
    if input.dtype.is_complex:  # either part infinite
        return isinf(input.real) | isinf(input.imag)
    if not _is_float(input.dtype):
        return _C.ne(input, input)  # all False
    return _C.eq(_C.abs(input), math.inf)


def isposinf(input):
    if input.dtype.is_complex:
        raise RuntimeError("isposinf does not support complex inputs.")
    if not _is_float(input.dtype):
        return _C.ne(input, input)
    return _C.eq(input, math.inf)


def isneginf(input):
    if input.dtype.is_complex:
        raise RuntimeError("isneginf does not support complex inputs.")
    if not _is_float(input.dtype):
        return _C.ne(input, input)
    return _C.eq(input, -math.inf)


def isfinite(input):
    if input.dtype.is_complex:  # both parts finite
        return isfinite(input.real) & isfinite(input.imag)
    if not _is_float(input.dtype):
        return _C.eq(input, input)  # all True
    return _C.lt(_C.abs(input), math.inf)


def isreal(input):
    if input.dtype.is_complex:  # a zero imaginary part
        return _C.eq(input.imag, 0)
    return _C.eq(input, input) | _C.ne(input, input)


_FLOAT_MAX = {}  # dtype -> finfo(dtype).max, the default replacement of +inf
_NAN_TO_NUM = _C._activation_kinds["nan_to_num"]


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    dtype = input.dtype
    if dtype.is_complex:  # each part on its own, as PyTorch
        pairs = nan_to_num(_C.view_as_real(input), nan, posinf, neginf)
        return _C.view_as_complex(pairs)
    if not _is_float(dtype):
        return _C.clone(input)
    big = _FLOAT_MAX.get(dtype)
    if big is None:
        from oneflow.framework.dtype_info import finfo

        big = _FLOAT_MAX[dtype] = finfo(dtype).max
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    return _C._activation(_NAN_TO_NUM, input, nan, posinf, neginf)


def logit(input, eps=None):
    if input.dtype.is_complex:
        raise TypeError(f"logit: {input.dtype} inputs are not supported")
    if not input.dtype.is_floating_point:  # integers and bool are computed in the default dtype
        import oneflow

        input = input.to(oneflow.get_default_dtype())
    x = input if eps is None else _C.clamp(input, eps, 1.0 - eps)
    return _C.log(_C.div(x, _C.add(_C.neg(x), 1.0)))


def xlogy(input, other):
    for t in (input, other):
        if isinstance(t, Tensor) and t.dtype.is_complex:
            raise TypeError(f"xlogy: {t.dtype} inputs are not supported")
    if not isinstance(input, Tensor):
        input = _scalar_like(other, input)
    if not isinstance(other, Tensor):
        other = _scalar_like(input, other)
    import oneflow

    dtype = oneflow.result_type(input, other)  # a 0-d operand does not raise the other's
    if not dtype.is_floating_point:
        dtype = oneflow.get_default_dtype()
    input, other = input.to(dtype), other.to(dtype)
    # x log(y), with log(1) where x == 0 and y is 0, negative or inf (0 * -inf, 0 * NaN and
    # 0 * inf would not give PyTorch's 0). Elsewhere at x == 0 the product is 0 as it is, and
    # the x-gradient log(y), as PyTorch's (0 where y <= 0); a NaN y stays NaN.
    odd = _C.logical_and(_C.eq(input, 0), _C.logical_or(_C.le(other, 0), _C.eq(other, math.inf)))
    return _C.mul(input, _C.log(_C.where(odd, 1.0, other)))


def _fused(*tensors):
    """Whether the fused CPU kernel of addcmul/addcdiv/lerp takes these operands: CPU tensors
    of floating dtypes (other devices and integer operands compose other ops)."""
    return all(
        isinstance(t, Tensor) and t.device.type == "cpu" and t.dtype.is_floating_point
        for t in tensors
    )


def _check_lerp(input, end, weight):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"lerp: expected a floating point input, got {input.dtype}")
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype != input.dtype:
            raise RuntimeError(f"lerp: expected dtype {input.dtype} for `{name}`, got {t.dtype}")


def lerp(input, end, weight):
    _check_lerp(input, end, weight)
    if _fused(input, end, *([weight] if isinstance(weight, Tensor) else [])):
        return _C._lerp(input, end, weight)
    return _C.add(input, _C.mul(weight, _C.sub(end, input)))


def _check_addcmul(input, tensor1, tensor2):
    if _bool() in (input.dtype, tensor1.dtype, tensor2.dtype):
        raise NotImplementedError("addcmul: bool inputs are not supported")


def addcmul(input, tensor1, tensor2, *, value=1):
    _check_addcmul(input, tensor1, tensor2)
    if _fused(input, tensor1, tensor2):
        return _C._addcmul(input, tensor1, tensor2, value)
    return _C.add(input, _C.mul(_C.mul(tensor1, tensor2), value))


def _check_addcdiv(input, tensor1, tensor2):
    if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
        raise RuntimeError(
            "addcdiv: integer division with addcdiv is not supported; use "
            "addcdiv(input, tensor1.float(), tensor2) for a true division"
        )


def addcdiv(input, tensor1, tensor2, *, value=1):
    _check_addcdiv(input, tensor1, tensor2)
    if _fused(input, tensor1, tensor2):
        return _C._addcdiv(input, tensor1, tensor2, value)
    return _C.add(input, _C.mul(_C.div(tensor1, tensor2), value))


def _fused_inplace(name, fused, check, fallback):
    """The in-place form of addcmul/addcdiv/lerp: the fused kernel writes self directly."""

    first, second = ("end", "weight") if name == "lerp_" else ("tensor1", "tensor2")

    def method(self, *args, **kwargs):
        a = args[0] if args else kwargs.get(first)
        b = args[1] if len(args) > 1 else kwargs.get(second)
        if isinstance(a, Tensor) and b is not None and len(args) <= 2:
            check(self, a, b)
            if name == "lerp_":
                if _fused(self, a, *([b] if isinstance(b, Tensor) else [])):
                    return fused(self, a, b)
            elif _fused(self, a, b):
                return fused(self, a, b, kwargs.get("value", 1))
        return fallback(self, *args, **kwargs)

    method.__name__ = name
    return method


def _is_nan_number(v):
    return isinstance(v, builtins.float) and math.isnan(v)


def _clamp_to(out, bound, lower):
    """out clamped on one side by a tensor bound, as PyTorch: the bound where out passes it or
    the bound is NaN (a NaN out stays), so a tie keeps out and its gradient."""
    b = bound if isinstance(bound, Tensor) else _scalar_like(out, bound)
    passed = _C.lt(out, b) if lower else _C.gt(out, b)
    return _C.where(_C.logical_or(passed, isnan(b)), b, out)


def clamp(input, min=None, max=None):
    if (
        isinstance(min, Tensor)
        or isinstance(max, Tensor)
        or _is_nan_number(min)
        or _is_nan_number(max)
    ):
        if input.dtype == _bool():
            raise NotImplementedError("clamp: bool inputs are not supported")
        out = input
        if not _records_grad(input, min, max):
            # maximum/minimum propagate NaN as clamp does; only their gradients differ (ties)
            if min is not None:
                out = _C.maximum(out, min if isinstance(min, Tensor) else _scalar_like(out, min))
            if max is not None:
                out = _C.minimum(out, max if isinstance(max, Tensor) else _scalar_like(out, max))
            return out
        if min is not None:
            out = _clamp_to(out, min, True)
        if max is not None:
            out = _clamp_to(out, max, False)
        return out
    return _C.clamp(input, min, max)


def _records_grad(*values):
    import oneflow

    return oneflow.is_grad_enabled() and any(
        isinstance(v, Tensor) and v.requires_grad for v in values
    )


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def _scalar_like(t, value):
    """A Python number as a 0-d tensor for an op with t. With a floating t, a float is kept in
    double: a 0-d operand does not raise t's dtype (PyTorch's promotion), and a float64 t then
    computes with the number itself, not its float32 rounding."""
    import oneflow

    if isinstance(value, float) and t.dtype.is_floating_point:
        return oneflow.tensor(value, dtype=oneflow.float64, device=t.device)
    return oneflow.tensor(value, device=t.device)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"isclose: expected both tensors to have the same dtype, got {input.dtype} and "
            f"{other.dtype}"
        )
    if input.dtype == _bool():
        return _C.eq(input, other)
    close = _C.eq(input, other)
    if input.dtype.is_complex:  # |a - b| <= atol + rtol |b|; NaN in either part is NaN
        diff = _C.abs(_C.sub(input, other))
        tol = _C.add(_C.mul(_C.abs(other), rtol), atol)
        close = close | (isfinite(diff) & _C.le(diff, tol))
        if equal_nan:
            close = close | (isnan(input) & isnan(other))
    elif _is_float(input.dtype):
        diff = _C.abs(_C.sub(input, other))
        tol = _C.add(_C.mul(_C.abs(other), rtol), atol)
        close = close | (isfinite(diff) & _C.le(diff, tol))
        if equal_nan:
            close = close | (isnan(input) & isnan(other))
    else:
        diff = _C.abs(_C.sub(input.double(), other.double()))
        close = close | _C.le(diff, _C.add(_C.mul(_C.abs(other.double()), rtol), atol))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(_all(isclose(input, other, rtol, atol, equal_nan)))


def equal(input, other):
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(_all(_C.eq(input, other)))


def _all(mask):
    return _C.sum(_C.logical_not(mask)).numpy().item() == 0


# ---- registration -------------------------------------------------------------------------


def _rbinary(fn):
    return lambda self, other: fn(other, self)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along dim (for bool: whether neighbours differ), with prepend and
    append joined to input along dim first (n = 0: input itself)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    x = input
    if n == 0:  # PyTorch: the input itself, prepend and append ignored
        return input
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        x = _C.cat(parts, dim)
    d = dim % x.ndim
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = _C.narrow(x, d, 1, size - 1), _C.narrow(x, d, 0, size - 1)
        x = _C.ne(hi, lo) if str(x.dtype) == "oneflow.bool" else _C.sub(hi, lo)
    return x


def cdist(x1, x2, p=2.0, compute_mode=None):
    """Distances between the rows of x1 (.., P, M) and of x2 (.., R, M): (.., P, R), the p-norm of
    each difference (its gradient is zero where two rows are equal, as PyTorch's). p = 2 with more
    than 25 rows takes PyTorch's matrix-product form (compute_mode as there); otherwise the
    differences are formed whole: memory P * R * M per batch."""
    for name, t in (("x1", x1), ("x2", x2)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
        if not _is_float(t.dtype):
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {t.dtype}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = (
        None,
        "use_mm_for_euclid_dist_if_necessary",
        "use_mm_for_euclid_dist",
        "donot_use_mm_for_euclid_dist",
    )
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    P, R = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (
        compute_mode == "use_mm_for_euclid_dist"
        or (compute_mode in (None, modes[1]) and (P > 25 or R > 25))
    )
    if use_mm:
        # PyTorch's euclidean path: |a|^2 - 2 a.b + |b|^2 as one product of augmented rows,
        # clamped at 1e-30 before the square root (memory P * R, one GEMM)
        n1 = _C.sum(_C.mul(x1, x1), [-1], True)
        n2 = _C.sum(_C.mul(x2, x2), [-1], True)
        a = _C.cat([_C.mul(x1, -2.0), n1, _C.ones_like(n1)], -1)
        b = _C.cat([x2, _C.ones_like(n2), n2], -1)
        return _C.sqrt(_C.clamp(_C.matmul(a, b.transpose(-2, -1)), 1e-30, None))
    from oneflow.framework.reduce_ops import vector_norm

    d = _C.sub(_C.unsqueeze(x1, -2), _C.unsqueeze(x2, -3))
    return vector_norm(d, ord=p, dim=-1)


def where(condition, input=None, other=None):
    """where(condition, input, other), or condition.nonzero(as_tuple=True) with one argument;
    a uint8 condition counts as bool (deprecated in PyTorch, with the same warning)."""
    if input is None and other is None:
        return _C.nonzero(condition)
    if input is None or other is None:
        raise TypeError("where: expected both input and other, or neither of them")
    if isinstance(condition, Tensor) and condition.dtype == _uint8():
        warnings.warn(
            "where received a uint8 condition tensor. This behavior is deprecated; use a "
            "boolean condition instead.",
            UserWarning,
            stacklevel=2,
        )
        condition = _C.ne(condition, 0)
    return _C.where(condition, input, other)


def functions():
    """Name -> function for the oneflow namespace."""
    out = {name: getattr(_C, name) for name in UNARY + BINARY}
    out.update(
        square=square,
        frac=frac,
        isnan=isnan,
        isinf=isinf,
        isposinf=isposinf,
        isneginf=isneginf,
        isfinite=isfinite,
        nan_to_num=nan_to_num,
        logit=logit,
        diff=diff,
        cdist=cdist,
        lerp=lerp,
        addcmul=addcmul,
        addcdiv=addcdiv,
        clamp=clamp,
        clamp_min=clamp_min,
        clamp_max=clamp_max,
        isclose=isclose,
        allclose=allclose,
        equal=equal,
        logical_not=_C.logical_not,
        xlogy=xlogy,
        where=where,
    )
    for alias, target in ALIASES.items():
        out[alias] = out.get(target) or getattr(_C, target)
    return out


def methods():
    """Name -> Tensor method, in-place forms and operators included."""
    fns = functions()
    out = dict(fns)
    out["where"] = lambda self, condition, y: where(condition, self, y)
    for name in ["allclose", "equal"]:
        out[name] = fns[name]
    inplace_names = (
        UNARY
        + BINARY
        + [
            "square",
            "frac",
            "nan_to_num",
            "logit",
            "lerp",
            "addcmul",
            "addcdiv",
            "clamp",
            "clamp_min",
            "clamp_max",
            "logical_not",
            "arcsin",
            "arccos",
            "arctan",
            "arcsinh",
            "arccosh",
            "arctanh",
            "negative",
            "fix",
            "clip",
            "xlogy",
        ]
    )
    for name in ["sub", "div", "pow", "eq", "ne", "lt", "le", "gt", "ge", "sigmoid", "exp"]:
        inplace_names.append(name)
        fns.setdefault(name, getattr(_C, name))
    for name in inplace_names:
        out[name + "_"] = inplace(name + "_", fns[name])
    # the aliases' in-place forms are their targets' (fused paths included)
    for alias, target in ALIASES.items():
        if target + "_" in out:
            out.setdefault(alias + "_", out[target + "_"])
        else:
            out.setdefault(
                alias + "_", inplace(alias + "_", fns.get(target) or getattr(_C, target))
            )
    for name, fused, check in [
        ("addcmul", _C._addcmul_, _check_addcmul),
        ("addcdiv", _C._addcdiv_, _check_addcdiv),
        ("lerp", _C._lerp_, _check_lerp),
    ]:
        out[name + "_"] = _fused_inplace(name + "_", fused, check, out[name + "_"])
    # Operator -> function: forward, reflected (as is where the function commutes), in-place.
    for op, name, commutes in [
        ("floordiv", "floor_divide", False),
        ("mod", "remainder", False),
        ("and", "bitwise_and", True),
        ("or", "bitwise_or", True),
        ("xor", "bitwise_xor", True),
        ("lshift", "bitwise_left_shift", False),
        ("rshift", "bitwise_right_shift", False),
    ]:
        fn = getattr(_C, name)
        out[f"__{op}__"] = fn
        out[f"__r{op}__"] = fn if commutes else _rbinary(fn)
        out[f"__i{op}__"] = out[name + "_"]
    out.update(
        __invert__=_C.bitwise_not,
        __isub__=out["sub_"],
        __itruediv__=out["div_"],
        __ipow__=out["pow_"],
    )
    return out
