// Page-locked host memory through cudaHostAlloc (device/pinned_memory.h).
#include "oneflow/core/device/pinned_memory.h"

#include <cuda_runtime.h>

#include <cstring>

#include "oneflow/core/functional/functional.h"

namespace oneflow {

Tensor pin_memory(const Tensor& x) {
  if (x->device().type != DeviceType::kCPU)
    throw_error<RuntimeError>("pin_memory", "cannot pin a ", x->device().str(),
                              " tensor: only dense CPU tensors can be pinned");
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw_error<RuntimeError>("pin_memory",
                              "cannot access accelerator device when none is available");
  }
  const Tensor src = functional::contiguous(x);
  const size_t nbytes = static_cast<size_t>(src->numel()) * itemsize(src->dtype());
  void* p = nullptr;
  if (nbytes > 0 && cudaHostAlloc(&p, nbytes, cudaHostAllocDefault) != cudaSuccess) {
    cudaGetLastError();
    throw_error<RuntimeError>("pin_memory", "cudaHostAlloc of ", nbytes, " bytes failed");
  }
  auto storage = std::make_shared<Storage>(Device{}, p, nbytes, [p] {
    if (p != nullptr) cudaFreeHost(p);
  });
  TensorMeta meta{src->shape(), contiguous_strides(src->shape()), 0, src->dtype(), Device{}};
  Tensor out = std::make_shared<TensorImpl>(meta, storage, std::make_shared<VersionCounter>());
  if (nbytes > 0) std::memcpy(out->data(), src->read_as<char>(), nbytes);
  return out;
}

bool is_pinned(const Tensor& x) {
  if (x->device().type != DeviceType::kCPU || x->numel() == 0) return false;
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, x->read_as<char>()) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

}  // namespace oneflow
