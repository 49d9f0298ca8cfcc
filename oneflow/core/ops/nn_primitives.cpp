// Meta inference, traits and gradient rules of the convolution and pooling primitives declared in
// nn_primitives.h. User-facing argument checks (with the op names conv2d, max_pool1d, ...) live in
// functional/nn_functional.cpp; the checks here guard the primitives' own invariants.
#include "oneflow/core/ops/nn_primitives.h"

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/functional/nn_functional.h"
#include "oneflow/core/ops/primitives.h"
#include "oneflow/core/ops/unread_saved.h"

namespace oneflow {

namespace F = functional;

namespace {

using Ints = std::vector<int64_t>;

TensorMeta contiguous_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}

// integers: the kernel also computes integer dtypes (convolution forward and pooling, as
// PyTorch's CPU kernels), without gradients.
void check_nn_input(const Primitive& p, const Tensor& x, size_t nsp, bool integers = false) {
  if (x->ndim() != static_cast<int64_t>(nsp) + 2 || nsp < 1 || nsp > 3)
    throw_error<RuntimeError>(p.name(), "expected a ", nsp + 2, "-D input, got shape ",
                              shape_str(x->shape()));
  const bool floating = x->dtype() == DType::kFloat32 || x->dtype() == DType::kFloat64;
  if (!floating && !(integers && is_integral(x->dtype(), false)))
    throw_error<RuntimeError>(p.name(), "expected a float32 or float64 input, got ",
                              dtype_name(x->dtype()));
  OF_ASSERT(x->is_contiguous());
}

void check_same(const Primitive& p, const Tensor& a, const Tensor& b) {
  if (a->dtype() != b->dtype())
    throw_error<RuntimeError>(p.name(), "expected inputs of one dtype, got ",
                              dtype_name(a->dtype()), " and ", dtype_name(b->dtype()));
  OF_ASSERT(b->is_contiguous());
}

PrimTraits saving(bool inputs, bool outputs) {
  PrimTraits t;
  t.saves_inputs = inputs;
  t.saves_outputs = outputs;
  return t;
}

Shape conv_out_shape(const Shape& x, const Shape& w, const Attrs& a) {
  const auto &stride = a.get<Ints>("stride"), &pl = a.get<Ints>("padding_l"),
             &pr = a.get<Ints>("padding_r"), &dil = a.get<Ints>("dilation");
  Shape out{x[0], w[0]};
  for (size_t i = 0; i < stride.size(); ++i)
    out.push_back(conv_output_size(x[i + 2], w[i + 2], stride[i], pl[i], pr[i], dil[i]));
  return out;
}

}  // namespace

// ---- convolution ----

PrimTraits ConvForward::traits() const { return saving(true, false); }

std::vector<TensorMeta> ConvForward::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 2 || in.size() == 3);
  const size_t nsp = attrs.get<Ints>("stride").size();
  check_nn_input(*this, in[0], nsp, true);
  check_same(*this, in[0], in[1]);
  const int64_t groups = attrs.get<int64_t>("groups");
  if (in[1]->ndim() != in[0]->ndim() || in[0]->shape()[1] != in[1]->shape()[1] * groups ||
      in[1]->shape()[0] % groups != 0)
    throw_error<RuntimeError>(name(), "weight of shape ", shape_str(in[1]->shape()),
                              " does not fit input of shape ", shape_str(in[0]->shape()),
                              " with groups=", groups);
  if (in.size() == 3) {
    check_same(*this, in[0], in[2]);
    OF_ASSERT(in[2]->ndim() == 1 && in[2]->shape()[0] == in[1]->shape()[0]);
  }
  return {contiguous_meta(conv_out_shape(in[0]->shape(), in[1]->shape(), attrs), in[0]->dtype(),
                          in[0]->device())};
}

TensorList ConvForward::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor &x = ctx.inputs[0], &w = ctx.inputs[1];
  TensorList dx(ctx.inputs.size());
  if (ctx.needs_input_grad[0]) dx[0] = F::conv_backward_data(dy[0], w, x->shape(), ctx.attrs);
  if (ctx.needs_input_grad[1]) dx[1] = F::conv_backward_weight(x, dy[0], w->shape(), ctx.attrs);
  if (ctx.inputs.size() == 3 && ctx.needs_input_grad[2]) {
    Ints dims{0};
    for (int64_t d = 2; d < dy[0]->ndim(); ++d) dims.push_back(d);
    dx[2] = F::sum(dy[0], dims);
  }
  return dx;
}

PrimTraits ConvBackwardData::traits() const { return saving(true, false); }

std::vector<TensorMeta> ConvBackwardData::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 2);
  const Shape& x_shape = attrs.get<Ints>("input_shape");
  check_nn_input(*this, in[0], attrs.get<Ints>("stride").size(), true);
  check_same(*this, in[0], in[1]);
  // dy must be what conv would produce from input_shape and w.
  if (conv_out_shape(x_shape, in[1]->shape(), attrs) != in[0]->shape())
    throw_error<RuntimeError>(name(), "output gradient of shape ", shape_str(in[0]->shape()),
                              " does not fit input shape ", shape_str(x_shape),
                              " and weight of shape ", shape_str(in[1]->shape()));
  return {contiguous_meta(x_shape, in[0]->dtype(), in[0]->device())};
}

TensorList ConvBackwardData::grad(const GradContext& ctx, const TensorList& g) const {
  // dx = conv^T(dy, w) is bilinear: its adjoints are conv (for dy) and conv's weight gradient.
  const Tensor &dy = ctx.inputs[0], &w = ctx.inputs[1];
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::conv_forward_raw(g[0], w, nullptr, ctx.attrs);
  if (ctx.needs_input_grad[1]) dx[1] = F::conv_backward_weight(g[0], dy, w->shape(), ctx.attrs);
  return dx;
}

PrimTraits ConvBackwardWeight::traits() const { return saving(true, false); }

std::vector<TensorMeta> ConvBackwardWeight::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 2);
  const Shape& w_shape = attrs.get<Ints>("weight_shape");
  check_nn_input(*this, in[0], attrs.get<Ints>("stride").size());
  check_same(*this, in[0], in[1]);
  if (conv_out_shape(in[0]->shape(), w_shape, attrs) != in[1]->shape())
    throw_error<RuntimeError>(name(), "output gradient of shape ", shape_str(in[1]->shape()),
                              " does not fit input of shape ", shape_str(in[0]->shape()),
                              " and weight shape ", shape_str(w_shape));
  return {contiguous_meta(w_shape, in[0]->dtype(), in[0]->device())};
}

TensorList ConvBackwardWeight::grad(const GradContext& ctx, const TensorList& g) const {
  const Tensor &x = ctx.inputs[0], &dy = ctx.inputs[1];
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::conv_backward_data(dy, g[0], x->shape(), ctx.attrs);
  if (ctx.needs_input_grad[1]) dx[1] = F::conv_forward_raw(x, g[0], nullptr, ctx.attrs);
  return dx;
}

// ---- pooling ----

namespace {
Shape pool_out_shape(const Shape& x, const Attrs& a) {
  const auto &k = a.get<Ints>("kernel"), &s = a.get<Ints>("stride"), &p = a.get<Ints>("padding"),
             &d = a.get<Ints>("dilation");
  const bool ceil_mode = a.get<bool>("ceil_mode");
  Shape out{x[0], x[1]};
  for (size_t i = 0; i < k.size(); ++i)
    out.push_back(pool_output_size(x[i + 2], k[i], s[i], p[i], d[i], ceil_mode));
  return out;
}

Shape adaptive_out_shape(const Shape& x, const Attrs& a) {
  Shape out{x[0], x[1]};
  for (int64_t o : a.get<Ints>("output_size")) out.push_back(o);
  return out;
}
}  // namespace

namespace {
// Note [Unread saved tensors]: the gradients read the saved indices, not the result.
bool indices_only(const Attrs&, bool output, size_t index) { return output && index == 0; }
const bool kPoolsRegistered = register_unread_saved(prim::max_pool(), indices_only) &&
                              register_unread_saved(prim::adaptive_max_pool(), indices_only);
}  // namespace

PrimTraits MaxPool::traits() const { return saving(false, true); }

std::vector<TensorMeta> MaxPool::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  check_nn_input(*this, in[0], attrs.get<Ints>("kernel").size(), true);
  Shape out = pool_out_shape(in[0]->shape(), attrs);
  std::vector<TensorMeta> metas{contiguous_meta(out, in[0]->dtype(), in[0]->device())};
  if (attrs.get<bool>("with_indices"))
    metas.push_back(contiguous_meta(out, DType::kInt64, in[0]->device()));
  return metas;
}

TensorList MaxPool::grad(const GradContext& ctx, const TensorList& dy) const {
  if (ctx.outputs.size() < 2)
    throw_error<RuntimeError>(name(), "was run without indices, so it has no gradient");
  return {F::max_pool_grad(dy[0], ctx.outputs[1], ctx.input_metas[0].shape)};
}

PrimTraits MaxPoolGrad::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

TensorList MaxPoolGrad::grad(const GradContext& ctx, const TensorList& g) const {
  const Tensor &dy = ctx.inputs[0], &indices = ctx.inputs[1];
  if (!ctx.needs_input_grad[0]) return {nullptr, nullptr};
  const Shape& out_shape = dy->shape();
  const int64_t planes = out_shape[0] * out_shape[1];
  if (planes == 0 || dy->numel() == 0)
    return {F::zeros(out_shape, CreationOptions{dy->dtype(), dy->device(), ""}), nullptr};
  Tensor flat = F::reshape(F::contiguous(g[0]), {planes, g[0]->numel() / planes});
  Tensor picked = F::gather(flat, 1, F::reshape(indices, {planes, dy->numel() / planes}));
  return {F::reshape(picked, out_shape), nullptr};
}

std::vector<TensorMeta> MaxPoolGrad::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 2 && in[1]->dtype() == DType::kInt64);
  OF_ASSERT(in[0]->shape() == in[1]->shape() && in[0]->is_contiguous() && in[1]->is_contiguous());
  return {contiguous_meta(attrs.get<Ints>("input_shape"), in[0]->dtype(), in[0]->device())};
}

PrimTraits AvgPool::traits() const { return {}; }

std::vector<TensorMeta> AvgPool::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  check_nn_input(*this, in[0], attrs.get<Ints>("kernel").size(), true);
  return {contiguous_meta(pool_out_shape(in[0]->shape(), attrs), in[0]->dtype(), in[0]->device())};
}

TensorList AvgPool::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::avg_pool_grad(dy[0], ctx.input_metas[0].shape, ctx.attrs)};
}

PrimTraits AvgPoolGrad::traits() const { return {}; }

std::vector<TensorMeta> AvgPoolGrad::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  const Shape& x_shape = attrs.get<Ints>("input_shape");
  check_nn_input(*this, in[0], attrs.get<Ints>("kernel").size());
  OF_ASSERT(pool_out_shape(x_shape, attrs) == in[0]->shape());
  return {contiguous_meta(x_shape, in[0]->dtype(), in[0]->device())};
}

TensorList AvgPoolGrad::grad(const GradContext& ctx, const TensorList& g) const {
  return {F::avg_pool_raw(g[0], ctx.attrs)};
}

PrimTraits AdaptiveAvgPool::traits() const { return {}; }

std::vector<TensorMeta> AdaptiveAvgPool::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  check_nn_input(*this, in[0], attrs.get<Ints>("output_size").size());
  return {
      contiguous_meta(adaptive_out_shape(in[0]->shape(), attrs), in[0]->dtype(), in[0]->device())};
}

TensorList AdaptiveAvgPool::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::adaptive_avg_pool_grad(dy[0], ctx.input_metas[0].shape)};
}

PrimTraits AdaptiveAvgPoolGrad::traits() const { return {}; }

std::vector<TensorMeta> AdaptiveAvgPoolGrad::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  const Shape& x_shape = attrs.get<Ints>("input_shape");
  check_nn_input(*this, in[0], x_shape.size() - 2);
  OF_ASSERT(in[0]->shape()[0] == x_shape[0] && in[0]->shape()[1] == x_shape[1]);
  return {contiguous_meta(x_shape, in[0]->dtype(), in[0]->device())};
}

TensorList AdaptiveAvgPoolGrad::grad(const GradContext& ctx, const TensorList& g) const {
  const Shape& y_shape = ctx.input_metas[0].shape;
  return {F::adaptive_avg_pool_raw(g[0], Shape(y_shape.begin() + 2, y_shape.end()))};
}

PrimTraits AdaptiveMaxPool::traits() const { return saving(false, true); }

std::vector<TensorMeta> AdaptiveMaxPool::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  check_nn_input(*this, in[0], attrs.get<Ints>("output_size").size());
  Shape out = adaptive_out_shape(in[0]->shape(), attrs);
  return {contiguous_meta(out, in[0]->dtype(), in[0]->device()),
          contiguous_meta(out, DType::kInt64, in[0]->device())};
}

TensorList AdaptiveMaxPool::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::max_pool_grad(dy[0], ctx.outputs[1], ctx.input_metas[0].shape)};
}

// ---- border padding ----

std::vector<TensorMeta> Pad::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  const Ints& pads = attrs.get<Ints>("pads");
  Shape out = in[0]->shape();
  OF_ASSERT(pads.size() % 2 == 0 && pads.size() / 2 <= out.size() && pads.size() <= 6);
  for (size_t j = 0; j < pads.size() / 2; ++j)
    out[out.size() - 1 - j] += pads[2 * j] + pads[2 * j + 1];
  return {contiguous_meta(out, in[0]->dtype(), in[0]->device())};
}

TensorList Pad::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::pad_grad(dy[0], ctx.input_metas[0].shape, ctx.attrs.get<Ints>("pads"),
                      ctx.attrs.get<int64_t>("mode"))};
}

std::vector<TensorMeta> PadGrad::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  return {contiguous_meta(attrs.get<Ints>("input_shape"), in[0]->dtype(), in[0]->device())};
}

TensorList PadGrad::grad(const GradContext& ctx, const TensorList& g) const {
  return {F::border_pad_raw(g[0], ctx.attrs.get<Ints>("pads"), ctx.attrs.get<int64_t>("mode"))};
}

// ---- mean squared error ----

PrimTraits PairLoss::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> PairLoss::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 2 && in[0]->shape() == in[1]->shape());
  return {contiguous_meta({}, in[0]->dtype(), in[0]->device())};
}

TensorList PairLoss::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor da = F::pair_loss_grad(dy[0], ctx.inputs[0], ctx.inputs[1], ctx.attrs);
  return {ctx.needs_input_grad[0] ? da : nullptr, ctx.needs_input_grad[1] ? F::neg(da) : nullptr};
}

PrimTraits PairLossGrad::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> PairLossGrad::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 3 && in[0]->ndim() == 0 && in[1]->shape() == in[2]->shape());
  return {contiguous_meta(in[1]->shape(), in[1]->dtype(), in[1]->device())};
}

// d/d(dy) = sum(g * scale * f'(a - b)); d/da = g * scale * dy * f''(a - b) = -d/db, with
// f'' = 2 for the squared error and the slope's derivative inside the kink for the others.
TensorList PairLossGrad::grad(const GradContext& ctx, const TensorList& g) const {
  const double scale = ctx.attrs.get<double>("scale"), p = ctx.attrs.get<double>("p");
  const int64_t act = ctx.attrs.get<int64_t>("act");
  const Tensor &dy = ctx.inputs[0], &a = ctx.inputs[1], &b = ctx.inputs[2];
  const Tensor d = F::sub(a, b);
  TensorList out(3);
  if (ctx.needs_input_grad[0]) {
    const Tensor gs = F::mul(g[0], Scalar::from_double(scale));
    out[0] = F::sum(
        act < 0 ? F::mul(F::mul(gs, d), Scalar::from_double(2))
                : F::activation_grad(ActFn(act), gs, d, Attrs{{"a", p}, {"b", 0.0}, {"c", 0.0}}));
  }
  if (ctx.needs_input_grad[1] || ctx.needs_input_grad[2]) {
    const Tensor gdy = F::mul(g[0], dy);
    Tensor ga;
    if (act < 0) {
      ga = F::mul(gdy, Scalar::from_double(2 * scale));
    } else {  // smooth_l1: 1 / beta inside |d| < beta; huber: 1 inside |d| < delta; 0 outside
      const double k = ActFn(act) == ActFn::kSmoothL1 ? scale / p : scale;
      const Tensor inside = F::lt(F::unary(UnaryFn::kAbs, d), Scalar::from_double(p));
      ga = F::where(inside, F::mul(gdy, Scalar::from_double(k)),
                    F::zeros({}, CreationOptions{gdy->dtype(), gdy->device(), ""}));
    }
    if (ctx.needs_input_grad[1]) out[1] = ga;
    if (ctx.needs_input_grad[2]) out[2] = F::neg(ga);
  }
  return out;
}

// ---- negative log-likelihood ----

PrimTraits NllLoss::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> NllLoss::infer(const TensorList& in, const Attrs& attrs) const {
  (void)attrs.get<int64_t>("ignore_index");
  (void)attrs.get<bool>("mean");
  const bool logits = attrs.has("logits") && attrs.get<bool>("logits");
  const Tensor &x = in[0], &t = in[1];
  const bool floating = x->dtype() == DType::kFloat32 || x->dtype() == DType::kFloat64;
  const int64_t c = x->ndim() == 1 ? x->shape()[0] : x->ndim() > 1 ? x->shape()[1] : -1;
  if (in.size() != 3 || !floating || !x->is_contiguous() || c < 0 || t->dtype() != DType::kInt64 ||
      !t->is_contiguous() || in[2]->numel() != c || in[2]->dtype() != x->dtype() ||
      !in[2]->is_contiguous() || t->numel() * c != x->numel() || (logits && x->ndim() > 2))
    throw_error<RuntimeError>(name(), "expected contiguous float32/float64 ",
                              logits ? "logits (N, C) or (C,), " : "log-probabilities (N, C, *), ",
                              "int64 targets (N, *) and a weight of C elements, got ",
                              dtype_name(x->dtype()), shape_str(x->shape()), " and ",
                              dtype_name(t->dtype()), shape_str(t->shape()));
  std::vector<TensorMeta> out{contiguous_meta({}, x->dtype(), x->device()),
                              contiguous_meta({}, x->dtype(), x->device())};
  if (logits)
    out.push_back(
        contiguous_meta({x->ndim() == 2 ? x->shape()[0] : 1, 2}, x->dtype(), x->device()));
  return out;
}

TensorList NllLoss::grad(const GradContext& ctx, const TensorList& dy) const {
  Attrs attrs = ctx.attrs;
  attrs.set("input_shape", ctx.input_metas[0].shape);
  const Tensor &t = ctx.inputs[1], &w = ctx.inputs[2], &total = ctx.outputs[1];
  if (attrs.has("logits") && attrs.get<bool>("logits")) {
    const Tensor& x = ctx.inputs[0];
    if (!grad_mode_enabled())
      return {dispatch1(prim::nll_loss_grad(), {dy[0], t, w, total, x, ctx.outputs[2]}, attrs),
              nullptr, nullptr};
    // Differentiable (create_graph): the log-probabilities' gradient, then log_softmax's rule on
    // a recomputed log_softmax of the logits.
    attrs.set("logits", false);
    const int64_t dim = x->ndim() - 1;
    Tensor dlogp = dispatch1(prim::nll_loss_grad(), {F::ones_like(dy[0]), t, w, total}, attrs);
    const double e = attrs.has("label_smoothing") ? attrs.get<double>("label_smoothing") : 0.0;
    if (e != 0) {
      // e / C of every class's term: -w e / C (over the total weight for the mean) on each
      // counted row
      Tensor valid =
          F::compare(CompareFn::kNe, t, Scalar::from_int(attrs.get<int64_t>("ignore_index")));
      if (dim == 1) valid = F::unsqueeze(valid, 1);
      Tensor smooth = F::mul(F::where(valid, w, Scalar::from_double(0.0)),
                             Scalar::from_double(-e / double(x->shape()[dim])));
      if (attrs.get<bool>("mean")) smooth = F::div(smooth, total);
      dlogp = F::add(F::mul(dlogp, Scalar::from_double(1 - e)), smooth);
    }
    return {dispatch1(prim::log_softmax_grad(), {F::mul(dlogp, dy[0]), F::log_softmax(x, dim)},
                      Attrs{{"dim", dim}}),
            nullptr, nullptr};
  }
  if (grad_mode_enabled()) {
    // The gradient is linear in dy and does not depend on the log-probabilities: the kernel's
    // value for dy = 1 times dy is differentiable in dy.
    const Tensor unit = dispatch1(prim::nll_loss_grad(), {F::ones_like(dy[0]), t, w, total}, attrs);
    return {F::mul(unit, dy[0]), nullptr, nullptr};
  }
  return {dispatch1(prim::nll_loss_grad(), {dy[0], t, w, total}, attrs), nullptr, nullptr};
}

PrimTraits NllLossGrad::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> NllLossGrad::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT((in.size() == 4 || in.size() == 6) && in[0]->ndim() == 0);
  return {contiguous_meta(attrs.get<Ints>("input_shape"), in[2]->dtype(), in[2]->device())};
}

// ---- resampling ----

namespace {
// The output meta of a resampling along attrs dim of `in` to `size` positions.
TensorMeta resampled_meta(const Tensor& in, const Tensor& index, const Attrs& attrs, int64_t size) {
  const int64_t dim = attrs.get<int64_t>("dim");
  OF_ASSERT(dim >= 0 && dim < in->ndim() && index->ndim() == 2);
  Shape out = in->shape();
  out[dim] = size;
  return contiguous_meta(out, in->dtype(), in->device());
}
}  // namespace

PrimTraits Resample::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> Resample::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 3 && in[1]->shape() == in[2]->shape());
  return {resampled_meta(in[0], in[1], attrs, in[1]->shape()[1])};
}

TensorList Resample::grad(const GradContext& ctx, const TensorList& dy) const {
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  return {F::resample_grad(dy[0], ctx.inputs[1], ctx.inputs[2], dim, ctx.input_metas[0].shape[dim]),
          nullptr, nullptr};
}

PrimTraits ResampleGrad::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> ResampleGrad::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 3 && in[1]->shape() == in[2]->shape());
  return {resampled_meta(in[0], in[1], attrs, attrs.get<int64_t>("size"))};
}

TensorList ResampleGrad::grad(const GradContext& ctx, const TensorList& g) const {
  return {F::resample(g[0], ctx.inputs[1], ctx.inputs[2], ctx.attrs.get<int64_t>("dim")), nullptr,
          nullptr};
}

// ---- instances ----

namespace prim {
#define OF_INSTANCE(cls, fn)   \
  const cls& fn() {            \
    static const cls instance; \
    return instance;           \
  }
OF_INSTANCE(ConvForward, conv_forward)
OF_INSTANCE(ConvBackwardData, conv_backward_data)
OF_INSTANCE(ConvBackwardWeight, conv_backward_weight)
OF_INSTANCE(MaxPool, max_pool)
OF_INSTANCE(MaxPoolGrad, max_pool_grad)
OF_INSTANCE(AvgPool, avg_pool)
OF_INSTANCE(AvgPoolGrad, avg_pool_grad)
OF_INSTANCE(AdaptiveAvgPool, adaptive_avg_pool)
OF_INSTANCE(AdaptiveAvgPoolGrad, adaptive_avg_pool_grad)
OF_INSTANCE(AdaptiveMaxPool, adaptive_max_pool)
OF_INSTANCE(Pad, pad)
OF_INSTANCE(PadGrad, pad_grad)
OF_INSTANCE(PairLoss, pair_loss)
OF_INSTANCE(PairLossGrad, pair_loss_grad)
OF_INSTANCE(NllLoss, nll_loss)
OF_INSTANCE(NllLossGrad, nll_loss_grad)
OF_INSTANCE(Resample, resample)
OF_INSTANCE(ResampleGrad, resample_grad)
#undef OF_INSTANCE
}  // namespace prim

}  // namespace oneflow
