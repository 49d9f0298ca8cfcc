// The convolution and pooling functional ops declared in nn_functional.h. Checks follow
// PyTorch's order and messages (RuntimeError), so user code sees the same errors.
#include "oneflow/core/functional/nn_functional.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/functional/autocast.h"

#include <algorithm>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/kernels/common/pad.h"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow::functional {

namespace {

std::string join(const IntList& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

// One value per spatial dim: a single value is repeated.
IntList per_dim(const char* op, const char* what, const IntList& v, int64_t nsp) {
  if (v.size() == 1) return IntList(nsp, v[0]);
  if (static_cast<int64_t>(v.size()) != nsp)
    throw_error<RuntimeError>(op, "expected ", what, " to be a single integer value or a list of ",
                              nsp, " values to match the convolution dimensions, but got ", what,
                              "=[", join(v, ", "), "]");
  return v;
}

// NotImplementedError (a RuntimeError), as PyTorch's "not implemented for 'Long'". `also` is an
// extra dtype the kernel takes (PyTorch's CPU convolution and pooling compute integers too).
void check_floating(const char* op, const Tensor& x, const char* what,
                    bool (*also)(DType) = nullptr) {
  if (also && also(x->dtype())) return;
  if (x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64)
    throw_error<NotImplementedError>(
        op, "expected ", what,
        " of dtype float32 or float64 (other dtypes are not implemented "
        "yet), got ",
        dtype_name(x->dtype()));
}

// Accepts batched [N, C, *sp] or unbatched [C, *sp] input; returns the batched one and whether
// a batch dim was added.
std::pair<Tensor, bool> batched(const char* op, const Tensor& x, int64_t nsp, bool is_conv) {
  if (x->ndim() == nsp + 2) return {contiguous(x), false};
  if (x->ndim() == nsp + 1) return {contiguous(unsqueeze(x, 0)), true};
  if (is_conv)
    throw_error<RuntimeError>(op, "Expected ", nsp + 1, "D (unbatched) or ", nsp + 2,
                              "D (batched) input to ", op,
                              ", but got input of size: ", shape_str(x->shape()));
  throw_error<RuntimeError>(op, "Expected ", nsp + 1, "D or ", nsp + 2,
                            "D (batch mode) tensor with optional 0 dim batch size for input, "
                            "but got: ",
                            shape_str(x->shape()));
}

Tensor unbatched(const Tensor& y, bool added) { return added ? squeeze(y, {0}) : y; }

Attrs conv_attrs(const IntList& stride, const IntList& pl, const IntList& pr,
                 const IntList& dilation, int64_t groups) {
  return Attrs{{"stride", stride},
               {"padding_l", pl},
               {"padding_r", pr},
               {"dilation", dilation},
               {"groups", groups}};
}

void check_conv_params(const char* op, const IntList& stride, const IntList& padding,
                       const IntList& dilation, int64_t groups) {
  for (int64_t s : stride)
    if (s <= 0) throw_error<RuntimeError>(op, "non-positive stride is not supported");
  for (int64_t p : padding)
    if (p < 0) throw_error<RuntimeError>(op, "negative padding is not supported");
  for (int64_t d : dilation)
    if (d <= 0)
      throw_error<RuntimeError>(op, "dilation should be greater than zero, but got [",
                                join(dilation, ", "), "]");
  if (groups <= 0) throw_error<RuntimeError>(op, "non-positive groups is not supported");
}

void check_bias(const char* op, const Tensor& x, const Tensor& w, const Tensor& bias,
                int64_t channels) {
  if (!bias) return;
  if (bias->ndim() != 1 || bias->shape()[0] != channels)
    throw_error<RuntimeError>(op, "Given weight of size ", shape_str(w->shape()),
                              ", expected bias to be 1-dimensional with ", channels,
                              " elements, but got bias of size ", shape_str(bias->shape()),
                              " instead");
  if (bias->dtype() != x->dtype())
    throw_error<RuntimeError>(op, "Input type (", dtype_name(x->dtype()), ") and bias type (",
                              dtype_name(bias->dtype()), ") should be the same");
}

}  // namespace

// ---- convolution ----

Tensor conv_forward_raw(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const Attrs& attrs) {
  TensorList in{contiguous(x), contiguous(weight)};
  if (bias) in.push_back(contiguous(bias));
  return dispatch1(prim::conv_forward(), in, attrs);
}

Tensor conv_backward_data(const Tensor& dy, const Tensor& weight, const Shape& input_shape,
                          const Attrs& attrs) {
  Attrs a = attrs;
  a.set("input_shape", input_shape);
  return dispatch1(prim::conv_backward_data(), {contiguous(dy), contiguous(weight)}, a);
}

Tensor conv_backward_weight(const Tensor& x, const Tensor& dy, const Shape& weight_shape,
                            const Attrs& attrs) {
  Attrs a = attrs;
  a.set("weight_shape", weight_shape);
  return dispatch1(prim::conv_backward_weight(), {contiguous(x), contiguous(dy)}, a);
}

Tensor conv(const char* op, int64_t nsp, const Tensor& x_lo, const Tensor& w_lo,
            const Tensor& bias_lo, const IntList& stride_in, const IntList& padding_in,
            const std::string& padding_mode, const IntList& dilation_in, int64_t groups) {
  std::optional<DType> lo = autocast::lower_dtype(x_lo);
  if (!lo) lo = autocast::lower_dtype(w_lo);
  if (lo) {
    // The CPU convolution computes in float32: the operands rounded to the autocast dtype (as
    // its casts do), the product in float32, the result in the autocast dtype.
    autocast::Suspend off;
    auto rounded = [&](const Tensor& t) {
      return t ? to(to(t, *lo, std::nullopt), DType::kFloat32, std::nullopt) : t;
    };
    return to(conv(op, nsp, rounded(x_lo), rounded(w_lo), rounded(bias_lo), stride_in, padding_in,
                   padding_mode, dilation_in, groups),
              *lo, std::nullopt);
  }
  const Tensor &x_in = x_lo, &w = w_lo, &bias = bias_lo;
  auto [x, added] = batched(op, x_in, nsp, true);
  check_floating(op, x, "input", [](DType dt) { return is_integral(dt, false); });
  const IntList stride = per_dim(op, "stride", stride_in, nsp);
  const IntList dilation = per_dim(op, "dilation", dilation_in, nsp);
  IntList pl(nsp, 0), pr(nsp, 0);
  if (padding_mode.empty()) {
    pl = pr = per_dim(op, "padding", padding_in, nsp);
  } else if (padding_mode != "valid" && padding_mode != "same") {
    throw_error<RuntimeError>(op, "Invalid padding string: '", padding_mode, "'");
  }
  check_conv_params(op, stride, pl, dilation, groups);
  if (w->ndim() != nsp + 2)
    throw_error<RuntimeError>(op, "expected weight to be ", nsp + 2, "-D, got weight of size ",
                              shape_str(w->shape()));
  if (w->dtype() != x->dtype())
    throw_error<RuntimeError>(op, "Input type (", dtype_name(x->dtype()), ") and weight type (",
                              dtype_name(w->dtype()), ") should be the same");
  if (w->shape()[0] % groups != 0)
    throw_error<RuntimeError>(op, "Given groups=", groups, ", expected weight to be divisible by ",
                              groups, " at dimension 0, but got weight of size ",
                              shape_str(w->shape()), " instead");
  if (x->shape()[1] != w->shape()[1] * groups)
    throw_error<RuntimeError>(op, "Given groups=", groups, ", weight of size ",
                              shape_str(w->shape()), ", expected input", shape_str(x->shape()),
                              " to have ", w->shape()[1] * groups, " channels, but got ",
                              x->shape()[1], " channels instead");
  check_bias(op, x, w, bias, w->shape()[0]);
  if (padding_mode == "same") {
    for (int64_t s : stride)
      if (s != 1)
        throw_error<RuntimeError>(op, "padding='same' is not supported for strided convolutions");
    for (int64_t i = 0; i < nsp; ++i) {
      const int64_t total = dilation[i] * (w->shape()[i + 2] - 1);
      pl[i] = total / 2;
      pr[i] = total - pl[i];
    }
  }
  IntList padded, kernel;
  bool too_big = false;
  for (int64_t i = 0; i < nsp; ++i) {
    padded.push_back(x->shape()[i + 2] + pl[i] + pr[i]);
    kernel.push_back(dilation[i] * (w->shape()[i + 2] - 1) + 1);
    too_big = too_big || kernel.back() > padded.back();
  }
  if (too_big)
    throw_error<RuntimeError>(op, "Calculated padded input size per channel: (",
                              join(padded, " x "), "). Kernel size: (", join(kernel, " x "),
                              "). Kernel size can't be greater than actual input size");
  Tensor y = conv_forward_raw(x, w, bias, conv_attrs(stride, pl, pr, dilation, groups));
  return unbatched(y, added);
}

Tensor conv_transpose(const char* op, int64_t nsp, const Tensor& x_in, const Tensor& w,
                      const Tensor& bias, const IntList& stride_in, const IntList& padding_in,
                      const IntList& output_padding_in, int64_t groups,
                      const IntList& dilation_in) {
  std::optional<DType> lo = autocast::lower_dtype(x_in);
  if (!lo) lo = autocast::lower_dtype(w);
  if (lo) {  // as conv's: operands rounded to the autocast dtype, computed in float32
    autocast::Suspend off;
    auto rounded = [&](const Tensor& t) {
      return t ? to(to(t, *lo, std::nullopt), DType::kFloat32, std::nullopt) : t;
    };
    return to(conv_transpose(op, nsp, rounded(x_in), rounded(w), rounded(bias), stride_in,
                             padding_in, output_padding_in, groups, dilation_in),
              *lo, std::nullopt);
  }
  auto [x, added] = batched(op, x_in, nsp, true);
  check_floating(op, x, "input", [](DType dt) { return dt == DType::kInt64; });
  const IntList stride = per_dim(op, "stride", stride_in, nsp);
  const IntList padding = per_dim(op, "padding", padding_in, nsp);
  const IntList out_pad = per_dim(op, "output_padding", output_padding_in, nsp);
  const IntList dilation = per_dim(op, "dilation", dilation_in, nsp);
  check_conv_params(op, stride, padding, dilation, groups);
  for (int64_t p : out_pad)
    if (p < 0) throw_error<RuntimeError>(op, "negative output_padding is not supported");
  if (w->ndim() != nsp + 2)
    throw_error<RuntimeError>(op, "expected weight to be ", nsp + 2, "-D, got weight of size ",
                              shape_str(w->shape()));
  if (w->dtype() != x->dtype())
    throw_error<RuntimeError>(op, "Input type (", dtype_name(x->dtype()), ") and weight type (",
                              dtype_name(w->dtype()), ") should be the same");
  if (w->shape()[0] % groups != 0)
    throw_error<RuntimeError>(op, "Given groups=", groups, ", expected weight to be divisible by ",
                              groups, " at dimension 0, but got weight of size ",
                              shape_str(w->shape()), " instead");
  if (x->shape()[1] != w->shape()[0])
    throw_error<RuntimeError>(op, "Given transposed=1, weight of size ", shape_str(w->shape()),
                              ", expected input", shape_str(x->shape()), " to have ", w->shape()[0],
                              " channels, but got ", x->shape()[1], " channels instead");
  check_bias(op, x, w, bias, w->shape()[1] * groups);
  for (int64_t i = 0; i < nsp; ++i)
    if (out_pad[i] >= stride[i] && out_pad[i] >= dilation[i])
      throw_error<RuntimeError>(op,
                                "output padding must be smaller than either stride or "
                                "dilation, but got output_padding=[",
                                join(out_pad, ", "), "] stride=[", join(stride, ", "),
                                "] dilation=[", join(dilation, ", "), "]");
  Shape out_shape{x->shape()[0], w->shape()[1] * groups};
  IntList in_sizes, out_sizes, pr(nsp);
  bool too_small = false;
  for (int64_t i = 0; i < nsp; ++i) {
    const int64_t len = (x->shape()[i + 2] - 1) * stride[i] - 2 * padding[i] +
                        dilation[i] * (w->shape()[i + 2] - 1) + out_pad[i] + 1;
    out_shape.push_back(len);
    in_sizes.push_back(x->shape()[i + 2]);
    out_sizes.push_back(len);
    too_small = too_small || len <= 0;
    // The right padding that makes conv map out_shape back onto x's shape exactly.
    pr[i] = padding[i] - out_pad[i];
  }
  if (too_small)
    throw_error<RuntimeError>(op, "Given input size per channel: (", join(in_sizes, " x "),
                              "). Calculated output size per channel: (", join(out_sizes, " x "),
                              "). Output size is too small");
  Tensor y = conv_backward_data(x, w, out_shape, conv_attrs(stride, padding, pr, dilation, groups));
  if (bias) {
    Shape bshape(nsp + 2, 1);
    bshape[1] = bias->shape()[0];
    y = add(y, reshape(bias, bshape));
  }
  return unbatched(y, added);
}

// ---- pooling ----

namespace {

struct PoolArgs {
  IntList kernel, stride, padding, dilation;
};

PoolArgs pool_args(const char* op, int64_t nsp, const Tensor& x, const IntList& kernel_in,
                   const IntList& stride_in, const IntList& padding_in, const IntList& dilation_in,
                   bool ceil_mode) {
  auto list = [&](const char* what, const IntList& v) {
    if (v.size() == 1) return IntList(nsp, v[0]);
    if (static_cast<int64_t>(v.size()) != nsp)
      throw_error<RuntimeError>(op, what, " must either be a single int, or a tuple of ", nsp,
                                " ints");
    return v;
  };
  PoolArgs a;
  a.kernel = list("kernel_size", kernel_in);
  a.stride = stride_in.empty() ? a.kernel : list("stride", stride_in);
  a.padding = list("padding", padding_in);
  a.dilation = list("dilation", dilation_in);
  for (int64_t k : a.kernel)
    if (k <= 0)
      throw_error<RuntimeError>(op, "kernel_size must be greater than zero, but got [",
                                join(a.kernel, ", "), "]");
  for (int64_t s : a.stride)
    if (s <= 0)
      throw_error<RuntimeError>(op, "stride should be greater than zero, but got [",
                                join(a.stride, ", "), "]");
  for (int64_t d : a.dilation)
    if (d <= 0)
      throw_error<RuntimeError>(op, "dilation should be greater than zero, but got [",
                                join(a.dilation, ", "), "]");
  for (int64_t i = 0; i < nsp; ++i) {
    if (a.padding[i] < 0) throw_error<RuntimeError>(op, "pad must be non-negative");
    if (a.padding[i] > a.kernel[i] / 2)  // PyTorch bounds by the kernel, not the dilated span
      throw_error<RuntimeError>(op, "pad should be at most half of kernel size, but got pad=",
                                a.padding[i], " and kernel_size=", a.kernel[i]);
  }
  for (int64_t d = 1; d < x->ndim(); ++d)
    if (x->shape()[d] == 0)
      throw_error<RuntimeError>(op,
                                "Expected input's non-batch dimensions to have positive "
                                "length, but input has a shape of ",
                                shape_str(x->shape()));
  IntList in_sizes{x->shape()[1]}, out_sizes{x->shape()[1]};
  bool too_small = false;
  for (int64_t i = 0; i < nsp; ++i) {
    in_sizes.push_back(x->shape()[i + 2]);
    out_sizes.push_back(pool_output_size(x->shape()[i + 2], a.kernel[i], a.stride[i], a.padding[i],
                                         a.dilation[i], ceil_mode));
    too_small = too_small || out_sizes.back() < 1;
  }
  if (too_small)
    throw_error<RuntimeError>(op, "Given input size: (", join(in_sizes, "x"),
                              "). Calculated output size: (", join(out_sizes, "x"),
                              "). Output size is too small");
  return a;
}

}  // namespace

TensorList max_pool(const char* op, int64_t nsp, const Tensor& x_in, const IntList& kernel_size,
                    const IntList& stride, const IntList& padding, const IntList& dilation,
                    bool ceil_mode, bool return_indices) {
  auto [x, added] = batched(op, x_in, nsp, false);
  // PyTorch's CPU max_pool2d/3d take integers, max_pool1d does not.
  check_floating(op, x, "input",
                 nsp >= 2 ? +[](DType dt) { return is_integral(dt, false); } : nullptr);
  PoolArgs a = pool_args(op, nsp, x, kernel_size, stride, padding, dilation, ceil_mode);
  // Indices are needed for the gradient; without them the faster inference kernel runs.
  const bool with_indices = return_indices || (grad_mode_enabled() && x->requires_grad());
  TensorList out = dispatch(prim::max_pool(), {x},
                            Attrs{{"kernel", a.kernel},
                                  {"stride", a.stride},
                                  {"padding", a.padding},
                                  {"dilation", a.dilation},
                                  {"ceil_mode", ceil_mode},
                                  {"with_indices", with_indices}});
  if (!return_indices) out.resize(1);
  for (Tensor& t : out) t = unbatched(t, added);
  return out;
}

Tensor max_pool_grad(const Tensor& dy, const Tensor& indices, const Shape& input_shape) {
  return dispatch1(prim::max_pool_grad(), {contiguous(dy), contiguous(indices)},
                   Attrs{{"input_shape", input_shape}});
}

Tensor avg_pool_raw(const Tensor& x, const Attrs& attrs) {
  return dispatch1(prim::avg_pool(), {contiguous(x)}, attrs);
}

Tensor avg_pool_grad(const Tensor& dy, const Shape& input_shape, const Attrs& attrs) {
  Attrs a = attrs;
  a.set("input_shape", input_shape);
  return dispatch1(prim::avg_pool_grad(), {contiguous(dy)}, a);
}

Tensor avg_pool(const char* op, int64_t nsp, const Tensor& x_in, const IntList& kernel_size,
                const IntList& stride, const IntList& padding, bool ceil_mode,
                bool count_include_pad, std::optional<int64_t> divisor_override) {
  auto [x, added] = batched(op, x_in, nsp, false);
  check_floating(op, x, "input", [](DType dt) { return dt == DType::kInt64; });  // as PyTorch
  PoolArgs a = pool_args(op, nsp, x, kernel_size, stride, padding, IntList{1}, ceil_mode);
  if (divisor_override && *divisor_override == 0)
    throw_error<RuntimeError>(op, "divisor must be not zero");
  Tensor y = avg_pool_raw(x, Attrs{{"kernel", a.kernel},
                                   {"stride", a.stride},
                                   {"padding", a.padding},
                                   {"dilation", a.dilation},
                                   {"ceil_mode", ceil_mode},
                                   {"count_include_pad", count_include_pad},
                                   {"divisor_override", divisor_override.value_or(0)}});
  return unbatched(y, added);
}

namespace {
IntList adaptive_sizes(const char* op, int64_t nsp, const Tensor& x, const IntList& output_size) {
  if (static_cast<int64_t>(output_size.size()) != nsp && output_size.size() != 1)
    throw_error<RuntimeError>(op, "output_size must be ", nsp, "-dimensional, got [",
                              join(output_size, ", "), "]");
  IntList out = output_size.size() == 1 ? IntList(nsp, output_size[0]) : output_size;
  for (int64_t i = 0; i < nsp; ++i) {
    if (out[i] == -1) out[i] = x->shape()[i + 2];
    if (out[i] < 0)
      throw_error<RuntimeError>(op,
                                "elements of output_size must be greater than or equal to 0 "
                                "but received [",
                                join(output_size, ", "), "]");
  }
  for (int64_t d = 1; d < x->ndim(); ++d)
    if (x->shape()[d] == 0)
      throw_error<RuntimeError>(op,
                                "Expected input to have non-zero size for non-batch "
                                "dimensions, but input has sizes ",
                                shape_str(x->shape()));
  return out;
}
}  // namespace

Tensor adaptive_avg_pool_raw(const Tensor& x, const Shape& output_size) {
  return dispatch1(prim::adaptive_avg_pool(), {contiguous(x)}, Attrs{{"output_size", output_size}});
}

Tensor adaptive_avg_pool_grad(const Tensor& dy, const Shape& input_shape) {
  return dispatch1(prim::adaptive_avg_pool_grad(), {contiguous(dy)},
                   Attrs{{"input_shape", input_shape}});
}

Tensor adaptive_avg_pool(const char* op, int64_t nsp, const Tensor& x_in,
                         const IntList& output_size) {
  auto [x, added] = batched(op, x_in, nsp, false);
  check_floating(op, x, "input");
  return unbatched(adaptive_avg_pool_raw(x, adaptive_sizes(op, nsp, x, output_size)), added);
}

TensorList adaptive_max_pool(const char* op, int64_t nsp, const Tensor& x_in,
                             const IntList& output_size, bool return_indices) {
  auto [x, added] = batched(op, x_in, nsp, false);
  check_floating(op, x, "input");
  TensorList out = dispatch(prim::adaptive_max_pool(), {x},
                            Attrs{{"output_size", adaptive_sizes(op, nsp, x, output_size)}});
  if (!return_indices) out.resize(1);
  for (Tensor& t : out) t = unbatched(t, added);
  return out;
}

Tensor border_pad_raw(const Tensor& x, const IntList& pads, int64_t mode, double value) {
  return dispatch1(prim::pad(), {contiguous(x)},
                   Attrs{{"pads", pads}, {"mode", mode}, {"value", value}});
}

Tensor pad_grad(const Tensor& dy, const Shape& input_shape, const IntList& pads, int64_t mode) {
  const bool grows = std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p >= 0; });
  if (static_cast<PadMode>(mode) == PadMode::kConstant && grows) {
    // The gradient of a constant pad is the crop of dy: one copy of the input's size through a
    // view, which also reads a broadcast dy (sum's gradient) without materialising it.
    Tensor t = dy;
    const int64_t nd = static_cast<int64_t>(input_shape.size());
    for (size_t j = 0; 2 * j < pads.size(); ++j) {
      const int64_t d = nd - 1 - static_cast<int64_t>(j);
      t = narrow(t, d, pads[2 * j], input_shape[d]);
    }
    return contiguous(t);
  }
  return dispatch1(prim::pad_grad(), {contiguous(dy)},
                   Attrs{{"input_shape", input_shape}, {"pads", pads}, {"mode", mode}});
}

namespace {
// The fused PairLoss applies: a reduction of same-shaped float32/float64 CPU operands.
bool pair_loss_fuses(const Tensor& input, const Tensor& target, const std::string& reduction) {
  const DType dt = input->dtype();
  return reduction != "none" && input->shape() == target->shape() && target->dtype() == dt &&
         (dt == DType::kFloat32 || dt == DType::kFloat64) &&
         input->device().type == DeviceType::kCPU && target->device().type == DeviceType::kCPU;
}
Tensor pair_loss(const Tensor& input, const Tensor& target, int64_t act, double p,
                 const std::string& reduction) {
  const double n = static_cast<double>(input->numel());
  return dispatch1(prim::pair_loss(), {contiguous(input), contiguous(target)},
                   Attrs{{"scale", reduction == "mean" ? 1.0 / n : 1.0}, {"act", act}, {"p", p}});
}
void check_reduction(const char* op, const std::string& reduction) {
  if (reduction != "none" && reduction != "mean" && reduction != "sum")
    throw_error<ValueError>(op, reduction, " is not a valid value for reduction");
}
}  // namespace

Tensor mse_loss(const Tensor& input_lo, const Tensor& target_lo, const std::string& reduction) {
  const Tensor input = autocast::to_float(input_lo), target = autocast::to_float(target_lo);
  check_reduction("mse_loss", reduction);
  if (pair_loss_fuses(input, target, reduction))
    return pair_loss(input, target, -1, 0.0, reduction);
  const Tensor d = sub(input, target);
  const Tensor sq = mul(d, d);
  if (reduction == "none") return sq;
  return reduction == "mean" ? mean(sq) : sum(sq);
}

Tensor pointwise_loss(ActFn act, double p, const Tensor& input_lo, const Tensor& target_lo,
                      const std::string& reduction) {
  const Tensor input = autocast::to_float(input_lo), target = autocast::to_float(target_lo);
  check_reduction(fn_name(act), reduction);
  if (pair_loss_fuses(input, target, reduction))
    return pair_loss(input, target, static_cast<int64_t>(act), p, reduction);
  const Tensor l = activation_of_difference(act, input, target, p);
  if (reduction == "none") return l;
  return reduction == "mean" ? mean(l) : sum(l);
}

namespace {
// NllLoss's kernel on log-probabilities, or on logits with log_softmax inside.
Tensor nll_kernel(const Tensor& x_lo, const Tensor& target, const Tensor& weight_lo,
                  int64_t ignore_index, bool mean, bool logits, double label_smoothing = 0.0) {
  const Tensor x = autocast::to_float(x_lo), weight = autocast::to_float(weight_lo);
  const int64_t c = x->ndim() == 1 ? x->shape()[0] : x->ndim() > 1 ? x->shape()[1] : 0;
  Tensor w =
      weight ? contiguous(weight)
             : global::broadcast_like(x, ones({c}, CreationOptions{x->dtype(), x->device(), ""}));
  Attrs attrs{{"ignore_index", ignore_index}, {"mean", mean}, {"logits", logits}};
  if (label_smoothing != 0) attrs.set("label_smoothing", label_smoothing);
  if (mean && x->global() && target->global() && x->ndim() >= 1 &&
      x->global()->sbp == Sbp::split(0) && target->global()->sbp == Sbp::split(0) && w->global() &&
      w->global()->sbp.kind == Sbp::kBroadcast) {
    // Rows split along the batch: each rank sums its rows' losses and weights; the pair is
    // all-reduced at once (adding 0 to partial sums makes the dispatcher sum them), then
    // divided: one small all-reduce where the whole batch's logits would be gathered.
    attrs.set("mean", false);
    const TensorList parts =
        dispatch(prim::nll_loss(), {contiguous(x), contiguous(target), w}, attrs);
    Tensor pair =
        add(cat({unsqueeze(parts[0], 0), unsqueeze(parts[1], 0)}, 0), Scalar::from_int(0));
    return div(select(pair, 0, 0), select(pair, 0, 1));
  }
  return dispatch(prim::nll_loss(), {contiguous(x), contiguous(target), w}, attrs)[0];
}
}  // namespace

Tensor nll_loss(const Tensor& logp, const Tensor& target, const Tensor& weight,
                int64_t ignore_index, bool mean) {
  return nll_kernel(logp, target, weight, ignore_index, mean, false);
}

Tensor cross_entropy_indices(const Tensor& logits, const Tensor& target, const Tensor& weight,
                             int64_t ignore_index, bool mean, double label_smoothing) {
  return nll_kernel(logits, target, weight, ignore_index, mean, true, label_smoothing);
}

Tensor pair_loss_grad(const Tensor& dy, const Tensor& a, const Tensor& b, const Attrs& attrs) {
  return dispatch1(prim::pair_loss_grad(), {contiguous(dy), a, b}, attrs);
}

namespace {
// Checks resample's taps against the (wrapped) dim of x, of n positions.
void check_taps(const char* op, const Tensor& x, const Tensor& index, const Tensor& weight,
                int64_t dim, int64_t n) {
  if (!is_floating(x->dtype()))
    throw_error<TypeError>(op, "expected a floating point input, got ", dtype_name(x->dtype()));
  if (index->dtype() != DType::kInt64 || weight->dtype() != DType::kFloat64 || index->ndim() != 2 ||
      index->shape() != weight->shape())
    throw_error<RuntimeError>(op, "expected int64 indices and float64 weights of one (taps, ",
                              "size) shape, got ", dtype_name(index->dtype()), " ",
                              shape_str(index->shape()), " and ", dtype_name(weight->dtype()), " ",
                              shape_str(weight->shape()));
  if (index->device().type != DeviceType::kCPU || weight->device().type != DeviceType::kCPU)
    throw_error<RuntimeError>(op, "expected the indices and weights on the CPU");
  // (a global table's shard is all of it; a process its placement leaves out checks nothing)
  const Tensor idx = contiguous(index->global() ? global::local_of(index) : index);
  if (idx->device().type == DeviceType::kMeta) return;
  const int64_t* p = idx->read_as<int64_t>();
  for (int64_t i = 0; i < idx->numel(); ++i)
    if (p[i] < 0 || p[i] >= n)
      throw_error<IndexError>(op, "index ", p[i], " is out of bounds for dimension ", dim,
                              " with size ", n);
}
}  // namespace

Tensor resample(const Tensor& x, const Tensor& index, const Tensor& weight, int64_t dim) {
  dim = wrap_dim("resample", dim, x->ndim());
  check_taps("resample", x, index, weight, dim, x->shape()[dim]);
  return dispatch1(prim::resample(), {contiguous(x), contiguous(index), contiguous(weight)},
                   Attrs{{"dim", dim}});
}

Tensor resample_grad(const Tensor& dy, const Tensor& index, const Tensor& weight, int64_t dim,
                     int64_t size) {
  dim = wrap_dim("resample_grad", dim, dy->ndim());
  check_taps("resample_grad", dy, index, weight, dim, size);
  if (index->shape()[1] != dy->shape()[dim])
    throw_error<RuntimeError>("resample_grad", "expected ", index->shape()[1], " positions at dim ",
                              dim, ", got ", dy->shape()[dim]);
  return dispatch1(prim::resample_grad(), {contiguous(dy), contiguous(index), contiguous(weight)},
                   Attrs{{"dim", dim}, {"size", size}});
}

Tensor border_pad(const Tensor& x, const IntList& pads, const std::string& mode, double value) {
  const char* op = "pad";
  int64_t m = 0;
  if (mode == "constant")
    m = static_cast<int64_t>(PadMode::kConstant);
  else if (mode == "reflect")
    m = static_cast<int64_t>(PadMode::kReflect);
  else if (mode == "replicate")
    m = static_cast<int64_t>(PadMode::kReplicate);
  else if (mode == "circular")
    m = static_cast<int64_t>(PadMode::kCircular);
  else
    throw_error<NotImplementedError>(op, "mode '", mode, "' is not implemented");
  const int64_t k = static_cast<int64_t>(pads.size()) / 2;
  if (pads.size() % 2 != 0 || k > 3 || k > x->ndim())
    throw_error<RuntimeError>(op, mode, " padding takes (left, right) pairs for at most the last ",
                              std::min<int64_t>(3, x->ndim()), " dims, got [", join(pads, ", "),
                              "]");
  for (int64_t j = 0; j < k; ++j) {
    const int64_t n = x->shape()[x->ndim() - 1 - j], l = pads[2 * j], r = pads[2 * j + 1];
    if (l < 0 || r < 0)
      throw_error<RuntimeError>(op, "negative padding is not supported in ", mode, " mode");
    if (mode == "reflect" && (l >= n || r >= n))
      throw_error<RuntimeError>(op,
                                "padding size should be less than the corresponding input "
                                "dimension, but got padding (",
                                l, ", ", r, ") at dimension of size ", n);
    if (mode == "circular" && (l > n || r > n))
      throw_error<RuntimeError>(op, "padding value causes wrapping around more than once");
    if (mode == "replicate" && n == 0 && (l > 0 || r > 0))
      throw_error<RuntimeError>(op, "cannot replicate-pad an empty dimension of size 0");
  }
  return border_pad_raw(x, pads, m, value);
}

}  // namespace oneflow::functional
