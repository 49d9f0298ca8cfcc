// CPU kernels of the activation family (Activation<F>, ActivationGrad<F>) on the strided
// driver. Runs are processed in chunks of kChunk elements in the compute type: the functions
// without transcendental parts are one loop over the scalar rule (kernels/common/
// activations.h), which the compiler vectorises; the ones that need exp, expm1, log1p or tanh
// fill a chunk-sized buffer with the argument, apply Sleef's vector function to the whole
// buffer (8 floats with AVX2, else 4 floats / 2 doubles), then finish with another vectorisable
// loop. 16-bit floats and strided runs are converted into the chunk buffer first.
#include <sleef.h>

#include <algorithm>
#include <cmath>

#include "oneflow/core/kernels/common/activations.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

constexpr int64_t kChunk = 256;

// The vector functions the chunks use.
enum class V { kExp, kExpm1, kLog1p, kTanh };

// f applied in place to n contiguous values: AVX2, SSE2 Sleef, then scalar for the tail.
template <typename C, V U>
void vmath(C* p, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<C, float>) {
    if (cpu::avx2::has_avx2()) {
      static const cpu::avx2::UnaryKernel k =
          U == V::kExp     ? cpu::avx2::exp_kernel()
          : U == V::kExpm1 ? cpu::avx2::unary_kernel(UnaryFn::kExpm1)
          : U == V::kLog1p ? cpu::avx2::unary_kernel(UnaryFn::kLog1p)
                           : cpu::avx2::unary_kernel(UnaryFn::kTanh);
      return k(p, p, n);
    }
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
  for (; i < n; ++i)
    p[i] = U == V::kExp     ? std::exp(p[i])
           : U == V::kExpm1 ? std::expm1(p[i])
           : U == V::kLog1p ? std::log1p(p[i])
                            : std::tanh(p[i]);
}
template <typename C>
void vexp(C* p, int64_t n) {
  vmath<C, V::kExp>(p, n);
}

// y = f(x) for n <= kChunk contiguous values of the compute type; t, u: scratch of kChunk.
template <ActFn K, typename C>
void act_chunk(const C* x, C* y, int64_t n, const ActParams<C> p, C* t, C* u) {
  (void)u;
  const C one(1);
  if constexpr (K == ActFn::kElu) {
    for (int64_t i = 0; i < n; ++i) t[i] = x[i] * p.c;
    vmath<C, V::kExpm1>(t, n);
    const C k = p.a * p.b;
    for (int64_t i = 0; i < n; ++i) {
      const C neg = t[i] * k, pos = x[i] * p.b;  // both sides, then a select: vectorises
      y[i] = x[i] <= C(0) ? neg : pos;
    }
  } else if constexpr (K == ActFn::kSilu) {
    for (int64_t i = 0; i < n; ++i) t[i] = -x[i];
    vexp(t, n);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (one + t[i]);
  } else if constexpr (K == ActFn::kMish) {
    for (int64_t i = 0; i < n; ++i) t[i] = x[i];
    vexp(t, n);
    vmath<C, V::kLog1p>(t, n);
    vmath<C, V::kTanh>(t, n);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * t[i];
  } else if constexpr (K == ActFn::kSoftplus) {
    for (int64_t i = 0; i < n; ++i) t[i] = x[i] * p.a;
    vexp(t, n);
    vmath<C, V::kLog1p>(t, n);
    for (int64_t i = 0; i < n; ++i) {
      const C soft = t[i] / p.a;
      y[i] = x[i] * p.a > p.b ? x[i] : soft;
    }
  } else if constexpr (K == ActFn::kLogsigmoid) {
    for (int64_t i = 0; i < n; ++i) t[i] = -std::fabs(x[i]);
    vexp(t, n);
    vmath<C, V::kLog1p>(t, n);
    for (int64_t i = 0; i < n; ++i) {
      const C m = x[i] < C(0) ? x[i] : C(0);
      y[i] = m - t[i];
    }
  } else if constexpr (K == ActFn::kTanhshrink) {
    for (int64_t i = 0; i < n; ++i) t[i] = x[i];
    vmath<C, V::kTanh>(t, n);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - t[i];
  } else if constexpr (K == ActFn::kSigmoid) {
    for (int64_t i = 0; i < n; ++i) t[i] = -x[i];
    vexp(t, n);
    for (int64_t i = 0; i < n; ++i) y[i] = one / (one + t[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = act_value<K>(x[i], p);
  }
}

// dx = dy * f'(x) for n <= kChunk contiguous values; t, u: scratch.
template <ActFn K, typename C>
void grad_chunk(const C* g, const C* x, C* d, int64_t n, const ActParams<C> p, C* t, C* u) {
  const C one(1);
  if constexpr (K == ActFn::kElu) {
    for (int64_t i = 0; i < n; ++i) t[i] = x[i] * p.c;
    vexp(t, n);
    const C k = p.c * p.a * p.b;
    for (int64_t i = 0; i < n; ++i) {
      const C neg = g[i] * k * t[i], pos = g[i] * p.b;
      d[i] = x[i] <= C(0) ? neg : pos;
    }
  } else if constexpr (K == ActFn::kSilu) {
    for (int64_t i = 0; i < n; ++i) t[i] = -x[i];
    vexp(t, n);
    for (int64_t i = 0; i < n; ++i) {
      const C s = one / (one + t[i]);
      d[i] = g[i] * s * (one + x[i] * (one - s));
    }
  } else if constexpr (K == ActFn::kMish) {
    for (int64_t i = 0; i < n; ++i) t[i] = x[i];
    vexp(t, n);
    for (int64_t i = 0; i < n; ++i) u[i] = t[i];
    vmath<C, V::kLog1p>(u, n);
    vmath<C, V::kTanh>(u, n);
    for (int64_t i = 0; i < n; ++i) {
      const C s = one - one / (one + t[i]);
      d[i] = g[i] * (u[i] + x[i] * s * (one - u[i] * u[i]));
    }
  } else if constexpr (K == ActFn::kSoftplus) {
    for (int64_t i = 0; i < n; ++i) t[i] = x[i] * p.a;
    vexp(t, n);
    for (int64_t i = 0; i < n; ++i) {
      const C soft = g[i] * t[i] / (t[i] + one);
      d[i] = x[i] * p.a > p.b ? g[i] : soft;
    }
  } else if constexpr (K == ActFn::kLogsigmoid) {
    for (int64_t i = 0; i < n; ++i) t[i] = -std::fabs(x[i]);
    vexp(t, n);
    for (int64_t i = 0; i < n; ++i) {
      const C q = t[i] / (one + t[i]);
      const C neg = g[i] * (one - q), pos = g[i] * q;
      d[i] = x[i] < C(0) ? neg : pos;
    }
  } else if constexpr (K == ActFn::kTanhshrink) {
    for (int64_t i = 0; i < n; ++i) t[i] = x[i];
    vmath<C, V::kTanh>(t, n);
    for (int64_t i = 0; i < n; ++i) d[i] = g[i] * t[i] * t[i];
  } else if constexpr (K == ActFn::kSigmoid) {
    for (int64_t i = 0; i < n; ++i) t[i] = -x[i];
    vexp(t, n);
    for (int64_t i = 0; i < n; ++i) {
      const C s = one / (one + t[i]);
      d[i] = g[i] * s * (one - s);
    }
  } else {
    (void)t;
    (void)u;
    for (int64_t i = 0; i < n; ++i) d[i] = act_grad<K>(g[i], x[i], p);
  }
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
      const Shape& shape = out[0]->shape();
      std::array<std::vector<int64_t>, 2> strides = {cpu::broadcast_byte_strides(out[0], shape),
                                                     cpu::broadcast_byte_strides(in[0], shape)};
      std::array<char*, 2> ptrs = {static_cast<char*>(out[0]->data()),
                                   static_cast<char*>(in[0]->data())};
      cpu::strided_loop<2>(shape, strides, ptrs,
                           [&](std::array<char*, 2> q, const auto& s, int64_t n) {
                             C xb[kChunk], yb[kChunk], t[kChunk], u[kChunk];
                             for (int64_t b = 0; b < n; b += kChunk) {
                               const int64_t m = std::min(kChunk, n - b);
                               char* o = q[0] + b * s[0];
                               const C* x = load<T>(q[1] + b * s[1], s[1], m, xb);
                               C* y = target<T>(o, s[0], yb);
                               act_chunk<K>(x, y, m, p, t, u);
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
      const Shape& shape = out[0]->shape();
      std::array<std::vector<int64_t>, 3> strides = {cpu::broadcast_byte_strides(out[0], shape),
                                                     cpu::broadcast_byte_strides(in[0], shape),
                                                     cpu::broadcast_byte_strides(in[1], shape)};
      std::array<char*, 3> ptrs = {static_cast<char*>(out[0]->data()),
                                   static_cast<char*>(in[0]->data()),
                                   static_cast<char*>(in[1]->data())};
      cpu::strided_loop<3>(shape, strides, ptrs,
                           [&](std::array<char*, 3> q, const auto& s, int64_t n) {
                             C gb[kChunk], xb[kChunk], db[kChunk], t[kChunk], u[kChunk];
                             for (int64_t b = 0; b < n; b += kChunk) {
                               const int64_t m = std::min(kChunk, n - b);
                               char* o = q[0] + b * s[0];
                               const C* g = load<T>(q[1] + b * s[1], s[1], m, gb);
                               const C* x = load<T>(q[2] + b * s[2], s[2], m, xb);
                               C* d = target<T>(o, s[0], db);
                               grad_chunk<K>(g, x, d, m, p, t, u);
                               store<T>(o, s[0], m, d);
                             }
                           });
    }
  });
}

#define OF_ACTIVATION_KERNELS(E, n)                                                            \
  template void Activation<ActFn::k##E>::compute_cpu(const TensorList&, const TensorList&,     \
                                                     const Attrs&) const;                      \
  template void ActivationGrad<ActFn::k##E>::compute_cpu(const TensorList&, const TensorList&, \
                                                         const Attrs&) const;
OF_ACTIVATION_FNS(OF_ACTIVATION_KERNELS)
#undef OF_ACTIVATION_KERNELS

}  // namespace oneflow
