// CPU kernels of the unary math primitives (exp, gelu, gelu_grad) and softmax. Contiguous float
// and double runs go through Sleef's vector functions (4 float / 2 double lanes, SSE2 baseline),
// 16-bit floats through the float ones in chunks (unary_sleef); strided float and double runs
// compute element by element. float32 softmax and
// log_softmax (forward and backward) run on oneDNN (onednn/softmax.cpp); the loops here take
// float64 and the 16-bit floats.
#include <sleef.h>

#include <algorithm>
#include <cmath>

#include "oneflow/core/kernels/common/layouts.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/elementwise_fns.h"
#include "oneflow/core/kernels/cpu/onednn/kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;      // 1/sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1/sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2/pi)
constexpr double kGeluCubic = 0.044715;

// erf for 4 floats by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7, below float32's
// resolution of 1 + erf): about 8x faster than Sleef's erff, which computes to 1 ulp.
inline __m128 erf_ps(__m128 x) {
  const __m128 sign = _mm_and_ps(x, _mm_set1_ps(-0.0f));
  const __m128 a = _mm_andnot_ps(_mm_set1_ps(-0.0f), x);
  const __m128 t = _mm_div_ps(
      _mm_set1_ps(1.0f), _mm_add_ps(_mm_set1_ps(1.0f), _mm_mul_ps(_mm_set1_ps(0.3275911f), a)));
  __m128 poly = _mm_set1_ps(1.061405429f);
  poly = _mm_add_ps(_mm_mul_ps(poly, t), _mm_set1_ps(-1.453152027f));
  poly = _mm_add_ps(_mm_mul_ps(poly, t), _mm_set1_ps(1.421413741f));
  poly = _mm_add_ps(_mm_mul_ps(poly, t), _mm_set1_ps(-0.284496736f));
  poly = _mm_add_ps(_mm_mul_ps(poly, t), _mm_set1_ps(0.254829592f));
  poly = _mm_mul_ps(poly, t);
  const __m128 e = Sleef_expf4_u10(_mm_sub_ps(_mm_setzero_ps(), _mm_mul_ps(a, a)));
  const __m128 y = _mm_sub_ps(_mm_set1_ps(1.0f), _mm_mul_ps(poly, e));
  return _mm_or_ps(y, sign);
}

template <typename C>
C gelu_scalar(C x, bool tanh_form) {
  if (tanh_form) {
    C u = C(kSqrt2OverPi) * (x + C(kGeluCubic) * x * x * x);
    return C(0.5) * x * (C(1) + std::tanh(u));
  }
  return C(0.5) * x * (C(1) + std::erf(x * C(kSqrt1_2)));
}

template <typename C>
C gelu_grad_scalar(C dy, C x, bool tanh_form) {
  if (tanh_form) {
    C k = C(kSqrt2OverPi);
    C u = k * (x + C(kGeluCubic) * x * x * x);
    C t = std::tanh(u);
    C du = k * (C(1) + C(3 * kGeluCubic) * x * x);
    return dy * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * du);
  }
  C cdf = C(0.5) * (C(1) + std::erf(x * C(kSqrt1_2)));
  C pdf = C(kInvSqrt2Pi) * std::exp(C(-0.5) * x * x);
  return dy * (cdf + x * pdf);
}

}  // namespace

void Exp::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      unary_sleef<T>(
          in[0], out[0], [](auto x) { return std::exp(x); },
          [](__m128 v) { return Sleef_expf4_u10(v); }, [](__m128d v) { return Sleef_expd2_u10(v); },
          cpu::avx2::exp_kernel());
  });
}

namespace {
void gelu_erf_avx2(const float* x, float* y, int64_t n) { cpu::avx2::gelu(x, y, n, false); }
void gelu_tanh_avx2(const float* x, float* y, int64_t n) { cpu::avx2::gelu(x, y, n, true); }
}  // namespace

void Gelu::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const bool tanh_form = attrs.get<std::string>("approximate") == "tanh";
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      auto sc = [tanh_form](auto x) { return gelu_scalar(x, tanh_form); };
      if (tanh_form) {
        unary_sleef<T>(
            in[0], out[0], sc,
            [](__m128 x) {
              __m128 x3 = _mm_mul_ps(_mm_mul_ps(x, x), x);
              __m128 u = _mm_mul_ps(_mm_set1_ps(float(kSqrt2OverPi)),
                                    _mm_add_ps(x, _mm_mul_ps(_mm_set1_ps(float(kGeluCubic)), x3)));
              __m128 t = Sleef_tanhf4_u10(u);
              return _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(0.5f), x), _mm_add_ps(_mm_set1_ps(1.f), t));
            },
            [](__m128d x) {
              __m128d x3 = _mm_mul_pd(_mm_mul_pd(x, x), x);
              __m128d u = _mm_mul_pd(_mm_set1_pd(kSqrt2OverPi),
                                     _mm_add_pd(x, _mm_mul_pd(_mm_set1_pd(kGeluCubic), x3)));
              __m128d t = Sleef_tanhd2_u10(u);
              return _mm_mul_pd(_mm_mul_pd(_mm_set1_pd(0.5), x), _mm_add_pd(_mm_set1_pd(1.), t));
            },
            &gelu_tanh_avx2);
      } else {
        unary_sleef<T>(
            in[0], out[0], sc,
            [](__m128 x) {
              __m128 e = erf_ps(_mm_mul_ps(x, _mm_set1_ps(float(kSqrt1_2))));
              return _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(0.5f), x), _mm_add_ps(_mm_set1_ps(1.f), e));
            },
            [](__m128d x) {
              __m128d e = Sleef_erfd2_u10(_mm_mul_pd(x, _mm_set1_pd(kSqrt1_2)));
              return _mm_mul_pd(_mm_mul_pd(_mm_set1_pd(0.5), x), _mm_add_pd(_mm_set1_pd(1.), e));
            },
            &gelu_erf_avx2);
      }
    }
  });
}

void GeluGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const bool tanh_form = attrs.get<std::string>("approximate") == "tanh";
  const Tensor &x = in[1], &dx = out[0];
  if (dx->dtype() == DType::kFloat32 && cpu::avx2::has_avx2() && x->is_contiguous() &&
      dx->is_contiguous() && x->shape() == dx->shape() && in[0]->shape() == dx->shape()) {
    Tensor dy = in[0];
    if (!dy->is_contiguous()) {  // e.g. the expanded gradient of a sum
      Tensor dense = empty_tensor(dx->shape(), DType::kFloat32, dx->device());
      copy_cpu(dy, dense);
      dy = dense;
    }
    const float* g = dy->data_as<float>();
    const float* v = x->data_as<float>();
    float* o = dx->data_as<float>();
    const int64_t n = dx->numel(), chunk = 1 << 14;
    OF_OMP_FOR_IF(n > cpu::kParallelGrain, schedule(static),
                  for (int64_t b = 0; b < n; b += chunk) cpu::avx2::gelu_grad(
                      g + b, v + b, o + b, std::min(chunk, n - b), tanh_form););
    return;
  }
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      cpu::binary_loop<T>(in[0], in[1], out[0], [tanh_form](auto dy, auto x) {
        return gelu_grad_scalar(dy, x, tanh_form);
      });
  });
}

namespace {

// exp(x - m) of n contiguous elements into y, returning their sum.
template <typename T>
double exp_shifted(const T* x, T* y, int64_t n, compute_t<T> m) {
  using C = compute_t<T>;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    C e = std::exp(C(x[i]) - m);
    y[i] = T(e);
    total += double(e);
  }
  return total;
}

// exp of n contiguous elements in place (Sleef vectors for float and double).
template <typename T>
void exp_inplace(T* p, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu::avx2::has_avx2()) return cpu::avx2::exp_kernel()(p, p, n);
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(p + i, Sleef_expf4_u10(_mm_loadu_ps(p + i)));
  } else if constexpr (std::is_same_v<T, double>) {
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(p + i, Sleef_expd2_u10(_mm_loadu_pd(p + i)));
  }
  for (; i < n; ++i) p[i] = std::exp(p[i]);
}

// Softmax along a dim with contiguous dims after it (inner > 1): the elements of one row are
// `inner` apart, but for a fixed (outer, i) a run of inner elements is contiguous. So the
// statistics of `width` rows side by side are vectors, and every pass walks contiguous runs.
// Work items are (outer, block of inner) pairs.
constexpr int64_t kInnerBlock = 512;

template <typename T>
void softmax_inner(const T* x, T* y, const Rows& r, bool log) {
  const int64_t blocks = (r.inner + kInnerBlock - 1) / kInnerBlock, work = r.outer * blocks;
  OF_OMP_FOR_IF(
      r.outer * r.n * r.inner > cpu::kParallelGrain, schedule(static),
      for (int64_t w = 0; w < work; ++w) {
        const int64_t o = w / blocks, k0 = (w % blocks) * kInnerBlock;
        const int64_t width = std::min(kInnerBlock, r.inner - k0);
        const T* xb = x + o * r.n * r.inner + k0;
        T* yb = y + o * r.n * r.inner + k0;
        if constexpr (std::is_same_v<T, float>) {
          static_assert(kInnerBlock <= cpu::avx2::kSoftmaxColumns);
          if (cpu::avx2::has_avx2()) {
            cpu::avx2::softmax_columns(xb, yb, r.n, r.inner, width, log);
            continue;
          }
        }
        T m[kInnerBlock], s[kInnerBlock];
        for (int64_t k = 0; k < width; ++k) m[k] = xb[k];
        for (int64_t i = 1; i < r.n; ++i) {
          const T* xr = xb + i * r.inner;
          for (int64_t k = 0; k < width; ++k) m[k] = xr[k] > m[k] || xr[k] != xr[k] ? xr[k] : m[k];
        }
        // A row of -inf gives a NaN row (0 * inf, -inf - -inf); a +inf maximum makes x - m NaN
        // for that element and so the row NaN: both as PyTorch.
        for (int64_t k = 0; k < width; ++k) {
          if (std::isinf(m[k]) && m[k] < 0) m[k] = 0;
          s[k] = 0;
        }
        T e[kInnerBlock];
        for (int64_t i = 0; i < r.n; ++i) {
          const T* xr = xb + i * r.inner;
          T* yr = log ? e : yb + i * r.inner;  // log_softmax needs only the sums
          for (int64_t k = 0; k < width; ++k) yr[k] = xr[k] - m[k];
          exp_inplace(yr, width);
          for (int64_t k = 0; k < width; ++k) s[k] += yr[k];
        }
        if (log) {
          for (int64_t k = 0; k < width; ++k) s[k] = m[k] + std::log(s[k]);
          for (int64_t i = 0; i < r.n; ++i) {
            const T* xr = xb + i * r.inner;
            T* yr = yb + i * r.inner;
            for (int64_t k = 0; k < width; ++k) yr[k] = xr[k] - s[k];
          }
        } else {
          for (int64_t k = 0; k < width; ++k) s[k] = T(1) / s[k];
          for (int64_t i = 0; i < r.n; ++i) {
            T* yr = yb + i * r.inner;
            for (int64_t k = 0; k < width; ++k) yr[k] *= s[k];
          }
        }
      });
}

// softmax_grad: dx = y (dy - sum(dy y)); log_softmax_grad: dx = dy - exp(y) sum(dy); rows as in
// softmax_inner.
template <typename T>
void softmax_grad_inner(const T* dy, const T* y, T* dx, const Rows& r, bool log) {
  const int64_t blocks = (r.inner + kInnerBlock - 1) / kInnerBlock, work = r.outer * blocks;
  OF_OMP_FOR_IF(
      r.outer * r.n * r.inner > cpu::kParallelGrain, schedule(static),
      for (int64_t w = 0; w < work; ++w) {
        const int64_t o = w / blocks, k0 = (w % blocks) * kInnerBlock;
        const int64_t width = std::min(kInnerBlock, r.inner - k0);
        const int64_t base = o * r.n * r.inner + k0;
        if constexpr (std::is_same_v<T, float>) {
          if (cpu::avx2::has_avx2()) {
            cpu::avx2::softmax_grad_columns(dy + base, y + base, dx + base, r.n, r.inner, width,
                                            log);
            continue;
          }
        }
        T s[kInnerBlock] = {};
        for (int64_t i = 0; i < r.n; ++i) {
          const T* g = dy + base + i * r.inner;
          const T* v = y + base + i * r.inner;
          if (log)
            for (int64_t k = 0; k < width; ++k) s[k] += g[k];
          else
            for (int64_t k = 0; k < width; ++k) s[k] += g[k] * v[k];
        }
        for (int64_t i = 0; i < r.n; ++i) {
          const T* g = dy + base + i * r.inner;
          const T* v = y + base + i * r.inner;
          T* d = dx + base + i * r.inner;
          if (log) {
            for (int64_t k = 0; k < width; ++k) d[k] = v[k];
            exp_inplace(d, width);
            for (int64_t k = 0; k < width; ++k) d[k] = g[k] - d[k] * s[k];
          } else {
            for (int64_t k = 0; k < width; ++k) d[k] = v[k] * (g[k] - s[k]);
          }
        }
      });
}

// Runs the inner-dim kernels for float and double when the softmax dim has contiguous dims
// after it; false otherwise (the caller's row kernels take it).
bool softmax_inner_forward(const Tensor& x, const Tensor& y, int64_t dim, bool log) {
  const Rows r = rows_around(x->shape(), dim);
  if (r.inner == 1 || x->numel() == 0) return false;
  return visit_dtype(y->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      softmax_inner(x->data_as<T>(), y->data_as<T>(), r, log);
      return true;
    }
    return false;
  });
}

bool softmax_inner_backward(const Tensor& dy, const Tensor& y, const Tensor& dx, int64_t dim,
                            bool log) {
  const Rows r = rows_around(y->shape(), dim);
  if (r.inner == 1 || y->numel() == 0) return false;
  return visit_dtype(dx->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      softmax_grad_inner(dy->data_as<T>(), y->data_as<T>(), dx->data_as<T>(), r, log);
      return true;
    }
    return false;
  });
}

// A row of n 16-bit floats widened into this thread's float buffer (`slot` of three rows).
template <typename T>
float* widened(const T* p, int64_t n, int slot) {
  thread_local std::vector<float> buf;
  if (buf.size() < static_cast<size_t>(3 * n)) buf.resize(static_cast<size_t>(3 * n));
  float* b = buf.data() + slot * n;
  if (p != nullptr)
    for (int64_t i = 0; i < n; ++i) b[i] = float(p[i]);
  return b;
}

// 16-bit float rows along the last dim: each row widened to float for the float32 kernel below
// and rounded back once (PyTorch computes them in float too); 4.5-6x faster than the element loop.
template <typename T>
void softmax_rows_16bit(const T* xp, T* yp, const Rows& r, bool log) {
  OF_OMP_FOR_IF(
      r.outer * r.n > cpu::kParallelGrain && r.outer > 1, schedule(static),
      for (int64_t o = 0; o < r.outer; ++o) {
        const float* xb = widened(xp + o * r.n, r.n, 0);
        float* yb = widened<T>(nullptr, r.n, 1);
        cpu::avx2::softmax_row(xb, yb, r.n, log);
        for (int64_t i = 0; i < r.n; ++i) yp[o * r.n + i] = T(yb[i]);
      });
}

template <typename T>
void softmax_grad_rows_16bit(const T* g, const T* yp, T* d, const Rows& r, bool log) {
  OF_OMP_FOR_IF(
      r.outer * r.n > cpu::kParallelGrain && r.outer > 1, schedule(static),
      for (int64_t o = 0; o < r.outer; ++o) {
        const float* gb = widened(g + o * r.n, r.n, 0);
        const float* yb = widened(yp + o * r.n, r.n, 1);
        float* db = widened<T>(nullptr, r.n, 2);
        cpu::avx2::softmax_grad_row(gb, yb, db, r.n, log);
        for (int64_t i = 0; i < r.n; ++i) d[o * r.n + i] = T(db[i]);
      });
}

// float32 rows along the last dim on AVX2: one pass for the max, one for the exponentials and
// their sum, one to normalise (the row stays in L1 between them). 16-bit floats: through float.
bool softmax_rows_avx2(const Tensor& x, const Tensor& y, int64_t dim, bool log) {
  const Rows r = rows_around(x->shape(), dim);
  if (r.inner != 1 || !cpu::avx2::has_avx2() || x->numel() == 0) return false;
  if (y->dtype() == DType::kBFloat16 || y->dtype() == DType::kFloat16) {
    visit_dtype(y->dtype(), [&]<typename T>() {
      if constexpr (is_16bit_float<T>) softmax_rows_16bit(x->data_as<T>(), y->data_as<T>(), r, log);
    });
    return true;
  }
  if (y->dtype() != DType::kFloat32) return false;
  const float* xp = x->data_as<float>();
  float* yp = y->data_as<float>();
  OF_OMP_FOR_IF(r.outer * r.n > cpu::kParallelGrain && r.outer > 1, schedule(static),
                for (int64_t o = 0; o < r.outer; ++o)
                    cpu::avx2::softmax_row(xp + o * r.n, yp + o * r.n, r.n, log););
  return true;
}

bool softmax_grad_rows_avx2(const Tensor& dy, const Tensor& y, const Tensor& dx, int64_t dim,
                            bool log) {
  const Rows r = rows_around(y->shape(), dim);
  if (r.inner != 1 || !cpu::avx2::has_avx2() || y->numel() == 0) return false;
  if (dx->dtype() == DType::kBFloat16 || dx->dtype() == DType::kFloat16) {
    visit_dtype(dx->dtype(), [&]<typename T>() {
      if constexpr (is_16bit_float<T>)
        softmax_grad_rows_16bit(dy->data_as<T>(), y->data_as<T>(), dx->data_as<T>(), r, log);
    });
    return true;
  }
  if (dx->dtype() != DType::kFloat32) return false;
  const float* g = dy->data_as<float>();
  const float* yp = y->data_as<float>();
  float* d = dx->data_as<float>();
  OF_OMP_FOR_IF(r.outer * r.n > cpu::kParallelGrain && r.outer > 1, schedule(static),
                for (int64_t o = 0; o < r.outer; ++o)
                    cpu::avx2::softmax_grad_row(g + o * r.n, yp + o * r.n, d + o * r.n, r.n, log););
  return true;
}

}  // namespace

void Softmax::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (softmax_inner_forward(in[0], out[0], attrs.get<int64_t>("dim"), false)) return;
  if (softmax_rows_avx2(in[0], out[0], attrs.get<int64_t>("dim"), false)) return;
  if (out[0]->dtype() == DType::kFloat32)
    return onednn::softmax_forward(in[0], out[0], attrs.get<int64_t>("dim"), false);
  const Rows r = rows_around(in[0]->shape(), attrs.get<int64_t>("dim"));
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* x = in[0]->data_as<T>();
      T* y = out[0]->data_as<T>();
      const int64_t work = r.outer * r.inner;
      OF_OMP_FOR_IF(
          work * r.n > cpu::kParallelGrain && work > 1, schedule(static),
          for (int64_t w = 0; w < work; ++w) {
            const int64_t o = w / r.inner, k = w % r.inner;
            const T* xr = x + o * r.n * r.inner + k;
            T* yr = y + o * r.n * r.inner + k;
            if (r.n == 0) continue;
            C m = C(xr[0]);
            for (int64_t i = 1; i < r.n; ++i) {
              C v = C(xr[i * r.inner]);
              m = v > m || std::isnan(v) ? v : m;
            }
            if (std::isinf(m) && m < 0) m = 0;  // a row of -inf gives nan, as in PyTorch
            double total;
            if (r.inner == 1) {
              total = exp_shifted(xr, yr, r.n, m);
            } else {
              total = 0;
              for (int64_t i = 0; i < r.n; ++i) {
                C e = std::exp(C(xr[i * r.inner]) - m);
                yr[i * r.inner] = T(e);
                total += double(e);
              }
            }
            const C inv = C(1.0 / total);
            for (int64_t i = 0; i < r.n; ++i) yr[i * r.inner] = T(C(yr[i * r.inner]) * inv);
          });
    }
  });
}

void LogSoftmax::compute_cpu(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  if (softmax_inner_forward(in[0], out[0], attrs.get<int64_t>("dim"), true)) return;
  if (softmax_rows_avx2(in[0], out[0], attrs.get<int64_t>("dim"), true)) return;
  // (not oneDNN's: it subtracts max + log(sum) rounded to one value, an ulp of the max away from
  // PyTorch's (x - max) - log(sum), which the loop below keeps)
  const Rows r = rows_around(in[0]->shape(), attrs.get<int64_t>("dim"));
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* x = in[0]->data_as<T>();
      T* y = out[0]->data_as<T>();
      const int64_t work = r.outer * r.inner;
      OF_OMP_FOR_IF(
          work * r.n > cpu::kParallelGrain && work > 1, schedule(static),
          for (int64_t w = 0; w < work; ++w) {
            if (r.n == 0) continue;
            const int64_t o = w / r.inner, k = w % r.inner;
            const T* xr = x + o * r.n * r.inner + k;
            T* yr = y + o * r.n * r.inner + k;
            C m = C(xr[0]);
            for (int64_t i = 1; i < r.n; ++i) {
              const C v = C(xr[i * r.inner]);
              m = v > m || std::isnan(v) ? v : m;
            }
            if (std::isinf(m)) m = m < 0 ? C(0) : m;
            double total = r.inner == 1 ? exp_shifted(xr, yr, r.n, m) : 0.0;
            if (r.inner != 1)
              for (int64_t i = 0; i < r.n; ++i) total += std::exp(double(C(xr[i * r.inner]) - m));
            const C lse = C(std::log(total));
            for (int64_t i = 0; i < r.n; ++i) yr[i * r.inner] = T((C(xr[i * r.inner]) - m) - lse);
          });
    }
  });
}

void LogSoftmaxGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                 const Attrs& attrs) const {
  if (softmax_inner_backward(in[0], in[1], out[0], attrs.get<int64_t>("dim"), true)) return;
  if (softmax_grad_rows_avx2(in[0], in[1], out[0], attrs.get<int64_t>("dim"), true)) return;
  if (out[0]->dtype() == DType::kFloat32)
    return onednn::softmax_backward(in[0], in[1], out[0], attrs.get<int64_t>("dim"), true);
  const Rows r = rows_around(in[1]->shape(), attrs.get<int64_t>("dim"));
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* dy = in[0]->data_as<T>();
      const T* y = in[1]->data_as<T>();
      T* dx = out[0]->data_as<T>();
      const int64_t work = r.outer * r.inner;
      OF_OMP_FOR_IF(
          work * r.n > cpu::kParallelGrain && work > 1, schedule(static),
          for (int64_t w = 0; w < work; ++w) {
            const int64_t base = (w / r.inner) * r.n * r.inner + w % r.inner;
            double total = 0;
            for (int64_t i = 0; i < r.n; ++i) total += double(C(dy[base + i * r.inner]));
            const C s = C(total);
            for (int64_t i = 0; i < r.n; ++i) {
              const int64_t j = base + i * r.inner;
              dx[j] = T(C(dy[j]) - std::exp(C(y[j])) * s);
            }
          });
    }
  });
}

void SoftmaxGrad::compute_cpu(const TensorList& in, const TensorList& out,
                              const Attrs& attrs) const {
  if (softmax_inner_backward(in[0], in[1], out[0], attrs.get<int64_t>("dim"), false)) return;
  if (softmax_grad_rows_avx2(in[0], in[1], out[0], attrs.get<int64_t>("dim"), false)) return;
  if (out[0]->dtype() == DType::kFloat32)
    return onednn::softmax_backward(in[0], in[1], out[0], attrs.get<int64_t>("dim"), false);
  const Rows r = rows_around(in[1]->shape(), attrs.get<int64_t>("dim"));
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const T* dy = in[0]->data_as<T>();
      const T* y = in[1]->data_as<T>();
      T* dx = out[0]->data_as<T>();
      const int64_t work = r.outer * r.inner;
      OF_OMP_FOR_IF(
          work * r.n > cpu::kParallelGrain && work > 1, schedule(static),
          for (int64_t w = 0; w < work; ++w) {
            const int64_t base = (w / r.inner) * r.n * r.inner + w % r.inner;
            double dot = 0;
            for (int64_t i = 0; i < r.n; ++i)
              dot += double(C(dy[base + i * r.inner])) * double(C(y[base + i * r.inner]));
            for (int64_t i = 0; i < r.n; ++i) {
              const int64_t j = base + i * r.inner;
              dx[j] = T(C(y[j]) * (C(dy[j]) - C(dot)));
            }
          });
    }
  });
}

}  // namespace oneflow
