// The fused attention kernels (attention_impl.h) built for AVX2 + FMA: this file is compiled with
// -mavx2 -mfma. The block products run on a register tile of 4 rows x 16 columns (8 float
// accumulators; per step two row loads of B, four broadcasts of A, eight fused multiply-adds),
// K and V are transposed in 8 x 8 register blocks, and the exponentials use the own 8-lane exp
// of exp_avx2.h. Only called after the runtime check (avx2.h's has_avx2()).
#include <immintrin.h>

#include <cmath>

#include "oneflow/core/kernels/cpu/attention_impl.h"
#include "oneflow/core/kernels/cpu/vec/exp_avx2.h"

namespace oneflow::cpu::avx2 {

namespace {

__m256i lanes_below(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Rows r[0..8) become the columns.
inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// C (R rows x 8 W columns; the last 8 columns only where `mask` is set when Masked) as in
// attention_gemm_loops.
template <int R, int W, bool Masked>
void tile(int64_t K, float alpha, const float* A, int64_t ars, int64_t aks, const float* B,
          int64_t ldb, float* C, int64_t ldc, bool accumulate, __m256i mask) {
  auto load = [&](const float* p, int w) {
    return Masked && w == W - 1 ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
  };
  __m256 c[R][W];
  for (int r = 0; r < R; ++r)
    for (int w = 0; w < W; ++w) c[r][w] = _mm256_setzero_ps();
  for (int64_t kk = 0; kk < K; ++kk) {
    __m256 b[W];
    for (int w = 0; w < W; ++w) b[w] = load(B + kk * ldb + 8 * w, w);
    for (int r = 0; r < R; ++r) {
      const __m256 a = _mm256_broadcast_ss(A + r * ars + kk * aks);
      for (int w = 0; w < W; ++w) c[r][w] = _mm256_fmadd_ps(a, b[w], c[r][w]);
    }
  }
  const __m256 va = _mm256_set1_ps(alpha);
  // Unrolled (GCC unrolls the loops above by itself) so that every index of `c` is a constant
  // and `c` lives in registers: with a loop here GCC 12 kept `c` in memory and stored seven of
  // the eight accumulators on every step of kk.
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int w = 0; w < W; ++w) {
      float* dst = C + r * ldc + 8 * w;
      __m256 v = _mm256_mul_ps(c[r][w], va);
      if (accumulate) v = _mm256_add_ps(v, load(dst, w));
      if (Masked && w == W - 1)
        _mm256_maskstore_ps(dst, mask, v);
      else
        _mm256_storeu_ps(dst, v);
    }
}

template <int R>
void tile_rows(int64_t n, int64_t K, float alpha, const float* A, int64_t ars, int64_t aks,
               const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  const __m256i all = _mm256_set1_epi32(-1);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    tile<R, 2, false>(K, alpha, A, ars, aks, B + j, ldb, C + j, ldc, accumulate, all);
  for (; j + 8 <= n; j += 8)
    tile<R, 1, false>(K, alpha, A, ars, aks, B + j, ldb, C + j, ldc, accumulate, all);
  if (j < n)
    tile<R, 1, true>(K, alpha, A, ars, aks, B + j, ldb, C + j, ldc, accumulate, lanes_below(n - j));
}

struct Avx2Ops {
  static void gemm(int64_t m, int64_t n, int64_t K, float alpha, const float* A, int64_t ars,
                   int64_t aks, const float* B, int64_t ldb, float* C, int64_t ldc,
                   bool accumulate) {
    int64_t i = 0;
    for (; i + 4 <= m; i += 4)
      tile_rows<4>(n, K, alpha, A + i * ars, ars, aks, B, ldb, C + i * ldc, ldc, accumulate);
    const float* a = A + i * ars;
    float* c = C + i * ldc;
    switch (m - i) {
      case 3:
        tile_rows<3>(n, K, alpha, a, ars, aks, B, ldb, c, ldc, accumulate);
        break;
      case 2:
        tile_rows<2>(n, K, alpha, a, ars, aks, B, ldb, c, ldc, accumulate);
        break;
      case 1:
        tile_rows<1>(n, K, alpha, a, ars, aks, B, ldb, c, ldc, accumulate);
        break;
      default:
        break;
    }
  }

  // kt[e * S + j] = k[j * ld + e] for j < n, e < E: 8 x 8 blocks transposed in registers.
  static void transpose(const float* k, int64_t ld, int64_t n, int64_t S, int64_t E, float* kt) {
    const int64_t n8 = n / 8 * 8, e8 = E / 8 * 8;
    for (int64_t j = 0; j < n8; j += 8) {
      for (int64_t e = 0; e < e8; e += 8) {
        __m256 r[8];
        for (int t = 0; t < 8; ++t) r[t] = _mm256_loadu_ps(k + (j + t) * ld + e);
        transpose8(r);
        for (int t = 0; t < 8; ++t) _mm256_storeu_ps(kt + (e + t) * S + j, r[t]);
      }
      for (int64_t e = e8; e < E; ++e)
        for (int t = 0; t < 8; ++t) kt[e * S + j + t] = k[(j + t) * ld + e];
    }
    attention_transpose_loops(k + n8 * ld, ld, n - n8, S, E, kt + n8);
  }

  static float row_max(const float* x, int64_t n) {
    __m256 m = _mm256_set1_ps(-INFINITY);
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) m = _mm256_max_ps(_mm256_loadu_ps(x + j), m);  // a NaN drops
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m);
    float r = lanes[0];
    for (int t = 1; t < 8; ++t) r = lanes[t] > r ? lanes[t] : r;
    for (; j < n; ++j) r = x[j] > r ? x[j] : r;
    return r;
  }

  // x[j] = exp(x[j] - shift) for j < n (x - shift <= 0 up to rounding); returns their sum.
  static float exp_shift_sum(float* x, int64_t n, float shift) {
    const __m256 vs = _mm256_set1_ps(shift);
    __m256 acc = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
      const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(x + j), vs));
      _mm256_storeu_ps(x + j, e);
      acc = _mm256_add_ps(acc, e);
    }
    if (j < n) {
      const __m256i mask = lanes_below(n - j);
      const __m256 e =
          _mm256_and_ps(exp_nonpositive(_mm256_sub_ps(_mm256_maskload_ps(x + j, mask), vs)),
                        _mm256_castsi256_ps(mask));
      _mm256_maskstore_ps(x + j, mask, e);
      acc = _mm256_add_ps(acc, e);
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc);
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
           ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  }
};

using Kernels = AttentionKernels<float, Avx2Ops>;

}  // namespace

void attention_forward_f32(const AttentionItem<float>& a, int64_t i0, int64_t i1, float* work) {
  Kernels::forward(a, i0, i1, work);
}

void attention_backward_f32(const AttentionGradItem<float>& g, float* work) {
  Kernels::backward(g, work);
}

}  // namespace oneflow::cpu::avx2
