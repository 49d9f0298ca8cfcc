// CPU kernel helpers shared with other backends' kernels (e.g. a CUDA copy that casts on the
// host first). Kernels only; nothing here records autograd or dispatches.
#pragma once

#include "oneflow/core/common/attrs.h"
#include "oneflow/core/framework/tensor.h"

namespace oneflow {

// Copies `src` into `dst` (same shape, any strides, both on the CPU), casting the dtype.
void copy_cpu(const Tensor& src, const Tensor& dst);

// The view of `t` that a Slice primitive's attrs (starts, steps, sizes) select.
Tensor slice_view_of(const Tensor& t, const Attrs& attrs);

// A view of `t` with the elements along `dims` in reverse order (those strides negated).
Tensor flipped_view(const Tensor& t, const std::vector<int64_t>& dims);

}  // namespace oneflow
