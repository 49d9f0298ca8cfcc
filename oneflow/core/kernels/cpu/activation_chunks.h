// The chunk loops of the activation kernels (Activation<F>, ActivationGrad<F>): y = f(x) and
// dx = dy * f'(x) for up to kChunk contiguous values of the compute type. The functions without
// transcendental parts are one loop over the scalar rule (kernels/common/activations.h), which
// the compiler vectorises; the ones that need exp, expm1, log1p or tanh fill a scratch buffer
// with the argument, apply a vector function (`vmath`) to the whole buffer, then finish with
// another vectorisable loop.
//
// Included by two files: activation.cpp (the baseline build) and vec/activation_avx2.cpp (built
// with -mavx2 -mfma, called after the runtime CPU check). Each defines vmath for its instruction
// set; everything here has internal linkage, so the linker never mixes the two builds.
#pragma once

#include <cmath>
#include <cstdint>

#include "oneflow/core/kernels/common/activations.h"

namespace oneflow::cpu {
namespace {

constexpr int64_t kChunk = 256;

// The vector functions the chunks use.
enum class V { kExp, kExpm1, kLog1p, kTanh };

// The scalar form of U (the tails of the vector loops).
template <V U, typename C>
C scalar_math(C v) {
  return U == V::kExp     ? std::exp(v)
         : U == V::kExpm1 ? std::expm1(v)
         : U == V::kLog1p ? std::log1p(v)
                          : std::tanh(v);
}

// f applied in place to n contiguous values of C; defined by the including file for its
// instruction set.
template <typename C, V U>
void vmath(C* p, int64_t n);

template <typename C>
void vexp(C* p, int64_t n) {
  vmath<C, V::kExp>(p, n);
}

// Whether f or its gradient goes through the vector functions and so the kChunk scratch
// buffers; the others are one loop over the scalar rule and take runs of any length.
template <ActFn K>
constexpr bool uses_scratch() {
  return K == ActFn::kElu || K == ActFn::kSilu || K == ActFn::kMish || K == ActFn::kSoftplus ||
         K == ActFn::kLogsigmoid || K == ActFn::kTanhshrink || K == ActFn::kSigmoid;
}

// y = f(x) for n <= kChunk contiguous values of the compute type (any n when !uses_scratch<K>());
// t, u: scratch of kChunk.
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

// dx = dy * f'(x) for n <= kChunk contiguous values (any n when !uses_scratch<K>()); t, u:
// scratch.
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

// y = f(a - b) for n contiguous values of any length: the fused losses' pointwise part
// (OF_DIFF_ACTIVATION_FNS, whose rules take no scratch). The signature of grad_chunk.
template <ActFn K, typename C>
void diff_chunk(const C* a, const C* b, C* y, int64_t n, const ActParams<C> p, C*, C*) {
  static_assert(!uses_scratch<K>());
  for (int64_t i = 0; i < n; ++i) y[i] = act_value<K>(a[i] - b[i], p);
}

template <typename C>
auto diff_chunk_of(ActFn fn) -> decltype(&grad_chunk<ActFn::kElu, C>) {
  switch (fn) {
#define OF_CASE(E, n) \
  case ActFn::k##E:   \
    return &diff_chunk<ActFn::k##E, C>;
    OF_DIFF_ACTIVATION_FNS(OF_CASE)
#undef OF_CASE
    default:
      return nullptr;
  }
}

// The chunk loops of fn in this translation unit's build (the switch over the family).
template <typename C>
auto act_chunk_of(ActFn fn) -> decltype(&act_chunk<ActFn::kElu, C>) {
  switch (fn) {
#define OF_CASE(E, n) \
  case ActFn::k##E:   \
    return &act_chunk<ActFn::k##E, C>;
    OF_ACTIVATION_FNS(OF_CASE)
#undef OF_CASE
  }
  return nullptr;
}

template <typename C>
auto grad_chunk_of(ActFn fn) -> decltype(&grad_chunk<ActFn::kElu, C>) {
  switch (fn) {
#define OF_CASE(E, n) \
  case ActFn::k##E:   \
    return &grad_chunk<ActFn::k##E, C>;
    OF_ACTIVATION_FNS(OF_CASE)
#undef OF_CASE
  }
  return nullptr;
}

}  // namespace
}  // namespace oneflow::cpu
