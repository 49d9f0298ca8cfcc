// CPU kernels of the fused losses: the pointwise losses of a pair (PairLoss, PairLossGrad:
// mse, smooth_l1, huber) and the negative log-likelihood of class targets (NllLoss, NllLossGrad:
// one serial pass over the targets). The pair forward sums f(a - b) in the operands' type over
// blocks of 1024 (16 lanes each), the blocks in double, each thread a contiguous range and the
// ranges added in order (the result depends only on the thread count). smooth_l1 and huber take
// f from the activation family's vector chunk kernels (the elementwise loss's own rule).
#include <omp.h>

#include <algorithm>
#include <vector>

#include "oneflow/core/kernels/cpu/activation_chunks.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {

// sum(v(i)) over i < n, v(i) of type T: blocks of 1024 summed in 16 lanes of T, the blocks in
// double.
template <typename T, typename Fn>
double lane_sum(int64_t n, Fn v) {
  constexpr int64_t kBlock = 1024, kLanes = 16;
  double total = 0;
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t e = std::min(n, s + kBlock);
    T lane[kLanes] = {};
    int64_t i = s;
    for (; i + kLanes <= e; i += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lane[l] += v(i + l);
    T t = 0;
    for (int64_t l = 0; l < kLanes; ++l) t += lane[l];
    for (; i < e; ++i) t += v(i);
    total += t;
  }
  return total;
}

// The chunk kernels of the activation K (vec/ builds when the CPU has AVX2, else the baseline).
template <ActFn K, typename C>
cpu::avx2::ActKernel<C> act_kernel() {
  if (cpu::avx2::has_avx2()) return cpu::avx2::activation_kernel<C>(K);
  return &cpu::act_chunk<K, C>;
}
template <ActFn K, typename C>
cpu::avx2::ActGradKernel<C> act_grad_kernel() {
  if (cpu::avx2::has_avx2()) return cpu::avx2::activation_grad_kernel<C>(K);
  return &cpu::grad_chunk<K, C>;
}

// sum(f(a - b)) for f the activation K: a - b chunk by chunk into a buffer, f by the vector
// chunk kernel (the elementwise loss's own rule), the chunk summed as pair_sum does.
template <ActFn K, typename T>
double act_pair_sum(const T* a, const T* b, int64_t n, const ActParams<T>& p) {
  static_assert(!cpu::uses_scratch<K>(), "blocks longer than kChunk");
  static const cpu::avx2::ActKernel<T> kernel = act_kernel<K, T>();
  constexpr int64_t kBlock = 2048;
  T d[kBlock], y[kBlock];
  double total = 0;
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    for (int64_t i = 0; i < m; ++i) d[i] = a[s + i] - b[s + i];
    kernel(d, y, m, p, nullptr, nullptr);
    total += lane_sum<T>(m, [&](int64_t i) { return y[i]; });
  }
  return total;
}

template <ActFn K, typename T>
void act_pair_grad(T g, const T* a, const T* b, T* da, int64_t n, const ActParams<T>& p) {
  static const cpu::avx2::ActGradKernel<T> kernel = act_grad_kernel<K, T>();
  using cpu::kChunk;
#pragma omp parallel for schedule(static) if (n > cpu::kParallelGrain)
  for (int64_t s = 0; s < n; s += kChunk) {
    const int64_t m = std::min(kChunk, n - s);
    T gs[kChunk], d[kChunk], t[kChunk], u[kChunk];
    std::fill_n(gs, m, g);
    for (int64_t i = 0; i < m; ++i) d[i] = a[s + i] - b[s + i];
    kernel(gs, d, da + s, m, p, t, u);
  }
}

}  // namespace

void PairLoss::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const double scale = attrs.get<double>("scale");
  const int64_t act = attrs.get<int64_t>("act");
  const int64_t n = in[0]->numel();
  float_types(name(), out[0]->dtype(), [&]<typename T>() {
    const T* a = in[0]->data_as<T>();
    const T* b = in[1]->data_as<T>();
    const ActParams<T> p{static_cast<T>(attrs.get<double>("p")), T(0), T(0)};
    const int threads = n > cpu::kParallelGrain ? omp_get_max_threads() : 1;
    std::vector<double> part(threads, 0.0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int t = 0; t < threads; ++t) {
      const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
      if (act < 0)
        part[t] = lane_sum<T>(hi - lo, [x = a + lo, y = b + lo](int64_t i) {
          const T d = x[i] - y[i];
          return d * d;
        });
      else if (ActFn(act) == ActFn::kSmoothL1)
        part[t] = act_pair_sum<ActFn::kSmoothL1>(a + lo, b + lo, hi - lo, p);
      else
        part[t] = act_pair_sum<ActFn::kHuber>(a + lo, b + lo, hi - lo, p);
    }
    double total = 0;
    for (double v : part) total += v;
    *out[0]->data_as<T>() = static_cast<T>(total * scale);
  });
}

void PairLossGrad::compute_cpu(const TensorList& in, const TensorList& out,
                               const Attrs& attrs) const {
  const int64_t n = out[0]->numel();
  const int64_t act = attrs.get<int64_t>("act");
  float_types(name(), out[0]->dtype(), [&]<typename T>() {
    const T g = static_cast<T>(attrs.get<double>("scale") * *in[0]->data_as<T>());
    const T* a = in[1]->data_as<T>();
    const T* b = in[2]->data_as<T>();
    T* da = out[0]->data_as<T>();
    const ActParams<T> p{static_cast<T>(attrs.get<double>("p")), T(0), T(0)};
    if (act < 0) {
      const T k = 2 * g;
#pragma omp parallel for schedule(static) if (n > cpu::kParallelGrain)
      for (int64_t i = 0; i < n; ++i) da[i] = k * (a[i] - b[i]);
    } else if (ActFn(act) == ActFn::kSmoothL1) {
      act_pair_grad<ActFn::kSmoothL1>(g, a, b, da, n, p);
    } else {
      act_pair_grad<ActFn::kHuber>(g, a, b, da, n, p);
    }
  });
}

namespace {

// The loss's layout: logp (N, C, S) with S the product of the trailing dims; (C,) is N = S = 1.
struct NllLayout {
  int64_t n, c, s;
  explicit NllLayout(const Shape& shape) {
    if (shape.size() == 1) {
      n = 1, c = shape[0], s = 1;
      return;
    }
    n = shape[0], c = shape[1], s = 1;
    for (size_t d = 2; d < shape.size(); ++d) s *= shape[d];
  }
};

// Calls f(class, offset of that class's logp element) for each counted target (not
// ignore_index); an out-of-range target raises IndexError naming nll_loss.
template <typename F>
void for_each_target(const NllLayout& l, const int64_t* t, int64_t ignore, F f) {
  for (int64_t i = 0; i < l.n; ++i)
    for (int64_t j = 0; j < l.s; ++j) {
      const int64_t k = t[i * l.s + j];
      if (k == ignore) continue;
      if (k < 0 || k >= l.c)
        throw_error<IndexError>("nll_loss", "target ", k,
                                " is out of bounds (expected values in [0, ", l.c, "))");
      f(k, (i * l.c + k) * l.s + j);
    }
}

}  // namespace

void NllLoss::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const NllLayout l(in[0]->shape());
  const int64_t ignore = attrs.get<int64_t>("ignore_index");
  const bool mean = attrs.get<bool>("mean");
  const int64_t* t = in[1]->data_as<int64_t>();
  float_types(name(), in[0]->dtype(), [&]<typename T>() {
    const T* x = in[0]->data_as<T>();
    const T* w = in[2]->data_as<T>();
    double total = 0, weight = 0;
    for_each_target(l, t, ignore, [&](int64_t k, int64_t at) {
      total -= double(w[k]) * double(x[at]);
      weight += double(w[k]);
    });
    *out[0]->data_as<T>() = T(mean ? total / weight : total);
    *out[1]->data_as<T>() = T(weight);
  });
}

void NllLossGrad::compute_cpu(const TensorList& in, const TensorList& out,
                              const Attrs& attrs) const {
  const NllLayout l(out[0]->shape());
  const int64_t ignore = attrs.get<int64_t>("ignore_index");
  const bool mean = attrs.get<bool>("mean");
  const int64_t* t = in[1]->data_as<int64_t>();
  float_types(name(), out[0]->dtype(), [&]<typename T>() {
    const T* w = in[2]->data_as<T>();
    const double scale =
        -double(*in[0]->data_as<T>()) / (mean ? double(*in[3]->data_as<T>()) : 1.0);
    T* dx = out[0]->data_as<T>();
    std::fill_n(dx, out[0]->numel(), T(0));
    for_each_target(l, t, ignore, [&](int64_t k, int64_t at) { dx[at] = T(double(w[k]) * scale); });
  });
}

}  // namespace oneflow
