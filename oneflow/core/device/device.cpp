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

std::string Device::str() const {
  return type == DeviceType::kCPU ? std::string("cpu") : "cuda:" + std::to_string(index);
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
  throw_error<ValueError>("device",
                          "expected one of cpu, cuda device type at start of device "
                          "string, got '",
                          s, "'");
}

DeviceBackend& backend_of(DeviceType type) {
  return type == DeviceType::kCPU ? cpu_backend() : cuda_backend();
}

}  // namespace oneflow
