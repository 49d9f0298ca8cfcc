// The caching allocator: size classes, reuse, accounting, empty_cache.
#include <gtest/gtest.h>

#include <set>

#include "oneflow/core/device/caching_allocator.h"
#include "oneflow/core/framework/tensor.h"

namespace oneflow {

TEST(CachingAllocator, RoundsToSizeClasses) {
  EXPECT_EQ(CachingAllocator::round_size(0), 0u);
  EXPECT_EQ(CachingAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingAllocator::round_size(513), 1024u);
  const size_t mib = size_t(1) << 20;
  EXPECT_EQ(CachingAllocator::round_size(mib), mib);
  EXPECT_EQ(CachingAllocator::round_size(mib + 1), mib + mib / 8);
  for (size_t n : {size_t(3000), size_t(5) << 20, (size_t(7) << 20) + 123})
    EXPECT_LE(CachingAllocator::round_size(n), n + n / 8 + 512);
}

TEST(CachingAllocator, ReusesFreedBlocks) {
  int raw_allocs = 0, raw_frees = 0;
  CachingAllocator a(
      "test",
      [&](size_t n) {
        ++raw_allocs;
        return std::malloc(n);
      },
      [&](void* p) {
        ++raw_frees;
        std::free(p);
      });
  void* p = a.allocate(1000);
  EXPECT_EQ(a.allocated_bytes(), 1024u);
  a.deallocate(p, 1000);
  EXPECT_EQ(a.allocated_bytes(), 0u);
  EXPECT_EQ(a.cached_bytes(), 1024u);
  void* q = a.allocate(1024);
  EXPECT_EQ(p, q);
  EXPECT_EQ(raw_allocs, 1);
  a.deallocate(q, 1024);
  a.empty_cache();
  EXPECT_EQ(raw_frees, 1);
  EXPECT_EQ(a.cached_bytes(), 0u);
}

TEST(CachingAllocator, OutOfMemoryIsAnError) {
  CachingAllocator a(
      "test", [](size_t) -> void* { return nullptr; }, [](void*) {});
  EXPECT_THROW(a.allocate(64), RuntimeError);
}

TEST(Storage, TensorsReturnMemoryToTheCpuAllocator) {
  Allocator& alloc = cpu_backend().allocator(0);
  const size_t before = alloc.allocated_bytes();
  {
    Tensor t = empty_tensor({256, 256}, DType::kFloat32, Device{});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
    EXPECT_GE(alloc.allocated_bytes(), before + 256 * 256 * 4);
  }
  EXPECT_EQ(alloc.allocated_bytes(), before);
}

TEST(Device, ParseAndPrint) {
  EXPECT_EQ(Device::parse("cpu").str(), "cpu");
  EXPECT_EQ(Device::parse("cuda:1").index, 1);
  EXPECT_EQ(Device::parse("cuda").str(), "cuda:0");
  EXPECT_THROW(Device::parse("tpu"), ValueError);
  EXPECT_THROW(Device::parse("cuda:x"), ValueError);
}

}  // namespace oneflow
