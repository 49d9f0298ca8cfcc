// CUDA kernels of softmax, log_softmax and their gradients over one dim of a contiguous tensor,
// seen as [outer, n, inner]. inner == 1 (the last dim): one block per row with block reductions;
// otherwise one thread per (outer, inner) column. Semantics mirror kernels/cpu/unary_math.cpp.
#include <cmath>

#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/common/layouts.h"
#include "oneflow/core/kernels/cuda/device/strided_indexer.cuh"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

constexpr int kRowBlock = 256;

// Reduces v over the block (blockDim.x == kRowBlock); every thread gets the result.
template <typename V, typename Op>
__device__ V block_reduce(V v, Op op, V* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kRowBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  V r = shared[0];
  __syncthreads();
  return r;
}

template <typename C>
__device__ C nan_max(C a, C b) {
  return (b > a || isnan(b)) ? b : a;
}

// Log: log_softmax, (x - max) - log(sum), in that order (the CPU kernel's rounding).
template <typename T, bool Log>
__global__ void softmax_rows(const T* x, T* y, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  __shared__ C smax[kRowBlock];
  __shared__ double ssum[kRowBlock];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    C m = C(-INFINITY);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = nan_max(m, C(xr[i]));
    m = block_reduce(
        m, [](C a, C b) { return nan_max(a, b); }, smax);
    if (isinf(m) && m < 0) m = 0;  // a row of -inf gives nan, as in PyTorch
    double s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += double(exp(C(xr[i]) - m));
    s = block_reduce(
        s, [](double a, double b) { return a + b; }, ssum);
    if constexpr (Log) {
      const C lse = C(log(s));
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = T((C(xr[i]) - m) - lse);
    } else {
      const C inv = C(1.0 / s);
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = T(exp(C(xr[i]) - m) * inv);
    }
  }
}

template <typename T, bool Log>
__global__ void softmax_cols(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using C = compute_t<T>;
  for (int64_t w = cuda::grid_begin(); w < outer * inner; w += cuda::grid_step()) {
    const int64_t base = (w / inner) * n * inner + w % inner;
    C m = C(-INFINITY);
    for (int64_t i = 0; i < n; ++i) m = nan_max(m, C(x[base + i * inner]));
    if (isinf(m) && m < 0) m = 0;
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(exp(C(x[base + i * inner]) - m));
    if constexpr (Log) {
      const C lse = C(log(s));
      for (int64_t i = 0; i < n; ++i) y[base + i * inner] = T((C(x[base + i * inner]) - m) - lse);
    } else {
      const C inv = C(1.0 / s);
      for (int64_t i = 0; i < n; ++i)
        y[base + i * inner] = T(exp(C(x[base + i * inner]) - m) * inv);
    }
  }
}

template <typename T>
__global__ void softmax_grad_rows(const T* dy, const T* y, T* dx, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  __shared__ double ssum[kRowBlock];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t base = row * n;
    double dot = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      dot += double(C(dy[base + i])) * double(C(y[base + i]));
    dot = block_reduce(
        dot, [](double a, double b) { return a + b; }, ssum);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      dx[base + i] = T(C(y[base + i]) * (C(dy[base + i]) - C(dot)));
  }
}

template <typename T>
__global__ void softmax_grad_cols(const T* dy, const T* y, T* dx, int64_t outer, int64_t n,
                                  int64_t inner) {
  using C = compute_t<T>;
  for (int64_t w = cuda::grid_begin(); w < outer * inner; w += cuda::grid_step()) {
    const int64_t base = (w / inner) * n * inner + w % inner;
    double dot = 0;
    for (int64_t i = 0; i < n; ++i)
      dot += double(C(dy[base + i * inner])) * double(C(y[base + i * inner]));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = base + i * inner;
      dx[j] = T(C(y[j]) * (C(dy[j]) - C(dot)));
    }
  }
}

// log_softmax_grad: dx = dy - exp(y) * sum(dy).
template <typename T>
__global__ void log_softmax_grad_rows(const T* dy, const T* y, T* dx, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  __shared__ double ssum[kRowBlock];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t base = row * n;
    double total = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) total += double(C(dy[base + i]));
    total = block_reduce(
        total, [](double a, double b) { return a + b; }, ssum);
    const C s = C(total);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      dx[base + i] = T(C(dy[base + i]) - exp(C(y[base + i])) * s);
  }
}

template <typename T>
__global__ void log_softmax_grad_cols(const T* dy, const T* y, T* dx, int64_t outer, int64_t n,
                                      int64_t inner) {
  using C = compute_t<T>;
  for (int64_t w = cuda::grid_begin(); w < outer * inner; w += cuda::grid_step()) {
    const int64_t base = (w / inner) * n * inner + w % inner;
    double total = 0;
    for (int64_t i = 0; i < n; ++i) total += double(C(dy[base + i * inner]));
    const C s = C(total);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = base + i * inner;
      dx[j] = T(C(dy[j]) - exp(C(y[j])) * s);
    }
  }
}

unsigned row_grid(int64_t rows) {
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(rows, 1), 65535));
}

}  // namespace

namespace {
template <bool Log>
void softmax_forward(const TensorList& in, const TensorList& out, const Attrs& attrs) {
  const Rows r = rows_around(in[0]->shape(), attrs.get<int64_t>("dim"));
  if (out[0]->numel() == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* x = in[0]->data_as<T>();
      T* y = out[0]->data_as<T>();
      if (r.inner == 1)
        softmax_rows<T, Log><<<row_grid(r.outer), kRowBlock, 0, stream>>>(x, y, r.outer, r.n);
      else
        softmax_cols<T, Log><<<cuda::grid_size(r.outer * r.inner), cuda::kBlockSize, 0, stream>>>(
            x, y, r.outer, r.n, r.inner);
      OF_CUDA_CHECK(cudaGetLastError());
    }
  });
}
}  // namespace

void Softmax::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  softmax_forward<false>(in, out, attrs);
}

void LogSoftmax::compute_cuda(const TensorList& in, const TensorList& out,
                              const Attrs& attrs) const {
  softmax_forward<true>(in, out, attrs);
}

void LogSoftmaxGrad::compute_cuda(const TensorList& in, const TensorList& out,
                                  const Attrs& attrs) const {
  const Rows r = rows_around(in[1]->shape(), attrs.get<int64_t>("dim"));
  if (out[0]->numel() == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* dy = in[0]->data_as<T>();
      const T* y = in[1]->data_as<T>();
      T* dx = out[0]->data_as<T>();
      if (r.inner == 1)
        log_softmax_grad_rows<T>
            <<<row_grid(r.outer), kRowBlock, 0, stream>>>(dy, y, dx, r.outer, r.n);
      else
        log_softmax_grad_cols<T>
            <<<cuda::grid_size(r.outer * r.inner), cuda::kBlockSize, 0, stream>>>(
                dy, y, dx, r.outer, r.n, r.inner);
      OF_CUDA_CHECK(cudaGetLastError());
    }
  });
}

void SoftmaxGrad::compute_cuda(const TensorList& in, const TensorList& out,
                               const Attrs& attrs) const {
  const Rows r = rows_around(in[1]->shape(), attrs.get<int64_t>("dim"));
  if (out[0]->numel() == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* dy = in[0]->data_as<T>();
      const T* y = in[1]->data_as<T>();
      T* dx = out[0]->data_as<T>();
      if (r.inner == 1)
        softmax_grad_rows<T><<<row_grid(r.outer), kRowBlock, 0, stream>>>(dy, y, dx, r.outer, r.n);
      else
        softmax_grad_cols<T><<<cuda::grid_size(r.outer * r.inner), cuda::kBlockSize, 0, stream>>>(
            dy, y, dx, r.outer, r.n, r.inner);
      OF_CUDA_CHECK(cudaGetLastError());
    }
  });
}

}  // namespace oneflow
