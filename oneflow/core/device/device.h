// Devices and the backend interface each device type implements: allocator, stream
// synchronisation and memory copies. cpu/ and cuda/ implement it; a build without CUDA links
// no_cuda/, whose backend raises a clear error on first use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oneflow {

// kMeta: tensors with a shape, dtype and strides but no memory. An op on them infers the metas of
// its outputs and runs no kernel, so a model built there takes no memory until `to_empty`.
enum class DeviceType : int8_t { kCPU, kCUDA, kMeta };

// "cpu", "cuda" or "meta".
const char* device_type_name(DeviceType type);

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;

  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  // "cpu", "cuda:0" or "meta"
  std::string str() const;
  // Parses "cpu", "cuda", "cuda:1", "meta"; throws ValueError on anything else.
  static Device parse(const std::string& s);
};

// Memory blocks for one device. Blocks are cached and reused by size class; `allocated_bytes`
// counts the bytes handed out and not yet returned.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  virtual size_t allocated_bytes() const = 0;
  virtual size_t cached_bytes() const = 0;
  // Returns every cached block to the system.
  virtual void empty_cache() = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual int device_count() = 0;
  virtual Allocator& allocator(int index) = 0;
  // Copies nbytes between two devices of which at least one has this backend's type. Ordered
  // on the device's stream; a copy to the host returns when the bytes are there.
  virtual void copy(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes) = 0;
  // Waits for all work queued on the device.
  virtual void synchronize(int index) = 0;
};

DeviceBackend& cpu_backend();
// The meta device's: it allocates nothing, and copies out of it raise NotImplementedError.
DeviceBackend& meta_backend();
// Defined in cuda/ when built with CUDA, in no_cuda/ (throws RuntimeError) otherwise.
DeviceBackend& cuda_backend();
bool cuda_built();
// Waits for all work on a CUDA device, on every stream (also other libraries' streams).
void cuda_device_synchronize(int index);
DeviceBackend& backend_of(DeviceType type);

}  // namespace oneflow
