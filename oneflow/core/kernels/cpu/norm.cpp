// CPU kernels of layer normalisation. float32 runs on oneDNN (onednn/norm.cpp); float64 here:
// rows in parallel, row sums in eight independent lanes (which the compiler vectorises), the
// backward's weight and bias gradients summed per thread and combined at the end.
#include <cmath>
#include <vector>

#include <omp.h>

#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/onednn/kernels.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {
// Sum of f(i) for i in [0, n) in eight lanes.
template <typename T, typename F>
inline T lane_sum(int64_t n, F f) {
  T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += f(i + l);
  T total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) total += f(i);
  return total;
}
}  // namespace

void LayerNorm::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const int64_t k = attrs.get<int64_t>("size");
  const double eps = attrs.get<double>("eps");
  const int64_t rows = in[0]->numel() / k;
  if (in[0]->dtype() == DType::kFloat32)
    return onednn::layer_norm_forward(in[0], in[1], in[2], out[0], out[1], out[2], k,
                                      static_cast<float>(eps));
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* x = in[0]->data_as<T>();
      const T* w = in[1]->data_as<T>();
      const T* b = in[2]->data_as<T>();
      T* y = out[0]->data_as<T>();
      T* mean = out[1]->data_as<T>();
      T* rstd = out[2]->data_as<T>();
#pragma omp parallel for schedule(static) if (rows * k > cpu::kParallelGrain)
      for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * k;
        const T mu = lane_sum<T>(k, [xr](int64_t i) { return xr[i]; }) / T(k);
        const T var =
            lane_sum<T>(k, [xr, mu](int64_t i) { return (xr[i] - mu) * (xr[i] - mu); }) / T(k);
        const T rs = T(1.0 / std::sqrt(double(var) + eps));
        mean[r] = mu;
        rstd[r] = rs;
        T* yr = y + r * k;
        for (int64_t i = 0; i < k; ++i) yr[i] = (xr[i] - mu) * rs * w[i] + b[i];
      }
    }
  });
}

void LayerNormGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  const int64_t k = attrs.get<int64_t>("size");
  const int64_t rows = in[1]->numel() / k;
  if (in[1]->dtype() == DType::kFloat32) {
    Tensor dy = in[0];
    if (!dy->is_contiguous()) {
      dy = empty_tensor(in[0]->shape(), in[0]->dtype(), in[0]->device());
      copy_cpu(in[0], dy);
    }
    return onednn::layer_norm_backward(dy, in[1], in[2], in[3], in[4], out[0], out[1], out[2], k,
                                       static_cast<float>(attrs.get<double>("eps")));
  }
  visit_dtype(in[1]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      Tensor dy_c = in[0];
      if (!dy_c->is_contiguous()) {
        dy_c = empty_tensor(in[0]->shape(), in[0]->dtype(), in[0]->device());
        copy_cpu(in[0], dy_c);
      }
      const T* dy = dy_c->data_as<T>();
      const T* x = in[1]->data_as<T>();
      const T* mean = in[2]->data_as<T>();
      const T* rstd = in[3]->data_as<T>();
      const T* w = in[4]->data_as<T>();
      T* dx = out[0]->data_as<T>();
      T* dw = out[1]->data_as<T>();
      T* db = out[2]->data_as<T>();
      const int threads = rows * k > cpu::kParallelGrain ? omp_get_max_threads() : 1;
      std::vector<T> dw_part(threads * k, T(0)), db_part(threads * k, T(0));
#pragma omp parallel num_threads(threads)
      {
        const int tid = omp_get_thread_num();
        T* dwp = dw_part.data() + tid * k;
        T* dbp = db_part.data() + tid * k;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
          const T* xr = x + r * k;
          const T* gr = dy + r * k;
          const T mu = mean[r], rs = rstd[r];
          const T mg = lane_sum<T>(k, [gr, w](int64_t i) { return gr[i] * w[i]; }) / T(k);
          const T mgx =
              lane_sum<T>(k, [=](int64_t i) { return gr[i] * w[i] * ((xr[i] - mu) * rs); }) / T(k);
          T* dxr = dx + r * k;
          for (int64_t i = 0; i < k; ++i) {
            const T xhat = (xr[i] - mu) * rs;
            dwp[i] += gr[i] * xhat;
            dbp[i] += gr[i];
            dxr[i] = rs * (gr[i] * w[i] - mg - xhat * mgx);
          }
        }
      }
      for (int64_t i = 0; i < k; ++i) {
        double a = 0, c = 0;
        for (int t = 0; t < threads; ++t) {
          a += dw_part[t * k + i];
          c += db_part[t * k + i];
        }
        dw[i] = T(a);
        db[i] = T(c);
      }
    }
  });
}

}  // namespace oneflow
