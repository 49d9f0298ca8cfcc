// A caching allocator shared by the device backends: freed blocks go to a free list keyed by
// their rounded size and are handed out again before the system allocator is asked. Not
// stream-aware yet (one stream per device), thread-safe.
#pragma once

#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "oneflow/core/device/device.h"

namespace oneflow {

class CachingAllocator : public Allocator {
 public:
  using RawAlloc = std::function<void*(size_t)>;
  using RawFree = std::function<void(void*)>;
  CachingAllocator(const char* name, RawAlloc raw_alloc, RawFree raw_free);
  ~CachingAllocator() override;

  void* allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  size_t allocated_bytes() const override;
  size_t cached_bytes() const override;
  void empty_cache() override;
  // The most bytes handed out, and held (handed out + cached), at one time since the start or
  // the last reset_peaks() (torch.cuda.max_memory_allocated / max_memory_reserved).
  size_t peak_allocated_bytes() const;
  size_t peak_reserved_bytes() const;
  void reset_peaks();
  // Requests served, from the cache or the system (memory_stats' allocation counts).
  size_t allocations() const;

  // Size classes: multiples of 512 B up to 1 MiB; above that, multiples of 1/8 of the size's
  // power of two, so reuse stays likely and waste stays under 12.5%.
  static size_t round_size(size_t nbytes);

 private:
  void release_all_locked();
  const char* name_;
  RawAlloc raw_alloc_;
  RawFree raw_free_;
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t allocated_ = 0;
  size_t cached_ = 0;
  size_t peak_allocated_ = 0;
  size_t peak_reserved_ = 0;
  size_t allocations_ = 0;
  void note_peaks_locked();
};

}  // namespace oneflow
