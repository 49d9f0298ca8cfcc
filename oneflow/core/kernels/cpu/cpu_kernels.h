// CPU kernel helpers shared with other backends' kernels (e.g. a CUDA copy that casts on the
// host first). Kernels only; nothing here records autograd or dispatches.
#pragma once

#include <vector>

#include "oneflow/core/common/attrs.h"
#include "oneflow/core/framework/tensor.h"

namespace oneflow {

// Copies `src` into `dst` (same shape, any strides, both on the CPU), casting the dtype.
void copy_cpu(const Tensor& src, const Tensor& dst);

// A complex tensor's bytes in its real dtype (no dispatch, no autograd): part -1 the (..., 2)
// pairs, 0 the real parts, 1 the imaginary parts. Copies with a complex side run on these.
Tensor complex_pairs_view(const Tensor& t, int part);

// The view of `t` that a Slice primitive's attrs (starts, steps, sizes) select.
Tensor slice_view_of(const Tensor& t, const Attrs& attrs);

// A view of `t` with the elements along `dims` in reverse order (those strides negated).
Tensor flipped_view(const Tensor& t, const std::vector<int64_t>& dims);

// Positions of the true elements of a contiguous bool mask of `shape` (0-dim counts as [1]),
// in row-major order. A plan splits the mask into blocks and counts each (in parallel);
// `total` is the number of true elements.
struct NonzeroPlan {
  int64_t total = 0;
  int64_t block = 0;                  // elements per block
  std::vector<int64_t> first_output;  // per block: index of its first true element overall
};
NonzeroPlan nonzero_plan_cpu(const bool* mask, int64_t n);
// Writes coordinate d of the k-th true element to cols[d][k * stride] (cols.size() == ndim), or,
// with a single column for a multi-dim mask, its flat index to cols[0][k * stride].
void nonzero_fill_cpu(const NonzeroPlan& plan, const bool* mask, const Shape& shape,
                      const std::vector<int64_t*>& cols, int64_t stride);

// Calls f.template operator()<T>() with T = float or double for dtype dt; other dtypes raise
// RuntimeError naming `op` (the fused float-only kernels: losses, group normalisation).
template <typename F>
void float_types(const char* op, DType dt, F&& f) {
  if (dt == DType::kFloat32)
    f.template operator()<float>();
  else if (dt == DType::kFloat64)
    f.template operator()<double>();
  else
    throw_error<RuntimeError>(op, "expected float32 or float64, got ", dtype_name(dt));
}

}  // namespace oneflow
