// CPU kernels of batch normalisation over dim 1 of a contiguous (N, C, *) input, float32 and
// float64. With spatial size S > 1 the work is per channel, in parallel: a channel's N * S values
// (N runs of S contiguous elements) are read once for the mean, and again, from cache when they
// fit, for the variance and the output, so the tensor crosses memory about twice. With S == 1
// ((N, C) input) the rows are split between threads, each summing per channel, and the partial
// sums combined. Sums run in double.
#include <cmath>
#include <vector>

#include <omp.h>

#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

struct Layout {
  int64_t n, c, s;
  explicit Layout(const Shape& shape) : n(shape[0]), c(shape[1]) {
    s = 1;
    for (size_t d = 2; d < shape.size(); ++d) s *= shape[d];
  }
  int64_t count() const { return n * s; }  // values per channel
};

// Sum over channel `ch` of f(index) in eight double lanes.
template <typename F>
double channel_sum(const Layout& l, int64_t ch, F f) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  double rest = 0;
  for (int64_t b = 0; b < l.n; ++b) {
    const int64_t base = (b * l.c + ch) * l.s;
    int64_t i = 0;
    for (; i + 8 <= l.s; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += f(base + i + k);
    for (; i < l.s; ++i) rest += f(base + i);
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + rest;
}

// Per-channel sums of f(row, ch) over the rows of an (N, C) input: rows split between threads.
template <typename F>
std::vector<double> column_sums(const Layout& l, F f) {
  const int threads = l.n * l.c > cpu::kParallelGrain ? omp_get_max_threads() : 1;
  std::vector<double> part(static_cast<size_t>(threads) * l.c, 0.0);
  auto region = [&] {
    double* p = part.data() + static_cast<size_t>(omp_get_thread_num()) * l.c;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < l.n; ++r)
      for (int64_t ch = 0; ch < l.c; ++ch) p[ch] += f(r * l.c + ch, ch);
  };
  OF_OMP_PARALLEL_IF(threads > 1, num_threads(threads), region);
  std::vector<double> total(l.c, 0.0);
  for (int t = 0; t < threads; ++t)
    for (int64_t ch = 0; ch < l.c; ++ch) total[ch] += part[static_cast<size_t>(t) * l.c + ch];
  return total;
}

template <typename T>
void forward_train(const TensorList& in, const TensorList& out, double eps) {
  const Layout l(in[0]->shape());
  const T *x = in[0]->data_as<T>(), *w = in[1]->data_as<T>(), *b = in[2]->data_as<T>();
  T *y = out[0]->data_as<T>(), *mean = out[1]->data_as<T>(), *var = out[2]->data_as<T>();
  const double m = double(l.count());
  if (l.s == 1) {
    std::vector<double> mu = column_sums(l, [x](int64_t i, int64_t) { return double(x[i]); });
    for (double& v : mu) v /= m;
    std::vector<double> sq = column_sums(l, [&](int64_t i, int64_t ch) {
      const double d = double(x[i]) - mu[ch];
      return d * d;
    });
    std::vector<T> scale(l.c), shift(l.c);
    for (int64_t ch = 0; ch < l.c; ++ch) {
      const double v = sq[ch] / m, rstd = 1.0 / std::sqrt(v + eps);
      mean[ch] = T(mu[ch]);
      var[ch] = T(v);
      scale[ch] = T(double(w[ch]) * rstd);
      shift[ch] = T(double(b[ch]) - mu[ch] * double(w[ch]) * rstd);
    }
    OF_OMP_FOR_IF(l.n * l.c > cpu::kParallelGrain, schedule(static),
                  for (int64_t r = 0; r < l.n; ++r) for (int64_t ch = 0; ch < l.c; ++ch)
                      y[r * l.c + ch] = x[r * l.c + ch] * scale[ch] + shift[ch];);
    return;
  }
  const cpu::Capability tier = cpu::loop_tier();
  OF_OMP_FOR_IF(
      l.n * l.c * l.s > cpu::kParallelGrain, schedule(static),
      for (int64_t ch = 0; ch < l.c; ++ch) {
        const double mu = channel_sum(l, ch, [x](int64_t i) { return double(x[i]); }) / m;
        const double v = channel_sum(l, ch,
                                     [x, mu](int64_t i) {
                                       const double d = double(x[i]) - mu;
                                       return d * d;
                                     }) /
                         m;
        const double rstd = 1.0 / std::sqrt(v + eps);
        mean[ch] = T(mu);
        var[ch] = T(v);
        const T a = T(double(w[ch]) * rstd), d = T(double(b[ch]) - mu * double(w[ch]) * rstd);
        cpu::run_loop(tier, [&] {
          for (int64_t n = 0; n < l.n; ++n) {
            const int64_t base = (n * l.c + ch) * l.s;
            for (int64_t i = 0; i < l.s; ++i) y[base + i] = x[base + i] * a + d;
          }
        });
      });
}

// dx = w * rstd * (dy - mean(dy) - xhat * mean(dy * xhat)), dw = sum(dy * xhat), db = sum(dy).
template <typename T>
void backward(const TensorList& in, const TensorList& out, double eps) {
  const Layout l(in[1]->shape());
  const T *dy = in[0]->data_as<T>(), *x = in[1]->data_as<T>(), *mean = in[2]->data_as<T>();
  const T *var = in[3]->data_as<T>(), *w = in[4]->data_as<T>();
  T *dx = out[0]->data_as<T>(), *dw = out[1]->data_as<T>(), *db = out[2]->data_as<T>();
  const double m = double(l.count());
  if (l.s == 1) {
    std::vector<double> sum_dy = column_sums(l, [dy](int64_t i, int64_t) { return double(dy[i]); });
    std::vector<double> sum_dy_xmu = column_sums(l, [&](int64_t i, int64_t ch) {
      return double(dy[i]) * (double(x[i]) - double(mean[ch]));
    });
    std::vector<T> k_dy(l.c), k_x(l.c), k_0(l.c);
    for (int64_t ch = 0; ch < l.c; ++ch) {
      const double rstd = 1.0 / std::sqrt(double(var[ch]) + eps), g = double(w[ch]) * rstd;
      const double kx = g * rstd * rstd * sum_dy_xmu[ch] / m;
      db[ch] = T(sum_dy[ch]);
      dw[ch] = T(sum_dy_xmu[ch] * rstd);
      k_dy[ch] = T(g);
      k_x[ch] = T(-kx);
      k_0[ch] = T(kx * double(mean[ch]) - g * sum_dy[ch] / m);
    }
    OF_OMP_FOR_IF(
        l.n * l.c > cpu::kParallelGrain, schedule(static),
        for (int64_t r = 0; r < l.n; ++r) for (int64_t ch = 0; ch < l.c; ++ch) {
          const int64_t i = r * l.c + ch;
          dx[i] = dy[i] * k_dy[ch] + x[i] * k_x[ch] + k_0[ch];
        });
    return;
  }
  const cpu::Capability tier = cpu::loop_tier();
  OF_OMP_FOR_IF(
      l.n * l.c * l.s > cpu::kParallelGrain, schedule(static),
      for (int64_t ch = 0; ch < l.c; ++ch) {
        const double mu = double(mean[ch]);
        const double sum_dy = channel_sum(l, ch, [dy](int64_t i) { return double(dy[i]); });
        const double sum_dy_xmu = channel_sum(
            l, ch, [dy, x, mu](int64_t i) { return double(dy[i]) * (double(x[i]) - mu); });
        const double rstd = 1.0 / std::sqrt(double(var[ch]) + eps), g = double(w[ch]) * rstd;
        const double kx = g * rstd * rstd * sum_dy_xmu / m;
        db[ch] = T(sum_dy);
        dw[ch] = T(sum_dy_xmu * rstd);
        // dx = g * dy - kx * (x - mu) - g * mean(dy), as one multiply-add per input.
        const T a = T(g), c = T(-kx), d = T(kx * mu - g * sum_dy / m);
        cpu::run_loop(tier, [&] {
          for (int64_t n = 0; n < l.n; ++n) {
            const int64_t base = (n * l.c + ch) * l.s;
            for (int64_t i = 0; i < l.s; ++i) dx[base + i] = dy[base + i] * a + x[base + i] * c + d;
          }
        });
      });
}

template <typename T>
void forward_inference(const TensorList& in, const TensorList& out, double eps) {
  const Layout l(in[0]->shape());
  const T *x = in[0]->data_as<T>(), *mean = in[1]->data_as<T>(), *var = in[2]->data_as<T>();
  const T *w = in[3]->data_as<T>(), *b = in[4]->data_as<T>();
  T* y = out[0]->data_as<T>();
  std::vector<T> scale(l.c), shift(l.c);
  for (int64_t ch = 0; ch < l.c; ++ch) {
    const double s = double(w[ch]) / std::sqrt(double(var[ch]) + eps);
    scale[ch] = T(s);
    shift[ch] = T(double(b[ch]) - double(mean[ch]) * s);
  }
  const T *sc = scale.data(), *sh = shift.data();
  // A streaming loop: built for the CPU's widest tier (the wide stores keep up with memory).
  const cpu::Capability tier = cpu::loop_tier();
  OF_OMP_FOR_IF(
      l.n * l.c * l.s > cpu::kParallelGrain, schedule(static),
      for (int64_t p = 0; p < l.n * l.c; ++p) {
        const T a = sc[p % l.c], d = sh[p % l.c];
        const T* xs = x + p * l.s;
        T* ys = y + p * l.s;
        cpu::run_loop(tier, [&] {
          for (int64_t i = 0; i < l.s; ++i) ys[i] = xs[i] * a + d;
        });
      });
}

template <typename Fn>
void float_or_double(DType dt, Fn fn) {
  if (dt == DType::kFloat64)
    fn.template operator()<double>();
  else
    fn.template operator()<float>();
}

}  // namespace

void BatchNorm::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const double eps = attrs.get<double>("eps");
  float_or_double(in[0]->dtype(), [&]<typename T>() { forward_train<T>(in, out, eps); });
}

void BatchNormGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const double eps = attrs.get<double>("eps");
  float_or_double(in[1]->dtype(), [&]<typename T>() { backward<T>(in, out, eps); });
}

void BatchNormInference::compute_cpu(const TensorList& in, const TensorList& out,
                                     const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const double eps = attrs.get<double>("eps");
  float_or_double(in[0]->dtype(), [&]<typename T>() { forward_inference<T>(in, out, eps); });
}

}  // namespace oneflow
