// Automatic mixed precision (flow.autocast): per thread and device type, whether autocast is on
// and its lower-precision dtype. While it is on, the ops PyTorch's autocast runs in lower
// precision (matmul, linear, convolutions, attention) cast their float32 inputs to that dtype,
// and the ops it runs in float32 (the losses everywhere; softmax and the norms on CUDA, as
// PyTorch's per-device lists) cast 16-bit inputs up. Gradients run outside it (the autograd
// engine suspends it), in the dtypes the forward ops produced.
#pragma once

#include <optional>

#include "oneflow/core/framework/tensor.h"

namespace oneflow::autocast {

struct State {
  bool enabled = false;
  DType dtype = DType::kBFloat16;
};

// This thread's state for `type` (CPU or CUDA).
State& state(DeviceType type);
// Whether autocast is on for some device type on this thread (the ops' fast check).
bool active();

// Turns autocast off on this thread while alive.
class Suspend {
 public:
  Suspend();
  ~Suspend();
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;

 private:
  State saved_[2];
};

// `t` in the autocast dtype of its device when autocast is on there and t is a float other than
// float64 (float64 and integer tensors are left alone, as PyTorch); else t itself. Undefined
// tensors pass.
Tensor lower(const Tensor& t);
// The autocast dtype `lower` gives t (possibly t's own), if autocast applies to t.
std::optional<DType> lower_dtype(const Tensor& t);
// `t` in float32 when autocast is on for its device and t is a 16-bit float; `cuda_only` for the
// ops only PyTorch's CUDA list runs in float32.
Tensor to_float(const Tensor& t, bool cuda_only = false);

}  // namespace oneflow::autocast
