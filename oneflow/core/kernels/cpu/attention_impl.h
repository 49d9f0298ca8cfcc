// The bodies of the fused scaled dot-product attention kernels (Attention / AttentionGrad in
// ops/attention_primitives.h), for one batch item. Written once, built twice: by
// kernels/cpu/attention.cpp for the baseline vector tier and by kernels/cpu/vec/attention_avx2.cpp
// with AVX2 + FMA. `Ops` supplies the two things that differ: the multiply-add and the
// exponential of a row.
//
// Per query row i (keys j < n_i, n_i = min(i + 1, S) when causal, the lower-triangular mask of
// PyTorch's is_causal, else S):
//   s_j = scale q_i . k_j,  p_j = exp(s_j - lse_i),  lse_i = log sum_j exp(s_j),
//   o_i = sum_j p_j v_j.
// The backward recomputes p from lse (nothing of size L x S is kept between the two):
//   dv_j += p_j do_i,  ds_j = p_j (do_i . v_j - do_i . o_i),
//   dq_i = scale sum_j ds_j k_j,  dk_j += scale ds_j q_i.
// Both are written as small matrix products over blocks of kBlock query rows (scores of a block,
// P V, dO V^T, dS K, dS^T Q, P^T dO), so `Ops` also supplies the product (a register-tiled one
// in the AVX2 build); with a causal mask a block only looks at the keys its last row sees.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace oneflow::cpu {

// One batch item: row r of q is q + r * ldq (E contiguous values), and so on.
template <typename T>
struct AttentionItem {
  const T *q, *k, *v;
  T *o, *lse;  // o contiguous (rows of Ev values)
  int64_t L, S, E, Ev, ldq, ldk, ldv;
  T scale;
  bool causal;
};

template <typename T>
struct AttentionGradItem {
  const T *q, *k, *v, *o, *lse, *dout;
  T *dq, *dk, *dv;  // dq, dk, dv contiguous (rows of E, E, Ev values)
  int64_t L, S, E, Ev, ldq, ldk, ldv, ldo, lddo;
  T scale;
  bool causal;
};

constexpr int64_t kAttentionBlock = 16;  // query rows per block

// Work buffer sizes (elements) of the two kernels.
inline int64_t attention_forward_work(int64_t S, int64_t E) { return E * S + kAttentionBlock * S; }
inline int64_t attention_backward_work(int64_t S, int64_t E, int64_t Ev) {
  return (E + Ev) * S + 2 * kAttentionBlock * S;
}

// kt[e * S + j] = k[j * ld + e] for j < n, e < E: the baseline transpose.
template <typename T>
void attention_transpose_loops(const T* k, int64_t ld, int64_t n, int64_t S, int64_t E, T* kt) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t e = 0; e < E; ++e) kt[e * S + j] = k[j * ld + e];
}

// The largest of x[0, n) (NaNs skipped: they reach the result through exp), -inf for none.
template <typename T>
T attention_row_max_loops(const T* x, int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

// C[i * ldc + j] = (C if accumulate, else 0) + alpha * sum_kk A[i * ars + kk * aks] *
// B[kk * ldb + j] for i < m, j < n, kk < K: the baseline product (inner loop along B's rows).
template <typename T>
void attention_gemm_loops(int64_t m, int64_t n, int64_t K, T alpha, const T* A, int64_t ars,
                          int64_t aks, const T* B, int64_t ldb, T* C, int64_t ldc,
                          bool accumulate) {
  for (int64_t i = 0; i < m; ++i) {
    T* c = C + i * ldc;
    if (!accumulate) std::fill(c, c + n, T(0));
    for (int64_t kk = 0; kk < K; ++kk) {
      const T a = alpha * A[i * ars + kk * aks];
      const T* b = B + kk * ldb;
      for (int64_t j = 0; j < n; ++j) c[j] += a * b[j];
    }
  }
}

template <typename T, class Ops>
struct AttentionKernels {
  static T dot(const T* a, const T* b, int64_t n) {
    T acc = T(0);
    for (int64_t c = 0; c < n; ++c) acc += a[c] * b[c];
    return acc;
  }

  // Keys seen by query row i.
  static int64_t keys(bool causal, int64_t i, int64_t S) { return causal ? std::min(i + 1, S) : S; }

  // Rows [i0, i1) of o and lse.
  static void forward(const AttentionItem<T>& a, int64_t i0, int64_t i1, T* work) {
    const int64_t S = a.S, E = a.E, Ev = a.Ev;
    T* kt = work;
    T* p = work + E * S;  // kAttentionBlock rows of S scores
    Ops::transpose(a.k, a.ldk, keys(a.causal, i1 - 1, S), S, E, kt);
    for (int64_t b0 = i0; b0 < i1; b0 += kAttentionBlock) {
      const int64_t b1 = std::min(i1, b0 + kAttentionBlock), rows = b1 - b0;
      const int64_t ne = keys(a.causal, b1 - 1, S);  // keys the block's last row sees
      Ops::gemm(rows, ne, E, a.scale, a.q + b0 * a.ldq, a.ldq, 1, kt, S, p, S, false);
      for (int64_t r = 0; r < rows; ++r) {
        T* s = p + r * S;
        const int64_t n = keys(a.causal, b0 + r, S);
        T m = Ops::row_max(s, n);
        if (m == -std::numeric_limits<T>::infinity()) m = T(0);
        const T sum = Ops::exp_shift_sum(s, n, m);  // s[j] = exp(s[j] - m)
        const T inv = T(1) / sum;
        for (int64_t j = 0; j < n; ++j) s[j] *= inv;
        std::fill(s + n, s + ne, T(0));
        a.lse[b0 + r] = m + std::log(sum);
      }
      Ops::gemm(rows, Ev, ne, T(1), p, S, 1, a.v, a.ldv, a.o + b0 * Ev, Ev, false);
    }
  }

  // The whole item: dq, and dk, dv (zeroed here, then accumulated block by block).
  static void backward(const AttentionGradItem<T>& g, T* work) {
    const int64_t S = g.S, E = g.E, Ev = g.Ev;
    T* kt = work;
    T* vt = kt + E * S;
    T* p = vt + Ev * S;               // probabilities of a block of query rows
    T* ds = p + kAttentionBlock * S;  // their score gradients
    const int64_t seen = keys(g.causal, g.L - 1, S);
    Ops::transpose(g.k, g.ldk, seen, S, E, kt);
    Ops::transpose(g.v, g.ldv, seen, S, Ev, vt);
    std::fill(g.dk, g.dk + S * E, T(0));
    std::fill(g.dv, g.dv + S * Ev, T(0));
    for (int64_t b0 = 0; b0 < g.L; b0 += kAttentionBlock) {
      const int64_t b1 = std::min(g.L, b0 + kAttentionBlock), rows = b1 - b0;
      const int64_t ne = keys(g.causal, b1 - 1, S);
      const T* q = g.q + b0 * g.ldq;
      const T* dout = g.dout + b0 * g.lddo;
      Ops::gemm(rows, ne, E, g.scale, q, g.ldq, 1, kt, S, p, S, false);
      Ops::gemm(rows, ne, Ev, T(1), dout, g.lddo, 1, vt, S, ds, S, false);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = b0 + r, n = keys(g.causal, i, S);
        T* pr = p + r * S;
        T* dr = ds + r * S;
        Ops::exp_shift_sum(pr, n, g.lse[i]);  // pr[j] = exp(s_j - lse_i)
        const T d = dot(dout + r * g.lddo, g.o + i * g.ldo, Ev);
        for (int64_t j = 0; j < n; ++j) dr[j] = pr[j] * (dr[j] - d) * g.scale;
        std::fill(pr + n, pr + ne, T(0));
        std::fill(dr + n, dr + ne, T(0));
      }
      Ops::gemm(rows, E, ne, T(1), ds, S, 1, g.k, g.ldk, g.dq + b0 * E, E, false);
      Ops::gemm(ne, E, rows, T(1), ds, 1, S, q, g.ldq, g.dk, E, true);
      Ops::gemm(ne, Ev, rows, T(1), p, 1, S, dout, g.lddo, g.dv, Ev, true);
    }
  }
};

// The AVX2 + FMA build of the float32 kernels (kernels/cpu/vec/attention_avx2.cpp).
namespace avx2 {
void attention_forward_f32(const AttentionItem<float>& a, int64_t i0, int64_t i1, float* work);
void attention_backward_f32(const AttentionGradItem<float>& g, float* work);
}  // namespace avx2

}  // namespace oneflow::cpu
