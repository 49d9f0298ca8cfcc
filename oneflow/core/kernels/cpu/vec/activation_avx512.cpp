// The activation family's chunk loops (activation_chunks.h) built for AVX-512: this file is
// compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma -mprefer-vector-width=512
// -fno-trapping-math, so the loops over the scalar rules vectorise 16 floats / 8 doubles wide,
// and the vector functions are Sleef's AVX-512 ones (float exp: the own exp16 of
// exp_avx512.h). Only reached through avx2::activation_kernel after the runtime check.
#include <immintrin.h>
#include <sleef.h>

#include <cmath>

#include "oneflow/core/kernels/cpu/activation_chunks.h"
#include "oneflow/core/kernels/cpu/vec/avx512.h"
#include "oneflow/core/kernels/cpu/vec/exp_avx512.h"

namespace oneflow::cpu {

namespace {

// Sleef's AVX-512 functions over n contiguous values, then the scalar function for the tail.
template <typename C, V U>
void vmath(C* p, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<C, float>) {
    if constexpr (U == V::kExp) {
      for (; i + 16 <= n; i += 16) _mm512_storeu_ps(p + i, avx512::exp16(_mm512_loadu_ps(p + i)));
    } else {
      constexpr auto f16 = U == V::kExpm1   ? &Sleef_expm1f16_u10avx512f
                           : U == V::kLog1p ? &Sleef_log1pf16_u10avx512f
                                            : &Sleef_tanhf16_u10avx512f;
      for (; i + 16 <= n; i += 16) _mm512_storeu_ps(p + i, f16(_mm512_loadu_ps(p + i)));
    }
  } else {
    constexpr auto d8 = U == V::kExp     ? &Sleef_expd8_u10avx512f
                        : U == V::kExpm1 ? &Sleef_expm1d8_u10avx512f
                        : U == V::kLog1p ? &Sleef_log1pd8_u10avx512f
                                         : &Sleef_tanhd8_u10avx512f;
    for (; i + 8 <= n; i += 8) _mm512_storeu_pd(p + i, d8(_mm512_loadu_pd(p + i)));
  }
  for (; i < n; ++i) p[i] = scalar_math<U>(p[i]);
}

}  // namespace

namespace avx512 {

template <typename C>
avx2::ActKernel<C> activation_kernel(ActFn fn) {
  return act_chunk_of<C>(fn);
}

template <typename C>
avx2::ActGradKernel<C> activation_grad_kernel(ActFn fn) {
  return grad_chunk_of<C>(fn);
}

template <typename C>
avx2::ActGradKernel<C> activation_of_difference_kernel(ActFn fn) {
  return diff_chunk_of<C>(fn);
}

template avx2::ActGradKernel<float> activation_of_difference_kernel<float>(ActFn);
template avx2::ActGradKernel<double> activation_of_difference_kernel<double>(ActFn);
template avx2::ActKernel<float> activation_kernel<float>(ActFn);
template avx2::ActKernel<double> activation_kernel<double>(ActFn);
template avx2::ActGradKernel<float> activation_grad_kernel<float>(ActFn);
template avx2::ActGradKernel<double> activation_grad_kernel<double>(ActFn);

}  // namespace avx512
}  // namespace oneflow::cpu
