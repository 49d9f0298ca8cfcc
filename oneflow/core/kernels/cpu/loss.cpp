// CPU kernels of the fused losses: mean squared error (MseLoss, MseLossGrad) and the negative
// log-likelihood of class targets (NllLoss, NllLossGrad: one serial pass over the targets). The
// mse forward sums (a - b)^2 in the operands' type over blocks of 1024 (16 lanes each), the
// blocks in double, each thread a contiguous range and the ranges added in order (the result
// depends only on the thread count).
#include <omp.h>

#include <algorithm>
#include <vector>

#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {

template <typename T>
double squared_diff_sum(const T* a, const T* b, int64_t n) {
  constexpr int64_t kBlock = 1024, kLanes = 16;
  double total = 0;
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t e = std::min(n, s + kBlock);
    T lane[kLanes] = {};
    int64_t i = s;
    for (; i + kLanes <= e; i += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) {
        const T d = a[i + l] - b[i + l];
        lane[l] += d * d;
      }
    T t = 0;
    for (int64_t l = 0; l < kLanes; ++l) t += lane[l];
    for (; i < e; ++i) t += (a[i] - b[i]) * (a[i] - b[i]);
    total += t;
  }
  return total;
}

}  // namespace

void MseLoss::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const double scale = attrs.get<double>("scale");
  const int64_t n = in[0]->numel();
  float_types(name(), out[0]->dtype(), [&]<typename T>() {
    const T* a = in[0]->data_as<T>();
    const T* b = in[1]->data_as<T>();
    const int threads = n > cpu::kParallelGrain ? omp_get_max_threads() : 1;
    std::vector<double> part(threads, 0.0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int t = 0; t < threads; ++t) {
      const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
      part[t] = squared_diff_sum(a + lo, b + lo, hi - lo);
    }
    double total = 0;
    for (double p : part) total += p;
    *out[0]->data_as<T>() = static_cast<T>(total * scale);
  });
}

void MseLossGrad::compute_cpu(const TensorList& in, const TensorList& out,
                              const Attrs& attrs) const {
  const int64_t n = out[0]->numel();
  float_types(name(), out[0]->dtype(), [&]<typename T>() {
    const T k = static_cast<T>(2 * attrs.get<double>("scale") * *in[0]->data_as<T>());
    const T* a = in[1]->data_as<T>();
    const T* b = in[2]->data_as<T>();
    T* da = out[0]->data_as<T>();
#pragma omp parallel for schedule(static) if (n > cpu::kParallelGrain)
    for (int64_t i = 0; i < n; ++i) da[i] = k * (a[i] - b[i]);
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
