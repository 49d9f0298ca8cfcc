#include "oneflow/core/device/caching_allocator.h"

#include <algorithm>
#include <bit>

#include "oneflow/core/common/error.h"

namespace oneflow {

CachingAllocator::CachingAllocator(const char* name, RawAlloc raw_alloc, RawFree raw_free)
    : name_(name), raw_alloc_(std::move(raw_alloc)), raw_free_(std::move(raw_free)) {}

CachingAllocator::~CachingAllocator() {
  // The process is exiting; device runtimes may already be torn down, so cached blocks are left
  // to the operating system.
}

size_t CachingAllocator::round_size(size_t nbytes) {
  if (nbytes == 0) return 0;
  constexpr size_t kSmall = 512, kMiB = size_t(1) << 20;
  if (nbytes <= kMiB) return (nbytes + kSmall - 1) / kSmall * kSmall;
  size_t p = std::bit_floor(nbytes);
  size_t step = p / 8;
  return (nbytes + step - 1) / step * step;
}

void* CachingAllocator::allocate(size_t nbytes) {
  size_t size = round_size(nbytes);
  if (size == 0) return nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      cached_ -= size;
      allocated_ += size;
      note_peaks_locked();
      return p;
    }
  }
  void* p = raw_alloc_(size);
  if (!p) {
    // Out of memory: give the cache back and try once more.
    {
      std::lock_guard<std::mutex> lock(mu_);
      release_all_locked();
    }
    p = raw_alloc_(size);
  }
  if (!p) throw_error<RuntimeError>(name_, "out of memory: tried to allocate ", nbytes, " bytes");
  std::lock_guard<std::mutex> lock(mu_);
  allocated_ += size;
  note_peaks_locked();
  return p;
}

void CachingAllocator::note_peaks_locked() {
  ++allocations_;
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  peak_reserved_ = std::max(peak_reserved_, allocated_ + cached_);
}

size_t CachingAllocator::peak_allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_allocated_;
}

size_t CachingAllocator::peak_reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_reserved_;
}

void CachingAllocator::reset_peaks() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_allocated_ = allocated_;
  peak_reserved_ = allocated_ + cached_;
}

size_t CachingAllocator::allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocations_;
}

void CachingAllocator::deallocate(void* ptr, size_t nbytes) {
  if (!ptr) return;
  size_t size = round_size(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  free_[size].push_back(ptr);
  allocated_ -= size;
  cached_ += size;
}

size_t CachingAllocator::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

size_t CachingAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_all_locked();
}

void CachingAllocator::release_all_locked() {
  for (auto& [size, blocks] : free_)
    for (void* p : blocks) raw_free_(p);
  free_.clear();
  cached_ = 0;
}

}  // namespace oneflow
