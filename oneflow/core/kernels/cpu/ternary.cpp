// CPU kernels of the fused pointwise primitives (ops/ternary_primitives.h): one broadcasting
// pass over the three inputs, the contiguous runs (all three contiguous, or one of them a single
// value such as lerp's scalar weight) in loops the compiler vectorises for the CPU's widest tier.
#include <cstring>

#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/ternary_primitives.h"

namespace oneflow {

namespace {

template <TernaryFn K, typename C>
inline C ternary_value(C a, C b, C c, C v) {
  if constexpr (K == TernaryFn::kAddcmul) {
    return a + v * b * c;
  } else if constexpr (K == TernaryFn::kAddcdiv) {
    return a + v * (b / c);
  } else {  // PyTorch's two-sided form: exact at c == 0 and at c == 1
    // Both sides computed, then a select on their bits: GCC keeps a conditional expression of
    // floats a branch per element (mispredicted half the time for random weights) and the loop
    // scalar.
    const C d = b - a, lo = a + c * d, hi = b - d * (C(1) - c);
    using U = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
    U lb, hb;
    std::memcpy(&lb, &lo, sizeof(C));
    std::memcpy(&hb, &hi, sizeof(C));
    const U mask = U(0) - U(c < C(0.5));
    const U r = (lb & mask) | (hb & ~mask);
    C out;
    std::memcpy(&out, &r, sizeof(C));
    return out;
  }
}

}  // namespace

template <TernaryFn K>
void Ternary<K>::compute_cpu(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  const double value = K == TernaryFn::kLerp ? 0.0 : attrs.get<double>("value");
  const auto tier = cpu::loop_tier();
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const C v = C(value);
      constexpr int64_t sz = sizeof(T);
      cpu::tensor_loop<4>(
          {out[0].get(), in[0].get(), in[1].get(), in[2].get()},
          [&](std::array<char*, 4> p, const auto& s, int64_t n) {
            T* o = reinterpret_cast<T*>(p[0]);
            const T* a = reinterpret_cast<const T*>(p[1]);
            const T* b = reinterpret_cast<const T*>(p[2]);
            const T* c = reinterpret_cast<const T*>(p[3]);
            const bool contiguous = s[0] == sz && s[1] == sz && s[2] == sz;
            if (contiguous && s[3] == sz) {
              cpu::run_loop(tier, [&] {
                auto* const o_ = o;
                auto* const a_ = a;
                auto* const b_ = b;
                auto* const c_ = c;
                const int64_t m = n;
                for (int64_t i = 0; i < m; ++i)
                  o_[i] = T(ternary_value<K>(C(a_[i]), C(b_[i]), C(c_[i]), v));
              });
            } else if (contiguous && s[3] == 0) {  // one c for the run (lerp's scalar weight)
              const C cv = C(*c);
              if constexpr (K == TernaryFn::kLerp) {
                // The side of 0.5 chosen once for the run (GCC keeps a branch per element
                // otherwise, and the loop scalar).
                const bool low = cv < C(0.5);
                const C w = low ? cv : C(1) - cv;
                cpu::run_loop(tier, [&] {
                  auto* const o_ = o;
                  auto* const a_ = a;
                  auto* const b_ = b;
                  const int64_t m = n;
                  if (low)
                    for (int64_t i = 0; i < m; ++i) o_[i] = T(C(a_[i]) + w * (C(b_[i]) - C(a_[i])));
                  else
                    for (int64_t i = 0; i < m; ++i) o_[i] = T(C(b_[i]) - (C(b_[i]) - C(a_[i])) * w);
                });
                return;
              }
              cpu::run_loop(tier, [&] {
                auto* const o_ = o;
                auto* const a_ = a;
                auto* const b_ = b;
                const int64_t m = n;
                for (int64_t i = 0; i < m; ++i)
                  o_[i] = T(ternary_value<K>(C(a_[i]), C(b_[i]), cv, v));
              });
            } else {
              for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<T*>(p[0] + i * s[0]) =
                    T(ternary_value<K>(C(*reinterpret_cast<const T*>(p[1] + i * s[1])),
                                       C(*reinterpret_cast<const T*>(p[2] + i * s[2])),
                                       C(*reinterpret_cast<const T*>(p[3] + i * s[3])), v));
            }
          });
    }
  });
}

template void Ternary<TernaryFn::kAddcmul>::compute_cpu(const TensorList&, const TensorList&,
                                                        const Attrs&) const;
template void Ternary<TernaryFn::kAddcdiv>::compute_cpu(const TensorList&, const TensorList&,
                                                        const Attrs&) const;
template void Ternary<TernaryFn::kLerp>::compute_cpu(const TensorList&, const TensorList&,
                                                     const Attrs&) const;

}  // namespace oneflow
