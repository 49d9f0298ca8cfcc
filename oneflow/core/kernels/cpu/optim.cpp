// CPU kernels of the fused optimizer updates: one OpenMP pass per parameter, arithmetic in the
// parameter's dtype, in the same order as PyTorch's single-tensor update (so results agree to
// rounding).
#include <algorithm>
#include <cmath>

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

// The numbers of one update: from the attributes, or, when attrs "scalars" is set, the
// per-step ones from the trailing float64 input (a compiled graph feeds them as a tensor, so
// the recorded kernel reads each step's values: Adam [lr, bias_correction1, bias_correction2],
// SGD [lr, the buffer's coefficient of the gradient]).
const double* step_scalars(const TensorList& in, const Attrs& attrs) {
  return attrs.has("scalars") ? in.back()->data_as<double>() : nullptr;
}

enum class Decay { kNone, kL2, kDecoupled };

struct AdamArgs {
  double step, sqrt_c2, decay, tb1, tb2, b2, wd, eps;
};

// One block of an Adam update, in PyTorch's single-tensor order. A loop the compiler vectorises
// (no aliasing, no branches, sqrt without errno: see oneflow/CMakeLists.txt); the clones below
// give it AVX-512 and AVX2 bodies chosen at load time.
template <typename T, Decay D>
inline __attribute__((always_inline)) void adam_block(T* __restrict p, const T* __restrict g,
                                                      T* __restrict m, T* __restrict v, int64_t n,
                                                      const AdamArgs& a) {
  const T step = T(a.step), sqrt_c2 = T(a.sqrt_c2), decay = T(a.decay), tb1 = T(a.tb1),
          tb2 = T(a.tb2), b2 = T(a.b2), w = T(a.wd), e = T(a.eps);
  for (int64_t i = 0; i < n; ++i) {
    T grad = g[i];
    T pi = p[i];
    if constexpr (D == Decay::kDecoupled) pi *= decay;
    if constexpr (D == Decay::kL2) grad += pi * w;
    const T mi = m[i] + (grad - m[i]) * tb1;  // lerp
    const T vi = v[i] * b2 + tb2 * grad * grad;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi - step * (mi / (std::sqrt(vi) / sqrt_c2 + e));
  }
}

#define OF_ADAM_CLONE(T, D, fn)                                         \
  __attribute__((target_clones("avx512f", "avx2", "default"))) void fn( \
      T* p, const T* g, T* m, T* v, int64_t n, const AdamArgs& a) {     \
    adam_block<T, D>(p, g, m, v, n, a);                                 \
  }
OF_ADAM_CLONE(float, Decay::kNone, adam_plain)
OF_ADAM_CLONE(float, Decay::kL2, adam_l2)
OF_ADAM_CLONE(float, Decay::kDecoupled, adam_decoupled)
OF_ADAM_CLONE(double, Decay::kNone, adam_plain)
OF_ADAM_CLONE(double, Decay::kL2, adam_l2)
OF_ADAM_CLONE(double, Decay::kDecoupled, adam_decoupled)
#undef OF_ADAM_CLONE

struct SgdArgs {
  double lr, momentum, grad_coefficient, wd;
};

enum class Buffer { kNone, kFirst, kMomentum };

// One block of an SGD update in PyTorch's single-tensor order: the gradient (plus weight decay),
// the momentum buffer (its first step takes the gradient), the parameter. Each form is its own
// loop, so none branches per element and all vectorise (the pointers never alias).
template <typename T, bool kDecay, Buffer kBuf, bool kNesterov>
inline __attribute__((always_inline)) void sgd_block(T* __restrict p, const T* __restrict g,
                                                     T* __restrict buf, int64_t n,
                                                     const SgdArgs& a) {
  const T lr = T(a.lr), mu = T(a.momentum), d = T(a.grad_coefficient), w = T(a.wd);
  for (int64_t i = 0; i < n; ++i) {
    T grad = g[i];
    if constexpr (kDecay) grad += p[i] * w;
    if constexpr (kBuf != Buffer::kNone) {
      const T b = kBuf == Buffer::kFirst ? grad : buf[i] * mu + grad * d;
      buf[i] = b;
      grad = kNesterov ? grad + b * mu : b;
    }
    p[i] -= lr * grad;
  }
}

#define OF_SGD_CLONE(T, D, B, N, fn)                                    \
  __attribute__((target_clones("avx512f", "avx2", "default"))) void fn( \
      T* p, const T* g, T* buf, int64_t n, const SgdArgs& a) {          \
    sgd_block<T, D, B, N>(p, g, buf, n, a);                             \
  }
#define OF_SGD_FORMS(T)                                              \
  OF_SGD_CLONE(T, false, Buffer::kNone, false, sgd_plain)            \
  OF_SGD_CLONE(T, true, Buffer::kNone, false, sgd_wd)                \
  OF_SGD_CLONE(T, false, Buffer::kFirst, false, sgd_first)           \
  OF_SGD_CLONE(T, true, Buffer::kFirst, false, sgd_first_wd)         \
  OF_SGD_CLONE(T, false, Buffer::kFirst, true, sgd_first_nesterov)   \
  OF_SGD_CLONE(T, true, Buffer::kFirst, true, sgd_first_nesterov_wd) \
  OF_SGD_CLONE(T, false, Buffer::kMomentum, false, sgd_momentum)     \
  OF_SGD_CLONE(T, true, Buffer::kMomentum, false, sgd_momentum_wd)   \
  OF_SGD_CLONE(T, false, Buffer::kMomentum, true, sgd_nesterov)      \
  OF_SGD_CLONE(T, true, Buffer::kMomentum, true, sgd_nesterov_wd)
OF_SGD_FORMS(float)
OF_SGD_FORMS(double)
#undef OF_SGD_FORMS
#undef OF_SGD_CLONE

// Runs fn(begin, end) over [0, n) in blocks, on the OpenMP team when n is large.
template <typename Fn>
void for_blocks(int64_t n, Fn fn) {
  constexpr int64_t kBlock = 8192;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  OF_OMP_FOR_IF(
      n > cpu::kParallelGrain, schedule(static),
      for (int64_t b = 0; b < blocks; ++b) { fn(b * kBlock, std::min(n, (b + 1) * kBlock)); });
}

}  // namespace

void AdamUpdate::compute_cpu(const TensorList& in, const TensorList&, const Attrs& attrs) const {
  const double* s = step_scalars(in, attrs);
  const double lr = s ? s[0] : attrs.get<double>("lr");
  const double c1 = s ? s[1] : attrs.get<double>("bias_correction1");
  const double c2 = s ? s[2] : attrs.get<double>("bias_correction2");
  const double b1 = attrs.get<double>("beta1"), b2 = attrs.get<double>("beta2");
  const double wd = attrs.get<double>("weight_decay");
  const AdamArgs a{lr / c1, std::sqrt(c2),           1 - lr * wd, 1 - b1, 1 - b2, b2,
                   wd,      attrs.get<double>("eps")};
  const Decay decay = wd == 0                        ? Decay::kNone
                      : attrs.get<bool>("decoupled") ? Decay::kDecoupled
                                                     : Decay::kL2;
  const int64_t n = in[0]->numel();
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* p = in[0]->data_as<T>();
      const T* g = in[1]->data_as<T>();
      T* m = in[2]->data_as<T>();
      T* v = in[3]->data_as<T>();
      using Fn = void (*)(T*, const T*, T*, T*, int64_t, const AdamArgs&);
      const Fn fn = decay == Decay::kNone ? Fn(adam_plain)
                    : decay == Decay::kL2 ? Fn(adam_l2)
                                          : Fn(adam_decoupled);
      for_blocks(n, [&](int64_t b, int64_t e) { fn(p + b, g + b, m + b, v + b, e - b, a); });
    }
  });
}

void SgdUpdate::compute_cpu(const TensorList& in, const TensorList&, const Attrs& attrs) const {
  const double* s = step_scalars(in, attrs);
  const double lr = s ? s[0] : attrs.get<double>("lr"), mom = attrs.get<double>("momentum"),
               damp = s ? 1 - s[1] : attrs.get<double>("dampening"),
               wd = attrs.get<double>("weight_decay");
  // With fed numbers the buffer starts at zero and the coefficient is 1 on the first step.
  const bool nesterov = attrs.get<bool>("nesterov"), first = !s && attrs.get<bool>("first");
  const int64_t n = in[0]->numel();
  const bool has_buf = in.size() - (s ? 1 : 0) == 3;
  const SgdArgs a{lr, mom, 1 - damp, wd};
  // Index into the forms below: weight decay, then none / first step / later steps of the
  // buffer, then Nesterov.
  const int form = (wd != 0 ? 1 : 0) + (!has_buf ? 0
                                        : first  ? (nesterov ? 4 : 2)
                                                 : (nesterov ? 8 : 6));
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* p = in[0]->data_as<T>();
      const T* g = in[1]->data_as<T>();
      T* buf = has_buf ? in[2]->data_as<T>() : nullptr;
      using Fn = void (*)(T*, const T*, T*, int64_t, const SgdArgs&);
      const Fn kForms[] = {sgd_plain,          sgd_wd,
                           sgd_first,          sgd_first_wd,
                           sgd_first_nesterov, sgd_first_nesterov_wd,
                           sgd_momentum,       sgd_momentum_wd,
                           sgd_nesterov,       sgd_nesterov_wd};
      const Fn fn = kForms[form];
      for_blocks(
          n, [&](int64_t b, int64_t e) { fn(p + b, g + b, buf ? buf + b : nullptr, e - b, a); });
    }
  });
}

}  // namespace oneflow
