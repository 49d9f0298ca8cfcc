// The dispatcher's eager-global mode (DESIGN.md section 8) and what it shares with dispatch.cpp.
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow::detail {

// Runs `prim` on global inputs (global_dispatch.cpp): picks an sbp signature, boxes the inputs
// to it, runs the primitive on this rank's shards and records autograd on the global tensors.
TensorList eager_global(const Primitive& prim, const TensorList& inputs, const Attrs& attrs,
                        const Tensor& inplace_out);

// dispatch.cpp: the autograd node of one op (as eager local mode records it).
void record_autograd(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                     const Attrs& attrs, const std::vector<int64_t>& input_versions,
                     const Tensor& original);

}  // namespace oneflow::detail
