// CPU backend: 64-byte aligned blocks from the caching allocator; copies are memcpy.
#include <cstdlib>
#include <cstring>

#include "oneflow/core/common/error.h"
#include "oneflow/core/device/caching_allocator.h"

namespace oneflow {

namespace {

class CpuBackend final : public DeviceBackend {
 public:
  CpuBackend()
      : alloc_(
            "cpu allocator", [](size_t n) { return std::aligned_alloc(64, (n + 63) / 64 * 64); },
            [](void* p) { std::free(p); }) {}

  int device_count() override { return 1; }
  Allocator& allocator(int index) override { return alloc_; }
  void copy(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes) override {
    if (dst_dev.type != DeviceType::kCPU || src_dev.type != DeviceType::kCPU)
      return cuda_backend().copy(dst, dst_dev, src, src_dev, nbytes);
    if (nbytes) std::memcpy(dst, src, nbytes);
  }
  void synchronize(int index) override {}

 private:
  CachingAllocator alloc_;
};

}  // namespace

DeviceBackend& cpu_backend() {
  static CpuBackend* backend = new CpuBackend();  // never destroyed: tensors may outlive statics
  return *backend;
}

}  // namespace oneflow
