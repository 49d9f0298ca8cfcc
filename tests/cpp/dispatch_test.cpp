// The dispatcher: mode selection (lazy and global are explicit "not implemented yet"), device
// checks, in-place rules, views sharing storage, and the primitive list.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/dispatch/host_fallback.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/nn_primitives.h"
#include "oneflow/core/ops/primitives.h"
#include "test_util.h"

namespace oneflow {

namespace F = functional;

TEST(Dispatch, LazyModeIsNotImplementedYet) {
  Tensor a = F::ones({2}, {DType::kFloat32, Device{}, ""});
  LazyModeGuard lazy(true);
  try {
    F::add(a, a);
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("lazy"), std::string::npos);
  }
}

TEST(Dispatch, GlobalModeIsNotImplementedYet) {
  EXPECT_THROW(F::ones({2}, {DType::kFloat32, Device{}, "cpu:[0]"}), NotImplementedError);
}

TEST(Dispatch, CudaWithoutCudaIsAClearError) {
  if (cuda_built()) GTEST_SKIP() << "built with CUDA";
  try {
    F::ones({2}, {DType::kFloat32, Device{DeviceType::kCUDA, 0}, ""});
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("without CUDA"), std::string::npos);
  }
}

namespace {
// A primitive for the host-fallback registry alone (never dispatched).
class PendingOnCuda final : public Primitive {
 public:
  const char* name() const override { return "pending_on_cuda_test"; }
  std::vector<TensorMeta> infer(const TensorList&, const Attrs&) const override { return {}; }
  void compute_cpu(const TensorList&, const TensorList&, const Attrs&) const override {}
  void compute_cuda(const TensorList&, const TensorList&, const Attrs&) const override {}
};
}  // namespace

TEST(Dispatch, HostFallbackRegistryKnowsTheStubs) {
  const PendingOnCuda pending;
  EXPECT_FALSE(cuda_kernel_pending(pending));
  EXPECT_TRUE(register_cuda_pending(typeid(PendingOnCuda)));
  EXPECT_TRUE(cuda_kernel_pending(pending));
  // A primitive with a CUDA kernel stays off the registry; the stubs register only in a CUDA
  // build (conv has no CUDA kernel yet).
  EXPECT_FALSE(cuda_kernel_pending(prim::add()));
  EXPECT_EQ(cuda_kernel_pending(prim::conv_forward()), cuda_built());
  EXPECT_TRUE(host_fallback_enabled() || std::getenv("ONEFLOW_CUDA_HOST_FALLBACK") != nullptr);
}

TEST(Dispatch, ViewsShareStorageAndVersion) {
  Tensor a = test::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = F::transpose(a, 0, 1);
  Tensor v = F::view(a, {3, 2});
  EXPECT_EQ(t->storage(), a->storage());
  EXPECT_EQ(v->storage(), a->storage());
  F::add_(v, Scalar::from_int(1));
  EXPECT_EQ(a->version(), 1);
  EXPECT_EQ(test::to_vector(t), (std::vector<float>{2, 5, 3, 6, 4, 7}));
  EXPECT_THROW(F::view(t, {6}), RuntimeError);
  EXPECT_EQ(F::reshape(t, {6})->shape(), (Shape{6}));
}

TEST(Dispatch, InplaceRules) {
  Tensor i = F::ones({2}, {DType::kInt64, Device{}, ""});
  EXPECT_THROW(F::add_(i, Scalar::from_double(0.5)), RuntimeError);  // float into int
  Tensor x = F::ones({2}, {DType::kFloat32, Device{}, ""});
  x->autograd().requires_grad = true;
  EXPECT_THROW(F::add_(x, Scalar::from_int(1)), RuntimeError);  // leaf requiring grad
  Tensor small = F::ones({1}, {DType::kFloat32, Device{}, ""});
  EXPECT_THROW(F::add_(small, F::ones({3}, {DType::kFloat32, Device{}, ""})), RuntimeError);
}

TEST(Dispatch, EveryPrimitiveHasAUniqueName) {
  std::set<std::string> names;
  for (const Primitive* p : all_primitives()) EXPECT_TRUE(names.insert(p->name()).second);
  EXPECT_GE(names.size(), 12u);
}

TEST(Dispatch, ResultTypeWrappedNumbers) {
  CreationOptions i32{DType::kInt32, Device{}, ""}, f16{DType::kFloat16, Device{}, ""};
  Tensor a = F::ones({2}, i32), h = F::ones({2}, f16);
  EXPECT_EQ(F::result_type({a}, {Scalar::from_int(1)}), DType::kInt32);
  EXPECT_EQ(F::result_type({a}, {Scalar::from_double(1.5)}), DType::kFloat32);
  EXPECT_EQ(F::result_type({h}, {Scalar::from_double(1.5)}), DType::kFloat16);
  Tensor zero_dim_f64 = F::ones({}, {DType::kFloat64, Device{}, ""});
  EXPECT_EQ(F::result_type({a, zero_dim_f64}), DType::kFloat64);
  EXPECT_EQ(F::result_type({h, zero_dim_f64}), DType::kFloat16);
}

}  // namespace oneflow
