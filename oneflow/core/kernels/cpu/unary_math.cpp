// CPU kernels of the unary math primitives (exp, gelu, gelu_grad) and softmax. Contiguous float
// and double runs go through Sleef's vector functions (4 float / 2 double lanes, SSE2 baseline);
// 16-bit floats and strided runs compute element by element in float. float32 softmax and
// log_softmax (forward and backward) run on oneDNN (onednn/softmax.cpp); the loops here take
// float64 and the 16-bit floats.
#include <sleef.h>

#include <algorithm>
#include <cmath>

#include "oneflow/core/kernels/common/layouts.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/onednn/kernels.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;      // 1/sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1/sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2/pi)
constexpr double kGeluCubic = 0.044715;

// out = f(a). `vf(__m128)` and `vd(__m128d)` are the Sleef forms used on contiguous float and
// double runs; `sc(C)` is the scalar form. `fast(x, y, n)`, when given, replaces the float
// vector loop on CPUs with AVX2 (kernels/cpu/vec/avx2.h).
template <typename T, typename Scalar, typename VecF, typename VecD>
void unary_sleef(const Tensor& a, const Tensor& out, Scalar sc, VecF vf, VecD vd,
                 cpu::avx2::UnaryKernel fast = nullptr) {
  if (!cpu::avx2::has_avx2()) fast = nullptr;
  using C = compute_t<T>;
  const Shape& shape = out->shape();
  std::array<std::vector<int64_t>, 2> strides = {cpu::broadcast_byte_strides(out, shape),
                                                 cpu::broadcast_byte_strides(a, shape)};
  std::array<char*, 2> ptrs = {static_cast<char*>(out->data()), static_cast<char*>(a->data())};
  constexpr int64_t sz = sizeof(T);
  cpu::strided_loop<2>(shape, strides, ptrs, [&](std::array<char*, 2> p, const auto& s, int64_t n) {
    T* o = reinterpret_cast<T*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    int64_t i = 0;
    if (s[0] == sz && s[1] == sz) {
      if constexpr (std::is_same_v<T, float>) {
        if (fast) {
          fast(x, o, n);
          return;
        }
        for (; i + 4 <= n; i += 4) _mm_storeu_ps(o + i, vf(_mm_loadu_ps(x + i)));
      } else if constexpr (std::is_same_v<T, double>) {
        for (; i + 2 <= n; i += 2) _mm_storeu_pd(o + i, vd(_mm_loadu_pd(x + i)));
      }
      for (; i < n; ++i) o[i] = T(sc(C(x[i])));
    } else {
      for (; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            T(sc(C(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
    }
  });
}

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
#pragma omp parallel for schedule(static) if (n > cpu::kParallelGrain)
    for (int64_t b = 0; b < n; b += chunk)
      cpu::avx2::gelu_grad(g + b, v + b, o + b, std::min(chunk, n - b), tanh_form);
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
#pragma omp parallel for schedule(static) if (r.outer * r.n * r.inner > cpu::kParallelGrain)
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
  }
}

// softmax_grad: dx = y (dy - sum(dy y)); log_softmax_grad: dx = dy - exp(y) sum(dy); rows as in
// softmax_inner.
template <typename T>
void softmax_grad_inner(const T* dy, const T* y, T* dx, const Rows& r, bool log) {
  const int64_t blocks = (r.inner + kInnerBlock - 1) / kInnerBlock, work = r.outer * blocks;
#pragma omp parallel for schedule(static) if (r.outer * r.n * r.inner > cpu::kParallelGrain)
  for (int64_t w = 0; w < work; ++w) {
    const int64_t o = w / blocks, k0 = (w % blocks) * kInnerBlock;
    const int64_t width = std::min(kInnerBlock, r.inner - k0);
    const int64_t base = o * r.n * r.inner + k0;
    if constexpr (std::is_same_v<T, float>) {
      if (cpu::avx2::has_avx2()) {
        cpu::avx2::softmax_grad_columns(dy + base, y + base, dx + base, r.n, r.inner, width, log);
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
  }
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

// float32 rows along the last dim on AVX2: one pass for the max, one for the exponentials and
// their sum, one to normalise (the row stays in L1 between them).
bool softmax_rows_avx2(const Tensor& x, const Tensor& y, int64_t dim, bool log) {
  const Rows r = rows_around(x->shape(), dim);
  if (y->dtype() != DType::kFloat32 || r.inner != 1 || !cpu::avx2::has_avx2()) return false;
  const float* xp = x->data_as<float>();
  float* yp = y->data_as<float>();
#pragma omp parallel for schedule(static) if (r.outer * r.n > cpu::kParallelGrain && r.outer > 1)
  for (int64_t o = 0; o < r.outer; ++o)
    cpu::avx2::softmax_row(xp + o * r.n, yp + o * r.n, r.n, log);
  return true;
}

bool softmax_grad_rows_avx2(const Tensor& dy, const Tensor& y, const Tensor& dx, int64_t dim,
                            bool log) {
  const Rows r = rows_around(y->shape(), dim);
  if (dx->dtype() != DType::kFloat32 || r.inner != 1 || !cpu::avx2::has_avx2()) return false;
  const float* g = dy->data_as<float>();
  const float* yp = y->data_as<float>();
  float* d = dx->data_as<float>();
#pragma omp parallel for schedule(static) if (r.outer * r.n > cpu::kParallelGrain && r.outer > 1)
  for (int64_t o = 0; o < r.outer; ++o)
    cpu::avx2::softmax_grad_row(g + o * r.n, yp + o * r.n, d + o * r.n, r.n, log);
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
#pragma omp parallel for schedule(static) if (work * r.n > cpu::kParallelGrain && work > 1)
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
      }
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
#pragma omp parallel for schedule(static) if (work * r.n > cpu::kParallelGrain && work > 1)
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
      }
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
#pragma omp parallel for schedule(static) if (work * r.n > cpu::kParallelGrain && work > 1)
      for (int64_t w = 0; w < work; ++w) {
        const int64_t base = (w / r.inner) * r.n * r.inner + w % r.inner;
        double total = 0;
        for (int64_t i = 0; i < r.n; ++i) total += double(C(dy[base + i * r.inner]));
        const C s = C(total);
        for (int64_t i = 0; i < r.n; ++i) {
          const int64_t j = base + i * r.inner;
          dx[j] = T(C(dy[j]) - std::exp(C(y[j])) * s);
        }
      }
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
#pragma omp parallel for schedule(static) if (work * r.n > cpu::kParallelGrain && work > 1)
      for (int64_t w = 0; w < work; ++w) {
        const int64_t base = (w / r.inner) * r.n * r.inner + w % r.inner;
        double dot = 0;
        for (int64_t i = 0; i < r.n; ++i)
          dot += double(C(dy[base + i * r.inner])) * double(C(y[base + i * r.inner]));
        for (int64_t i = 0; i < r.n; ++i) {
          const int64_t j = base + i * r.inner;
          dx[j] = T(C(y[j]) * (C(dy[j]) - C(dot)));
        }
      }
    }
  });
}

// Sleef's vector form of K (4 float / 2 double lanes), or nullptr where the scalar rule is used.
#define OF_SLEEF_TABLE(X) \
  X(Log, log, u10)        \
  X(Log1p, log1p, u10)    \
  X(Log2, log2, u10)      \
  X(Log10, log10, u10)    \
  X(Exp2, exp2, u10)      \
  X(Expm1, expm1, u10)    \
  X(Sin, sin, u10)        \
  X(Cos, cos, u10)        \
  X(Tan, tan, u10)        \
  X(Asin, asin, u10)      \
  X(Acos, acos, u10)      \
  X(Atan, atan, u10)      \
  X(Sinh, sinh, u10)      \
  X(Cosh, cosh, u10)      \
  X(Tanh, tanh, u10)      \
  X(Asinh, asinh, u10)    \
  X(Acosh, acosh, u10)    \
  X(Atanh, atanh, u10)    \
  X(Erf, erf, u10)        \
  X(Erfc, erfc, u15)      \
  X(Lgamma, lgamma, u10)

using SleefF4 = decltype(&Sleef_expf4_u10);
using SleefD2 = decltype(&Sleef_expd2_u10);

template <UnaryFn K>
constexpr bool has_sleef() {
#define OF_SLEEF_HAS(E, fn, u) \
  if constexpr (K == UnaryFn::k##E) return true;
  OF_SLEEF_TABLE(OF_SLEEF_HAS)
#undef OF_SLEEF_HAS
  return false;
}

template <UnaryFn K>
constexpr SleefF4 sleef_f4() {
#define OF_SLEEF_F4(E, fn, u) \
  if constexpr (K == UnaryFn::k##E) return &Sleef_##fn##f4_##u;
  OF_SLEEF_TABLE(OF_SLEEF_F4)
#undef OF_SLEEF_F4
  return nullptr;
}

template <UnaryFn K>
constexpr SleefD2 sleef_d2() {
#define OF_SLEEF_D2(E, fn, u) \
  if constexpr (K == UnaryFn::k##E) return &Sleef_##fn##d2_##u;
  OF_SLEEF_TABLE(OF_SLEEF_D2)
#undef OF_SLEEF_D2
  return nullptr;
}

// The functions an SSE2 instruction or two compute exactly as the scalar rule: sqrt, rsqrt (a
// division by the square root), abs, neg (sign bit) and reciprocal.
template <UnaryFn K>
constexpr bool has_sse2_form() {
  return K == UnaryFn::kSqrt || K == UnaryFn::kRsqrt || K == UnaryFn::kAbs || K == UnaryFn::kNeg ||
         K == UnaryFn::kReciprocal;
}

template <UnaryFn K>
__m128 sse2_form(__m128 v) {
  const __m128 one = _mm_set1_ps(1.0f), sign = _mm_set1_ps(-0.0f);
  if constexpr (K == UnaryFn::kSqrt) return _mm_sqrt_ps(v);
  if constexpr (K == UnaryFn::kRsqrt) return _mm_div_ps(one, _mm_sqrt_ps(v));
  if constexpr (K == UnaryFn::kAbs) return _mm_andnot_ps(sign, v);
  if constexpr (K == UnaryFn::kNeg) return _mm_xor_ps(sign, v);
  return _mm_div_ps(one, v);
}

template <UnaryFn K>
__m128d sse2_form(__m128d v) {
  const __m128d one = _mm_set1_pd(1.0), sign = _mm_set1_pd(-0.0);
  if constexpr (K == UnaryFn::kSqrt) return _mm_sqrt_pd(v);
  if constexpr (K == UnaryFn::kRsqrt) return _mm_div_pd(one, _mm_sqrt_pd(v));
  if constexpr (K == UnaryFn::kAbs) return _mm_andnot_pd(sign, v);
  if constexpr (K == UnaryFn::kNeg) return _mm_xor_pd(sign, v);
  return _mm_div_pd(one, v);
}

namespace {
// out = kernel(a) over the contiguous float runs; false (nothing done) when a run is strided.
bool rounding_avx2(const Tensor& a, const Tensor& out, cpu::avx2::UnaryKernel kernel) {
  if (!a->is_contiguous() || !out->is_contiguous() || a->shape() != out->shape()) return false;
  const float* x = a->data_as<float>();
  float* y = out->data_as<float>();
  const int64_t n = out->numel(), chunk = 1 << 14;
#pragma omp parallel for schedule(static) if (n > cpu::kParallelGrain)
  for (int64_t b = 0; b < n; b += chunk) kernel(x + b, y + b, std::min(chunk, n - b));
  return true;
}
}  // namespace

template <UnaryFn K>
void Unary<K>::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool> && K != UnaryFn::kBitwiseNot) {
      return;  // infer rejects bool for the other functions
    } else if constexpr (std::is_same_v<T, bool>) {
      // As bytes (bools are 0 or 1): GCC vectorises x ^ 1 on uint8 but not !x on bool.
      cpu::unary_loop<uint8_t>(in[0], out[0], [](uint8_t x) { return uint8_t(x ^ 1); });
    } else if constexpr ((std::is_same_v<T, float> || std::is_same_v<T, double>)&&K ==
                         UnaryFn::kSigmoid) {
      unary_sleef<T>(
          in[0], out[0], [](C x) { return unary_value<K>(x); },
          [](__m128 v) {
            const __m128 one = _mm_set1_ps(1.0f);
            return _mm_div_ps(one,
                              _mm_add_ps(one, Sleef_expf4_u10(_mm_sub_ps(_mm_setzero_ps(), v))));
          },
          [](__m128d v) {
            const __m128d one = _mm_set1_pd(1.0);
            return _mm_div_pd(one,
                              _mm_add_pd(one, Sleef_expd2_u10(_mm_sub_pd(_mm_setzero_pd(), v))));
          },
          cpu::avx2::unary_kernel(K));
    } else if constexpr ((std::is_same_v<T, float> || std::is_same_v<T, double>)&&has_sleef<K>()) {
      unary_sleef<T>(
          in[0], out[0], [](C x) { return unary_value<K>(x); },
          [](__m128 v) { return sleef_f4<K>()(v); }, [](__m128d v) { return sleef_d2<K>()(v); },
          cpu::avx2::unary_kernel(K));
    } else if constexpr ((std::is_same_v<T, float> ||
                          std::is_same_v<T, double>)&&has_sse2_form<K>()) {
      unary_sleef<T>(
          in[0], out[0], [](C x) { return unary_value<K>(x); },
          [](__m128 v) { return sse2_form<K>(v); }, [](__m128d v) { return sse2_form<K>(v); },
          cpu::avx2::unary_kernel(K));
    } else {
      constexpr bool kRounding = K == UnaryFn::kFloor || K == UnaryFn::kCeil ||
                                 K == UnaryFn::kTrunc || K == UnaryFn::kRound;
      if constexpr ((kRounding || K == UnaryFn::kErfinv) && std::is_same_v<T, float>) {
        // SSE2 has no rounding instruction (each element would be a libm call): AVX2's
        // vroundps on contiguous runs when the CPU has it. erfinv: an AVX2 kernel in float
        // (PyTorch's float computation) instead of the double-precision scalar rule.
        if (cpu::avx2::has_avx2() && rounding_avx2(in[0], out[0], cpu::avx2::unary_kernel(K)))
          return;
      }
      cpu::unary_loop<T>(in[0], out[0], [](C x) { return unary_value<K>(x); });
    }
  });
}

namespace {}  // namespace

template <BinaryFn K>
void Binary<K>::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (cpu::avx2::has_avx2()) {
        constexpr bool f32 = std::is_same_v<T, float>;
        static const cpu::avx2::BinaryKernel<T> fast = [] {
          if constexpr (f32)
            return cpu::avx2::binary_kernel_f32(K);
          else
            return cpu::avx2::binary_kernel_f64(K);
        }();
        return cpu::binary_loop<T>(in[0], in[1], out[0], fast,
                                   [](T x, T y) { return binary_value<K>(x, y); });
      }
    }
    cpu::binary_loop<T>(in[0], in[1], out[0], [](C x, C y) { return binary_value<K>(x, y); });
  });
}

template <CompareFn K>
void Compare<K>::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Shape& shape = out[0]->shape();
  std::array<std::vector<int64_t>, 3> strides = {cpu::broadcast_byte_strides(out[0], shape),
                                                 cpu::broadcast_byte_strides(in[0], shape),
                                                 cpu::broadcast_byte_strides(in[1], shape)};
  std::array<char*, 3> ptrs = {static_cast<char*>(out[0]->data()),
                               static_cast<char*>(in[0]->data()),
                               static_cast<char*>(in[1]->data())};
  const auto tier = cpu::loop_tier();
  visit_dtype(in[0]->dtype(), [&]<typename V>() {
    // Bools (0 or 1) compare as bytes: GCC does not vectorise loops over bool values.
    using T = std::conditional_t<std::is_same_v<V, bool>, uint8_t, V>;
    using C = compute_t<T>;
    cpu::strided_loop<3>(shape, strides, ptrs,
                         [&](std::array<char*, 3> p, const auto& s, int64_t n) {
                           bool* o = reinterpret_cast<bool*>(p[0]);
                           const T* x = reinterpret_cast<const T*>(p[1]);
                           const T* y = reinterpret_cast<const T*>(p[2]);
                           constexpr int64_t sz = sizeof(T);
                           if (s[0] == 1 && s[1] == 0 && s[2] == sz) {
                             // one value against a run (one_hot's index == arange(C))
                             const C xv = C(*x);
                             cpu::run_loop(tier, [&] {
                               auto* const o_ = o;
                               auto* const y_ = y;
                               const int64_t m = n;
                               const C xv_ = xv;
                               for (int64_t i = 0; i < m; ++i)
                                 o_[i] = compare_value<K>(xv_, C(y_[i]));
                             });
                             return;
                           }
                           if (s[0] == 1 && s[1] == sz && (s[2] == sz || s[2] == 0)) {
                             if (s[2] == 0) {  // against one value (x > 0)
                               const C yv = C(*y);
                               cpu::run_loop(tier, [&] {
                                 auto* const o_ = o;
                                 auto* const x_ = x;
                                 const int64_t m = n;
                                 const C yv_ = yv;
                                 for (int64_t i = 0; i < m; ++i)
                                   o_[i] = compare_value<K>(C(x_[i]), yv_);
                               });
                             } else {
                               cpu::run_loop(tier, [&] {
                                 auto* const o_ = o;
                                 auto* const x_ = x;
                                 auto* const y_ = y;
                                 const int64_t m = n;
                                 for (int64_t i = 0; i < m; ++i)
                                   o_[i] = compare_value<K>(C(x_[i]), C(y_[i]));
                               });
                             }
                             return;
                           }
                           for (int64_t i = 0; i < n; ++i) {
                             const C x = C(*reinterpret_cast<const T*>(p[1] + i * s[1]));
                             const C y = C(*reinterpret_cast<const T*>(p[2] + i * s[2]));
                             *reinterpret_cast<bool*>(p[0] + i * s[0]) = compare_value<K>(x, y);
                           }
                         });
  });
}

#define OF_INSTANTIATE_KERNEL(Family, Kind, E)                                        \
  template void Family<Kind::k##E>::compute_cpu(const TensorList&, const TensorList&, \
                                                const Attrs&) const;
#define OF_UNARY_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Unary, UnaryFn, E)
#define OF_BINARY_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Binary, BinaryFn, E)
#define OF_COMPARE_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Compare, CompareFn, E)
OF_UNARY_FNS(OF_UNARY_KERNEL)
OF_BINARY_FNS(OF_BINARY_KERNEL)
OF_COMPARE_FNS(OF_COMPARE_KERNEL)

}  // namespace oneflow
