// CUDA kernels of padding (Pad, PadGrad; geometry in kernels/common/pad.h): one thread per
// output element; the backward zeroes dx and adds each dy element into the element it read
// with atomicAdd (float32 and float64), or for the constant mode copies dy's interior (one
// thread per dx element, any dtype).
#include <cstdint>

#include "oneflow/core/common/backend_flags.h"
#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/common/pad.h"
#include "oneflow/core/kernels/cuda/device/strided_indexer.cuh"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {

// Input element that output element i (of [planes, out0, out1, out2]) reads; -1 for the
// constant's border.
__device__ int64_t pad_input_index(const PadGeom& g, int64_t i) {
  const int64_t ow = i % g.out[2], r = i / g.out[2];
  const int64_t oh = r % g.out[1], r2 = r / g.out[1];
  const int64_t od = r2 % g.out[0], pl = r2 / g.out[0];
  const int64_t iw = pad_source(ow, g.in[2], g.lo[2], g.mode);
  const int64_t ih = pad_source(oh, g.in[1], g.lo[1], g.mode);
  const int64_t id = pad_source(od, g.in[0], g.lo[0], g.mode);
  if (iw < 0 || ih < 0 || id < 0) return -1;
  return ((pl * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw;
}

template <typename U>
__global__ void pad_kernel(int64_t n, PadGeom g, const U* x, U* y, U fill) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) {
    const int64_t j = pad_input_index(g, i);
    y[i] = j < 0 ? fill : x[j];
  }
}

// dx element j (of [planes, in0, in1, in2]) = the dy element of the same position, shifted.
template <typename U>
__global__ void crop_kernel(int64_t n, PadGeom g, const U* dy, U* dx) {
  for (int64_t j = cuda::grid_begin(); j < n; j += cuda::grid_step()) {
    const int64_t iw = j % g.in[2], r = j / g.in[2];
    const int64_t ih = r % g.in[1], r2 = r / g.in[1];
    const int64_t id = r2 % g.in[0], pl = r2 / g.in[0];
    dx[j] =
        dy[((pl * g.out[0] + id + g.lo[0]) * g.out[1] + ih + g.lo[1]) * g.out[2] + iw + g.lo[2]];
  }
}

template <typename F>
void by_item_size(const char* op, DType dt, F&& f) {
  switch (itemsize(dt)) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    case 8:
      return f.template operator()<uint64_t>();
    default:
      throw_error<RuntimeError>(op, "unsupported dtype ", dtype_name(dt));
  }
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
  const uint64_t fill = pad_fill_bits(in[0]->dtype(), attrs.get<double>("value"));
  by_item_size(name(), in[0]->dtype(), [&]<typename U>() {
    pad_kernel<U><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
        n, g, static_cast<const U*>(in[0]->data()), static_cast<U*>(out[0]->data()),
        static_cast<U>(fill));
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void PadGrad::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor& dx = out[0];
  if (dx->numel() == 0) return;
  const PadGeom g =
      pad_geom(dx->shape(), attrs.get<std::vector<int64_t>>("pads"), attrs.get<int64_t>("mode"));
  cudaStream_t stream = cuda_stream(dx->device().index);
  if (g.mode == PadMode::kConstant) {
    const int64_t n = dx->numel();
    return by_item_size(name(), dx->dtype(), [&]<typename U>() {
      crop_kernel<U><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
          n, g, static_cast<const U*>(in[0]->data()), static_cast<U*>(dx->data()));
      OF_CUDA_CHECK(cudaGetLastError());
    });
  }
  OF_CUDA_CHECK(cudaMemsetAsync(dx->data(), 0,
                                static_cast<size_t>(dx->numel()) * itemsize(dx->dtype()), stream));
  const int64_t n = in[0]->numel();
  if (n == 0) return;
  // Reflected and replicated borders add several gradients into one element with atomics.
  check_deterministic("reflection/replication/circular pad backward on CUDA");
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
