// Special functions that need their own iterations rather than a fixed composition of other
// ops: the regularised incomplete gamma functions P(a, x) (torch.special.gammainc, igamma) and
// Q(a, x) = 1 - P (gammaincc, igammac). CPU kernel in kernels/cpu/special.cpp.
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// (a, x) of one shape and one floating dtype (float32 or float64; the functional layer
// broadcasts and promotes) -> P(a, x), or Q(a, x) with attr upper. Computed in double: a series
// below x = a + 1, a continued fraction above. NaN outside a >= 0, x >= 0 and at a = x = 0, as
// PyTorch. The gradient reaches x only (x^(a-1) e^-x / Gamma(a), negated for Q: the same kernel
// with attr density computes it, in double); asking for a's raises NotImplementedError, as
// PyTorch.
class Igamma final : public Primitive {
 public:
  const char* name() const override { return "igamma"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
const Igamma& igamma();
}  // namespace prim

}  // namespace oneflow
