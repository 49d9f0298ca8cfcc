// CUDA kernels of advanced indexing (IndexGather, IndexPut); the same geometry as
// kernels/cpu/index.cpp: x as [pre, indexed dims, post], one thread per element. Accumulation
// uses atomicAdd (float32, float64, int64-as-unsigned).
#include "oneflow/core/common/backend_flags.h"
#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/cuda/device/strided_indexer.cuh"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

constexpr int kMaxIndexTensors = 8;

struct IndexArgs {
  int k = 0;
  int64_t pre = 1, post = 1, nb = 1, rows = 1;
  int64_t sizes[kMaxIndexTensors] = {};
  const int64_t* idx[kMaxIndexTensors] = {};
};

IndexArgs make_args(const char* op, const Tensor& x, const TensorList& indices, int64_t dim) {
  IndexArgs a;
  a.k = static_cast<int>(indices.size());
  if (a.k > kMaxIndexTensors)
    throw_error<NotImplementedError>(op, "more than ", kMaxIndexTensors, " index tensors on CUDA");
  for (int64_t d = 0; d < x->ndim(); ++d) {
    if (d < dim) a.pre *= x->shape()[d];
    if (d >= dim + a.k) a.post *= x->shape()[d];
  }
  for (int j = 0; j < a.k; ++j) {
    a.sizes[j] = x->shape()[dim + j];
    a.rows *= a.sizes[j];
    a.idx[j] = indices[j]->data_as<int64_t>();
  }
  a.nb = indices[0]->numel();
  return a;
}

// Element offset in x of output element i (out = [pre, nb, post]).
__device__ int64_t source_offset(const IndexArgs& a, int64_t i) {
  const int64_t q = i % a.post, pb = i / a.post, b = pb % a.nb, p = pb / a.nb;
  int64_t row = 0;
  for (int j = 0; j < a.k; ++j) {
    int64_t v = a.idx[j][b];
    if (v < 0) v += a.sizes[j];
    row = row * a.sizes[j] + v;
  }
  return (p * a.rows + row) * a.post + q;
}

template <typename T>
__global__ void gather_kernel(int64_t n, IndexArgs a, const T* x, T* out) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step())
    out[i] = x[source_offset(a, i)];
}

template <typename T>
__global__ void put_kernel(int64_t n, IndexArgs a, T* dst, const T* v) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step())
    dst[source_offset(a, i)] = v[i];
}

template <typename T>
__global__ void accumulate_kernel(int64_t n, IndexArgs a, T* dst, const T* v) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) {
    T* d = dst + source_offset(a, i);
    if constexpr (std::is_same_v<T, int64_t>)
      atomicAdd(reinterpret_cast<unsigned long long*>(d), static_cast<unsigned long long>(v[i]));
    else
      atomicAdd(d, v[i]);
  }
}

}  // namespace

void IndexGather::compute_cuda(const TensorList& in, const TensorList& out,
                               const Attrs& attrs) const {
  const int64_t n = out[0]->numel();
  if (n == 0) return;
  const IndexArgs a =
      make_args(name(), in[0], TensorList(in.begin() + 1, in.end()), attrs.get<int64_t>("dim"));
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    gather_kernel<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, a, in[0]->data_as<T>(),
                                                                          out[0]->data_as<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void IndexPut::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  // Out of place (an in-place put on a view of a tensor that requires grad runs on a copy):
  // the positions not indexed keep the destination's values.
  if (out[0]->data() != in[0]->data())
    OF_CUDA_CHECK(cudaMemcpyAsync(out[0]->data(), in[0]->data(),
                                  static_cast<size_t>(in[0]->numel()) * itemsize(in[0]->dtype()),
                                  cudaMemcpyDeviceToDevice, stream));
  const int64_t n = in[1]->numel();
  if (n == 0) return;
  const IndexArgs a =
      make_args(name(), out[0], TensorList(in.begin() + 2, in.end()), attrs.get<int64_t>("dim"));
  const bool accumulate = attrs.get<bool>("accumulate");
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if (!accumulate) {
      put_kernel<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, a, out[0]->data_as<T>(),
                                                                         in[1]->data_as<T>());
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                         std::is_same_v<T, int64_t>) {
      // Floating-point atomics add in the order the threads arrive (integers are exact).
      if constexpr (!std::is_same_v<T, int64_t>)
        check_deterministic(attrs.has("gradient") ? "the gradient of indexing on CUDA"
                                                  : "index_put_ (accumulate) on CUDA",
                            attrs.has("gradient"));
      accumulate_kernel<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
          n, a, out[0]->data_as<T>(), in[1]->data_as<T>());
    } else {
      throw_error<NotImplementedError>(name(),
                                       "accumulate=True on CUDA supports float32, "
                                       "float64 and int64, got ",
                                       dtype_name(out[0]->dtype()));
    }
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace oneflow
