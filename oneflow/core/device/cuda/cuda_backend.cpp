// CUDA backend: per device a compute stream and two copy streams (host-to-device and
// device-to-host) ordered with it by events, a caching allocator over cudaMalloc.
#include <memory>
#include <mutex>
#include <vector>

#include "oneflow/core/device/caching_allocator.h"
#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/device/cuda_device.h"

namespace oneflow {

namespace {

struct DeviceState {
  cudaStream_t stream = nullptr;  // compute: every kernel, copies within the device
  cublasHandle_t cublas = nullptr;
  std::unique_ptr<CachingAllocator> alloc;
  // Note [Copy streams]
  cudaStream_t h2d = nullptr, d2h = nullptr;
  cudaEvent_t compute_mark = nullptr, h2d_done = nullptr;
  std::mutex copy_mu;  // one event sequence (record, wait) at a time
};

// Note [Copy streams]
// Copies between the host and a device run on the device's own copy streams, one per
// direction, so a copy in one direction overlaps kernels and copies in the other. Events order
// them with the compute stream, on the GPU, without the host waiting:
// - Before each copy the copy stream waits for everything queued so far on the compute stream
//   (an event recorded there now). The caching allocator hands out blocks in compute-stream
//   order: a block freed by a tensor whose last kernels still run may be a copy's destination,
//   and a device-to-host copy reads what earlier kernels wrote.
// - After a host-to-device copy, the compute stream waits for it (an event recorded on the copy
//   stream), so the kernels queued later read the new bytes, and a later reuse of the block is
//   ordered after the copy. The host does not wait for the copy when the source is pageable
//   memory: the driver copies it into its own page-locked staging buffers before
//   cudaMemcpyAsync returns (PyTorch's non_blocking copies from pageable memory rely on the
//   same behaviour; NVIDIA documents it for cudaMemcpy, and says only that the Async form
//   "might be synchronous" for pageable memory). A copy that fits the staging buffers then
//   returns at once, where it used to wait for every kernel queued on the device (copies ran
//   on the compute stream followed by a stream synchronisation); a larger one may wait, chunk
//   by chunk, for its copy stream to drain them, and so for the kernels before it. From
//   page-locked (or managed) memory the DMA reads the source later: the host waits.
// - A device-to-host copy returns when the bytes are on the host (the host waits for its copy
//   stream, which waited for the kernels before it).
// - Copies between devices wait for the source's compute stream and run on the destination's.
// The event objects are reused: cudaStreamWaitEvent waits for the record made before the call,
// and the mutex keeps each record-then-wait pair together.

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
      states_ = std::make_unique<DeviceState[]>(n);
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
      OF_CUDA_CHECK(cudaStreamCreateWithFlags(&s.h2d, cudaStreamNonBlocking));
      OF_CUDA_CHECK(cudaStreamCreateWithFlags(&s.d2h, cudaStreamNonBlocking));
      OF_CUDA_CHECK(cudaEventCreateWithFlags(&s.compute_mark, cudaEventDisableTiming));
      OF_CUDA_CHECK(cudaEventCreateWithFlags(&s.h2d_done, cudaEventDisableTiming));
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
    select_device(index);
    return states_[index];
  }

  // cudaSetDevice only when another device is current: this runs for every kernel launch.
  static void select_device(int index) {
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) {
      cudaGetLastError();  // not a later kernel's error
      current = -1;
    }
    if (current != index) OF_CUDA_CHECK(cudaSetDevice(index));
  }

  Allocator& allocator(int index) override { return *state(index).alloc; }

  void copy(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes) override {
    if (nbytes == 0) return;
    const bool to_host = dst_dev.type == DeviceType::kCPU;
    const bool from_host = src_dev.type == DeviceType::kCPU;
    if (to_host && from_host) return cpu_backend().copy(dst, dst_dev, src, src_dev, nbytes);
    const int index = from_host ? dst_dev.index : src_dev.index;
    if (!to_host && !from_host && dst_dev.index != src_dev.index) {
      // Peer copy: order it after the source's queued work and the destination's, on the
      // destination's stream, then wait for it (cudaMemcpyPeer runs on the legacy default
      // stream, which our non-blocking streams do not synchronise with).
      OF_CUDA_CHECK(cudaStreamSynchronize(state(index).stream));
      cudaStream_t dst_stream = state(dst_dev.index).stream;
      OF_CUDA_CHECK(
          cudaMemcpyPeerAsync(dst, dst_dev.index, src, src_dev.index, nbytes, dst_stream));
      OF_CUDA_CHECK(cudaStreamSynchronize(dst_stream));
      return;
    }
    DeviceState& s = state(index);
    if (!to_host && !from_host) {
      OF_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, s.stream));
      return;
    }
    cudaStream_t copy_stream = from_host ? s.h2d : s.d2h;
    {
      std::lock_guard<std::mutex> lock(s.copy_mu);
      OF_CUDA_CHECK(cudaEventRecord(s.compute_mark, s.stream));
      OF_CUDA_CHECK(cudaStreamWaitEvent(copy_stream, s.compute_mark, 0));
    }
    // (Not under the lock: from pageable memory the call may block while the driver stages it.)
    OF_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes,
                                  from_host ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                  copy_stream));
    if (from_host) {
      std::lock_guard<std::mutex> lock(s.copy_mu);
      OF_CUDA_CHECK(cudaEventRecord(s.h2d_done, copy_stream));
      OF_CUDA_CHECK(cudaStreamWaitEvent(s.stream, s.h2d_done, 0));
    }
    // The host's memory is read (to the device) or written (to the host) by the DMA engine
    // after the call returns: wait for the copy unless the driver staged pageable memory.
    if (to_host || !pageable(src)) OF_CUDA_CHECK(cudaStreamSynchronize(copy_stream));
  }

  // Host memory the driver does not know (malloc, NumPy): copies from it are staged. When the
  // query fails the copy is treated as not staged (the host waits for it).
  static bool pageable(const void* p) {
    cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return attr.type == cudaMemoryTypeUnregistered;
  }

  void synchronize(int index) override {
    DeviceState& s = state(index);
    OF_CUDA_CHECK(cudaStreamSynchronize(s.stream));
    OF_CUDA_CHECK(cudaStreamSynchronize(s.h2d));
    OF_CUDA_CHECK(cudaStreamSynchronize(s.d2h));
  }

 private:
  std::once_flag count_once_;
  int count_ = 0;
  std::unique_ptr<DeviceState[]> states_;
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
