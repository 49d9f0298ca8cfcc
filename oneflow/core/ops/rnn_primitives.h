// The LSTM cell's gate math as one kernel: the recurrent layers (nn.LSTM, nn.LSTMCell) run it once
// per step after the two projections, where the composed form was ten elementwise ops over
// column slices of the gates (and about twenty more in backward).
#pragma once

#include <utility>

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// (gi (B, 4H), gh (B, 4H), c (B, H)) -> (h (B, H), c' (B, H), act (B, 4H)). The gates are
// gi + gh in PyTorch's order (input, forget, cell, output): act holds sigmoid(i), sigmoid(f),
// tanh(g), sigmoid(o); c' = f c + i g and h = o tanh(c'). Contiguous float32/float64 operands of
// one dtype and device.
class LstmCell final : public Primitive {
 public:
  const char* name() const override { return "lstm_cell"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs_input_grad) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (dh, dc', dact, c, c', act) -> (d gates (B, 4H), dc (B, H)): LstmCell's backward, the gates'
// gradient serving both gi and gh. Not differentiable: under create_graph LstmCell::grad builds
// the same values from differentiable ops.
class LstmCellGrad final : public Primitive {
 public:
  const char* name() const override { return "lstm_cell_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
const LstmCell& lstm_cell();
const LstmCellGrad& lstm_cell_grad();
}  // namespace prim

namespace functional {
// One LSTM step's gate math from the two projections gi = x W_ih^T + b_ih and gh = h W_hh^T +
// b_hh: returns (h', c'). float32/float64 CPU operands run the fused kernel; others (CUDA,
// 16-bit floats) compose elementwise ops.
std::pair<Tensor, Tensor> lstm_cell(const Tensor& gi, const Tensor& gh, const Tensor& c);
}  // namespace functional

}  // namespace oneflow
