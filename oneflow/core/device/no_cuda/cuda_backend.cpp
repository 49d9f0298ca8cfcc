// Linked when ONEFLOW_WITH_CUDA=OFF: every use of a CUDA device raises a clear error.
#include "oneflow/core/common/error.h"
#include "oneflow/core/device/cuda_device.h"
#include "oneflow/core/device/device.h"

namespace oneflow {

bool cuda_built() { return false; }
void cuda_device_synchronize(int) { cuda_backend(); }
CudaDeviceProperties cuda_device_properties(int) {
  cuda_backend();
  return {};
}

DeviceBackend& cuda_backend() {
  throw RuntimeError(
      "cuda: this oneflow was built without CUDA support (ONEFLOW_WITH_CUDA=OFF); rebuild with "
      "-DONEFLOW_WITH_CUDA=ON to use device 'cuda'");
}

}  // namespace oneflow
