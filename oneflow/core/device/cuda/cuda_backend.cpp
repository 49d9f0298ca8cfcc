// CUDA backend: one compute stream per device, a caching allocator over cudaMalloc, copies
// ordered on the stream.
#include <memory>
#include <mutex>
#include <vector>

#include "oneflow/core/device/caching_allocator.h"
#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/device/cuda_device.h"

namespace oneflow {

namespace {

struct DeviceState {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  std::unique_ptr<CachingAllocator> alloc;
};

class CudaBackend final : public DeviceBackend {
 public:
  int device_count() override {
    std::call_once(count_once_, [this] {
      int n = 0;
      if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        n = 0;
      }
      count_ = n;
      states_.resize(n);
      state_once_ = std::vector<std::once_flag>(n);
    });
    return count_;
  }

  DeviceState& state(int index) {
    if (index < 0 || index >= device_count())
      throw_error<RuntimeError>("cuda", "invalid device index ", index, ": ", count_,
                                " CUDA device(s) available");
    std::call_once(state_once_[index], [this, index] {
      OF_CUDA_CHECK(cudaSetDevice(index));
      DeviceState& s = states_[index];
      OF_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
      OF_CUBLAS_CHECK(cublasCreate(&s.cublas));
      OF_CUBLAS_CHECK(cublasSetStream(s.cublas, s.stream));
      s.alloc = std::make_unique<CachingAllocator>(
          "cuda allocator",
          [index](size_t n) -> void* {
            void* p = nullptr;
            cudaSetDevice(index);
            if (cudaMalloc(&p, n) != cudaSuccess) {
              cudaGetLastError();
              return nullptr;
            }
            return p;
          },
          [index, stream = s.stream](void* p) {
            cudaSetDevice(index);
            cudaStreamSynchronize(stream);
            cudaFree(p);
          });
    });
    OF_CUDA_CHECK(cudaSetDevice(index));
    return states_[index];
  }

  Allocator& allocator(int index) override { return *state(index).alloc; }

  void copy(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes) override {
    if (nbytes == 0) return;
    const bool to_host = dst_dev.type == DeviceType::kCPU;
    const bool from_host = src_dev.type == DeviceType::kCPU;
    if (to_host && from_host) return cpu_backend().copy(dst, dst_dev, src, src_dev, nbytes);
    int index = from_host ? dst_dev.index : src_dev.index;
    cudaStream_t stream = state(index).stream;
    cudaMemcpyKind kind = to_host     ? cudaMemcpyDeviceToHost
                          : from_host ? cudaMemcpyHostToDevice
                                      : cudaMemcpyDeviceToDevice;
    if (!to_host && !from_host && dst_dev.index != src_dev.index) {
      // Peer copy: order it after the source's queued work and the destination's, on the
      // destination's stream, then wait for it (cudaMemcpyPeer runs on the legacy default
      // stream, which our non-blocking streams do not synchronise with).
      OF_CUDA_CHECK(cudaStreamSynchronize(stream));
      cudaStream_t dst_stream = state(dst_dev.index).stream;
      OF_CUDA_CHECK(
          cudaMemcpyPeerAsync(dst, dst_dev.index, src, src_dev.index, nbytes, dst_stream));
      OF_CUDA_CHECK(cudaStreamSynchronize(dst_stream));
      return;
    }
    OF_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, kind, stream));
    // Host memory may be freed or read as soon as we return: wait for copies that touch it.
    if (to_host || from_host) OF_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void synchronize(int index) override {
    OF_CUDA_CHECK(cudaStreamSynchronize(state(index).stream));
  }

 private:
  std::once_flag count_once_;
  int count_ = 0;
  std::vector<DeviceState> states_;
  std::vector<std::once_flag> state_once_;
};

CudaBackend& the_backend() {
  static CudaBackend* backend = new CudaBackend();  // never destroyed: tensors may outlive statics
  return *backend;
}

}  // namespace

bool cuda_built() { return true; }
void cuda_device_synchronize(int index) {
  OF_CUDA_CHECK(cudaSetDevice(index));
  OF_CUDA_CHECK(cudaDeviceSynchronize());
}
DeviceBackend& cuda_backend() { return the_backend(); }
CudaDeviceProperties cuda_device_properties(int index) {
  const int n = the_backend().device_count();
  if (index < 0 || index >= n)
    throw_error<RuntimeError>("cuda", "invalid device index ", index, ": ", n,
                              " CUDA device(s) available");
  cudaDeviceProp p;
  OF_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  return {p.name, p.major, p.minor, static_cast<int64_t>(p.totalGlobalMem), p.multiProcessorCount};
}
cudaStream_t cuda_stream(int index) { return the_backend().state(index).stream; }
cublasHandle_t cublas_handle(int index) { return the_backend().state(index).cublas; }

}  // namespace oneflow
