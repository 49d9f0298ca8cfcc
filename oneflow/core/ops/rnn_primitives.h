// The LSTM cell's gate math as one kernel: the recurrent layers (nn.LSTM, nn.LSTMCell) run it once
// per step after the two projections, where the composed form was ten elementwise ops over
// column slices of the gates (and about twenty more in backward).
#pragma once

#include <tuple>
#include <utility>

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// (gi (B, 4H), gh (B, 4H), c (B, H)) -> (h (B, H), c' (B, H)). The gates are gi + gh in
// PyTorch's order (input, forget, cell, output): sigmoid(i), sigmoid(f), tanh(g), sigmoid(o);
// c' = f c + i g and h = o tanh(c'). Contiguous float32/float64 operands of one dtype and
// device. Saves its inputs only: backward recomputes the gates.
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

// (dh, dc', gi, gh, c) -> (d gates (B, 4H), dc (B, H)): LstmCell's backward, the gates'
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

// A whole LSTM layer over a sequence in one kernel: (gi (T, B, 4H): the input's projection
// x W_ih^T + b_ih for every step, h0 (B, H), c0 (B, H), w_hh (4H, H), b_hh (4H)) -> (out (T, B,
// H): h after each step, cs (T, B, H): c after each step, act (T, B, 4H): the gates'
// activations). attrs: reverse (the steps from T - 1 down to 0, out and cs still indexed by
// step). Each step is one GEMM and the cell's gate math on the stream thread, without a
// dispatch per step.
class LstmLayer final : public Primitive {
 public:
  const char* name() const override { return "lstm_layer"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs_input_grad) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (d out, d cs, d act, h0, c0, w_hh, out, cs, act) -> (d gi (T, B, 4H), d h0, d c0, d w_hh,
// d b_hh): LstmLayer's backward, the steps in reverse, the recurrent weight's gradient as one
// GEMM over all steps. Not differentiable: under create_graph LstmLayer::grad composes
// differentiable ops.
class LstmLayerGrad final : public Primitive {
 public:
  const char* name() const override { return "lstm_layer_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// A whole GRU layer over a sequence in one kernel: (gi (T, B, 3H): x W_ih^T + b_ih for every
// step, h0 (B, H), w_hh (3H, H), b_hh (3H)) -> (out (T, B, H): h after each step, act (T, B, 4H):
// per step r, z, n and W_hn h + b_hn, the recurrent part of n's argument before the reset gate
// scales it). attrs: reverse. PyTorch's gates: r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z +
// gh_z), n = tanh(gi_n + r gh_n), h' = (1 - z) n + z h with gh = h W_hh^T + b_hh.
class GruLayer final : public Primitive {
 public:
  const char* name() const override { return "gru_layer"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs_input_grad) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (d out, d act, h0, w_hh, out, act) -> (d gi (T, B, 3H), d h0, d w_hh, d b_hh): GruLayer's
// backward. Not differentiable: under create_graph GruLayer::grad composes differentiable ops.
class GruLayerGrad final : public Primitive {
 public:
  const char* name() const override { return "gru_layer_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
const GruLayer& gru_layer();
const GruLayerGrad& gru_layer_grad();
const LstmCell& lstm_cell();
const LstmCellGrad& lstm_cell_grad();
const LstmLayer& lstm_layer();
const LstmLayerGrad& lstm_layer_grad();
}  // namespace prim

namespace functional {
// One LSTM step's gate math from the two projections gi = x W_ih^T + b_ih and gh = h W_hh^T +
// b_hh: returns (h', c'). float32/float64 CPU operands run the fused kernel; others (CUDA,
// 16-bit floats) compose elementwise ops.
std::pair<Tensor, Tensor> lstm_cell(const Tensor& gi, const Tensor& gh, const Tensor& c);
// One LSTM layer in one direction over a sequence from the input's projection gi (T, B, 4H)
// (bias included) and the initial state: returns (out (T, B, H), h_n, c_n). b_hh may be
// undefined. float32/float64 CPU operands run LstmLayer; others step through linear and
// lstm_cell.
std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& gi, const Tensor& h0, const Tensor& c0,
                                              const Tensor& w_hh, const Tensor& b_hh, bool reverse);
// One GRU layer in one direction from the input's projection gi (T, B, 3H) (bias included) and
// h0: returns (out (T, B, H), h_n). b_hh may be undefined. float32/float64 CPU operands run
// GruLayer; others compose elementwise ops per step.
std::pair<Tensor, Tensor> gru_layer(const Tensor& gi, const Tensor& h0, const Tensor& w_hh,
                                    const Tensor& b_hh, bool reverse);
}  // namespace functional

}  // namespace oneflow
