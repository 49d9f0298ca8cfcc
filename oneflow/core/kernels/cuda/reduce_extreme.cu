// CUDA kernels of amax/amin/prod over any dims (Reduce<K>), of max/min along one dim with
// their indices (ArgReduce<K>), and of the scans cumsum, cumprod, cummax and cummin (one thread
// per line), with the CPU kernels' semantics (kernels/cpu/reduce.cpp): NaN
// propagates through amax/amin; max/min return the first NaN of a line, else the first position
// of the extreme; prod multiplies floats in double and integers in int64, an empty product
// being 1. Each output is reduced by one thread (short reductions) or one block (a shared-memory
// tree); an output's elements are visited in a fixed order for a given launch, so results are
// deterministic.
#include <algorithm>
#include <type_traits>

#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/cuda/device/strided_indexer.cuh"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

using cuda::StridedIndexer;

constexpr int kThreads = 256;
constexpr int64_t kThreadPerOutputMax = 32;

template <typename V>
__device__ __forceinline__ bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>)
    return v != v;
  else
    return false;
}

// The accumulator of Reduce<K>: the input's compute type for amax/amin, double or int64 for prod.
template <ReduceFn K, typename T>
using reduce_acc_t =
    std::conditional_t<K == ReduceFn::kProd,
                       std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>,
                       compute_t<T>>;

template <ReduceFn K, typename A>
__device__ __forceinline__ A combine(A a, A b) {
  if constexpr (K == ReduceFn::kProd) {
    return a * b;
  } else {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if constexpr (K == ReduceFn::kMax)
      return b > a ? b : a;
    else
      return b < a ? b : a;
  }
}

template <ReduceFn K, typename T>
__global__ void reduce_per_thread(int64_t n_out, int64_t n_red, StridedIndexer<1> kept,
                                  StridedIndexer<1> red, const T* x, T* out) {
  using A = reduce_acc_t<K, T>;
  for (int64_t o = cuda::grid_begin(); o < n_out; o += cuda::grid_step()) {
    int64_t base[1], off[1];
    kept.offsets(o, base);
    red.offsets(0, off);
    A acc = K == ReduceFn::kProd ? A(1) : A(compute_t<T>(x[base[0] + off[0]]));
    for (int64_t j = K == ReduceFn::kProd ? 0 : 1; j < n_red; ++j) {
      red.offsets(j, off);
      acc = combine<K, A>(acc, A(compute_t<T>(x[base[0] + off[0]])));
    }
    out[o] = T(compute_t<T>(acc));
  }
}

template <ReduceFn K, typename T>
__global__ void reduce_per_block(int64_t n_out, int64_t n_red, StridedIndexer<1> kept,
                                 StridedIndexer<1> red, const T* x, T* out) {
  using A = reduce_acc_t<K, T>;
  __shared__ A buf[kThreads];
  __shared__ bool has[kThreads];
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    int64_t base[1];
    kept.offsets(o, base);
    A acc = A(1);
    bool any = K == ReduceFn::kProd;  // amax/amin have no identity: a thread may see nothing
    for (int64_t j = threadIdx.x; j < n_red; j += kThreads) {
      int64_t off[1];
      red.offsets(j, off);
      const A v = A(compute_t<T>(x[base[0] + off[0]]));
      acc = any ? combine<K, A>(acc, v) : v;
      any = true;
    }
    buf[threadIdx.x] = acc;
    has[threadIdx.x] = any;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (static_cast<int>(threadIdx.x) < s && has[threadIdx.x + s]) {
        buf[threadIdx.x] = has[threadIdx.x] ? combine<K, A>(buf[threadIdx.x], buf[threadIdx.x + s])
                                            : buf[threadIdx.x + s];
        has[threadIdx.x] = true;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) out[o] = T(compute_t<T>(buf[0]));
    __syncthreads();
  }
}

// (value, position) pairs of max/min along a dim: the first NaN, else the extreme, ties to the
// lower position.
template <ReduceFn K, typename C>
__device__ __forceinline__ bool takes(C v, int64_t i, C best, int64_t at) {
  const bool vn = is_nan(v), bn = is_nan(best);
  if (vn || bn) return vn && (!bn || i < at);
  if (v == best) return i < at;
  return K == ReduceFn::kMax ? v > best : v < best;
}

template <ReduceFn K, typename T>
__global__ void arg_per_thread(int64_t n_out, int64_t len, int64_t step, StridedIndexer<1> kept,
                               const T* x, T* vals, int64_t* idxs) {
  using C = compute_t<T>;
  for (int64_t o = cuda::grid_begin(); o < n_out; o += cuda::grid_step()) {
    int64_t base[1];
    kept.offsets(o, base);
    const T* p = x + base[0];
    C best = C(p[0]);
    int64_t at = 0;
    for (int64_t i = 1; i < len && !is_nan(best); ++i) {
      const C v = C(p[i * step]);
      if (takes<K, C>(v, i, best, at)) {
        best = v;
        at = i;
      }
    }
    vals[o] = T(best);
    idxs[o] = at;
  }
}

template <ReduceFn K, typename T>
__global__ void arg_per_block(int64_t n_out, int64_t len, int64_t step, StridedIndexer<1> kept,
                              const T* x, T* vals, int64_t* idxs) {
  using C = compute_t<T>;
  __shared__ C sv[kThreads];
  __shared__ int64_t si[kThreads];
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    int64_t base[1];
    kept.offsets(o, base);
    const T* p = x + base[0];
    C best = C(0);
    int64_t at = -1;  // none seen
    for (int64_t i = threadIdx.x; i < len; i += kThreads) {
      const C v = C(p[i * step]);
      if (at < 0 || takes<K, C>(v, i, best, at)) {
        best = v;
        at = i;
      }
    }
    sv[threadIdx.x] = best;
    si[threadIdx.x] = at;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (static_cast<int>(threadIdx.x) < s) {
        const int64_t j = si[threadIdx.x + s];
        if (j >= 0 && (si[threadIdx.x] < 0 ||
                       takes<K, C>(sv[threadIdx.x + s], j, sv[threadIdx.x], si[threadIdx.x]))) {
          sv[threadIdx.x] = sv[threadIdx.x + s];
          si[threadIdx.x] = j;
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      vals[o] = T(sv[0]);
      idxs[o] = si[0];
    }
    __syncthreads();
  }
}

unsigned block_grid(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(n, 1), 65535));
}

// The kept dims (in output order) and the reduced ones of x.
void split_dims(const Tensor& x, const std::vector<int64_t>& dims, Shape* kept_shape,
                Strides* kept_strides, Shape* red_shape, Strides* red_strides) {
  for (int64_t d = 0; d < x->ndim(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    (reduced ? *red_shape : *kept_shape).push_back(x->shape()[d]);
    (reduced ? *red_strides : *kept_strides).push_back(x->strides()[d]);
  }
}

// ---- scans along a dim, one thread per line (the CPU kernels' order of operations) ----

template <typename T>
using scan_acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

template <bool Prod, typename T>
__global__ void scan_lines(int64_t lines, int64_t len, int64_t step, int64_t ostep,
                           StridedIndexer<2> ix, const T* x, T* out) {
  using A = scan_acc_t<T>;
  for (int64_t l = cuda::grid_begin(); l < lines; l += cuda::grid_step()) {
    int64_t off[2];
    ix.offsets(l, off);
    const T* p = x + off[0];
    T* q = out + off[1];
    A acc = Prod ? A(1) : A(0);
    for (int64_t i = 0; i < len; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        acc = Prod ? A(acc && p[i * step]) : A(acc + A(p[i * step]));
        q[i * ostep] = acc != 0;
      } else {
        const A v = A(compute_t<T>(p[i * step]));
        acc = Prod ? acc * v : acc + v;
        q[i * ostep] = T(compute_t<T>(acc));
      }
    }
  }
}

// cummax/cummin: ties take the later position; from the first NaN on, the running extreme is
// NaN and each later NaN takes the index (PyTorch's, as the CPU kernel).
template <ReduceFn K, typename T>
__global__ void cum_extreme_lines(int64_t lines, int64_t len, int64_t step, int64_t ostep,
                                  StridedIndexer<2> ix, const T* x, T* vals, int64_t* idxs) {
  using C = compute_t<T>;
  for (int64_t l = cuda::grid_begin(); l < lines; l += cuda::grid_step()) {
    int64_t off[2];
    ix.offsets(l, off);
    const T* p = x + off[0];
    T* v_out = vals + off[1];
    int64_t* i_out = idxs + off[1];
    C best = C(p[0]);
    int64_t at = 0, i = 0;
    for (; i < len; ++i) {
      const C v = C(p[i * step]);
      if (K == ReduceFn::kMax ? v >= best : v <= best) {
        best = v;
        at = i;
      } else if (is_nan(v)) {
        break;
      }
      v_out[i * ostep] = T(best);
      i_out[i * ostep] = at;
    }
    for (int64_t nan_at = i; i < len; ++i) {
      if (is_nan(C(p[i * step]))) nan_at = i;
      v_out[i * ostep] = p[nan_at * step];
      i_out[i * ostep] = nan_at;
    }
  }
}

// The lines of x along `dim` and of out (x's shape, contiguous): their count, length, steps and
// the indexer of their starts.
struct Lines {
  int64_t count = 1, len = 1, step = 0, ostep = 0;
  StridedIndexer<2> ix;
  Lines(const char* op, const Tensor& x, const Tensor& out, int64_t dim) {
    Shape kept;
    Strides xs, os;
    for (int64_t d = 0; d < x->ndim(); ++d) {
      if (d == dim) {
        len = x->shape()[d];
        step = x->strides()[d];
        ostep = out->strides()[d];
        continue;
      }
      kept.push_back(x->shape()[d]);
      xs.push_back(x->strides()[d]);
      os.push_back(out->strides()[d]);
    }
    count = numel(kept);
    ix = cuda::make_indexer<2>(op, kept, {xs, os});
  }
};

template <bool Prod>
void scan(const char* op, const Tensor& x, const Tensor& out, int64_t dim) {
  if (out->numel() == 0) return;
  const Lines l(op, x, out, dim);
  cudaStream_t stream = cuda_stream(out->device().index);
  visit_dtype(x->dtype(), [&]<typename T>() {
    scan_lines<Prod, T><<<cuda::grid_size(l.count), cuda::kBlockSize, 0, stream>>>(
        l.count, l.len, l.step, l.ostep, l.ix, x->data_as<T>(), out->data_as<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace

template <ReduceFn K>
void Reduce<K>::compute_cuda(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  const Tensor &x = in[0], &y = out[0];
  const int64_t n_out = y->numel();
  if (n_out == 0) return;
  cudaStream_t stream = cuda_stream(y->device().index);
  Shape kept_shape, red_shape;
  Strides kept_strides, red_strides;
  split_dims(x, attrs.get<std::vector<int64_t>>("dims"), &kept_shape, &kept_strides, &red_shape,
             &red_strides);
  const int64_t n_red = numel(red_shape);
  OF_ASSERT(y->is_contiguous() && numel(kept_shape) == n_out);
  const auto kept = cuda::make_indexer<1>(name(), kept_shape, {kept_strides});
  const auto red = cuda::make_indexer<1>(name(), red_shape, {red_strides});
  visit_dtype(x->dtype(), [&]<typename T>() {
    if (n_red <= kThreadPerOutputMax)  // (an empty product is 1: no element to multiply)
      reduce_per_thread<K, T><<<cuda::grid_size(n_out), cuda::kBlockSize, 0, stream>>>(
          n_out, n_red, kept, red, x->data_as<T>(), y->data_as<T>());
    else
      reduce_per_block<K, T><<<block_grid(n_out), kThreads, 0, stream>>>(
          n_out, n_red, kept, red, x->data_as<T>(), y->data_as<T>());
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

template <ReduceFn K>
void ArgReduce<K>::compute_cuda(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  const Tensor& x = in[0];
  const int64_t n_out = out[0]->numel();
  if (n_out == 0) return;
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  int64_t len = 1, step = 0;
  Shape kept_shape;
  Strides kept_strides;
  if (x->ndim() > 0) {
    const int64_t dim = attrs.get<int64_t>("dim");
    len = x->shape()[dim];
    step = x->strides()[dim];
    Shape red_shape;
    Strides red_strides;
    split_dims(x, {dim}, &kept_shape, &kept_strides, &red_shape, &red_strides);
  }
  const auto kept = cuda::make_indexer<1>(name(), kept_shape, {kept_strides});
  visit_dtype(x->dtype(), [&]<typename T>() {
    T* vals = out[0]->data_as<T>();
    int64_t* idxs = out[1]->data_as<int64_t>();
    if (len <= kThreadPerOutputMax)
      arg_per_thread<K, T><<<cuda::grid_size(n_out), cuda::kBlockSize, 0, stream>>>(
          n_out, len, step, kept, x->data_as<T>(), vals, idxs);
    else
      arg_per_block<K, T><<<block_grid(n_out), kThreads, 0, stream>>>(n_out, len, step, kept,
                                                                      x->data_as<T>(), vals, idxs);
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void Cumsum::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  scan<false>(name(), in[0], out[0], attrs.get<int64_t>("dim"));
}

void Cumprod::compute_cuda(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  scan<true>(name(), in[0], out[0], attrs.get<int64_t>("dim"));
}

template <ReduceFn K>
void CumExtreme<K>::compute_cuda(const TensorList& in, const TensorList& out,
                                 const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const Lines l(name(), in[0], out[0], attrs.get<int64_t>("dim"));
  cudaStream_t stream = cuda_stream(out[0]->device().index);
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    cum_extreme_lines<K, T><<<cuda::grid_size(l.count), cuda::kBlockSize, 0, stream>>>(
        l.count, l.len, l.step, l.ostep, l.ix, in[0]->data_as<T>(), out[0]->data_as<T>(),
        out[1]->data_as<int64_t>());
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

#define OF_REDUCE_CUDA(Cls) \
  template void Cls::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const;
OF_REDUCE_CUDA(Reduce<ReduceFn::kProd>)
OF_REDUCE_CUDA(Reduce<ReduceFn::kMax>)
OF_REDUCE_CUDA(Reduce<ReduceFn::kMin>)
OF_REDUCE_CUDA(ArgReduce<ReduceFn::kMax>)
OF_REDUCE_CUDA(ArgReduce<ReduceFn::kMin>)
OF_REDUCE_CUDA(CumExtreme<ReduceFn::kMax>)
OF_REDUCE_CUDA(CumExtreme<ReduceFn::kMin>)
#undef OF_REDUCE_CUDA

}  // namespace oneflow
