// Page-locked ("pinned") host memory for Tensor.pin_memory(): CPU tensors whose memory the GPU's
// DMA engine reads directly, so host-to-device copies from them skip the driver's staging and
// can overlap kernels (Note [Copy streams] in device/cuda/cuda_backend.cpp). Builds without CUDA
// have no such memory.
#pragma once

#include "oneflow/core/framework/tensor.h"

namespace oneflow {

// A contiguous CPU tensor of x's shape and dtype in page-locked memory holding x's values.
// RuntimeError when no CUDA device is available.
Tensor pin_memory(const Tensor& x);
// Whether x's memory is page-locked host memory.
bool is_pinned(const Tensor& x);

}  // namespace oneflow
