// CheckIndexRange: a kernel that checks an index's values against a range and raises
// IndexError naming the op. Eager ops check their indices on the host before they dispatch; a
// compiled graph replays the recorded kernels without those host checks, so while a graph is
// traced the ops whose kernels would accept what the host check refuses (negative indices of
// embedding and index_select wrap in the gather kernels) record this check too. It has no
// outputs, so the graph keeps it, and it runs in issue order before the op it guards.
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// (index int32/int64, any shape) -> nothing. attrs: lo, hi (the allowed range [lo, hi)), op,
// dim and size (for the message).
class CheckIndexRange final : public Primitive {
 public:
  const char* name() const override { return "check_index_range"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
const CheckIndexRange& check_index_range();
}  // namespace prim

namespace functional {
// While a graph is traced and `index` is a local CPU tensor: records the check of its values
// against [lo, hi); otherwise nothing (the caller has checked on the host).
void record_index_check(const Tensor& index, int64_t lo, int64_t hi, const std::string& op,
                        int64_t dim, int64_t size);
}  // namespace functional

}  // namespace oneflow
