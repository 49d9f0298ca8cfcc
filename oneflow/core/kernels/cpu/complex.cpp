// CPU kernels of the complex primitives (ops/complex_primitives.h): |z| and the discrete Fourier
// transforms.
//
// A multi-dim transform runs as 1-D transforms along each dim in turn, over every line of the
// contiguous output, lines spread over the OpenMP threads. A 1-D transform of length n runs on
// KissFFT's mixed-radix template (radix 2, 3, 4, 5 butterflies and a generic one, O(n p) for a
// prime factor p); when n has a prime factor above kMaxDirectFactor it runs as Bluestein's
// chirp-z convolution instead: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}), w_j = exp(-i pi j^2 / n),
// a circular convolution of a power-of-two length M >= 2n - 1 done with three transforms of
// length M, O(n log n) for every n.
#include <kissfft/kissfft.hh>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <omp.h>
#include "oneflow/core/kernels/cpu/cpu_kernels.h"

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/complex_primitives.h"

namespace oneflow {

namespace {

constexpr int64_t kMaxDirectFactor = 61;

int64_t largest_prime_factor(int64_t n) {
  int64_t largest = 1;
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      largest = p;
      n /= p;
    }
  return n > 1 ? std::max(largest, n) : largest;
}

// One 1-D transform of length n in one direction (forward: exp(-2 pi i jk / n)), unnormalised.
template <typename T>
class Plan1d {
 public:
  using C = std::complex<T>;

  Plan1d(int64_t n, bool forward) : n_(n), forward_(forward) {
    if (n_ <= 1) return;
    if (largest_prime_factor(n_) <= kMaxDirectFactor) {
      direct_ = std::make_unique<kissfft<T>>(n_, !forward_);
      return;
    }
    m_ = 1;
    while (m_ < 2 * n_ - 1) m_ *= 2;
    conv_fwd_ = std::make_unique<kissfft<T>>(m_, false);
    conv_inv_ = std::make_unique<kissfft<T>>(m_, true);
    // The chirp in double, its phase reduced modulo 2n exactly (j^2 mod 2n in integers).
    chirp_.resize(n_);
    const double sign = forward_ ? -1.0 : 1.0;
    for (int64_t j = 0; j < n_; ++j) {
      const int64_t r = static_cast<int64_t>((static_cast<__int128>(j) * j) % (2 * n_));
      const double phase = sign * M_PI * static_cast<double>(r) / static_cast<double>(n_);
      chirp_[j] = C(static_cast<T>(std::cos(phase)), static_cast<T>(std::sin(phase)));
    }
    std::vector<C> b(m_, C(0, 0));
    b[0] = std::conj(chirp_[0]);
    for (int64_t j = 1; j < n_; ++j) b[j] = b[m_ - j] = std::conj(chirp_[j]);
    kernel_.resize(m_);
    conv_fwd_->transform(b.data(), kernel_.data());
    const T inv_m = T(1) / static_cast<T>(m_);
    for (C& v : kernel_) v *= inv_m;
  }

  // Scratch each call needs (complex values).
  int64_t scratch_size() const { return direct_ || n_ <= 1 ? n_ : 2 * m_; }

  // out[0..n) = transform of in[0..n); in and out must not overlap.
  void run(const C* in, C* out, C* scratch) const {
    if (n_ <= 1) {
      if (n_ == 1) out[0] = in[0];
      return;
    }
    if (direct_) {
      direct_->transform(in, out);
      return;
    }
    C* a = scratch;
    C* fa = scratch + m_;
    for (int64_t j = 0; j < n_; ++j) a[j] = in[j] * chirp_[j];
    std::fill(a + n_, a + m_, C(0, 0));
    conv_fwd_->transform(a, fa);
    for (int64_t k = 0; k < m_; ++k) fa[k] *= kernel_[k];
    conv_inv_->transform(fa, a);
    for (int64_t k = 0; k < n_; ++k) out[k] = a[k] * chirp_[k];
  }

 private:
  int64_t n_;
  bool forward_;
  std::unique_ptr<kissfft<T>> direct_;
  int64_t m_ = 0;
  std::unique_ptr<kissfft<T>> conv_fwd_, conv_inv_;
  std::vector<C> chirp_, kernel_;
};

// Runs `body` on every OpenMP thread when `parallel` (its `omp for` loops share the work), else
// once here.
template <typename Body>
void parallel_region(bool parallel, Body&& body) {
  if (parallel && omp_get_max_threads() > 1) {
#pragma omp parallel
    body();
  } else {
    body();
  }
}

// The forward transform of n real values (n even, n/2 free of large prime factors) as one complex
// transform of n/2 (KissFFT's transform_real: the even and odd samples as real and imaginary
// parts, then a twiddle pass), half the work of the complex transform of n.
template <typename T>
class RealPlan {
 public:
  using C = std::complex<T>;
  static bool applies(int64_t n) {
    return n >= 4 && n % 2 == 0 && largest_prime_factor(n / 2) <= kMaxDirectFactor;
  }
  explicit RealPlan(int64_t n) : n_(n), half_(n / 2, false) {}
  // out[0 .. n/2] = the first n/2 + 1 entries of the transform of in[0 .. n); `packed` holds n/2.
  void run(const T* in, C* out, C* packed) const {
    half_.transform_real(in, packed);
    const int64_t h = n_ / 2;
    out[0] = C(packed[0].real(), T(0));
    out[h] = C(packed[0].imag(), T(0));
    for (int64_t k = 1; k < h; ++k) out[k] = packed[k];
  }

 private:
  int64_t n_;
  kissfft<T> half_;
};

struct Lines {
  int64_t outer, n, inner;  // a contiguous shape seen as (outer, n, inner) around one dim
};

Lines lines_of(const Shape& shape, int64_t dim) {
  Lines l{1, shape[dim], 1};
  for (int64_t d = 0; d < dim; ++d) l.outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d) l.inner *= shape[d];
  return l;
}

// Transforms every line along `dim` of the contiguous complex array `data` of `shape` in place.
template <typename T>
void transform_dim(std::complex<T>* data, const Shape& shape, int64_t dim, bool forward) {
  using C = std::complex<T>;
  const Lines l = lines_of(shape, dim);
  if (l.n <= 1 || l.outer * l.inner == 0) return;
  const int64_t count = l.outer * l.inner;
  parallel_region(count > 1 && count * l.n > 4096, [&] {
    // one plan per thread: KissFFT's generic butterfly writes a scratch buffer of the plan
    const Plan1d<T> plan(l.n, forward);
    std::vector<C> line(l.n), result(l.n), scratch(plan.scratch_size());
#pragma omp for schedule(static)
    for (int64_t t = 0; t < count; ++t) {
      C* base = data + (t / l.inner) * l.n * l.inner + (t % l.inner);
      for (int64_t k = 0; k < l.n; ++k) line[k] = base[k * l.inner];
      plan.run(line.data(), result.data(), scratch.data());
      for (int64_t k = 0; k < l.n; ++k) base[k * l.inner] = result[k];
    }
  });
}

template <typename T>
void scale(T* data, int64_t count, int64_t normalization, double signal_size) {
  if (normalization == 0 || count == 0) return;
  const T s = static_cast<T>(normalization == 1 ? 1.0 / std::sqrt(signal_size) : 1.0 / signal_size);
  OF_OMP_FOR_IF(count > (1 << 16), schedule(static),
                for (int64_t i = 0; i < count; ++i) data[i] *= s;);
}

double signal_size(const Shape& shape, const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(shape[d]);
  return n;
}

template <typename F>
void visit_real(DType dt, F&& f) {
  if (dt == DType::kFloat32 || dt == DType::kComplex64)
    f.template operator()<float>();
  else
    f.template operator()<double>();
}

}  // namespace

void ComplexAbs::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  // The functional layer passes a contiguous input.
  OF_ASSERT(in[0]->is_contiguous());
  visit_real(out[0]->dtype(), [&]<typename T>() {
    const T* z = static_cast<const T*>(in[0]->data());
    T* y = out[0]->data_as<T>();
    const int64_t n = out[0]->numel();
    OF_OMP_FOR_IF(n > (1 << 15), schedule(static),
                  for (int64_t i = 0; i < n; ++i) y[i] = std::hypot(z[2 * i], z[2 * i + 1]););
  });
}

void ComplexMul::compute_cpu(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  const bool conj_b = attrs.get<bool>("conj_b");
  visit_real(out[0]->dtype(), [&]<typename T>() {
    const auto tier = cpu::loop_tier();
    cpu::tensor_loop<3>({out[0].get(), in[0].get(), in[1].get()}, [&](std::array<char*, 3> p,
                                                                      const auto& s, int64_t n) {
      constexpr int64_t kPair = 2 * sizeof(T);
      const T sign = conj_b ? T(-1) : T(1);
      if (s[0] == kPair && s[1] == kPair && s[2] == kPair) {
        cpu::run_loop(
            tier, [&]() __attribute__((always_inline)) {
              T* const y = reinterpret_cast<T*>(p[0]);
              const T* const a = reinterpret_cast<const T*>(p[1]);
              const T* const b = reinterpret_cast<const T*>(p[2]);
              const int64_t m = n;
              const T sg = sign;
              for (int64_t i = 0; i < m; ++i) {
                const T ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = sg * b[2 * i + 1];
                y[2 * i] = ar * br - ai * bi;
                y[2 * i + 1] = ar * bi + ai * br;
              }
            });
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        const T* a = reinterpret_cast<const T*>(p[1] + i * s[1]);
        const T* b = reinterpret_cast<const T*>(p[2] + i * s[2]);
        T* y = reinterpret_cast<T*>(p[0] + i * s[0]);
        const T ar = a[0], ai = a[1], br = b[0], bi = sign * b[1];
        y[0] = ar * br - ai * bi;
        y[1] = ar * bi + ai * br;
      }
    });
  });
}

void FftC2C::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  const bool forward = attrs.get<bool>("forward");
  copy_cpu(in[0], out[0]);
  visit_real(out[0]->dtype(), [&]<typename T>() {
    auto* data = out[0]->data_as<std::complex<T>>();
    for (int64_t d : dims) transform_dim<T>(data, out[0]->shape(), d, forward);
    scale<T>(reinterpret_cast<T*>(data), 2 * out[0]->numel(), attrs.get<int64_t>("normalization"),
             signal_size(out[0]->shape(), dims));
  });
}

void FftR2C::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  const Tensor& x = in[0];
  visit_real(x->dtype(), [&]<typename T>() {
    using C = std::complex<T>;
    // The input as contiguous real values.
    Tensor xc = x;
    if (!x->is_contiguous()) {
      xc = empty_tensor(x->shape(), x->dtype(), x->device());
      copy_cpu(x, xc);
    }
    const T* src = static_cast<const T*>(xc->data());
    C* dst = out[0]->data_as<C>();
    const int64_t last = dims.back();
    const Lines li = lines_of(x->shape(), last);
    const int64_t m = out[0]->shape()[last];
    const int64_t count = li.outer * li.inner;
    if (count > 0 && m > 0 && RealPlan<T>::applies(li.n)) {
      const int64_t h = li.n / 2;
      parallel_region(count > 1 && count * li.n > 4096, [&] {
        // one plan per thread: KissFFT's generic butterfly writes a scratch buffer of the plan
        const RealPlan<T> plan(li.n);
        std::vector<T> line(li.n);
        std::vector<C> result(h + 1), packed(h);
#pragma omp for schedule(static)
        for (int64_t t = 0; t < count; ++t) {
          const int64_t o = t / li.inner, i = t % li.inner;
          const T* s = src + o * li.n * li.inner + i;
          C* d = dst + o * m * li.inner + i;
          if (li.inner == 1 && m == h + 1) {  // straight into the output row
            plan.run(s, d, packed.data());
            continue;
          }
          for (int64_t k = 0; k < li.n; ++k) line[k] = s[k * li.inner];
          plan.run(line.data(), result.data(), packed.data());
          for (int64_t k = 0; k < m; ++k)  // the full transform: the mirrored conjugates
            d[k * li.inner] = k <= h ? result[k] : std::conj(result[li.n - k]);
        }
      });
    } else if (count > 0 && m > 0) {
      parallel_region(count > 1 && count * li.n > 4096, [&] {
        // one plan per thread: KissFFT's generic butterfly writes a scratch buffer of the plan
        const Plan1d<T> plan(li.n, true);
        std::vector<C> line(li.n), result(li.n), scratch(plan.scratch_size());
#pragma omp for schedule(static)
        for (int64_t t = 0; t < count; ++t) {
          const int64_t o = t / li.inner, i = t % li.inner;
          const T* s = src + o * li.n * li.inner + i;
          for (int64_t k = 0; k < li.n; ++k) line[k] = C(s[k * li.inner], T(0));
          plan.run(line.data(), result.data(), scratch.data());
          C* d = dst + o * m * li.inner + i;
          for (int64_t k = 0; k < m; ++k) d[k * li.inner] = result[k];
        }
      });
    }
    for (size_t j = 0; j + 1 < dims.size(); ++j)
      transform_dim<T>(dst, out[0]->shape(), dims[j], true);
    scale<T>(reinterpret_cast<T*>(dst), 2 * out[0]->numel(), attrs.get<int64_t>("normalization"),
             signal_size(x->shape(), dims));
  });
}

void FftC2R::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  const int64_t n = attrs.get<int64_t>("last_dim_size");
  const Tensor& x = in[0];
  visit_real(out[0]->dtype(), [&]<typename T>() {
    using C = std::complex<T>;
    // The other dims first, on a contiguous copy of the input.
    Tensor tmp = empty_tensor(x->shape(), x->dtype(), x->device());
    copy_cpu(x, tmp);
    C* half = tmp->data_as<C>();
    for (size_t j = 0; j + 1 < dims.size(); ++j) transform_dim<T>(half, x->shape(), dims[j], false);
    const int64_t last = dims.back();
    const Lines li = lines_of(x->shape(), last);  // li.n == n / 2 + 1
    T* dst = out[0]->data_as<T>();
    const int64_t count = li.outer * li.inner;
    if (count > 0) {
      parallel_region(count > 1 && count * n > 4096, [&] {
        // one plan per thread: KissFFT's generic butterfly writes a scratch buffer of the plan
        const Plan1d<T> plan(n, false);
        std::vector<C> line(n), result(n), scratch(plan.scratch_size());
#pragma omp for schedule(static)
        for (int64_t t = 0; t < count; ++t) {
          const int64_t o = t / li.inner, i = t % li.inner;
          const C* s = half + o * li.n * li.inner + i;
          for (int64_t k = 0; k < li.n && k < n; ++k) line[k] = s[k * li.inner];
          line[0] = C(line[0].real(), T(0));
          if (n % 2 == 0) line[n / 2] = C(line[n / 2].real(), T(0));
          for (int64_t k = li.n; k < n; ++k) line[k] = std::conj(line[n - k]);
          plan.run(line.data(), result.data(), scratch.data());
          T* d = dst + o * n * li.inner + i;
          for (int64_t k = 0; k < n; ++k) d[k * li.inner] = result[k].real();
        }
      });
    }
    scale<T>(dst, out[0]->numel(), attrs.get<int64_t>("normalization"),
             signal_size(out[0]->shape(), dims));
  });
}

}  // namespace oneflow
