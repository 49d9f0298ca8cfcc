// CPU kernels of the activation family (Activation<F>, ActivationGrad<F>) on the strided
// driver. Runs are processed in chunks of kChunk elements in the compute type
// (activation_chunks.h): on CPUs with AVX2 + FMA by the chunk loops built for them
// (vec/activation_avx2.cpp, 8 floats / 4 doubles per instruction), else by the baseline build
// here (SSE2, Sleef's 4-float / 2-double functions). 16-bit floats, strided runs and broadcast
// operands are converted into the chunk buffer first.
#include <sleef.h>

#include <algorithm>
#include <cmath>

#include "oneflow/core/kernels/cpu/activation_chunks.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace cpu {
namespace {

// The baseline vector functions: SSE2 Sleef, then scalar for the tail.
template <typename C, V U>
void vmath(C* p, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<C, float>) {
    constexpr auto f4 = U == V::kExp     ? &Sleef_expf4_u10
                        : U == V::kExpm1 ? &Sleef_expm1f4_u10
                        : U == V::kLog1p ? &Sleef_log1pf4_u10
                                         : &Sleef_tanhf4_u10;
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(p + i, f4(_mm_loadu_ps(p + i)));
  } else {
    constexpr auto d2 = U == V::kExp     ? &Sleef_expd2_u10
                        : U == V::kExpm1 ? &Sleef_expm1d2_u10
                        : U == V::kLog1p ? &Sleef_log1pd2_u10
                                         : &Sleef_tanhd2_u10;
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(p + i, d2(_mm_loadu_pd(p + i)));
  }
  for (; i < n; ++i) p[i] = scalar_math<U>(p[i]);
}

}  // namespace
}  // namespace cpu

namespace {

// The chunk kernels for K in C: the AVX2 build when the CPU has it, else the baseline one.
template <ActFn K, typename C>
cpu::avx2::ActKernel<C> act_kernel() {
  if (cpu::avx2::has_avx2()) return cpu::avx2::activation_kernel<C>(K);
  return &cpu::act_chunk<K, C>;
}
template <ActFn K, typename C>
cpu::avx2::ActGradKernel<C> grad_kernel() {
  if (cpu::avx2::has_avx2()) return cpu::avx2::activation_grad_kernel<C>(K);
  return &cpu::grad_chunk<K, C>;
}

template <typename C>
ActParams<C> params(const Attrs& attrs) {
  return {C(attrs.get<double>("a")), C(attrs.get<double>("b")), C(attrs.get<double>("c"))};
}

// Operand k of a run as a contiguous array of C: the memory itself when it already is one,
// else a conversion into `buf`.
template <typename T, typename C>
const C* load(const char* p, int64_t stride, int64_t n, C* buf) {
  if constexpr (std::is_same_v<T, C>)
    if (stride == int64_t(sizeof(T))) return reinterpret_cast<const C*>(p);
  if (stride == 0) {  // one value broadcast (the gradient of a sum, a scalar operand)
    std::fill_n(buf, n, C(*reinterpret_cast<const T*>(p)));
    return buf;
  }
  for (int64_t i = 0; i < n; ++i) buf[i] = C(*reinterpret_cast<const T*>(p + i * stride));
  return buf;
}

// Where the results of a run go: the output itself when it can, else `buf` (then store()).
template <typename T, typename C>
C* target(char* p, int64_t stride, C* buf) {
  if constexpr (std::is_same_v<T, C>)
    if (stride == int64_t(sizeof(T))) return reinterpret_cast<C*>(p);
  return buf;
}
template <typename T, typename C>
void store(char* p, int64_t stride, int64_t n, const C* r) {
  if (reinterpret_cast<const char*>(r) == p) return;
  for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p + i * stride) = T(r[i]);
}

}  // namespace

template <ActFn K>
void Activation<K>::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const ActParams<C> p = params<C>(attrs);
      static const cpu::avx2::ActKernel<C> kernel = act_kernel<K, C>();
      cpu::tensor_loop<2>({out[0].get(), in[0].get()},
                          [&](std::array<char*, 2> q, const auto& s, int64_t n) {
                            using cpu::kChunk;
                            if constexpr (std::is_same_v<T, C> && !cpu::uses_scratch<K>()) {
                              if (s[0] == int64_t(sizeof(T)) && s[1] == int64_t(sizeof(T))) {
                                // one call for the whole run: no per-chunk calls
                                kernel(reinterpret_cast<const C*>(q[1]), reinterpret_cast<C*>(q[0]),
                                       n, p, nullptr, nullptr);
                                return;
                              }
                            }
                            C xb[kChunk], yb[kChunk], t[kChunk], u[kChunk];
                            for (int64_t b = 0; b < n; b += kChunk) {
                              const int64_t m = std::min(kChunk, n - b);
                              char* o = q[0] + b * s[0];
                              const C* x = load<T>(q[1] + b * s[1], s[1], m, xb);
                              C* y = target<T>(o, s[0], yb);
                              kernel(x, y, m, p, t, u);
                              store<T>(o, s[0], m, y);
                            }
                          });
    }
  });
}

template <ActFn K>
void ActivationGrad<K>::compute_cpu(const TensorList& in, const TensorList& out,
                                    const Attrs& attrs) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const ActParams<C> p = params<C>(attrs);
      static const cpu::avx2::ActGradKernel<C> kernel = grad_kernel<K, C>();
      cpu::tensor_loop<3>({out[0].get(), in[0].get(), in[1].get()}, [&](std::array<char*, 3> q,
                                                                        const auto& s, int64_t n) {
        using cpu::kChunk;
        if constexpr (std::is_same_v<T, C> && !cpu::uses_scratch<K>()) {
          constexpr int64_t sz = sizeof(T);
          if (s[0] == sz && s[1] == sz && s[2] == sz) {
            kernel(reinterpret_cast<const C*>(q[1]), reinterpret_cast<const C*>(q[2]),
                   reinterpret_cast<C*>(q[0]), n, p, nullptr, nullptr);
            return;
          }
        }
        C gb[kChunk], xb[kChunk], db[kChunk], t[kChunk], u[kChunk];
        for (int64_t b = 0; b < n; b += kChunk) {
          const int64_t m = std::min(kChunk, n - b);
          char* o = q[0] + b * s[0];
          const C* g = load<T>(q[1] + b * s[1], s[1], m, gb);
          const C* x = load<T>(q[2] + b * s[2], s[2], m, xb);
          C* d = target<T>(o, s[0], db);
          kernel(g, x, d, m, p, t, u);
          store<T>(o, s[0], m, d);
        }
      });
    }
  });
}

template <ActFn K>
void ActivationOfDifference<K>::compute_cpu(const TensorList& in, const TensorList& out,
                                            const Attrs& attrs) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const ActParams<C> p = params<C>(attrs);
      static const cpu::avx2::ActKernel<C> kernel = act_kernel<K, C>();
      static const cpu::avx2::ActGradKernel<C> fused =
          cpu::avx2::has_avx2() ? cpu::avx2::activation_of_difference_kernel<C>(K) : nullptr;
      // a - b chunk by chunk into a buffer, then the activation from it: one pass over memory
      cpu::tensor_loop<3>({out[0].get(), in[0].get(), in[1].get()}, [&](std::array<char*, 3> q,
                                                                        const auto& s, int64_t n) {
        if constexpr (std::is_same_v<T, C>) {
          constexpr int64_t sz = sizeof(T);
          if (fused && s[0] == sz && s[1] == sz && s[2] == sz) {  // one vector loop
            fused(reinterpret_cast<const C*>(q[1]), reinterpret_cast<const C*>(q[2]),
                  reinterpret_cast<C*>(q[0]), n, p, nullptr, nullptr);
            return;
          }
        }
        // longer blocks where f needs no scratch (fewer calls)
        constexpr int64_t kChunk = cpu::uses_scratch<K>() ? cpu::kChunk : 2048;
        C ab[kChunk], bb[kChunk], d[kChunk], yb[kChunk], t[cpu::kChunk], u[cpu::kChunk];
        for (int64_t c = 0; c < n; c += kChunk) {
          const int64_t m = std::min(kChunk, n - c);
          char* o = q[0] + c * s[0];
          const C* a = load<T>(q[1] + c * s[1], s[1], m, ab);
          const C* b = load<T>(q[2] + c * s[2], s[2], m, bb);
          for (int64_t i = 0; i < m; ++i) d[i] = a[i] - b[i];
          C* y = target<T>(o, s[0], yb);
          kernel(d, y, m, p, t, u);
          store<T>(o, s[0], m, y);
        }
      });
    }
  });
}

#define OF_DIFF_KERNELS(E, n)                                     \
  template void ActivationOfDifference<ActFn::k##E>::compute_cpu( \
      const TensorList&, const TensorList&, const Attrs&) const;
OF_DIFF_ACTIVATION_FNS(OF_DIFF_KERNELS)
#undef OF_DIFF_KERNELS

#define OF_ACTIVATION_KERNELS(E, n)                                                            \
  template void Activation<ActFn::k##E>::compute_cpu(const TensorList&, const TensorList&,     \
                                                     const Attrs&) const;                      \
  template void ActivationGrad<ActFn::k##E>::compute_cpu(const TensorList&, const TensorList&, \
                                                         const Attrs&) const;
OF_ACTIVATION_FNS(OF_ACTIVATION_KERNELS)
#undef OF_ACTIVATION_KERNELS

}  // namespace oneflow
