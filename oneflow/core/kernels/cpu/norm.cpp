// CPU kernels of layer and group normalisation. Layer normalisation: float32 runs on oneDNN
// (onednn/norm.cpp); float64 here: rows in parallel, row sums in eight independent lanes (which
// the compiler vectorises), the backward's weight and bias gradients summed per thread and
// combined at the end. Group normalisation: below.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <omp.h>

#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/onednn/kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {
// Sum of f(i) for i in [0, n) in eight lanes.
template <typename T, typename F>
inline T lane_sum(int64_t n, F f) {
  T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += f(i + l);
  T total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) total += f(i);
  return total;
}
}  // namespace

void LayerNorm::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const int64_t k = attrs.get<int64_t>("size");
  const double eps = attrs.get<double>("eps");
  const int64_t rows = in[0]->numel() / k;
  if (in[0]->dtype() == DType::kFloat32)
    return onednn::layer_norm_forward(in[0], in[1], in[2], out[0], out[1], out[2], k,
                                      static_cast<float>(eps));
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* x = in[0]->data_as<T>();
      const T* w = in[1]->data_as<T>();
      const T* b = in[2]->data_as<T>();
      T* y = out[0]->data_as<T>();
      T* mean = out[1]->data_as<T>();
      T* rstd = out[2]->data_as<T>();
      OF_OMP_FOR_IF(
          rows * k > cpu::kParallelGrain, schedule(static), for (int64_t r = 0; r < rows; ++r) {
            const T* xr = x + r * k;
            const T mu = lane_sum<T>(k, [xr](int64_t i) { return xr[i]; }) / T(k);
            const T var =
                lane_sum<T>(k, [xr, mu](int64_t i) { return (xr[i] - mu) * (xr[i] - mu); }) / T(k);
            const T rs = T(1.0 / std::sqrt(double(var) + eps));
            mean[r] = mu;
            rstd[r] = rs;
            T* yr = y + r * k;
            for (int64_t i = 0; i < k; ++i) yr[i] = (xr[i] - mu) * rs * w[i] + b[i];
          });
    }
  });
}

void LayerNormGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  const int64_t k = attrs.get<int64_t>("size");
  const int64_t rows = in[1]->numel() / k;
  if (in[1]->dtype() == DType::kFloat32) {
    Tensor dy = in[0];
    if (!dy->is_contiguous()) {
      dy = empty_tensor(in[0]->shape(), in[0]->dtype(), in[0]->device());
      copy_cpu(in[0], dy);
    }
    return onednn::layer_norm_backward(dy, in[1], in[2], in[3], in[4], out[0], out[1], out[2], k,
                                       static_cast<float>(attrs.get<double>("eps")));
  }
  visit_dtype(in[1]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      Tensor dy_c = in[0];
      if (!dy_c->is_contiguous()) {
        dy_c = empty_tensor(in[0]->shape(), in[0]->dtype(), in[0]->device());
        copy_cpu(in[0], dy_c);
      }
      const T* dy = dy_c->data_as<T>();
      const T* x = in[1]->data_as<T>();
      const T* mean = in[2]->data_as<T>();
      const T* rstd = in[3]->data_as<T>();
      const T* w = in[4]->data_as<T>();
      T* dx = out[0]->data_as<T>();
      T* dw = out[1]->data_as<T>();
      T* db = out[2]->data_as<T>();
      const int threads = rows * k > cpu::kParallelGrain ? omp_get_max_threads() : 1;
      std::vector<T> dw_part(threads * k, T(0)), db_part(threads * k, T(0));
      auto region = [&] {
        const int tid = omp_get_thread_num();
        T* dwp = dw_part.data() + tid * k;
        T* dbp = db_part.data() + tid * k;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
          const T* xr = x + r * k;
          const T* gr = dy + r * k;
          const T mu = mean[r], rs = rstd[r];
          const T mg = lane_sum<T>(k, [gr, w](int64_t i) { return gr[i] * w[i]; }) / T(k);
          const T mgx =
              lane_sum<T>(k, [=](int64_t i) { return gr[i] * w[i] * ((xr[i] - mu) * rs); }) / T(k);
          T* dxr = dx + r * k;
          for (int64_t i = 0; i < k; ++i) {
            const T xhat = (xr[i] - mu) * rs;
            dwp[i] += gr[i] * xhat;
            dbp[i] += gr[i];
            dxr[i] = rs * (gr[i] * w[i] - mg - xhat * mgx);
          }
        }
      };
      OF_OMP_PARALLEL_IF(threads > 1, num_threads(threads), region);
      for (int64_t i = 0; i < k; ++i) {
        double a = 0, c = 0;
        for (int t = 0; t < threads; ++t) {
          a += dw_part[t * k + i];
          c += db_part[t * k + i];
        }
        dw[i] = T(a);
        db[i] = T(c);
      }
    }
  });
}

// ---- group normalisation ----
//
// The input is (N, C, S) with G groups of D = C / G channels; a (sample, group) pair is D * S
// contiguous values. With at least one pair per thread each thread takes whole pairs and reads a
// pair's values from cache after the first pass (the statistics, then the output or the input
// gradient), so the tensor crosses memory once. With fewer pairs than threads the passes run
// one after the other, each split by channel rows. Sums run in the input's type (16-byte vector
// lanes) within blocks of 1024 values and in double across blocks.

namespace {

// 16-byte vectors (GCC/Clang vector extensions: SSE2 on any x86-64): 4 floats or 2 doubles.
template <typename T>
struct VecOf {
  typedef T type __attribute__((vector_size(16)));
};
template <typename T>
using Vec = typename VecOf<T>::type;

template <typename T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

template <typename T>
inline T lanes_sum(Vec<T> v) {
  T t = 0;
  for (size_t l = 0; l < sizeof(v) / sizeof(T); ++l) t += v[l];
  return t;
}

// Sum of p[i] (with shift: of (p[i] - shift)^2) for i in [0, n), four vectors of lanes within
// blocks of 1024 values, the blocks added in double.
template <typename T, bool kSquares>
inline double block_sum(const T* p, int64_t n, T shift = 0) {
  constexpr int64_t kBlock = 1024, kW = 16 / sizeof(T);
  double total = 0;
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t e = std::min(n, s + kBlock);
    Vec<T> acc[4] = {};
    int64_t i = s;
    for (; i + 4 * kW <= e; i += 4 * kW)
      for (int k = 0; k < 4; ++k) {
        Vec<T> v = load(p + i + k * kW);
        if constexpr (kSquares) {
          v -= shift;
          v *= v;
        }
        acc[k] += v;
      }
    T t = lanes_sum<T>((acc[0] + acc[1]) + (acc[2] + acc[3]));
    for (; i < e; ++i) t += kSquares ? (p[i] - shift) * (p[i] - shift) : p[i];
    total += double(t);
  }
  return total;
}

// Sums of dy * x and of dy over n values, in one pass.
template <typename T>
inline void dot_and_sum(const T* dy, const T* x, int64_t n, double* sdx, double* sd) {
  constexpr int64_t kBlock = 1024, kW = 16 / sizeof(T);
  double a = 0, b = 0;
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t e = std::min(n, s + kBlock);
    Vec<T> va[2] = {}, vb[2] = {};
    int64_t i = s;
    for (; i + 2 * kW <= e; i += 2 * kW)
      for (int k = 0; k < 2; ++k) {
        const Vec<T> g = load(dy + i + k * kW);
        va[k] += g * load(x + i + k * kW);
        vb[k] += g;
      }
    T ta = lanes_sum<T>(va[0] + va[1]), tb = lanes_sum<T>(vb[0] + vb[1]);
    for (; i < e; ++i) {
      ta += dy[i] * x[i];
      tb += dy[i];
    }
    a += double(ta);
    b += double(tb);
  }
  *sdx = a;
  *sd = b;
}

struct GroupLayout {
  int64_t n, c, s, groups, d;
  GroupLayout(const Tensor& x, int64_t g) : n(x->shape()[0]), c(x->shape()[1]), groups(g) {
    s = n * c == 0 ? 0 : x->numel() / (n * c);
    d = c / g;
  }
  int64_t pairs() const { return n * groups; }
  int64_t group_size() const { return d * s; }
  // Whole (sample, group) pairs per thread: at least one each, and enough work to split.
  bool by_pairs(int threads) const { return pairs() >= threads; }
};

template <typename T>
void group_norm_forward(const TensorList& in, const TensorList& out, int64_t groups, double eps) {
  const GroupLayout l(in[0], groups);
  const T *x = in[0]->data_as<T>(), *w = in[1]->data_as<T>(), *b = in[2]->data_as<T>();
  T *y = out[0]->data_as<T>(), *mean = out[1]->data_as<T>(), *rstd = out[2]->data_as<T>();
  const int64_t m = l.group_size();
  // y = x * scale + shift over the rows of pair p (channels [lo, hi) of its group).
  auto write_rows = [&](int64_t p, double mu, double rs, int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      const int64_t ch = (p % l.groups) * l.d + k;
      const T scale = T(rs * double(w[ch])), shift = T(double(b[ch]) - mu * rs * double(w[ch]));
      const T* xr = x + p * m + k * l.s;
      T* yr = y + p * m + k * l.s;
      for (int64_t i = 0; i < l.s; ++i) yr[i] = xr[i] * scale + shift;
    }
  };
  const bool parallel = in[0]->numel() > cpu::kParallelGrain;
  const int threads = parallel ? omp_get_max_threads() : 1;
  if (l.by_pairs(threads)) {
    OF_OMP_FOR_IF(
        threads > 1, schedule(static) num_threads(threads),
        for (int64_t p = 0; p < l.pairs(); ++p) {
          const T* xg = x + p * m;
          const double mu = block_sum<T, false>(xg, m) / double(m);
          const T mt = T(mu);
          const double var = block_sum<T, true>(xg, m, mt) / double(m);
          const double rs = 1.0 / std::sqrt(var + eps);
          mean[p] = T(mu);
          rstd[p] = T(rs);
          write_rows(p, mu, rs, 0, l.d);
        });
    return;
  }
  // Few pairs: per-row partial sums in parallel, then each pair's statistics, then the rows.
  const int64_t rows = l.n * l.c;
  std::vector<double> part(rows), mu(l.pairs()), rs(l.pairs());
  OF_OMP_FOR_IF(
      threads > 1, schedule(static) num_threads(threads), for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * l.s;
        part[r] = block_sum<T, false>(xr, l.s);
      });
  for (int64_t p = 0; p < l.pairs(); ++p) {
    double t = 0;
    for (int64_t k = 0; k < l.d; ++k) t += part[p * l.d + k];
    mu[p] = t / double(m);
  }
  OF_OMP_FOR_IF(
      threads > 1, schedule(static) num_threads(threads), for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * l.s;
        const T mt = T(mu[r / l.d]);
        part[r] = block_sum<T, true>(xr, l.s, mt);
      });
  for (int64_t p = 0; p < l.pairs(); ++p) {
    double t = 0;
    for (int64_t k = 0; k < l.d; ++k) t += part[p * l.d + k];
    rs[p] = 1.0 / std::sqrt(t / double(m) + eps);
    mean[p] = T(mu[p]);
    rstd[p] = T(rs[p]);
  }
  OF_OMP_FOR_IF(threads > 1, schedule(static) num_threads(threads),
                for (int64_t r = 0; r < rows; ++r)
                    write_rows(r / l.d, mu[r / l.d], rs[r / l.d], r % l.d, r % l.d + 1););
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w and xhat = (x - mean) * rstd,
// the means over the group: per row dx = a * dy + bx * x + c0. The per-row sums of dy * x and dy
// also give dweight and dbias.
template <typename T>
void group_norm_backward(const TensorList& in, const TensorList& out, int64_t groups) {
  const GroupLayout l(in[1], groups);
  const T *dy = in[0]->data_as<T>(), *x = in[1]->data_as<T>();
  const T *mean = in[2]->data_as<T>(), *rstd = in[3]->data_as<T>(), *w = in[4]->data_as<T>();
  T *dx = out[0]->data_as<T>(), *dw = out[1]->data_as<T>(), *db = out[2]->data_as<T>();
  const int64_t m = l.group_size(), rows = l.n * l.c;
  std::vector<double> sdx(rows), sd(rows);
  auto row_sums = [&](int64_t r) { dot_and_sum(dy + r * l.s, x + r * l.s, l.s, &sdx[r], &sd[r]); };
  // The coefficients bx and c0 of pair p (a depends on the row's weight too).
  auto pair_coeffs = [&](int64_t p, double* bx, double* c0) {
    const double mu = double(mean[p]), rs = double(rstd[p]);
    double g = 0, gx = 0;
    for (int64_t k = 0; k < l.d; ++k) {
      const int64_t r = p * l.d + k;
      const double wc = double(w[(p % l.groups) * l.d + k]);
      g += wc * sd[r];
      gx += wc * (sdx[r] - mu * sd[r]);
    }
    const double m1 = g / double(m), m2 = gx * rs / double(m);
    *bx = -rs * rs * m2;
    *c0 = rs * rs * m2 * mu - rs * m1;
  };
  auto write_row = [&](int64_t r, double bx, double c0) {
    const int64_t p = r / l.d;
    const T a = T(double(rstd[p]) * double(w[(p % l.groups) * l.d + r % l.d]));
    const T bt = T(bx), ct = T(c0);
    const T* gr = dy + r * l.s;
    const T* xr = x + r * l.s;
    T* o = dx + r * l.s;
    for (int64_t i = 0; i < l.s; ++i) o[i] = a * gr[i] + bt * xr[i] + ct;
  };
  const bool parallel = in[1]->numel() > cpu::kParallelGrain;
  const int threads = parallel ? omp_get_max_threads() : 1;
  if (l.by_pairs(threads)) {
    OF_OMP_FOR_IF(
        threads > 1, schedule(static) num_threads(threads),
        for (int64_t p = 0; p < l.pairs(); ++p) {
          for (int64_t k = 0; k < l.d; ++k) row_sums(p * l.d + k);
          double bx, c0;
          pair_coeffs(p, &bx, &c0);
          for (int64_t k = 0; k < l.d; ++k) write_row(p * l.d + k, bx, c0);
        });
  } else {
    OF_OMP_FOR_IF(threads > 1, schedule(static) num_threads(threads),
                  for (int64_t r = 0; r < rows; ++r) row_sums(r););
    std::vector<double> bx(l.pairs()), c0(l.pairs());
    for (int64_t p = 0; p < l.pairs(); ++p) pair_coeffs(p, &bx[p], &c0[p]);
    OF_OMP_FOR_IF(threads > 1, schedule(static) num_threads(threads),
                  for (int64_t r = 0; r < rows; ++r) write_row(r, bx[r / l.d], c0[r / l.d]););
  }
  // dweight[c] = sum over samples of rstd * (sum(dy * x) - mean * sum(dy)); dbias[c] = sum(dy).
  for (int64_t ch = 0; ch < l.c; ++ch) {
    double a = 0, bsum = 0;
    for (int64_t i = 0; i < l.n; ++i) {
      const int64_t r = i * l.c + ch, p = i * l.groups + ch / l.d;
      a += double(rstd[p]) * (sdx[r] - double(mean[p]) * sd[r]);
      bsum += sd[r];
    }
    dw[ch] = T(a);
    db[ch] = T(bsum);
  }
}

}  // namespace

void GroupNorm::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const int64_t groups = attrs.get<int64_t>("num_groups");
  const double eps = attrs.get<double>("eps");
  float_types(name(), in[0]->dtype(),
              [&]<typename T>() { group_norm_forward<T>(in, out, groups, eps); });
}

void GroupNormGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  const int64_t groups = attrs.get<int64_t>("num_groups");
  float_types(name(), in[1]->dtype(),
              [&]<typename T>() { group_norm_backward<T>(in, out, groups); });
}

}  // namespace oneflow
