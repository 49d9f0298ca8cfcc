// The CUDA device that "cuda" without an index names (flow.cuda.set_device), and the
// properties of a CUDA device. Both builds link them: without CUDA the properties raise
// RuntimeError (as every use of a CUDA device does).
#pragma once

#include <cstdint>
#include <string>

namespace oneflow {

// 0 until set_current_cuda_device; only the index is kept (each CUDA call selects its device).
int current_cuda_device();
void set_current_cuda_device(int index);

struct CudaDeviceProperties {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int64_t total_memory = 0;  // bytes
  int multi_processor_count = 0;
};
// cudaGetDeviceProperties of device `index`; RuntimeError for an index out of range.
CudaDeviceProperties cuda_device_properties(int index);

}  // namespace oneflow
