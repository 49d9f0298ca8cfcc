// CUDA kernels of the normalisations: layer_norm, batch_norm (training, inference) and
// group_norm with their gradients, float32 and float64, on contiguous inputs (the primitives'
// contract, ops/fused_primitives.cpp). The semantics mirror kernels/cpu/norm.cpp and
// kernels/cpu/batch_norm.cpp: statistics in double, two passes (the mean, then the squared
// deviations), the biased variance.
//
// A row (layer_norm), a channel (batch_norm) or a (sample, group) pair (group_norm) is one
// block: its threads stride over the values and meet in a shared-memory reduction. The
// per-column sums of layer_norm's weight and bias gradients run over chunks of rows into a
// double buffer, then over the chunks, so that they need no atomics (deterministic).
#include <cmath>

#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/cuda/cuda_kernels.h"
#include "oneflow/core/kernels/cuda/device/strided_indexer.cuh"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

constexpr int kNormBlock = 256;

// Sums v over the block (blockDim.x == kNormBlock); every thread gets the total.
__device__ double block_sum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kNormBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();
  return total;
}

unsigned block_grid(int64_t blocks) {
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), 65535));
}

template <typename Fn>
void float_or_double(DType dt, Fn fn) {
  if (dt == DType::kFloat64)
    fn.template operator()<double>();
  else
    fn.template operator()<float>();
}

// The contiguous copy of t (t itself when it is contiguous), on t's stream.
Tensor contiguous_on_gpu(const Tensor& t) {
  if (t->is_contiguous()) return t;
  Tensor c = empty_tensor(t->shape(), t->dtype(), t->device());
  copy_cuda(t, c);
  return c;
}

// ---- layer_norm ----

template <typename T>
__global__ void layer_norm_forward(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd,
                                   int64_t rows, int64_t k, double eps) {
  __shared__ double shared[kNormBlock];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * k;
    double s = 0;
    for (int64_t i = threadIdx.x; i < k; i += blockDim.x) s += double(xr[i]);
    const double mu = block_sum(s, shared) / double(k);
    double q = 0;
    for (int64_t i = threadIdx.x; i < k; i += blockDim.x) {
      const double d = double(xr[i]) - mu;
      q += d * d;
    }
    const double rs = 1.0 / sqrt(block_sum(q, shared) / double(k) + eps);
    const T mt = T(mu), rt = T(rs);
    if (threadIdx.x == 0) {
      mean[row] = mt;
      rstd[row] = rt;
    }
    T* yr = y + row * k;
    for (int64_t i = threadIdx.x; i < k; i += blockDim.x) yr[i] = (xr[i] - mt) * rt * w[i] + b[i];
  }
}

// dx = rstd * (g w - mean(g w) - xhat * mean(g w xhat)) per row, xhat = (x - mean) * rstd.
template <typename T>
__global__ void layer_norm_backward_data(const T* dy, const T* x, const T* mean, const T* rstd,
                                         const T* w, T* dx, int64_t rows, int64_t k) {
  __shared__ double shared[kNormBlock];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * k;
    const T* gr = dy + row * k;
    const double mu = double(mean[row]), rs = double(rstd[row]);
    double sg = 0, sgx = 0;
    for (int64_t i = threadIdx.x; i < k; i += blockDim.x) {
      const double gw = double(gr[i]) * double(w[i]);
      sg += gw;
      sgx += gw * (double(xr[i]) - mu) * rs;
    }
    const double mg = block_sum(sg, shared) / double(k);
    const double mgx = block_sum(sgx, shared) / double(k);
    T* dxr = dx + row * k;
    for (int64_t i = threadIdx.x; i < k; i += blockDim.x) {
      const double xhat = (double(xr[i]) - mu) * rs;
      dxr[i] = T(rs * (double(gr[i]) * double(w[i]) - mg - xhat * mgx));
    }
  }
}

// Partial column sums of dy * xhat and dy over chunk c of the rows: part_w/part_b[c * k + i].
template <typename T>
__global__ void layer_norm_column_parts(const T* dy, const T* x, const T* mean, const T* rstd,
                                        double* part_w, double* part_b, int64_t rows, int64_t k,
                                        int64_t chunk) {
  const int64_t c = blockIdx.y;
  const int64_t r0 = c * chunk, r1 = std::min(rows, r0 + chunk);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < k;
       i += int64_t(gridDim.x) * blockDim.x) {
    double sw = 0, sb = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const double g = double(dy[r * k + i]);
      sw += g * (double(x[r * k + i]) - double(mean[r])) * double(rstd[r]);
      sb += g;
    }
    part_w[c * k + i] = sw;
    part_b[c * k + i] = sb;
  }
}

template <typename T>
__global__ void sum_column_parts(const double* part_w, const double* part_b, T* dw, T* db,
                                 int64_t chunks, int64_t k) {
  for (int64_t i = cuda::grid_begin(); i < k; i += cuda::grid_step()) {
    double sw = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      sw += part_w[c * k + i];
      sb += part_b[c * k + i];
    }
    dw[i] = T(sw);
    db[i] = T(sb);
  }
}

// ---- batch_norm over dim 1 of (N, C, S) ----

template <typename T>
__global__ void batch_norm_forward(const T* x, const T* w, const T* b, T* y, T* mean, T* var,
                                   int64_t n, int64_t c, int64_t s, double eps) {
  __shared__ double shared[kNormBlock];
  const int64_t count = n * s;
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    auto at = [&](int64_t j) { return ((j / s) * c + ch) * s + j % s; };
    double sum = 0;
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) sum += double(x[at(j)]);
    const double mu = block_sum(sum, shared) / double(count);
    double q = 0;
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
      const double d = double(x[at(j)]) - mu;
      q += d * d;
    }
    const double v = block_sum(q, shared) / double(count);
    const double rstd = 1.0 / sqrt(v + eps);
    if (threadIdx.x == 0) {
      mean[ch] = T(mu);
      var[ch] = T(v);
    }
    const T a = T(double(w[ch]) * rstd), d = T(double(b[ch]) - mu * double(w[ch]) * rstd);
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) y[at(j)] = x[at(j)] * a + d;
  }
}

// dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)), dw = sum(dy xhat), db = sum(dy).
template <typename T>
__global__ void batch_norm_backward(const T* dy, const T* x, const T* mean, const T* var,
                                    const T* w, T* dx, T* dw, T* db, int64_t n, int64_t c,
                                    int64_t s, double eps) {
  __shared__ double shared[kNormBlock];
  const int64_t count = n * s;
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    auto at = [&](int64_t j) { return ((j / s) * c + ch) * s + j % s; };
    const double mu = double(mean[ch]);
    double sd = 0, sdx = 0;
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
      const double g = double(dy[at(j)]);
      sd += g;
      sdx += g * (double(x[at(j)]) - mu);
    }
    const double sum_dy = block_sum(sd, shared);
    const double sum_dy_xmu = block_sum(sdx, shared);
    const double rstd = 1.0 / sqrt(double(var[ch]) + eps), g = double(w[ch]) * rstd;
    const double kx = g * rstd * rstd * sum_dy_xmu / double(count);
    if (threadIdx.x == 0) {
      db[ch] = T(sum_dy);
      dw[ch] = T(sum_dy_xmu * rstd);
    }
    const T a = T(g), k1 = T(-kx), k0 = T(kx * mu - g * sum_dy / double(count));
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x)
      dx[at(j)] = dy[at(j)] * a + x[at(j)] * k1 + k0;
  }
}

template <typename T>
__global__ void batch_norm_inference(const T* x, const T* mean, const T* var, const T* w,
                                     const T* b, T* y, int64_t total, int64_t c, int64_t s,
                                     double eps) {
  for (int64_t j = cuda::grid_begin(); j < total; j += cuda::grid_step()) {
    const int64_t ch = (j / s) % c;
    const double scale = double(w[ch]) / sqrt(double(var[ch]) + eps);
    const T a = T(scale), d = T(double(b[ch]) - double(mean[ch]) * scale);
    y[j] = x[j] * a + d;
  }
}

// ---- group_norm: pair p = (sample, group) holds d * s contiguous values, channel g d + j / s ----

template <typename T>
__global__ void group_norm_forward(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd,
                                   int64_t pairs, int64_t groups, int64_t d, int64_t s,
                                   double eps) {
  __shared__ double shared[kNormBlock];
  const int64_t m = d * s;
  for (int64_t p = blockIdx.x; p < pairs; p += gridDim.x) {
    const T* xp = x + p * m;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) sum += double(xp[j]);
    const double mu = block_sum(sum, shared) / double(m);
    double q = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const double dv = double(xp[j]) - mu;
      q += dv * dv;
    }
    const double rs = 1.0 / sqrt(block_sum(q, shared) / double(m) + eps);
    if (threadIdx.x == 0) {
      mean[p] = T(mu);
      rstd[p] = T(rs);
    }
    T* yp = y + p * m;
    const int64_t ch0 = (p % groups) * d;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const int64_t ch = ch0 + j / s;
      const T scale = T(rs * double(w[ch])), shift = T(double(b[ch]) - mu * rs * double(w[ch]));
      yp[j] = xp[j] * scale + shift;
    }
  }
}

// dx = a dy + bx x + c0 per pair with a = rstd w[ch] (the group's means of g = dy w and of
// g (x - mean) give bx and c0, as in the CPU kernel).
template <typename T>
__global__ void group_norm_backward_data(const T* dy, const T* x, const T* mean, const T* rstd,
                                         const T* w, T* dx, int64_t pairs, int64_t groups,
                                         int64_t d, int64_t s) {
  __shared__ double shared[kNormBlock];
  const int64_t m = d * s;
  for (int64_t p = blockIdx.x; p < pairs; p += gridDim.x) {
    const T* xp = x + p * m;
    const T* gp = dy + p * m;
    const int64_t ch0 = (p % groups) * d;
    const double mu = double(mean[p]), rs = double(rstd[p]);
    double sg = 0, sgx = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const double gw = double(gp[j]) * double(w[ch0 + j / s]);
      sg += gw;
      sgx += gw * (double(xp[j]) - mu);
    }
    const double m1 = block_sum(sg, shared) / double(m);
    const double m2 = block_sum(sgx, shared) * rs / double(m);
    const double bx = -rs * rs * m2, c0 = rs * rs * m2 * mu - rs * m1;
    const T bt = T(bx), ct = T(c0);
    T* dxp = dx + p * m;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const T a = T(rs * double(w[ch0 + j / s]));
      dxp[j] = a * gp[j] + bt * xp[j] + ct;
    }
  }
}

// dw[ch] = sum over samples of dy (x - mean) rstd, db[ch] = sum of dy: one block per channel.
template <typename T>
__global__ void group_norm_backward_params(const T* dy, const T* x, const T* mean, const T* rstd,
                                           T* dw, T* db, int64_t n, int64_t c, int64_t groups,
                                           int64_t s) {
  __shared__ double shared[kNormBlock];
  const int64_t d = c / groups, count = n * s;
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    double sw = 0, sb = 0;
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
      const int64_t sample = j / s, i = (sample * c + ch) * s + j % s;
      const int64_t p = sample * groups + ch / d;
      const double g = double(dy[i]);
      sw += g * (double(x[i]) - double(mean[p])) * double(rstd[p]);
      sb += g;
    }
    sw = block_sum(sw, shared);
    sb = block_sum(sb, shared);
    if (threadIdx.x == 0) {
      dw[ch] = T(sw);
      db[ch] = T(sb);
    }
  }
}

int64_t spatial(const Shape& shape) {
  int64_t s = 1;
  for (size_t i = 2; i < shape.size(); ++i) s *= shape[i];
  return s;
}

}  // namespace

void LayerNorm::compute_cuda(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  const int64_t k = attrs.get<int64_t>("size");
  const int64_t rows = in[0]->numel() / k;
  if (rows == 0) return;
  cudaStream_t stream = cuda_stream(in[0]->device().index);
  float_or_double(in[0]->dtype(), [&]<typename T>() {
    layer_norm_forward<T><<<block_grid(rows), kNormBlock, 0, stream>>>(
        in[0]->data_as<T>(), in[1]->data_as<T>(), in[2]->data_as<T>(), out[0]->data_as<T>(),
        out[1]->data_as<T>(), out[2]->data_as<T>(), rows, k, attrs.get<double>("eps"));
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void LayerNormGrad::compute_cuda(const TensorList& in, const TensorList& out,
                                 const Attrs& attrs) const {
  const int64_t k = attrs.get<int64_t>("size");
  const int64_t rows = in[1]->numel() / k;
  cudaStream_t stream = cuda_stream(in[1]->device().index);
  if (rows == 0) {  // the weight and bias gradients are sums over no rows
    OF_CUDA_CHECK(cudaMemsetAsync(out[1]->data(), 0, k * itemsize(out[1]->dtype()), stream));
    OF_CUDA_CHECK(cudaMemsetAsync(out[2]->data(), 0, k * itemsize(out[2]->dtype()), stream));
    return;
  }
  const Tensor dy = contiguous_on_gpu(in[0]);
  // Chunks of 64 rows (larger when that would make more than 65535 chunks, the grid's limit).
  const int64_t chunk = std::max<int64_t>(64, (rows + 65534) / 65535);
  const int64_t chunks = (rows + chunk - 1) / chunk;
  const Tensor parts = empty_tensor({2, chunks, k}, DType::kFloat64, in[1]->device());
  double* part_w = parts->data_as<double>();
  double* part_b = part_w + chunks * k;
  float_or_double(in[1]->dtype(), [&]<typename T>() {
    const T *g = dy->data_as<T>(), *x = in[1]->data_as<T>(), *mean = in[2]->data_as<T>();
    const T *rstd = in[3]->data_as<T>(), *w = in[4]->data_as<T>();
    layer_norm_backward_data<T><<<block_grid(rows), kNormBlock, 0, stream>>>(
        g, x, mean, rstd, w, out[0]->data_as<T>(), rows, k);
    OF_CUDA_CHECK(cudaGetLastError());
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>((k + 255) / 256, 65535)),
                    static_cast<unsigned>(chunks));
    layer_norm_column_parts<T>
        <<<grid, 256, 0, stream>>>(g, x, mean, rstd, part_w, part_b, rows, k, chunk);
    OF_CUDA_CHECK(cudaGetLastError());
    sum_column_parts<T><<<cuda::grid_size(k), cuda::kBlockSize, 0, stream>>>(
        part_w, part_b, out[1]->data_as<T>(), out[2]->data_as<T>(), chunks, k);
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void BatchNorm::compute_cuda(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const Shape& shape = in[0]->shape();
  const int64_t n = shape[0], c = shape[1], s = spatial(shape);
  cudaStream_t stream = cuda_stream(in[0]->device().index);
  float_or_double(in[0]->dtype(), [&]<typename T>() {
    batch_norm_forward<T><<<block_grid(c), kNormBlock, 0, stream>>>(
        in[0]->data_as<T>(), in[1]->data_as<T>(), in[2]->data_as<T>(), out[0]->data_as<T>(),
        out[1]->data_as<T>(), out[2]->data_as<T>(), n, c, s, attrs.get<double>("eps"));
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void BatchNormGrad::compute_cuda(const TensorList& in, const TensorList& out,
                                 const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const Shape& shape = in[1]->shape();
  const int64_t n = shape[0], c = shape[1], s = spatial(shape);
  cudaStream_t stream = cuda_stream(in[1]->device().index);
  const Tensor dy = contiguous_on_gpu(in[0]);
  float_or_double(in[1]->dtype(), [&]<typename T>() {
    batch_norm_backward<T><<<block_grid(c), kNormBlock, 0, stream>>>(
        dy->data_as<T>(), in[1]->data_as<T>(), in[2]->data_as<T>(), in[3]->data_as<T>(),
        in[4]->data_as<T>(), out[0]->data_as<T>(), out[1]->data_as<T>(), out[2]->data_as<T>(), n, c,
        s, attrs.get<double>("eps"));
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void BatchNormInference::compute_cuda(const TensorList& in, const TensorList& out,
                                      const Attrs& attrs) const {
  const int64_t total = out[0]->numel();
  if (total == 0) return;
  const Shape& shape = in[0]->shape();
  cudaStream_t stream = cuda_stream(in[0]->device().index);
  float_or_double(in[0]->dtype(), [&]<typename T>() {
    batch_norm_inference<T><<<cuda::grid_size(total), cuda::kBlockSize, 0, stream>>>(
        in[0]->data_as<T>(), in[1]->data_as<T>(), in[2]->data_as<T>(), in[3]->data_as<T>(),
        in[4]->data_as<T>(), out[0]->data_as<T>(), total, shape[1], spatial(shape),
        attrs.get<double>("eps"));
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void GroupNorm::compute_cuda(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const Shape& shape = in[0]->shape();
  const int64_t groups = attrs.get<int64_t>("num_groups");
  const int64_t n = shape[0], c = shape[1], s = spatial(shape), pairs = n * groups;
  cudaStream_t stream = cuda_stream(in[0]->device().index);
  float_or_double(in[0]->dtype(), [&]<typename T>() {
    group_norm_forward<T><<<block_grid(pairs), kNormBlock, 0, stream>>>(
        in[0]->data_as<T>(), in[1]->data_as<T>(), in[2]->data_as<T>(), out[0]->data_as<T>(),
        out[1]->data_as<T>(), out[2]->data_as<T>(), pairs, groups, c / groups, s,
        attrs.get<double>("eps"));
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

void GroupNormGrad::compute_cuda(const TensorList& in, const TensorList& out,
                                 const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const Shape& shape = in[1]->shape();
  const int64_t groups = attrs.get<int64_t>("num_groups");
  const int64_t n = shape[0], c = shape[1], s = spatial(shape), pairs = n * groups;
  cudaStream_t stream = cuda_stream(in[1]->device().index);
  const Tensor dy = contiguous_on_gpu(in[0]);
  float_or_double(in[1]->dtype(), [&]<typename T>() {
    const T *g = dy->data_as<T>(), *x = in[1]->data_as<T>(), *mean = in[2]->data_as<T>();
    const T *rstd = in[3]->data_as<T>(), *w = in[4]->data_as<T>();
    group_norm_backward_data<T><<<block_grid(pairs), kNormBlock, 0, stream>>>(
        g, x, mean, rstd, w, out[0]->data_as<T>(), pairs, groups, c / groups, s);
    OF_CUDA_CHECK(cudaGetLastError());
    group_norm_backward_params<T><<<block_grid(c), kNormBlock, 0, stream>>>(
        g, x, mean, rstd, out[1]->data_as<T>(), out[2]->data_as<T>(), n, c, groups, s);
    OF_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace oneflow
