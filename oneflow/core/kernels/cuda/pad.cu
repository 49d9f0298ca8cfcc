// CUDA kernels of border padding (Pad, PadGrad; geometry in kernels/common/pad.h): one thread
// per output element; the backward zeroes dx and adds each dy element into the element it read
// with atomicAdd (float32 and float64).
#include <cstdint>

#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/common/pad.h"
#include "oneflow/core/kernels/cuda/device/strided_indexer.cuh"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {

// Input element that output element i (of [planes, out0, out1, out2]) reads.
__device__ int64_t pad_input_index(const PadGeom& g, int64_t i) {
  const int64_t ow = i % g.out[2], r = i / g.out[2];
  const int64_t oh = r % g.out[1], r2 = r / g.out[1];
  const int64_t od = r2 % g.out[0], pl = r2 / g.out[0];
  const int64_t iw = pad_source(ow, g.in[2], g.lo[2], g.mode);
  const int64_t ih = pad_source(oh, g.in[1], g.lo[1], g.mode);
  const int64_t id = pad_source(od, g.in[0], g.lo[0], g.mode);
  return ((pl * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw;
}

template <typename U>
__global__ void pad_kernel(int64_t n, PadGeom g, const U* x, U* y) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step())
    y[i] = x[pad_input_index(g, i)];
}

template <typename T>
__global__ void pad_grad_kernel(int64_t n, PadGeom g, const T* dy, T* dx) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step())
    atomicAdd(dx + pad_input_index(g, i), dy[i]);
}

}  // namespace

void Pad::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const int64_t n = out[0]->numel();
  if (n == 0) return;
  const PadGeom g =
      pad_geom(in[0]->shape(), attrs.get<std::vector<int64_t>>("pads"), attrs.get<int64_t>("mode"));
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  auto launch = [&]<typename U>() {
    pad_kernel<U><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
        n, g, static_cast<const U*>(in[0]->data()), static_cast<U*>(out[0]->data()));
    OF_CUDA_CHECK(cudaGetLastError());
  };
  switch (itemsize(in[0]->dtype())) {
    case 1:
      return launch.template operator()<uint8_t>();
    case 2:
      return launch.template operator()<uint16_t>();
    case 4:
      return launch.template operator()<uint32_t>();
    case 8:
      return launch.template operator()<uint64_t>();
    default:
      throw_error<RuntimeError>(name(), "unsupported dtype ", dtype_name(in[0]->dtype()));
  }
}

void PadGrad::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor& dx = out[0];
  if (dx->numel() == 0) return;
  const PadGeom g =
      pad_geom(dx->shape(), attrs.get<std::vector<int64_t>>("pads"), attrs.get<int64_t>("mode"));
  cudaStream_t stream = cuda_stream(dx->device().index);
  OF_CUDA_CHECK(cudaMemsetAsync(dx->data(), 0,
                                static_cast<size_t>(dx->numel()) * itemsize(dx->dtype()), stream));
  const int64_t n = in[0]->numel();
  if (n == 0) return;
  auto launch = [&]<typename T>() {
    pad_grad_kernel<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
        n, g, in[0]->data_as<T>(), dx->data_as<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  };
  if (dx->dtype() == DType::kFloat32)
    launch.template operator()<float>();
  else if (dx->dtype() == DType::kFloat64)
    launch.template operator()<double>();
  else
    throw_error<NotImplementedError>(name(), "the CUDA backward supports float32 and float64, got ",
                                     dtype_name(dx->dtype()));
}

}  // namespace oneflow
