// one_hot, bincount and cross as single kernels (ops/counting_primitives.h).
#pragma once

#include <optional>

#include "oneflow/core/functional/functional.h"

namespace oneflow::functional {

// int64 index -> int64 one-hot rows of num_classes entries (-1: max(index) + 1, read on the
// host); a value outside [0, num_classes) raises (on the CPU at the next read).
Tensor one_hot(const Tensor& index, int64_t num_classes);
// Counts (int64), or sums of weights (pass nullptr for none; float32 and float64 weights keep
// their dtype, others sum in float64), of the values of a 1-D integer tensor, in
// max(max(x) + 1, minlength) bins; the maximum is read on the host, as in PyTorch.
Tensor bincount(const Tensor& x, const Tensor& weights, int64_t minlength);
// a x b along dim (size 3 in both; without dim, the first dim of size 3): operands of one rank
// and dtype, broadcast together, as in PyTorch.
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim);

}  // namespace oneflow::functional
