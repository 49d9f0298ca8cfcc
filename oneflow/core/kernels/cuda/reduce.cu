// CUDA kernels of the reductions (sum). Accumulation runs in double for floating types and in
// int64 for integers and bool, as in kernels/cpu/reduce.cpp. Each output element is summed by
// one thread (short reductions) or one block (long ones, shared-memory tree); when there are
// few outputs, each one is split over several blocks whose partial sums a second pass adds.
#include <type_traits>

#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/cuda/device/strided_indexer.cuh"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

using cuda::StridedIndexer;

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

constexpr int kReduceThreads = 256;
// Reductions of at most this many elements per output run one thread per output.
constexpr int64_t kThreadPerOutputMax = 32;
// Enough blocks to fill an H100/H200-class GPU a few times over; fewer outputs than this get
// split over several blocks each.
constexpr int64_t kTargetBlocks = 1024;
// Each block of a split reduction handles at least this many elements.
constexpr int64_t kMinElemsPerBlock = 4 * kReduceThreads;

template <typename T>
__device__ __forceinline__ acc_t<T> load_acc(const T* p) {
  return static_cast<acc_t<T>>(compute_t<T>(*p));
}

template <typename O, typename A>
__device__ __forceinline__ O store_cast(A v) {
  return O(static_cast<compute_t<O>>(v));
}

// One thread per output element: out[o] = sum over the reduced index space.
template <typename T, typename O>
__global__ void sum_per_thread(int64_t n_out, int64_t n_red, StridedIndexer<1> kept,
                               StridedIndexer<1> red, const T* x, O* out) {
  using A = acc_t<T>;
  for (int64_t o = cuda::grid_begin(); o < n_out; o += cuda::grid_step()) {
    int64_t base[1];
    kept.offsets(o, base);
    A acc = A(0);
    for (int64_t j = 0; j < n_red; ++j) {
      int64_t off[1];
      red.offsets(j, off);
      acc += load_acc(x + base[0] + off[0]);
    }
    out[o] = store_cast<O>(acc);
  }
}

// Block b sums part (b % splits) of the reduction of output (b / splits), elements
// [part * chunk, min(n_red, (part + 1) * chunk)), into out[b]. With splits == 1 out[b] is the
// final sum of output b; otherwise `out` holds partial sums ([n_out, splits], contiguous).
template <typename T, typename O>
__global__ void sum_per_block(int64_t n_out, int64_t n_red, int64_t splits, int64_t chunk,
                              StridedIndexer<1> kept, StridedIndexer<1> red, const T* x, O* out) {
  using A = acc_t<T>;
  __shared__ A buf[kReduceThreads];
  const int64_t n_blocks = n_out * splits;
  for (int64_t b = blockIdx.x; b < n_blocks; b += gridDim.x) {  // uniform across the block
    const int64_t o = b / splits, part = b - o * splits;
    int64_t base[1];
    kept.offsets(o, base);
    const int64_t begin = part * chunk;
    const int64_t end = begin + chunk < n_red ? begin + chunk : n_red;
    A acc = A(0);
    for (int64_t j = begin + threadIdx.x; j < end; j += kReduceThreads) {
      int64_t off[1];
      red.offsets(j, off);
      acc += load_acc(x + base[0] + off[0]);
    }
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kReduceThreads / 2; s > 0; s >>= 1) {
      if (static_cast<int>(threadIdx.x) < s) buf[threadIdx.x] += buf[threadIdx.x + s];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[b] = store_cast<O>(buf[0]);
    __syncthreads();  // buf is reused by the block's next output
  }
}

// Launches the reduction of x (offsets kept + red) into out[n_out] on `stream`.
template <typename T, typename O>
void sum_launch(int64_t n_out, int64_t n_red, const StridedIndexer<1>& kept,
                const StridedIndexer<1>& red, const T* x, O* out, Device device,
                cudaStream_t stream) {
  using A = acc_t<T>;
  if (n_red <= kThreadPerOutputMax) {
    sum_per_thread<T, O>
        <<<cuda::grid_size(n_out), cuda::kBlockSize, 0, stream>>>(n_out, n_red, kept, red, x, out);
    OF_CUDA_CHECK(cudaGetLastError());
    return;
  }
  int64_t splits = 1;
  if (n_out < kTargetBlocks)
    splits = std::max<int64_t>(
        1, std::min((kTargetBlocks + n_out - 1) / n_out, n_red / kMinElemsPerBlock));
  const int64_t chunk = (n_red + splits - 1) / splits;
  splits = (n_red + chunk - 1) / chunk;  // no empty parts
  const unsigned grid = static_cast<unsigned>(std::min(n_out * splits, cuda::kMaxGridSize));
  if (splits == 1) {
    sum_per_block<T, O>
        <<<grid, kReduceThreads, 0, stream>>>(n_out, n_red, 1, chunk, kept, red, x, out);
    OF_CUDA_CHECK(cudaGetLastError());
    return;
  }
  // Pass 1: partial sums in the accumulator type; pass 2 adds each output's `splits` partials.
  const DType acc_dtype = std::is_same_v<A, double> ? DType::kFloat64 : DType::kInt64;
  Tensor partial = empty_tensor({n_out, splits}, acc_dtype, device);
  A* p = partial->data_as<A>();
  sum_per_block<T, A>
      <<<grid, kReduceThreads, 0, stream>>>(n_out, n_red, splits, chunk, kept, red, x, p);
  OF_CUDA_CHECK(cudaGetLastError());
  StridedIndexer<1> rows, cols;
  rows.ndim = 1;
  rows.sizes[0] = n_out;
  rows.strides[0][0] = splits;
  cols.ndim = 1;
  cols.sizes[0] = splits;
  cols.strides[0][0] = 1;
  const unsigned grid2 = static_cast<unsigned>(std::min(n_out, cuda::kMaxGridSize));
  sum_per_block<A, O>
      <<<grid2, kReduceThreads, 0, stream>>>(n_out, splits, 1, splits, rows, cols, p, out);
  OF_CUDA_CHECK(cudaGetLastError());
  // `partial` returns to the stream-ordered cache here; later work on this stream runs after.
}

template <typename T, typename O>
void sum_kernel(const char* name, const Tensor& x, const Tensor& out,
                const std::vector<int64_t>& dims) {
  const int64_t n_out = out->numel();
  if (n_out == 0) return;
  cudaStream_t stream = cuda_stream(out->device().index);
  // Split the input's dims into kept (in output order) and reduced ones.
  Shape kept_shape, red_shape;
  Strides kept_strides, red_strides;
  for (int64_t d = 0; d < x->ndim(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    (reduced ? red_shape : kept_shape).push_back(x->shape()[d]);
    (reduced ? red_strides : kept_strides).push_back(x->strides()[d]);
  }
  const int64_t n_red = numel(red_shape);
  if (n_red == 0 || x->numel() == 0) {  // an empty sum is 0 (all-zero bytes in every dtype)
    OF_CUDA_CHECK(cudaMemsetAsync(out->data(), 0, n_out * itemsize(out->dtype()), stream));
    return;
  }
  OF_ASSERT(numel(kept_shape) == n_out && out->is_contiguous());
  const auto kept = cuda::make_indexer<1>(name, kept_shape, {kept_strides});
  const auto red = cuda::make_indexer<1>(name, red_shape, {red_strides});
  sum_launch<T, O>(n_out, n_red, kept, red, x->data_as<T>(), out->data_as<O>(), out->device(),
                   stream);
}

}  // namespace

void ReduceSum::compute_cuda(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    visit_dtype(out[0]->dtype(),
                [&]<typename O>() { sum_kernel<T, O>(name(), in[0], out[0], dims); });
  });
}

}  // namespace oneflow
