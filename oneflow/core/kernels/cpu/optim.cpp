// CPU kernels of the fused optimizer updates: one OpenMP pass per parameter, arithmetic in the
// parameter's dtype, in the same order as PyTorch's single-tensor update (so results agree to
// rounding).
#include <cmath>

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

void AdamUpdate::compute_cpu(const TensorList& in, const TensorList&, const Attrs& attrs) const {
  const double lr = attrs.get<double>("lr"), b1 = attrs.get<double>("beta1"),
               b2 = attrs.get<double>("beta2"), eps = attrs.get<double>("eps"),
               wd = attrs.get<double>("weight_decay"), c1 = attrs.get<double>("bias_correction1"),
               c2 = attrs.get<double>("bias_correction2");
  const bool decoupled = attrs.get<bool>("decoupled");
  const int64_t n = in[0]->numel();
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* p = in[0]->data_as<T>();
      const T* g = in[1]->data_as<T>();
      T* m = in[2]->data_as<T>();
      T* v = in[3]->data_as<T>();
      const T step = T(lr / c1), sqrt_c2 = T(std::sqrt(c2)), decay = T(1 - lr * wd);
      const T tb1 = T(1 - b1), tb2 = T(1 - b2), beta2 = T(b2), w = T(wd), e = T(eps);
      OF_OMP_FOR_IF(
          n > cpu::kParallelGrain, schedule(static), for (int64_t i = 0; i < n; ++i) {
            T grad = g[i];
            if (w != T(0)) {
              if (decoupled)
                p[i] *= decay;
              else
                grad += p[i] * w;
            }
            m[i] += (grad - m[i]) * tb1;  // lerp
            v[i] = v[i] * beta2 + tb2 * grad * grad;
            const T denom = std::sqrt(v[i]) / sqrt_c2 + e;
            p[i] -= step * (m[i] / denom);
          });
    }
  });
}

void SgdUpdate::compute_cpu(const TensorList& in, const TensorList&, const Attrs& attrs) const {
  const double lr = attrs.get<double>("lr"), mom = attrs.get<double>("momentum"),
               damp = attrs.get<double>("dampening"), wd = attrs.get<double>("weight_decay");
  const bool nesterov = attrs.get<bool>("nesterov"), first = attrs.get<bool>("first");
  const int64_t n = in[0]->numel();
  const bool has_buf = in.size() == 3;
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* p = in[0]->data_as<T>();
      const T* g = in[1]->data_as<T>();
      T* buf = has_buf ? in[2]->data_as<T>() : nullptr;
      const T a = T(lr), mu = T(mom), d = T(1 - damp), w = T(wd);
      OF_OMP_FOR_IF(
          n > cpu::kParallelGrain, schedule(static), for (int64_t i = 0; i < n; ++i) {
            T grad = g[i];
            if (w != T(0)) grad += p[i] * w;
            if (buf) {
              buf[i] = first ? grad : buf[i] * mu + grad * d;
              grad = nesterov ? grad + buf[i] * mu : buf[i];
            }
            p[i] -= a * grad;
          });
    }
  });
}

}  // namespace oneflow
