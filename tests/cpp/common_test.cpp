// dtype properties and promotion, half conversions, shapes, broadcasting, Philox.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "oneflow/core/common/dtype.h"
#include "oneflow/core/common/philox.h"
#include "oneflow/core/common/shape.h"

namespace oneflow {

TEST(DType, ItemsizeAndNames) {
  EXPECT_EQ(itemsize(DType::kFloat32), 4u);
  EXPECT_EQ(itemsize(DType::kBFloat16), 2u);
  EXPECT_EQ(itemsize(DType::kInt64), 8u);
  EXPECT_STREQ(dtype_name(DType::kFloat16), "float16");
  EXPECT_TRUE(is_floating(DType::kBFloat16));
  EXPECT_FALSE(is_integral(DType::kBool, false));
  EXPECT_TRUE(is_integral(DType::kBool, true));
}

TEST(DType, PromotionFollowsPyTorch) {
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt8), DType::kInt16);
  EXPECT_EQ(promote_types(DType::kBool, DType::kUInt8), DType::kUInt8);
  EXPECT_EQ(promote_types(DType::kInt64, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(promote_types(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kInt32, DType::kInt64), DType::kInt64);
  EXPECT_EQ(promote_types(DType::kFloat32, DType::kFloat64), DType::kFloat64);
  for (int i = 0; i < kNumDTypes; ++i)
    for (int j = 0; j < kNumDTypes; ++j)
      EXPECT_EQ(promote_types(DType(i), DType(j)), promote_types(DType(j), DType(i)));
}

TEST(Half, RoundTripAndRounding) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
    EXPECT_EQ(static_cast<float>(float16(f)), f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even gives 1.
  EXPECT_EQ(static_cast<float>(float16(1.0f + std::ldexp(1.0f, -11))), 1.0f);
  EXPECT_EQ(static_cast<float>(float16(1.0f + 3 * std::ldexp(1.0f, -11))),
            1.0f + std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isinf(static_cast<float>(float16(70000.0f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(float16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(static_cast<float>(bfloat16(1.0f)), 1.0f);
  EXPECT_EQ(static_cast<float>(bfloat16(1.0f + std::ldexp(1.0f, -8))), 1.0f);  // tie to even
  EXPECT_EQ(static_cast<float>(bfloat16(3.0f)), 3.0f);
}

TEST(Shape, ContiguityAndBroadcast) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_TRUE(is_contiguous({2, 3}, {3, 1}));
  EXPECT_FALSE(is_contiguous({2, 3}, {1, 2}));
  EXPECT_TRUE(is_contiguous({1, 3}, {99, 1}));
  EXPECT_EQ(broadcast_shapes("t", {3, 1}, {4}), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes("t", {}, {2, 2}), (Shape{2, 2}));
  EXPECT_THROW(broadcast_shapes("t", {3}, {4}), RuntimeError);
  EXPECT_EQ(wrap_dim("t", -1, 3), 2);
  EXPECT_THROW(wrap_dim("t", 3, 3), IndexError);
  EXPECT_EQ(shape_str({5}), "(5,)");
}

TEST(Philox, DeterministicAndKeyed) {
  uint32_t a[4], b[4], c[4];
  Philox4x32(42)(7, a);
  Philox4x32(42)(7, b);
  Philox4x32(43)(7, c);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a[i], b[i]);
  EXPECT_NE(a[0], c[0]);
  // Known-answer test from the Random123 distribution: philox4x32_10, key = 0, counter = 0.
  uint32_t z[4];
  Philox4x32(0)(0, z);
  EXPECT_EQ(z[0], 0x6627e8d5u);
  EXPECT_EQ(z[1], 0xe169c58du);
  EXPECT_EQ(z[2], 0xbc57ac4cu);
  EXPECT_EQ(z[3], 0x9b00dbd8u);
}

}  // namespace oneflow
