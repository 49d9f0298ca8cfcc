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

TEST(Eager, ReadsWaitForQueuedOps) {
  Tensor x = from_vector({1, 2, 3}, {3});
  for (int i = 0; i < 100; ++i) x = F::add(x, Scalar::from_int(1));
  EXPECT_EQ(to_vector(x), (std::vector<float>{101, 102, 103}));
}

TEST(Eager, HostWritesWaitForQueuedReaders) {
  Tensor x = from_vector({1, 2, 3}, {3});
  Tensor y = F::mul(x, Scalar::from_int(2));  // queued: reads x
  const float v[3] = {7, 7, 7};
  std::memcpy(x->data(), v, sizeof(v));  // data() waits for the read above
  EXPECT_EQ(to_vector(y), (std::vector<float>{2, 4, 6}));
}

TEST(Eager, KernelErrorSurfacesAtSynchronize) {
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
