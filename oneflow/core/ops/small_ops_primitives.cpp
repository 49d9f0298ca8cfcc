// Meta inference, traits and gradient rules of one_hot, bincount, cross, dot, trace and outer
// (small_ops_primitives.h). User-facing checks and promotion live in functional/small_ops.cpp.
#include "oneflow/core/ops/small_ops_primitives.h"
#include "oneflow/core/framework/global.h"

#include <algorithm>

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/small_ops.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {
TensorMeta contiguous_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}

PrimTraits not_differentiable() {
  PrimTraits t;
  t.differentiable = false;
  return t;
}
}  // namespace

PrimTraits OneHot::traits() const { return not_differentiable(); }

std::vector<TensorMeta> OneHot::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 1) throw_error<RuntimeError>(name(), "expected 1 input, got ", in.size());
  if (in[0]->dtype() != DType::kInt64)
    throw_error<RuntimeError>(name(), "is only applicable to index tensor of type int64, got ",
                              dtype_name(in[0]->dtype()));
  const int64_t classes = attrs.get<int64_t>("num_classes");
  if (classes < 0)
    throw_error<RuntimeError>(name(), "num_classes must be non-negative, got ", classes);
  Shape shape = in[0]->shape();
  shape.push_back(classes);
  return {contiguous_meta(std::move(shape), DType::kInt64, in[0]->device())};
}

PrimTraits Bincount::traits() const { return not_differentiable(); }

std::vector<TensorMeta> Bincount::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.empty() || in.size() > 2)
    throw_error<RuntimeError>(name(), "expected 1 or 2 inputs, got ", in.size());
  const Tensor& x = in[0];
  if (!is_integral(x->dtype(), false) || x->ndim() != 1)
    throw_error<RuntimeError>(name(), "only supports 1-d non-negative integral inputs, got a ",
                              x->ndim(), "-d ", dtype_name(x->dtype()), " tensor");
  DType out = DType::kInt64;
  if (in.size() == 2) {
    const Tensor& w = in[1];
    if (w->dtype() != DType::kFloat32 && w->dtype() != DType::kFloat64)
      throw_error<RuntimeError>(name(), "expected float32 or float64 weights, got ",
                                dtype_name(w->dtype()));
    if (w->ndim() != 1 || w->shape()[0] != x->shape()[0])
      throw_error<RuntimeError>(name(), "weights should be 1-d and have the same length as input");
    out = w->dtype();
  }
  const int64_t length = attrs.get<int64_t>("length");
  if (length < 0) throw_error<RuntimeError>(name(), "length must be non-negative, got ", length);
  return {contiguous_meta({length}, out, x->device())};
}

PrimTraits Cross::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> Cross::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 2) throw_error<RuntimeError>(name(), "expected 2 inputs, got ", in.size());
  const Tensor &a = in[0], &b = in[1];
  if (a->shape() != b->shape() || a->dtype() != b->dtype())
    throw_error<RuntimeError>(name(), "expected inputs of one shape and dtype");
  const int64_t dim = attrs.get<int64_t>("dim");
  if (dim < 0 || dim >= a->ndim() || a->shape()[dim] != 3)
    throw_error<RuntimeError>(name(), "dimension ", dim, " must have length 3");
  return {contiguous_meta(a->shape(), a->dtype(), a->device())};
}

TensorList Cross::grad(const GradContext& ctx, const TensorList& dy) const {
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  TensorList dx(2);
  if (!dy[0]) return dx;
  if (ctx.needs_input_grad[0]) dx[0] = functional::cross(ctx.inputs[1], dy[0], dim);
  if (ctx.needs_input_grad[1]) dx[1] = functional::cross(dy[0], ctx.inputs[0], dim);
  return dx;
}

PrimTraits Dot::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> Dot::infer(const TensorList& in, const Attrs&) const {
  if (in.size() != 2) throw_error<RuntimeError>(name(), "expected 2 inputs, got ", in.size());
  const Tensor &a = in[0], &b = in[1];
  if (a->ndim() != 1 || b->ndim() != 1 || a->shape() != b->shape() || a->dtype() != b->dtype())
    throw_error<RuntimeError>(name(), "expected two 1-D tensors of one length and dtype");
  if (a->dtype() == DType::kBool)
    throw_error<NotImplementedError>(name(), "expected a numeric dtype, got bool");
  return {contiguous_meta({}, a->dtype(), a->device())};
}

TensorList Dot::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(2);
  if (!dy[0]) return dx;
  if (ctx.needs_input_grad[0]) dx[0] = functional::mul(ctx.inputs[1], dy[0]);
  if (ctx.needs_input_grad[1]) dx[1] = functional::mul(ctx.inputs[0], dy[0]);
  return dx;
}

std::vector<TensorMeta> Trace::infer(const TensorList& in, const Attrs&) const {
  if (in.size() != 1) throw_error<RuntimeError>(name(), "expected 1 input, got ", in.size());
  const Tensor& x = in[0];
  if (x->ndim() != 2)
    throw_error<RuntimeError>(name(), "expected a matrix, got a ", x->ndim(), "-D tensor");
  if (x->dtype() == DType::kBool)
    throw_error<NotImplementedError>(name(), "bool inputs are not supported");
  const DType out = is_integral(x->dtype(), false) ? DType::kInt64 : x->dtype();
  return {contiguous_meta({}, out, x->device())};
}

uint64_t Trace::cpu_work(const TensorList& in, const TensorList& out) const {
  const int64_t len = std::min(in[0]->shape()[0], in[0]->shape()[1]);
  return len * itemsize(in[0]->dtype()) + itemsize(out[0]->dtype());
}

TensorList Trace::grad(const GradContext& ctx, const TensorList& dy) const {
  if (!dy[0] || !ctx.needs_input_grad[0]) return {Tensor()};
  const TensorMeta& m = ctx.input_metas[0];
  const int64_t rows = m.shape[0], cols = m.shape[1], len = std::min(rows, cols);
  // eye(rows, cols) is a constant: ones scattered onto the diagonal. The product with dy keeps
  // the gradient differentiable in dy.
  const Tensor ones = global::broadcast_like(
      dy[0], functional::full({len}, Scalar::from_int(1),
                              CreationOptions{m.dtype, m.device, {}, nullptr}));
  const Tensor eye = dispatch1(prim::as_strided_grad(), {ones},
                               Attrs{{"shape", std::vector<int64_t>{rows, cols}},
                                     {"grad_size", std::vector<int64_t>{len}},
                                     {"grad_stride", std::vector<int64_t>{cols + 1}},
                                     {"grad_offset", int64_t{0}}});
  return {functional::mul(eye, dy[0])};
}

PrimTraits Outer::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> Outer::infer(const TensorList& in, const Attrs&) const {
  if (in.size() != 2) throw_error<RuntimeError>(name(), "expected 2 inputs, got ", in.size());
  const Tensor &a = in[0], &b = in[1];
  if (a->ndim() != 1 || b->ndim() != 1 || a->dtype() != b->dtype())
    throw_error<RuntimeError>(name(), "expected two 1-D tensors of one dtype");
  return {contiguous_meta({a->shape()[0], b->shape()[0]}, a->dtype(), a->device())};
}

TensorList Outer::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(2);
  if (!dy[0]) return dx;
  if (ctx.needs_input_grad[0]) dx[0] = functional::matmul(dy[0], ctx.inputs[1]);
  if (ctx.needs_input_grad[1])
    dx[1] = functional::matmul(functional::transpose(dy[0], 0, 1), ctx.inputs[0]);
  return dx;
}

namespace prim {
const Trace& trace() {
  static const Trace instance;
  return instance;
}
const Outer& outer() {
  static const Outer instance;
  return instance;
}
const Dot& dot() {
  static const Dot instance;
  return instance;
}
const OneHot& one_hot() {
  static const OneHot instance;
  return instance;
}
const Bincount& bincount() {
  static const Bincount instance;
  return instance;
}
const Cross& cross() {
  static const Cross instance;
  return instance;
}
}  // namespace prim

}  // namespace oneflow
