// Meta inference, traits and gradient rules of cummax/cummin, mode, inverse and det.
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace F = functional;

namespace {
TensorMeta contiguous_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}

void check_square(const char* op, const Tensor& x) {
  const Shape& s = x->shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    throw_error<RuntimeError>(op, "expected a batch of square matrices, got shape ", shape_str(s));
  if (x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64)
    throw_error<RuntimeError>(op, "expected a float32 or float64 input, got ",
                              dtype_name(x->dtype()));
}

// Scatters the gradient of values selected at `idx` along dim back into the input's shape.
Tensor scatter_back(const Tensor& g, const Tensor& idx, int64_t dim, const Shape& shape) {
  if (shape.empty()) return g;
  Tensor zeros =
      global::broadcast_like(g, F::zeros(shape, CreationOptions{g->dtype(), g->device(), ""}));
  return F::scatter(zeros, dim, idx, g, "add");
}
}  // namespace

template <ReduceFn K>
PrimTraits CumExtreme<K>::traits() const {
  PrimTraits t;
  t.saves_outputs = true;
  return t;
}

template <ReduceFn K>
std::vector<TensorMeta> CumExtreme<K>::infer(const TensorList& in, const Attrs&) const {
  if (in.size() != 1) throw_error<RuntimeError>(name(), "expected 1 input");
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device()),
          contiguous_meta(in[0]->shape(), DType::kInt64, in[0]->device())};
}

template <ReduceFn K>
TensorList CumExtreme<K>::grad(const GradContext& ctx, const TensorList& dy) const {
  return {
      scatter_back(dy[0], ctx.outputs[1], ctx.attrs.get<int64_t>("dim"), ctx.input_metas[0].shape)};
}

PrimTraits Mode::traits() const {
  PrimTraits t;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> Mode::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 1) throw_error<RuntimeError>(name(), "expected 1 input");
  const int64_t dim = attrs.get<int64_t>("dim");
  Shape out = in[0]->shape();
  if (!out.empty()) {
    if (out[dim] == 0)
      throw_error<IndexError>(name(), "expected reduction dim ", dim, " to have non-zero size");
    if (attrs.get<bool>("keepdim"))
      out[dim] = 1;
    else
      out.erase(out.begin() + dim);
  }
  return {contiguous_meta(out, in[0]->dtype(), in[0]->device()),
          contiguous_meta(out, DType::kInt64, in[0]->device())};
}

TensorList Mode::grad(const GradContext& ctx, const TensorList& dy) const {
  const Shape& shape = ctx.input_metas[0].shape;
  if (shape.empty()) return {dy[0]};
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  Tensor g = dy[0], idx = ctx.outputs[1];
  if (!ctx.attrs.get<bool>("keepdim")) {
    g = F::unsqueeze(g, dim);
    idx = F::unsqueeze(idx, dim);
  }
  return {scatter_back(g, idx, dim, shape)};
}

PrimTraits Inverse::traits() const {
  PrimTraits t;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> Inverse::infer(const TensorList& in, const Attrs&) const {
  check_square(name(), in[0]);
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList Inverse::grad(const GradContext& ctx, const TensorList& dy) const {
  // d(A^-1) = -A^-1 dA A^-1, so dL/dA = -Y^T G Y^T with Y = A^-1.
  Tensor yt = F::transpose(ctx.outputs[0], -2, -1);
  return {F::neg(F::matmul(F::matmul(yt, dy[0]), yt))};
}

PrimTraits Det::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> Det::infer(const TensorList& in, const Attrs&) const {
  check_square(name(), in[0]);
  Shape out(in[0]->shape().begin(), in[0]->shape().end() - 2);
  return {contiguous_meta(out, in[0]->dtype(), in[0]->device())};
}

TensorList Det::grad(const GradContext& ctx, const TensorList& dy) const {
  // d det(A) / dA = det(A) A^-T (invertible A; a singular input raises from the inverse).
  Tensor inv_t = F::transpose(dispatch1(prim::inverse(), {ctx.inputs[0]}), -2, -1);
  Tensor scale = F::unsqueeze(F::unsqueeze(F::mul(dy[0], ctx.outputs[0]), -1), -1);
  return {F::mul(inv_t, scale)};
}

template class CumExtreme<ReduceFn::kMax>;
template class CumExtreme<ReduceFn::kMin>;

namespace prim {
template <ReduceFn F>
const CumExtreme<F>& cum_extreme() {
  static const CumExtreme<F> instance;
  return instance;
}
template const CumExtreme<ReduceFn::kMax>& cum_extreme<ReduceFn::kMax>();
template const CumExtreme<ReduceFn::kMin>& cum_extreme<ReduceFn::kMin>();
const Mode& mode() {
  static const Mode instance;
  return instance;
}
const Inverse& inverse() {
  static const Inverse instance;
  return instance;
}
const Det& det() {
  static const Det instance;
  return instance;
}
}  // namespace prim

}  // namespace oneflow
