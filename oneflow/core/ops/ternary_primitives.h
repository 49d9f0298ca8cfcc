// Fused three-operand pointwise ops: addcmul, addcdiv and lerp in one pass over memory, where
// their compositions took three or four passes and as many temporaries (the in-place forms are
// the update steps of optimizers and moving averages).
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

enum class TernaryFn {
  kAddcmul,  // a + value * b * c
  kAddcdiv,  // a + value * b / c
  kLerp,     // a + c * (b - a), as PyTorch: b - (b - a) * (1 - c) where c >= 0.5
};

// out = f(a, b, c): inputs broadcast together, one floating dtype for all three (the functional
// layer promotes), attrs value (double; addcmul and addcdiv). May run in place on a.
template <TernaryFn K>
class Ternary final : public Primitive {
 public:
  const char* name() const override;
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
template <TernaryFn K>
const Ternary<K>& ternary();
}  // namespace prim

}  // namespace oneflow
