// Enumerations that name the members of primitive families (shared by ops/ and functional/).
#pragma once

#include <cstdint>

namespace oneflow {

// Pointwise math functions of the Unary<F> primitive.
enum class UnaryFn : int8_t {
  kAbs,
  kSqrt,
  kRsqrt,
  kLog,
  kLog1p,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kFloor,
  kCeil,
  kRound,
  kReciprocal,
};

// Comparisons of the Compare<F> primitive.
enum class CompareFn : int8_t { kEq, kNe, kLt, kLe, kGt, kGe };

}  // namespace oneflow
