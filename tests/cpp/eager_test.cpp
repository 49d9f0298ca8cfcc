// The eager engine from C++: queued ops, host reads and writes ordered with them, deferred
// kernel errors, synchronous mode.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>

#include "oneflow/core/eager/engine.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/primitive.h"
#include "test_util.h"

namespace oneflow {
namespace {

// Lets the engine finish before main returns: kernels must not run into static destruction.
class DrainEngine : public ::testing::Environment {
 public:
  void TearDown() override { eager::synchronize(); }
};
[[maybe_unused]] const auto* const g_drain = ::testing::AddGlobalTestEnvironment(new DrainEngine);

namespace F = functional;
using test::from_vector;
using test::QueueEveryOp;
using test::to_vector;

TEST(Eager, ReadsWaitForQueuedOps) {
  QueueEveryOp queue;
  Tensor x = from_vector({1, 2, 3}, {3});
  for (int i = 0; i < 100; ++i) x = F::add(x, Scalar::from_int(1));
  EXPECT_EQ(to_vector(x), (std::vector<float>{101, 102, 103}));
}

TEST(Eager, HostWritesWaitForQueuedReaders) {
  QueueEveryOp queue;
  Tensor x = from_vector({1, 2, 3}, {3});
  Tensor y = F::mul(x, Scalar::from_int(2));  // queued: reads x
  const float v[3] = {7, 7, 7};
  std::memcpy(x->data(), v, sizeof(v));  // data() waits for the read above
  EXPECT_EQ(to_vector(y), (std::vector<float>{2, 4, 6}));
}

TEST(Eager, KernelErrorSurfacesAtSynchronize) {
  QueueEveryOp queue;
  Tensor x = from_vector({1, 2, 3}, {3});
  Tensor idx = empty_tensor({1}, DType::kInt64, Device{});
  idx->data_as<int64_t>()[0] = 5;
  Tensor bad = F::gather(x, 0, idx);
  try {
    eager::synchronize();
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("gather: index 5 is out of bounds"), std::string::npos);
  }
  eager::synchronize();  // reported once
  EXPECT_EQ(to_vector(F::add(x, Scalar::from_int(1))), (std::vector<float>{2, 3, 4}));
}

TEST(Eager, SmallOpsOnAnIdleStreamRunAtTheCall) {
  // Whatever their kernels took before (sanitizer builds are slow).
  const uint32_t limit = eager::small_kernel_ns_limit();
  eager::set_small_kernel_ns_limit(1u << 30);
  eager::synchronize();
  Tensor x = from_vector({1, 2, 3}, {3});
  Tensor y = F::mul(x, Scalar::from_int(2));
  EXPECT_EQ(eager::pending_instructions(), 0u);
  Tensor idx = empty_tensor({1}, DType::kInt64, Device{});
  idx->data_as<int64_t>()[0] = 5;
  EXPECT_THROW(F::gather(x, 0, idx), RuntimeError);
  EXPECT_EQ(to_vector(y), (std::vector<float>{2, 4, 6}));
  eager::set_small_kernel_ns_limit(limit);
}

// An operand-less kernel that busy-waits: `slow_runs` more runs take slow_ns, the others fast_ns.
class Timed final : public Primitive {
 public:
  const char* name() const override { return "timed"; }
  std::vector<TensorMeta> infer(const TensorList&, const Attrs&) const override { return {}; }
  void compute_cpu(const TensorList&, const TensorList&, const Attrs&) const override {
    const int64_t ns = slow_runs.fetch_sub(1) > 0 ? slow_ns : fast_ns;
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  void compute_cuda(const TensorList& in, const TensorList& out, const Attrs& a) const override {
    compute_cpu(in, out, a);
  }
  mutable std::atomic<int> slow_runs{0};
  int64_t slow_ns = 0, fast_ns = 0;
};

// As the dispatcher runs a CPU kernel: here when the engine lets it (true), queued otherwise.
bool call(const Primitive& p) {
  if (eager::run_here_if_idle(p, {}, {}, {})) return true;
  eager::enqueue(p, {}, {}, {});
  return false;
}

// Note [Small ops run here]: an op whose estimate went above the limit is probed again at the
// first idle call after 32 queued ones (not only on every 32nd call, which in a loop that reads
// every 41 calls never found the stream idle), and a slow probe is retried before it counts.
TEST(Eager, SlowSmallOpsAreProbedAgainOnAnIdleStream) {
  const uint32_t limit = eager::small_kernel_ns_limit();
  eager::set_small_kernel_ns_limit(20'000);
  eager::synchronize();
  Timed blocker;
  blocker.fast_ns = 20'000'000;  // queued ahead of each burst: every call in it finds work queued
  Timed op;
  op.slow_ns = 100'000, op.fast_ns = 0;
  op.slow_runs = 1;
  EXPECT_TRUE(call(op));  // the first run measures: 100 us, above the limit
  auto burst = [&] {
    eager::enqueue(blocker, {}, {}, {});
    int here = 0;
    for (int i = 0; i < 40; ++i) here += call(op);
    eager::synchronize();
    return here;
  };
  EXPECT_EQ(burst(), 0);
  EXPECT_TRUE(call(op));  // idle after 40 queued calls: a probe, quick
  EXPECT_EQ(burst(), 0);  // the stream is busy throughout
  EXPECT_TRUE(call(op));  // and the estimate is below the limit again
  EXPECT_FALSE(eager::pending_instructions() > 0);
  // Slow runs raise the estimate by 1/8 each: one alone does not queue the op, a few do.
  auto make_slow = [&] {
    op.slow_runs = 1000;
    int here = 0;
    while (here < 20 && call(op)) ++here;
    eager::synchronize();
    op.slow_runs = 0;
    return here;
  };
  const int slow_here = make_slow();
  EXPECT_GE(slow_here, 2);
  EXPECT_LE(slow_here, 12);
  EXPECT_FALSE(call(op));
  // A slow probe (memory the stream thread wrote last) is retried at the next idle call; a
  // quick retry counts.
  EXPECT_EQ(burst(), 0);
  op.slow_runs = 1;
  EXPECT_TRUE(call(op));  // the probe, slow
  EXPECT_TRUE(call(op));  // its retry, quick
  EXPECT_TRUE(call(op));  // below the limit again
  // A kernel that stays slow goes back to the queue after its probe and retry.
  make_slow();
  EXPECT_EQ(burst(), 0);
  op.slow_runs = 2;
  EXPECT_TRUE(call(op));
  EXPECT_TRUE(call(op));
  EXPECT_FALSE(call(op));
  eager::synchronize();
  eager::set_small_kernel_ns_limit(limit);
}

TEST(Eager, SyncModeRaisesAtTheCall) {
  eager::set_sync_execution(true);
  Tensor x = from_vector({1, 2, 3}, {3});
  Tensor idx = empty_tensor({1}, DType::kInt64, Device{});
  idx->data_as<int64_t>()[0] = 5;
  EXPECT_THROW(F::gather(x, 0, idx), RuntimeError);
  EXPECT_EQ(eager::pending_instructions(), 0u);
  eager::set_sync_execution(false);
}

}  // namespace
}  // namespace oneflow
