// scaled_dot_product_attention on the fused CPU kernel (ops/attention_primitives.h).
#pragma once

#include "oneflow/core/framework/tensor.h"

namespace oneflow::functional {

// Whether the fused kernel takes these inputs: CPU, one floating dtype (float32 or float64),
// at least 2 dims, the same batch dims, k and q of the same width, k and v of the same length,
// no zero-size dim.
bool fused_attention_supported(const Tensor& q, const Tensor& k, const Tensor& v);

// softmax(q k^T * scale, causal mask) v; RuntimeError for inputs the kernel does not take.
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                       bool causal);

// (dq, dk, dv) of fused_attention given its output, the saved log-sum-exp and dout.
TensorList fused_attention_grad(const Tensor& q, const Tensor& k, const Tensor& v,
                                const Tensor& out, const Tensor& lse, const Tensor& dout,
                                double scale, bool causal);

}  // namespace oneflow::functional
