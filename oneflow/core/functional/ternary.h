// addcmul, addcdiv and lerp on the fused pointwise primitives (ops/ternary_primitives.h).
#pragma once

#include "oneflow/core/functional/functional.h"

namespace oneflow::functional {

// a + value * b * c and a + value * b / c, the operands promoted to one floating dtype.
Tensor addcmul(const Tensor& a, const Tensor& b, const Tensor& c, Scalar value);
Tensor addcdiv(const Tensor& a, const Tensor& b, const Tensor& c, Scalar value);
// a + weight * (end - a) (PyTorch's two-sided form); weight a tensor or a number.
Tensor lerp(const Tensor& a, const Tensor& end, const Tensor& weight);
Tensor lerp(const Tensor& a, const Tensor& end, Scalar weight);

// In place on a (the others cast to a's dtype, which the result must fit).
Tensor addcmul_(const Tensor& a, const Tensor& b, const Tensor& c, Scalar value);
Tensor addcdiv_(const Tensor& a, const Tensor& b, const Tensor& c, Scalar value);
Tensor lerp_(const Tensor& a, const Tensor& end, const Tensor& weight);
Tensor lerp_(const Tensor& a, const Tensor& end, Scalar weight);

}  // namespace oneflow::functional
