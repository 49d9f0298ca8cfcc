// Per-element value rules shared by the CPU and CUDA kernels (host and device code): casting
// and the uniform draw behind rand/randint.
#pragma once

#include <cstdint>
#include <type_traits>

#include "oneflow/core/common/dtype.h"

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

}  // namespace oneflow
