// CPU kernels of Resample and ResampleGrad (nn_primitives.h): interpolation along one dim as a
// weighted gather of taps per output position, and its adjoint. Tensors are seen as
// (outer, n, inner) around the dim. Both directions are one gather kernel over "tap rows":
// output position j reads the positions src[off[j] .. off[j + 1]) with their weights. The
// forward's rows are the T taps of each position; the backward's rows are the transposed taps
// (the dy positions that read each dx position, in increasing order), so every dx element is
// written once, by one thread, without accumulators or atomics. With inner > 1 a tap is a
// contiguous row of `inner` elements (vector loops); along the last dim (inner == 1) each work
// item is one line. Sums run in the compute type (float for 16-bit floats).
#include <algorithm>
#include <vector>

#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {

struct TapRows {
  std::vector<int64_t> off, src;
  std::vector<double> weight;
  int64_t fixed = 0;  // taps per row when every row has the same count, else 0
};

// The forward's rows: position j reads index[t, j] with weight[t, j], t < T.
TapRows forward_taps(const Tensor& index, const Tensor& weight) {
  const int64_t k = index->shape()[0], m = index->shape()[1];
  const int64_t* idx = index->data_as<int64_t>();
  const double* w = weight->data_as<double>();
  TapRows r;
  r.fixed = k;
  r.off.resize(m + 1);
  r.src.resize(k * m);
  r.weight.resize(k * m);
  for (int64_t j = 0; j <= m; ++j) r.off[j] = j * k;
  for (int64_t j = 0; j < m; ++j)
    for (int64_t t = 0; t < k; ++t) {
      r.src[j * k + t] = idx[t * m + j];
      r.weight[j * k + t] = w[t * m + j];
    }
  return r;
}

// The adjoint's rows onto n positions: position i reads every j with index[t, j] == i.
TapRows adjoint_taps(const Tensor& index, const Tensor& weight, int64_t n) {
  const int64_t k = index->shape()[0], m = index->shape()[1];
  const int64_t* idx = index->data_as<int64_t>();
  const double* w = weight->data_as<double>();
  TapRows r;
  r.off.assign(n + 1, 0);
  for (int64_t e = 0; e < k * m; ++e) ++r.off[idx[e] + 1];
  for (int64_t i = 0; i < n; ++i) r.off[i + 1] += r.off[i];
  r.src.resize(k * m);
  r.weight.resize(k * m);
  std::vector<int64_t> next(r.off.begin(), r.off.end() - 1);
  for (int64_t j = 0; j < m; ++j)
    for (int64_t t = 0; t < k; ++t) {
      const int64_t e = next[idx[t * m + j]]++;
      r.src[e] = j;
      r.weight[e] = w[t * m + j];
    }
  return r;
}

// y (outer, rows, inner) from x (outer, n, inner) through the tap rows. K > 0: every row has K
// taps (the loop over them unrolls).
template <typename T, int K>
void gather_rows(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, const TapRows& taps) {
  using C = compute_t<T>;
  const int64_t rows = static_cast<int64_t>(taps.off.size()) - 1;
  const std::vector<C> w(taps.weight.begin(), taps.weight.end());
  const int64_t* off = taps.off.data();
  const int64_t* src = taps.src.data();
  auto begin = [&](int64_t j) { return K > 0 ? j * K : off[j]; };
  auto end = [&](int64_t j) { return K > 0 ? j * K + K : off[j + 1]; };
  const int64_t total = outer * rows * inner * std::max<int64_t>(1, taps.fixed);
  if (inner == 1) {
    OF_OMP_FOR_IF(
        total > cpu::kParallelGrain, schedule(static), for (int64_t o = 0; o < outer; ++o) {
          const T* xr = x + o * n;
          T* yr = y + o * rows;
          for (int64_t j = 0; j < rows; ++j) {
            const int64_t b = begin(j), e = end(j);
            if (b == e) {
              yr[j] = T(0);
              continue;
            }
            C acc = C(xr[src[b]]) * w[b];
            for (int64_t q = b + 1; q < e; ++q) acc += C(xr[src[q]]) * w[q];
            yr[j] = T(acc);
          }
        });
    return;
  }
  OF_OMP_FOR_IF(
      total > cpu::kParallelGrain, schedule(static), for (int64_t r = 0; r < outer * rows; ++r) {
        const int64_t o = r / rows, j = r % rows;
        const T* xo = x + o * n * inner;
        T* yr = y + r * inner;
        const int64_t b = begin(j), e = end(j);
        if (b == e) {
          std::fill(yr, yr + inner, T(0));
          continue;
        }
        if constexpr (std::is_same_v<T, C>) {
          const T* x0 = xo + src[b] * inner;
          const C w0 = w[b];
          for (int64_t i = 0; i < inner; ++i) yr[i] = x0[i] * w0;
          for (int64_t q = b + 1; q < e; ++q) {
            const T* xq = xo + src[q] * inner;
            const C wq = w[q];
            for (int64_t i = 0; i < inner; ++i) yr[i] += xq[i] * wq;
          }
        } else {
          constexpr int64_t kChunk = 256;
          C acc[kChunk];
          for (int64_t i0 = 0; i0 < inner; i0 += kChunk) {
            const int64_t len = std::min(kChunk, inner - i0);
            const T* x0 = xo + src[b] * inner + i0;
            for (int64_t i = 0; i < len; ++i) acc[i] = C(x0[i]) * w[b];
            for (int64_t q = b + 1; q < e; ++q) {
              const T* xq = xo + src[q] * inner + i0;
              const C wq = w[q];
              for (int64_t i = 0; i < len; ++i) acc[i] += C(xq[i]) * wq;
            }
            for (int64_t i = 0; i < len; ++i) yr[i0 + i] = T(acc[i]);
          }
        }
      });
}

void resample_cpu(const Tensor& x, const Tensor& y, int64_t dim, const TapRows& taps) {
  int64_t outer = 1, inner = 1;
  const Shape& shape = x->shape();
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (d != dim) (d < dim ? outer : inner) *= shape[d];
  const int64_t n = shape[dim];
  visit_dtype(y->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* xp = x->data_as<T>();
      T* yp = y->data_as<T>();
      if (taps.fixed == 2)
        gather_rows<T, 2>(xp, yp, outer, n, inner, taps);
      else if (taps.fixed == 4)
        gather_rows<T, 4>(xp, yp, outer, n, inner, taps);
      else
        gather_rows<T, 0>(xp, yp, outer, n, inner, taps);
    }
  });
}

}  // namespace

void Resample::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  resample_cpu(in[0], out[0], attrs.get<int64_t>("dim"), forward_taps(in[1], in[2]));
}

void ResampleGrad::compute_cpu(const TensorList& in, const TensorList& out,
                               const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  resample_cpu(in[0], out[0], attrs.get<int64_t>("dim"),
               adjoint_taps(in[1], in[2], attrs.get<int64_t>("size")));
}

}  // namespace oneflow
