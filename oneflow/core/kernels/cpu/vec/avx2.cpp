// AVX2 + FMA inner loops (see avx2.h); compiled with -mavx2 -mfma. The softmax family's are in
// vec/softmax_avx2.cpp.
#include "oneflow/core/kernels/cpu/vec/avx2.h"

#include <immintrin.h>
#include <sleef.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#include "oneflow/core/kernels/cpu/vec/avx512.h"
#include "oneflow/core/kernels/cpu/vec/binary_map.h"
#include "oneflow/core/kernels/cpu/vec/erf_coeffs.h"
#include "oneflow/core/kernels/cpu/vec/exp_avx2.h"

namespace oneflow::cpu {

Capability capability() {
  static const Capability c = [] {
    Capability best = Capability::kBaseline;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      best = Capability::kAvx2;
      if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        best = Capability::kAvx512;
    }
    const char* want = std::getenv("ONEFLOW_CPU_CAPABILITY");
    if (want != nullptr && std::strcmp(want, "default") == 0) return Capability::kBaseline;
    if (want != nullptr && std::strcmp(want, "avx2") == 0 && best > Capability::kAvx2)
      return Capability::kAvx2;
    return best;
  }();
  return c;
}

const char* capability_name() {
  switch (capability()) {
    case Capability::kAvx512:
      return "AVX512";
    case Capability::kAvx2:
      return "AVX2";
    default:
      return "DEFAULT";
  }
}

}  // namespace oneflow::cpu

namespace oneflow::cpu::avx2 {

bool has_avx2() { return capability() >= Capability::kAvx2; }
bool has_avx512() { return capability() >= Capability::kAvx512; }

namespace {

constexpr float kSqrt1_2 = 0.70710678118654752440f;
constexpr float kSqrt2OverPi = 0.79788456080286535588f;
constexpr float kGeluCubic = 0.044715f;

// Applies `vf` to 8 floats at a time (the tail through a zero-padded register).
template <typename VF>
inline void map8(const float* x, float* y, int64_t n, VF vf) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, vf(_mm256_loadu_ps(x + i)));
  if (i < n) {
    alignas(32) float buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j];
    _mm256_store_ps(buf, vf(_mm256_load_ps(buf)));
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

// erf by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7), as the SSE2 path.
inline __m256 erf8(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 t = _mm256_div_ps(
      _mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), a, _mm256_set1_ps(1.0f)));
  __m256 poly = _mm256_set1_ps(1.061405429f);
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(-1.453152027f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(1.421413741f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(-0.284496736f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(0.254829592f));
  poly = _mm256_mul_ps(poly, t);
  const __m256 e = exp_full(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(a, a)));
  return _mm256_or_ps(_mm256_fnmadd_ps(poly, e, _mm256_set1_ps(1.0f)), sign);
}

template <size_t N>
inline __m256 horner8(const float (&c)[N], __m256 t) {
  __m256 p = _mm256_set1_ps(c[0]);
#pragma GCC unroll 16
  for (size_t i = 1; i < N; ++i) p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(c[i]));
  return p;
}

// c[0] t^(N-1) + ... + c[N-1] as two Horner chains in t^2 (half the latency of one).
template <size_t N>
inline __m256d horner4(const double (&c)[N], __m256d t) {
  const __m256d t2 = _mm256_mul_pd(t, t);
  __m256d even = _mm256_setzero_pd(), odd = _mm256_setzero_pd();
#pragma GCC unroll 32
  for (size_t i = 0; i < N; ++i) {
    if ((N - 1 - i) % 2 == 0)
      even = _mm256_fmadd_pd(even, t2, _mm256_set1_pd(c[i]));
    else
      odd = _mm256_fmadd_pd(odd, t2, _mm256_set1_pd(c[i]));
  }
  return _mm256_fmadd_pd(odd, t, even);
}

// erf to about an ulp (Sleef's erff is ~2.5x slower here): for |x| < 1, x (c0 + u P(u)) with
// u = x^2 (relative error of the fit 1.4e-8, 2/sqrt(pi) split into two floats); above,
// 1 - exp(-x^2) H(x) with H a degree-9 fit of erfc(x) exp(x^2) on [1, 3.92] (absolute error
// 2.3e-9); from 3.92 on erf rounds to 1. NaN stays NaN. Coefficients in vec/erf_coeffs.h.
inline __m256 erf_accurate8(__m256 x) {
  namespace ec = erf_coeffs;
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 p = horner8(ec::kSmall, _mm256_mul_ps(a, a));
  const __m256 small =
      _mm256_fmadd_ps(a, _mm256_set1_ps(ec::kTwoOverSqrtPiHi), _mm256_mul_ps(a, p));
  const __m256 ac = _mm256_min_ps(a, _mm256_set1_ps(ec::kTailMax));
  const __m256 s = _mm256_mul_ps(_mm256_sub_ps(ac, _mm256_set1_ps(ec::kTailMid)),
                                 _mm256_set1_ps(ec::kTailScale));
  const __m256 e = exp_full(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(ac, ac)));
  const __m256 large = _mm256_fnmadd_ps(e, horner8(ec::kTail, s), _mm256_set1_ps(1.0f));
  const __m256 y =
      _mm256_blendv_ps(small, large, _mm256_cmp_ps(a, _mm256_set1_ps(1.0f), _CMP_GE_OQ));
  return _mm256_or_ps(y, sign);
}

void erf_accurate(const float* x, float* y, int64_t n) { map8(x, y, n, erf_accurate8); }

// tanh within an ulp (measured; Sleef's tanhf took 4x PyTorch's time): below 0.625 an odd
// polynomial, above 1 - 2 / (exp(2|x|) + 1), with |x| clamped at 10 where tanh rounds to 1 (so exp
// stays finite); the sign of x put back, so -0 stays -0 and NaN stays NaN (vec/erf_coeffs.h).
inline __m256 tanh8(__m256 x) {
  namespace ec = erf_coeffs;
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
  // min returns its second operand for a NaN: a NaN |x| passes through.
  const __m256 a =
      _mm256_min_ps(_mm256_set1_ps(ec::kTanhMax), _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x));
  const __m256 a2 = _mm256_mul_ps(a, a);
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(horner8(ec::kTanhSmall, a2), a2), a, a);
  const __m256 t = _mm256_add_ps(a, a), n = round_log2e(t);
  const __m256 e = _mm256_mul_ps(exp_poly(t, n), pow2(_mm256_cvtps_epi32(n)));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 large =
      _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  const __m256 y = _mm256_blendv_ps(
      small, large, _mm256_cmp_ps(a, _mm256_set1_ps(ec::kTanhSmallMax), _CMP_GE_OQ));
  return _mm256_or_ps(y, sign);
}

void tanh_map(const float* x, float* y, int64_t n) { map8(x, y, n, tanh8); }

// sin (kCos false) and cos to 1.5 ulp: |x| = j pi/2 + r, |r| <= pi/4, and sin r or cos r by
// the quadrant (vec/erf_coeffs.h); Sleef's u10 functions for |x| > kSinCosMax, inf and NaN.
// (Sleef's sinf took 1.6x this time on the AVX-512 Xeon, one thread, in cache.)
template <bool kCos>
inline __m256 sincos8(__m256 x) {
  namespace ec = erf_coeffs;
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 j = _mm256_round_ps(_mm256_mul_ps(a, _mm256_set1_ps(ec::kTwoOverPi)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(j, _mm256_set1_ps(ec::kPio2Hi), a);
  r = _mm256_fnmadd_ps(j, _mm256_set1_ps(ec::kPio2Mid), r);
  r = _mm256_fnmadd_ps(j, _mm256_set1_ps(ec::kPio2Lo), r);
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 sin_r = _mm256_fmadd_ps(_mm256_mul_ps(horner8(ec::kSinPoly, r2), r2), r, r);
  const __m256 cos_r = _mm256_fmadd_ps(horner8(ec::kCosPoly, r2), r2, _mm256_set1_ps(1.0f));
  __m256i q = _mm256_cvttps_epi32(j);  // (a NaN or huge lane is replaced below)
  if constexpr (kCos) q = _mm256_add_epi32(q, _mm256_set1_epi32(1));  // cos x = sin(x + pi/2)
  // Odd quadrants take cos r: bit 0 of q moved to the sign bit selects in blendv.
  const __m256 y = _mm256_blendv_ps(sin_r, cos_r, _mm256_castsi256_ps(_mm256_slli_epi32(q, 31)));
  // Quadrants 2 and 3 negate; sin is odd.
  __m256i sign = _mm256_slli_epi32(_mm256_and_si256(q, _mm256_set1_epi32(2)), 30);
  if constexpr (!kCos)
    sign = _mm256_xor_si256(sign,
                            _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(INT32_MIN)));
  const __m256 out = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(y), sign));
  const __m256 far = _mm256_cmp_ps(a, _mm256_set1_ps(ec::kSinCosMax), _CMP_NLE_UQ);
  if (_mm256_movemask_ps(far) == 0) return out;
  return _mm256_blendv_ps(out, kCos ? Sleef_cosf8_u10avx2(x) : Sleef_sinf8_u10avx2(x), far);
}

void sin_map(const float* x, float* y, int64_t n) { map8(x, y, n, sincos8<false>); }
void cos_map(const float* x, float* y, int64_t n) { map8(x, y, n, sincos8<true>); }

// log to 0.9 ulp (vec/erf_coeffs.h): m and k from the bits, m = v 2^-k in [sqrt(1/2), sqrt(2)),
// f = m - 1, log(1 + f) by the polynomial and k ln2 in two parts. Zero, negative, subnormal,
// infinite and NaN lanes go to Sleef's u10 log. (Sleef's logf took 1.5x this time on the Xeon.)
inline __m256 log_accurate8(__m256 v) {
  namespace ec = erf_coeffs;
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256i bits = _mm256_castps_si256(v);
  // k: the exponent of v / sqrt(1/2), so that m = v 2^-k lands in [sqrt(1/2), sqrt(2)).
  const __m256i k = _mm256_srai_epi32(_mm256_sub_epi32(bits, _mm256_set1_epi32(0x3f3504f3)), 23);
  const __m256 m = _mm256_castsi256_ps(_mm256_sub_epi32(bits, _mm256_slli_epi32(k, 23)));
  const __m256 kf = _mm256_cvtepi32_ps(k);
  const __m256 f = _mm256_sub_ps(m, one);
  const __m256 f2 = _mm256_mul_ps(f, f);
  const __m256 p = _mm256_mul_ps(_mm256_mul_ps(horner8(ec::kLogPoly, f), f2), f);
  __m256 y = _mm256_fmadd_ps(kf, _mm256_set1_ps(ec::kLn2LoF), p);
  y = _mm256_add_ps(f, _mm256_fnmadd_ps(_mm256_set1_ps(0.5f), f2, y));
  y = _mm256_fmadd_ps(kf, _mm256_set1_ps(ec::kLn2HiF), y);
  // not (FLT_MIN <= v < inf): NaN compares false
  const __m256 special =
      _mm256_or_ps(_mm256_cmp_ps(v, _mm256_set1_ps(1.17549435e-38f), _CMP_NGE_UQ),
                   _mm256_cmp_ps(v, _mm256_set1_ps(INFINITY), _CMP_EQ_OQ));
  if (_mm256_movemask_ps(special) == 0) return y;
  return _mm256_blendv_ps(y, Sleef_logf8_u10avx2(v), special);
}

void log_map(const float* x, float* y, int64_t n) { map8(x, y, n, log_accurate8); }

// atan to 1.4 ulp (vec/erf_coeffs.h): a polynomial in z = min(|x|, 1) / max(|x|, 1), and pi/2
// minus it above 1 with the rounding of pi/2 - z kept. inf gives pi/2, NaN passes through.
// (Sleef's atanf took 2.7x this time on the Xeon.)
inline __m256 atan8(__m256 x) {
  namespace ec = erf_coeffs;
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 one = _mm256_set1_ps(1.0f);
  // min and max return their second operand for a NaN: a NaN |x| passes through both.
  const __m256 z = _mm256_div_ps(_mm256_min_ps(one, a), _mm256_max_ps(one, a));
  const __m256 t = _mm256_mul_ps(z, z);
  const __m256 tp = _mm256_mul_ps(horner8(ec::kAtanPoly, t), t);
  const __m256 p = _mm256_fmadd_ps(tp, z, z);
  const __m256 pio2 = _mm256_set1_ps(ec::kPio2Hi);
  const __m256 hi = _mm256_sub_ps(pio2, z);
  const __m256 e = _mm256_sub_ps(_mm256_sub_ps(pio2, hi), z);  // hi + e = pi/2 - z exactly
  const __m256 lo = _mm256_fnmadd_ps(z, tp, _mm256_add_ps(e, _mm256_set1_ps(ec::kPio2Mid)));
  const __m256 q = _mm256_add_ps(hi, lo);
  return _mm256_or_ps(_mm256_blendv_ps(p, q, _mm256_cmp_ps(a, one, _CMP_GT_OQ)), sign);
}

void atan_map(const float* x, float* y, int64_t n) { map8(x, y, n, atan8); }

// asin and acos to ~0.6 ulp (vec/erf_coeffs.h): asin(a) = a + a^3 P(a^2) up to |x| = 1/2, and
// pi/2 - 2 asin(s), s = sqrt((1 - a) / 2) with its rounding kept, above; acos as pi/2 - asin(x),
// 2 asin(s) or pi - 2 asin(s), the differences with pi/2 and pi exact before their last rounding.
// |x| > 1 and NaN give NaN (through the square root). (Sleef's asinf took ~1.6x PyTorch's time.)
struct AsinParts8 {
  __m256 a;    // |x|
  __m256 big;  // |x| > 1/2 (or NaN), as a lane mask
  __m256 s;    // big: sqrt((1 - |x|) / 2)
  __m256 lo;   // small: asin(|x|) - |x|; big: asin(s) - s
};
inline AsinParts8 asin_parts8(__m256 x) {
  namespace ec = erf_coeffs;
  AsinParts8 r;
  const __m256 half = _mm256_set1_ps(0.5f);
  r.a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  r.big = _mm256_cmp_ps(r.a, half, _CMP_NLE_UQ);
  const __m256 z = _mm256_fnmadd_ps(half, r.a, half);
  r.s = _mm256_sqrt_ps(z);
  // sqrt(z) - s = (z - s^2) / (2 s), with 1 / s from rsqrt (z = 0: 0 times the clamp)
  const __m256 rs = _mm256_min_ps(_mm256_rsqrt_ps(z), _mm256_set1_ps(1e30f));
  const __m256 c = _mm256_mul_ps(_mm256_mul_ps(_mm256_fnmadd_ps(r.s, r.s, z), rs), half);
  const __m256 u = _mm256_blendv_ps(_mm256_mul_ps(r.a, r.a), z, r.big);
  const __m256 v = _mm256_blendv_ps(r.a, r.s, r.big);
  const __m256 tail = _mm256_mul_ps(_mm256_mul_ps(horner8(ec::kAsinPoly, u), u), v);
  r.lo = _mm256_add_ps(tail, _mm256_and_ps(c, r.big));
  return r;
}

inline __m256 asin8(__m256 x) {
  namespace ec = erf_coeffs;
  const AsinParts8 p = asin_parts8(x);
  // big: pi/2 - 2 s - 2 lo, the rounding of pi/2 - 2 s kept
  const __m256 pio2 = _mm256_set1_ps(ec::kPio2Hi), s2 = _mm256_add_ps(p.s, p.s);
  const __m256 hi = _mm256_sub_ps(pio2, s2);
  const __m256 e = _mm256_sub_ps(_mm256_sub_ps(pio2, hi), s2);
  const __m256 big = _mm256_add_ps(
      hi,
      _mm256_fnmadd_ps(_mm256_set1_ps(2.0f), p.lo, _mm256_add_ps(e, _mm256_set1_ps(ec::kPio2Mid))));
  const __m256 r = _mm256_blendv_ps(_mm256_add_ps(p.a, p.lo), big, p.big);
  return _mm256_or_ps(r, _mm256_and_ps(x, _mm256_set1_ps(-0.0f)));
}

inline __m256 acos8(__m256 x) {
  namespace ec = erf_coeffs;
  const AsinParts8 p = asin_parts8(x);
  const __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  // small: pi/2 - x - lo with x's sign; big: 2 s + 2 lo, or pi - 2 s - 2 lo below -1/2
  const __m256 xs = _mm256_blendv_ps(x, _mm256_add_ps(p.s, p.s), p.big);
  const __m256 lo_signed = _mm256_xor_ps(p.lo, _mm256_and_ps(neg, _mm256_set1_ps(-0.0f)));
  const __m256 los = _mm256_blendv_ps(lo_signed, _mm256_add_ps(p.lo, p.lo), p.big);
  const __m256 pio2 = _mm256_set1_ps(ec::kPio2Hi), pio2_lo = _mm256_set1_ps(ec::kPio2Mid);
  const __m256 base = _mm256_add_ps(pio2, _mm256_and_ps(pio2, p.big));  // pi/2, or pi (big)
  const __m256 base_lo = _mm256_add_ps(pio2_lo, _mm256_and_ps(pio2_lo, p.big));
  const __m256 hi = _mm256_sub_ps(base, xs);
  const __m256 e = _mm256_sub_ps(_mm256_sub_ps(base, hi), xs);
  const __m256 diff = _mm256_add_ps(hi, _mm256_sub_ps(_mm256_add_ps(e, base_lo), los));
  const __m256 sum = _mm256_add_ps(xs, los);
  return _mm256_blendv_ps(diff, sum, _mm256_andnot_ps(neg, p.big));
}

void asin_map(const float* x, float* y, int64_t n) { map8(x, y, n, asin8); }
void acos_map(const float* x, float* y, int64_t n) { map8(x, y, n, acos8); }

// erfc to about 2 ulp (Sleef's erfcf was 3x PyTorch's time here): below 1, 1 - erf with the
// leading product fused; from 1 on exp(-x^2) erfcx(x), with exp(-x^2) corrected for the rounding
// of x^2 and erfcx fitted on [1, 2.5] in x and on [2.5, 10.1] in 1 / x^2 (vec/erf_coeffs.h);
// 2 - erfc(-x) for negative x. NaN stays NaN.
inline __m256 erfc8(__m256 x) {
  namespace ec = erf_coeffs;
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 ac = _mm256_min_ps(_mm256_set1_ps(11.0f), a);  // NaN passes
  const __m256 u = _mm256_mul_ps(ac, ac), u_lo = _mm256_fmsub_ps(ac, ac, u);
  const __m256 e0 = exp_full(_mm256_sub_ps(_mm256_setzero_ps(), u));
  const __m256 e = _mm256_fnmadd_ps(e0, u_lo, e0);
  const __m256 small = _mm256_fnmadd_ps(
      a, horner8(ec::kSmall, u), _mm256_fnmadd_ps(a, _mm256_set1_ps(ec::kTwoOverSqrtPiHi), one));
  const __m256 s =
      _mm256_mul_ps(_mm256_sub_ps(_mm256_min_ps(ac, _mm256_set1_ps(2.5f)), _mm256_set1_ps(1.75f)),
                    _mm256_set1_ps(1 / 0.75f));
  __m256 r = _mm256_mul_ps(e, horner8(ec::kErfcMid, s));
  // The far fit and its division only when a lane needs them (1.2% of normal values; NaN too).
  const __m256 far = _mm256_cmp_ps(a, _mm256_set1_ps(2.5f), _CMP_NLT_UQ);
  if (_mm256_movemask_ps(far)) {
    const __m256 ia = _mm256_div_ps(one, ac);
    const __m256 t = _mm256_mul_ps(_mm256_fmsub_ps(ia, ia, _mm256_set1_ps(ec::kFarMid)),
                                   _mm256_set1_ps(ec::kFarScale));
    r = _mm256_blendv_ps(r, _mm256_mul_ps(_mm256_mul_ps(e, horner8(ec::kErfcFar, t)), ia), far);
  }
  r = _mm256_blendv_ps(r, small, _mm256_cmp_ps(a, one, _CMP_LT_OQ));
  return _mm256_blendv_ps(r, _mm256_sub_ps(_mm256_set1_ps(2.0f), r),
                          _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
}

void erfc(const float* x, float* y, int64_t n) { map8(x, y, n, erfc8); }

// erfinv: Giles' single-precision approximation x0 (within a few ulp; the log inline), then one
// Halley step in double with the fits of vec/erf_coeffs.h: its error is ~e^3 for an x0 off by
// e, so the double result is far closer than rounding to float needs (the correctly rounded
// float, as PyTorch's); +-1 give +-inf, anything outside [-1, 1] NaN. The lanes of a block are
// packed by branch (|x0| < 1 or not) so that each runs only its own fits, and each long
// dependency chain runs as its own pass over the block so that the core overlaps its vectors.

// log(v) for normal v > 0 (others: garbage the callers' fixups replace), to ~1e-7: v = m 2^k
// with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172.
inline __m256 log8(__m256 v) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
  __m256 m = _mm256_castsi256_ps(_mm256_or_si256(
      _mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_castps_si256(one)));
  const __m256 big = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
  const __m256 k = _mm256_add_ps(_mm256_cvtepi32_ps(e), _mm256_and_ps(big, one));
  const __m256 s = _mm256_div_ps(_mm256_sub_ps(m, one), _mm256_add_ps(m, one));
  const __m256 s2 = _mm256_mul_ps(s, s);
  __m256 p = _mm256_fmadd_ps(s2, _mm256_set1_ps(2.0f / 7), _mm256_set1_ps(2.0f / 5));
  p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(2.0f / 3));
  p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(2.0f));
  return _mm256_fmadd_ps(k, _mm256_set1_ps(0.693147180559945f), _mm256_mul_ps(p, s));
}

// Giles' x0 for 8 floats; the tail polynomial only when a lane needs it (|y| > 0.9966).
inline __m256 giles8(__m256 y) {
  namespace ec = erf_coeffs;
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 w = _mm256_sub_ps(_mm256_setzero_ps(),
                                 log8(_mm256_mul_ps(_mm256_sub_ps(one, y), _mm256_add_ps(one, y))));
  __m256 p = horner8(ec::kGilesCentral, _mm256_sub_ps(w, _mm256_set1_ps(2.5f)));
  const __m256 far = _mm256_cmp_ps(w, _mm256_set1_ps(5.0f), _CMP_GE_OQ);
  if (_mm256_movemask_ps(far))
    p = _mm256_blendv_ps(
        p, horner8(ec::kGilesTail, _mm256_sub_ps(_mm256_sqrt_ps(w), _mm256_set1_ps(3.0f))), far);
  return _mm256_mul_ps(p, y);
}

// The step from x0 = a given res = (erf(a) - b) exp(a^2): with d = res sqrt(pi) / 2 (Newton's
// step), Halley's a - d (1 - a d) (erf'' / erf' = -2x).
inline __m128 halley4(__m256d a, __m256d res) {
  namespace ec = erf_coeffs;
  const __m256d d = _mm256_mul_pd(res, _mm256_set1_pd(1 / ec::kTwoOverSqrtPi));
  return _mm256_cvtpd_ps(_mm256_fnmadd_pd(d, _mm256_fnmadd_pd(a, d, _mm256_set1_pd(1.0)), a));
}

// From x0 = |Giles| < 1 toward erfinv(b), b = |y|: the correction is ~1e-6 x0, so exp(x0^2)
// needs only ~1e-8 (one polynomial on [0, 1]); erf(x0) = x0 P(2 x0^2 - 1).
inline __m128 step_central4(__m128 x0, __m128 y) {
  namespace ec = erf_coeffs;
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d a = _mm256_cvtps_pd(x0), b = _mm256_cvtps_pd(y);
  const __m256d u = _mm256_mul_pd(a, a);
  const __m256d e = horner4(ec::kExpUnit, u);
  const __m256d res = _mm256_mul_pd(
      e, _mm256_fmsub_pd(a, horner4(ec::kErfCentral, _mm256_fmsub_pd(u, _mm256_set1_pd(2.0), one)),
                         b));
  return halley4(a, res);
}

// From x0 >= 1: (erf(x0) - b) exp(x0^2) = (1 - b) E - H(s), E = exp(x0^2) to ~1e-13 (u = n ln2
// + r, Taylor in r, 2^n through the exponent bits; no division).
inline __m128 step_tail4(__m128 x0, __m128 y) {
  namespace ec = erf_coeffs;
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d a = _mm256_cvtps_pd(x0), b = _mm256_cvtps_pd(y);
  const __m256d uc = _mm256_min_pd(_mm256_mul_pd(a, a), _mm256_set1_pd(16.0));
  const __m256d n = _mm256_round_pd(_mm256_mul_pd(uc, _mm256_set1_pd(ec::kLog2e)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(ec::kLn2Lo),
                                     _mm256_fnmadd_pd(n, _mm256_set1_pd(ec::kLn2Hi), uc));
  const __m256i bits = _mm256_slli_epi64(
      _mm256_cvtepi32_epi64(_mm_add_epi32(_mm_set1_epi32(1023), _mm256_cvtpd_epi32(n))), 52);
  const __m256d e = _mm256_mul_pd(horner4(ec::kExpTaylor, r), _mm256_castsi256_pd(bits));
  const __m256d s = _mm256_min_pd(
      one, _mm256_mul_pd(_mm256_sub_pd(a, _mm256_set1_pd(2.5)), _mm256_set1_pd(1 / 1.5)));
  const __m256d res = _mm256_fmsub_pd(_mm256_sub_pd(one, b), e, horner4(ec::kErfcTail, s));
  return halley4(a, res);
}

// Lane tables for packing 8 floats by a mask m: pack[m] moves the lanes set in m to the front in
// order, unpack[m] sends the i-th packed lane back to the i-th set lane of m.
struct LaneTables {
  alignas(32) int32_t pack[256][8];
  alignas(32) int32_t unpack[256][8];
};
constexpr LaneTables make_lane_tables() {
  LaneTables t{};
  for (int m = 0; m < 256; ++m) {
    int k = 0;
    for (int j = 0; j < 8; ++j)
      if (m >> j & 1) {
        t.pack[m][k] = j;
        t.unpack[m][j] = k++;
      }
  }
  return t;
}
constexpr LaneTables kLanes = make_lane_tables();

inline __m256 pack8(__m256 v, int m) {
  return _mm256_permutevar8x32_ps(
      v, _mm256_load_si256(reinterpret_cast<const __m256i*>(kLanes.pack[m])));
}
inline __m256 unpack8(const float* packed, int m) {
  return _mm256_permutevar8x32_ps(
      _mm256_loadu_ps(packed),
      _mm256_load_si256(reinterpret_cast<const __m256i*>(kLanes.unpack[m])));
}

void erfinv(const float* x, float* y, int64_t n) {
  constexpr int64_t kBlock = 256;
  // Packed lanes by branch; room for the last 8-wide packing store.
  alignas(32) float in[kBlock], cx[kBlock + 8] = {}, cy[kBlock + 8] = {};
  alignas(32) float tx[kBlock + 8] = {}, ty[kBlock + 8] = {};
  uint8_t central[kBlock / 8];
  const __m256 signbit = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i);
    const float* src = x + i;
    if (m < kBlock) {  // the last partial block through a zero-padded buffer
      std::fill(in, in + kBlock, 0.0f);
      std::copy(src, src + m, in);
      src = in;
    }
    int64_t nc = 0, nt = 0;
    for (int64_t j = 0; j < kBlock; j += 8) {
      const __m256 yv = _mm256_andnot_ps(signbit, _mm256_loadu_ps(src + j));
      const __m256 x0 = _mm256_andnot_ps(signbit, giles8(yv));
      const int c = _mm256_movemask_ps(_mm256_cmp_ps(x0, one, _CMP_LT_OQ));
      central[j / 8] = static_cast<uint8_t>(c);
      _mm256_storeu_ps(cx + nc, pack8(x0, c));
      _mm256_storeu_ps(cy + nc, pack8(yv, c));
      _mm256_storeu_ps(tx + nt, pack8(x0, c ^ 0xff));
      _mm256_storeu_ps(ty + nt, pack8(yv, c ^ 0xff));
      const int k = __builtin_popcount(c);
      nc += k;
      nt += 8 - k;
    }
    for (int64_t j = 0; j < nc; j += 4)
      _mm_store_ps(cx + j, step_central4(_mm_load_ps(cx + j), _mm_load_ps(cy + j)));
    for (int64_t j = 0; j < nt; j += 4)
      _mm_store_ps(tx + j, step_tail4(_mm_load_ps(tx + j), _mm_load_ps(ty + j)));
    int64_t ic = 0, it = 0;
    alignas(32) float out[8];
    for (int64_t j = 0; j < m; j += 8) {
      const int c = central[j / 8];
      const __m256 lanes = _mm256_castsi256_ps(_mm256_cmpeq_epi32(
          _mm256_and_si256(_mm256_set1_epi32(c), _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128)),
          _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128)));
      __m256 r = _mm256_blendv_ps(unpack8(tx + it, c ^ 0xff), unpack8(cx + ic, c), lanes);
      const int k = __builtin_popcount(c);
      ic += k;
      it += 8 - k;
      const __m256 yv = _mm256_loadu_ps(src + j);
      const __m256 sign = _mm256_and_ps(yv, signbit), b = _mm256_andnot_ps(signbit, yv);
      r = _mm256_or_ps(r, sign);
      // |y| == 1: +-inf; outside [-1, 1] or NaN: NaN
      r = _mm256_blendv_ps(r, _mm256_or_ps(_mm256_set1_ps(INFINITY), sign),
                           _mm256_cmp_ps(b, one, _CMP_EQ_OQ));
      r = _mm256_blendv_ps(r, _mm256_set1_ps(NAN), _mm256_cmp_ps(b, one, _CMP_NLE_UQ));
      if (m - j >= 8) {
        _mm256_storeu_ps(y + i + j, r);
      } else {
        _mm256_store_ps(out, r);
        std::copy(out, out + (m - j), y + i + j);
      }
    }
  }
}

// Sleef's asinhf and acoshf overflow once x^2 does (|x| from ~1.8e19); from 2^60 on they are
// sign(x) (log|x| + log 2) to float's precision (the next term is 1 / (4 x^2)).
template <bool kAcosh>
__m256 asinh_acosh8(__m256 v) {
  __m256 r = kAcosh ? Sleef_acoshf8_u10avx2(v) : Sleef_asinhf8_u10avx2(v);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = kAcosh ? v : _mm256_andnot_ps(sign, v);
  const __m256 big = _mm256_cmp_ps(a, _mm256_set1_ps(0x1p60f), _CMP_GT_OQ);
  if (_mm256_movemask_ps(big)) {
    const __m256 l = _mm256_add_ps(Sleef_logf8_u10avx2(a), _mm256_set1_ps(0.693147180559945309f));
    r = _mm256_blendv_ps(r, _mm256_or_ps(l, _mm256_and_ps(v, sign)), big);
  }
  return r;
}

template <auto F>
void apply(const float* x, float* y, int64_t n) {
  map8(x, y, n, [](__m256 v) { return F(v); });
}

}  // namespace

UnaryKernel exp_kernel() {
  return has_avx512() ? avx512::exp_kernel() : &apply<Sleef_expf8_u10avx2>;
}

template <int kMode>
void round8(const float* x, float* y, int64_t n) {
  map8(x, y, n, [](__m256 v) { return _mm256_round_ps(v, kMode | _MM_FROUND_NO_EXC); });
}

void sqrt8(const float* x, float* y, int64_t n) {
  map8(x, y, n, [](__m256 v) { return _mm256_sqrt_ps(v); });
}

void rsqrt8(const float* x, float* y, int64_t n) {  // a division, not the approximate rsqrtps
  const __m256 one = _mm256_set1_ps(1.0f);
  map8(x, y, n, [&](__m256 v) { return _mm256_div_ps(one, _mm256_sqrt_ps(v)); });
}

void abs8(const float* x, float* y, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  map8(x, y, n, [&](__m256 v) { return _mm256_andnot_ps(sign, v); });
}

void neg8(const float* x, float* y, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  map8(x, y, n, [&](__m256 v) { return _mm256_xor_ps(sign, v); });
}

void reciprocal8(const float* x, float* y, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  map8(x, y, n, [&](__m256 v) { return _mm256_div_ps(one, v); });
}

void sigmoid8(const float* x, float* y, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  map8(x, y, n, [&](__m256 v) {
    const __m256 e = exp_full(_mm256_sub_ps(_mm256_setzero_ps(), v));
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
  });
}

UnaryKernel unary_kernel(UnaryFn fn) {
  if (has_avx512())
    if (UnaryKernel k = avx512::unary_kernel(fn)) return k;
  switch (fn) {
    case UnaryFn::kSqrt:
      return &sqrt8;
    case UnaryFn::kRsqrt:
      return &rsqrt8;
    case UnaryFn::kAbs:
      return &abs8;
    case UnaryFn::kNeg:
      return &neg8;
    case UnaryFn::kReciprocal:
      return &reciprocal8;
    case UnaryFn::kSigmoid:
      return &sigmoid8;
    case UnaryFn::kFloor:
      return &round8<_MM_FROUND_TO_NEG_INF>;
    case UnaryFn::kCeil:
      return &round8<_MM_FROUND_TO_POS_INF>;
    case UnaryFn::kTrunc:
      return &round8<_MM_FROUND_TO_ZERO>;
    case UnaryFn::kRound:  // half to even, as nearbyint in the default rounding mode
      return &round8<_MM_FROUND_TO_NEAREST_INT>;
    case UnaryFn::kLog:
      return &log_map;
    case UnaryFn::kLog1p:
      return &apply<Sleef_log1pf8_u10avx2>;
    case UnaryFn::kLog2:
      return &apply<Sleef_log2f8_u10avx2>;
    case UnaryFn::kLog10:
      return &apply<Sleef_log10f8_u10avx2>;
    case UnaryFn::kExp2:
      return &apply<Sleef_exp2f8_u10avx2>;
    case UnaryFn::kExpm1:
      return &apply<Sleef_expm1f8_u10avx2>;
    case UnaryFn::kSin:
      return &sin_map;
    case UnaryFn::kCos:
      return &cos_map;
    case UnaryFn::kTan:
      return &apply<Sleef_tanf8_u10avx2>;
    case UnaryFn::kAsin:
      return &asin_map;
    case UnaryFn::kAcos:
      return &acos_map;
    case UnaryFn::kAtan:
      return &atan_map;
    case UnaryFn::kSinh:
      return &apply<Sleef_sinhf8_u10avx2>;
    case UnaryFn::kCosh:
      return &apply<Sleef_coshf8_u10avx2>;
    case UnaryFn::kTanh:
      return &tanh_map;
    case UnaryFn::kAsinh:
      return &apply<asinh_acosh8<false>>;
    case UnaryFn::kAcosh:
      return &apply<asinh_acosh8<true>>;
    case UnaryFn::kAtanh:
      return &apply<Sleef_atanhf8_u10avx2>;
    case UnaryFn::kErf:
      return &erf_accurate;
    case UnaryFn::kErfc:
      return &erfc;
    case UnaryFn::kErfinv:
      return &erfinv;
    case UnaryFn::kLgamma:
      return &apply<Sleef_lgammaf8_u10avx2>;
    default:
      return nullptr;
  }
}

namespace {

// 8 floats or 4 doubles, the operations the binary kernels need.
template <typename T>
struct Lanes;
// Sleef's fmod with its NaN lanes computed again (binary_map.h's fmod_nan_lanes).
template <typename T, typename V>
V fmod_fixed(V r, V a, V b) {
  if constexpr (std::is_same_v<T, float>)
    return fmod_nan_lanes<T>(r, a, b, _mm256_movemask_ps(_mm256_cmp_ps(r, r, _CMP_UNORD_Q)));
  else
    return fmod_nan_lanes<T>(r, a, b, _mm256_movemask_pd(_mm256_cmp_pd(r, r, _CMP_UNORD_Q)));
}

template <>
struct Lanes<float> {
  using T = float;
  using V = __m256;
  static constexpr int kN = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V set1(float v) { return _mm256_set1_ps(v); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V floor(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  static V trunc(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
  static V sign_bits(V a) { return _mm256_and_ps(a, _mm256_set1_ps(-0.0f)); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  template <int kCmp>
  static V cmp(V a, V b) {
    return _mm256_cmp_ps(a, b, kCmp);
  }
  static V select(V mask, V yes, V no) { return _mm256_blendv_ps(no, yes, mask); }
  static V bit_and(V a, V b) { return _mm256_and_ps(a, b); }
  static V bit_xor(V a, V b) { return _mm256_xor_ps(a, b); }
  static V atan2(V a, V b) { return Sleef_atan2f8_u10avx2(a, b); }
  static V fmod(V a, V b) { return fmod_fixed<float>(Sleef_fmodf8_avx2(a, b), a, b); }
  static V pow(V a, V b) { return Sleef_powf8_u10avx2(a, b); }
};
template <>
struct Lanes<double> {
  using T = double;
  using V = __m256d;
  static constexpr int kN = 4;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V set1(double v) { return _mm256_set1_pd(v); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V div(V a, V b) { return _mm256_div_pd(a, b); }
  static V floor(V a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  static V trunc(V a) { return _mm256_round_pd(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
  static V sign_bits(V a) { return _mm256_and_pd(a, _mm256_set1_pd(-0.0)); }
  static V max(V a, V b) { return _mm256_max_pd(a, b); }
  static V min(V a, V b) { return _mm256_min_pd(a, b); }
  template <int kCmp>
  static V cmp(V a, V b) {
    return _mm256_cmp_pd(a, b, kCmp);
  }
  static V select(V mask, V yes, V no) { return _mm256_blendv_pd(no, yes, mask); }
  static V bit_and(V a, V b) { return _mm256_and_pd(a, b); }
  static V bit_xor(V a, V b) { return _mm256_xor_pd(a, b); }
  static V atan2(V a, V b) { return Sleef_atan2d4_u10avx2(a, b); }
  static V fmod(V a, V b) { return fmod_fixed<double>(Sleef_fmodd4_avx2(a, b), a, b); }
  static V pow(V a, V b) { return Sleef_powd4_u10avx2(a, b); }
};

}  // namespace

BinaryKernel<float> binary_kernel_f32(BinaryFn fn) {
  if (has_avx512()) return avx512::binary_kernel<float>(fn);
  return binary_map_kernel<Lanes<float>>(fn);
}
BinaryKernel<double> binary_kernel_f64(BinaryFn fn) {
  if (has_avx512()) return avx512::binary_kernel<double>(fn);
  return binary_map_kernel<Lanes<double>>(fn);
}
BinaryKernel<float> pow_kernel_f32() {
  return has_avx512() ? avx512::pow_kernel<float>() : &binary_map<PowOp, Lanes<float>>;
}
BinaryKernel<double> pow_kernel_f64() {
  return has_avx512() ? avx512::pow_kernel<double>() : &binary_map<PowOp, Lanes<double>>;
}
BinaryKernel<float> div_kernel_f32() {
  return has_avx512() ? avx512::div_kernel<float>() : &binary_map<DivOp, Lanes<float>>;
}
BinaryKernel<double> div_kernel_f64() {
  return has_avx512() ? avx512::div_kernel<double>() : &binary_map<DivOp, Lanes<double>>;
}

double prod(const float* p, int64_t n, double start) {
  // Eight chains of four doubles (two multiplies per cycle despite their latency).
  __m256d a[8];
  for (__m256d& v : a) v = _mm256_set1_pd(1.0);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int j = 0; j < 8; ++j)
      a[j] = _mm256_mul_pd(a[j], _mm256_cvtps_pd(_mm_loadu_ps(p + i + 4 * j)));
  for (int j = 0; j < 4; ++j) a[j] = _mm256_mul_pd(a[j], a[j + 4]);
  alignas(32) double l[4];
  _mm256_store_pd(l, _mm256_mul_pd(_mm256_mul_pd(a[0], a[1]), _mm256_mul_pd(a[2], a[3])));
  double acc = start * ((l[0] * l[1]) * (l[2] * l[3]));
  for (; i < n; ++i) acc *= p[i];
  return acc;
}

namespace {
// The products of K runs of n floats side by side, in double: two chains of four doubles per
// run, so four runs keep eight multiplies in flight (their latency covered) even when the runs
// are short.
template <int K>
void prod_side_by_side(const float* p, int64_t n, double* out) {
  __m256d a[K][2];
  for (int j = 0; j < K; ++j) a[j][0] = a[j][1] = _mm256_set1_pd(1.0);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < K; ++j) {
      const float* q = p + j * n + i;
      a[j][0] = _mm256_mul_pd(a[j][0], _mm256_cvtps_pd(_mm_loadu_ps(q)));
      a[j][1] = _mm256_mul_pd(a[j][1], _mm256_cvtps_pd(_mm_loadu_ps(q + 4)));
    }
  for (int j = 0; j < K; ++j) {
    alignas(32) double l[4];
    _mm256_store_pd(l, _mm256_mul_pd(a[j][0], a[j][1]));
    double v = (l[0] * l[1]) * (l[2] * l[3]);
    for (int64_t t = i; t < n; ++t) v *= p[j * n + t];
    out[j] = v;
  }
}
}  // namespace

void prod_runs(const float* p, int64_t runs, int64_t n, double* out) {
  // Every float is converted and multiplied in double: a product of floats in double rounds at
  // 2^-53 per step, so the float result is the correctly rounded one (to an ulp) of the exact
  // product. Flush-to-zero for the double lanes: below 2^-1022 they are far under float's range,
  // and denormal arithmetic costs ~100 cycles per operation.
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | _MM_FLUSH_ZERO_ON);
  int64_t r = 0;
  for (; r + 4 <= runs; r += 4) prod_side_by_side<4>(p + r * n, n, out + r);
  for (; r < runs; ++r) {
    // A lone run: eight chains of its own when it is long enough to fill them.
    if (n >= 128)
      out[r] = prod(p + r * n, n, 1.0);
    else
      prod_side_by_side<1>(p + r * n, n, out + r);
  }
  _mm_setcsr(csr);
}

void prod_cols(double* acc, const float* rows, int64_t stride, int64_t nrows, int64_t n) {
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) _mm256_storeu_pd(acc + k, _mm256_set1_pd(1.0));
  for (; k < n; ++k) acc[k] = 1.0;
  if (has_avx512()) return avx512::prod_rows(acc, rows, stride, nrows, n);  // sets FTZ itself
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | _MM_FLUSH_ZERO_ON);
  prod_rows(acc, rows, stride, nrows, n);
  _mm_setcsr(csr);
}

namespace {
// part[0, 8 kVecs) += the rows' elements (their squares with Sq), the sums in registers for all
// the rows: one load per 8 elements, kVecs independent chains of additions.
template <bool Sq, int kVecs>
inline void sum_strip(float* part, const float* rows, int64_t stride, int64_t nrows) {
  __m256 a[kVecs];
  for (int v = 0; v < kVecs; ++v) a[v] = _mm256_loadu_ps(part + 8 * v);
  for (int64_t j = 0; j < nrows; ++j) {
    const float* r = rows + j * stride;
    for (int v = 0; v < kVecs; ++v) {
      const __m256 x = _mm256_loadu_ps(r + 8 * v);
      a[v] = Sq ? _mm256_fmadd_ps(x, x, a[v]) : _mm256_add_ps(a[v], x);
    }
  }
  for (int v = 0; v < kVecs; ++v) _mm256_storeu_ps(part + 8 * v, a[v]);
}

// Wide blocks: four rows per pass over part, reading four rows sequentially.
template <bool Sq>
void sum_rows_wide(float* part, const float* rows, int64_t stride, int64_t nrows, int64_t n) {
  auto sq = [](__m256 v) { return Sq ? _mm256_mul_ps(v, v) : v; };
  auto sq1 = [](float v) { return Sq ? v * v : v; };
  int64_t j = 0;
  for (; j + 4 <= nrows; j += 4) {
    const float* r = rows + j * stride;
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
      const __m256 a =
          _mm256_add_ps(sq(_mm256_loadu_ps(r + k)), sq(_mm256_loadu_ps(r + stride + k)));
      const __m256 b = _mm256_add_ps(sq(_mm256_loadu_ps(r + 2 * stride + k)),
                                     sq(_mm256_loadu_ps(r + 3 * stride + k)));
      _mm256_storeu_ps(part + k, _mm256_add_ps(_mm256_loadu_ps(part + k), _mm256_add_ps(a, b)));
    }
    for (; k < n; ++k)
      part[k] +=
          (sq1(r[k]) + sq1(r[stride + k])) + (sq1(r[2 * stride + k]) + sq1(r[3 * stride + k]));
  }
  for (; j < nrows; ++j) {
    const float* r = rows + j * stride;
    int64_t k = 0;
    for (; k + 8 <= n; k += 8)
      _mm256_storeu_ps(part + k,
                       _mm256_add_ps(_mm256_loadu_ps(part + k), sq(_mm256_loadu_ps(r + k))));
    for (; k < n; ++k) part[k] += sq1(r[k]);
  }
}

// Narrow blocks (up to 128 columns; attention's heads, a middle dim of 64): the sums stay in
// registers for all the rows.
template <bool Sq>
void sum_rows_impl(float* part, const float* rows, int64_t stride, int64_t nrows, int64_t n) {
  if (n > 128) return sum_rows_wide<Sq>(part, rows, stride, nrows, n);
  int64_t k = 0;
  for (; k + 64 <= n; k += 64) sum_strip<Sq, 8>(part + k, rows + k, stride, nrows);
  for (; k + 8 <= n; k += 8) sum_strip<Sq, 1>(part + k, rows + k, stride, nrows);
  for (; k < n; ++k) {
    float a = part[k];
    for (int64_t j = 0; j < nrows; ++j) {
      const float v = rows[j * stride + k];
      a += Sq ? v * v : v;
    }
    part[k] = a;
  }
}
}  // namespace

void sum_rows(float* part, const float* rows, int64_t stride, int64_t nrows, int64_t n,
              bool squares) {
  squares ? sum_rows_impl<true>(part, rows, stride, nrows, n)
          : sum_rows_impl<false>(part, rows, stride, nrows, n);
}

namespace {
// acc[0, 8 V) = the max (min without IsMax) of itself and the rows' values, held in registers
// across all the rows (vmaxps(row, acc): acc stays on ties and once it is NaN; a NaN row value is
// dropped but noted in `nan`).
template <int V, bool IsMax>
inline void max_strip(float* acc, const float* rows, int64_t stride, int64_t nrows, __m256& nan) {
  auto max = [](__m256 a, __m256 v) { return IsMax ? _mm256_max_ps(v, a) : _mm256_min_ps(v, a); };
  __m256 a[V];
  for (int v = 0; v < V; ++v) a[v] = _mm256_loadu_ps(acc + 8 * v);
  int64_t j = 0;
  for (; j + 2 <= nrows; j += 2) {
    const float* r = rows + j * stride;
    for (int v = 0; v < V; ++v) {
      const __m256 x0 = _mm256_loadu_ps(r + 8 * v), x1 = _mm256_loadu_ps(r + stride + 8 * v);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(x0, x1, _CMP_UNORD_Q));  // one compare, two rows
      a[v] = max(max(a[v], x0), x1);
    }
  }
  for (; j < nrows; ++j)
    for (int v = 0; v < V; ++v) {
      const __m256 x = _mm256_loadu_ps(rows + j * stride + 8 * v);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
      a[v] = max(a[v], x);
    }
  for (int v = 0; v < V; ++v) _mm256_storeu_ps(acc + 8 * v, a[v]);
}
}  // namespace

void max_rows(float* acc, const float* rows, int64_t stride, int64_t nrows, int64_t n,
              bool is_max) {
  // Strips of 64 columns whose accumulators stay in registers for all the rows: no loads and
  // stores of acc per row. (Per pass of four rows over acc in memory, a queued amax(dim=1) of
  // 256x64x64 ran the stream thread's half of the blocks at half the speed of the other
  // thread's, plausibly 4K aliasing between its stack buffer acc and the rows.)
  __m256 nan = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 64 <= n; k += 64)
    is_max ? max_strip<8, true>(acc + k, rows + k, stride, nrows, nan)
           : max_strip<8, false>(acc + k, rows + k, stride, nrows, nan);
  for (; k + 8 <= n; k += 8)
    is_max ? max_strip<1, true>(acc + k, rows + k, stride, nrows, nan)
           : max_strip<1, false>(acc + k, rows + k, stride, nrows, nan);
  auto scalar = [is_max](float a, float v) { return (is_max ? v > a : v < a) || v != v ? v : a; };
  for (; k < n; ++k)
    for (int64_t j = 0; j < nrows; ++j) acc[k] = scalar(acc[k], rows[j * stride + k]);
  if (_mm256_movemask_ps(nan) == 0) return;
  // A NaN somewhere: a column that holds one ends at its last NaN (the scalar rule's result).
  for (int64_t k = 0; k < n / 8 * 8; ++k)
    for (int64_t q = nrows - 1; q >= 0; --q)
      if (rows[q * stride + k] != rows[q * stride + k]) {
        acc[k] = rows[q * stride + k];
        break;
      }
}

namespace {
// Eight values row[(o + l) * s + c] for lanes l < 8 (stride s between lanes) of a row of w.
inline __m256 load_strided(const float* row, int64_t w, int64_t o, int64_t s, int64_t c,
                           __m256i lanes) {
  const float* b = row + o * s + c;
  if (s == 1) return _mm256_loadu_ps(b);
  if (s == 2 && o * s + c + 16 <= w) {
    // Even elements of 16: shuffle picks (0 2 8 10 | 4 6 12 14), the permute restores the order.
    const __m256 lo = _mm256_loadu_ps(b), hi = _mm256_loadu_ps(b + 8);
    const __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  return _mm256_i32gather_ps(b, lanes, 4);
}
}  // namespace

void max_pool_row(const float* const* rows, const int64_t* row_off, int64_t nrows, int64_t w,
                  int64_t k, int64_t s, int64_t p, int64_t d, int64_t ow0, int64_t ow1, float* y,
                  int64_t* idx) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lanes = _mm256_mullo_epi32(lane, _mm256_set1_epi32(static_cast<int32_t>(s)));
  int64_t ow = ow0;
  for (; ow + 8 <= ow1; ow += 8) {
    __m256 best = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    // The first tap's index: kept when every value is -inf.
    __m256i at =
        _mm256_add_epi32(_mm256_set1_epi32(static_cast<int32_t>(row_off[0] + ow * s - p)), lanes);
    for (int64_t r = 0; r < nrows; ++r)
      for (int64_t kw = 0; kw < k; ++kw) {
        const int64_t c = kw * d - p;
        const __m256 v = load_strided(rows[r], w, ow, s, c, lanes);
        const __m256 take =
            _mm256_or_ps(_mm256_cmp_ps(v, best, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        best = _mm256_blendv_ps(best, v, take);
        if (idx) {
          const __m256i here = _mm256_add_epi32(
              _mm256_set1_epi32(static_cast<int32_t>(row_off[r] + ow * s + c)), lanes);
          at = _mm256_castps_si256(
              _mm256_blendv_ps(_mm256_castsi256_ps(at), _mm256_castsi256_ps(here), take));
        }
      }
    _mm256_storeu_ps(y + ow, best);
    if (idx) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + ow),
                          _mm256_cvtepi32_epi64(_mm256_castsi256_si128(at)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + ow + 4),
                          _mm256_cvtepi32_epi64(_mm256_extracti128_si256(at, 1)));
    }
  }
  for (; ow < ow1; ++ow) {
    float best = -std::numeric_limits<float>::infinity();
    int64_t at = row_off[0] + ow * s - p;
    for (int64_t r = 0; r < nrows; ++r)
      for (int64_t kw = 0; kw < k; ++kw) {
        const int64_t c = ow * s - p + kw * d;
        const float v = rows[r][c];
        if (v > best || v != v) best = v, at = row_off[r] + c;
      }
    y[ow] = best;
    if (idx) idx[ow] = at;
  }
}

void avg_pool_row(const float* const* rows, int64_t nrows, int64_t w, int64_t k, int64_t s,
                  int64_t p, int64_t ow0, int64_t ow1, float* y, float div) {
  const __m256i lanes = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32(static_cast<int32_t>(s)));
  const __m256 dv = _mm256_set1_ps(div);
  int64_t ow = ow0;
  for (; ow + 8 <= ow1; ow += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t r = 0; r < nrows; ++r)
      for (int64_t kw = 0; kw < k; ++kw)
        acc = _mm256_add_ps(acc, load_strided(rows[r], w, ow, s, kw - p, lanes));
    _mm256_storeu_ps(y + ow, _mm256_div_ps(acc, dv));
  }
  for (; ow < ow1; ++ow) {
    float acc = 0.0f;
    for (int64_t r = 0; r < nrows; ++r)
      for (int64_t kw = 0; kw < k; ++kw) acc += rows[r][ow * s - p + kw];
    y[ow] = acc / div;
  }
}

namespace {
// acc[k, k + 4 * S) *= the rows [j0, j1) of columns [k, k + 4 * S), in S registers: a pair of
// rows per step (a product of two floats is exact in double, so one rounding per two rows),
// the rows streamed once per strip.
template <int S>
void prod_strip(double* acc, const float* rows, int64_t stride, int64_t j0, int64_t j1) {
  auto row4 = [](const float* r) { return _mm256_cvtps_pd(_mm_loadu_ps(r)); };
  __m256d a[S];
  for (int q = 0; q < S; ++q) a[q] = _mm256_loadu_pd(acc + 4 * q);
  int64_t j = j0;
  for (; j + 2 <= j1; j += 2) {
    const float* r = rows + j * stride;
    for (int q = 0; q < S; ++q)
      a[q] = _mm256_mul_pd(a[q], _mm256_mul_pd(row4(r + 4 * q), row4(r + stride + 4 * q)));
  }
  if (j < j1)
    for (int q = 0; q < S; ++q) a[q] = _mm256_mul_pd(a[q], row4(rows + j * stride + 4 * q));
  for (int q = 0; q < S; ++q) _mm256_storeu_pd(acc + 4 * q, a[q]);
}
}  // namespace

void prod_rows(double* acc, const float* rows, int64_t stride, int64_t nrows, int64_t n) {
  if (has_avx512()) return avx512::prod_rows(acc, rows, stride, nrows, n);
  // Strips of 32 columns, each over a chunk of rows of about 16 KiB (all of them when the block
  // is that small), so the accumulators stay in registers for the chunk and the strips after
  // the first find the chunk's rows in L1.
  const int64_t chunk = std::max<int64_t>(2, (4096 / std::max<int64_t>(n, 1)) & ~int64_t(1));
  for (int64_t j0 = 0; j0 < nrows; j0 += chunk) {
    const int64_t j1 = std::min(nrows, j0 + chunk);
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) prod_strip<8>(acc + k, rows + k, stride, j0, j1);
    for (; k + 4 <= n; k += 4) prod_strip<1>(acc + k, rows + k, stride, j0, j1);
    for (; k < n; ++k) {
      double a = acc[k];
      int64_t j = j0;
      for (; j + 2 <= j1; j += 2)
        a *= double(rows[j * stride + k]) * double(rows[(j + 1) * stride + k]);
      if (j < j1) a *= double(rows[j * stride + k]);
      acc[k] = a;
    }
  }
}

namespace {
// The sum of n doubles, of their squares with Sq.
template <bool Sq>
double sum_f64(const double* p, int64_t n) {
  __m256d a[4];
  for (__m256d& v : a) v = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 4; ++j) {
      const __m256d v = _mm256_loadu_pd(p + i + 4 * j);
      a[j] = Sq ? _mm256_fmadd_pd(v, v, a[j]) : _mm256_add_pd(a[j], v);
    }
  alignas(32) double l[4];
  _mm256_store_pd(l, _mm256_add_pd(_mm256_add_pd(a[0], a[1]), _mm256_add_pd(a[2], a[3])));
  double t = (l[0] + l[1]) + (l[2] + l[3]);
  for (; i < n; ++i) t += Sq ? p[i] * p[i] : p[i];
  return t;
}
}  // namespace

double sum(const double* p, int64_t n) { return sum_f64<false>(p, n); }
double sum_squares(const double* p, int64_t n) { return sum_f64<true>(p, n); }

float max_run(const float* p, int64_t n, bool is_max) {
  // Four chains of max (min) per lane; NaNs are only noted on the way (vmaxps drops them) and
  // the first one is looked up at the end.
  __m256 a[4], nan = _mm256_setzero_ps();
  for (__m256& v : a) v = _mm256_set1_ps(p[0]);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int j = 0; j < 4; ++j) {
      const __m256 v = _mm256_loadu_ps(p + i + 8 * j);
      a[j] = is_max ? _mm256_max_ps(a[j], v) : _mm256_min_ps(a[j], v);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
  for (int j = 1; j < 4; ++j) a[0] = is_max ? _mm256_max_ps(a[0], a[j]) : _mm256_min_ps(a[0], a[j]);
  alignas(32) float l[8];
  _mm256_store_ps(l, a[0]);
  float acc = l[0];
  for (int j = 1; j < 8; ++j) acc = is_max ? std::max(acc, l[j]) : std::min(acc, l[j]);
  if (_mm256_movemask_ps(nan) != 0)
    for (int64_t k = 0;; ++k)
      if (p[k] != p[k]) return p[k];
  for (; i < n; ++i) {
    const float v = p[i];
    if (v != v) return v;
    acc = is_max ? std::max(acc, v) : std::min(acc, v);
  }
  return acc;
}

void gelu(const float* x, float* y, int64_t n, bool tanh_form) {
  if (has_avx512()) return avx512::gelu(x, y, n, tanh_form);
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  if (tanh_form) {
    // 0.5 x (1 + tanh(u)) = x sigmoid(2u) = x / (1 + exp(-2u)): the own exp instead of Sleef's
    // tanh, and no cancellation where tanh(u) is near -1.
    map8(x, y, n, [&](__m256 v) {
      const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
      const __m256 u2 = _mm256_mul_ps(_mm256_set1_ps(-2.0f * kSqrt2OverPi),
                                      _mm256_fmadd_ps(_mm256_set1_ps(kGeluCubic), v3, v));
      return _mm256_div_ps(v, _mm256_add_ps(one, exp_full(u2)));
    });
  } else {
    map8(x, y, n, [&](__m256 v) {
      const __m256 e = erf8(_mm256_mul_ps(v, _mm256_set1_ps(kSqrt1_2)));
      return _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, e));
    });
  }
}

void gelu_grad(const float* dy, const float* x, float* dx, int64_t n, bool tanh_form) {
  if (has_avx512()) return avx512::gelu_grad(dy, x, dx, n, tanh_form);
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  auto grad8 = [&](__m256 g, __m256 v) {
    if (tanh_form) {
      const __m256 v2 = _mm256_mul_ps(v, v);
      const __m256 k = _mm256_set1_ps(kSqrt2OverPi), c = _mm256_set1_ps(kGeluCubic);
      // With s = sigmoid(2u) = 0.5 (1 + tanh(u)): d/dx x s = s + 2 x s (1 - s) u'.
      const __m256 u = _mm256_mul_ps(k, _mm256_fmadd_ps(_mm256_mul_ps(c, v2), v, v));
      const __m256 s =
          _mm256_div_ps(one, _mm256_add_ps(one, exp_full(_mm256_mul_ps(_mm256_set1_ps(-2.0f), u))));
      const __m256 du =
          _mm256_mul_ps(k, _mm256_fmadd_ps(_mm256_set1_ps(3.0f * kGeluCubic), v2, one));
      const __m256 right = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(2.0f), v),
                                         _mm256_mul_ps(_mm256_fnmadd_ps(s, s, s), du));
      return _mm256_mul_ps(g, _mm256_add_ps(s, right));
    }
    const __m256 cdf =
        _mm256_mul_ps(half, _mm256_add_ps(one, erf8(_mm256_mul_ps(v, _mm256_set1_ps(kSqrt1_2)))));
    const __m256 pdf =
        _mm256_mul_ps(_mm256_set1_ps(0.39894228040143267794f),
                      exp_full(_mm256_mul_ps(_mm256_set1_ps(-0.5f), _mm256_mul_ps(v, v))));
    return _mm256_mul_ps(g, _mm256_fmadd_ps(v, pdf, cdf));
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dx + i, grad8(_mm256_loadu_ps(dy + i), _mm256_loadu_ps(x + i)));
  if (i < n) {
    alignas(32) float bg[8] = {0, 0, 0, 0, 0, 0, 0, 0}, bx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) {
      bg[j - i] = dy[j];
      bx[j - i] = x[j];
    }
    _mm256_store_ps(bg, grad8(_mm256_load_ps(bg), _mm256_load_ps(bx)));
    for (int64_t j = i; j < n; ++j) dx[j] = bg[j - i];
  }
}

namespace {
template <bool Sq>
inline __m256 acc8(__m256 a, __m256 v) {
  return Sq ? _mm256_fmadd_ps(v, v, a) : _mm256_add_ps(a, v);
}

// The sum of n floats (of their squares with Sq): float lanes over blocks, blocks added in
// double.
template <bool Sq>
double sum_f32(const float* p, int64_t n) {
  constexpr int64_t kBlock = 4096;
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = b + kBlock < n ? b + kBlock : n;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
           a3 = _mm256_setzero_ps();
    int64_t i = b;
    for (; i + 32 <= e; i += 32) {
      a0 = acc8<Sq>(a0, _mm256_loadu_ps(p + i));
      a1 = acc8<Sq>(a1, _mm256_loadu_ps(p + i + 8));
      a2 = acc8<Sq>(a2, _mm256_loadu_ps(p + i + 16));
      a3 = acc8<Sq>(a3, _mm256_loadu_ps(p + i + 24));
    }
    for (; i + 8 <= e; i += 8) a0 = acc8<Sq>(a0, _mm256_loadu_ps(p + i));
    const __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, s);
    float t = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
              ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; i < e; ++i) t += Sq ? p[i] * p[i] : p[i];
    total += t;
  }
  return total;
}
}  // namespace

double sum(const float* p, int64_t n) { return sum_f32<false>(p, n); }
double sum_squares(const float* p, int64_t n) { return sum_f32<true>(p, n); }

namespace {
// The sums (of squares with Sq) of K runs of n (< kShortRun) floats side by side, two chains of
// eight float lanes per run: the per-run costs (loop set-up, the horizontal sum) shared and the
// adds' latency covered by eight chains in flight.
template <bool Sq, int K>
void sum_side_by_side(const float* p, int64_t n, double* out) {
  __m256 a[K][2];
  for (int j = 0; j < K; ++j) a[j][0] = a[j][1] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < K; ++j) {
      a[j][0] = acc8<Sq>(a[j][0], _mm256_loadu_ps(p + j * n + i));
      a[j][1] = acc8<Sq>(a[j][1], _mm256_loadu_ps(p + j * n + i + 8));
    }
  if (i + 8 <= n) {
    for (int j = 0; j < K; ++j) a[j][0] = acc8<Sq>(a[j][0], _mm256_loadu_ps(p + j * n + i));
    i += 8;
  }
  for (int j = 0; j < K; ++j) {
    alignas(32) float l[8];
    _mm256_store_ps(l, _mm256_add_ps(a[j][0], a[j][1]));
    float t = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    for (int64_t k = i; k < n; ++k) t += Sq ? p[j * n + k] * p[j * n + k] : p[j * n + k];
    out[j] = t;
  }
}

// The largest (smallest) of K runs of n >= 1 floats side by side, one chain per run (a max has
// a short latency). NaNs are noted on the way in one mask for all K runs (vmaxps drops them);
// when it is set, each run's first NaN is looked up at the end.
template <bool kMax, int K>
void max_side_by_side(const float* p, int64_t n, float* out) {
  __m256 a[K];
  __m256 nan = _mm256_setzero_ps();
  for (int j = 0; j < K; ++j) a[j] = _mm256_set1_ps(p[j * n]);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < K; ++j) {
      const __m256 v = _mm256_loadu_ps(p + j * n + i);
      a[j] = kMax ? _mm256_max_ps(a[j], v) : _mm256_min_ps(a[j], v);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
  const bool any_nan = _mm256_movemask_ps(nan) != 0;
  for (int j = 0; j < K; ++j) {
    const float* q = p + j * n;
    alignas(32) float l[8];
    _mm256_store_ps(l, a[j]);
    float m = l[0];
    for (int t = 1; t < 8; ++t) m = kMax ? std::max(m, l[t]) : std::min(m, l[t]);
    int64_t k = any_nan ? 0 : i;  // with a NaN somewhere, the whole run is looked at
    for (; k < n; ++k) {
      if (q[k] != q[k]) {
        m = q[k];
        break;
      }
      if (k >= i) m = kMax ? std::max(m, q[k]) : std::min(m, q[k]);
    }
    out[j] = m;
  }
}

template <bool Sq>
void sum_runs_impl(const float* p, int64_t runs, int64_t n, double* out) {
  int64_t r = 0;
  for (; r + 4 <= runs; r += 4) sum_side_by_side<Sq, 4>(p + r * n, n, out + r);
  for (; r < runs; ++r) sum_side_by_side<Sq, 1>(p + r * n, n, out + r);
}

template <bool kMax>
void max_runs_impl(const float* p, int64_t runs, int64_t n, float* out) {
  int64_t r = 0;
  for (; r + 4 <= runs; r += 4) max_side_by_side<kMax, 4>(p + r * n, n, out + r);
  for (; r < runs; ++r) max_side_by_side<kMax, 1>(p + r * n, n, out + r);
}
}  // namespace

void sum_runs(const float* p, int64_t runs, int64_t n, double* out, bool squares) {
  squares ? sum_runs_impl<true>(p, runs, n, out) : sum_runs_impl<false>(p, runs, n, out);
}

void max_runs(const float* p, int64_t runs, int64_t n, float* out, bool is_max) {
  is_max ? max_runs_impl<true>(p, runs, n, out) : max_runs_impl<false>(p, runs, n, out);
}

namespace {
inline __m256i load32(const char* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline void store32(char* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
// 128 bytes: the four loads ahead of the four stores.
inline void move128(char* dst, const char* src) {
  const __m256i a = load32(src), b = load32(src + 32), c = load32(src + 64), d = load32(src + 96);
  store32(dst, a);
  store32(dst + 32, b);
  store32(dst + 64, c);
  store32(dst + 96, d);
}
}  // namespace

void copy_rows(char* dst, const char* src, int64_t rows, int64_t bytes, int64_t src_step) {
  for (int64_t r = 0; r < rows; ++r, dst += bytes, src += src_step) {
    int64_t k = 0;
    for (; k + 128 <= bytes; k += 128) move128(dst + k, src + k);
    for (; k + 32 <= bytes; k += 32) store32(dst + k, load32(src + k));
    if (k < bytes) store32(dst + bytes - 32, load32(src + bytes - 32));
  }
}

void copy_backward(char* dst, const char* src, int64_t n) {
  while (n >= 128) {
    n -= 128;
    move128(dst + n, src + n);
  }
  while (n >= 32) {
    n -= 32;
    store32(dst + n, load32(src + n));
  }
  std::memcpy(dst, src, n);
}

}  // namespace oneflow::cpu::avx2
