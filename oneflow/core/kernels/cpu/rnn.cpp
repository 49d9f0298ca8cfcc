// CPU kernels of the LSTM cell and its backward (ops/rnn_primitives.h): one pass per batch row
// over the four gates, the activations through the tier's vector sigmoid and tanh in float32.
#include <algorithm>
#include <cmath>

#include <omp.h>
#include <vector>

#include "oneflow/core/kernels/cpu/onednn/kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/rnn_primitives.h"

namespace oneflow {

namespace {

// y = f(x) over n values (y may be x): the vector kernel where the CPU has one, else std::.
template <typename T>
void apply(UnaryFn fn, const T* x, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    static const cpu::avx2::UnaryKernel sigmoid =
        cpu::avx2::has_avx2() ? cpu::avx2::unary_kernel(UnaryFn::kSigmoid) : nullptr;
    static const cpu::avx2::UnaryKernel tanh =
        cpu::avx2::has_avx2() ? cpu::avx2::unary_kernel(UnaryFn::kTanh) : nullptr;
    const cpu::avx2::UnaryKernel k = fn == UnaryFn::kSigmoid ? sigmoid : tanh;
    if (k != nullptr) return k(x, y, n);
  }
  for (int64_t j = 0; j < n; ++j)
    y[j] = fn == UnaryFn::kSigmoid ? T(1) / (T(1) + std::exp(-x[j])) : std::tanh(x[j]);
}

// Rows in parallel once there is enough work to share.
template <typename F>
void for_rows(int64_t rows, int64_t width, F&& row) {
  OF_OMP_FOR_IF(rows > 1 && rows * width >= 32768, schedule(static),
                for (int64_t b = 0; b < rows; ++b) row(b););
}

// The gate math of `n` hidden units of one batch row: a holds the gates' pre-activations (the
// input, forget, cell and output gates `gs` apart), which become their activations; then c' = f
// c + i g and h = o tanh(c').
template <typename T>
void cell_units(T* a, int64_t gs, const T* cp, T* cn, T* hr, int64_t n) {
  if (gs == n) {
    apply<T>(UnaryFn::kSigmoid, a, a, 2 * n);  // input, forget
  } else {
    apply<T>(UnaryFn::kSigmoid, a, a, n);
    apply<T>(UnaryFn::kSigmoid, a + gs, a + gs, n);
  }
  apply<T>(UnaryFn::kTanh, a + 2 * gs, a + 2 * gs, n);
  apply<T>(UnaryFn::kSigmoid, a + 3 * gs, a + 3 * gs, n);
  for (int64_t j = 0; j < n; ++j) cn[j] = a[gs + j] * cp[j] + a[j] * a[2 * gs + j];
  apply<T>(UnaryFn::kTanh, cn, hr, n);
  for (int64_t j = 0; j < n; ++j) hr[j] *= a[3 * gs + j];
}

// The cell's backward for `n` hidden units of one batch row (gates `gs` apart in a, da and d):
// d gets the gates' gradient, and dc, which holds the gradient reaching c' on entry, holds c's
// on return; tc (n) is scratch.
template <typename T>
void cell_units_grad(const T* dh, T* dc, const T* da, const T* cp, const T* c2, const T* a,
                     int64_t gs, T* d, T* tc, int64_t n) {
  apply<T>(UnaryFn::kTanh, c2, tc, n);
  for (int64_t j = 0; j < n; ++j) {
    const T i = a[j], f = a[gs + j], g = a[2 * gs + j], o = a[3 * gs + j], t = tc[j];
    const T dc2 = dc[j] + dh[j] * o * (T(1) - t * t);
    d[j] = (dc2 * g + da[j]) * i * (T(1) - i);
    d[gs + j] = (dc2 * cp[j] + da[gs + j]) * f * (T(1) - f);
    d[2 * gs + j] = (dc2 * i + da[2 * gs + j]) * (T(1) - g * g);
    d[3 * gs + j] = (dh[j] * t + da[3 * gs + j]) * o * (T(1) - o);
    dc[j] = dc2 * f;
  }
}

template <typename T>
void cell_forward(const TensorList& in, const TensorList& out) {
  const int64_t rows = in[2]->shape()[0], h = in[2]->shape()[1];
  const T *gi = in[0]->read_as<T>(), *gh = in[1]->read_as<T>(), *c = in[2]->read_as<T>();
  T *hn = out[0]->data_as<T>(), *c2 = out[1]->data_as<T>();
  std::vector<T> act(rows * 4 * h);
  for_rows(rows, 4 * h, [&](int64_t b) {
    const T *x = gi + b * 4 * h, *y = gh + b * 4 * h;
    T* a = act.data() + b * 4 * h;
    for (int64_t j = 0; j < 4 * h; ++j) a[j] = x[j] + y[j];
    cell_units<T>(a, h, c + b * h, c2 + b * h, hn + b * h, h);
  });
}

// The cell's backward from its inputs: the gates and c' recomputed per row, then their
// gradients.
template <typename T>
void cell_backward(const TensorList& in, const TensorList& out) {
  const int64_t rows = in[4]->shape()[0], h = in[4]->shape()[1];
  const T *dh = in[0]->read_as<T>(), *dc = in[1]->read_as<T>(), *gi = in[2]->read_as<T>();
  const T *gh = in[3]->read_as<T>(), *c = in[4]->read_as<T>();
  T *dgates = out[0]->data_as<T>(), *dcp = out[1]->data_as<T>();
  std::copy(dc, dc + rows * h, dcp);  // the gradient reaching c', turned into c's in place
  std::vector<T> act(rows * 4 * h), c2(rows * h), hn(rows * h), tc(rows * h), zeros(4 * h);
  for_rows(rows, 4 * h, [&](int64_t b) {
    const T *x = gi + b * 4 * h, *y = gh + b * 4 * h;
    T* a = act.data() + b * 4 * h;
    for (int64_t j = 0; j < 4 * h; ++j) a[j] = x[j] + y[j];
    cell_units<T>(a, h, c + b * h, c2.data() + b * h, hn.data() + b * h, h);
    cell_units_grad<T>(dh + b * h, dcp + b * h, zeros.data(), c + b * h, c2.data() + b * h, a, h,
                       dgates + b * 4 * h, tc.data() + b * h, h);
  });
}

// Note [LSTM layer kernels]: a step's recurrent product (B rows, B the batch, often 16-64) is too
// short for a GEMM to share among threads (16x256 @ 256x1024: ~77 us on one core or two, 2-vCPU
// EPYC), so the layer kernels split the hidden units among the threads instead: each thread
// computes the four gates of its units with its own GEMM against its columns of W_hh^T (packed
// once per call, gate-major per thread), then their cell math; the threads meet once per step
// (the next product reads all of h). Backward meets twice per step: the gates' gradients of all
// units, then dh = d gates W_hh by column blocks.
struct UnitChunks {
  int64_t count, size;  // chunks of `size` units (the last may be shorter or empty)
  UnitChunks(int64_t h, int threads) {
    count = std::max<int64_t>(1, std::min<int64_t>(threads, h / 16));
    size = (h + count - 1) / count;
    size = (size + 7) / 8 * 8;
  }
  int64_t begin(int64_t k, int64_t h) const { return std::min(h, k * size); }
  int64_t end(int64_t k, int64_t h) const { return std::min(h, (k + 1) * size); }
};

// Runs body(tid, team) on every thread of a team of `threads` (on this thread alone for one).
template <typename F>
void in_team(int64_t threads, F&& body) {
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    body(omp_get_thread_num(), omp_get_num_threads());
  } else {
    body(0, 1);
  }
}

template <typename T>
void layer_forward(const TensorList& in, const TensorList& out, bool reverse) {
  const int64_t steps = in[0]->shape()[0], rows = in[0]->shape()[1], h = in[1]->shape()[1];
  const int64_t g = 4 * h, n = rows * h;
  const T *gi = in[0]->read_as<T>(), *h0 = in[1]->read_as<T>(), *c0 = in[2]->read_as<T>();
  const T *w = in[3]->read_as<T>(), *bias = in[4]->read_as<T>();
  T *hs = out[0]->data_as<T>(), *cs = out[1]->data_as<T>(), *act = out[2]->data_as<T>();
  if (steps * n == 0) return;
  const UnitChunks chunks(h, omp_get_max_threads());
  // per chunk [u0, u1): W_hh^T's columns of its units, gate-major, (H, 4 (u1 - u0)) at 4 u0 H
  std::vector<T> wt(g * h), gates(rows * g);
  for (int64_t k = 0; k < chunks.count; ++k) {
    const int64_t u0 = chunks.begin(k, h), m = chunks.end(k, h) - u0;
    T* wk = wt.data() + 4 * u0 * h;
    for (int64_t kk = 0; kk < h; ++kk)
      for (int64_t q = 0; q < 4; ++q)
        for (int64_t u = 0; u < m; ++u) wk[kk * 4 * m + q * m + u] = w[(q * h + u0 + u) * h + kk];
  }
  in_team(chunks.count, [&](int tid, int team) {
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = reverse ? steps - 1 - s : s, tp = reverse ? t + 1 : t - 1;
      const T* hp = s == 0 ? h0 : hs + tp * n;
      const T* cp = s == 0 ? c0 : cs + tp * n;
      for (int64_t k = tid; k < chunks.count; k += team) {
        const int64_t u0 = chunks.begin(k, h), m = chunks.end(k, h) - u0;
        if (m == 0) continue;
        T* gk = gates.data() + rows * 4 * u0;  // (B, 4m): this chunk's gates
        const T* x = gi + t * rows * g;
        for (int64_t b = 0; b < rows; ++b)
          for (int64_t q = 0; q < 4; ++q)
            for (int64_t u = 0; u < m; ++u)
              gk[b * 4 * m + q * m + u] = x[b * g + q * h + u0 + u] + bias[q * h + u0 + u];
        onednn::gemm(false, false, rows, 4 * m, h, T(1), hp, h, wt.data() + 4 * u0 * h, 4 * m, T(1),
                     gk, 4 * m);
        for (int64_t b = 0; b < rows; ++b) {
          T* a = gk + b * 4 * m;
          const int64_t o = t * n + b * h + u0;
          cell_units<T>(a, m, cp + b * h + u0, cs + o, hs + o, m);
          T* dst = act + t * rows * g + b * g + u0;
          for (int64_t q = 0; q < 4; ++q) std::copy(a + q * m, a + (q + 1) * m, dst + q * h);
        }
      }
      if (team > 1) {
#pragma omp barrier
      }
    }
  });
}

template <typename T>
void layer_backward(const TensorList& in, const TensorList& out, bool reverse) {
  const int64_t steps = in[8]->shape()[0], rows = in[8]->shape()[1], h = in[3]->shape()[1];
  const int64_t g = 4 * h, n = rows * h;
  const T *dout = in[0]->read_as<T>(), *dcs = in[1]->read_as<T>(), *dact = in[2]->read_as<T>();
  const T *h0 = in[3]->read_as<T>(), *c0 = in[4]->read_as<T>(), *w = in[5]->read_as<T>();
  const T *hs = in[6]->read_as<T>(), *cs = in[7]->read_as<T>(), *act = in[8]->read_as<T>();
  T *dgi = out[0]->data_as<T>(), *dh0 = out[1]->data_as<T>(), *dc0 = out[2]->data_as<T>();
  T *dw = out[3]->data_as<T>(), *db = out[4]->data_as<T>();
  std::fill(dc0, dc0 + n, T(0));  // the gradient reaching the current step's c'
  std::fill(db, db + g, T(0));
  std::vector<T> dh_next(n, T(0)), tc(n);
  if (steps * n == 0) {
    std::fill(dh0, dh0 + n, T(0));
    std::fill(dw, dw + g * h, T(0));
    std::fill(dgi, dgi + steps * rows * g, T(0));
    return;
  }
  const UnitChunks chunks(h, omp_get_max_threads());
  in_team(chunks.count, [&](int tid, int team) {
    for (int64_t s = steps - 1; s >= 0; --s) {
      const int64_t t = reverse ? steps - 1 - s : s, tp = reverse ? t + 1 : t - 1;
      const T* cp = s == 0 ? c0 : cs + tp * n;
      T* d = dgi + t * rows * g;
      for (int64_t k = tid; k < chunks.count; k += team) {
        const int64_t u0 = chunks.begin(k, h), m = chunks.end(k, h) - u0;
        for (int64_t b = 0; b < rows; ++b) {
          const int64_t o = b * h + u0, og = t * rows * g + b * g + u0;
          T* dh = dh_next.data() + o;  // becomes this step's whole dh
          for (int64_t j = 0; j < m; ++j) {
            dh[j] += dout[t * n + o + j];
            dc0[o + j] += dcs[t * n + o + j];
          }
          cell_units_grad<T>(dh, dc0 + o, dact + og, cp + o, cs + t * n + o, act + og, h, dgi + og,
                             tc.data() + o, m);
        }
      }
      if (team > 1) {
#pragma omp barrier
      }
      // dh for the step before: d gates W_hh, by column blocks
      for (int64_t k = tid; k < chunks.count; k += team) {
        const int64_t u0 = chunks.begin(k, h), m = chunks.end(k, h) - u0;
        if (m > 0)
          onednn::gemm(false, false, rows, m, g, T(1), d, g, w + u0, h, T(0), dh_next.data() + u0,
                       h);
      }
      if (team > 1) {
#pragma omp barrier
      }
    }
  });
  std::copy(dh_next.begin(), dh_next.end(), dh0);
  // W_hh's gradient: the first step's gates against h0, the others against the previous step's
  // h, which for the forward order are the outputs one step earlier in time, for the reverse
  // order one step later
  const int64_t first = reverse ? steps - 1 : 0;
  onednn::gemm(true, false, g, h, rows, T(1), dgi + first * rows * g, g, h0, h, T(0), dw, h);
  if (steps > 1) {
    const T* dg_rest = reverse ? dgi : dgi + rows * g;  // steps whose previous h is an output
    const T* h_rest = reverse ? hs + n : hs;
    onednn::gemm(true, false, g, h, (steps - 1) * rows, T(1), dg_rest, g, h_rest, h, T(1), dw, h);
  }
  for (int64_t r = 0; r < steps * rows; ++r) {
    const T* d = dgi + r * g;
    for (int64_t j = 0; j < g; ++j) db[j] += d[j];
  }
}

// GRU's step for `n` hidden units of one batch row: x the input's projection and a the recurrent
// one (gates `gs` apart; x's r, z, n, a's r, z, n with its bias) -> act (r, z, n, a's n, `as`
// apart) and h' = (1 - z) n + z h.
template <typename T>
void gru_units(const T* x, int64_t xs, const T* a, int64_t gs, const T* hp, T* act, int64_t as,
               T* hr, int64_t n) {
  T *r = act, *z = act + as, *nn = act + 2 * as, *hn = act + 3 * as;
  for (int64_t j = 0; j < n; ++j) {
    r[j] = x[j] + a[j];
    z[j] = x[xs + j] + a[gs + j];
    hn[j] = a[2 * gs + j];
  }
  apply<T>(UnaryFn::kSigmoid, r, r, n);
  apply<T>(UnaryFn::kSigmoid, z, z, n);
  for (int64_t j = 0; j < n; ++j) nn[j] = x[2 * xs + j] + r[j] * hn[j];
  apply<T>(UnaryFn::kTanh, nn, nn, n);
  for (int64_t j = 0; j < n; ++j) hr[j] = (T(1) - z[j]) * nn[j] + z[j] * hp[j];
}

// GRU's backward for `n` hidden units of one batch row: dh the gradient reaching h', da act's;
// writes the input projection's gradient dx (r, z, n), the recurrent one dg (r, z, n, `gs`
// apart) and the part of h's gradient that skips the product, dh z.
template <typename T>
void gru_units_grad(const T* dh, const T* da, const T* act, int64_t as, const T* hp, T* dx, T* dg,
                    int64_t gs, T* dhp, int64_t n) {
  const T *r = act, *z = act + as, *nn = act + 2 * as, *hn = act + 3 * as;
  for (int64_t j = 0; j < n; ++j) {
    const T dn = dh[j] * (T(1) - z[j]) + da[2 * as + j];
    const T dz = dh[j] * (hp[j] - nn[j]) + da[as + j];
    const T dn_pre = dn * (T(1) - nn[j] * nn[j]);
    const T dr = dn_pre * hn[j] + da[j];
    const T dr_pre = dr * r[j] * (T(1) - r[j]), dz_pre = dz * z[j] * (T(1) - z[j]);
    dx[j] = dg[j] = dr_pre;
    dx[gs + j] = dg[gs + j] = dz_pre;
    dx[2 * gs + j] = dn_pre;
    dg[2 * gs + j] = dn_pre * r[j] + da[3 * as + j];
    dhp[j] = dh[j] * z[j];
  }
}

// GruLayer, split among threads by hidden units as the LSTM's (Note [LSTM layer kernels]).
template <typename T>
void gru_forward(const TensorList& in, const TensorList& out, bool reverse) {
  const int64_t steps = in[0]->shape()[0], rows = in[0]->shape()[1], h = in[1]->shape()[1];
  const int64_t g = 3 * h, n = rows * h;
  const T *gi = in[0]->read_as<T>(), *h0 = in[1]->read_as<T>(), *w = in[2]->read_as<T>();
  const T* bias = in[3]->read_as<T>();
  T *hs = out[0]->data_as<T>(), *act = out[1]->data_as<T>();
  if (steps * n == 0) return;
  const UnitChunks chunks(h, omp_get_max_threads());
  // per chunk [u0, u1): W_hh^T's columns of its units, gate-major, (H, 3 (u1 - u0)) at 3 u0 H
  std::vector<T> wt(g * h), gates(rows * g);
  for (int64_t k = 0; k < chunks.count; ++k) {
    const int64_t u0 = chunks.begin(k, h), m = chunks.end(k, h) - u0;
    T* wk = wt.data() + 3 * u0 * h;
    for (int64_t kk = 0; kk < h; ++kk)
      for (int64_t q = 0; q < 3; ++q)
        for (int64_t u = 0; u < m; ++u) wk[kk * 3 * m + q * m + u] = w[(q * h + u0 + u) * h + kk];
  }
  in_team(chunks.count, [&](int tid, int team) {
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = reverse ? steps - 1 - s : s, tp = reverse ? t + 1 : t - 1;
      const T* hp = s == 0 ? h0 : hs + tp * n;
      for (int64_t k = tid; k < chunks.count; k += team) {
        const int64_t u0 = chunks.begin(k, h), m = chunks.end(k, h) - u0;
        if (m == 0) continue;
        T* gk = gates.data() + rows * 3 * u0;  // (B, 3m): the recurrent projection
        for (int64_t b = 0; b < rows; ++b)
          for (int64_t q = 0; q < 3; ++q)
            std::copy(bias + q * h + u0, bias + q * h + u0 + m, gk + b * 3 * m + q * m);
        onednn::gemm(false, false, rows, 3 * m, h, T(1), hp, h, wt.data() + 3 * u0 * h, 3 * m, T(1),
                     gk, 3 * m);
        for (int64_t b = 0; b < rows; ++b)
          gru_units<T>(gi + t * rows * g + b * g + u0, h, gk + b * 3 * m, m, hp + b * h + u0,
                       act + t * rows * 4 * h + b * 4 * h + u0, h, hs + t * n + b * h + u0, m);
      }
      if (team > 1) {
#pragma omp barrier
      }
    }
  });
}

template <typename T>
void gru_backward(const TensorList& in, const TensorList& out, bool reverse) {
  const int64_t steps = in[5]->shape()[0], rows = in[5]->shape()[1], h = in[2]->shape()[1];
  const int64_t g = 3 * h, n = rows * h;
  const T *dout = in[0]->read_as<T>(), *dact = in[1]->read_as<T>(), *h0 = in[2]->read_as<T>();
  const T *w = in[3]->read_as<T>(), *hs = in[4]->read_as<T>(), *act = in[5]->read_as<T>();
  T *dgi = out[0]->data_as<T>(), *dh0 = out[1]->data_as<T>(), *dw = out[2]->data_as<T>();
  T* db = out[3]->data_as<T>();
  std::fill(db, db + g, T(0));
  std::vector<T> dh_next(n, T(0)), dgh(steps * rows * g);  // the recurrent projection's gradient
  if (steps * n == 0) {
    std::fill(dh0, dh0 + n, T(0));
    std::fill(dw, dw + g * h, T(0));
    std::fill(dgi, dgi + steps * rows * g, T(0));
    return;
  }
  std::vector<T> skip(n);  // dh z: the part of h's gradient that skips the product
  const UnitChunks chunks(h, omp_get_max_threads());
  in_team(chunks.count, [&](int tid, int team) {
    for (int64_t s = steps - 1; s >= 0; --s) {
      const int64_t t = reverse ? steps - 1 - s : s, tp = reverse ? t + 1 : t - 1;
      const T* hp = s == 0 ? h0 : hs + tp * n;
      for (int64_t k = tid; k < chunks.count; k += team) {
        const int64_t u0 = chunks.begin(k, h), m = chunks.end(k, h) - u0;
        for (int64_t b = 0; b < rows; ++b) {
          const int64_t o = b * h + u0, og = t * rows * g + b * g + u0;
          const int64_t oa = t * rows * 4 * h + b * 4 * h + u0;
          T* dh = dh_next.data() + o;  // becomes this step's whole dh
          for (int64_t j = 0; j < m; ++j) dh[j] += dout[t * n + o + j];
          gru_units_grad<T>(dh, dact + oa, act + oa, h, hp + o, dgi + og, dgh.data() + og, h,
                            skip.data() + o, m);
        }
      }
      if (team > 1) {
#pragma omp barrier
      }
      // dh for the step before: dh z + d gh W_hh, by column blocks
      const T* d = dgh.data() + t * rows * g;
      for (int64_t k = tid; k < chunks.count; k += team) {
        const int64_t u0 = chunks.begin(k, h), m = chunks.end(k, h) - u0;
        if (m == 0) continue;
        for (int64_t b = 0; b < rows; ++b)
          std::copy(skip.data() + b * h + u0, skip.data() + b * h + u0 + m,
                    dh_next.data() + b * h + u0);
        onednn::gemm(false, false, rows, m, g, T(1), d, g, w + u0, h, T(1), dh_next.data() + u0, h);
      }
      if (team > 1) {
#pragma omp barrier
      }
    }
  });
  std::copy(dh_next.begin(), dh_next.end(), dh0);
  const int64_t first = reverse ? steps - 1 : 0;
  onednn::gemm(true, false, g, h, rows, T(1), dgh.data() + first * rows * g, g, h0, h, T(0), dw, h);
  if (steps > 1) {
    const T* dg_rest = reverse ? dgh.data() : dgh.data() + rows * g;
    const T* h_rest = reverse ? hs + n : hs;
    onednn::gemm(true, false, g, h, (steps - 1) * rows, T(1), dg_rest, g, h_rest, h, T(1), dw, h);
  }
  for (int64_t r = 0; r < steps * rows; ++r) {
    const T* d = dgh.data() + r * g;
    for (int64_t j = 0; j < g; ++j) db[j] += d[j];
  }
}

}  // namespace

void GruLayer::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const bool reverse = attrs.get<bool>("reverse");
  if (in[0]->dtype() == DType::kFloat64)
    gru_forward<double>(in, out, reverse);
  else
    gru_forward<float>(in, out, reverse);
}

void GruLayer::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the CUDA kernel is not implemented yet");
}

void GruLayerGrad::compute_cpu(const TensorList& in, const TensorList& out,
                               const Attrs& attrs) const {
  const bool reverse = attrs.get<bool>("reverse");
  if (in[5]->dtype() == DType::kFloat64)
    gru_backward<double>(in, out, reverse);
  else
    gru_backward<float>(in, out, reverse);
}

void GruLayerGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the CUDA kernel is not implemented yet");
}

void LstmLayer::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const bool reverse = attrs.get<bool>("reverse");
  if (in[0]->dtype() == DType::kFloat64)
    layer_forward<double>(in, out, reverse);
  else
    layer_forward<float>(in, out, reverse);
}

void LstmLayer::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the CUDA kernel is not implemented yet");
}

void LstmLayerGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  const bool reverse = attrs.get<bool>("reverse");
  if (in[8]->dtype() == DType::kFloat64)
    layer_backward<double>(in, out, reverse);
  else
    layer_backward<float>(in, out, reverse);
}

void LstmLayerGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the CUDA kernel is not implemented yet");
}

void LstmCell::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  if (in[2]->dtype() == DType::kFloat64)
    cell_forward<double>(in, out);
  else
    cell_forward<float>(in, out);
}

void LstmCell::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the CUDA kernel is not implemented yet");
}

void LstmCellGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  if (in[4]->dtype() == DType::kFloat64)
    cell_backward<double>(in, out);
  else
    cell_backward<float>(in, out);
}

void LstmCellGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the CUDA kernel is not implemented yet");
}

}  // namespace oneflow
