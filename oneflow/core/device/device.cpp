#include "oneflow/core/device/device.h"

#include <atomic>

#include "oneflow/core/common/error.h"
#include "oneflow/core/device/cuda_device.h"

namespace oneflow {

namespace {
std::atomic<int> g_current_cuda_device{0};
}  // namespace

int current_cuda_device() { return g_current_cuda_device.load(std::memory_order_relaxed); }
void set_current_cuda_device(int index) {
  g_current_cuda_device.store(index, std::memory_order_relaxed);
}

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::kCPU:
      return "cpu";
    case DeviceType::kCUDA:
      return "cuda";
    case DeviceType::kMeta:
      return "meta";
  }
  return "unknown";
}

std::string Device::str() const {
  return type == DeviceType::kCUDA ? "cuda:" + std::to_string(index)
                                   : std::string(device_type_name(type));
}

Device Device::parse(const std::string& s) {
  std::string kind = s, idx;
  if (auto colon = s.find(':'); colon != std::string::npos) {
    kind = s.substr(0, colon);
    idx = s.substr(colon + 1);
  }
  int index = kind == "cuda" ? current_cuda_device() : 0;
  if (!idx.empty()) {
    size_t used = 0;
    try {
      index = std::stoi(idx, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != idx.size() || index < 0)
      throw_error<ValueError>("device", "expected a device index >= 0, got '", s, "'");
  }
  if (kind == "cpu") return Device{DeviceType::kCPU, index};
  if (kind == "cuda") return Device{DeviceType::kCUDA, index};
  if (kind == "meta") return Device{DeviceType::kMeta, index};
  throw_error<ValueError>("device",
                          "expected one of cpu, cuda, meta device type at start of device "
                          "string, got '",
                          s, "'");
}

namespace {

class MetaAllocator final : public Allocator {
 public:
  void* allocate(size_t) override { return nullptr; }
  void deallocate(void*, size_t) override {}
  size_t allocated_bytes() const override { return 0; }
  size_t cached_bytes() const override { return 0; }
  void empty_cache() override {}
};

class MetaBackend final : public DeviceBackend {
 public:
  int device_count() override { return 1; }
  Allocator& allocator(int) override { return alloc_; }
  void copy(void*, Device dst_dev, const void*, Device src_dev, size_t) override {
    if (src_dev.type == DeviceType::kMeta && dst_dev.type != DeviceType::kMeta)
      throw_error<NotImplementedError>("to",
                                       "Cannot copy out of meta tensor; please use "
                                       "'to_empty' instead");
  }
  void synchronize(int) override {}

 private:
  MetaAllocator alloc_;
};

}  // namespace

DeviceBackend& meta_backend() {
  static MetaBackend* backend = new MetaBackend();
  return *backend;
}

DeviceBackend& backend_of(DeviceType type) {
  switch (type) {
    case DeviceType::kCPU:
      return cpu_backend();
    case DeviceType::kCUDA:
      return cuda_backend();
    case DeviceType::kMeta:
      return meta_backend();
  }
  return cpu_backend();
}

}  // namespace oneflow
