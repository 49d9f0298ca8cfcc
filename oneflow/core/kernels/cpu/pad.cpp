// CPU kernels of border padding (Pad, PadGrad; geometry in kernels/common/pad.h). The forward
// copies each output row as the mapped border elements around one memcpy of the input row; the
// backward adds each dy row into its source dx row, one plane per thread (planes are disjoint).
#include <algorithm>
#include <cstring>

#include "oneflow/core/kernels/common/pad.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {

template <typename U>
void pad_rows(const PadGeom& g, const U* x, U* y) {
  const int64_t rows = g.planes * g.out[0] * g.out[1];
  const int64_t lo = g.lo[2], n = g.in[2], w = g.out[2];
#pragma omp parallel for schedule(static) if (rows * w > cpu::kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t oh = r % g.out[1], od = (r / g.out[1]) % g.out[0], pl = r / (g.out[1] * g.out[0]);
    const int64_t id = pad_source(od, g.in[0], g.lo[0], g.mode);
    const int64_t ih = pad_source(oh, g.in[1], g.lo[1], g.mode);
    const U* xr = x + (pl * g.in[0] + id) * g.in[1] * n + ih * n;
    U* yr = y + r * w;
    for (int64_t o = 0; o < lo; ++o) yr[o] = xr[pad_source(o, n, lo, g.mode)];
    std::memcpy(yr + lo, xr, static_cast<size_t>(n) * sizeof(U));
    for (int64_t o = lo + n; o < w; ++o) yr[o] = xr[pad_source(o, n, lo, g.mode)];
  }
}

template <typename T>
void pad_grad_planes(const PadGeom& g, const T* dy, T* dx) {
  using C = compute_t<T>;
  const int64_t lo = g.lo[2], n = g.in[2], w = g.out[2];
#pragma omp parallel for schedule(static) if (g.planes * g.out_size() > cpu::kParallelGrain)
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
  }
}

}  // namespace

void Pad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const PadGeom g =
      pad_geom(in[0]->shape(), attrs.get<std::vector<int64_t>>("pads"), attrs.get<int64_t>("mode"));
  const void* x = in[0]->data();
  void* y = out[0]->data();
  switch (itemsize(in[0]->dtype())) {
    case 1:
      return pad_rows(g, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y));
    case 2:
      return pad_rows(g, static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y));
    case 4:
      return pad_rows(g, static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y));
    case 8:
      return pad_rows(g, static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y));
    default:
      throw_error<RuntimeError>(name(), "unsupported dtype ", dtype_name(in[0]->dtype()));
  }
}

void PadGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  const PadGeom g = pad_geom(out[0]->shape(), attrs.get<std::vector<int64_t>>("pads"),
                             attrs.get<int64_t>("mode"));
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      throw_error<RuntimeError>(name(), "unsupported dtype bool");
    } else {
      pad_grad_planes(g, in[0]->data_as<T>(), out[0]->data_as<T>());
    }
  });
}

}  // namespace oneflow
