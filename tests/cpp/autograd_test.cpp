// The autograd engine: gradients of the slice's primitives, accumulation, retain_graph, the
// version-counter check.
#include <gtest/gtest.h>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/functional/functional.h"
#include "test_util.h"

namespace oneflow {

namespace F = functional;
using test::from_vector;
using test::to_vector;

namespace {
Tensor leaf(const std::vector<float>& v, const Shape& s) {
  Tensor t = from_vector(v, s);
  t->autograd().requires_grad = true;
  return t;
}
}  // namespace

TEST(Autograd, ReluMatmulSum) {
  Tensor x = leaf({1, -2, 3, -4, 5, 6}, {2, 3});
  Tensor w = F::ones({3, 2}, {DType::kFloat32, Device{}, ""});
  Tensor y = F::sum(F::matmul(F::relu(x), w));
  run_backward({y}, {}, false, false);
  EXPECT_EQ(to_vector(x->autograd().grad), (std::vector<float>{2, 0, 2, 0, 2, 2}));
}

TEST(Autograd, BroadcastAddMulReduceToInputShapes) {
  Tensor a = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = leaf({1, 2, 3}, {3});
  Tensor y = F::sum(F::mul(F::add(a, b), b));
  run_backward({y}, {}, false, false);
  // dy/da = b broadcast; dy/db = sum_rows(a + b) + sum_rows(b) = sum_rows(a) + 4 b
  EXPECT_EQ(to_vector(a->autograd().grad), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(to_vector(b->autograd().grad), (std::vector<float>{9, 15, 21}));
}

TEST(Autograd, AccumulatesAcrossCallsAndRetainsGraph) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = F::sum(F::mul(x, x));
  run_backward({y}, {}, true, false);
  run_backward({y}, {}, false, false);
  EXPECT_EQ(to_vector(x->autograd().grad), (std::vector<float>{4, 8}));
  EXPECT_THROW(run_backward({y}, {}, false, false), RuntimeError);
}

TEST(Autograd, InplaceOnSavedTensorIsDetected) {
  Tensor x = leaf({1, 2}, {2});
  Tensor h = F::add(x, Scalar::from_int(1));
  Tensor y = F::sum(F::mul(h, h));
  F::add_(h, Scalar::from_int(1));
  EXPECT_THROW(run_backward({y}, {}, false, false), RuntimeError);
}

TEST(Autograd, GradOfInputsAndCreateGraph) {
  Tensor x = leaf({3}, {1});
  Tensor y = F::sum(F::mul(F::mul(x, x), x));  // x^3
  TensorList g = run_backward({y}, {}, true, true, {x});
  EXPECT_FLOAT_EQ(to_vector(g[0])[0], 27.0f);  // 3x^2
  EXPECT_TRUE(g[0]->requires_grad());
  TensorList g2 = run_backward({F::sum(g[0])}, {}, false, false, {x});
  EXPECT_FLOAT_EQ(to_vector(g2[0])[0], 18.0f);  // 6x
  EXPECT_FALSE(x->autograd().grad);             // autograd.grad leaves .grad alone
}

TEST(Autograd, NoGradModeRecordsNothing) {
  Tensor x = leaf({1}, {1});
  {
    GradModeGuard g(false);
    Tensor y = F::mul(x, x);
    EXPECT_FALSE(y->requires_grad());
  }
  Tensor y = F::mul(x, x);
  EXPECT_TRUE(y->requires_grad());
  EXPECT_EQ(y->autograd().grad_fn->name(), "mulBackward");
}

}  // namespace oneflow
