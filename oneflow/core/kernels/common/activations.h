// Per-element rules of the activation functions (Activation<F>, ActivationGrad<F>), shared by
// the CPU and CUDA kernels: the value f(x) and the gradient dy * f'(x), as PyTorch defines them
// (the same branches at the kinks, the same treatment of NaN). The CPU kernel computes the
// functions that need exp/log1p/tanh a chunk at a time with vector math (kernels/cpu/
// activation.cpp); these scalar forms are its reference and the CUDA kernels' code.
#pragma once

#include "oneflow/core/kernels/common/values.h"

// The rules are always inlined: the CPU chunk loops include them in a baseline build and in an
// AVX2 build (kernels/cpu/activation_chunks.h), and no out-of-line copy from the AVX2 build may
// be shared with the baseline one.
#if defined(__CUDACC__)
#define OF_ACT_RULE OF_HD __forceinline__
#else
#define OF_ACT_RULE inline __attribute__((always_inline))
#endif

namespace oneflow {

// The parameters of op_kinds.h's table, in the compute type.
template <typename C>
struct ActParams {
  C a = C(0), b = C(0), c = C(0);
};

template <ActFn K, typename C>
OF_ACT_RULE C act_value(C x, const ActParams<C>& p) {
  const C zero(0), one(1);
  if constexpr (K == ActFn::kLeakyRelu) {
    return x > zero ? x : x * p.a;
  } else if constexpr (K == ActFn::kElu) {
    return x <= zero ? OF_MATH(expm1)(x * p.c) * p.a * p.b : x * p.b;
  } else if constexpr (K == ActFn::kSilu) {
    return x / (one + OF_MATH(exp)(-x));
  } else if constexpr (K == ActFn::kMish) {
    return x * OF_MATH(tanh)(OF_MATH(log1p)(OF_MATH(exp)(x)));
  } else if constexpr (K == ActFn::kSoftplus) {
    return x * p.a > p.b ? x : OF_MATH(log1p)(OF_MATH(exp)(x * p.a)) / p.a;
  } else if constexpr (K == ActFn::kHardtanh) {
    const C lo = x < p.a ? p.a : x;  // NaN stays NaN
    return lo > p.b ? p.b : lo;
  } else if constexpr (K == ActFn::kHardsigmoid) {
    const C t = x + C(3);
    return (t < zero ? zero : (t > C(6) ? C(6) : t)) / C(6);
  } else if constexpr (K == ActFn::kHardswish) {
    const C t = x + C(3);
    return x * (t < zero ? zero : (t > C(6) ? C(6) : t)) / C(6);
  } else if constexpr (K == ActFn::kLogsigmoid) {
    const C m = x < zero ? x : zero;
    return m - OF_MATH(log1p)(OF_MATH(exp)(-OF_MATH(fabs)(x)));
  } else if constexpr (K == ActFn::kSoftsign) {
    return x / (one + OF_MATH(fabs)(x));
  } else if constexpr (K == ActFn::kHardshrink) {
    return x >= -p.a && x <= p.a ? zero : x;
  } else if constexpr (K == ActFn::kSoftshrink) {
    return x > p.a ? x - p.a : (x < -p.a ? x + p.a : x * zero);  // NaN * 0 keeps NaN
  } else if constexpr (K == ActFn::kTanhshrink) {
    return x - OF_MATH(tanh)(x);
  } else if constexpr (K == ActFn::kThreshold) {
    return x <= p.a ? p.b : x;
  } else if constexpr (K == ActFn::kNanToNum) {  // a replaces NaN, b +inf, c -inf
    // Three independent selects (three compares and blends per vector) rather than nested ones.
    const C inf = C(INFINITY);
    C r = x == inf ? p.b : x;
    r = x == -inf ? p.c : r;
    return x != x ? p.a : r;
  } else if constexpr (K == ActFn::kClamp) {
    const C lo = x < p.a ? p.a : x;  // NaN stays NaN
    return lo > p.b ? p.b : lo;
  } else if constexpr (K == ActFn::kSigmoid) {
    return one / (one + OF_MATH(exp)(-x));
  } else if constexpr (K == ActFn::kFrac) {  // inf: NaN, as x - trunc(x) in PyTorch
    return x - OF_MATH(trunc)(x);
  } else if constexpr (K == ActFn::kSmoothL1) {  // x = input - target, a = beta > 0
    const C z = OF_MATH(fabs)(x);
    return z < p.a ? C(0.5) * z * z / p.a : z - C(0.5) * p.a;
  } else if constexpr (K == ActFn::kHuber) {  // a = delta > 0
    const C z = OF_MATH(fabs)(x);
    return z < p.a ? C(0.5) * z * z : p.a * (z - C(0.5) * p.a);
  } else {  // abs
    return OF_MATH(fabs)(x);
  }
}

template <ActFn K, typename C>
OF_ACT_RULE C act_grad(C dy, C x, const ActParams<C>& p) {
  const C zero(0), one(1);
  if constexpr (K == ActFn::kLeakyRelu) {
    return x > zero ? dy : dy * p.a;
  } else if constexpr (K == ActFn::kElu) {
    return x <= zero ? dy * p.c * p.a * p.b * OF_MATH(exp)(x * p.c) : dy * p.b;
  } else if constexpr (K == ActFn::kSilu) {
    const C s = one / (one + OF_MATH(exp)(-x));
    return dy * s * (one + x * (one - s));
  } else if constexpr (K == ActFn::kMish) {
    const C e = OF_MATH(exp)(x);
    const C t = OF_MATH(tanh)(OF_MATH(log1p)(e));
    const C s = one - one / (one + e);
    return dy * (t + x * s * (one - t * t));
  } else if constexpr (K == ActFn::kSoftplus) {
    const C z = OF_MATH(exp)(x * p.a);
    return x * p.a > p.b ? dy : dy * z / (z + one);
  } else if constexpr (K == ActFn::kHardtanh) {
    return x > p.a && x < p.b ? dy : zero;  // NaN: 0, as PyTorch
  } else if constexpr (K == ActFn::kHardsigmoid) {
    return x > C(-3) && x < C(3) ? dy / C(6) : zero;
  } else if constexpr (K == ActFn::kHardswish) {
    return x <= C(-3) ? zero : (x < C(3) ? dy * (x / C(3) + C(0.5)) : dy);
  } else if constexpr (K == ActFn::kLogsigmoid) {
    const C z = OF_MATH(exp)(-OF_MATH(fabs)(x));
    const C q = z / (one + z);
    return x < zero ? dy * (one - q) : dy * q;
  } else if constexpr (K == ActFn::kSoftsign) {
    // PyTorch differentiates x / (1 + |x|) as a quotient: NaN at +-inf.
    const C d = one + OF_MATH(fabs)(x);
    return dy * (one / d - OF_MATH(fabs)(x) / (d * d));
  } else if constexpr (K == ActFn::kHardshrink || K == ActFn::kSoftshrink) {
    return x < -p.a || x > p.a ? dy : zero;  // NaN: 0, as PyTorch
  } else if constexpr (K == ActFn::kTanhshrink) {
    const C t = OF_MATH(tanh)(x);
    return dy * t * t;
  } else if constexpr (K == ActFn::kThreshold) {
    return x <= p.a ? zero : dy;
  } else if constexpr (K == ActFn::kNanToNum) {  // the replaced values have no gradient
    return OF_MATH(fabs)(x) < C(INFINITY) ? dy : zero;
  } else if constexpr (K == ActFn::kClamp) {
    return x >= p.a && x <= p.b ? dy : zero;  // bounds included, NaN: 0, as PyTorch
  } else if constexpr (K == ActFn::kSigmoid) {
    const C s = one / (one + OF_MATH(exp)(-x));
    return dy * s * (one - s);
  } else if constexpr (K == ActFn::kFrac) {
    return dy;
  } else if constexpr (K == ActFn::kSmoothL1) {  // NaN: NaN, as PyTorch
    return x <= -p.a ? -dy : (x >= p.a ? dy : x * dy / p.a);
  } else if constexpr (K == ActFn::kHuber) {
    return x <= -p.a ? -dy * p.a : (x >= p.a ? dy * p.a : x * dy);
  } else {  // abs: the sign of x, 0 at 0 and NaN (as PyTorch)
    return x > zero ? dy : (x < zero ? -dy : zero);
  }
}

// dy * f'(v) of UnaryGrad (ops/primitives.h), v the output for sigmoid, tanh, sqrt, rsqrt,
// reciprocal, exp2, expm1 and tan and the input for the others, with PyTorch's order of
// operations.
template <UnaryFn K, typename C>
OF_ACT_RULE C unary_grad_value(C dy, C v) {
  const C one(1);
  if constexpr (K == UnaryFn::kSigmoid) {
    return dy * (one - v) * v;
  } else if constexpr (K == UnaryFn::kTanh) {
    return dy * (one - v * v);
  } else if constexpr (K == UnaryFn::kSqrt) {
    return dy / (C(2) * v);
  } else if constexpr (K == UnaryFn::kRsqrt) {
    return C(-0.5) * dy * (v * v * v);
  } else if constexpr (K == UnaryFn::kReciprocal) {
    return -dy * (v * v);
  } else if constexpr (K == UnaryFn::kExp2) {
    return dy * v * C(0.69314718055994530942);
  } else if constexpr (K == UnaryFn::kExpm1) {
    return dy * (v + one);
  } else if constexpr (K == UnaryFn::kTan) {
    return dy * (one + v * v);
  } else if constexpr (K == UnaryFn::kAsin) {
    return dy * (one / OF_MATH(sqrt)(one - v * v));
  } else if constexpr (K == UnaryFn::kAcos) {
    return dy * -(one / OF_MATH(sqrt)(one - v * v));
  } else if constexpr (K == UnaryFn::kAtan) {
    return dy / (v * v + one);
  } else if constexpr (K == UnaryFn::kAsinh) {
    return dy * (one / OF_MATH(sqrt)(v * v + one));
  } else if constexpr (K == UnaryFn::kAcosh) {
    return dy * (one / OF_MATH(sqrt)(v * v - one));
  } else if constexpr (K == UnaryFn::kAtanh) {
    return dy / (one - v * v);
  } else if constexpr (K == UnaryFn::kLog1p) {
    return dy / (v + one);
  } else if constexpr (K == UnaryFn::kLog2) {
    return dy / (v * C(0.69314718055994530942));
  } else {
    static_assert(K == UnaryFn::kLog10);
    return dy / (v * C(2.30258509299404568402));
  }
}

// Calls f.template operator()<K>() for the UnaryFn fn has a UnaryGrad rule for; false when it
// has none.
template <typename F>
bool visit_unary_grad(UnaryFn fn, F&& f) {
  switch (fn) {
#define OF_CASE(E)                          \
  case UnaryFn::k##E:                       \
    f.template operator()<UnaryFn::k##E>(); \
    return true;
    OF_CASE(Sigmoid)
    OF_CASE(Tanh)
    OF_CASE(Sqrt)
    OF_CASE(Rsqrt)
    OF_CASE(Reciprocal)
    OF_CASE(Exp2)
    OF_CASE(Expm1)
    OF_CASE(Tan)
    OF_CASE(Asin)
    OF_CASE(Acos)
    OF_CASE(Atan)
    OF_CASE(Asinh)
    OF_CASE(Acosh)
    OF_CASE(Atanh)
    OF_CASE(Log1p)
    OF_CASE(Log2)
    OF_CASE(Log10)
#undef OF_CASE
    default:
      return false;
  }
}

}  // namespace oneflow
