// The activation family's chunk loops (activation_chunks.h) built for AVX2 + FMA: this file is
// compiled with -mavx2 -mfma -fno-trapping-math, so the loops over the scalar rules vectorise
// 8 floats / 4 doubles wide, and the vector functions are Sleef's AVX2 ones (float exp: the own
// exp_full of exp_avx2.h). Only called after the runtime check (avx2.h's has_avx2()).
#include <immintrin.h>
#include <sleef.h>

#include <cmath>

#include "oneflow/core/kernels/cpu/activation_chunks.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/kernels/cpu/vec/avx512.h"
#include "oneflow/core/kernels/cpu/vec/exp_avx2.h"

namespace oneflow::cpu {

namespace {

// Sleef's AVX2 functions over n contiguous values, then the scalar function for the tail.
template <typename C, V U>
void vmath(C* p, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<C, float>) {
    if constexpr (U == V::kExp) {
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(p + i, avx2::exp_full(_mm256_loadu_ps(p + i)));
    } else {
      constexpr auto f8 = U == V::kExpm1   ? &Sleef_expm1f8_u10avx2
                          : U == V::kLog1p ? &Sleef_log1pf8_u10avx2
                                           : &Sleef_tanhf8_u10avx2;
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(p + i, f8(_mm256_loadu_ps(p + i)));
    }
  } else {
    constexpr auto d4 = U == V::kExp     ? &Sleef_expd4_u10avx2
                        : U == V::kExpm1 ? &Sleef_expm1d4_u10avx2
                        : U == V::kLog1p ? &Sleef_log1pd4_u10avx2
                                         : &Sleef_tanhd4_u10avx2;
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(p + i, d4(_mm256_loadu_pd(p + i)));
  }
  for (; i < n; ++i) p[i] = scalar_math<U>(p[i]);
}

}  // namespace

namespace avx2 {

template <typename C>
ActKernel<C> activation_kernel(ActFn fn) {
  if (has_avx512()) return avx512::activation_kernel<C>(fn);
  return act_chunk_of<C>(fn);
}

template <typename C>
ActGradKernel<C> activation_grad_kernel(ActFn fn) {
  if (has_avx512()) return avx512::activation_grad_kernel<C>(fn);
  return grad_chunk_of<C>(fn);
}

template <typename C>
ActGradKernel<C> activation_of_difference_kernel(ActFn fn) {
  if (has_avx512()) return avx512::activation_of_difference_kernel<C>(fn);
  return diff_chunk_of<C>(fn);
}

template ActGradKernel<float> activation_of_difference_kernel<float>(ActFn);
template ActGradKernel<double> activation_of_difference_kernel<double>(ActFn);
template ActKernel<float> activation_kernel<float>(ActFn);
template ActKernel<double> activation_kernel<double>(ActFn);
template ActGradKernel<float> activation_grad_kernel<float>(ActFn);
template ActGradKernel<double> activation_grad_kernel<double>(ActFn);

}  // namespace avx2
}  // namespace oneflow::cpu
