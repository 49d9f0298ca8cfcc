// CPU kernels of the elementwise primitives (add, mul, div, relu, relu_grad) on the strided
// driver.
#include "oneflow/core/kernels/cpu/strided_loop.h"
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

void Mul::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>)
      binary_loop<T>(in[0], in[1], out[0], [](bool x, bool y) { return x && y; });
    else
      binary_loop<T>(in[0], in[1], out[0], [](auto x, auto y) { return x * y; });
  });
}

void Div::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      binary_loop<T>(in[0], in[1], out[0], [](auto x, auto y) { return x / y; });
  });
}

void Relu::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (!std::is_same_v<T, bool>)
      unary_loop<T>(in[0], out[0], [](C x) { return x > C(0) ? x : C(0); });
  });
}

void ReluGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (!std::is_same_v<T, bool>)
      binary_loop<T>(in[0], in[1], out[0], [](C dy, C y) { return y > C(0) ? dy : C(0); });
  });
}

}  // namespace oneflow
