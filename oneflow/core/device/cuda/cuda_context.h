// Per-device CUDA state used by the CUDA kernels: the compute stream and the cuBLAS handle.
// Only included by sources built with ONEFLOW_WITH_CUDA=ON.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "oneflow/core/common/error.h"

#define OF_CUDA_CHECK(expr)                                                          \
  do {                                                                               \
    cudaError_t _e = (expr);                                                         \
    if (_e != cudaSuccess)                                                           \
      throw ::oneflow::RuntimeError(                                                 \
          ::oneflow::str_cat("cuda: ", #expr, " failed: ", cudaGetErrorString(_e))); \
  } while (0)

#define OF_CUBLAS_CHECK(expr)                                                               \
  do {                                                                                      \
    cublasStatus_t _s = (expr);                                                             \
    if (_s != CUBLAS_STATUS_SUCCESS)                                                        \
      throw ::oneflow::RuntimeError(                                                        \
          ::oneflow::str_cat("cublas: ", #expr, " failed: status ", static_cast<int>(_s))); \
  } while (0)

namespace oneflow {

// Makes `index` the current device and returns its compute stream.
cudaStream_t cuda_stream(int index);
cublasHandle_t cublas_handle(int index);

}  // namespace oneflow
