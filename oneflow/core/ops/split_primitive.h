// Split: consecutive sections of a tensor along one dim, as views, from one primitive. Its
// gradient is one cat of the sections' gradients (zeros for sections without one), where
// separate narrow views would each scatter into a zero tensor of the input's size and then be
// summed.
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// x -> one view per entry of attrs sizes (which sum to x.shape[dim]), attrs dim (wrapped).
class Split final : public Primitive {
 public:
  const char* name() const override { return "split"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList&, const TensorList&, const Attrs&) const override {}
  void compute_cuda(const TensorList&, const TensorList&, const Attrs&) const override {}
};

namespace prim {
const Split& split();
}  // namespace prim

}  // namespace oneflow
