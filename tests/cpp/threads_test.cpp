// Several threads using the core at once: the caching allocator, the op registry and dispatch, and
// autograd (whose grad mode is per thread). Run under ThreadSanitizer by tools/sanitize.sh tsan.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/device/caching_allocator.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/functional/functional.h"
#include "test_util.h"

namespace oneflow {

namespace F = functional;
using test::from_vector;
using test::to_vector;

namespace {
constexpr int kThreads = 4;

template <typename Fn>
void run_threads(Fn fn) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(fn, t);
  for (auto& th : threads) th.join();
}
}  // namespace

TEST(Threads, CachingAllocatorAccountingStaysExact) {
  std::atomic<int> raw_allocs{0}, raw_frees{0};
  CachingAllocator a(
      "threads",
      [&](size_t n) {
        ++raw_allocs;
        return std::malloc(n);
      },
      [&](void* p) {
        ++raw_frees;
        std::free(p);
      });
  run_threads([&](int t) {
    std::vector<std::pair<void*, size_t>> live;
    for (int i = 0; i < 2000; ++i) {
      const size_t n = size_t(64) << ((i + t) % 12);
      void* p = a.allocate(n);
      static_cast<char*>(p)[0] = char(t);  // the block is ours alone
      static_cast<char*>(p)[n - 1] = char(i);
      live.emplace_back(p, n);
      if (live.size() > 8) {
        a.deallocate(live.front().first, live.front().second);
        live.erase(live.begin());
      }
    }
    for (auto [p, n] : live) a.deallocate(p, n);
  });
  EXPECT_EQ(a.allocated_bytes(), 0u);
  a.empty_cache();
  EXPECT_EQ(a.cached_bytes(), 0u);
  EXPECT_EQ(raw_allocs.load(), raw_frees.load());
}

TEST(Threads, EagerOpsAndBackwardFromSeveralThreads) {
  Allocator& alloc = cpu_backend().allocator(0);
  eager::synchronize();  // the slots of earlier tests' instructions are emptied
  const size_t before = alloc.allocated_bytes();
  std::atomic<int> wrong{0};
  run_threads([&](int t) {
    for (int i = 0; i < 200; ++i) {
      const float s = float(t + 1);
      Tensor x = from_vector({s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s}, {2, 3});
      x->autograd().requires_grad = true;
      Tensor w = F::ones({3, 4}, {DType::kFloat32, Device{}, ""});
      // sum(relu(x) @ w * 2) = 8 * sum(x); d/dx = 8
      Tensor y = F::sum(F::mul(F::matmul(F::relu(x), w), Scalar::from_int(2)));
      run_backward({y}, {}, false, false);
      if (to_vector(y)[0] != 8 * 21 * s) ++wrong;
      for (float g : to_vector(x->autograd().grad))
        if (g != 8) ++wrong;
      // A no-grad region on this thread leaves the others recording.
      {
        GradModeGuard guard(false);
        Tensor z = F::add(x, Scalar::from_int(1));
        if (z->autograd().requires_grad) ++wrong;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  // Queued instructions hold their tensors until the engine has run them and a thread has
  // reclaimed their slots (the next op or a synchronisation).
  eager::synchronize();
  EXPECT_EQ(alloc.allocated_bytes(), before);
}

}  // namespace oneflow
