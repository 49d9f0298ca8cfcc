// CUDA kernels of the copy and creation primitives: strided copy with dtype cast (within a GPU,
// and staged through a contiguous buffer for host <-> device and device <-> device transfers),
// fill, and the Philox normal generator (the same numbers as kernels/cpu/copy.cpp for a seed).
#include <type_traits>

#include "oneflow/core/common/philox.h"
#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cuda/cuda_kernels.h"
#include "oneflow/core/kernels/cuda/device/strided_indexer.cuh"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

using cuda::StridedIndexer;

template <typename D, typename S>
__global__ void cast_flat(int64_t n, D* dst, const S* src) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step())
    dst[i] = cast_value<D>(src[i]);
}

template <typename D, typename S>
__global__ void cast_strided(int64_t n, StridedIndexer<2> ix, D* dst, const S* src) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) {
    int64_t off[2];
    ix.offsets(i, off);
    dst[off[0]] = cast_value<D>(src[off[1]]);
  }
}

// Zeroes the elements outside the triangle of contiguous [.., rows, cols] matrices (y may be x).
template <typename T>
__global__ void triangle_kernel(int64_t n, int64_t rows, int64_t cols, int64_t diagonal, bool upper,
                                const T* x, T* y) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= diagonal : c - r <= diagonal;
    y[i] = keep ? x[i] : cast_value<T>(0.0f);
  }
}

template <typename T>
__global__ void fill_kernel(int64_t n, T* out, T value) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) out[i] = value;
}

// Counter offset + c yields elements 4c .. 4c+3 (two Box-Muller pairs), as on the CPU.
template <typename T>
__global__ void normal_kernel(int64_t n, T* out, Philox4x32 gen, uint64_t offset, double mean,
                              double stddev) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t c = cuda::grid_begin(); c < groups; c += cuda::grid_step()) {
    uint32_t r[4];
    gen(offset + static_cast<uint64_t>(c), r);
    float z[4];
    box_muller(uint_to_unit_float(r[0]), uint_to_unit_float(r[1]), &z[0], &z[1]);
    box_muller(uint_to_unit_float(r[2]), uint_to_unit_float(r[3]), &z[2], &z[3]);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (4 * c + k >= n) break;
      // Explicit roundings: the host computes mean + std * z without a fused multiply-add.
      const double v = __dadd_rn(mean, __dmul_rn(stddev, static_cast<double>(z[k])));
      out[4 * c + k] = T(static_cast<compute_t<T>>(v));
    }
  }
}

// float64: counter offset + c yields elements 2c, 2c + 1 from 53-bit draws, as on the CPU.
__global__ void normal_f64_kernel(int64_t n, double* out, Philox4x32 gen, uint64_t offset,
                                  double mean, double stddev) {
  const int64_t groups = (n + 1) / 2;
  for (int64_t c = cuda::grid_begin(); c < groups; c += cuda::grid_step()) {
    uint32_t r[4];
    gen(offset + static_cast<uint64_t>(c), r);
    double z[2];
    box_muller(bits_to_unit_double(r[0], r[1]), bits_to_unit_double(r[2], r[3]), &z[0], &z[1]);
    for (int k = 0; k < 2 && 2 * c + k < n; ++k)
      out[2 * c + k] = __dadd_rn(mean, __dmul_rn(stddev, z[k]));
  }
}

__global__ void uniform_f64_kernel(int64_t n, double* out, Philox4x32 gen, uint64_t offset,
                                   double low, double high) {
  const int64_t groups = (n + 1) / 2;
  for (int64_t c = cuda::grid_begin(); c < groups; c += cuda::grid_step()) {
    uint32_t r[4];
    gen(offset + static_cast<uint64_t>(c), r);
    for (int k = 0; k < 2 && 2 * c + k < n; ++k)
      out[2 * c + k] = uniform_value_f64(r[2 * k], r[2 * k + 1], low, high);
  }
}

template <typename T>
__global__ void arange_kernel(int64_t n, T* out, double start, double step) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step())
    out[i] = cast_value<T>(start + static_cast<double>(i) * step);
}

template <typename T>
__global__ void uniform_kernel(int64_t n, T* out, Philox4x32 gen, uint64_t offset, double low,
                               double high) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t c = cuda::grid_begin(); c < groups; c += cuda::grid_step()) {
    uint32_t r[4];
    gen(offset + static_cast<uint64_t>(c), r);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (4 * c + k >= n) break;
      out[4 * c + k] = uniform_value<T>(r[k], low, high);
    }
  }
}

// Device of a transfer's source or destination, for the backend's copy.
bool on_cuda(const Tensor& t) { return t->device().type == DeviceType::kCUDA; }

}  // namespace

void copy_cuda(const Tensor& src, const Tensor& dst) {
  OF_ASSERT(on_cuda(src) && on_cuda(dst) && src->device() == dst->device());
  OF_ASSERT(src->shape() == dst->shape());
  const int64_t n = dst->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(dst->device().index);
  const bool flat = src->is_contiguous() && dst->is_contiguous();
  if (flat && src->dtype() == dst->dtype()) {
    OF_CUDA_CHECK(cudaMemcpyAsync(dst->data(), src->data(), n * itemsize(dst->dtype()),
                                  cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if (is_complex(src->dtype()) || is_complex(dst->dtype())) {  // through the real pairs
    if (is_complex(src->dtype()) && is_complex(dst->dtype())) {
      copy_cuda(complex_pairs_view(src, -1), complex_pairs_view(dst, -1));
    } else if (is_complex(dst->dtype())) {
      copy_cuda(src, complex_pairs_view(dst, 0));
      const Tensor zero = empty_tensor({}, complex_to_real(dst->dtype()), dst->device());
      OF_CUDA_CHECK(cudaMemsetAsync(zero->data(), 0, itemsize(zero->dtype()), stream));
      const Tensor imag = complex_pairs_view(dst, 1);
      copy_cuda(make_view(zero, imag->shape(), Strides(imag->ndim(), 0), 0), imag);
    } else {
      copy_cuda(complex_pairs_view(src, 0), dst);
    }
    return;
  }
  const Shape& shape = dst->shape();
  visit_dtype(src->dtype(), [&]<typename S>() {
    visit_dtype(dst->dtype(), [&]<typename D>() {
      D* o = dst->data_as<D>();
      const S* x = src->data_as<S>();
      if (flat) {
        cast_flat<D, S><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, o, x);
      } else {
        const auto ix = cuda::make_indexer<2>(
            "copy", shape,
            {cuda::broadcast_strides(dst, shape), cuda::broadcast_strides(src, shape)});
        cast_strided<D, S><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, ix, o, x);
      }
      OF_CUDA_CHECK(cudaGetLastError());
    });
  });
}

// Called when the input or the output is on a GPU (dispatch.cpp). The output is contiguous.
// Within one GPU this is one cast kernel. Across devices the data is first made contiguous in
// the output's dtype on the side that holds it (cast kernel on the source GPU, or copy_cpu on
// the host), then moved by the backend's copy in one transfer.
void Flip::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  copy_cuda(flipped_view(in[0], attrs.get<std::vector<int64_t>>("dims")), out[0]);
}

void Copy::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Tensor& src = in[0];
  const Tensor& dst = out[0];
  if (on_cuda(src) && on_cuda(dst) && src->device() == dst->device()) {
    copy_cuda(src, dst);
    return;
  }
  if (!on_cuda(src) && !on_cuda(dst)) {
    copy_cpu(src, dst);
    return;
  }
  if (dst->numel() == 0) return;
  OF_ASSERT(dst->is_contiguous() && src->shape() == dst->shape());
  const bool ready = src->is_contiguous() && src->dtype() == dst->dtype();
  Tensor staged = src;
  if (!ready) {
    staged = empty_tensor(src->shape(), dst->dtype(), src->device());
    if (on_cuda(src))
      copy_cuda(src, staged);
    else
      copy_cpu(src, staged);
  }
  // Host copies return when the bytes are there; peer copies wait for the source's stream.
  cuda_backend().copy(dst->data(), dst->device(), staged->data(), staged->device(),
                      dst->numel() * itemsize(dst->dtype()));
}

// A strided input is first copied into the output, then zeroed there.
void Triangle::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor& y = out[0];
  const int64_t n = y->numel();
  if (n == 0) return;
  const Shape& shape = y->shape();
  const int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
  const Tensor& x = in[0]->is_contiguous() ? in[0] : y;
  if (!in[0]->is_contiguous()) copy_cuda(in[0], y);
  cudaStream_t stream = cuda_stream(y->device().index);
  visit_dtype(y->dtype(), [&]<typename T>() {
    triangle_kernel<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
        n, rows, cols, attrs.get<int64_t>("diagonal"), attrs.get<bool>("upper"), x->data_as<T>(),
        y->data_as<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void Fill::compute_cuda(const TensorList&, const TensorList& out, const Attrs& attrs) const {
  const double value = attrs.get<double>("value");
  // int_value: an integer fill value, exact where the double is not (beyond 2**53).
  const bool exact_int = attrs.has("int_value");
  const int64_t int_value = exact_int ? attrs.get<int64_t>("int_value") : 0;
  const int64_t n = out[0]->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    const T v = exact_int ? cast_value<T>(int_value) : cast_value<T>(value);
    fill_kernel<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, out[0]->data_as<T>(), v);
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void RandomNormal::compute_cuda(const TensorList&, const TensorList& out,
                                const Attrs& attrs) const {
  const double mean = attrs.get<double>("mean"), stddev = attrs.get<double>("std");
  const Philox4x32 gen(static_cast<uint64_t>(attrs.get<int64_t>("seed")));
  const uint64_t offset = static_cast<uint64_t>(attrs.get<int64_t>("offset"));
  const int64_t n = out[0]->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  if (out[0]->dtype() == DType::kFloat64) {
    normal_f64_kernel<<<cuda::grid_size((n + 1) / 2), cuda::kBlockSize, 0, stream>>>(
        n, out[0]->data_as<double>(), gen, offset, mean, stddev);
    OF_CUDA_CHECK(cudaGetLastError());
    return;
  }
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const int64_t groups = (n + 3) / 4;
      normal_kernel<T><<<cuda::grid_size(groups), cuda::kBlockSize, 0, stream>>>(
          n, out[0]->data_as<T>(), gen, offset, mean, stddev);
      OF_CUDA_CHECK(cudaGetLastError());
    }
  });
}

void SliceGrad::compute_cuda(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  const Tensor& dst = out[0];
  if (dst->numel() == 0) return;
  cudaStream_t stream = cuda_stream(dst->device().index);
  OF_CUDA_CHECK(cudaMemsetAsync(dst->data(), 0, dst->numel() * itemsize(dst->dtype()), stream));
  copy_cuda(in[0], slice_view_of(dst, attrs));
}

void Assign::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Tensor& dst = out[0];
  const Tensor& src = in[1];
  // src broadcast to dst's shape as a stride-0 view, then one strided copy.
  Tensor b =
      make_view(src, dst->shape(), cuda::broadcast_strides(src, dst->shape()), src->offset());
  copy_cuda(b, dst);
}

void Arange::compute_cuda(const TensorList&, const TensorList& out, const Attrs& attrs) const {
  const int64_t n = out[0]->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  const double start = attrs.get<double>("start"), step = attrs.get<double>("step");
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    arange_kernel<T>
        <<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(n, out[0]->data_as<T>(), start, step);
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void RandomUniform::compute_cuda(const TensorList&, const TensorList& out,
                                 const Attrs& attrs) const {
  const int64_t n = out[0]->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  const Philox4x32 gen(static_cast<uint64_t>(attrs.get<int64_t>("seed")));
  const uint64_t offset = static_cast<uint64_t>(attrs.get<int64_t>("offset"));
  const double low = attrs.get<double>("low"), high = attrs.get<double>("high");
  if (out[0]->dtype() == DType::kFloat64) {
    uniform_f64_kernel<<<cuda::grid_size((n + 1) / 2), cuda::kBlockSize, 0, stream>>>(
        n, out[0]->data_as<double>(), gen, offset, low, high);
    OF_CUDA_CHECK(cudaGetLastError());
    return;
  }
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    uniform_kernel<T><<<cuda::grid_size((n + 3) / 4), cuda::kBlockSize, 0, stream>>>(
        n, out[0]->data_as<T>(), gen, offset, low, high);
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

namespace {

struct StridedPlacement {
  int nd = 0;
  int64_t size[cuda::kMaxDims] = {}, stride[cuda::kMaxDims] = {};
  int64_t offset = 0;
};

template <typename T>
__global__ void as_strided_grad_kernel(int64_t n, StridedPlacement pl, const T* g, T* o) {
  for (int64_t i = cuda::grid_begin(); i < n; i += cuda::grid_step()) {
    int64_t off = pl.offset, rem = i;
    for (int d = pl.nd - 1; d >= 0; --d) {
      off += (rem % pl.size[d]) * pl.stride[d];
      rem /= pl.size[d];
    }
    atomicAdd(o + off, g[i]);
  }
}

template <typename T>
__global__ void bernoulli_kernel(int64_t n, const T* p, T* out, Philox4x32 gen, uint64_t offset) {
  for (int64_t c = cuda::grid_begin(); c < (n + 3) / 4; c += cuda::grid_step()) {
    uint32_t r[4];
    gen(offset + static_cast<uint64_t>(c), r);
    for (int k = 0; k < 4 && 4 * c + k < n; ++k)
      out[4 * c + k] = T(uint_to_unit_float(r[k]) <= float(compute_t<T>(p[4 * c + k])) ? 1 : 0);
  }
}

}  // namespace

void AsStridedGrad::compute_cuda(const TensorList& in, const TensorList& out,
                                 const Attrs& attrs) const {
  const auto& size = attrs.get<std::vector<int64_t>>("grad_size");
  const auto& stride = attrs.get<std::vector<int64_t>>("grad_stride");
  if (size.size() > static_cast<size_t>(cuda::kMaxDims))
    throw_error<NotImplementedError>(name(), "more than ", cuda::kMaxDims, " dims on CUDA");
  StridedPlacement pl;
  pl.nd = static_cast<int>(size.size());
  for (int d = 0; d < pl.nd; ++d) {
    pl.size[d] = size[d];
    pl.stride[d] = stride[d];
  }
  pl.offset = attrs.get<int64_t>("grad_offset");
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  OF_CUDA_CHECK(
      cudaMemsetAsync(out[0]->data(), 0, out[0]->numel() * itemsize(out[0]->dtype()), stream));
  const int64_t n = in[0]->numel();
  if (n == 0) return;
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      as_strided_grad_kernel<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
          n, pl, in[0]->data_as<T>(), out[0]->data_as<T>());
      OF_CUDA_CHECK(cudaGetLastError());
    } else {
      throw_error<NotImplementedError>(name(), "CUDA supports float32 and float64, got ",
                                       dtype_name(out[0]->dtype()));
    }
  });
}

void Bernoulli::compute_cuda(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  const int64_t n = out[0]->numel();
  if (n == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  const Philox4x32 gen(static_cast<uint64_t>(attrs.get<int64_t>("seed")));
  const uint64_t offset = static_cast<uint64_t>(attrs.get<int64_t>("offset"));
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      bernoulli_kernel<T><<<cuda::grid_size((n + 3) / 4), cuda::kBlockSize, 0, stream>>>(
          n, in[0]->data_as<T>(), out[0]->data_as<T>(), gen, offset);
      OF_CUDA_CHECK(cudaGetLastError());
    }
  });
}

}  // namespace oneflow
