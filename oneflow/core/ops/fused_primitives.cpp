// Meta inference and traits of the fused kernels: the optimizer updates (no outputs, not
// differentiable; the functional layer bumps the version of every tensor the kernel wrote) and
// layer normalisation with its backward.
#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/primitives.h"
#include "oneflow/core/ops/unread_saved.h"

namespace oneflow {

namespace {
void check_update_inputs(const char* op, const TensorList& in, size_t min_n, size_t max_n) {
  if (in.size() < min_n || in.size() > max_n)
    throw_error<RuntimeError>(op, "expected ", min_n, " to ", max_n, " tensors, got ", in.size());
  for (const Tensor& t : in) {
    if (t->dtype() != in[0]->dtype() || t->shape() != in[0]->shape())
      throw_error<RuntimeError>(op, "expected tensors of one dtype and shape, got ",
                                dtype_name(t->dtype()), shape_str(t->shape()), " and ",
                                dtype_name(in[0]->dtype()), shape_str(in[0]->shape()));
    if (!t->is_contiguous()) throw_error<RuntimeError>(op, "expected contiguous tensors");
  }
  if (!is_floating(in[0]->dtype()))
    throw_error<RuntimeError>(op, "expected floating point tensors, got ",
                              dtype_name(in[0]->dtype()));
}

PrimTraits update_traits() {
  PrimTraits t;
  t.differentiable = false;
  return t;
}
}  // namespace

PrimTraits AdamUpdate::traits() const { return update_traits(); }

// With attrs "scalars" the last input holds the per-step numbers (kernels/cpu/optim.cpp).
static TensorList checked_scalars(const char* op, const TensorList& in, const Attrs& attrs,
                                  int64_t count) {
  if (!attrs.has("scalars")) return in;
  if (in.empty()) throw_error<RuntimeError>(op, "expected the per-step numbers as a last input");
  const Tensor& s = in.back();
  if (s->dtype() != DType::kFloat64 || s->numel() != count || !s->is_contiguous() ||
      s->device().type != DeviceType::kCPU)
    throw_error<RuntimeError>(op,
                              "expected the per-step numbers as a contiguous CPU float64 "
                              "tensor of ",
                              count, " elements, got ", dtype_name(s->dtype()),
                              shape_str(s->shape()), " on ", s->device().str());
  return TensorList(in.begin(), in.end() - 1);
}

std::vector<TensorMeta> AdamUpdate::infer(const TensorList& in, const Attrs& attrs) const {
  check_update_inputs(name(), checked_scalars(name(), in, attrs, 3), 4, 4);
  return {};
}

PrimTraits SgdUpdate::traits() const { return update_traits(); }

std::vector<TensorMeta> SgdUpdate::infer(const TensorList& in, const Attrs& attrs) const {
  check_update_inputs(name(), checked_scalars(name(), in, attrs, 2), 2, 3);
  return {};
}

namespace {
TensorMeta contiguous_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}
}  // namespace

namespace {
// Note [Unread saved tensors]: the gradients read the saved statistics, not the result.
bool stats_only(const Attrs&, bool output, size_t index) { return output && index == 0; }
const bool kNormsRegistered = register_unread_saved(prim::layer_norm(), stats_only) &&
                              register_unread_saved(prim::group_norm(), stats_only) &&
                              register_unread_saved(prim::batch_norm(), stats_only);
}  // namespace

PrimTraits LayerNorm::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> LayerNorm::infer(const TensorList& in, const Attrs& attrs) const {
  const int64_t size = attrs.get<int64_t>("size");
  const Tensor& x = in[0];
  if (in.size() != 3 || !x->is_contiguous() || size <= 0 || x->numel() % size != 0)
    throw_error<RuntimeError>(name(), "expected a contiguous input whose rows have ", size,
                              " elements, and a weight and a bias");
  for (int i = 1; i < 3; ++i)
    if (in[i]->numel() != size || in[i]->dtype() != x->dtype() || !in[i]->is_contiguous())
      throw_error<RuntimeError>(name(), "expected weight and bias of ", size, " elements and ",
                                dtype_name(x->dtype()));
  const Shape rows{x->numel() / size};
  return {contiguous_meta(x->shape(), x->dtype(), x->device()),
          contiguous_meta(rows, x->dtype(), x->device()),
          contiguous_meta(rows, x->dtype(), x->device())};
}

namespace {
// The checks batch_norm and batch_norm_inference share: a contiguous float32/float64 (N, C, *)
// input followed by per-channel vectors of C elements of its dtype (named by `vectors`).
void check_batch_norm_inputs(const char* op, const TensorList& in, size_t count,
                             const char* vectors) {
  const Tensor& x = in[0];
  const bool floating = x->dtype() == DType::kFloat32 || x->dtype() == DType::kFloat64;
  if (in.size() != count || !floating || !x->is_contiguous() || x->ndim() < 2)
    throw_error<RuntimeError>(
        op, "expected a contiguous float32 or float64 input of 2 or more dims, got ",
        dtype_name(x->dtype()), shape_str(x->shape()));
  const int64_t c = x->shape()[1];
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i]->numel() != c || in[i]->dtype() != x->dtype() || !in[i]->is_contiguous())
      throw_error<RuntimeError>(op, "expected ", vectors, " of ", c, " elements of ",
                                dtype_name(x->dtype()));
}

// create_graph form of a normalisation's gradient, from differentiable ops: y = xhat * w + b
// with xhat = (x - mean) * rstd, the statistics over `dims` recomputed from x (so the
// second-order graph reaches x through them too). `w` broadcasts against x; the weight and bias
// gradients sum over `param_dims` and take the shapes of `weight` and `bias`.
TensorList composite_norm_grad(const Tensor& x, const Tensor& dy, const Tensor& w,
                               const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& param_dims, double eps,
                               const Tensor& weight, const Tensor& bias) {
  namespace F = functional;
  Tensor xc = F::sub(x, F::mean(x, dims, true));
  Tensor rstd = F::unary(UnaryFn::kRsqrt,
                         F::add(F::mean(F::mul(xc, xc), dims, true), Scalar::from_double(eps)));
  Tensor xhat = F::mul(xc, rstd);
  Tensor g = F::mul(dy, w);
  Tensor dx = F::mul(rstd, F::sub(F::sub(g, F::mean(g, dims, true)),
                                  F::mul(xhat, F::mean(F::mul(g, xhat), dims, true))));
  return {dx, F::reshape(F::sum(F::mul(dy, xhat), param_dims), weight->shape()),
          F::reshape(F::sum(dy, param_dims), bias->shape())};
}
}  // namespace

TensorList LayerNorm::grad(const GradContext& ctx, const TensorList& dy) const {
  if (grad_mode_enabled()) {
    namespace F = functional;
    const Tensor &x = ctx.inputs[0], &w = ctx.inputs[1];
    const int64_t size = ctx.attrs.get<int64_t>("size"), rows = x->numel() / size;
    TensorList g = composite_norm_grad(F::reshape(x, {rows, size}), F::reshape(dy[0], {rows, size}),
                                       F::reshape(w, {size}), {1}, {0},
                                       ctx.attrs.get<double>("eps"), w, ctx.inputs[2]);
    return {F::reshape(g[0], x->shape()), g[1], g[2]};
  }
  TensorList g =
      dispatch(prim::layer_norm_grad(),
               {dy[0], ctx.inputs[0], ctx.outputs[1], ctx.outputs[2], ctx.inputs[1]}, ctx.attrs);
  return {g[0], g[1], g[2]};
}

PrimTraits LayerNormGrad::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> LayerNormGrad::infer(const TensorList& in, const Attrs&) const {
  return {contiguous_meta(in[1]->shape(), in[1]->dtype(), in[1]->device()),
          contiguous_meta(in[4]->shape(), in[4]->dtype(), in[4]->device()),
          contiguous_meta(in[4]->shape(), in[4]->dtype(), in[4]->device())};
}

PrimTraits GroupNorm::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> GroupNorm::infer(const TensorList& in, const Attrs& attrs) const {
  (void)attrs.get<double>("eps");
  check_batch_norm_inputs(name(), in, 3, "weight and bias");
  const Tensor& x = in[0];
  const int64_t groups = attrs.get<int64_t>("num_groups");
  if (groups <= 0 || x->shape()[1] % groups != 0)
    throw_error<RuntimeError>(name(), "expected ", x->shape()[1],
                              " channels to be divisible by num_groups, got ", groups);
  const Shape stats{x->shape()[0] * groups};
  return {contiguous_meta(x->shape(), x->dtype(), x->device()),
          contiguous_meta(stats, x->dtype(), x->device()),
          contiguous_meta(stats, x->dtype(), x->device())};
}

TensorList GroupNorm::grad(const GradContext& ctx, const TensorList& dy) const {
  namespace F = functional;
  const Tensor &x = ctx.inputs[0], &w = ctx.inputs[1];
  if (grad_mode_enabled()) {
    // (N, G, C / G, S): the statistics over dims 2 and 3, the affine parameters per (G, C / G).
    const int64_t n = x->shape()[0], c = x->shape()[1];
    const int64_t groups = ctx.attrs.get<int64_t>("num_groups");
    const Shape grouped{n, groups, c / groups, n * c == 0 ? 0 : x->numel() / (n * c)};
    TensorList g = composite_norm_grad(F::reshape(x, grouped), F::reshape(dy[0], grouped),
                                       F::reshape(w, {1, groups, c / groups, 1}), {2, 3}, {0, 3},
                                       ctx.attrs.get<double>("eps"), w, ctx.inputs[2]);
    return {F::reshape(g[0], x->shape()), g[1], g[2]};
  }
  const Tensor g = dy[0]->is_contiguous() ? dy[0] : F::contiguous(dy[0]);
  TensorList r =
      dispatch(prim::group_norm_grad(), {g, x, ctx.outputs[1], ctx.outputs[2], w}, ctx.attrs);
  return {r[0], r[1], r[2]};
}

PrimTraits GroupNormGrad::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> GroupNormGrad::infer(const TensorList& in, const Attrs&) const {
  return {contiguous_meta(in[1]->shape(), in[1]->dtype(), in[1]->device()),
          contiguous_meta(in[4]->shape(), in[4]->dtype(), in[4]->device()),
          contiguous_meta(in[4]->shape(), in[4]->dtype(), in[4]->device())};
}

PrimTraits BatchNorm::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> BatchNorm::infer(const TensorList& in, const Attrs& attrs) const {
  (void)attrs.get<double>("eps");
  check_batch_norm_inputs(name(), in, 3, "weight and bias");
  const Tensor& x = in[0];
  const int64_t c = x->shape()[1];
  return {contiguous_meta(x->shape(), x->dtype(), x->device()),
          contiguous_meta({c}, x->dtype(), x->device()),
          contiguous_meta({c}, x->dtype(), x->device())};
}

TensorList BatchNorm::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor &x = ctx.inputs[0], &w = ctx.inputs[1];
  const double eps = ctx.attrs.get<double>("eps");
  if (grad_mode_enabled()) {
    std::vector<int64_t> dims{0}, shape(x->ndim(), 1);
    for (int64_t d = 2; d < x->ndim(); ++d) dims.push_back(d);
    shape[1] = x->shape()[1];
    return composite_norm_grad(x, dy[0], functional::reshape(w, Shape(shape)), dims, dims, eps, w,
                               ctx.inputs[2]);
  }
  Tensor g = dy[0]->is_contiguous() ? dy[0] : functional::contiguous(dy[0]);
  TensorList r =
      dispatch(prim::batch_norm_grad(), {g, x, ctx.outputs[1], ctx.outputs[2], w}, ctx.attrs);
  return {r[0], r[1], r[2]};
}

PrimTraits BatchNormGrad::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> BatchNormGrad::infer(const TensorList& in, const Attrs&) const {
  return {contiguous_meta(in[1]->shape(), in[1]->dtype(), in[1]->device()),
          contiguous_meta(in[4]->shape(), in[4]->dtype(), in[4]->device()),
          contiguous_meta(in[4]->shape(), in[4]->dtype(), in[4]->device())};
}

PrimTraits BatchNormInference::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> BatchNormInference::infer(const TensorList& in, const Attrs& attrs) const {
  (void)attrs.get<double>("eps");
  check_batch_norm_inputs(name(), in, 5, "mean, variance, weight and bias");
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList BatchNormInference::grad(const GradContext& ctx, const TensorList& dy) const {
  // y = (x - mean) * rstd * w + b with rstd = 1 / sqrt(var + eps), per channel.
  namespace F = functional;
  const Tensor& x = ctx.inputs[0];
  Shape shape(x->ndim(), 1);
  shape[1] = x->shape()[1];
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x->ndim(); ++d) dims.push_back(d);
  auto per_channel = [&](const Tensor& t) { return F::reshape(t, shape); };
  const Tensor mean = per_channel(ctx.inputs[1]), w = per_channel(ctx.inputs[3]);
  const Tensor rstd = F::unary(
      UnaryFn::kRsqrt,
      F::add(per_channel(ctx.inputs[2]), Scalar::from_double(ctx.attrs.get<double>("eps"))));
  const Tensor& g = dy[0];
  const Shape c{x->shape()[1]};
  const auto& needs = ctx.needs_input_grad;
  TensorList grads(5);
  const Tensor w_rstd = F::mul(w, rstd);
  if (needs[0]) grads[0] = F::mul(g, w_rstd);
  Tensor xc, g_xc;
  if (needs[2] || needs[3]) {
    xc = F::sub(x, mean);
    g_xc = F::sum(F::mul(g, xc), dims, true);
  }
  if (needs[1]) grads[1] = F::reshape(F::neg(F::mul(F::sum(g, dims, true), w_rstd)), c);
  if (needs[2])
    grads[2] = F::reshape(
        F::mul(F::mul(g_xc, F::mul(w_rstd, F::mul(rstd, rstd))), Scalar::from_double(-0.5)), c);
  if (needs[3]) grads[3] = F::reshape(F::mul(g_xc, rstd), c);
  if (needs[4]) grads[4] = F::reshape(F::sum(g, dims, true), c);
  return grads;
}

PrimTraits LogSoftmax::traits() const {
  PrimTraits t;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> LogSoftmax::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 1 || !is_floating(in[0]->dtype()) || !in[0]->is_contiguous())
    throw_error<RuntimeError>(name(), "expected one contiguous floating point input");
  (void)attrs.get<int64_t>("dim");
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList LogSoftmax::grad(const GradContext& ctx, const TensorList& dy) const {
  Tensor g = dy[0]->is_contiguous() ? dy[0] : functional::contiguous(dy[0]);
  return {dispatch1(prim::log_softmax_grad(), {g, ctx.outputs[0]}, ctx.attrs)};
}

PrimTraits LogSoftmaxGrad::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

TensorList LogSoftmaxGrad::grad(const GradContext& ctx, const TensorList& dy) const {
  // out = g - exp(y) sum(g): d(g) = dy - sum(dy exp(y)), d(y) = -dy exp(y) sum(g).
  namespace F = functional;
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  const Tensor &g = ctx.inputs[0], &y = ctx.inputs[1];
  Tensor p = F::exp(y);
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::sub(dy[0], F::sum(F::mul(dy[0], p), {dim}, true));
  if (ctx.needs_input_grad[1]) dx[1] = F::neg(F::mul(F::mul(dy[0], p), F::sum(g, {dim}, true)));
  return dx;
}

std::vector<TensorMeta> LogSoftmaxGrad::infer(const TensorList& in, const Attrs&) const {
  return {contiguous_meta(in[1]->shape(), in[1]->dtype(), in[1]->device())};
}

namespace prim {
const BatchNormInference& batch_norm_inference() {
  static const BatchNormInference instance;
  return instance;
}
const BatchNorm& batch_norm() {
  static const BatchNorm instance;
  return instance;
}
const BatchNormGrad& batch_norm_grad() {
  static const BatchNormGrad instance;
  return instance;
}
const LogSoftmax& log_softmax() {
  static const LogSoftmax instance;
  return instance;
}
const LogSoftmaxGrad& log_softmax_grad() {
  static const LogSoftmaxGrad instance;
  return instance;
}
const LayerNorm& layer_norm() {
  static const LayerNorm instance;
  return instance;
}
const LayerNormGrad& layer_norm_grad() {
  static const LayerNormGrad instance;
  return instance;
}
const GroupNorm& group_norm() {
  static const GroupNorm instance;
  return instance;
}
const GroupNormGrad& group_norm_grad() {
  static const GroupNormGrad instance;
  return instance;
}
const AdamUpdate& adam_update() {
  static const AdamUpdate instance;
  return instance;
}
const SgdUpdate& sgd_update() {
  static const SgdUpdate instance;
  return instance;
}
}  // namespace prim

}  // namespace oneflow
