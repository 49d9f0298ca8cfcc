// CPU kernels through the functional API: values against hand-computed results, broadcasting,
// strided inputs, dtypes.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>

#include "oneflow/core/functional/functional.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "test_util.h"

namespace oneflow {

namespace F = functional;
using test::from_vector;
using test::to_vector;

TEST(Kernels, AddMulBroadcast) {
  Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = from_vector({10, 20, 30}, {3});
  EXPECT_EQ(to_vector(F::add(a, b)), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(to_vector(F::mul(a, b)), (std::vector<float>{10, 40, 90, 40, 100, 180}));
  Tensor col = from_vector({1, 2}, {2, 1});
  EXPECT_EQ(to_vector(F::add(a, col)), (std::vector<float>{2, 3, 4, 6, 7, 8}));
  EXPECT_EQ(to_vector(F::add(a, b, Scalar::from_int(2))),
            (std::vector<float>{21, 42, 63, 24, 45, 66}));
}

TEST(Kernels, StridedInputs) {
  Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor at = F::transpose(a, 0, 1);  // [[1,4],[2,5],[3,6]]
  EXPECT_FALSE(at->is_contiguous());
  EXPECT_EQ(to_vector(F::contiguous(at)), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(to_vector(F::relu(F::add(at, Scalar::from_double(-3.5)))),
            (std::vector<float>{0, 0.5f, 0, 1.5f, 0, 2.5f}));
}

TEST(Kernels, LargeParallelAdd) {
  const int64_t n = 1 << 20;
  Tensor a = F::full({n}, Scalar::from_double(1.5), {DType::kFloat32, Device{}, ""});
  Tensor s = F::sum(F::add(a, a));
  EXPECT_DOUBLE_EQ(to_vector(s)[0], 3.0 * n);
}

TEST(Kernels, SumOverDims) {
  Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(to_vector(F::sum(a)), (std::vector<float>{21}));
  EXPECT_EQ(to_vector(F::sum(a, {0})), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(to_vector(F::sum(a, {1})), (std::vector<float>{6, 15}));
  EXPECT_EQ(F::sum(a, {-1}, true)->shape(), (Shape{2, 1}));
  EXPECT_EQ(to_vector(F::sum(F::transpose(a, 0, 1), {0})), (std::vector<float>{6, 15}));
  Tensor ints = F::full({3, 4}, Scalar::from_int(2), {DType::kInt32, Device{}, ""});
  Tensor si = F::sum(ints);
  EXPECT_EQ(si->dtype(), DType::kInt64);
  EXPECT_EQ(to_vector<int64_t>(si)[0], 24);
  Tensor empty = F::zeros({0, 3}, {DType::kFloat32, Device{}, ""});
  EXPECT_EQ(to_vector(F::sum(empty, {0})), (std::vector<float>{0, 0, 0}));
}

TEST(Kernels, MatmulShapesAndValues) {
  Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = from_vector({1, 0, 0, 1, 1, 1}, {3, 2});
  EXPECT_EQ(to_vector(F::matmul(a, b)), (std::vector<float>{4, 5, 10, 11}));
  // Transposed operands go to oneDNN as strided views.
  Tensor bt = F::transpose(from_vector({1, 0, 1, 0, 1, 1}, {2, 3}), 0, 1);
  EXPECT_EQ(to_vector(F::matmul(a, bt)), (std::vector<float>{4, 5, 10, 11}));
  Tensor v = from_vector({1, 1, 1}, {3});
  EXPECT_EQ(to_vector(F::matmul(a, v)), (std::vector<float>{6, 15}));
  EXPECT_EQ(F::matmul(v, b)->shape(), (Shape{2}));
  Tensor batch = F::ones({4, 2, 3}, {DType::kFloat32, Device{}, ""});
  EXPECT_EQ(F::matmul(batch, b)->shape(), (Shape{4, 2, 2}));
  Tensor d = F::to(a, DType::kFloat64, std::nullopt);
  Tensor r = F::matmul(d, F::to(b, DType::kFloat64, std::nullopt));
  EXPECT_EQ(to_vector<double>(r), (std::vector<double>{4, 5, 10, 11}));
  Tensor i = F::to(a, DType::kInt64, std::nullopt);
  EXPECT_EQ(to_vector<int64_t>(F::matmul(i, F::to(b, DType::kInt64, std::nullopt))),
            (std::vector<int64_t>{4, 5, 10, 11}));
  EXPECT_THROW(F::matmul(a, a), RuntimeError);
}

TEST(Kernels, CastRoundsLikePyTorch) {
  Tensor a = from_vector({-1.7f, -0.5f, 0.5f, 2.9f}, {4});
  EXPECT_EQ(to_vector<int64_t>(F::to(a, DType::kInt64, std::nullopt)),
            (std::vector<int64_t>{-1, 0, 0, 2}));
  Tensor h = F::to(a, DType::kFloat16, std::nullopt);
  EXPECT_EQ(static_cast<float>(to_vector<float16>(h)[3]), 2.900390625f);
  EXPECT_EQ(to_vector<bool>(F::to(a, DType::kBool, std::nullopt)),
            (std::vector<bool>{true, true, true, true}));
}

TEST(Kernels, RandnIsSeededAndNormal) {
  manual_seed(123);
  CreationOptions o{DType::kFloat32, Device{}, ""};
  std::vector<float> x = to_vector(F::randn({100000}, o));
  manual_seed(123);
  std::vector<float> y = to_vector(F::randn({100000}, o));
  EXPECT_EQ(x, y);
  double mean = 0, sq = 0;
  for (float v : x) mean += v;
  mean /= x.size();
  for (float v : x) sq += (v - mean) * (v - mean);
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(sq / x.size(), 1.0, 0.02);
  EXPECT_NE(to_vector(F::randn({4}, o)), to_vector(F::randn({4}, o)));
}

}  // namespace oneflow

namespace oneflow {

// strided_loop visits every element once, at the right addresses, however the index space is
// split between threads (chunk bounds inside runs and inside rows of the second innermost dim).
TEST(Kernels, StridedLoopVisitsEveryElementOnce) {
  const int64_t A = 3, B = 61, C = 37, D = 5;  // 33855 elements: above the parallel grain
  const Shape shape{A, B, C, D};
  const int64_t n = A * B * C * D;
  // operand 0 contiguous; operand 1 the dims (0, 2, 1, 3) of a contiguous [A, C, B, D]
  const std::vector<int64_t> s0{B * C * D * 4, C * D * 4, D * 4, 4};
  const std::vector<int64_t> s1{C * B * D * 4, D * 4, B * D * 4, 4};
  std::vector<int32_t> src(n), dst(n);
  for (int64_t i = 0; i < n; ++i) src[i] = static_cast<int32_t>(i);
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3, 7}) {
    omp_set_num_threads(threads);
    std::fill(dst.begin(), dst.end(), -1);
    cpu::strided_loop<2>(shape, {s0, s1},
                         {reinterpret_cast<char*>(dst.data()), reinterpret_cast<char*>(src.data())},
                         [&](std::array<char*, 2> p, const auto& s, int64_t count) {
                           for (int64_t i = 0; i < count; ++i) {
                             int32_t& o = *reinterpret_cast<int32_t*>(p[0] + i * s[0]);
                             EXPECT_EQ(o, -1);  // not visited before
                             o = *reinterpret_cast<const int32_t*>(p[1] + i * s[1]);
                           }
                         });
    for (int64_t a = 0; a < A; ++a)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t d = 0; d < D; ++d) {
            const int64_t o = ((a * B + b) * C + c) * D + d, i = ((a * C + c) * B + b) * D + d;
            ASSERT_EQ(dst[o], src[i]) << "threads " << threads << " element " << o;
          }
  }
  omp_set_num_threads(saved);
}

// Note [One-thread parallel regions]: a loop whose condition is false, or whose team would be one
// thread, runs outside any OpenMP region; otherwise it runs in one, with its clauses.
TEST(Kernels, OneThreadLoopsStayOffOpenMp) {
  const int saved = omp_get_max_threads();
  auto run = [](bool cond, int64_t n, int* in_parallel) {
    int64_t total = 0;
    OF_OMP_FOR_IF(cond, reduction(+ : total) schedule(static), for (int64_t i = 0; i < n; ++i) {
      if (i == 0) *in_parallel = omp_in_parallel();
      total += i;
    });
    return total;
  };
  int in_parallel = -1;
  omp_set_num_threads(2);
  EXPECT_EQ(run(false, 1000, &in_parallel), 999 * 1000 / 2);
  EXPECT_EQ(in_parallel, 0);
  EXPECT_EQ(run(true, 1000, &in_parallel), 999 * 1000 / 2);
  EXPECT_EQ(in_parallel, 1);
  omp_set_num_threads(1);
  EXPECT_EQ(run(true, 1000, &in_parallel), 999 * 1000 / 2);
  EXPECT_EQ(in_parallel, 0);
  EXPECT_EQ(run(true, 0, &in_parallel), 0);
  // A parallel block with an orphaned omp for: every item once, in a region only when it pays.
  auto block = [](bool cond, int* in_parallel) {
    std::vector<int> hits(100, 0);
    auto region = [&] {
      if (omp_get_thread_num() == 0) *in_parallel = omp_in_parallel();
#pragma omp for schedule(static)
      for (int i = 0; i < 100; ++i) ++hits[i];
    };
    OF_OMP_PARALLEL_IF(cond, , region);
    return std::count(hits.begin(), hits.end(), 1);
  };
  EXPECT_EQ(block(true, &in_parallel), 100);
  EXPECT_EQ(in_parallel, 0);  // the team is still one thread
  omp_set_num_threads(2);
  EXPECT_EQ(block(false, &in_parallel), 100);
  EXPECT_EQ(in_parallel, 0);
  EXPECT_EQ(block(true, &in_parallel), 100);
  EXPECT_EQ(in_parallel, 1);
  omp_set_num_threads(saved);
}

}  // namespace oneflow
