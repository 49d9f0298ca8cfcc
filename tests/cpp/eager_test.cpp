// The eager engine from C++: queued ops, host reads and writes ordered with them, deferred
// kernel errors, synchronous mode.
#include <gtest/gtest.h>

#include <cstring>

#include "oneflow/core/eager/engine.h"
#include "oneflow/core/functional/functional.h"
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
using test::to_vector;

// These ops are small: without this they run at the call on an idle stream.
class QueueEveryOp {
 public:
  QueueEveryOp() : prev_(eager::queue_every_op()) { eager::set_queue_every_op(true); }
  ~QueueEveryOp() { eager::set_queue_every_op(prev_); }
  QueueEveryOp(const QueueEveryOp&) = delete;
  QueueEveryOp& operator=(const QueueEveryOp&) = delete;

 private:
  const bool prev_;
};

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
