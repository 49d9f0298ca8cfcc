// Builds without CUDA have no page-locked memory (device/pinned_memory.h).
#include "oneflow/core/device/pinned_memory.h"

namespace oneflow {

Tensor pin_memory(const Tensor& x) {
  if (x->device().type != DeviceType::kCPU)
    throw_error<RuntimeError>("pin_memory", "cannot pin a ", x->device().str(),
                              " tensor: only dense CPU tensors can be pinned");
  throw_error<RuntimeError>("pin_memory",
                            "cannot access accelerator device when none is available (this "
                            "oneflow was built without CUDA)");
}

bool is_pinned(const Tensor&) { return false; }

}  // namespace oneflow
