// CPU kernels of padding (Pad, PadGrad; geometry in kernels/common/pad.h). The forward copies
// each output row as the mapped border elements (or the constant) around one memcpy of the input
// row; the backward adds each dy row into its source dx row, one plane per thread (planes are
// disjoint), or for the constant mode copies the interior of each dy row.
#include <algorithm>
#include <cstring>

#include "oneflow/core/kernels/common/pad.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {

// U: an unsigned type of the element's size; `fill` holds the constant's bits.
template <typename U>
void pad_rows(const PadGeom& g, const U* x, U* y, U fill) {
  const int64_t rows = g.planes * g.out[0] * g.out[1];
  const int64_t lo = g.lo[2], n = g.in[2], w = g.out[2];
  const bool constant = g.mode == PadMode::kConstant;
  OF_OMP_FOR_IF(
      rows * w > cpu::kParallelGrain, schedule(static), for (int64_t r = 0; r < rows; ++r) {
        const int64_t oh = r % g.out[1], od = (r / g.out[1]) % g.out[0],
                      pl = r / (g.out[1] * g.out[0]);
        const int64_t id = pad_source(od, g.in[0], g.lo[0], g.mode);
        const int64_t ih = pad_source(oh, g.in[1], g.lo[1], g.mode);
        U* yr = y + r * w;
        if (id < 0 || ih < 0) {  // a constant row
          std::fill(yr, yr + w, fill);
          continue;
        }
        const U* xr = x + (pl * g.in[0] + id) * g.in[1] * n + ih * n;
        if (constant) {
          std::fill(yr, yr + lo, fill);
          std::fill(yr + lo + n, yr + w, fill);
        } else {
          for (int64_t o = 0; o < lo; ++o) yr[o] = xr[pad_source(o, n, lo, g.mode)];
          for (int64_t o = lo + n; o < w; ++o) yr[o] = xr[pad_source(o, n, lo, g.mode)];
        }
        std::memcpy(yr + lo, xr, static_cast<size_t>(n) * sizeof(U));
      });
}

// The constant mode's gradient: dx is the interior of dy (row by row).
void crop_rows(const PadGeom& g, const char* dy, char* dx, size_t elem) {
  const int64_t rows = g.planes * g.in[0] * g.in[1];
  const int64_t n = g.in[2];
  OF_OMP_FOR_IF(
      rows * n > cpu::kParallelGrain, schedule(static), for (int64_t r = 0; r < rows; ++r) {
        const int64_t ih = r % g.in[1], id = (r / g.in[1]) % g.in[0], pl = r / (g.in[1] * g.in[0]);
        const int64_t o =
            ((pl * g.out[0] + id + g.lo[0]) * g.out[1] + ih + g.lo[1]) * g.out[2] + g.lo[2];
        std::memcpy(dx + r * n * elem, dy + o * elem, static_cast<size_t>(n) * elem);
      });
}

template <typename T>
void pad_grad_planes(const PadGeom& g, const T* dy, T* dx) {
  using C = compute_t<T>;
  const int64_t lo = g.lo[2], n = g.in[2], w = g.out[2];
  OF_OMP_FOR_IF(
      g.planes * g.out_size() > cpu::kParallelGrain, schedule(static),
      for (int64_t pl = 0; pl < g.planes; ++pl) {
        T* dxp = dx + pl * g.in_size();
        std::fill(dxp, dxp + g.in_size(), T(0));
        for (int64_t od = 0; od < g.out[0]; ++od)
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            const int64_t id = pad_source(od, g.in[0], g.lo[0], g.mode);
            const int64_t ih = pad_source(oh, g.in[1], g.lo[1], g.mode);
            T* dxr = dxp + (id * g.in[1] + ih) * n;
            const T* dyr = dy + ((pl * g.out[0] + od) * g.out[1] + oh) * w;
            for (int64_t i = 0; i < n; ++i) dxr[i] = T(C(dxr[i]) + C(dyr[lo + i]));
            for (int64_t o = 0; o < lo; ++o) {
              T& d = dxr[pad_source(o, n, lo, g.mode)];
              d = T(C(d) + C(dyr[o]));
            }
            for (int64_t o = lo + n; o < w; ++o) {
              T& d = dxr[pad_source(o, n, lo, g.mode)];
              d = T(C(d) + C(dyr[o]));
            }
          }
      });
}

}  // namespace

uint64_t pad_fill_bits(DType dt, double value) {
  uint64_t bits = 0;  // little-endian: the element's bytes are the low-order ones
  visit_dtype(dt, [&]<typename T>() {
    const T v = T(static_cast<compute_t<T>>(value));
    std::memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

void Pad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const PadGeom g =
      pad_geom(in[0]->shape(), attrs.get<std::vector<int64_t>>("pads"), attrs.get<int64_t>("mode"));
  const void* x = in[0]->data();
  void* y = out[0]->data();
  const DType dt = in[0]->dtype();
  const double value = attrs.get<double>("value");
  auto run = [&]<typename U>() {
    pad_rows(g, static_cast<const U*>(x), static_cast<U*>(y),
             static_cast<U>(pad_fill_bits(dt, value)));
  };
  switch (itemsize(dt)) {
    case 1:
      return run.template operator()<uint8_t>();
    case 2:
      return run.template operator()<uint16_t>();
    case 4:
      return run.template operator()<uint32_t>();
    case 8:
      return run.template operator()<uint64_t>();
    default:
      throw_error<RuntimeError>(name(), "unsupported dtype ", dtype_name(in[0]->dtype()));
  }
}

void PadGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const PadGeom g = pad_geom(out[0]->shape(), attrs.get<std::vector<int64_t>>("pads"),
                             attrs.get<int64_t>("mode"));
  if (g.mode == PadMode::kConstant)
    return crop_rows(g, static_cast<const char*>(in[0]->data()), static_cast<char*>(out[0]->data()),
                     itemsize(out[0]->dtype()));
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw_error<RuntimeError>(name(), "unsupported dtype bool");
    } else {
      pad_grad_planes(g, in[0]->data_as<T>(), out[0]->data_as<T>());
    }
  });
}

}  // namespace oneflow
