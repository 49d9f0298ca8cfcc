"""torch.special functions that oneflow.special lacked, composed of existing oneflow ops: the
entropy-style products (xlogy, xlog1py, entr), the normal-distribution tails (log_ndtr, ndtri,
erfcx), the modified Bessel functions of orders 0 and 1 (i0, i0e, i1, i1e) and aliases of
functions oneflow already has elsewhere (sinc, polygamma, multigammaln).

The tail and Bessel functions compute in float64 whatever the input dtype and round the result
once, so float32 and float16 get correctly rounded values. Their gradients are the closed forms
torch uses (autograd.Function), not the derivative of the series, so that masked-out branches
cannot leak NaN into them. The Bessel J/Y/K, Airy and orthogonal-polynomial families are not
here.

Nothing here replaces a name oneflow already has: functions(), top_level() and methods() drop
those."""

import math

from oneflow._oneflow_internal import _C, Tensor

_SQRT2 = math.sqrt(2.0)
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _flow():
    import oneflow

    return oneflow


def _float_input(input, name, half=True):
    """Integer and bool inputs compute in the default float dtype (as torch); half types only
    where torch's CPU kernel accepts them."""
    flow = _flow()
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dtype.is_complex:
        raise TypeError(f"{name}(): {input.dtype} inputs are not supported")
    if not input.dtype.is_floating_point:
        input = input.to(flow.get_default_dtype())
    if not half and input.dtype in (flow.float16, flow.bfloat16):
        raise RuntimeError(f'"{name}_cpu" not implemented for {input.dtype}')
    return input


def _float_pair(input, other, name):
    """Two inputs (either may be a Python number) broadcast together in their promoted floating
    dtype; the broadcast happens outside the autograd.Function so expand's gradient reduces."""
    flow = _flow()
    tensors = [t for t in (input, other) if isinstance(t, Tensor)]
    if not tensors:
        raise TypeError(f"{name}(): expected at least one Tensor argument")
    for t in tensors:
        if t.dtype.is_complex:
            raise TypeError(f"{name}(): {t.dtype} inputs are not supported")
    dtype = flow.result_type(input, other)
    if not dtype.is_floating_point:
        dtype = flow.get_default_dtype()
    device = tensors[0].device
    x = (
        input.to(dtype)
        if isinstance(input, Tensor)
        else flow.tensor(input, dtype=dtype, device=device)
    )
    y = (
        other.to(dtype)
        if isinstance(other, Tensor)
        else flow.tensor(other, dtype=dtype, device=device)
    )
    return flow.broadcast_tensors(x, y)


def _pointwise(forward64, backward64):
    """An autograd.Function computing forward64(x) in float64 and rounding to x's dtype, with
    d/dx = backward64(x, y) where y is the float64 result."""
    flow = _flow()

    class _Fn(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x64 = x.to(flow.float64)
            y64 = forward64(x64)
            ctx.save_for_backward(x64, y64)
            return y64.to(x.dtype)

        @staticmethod
        def backward(ctx, grad):
            x64, y64 = ctx.saved_tensors
            return _C.mul(grad.to(flow.float64), backward64(x64, y64)).to(grad.dtype)

    return _Fn.apply


def _where(cond, a, b):
    return _flow().where(cond, a, b)


def _isnan(x):
    return _C.ne(x, x)


def _exp_square(x, sign=1.0):
    """exp(sign * x^2) without the rounding error of x^2 that exp multiplies by x^2: x is split
    into a head with 12 fraction bits (whose square is exact) and a small tail."""
    flow = _flow()
    head = _C.div(flow.trunc(_C.mul(x, 4096.0)), 4096.0)
    tail = _C.sub(x, head)
    rest = _C.mul(tail, _C.add(x, head))  # x^2 - head^2
    rest = _where(_C.lt(flow.abs(x), 1e300), rest, 0.0)  # inf - inf at +-inf
    return _C.mul(flow.exp(_C.mul(_C.mul(head, head), sign)), flow.exp(_C.mul(rest, sign)))


# ---- products with logarithms -----------------------------------------------------------------


def _xlog_forward(x, y, shift):
    """x * log(y + shift), 0 where x == 0 unless y is NaN."""
    flow = _flow()
    logy = flow.log(y) if shift == 0 else flow.log1p(y)
    zero = _C.logical_and(_C.eq(x, 0), _C.logical_not(_isnan(y)))
    return _where(zero, 0.0, _C.mul(x, logy))


_XLOG = {}


def _xlog(x, y, shift):
    if shift not in _XLOG:
        flow = _flow()

        class _Fn(flow.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(x, y)
                return _xlog_forward(x, y, shift)

            @staticmethod
            def backward(ctx, grad):
                x, y = ctx.saved_tensors
                # As torch: d/dx = xlogy(grad, y + shift), zeroed where x == 0 and y + shift <= 0.
                gx = _xlog_forward(grad, y, shift)
                gx = _where(_C.logical_and(_C.eq(x, 0), _C.le(y, -shift)), 0.0, gx)
                gy = _C.div(_C.mul(grad, x), _C.add(y, shift) if shift else y)
                return gx, gy

        _XLOG[shift] = _Fn.apply
    return _XLOG[shift](x, y)


def xlogy(input, other):
    """x * log(y), 0 where x == 0 unless y is NaN; its x-gradient is log(y) also at x == 0."""
    x, y = _float_pair(input, other, "xlogy")
    return _xlog(x, y, 0)


def xlog1py(input, other):
    """x * log1p(y), 0 where x == 0 unless y is NaN."""
    x, y = _float_pair(input, other, "xlog1py")
    return _xlog(x, y, 1)


def _entr_forward(x):
    flow = _flow()
    safe = _where(_C.gt(x, 0), x, 1.0)
    out = _where(_C.gt(x, 0), _C.neg(_C.mul(x, flow.log(safe))), -math.inf)
    out = _where(_C.eq(x, 0), 0.0, out)
    return _where(_isnan(x), x, out)


def _entr_backward(x, y):
    return _C.neg(_C.add(_flow().log(x), 1.0))


_entr = None


def entr(input):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0."""
    global _entr
    if _entr is None:
        _entr = _pointwise(_entr_forward, _entr_backward)
    return _entr(_float_input(input, "entr"))


# ---- normal-distribution tails ----------------------------------------------------------------

# Continued fraction of erfc (Laplace): sqrt(pi) erfcx(x) = 1/(x + (1/2)/(x + (2/2)/(x + ...))).
# 30 levels reach float64 rounding for x >= 4 (the truncation error falls like exp(-c x sqrt(n))).
_ERFCX_CF_FROM = 4.0
_ERFCX_CF_TERMS = 30


def _erfcx64(x):
    flow = _flow()
    large = _C.ge(x, _ERFCX_CF_FROM)
    # Below the threshold exp(x^2) erfc(x) directly: erfc is relative-accurate there and the
    # split square keeps exp(x^2) to a few ulp; it overflows to inf (as torch) below about -26.6.
    xs = _where(large, 0.0, x)
    direct = _C.mul(_exp_square(xs), flow.erfc(xs))
    xl = _where(large, x, _ERFCX_CF_FROM)
    t = xl
    for k in range(_ERFCX_CF_TERMS, 0, -1):
        t = _C.add(xl, _C.div(_C.mul(flow.ones_like(t), k / 2.0), t))
    cf = _C.div(flow.ones_like(t), _C.mul(t, _SQRT_PI))
    return _where(large, cf, direct)


def _erfcx_backward(x, y):
    return _C.sub(_C.mul(_C.mul(x, y), 2.0), 2.0 / _SQRT_PI)


_erfcx = None


def erfcx(input):
    """The scaled complementary error function exp(x^2) erfc(x)."""
    global _erfcx
    if _erfcx is None:
        _erfcx = _pointwise(_erfcx64, _erfcx_backward)
    return _erfcx(_float_input(input, "erfcx", half=False))


def _log_ndtr64(x):
    flow = _flow()
    left = _C.lt(x, -1.0)
    right = _C.gt(x, 1.0)
    # Left of -1: log(erfc(-x/sqrt2)/2) = log(erfcx(-x/sqrt2)/2) - x^2/2, finite far past the
    # underflow of ndtr. Elsewhere log1p of minus the upper tail erfc(x/sqrt2)/2, which right of
    # 1 is erfcx(x/sqrt2) exp(-x^2/2)/2: erfc would magnify the rounding of x/sqrt2 by x^2.
    xl = _where(left, x, -1.0)
    xl2 = _C.mul(_C.mul(xl, xl), 0.5)
    tail = _C.sub(flow.log(_C.mul(_erfcx64(_C.div(_C.neg(xl), _SQRT2)), 0.5)), xl2)
    xm = _where(_C.logical_or(left, right), 0.0, x)
    upper_mid = flow.erfc(_C.div(xm, _SQRT2))
    xr = _where(right, x, 1.0)
    upper_right = _C.mul(_erfcx64(_C.div(xr, _SQRT2)), _exp_square(xr, -0.5))
    body = flow.log1p(_C.mul(_where(right, upper_right, upper_mid), -0.5))
    return _where(left, tail, body)


def _log_ndtr_backward(x, y):
    # d/dx log(ndtr(x)) = phi(x) / ndtr(x) = exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi); left of -1
    # that exponent cancels, and sqrt(2/pi) / erfcx(-x/sqrt2) is the same ratio without it.
    flow = _flow()
    left = _C.lt(x, -1.0)
    xl = _where(left, x, -1.0)
    tail = _C.div(
        flow.ones_like(xl), _C.mul(_erfcx64(_C.div(_C.neg(xl), _SQRT2)), _SQRT_PI / _SQRT2)
    )
    body = _C.div(flow.exp(_C.sub(_C.mul(_C.mul(x, x), -0.5), y)), _SQRT_2PI)
    return _where(left, tail, body)


_log_ndtr = None


def log_ndtr(input):
    """log of the standard normal distribution function, accurate far into the left tail."""
    global _log_ndtr
    if _log_ndtr is None:
        _log_ndtr = _pointwise(_log_ndtr64, _log_ndtr_backward)
    return _log_ndtr(_float_input(input, "log_ndtr", half=False))


def _ndtri_lower(q):
    """ndtri for 0 < q <= 1/4 by Newton's method on log_ndtr(x) = log(q): log_ndtr is concave, so
    after the first step the iterates rise monotonically to the root, and working with logs keeps
    full relative accuracy down to the smallest subnormal q."""
    flow = _flow()
    logq = flow.log(q)
    # Start: erfinv away from the far tail; below 1e-10, the leading tail asymptotic
    # x^2 = L - log(L) - log(2 pi) with L = -2 log(q).
    ell = _C.mul(logq, -2.0)
    far = _C.neg(flow.sqrt(_C.sub(_C.sub(ell, flow.log(ell)), math.log(2 * math.pi))))
    qn = _where(_C.lt(q, 1e-10), 1e-10, q)
    near = _C.mul(flow.erfinv(_C.sub(_C.mul(qn, 2.0), 1.0)), _SQRT2)
    x = _where(_C.lt(q, 1e-10), far, near)
    for _ in range(6):
        f = _C.sub(_log_ndtr64(x), logq)
        x = _C.sub(x, _C.div(f, _log_ndtr_backward(x, _log_ndtr64(x))))
    return x


def _ndtri_middle(r):
    """ndtri(1/2 + r) for |r| <= 1/4 by Newton's method on erf(x/sqrt2)/2 = r: r is exact (the
    subtraction 1/2 + r <- p is exact there) and erf is relative-accurate near 0, so x keeps full
    relative accuracy as it goes to 0."""
    flow = _flow()
    x = _C.mul(flow.erfinv(_C.mul(r, 2.0)), _SQRT2)
    for _ in range(3):
        f = _C.sub(_C.mul(flow.erf(_C.div(x, _SQRT2)), 0.5), r)
        x = _C.sub(x, _C.div(f, _C.div(_exp_square(x, -0.5), _SQRT_2PI)))
    return x


def _ndtri64(p):
    middle = _C.logical_and(_C.ge(p, 0.25), _C.le(p, 0.75))
    upper = _C.gt(p, 0.75)
    # Upper tail by symmetry: 1 - p is exact for p >= 1/2.
    q = _where(upper, _C.sub(1.0, p), p)
    q = _where(_C.logical_and(_C.gt(q, 0), _C.logical_not(middle)), q, 0.125)
    tail = _ndtri_lower(q)
    tail = _where(upper, _C.neg(tail), tail)
    r = _where(middle, _C.sub(p, 0.5), 0.0)
    out = _where(middle, _ndtri_middle(r), tail)
    out = _where(_C.eq(p, 0), -math.inf, out)
    out = _where(_C.eq(p, 1), math.inf, out)
    bad = _C.logical_or(_C.logical_or(_C.lt(p, 0), _C.gt(p, 1)), _isnan(p))
    return _where(bad, math.nan, out)


def _ndtri_backward(p, x):
    # dx/dp = 1 / phi(x) = sqrt(2 pi) exp(x^2 / 2).
    return _C.mul(_exp_square(x, 0.5), _SQRT_2PI)


_ndtri = None


def ndtri(input):
    """The inverse of the standard normal distribution function."""
    global _ndtri
    if _ndtri is None:
        _ndtri = _pointwise(_ndtri64, _ndtri_backward)
    return _ndtri(_float_input(input, "ndtri", half=False))


# ---- modified Bessel functions of orders 0 and 1 ----------------------------------------------

# Below this |x| the power series, above it the large-argument (Hankel) expansion of
# exp(-x) I_nu(x). The series has only positive terms (no cancellation) and 50 terms reach
# rounding at 25; the expansion's smallest term near k = 2x is below 1e-18 from 25 on.
_BESSEL_SPLIT = 25.0
_BESSEL_SERIES_TERMS = 50
_BESSEL_ASYMPTOTIC_TERMS = 30


def _bessel_series(a, order):
    """sum_k (a^2/4)^k / (k! (k + order)!) for |a| <= the split (a is already clamped there)."""
    flow = _flow()
    z = _C.mul(_C.mul(a, a), 0.25)
    term = flow.ones_like(a)
    total = term
    for k in range(1, _BESSEL_SERIES_TERMS + 1):
        term = _C.div(_C.mul(term, z), float(k * (k + order)))
        total = _C.add(total, term)
    return total


def _bessel_asymptotic(a, order):
    """sqrt(2 pi a) exp(-a) I_order(a) = sum_k (-1)^k prod_{j<=k} (4 order^2 - (2j-1)^2) / (8 j a)
    for a >= the split."""
    flow = _flow()
    inv = _C.div(flow.ones_like(a), a)
    mu = 4.0 * order * order
    term = flow.ones_like(a)
    total = term
    for j in range(1, _BESSEL_ASYMPTOTIC_TERMS + 1):
        term = _C.mul(_C.mul(term, inv), -(mu - (2 * j - 1) ** 2) / (8.0 * j))
        total = _C.add(total, term)
    return _C.div(total, flow.sqrt(_C.mul(a, 2.0 * math.pi)))


def _bessel_scaled(x, order):
    """exp(-|x|) I_order(|x|) in float64; the odd sign of I1 is applied by the callers."""
    flow = _flow()
    a = flow.abs(x)
    small = _C.le(a, _BESSEL_SPLIT)
    a_small = _where(small, a, 0.0)
    series = _bessel_series(a_small, order)
    if order == 1:
        series = _C.mul(series, _C.mul(a_small, 0.5))
    series = _C.mul(series, flow.exp(_C.neg(a_small)))
    a_large = _where(small, _BESSEL_SPLIT, a)
    out = _where(small, series, _bessel_asymptotic(a_large, order))
    return _where(_isnan(x), x, out)


def _odd(x, y):
    return _where(_C.lt(x, 0), _C.neg(y), y)


def _i0e64(x):
    return _bessel_scaled(x, 0)


def _i1e64(x):
    return _odd(x, _bessel_scaled(x, 1))


def _i0_64(x):
    # exp(|x|) i0e(x): overflows to inf past |x| ~ 709.8, as torch does.
    flow = _flow()
    return _C.mul(_i0e64(x), flow.exp(flow.abs(x)))


def _i1_64(x):
    flow = _flow()
    return _C.mul(_i1e64(x), flow.exp(flow.abs(x)))


def _i1_over_x(x, i1x):
    """I1(x)/x with its limit 1/2 at 0 (the scaled variant passes i1e and gets i1e/x)."""
    zero = _C.eq(x, 0)
    return _where(zero, 0.5, _C.div(i1x, _where(zero, 1.0, x)))


def _i0_backward(x, y):
    return _i1_64(x)


def _i0e_backward(x, y):
    # d/dx exp(-|x|) I0(x) = i1e(x) - sign(x) i0e(x).
    return _C.sub(_i1e64(x), _C.mul(_flow().sign(x), y))


def _i1_backward(x, y):
    # I1'(x) = I0(x) - I1(x)/x, 1/2 at 0.
    zero = _C.eq(x, 0)
    return _where(zero, 0.5, _C.sub(_i0_64(x), _i1_over_x(x, y)))


def _i1e_backward(x, y):
    # d/dx exp(-|x|) I1(x) = i0e(x) - i1e(x) (sign(x) + 1/x), 1/2 at 0.
    zero = _C.eq(x, 0)
    d = _C.sub(_C.sub(_i0e64(x), _C.mul(_flow().sign(x), y)), _i1_over_x(x, y))
    return _where(zero, 0.5, d)


_BESSEL = {}


def _bessel(name, input):
    if name not in _BESSEL:
        forward, backward = {
            "i0": (_i0_64, _i0_backward),
            "i0e": (_i0e64, _i0e_backward),
            "i1": (_i1_64, _i1_backward),
            "i1e": (_i1e64, _i1e_backward),
        }[name]
        _BESSEL[name] = _pointwise(forward, backward)
    return _BESSEL[name](_float_input(input, name))


def i0(input):
    """The modified Bessel function of the first kind of order 0."""
    return _bessel("i0", input)


def i0e(input):
    """exp(-|x|) i0(x)."""
    return _bessel("i0e", input)


def i1(input):
    """The modified Bessel function of the first kind of order 1."""
    return _bessel("i1", input)


def i1e(input):
    """exp(-|x|) i1(x)."""
    return _bessel("i1e", input)


def _i0_(self):
    """In-place i0: the result is copied back into self (same dtype, so no promotion)."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {self.dtype}"
        )
    self.copy_(i0(self))
    return self


# ---- regularised incomplete gamma functions ----------------------------------------------


def _incomplete_gamma(input, other, upper, op):
    """P(a, x) (upper=False) or Q(a, x) = 1 - P, elementwise with broadcasting, by the igamma
    kernel (series or continued fraction in double); 16-bit floats compute in float32."""
    flow = _flow()
    tensors = [t for t in (input, other) if isinstance(t, Tensor)]
    if not tensors:
        raise TypeError(f"{op}(): expected at least one Tensor argument")
    dtype = flow.result_type(input, other)
    if not dtype.is_floating_point:
        raise NotImplementedError(f'"{op}_cpu" not implemented for {dtype}')
    compute = dtype if dtype in (flow.float32, flow.float64) else flow.float32
    device = tensors[0].device
    a = flow.as_tensor(input, dtype=compute, device=device)
    x = flow.as_tensor(other, dtype=compute, device=device)
    if a.shape != x.shape:
        a, x = flow.broadcast_tensors(a, x)
    return _C._igamma(a, x, upper).to(dtype)


def gammainc(input, other):
    """The regularised lower incomplete gamma function P(input, other)."""
    return _incomplete_gamma(input, other, False, "igamma")


def gammaincc(input, other):
    """The regularised upper incomplete gamma function Q(input, other) = 1 - P."""
    return _incomplete_gamma(input, other, True, "igammac")


def _in_place(fn, name):
    def method(self, other):
        result = fn(self, other)
        if result.dtype != self.dtype and not self.dtype.is_floating_point:
            raise RuntimeError(
                f"result type {result.dtype} can't be cast to the desired output type {self.dtype}"
            )
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(
                f"{name}: output with shape {tuple(self.shape)} doesn't match the broadcast "
                f"shape {tuple(result.shape)}"
            )
        self.copy_(result)
        return self

    method.__name__ = name
    return method


# ---- aliases of functions oneflow has under other names ---------------------------------------


def multigammaln(input, p):
    return _flow().mvlgamma(input, p)


def functions():
    """Name -> function for oneflow.special, only names it doesn't have yet."""
    import oneflow.special as special

    flow = _flow()
    out = {
        "xlogy": xlogy,
        "xlog1py": xlog1py,
        "entr": entr,
        "sinc": flow.sinc,
        "polygamma": flow.polygamma,
        "multigammaln": multigammaln,
        "log_ndtr": log_ndtr,
        "ndtri": ndtri,
        "erfcx": erfcx,
        "i0": i0,
        "i0e": i0e,
        "i1": i1,
        "i1e": i1e,
        "gammainc": gammainc,
        "gammaincc": gammaincc,
    }
    return {name: fn for name, fn in out.items() if not hasattr(special, name)}


def top_level():
    """Name -> function for the oneflow namespace (torch.i0), only names it doesn't have yet."""
    flow = _flow()
    out = {"i0": i0, "igamma": gammainc, "igammac": gammaincc}
    return {name: fn for name, fn in out.items() if not hasattr(flow, name)}


def methods():
    """Name -> Tensor method, only names oneflow's Tensor doesn't have yet."""
    out = {
        "i0": i0,
        "i0_": _i0_,
        "igamma": gammainc,
        "igammac": gammaincc,
        "igamma_": _in_place(gammainc, "igamma_"),
        "igammac_": _in_place(gammaincc, "igammac_"),
    }
    return {name: fn for name, fn in out.items() if not hasattr(Tensor, name)}
