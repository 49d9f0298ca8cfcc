// The convolution and pooling primitives (kernels in kernels/cpu/onednn/conv.cpp and pool.cpp).
//
// One N-d family serves 1-D, 2-D and 3-D: inputs are [N, C, *spatial] with 1 to 3 spatial dims,
// contiguous (the functional layer makes them so), float32 or float64. Per-dim attributes
// (stride, padding, dilation, kernel) have one entry per spatial dim. Gradients are written with
// the functional ops of nn_functional.h, so they compose (conv's backward-data is the forward of
// conv_transpose and vice versa).
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

#define OF_NN_PRIMITIVE_KERNELS                                                              \
  void compute_cpu(const TensorList& inputs, const TensorList& outputs, const Attrs& attrs)  \
      const override;                                                                        \
  void compute_cuda(const TensorList& inputs, const TensorList& outputs, const Attrs& attrs) \
      const override;

// ---- convolution (kernels/cpu/onednn/conv.cpp) ------------------------------------------
// Shared conv attrs: stride, padding_l, padding_r, dilation (one per spatial dim), groups.

// conv(x [N, C, *in], w [O, C/groups, *k], optional bias [O]) -> [N, O, *out].
class ConvForward final : public Primitive {
 public:
  const char* name() const override { return "conv"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// The gradient of conv's input: (dy [N, O, *out], w) -> dx of attrs input_shape. Also the
// forward of conv_transpose.
class ConvBackwardData final : public Primitive {
 public:
  const char* name() const override { return "conv_backward_data"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// The gradient of conv's weight: (x, dy) -> dw of attrs weight_shape.
class ConvBackwardWeight final : public Primitive {
 public:
  const char* name() const override { return "conv_backward_weight"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// ---- pooling (kernels/cpu/onednn/pool.cpp) -----------------------------------------------
// Shared pool attrs: kernel, stride, padding, dilation (one per spatial dim), ceil_mode.

// max_pool(x) -> y, and with attrs with_indices also the int64 indices of the maxima (flat
// within each input plane, PyTorch's convention). Without indices it is not differentiable
// (the functional layer asks for indices whenever a gradient may be needed).
class MaxPool final : public Primitive {
 public:
  const char* name() const override { return "max_pool"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// The gradient of the max pools: (dy, indices) -> dx of attrs input_shape, dy scattered (added)
// to the positions the indices name within each plane. Its own gradient (for create_graph) is a
// gather of the incoming gradient at the same indices.
class MaxPoolGrad final : public Primitive {
 public:
  const char* name() const override { return "max_pool_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// avg_pool(x); attrs (besides the shared ones) count_include_pad, divisor_override (0: none).
// dilation is all ones.
class AvgPool final : public Primitive {
 public:
  const char* name() const override { return "avg_pool"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// The gradient of avg_pool: dy -> dx of attrs input_shape (AvgPool's attrs otherwise).
class AvgPoolGrad final : public Primitive {
 public:
  const char* name() const override { return "avg_pool_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// Adaptive pools: attrs output_size (one per spatial dim). Window o of a dim of size I spans
// [floor(o * I / O), ceil((o + 1) * I / O)).
class AdaptiveAvgPool final : public Primitive {
 public:
  const char* name() const override { return "adaptive_avg_pool"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// dy -> dx of attrs input_shape.
class AdaptiveAvgPoolGrad final : public Primitive {
 public:
  const char* name() const override { return "adaptive_avg_pool_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// x -> (y, int64 indices); the gradient is MaxPoolGrad.
class AdaptiveMaxPool final : public Primitive {
 public:
  const char* name() const override { return "adaptive_max_pool"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// Padding of the last one to three dims (F.pad constant / reflect / replicate / circular):
// attrs pads (F.pad's order, all >= 0), mode (PadMode in kernels/common/pad.h) and value (the
// constant mode's fill).
class Pad final : public Primitive {
 public:
  const char* name() const override { return "pad"; }
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// dy -> dx of attrs input_shape: each dx element sums the dy elements that read it.
class PadGrad final : public Primitive {
 public:
  const char* name() const override { return "pad_grad"; }
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// scale * sum(f(a - b)) of two same-shaped contiguous float tensors, a 0-dim tensor: the pointwise
// losses with reduction mean (scale 1 / numel) or sum (scale 1) in one pass. attrs act: -1 for
// f(d) = d^2 (mse_loss), else an ActFn of OF_DIFF_ACTIVATION_FNS with parameter p (smooth_l1's
// beta, huber's delta). CPU kernel only: on CUDA the functional layer composes the elementwise
// loss and the reduction instead.
class PairLoss final : public Primitive {
 public:
  const char* name() const override { return "pair_loss"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// (dy, a, b) -> scale * dy * f'(a - b): PairLoss's input gradient in one pass (attrs as PairLoss).
class PairLossGrad final : public Primitive {
 public:
  const char* name() const override { return "pair_loss_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// nll_loss(logp, target, weight) with reduction mean (attrs mean = true) or sum: logp a
// contiguous float (N, C, *) or (C,) tensor, target int64 class indices of shape (N, *) or (),
// weight (C); targets equal to attrs ignore_index are skipped. -> loss (0-dim) and the total
// weight of the counted targets (0-dim). An out-of-range target raises IndexError naming
// nll_loss. CPU kernel only (the functional layer composes for other devices).
// With attrs logits = true (cross_entropy) the input is the logits of a (N, C) or (C,) tensor
// and log_softmax happens inside: a third output holds each row's max and log of its sum of
// exp(x - max) ((N, 2), saved), from which the gradient recomputes softmax in one pass.
class NllLoss final : public Primitive {
 public:
  const char* name() const override { return "nll_loss"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// (dy, target, weight, total_weight) -> dlogp of attrs input_shape: -weight[t] * dy (divided by
// the total weight for the mean) at each counted target's class, zero elsewhere. With logits,
// (dy, target, weight, total_weight, logits, row stats) -> dlogits = weight[t] * dy (/ total)
// * (softmax - one_hot(t)) for each counted row, zero for the ignored ones; with attrs
// label_smoothing e, g ((1 - e) w[t] + e W / C) softmax - g e / C w - g (1 - e) w[t] one_hot(t)
// (g = dy / total, W = sum(w)).
class NllLossGrad final : public Primitive {
 public:
  const char* name() const override { return "nll_loss_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_NN_PRIMITIVE_KERNELS
};

// ---- resampling (kernels/cpu/resample.cpp) ------------------------------------------------
// Interpolation along one dim (F.interpolate's linear, bilinear, bicubic and trilinear modes,
// one dim at a time): a weighted gather of T taps per output position,
//   y[..., j, ...] = sum_t weight[t, j] * x[..., index[t, j], ...].
// Inputs x (a contiguous floating tensor), index (int64, shape (T, m), values in
// [0, x.shape[dim])) and weight (float64, (T, m)), the last two on the CPU; attrs dim. The
// output has x's shape with m at dim. Accumulates in x's compute type (float for 16-bit floats).
// CPU kernel only: for other devices F.interpolate composes index and multiply-add.
class Resample final : public Primitive {
 public:
  const char* name() const override { return "resample"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs_input_grad) const override {
    return i != 0;  // the gradient needs the taps, not x
  }
  OF_NN_PRIMITIVE_KERNELS
};

// (dy, index, weight) -> dx of attrs size at dim (besides dim): Resample's adjoint, each dx
// element the weighted sum of the dy elements that read it.
class ResampleGrad final : public Primitive {
 public:
  const char* name() const override { return "resample_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs_input_grad) const override {
    return i != 0;
  }
  OF_NN_PRIMITIVE_KERNELS
};

#undef OF_NN_PRIMITIVE_KERNELS

// Output length of a conv along one dim (may be <= 0 for a kernel larger than the padded input).
inline int64_t conv_output_size(int64_t in, int64_t k, int64_t stride, int64_t pad_l, int64_t pad_r,
                                int64_t dilation) {
  const int64_t span = in + pad_l + pad_r - dilation * (k - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// Output length of a pool along one dim, PyTorch's rule: with ceil_mode the last window must
// start inside the input or the left padding.
inline int64_t pool_output_size(int64_t in, int64_t k, int64_t stride, int64_t pad,
                                int64_t dilation, bool ceil_mode) {
  // In 128 bits: with huge kernel sizes, dilations or paddings the int64 arithmetic wrapped
  // around into a bogus size, and the kernel then ran (practically) forever.
  using I = __int128;
  const I span = I(in) + 2 * I(pad) - I(dilation) * (I(k) - 1) - 1;
  I out = (span + (ceil_mode ? I(stride) - 1 : 0)) / stride + 1;
  if (span + (ceil_mode ? I(stride) - 1 : 0) < 0) out = 0;
  if (ceil_mode && out > 0 && (out - 1) * stride >= I(in) + pad) --out;
  // A size past int64 is refused when the output is allocated.
  return out > I(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(out);
}

namespace prim {
const ConvForward& conv_forward();
const ConvBackwardData& conv_backward_data();
const ConvBackwardWeight& conv_backward_weight();
const MaxPool& max_pool();
const MaxPoolGrad& max_pool_grad();
const AvgPool& avg_pool();
const AvgPoolGrad& avg_pool_grad();
const AdaptiveAvgPool& adaptive_avg_pool();
const AdaptiveAvgPoolGrad& adaptive_avg_pool_grad();
const AdaptiveMaxPool& adaptive_max_pool();
const Pad& pad();
const PadGrad& pad_grad();
const PairLoss& pair_loss();
const PairLossGrad& pair_loss_grad();
const NllLoss& nll_loss();
const NllLossGrad& nll_loss_grad();
const Resample& resample();
const ResampleGrad& resample_grad();
}  // namespace prim

}  // namespace oneflow
