// The binary vector kernels of the vec/ translation units, written once over a lanes type L (8
// floats of AVX2, 16 of AVX-512, ...). L provides: T, V, kN, load, store, set1, add, sub, div,
// max, min, floor, trunc, sign_bits (the sign bit alone: a signed zero), cmp<predicate>,
// select(mask, yes, no), bit_and and bit_xor (of cmp's masks), and the Sleef functions atan2,
// fmod and pow. Included only by vec/*.cpp, each built for its own instruction
// set: everything here has internal linkage, so the linker never mixes two builds.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "oneflow/core/common/op_kinds.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"

namespace oneflow::cpu {
namespace {

// Sleef's fmod gives NaN once the quotient a / b leaves its range (fmod(1e30, 1e-30)): the
// lanes set in `nan` (those of r that are NaN) are computed again with std::fmod, which gives NaN
// where the result is one.
template <typename T, typename V>
V fmod_nan_lanes(V r, V a, V b, unsigned nan) {
  if (!nan) return r;
  constexpr int kN = sizeof(V) / sizeof(T);
  alignas(64) T rv[kN], av[kN], bv[kN];
  std::memcpy(rv, &r, sizeof(V));
  std::memcpy(av, &a, sizeof(V));
  std::memcpy(bv, &b, sizeof(V));
  for (int l = 0; l < kN; ++l)
    if (nan >> l & 1) rv[l] = std::fmod(av[l], bv[l]);
  std::memcpy(&r, rv, sizeof(V));
  return r;
}

// The binary functions on lanes, with the scalar rules of values.h's binary_value.
template <BinaryFn K, typename L>
typename L::V binary_lanes(typename L::V a, typename L::V b) {
  using T = typename L::T;
  if constexpr (K == BinaryFn::kAtan2) {
    return L::atan2(a, b);
  } else if constexpr (K == BinaryFn::kFmod) {
    return L::fmod(a, b);
  } else if constexpr (K == BinaryFn::kRemainder) {
    // fmod, then + b where the result is nonzero and its sign differs from b's.
    const auto zero = L::set1(T(0)), r = L::fmod(a, b);
    const auto sign_differs =
        L::bit_xor(L::template cmp<_CMP_LT_OQ>(r, zero), L::template cmp<_CMP_LT_OQ>(b, zero));
    const auto fix = L::bit_and(L::template cmp<_CMP_NEQ_UQ>(r, zero), sign_differs);
    return L::select(fix, L::add(r, b), r);
  } else if constexpr (K == BinaryFn::kTruncDivide) {
    return L::trunc(L::div(a, b));
  } else if constexpr (K == BinaryFn::kFloorDivide) {
    // PyTorch's rule (binary_value): (a - fmod(a, b)) / b, one less where the remainder's sign
    // differs from b's, rounded to the nearest integer; a zero quotient keeps the sign of a / b;
    // b == 0 gives a / b.
    const auto zero = L::set1(T(0)), quotient = L::div(a, b), mod = L::fmod(a, b);
    auto div = L::div(L::sub(a, mod), b);
    const auto sign_differs =
        L::bit_xor(L::template cmp<_CMP_LT_OQ>(b, zero), L::template cmp<_CMP_LT_OQ>(mod, zero));
    const auto fix = L::bit_and(L::template cmp<_CMP_NEQ_UQ>(mod, zero), sign_differs);
    div = L::select(fix, L::sub(div, L::set1(T(1))), div);
    auto q = L::floor(div);
    q = L::select(L::template cmp<_CMP_GT_OQ>(L::sub(div, q), L::set1(T(0.5))),
                  L::add(q, L::set1(T(1))), q);
    q = L::select(L::template cmp<_CMP_EQ_OQ>(div, zero), L::sign_bits(quotient), q);
    return L::select(L::template cmp<_CMP_EQ_OQ>(b, zero), quotient, q);
  } else {
    // max(a, b) is a > b ? a : b (also for signed zeros, as the scalar rule) and b when either
    // is NaN; a NaN a must win too.
    const auto m = K == BinaryFn::kMaximum ? L::max(a, b) : L::min(a, b);
    return L::select(L::template cmp<_CMP_UNORD_Q>(a, a), a, m);
  }
}

// The function of a binary_map: one of the BinaryFn functions, pow or division.
template <BinaryFn K>
struct BinaryOp {
  template <typename L>
  static typename L::V apply(typename L::V a, typename L::V b) {
    return binary_lanes<K, L>(a, b);
  }
};
struct PowOp {
  template <typename L>
  static typename L::V apply(typename L::V a, typename L::V b) {
    return L::pow(a, b);
  }
};
struct DivOp {
  template <typename L>
  static typename L::V apply(typename L::V a, typename L::V b) {
    return L::div(a, b);
  }
};

// out = f(x, y) for n elements; xs and ys are 1 for a contiguous operand, 0 for one value
// broadcast (avx2::BinaryKernel).
template <typename Op, typename L>
void binary_map(const typename L::T* x, int64_t xs, const typename L::T* y, int64_t ys,
                typename L::T* out, int64_t n) {
  using T = typename L::T;
  constexpr int kN = L::kN;
  int64_t i = 0;
  if (xs && ys) {
    for (; i + kN <= n; i += kN)
      L::store(out + i, Op::template apply<L>(L::load(x + i), L::load(y + i)));
  } else if (ys) {
    const auto xv = L::set1(*x);
    for (; i + kN <= n; i += kN) L::store(out + i, Op::template apply<L>(xv, L::load(y + i)));
  } else {
    const auto yv = L::set1(*y);
    for (; i + kN <= n; i += kN)
      L::store(out + i, Op::template apply<L>(xs ? L::load(x + i) : L::set1(*x), yv));
  }
  if (i < n) {  // the tail through padded buffers
    T bx[kN], by[kN], bo[kN];
    for (int j = 0; j < kN; ++j) {
      const bool in = i + j < n;
      bx[j] = in ? x[xs * (i + j)] : T(1);
      by[j] = in ? y[ys * (i + j)] : T(1);
    }
    L::store(bo, Op::template apply<L>(L::load(bx), L::load(by)));
    for (int64_t j = i; j < n; ++j) out[j] = bo[j - i];
  }
}

// The kernel of fn on L, or nullptr where there is none.
template <typename L>
avx2::BinaryKernel<typename L::T> binary_map_kernel(BinaryFn fn) {
  switch (fn) {
    case BinaryFn::kAtan2:
      return &binary_map<BinaryOp<BinaryFn::kAtan2>, L>;
    case BinaryFn::kFmod:
      return &binary_map<BinaryOp<BinaryFn::kFmod>, L>;
    case BinaryFn::kRemainder:
      return &binary_map<BinaryOp<BinaryFn::kRemainder>, L>;
    case BinaryFn::kFloorDivide:
      return &binary_map<BinaryOp<BinaryFn::kFloorDivide>, L>;
    case BinaryFn::kTruncDivide:
      return &binary_map<BinaryOp<BinaryFn::kTruncDivide>, L>;
    case BinaryFn::kMaximum:
      return &binary_map<BinaryOp<BinaryFn::kMaximum>, L>;
    case BinaryFn::kMinimum:
      return &binary_map<BinaryOp<BinaryFn::kMinimum>, L>;
    default:
      return nullptr;
  }
}

}  // namespace
}  // namespace oneflow::cpu
