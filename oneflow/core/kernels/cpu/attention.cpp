// CPU kernels of Attention and AttentionGrad (ops/attention_primitives.h). The per-item bodies
// are in attention_impl.h, built here for the baseline tier (any floating type) and in
// vec/attention_avx2.cpp for AVX2 + FMA (float32). Work is split between threads by batch item
// and block of query rows (forward) or by batch item (backward: the keys' gradients of one item
// accumulate over its query rows).
#include <cmath>
#include <vector>

#include "oneflow/core/kernels/cpu/attention_impl.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/attention_primitives.h"

namespace oneflow {

namespace {

struct PortableOps {
  template <typename T>
  static void gemm(int64_t m, int64_t n, int64_t K, T alpha, const T* A, int64_t ars, int64_t aks,
                   const T* B, int64_t ldb, T* C, int64_t ldc, bool accumulate) {
    cpu::attention_gemm_loops(m, n, K, alpha, A, ars, aks, B, ldb, C, ldc, accumulate);
  }
  template <typename T>
  static void transpose(const T* k, int64_t ld, int64_t n, int64_t S, int64_t E, T* kt) {
    cpu::attention_transpose_loops(k, ld, n, S, E, kt);
  }
  template <typename T>
  static T row_max(const T* x, int64_t n) {
    return cpu::attention_row_max_loops(x, n);
  }
  template <typename T>
  static T exp_shift_sum(T* x, int64_t n, T shift) {
    T sum = T(0);
    for (int64_t j = 0; j < n; ++j) sum += (x[j] = std::exp(x[j] - shift));
    return sum;
  }
};

// The element offset of every batch item of t (its dims before the last two).
std::vector<int64_t> batch_offsets(const Tensor& t) {
  const int64_t nb = t->ndim() - 2;
  int64_t count = 1;
  for (int64_t d = 0; d < nb; ++d) count *= t->shape()[d];
  std::vector<int64_t> off(count);
  for (int64_t b = 0; b < count; ++b) {
    int64_t rem = b, o = 0;
    for (int64_t d = nb - 1; d >= 0; --d) {
      o += rem % t->shape()[d] * t->strides()[d];
      rem /= t->shape()[d];
    }
    off[b] = o;
  }
  return off;
}

int64_t rows_of(const Tensor& t) { return t->shape()[t->ndim() - 2]; }
int64_t row_stride(const Tensor& t) { return t->strides()[t->ndim() - 2]; }

constexpr int64_t kRowBlock = 64;  // query rows per forward task

template <typename T>
void forward(const TensorList& in, const TensorList& out, const Attrs& attrs) {
  const Tensor &q = in[0], &k = in[1], &v = in[2];
  const std::vector<int64_t> qo = batch_offsets(q), ko = batch_offsets(k), vo = batch_offsets(v);
  const int64_t items = static_cast<int64_t>(qo.size());
  const int64_t L = rows_of(q), S = rows_of(k), E = q->shape().back(), Ev = v->shape().back();
  cpu::AttentionItem<T> base{q->data_as<T>(),
                             k->data_as<T>(),
                             v->data_as<T>(),
                             out[0]->data_as<T>(),
                             out[1]->data_as<T>(),
                             L,
                             S,
                             E,
                             Ev,
                             row_stride(q),
                             row_stride(k),
                             row_stride(v),
                             static_cast<T>(attrs.get<double>("scale")),
                             attrs.get<bool>("causal")};
  const int64_t blocks = (L + kRowBlock - 1) / kRowBlock;
  const bool avx2 = std::is_same_v<T, float> && cpu::avx2::has_avx2();
  auto region = [&] {
    std::vector<T> work(cpu::attention_forward_work(S, E));
#pragma omp for schedule(static)
    for (int64_t t = 0; t < items * blocks; ++t) {
      const int64_t b = t / blocks, i0 = t % blocks * kRowBlock;
      const int64_t i1 = std::min(L, i0 + kRowBlock);
      cpu::AttentionItem<T> a = base;
      a.q += qo[b];
      a.k += ko[b];
      a.v += vo[b];
      a.o += b * L * Ev;
      a.lse += b * L;
      if constexpr (std::is_same_v<T, float>)
        if (avx2) {
          cpu::avx2::attention_forward_f32(a, i0, i1, work.data());
          continue;
        }
      cpu::AttentionKernels<T, PortableOps>::forward(a, i0, i1, work.data());
    }
  };
  OF_OMP_PARALLEL_IF(items * L * S * (E + Ev) > cpu::kParallelGrain, , region);
}

template <typename T>
void backward(const TensorList& in, const TensorList& out, const Attrs& attrs) {
  const Tensor &q = in[0], &k = in[1], &v = in[2], &o = in[3], &lse = in[4], &dout = in[5];
  const std::vector<int64_t> qo = batch_offsets(q), ko = batch_offsets(k), vo = batch_offsets(v);
  const std::vector<int64_t> oo = batch_offsets(o), dof = batch_offsets(dout);
  const int64_t items = static_cast<int64_t>(qo.size());
  const int64_t L = rows_of(q), S = rows_of(k), E = q->shape().back(), Ev = v->shape().back();
  cpu::AttentionGradItem<T> base{q->data_as<T>(),
                                 k->data_as<T>(),
                                 v->data_as<T>(),
                                 o->data_as<T>(),
                                 lse->data_as<T>(),
                                 dout->data_as<T>(),
                                 out[0]->data_as<T>(),
                                 out[1]->data_as<T>(),
                                 out[2]->data_as<T>(),
                                 L,
                                 S,
                                 E,
                                 Ev,
                                 row_stride(q),
                                 row_stride(k),
                                 row_stride(v),
                                 row_stride(o),
                                 row_stride(dout),
                                 static_cast<T>(attrs.get<double>("scale")),
                                 attrs.get<bool>("causal")};
  const bool avx2 = std::is_same_v<T, float> && cpu::avx2::has_avx2();
  auto region = [&] {
    std::vector<T> work(cpu::attention_backward_work(S, E, Ev));
#pragma omp for schedule(static)
    for (int64_t b = 0; b < items; ++b) {
      cpu::AttentionGradItem<T> g = base;
      g.q += qo[b];
      g.k += ko[b];
      g.v += vo[b];
      g.o += oo[b];
      g.lse += b * L;  // lse is contiguous (an output of the forward)
      g.dout += dof[b];
      g.dq += b * L * E;
      g.dk += b * S * E;
      g.dv += b * S * Ev;
      if constexpr (std::is_same_v<T, float>)
        if (avx2) {
          cpu::avx2::attention_backward_f32(g, work.data());
          continue;
        }
      cpu::AttentionKernels<T, PortableOps>::backward(g, work.data());
    }
  };
  OF_OMP_PARALLEL_IF(items * L * S * (E + Ev) > cpu::kParallelGrain, , region);
}

}  // namespace

void Attention::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (in[0]->dtype() == DType::kFloat32)
    forward<float>(in, out, attrs);
  else
    forward<double>(in, out, attrs);
}

void AttentionGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  if (in[0]->dtype() == DType::kFloat32)
    backward<float>(in, out, attrs);
  else
    backward<double>(in, out, attrs);
}

}  // namespace oneflow
