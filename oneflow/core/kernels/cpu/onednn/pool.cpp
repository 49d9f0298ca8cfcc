// CPU pooling kernels: max (with PyTorch's flat per-plane indices), average, adaptive average and
// adaptive max, forward and backward.
//
// Direct OpenMP loops, one output plane per task. In float32 the max and average pools run the
// columns whose windows lie inside the input eight at a time with AVX2. oneDNN's pooling
// primitives on PyTorch's NCHW layout were slower than these loops on an EPYC core
// (8x32x64x64, 3x3 stride 2: max 23 ms against 2.8, average 6.1 ms against 0.85, average
// backward ~4.5 ms against ~3.5), so pooling does not use them.
#include <cmath>
#include <limits>
#include <vector>

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {

using Ints = std::vector<int64_t>;

// planes = N * C; spatial arrays are canonical 3-D (missing leading dims have size 1, kernel 1,
// stride 1, no padding). Flat indices within a plane are then PyTorch's for 1-D, 2-D and 3-D.
struct PoolGeom {
  int64_t planes = 0;
  int64_t in[3], out[3], k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};

  PoolGeom(const Shape& x, const Shape& y) {
    const int64_t nsp = static_cast<int64_t>(x.size()) - 2, lead = 3 - nsp;
    planes = x[0] * x[1];
    for (int64_t i = 0; i < 3; ++i) {
      in[i] = i >= lead ? x[2 + i - lead] : 1;
      out[i] = i >= lead ? y[2 + i - lead] : 1;
    }
  }
  PoolGeom(const Shape& x, const Shape& y, const Attrs& a) : PoolGeom(x, y) {
    const int64_t lead = 3 - (static_cast<int64_t>(x.size()) - 2);
    const auto &kk = a.get<Ints>("kernel"), &ss = a.get<Ints>("stride"),
               &pp = a.get<Ints>("padding"), &dd = a.get<Ints>("dilation");
    for (int64_t i = lead; i < 3; ++i)
      k[i] = kk[i - lead], s[i] = ss[i - lead], p[i] = pp[i - lead], d[i] = dd[i - lead];
  }
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

// ---- direct loops ----

// The taps [lo, hi) of a window that starts at `start` (dilation d) and land inside [0, in).
// Looping over all k taps and skipping the outside ones ran for ever for a huge kernel.
struct Taps {
  int64_t lo, hi;
};
inline Taps taps(int64_t start, int64_t k, int64_t d, int64_t in) {
  const int64_t lo = start < 0 ? (-start + d - 1) / d : 0;
  const int64_t hi = start >= in ? 0 : std::min(k, (in - 1 - start) / d + 1);
  return {lo, std::max(lo, hi)};
}

// The output at (od, oh, ow) of one plane: PyTorch's rule, the first valid position, replaced by
// anything greater or NaN.
template <typename T>
inline void max_pool_one(const PoolGeom& g, const T* xp, int64_t od, int64_t oh, int64_t ow, T* y,
                         int64_t* idx) {
  using L = std::numeric_limits<T>;
  T best = L::has_infinity ? -L::infinity() : L::lowest();
  int64_t best_i = -1;
  const Taps td = taps(od * g.s[0] - g.p[0], g.k[0], g.d[0], g.in[0]);
  const Taps th = taps(oh * g.s[1] - g.p[1], g.k[1], g.d[1], g.in[1]);
  const Taps tw = taps(ow * g.s[2] - g.p[2], g.k[2], g.d[2], g.in[2]);
  for (int64_t kd = td.lo; kd < td.hi; ++kd) {
    const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
    for (int64_t kh = th.lo; kh < th.hi; ++kh) {
      const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
      for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
        const int64_t iw = ow * g.s[2] - g.p[2] + kw * g.d[2];
        const int64_t i = (id * g.in[1] + ih) * g.in[2] + iw;
        const T v = xp[i];
        if (best_i < 0) best_i = i;
        if (v > best || std::isnan(v)) best = v, best_i = i;
      }
    }
  }
  *y = best;
  if (idx) *idx = best_i;
}

template <typename T>
void max_pool_loop(const PoolGeom& g, const T* x, T* y, int64_t* idx) {
  const int64_t IS = g.in_size(), OS = g.out_size();
  // float with AVX2: the columns whose windows lie inside the row run eight outputs at a time
  // (cpu::avx2::max_pool_row), the border columns one at a time here.
  bool vector = false;
  if constexpr (std::is_same_v<T, float>) vector = cpu::avx2::has_avx2() && IS < (int64_t{1} << 31);
  // Interior columns [ow_lo, ow_hi): ow * s - p >= 0 and ow * s - p + (k - 1) * d <= in - 1.
  const int64_t s2 = g.s[2], p2 = g.p[2], reach = (g.k[2] - 1) * g.d[2];
  const int64_t ow_lo = std::min(g.out[2], (p2 + s2 - 1) / s2);
  const int64_t last = g.in[2] - 1 + p2 - reach;
  const int64_t ow_hi = last < 0 ? 0 : std::min(g.out[2], last / s2 + 1);
#pragma omp parallel for schedule(static)
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    const T* xp = x + pl * IS;
    std::vector<const float*> rows;
    std::vector<int64_t> offs;
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const int64_t o = pl * OS + (od * g.out[1] + oh) * g.out[2];
        T* yr = y + o;
        int64_t* ir = idx ? idx + o : nullptr;
        int64_t a = g.out[2], b = g.out[2];  // the columns left to the vector kernel
        if constexpr (std::is_same_v<T, float>) {
          if (vector && ow_lo < ow_hi) {
            rows.clear();
            offs.clear();
            const Taps td = taps(od * g.s[0] - g.p[0], g.k[0], g.d[0], g.in[0]);
            const Taps th = taps(oh * g.s[1] - g.p[1], g.k[1], g.d[1], g.in[1]);
            for (int64_t kd = td.lo; kd < td.hi; ++kd)
              for (int64_t kh = th.lo; kh < th.hi; ++kh) {
                const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
                const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
                offs.push_back((id * g.in[1] + ih) * g.in[2]);
                rows.push_back(xp + offs.back());
              }
            if (!rows.empty()) {
              a = ow_lo, b = ow_hi;
              cpu::avx2::max_pool_row(rows.data(), offs.data(), static_cast<int64_t>(rows.size()),
                                      g.in[2], g.k[2], s2, p2, g.d[2], a, b, yr, ir);
            }
          }
        }
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          if (ow == a) ow = b;
          if (ow >= g.out[2]) break;
          max_pool_one(g, xp, od, oh, ow, yr + ow, ir ? ir + ow : nullptr);
        }
      }
  }
}

// dx = 0, then dy added at the indexed positions of each plane.
template <typename T>
void index_grad_loop(int64_t planes, int64_t IS, int64_t OS, const T* dy, const int64_t* idx,
                     T* dx) {
#pragma omp parallel for schedule(static)
  for (int64_t pl = 0; pl < planes; ++pl) {
    T* dxp = dx + pl * IS;
    std::fill(dxp, dxp + IS, T(0));
    for (int64_t o = pl * OS; o < (pl + 1) * OS; ++o) dxp[idx[o]] += dy[o];
  }
}

// PyTorch's average window along one dim: [lo, hi) clipped to the input, and the length the
// divisor counts when padding is included (the window clipped to the padded input only).
struct Window {
  int64_t lo, hi, padded;
};
inline Window avg_window(int64_t o, int64_t s, int64_t p, int64_t k, int64_t in) {
  int64_t lo = o * s - p, hi = std::min(lo + k, in + p);
  const int64_t padded = hi - lo;
  return {std::max<int64_t>(lo, 0), std::min(hi, in), padded};
}

// Runs f(out_offset, window per dim, divisor) for every output of one plane's geometry.
template <typename Fn>
void for_each_avg_window(const PoolGeom& g, bool include_pad, int64_t divisor_override, Fn f) {
  for (int64_t od = 0; od < g.out[0]; ++od) {
    const Window wd = avg_window(od, g.s[0], g.p[0], g.k[0], g.in[0]);
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const Window wh = avg_window(oh, g.s[1], g.p[1], g.k[1], g.in[1]);
      for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        const Window ww = avg_window(ow, g.s[2], g.p[2], g.k[2], g.in[2]);
        const int64_t o = (od * g.out[1] + oh) * g.out[2] + ow;
        const int64_t inside = (wd.hi - wd.lo) * (wh.hi - wh.lo) * (ww.hi - ww.lo);
        const bool empty = wd.lo >= wd.hi || wh.lo >= wh.hi || ww.lo >= ww.hi;
        const int64_t div = divisor_override ? divisor_override
                            : include_pad    ? wd.padded * wh.padded * ww.padded
                                             : inside;
        f(o, wd, wh, ww, empty ? 0 : div);
      }
    }
  }
}

template <typename T>
void avg_pool_loop(const PoolGeom& g, bool include_pad, int64_t div_override, const T* x, T* y) {
  const int64_t IS = g.in_size(), OS = g.out_size();
  auto one = [&](const T* xp, T* yp, int64_t o, Window wd, Window wh, Window ww, int64_t div) {
    T acc = T(0);
    for (int64_t id = wd.lo; id < wd.hi; ++id)
      for (int64_t ih = wh.lo; ih < wh.hi; ++ih)
        for (int64_t iw = ww.lo; iw < ww.hi; ++iw) acc += xp[(id * g.in[1] + ih) * g.in[2] + iw];
    yp[o] = div ? acc / T(div) : T(0);
  };
  if constexpr (std::is_same_v<T, float>) {
    if (cpu::avx2::has_avx2()) {
      // The columns whose windows lie inside the row run eight at a time; the rest as above.
      const int64_t s2 = g.s[2], p2 = g.p[2];
      const int64_t ow_lo = std::min(g.out[2], (p2 + s2 - 1) / s2);
      const int64_t last = g.in[2] + p2 - g.k[2];
      const int64_t ow_hi = last < 0 ? 0 : std::max(ow_lo, std::min(g.out[2], last / s2 + 1));
#pragma omp parallel for schedule(static)
      for (int64_t pl = 0; pl < g.planes; ++pl) {
        const T* xp = x + pl * IS;
        T* yp = y + pl * OS;
        std::vector<const float*> rows;
        for (int64_t od = 0; od < g.out[0]; ++od) {
          const Window wd = avg_window(od, g.s[0], g.p[0], g.k[0], g.in[0]);
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            const Window wh = avg_window(oh, g.s[1], g.p[1], g.k[1], g.in[1]);
            const int64_t o = (od * g.out[1] + oh) * g.out[2];
            rows.clear();
            for (int64_t id = wd.lo; id < wd.hi; ++id)
              for (int64_t ih = wh.lo; ih < wh.hi; ++ih)
                rows.push_back(xp + (id * g.in[1] + ih) * g.in[2]);
            const int64_t div = div_override  ? div_override
                                : include_pad ? wd.padded * wh.padded * g.k[2]
                                              : static_cast<int64_t>(rows.size()) * g.k[2];
            const bool vector = !rows.empty() && ow_lo < ow_hi;
            if (vector)
              cpu::avx2::avg_pool_row(rows.data(), static_cast<int64_t>(rows.size()), g.in[2],
                                      g.k[2], s2, p2, ow_lo, ow_hi, yp + o, float(div));
            for (int64_t ow = 0; ow < g.out[2]; ++ow) {
              if (vector && ow == ow_lo) ow = ow_hi;
              if (ow >= g.out[2]) break;
              const Window ww = avg_window(ow, s2, p2, g.k[2], g.in[2]);
              const bool empty = wd.lo >= wd.hi || wh.lo >= wh.hi || ww.lo >= ww.hi;
              const int64_t d = div_override  ? div_override
                                : include_pad ? wd.padded * wh.padded * ww.padded
                                              : (wd.hi - wd.lo) * (wh.hi - wh.lo) * (ww.hi - ww.lo);
              one(xp, yp, o + ow, wd, wh, ww, empty ? 0 : d);
            }
          }
        }
      }
      return;
    }
  }
#pragma omp parallel for schedule(static)
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    const T* xp = x + pl * IS;
    T* yp = y + pl * OS;
    for_each_avg_window(g, include_pad, div_override,
                        [&](int64_t o, Window wd, Window wh, Window ww, int64_t div) {
                          one(xp, yp, o, wd, wh, ww, div);
                        });
  }
}

template <typename T>
void avg_pool_grad_loop(const PoolGeom& g, bool include_pad, int64_t div_override, const T* dy,
                        T* dx) {
  const int64_t IS = g.in_size(), OS = g.out_size();
#pragma omp parallel for schedule(static)
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    T* dxp = dx + pl * IS;
    const T* dyp = dy + pl * OS;
    std::fill(dxp, dxp + IS, T(0));
    for_each_avg_window(g, include_pad, div_override,
                        [&](int64_t o, Window wd, Window wh, Window ww, int64_t div) {
                          if (!div) return;
                          const T v = dyp[o] / T(div);
                          for (int64_t id = wd.lo; id < wd.hi; ++id)
                            for (int64_t ih = wh.lo; ih < wh.hi; ++ih)
                              for (int64_t iw = ww.lo; iw < ww.hi; ++iw)
                                dxp[(id * g.in[1] + ih) * g.in[2] + iw] += v;
                        });
  }
}

// Adaptive window o of `out` over `in`: [floor(o * in / out), ceil((o + 1) * in / out)).
inline int64_t adaptive_lo(int64_t o, int64_t in, int64_t out) { return o * in / out; }
inline int64_t adaptive_hi(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

// Runs f(out_offset, lo[3], hi[3]) for every output of one plane.
template <typename Fn>
void for_each_adaptive_window(const PoolGeom& g, Fn f) {
  int64_t lo[3], hi[3];
  for (int64_t od = 0; od < g.out[0]; ++od) {
    lo[0] = adaptive_lo(od, g.in[0], g.out[0]), hi[0] = adaptive_hi(od, g.in[0], g.out[0]);
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      lo[1] = adaptive_lo(oh, g.in[1], g.out[1]), hi[1] = adaptive_hi(oh, g.in[1], g.out[1]);
      for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        lo[2] = adaptive_lo(ow, g.in[2], g.out[2]), hi[2] = adaptive_hi(ow, g.in[2], g.out[2]);
        f((od * g.out[1] + oh) * g.out[2] + ow, lo, hi);
      }
    }
  }
}

// Sum of a contiguous run with eight independent partial sums (vectorisable without
// reassociating any single chain; a window of a large input is not one long dependency).
template <typename T>
T run_sum(const T* p, int64_t n) {
  T lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) lane[j] += p[i + j];
  T acc = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
  for (; i < n; ++i) acc += p[i];
  return acc;
}

template <typename T>
void adaptive_avg_loop(const PoolGeom& g, const T* x, T* y) {
  const int64_t IS = g.in_size(), OS = g.out_size();
  OF_OMP_FOR_IF(
      g.planes * IS > cpu::kParallelGrain, schedule(static),
      for (int64_t pl = 0; pl < g.planes; ++pl) {
        const T* xp = x + pl * IS;
        if (OS == 1) {  // global pooling: the whole plane is one run
          y[pl] = run_sum(xp, IS) / T(IS);
          continue;
        }
        for_each_adaptive_window(g, [&](int64_t o, const int64_t* lo, const int64_t* hi) {
          T acc = T(0);
          for (int64_t id = lo[0]; id < hi[0]; ++id)
            for (int64_t ih = lo[1]; ih < hi[1]; ++ih)
              acc += run_sum(xp + (id * g.in[1] + ih) * g.in[2] + lo[2], hi[2] - lo[2]);
          y[pl * OS + o] = acc / T((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
        });
      });
}

template <typename T>
void adaptive_avg_grad_loop(const PoolGeom& g, const T* dy, T* dx) {
  const int64_t IS = g.in_size(), OS = g.out_size();
  OF_OMP_FOR_IF(
      g.planes * IS > cpu::kParallelGrain, schedule(static),
      for (int64_t pl = 0; pl < g.planes; ++pl) {
        T* dxp = dx + pl * IS;
        if (OS == 1) {
          std::fill(dxp, dxp + IS, dy[pl] / T(IS));
          continue;
        }
        std::fill(dxp, dxp + IS, T(0));
        for_each_adaptive_window(g, [&](int64_t o, const int64_t* lo, const int64_t* hi) {
          const T v = dy[pl * OS + o] / T((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
          for (int64_t id = lo[0]; id < hi[0]; ++id)
            for (int64_t ih = lo[1]; ih < hi[1]; ++ih)
              for (int64_t iw = lo[2]; iw < hi[2]; ++iw)
                dxp[(id * g.in[1] + ih) * g.in[2] + iw] += v;
        });
      });
}

template <typename T>
void adaptive_max_loop(const PoolGeom& g, const T* x, T* y, int64_t* idx) {
  const int64_t IS = g.in_size(), OS = g.out_size();
#pragma omp parallel for schedule(static)
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    const T* xp = x + pl * IS;
    for_each_adaptive_window(g, [&](int64_t o, const int64_t* lo, const int64_t* hi) {
      T best = -std::numeric_limits<T>::infinity();
      int64_t best_i = (lo[0] * g.in[1] + lo[1]) * g.in[2] + lo[2];
      for (int64_t id = lo[0]; id < hi[0]; ++id)
        for (int64_t ih = lo[1]; ih < hi[1]; ++ih)
          for (int64_t iw = lo[2]; iw < hi[2]; ++iw) {
            const int64_t i = (id * g.in[1] + ih) * g.in[2] + iw;
            if (xp[i] > best || std::isnan(xp[i])) best = xp[i], best_i = i;
          }
      y[pl * OS + o] = best;
      idx[pl * OS + o] = best_i;
    });
  }
}

template <typename Fn>
void visit_floating(const char* op, DType dt, Fn f) {
  if (dt == DType::kFloat32)
    f.template operator()<float>();
  else if (dt == DType::kFloat64)
    f.template operator()<double>();
  else
    throw_error<RuntimeError>(op, "unsupported dtype ", dtype_name(dt));
}

}  // namespace

void MaxPool::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor &x = in[0], &y = out[0];
  if (y->numel() == 0) return;
  const bool with_indices = out.size() == 2;
  const PoolGeom g(x->shape(), y->shape(), attrs);
  auto run = [&]<typename T>() {
    max_pool_loop<T>(g, x->data_as<T>(), y->data_as<T>(),
                     with_indices ? out[1]->data_as<int64_t>() : nullptr);
  };
  if (is_integral(x->dtype(), false))  // as PyTorch's CPU max_pool2d/3d (no gradient)
    visit_dtype(x->dtype(), [&]<typename T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) run.template operator()<T>();
    });
  else
    visit_floating(name(), x->dtype(), run);
}

void MaxPoolGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Tensor &dy = in[0], &idx = in[1], &dx = out[0];
  if (dx->numel() == 0) return;
  const Shape& xs = dx->shape();
  const int64_t planes = xs[0] * xs[1];
  const int64_t IS = dx->numel() / planes, OS = planes ? dy->numel() / planes : 0;
  visit_floating(name(), dx->dtype(), [&]<typename T>() {
    index_grad_loop<T>(planes, IS, OS, dy->data_as<T>(), idx->data_as<int64_t>(), dx->data_as<T>());
  });
}

void AvgPool::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor &x = in[0], &y = out[0];
  if (y->numel() == 0) return;
  const PoolGeom g(x->shape(), y->shape(), attrs);
  const bool include_pad = attrs.get<bool>("count_include_pad");
  const int64_t div = attrs.get<int64_t>("divisor_override");
  if (x->dtype() == DType::kInt64)  // as PyTorch's CPU avg_pool: integer sums and division
    return avg_pool_loop<int64_t>(g, include_pad, div, x->data_as<int64_t>(),
                                  y->data_as<int64_t>());
  visit_floating(name(), x->dtype(), [&]<typename T>() {
    avg_pool_loop<T>(g, include_pad, div, x->data_as<T>(), y->data_as<T>());
  });
}

void AvgPoolGrad::compute_cpu(const TensorList& in, const TensorList& out,
                              const Attrs& attrs) const {
  const Tensor &dy = in[0], &dx = out[0];
  if (dx->numel() == 0) return;
  const PoolGeom g(dx->shape(), dy->shape(), attrs);
  const bool include_pad = attrs.get<bool>("count_include_pad");
  const int64_t div = attrs.get<int64_t>("divisor_override");
  visit_floating(name(), dx->dtype(), [&]<typename T>() {
    avg_pool_grad_loop<T>(g, include_pad, div, dy->data_as<T>(), dx->data_as<T>());
  });
}

void AdaptiveAvgPool::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Tensor &x = in[0], &y = out[0];
  if (y->numel() == 0) return;
  const PoolGeom g(x->shape(), y->shape());
  visit_floating(name(), x->dtype(),
                 [&]<typename T>() { adaptive_avg_loop<T>(g, x->data_as<T>(), y->data_as<T>()); });
}

void AdaptiveAvgPoolGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                      const Attrs&) const {
  const Tensor &dy = in[0], &dx = out[0];
  if (dx->numel() == 0) return;
  const PoolGeom g(dx->shape(), dy->shape());
  visit_floating(name(), dx->dtype(), [&]<typename T>() {
    adaptive_avg_grad_loop<T>(g, dy->data_as<T>(), dx->data_as<T>());
  });
}

void AdaptiveMaxPool::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Tensor &x = in[0], &y = out[0];
  if (y->numel() == 0) return;
  const PoolGeom g(x->shape(), y->shape());
  visit_floating(name(), x->dtype(), [&]<typename T>() {
    adaptive_max_loop<T>(g, x->data_as<T>(), y->data_as<T>(), out[1]->data_as<int64_t>());
  });
}

}  // namespace oneflow
