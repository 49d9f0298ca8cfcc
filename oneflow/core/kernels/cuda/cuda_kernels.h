// CUDA kernel helpers shared between the CUDA kernel files (e.g. matmul making an operand
// contiguous). Kernels only; nothing here records autograd or dispatches. Built only with
// ONEFLOW_WITH_CUDA=ON.
#pragma once

#include "oneflow/core/framework/tensor.h"

namespace oneflow {

// Copies `src` into `dst` (same shape, any strides, both on the same CUDA device), casting the
// dtype; enqueued on that device's stream.
void copy_cuda(const Tensor& src, const Tensor& dst);

}  // namespace oneflow
