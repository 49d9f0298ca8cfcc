"""Pointwise math composed of other ops, with PyTorch's dtypes, errors and gradient conventions:
hypot, logaddexp(2), copysign, heaviside, signbit, sinc, deg2rad, rad2deg, gcd, lcm,
float_power, ldexp, frexp and nextafter (the last and signbit on the floats' bits, through
view(dtype))."""

import collections
import math

from oneflow._oneflow_internal import _C, Tensor
from oneflow.framework.math_ops import inplace, isfinite, isinf

_LN2 = math.log(2.0)

frexp_result = collections.namedtuple("frexp", ["mantissa", "exponent"])


def _flow():
    import oneflow

    return oneflow


def _dtype_name(dtype):
    return str(dtype).split(".")[-1]


def _require_tensors(op, **args):
    """These ops take tensors only (PyTorch: no Python-number overload)."""
    for name, value in args.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(value).__name__}")


def _float_result(op, input, other):
    """The promoted dtype of a binary op whose kernel exists for floating dtypes only."""
    _require_tensors(op, input=input, other=other)
    dtype = _flow().result_type(input, other)
    if not dtype.is_floating_point:
        raise NotImplementedError(f"{op}: not implemented for {_dtype_name(dtype)} inputs")
    return dtype


def _to_float(dtype):
    """Integer and bool inputs give the default floating dtype, as PyTorch's unary float ops."""
    if dtype.is_complex:  # a cast would drop the imaginary parts
        raise TypeError(f"this function does not support {dtype} inputs yet")
    return dtype if dtype.is_floating_point else _flow().get_default_dtype()


def _work(dtype):
    """float16/bfloat16 are computed in float32 and rounded once at the end, as PyTorch's CPU
    kernels do; a chain of half-precision ops would round at every step."""
    flow = _flow()
    return flow.float32 if dtype in (flow.float16, flow.bfloat16) else dtype


def _true_like(t):
    return _C.ones_like(t).bool()


# ---- binary floating ops --------------------------------------------------------------------


def hypot(input, other):
    dtype = _float_result("hypot", input, other)
    a, b = input.to(_work(dtype)), other.to(_work(dtype))
    # Dividing by the larger magnitude keeps the squares from overflowing (1e200) or
    # underflowing (1e-200) where sqrt(a*a + b*b) would. The scale is a constant to autograd,
    # which is exact since hypot is homogeneous: the gradient stays a / hypot(a, b), NaN at
    # (0, 0) as PyTorch's.
    scale = _C.maximum(_C.abs(a), _C.abs(b)).detach()
    scale = _C.where(_C.logical_and(_C.gt(scale, 0), isfinite(scale)), scale, 1.0)
    x, y = _C.div(a, scale), _C.div(b, scale)
    out = _C.mul(_C.sqrt(_C.add(_C.mul(x, x), _C.mul(y, y))), scale)
    out = _C.where(_C.logical_or(isinf(a), isinf(b)), math.inf, out)  # hypot(inf, nan) = inf
    return out.to(dtype)


def _logaddexp_value(a, b, base2):
    """max + log1p(exp(min - max)), without the max's term being rounded through 1 + x: the
    sum is exp(min - max) + expm1(0), and expm1(0) is exactly 0."""
    m = _C.maximum(a, b)
    m = _C.where(isfinite(m), m, 0.0)  # an infinite max: the terms below give the inf or NaN
    exp, expm1 = (_C.exp2, _exp2m1) if base2 else (_C.exp, _C.expm1)
    da, db = _C.sub(a, m), _C.sub(b, m)
    s = _C.where(_C.ge(a, b), _C.add(exp(db), expm1(da)), _C.add(exp(da), expm1(db)))
    log = _C.log1p(s)
    out = _C.add(m, _C.div(log, _LN2) if base2 else log)
    # Two infinities of the same sign: the sum is that infinity, not inf - inf = NaN.
    return _C.where(_C.logical_and(_C.eq(a, b), isinf(a)), a, out)


def _exp2m1(t):
    return _C.expm1(_C.mul(t, _LN2))


_FUNCTIONS = {}


def _logaddexp_function(base2):
    """The autograd function of logaddexp(2): the value above, and PyTorch's gradient
    grad / (1 + base^(other - input)) (NaN for two equal infinities, 1 and 0 for an infinite
    and a finite input), in ops that are themselves differentiable."""
    key = ("logaddexp", base2)
    if key not in _FUNCTIONS:
        flow = _flow()

        def weight(x, y):
            d = _C.sub(y, x)
            return _C.reciprocal(_C.add(_C.exp2(d) if base2 else _C.exp(d), 1.0))

        class LogAddExp(flow.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return _logaddexp_value(a, b, base2)

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return _C.mul(grad, weight(a, b)), _C.mul(grad, weight(b, a))

        _FUNCTIONS[key] = LogAddExp
    return _FUNCTIONS[key]


def _logaddexp(op, input, other, base2):
    dtype = _float_result(op, input, other)
    # Same shape and dtype in, so the function's gradients need no reduction or cast:
    # broadcast_tensors and to() do those on the way back.
    a, b = _flow().broadcast_tensors(input.to(_work(dtype)), other.to(_work(dtype)))
    return _logaddexp_function(base2).apply(a, b).to(dtype)


def logaddexp(input, other):
    return _logaddexp("logaddexp", input, other, False)


def logaddexp2(input, other):
    return _logaddexp("logaddexp2", input, other, True)


# ---- signs ----------------------------------------------------------------------------------


_BITS = {"float32": "int32", "float64": "int64", "float16": "int16", "bfloat16": "int16"}


def _bits(t):
    """t's bits as the signed integer dtype of its size (a view: no copy)."""
    return t.view(getattr(_flow(), _BITS[_dtype_name(t.dtype)]))


def signbit(input):
    """Whether the sign bit is set: -0.0 and NaNs with the bit set included (read from the
    bits)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"signbit(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dtype.is_floating_point:
        return _C.lt(_bits(input.detach()), 0)
    return _C.lt(input, 0)  # bool and unsigned: never (lt(x, 0) is False for them)


def nextafter(input, other):
    """The next float after input towards other: one step of the bits (sign and magnitude, so +1
    moves away from zero), the smallest subnormal with other's sign from +-0, other itself when
    they are equal, NaN when either is. Not differentiable, as PyTorch's."""
    dtype = _float_result("nextafter", input, other)
    a, b = _flow().broadcast_tensors(input.detach().to(dtype), other.detach().to(dtype))
    a, b = a.contiguous(), b.contiguous()
    bits = _bits(a)
    # zeros (whose -0.0 is the most negative integer) and NaNs take no step: keep the integer
    # arithmetic below inside its range
    bits = _C.where(_C.logical_or(_C.eq(a, 0), _C.ne(a, a)), _C.ones_like(bits), bits)
    away = _C.eq(_C.gt(b, a), _C.gt(a, 0))  # towards larger magnitude
    stepped = _C.where(away, _C.add(bits, 1), _C.sub(bits, 1))
    tiny = _C.where(_C.gt(b, 0), _C.ones_like(bits), _C.neg(_C.ones_like(bits)))
    tiny = _C.where(_C.lt(tiny, 0), _C.bitwise_or(_bits(_C.neg(_C.zeros_like(a))), 1), tiny)
    stepped = _C.where(_C.eq(a, 0), tiny, stepped).view(dtype)
    out = _C.where(_C.eq(a, b), b, stepped)
    return _C.where(_C.logical_or(_C.ne(a, a), _C.ne(b, b)), _C.add(a, b), out)


def copysign(input, other):
    """|input| with the sign of other. Gradient as PyTorch's: +-1 for input (0 where input is
    0, through abs), zeros for other."""
    _require_tensors("copysign", input=input)
    if not isinstance(other, (Tensor, int, float)):
        raise TypeError(f"copysign(): argument 'other' must be Tensor or Number, got {other!r}")
    dtype = _to_float(_flow().result_type(input, other))
    magnitude = _C.abs(input.to(dtype))
    if not isinstance(other, Tensor):
        negative = math.copysign(1.0, other) < 0  # -0.0 and a negative NaN included
        return _C.neg(magnitude) if negative else _C.clone(magnitude)
    negative = signbit(other)
    out = _C.where(negative, _C.neg(magnitude), magnitude)
    if other.requires_grad and _flow().is_grad_enabled():
        # PyTorch gives other a zero gradient rather than none: select out everywhere from a
        # where() that has other as its second branch.
        out = _C.where(_true_like(negative), out, other.to(dtype))
    return out


def _heaviside_function():
    if "heaviside" not in _FUNCTIONS:
        flow = _flow()

        class Heaviside(flow.autograd.Function):
            @staticmethod
            def forward(ctx, input, values):
                return _heaviside_value(input, values)

            @staticmethod
            def backward(ctx, grad):
                raise RuntimeError("the derivative for 'heaviside' is not implemented")

        _FUNCTIONS["heaviside"] = Heaviside
    return _FUNCTIONS["heaviside"]


def _heaviside_value(input, values):
    # NaN input: 0, as PyTorch's (input > 0 is false)
    return _C.where(_C.eq(input, 0), values, _C.gt(input, 0).to(input.dtype))


def heaviside(input, values):
    _require_tensors("heaviside", input=input, values=values)
    if input.dtype != values.dtype:
        raise RuntimeError(
            "heaviside is not yet implemented for tensors with different dtypes: got "
            f"{_dtype_name(input.dtype)} and {_dtype_name(values.dtype)}"
        )
    return _heaviside_function().apply(input, values)


# ---- unary floating ops ---------------------------------------------------------------------


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0. The zeros are replaced before dividing, so the unused branch
    of where() has no 0 / 0 whose NaN would reach the gradient (0 at 0, as PyTorch's)."""
    dtype = _to_float(input.dtype)
    x = input.to(_work(dtype))
    zero = _C.eq(x, 0)
    px = _C.mul(_C.where(zero, 1.0, x), math.pi)
    return _C.where(zero, 1.0, _C.div(_C.sin(px), px)).to(dtype)


def deg2rad(input):
    return _C.mul(input.to(_to_float(input.dtype)), math.pi / 180.0)


def rad2deg(input):
    return _C.mul(input.to(_to_float(input.dtype)), 180.0 / math.pi)


# ---- integer ops ----------------------------------------------------------------------------


def _integer_pair(op, input, other):
    _require_tensors(op, input=input, other=other)
    flow = _flow()
    dtype = flow.result_type(input, other)
    if dtype.is_floating_point or dtype == flow.bool:
        raise NotImplementedError(f"{op}: not implemented for {_dtype_name(dtype)} inputs")
    return flow.broadcast_tensors(input.to(dtype), other.to(dtype))


def _gcd(a, b):
    """Euclid's algorithm on all elements at once, until every remainder is 0; the number of
    steps grows with the logarithm of the largest value (at most ~90 for int64)."""
    a, b = _C.abs(a), _C.abs(b)
    one, zero = _C.ones_like(a), _C.zeros_like(a)
    while True:
        active = _C.ne(a, 0)
        if not bool(_C.any(active)):
            return b
        r = _C.fmod(b, _C.where(active, a, one))
        b = _C.where(active, a, b)
        a = _C.where(active, r, zero)


def gcd(input, other):
    return _gcd(*_integer_pair("gcd", input, other))


def lcm(input, other):
    a, b = _integer_pair("lcm", input, other)
    g = _gcd(a, b)
    zero = _C.eq(g, 0)
    out = _C.abs(_C.mul(_C.trunc_divide(a, _C.where(zero, _C.ones_like(g), g)), b))
    return _C.where(zero, g, out)


# ---- powers of two and float_power ----------------------------------------------------------


def float_power(input, exponent):
    """pow in float64, whatever the inputs' dtypes (no complex dtypes here)."""
    flow = _flow()
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): expected a Tensor as input or exponent")
    for t in (input, exponent):
        if isinstance(t, Tensor) and t.dtype.is_complex:
            raise TypeError(f"float_power(): {t.dtype} inputs are not supported yet")
    base = input.to(flow.float64) if isinstance(input, Tensor) else float(input)
    exp = exponent.to(flow.float64) if isinstance(exponent, Tensor) else float(exponent)
    return _C.pow(base, exp)


def _float_power_(self, exponent):
    flow = _flow()
    if self.dtype != flow.float64:
        raise RuntimeError(
            f"float_power_: the base has dtype {_dtype_name(self.dtype)} but the operation's "
            "result requires dtype float64"
        )
    return _float_power_inplace(self, exponent)


_float_power_inplace = inplace("float_power_", float_power)


def ldexp(input, other):
    """input * 2^other. 2^other has pow's dtype (float32 for an integer other) and the product
    is rounded once into the promoted dtype, so ldexp(float16 x, int 20) does not pass through
    a float16 2^20 = inf."""
    _require_tensors("ldexp", input=input, other=other)
    dtype = _to_float(_flow().result_type(input, other))
    return _C.mul(input, _C.pow(2.0, other)).to(dtype)


def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2^exponent, 0.5 <= |mantissa| < 1; 0, inf
    and NaN give themselves and exponent 0. The gradient of mantissa is grad / 2^exponent."""
    if not isinstance(input, Tensor):
        raise TypeError(f"frexp(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"frexp only supports floating-point dtypes, got {_dtype_name(input.dtype)}"
        )
    flow = _flow()
    x = input.detach().to(_work(input.dtype))
    ax = _C.abs(x)
    regular = _C.logical_and(_C.gt(ax, 0), isfinite(ax))
    ax = _C.where(regular, ax, 1.0)
    e = _C.add(_C.floor(_C.log2(ax)), 1.0)
    # log2 rounds near powers of two: one step corrects the exponent either way. 2^e is applied
    # as two halves, as 2^1024 (float64) or 2^128 (float32) overflows where the mantissa doesn't.
    for _ in range(2):
        m = _scale_by_pow2(ax, _C.neg(e))
        e = _C.add(e, _C.sub(_C.ge(m, 1.0).to(e.dtype), _C.lt(m, 0.5).to(e.dtype)))
    e = _C.where(regular, e, 0.0)
    mantissa = _scale_by_pow2(input.to(x.dtype), _C.neg(e)).to(input.dtype)
    return frexp_result(mantissa, e.to(flow.int32))


def _scale_by_pow2(x, e):
    """x * 2^e for integral float e, exact while the result is normal: two factors that are
    each in range (exp2 is exact on integers)."""
    half = _C.trunc(_C.mul(e, 0.5))
    return _C.mul(_C.mul(x, _C.exp2(half)), _C.exp2(_C.sub(e, half)))


# ---- registration ---------------------------------------------------------------------------


def functions():
    """Name -> function for the oneflow namespace."""
    return dict(
        hypot=hypot,
        logaddexp=logaddexp,
        logaddexp2=logaddexp2,
        copysign=copysign,
        heaviside=heaviside,
        signbit=signbit,
        sinc=sinc,
        deg2rad=deg2rad,
        rad2deg=rad2deg,
        gcd=gcd,
        lcm=lcm,
        float_power=float_power,
        ldexp=ldexp,
        frexp=frexp,
        nextafter=nextafter,
    )


def methods():
    """Name -> Tensor method, with the in-place forms PyTorch has."""
    out = functions()
    for name in [
        "hypot",
        "copysign",
        "heaviside",
        "sinc",
        "deg2rad",
        "rad2deg",
        "gcd",
        "lcm",
        "ldexp",
        "nextafter",
    ]:
        out[name + "_"] = inplace(name + "_", out[name])
    out["float_power_"] = _float_power_
    return out
