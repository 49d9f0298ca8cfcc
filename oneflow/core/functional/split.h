// split / chunk as one multi-output view (ops/split_primitive.h).
#pragma once

#include <vector>

#include "oneflow/core/framework/tensor.h"

namespace oneflow::functional {

// Views of x along dim of the given sizes (non-negative, summing to x.shape[dim]).
TensorList split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim);

}  // namespace oneflow::functional
