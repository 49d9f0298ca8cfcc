// CPU kernel helpers shared with other backends' kernels (e.g. a CUDA copy that casts on the
// host first). Kernels only; nothing here records autograd or dispatches.
#pragma once

#include "oneflow/core/framework/tensor.h"

namespace oneflow {

// Copies `src` into `dst` (same shape, any strides, both on the CPU), casting the dtype.
void copy_cpu(const Tensor& src, const Tensor& dst);

}  // namespace oneflow
