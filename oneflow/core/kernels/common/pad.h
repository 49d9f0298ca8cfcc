// Padding (F.pad in constant, reflect, replicate and circular modes), shared by the CPU and CUDA
// kernels of Pad and PadGrad: the unpadded tensor as [planes, D, H, W] (the last one to three
// dims are padded; missing ones have size 1 and no padding), and the input index that an output
// index along one dim reads (-1 for the constant's border).
#pragma once

#include <cstdint>
#include <vector>

#include "oneflow/core/common/dtype.h"
#include "oneflow/core/common/half.h"

namespace oneflow {

enum class PadMode : int64_t { kReflect = 0, kReplicate = 1, kCircular = 2, kConstant = 3 };

struct PadGeom {
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, lo[3] = {0, 0, 0};
  PadMode mode = PadMode::kReflect;
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

// `pads` in F.pad's order: (left, right) of the last dim, then of the one before, ...
// Sizes were validated by the functional layer (reflect: pad < size; circular: pad <= size;
// constant: pads >= 0).
inline PadGeom pad_geom(const std::vector<int64_t>& unpadded_shape,
                        const std::vector<int64_t>& pads, int64_t mode) {
  PadGeom g;
  g.mode = static_cast<PadMode>(mode);
  const int64_t nd = static_cast<int64_t>(unpadded_shape.size());
  const int64_t k = static_cast<int64_t>(pads.size()) / 2;
  for (int64_t d = 0; d < nd - k; ++d) g.planes *= unpadded_shape[d];
  for (int64_t j = 0; j < k; ++j) {  // j-th padded dim from the end -> slot 2 - j
    const int64_t slot = 2 - j, n = unpadded_shape[nd - 1 - j];
    g.in[slot] = n;
    g.lo[slot] = pads[2 * j];
    g.out[slot] = n + pads[2 * j] + pads[2 * j + 1];
  }
  return g;
}

// The bits of `value` converted to dtype dt, in the low bytes (kernels/cpu/pad.cpp).
uint64_t pad_fill_bits(DType dt, double value);

OF_HD inline int64_t pad_source(int64_t o, int64_t n, int64_t lo, PadMode mode) {
  int64_t i = o - lo;
  if (mode == PadMode::kReflect) {
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
  } else if (mode == PadMode::kReplicate) {
    i = i < 0 ? 0 : (i >= n ? n - 1 : i);
  } else if (mode == PadMode::kCircular) {
    i %= n;
    if (i < 0) i += n;
  } else if (i < 0 || i >= n) {
    i = -1;
  }
  return i;
}

}  // namespace oneflow
