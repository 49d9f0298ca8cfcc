// CUDA kernels of the elementwise primitives (add, mul, div, relu, relu_grad, exp, gelu,
// gelu_grad): one generic driver per arity with a flat path (contiguous operands, or a single
// broadcast element) and a strided path (StridedIndexer), and tiny per-op functors. Semantics
// mirror kernels/cpu/elementwise.cpp.
#include <type_traits>

#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/common/activations.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cuda/device/strided_indexer.cuh"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

using cuda::StridedIndexer;

// ---- functors: arguments and results in compute_t<T> -------------------------------------

struct SubOp {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return C(x - y);
  }
};

struct AddOp {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return C(x + y);
  }
};
struct MulOp {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return C(x * y);
  }
};
struct OrOp {
  __device__ bool operator()(bool x, bool y) const { return x || y; }
};
struct AndOp {
  __device__ bool operator()(bool x, bool y) const { return x && y; }
};
struct ReluOp {
  template <typename C>
  __device__ C operator()(C x) const {
    return x < C(0) ? C(0) : x;  // NaN and -0.0 pass through (PyTorch)
  }
};
// relu_grad(dy, y) = 0 where y <= 0, else dy (a NaN y passes dy, as PyTorch).
struct ReluGradOp {
  template <typename C>
  __device__ C operator()(C dy, C y) const {
    return y <= C(0) ? C(0) : dy;
  }
};

// dy * f'(v) of UnaryGrad (kernels/common/activations.h).
template <UnaryFn K>
struct UnaryGradOp {
  template <typename C>
  __device__ C operator()(C dy, C v) const {
    return unary_grad_value<K, C>(dy, v);
  }
};

struct DivOp {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return C(x / y);
  }
};
struct PowOp {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return C(pow(x, y));
  }
};
struct IntPowOp {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return int_pow(x, y);
  }
};
struct ExpOp {
  __device__ float operator()(float x) const { return expf(x); }
  __device__ double operator()(double x) const { return exp(x); }
};
// gelu(x) = x * Phi(x), exact (erf) or with the tanh approximation.
struct GeluOp {
  bool tanh_form;
  template <typename C>
  __device__ C operator()(C x) const {
    if (tanh_form) {
      C u = C(0.79788456080286535588) * (x + C(0.044715) * x * x * x);
      return C(0.5) * x * (C(1) + tanh(u));
    }
    return C(0.5) * x * (C(1) + erf(x * C(0.70710678118654752440)));
  }
};
struct GeluGradOp {
  bool tanh_form;
  template <typename C>
  __device__ C operator()(C dy, C x) const {
    if (tanh_form) {
      const C k = C(0.79788456080286535588);
      C t = tanh(k * (x + C(0.044715) * x * x * x));
      C du = k * (C(1) + C(3 * 0.044715) * x * x);
      return dy * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * du);
    }
    C cdf = C(0.5) * (C(1) + erf(x * C(0.70710678118654752440)));
    C pdf = C(0.39894228040143267794) * exp(C(-0.5) * x * x);
    return dy * (cdf + x * pdf);
  }
};

// ---- kernels ------------------------------------------------------------------------------

// Contiguous output; each input is contiguous with the output's shape (step 1) or a single
// broadcast element (step 0).
template <typename T, typename Op>
__global__ void binary_flat(int64_t n, T* out, const T* a, int64_t a_step, const T* b,
                            int64_t b_step, Op op) {
  using C = compute_t<T>;
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step())
    out[i] = T(op(C(a[i * a_step]), C(b[i * b_step])));
}

template <typename T, typename Op>
__global__ void binary_strided(int64_t n, StridedIndexer<3> ix, T* out, const T* a, const T* b,
                               Op op) {
  using C = compute_t<T>;
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) {
    int64_t off[3];
    ix.offsets(i, off);
    out[off[0]] = T(op(C(a[off[1]]), C(b[off[2]])));
  }
}

template <typename T, typename Op>
__global__ void unary_flat(int64_t n, T* out, const T* a, int64_t a_step, Op op) {
  using C = compute_t<T>;
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step())
    out[i] = T(op(C(a[i * a_step])));
}

template <typename T, typename Op>
__global__ void unary_strided(int64_t n, StridedIndexer<2> ix, T* out, const T* a, Op op) {
  using C = compute_t<T>;
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) {
    int64_t off[2];
    ix.offsets(i, off);
    out[off[0]] = T(op(C(a[off[1]])));
  }
}

template <typename T>
__global__ void where_strided(int64_t n, StridedIndexer<4> ix, T* out, const bool* cond, const T* x,
                              const T* y) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) {
    int64_t off[4];
    ix.offsets(i, off);
    out[off[0]] = cond[off[1]] ? x[off[2]] : y[off[3]];
  }
}

template <UnaryFn K>
struct UnaryFnOp {
  template <typename C>
  __device__ C operator()(C x) const {
    return unary_value<K>(x);
  }
};

template <ActFn K>
struct ActOp {
  double a, b, c;
  template <typename C>
  __device__ C operator()(C x) const {
    return act_value<K>(x, ActParams<C>{C(a), C(b), C(c)});
  }
};

template <ActFn K>
struct ActGradOp {
  double a, b, c;
  template <typename C>
  __device__ C operator()(C dy, C x) const {
    return act_grad<K>(dy, x, ActParams<C>{C(a), C(b), C(c)});
  }
};

template <BinaryFn K>
struct BinaryFnOp {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return binary_value<K>(x, y);
  }
};

template <CompareFn K, typename T>
__global__ void compare_strided(int64_t n, StridedIndexer<3> ix, bool* out, const T* a,
                                const T* b) {
  using C = compute_t<T>;
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) {
    int64_t off[3];
    ix.offsets(i, off);
    const C x = C(a[off[1]]), y = C(b[off[2]]);
    out[off[0]] = compare_value<K>(x, y);
  }
}

// ---- drivers ------------------------------------------------------------------------------

// The step of input `t` in the flat path (1: contiguous with out's shape, 0: one element), or
// -1 when it needs the strided path.
int64_t flat_step(const Tensor& t, const Shape& out_shape) {
  if (t->numel() == 1) return 0;
  if (t->shape() == out_shape && t->is_contiguous()) return 1;
  return -1;
}

// out = op(a, b) with a, b broadcast to out's shape (out may be any strided view).
template <typename T, typename Op>
void binary_launch(const char* name, const Tensor& a, const Tensor& b, const Tensor& out, Op op) {
  const int64_t n = out->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(out->device().index);
  const Shape& shape = out->shape();
  T* o = out->data_as<T>();
  const T* x = a->data_as<T>();
  const T* y = b->data_as<T>();
  const int64_t sa = flat_step(a, shape), sb = flat_step(b, shape);
  if (out->is_contiguous() && sa >= 0 && sb >= 0) {
    binary_flat<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, o, x, sa, y, sb, op);
  } else {
    const auto ix = cuda::make_indexer<3>(
        name, shape,
        {cuda::broadcast_strides(out, shape), cuda::broadcast_strides(a, shape),
         cuda::broadcast_strides(b, shape)});
    binary_strided<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, ix, o, x, y, op);
  }
  OF_CUDA_CHECK(cudaGetLastError());
}

// out = op(a) with a broadcast to out's shape.
template <typename T, typename Op>
void unary_launch(const char* name, const Tensor& a, const Tensor& out, Op op) {
  const int64_t n = out->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(out->device().index);
  const Shape& shape = out->shape();
  T* o = out->data_as<T>();
  const T* x = a->data_as<T>();
  const int64_t sa = flat_step(a, shape);
  if (out->is_contiguous() && sa >= 0) {
    unary_flat<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, o, x, sa, op);
  } else {
    const auto ix = cuda::make_indexer<2>(
        name, shape, {cuda::broadcast_strides(out, shape), cuda::broadcast_strides(a, shape)});
    unary_strided<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, ix, o, x, op);
  }
  OF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void Add::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>)
      binary_launch<T>(name(), in[0], in[1], out[0], OrOp{});
    else
      binary_launch<T>(name(), in[0], in[1], out[0], AddOp{});
  });
}

void Sub::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) binary_launch<T>(name(), in[0], in[1], out[0], SubOp{});
  });
}

void Mul::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>)
      binary_launch<T>(name(), in[0], in[1], out[0], AndOp{});
    else
      binary_launch<T>(name(), in[0], in[1], out[0], MulOp{});
  });
}

void Div::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      binary_launch<T>(name(), in[0], in[1], out[0], DivOp{});
  });
}

void Pow::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      binary_launch<T>(name(), in[0], in[1], out[0], PowOp{});
    else if constexpr (!std::is_same_v<T, bool>)
      binary_launch<T>(name(), in[0], in[1], out[0], IntPowOp{});
  });
}

void Exp::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      unary_launch<T>(name(), in[0], out[0], ExpOp{});
  });
}

void Gelu::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const bool tanh_form = attrs.get<std::string>("approximate") == "tanh";
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      unary_launch<T>(name(), in[0], out[0], GeluOp{tanh_form});
  });
}

void GeluGrad::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const bool tanh_form = attrs.get<std::string>("approximate") == "tanh";
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      binary_launch<T>(name(), in[0], in[1], out[0], GeluGradOp{tanh_form});
  });
}

void Where::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  const int64_t n = out[0]->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  const Shape& shape = out[0]->shape();
  const auto ix = cuda::make_indexer<4>(
      name(), shape,
      {cuda::broadcast_strides(out[0], shape), cuda::broadcast_strides(in[0], shape),
       cuda::broadcast_strides(in[1], shape), cuda::broadcast_strides(in[2], shape)});
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    where_strided<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
        n, ix, out[0]->data_as<T>(), in[0]->data_as<bool>(), in[1]->data_as<T>(),
        in[2]->data_as<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void Relu::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) unary_launch<T>(name(), in[0], out[0], ReluOp{});
  });
}

void UnaryGrad::compute_cuda(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  const auto fn = static_cast<UnaryFn>(attrs.get<int64_t>("fn"));
  bool done = false;
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      done = visit_unary_grad(fn, [&]<UnaryFn K>() {
        binary_launch<T>(name(), in[0], in[1], out[0], UnaryGradOp<K>{});
      });
  });
  if (!done) throw_error<RuntimeError>(name(), "no one-pass gradient for this function or dtype");
}

void ReluGrad::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>)
      binary_launch<T>(name(), in[0], in[1], out[0], ReluGradOp{});
  });
}

template <UnaryFn K>
void Unary<K>::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool> || K == UnaryFn::kBitwiseNot)
      unary_launch<T>(name(), in[0], out[0], UnaryFnOp<K>{});
  });
}

template <ActFn K>
void Activation<K>::compute_cuda(const TensorList& in, const TensorList& out,
                                 const Attrs& attrs) const {
  const ActOp<K> op{attrs.get<double>("a"), attrs.get<double>("b"), attrs.get<double>("c")};
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      unary_launch<T>(name(), in[0], out[0], op);
  });
}

template <ActFn K>
void ActivationGrad<K>::compute_cuda(const TensorList& in, const TensorList& out,
                                     const Attrs& attrs) const {
  const ActGradOp<K> op{attrs.get<double>("a"), attrs.get<double>("b"), attrs.get<double>("c")};
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      binary_launch<T>(name(), in[0], in[1], out[0], op);
  });
}

template <ActFn K>
struct ActDiffOp {
  double a, b, c;
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return act_value<K>(C(x - y), ActParams<C>{C(a), C(b), C(c)});
  }
};

template <ActFn K>
void ActivationOfDifference<K>::compute_cuda(const TensorList& in, const TensorList& out,
                                             const Attrs& attrs) const {
  const ActDiffOp<K> op{attrs.get<double>("a"), attrs.get<double>("b"), attrs.get<double>("c")};
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      binary_launch<T>(name(), in[0], in[1], out[0], op);
  });
}

template <BinaryFn K>
void Binary<K>::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    binary_launch<T>(name(), in[0], in[1], out[0], BinaryFnOp<K>{});
  });
}

template <CompareFn K>
void Compare<K>::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  const int64_t n = out[0]->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  const Shape& shape = out[0]->shape();
  const auto ix = cuda::make_indexer<3>(
      name(), shape,
      {cuda::broadcast_strides(out[0], shape), cuda::broadcast_strides(in[0], shape),
       cuda::broadcast_strides(in[1], shape)});
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    compare_strided<K, T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
        n, ix, out[0]->data_as<bool>(), in[0]->data_as<T>(), in[1]->data_as<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

#define OF_INSTANTIATE_KERNEL(Family, Kind, E)                                         \
  template void Family<Kind::k##E>::compute_cuda(const TensorList&, const TensorList&, \
                                                 const Attrs&) const;
#define OF_UNARY_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Unary, UnaryFn, E)
#define OF_BINARY_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Binary, BinaryFn, E)
#define OF_COMPARE_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Compare, CompareFn, E)
OF_UNARY_FNS(OF_UNARY_KERNEL)
OF_BINARY_FNS(OF_BINARY_KERNEL)
OF_COMPARE_FNS(OF_COMPARE_KERNEL)
#define OF_ACTIVATION_KERNELS(E, n)           \
  OF_INSTANTIATE_KERNEL(Activation, ActFn, E) \
  OF_INSTANTIATE_KERNEL(ActivationGrad, ActFn, E)
OF_ACTIVATION_FNS(OF_ACTIVATION_KERNELS)
#undef OF_ACTIVATION_KERNELS
#define OF_DIFF_KERNELS(E, n) OF_INSTANTIATE_KERNEL(ActivationOfDifference, ActFn, E)
OF_DIFF_ACTIVATION_FNS(OF_DIFF_KERNELS)
#undef OF_DIFF_KERNELS

}  // namespace oneflow
