// CPU kernels of the elementwise primitives (add, mul, relu, relu_grad) on the strided driver.
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

// out = op(a, b) with a, b broadcast to out's shape; the arithmetic runs in compute_t<T>.
template <typename T, typename Op>
void binary_loop(const Tensor& a, const Tensor& b, const Tensor& out, Op op) {
  using C = compute_t<T>;
  const Shape& shape = out->shape();
  std::array<std::vector<int64_t>, 3> strides = {cpu::broadcast_byte_strides(out, shape),
                                                 cpu::broadcast_byte_strides(a, shape),
                                                 cpu::broadcast_byte_strides(b, shape)};
  std::array<char*, 3> ptrs = {static_cast<char*>(out->data()), static_cast<char*>(a->data()),
                               static_cast<char*>(b->data())};
  constexpr int64_t sz = sizeof(T);
  cpu::strided_loop<3>(shape, strides, ptrs, [&](std::array<char*, 3> p, const auto& s, int64_t n) {
    T* o = reinterpret_cast<T*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    const T* y = reinterpret_cast<const T*>(p[2]);
    if (s[0] == sz && s[1] == sz && s[2] == sz) {
      for (int64_t i = 0; i < n; ++i) o[i] = T(op(C(x[i]), C(y[i])));
    } else if (s[0] == sz && s[1] == sz && s[2] == 0) {
      const C yv = C(*y);
      for (int64_t i = 0; i < n; ++i) o[i] = T(op(C(x[i]), yv));
    } else if (s[0] == sz && s[1] == 0 && s[2] == sz) {
      const C xv = C(*x);
      for (int64_t i = 0; i < n; ++i) o[i] = T(op(xv, C(y[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            T(op(C(*reinterpret_cast<const T*>(p[1] + i * s[1])),
                 C(*reinterpret_cast<const T*>(p[2] + i * s[2]))));
    }
  });
}

template <typename T, typename Op>
void unary_loop(const Tensor& a, const Tensor& out, Op op) {
  using C = compute_t<T>;
  const Shape& shape = out->shape();
  std::array<std::vector<int64_t>, 2> strides = {cpu::broadcast_byte_strides(out, shape),
                                                 cpu::broadcast_byte_strides(a, shape)};
  std::array<char*, 2> ptrs = {static_cast<char*>(out->data()), static_cast<char*>(a->data())};
  constexpr int64_t sz = sizeof(T);
  cpu::strided_loop<2>(shape, strides, ptrs, [&](std::array<char*, 2> p, const auto& s, int64_t n) {
    T* o = reinterpret_cast<T*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    if (s[0] == sz && s[1] == sz) {
      for (int64_t i = 0; i < n; ++i) o[i] = T(op(C(x[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            T(op(C(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
    }
  });
}

}  // namespace

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
