// CPU kernels of the LSTM cell and its backward (ops/rnn_primitives.h): one pass per batch row
// over the four gates, the activations through the tier's vector sigmoid and tanh in float32.
#include <cmath>

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/rnn_primitives.h"

namespace oneflow {

namespace {

// y = f(x) over n values (y may be x): the vector kernel where the CPU has one, else std::.
template <typename T>
void apply(UnaryFn fn, const T* x, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    static const cpu::avx2::UnaryKernel sigmoid =
        cpu::avx2::has_avx2() ? cpu::avx2::unary_kernel(UnaryFn::kSigmoid) : nullptr;
    static const cpu::avx2::UnaryKernel tanh =
        cpu::avx2::has_avx2() ? cpu::avx2::unary_kernel(UnaryFn::kTanh) : nullptr;
    const cpu::avx2::UnaryKernel k = fn == UnaryFn::kSigmoid ? sigmoid : tanh;
    if (k != nullptr) return k(x, y, n);
  }
  for (int64_t j = 0; j < n; ++j)
    y[j] = fn == UnaryFn::kSigmoid ? T(1) / (T(1) + std::exp(-x[j])) : std::tanh(x[j]);
}

// Rows in parallel once there is enough work to share.
template <typename F>
void for_rows(int64_t rows, int64_t width, F&& row) {
  OF_OMP_FOR_IF(rows > 1 && rows * width >= 32768, schedule(static),
                for (int64_t b = 0; b < rows; ++b) row(b););
}

template <typename T>
void cell_forward(const TensorList& in, const TensorList& out) {
  const int64_t rows = in[2]->shape()[0], h = in[2]->shape()[1];
  const T *gi = in[0]->read_as<T>(), *gh = in[1]->read_as<T>(), *c = in[2]->read_as<T>();
  T *hn = out[0]->data_as<T>(), *c2 = out[1]->data_as<T>(), *act = out[2]->data_as<T>();
  for_rows(rows, 4 * h, [&](int64_t b) {
    const T *x = gi + b * 4 * h, *y = gh + b * 4 * h, *cp = c + b * h;
    T *a = act + b * 4 * h, *cn = c2 + b * h, *hr = hn + b * h;
    for (int64_t j = 0; j < 4 * h; ++j) a[j] = x[j] + y[j];
    apply<T>(UnaryFn::kSigmoid, a, a, 2 * h);  // input, forget
    apply<T>(UnaryFn::kTanh, a + 2 * h, a + 2 * h, h);
    apply<T>(UnaryFn::kSigmoid, a + 3 * h, a + 3 * h, h);  // output
    for (int64_t j = 0; j < h; ++j) cn[j] = a[h + j] * cp[j] + a[j] * a[2 * h + j];
    apply<T>(UnaryFn::kTanh, cn, hr, h);
    for (int64_t j = 0; j < h; ++j) hr[j] *= a[3 * h + j];
  });
}

template <typename T>
void cell_backward(const TensorList& in, const TensorList& out) {
  const int64_t rows = in[3]->shape()[0], h = in[3]->shape()[1];
  const T *dh = in[0]->read_as<T>(), *dc = in[1]->read_as<T>(), *dact = in[2]->read_as<T>();
  const T *c = in[3]->read_as<T>(), *c2 = in[4]->read_as<T>(), *act = in[5]->read_as<T>();
  T *dgates = out[0]->data_as<T>(), *dcp = out[1]->data_as<T>();
  for_rows(rows, 4 * h, [&](int64_t b) {
    const T *g_h = dh + b * h, *g_c = dc + b * h, *g_a = dact + b * 4 * h, *cp = c + b * h;
    const T* a = act + b * 4 * h;
    T *d = dgates + b * 4 * h, *dprev = dcp + b * h;
    apply<T>(UnaryFn::kTanh, c2 + b * h, dprev, h);  // tanh(c'), replaced below by dc
    for (int64_t j = 0; j < h; ++j) {
      const T i = a[j], f = a[h + j], g = a[2 * h + j], o = a[3 * h + j], tc = dprev[j];
      const T dc2 = g_c[j] + g_h[j] * o * (T(1) - tc * tc);
      d[j] = (dc2 * g + g_a[j]) * i * (T(1) - i);
      d[h + j] = (dc2 * cp[j] + g_a[h + j]) * f * (T(1) - f);
      d[2 * h + j] = (dc2 * i + g_a[2 * h + j]) * (T(1) - g * g);
      d[3 * h + j] = (g_h[j] * tc + g_a[3 * h + j]) * o * (T(1) - o);
      dprev[j] = dc2 * f;
    }
  });
}

}  // namespace

void LstmCell::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  if (in[2]->dtype() == DType::kFloat64)
    cell_forward<double>(in, out);
  else
    cell_forward<float>(in, out);
}

void LstmCell::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the CUDA kernel is not implemented yet");
}

void LstmCellGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  if (in[3]->dtype() == DType::kFloat64)
    cell_backward<double>(in, out);
  else
    cell_backward<float>(in, out);
}

void LstmCellGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the CUDA kernel is not implemented yet");
}

}  // namespace oneflow
