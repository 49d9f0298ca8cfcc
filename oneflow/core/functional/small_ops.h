// Small ops as single kernels (ops/small_ops_primitives.h) or as short C++ paths without the
// Python layer: one_hot, bincount, cross, dot, outer, trace.
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

// torch.dot: two 1-D tensors of one length and dtype -> 0-dim.
Tensor dot(const Tensor& a, const Tensor& b);
// torch.outer: a[:, None] * b[None, :] for two 1-D tensors (promoted as mul).
Tensor outer(const Tensor& a, const Tensor& b);
// torch.trace: the sum of a matrix's main diagonal (integers sum to int64, as sum).
Tensor trace(const Tensor& x);

}  // namespace oneflow::functional
