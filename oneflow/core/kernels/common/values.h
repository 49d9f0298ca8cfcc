// Per-element value rules shared by the CPU and CUDA kernels (host and device code): casting,
// the uniform draw behind rand/randint, the pointwise functions and comparisons.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include <cmath>

#include "oneflow/core/common/dtype.h"
#include "oneflow/core/common/op_kinds.h"

namespace oneflow {

// Casts one value the way PyTorch does: floating -> integer truncates toward zero, anything ->
// bool is "!= 0", 16-bit floats go through float (round to nearest even).
template <typename To, typename From>
OF_HD inline To cast_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return compute_t<From>(v) != compute_t<From>(0);
  } else if constexpr (std::is_same_v<To, float16> || std::is_same_v<To, bfloat16>) {
    if constexpr (std::is_same_v<From, double>)
      return To(static_cast<float>(v));
    else
      return To(static_cast<float>(compute_t<From>(v)));
  } else {
#if defined(__CUDA_ARCH__)
    // Negative floats to uint8 go through int64 (wrapping), as PyTorch casts them on every
    // device; the GPU's direct conversion would saturate them to 0. The CPU's conversion goes
    // through a 32-bit integer and wraps already.
    if constexpr (std::is_same_v<To, uint8_t> && std::is_floating_point_v<compute_t<From>>)
      return static_cast<uint8_t>(static_cast<int64_t>(compute_t<From>(v)));
#endif
    return static_cast<To>(compute_t<From>(v));
  }
}

// Integer power as PyTorch computes it: square and multiply, wrapping on overflow; a negative
// exponent gives 0 except for the bases 1 and -1.
template <typename T>
OF_HD inline T int_pow(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) {
      if (a == 1) return T(1);
      if (a == -1) return (-b) % 2 ? T(-1) : T(1);
      return T(0);
    }
  }
  // Unsigned products of at least 32 bits wrap without undefined behaviour.
  using U = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
  U result = 1, base = static_cast<U>(a);
  for (; b; b /= 2, base *= base)
    if (b & 1) result *= base;
  return static_cast<T>(result);
}

// One uniform draw from 32 random bits: [low, high) for floating types (24 bits of mantissa),
// an integer in [low, high) otherwise.
template <typename T>
OF_HD inline T uniform_value(uint32_t bits, double low, double high) {
  if constexpr (std::is_floating_point_v<compute_t<T>>) {
    const double u = static_cast<double>(bits >> 8) * (1.0 / 16777216.0);  // [0, 1)
    double v = low + u * (high - low);
    if (v >= high) v = low;
    return T(static_cast<compute_t<T>>(v));
  } else {
    const uint64_t range =
        static_cast<uint64_t>(static_cast<int64_t>(high) - static_cast<int64_t>(low));
    const int64_t v = static_cast<int64_t>(low) + static_cast<int64_t>(range ? bits % range : 0);
    return cast_value<T>(v);
  }
}

// Math functions by name on host (std::) and device (CUDA's overloads).
#if defined(__CUDA_ARCH__)
#define OF_MATH(fn) ::fn
#else
#define OF_MATH(fn) std::fn
#endif

// Special functions with no std:: or CUDA counterpart (double precision inside).
OF_HD inline double erfinv_value(double y) {
  if (!(y > -1.0 && y < 1.0)) {
    if (y == 1.0) return std::numeric_limits<double>::infinity();
    if (y == -1.0) return -std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
  }
  // Giles' single-precision approximation, then two Newton steps on erf(x) = y.
  double w = -OF_MATH(log)((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = OF_MATH(sqrt)(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * y;
  constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
  for (int i = 0; i < 2; ++i) {
    const double d = kTwoOverSqrtPi * OF_MATH(exp)(-x * x);
    if (d == 0.0) break;
    x -= (OF_MATH(erf)(x) - y) / d;
  }
  return x;
}

// psi(x) = d/dx log(gamma(x)): reflection below 0, recurrence up to 10, asymptotic series.
OF_HD inline double digamma_value(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x == 0.0) return OF_MATH(copysign)(std::numeric_limits<double>::infinity(), -x);
  double result = 0.0;
  if (x < 0.0) {
    if (x == OF_MATH(trunc)(x)) return std::numeric_limits<double>::quiet_NaN();
    result = -kPi / OF_MATH(tan)(kPi * x);
    x = 1.0 - x;
  }
  for (; x < 10.0; x += 1.0) result -= 1.0 / x;
  const double z = 1.0 / (x * x);
  const double tail =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132)))));
  return result + OF_MATH(log)(x) - 0.5 / x - tail;
}

// psi'(x), the derivative of digamma.
OF_HD inline double trigamma_value(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x <= 0.0 && x == OF_MATH(trunc)(x)) return std::numeric_limits<double>::infinity();
  double sign = 1.0, result = 0.0;
  if (x < 0.5) {  // psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
    const double s = OF_MATH(sin)(kPi * x);
    result = kPi * kPi / (s * s);
    sign = -1.0;
    x = 1.0 - x;
  }
  double r = 0.0;
  for (; x < 10.0; x += 1.0) r += 1.0 / (x * x);
  const double z = 1.0 / (x * x);
  r += 1.0 / x + z / 2 +
       z / x * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (5.0 / 66)))));
  return result + sign * r;
}

// The pointwise function K of one value, in compute_t (float for the 16-bit floats).
template <UnaryFn K, typename C>
OF_HD inline C unary_value(C x) {
  if constexpr (K == UnaryFn::kBitwiseNot) {
    if constexpr (std::is_same_v<C, bool>)
      return !x;
    else if constexpr (std::is_integral_v<C>)
      return C(~x);
    else
      return x;  // not reached: bitwise_not takes integers and bool
  } else if constexpr (K == UnaryFn::kAbs) {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (std::is_floating_point_v<C>)
      return OF_MATH(fabs)(x);  // abs(-0.0) is +0.0
    else
      return x < C(0) ? C(-x) : x;
  } else if constexpr (K == UnaryFn::kNeg) {
    if constexpr (std::is_integral_v<C>)
      return C(0 - static_cast<std::make_unsigned_t<C>>(x));  // wraps like two's complement
    else
      return -x;
  } else if constexpr (K == UnaryFn::kSign) {
    if constexpr (std::is_unsigned_v<C>)
      return x > C(0) ? C(1) : C(0);
    else
      return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));  // NaN gives 0, as PyTorch
  } else if constexpr (std::is_integral_v<C>) {
    return x;  // floor, ceil, round, trunc of an integer (the rest take floating inputs)
  } else if constexpr (K == UnaryFn::kFloor) {
    return OF_MATH(floor)(x);
  } else if constexpr (K == UnaryFn::kCeil) {
    return OF_MATH(ceil)(x);
  } else if constexpr (K == UnaryFn::kRound) {
    return OF_MATH(nearbyint)(x);  // half to even, as PyTorch
  } else if constexpr (K == UnaryFn::kTrunc) {
    return OF_MATH(trunc)(x);
  } else if constexpr (K == UnaryFn::kSqrt) {
    return OF_MATH(sqrt)(x);
  } else if constexpr (K == UnaryFn::kRsqrt) {
    return C(1) / OF_MATH(sqrt)(x);
  } else if constexpr (K == UnaryFn::kLog) {
    return OF_MATH(log)(x);
  } else if constexpr (K == UnaryFn::kLog1p) {
    return OF_MATH(log1p)(x);
  } else if constexpr (K == UnaryFn::kLog2) {
    return OF_MATH(log2)(x);
  } else if constexpr (K == UnaryFn::kLog10) {
    return OF_MATH(log10)(x);
  } else if constexpr (K == UnaryFn::kExp2) {
    return OF_MATH(exp2)(x);
  } else if constexpr (K == UnaryFn::kExpm1) {
    return OF_MATH(expm1)(x);
  } else if constexpr (K == UnaryFn::kSin) {
    return OF_MATH(sin)(x);
  } else if constexpr (K == UnaryFn::kCos) {
    return OF_MATH(cos)(x);
  } else if constexpr (K == UnaryFn::kTan) {
    return OF_MATH(tan)(x);
  } else if constexpr (K == UnaryFn::kAsin) {
    return OF_MATH(asin)(x);
  } else if constexpr (K == UnaryFn::kAcos) {
    return OF_MATH(acos)(x);
  } else if constexpr (K == UnaryFn::kAtan) {
    return OF_MATH(atan)(x);
  } else if constexpr (K == UnaryFn::kSinh) {
    return OF_MATH(sinh)(x);
  } else if constexpr (K == UnaryFn::kCosh) {
    return OF_MATH(cosh)(x);
  } else if constexpr (K == UnaryFn::kAsinh) {
    return OF_MATH(asinh)(x);
  } else if constexpr (K == UnaryFn::kAcosh) {
    return OF_MATH(acosh)(x);
  } else if constexpr (K == UnaryFn::kAtanh) {
    return OF_MATH(atanh)(x);
  } else if constexpr (K == UnaryFn::kTanh) {
    return OF_MATH(tanh)(x);
  } else if constexpr (K == UnaryFn::kErf) {
    return OF_MATH(erf)(x);
  } else if constexpr (K == UnaryFn::kErfc) {
    return OF_MATH(erfc)(x);
  } else if constexpr (K == UnaryFn::kErfinv) {
    return C(erfinv_value(static_cast<double>(x)));
  } else if constexpr (K == UnaryFn::kLgamma) {
    return OF_MATH(lgamma)(x);
  } else if constexpr (K == UnaryFn::kDigamma) {
    return C(digamma_value(static_cast<double>(x)));
  } else if constexpr (K == UnaryFn::kTrigamma) {
    return C(trigamma_value(static_cast<double>(x)));
  } else if constexpr (K == UnaryFn::kSigmoid) {
    return C(1) / (C(1) + OF_MATH(exp)(-x));
  } else {
    return C(1) / x;
  }
}

// The elementwise binary function K of two values, in compute_t. Integer division and modulo
// by zero give 0 here; the functional layer reports it before the kernel runs.
template <BinaryFn K, typename C>
OF_HD inline C binary_value(C a, C b) {
  constexpr bool kFloat = std::is_floating_point_v<C>;
  if constexpr (K == BinaryFn::kMaximum || K == BinaryFn::kMinimum) {
    if constexpr (kFloat) {
      if (a != a) return a;  // NaN propagates
      if (b != b) return b;
    }
    if constexpr (K == BinaryFn::kMaximum)
      return a > b ? a : b;
    else
      return a < b ? a : b;
  } else if constexpr (K == BinaryFn::kFmax || K == BinaryFn::kFmin) {
    if constexpr (kFloat) {
      if (a != a) return b;  // NaN is ignored unless both are NaN
      if (b != b) return a;
    }
    if constexpr (K == BinaryFn::kFmax)
      return a > b ? a : b;
    else
      return a < b ? a : b;
  } else if constexpr (K == BinaryFn::kBitwiseAnd || K == BinaryFn::kLogicalAnd) {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    if constexpr (std::is_integral_v<C>) return C(a & b);
    return a;
  } else if constexpr (K == BinaryFn::kBitwiseOr || K == BinaryFn::kLogicalOr) {
    if constexpr (std::is_same_v<C, bool>) return a || b;
    if constexpr (std::is_integral_v<C>) return C(a | b);
    return a;
  } else if constexpr (K == BinaryFn::kBitwiseXor || K == BinaryFn::kLogicalXor) {
    if constexpr (std::is_same_v<C, bool>) return a != b;
    if constexpr (std::is_integral_v<C>) return C(a ^ b);
    return a;
  } else if constexpr (K == BinaryFn::kLeftShift || K == BinaryFn::kRightShift) {
    // PyTorch's rules: a shift by a negative amount or by the width (or more) gives 0 to the
    // left, and to the right the sign fill (0 or -1; 0 for unsigned types).
    if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
      constexpr int bits = static_cast<int>(sizeof(C) * 8);
      constexpr bool is_signed = std::is_signed_v<C>;
      bool outside = !(b < C(bits));
      if constexpr (is_signed) outside = outside || b < C(0);
      if constexpr (K == BinaryFn::kLeftShift) {
        using U = std::make_unsigned_t<C>;
        return outside ? C(0) : C(static_cast<U>(static_cast<U>(a) << b));
      } else {
        if constexpr (is_signed) return outside ? C(a < C(0) ? -1 : 0) : C(a >> b);
        return outside ? C(0) : C(a >> b);
      }
    }
    return a;
  } else if constexpr (K == BinaryFn::kPrelu) {
    return a > C(0) ? a : C(b * a);
  } else if constexpr (K == BinaryFn::kAtan2) {
    if constexpr (kFloat) return OF_MATH(atan2)(a, b);
    return a;
  } else if constexpr (kFloat) {
    if constexpr (K == BinaryFn::kFmod) {
      return OF_MATH(fmod)(a, b);
    } else if constexpr (K == BinaryFn::kRemainder) {
      C r = OF_MATH(fmod)(a, b);
      if (r != C(0) && ((r < C(0)) != (b < C(0)))) r += b;
      return r;
    } else if constexpr (K == BinaryFn::kTruncDivide) {
      return OF_MATH(trunc)(a / b);
    } else {  // floor division, PyTorch's rule (exact when a is a multiple of b)
      if (b == C(0)) return a / b;
      C mod = OF_MATH(fmod)(a, b);
      C div = (a - mod) / b;
      if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) div -= C(1);
      if (div == C(0)) return OF_MATH(copysign)(C(0), a / b);
      C q = OF_MATH(floor)(div);
      if (div - q > C(0.5)) q += C(1);
      return q;
    }
  } else if constexpr (std::is_same_v<C, bool>) {
    return a;  // not reached: the arithmetic functions take numbers
  } else {
    if (b == C(0)) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == C(-1)) {  // avoids the INT_MIN / -1 trap; the quotient wraps
        if constexpr (K == BinaryFn::kFmod || K == BinaryFn::kRemainder)
          return C(0);
        else
          return C(0 - static_cast<std::make_unsigned_t<C>>(a));
      }
    }
    if constexpr (K == BinaryFn::kFmod) {
      return C(a % b);
    } else if constexpr (K == BinaryFn::kRemainder) {
      C r = C(a % b);
      if (r != C(0) && ((r < C(0)) != (b < C(0)))) r = C(r + b);
      return r;
    } else if constexpr (K == BinaryFn::kTruncDivide) {
      return C(a / b);
    } else {
      C q = C(a / b);
      if (C(a % b) != C(0) && ((a < C(0)) != (b < C(0)))) q = C(q - 1);
      return q;
    }
  }
}

template <CompareFn K, typename C>
OF_HD inline bool compare_value(C x, C y) {
  if constexpr (K == CompareFn::kEq) return x == y;
  if constexpr (K == CompareFn::kNe) return x != y;
  if constexpr (K == CompareFn::kLt) return x < y;
  if constexpr (K == CompareFn::kLe) return x <= y;
  if constexpr (K == CompareFn::kGt) return x > y;
  return x >= y;
}

}  // namespace oneflow
