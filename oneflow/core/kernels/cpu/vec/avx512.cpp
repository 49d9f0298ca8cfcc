// AVX-512 inner loops (see avx512.h); this file alone (with activation_avx512.cpp) is compiled
// with -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma. The tails of the runs use masked loads
// and stores, which never touch the memory of the masked-off lanes.
#include "oneflow/core/kernels/cpu/vec/avx512.h"

#include <immintrin.h>
#include <sleef.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "oneflow/core/kernels/cpu/vec/binary_map.h"
#include "oneflow/core/kernels/cpu/vec/erf_coeffs.h"
#include "oneflow/core/kernels/cpu/vec/exp_avx512.h"

namespace oneflow::cpu::avx512 {

namespace {

constexpr float kSqrt1_2 = 0.70710678118654752440f;
constexpr float kSqrt2OverPi = 0.79788456080286535588f;
constexpr float kGeluCubic = 0.044715f;

inline __mmask16 tail_mask(int64_t r) { return static_cast<__mmask16>((1u << r) - 1u); }

// Applies `vf` to 16 floats at a time; the tail's missing lanes are zeros.
template <typename VF>
inline void map16(const float* x, float* y, int64_t n, VF vf) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, vf(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, m, vf(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

template <auto F>
void apply(const float* x, float* y, int64_t n) {
  map16(x, y, n, [](__m512 v) { return F(v); });
}

// Sleef's asinhf and acoshf overflow once x^2 does (|x| from ~1.8e19); from 2^60 on they are
// sign(x) (log|x| + log 2) to float's precision (the next term is 1 / (4 x^2)).
template <bool kAcosh>
__m512 asinh_acosh16(__m512 v) {
  __m512 r = kAcosh ? Sleef_acoshf16_u10avx512f(v) : Sleef_asinhf16_u10avx512f(v);
  const __m512 a = kAcosh ? v : _mm512_abs_ps(v);
  const __mmask16 big = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1p60f), _CMP_GT_OQ);
  if (big) {
    const __m512 l =
        _mm512_add_ps(Sleef_logf16_u10avx512f(a), _mm512_set1_ps(0.693147180559945309f));
    r = _mm512_mask_blend_ps(big, r, _mm512_or_ps(l, _mm512_and_ps(v, _mm512_set1_ps(-0.0f))));
  }
  return r;
}

template <int kMode>
void round16(const float* x, float* y, int64_t n) {
  map16(x, y, n, [](__m512 v) { return _mm512_roundscale_ps(v, kMode | _MM_FROUND_NO_EXC); });
}

void sigmoid16(const float* x, float* y, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  map16(x, y, n, [&](__m512 v) {
    return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), v))));
  });
}

void exp_map(const float* x, float* y, int64_t n) {
  map16(x, y, n, [](__m512 v) { return exp16(v); });
}

void sqrt16(const float* x, float* y, int64_t n) {
  map16(x, y, n, [](__m512 v) { return _mm512_sqrt_ps(v); });
}

void rsqrt16(const float* x, float* y, int64_t n) {  // a division, not the approximate rsqrt14
  const __m512 one = _mm512_set1_ps(1.0f);
  map16(x, y, n, [&](__m512 v) { return _mm512_div_ps(one, _mm512_sqrt_ps(v)); });
}

void abs16(const float* x, float* y, int64_t n) {
  map16(x, y, n, [](__m512 v) { return _mm512_abs_ps(v); });
}

void neg16(const float* x, float* y, int64_t n) {
  const __m512 sign = _mm512_set1_ps(-0.0f);
  map16(x, y, n, [&](__m512 v) { return _mm512_xor_ps(sign, v); });
}

void reciprocal16(const float* x, float* y, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  map16(x, y, n, [&](__m512 v) { return _mm512_div_ps(one, v); });
}

// erf by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7), as the other tiers.
inline __m512 erf16(__m512 x) {
  const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.0f));
  const __m512 a = _mm512_abs_ps(x);
  const __m512 t = _mm512_div_ps(
      _mm512_set1_ps(1.0f), _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), a, _mm512_set1_ps(1.0f)));
  __m512 poly = _mm512_set1_ps(1.061405429f);
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(-1.453152027f));
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(1.421413741f));
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(-0.284496736f));
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(0.254829592f));
  poly = _mm512_mul_ps(poly, t);
  const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(a, a)));
  return _mm512_or_ps(_mm512_fnmadd_ps(poly, e, _mm512_set1_ps(1.0f)), sign);
}

template <size_t N>
inline __m512 horner16(const float (&c)[N], __m512 t) {
  __m512 p = _mm512_set1_ps(c[0]);
#pragma GCC unroll 16
  for (size_t i = 1; i < N; ++i) p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(c[i]));
  return p;
}

// c[0] t^(N-1) + ... + c[N-1] as two Horner chains in t^2.
template <size_t N>
inline __m512d horner8d(const double (&c)[N], __m512d t) {
  const __m512d t2 = _mm512_mul_pd(t, t);
  __m512d even = _mm512_setzero_pd(), odd = _mm512_setzero_pd();
#pragma GCC unroll 32
  for (size_t i = 0; i < N; ++i) {
    if ((N - 1 - i) % 2 == 0)
      even = _mm512_fmadd_pd(even, t2, _mm512_set1_pd(c[i]));
    else
      odd = _mm512_fmadd_pd(odd, t2, _mm512_set1_pd(c[i]));
  }
  return _mm512_fmadd_pd(odd, t, even);
}

// erf to about an ulp, the AVX2 tier's erf_accurate8 on 16 lanes (vec/erf_coeffs.h).
inline __m512 erf_accurate16(__m512 x) {
  namespace ec = erf_coeffs;
  const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.0f));
  const __m512 a = _mm512_abs_ps(x);
  const __m512 p = horner16(ec::kSmall, _mm512_mul_ps(a, a));
  const __m512 small =
      _mm512_fmadd_ps(a, _mm512_set1_ps(ec::kTwoOverSqrtPiHi), _mm512_mul_ps(a, p));
  const __m512 ac = _mm512_min_ps(a, _mm512_set1_ps(ec::kTailMax));
  const __m512 s = _mm512_mul_ps(_mm512_sub_ps(ac, _mm512_set1_ps(ec::kTailMid)),
                                 _mm512_set1_ps(ec::kTailScale));
  const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(ac, ac)));
  const __m512 large = _mm512_fnmadd_ps(e, horner16(ec::kTail, s), _mm512_set1_ps(1.0f));
  const __m512 y =
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(1.0f), _CMP_GE_OQ), small, large);
  return _mm512_or_ps(y, sign);
}

void erf_accurate(const float* x, float* y, int64_t n) { map16(x, y, n, erf_accurate16); }

// tanh as the AVX2 tier's tanh8 (vec/avx2.cpp) on 16 lanes.
inline __m512 tanh16(__m512 x) {
  namespace ec = erf_coeffs;
  const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.0f));
  const __m512 a = _mm512_min_ps(_mm512_set1_ps(ec::kTanhMax), _mm512_abs_ps(x));
  const __m512 a2 = _mm512_mul_ps(a, a);
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(horner16(ec::kTanhSmall, a2), a2), a, a);
  const __m512 t = _mm512_add_ps(a, a);
  __m512 n;
  const __m512 r = exp_reduce16(t, n);                  // sets n
  const __m512 e = _mm512_scalef_ps(exp_poly16(r), n);  // t <= 20: no clamp
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 large =
      _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, one)));
  const __m512 y = _mm512_mask_blend_ps(
      _mm512_cmp_ps_mask(a, _mm512_set1_ps(ec::kTanhSmallMax), _CMP_GE_OQ), small, large);
  return _mm512_or_ps(y, sign);
}

void tanh_map(const float* x, float* y, int64_t n) { map16(x, y, n, tanh16); }

// sin (kCos false) and cos as the AVX2 tier's sincos8 (vec/erf_coeffs.h).
template <bool kCos>
inline __m512 sincos16(__m512 x) {
  namespace ec = erf_coeffs;
  const __m512 a = _mm512_abs_ps(x);
  const __m512 j = _mm512_roundscale_ps(_mm512_mul_ps(a, _mm512_set1_ps(ec::kTwoOverPi)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(j, _mm512_set1_ps(ec::kPio2Hi), a);
  r = _mm512_fnmadd_ps(j, _mm512_set1_ps(ec::kPio2Mid), r);
  r = _mm512_fnmadd_ps(j, _mm512_set1_ps(ec::kPio2Lo), r);
  const __m512 r2 = _mm512_mul_ps(r, r);
  const __m512 sin_r = _mm512_fmadd_ps(_mm512_mul_ps(horner16(ec::kSinPoly, r2), r2), r, r);
  const __m512 cos_r = _mm512_fmadd_ps(horner16(ec::kCosPoly, r2), r2, _mm512_set1_ps(1.0f));
  __m512i q = _mm512_cvttps_epi32(j);  // (a NaN or huge lane is replaced below)
  if constexpr (kCos) q = _mm512_add_epi32(q, _mm512_set1_epi32(1));  // cos x = sin(x + pi/2)
  const __mmask16 odd = _mm512_test_epi32_mask(q, _mm512_set1_epi32(1));
  const __m512 y = _mm512_mask_blend_ps(odd, sin_r, cos_r);
  // Quadrants 2 and 3 negate; sin is odd.
  __m512i sign = _mm512_slli_epi32(_mm512_and_si512(q, _mm512_set1_epi32(2)), 30);
  if constexpr (!kCos)
    sign = _mm512_xor_si512(sign,
                            _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)));
  const __m512 out = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(y), sign));
  const __mmask16 far = _mm512_cmp_ps_mask(a, _mm512_set1_ps(ec::kSinCosMax), _CMP_NLE_UQ);
  if (far == 0) return out;
  return _mm512_mask_blend_ps(far, out,
                              kCos ? Sleef_cosf16_u10avx512f(x) : Sleef_sinf16_u10avx512f(x));
}

void sin_map(const float* x, float* y, int64_t n) { map16(x, y, n, sincos16<false>); }
void cos_map(const float* x, float* y, int64_t n) { map16(x, y, n, sincos16<true>); }

// v = m 2^k with m in [sqrt(1/2), sqrt(2)) for v > 0, by vgetmantps / vgetexpps (which
// normalise subnormals).
inline __m512 mantissa16(__m512 v, __m512& k) {
  __m512 m = _mm512_getmant_ps(v, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  k = _mm512_getexp_ps(v);
  const __mmask16 big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356f), _CMP_GT_OQ);
  k = _mm512_mask_add_ps(k, big, k, _mm512_set1_ps(1.0f));
  return _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
}

// log as the AVX2 tier's log8, the exponent and mantissa by vgetexpps / vgetmantps (which
// normalise subnormals: only zero, negative, infinite and NaN lanes go to Sleef).
inline __m512 log_accurate16(__m512 v) {
  namespace ec = erf_coeffs;
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 k;
  const __m512 m = mantissa16(v, k);
  const __m512 f = _mm512_sub_ps(m, one);
  const __m512 f2 = _mm512_mul_ps(f, f);
  const __m512 p = _mm512_mul_ps(_mm512_mul_ps(horner16(ec::kLogPoly, f), f2), f);
  __m512 y = _mm512_fmadd_ps(k, _mm512_set1_ps(ec::kLn2LoF), p);
  y = _mm512_add_ps(f, _mm512_fnmadd_ps(_mm512_set1_ps(0.5f), f2, y));
  y = _mm512_fmadd_ps(k, _mm512_set1_ps(ec::kLn2HiF), y);
  const __mmask16 special = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NGT_UQ) |
                            _mm512_cmp_ps_mask(v, _mm512_set1_ps(INFINITY), _CMP_EQ_OQ);
  if (special == 0) return y;
  return _mm512_mask_blend_ps(special, y, Sleef_logf16_u10avx512f(v));
}

void log_map(const float* x, float* y, int64_t n) { map16(x, y, n, log_accurate16); }

// atan as the AVX2 tier's atan8 (vec/erf_coeffs.h).
inline __m512 atan16(__m512 x) {
  namespace ec = erf_coeffs;
  const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.0f));
  const __m512 a = _mm512_abs_ps(x);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __mmask16 inv = _mm512_cmp_ps_mask(a, one, _CMP_GT_OQ);
  const __m512 z = _mm512_div_ps(_mm512_min_ps(one, a), _mm512_max_ps(one, a));  // NaN passes
  const __m512 t = _mm512_mul_ps(z, z);
  const __m512 tp = _mm512_mul_ps(horner16(ec::kAtanPoly, t), t);
  const __m512 p = _mm512_fmadd_ps(tp, z, z);
  const __m512 pio2 = _mm512_set1_ps(ec::kPio2Hi);
  const __m512 hi = _mm512_sub_ps(pio2, z);
  const __m512 e = _mm512_sub_ps(_mm512_sub_ps(pio2, hi), z);
  const __m512 lo = _mm512_fnmadd_ps(z, tp, _mm512_add_ps(e, _mm512_set1_ps(ec::kPio2Mid)));
  const __m512 q = _mm512_add_ps(hi, lo);
  return _mm512_or_ps(_mm512_mask_blend_ps(inv, p, q), sign);
}

void atan_map(const float* x, float* y, int64_t n) { map16(x, y, n, atan16); }

// asin and acos as the AVX2 tier's asin8 and acos8 (vec/avx2.cpp, vec/erf_coeffs.h).
struct AsinParts16 {
  __m512 a;       // |x|
  __mmask16 big;  // |x| > 1/2 (or NaN)
  __m512 s;       // big: sqrt((1 - |x|) / 2)
  __m512 lo;      // small: asin(|x|) - |x|; big: asin(s) - s
};
inline AsinParts16 asin_parts16(__m512 x) {
  namespace ec = erf_coeffs;
  AsinParts16 r;
  const __m512 half = _mm512_set1_ps(0.5f);
  r.a = _mm512_abs_ps(x);
  r.big = _mm512_cmp_ps_mask(r.a, half, _CMP_NLE_UQ);
  const __m512 z = _mm512_fnmadd_ps(half, r.a, half);
  r.s = _mm512_sqrt_ps(z);
  // sqrt(z) - s = (z - s^2) / (2 s), with 1 / s from rsqrt14 (z = 0: 0 times the clamp)
  const __m512 rs = _mm512_min_ps(_mm512_rsqrt14_ps(z), _mm512_set1_ps(1e30f));
  const __m512 c = _mm512_mul_ps(_mm512_mul_ps(_mm512_fnmadd_ps(r.s, r.s, z), rs), half);
  const __m512 u = _mm512_mask_blend_ps(r.big, _mm512_mul_ps(r.a, r.a), z);
  const __m512 v = _mm512_mask_blend_ps(r.big, r.a, r.s);
  const __m512 tail = _mm512_mul_ps(_mm512_mul_ps(horner16(ec::kAsinPoly, u), u), v);
  r.lo = _mm512_mask_add_ps(tail, r.big, tail, c);
  return r;
}

inline __m512 asin16(__m512 x) {
  namespace ec = erf_coeffs;
  const AsinParts16 p = asin_parts16(x);
  // big: pi/2 - 2 s - 2 lo, the rounding of pi/2 - 2 s kept
  const __m512 pio2 = _mm512_set1_ps(ec::kPio2Hi), s2 = _mm512_add_ps(p.s, p.s);
  const __m512 hi = _mm512_sub_ps(pio2, s2);
  const __m512 e = _mm512_sub_ps(_mm512_sub_ps(pio2, hi), s2);
  const __m512 big = _mm512_add_ps(
      hi,
      _mm512_fnmadd_ps(_mm512_set1_ps(2.0f), p.lo, _mm512_add_ps(e, _mm512_set1_ps(ec::kPio2Mid))));
  const __m512 r = _mm512_mask_blend_ps(p.big, _mm512_add_ps(p.a, p.lo), big);
  return _mm512_or_ps(r, _mm512_and_ps(x, _mm512_set1_ps(-0.0f)));
}

inline __m512 acos16(__m512 x) {
  namespace ec = erf_coeffs;
  const AsinParts16 p = asin_parts16(x);
  const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  // small: pi/2 - x - lo with x's sign; big: 2 s + 2 lo, or pi - 2 s - 2 lo below -1/2
  const __m512 xs = _mm512_mask_blend_ps(p.big, x, _mm512_add_ps(p.s, p.s));
  const __m512 los = _mm512_mask_blend_ps(
      p.big, _mm512_mask_sub_ps(p.lo, neg, _mm512_setzero_ps(), p.lo), _mm512_add_ps(p.lo, p.lo));
  const __m512 pio2 = _mm512_set1_ps(ec::kPio2Hi), pio2_lo = _mm512_set1_ps(ec::kPio2Mid);
  const __m512 base = _mm512_mask_add_ps(pio2, p.big, pio2, pio2);  // pi/2, or pi (big)
  const __m512 base_lo = _mm512_mask_add_ps(pio2_lo, p.big, pio2_lo, pio2_lo);
  const __m512 hi = _mm512_sub_ps(base, xs);
  const __m512 e = _mm512_sub_ps(_mm512_sub_ps(base, hi), xs);
  const __m512 diff = _mm512_add_ps(hi, _mm512_sub_ps(_mm512_add_ps(e, base_lo), los));
  const __m512 sum = _mm512_add_ps(xs, los);
  return _mm512_mask_blend_ps(_mm512_kandn(neg, p.big), diff, sum);
}

void asin_map(const float* x, float* y, int64_t n) { map16(x, y, n, asin16); }
void acos_map(const float* x, float* y, int64_t n) { map16(x, y, n, acos16); }

// erfc as the AVX2 tier's erfc8 (vec/avx2.cpp) on 16 lanes.
inline __m512 erfc16(__m512 x) {
  namespace ec = erf_coeffs;
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 a = _mm512_abs_ps(x);
  const __m512 ac = _mm512_min_ps(_mm512_set1_ps(11.0f), a);  // NaN passes
  const __m512 u = _mm512_mul_ps(ac, ac), u_lo = _mm512_fmsub_ps(ac, ac, u);
  const __m512 e0 = exp16(_mm512_sub_ps(_mm512_setzero_ps(), u));
  const __m512 e = _mm512_fnmadd_ps(e0, u_lo, e0);
  const __m512 small = _mm512_fnmadd_ps(
      a, horner16(ec::kSmall, u), _mm512_fnmadd_ps(a, _mm512_set1_ps(ec::kTwoOverSqrtPiHi), one));
  const __m512 s =
      _mm512_mul_ps(_mm512_sub_ps(_mm512_min_ps(ac, _mm512_set1_ps(2.5f)), _mm512_set1_ps(1.75f)),
                    _mm512_set1_ps(1 / 0.75f));
  __m512 r = _mm512_mul_ps(e, horner16(ec::kErfcMid, s));
  // The far fit and its division only when a lane needs them (1.2% of normal values; NaN too).
  const __mmask16 far = _mm512_cmp_ps_mask(a, _mm512_set1_ps(2.5f), _CMP_NLT_UQ);
  if (far) {
    const __m512 ia = _mm512_div_ps(one, ac);
    const __m512 t = _mm512_mul_ps(_mm512_fmsub_ps(ia, ia, _mm512_set1_ps(ec::kFarMid)),
                                   _mm512_set1_ps(ec::kFarScale));
    r = _mm512_mask_mul_ps(r, far, _mm512_mul_ps(e, horner16(ec::kErfcFar, t)), ia);
  }
  r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, one, _CMP_LT_OQ), r, small);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), r,
                              _mm512_sub_ps(_mm512_set1_ps(2.0f), r));
}

void erfc(const float* x, float* y, int64_t n) { map16(x, y, n, erfc16); }

// erfinv as the AVX2 tier's (vec/avx2.cpp): Giles' float approximation x0 on 16 lanes (with an
// inline log), then one Halley step in double on 8. The lanes of a block are packed by branch
// (|x0| < 1 or not) so that each runs only its own fits: below 1 erf's central polynomial with a
// short exp (the correction is ~1e-6 x0, so exp(x0^2) needs ~1e-8 only), from 1 on erfc's tail
// fit with the full exp.

// log(v) for normal v > 0 (others: garbage the callers' fixups replace), to ~1e-7: v = m 2^k
// with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172.
inline __m512 log16(__m512 v) {
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 k;
  const __m512 m = mantissa16(v, k);
  const __m512 s = _mm512_div_ps(_mm512_sub_ps(m, one), _mm512_add_ps(m, one));
  const __m512 s2 = _mm512_mul_ps(s, s);
  __m512 p = _mm512_fmadd_ps(s2, _mm512_set1_ps(2.0f / 7), _mm512_set1_ps(2.0f / 5));
  p = _mm512_fmadd_ps(p, s2, _mm512_set1_ps(2.0f / 3));
  p = _mm512_fmadd_ps(p, s2, _mm512_set1_ps(2.0f));
  return _mm512_fmadd_ps(k, _mm512_set1_ps(0.693147180559945f), _mm512_mul_ps(p, s));
}

// Giles' x0 for 16 floats; the tail polynomial only when a lane needs it (|y| > 0.9966).
inline __m512 giles16(__m512 y) {
  namespace ec = erf_coeffs;
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 w = _mm512_sub_ps(
      _mm512_setzero_ps(), log16(_mm512_mul_ps(_mm512_sub_ps(one, y), _mm512_add_ps(one, y))));
  __m512 p = horner16(ec::kGilesCentral, _mm512_sub_ps(w, _mm512_set1_ps(2.5f)));
  const __mmask16 far = _mm512_cmp_ps_mask(w, _mm512_set1_ps(5.0f), _CMP_GE_OQ);
  if (far)
    p = _mm512_mask_blend_ps(
        far, p, horner16(ec::kGilesTail, _mm512_sub_ps(_mm512_sqrt_ps(w), _mm512_set1_ps(3.0f))));
  return _mm512_mul_ps(p, y);
}

// exp(u) = exp(r) 2^n, u = n ln2 + r, |r| <= ln2 / 2, with the Taylor coefficients c.
template <size_t N>
inline __m512d exp8d(const double (&c)[N], __m512d u) {
  namespace ec = erf_coeffs;
  const __m512d n = _mm512_roundscale_pd(_mm512_mul_pd(u, _mm512_set1_pd(ec::kLog2e)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(ec::kLn2Lo),
                                     _mm512_fnmadd_pd(n, _mm512_set1_pd(ec::kLn2Hi), u));
  return _mm512_scalef_pd(horner8d(c, r), n);
}

// The step from x0 = a given res = (erf(a) - b) exp(a^2): with d = res sqrt(pi) / 2 (Newton's
// step) Halley's a - d (1 - a d) (erf'' / erf' = -2x), whose error is ~e^3 for an x0 off by e:
// x0 within 1e-6 gives the double result to ~1e-15, far below what rounding to float needs.
inline __m256 halley(__m512d a, __m512d res) {
  namespace ec = erf_coeffs;
  const __m512d d = _mm512_mul_pd(res, _mm512_set1_pd(1 / ec::kTwoOverSqrtPi));
  return _mm512_cvtpd_ps(_mm512_fnmadd_pd(d, _mm512_fnmadd_pd(a, d, _mm512_set1_pd(1.0)), a));
}

// One step from x0 = |Giles| < 1 toward erfinv(b), b = |y|. The correction is ~1e-6 x0, so
// exp(x0^2) needs only ~1e-8: one polynomial on [0, 1], no range reduction.
inline __m256 step_central8(__m256 x0, __m256 y) {
  namespace ec = erf_coeffs;
  const __m512d one = _mm512_set1_pd(1.0);
  const __m512d a = _mm512_cvtps_pd(x0), b = _mm512_cvtps_pd(y);
  const __m512d u = _mm512_mul_pd(a, a);
  const __m512d e = horner8d(ec::kExpUnit, u);
  const __m512d res = _mm512_mul_pd(
      e, _mm512_fmsub_pd(a, horner8d(ec::kErfCentral, _mm512_fmsub_pd(u, _mm512_set1_pd(2.0), one)),
                         b));
  return halley(a, res);
}

// From x0 >= 1: (erf(x0) - b) exp(x0^2) = (1 - b) E - H(s); E must be exact to ~1e-13 here.
inline __m256 step_tail8(__m256 x0, __m256 y) {
  namespace ec = erf_coeffs;
  const __m512d one = _mm512_set1_pd(1.0);
  const __m512d a = _mm512_cvtps_pd(x0), b = _mm512_cvtps_pd(y);
  const __m512d e = exp8d(ec::kExpTaylor, _mm512_min_pd(_mm512_mul_pd(a, a), _mm512_set1_pd(16.0)));
  const __m512d s = _mm512_min_pd(
      one, _mm512_mul_pd(_mm512_sub_pd(a, _mm512_set1_pd(2.5)), _mm512_set1_pd(1 / 1.5)));
  const __m512d res = _mm512_fmsub_pd(_mm512_sub_pd(one, b), e, horner8d(ec::kErfcTail, s));
  return halley(a, res);
}

// The lanes of a block are packed by branch (|x0| < 1 or not) so that each runs only its own
// polynomial; the buffers have room for the zero lanes of the last 16-wide packing store (the
// steps read those zeros, never memory left from before).
void erfinv_halley(const float* x, float* y, int64_t n) {
  constexpr int64_t kBlock = 256;
  alignas(64) float in[kBlock], cx[kBlock + 16], cy[kBlock + 16];
  alignas(64) float tx[kBlock + 16], ty[kBlock + 16];
  __mmask16 central[kBlock / 16];
  const __m512 signbit = _mm512_set1_ps(-0.0f), one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i), whole = (m + 15) / 16 * 16;
    const float* src = x + i;
    if (m < whole) {
      std::fill(in + m, in + whole, 0.0f);
      std::copy(src, src + m, in);
      src = in;
    }
    int64_t nc = 0, nt = 0;
    for (int64_t j = 0; j < whole; j += 16) {
      const __m512 yv = _mm512_abs_ps(_mm512_loadu_ps(src + j));
      const __m512 x0 = _mm512_abs_ps(giles16(yv));
      const __mmask16 c = _mm512_cmp_ps_mask(x0, one, _CMP_LT_OQ);
      central[j / 16] = c;
      _mm512_storeu_ps(cx + nc, _mm512_maskz_compress_ps(c, x0));
      _mm512_storeu_ps(cy + nc, _mm512_maskz_compress_ps(c, yv));
      _mm512_storeu_ps(tx + nt, _mm512_maskz_compress_ps(__mmask16(~c), x0));
      _mm512_storeu_ps(ty + nt, _mm512_maskz_compress_ps(__mmask16(~c), yv));
      const int k = __builtin_popcount(c);
      nc += k;
      nt += 16 - k;
    }
    _mm256_storeu_ps(cx + nc, _mm256_setzero_ps());
    _mm256_storeu_ps(cy + nc, _mm256_setzero_ps());
    _mm256_storeu_ps(tx + nt, _mm256_setzero_ps());
    _mm256_storeu_ps(ty + nt, _mm256_setzero_ps());
    for (int64_t j = 0; j < nc; j += 8)
      _mm256_store_ps(cx + j, step_central8(_mm256_load_ps(cx + j), _mm256_load_ps(cy + j)));
    for (int64_t j = 0; j < nt; j += 8)
      _mm256_store_ps(tx + j, step_tail8(_mm256_load_ps(tx + j), _mm256_load_ps(ty + j)));
    int64_t ic = 0, it = 0;
    for (int64_t j = 0; j < m; j += 16) {
      const __mmask16 c = central[j / 16];
      __m512 r = _mm512_maskz_expand_ps(c, _mm512_loadu_ps(cx + ic));
      r = _mm512_mask_expand_ps(r, __mmask16(~c), _mm512_loadu_ps(tx + it));
      const int k = __builtin_popcount(c);
      ic += k;
      it += 16 - k;
      const __m512 yv = _mm512_loadu_ps(src + j);
      const __m512 sign = _mm512_and_ps(yv, signbit), b = _mm512_andnot_ps(signbit, yv);
      r = _mm512_or_ps(r, sign);
      // |y| == 1: +-inf; outside [-1, 1] or NaN: NaN
      r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, one, _CMP_EQ_OQ), r,
                               _mm512_or_ps(_mm512_set1_ps(INFINITY), sign));
      r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, one, _CMP_NLE_UQ), r, _mm512_set1_ps(NAN));
      const __mmask16 keep = m - j >= 16 ? __mmask16(0xffff) : tail_mask(m - j);
      _mm512_mask_storeu_ps(y + i + j, keep, r);
    }
  }
}

// erfinv(b) for 16 lanes with |b| <= 1 - 2^-16 from kErfinvRows (erf_coeffs.h): b P0(b^2) up
// to |b| = 1/2, above it P(v) of q = 1 - |b| = m 2^e (exact), the polynomial of e and m >= 1.5
// picked per lane by a permute of each coefficient row. The result must land within a few
// thousandths of an ulp of the exact value before its last rounding, so the two lowest terms
// are summed in float pairs (Fast2Sum and FMA products keep each rounding error): with
// P = c0 + t (c1 + t T) and T the float Horner sum of the other seven terms, T's own error
// reaches the result scaled by t^2 T / P (under 1%). The central variable b^2 keeps its
// rounding (s_lo) too. The sign is the caller's.
inline __m512 erfinv_table16(__m512 b) {
  namespace ec = erf_coeffs;
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 a = _mm512_abs_ps(b);
  const __mmask16 central = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.5f), _CMP_LE_OQ);
  const __m512 q = _mm512_sub_ps(one, a);  // exact from 1/2 on
  const __m512 m = _mm512_maskz_getmant_ps(0xffff, q, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  const __mmask16 upper = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.5f), _CMP_GE_OQ);
  // entry -2 e - 3 (+1 from m = 1.5 on), 0 for the central lanes
  __m512 entry = _mm512_fmsub_ps(_mm512_maskz_getexp_ps(0xffff, q), _mm512_set1_ps(-2.0f),
                                 _mm512_set1_ps(3.0f));
  entry = _mm512_mask_add_ps(entry, upper, entry, one);
  const __m512i k = _mm512_maskz_cvttps_epi32(__mmask16(~central), entry);
  __m512 t = _mm512_fmsub_ps(m, _mm512_set1_ps(4.0f), _mm512_set1_ps(5.0f));
  t = _mm512_mask_sub_ps(t, upper, t, _mm512_set1_ps(2.0f));
  const __m512 s = _mm512_mul_ps(a, a);
  t = _mm512_mask_blend_ps(central, t, s);
  const __m512 t_lo = _mm512_maskz_fmsub_ps(central, a, a, s);
  const __m512 w = _mm512_mask_blend_ps(central, one, a);
  const auto c = [&](int i) {
    return _mm512_permutex2var_ps(_mm512_load_ps(ec::kErfinvRows[i]), k,
                                  _mm512_load_ps(ec::kErfinvRows[i] + 16));
  };
  __m512 tail = c(0);
#pragma GCC unroll 8
  for (int i = 1; i < 7; ++i) tail = _mm512_fmadd_ps(tail, t, c(i));
  // T1 = c1 + t tail (+ t_lo tail) as hi + lo
  const __m512 c1 = c(7), c0 = c(9);
  const __m512 pr = _mm512_mul_ps(t, tail);
  const __m512 t1 = _mm512_add_ps(c1, pr);
  __m512 t1_lo = _mm512_add_ps(_mm512_sub_ps(c1, t1), pr);
  t1_lo = _mm512_add_ps(t1_lo, _mm512_fmadd_ps(t_lo, tail, _mm512_fmsub_ps(t, tail, pr)));
  t1_lo = _mm512_add_ps(t1_lo, c(8));
  // P = c0 + t T1 as hi + lo
  const __m512 pr2 = _mm512_mul_ps(t, t1);
  const __m512 p = _mm512_add_ps(c0, pr2);
  __m512 p_lo = _mm512_add_ps(_mm512_sub_ps(c0, p), pr2);
  p_lo = _mm512_add_ps(p_lo, _mm512_fmsub_ps(t, t1, pr2));
  p_lo = _mm512_add_ps(p_lo, _mm512_fmadd_ps(t, t1_lo, _mm512_fmadd_ps(t_lo, t1, c(10))));
  // w (p + p_lo), w = |b| (central) or 1, rounded once
  const __m512 y = _mm512_mul_ps(w, p);
  return _mm512_add_ps(y, _mm512_fmadd_ps(w, p_lo, _mm512_fmsub_ps(w, p, y)));
}

// erfinv: vectors whose lanes all lie within 1 - 2^-16 of 0 (all but 0.02% of vectors of
// uniform values on (-1, 1)) from the table (erfinv_table16), the others (tails, +-1, NaN) by
// erfinv_halley, as are values below 2^-64 other than zero: the rounding errors the table's sums
// keep would be subnormal there.
void erfinv(const float* x, float* y, int64_t n) {
  const __m512 signbit = _mm512_set1_ps(-0.0f), limit = _mm512_set1_ps(1 - 0x1p-16f);
  const __m512 tiny = _mm512_set1_ps(0x1p-64f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 keep = n - i >= 16 ? __mmask16(0xffff) : tail_mask(n - i);
    const __m512 b = _mm512_maskz_loadu_ps(keep, x + i);
    const __m512 a = _mm512_andnot_ps(signbit, b);
    const __mmask16 other = _mm512_cmp_ps_mask(a, limit, _CMP_NLE_UQ) |
                            (_mm512_cmp_ps_mask(a, tiny, _CMP_LT_OQ) &
                             _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_NEQ_OQ));
    if (other & keep) {
      erfinv_halley(x + i, y + i, std::min<int64_t>(16, n - i));
      continue;
    }
    _mm512_mask_storeu_ps(y + i, keep, _mm512_or_ps(erfinv_table16(b), _mm512_and_ps(b, signbit)));
  }
}

// 16 floats or 8 doubles, the operations binary_map.h needs.
template <typename T>
struct Lanes;
// Sleef's fmod with its NaN lanes computed again (binary_map.h's fmod_nan_lanes).
template <typename T, typename V>
V fmod_fixed(V r, V a, V b) {
  if constexpr (std::is_same_v<T, float>)
    return fmod_nan_lanes<T>(r, a, b, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q));
  else
    return fmod_nan_lanes<T>(r, a, b, _mm512_cmp_pd_mask(r, r, _CMP_UNORD_Q));
}

template <>
struct Lanes<float> {
  using T = float;
  using V = __m512;
  using M = __mmask16;
  static constexpr int kN = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V set1(float v) { return _mm512_set1_ps(v); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  // The masked forms with every lane set: the unmasked ones merge into _mm512_undefined_ps(),
  // which GCC 12 reports as uninitialised at -O2 (the sanitizer build).
  static V floor(V a) {
    return _mm512_mask_roundscale_ps(a, 0xFFFF, a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  }
  static V trunc(V a) {
    return _mm512_mask_roundscale_ps(a, 0xFFFF, a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  }
  static V sign_bits(V a) {
    return _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(int(0x80000000u))));
  }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  template <int kCmp>
  static M cmp(V a, V b) {
    return _mm512_cmp_ps_mask(a, b, kCmp);
  }
  static V select(M mask, V yes, V no) { return _mm512_mask_blend_ps(mask, no, yes); }
  static M bit_and(M a, M b) { return static_cast<M>(a & b); }
  static M bit_xor(M a, M b) { return static_cast<M>(a ^ b); }
  static V atan2(V a, V b) { return Sleef_atan2f16_u10avx512f(a, b); }
  static V fmod(V a, V b) { return fmod_fixed<float>(Sleef_fmodf16_avx512f(a, b), a, b); }
  static V pow(V a, V b) { return Sleef_powf16_u10avx512f(a, b); }
};
template <>
struct Lanes<double> {
  using T = double;
  using V = __m512d;
  using M = __mmask8;
  static constexpr int kN = 8;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V set1(double v) { return _mm512_set1_pd(v); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V div(V a, V b) { return _mm512_div_pd(a, b); }
  static V floor(V a) {
    return _mm512_mask_roundscale_pd(a, 0xFF, a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  }
  static V trunc(V a) {
    return _mm512_mask_roundscale_pd(a, 0xFF, a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  }
  static V sign_bits(V a) {
    return _mm512_castsi512_pd(_mm512_and_si512(
        _mm512_castpd_si512(a), _mm512_set1_epi64(static_cast<long long>(0x8000000000000000ull))));
  }
  static V max(V a, V b) { return _mm512_max_pd(a, b); }
  static V min(V a, V b) { return _mm512_min_pd(a, b); }
  template <int kCmp>
  static M cmp(V a, V b) {
    return _mm512_cmp_pd_mask(a, b, kCmp);
  }
  static V select(M mask, V yes, V no) { return _mm512_mask_blend_pd(mask, no, yes); }
  static M bit_and(M a, M b) { return static_cast<M>(a & b); }
  static M bit_xor(M a, M b) { return static_cast<M>(a ^ b); }
  static V atan2(V a, V b) { return Sleef_atan2d8_u10avx512f(a, b); }
  static V fmod(V a, V b) { return fmod_fixed<double>(Sleef_fmodd8_avx512f(a, b), a, b); }
  static V pow(V a, V b) { return Sleef_powd8_u10avx512f(a, b); }
};

}  // namespace

avx2::UnaryKernel exp_kernel() { return &exp_map; }

avx2::UnaryKernel unary_kernel(UnaryFn fn) {
  switch (fn) {
    case UnaryFn::kSqrt:
      return &sqrt16;
    case UnaryFn::kRsqrt:
      return &rsqrt16;
    case UnaryFn::kAbs:
      return &abs16;
    case UnaryFn::kNeg:
      return &neg16;
    case UnaryFn::kReciprocal:
      return &reciprocal16;
    case UnaryFn::kSigmoid:
      return &sigmoid16;
    case UnaryFn::kFloor:
      return &round16<_MM_FROUND_TO_NEG_INF>;
    case UnaryFn::kCeil:
      return &round16<_MM_FROUND_TO_POS_INF>;
    case UnaryFn::kTrunc:
      return &round16<_MM_FROUND_TO_ZERO>;
    case UnaryFn::kRound:  // half to even, as nearbyint in the default rounding mode
      return &round16<_MM_FROUND_TO_NEAREST_INT>;
    case UnaryFn::kLog:
      return &log_map;
    case UnaryFn::kLog1p:
      return &apply<Sleef_log1pf16_u10avx512f>;
    case UnaryFn::kLog2:
      return &apply<Sleef_log2f16_u10avx512f>;
    case UnaryFn::kLog10:
      return &apply<Sleef_log10f16_u10avx512f>;
    case UnaryFn::kExp2:
      return &apply<Sleef_exp2f16_u10avx512f>;
    case UnaryFn::kExpm1:
      return &apply<Sleef_expm1f16_u10avx512f>;
    case UnaryFn::kSin:
      return &sin_map;
    case UnaryFn::kCos:
      return &cos_map;
    case UnaryFn::kTan:
      return &apply<Sleef_tanf16_u10avx512f>;
    case UnaryFn::kAsin:
      return &asin_map;
    case UnaryFn::kAcos:
      return &acos_map;
    case UnaryFn::kAtan:
      return &atan_map;
    case UnaryFn::kSinh:
      return &apply<Sleef_sinhf16_u10avx512f>;
    case UnaryFn::kCosh:
      return &apply<Sleef_coshf16_u10avx512f>;
    case UnaryFn::kTanh:
      return &tanh_map;
    case UnaryFn::kAsinh:
      return &apply<asinh_acosh16<false>>;
    case UnaryFn::kAcosh:
      return &apply<asinh_acosh16<true>>;
    case UnaryFn::kAtanh:
      return &apply<Sleef_atanhf16_u10avx512f>;
    case UnaryFn::kErf:
      return &erf_accurate;
    case UnaryFn::kErfinv:
      return &erfinv;
    case UnaryFn::kErfc:
      return &erfc;
    case UnaryFn::kLgamma:
      return &apply<Sleef_lgammaf16_u10avx512f>;
    default:
      return nullptr;
  }
}

template <typename T>
avx2::BinaryKernel<T> binary_kernel(BinaryFn fn) {
  return binary_map_kernel<Lanes<T>>(fn);
}
template <typename T>
avx2::BinaryKernel<T> pow_kernel() {
  return &binary_map<PowOp, Lanes<T>>;
}
template <typename T>
avx2::BinaryKernel<T> div_kernel() {
  return &binary_map<DivOp, Lanes<T>>;
}
template avx2::BinaryKernel<float> binary_kernel<float>(BinaryFn);
template avx2::BinaryKernel<double> binary_kernel<double>(BinaryFn);
template avx2::BinaryKernel<float> pow_kernel<float>();
template avx2::BinaryKernel<double> pow_kernel<double>();
template avx2::BinaryKernel<float> div_kernel<float>();
template avx2::BinaryKernel<double> div_kernel<double>();

namespace {
// S accumulators of eight doubles (8 * S columns) times rows [j0, j1), two rows per step.
template <int S>
void prod_strip(double* acc, const float* rows, int64_t stride, int64_t j0, int64_t j1) {
  auto row8 = [](const float* r) { return _mm512_cvtps_pd(_mm256_loadu_ps(r)); };
  __m512d a[S];
  for (int q = 0; q < S; ++q) a[q] = _mm512_loadu_pd(acc + 8 * q);
  int64_t j = j0;
  for (; j + 2 <= j1; j += 2) {
    const float* r = rows + j * stride;
    for (int q = 0; q < S; ++q)
      a[q] = _mm512_mul_pd(a[q], _mm512_mul_pd(row8(r + 8 * q), row8(r + stride + 8 * q)));
  }
  if (j < j1)
    for (int q = 0; q < S; ++q) a[q] = _mm512_mul_pd(a[q], row8(rows + j * stride + 8 * q));
  for (int q = 0; q < S; ++q) _mm512_storeu_pd(acc + 8 * q, a[q]);
}

// The same for S accumulators of sixteen columns in float pairs, a third of the double kernel's
// work per element (it converts every float): h x rounded is the new h, its rounding error
// (FMA) joins l x in l, so h + l is the product to ~2^-48 while no step leaves float's normal
// range; every 16 rows h is brought back to [1, 2) and its exponent moved to e. A step that
// leaves the range (or an infinite, NaN-making or subnormal operand) raises an MXCSR flag:
// then acc is left untouched and the call returns false for the double kernel to run.
template <int S>
bool prod_strip_pairs(double* acc, const float* rows, int64_t stride, int64_t j0, int64_t j1) {
  constexpr unsigned kFlags =
      _MM_EXCEPT_INVALID | _MM_EXCEPT_OVERFLOW | _MM_EXCEPT_UNDERFLOW | _MM_EXCEPT_DENORM;
  // Writing MXCSR costs tens of cycles; the flags are cleared only when a step set them.
  if (const unsigned csr = _mm_getcsr(); csr & kFlags) _mm_setcsr(csr & ~kFlags);
  __m512 h[S], l[S], e[S];
  for (int q = 0; q < S; ++q) {
    h[q] = _mm512_set1_ps(1.0f);
    l[q] = _mm512_setzero_ps();
    e[q] = _mm512_setzero_ps();
  }
  for (int64_t j = j0; j < j1;) {
    for (const int64_t stop = std::min(j1, j + 16); j < stop; ++j) {
      const float* r = rows + j * stride;
      for (int q = 0; q < S; ++q) {
        __m512 x = _mm512_loadu_ps(r + 16 * q);
        __asm__("" : "+v"(x));  // one load, not one per use
        const __m512 p = _mm512_mul_ps(h[q], x);
        l[q] = _mm512_fmadd_ps(l[q], x, _mm512_fmsub_ps(h[q], x, p));
        h[q] = p;
      }
    }
    for (int q = 0; q < S; ++q) {
      // a zero h (a zero factor) keeps its zeros: its exponent -inf is taken as -200
      const __m512 k = _mm512_max_ps(_mm512_maskz_getexp_ps(0xffff, h[q]), _mm512_set1_ps(-200.0f));
      h[q] = _mm512_maskz_getmant_ps(0xffff, h[q], _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);
      l[q] = _mm512_maskz_scalef_ps(0xffff, l[q], _mm512_sub_ps(_mm512_setzero_ps(), k));
      e[q] = _mm512_add_ps(e[q], k);
    }
  }
  if (_mm_getcsr() & kFlags) return false;
  // acc *= (h + l) 2^e in double, eight columns at a time (the extract's immediate spelled out:
  // unoptimised builds do not fold a loop index into it)
  const auto scale = [](double* a, __m256 h8, __m256 l8, __m256 e8) {
    const __m512d v = _mm512_maskz_scalef_pd(
        0xff, _mm512_add_pd(_mm512_maskz_cvtps_pd(0xff, h8), _mm512_maskz_cvtps_pd(0xff, l8)),
        _mm512_maskz_cvtps_pd(0xff, e8));
    _mm512_storeu_pd(a, _mm512_mul_pd(_mm512_loadu_pd(a), v));
  };
  for (int q = 0; q < S; ++q) {
    scale(acc + 16 * q, _mm512_maskz_extractf32x8_ps(0xff, h[q], 0),
          _mm512_maskz_extractf32x8_ps(0xff, l[q], 0), _mm512_maskz_extractf32x8_ps(0xff, e[q], 0));
    scale(acc + 16 * q + 8, _mm512_maskz_extractf32x8_ps(0xff, h[q], 1),
          _mm512_maskz_extractf32x8_ps(0xff, l[q], 1), _mm512_maskz_extractf32x8_ps(0xff, e[q], 1));
  }
  return true;
}
}  // namespace

void prod_rows(double* acc, const float* rows, int64_t stride, int64_t nrows, int64_t n) {
  // As the AVX2 kernel: strips of 64 columns over chunks of rows of about 16 KiB. The double
  // kernels run with flush-to-zero (denormal doubles, far below float's range, cost ~100 cycles
  // an operation); MXCSR is written only when one of them runs.
  const unsigned csr = _mm_getcsr();
  bool ftz = false;
  auto flush_to_zero = [&] {
    if (!ftz) _mm_setcsr(_mm_getcsr() | _MM_FLUSH_ZERO_ON);
    ftz = true;
  };
  const int64_t chunk = std::max<int64_t>(2, (4096 / std::max<int64_t>(n, 1)) & ~int64_t(1));
  for (int64_t j0 = 0; j0 < nrows; j0 += chunk) {
    const int64_t j1 = std::min(nrows, j0 + chunk);
    int64_t k = 0;
    for (; k + 64 <= n; k += 64)
      if (!prod_strip_pairs<4>(acc + k, rows + k, stride, j0, j1)) {
        flush_to_zero();
        prod_strip<8>(acc + k, rows + k, stride, j0, j1);
      }
    if (k < n) flush_to_zero();
    for (; k + 8 <= n; k += 8) prod_strip<1>(acc + k, rows + k, stride, j0, j1);
    for (; k < n; ++k) {
      double a = acc[k];
      for (int64_t j = j0; j < j1; ++j) a *= double(rows[j * stride + k]);
      acc[k] = a;
    }
  }
  if (ftz) _mm_setcsr((_mm_getcsr() & ~_MM_FLUSH_ZERO_ON) | (csr & _MM_FLUSH_ZERO_ON));
}

void gelu(const float* x, float* y, int64_t n, bool tanh_form) {
  const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
  if (tanh_form) {
    // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), as the AVX2 tier.
    map16(x, y, n, [&](__m512 v) {
      const __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
      const __m512 u2 = _mm512_mul_ps(_mm512_set1_ps(-2.0f * kSqrt2OverPi),
                                      _mm512_fmadd_ps(_mm512_set1_ps(kGeluCubic), v3, v));
      return _mm512_div_ps(v, _mm512_add_ps(one, exp16(u2)));
    });
  } else {
    map16(x, y, n, [&](__m512 v) {
      const __m512 e = erf16(_mm512_mul_ps(v, _mm512_set1_ps(kSqrt1_2)));
      return _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, e));
    });
  }
}

void gelu_grad(const float* dy, const float* x, float* dx, int64_t n, bool tanh_form) {
  const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
  auto grad16 = [&](__m512 g, __m512 v) {
    if (tanh_form) {
      const __m512 v2 = _mm512_mul_ps(v, v);
      const __m512 k = _mm512_set1_ps(kSqrt2OverPi), c = _mm512_set1_ps(kGeluCubic);
      // With s = sigmoid(2u) = 0.5 (1 + tanh(u)): d/dx x s = s + 2 x s (1 - s) u'.
      const __m512 u = _mm512_mul_ps(k, _mm512_fmadd_ps(_mm512_mul_ps(c, v2), v, v));
      const __m512 s =
          _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_mul_ps(_mm512_set1_ps(-2.0f), u))));
      const __m512 du =
          _mm512_mul_ps(k, _mm512_fmadd_ps(_mm512_set1_ps(3.0f * kGeluCubic), v2, one));
      const __m512 right = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(2.0f), v),
                                         _mm512_mul_ps(_mm512_fnmadd_ps(s, s, s), du));
      return _mm512_mul_ps(g, _mm512_add_ps(s, right));
    }
    const __m512 cdf =
        _mm512_mul_ps(half, _mm512_add_ps(one, erf16(_mm512_mul_ps(v, _mm512_set1_ps(kSqrt1_2)))));
    const __m512 pdf =
        _mm512_mul_ps(_mm512_set1_ps(0.39894228040143267794f),
                      exp16(_mm512_mul_ps(_mm512_set1_ps(-0.5f), _mm512_mul_ps(v, v))));
    return _mm512_mul_ps(g, _mm512_fmadd_ps(v, pdf, cdf));
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dx + i, grad16(_mm512_loadu_ps(dy + i), _mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(
        dx + i, m, grad16(_mm512_maskz_loadu_ps(m, dy + i), _mm512_maskz_loadu_ps(m, x + i)));
  }
}

}  // namespace oneflow::cpu::avx512
