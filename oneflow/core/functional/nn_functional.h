// Functional ops of the convolution and pooling family (oneflow._C.conv2d, max_pool1d, ...):
// argument checks with PyTorch's messages and exception types, unbatched inputs, and the
// composition of the primitives in ops/nn_primitives.h.
//
// `op` is the name the user called ("conv2d"); `nsp` the number of spatial dims (1, 2 or 3).
// Per-dim arguments take one value (repeated for every dim) or `nsp` values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oneflow/core/common/attrs.h"
#include "oneflow/core/common/op_kinds.h"
#include "oneflow/core/framework/tensor.h"

namespace oneflow::functional {

using IntList = std::vector<int64_t>;

// padding_mode: "" uses `padding`; "valid" and "same" are PyTorch's padding strings.
// bias may be null.
Tensor conv(const char* op, int64_t nsp, const Tensor& x, const Tensor& weight, const Tensor& bias,
            const IntList& stride, const IntList& padding, const std::string& padding_mode,
            const IntList& dilation, int64_t groups);
Tensor conv_transpose(const char* op, int64_t nsp, const Tensor& x, const Tensor& weight,
                      const Tensor& bias, const IntList& stride, const IntList& padding,
                      const IntList& output_padding, int64_t groups, const IntList& dilation);

// Returns {y} or {y, indices}.
TensorList max_pool(const char* op, int64_t nsp, const Tensor& x, const IntList& kernel_size,
                    const IntList& stride, const IntList& padding, const IntList& dilation,
                    bool ceil_mode, bool return_indices);
Tensor avg_pool(const char* op, int64_t nsp, const Tensor& x, const IntList& kernel_size,
                const IntList& stride, const IntList& padding, bool ceil_mode,
                bool count_include_pad, std::optional<int64_t> divisor_override);
// output_size entries of -1 keep the input's size along that dim (Python's None).
Tensor adaptive_avg_pool(const char* op, int64_t nsp, const Tensor& x, const IntList& output_size);
TensorList adaptive_max_pool(const char* op, int64_t nsp, const Tensor& x,
                             const IntList& output_size, bool return_indices);

// F.pad for the last one to three dims with pads >= 0 (F.pad's order); `value` fills the
// constant mode's border.
Tensor border_pad(const Tensor& x, const IntList& pads, const std::string& mode, double value = 0);

// Interpolation along `dim` as a weighted gather of T taps per output position (see Resample in
// nn_primitives.h): index int64 (T, m) with values in [0, x.shape[dim]), weight float64 (T, m),
// both on the CPU; x a floating CPU tensor. resample_grad is its adjoint onto `size` positions.
Tensor resample(const Tensor& x, const Tensor& index, const Tensor& weight, int64_t dim);
Tensor resample_grad(const Tensor& dy, const Tensor& index, const Tensor& weight, int64_t dim,
                     int64_t size);

// F.mse_loss: reduction "mean" or "sum" of same-shaped float32/float64 CPU operands is one fused
// kernel (gradient one pass); the other cases compose sub, mul and the reduction.
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction);
// F.smooth_l1_loss (act kSmoothL1, p = beta > 0) and F.huber_loss (kHuber, p = delta): fused
// as mse_loss where it can, else the one-pass elementwise loss (activation_of_difference) and
// the reduction.
Tensor pointwise_loss(ActFn act, double p, const Tensor& input, const Tensor& target,
                      const std::string& reduction);

// The primitives behind them on prepared operands (batched; attrs as in nn_primitives.h), used
// by the gradient rules.
Tensor conv_forward_raw(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const Attrs& conv_attrs);
Tensor conv_backward_data(const Tensor& dy, const Tensor& weight, const Shape& input_shape,
                          const Attrs& conv_attrs);
Tensor conv_backward_weight(const Tensor& x, const Tensor& dy, const Shape& weight_shape,
                            const Attrs& conv_attrs);
Tensor max_pool_grad(const Tensor& dy, const Tensor& indices, const Shape& input_shape);
Tensor avg_pool_raw(const Tensor& x, const Attrs& pool_attrs);
Tensor avg_pool_grad(const Tensor& dy, const Shape& input_shape, const Attrs& pool_attrs);
Tensor adaptive_avg_pool_raw(const Tensor& x, const Shape& output_size);
Tensor adaptive_avg_pool_grad(const Tensor& dy, const Shape& input_shape);
Tensor border_pad_raw(const Tensor& x, const IntList& pads, int64_t mode, double value = 0);
Tensor pad_grad(const Tensor& dy, const Shape& input_shape, const IntList& pads, int64_t mode);
// F.nll_loss with reduction mean (mean = true) or sum of CPU float32/float64 log-probabilities
// and int64 class targets: one fused kernel; weight of C elements or null.
Tensor nll_loss(const Tensor& logp, const Tensor& target, const Tensor& weight,
                int64_t ignore_index, bool mean);
// cross_entropy of float32/float64 (N, C) or (C,) logits and int64 class indices with reduction
// mean or sum and label smoothing: nll_loss's kernel with log_softmax inside (one pass forward,
// one backward).
Tensor cross_entropy_indices(const Tensor& logits, const Tensor& target, const Tensor& weight,
                             int64_t ignore_index, bool mean, double label_smoothing);
// scale * dy * f'(a - b), dy a 0-dim tensor; attrs as PairLoss.
Tensor pair_loss_grad(const Tensor& dy, const Tensor& a, const Tensor& b, const Attrs& attrs);

}  // namespace oneflow::functional
