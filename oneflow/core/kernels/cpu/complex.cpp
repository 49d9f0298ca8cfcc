// CPU kernels of the complex primitives (ops/complex_primitives.h): |z| and the discrete Fourier
// transforms. A multi-dim transform runs as 1-D transforms along each dim in turn (the engine in
// kernels/cpu/fft.h), the last dim first for the real-input ones.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <omp.h>
#include "oneflow/core/kernels/cpu/cpu_kernels.h"

#include "oneflow/core/kernels/cpu/fft.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/complex_primitives.h"

namespace oneflow {

namespace {

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
  const Lines l = lines_of(shape, dim);
  cpu::fft::c2c<T>(data, data, l.outer, l.n, l.inner, forward);
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
    const Lines li = lines_of(x->shape(), dims.back());
    cpu::fft::r2c<T>(src, dst, li.outer, li.n, li.inner, out[0]->shape()[dims.back()]);
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
    // The other dims first, on a contiguous copy of the input (the input itself when it is
    // contiguous and only the last dim transforms).
    Tensor tmp = x;
    if (dims.size() > 1 || !x->is_contiguous()) {
      tmp = empty_tensor(x->shape(), x->dtype(), x->device());
      copy_cpu(x, tmp);
    }
    const C* half = static_cast<const C*>(tmp->data());
    for (size_t j = 0; j + 1 < dims.size(); ++j)
      transform_dim<T>(tmp->data_as<C>(), x->shape(), dims[j], false);
    const Lines li = lines_of(x->shape(), dims.back());  // li.n == n / 2 + 1
    T* dst = out[0]->data_as<T>();
    cpu::fft::c2r<T>(half, dst, li.outer, n, li.inner);
    scale<T>(dst, out[0]->numel(), attrs.get<int64_t>("normalization"),
             signal_size(out[0]->shape(), dims));
  });
}

}  // namespace oneflow
