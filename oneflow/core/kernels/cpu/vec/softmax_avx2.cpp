// The float32 softmax family's rows and columns (softmax, log_softmax, logsumexp and their
// gradients; declared in avx2.h), built with -mavx2 -mfma like vec/avx2.cpp.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/kernels/cpu/vec/exp_avx2.h"

namespace oneflow::cpu::avx2 {

namespace {

float hsum(__m256 v) {
  alignas(32) float l[8];
  _mm256_store_ps(l, v);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

float hmax(__m256 v) {
  alignas(32) float l[8];
  _mm256_store_ps(l, v);
  float m = l[0];
  for (int j = 1; j < 8; ++j) m = l[j] > m ? l[j] : m;
  return m;
}

// Masks for the tail of a row: lanes [0, r) set.
__m256i tail_mask(int64_t r) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(r)), idx);
}

}  // namespace

namespace {

// The max of x[0, n) (n >= 1; 0 for a row of -inf) in *max_out and the sum of exp(x - max),
// which also go to y when y is not null. A NaN anywhere makes the row NaN through exp.
float exp_sum_row(const float* x, float* y, int64_t n, float* max_out) {
  __m256 vm = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + i));
  float m = hmax(vm);
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  if (m == -INFINITY) m = 0.0f;
  *max_out = m;
  const __m256 shift = _mm256_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift));
    if (y) _mm256_storeu_ps(y + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  if (i < n) {
    const __m256i mask = tail_mask(n - i);
    const __m256 e =
        _mm256_and_ps(exp_nonpositive(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), shift)),
                      _mm256_castsi256_ps(mask));
    if (y) _mm256_maskstore_ps(y + i, mask, e);
    acc = _mm256_add_ps(acc, e);
  }
  return hsum(acc);
}

}  // namespace

void softmax_row(const float* x, float* y, int64_t n, bool log) {
  if (n == 0) return;
  float m;
  // softmax keeps the exponentials in y
  const float total = exp_sum_row(x, log ? nullptr : y, n, &m);
  int64_t i = 0;
  if (log) {
    // (x - max) - log(sum): rounding max + log(sum) first would cost an ulp of max.
    const float lse = std::log(total);
    const __m256 shift = _mm256_set1_ps(m), vl = _mm256_set1_ps(lse);
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(y + i, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift), vl));
    for (; i < n; ++i) y[i] = (x[i] - m) - lse;
  } else {
    const __m256 inv = _mm256_set1_ps(1.0f / total);
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
    for (; i < n; ++i) y[i] = y[i] * (1.0f / total);
  }
}

void logsumexp_row(const float* x, int64_t n, float* m, float* ls) {
  if (n == 0) {
    *m = 0.0f, *ls = -INFINITY;
    return;
  }
  *ls = std::log(exp_sum_row(x, nullptr, n, m));
}

void scaled_softmax_row(const float* x, float* dx, int64_t n, float m, float ls, float s) {
  const __m256 shift = _mm256_set1_ps(m), vl = _mm256_set1_ps(ls), vs = _mm256_set1_ps(s);
  auto at = [&](__m256 v) {
    return _mm256_mul_ps(exp_nonpositive(_mm256_sub_ps(_mm256_sub_ps(v, shift), vl)), vs);
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dx + i, at(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mask = tail_mask(n - i);
    _mm256_maskstore_ps(dx + i, mask, at(_mm256_maskload_ps(x + i, mask)));
  }
}

void softmax_columns(const float* x, float* y, int64_t n, int64_t stride, int64_t w, bool log) {
  // The w columns' statistics live in m and s (L1); each pass walks the n rows' contiguous runs.
  // A NaN makes its column NaN through exp (x - m), as in softmax_row.
  alignas(32) float m[kSoftmaxColumns], s[kSoftmaxColumns];
  const int64_t w8 = w / 8 * 8;
  for (int64_t k = 0; k < w; ++k) m[k] = -INFINITY, s[k] = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float* r = x + i * stride;
    for (int64_t k = 0; k < w8; k += 8)
      _mm256_store_ps(m + k, _mm256_max_ps(_mm256_load_ps(m + k), _mm256_loadu_ps(r + k)));
    for (int64_t k = w8; k < w; ++k) m[k] = r[k] > m[k] ? r[k] : m[k];
  }
  for (int64_t k = 0; k < w; ++k)
    if (m[k] == -INFINITY) m[k] = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float* r = x + i * stride;
    float* o = y + i * stride;
    for (int64_t k = 0; k < w8; k += 8) {
      const __m256 e =
          exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(r + k), _mm256_load_ps(m + k)));
      if (!log) _mm256_storeu_ps(o + k, e);
      _mm256_store_ps(s + k, _mm256_add_ps(_mm256_load_ps(s + k), e));
    }
    for (int64_t k = w8; k < w; ++k) {
      const float e = std::exp(r[k] - m[k]);
      if (!log) o[k] = e;
      s[k] += e;
    }
  }
  if (log) {
    // (x - max) - log(sum), as softmax_row.
    for (int64_t k = 0; k < w; ++k) s[k] = std::log(s[k]);
    for (int64_t i = 0; i < n; ++i) {
      const float* r = x + i * stride;
      float* o = y + i * stride;
      for (int64_t k = 0; k < w8; k += 8)
        _mm256_storeu_ps(o + k,
                         _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(r + k), _mm256_load_ps(m + k)),
                                       _mm256_load_ps(s + k)));
      for (int64_t k = w8; k < w; ++k) o[k] = (r[k] - m[k]) - s[k];
    }
  } else {
    for (int64_t k = 0; k < w; ++k) s[k] = 1.0f / s[k];
    for (int64_t i = 0; i < n; ++i) {
      float* o = y + i * stride;
      for (int64_t k = 0; k < w8; k += 8)
        _mm256_storeu_ps(o + k, _mm256_mul_ps(_mm256_loadu_ps(o + k), _mm256_load_ps(s + k)));
      for (int64_t k = w8; k < w; ++k) o[k] *= s[k];
    }
  }
}

void softmax_grad_columns(const float* dy, const float* y, float* dx, int64_t n, int64_t stride,
                          int64_t w, bool log) {
  // Pass 1: the w column sums of dy (log) or dy * y in L1; pass 2 writes dx row by row, as
  // softmax_grad_row does for one row.
  alignas(32) float s[kSoftmaxColumns];
  const int64_t w8 = w / 8 * 8;
  for (int64_t k = 0; k < w; ++k) s[k] = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float* g = dy + i * stride;
    const float* v = y + i * stride;
    for (int64_t k = 0; k < w8; k += 8) {
      const __m256 gk = _mm256_loadu_ps(g + k), sk = _mm256_load_ps(s + k);
      _mm256_store_ps(
          s + k, log ? _mm256_add_ps(sk, gk) : _mm256_fmadd_ps(gk, _mm256_loadu_ps(v + k), sk));
    }
    for (int64_t k = w8; k < w; ++k) s[k] += log ? g[k] : g[k] * v[k];
  }
  for (int64_t i = 0; i < n; ++i) {
    const float* g = dy + i * stride;
    const float* v = y + i * stride;
    float* d = dx + i * stride;
    for (int64_t k = 0; k < w8; k += 8) {
      const __m256 gk = _mm256_loadu_ps(g + k), vk = _mm256_loadu_ps(v + k);
      const __m256 sk = _mm256_load_ps(s + k);
      _mm256_storeu_ps(d + k, log ? _mm256_fnmadd_ps(exp_nonpositive(vk), sk, gk)
                                  : _mm256_mul_ps(vk, _mm256_sub_ps(gk, sk)));
    }
    for (int64_t k = w8; k < w; ++k)
      d[k] = log ? g[k] - std::exp(v[k]) * s[k] : v[k] * (g[k] - s[k]);
  }
}

void softmax_grad_row(const float* dy, const float* y, float* dx, int64_t n, bool log) {
  // log: dx = dy - exp(y) * sum(dy);  softmax: dx = y * (dy - sum(dy * y)).
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(dy + i);
    acc = log ? _mm256_add_ps(acc, g) : _mm256_fmadd_ps(g, _mm256_loadu_ps(y + i), acc);
  }
  float s = hsum(acc);
  for (; i < n; ++i) s += log ? dy[i] : dy[i] * y[i];
  const __m256 vs = _mm256_set1_ps(s);
  i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(dy + i), v = _mm256_loadu_ps(y + i);
    _mm256_storeu_ps(dx + i, log ? _mm256_fnmadd_ps(exp_nonpositive(v), vs, g)
                                 : _mm256_mul_ps(v, _mm256_sub_ps(g, vs)));
  }
  for (; i < n; ++i) dx[i] = log ? dy[i] - std::exp(y[i]) * s : y[i] * (dy[i] - s);
}

}  // namespace oneflow::cpu::avx2
