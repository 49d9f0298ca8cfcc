// The fused attention kernels (attention_impl.h) built for AVX2 + FMA: this file is compiled with
// -mavx2 -mfma. The block products run on a register tile of 4 rows x 16 columns (8 float
// accumulators; per step two row loads of B, four broadcasts of A, eight fused multiply-adds),
// and the exponentials use the own 8-lane exp of exp_avx2.h. Only called after the runtime check
// (avx2.h's has_avx2()).
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
  for (int r = 0; r < R; ++r)
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
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc);
    float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; j < n; ++j) sum += (x[j] = std::exp(x[j] - shift));
    return sum;
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
