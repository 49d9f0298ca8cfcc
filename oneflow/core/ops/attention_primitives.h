// The fused scaled dot-product attention primitives (kernels/cpu/attention.cpp): one pass per
// query row instead of scores, mask, softmax and two batched products, and a backward that
// recomputes the probabilities from the saved log-sum-exp. CPU only, float32 and float64;
// F.scaled_dot_product_attention takes them for inputs without attn_mask or dropout and
// composes other ops otherwise (and on other devices).
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// (q [..., L, E], k [..., S, E], v [..., S, Ev]) -> (out [..., L, Ev], lse [..., L]), attrs
// scale (double) and causal (bool: key j is seen by query i when j <= i, PyTorch's is_causal).
// The three inputs share the batch dims and dtype; each has a contiguous last dim (other
// strides are free). lse is the log-sum-exp of each query row's scaled scores.
class Attention final : public Primitive {
 public:
  const char* name() const override { return "scaled_dot_product_attention"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (q, k, v, out, lse, dout) -> (dq, dk, dv), the attrs of the forward. Its own gradient is not
// implemented (it raises, as PyTorch's fused attention backward does).
class AttentionGrad final : public Primitive {
 public:
  const char* name() const override { return "scaled_dot_product_attention_backward"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
const Attention& attention();
const AttentionGrad& attention_grad();
}  // namespace prim

}  // namespace oneflow
