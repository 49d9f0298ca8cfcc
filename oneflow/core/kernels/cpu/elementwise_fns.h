// The kernel templates of the elementwise families Unary<F>, Binary<F> and Compare<F> and the
// vector helpers they share with unary_math.cpp. Each family member's instantiation is a large
// piece of code (every dtype, contiguous and strided runs, vector tiers), so the members are
// instantiated in several translation units that compile in parallel: unary_fns_1.cpp to
// unary_fns_3.cpp (the three parts of OF_UNARY_FNS), binary_fns_1.cpp and binary_fns_2.cpp (the
// two parts of OF_BINARY_FNS) and compare_fns.cpp.
#pragma once

#include <sleef.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

// The 16-bit floats, computed in float.
template <typename T>
constexpr bool is_16bit_float = std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>;
// The dtypes the vector forms of the unary functions serve (16-bit floats through float).
template <typename T>
constexpr bool vector_float =
    std::is_same_v<T, float> || std::is_same_v<T, double> || is_16bit_float<T>;

// out = f(a). `vf(__m128)` and `vd(__m128d)` are the Sleef forms used on contiguous float and
// double runs; `sc(C)` is the scalar form. `fast(x, y, n)`, when given, replaces the float
// vector loop on CPUs with AVX2 (kernels/cpu/vec/avx2.h). 16-bit floats go through the float
// forms in chunks widened to float and rounded back (PyTorch's way: one rounding of the float
// result); element by element they ran 5-13x behind PyTorch.
template <typename T, typename Scalar, typename VecF, typename VecD>
void unary_sleef(const Tensor& a, const Tensor& out, Scalar sc, VecF vf, VecD vd,
                 cpu::avx2::UnaryKernel fast = nullptr) {
  if (!cpu::avx2::has_avx2()) fast = nullptr;
  using C = compute_t<T>;
  constexpr int64_t sz = sizeof(T);
  cpu::tensor_loop<2>({out.get(), a.get()}, [&](std::array<char*, 2> p, const auto& s, int64_t n) {
    if constexpr (is_16bit_float<T>) {
      constexpr int64_t kChunk = 256;
      float xb[kChunk], yb[kChunk];
      for (int64_t b = 0; b < n; b += kChunk) {
        const int64_t m = std::min(kChunk, n - b);
        for (int64_t j = 0; j < m; ++j)
          xb[j] = float(*reinterpret_cast<const T*>(p[1] + (b + j) * s[1]));
        int64_t j = 0;
        if (fast) {
          fast(xb, yb, m);
          j = m;
        }
        for (; j + 4 <= m; j += 4) _mm_storeu_ps(yb + j, vf(_mm_loadu_ps(xb + j)));
        for (; j < m; ++j) yb[j] = float(sc(C(xb[j])));
        for (int64_t k = 0; k < m; ++k) *reinterpret_cast<T*>(p[0] + (b + k) * s[0]) = T(yb[k]);
      }
      return;
    }
    T* o = reinterpret_cast<T*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    int64_t i = 0;
    if (s[0] == sz && s[1] == sz) {
      if constexpr (std::is_same_v<T, float>) {
        if (fast) {
          fast(x, o, n);
          return;
        }
        for (; i + 4 <= n; i += 4) _mm_storeu_ps(o + i, vf(_mm_loadu_ps(x + i)));
      } else if constexpr (std::is_same_v<T, double>) {
        for (; i + 2 <= n; i += 2) _mm_storeu_pd(o + i, vd(_mm_loadu_pd(x + i)));
      }
      for (; i < n; ++i) o[i] = T(sc(C(x[i])));
    } else {
      for (; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            T(sc(C(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
    }
  });
}

// Sleef's vector form of K (4 float / 2 double lanes), or nullptr where the scalar rule is used.
#define OF_SLEEF_TABLE(X) \
  X(Log, log, u10)        \
  X(Log1p, log1p, u10)    \
  X(Log2, log2, u10)      \
  X(Log10, log10, u10)    \
  X(Exp2, exp2, u10)      \
  X(Expm1, expm1, u10)    \
  X(Sin, sin, u10)        \
  X(Cos, cos, u10)        \
  X(Tan, tan, u10)        \
  X(Asin, asin, u10)      \
  X(Acos, acos, u10)      \
  X(Atan, atan, u10)      \
  X(Sinh, sinh, u10)      \
  X(Cosh, cosh, u10)      \
  X(Tanh, tanh, u10)      \
  X(Atanh, atanh, u10)    \
  X(Erf, erf, u10)        \
  X(Erfc, erfc, u15)      \
  X(Lgamma, lgamma, u10)

using SleefF4 = decltype(&Sleef_expf4_u10);
using SleefD2 = decltype(&Sleef_expd2_u10);

template <UnaryFn K>
constexpr bool has_sleef() {
#define OF_SLEEF_HAS(E, fn, u) \
  if constexpr (K == UnaryFn::k##E) return true;
  OF_SLEEF_TABLE(OF_SLEEF_HAS)
#undef OF_SLEEF_HAS
  return false;
}

template <UnaryFn K>
constexpr SleefF4 sleef_f4() {
#define OF_SLEEF_F4(E, fn, u) \
  if constexpr (K == UnaryFn::k##E) return &Sleef_##fn##f4_##u;
  OF_SLEEF_TABLE(OF_SLEEF_F4)
#undef OF_SLEEF_F4
  return nullptr;
}

template <UnaryFn K>
constexpr SleefD2 sleef_d2() {
#define OF_SLEEF_D2(E, fn, u) \
  if constexpr (K == UnaryFn::k##E) return &Sleef_##fn##d2_##u;
  OF_SLEEF_TABLE(OF_SLEEF_D2)
#undef OF_SLEEF_D2
  return nullptr;
}

// The functions an SSE2 instruction or two compute exactly as the scalar rule: sqrt, rsqrt (a
// division by the square root), abs, neg (sign bit) and reciprocal.
template <UnaryFn K>
constexpr bool has_sse2_form() {
  return K == UnaryFn::kSqrt || K == UnaryFn::kRsqrt || K == UnaryFn::kAbs || K == UnaryFn::kNeg ||
         K == UnaryFn::kReciprocal;
}

template <UnaryFn K>
__m128 sse2_form(__m128 v) {
  const __m128 one = _mm_set1_ps(1.0f), sign = _mm_set1_ps(-0.0f);
  if constexpr (K == UnaryFn::kSqrt) return _mm_sqrt_ps(v);
  if constexpr (K == UnaryFn::kRsqrt) return _mm_div_ps(one, _mm_sqrt_ps(v));
  if constexpr (K == UnaryFn::kAbs) return _mm_andnot_ps(sign, v);
  if constexpr (K == UnaryFn::kNeg) return _mm_xor_ps(sign, v);
  return _mm_div_ps(one, v);
}

template <UnaryFn K>
__m128d sse2_form(__m128d v) {
  const __m128d one = _mm_set1_pd(1.0), sign = _mm_set1_pd(-0.0);
  if constexpr (K == UnaryFn::kSqrt) return _mm_sqrt_pd(v);
  if constexpr (K == UnaryFn::kRsqrt) return _mm_div_pd(one, _mm_sqrt_pd(v));
  if constexpr (K == UnaryFn::kAbs) return _mm_andnot_pd(sign, v);
  if constexpr (K == UnaryFn::kNeg) return _mm_xor_pd(sign, v);
  return _mm_div_pd(one, v);
}

// out = kernel(a) over the contiguous float runs; false (nothing done) when a run is strided.
inline bool rounding_avx2(const Tensor& a, const Tensor& out, cpu::avx2::UnaryKernel kernel) {
  if (!a->is_contiguous() || !out->is_contiguous() || a->shape() != out->shape()) return false;
  const float* x = a->data_as<float>();
  float* y = out->data_as<float>();
  const int64_t n = out->numel(), chunk = 1 << 14;
  OF_OMP_FOR_IF(n > cpu::kParallelGrain, schedule(static),
                for (int64_t b = 0; b < n; b += chunk)
                    kernel(x + b, y + b, std::min(chunk, n - b)););
  return true;
}

template <UnaryFn K>
void Unary<K>::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool> && K != UnaryFn::kBitwiseNot) {
      return;  // infer rejects bool for the other functions
    } else if constexpr (std::is_same_v<T, bool>) {
      // As bytes (bools are 0 or 1): GCC vectorises x ^ 1 on uint8 but not !x on bool.
      cpu::unary_loop<uint8_t>(in[0], out[0], [](uint8_t x) { return uint8_t(x ^ 1); });
    } else if constexpr (vector_float<T> && K == UnaryFn::kSigmoid) {
      unary_sleef<T>(
          in[0], out[0], [](C x) { return unary_value<K>(x); },
          [](__m128 v) {
            const __m128 one = _mm_set1_ps(1.0f);
            return _mm_div_ps(one,
                              _mm_add_ps(one, Sleef_expf4_u10(_mm_sub_ps(_mm_setzero_ps(), v))));
          },
          [](__m128d v) {
            const __m128d one = _mm_set1_pd(1.0);
            return _mm_div_pd(one,
                              _mm_add_pd(one, Sleef_expd2_u10(_mm_sub_pd(_mm_setzero_pd(), v))));
          },
          cpu::avx2::unary_kernel(K));
    } else if constexpr (vector_float<T> && has_sleef<K>()) {
      unary_sleef<T>(
          in[0], out[0], [](C x) { return unary_value<K>(x); },
          [](__m128 v) { return sleef_f4<K>()(v); }, [](__m128d v) { return sleef_d2<K>()(v); },
          cpu::avx2::unary_kernel(K));
    } else if constexpr (vector_float<T> && has_sse2_form<K>()) {
      unary_sleef<T>(
          in[0], out[0], [](C x) { return unary_value<K>(x); },
          [](__m128 v) { return sse2_form<K>(v); }, [](__m128d v) { return sse2_form<K>(v); },
          cpu::avx2::unary_kernel(K));
    } else {
      constexpr bool kRounding = K == UnaryFn::kFloor || K == UnaryFn::kCeil ||
                                 K == UnaryFn::kTrunc || K == UnaryFn::kRound;
      if constexpr ((kRounding || K == UnaryFn::kErfinv) && std::is_same_v<T, float>) {
        // SSE2 has no rounding instruction (each element would be a libm call): AVX2's
        // vroundps on contiguous runs when the CPU has it. erfinv: an AVX2 kernel in float
        // (PyTorch's float computation) instead of the double-precision scalar rule.
        if (cpu::avx2::has_avx2() && rounding_avx2(in[0], out[0], cpu::avx2::unary_kernel(K)))
          return;
      }
      cpu::unary_loop<T>(in[0], out[0], [](C x) { return unary_value<K>(x); });
    }
  });
}

template <BinaryFn K>
void Binary<K>::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (cpu::avx2::has_avx2()) {
        constexpr bool f32 = std::is_same_v<T, float>;
        static const cpu::avx2::BinaryKernel<T> fast = [] {
          if constexpr (f32)
            return cpu::avx2::binary_kernel_f32(K);
          else
            return cpu::avx2::binary_kernel_f64(K);
        }();
        return cpu::binary_loop<T>(in[0], in[1], out[0], fast,
                                   [](T x, T y) { return binary_value<K>(x, y); });
      }
    }
    cpu::binary_loop<T>(in[0], in[1], out[0], [](C x, C y) { return binary_value<K>(x, y); });
  });
}

template <CompareFn K>
void Compare<K>::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const auto tier = cpu::loop_tier();
  visit_dtype(in[0]->dtype(), [&]<typename V>() {
    // Bools (0 or 1) compare as bytes: GCC does not vectorise loops over bool values.
    using T = std::conditional_t<std::is_same_v<V, bool>, uint8_t, V>;
    using C = compute_t<T>;
    cpu::tensor_loop<3>({out[0].get(), in[0].get(), in[1].get()},
                        [&](std::array<char*, 3> p, const auto& s, int64_t n) {
                          bool* o = reinterpret_cast<bool*>(p[0]);
                          const T* x = reinterpret_cast<const T*>(p[1]);
                          const T* y = reinterpret_cast<const T*>(p[2]);
                          constexpr int64_t sz = sizeof(T);
                          if (s[0] == 1 && s[1] == 0 && s[2] == sz) {
                            // one value against a run (one_hot's index == arange(C))
                            const C xv = C(*x);
                            cpu::run_loop(tier, [&] {
                              auto* const o_ = o;
                              auto* const y_ = y;
                              const int64_t m = n;
                              const C xv_ = xv;
                              for (int64_t i = 0; i < m; ++i)
                                o_[i] = compare_value<K>(xv_, C(y_[i]));
                            });
                            return;
                          }
                          if (s[0] == 1 && s[1] == sz && (s[2] == sz || s[2] == 0)) {
                            if (s[2] == 0) {  // against one value (x > 0)
                              const C yv = C(*y);
                              cpu::run_loop(tier, [&] {
                                auto* const o_ = o;
                                auto* const x_ = x;
                                const int64_t m = n;
                                const C yv_ = yv;
                                for (int64_t i = 0; i < m; ++i)
                                  o_[i] = compare_value<K>(C(x_[i]), yv_);
                              });
                            } else {
                              cpu::run_loop(tier, [&] {
                                auto* const o_ = o;
                                auto* const x_ = x;
                                auto* const y_ = y;
                                const int64_t m = n;
                                for (int64_t i = 0; i < m; ++i)
                                  o_[i] = compare_value<K>(C(x_[i]), C(y_[i]));
                              });
                            }
                            return;
                          }
                          for (int64_t i = 0; i < n; ++i) {
                            const C x = C(*reinterpret_cast<const T*>(p[1] + i * s[1]));
                            const C y = C(*reinterpret_cast<const T*>(p[2] + i * s[2]));
                            *reinterpret_cast<bool*>(p[0] + i * s[0]) = compare_value<K>(x, y);
                          }
                        });
  });
}

// The explicit instantiation of one member's kernel, for the X-macro lists of op_kinds.h.
#define OF_INSTANTIATE_KERNEL(Family, Kind, E)                                        \
  template void Family<Kind::k##E>::compute_cpu(const TensorList&, const TensorList&, \
                                                const Attrs&) const;

}  // namespace oneflow
