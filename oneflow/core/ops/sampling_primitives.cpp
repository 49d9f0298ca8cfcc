// Meta inference, traits and gradient rules of grid_sample, pdist and the CTC loss
// (sampling_primitives.h). The argument checks users see live in the Python layer; these assert
// what the kernels rely on.
#include "oneflow/core/ops/sampling_primitives.h"

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"

namespace oneflow {

namespace F = functional;

namespace {

TensorMeta contiguous_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}

PrimTraits saving_all() {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

PrimTraits not_differentiable() {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

void check_float(const Primitive& p, const Tensor& t, const char* what) {
  if (t->dtype() != DType::kFloat32 && t->dtype() != DType::kFloat64)
    throw_error<RuntimeError>(p.name(), "expected ", what, " of dtype float32 or float64, got ",
                              dtype_name(t->dtype()));
  if (!t->is_contiguous()) throw_error<RuntimeError>(p.name(), "expected a contiguous ", what);
}

uint64_t elems(const Tensor& t) { return static_cast<uint64_t>(t->numel()); }

}  // namespace

// ---- grid_sample ----

PrimTraits GridSample::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> GridSample::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 2);
  const Tensor &x = in[0], &grid = in[1];
  check_float(*this, x, "input");
  check_float(*this, grid, "grid");
  const int64_t spatial = x->ndim() - 2;
  if ((spatial != 2 && spatial != 3) || grid->ndim() != x->ndim() ||
      grid->shape().back() != spatial || grid->shape()[0] != x->shape()[0] ||
      grid->dtype() != x->dtype())
    throw_error<RuntimeError>(name(), "expected input (N, C, [D,] H, W) and grid ",
                              "(N, [D',] H', W', 2 or 3) of one dtype, got ", shape_str(x->shape()),
                              " and ", shape_str(grid->shape()));
  for (int64_t d = 2; d < x->ndim(); ++d)
    if (x->shape()[d] == 0)  // no pixel for a tap to read
      throw_error<RuntimeError>(name(), "expected input to have non-empty spatial dimensions, ",
                                "got ", shape_str(x->shape()));
  Shape out{x->shape()[0], x->shape()[1]};
  for (int64_t k = 1; k <= spatial; ++k) out.push_back(grid->shape()[k]);
  return {contiguous_meta(out, x->dtype(), x->device())};
}

TensorList GridSample::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(2);
  if (!dy[0] || (!ctx.needs_input_grad[0] && !ctx.needs_input_grad[1])) return dx;
  if (grad_mode_enabled() &&
      (dy[0]->requires_grad() || ctx.inputs[0]->requires_grad() || ctx.inputs[1]->requires_grad()))
    throw_error<NotImplementedError>(name(),
                                     "the second derivative (a gradient taken with "
                                     "create_graph=True through grid_sample) is not implemented");
  Attrs attrs = ctx.attrs;
  attrs.set("need_input", static_cast<bool>(ctx.needs_input_grad[0]));
  attrs.set("need_grid", static_cast<bool>(ctx.needs_input_grad[1]));
  TensorList g = dispatch(prim::grid_sample_grad(),
                          {F::contiguous(dy[0]), ctx.inputs[0], ctx.inputs[1]}, attrs);
  if (ctx.needs_input_grad[0]) dx[0] = g[0];
  if (ctx.needs_input_grad[1]) dx[1] = g[1];
  return dx;
}

uint64_t GridSample::cpu_work(const TensorList& in, const TensorList& out) const {
  return (in[0]->ndim() == 5 ? 8 : 4) * elems(out[0]) * itemsize(out[0]->dtype()) +
         elems(in[1]) * itemsize(in[1]->dtype());
}

PrimTraits GridSampleGrad::traits() const { return not_differentiable(); }

std::vector<TensorMeta> GridSampleGrad::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 3 && in[0]->is_contiguous());
  return {contiguous_meta(in[1]->shape(), in[1]->dtype(), in[1]->device()),
          contiguous_meta(in[2]->shape(), in[2]->dtype(), in[2]->device())};
}

uint64_t GridSampleGrad::cpu_work(const TensorList& in, const TensorList& out) const {
  return 8 * elems(in[0]) * itemsize(in[0]->dtype()) + elems(out[0]) * itemsize(in[0]->dtype());
}

// ---- pdist ----

PrimTraits Pdist::traits() const { return saving_all(); }

std::vector<TensorMeta> Pdist::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  check_float(*this, in[0], "input");
  if (in[0]->ndim() != 2)
    throw_error<RuntimeError>(name(), "expected a 2-D input, got ", in[0]->ndim(), "-D");
  if (!(attrs.get<double>("p") >= 0))
    throw_error<RuntimeError>(name(), "expected a non-negative p, got ", attrs.get<double>("p"));
  const int64_t n = in[0]->shape()[0];
  return {contiguous_meta({n * (n - 1) / 2}, in[0]->dtype(), in[0]->device())};
}

TensorList Pdist::grad(const GradContext& ctx, const TensorList& dy) const {
  if (!dy[0] || !ctx.needs_input_grad[0]) return {nullptr};
  if (grad_mode_enabled() && (dy[0]->requires_grad() || ctx.inputs[0]->requires_grad()))
    throw_error<NotImplementedError>(name(),
                                     "the derivative of pdist's backward is not implemented "
                                     "(create_graph=True), as in PyTorch");
  return {dispatch1(prim::pdist_grad(), {F::contiguous(dy[0]), ctx.inputs[0], ctx.outputs[0]},
                    ctx.attrs)};
}

uint64_t Pdist::cpu_work(const TensorList& in, const TensorList& out) const {
  return (elems(out[0]) * in[0]->shape()[1] + elems(in[0])) * itemsize(in[0]->dtype());
}

PrimTraits PdistGrad::traits() const { return not_differentiable(); }

std::vector<TensorMeta> PdistGrad::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 3 && in[0]->is_contiguous() && in[2]->is_contiguous());
  return {contiguous_meta(in[1]->shape(), in[1]->dtype(), in[1]->device())};
}

uint64_t PdistGrad::cpu_work(const TensorList& in, const TensorList& out) const {
  return 2 * elems(in[0]) * in[1]->shape()[1] * itemsize(in[1]->dtype());
}

// ---- CTC loss ----

PrimTraits CtcLoss::traits() const { return saving_all(); }

std::vector<TensorMeta> CtcLoss::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 4);
  const Tensor &lp = in[0], &targets = in[1], &il = in[2], &tl = in[3];
  check_float(*this, lp, "log_probs");
  if (lp->ndim() != 3)
    throw_error<RuntimeError>(name(), "expected log_probs (T, N, C), got ", shape_str(lp->shape()));
  const int64_t n = lp->shape()[1];
  for (const Tensor& t : {targets, il, tl})
    if (t->dtype() != DType::kInt64 || !t->is_contiguous())
      throw_error<RuntimeError>(name(), "expected contiguous int64 targets and lengths");
  if (il->shape() != Shape{n} || tl->shape() != Shape{n} || targets->ndim() < 1 ||
      targets->ndim() > 2 || (targets->ndim() == 2 && targets->shape()[0] != n))
    throw_error<RuntimeError>(name(), "expected (N,) lengths and (N, S) or (sum of lengths,) ",
                              "targets for N = ", n);
  // The longest target is a value: log_alpha is sized by the padded width, or for concatenated
  // targets by their total length (an upper bound of every target's length).
  const int64_t s_max = targets->ndim() == 2 ? targets->shape()[1] : targets->shape()[0];
  return {contiguous_meta({n}, lp->dtype(), lp->device()),
          contiguous_meta({n, lp->shape()[0], 2 * s_max + 1}, lp->dtype(), lp->device())};
}

TensorList CtcLoss::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(4);
  if (!dy[0] || !ctx.needs_input_grad[0]) return dx;
  dx[0] = dispatch1(prim::ctc_loss_grad(),
                    {F::contiguous(dy[0]), ctx.inputs[0], ctx.inputs[1], ctx.inputs[2],
                     ctx.inputs[3], ctx.outputs[0], ctx.outputs[1]},
                    ctx.attrs);
  return dx;
}

uint64_t CtcLoss::cpu_work(const TensorList& in, const TensorList& out) const {
  return 4 * elems(out[1]) * itemsize(out[1]->dtype());
}

PrimTraits CtcLossGrad::traits() const { return not_differentiable(); }

std::vector<TensorMeta> CtcLossGrad::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 7 && in[0]->is_contiguous());
  return {contiguous_meta(in[1]->shape(), in[1]->dtype(), in[1]->device())};
}

uint64_t CtcLossGrad::cpu_work(const TensorList& in, const TensorList& out) const {
  return 8 * elems(in[6]) * itemsize(in[6]->dtype()) + elems(out[0]) * itemsize(in[6]->dtype());
}

// ---- segment max ----

PrimTraits SegmentMax::traits() const {
  PrimTraits t;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> SegmentMax::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 2 || in.size() == 3);
  check_float(*this, in[0], "values");
  const int64_t k = in.size() == 3 ? in[2]->numel() : (in[0]->ndim() ? in[0]->shape()[0] : 0);
  if (in[0]->ndim() != 2 || in[1]->dtype() != DType::kInt64 || !in[1]->is_contiguous() ||
      in[1]->shape() != Shape{k})
    throw_error<RuntimeError>(name(), "expected values (K, D) and int64 segment ids (K,), got ",
                              shape_str(in[0]->shape()), " and ", shape_str(in[1]->shape()));
  if (in.size() == 3 &&
      (in[2]->dtype() != DType::kInt64 || !in[2]->is_contiguous() || in[2]->ndim() != 1))
    throw_error<RuntimeError>(name(), "expected int64 row numbers (K,), got ",
                              dtype_name(in[2]->dtype()), " ", shape_str(in[2]->shape()));
  const Shape out{attrs.get<int64_t>("segments"), in[0]->shape()[1]};
  return {contiguous_meta(out, in[0]->dtype(), in[0]->device()),
          contiguous_meta(out, DType::kInt64, in[0]->device())};
}

TensorList SegmentMax::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(ctx.input_metas.size());
  if (!dy[0] || !ctx.needs_input_grad[0]) return dx;
  Attrs a;
  a.set("rows", ctx.input_metas[0].shape[0]);
  dx[0] = dispatch1(prim::segment_max_grad(), {F::contiguous(dy[0]), ctx.outputs[1]}, a);
  return dx;
}

PrimTraits SegmentMaxGrad::traits() const { return not_differentiable(); }

std::vector<TensorMeta> SegmentMaxGrad::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 2 && in[0]->is_contiguous() && in[1]->is_contiguous());
  return {contiguous_meta({attrs.get<int64_t>("rows"), in[0]->shape()[1]}, in[0]->dtype(),
                          in[0]->device())};
}

namespace prim {
const GridSample& grid_sample() {
  static const GridSample p;
  return p;
}
const GridSampleGrad& grid_sample_grad() {
  static const GridSampleGrad p;
  return p;
}
const Pdist& pdist() {
  static const Pdist p;
  return p;
}
const PdistGrad& pdist_grad() {
  static const PdistGrad p;
  return p;
}
const CtcLoss& ctc_loss() {
  static const CtcLoss p;
  return p;
}
const CtcLossGrad& ctc_loss_grad() {
  static const CtcLossGrad p;
  return p;
}
const SegmentMax& segment_max() {
  static const SegmentMax p;
  return p;
}
const SegmentMaxGrad& segment_max_grad() {
  static const SegmentMaxGrad p;
  return p;
}
}  // namespace prim

}  // namespace oneflow
