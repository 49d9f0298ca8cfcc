"""oneflow.special: PyTorch's special-function namespace. Most names are the pointwise and
softmax functions of ``oneflow`` under their special-module spelling; ``zeta`` (Hurwitz's zeta
function) is computed here."""

import math

import oneflow
from oneflow._oneflow_internal import _C, Tensor

digamma = oneflow.digamma
psi = oneflow.digamma
erf = oneflow.erf
erfc = oneflow.erfc
erfinv = oneflow.erfinv
exp2 = oneflow.exp2
expm1 = oneflow.expm1
log1p = oneflow.log1p
round = oneflow.round
logsumexp = oneflow.logsumexp
expit = oneflow.sigmoid
logit = oneflow.logit
gammaln = oneflow.lgamma


def softmax(input, dim, *, dtype=None):
    return oneflow.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input, dim, *, dtype=None):
    return oneflow.log_softmax(input if dtype is None else input.to(dtype), dim)


def ndtr(input):
    """The standard normal distribution function: (1 + erf(x / sqrt(2))) / 2."""
    x = input if input.dtype.is_floating_point else input.float()
    return _C.mul(_C.add(oneflow.erf(_C.mul(x, 1 / math.sqrt(2))), 1), 0.5)


# (2j)! / B_2j for j = 1..12: the Euler-Maclaurin correction terms of the zeta tail.
_EULER_MACLAURIN = [
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.8924375803183791606e9,
    7.47242496e10,
    -2.950130727918164224e12,
    1.1646782814350067249e14,
    -4.5979787224074726105e15,
    1.8152105401943546773e17,
    -7.1661652561756670113e18,
]


def zeta(input, other):
    """Hurwitz's zeta function sum_k (other + k)^-input, elementwise with broadcasting, as
    torch.special.zeta: inf at input == 1 and at non-positive integer other, NaN for input < 1
    and for a non-integer input with a negative other. Computed in float64 (the terms up to
    other + k > 9 summed directly, the rest by Euler-Maclaurin with 12 Bernoulli terms) and
    returned in the inputs' floating dtype (float32 for integers)."""
    tensors = [t for t in (input, other) if isinstance(t, Tensor)]
    if not tensors:
        raise TypeError("zeta: expected at least one Tensor argument")
    device = tensors[0].device
    out_dtype = oneflow.result_type(input, other)
    if not out_dtype.is_floating_point:
        out_dtype = oneflow.get_default_dtype()
    if out_dtype not in (oneflow.float32, oneflow.float64):
        raise NotImplementedError(f'"zeta" not implemented for {out_dtype}')
    x = oneflow.as_tensor(input, dtype=oneflow.float64, device=device)
    q = oneflow.as_tensor(other, dtype=oneflow.float64, device=device)
    x, q = oneflow.broadcast_tensors(x, q)
    integral_q = _C.logical_and(_C.le(q, 0), _C.eq(q, oneflow.floor(q)))
    infinite = _C.logical_or(_C.eq(x, 1), _C.logical_and(_C.gt(x, 1), integral_q))
    undefined = _C.logical_or(
        _C.logical_or(_C.lt(x, 1), _C.logical_or(_C.ne(x, x), _C.ne(q, q))),
        _C.logical_and(
            _C.logical_and(_C.lt(q, 0), _C.logical_not(integral_q)),
            _C.ne(x, oneflow.floor(x)),
        ),
    )
    valid = _C.logical_not(_C.logical_or(infinite, undefined))
    # Elements outside the domain compute on harmless values and are replaced at the end.
    xs = oneflow.where(valid, x, 2.0)
    qs = oneflow.where(valid, q, 1.0)
    s = oneflow.pow(qs, _C.neg(xs))
    for k in range(1, 10):
        s = _C.add(s, oneflow.pow(_C.add(qs, k), _C.neg(xs)))
    # Then term k while other + k - 1 <= 9 (other below 1), a block of terms at a time.
    low = float(_C.amin(qs)) if qs.numel() else 1.0
    last = math.floor(10 - low) if math.isfinite(low) else 0  # low is +inf when every q is
    if last >= 10:
        xe, qe = _C.unsqueeze(xs, -1), _C.unsqueeze(qs, -1)
        for k0 in range(10, last + 1, 256):
            ks = oneflow.arange(k0, min(k0 + 256, last + 1), dtype=oneflow.float64, device=device)
            take = _C.le(_C.add(qe, ks), 10.0)
            terms = oneflow.pow(_C.add(qe, ks), _C.neg(xe))
            s = _C.add(s, _C.sum(oneflow.where(take, terms, 0.0), [-1], False))
    a = _C.add(qs, _C.clamp(oneflow.floor(_C.sub(10.0, qs)), 9.0, None))
    b = oneflow.pow(a, _C.neg(xs))
    w = a
    s = _C.add(s, _C.sub(_C.div(_C.mul(b, w), _C.sub(xs, 1)), _C.mul(b, 0.5)))
    fac = oneflow.ones_like(xs)
    k = 0.0
    for coef in _EULER_MACLAURIN:
        fac = _C.mul(fac, _C.add(xs, k))
        b = _C.div(b, w)
        s = _C.add(s, _C.div(_C.mul(fac, b), coef))
        k += 1
        fac = _C.mul(fac, _C.add(xs, k))
        b = _C.div(b, w)
        k += 1
    s = oneflow.where(infinite, math.inf, s)
    s = oneflow.where(undefined, math.nan, s)
    return s.to(out_dtype)


__all__ = [
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammaln",
    "log1p",
    "log_softmax",
    "logit",
    "logsumexp",
    "ndtr",
    "psi",
    "round",
    "softmax",
    "zeta",
]

# The rest of torch.special, composed in oneflow.framework.special_extra.
from oneflow.framework import special_extra as _special_extra  # noqa: E402

for _name, _fn in _special_extra.functions().items():
    globals()[_name] = _fn
    __all__.append(_name)
del _name, _fn
