// CPU kernels of the fused losses: the pointwise losses of a pair (PairLoss, PairLossGrad:
// mse, smooth_l1, huber) and the negative log-likelihood of class targets (NllLoss, NllLossGrad:
// one serial pass over the targets). The pair forward sums f(a - b) in the operands' type over
// blocks of 1024 (16 lanes each), the blocks in double, each thread a contiguous range and the
// ranges added in order (the result depends only on the thread count). smooth_l1 and huber take
// f from the activation family's vector chunk kernels (the elementwise loss's own rule).
// NllLoss with logits is cross_entropy: log_softmax of each row inside the loss's pass, and a
// gradient that recomputes softmax from each row's max and log-sum-exp.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "oneflow/core/kernels/cpu/activation_chunks.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
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
  OF_OMP_FOR_IF(
      n > cpu::kParallelGrain, schedule(static), for (int64_t s = 0; s < n; s += kChunk) {
        const int64_t m = std::min(kChunk, n - s);
        T gs[kChunk], d[kChunk], t[kChunk], u[kChunk];
        std::fill_n(gs, m, g);
        for (int64_t i = 0; i < m; ++i) d[i] = a[s + i] - b[s + i];
        kernel(gs, d, da + s, m, p, t, u);
      });
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
    OF_OMP_FOR_IF(
        threads > 1, schedule(static) num_threads(threads), for (int t = 0; t < threads; ++t) {
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
        });
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
      OF_OMP_FOR_IF(n > cpu::kParallelGrain, schedule(static),
                    for (int64_t i = 0; i < n; ++i) da[i] = k * (a[i] - b[i]););
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

bool logits_input(const Attrs& attrs) { return attrs.has("logits") && attrs.get<bool>("logits"); }

// cross_entropy's label smoothing e: (1 - e) of the target's term and e / C of every class's,
// and the sum W of the class weights (the smoothing term's log-sum-exp part is W times it).
struct Smoothing {
  double e = 0, e_c = 0, w_sum = 0;
  template <typename T>
  Smoothing(const Attrs& attrs, const T* w, int64_t c) {
    if (attrs.has("label_smoothing")) e = attrs.get<double>("label_smoothing");
    e_c = c ? e / double(c) : 0.0;
    for (int64_t j = 0; e != 0 && j < c; ++j) w_sum += double(w[j]);
  }
};

// The max m of a row of n logits (0 for a row of -inf, a NaN wins) and ls = log(sum(exp(x - m))).
template <typename T>
void row_stats(const T* x, int64_t n, T* m, T* ls) {
  if constexpr (std::is_same_v<T, float>) {
    if (cpu::avx2::has_avx2()) return cpu::avx2::logsumexp_row(x, n, m, ls);
  }
  T mx = n ? x[0] : T(0);
  for (int64_t j = 1; j < n; ++j) mx = x[j] > mx || std::isnan(x[j]) ? x[j] : mx;
  if (std::isinf(mx) && mx < 0) mx = 0;
  double total = 0;
  for (int64_t j = 0; j < n; ++j) total += std::exp(double(x[j] - mx));
  *m = mx, *ls = T(std::log(total));
}

// cross_entropy of (N, C) logits (NllLoss with logits): each thread a contiguous range of rows,
// its loss and weight in double, the ranges added in order. Out-of-range targets are noted in
// the pass and reported after it by for_each_target. With smoothing e a row's loss is
// -((1 - e) w[t] logp[t] + e / C sum_j w[j] logp[j]), the sum being sum_j w[j] x[j] - (m + ls) W;
// the mean divides by the weights of the targets, as PyTorch's.
void cross_entropy_forward(const TensorList& in, const TensorList& out, const Attrs& attrs) {
  const NllLayout l(in[0]->shape());
  const int64_t ignore = attrs.get<int64_t>("ignore_index"), n = l.n, c = l.c;
  const int64_t* t = in[1]->data_as<int64_t>();
  const int threads = n * c > cpu::kParallelGrain ? omp_get_max_threads() : 1;
  float_types("cross_entropy", in[0]->dtype(), [&]<typename T>() {
    const T* x = in[0]->data_as<T>();
    const T* w = in[2]->data_as<T>();
    T* stats = out[2]->data_as<T>();
    const Smoothing sm(attrs, w, c);
    std::vector<double> loss(threads), weight(threads);
    int bad = 0;
    OF_OMP_FOR_IF(
        threads > 1,
        reduction(|
                  : bad) schedule(static) num_threads(threads),
        for (int th = 0; th < threads; ++th) {
          double lt = 0, wt = 0;
          int bt = 0;
          for (int64_t i = n * th / threads; i < n * (th + 1) / threads; ++i) {
            const int64_t k = t[i];
            T m = 0, ls = 0;
            if (k != ignore) {
              if (k < 0 || k >= c) {
                bt = 1;
              } else {
                const T* r = x + i * c;
                row_stats(r, c, &m, &ls);
                double row = (1 - sm.e) * double(w[k]) * double((r[k] - m) - ls);
                if (sm.e != 0)
                  row += sm.e_c * (lane_sum<T>(c, [&](int64_t j) { return w[j] * r[j]; }) -
                                   (double(m) + double(ls)) * sm.w_sum);
                lt -= row;
                wt += double(w[k]);
              }
            }
            stats[2 * i] = m, stats[2 * i + 1] = ls;
          }
          loss[th] = lt, weight[th] = wt, bad |= bt;
        });
    if (bad) for_each_target(l, t, ignore, [](int64_t, int64_t) {});  // raises the IndexError
    double total = 0, wsum = 0;
    for (int th = 0; th < threads; ++th) total += loss[th], wsum += weight[th];
    *out[0]->data_as<T>() = T(attrs.get<bool>("mean") ? total / wsum : total);
    *out[1]->data_as<T>() = T(wsum);
  });
}

// dlogits = g ((1 - e) w[t] + e W / C) softmax - g e / C w - g (1 - e) w[t] one_hot(t) per
// counted row, g = dy (/ total weight), in one pass over the logits (e = 0 without smoothing:
// g w[t] (softmax - one_hot(t))).
void cross_entropy_backward(const TensorList& in, const TensorList& out, const Attrs& attrs) {
  const NllLayout l(out[0]->shape());
  const int64_t ignore = attrs.get<int64_t>("ignore_index"), n = l.n, c = l.c;
  const int64_t* t = in[1]->data_as<int64_t>();
  float_types("cross_entropy", out[0]->dtype(), [&]<typename T>() {
    const T* w = in[2]->data_as<T>();
    const T* x = in[4]->data_as<T>();
    const T* stats = in[5]->data_as<T>();
    const double scale = double(*in[0]->data_as<T>()) /
                         (attrs.get<bool>("mean") ? double(*in[3]->data_as<T>()) : 1.0);
    T* dx = out[0]->data_as<T>();
    const Smoothing sm(attrs, w, c);
    const T q = T(scale * sm.e_c);
    OF_OMP_FOR_IF(
        n * c > cpu::kParallelGrain && n > 1, schedule(static), for (int64_t i = 0; i < n; ++i) {
          const int64_t k = t[i];
          T* d = dx + i * c;
          if (k == ignore || k < 0 || k >= c) {
            std::fill_n(d, c, T(0));
            continue;
          }
          const T s = T(scale * ((1 - sm.e) * double(w[k]) + sm.e_c * sm.w_sum));
          const T m = stats[2 * i], ls = stats[2 * i + 1];
          const T* r = x + i * c;
          bool done = false;
          if constexpr (std::is_same_v<T, float>) {
            if (cpu::avx2::has_avx2()) {
              cpu::avx2::scaled_softmax_row(r, d, c, m, ls, s);
              done = true;
            }
          }
          if (!done)
            for (int64_t j = 0; j < c; ++j) d[j] = s * std::exp((r[j] - m) - ls);
          if (sm.e != 0)
            for (int64_t j = 0; j < c; ++j) d[j] -= q * w[j];
          d[k] -= T(scale * (1 - sm.e) * double(w[k]));
        });
  });
}

}  // namespace

void NllLoss::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (logits_input(attrs)) return cross_entropy_forward(in, out, attrs);
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
  if (logits_input(attrs)) return cross_entropy_backward(in, out, attrs);
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
