// Shared pieces of the CUDA kernels: the strided indexer (a linear index over a shape -> element
// offsets of N operands, by div/mod), its host-side builder with dim coalescing, broadcast
// strides, and the launch geometry of grid-stride loops. Included only by kernels/cuda/*.cu.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "oneflow/core/common/error.h"
#include "oneflow/core/framework/tensor.h"

namespace oneflow::cuda {

// Dims an indexer holds after coalescing; more is an error (not a silent wrong result).
constexpr int kMaxDims = 8;
// Threads per block of the elementwise kernels, and the cap on their grid (grid-stride loops
// cover the rest).
constexpr int kBlockSize = 256;
constexpr int64_t kMaxGridSize = int64_t(1) << 20;

inline unsigned grid_size(int64_t n, int block = kBlockSize) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + block - 1) / block, 1, kMaxGridSize));
}

// The first index and the step of a 1-D grid-stride loop, in 64 bits.
__device__ __forceinline__ int64_t grid_begin() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_step() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Maps a linear (row-major) index over `sizes` to the element offsets of N operands. A small
// by-value struct, passed to kernels as a parameter.
template <int N>
struct StridedIndexer {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};

  // `linear` must be below the product of `sizes` (then dim 0 needs no division).
  __device__ __forceinline__ void offsets(int64_t linear, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
      // Unrolled over the fixed maximum so the arrays stay in registers / the parameter bank.
#pragma unroll
    for (int d = kMaxDims - 1; d >= 1; --d) {
      if (d < ndim) {
        const int64_t q = linear / sizes[d];
        const int64_t i = linear - q * sizes[d];
        linear = q;
#pragma unroll
        for (int k = 0; k < N; ++k) off[k] += i * strides[k][d];
      }
    }
    if (ndim > 0) {
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += linear * strides[k][0];
    }
  }
};

// Element strides of `t` broadcast to `shape`: t's dims align with the trailing dims of
// `shape`, and size-1 dims (and missing leading ones) get stride 0.
inline Strides broadcast_strides(const Tensor& t, const Shape& shape) {
  Strides s(shape.size(), 0);
  const size_t lead = shape.size() - t->shape().size();
  for (size_t i = 0; i < t->shape().size(); ++i)
    s[lead + i] = t->shape()[i] == 1 ? 0 : t->strides()[i];
  return s;
}

// Builds the indexer of N operands over `shape`, each with its element strides. Size-1 dims are
// dropped and dim d merges into the dim before it when every operand is contiguous across the
// two, so most layouts need 1-3 dims. Throws (naming `op`) if more than kMaxDims remain.
template <int N>
StridedIndexer<N> make_indexer(const char* op, const Shape& shape,
                               const std::array<Strides, N>& strides) {
  Shape dims;
  std::array<Strides, N> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!dims.empty()) {
      bool merge = true;
      for (int k = 0; k < N; ++k) merge = merge && st[k].back() == strides[k][d] * shape[d];
      if (merge) {
        dims.back() *= shape[d];
        for (int k = 0; k < N; ++k) st[k].back() = strides[k][d];
        continue;
      }
    }
    dims.push_back(shape[d]);
    for (int k = 0; k < N; ++k) st[k].push_back(strides[k][d]);
  }
  if (dims.size() > static_cast<size_t>(kMaxDims))
    throw_error<RuntimeError>(op, "CUDA kernels support at most ", kMaxDims,
                              " dims after merging contiguous ones, got ", dims.size(),
                              " for shape ", shape_str(shape));
  StridedIndexer<N> ix;
  ix.ndim = static_cast<int>(dims.size());
  for (int d = 0; d < ix.ndim; ++d) {
    ix.sizes[d] = dims[d];
    for (int k = 0; k < N; ++k) ix.strides[k][d] = st[k][d];
  }
  return ix;
}

}  // namespace oneflow::cuda
