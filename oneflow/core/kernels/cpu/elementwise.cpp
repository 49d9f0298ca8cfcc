// CPU kernels of the elementwise primitives (add, mul, div, relu, relu_grad) on the strided
// driver.
#include <cmath>

#include "oneflow/core/kernels/common/activations.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

using cpu::binary_loop;
using cpu::unary_loop;

void Add::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>)
      binary_loop<T>(in[0], in[1], out[0], [](bool x, bool y) { return x || y; });
    else
      binary_loop<T>(in[0], in[1], out[0], [](auto x, auto y) { return x + y; });
  });
}

void Sub::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>)
      binary_loop<T>(in[0], in[1], out[0], [](auto x, auto y) { return x - y; });
  });
}

void Mul::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>)
      binary_loop<T>(in[0], in[1], out[0], [](bool x, bool y) { return x && y; });
    else
      binary_loop<T>(in[0], in[1], out[0], [](auto x, auto y) { return x * y; });
  });
}

namespace {
// The AVX2 kernel for T (float or double) when the CPU has AVX2, else nullptr (binary_loop then
// takes the scalar rule).
template <typename T>
cpu::avx2::BinaryKernel<T> avx2_kernel(cpu::avx2::BinaryKernel<float> (*f32)(),
                                       cpu::avx2::BinaryKernel<double> (*f64)()) {
  if (!cpu::avx2::has_avx2()) return nullptr;
  if constexpr (std::is_same_v<T, float>)
    return f32();
  else
    return f64();
}
}  // namespace

void Div::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    auto rule = [](auto x, auto y) { return x / y; };
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)  // divps: 8 lanes
      binary_loop<T>(in[0], in[1], out[0],
                     avx2_kernel<T>(cpu::avx2::div_kernel_f32, cpu::avx2::div_kernel_f64), rule);
    else if constexpr (std::is_floating_point_v<compute_t<T>>)
      binary_loop<T>(in[0], in[1], out[0], rule);
  });
}

namespace {
// The unsigned integer of N bytes: where selects values as bit patterns.
template <size_t N>
using bits_t = std::conditional_t<
    N == 1, uint8_t,
    std::conditional_t<N == 2, uint16_t, std::conditional_t<N == 4, uint32_t, uint64_t>>>;
}  // namespace

void Where::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const auto tier = cpu::loop_tier();
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    cpu::tensor_loop<4>(
        {out[0].get(), in[0].get(), in[1].get(), in[2].get()},
        [&](std::array<char*, 4> p, const auto& s, int64_t n) {
          constexpr int64_t sz = sizeof(T);
          // Contiguous runs, each value operand contiguous or one broadcast value
          // (masked_fill, the attention mask and its backward): a select on the bits,
          // which vectorises, instead of a branch per element (which a random mask
          // mispredicts half of the time).
          if (s[0] == sz && s[1] == 1 && (s[2] == sz || s[2] == 0) && (s[3] == sz || s[3] == 0)) {
            using U = bits_t<sizeof(T)>;
            static_assert(sizeof(U) == sizeof(T));
            U* o = reinterpret_cast<U*>(p[0]);
            const uint8_t* c = reinterpret_cast<const uint8_t*>(p[1]);
            const U* a = reinterpret_cast<const U*>(p[2]);
            const U* b = reinterpret_cast<const U*>(p[3]);
            const int64_t as = s[2] / sz, bs = s[3] / sz;  // 1 or 0
            auto pick = [](uint8_t cond, U x, U y) {
              const U m = U(0) - U(cond != 0);
              return U((x & m) | (y & U(~m)));
            };
            if (as == 1 && bs == 1) {
              cpu::run_loop(tier, [&] {
                auto* const o_ = o;
                auto* const c_ = c;
                auto* const a_ = a;
                auto* const b_ = b;
                const int64_t m = n;
                for (int64_t i = 0; i < m; ++i) o_[i] = pick(c_[i], a_[i], b_[i]);
              });
            } else if (as == 1) {
              const U bv = *b;
              cpu::run_loop(tier, [&] {
                auto* const o_ = o;
                auto* const c_ = c;
                auto* const a_ = a;
                const int64_t m = n;
                const U bv_ = bv;
                for (int64_t i = 0; i < m; ++i) o_[i] = pick(c_[i], a_[i], bv_);
              });
            } else if (bs == 1) {
              const U av = *a;
              cpu::run_loop(tier, [&] {
                auto* const o_ = o;
                auto* const c_ = c;
                auto* const b_ = b;
                const int64_t m = n;
                const U av_ = av;
                for (int64_t i = 0; i < m; ++i) o_[i] = pick(c_[i], av_, b_[i]);
              });
            } else {
              const U av = *a, bv = *b;
              cpu::run_loop(tier, [&] {
                auto* const o_ = o;
                auto* const c_ = c;
                const int64_t m = n;
                const U av_ = av, bv_ = bv;
                for (int64_t i = 0; i < m; ++i) o_[i] = pick(c_[i], av_, bv_);
              });
            }
            return;
          }
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<T*>(p[0] + i * s[0]) =
                *reinterpret_cast<const bool*>(p[1] + i * s[1])
                    ? *reinterpret_cast<const T*>(p[2] + i * s[2])
                    : *reinterpret_cast<const T*>(p[3] + i * s[3]);
        });
  });
}

void Pow::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    auto rule = [](auto x, auto y) { return std::pow(x, y); };
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      binary_loop<T>(in[0], in[1], out[0],
                     avx2_kernel<T>(cpu::avx2::pow_kernel_f32, cpu::avx2::pow_kernel_f64), rule);
    else if constexpr (std::is_floating_point_v<compute_t<T>>)
      binary_loop<T>(in[0], in[1], out[0], rule);
    else if constexpr (!std::is_same_v<T, bool>)
      binary_loop<T>(in[0], in[1], out[0], [](auto x, auto y) { return int_pow(x, y); });
  });
}

void Relu::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (!std::is_same_v<T, bool>)
      unary_loop<T>(in[0], out[0], [](C x) { return x < C(0) ? C(0) : x; });  // NaN, -0.0 pass
  });
}

namespace {

// dy * f'(v) for the float32 gradients that take a vector function of v
// (unary_grad_takes_vector_fn): chunks of the function's argument through the tier's vector
// kernel, then the products, in PyTorch's order (erf: 2/sqrt(pi) * exp(-x^2) * dy).
void unary_grad_by_vector_fn(UnaryFn fn, const Tensor& dy, const Tensor& v, const Tensor& out) {
  constexpr float kTwoOverSqrtPi = 1.12837916709551257390f;
  constexpr float kSqrtPiOverTwo = 0.88622692545275801365f;
  const bool trig = fn == UnaryFn::kSin || fn == UnaryFn::kCos;
  cpu::avx2::UnaryKernel kernel = nullptr;
  if (cpu::avx2::has_avx2())
    kernel = fn == UnaryFn::kSin   ? cpu::avx2::unary_kernel(UnaryFn::kCos)
             : fn == UnaryFn::kCos ? cpu::avx2::unary_kernel(UnaryFn::kSin)
                                   : cpu::avx2::exp_kernel();
  const float scale = fn == UnaryFn::kErf      ? kTwoOverSqrtPi
                      : fn == UnaryFn::kErfc   ? -kTwoOverSqrtPi
                      : fn == UnaryFn::kErfinv ? kSqrtPiOverTwo
                      : fn == UnaryFn::kCos    ? -1.0f
                                               : 1.0f;
  const float sq = fn == UnaryFn::kErfinv ? 1.0f : -1.0f;    // the sign of exp's argument v^2
  auto apply = [&](const float* arg, float* u, int64_t m) {  // u = f(arg), in place allowed
    if (kernel != nullptr) return kernel(arg, u, m);
    for (int64_t i = 0; i < m; ++i)
      u[i] = fn == UnaryFn::kSin   ? std::cos(arg[i])
             : fn == UnaryFn::kCos ? std::sin(arg[i])
                                   : std::exp(arg[i]);
  };
  constexpr int64_t sz = sizeof(float);
  cpu::tensor_loop<3>({out.get(), dy.get(), v.get()},
                      [&](std::array<char*, 3> p, const auto& s, int64_t n) {
                        constexpr int64_t kChunk = 256;
                        float u[kChunk], gb[kChunk];
                        for (int64_t b = 0; b < n; b += kChunk) {
                          const int64_t m = std::min(kChunk, n - b);
                          const char* pv = p[2] + b * s[2];
                          char* po = p[0] + b * s[0];
                          if (s[2] == sz && trig) {
                            apply(reinterpret_cast<const float*>(pv), u, m);
                          } else {
                            for (int64_t i = 0; i < m; ++i) {
                              const float x = *reinterpret_cast<const float*>(pv + i * s[2]);
                              u[i] = trig ? x : sq * (x * x);
                            }
                            apply(u, u, m);
                          }
                          const float* g = reinterpret_cast<const float*>(p[1] + b * s[1]);
                          if (s[1] != sz) {  // a broadcast or strided incoming gradient
                            for (int64_t i = 0; i < m; ++i)
                              gb[i] = *reinterpret_cast<const float*>(p[1] + (b + i) * s[1]);
                            g = gb;
                          }
                          if (s[0] == sz) {
                            float* o = reinterpret_cast<float*>(po);
                            if (trig)
                              for (int64_t i = 0; i < m; ++i) o[i] = g[i] * (scale * u[i]);
                            else
                              for (int64_t i = 0; i < m; ++i) o[i] = scale * u[i] * g[i];
                          } else {
                            for (int64_t i = 0; i < m; ++i)
                              *reinterpret_cast<float*>(po + i * s[0]) =
                                  trig ? g[i] * (scale * u[i]) : scale * u[i] * g[i];
                          }
                        }
                      });
}

}  // namespace

void UnaryGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const auto fn = static_cast<UnaryFn>(attrs.get<int64_t>("fn"));
  if (unary_grad_takes_vector_fn(fn)) {
    if (out[0]->dtype() != DType::kFloat32)
      throw_error<RuntimeError>(name(), "expected float32 for this function's gradient, got ",
                                dtype_name(out[0]->dtype()));
    return unary_grad_by_vector_fn(fn, in[0], in[1], out[0]);
  }
  bool done = false;
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>)
      done = visit_unary_grad(fn, [&]<UnaryFn K>() {
        binary_loop<T>(in[0], in[1], out[0],
                       [](C dy, C v) { return unary_grad_value<K, C>(dy, v); });
      });
  });
  if (!done) throw_error<RuntimeError>(name(), "no one-pass gradient for this function or dtype");
}

void ReluGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (!std::is_same_v<T, bool>)
      binary_loop<T>(in[0], in[1], out[0], [](C dy, C y) { return y <= C(0) ? C(0) : dy; });
  });
}

}  // namespace oneflow
