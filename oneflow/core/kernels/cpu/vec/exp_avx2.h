// 8-lane float exp for the AVX2 + FMA translation units only (vec/*.cpp built with -mavx2
// -mfma): the reduction x = n ln2 + r (|r| <= ln2 / 2, ln2 in two parts), a degree-7 Taylor
// polynomial (truncation error below 2^-27 relative, about one ulp in all), times 2^n built in
// the exponent bits. Internal linkage: no baseline translation unit may share these.
#pragma once

#include <immintrin.h>

namespace oneflow::cpu::avx2 {
namespace {

inline __m256 exp_poly(__m256 x, __m256 n) {
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  return _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
}

inline __m256 round_log2e(__m256 x) {
  return _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

inline __m256 pow2(__m256i e) {  // 2^e for a normal exponent e in [-126, 127]
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23));
}

// exp(x) for x <= 0 (NaN stays NaN), the domain of softmax's exp(x - max) and of
// exp(log_softmax). Results below FLT_MIN (x < -87.34) flush to zero: they cannot move a sum
// that includes exp(0) = 1.
inline __m256 exp_nonpositive(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654f);
  const __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_max_ps(lo, x);  // keeps a NaN x (max returns its second operand then)
  const __m256 n = round_log2e(x);
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(exp_poly(x, n), pow2(_mm256_cvtps_epi32(n))));
}

// exp(x) over the whole range: 2^n applied as 2^(n/2) * 2^(n - n/2) so that results near
// FLT_MAX and the subnormal ones round as they should; +inf above 88.7228, 0 below -103.98,
// NaN stays NaN.
inline __m256 exp_full(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.72283935546875f), lo = _mm256_set1_ps(-103.97208f);
  const __m256 over = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));  // NaN passes through both
  const __m256 n = round_log2e(x);
  const __m256i ni = _mm256_cvtps_epi32(n), a = _mm256_srai_epi32(ni, 1);
  const __m256 y =
      _mm256_mul_ps(_mm256_mul_ps(exp_poly(x, n), pow2(a)), pow2(_mm256_sub_epi32(ni, a)));
  return _mm256_blendv_ps(_mm256_andnot_ps(under, y), _mm256_set1_ps(__builtin_inff()), over);
}

}  // namespace
}  // namespace oneflow::cpu::avx2
