// Per-element value rules shared by the CPU and CUDA kernels (host and device code): casting,
// the uniform draw behind rand/randint, the pointwise functions and comparisons.
#pragma once

#include <cstdint>
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
    return static_cast<To>(compute_t<From>(v));
  }
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

// The pointwise function K of one value, in compute_t (float for the 16-bit floats).
template <UnaryFn K, typename C>
OF_HD inline C unary_value(C x) {
  if constexpr (K == UnaryFn::kAbs) {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else
      return x < C(0) ? C(-x) : x;
  } else if constexpr (std::is_integral_v<C>) {
    return x;  // floor, ceil, round of an integer (the other functions take floating inputs)
  } else if constexpr (K == UnaryFn::kFloor) {
    return OF_MATH(floor)(x);
  } else if constexpr (K == UnaryFn::kCeil) {
    return OF_MATH(ceil)(x);
  } else if constexpr (K == UnaryFn::kRound) {
    return OF_MATH(nearbyint)(x);  // half to even, as PyTorch
  } else if constexpr (K == UnaryFn::kSqrt) {
    return OF_MATH(sqrt)(x);
  } else if constexpr (K == UnaryFn::kRsqrt) {
    return C(1) / OF_MATH(sqrt)(x);
  } else if constexpr (K == UnaryFn::kLog) {
    return OF_MATH(log)(x);
  } else if constexpr (K == UnaryFn::kLog1p) {
    return OF_MATH(log1p)(x);
  } else if constexpr (K == UnaryFn::kSin) {
    return OF_MATH(sin)(x);
  } else if constexpr (K == UnaryFn::kCos) {
    return OF_MATH(cos)(x);
  } else if constexpr (K == UnaryFn::kTanh) {
    return OF_MATH(tanh)(x);
  } else if constexpr (K == UnaryFn::kSigmoid) {
    return C(1) / (C(1) + OF_MATH(exp)(-x));
  } else {
    return C(1) / x;
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
