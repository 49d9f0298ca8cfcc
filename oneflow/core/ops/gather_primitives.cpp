// Meta inference, traits and gradient rules of gather, scatter, cat and searchsorted.
#include <algorithm>

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/primitives.h"
#include "oneflow/core/ops/unread_saved.h"

namespace oneflow {

namespace F = functional;

namespace {
TensorMeta contiguous_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}
}  // namespace

// ---- gather ----

PrimTraits Gather::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> Gather::infer(const TensorList& in, const Attrs&) const {
  if (in.size() != 2) throw_error<RuntimeError>(name(), "expected 2 inputs");
  if (in[1]->dtype() != DType::kInt64)
    throw_error<RuntimeError>(name(), "expected an int64 index, got ", dtype_name(in[1]->dtype()));
  return {contiguous_meta(in[1]->shape(), in[0]->dtype(), in[0]->device())};
}

// The selected elements of x (one per index), the index, the output.
uint64_t Gather::cpu_work(const TensorList& in, const TensorList& out) const {
  return in[1]->numel() * itemsize(in[1]->dtype()) +
         2 * out[0]->numel() * itemsize(out[0]->dtype());
}

TensorList Gather::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) {
    const TensorMeta& m = ctx.input_metas[0];
    Tensor zeros = global::broadcast_like(
        dy[0], F::zeros(m.shape, CreationOptions{dy[0]->dtype(), dy[0]->device(), ""}));
    dx[0] = F::scatter(zeros, ctx.attrs.get<int64_t>("dim"), ctx.inputs[1], dy[0], "add");
  }
  return dx;
}

// ---- scatter ----

namespace {
// Note [Unread saved tensors]: with reduce "add" or "none" the gradient reads the index (and
// src's shape and dtype), not the values of self, src or the result.
bool scatter_unread(const Attrs& attrs, bool output, size_t index) {
  const std::string& reduce = attrs.get<std::string>("reduce");
  return (reduce == "add" || reduce == "none") && (output || index != 1);
}
const bool kScatterRegistered = register_unread_saved(prim::scatter(), scatter_unread);
}  // namespace

PrimTraits Scatter::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> Scatter::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 3) throw_error<RuntimeError>(name(), "expected 3 inputs");
  if (in[1]->dtype() != DType::kInt64)
    throw_error<RuntimeError>(name(), "expected an int64 index, got ", dtype_name(in[1]->dtype()));
  if (in[0]->dtype() != in[2]->dtype())
    throw_error<RuntimeError>(name(), "expected self and src to have the same dtype, got ",
                              dtype_name(in[0]->dtype()), " and ", dtype_name(in[2]->dtype()));
  const std::string& reduce = attrs.get<std::string>("reduce");
  if (reduce != "none" && reduce != "add" && reduce != "multiply" && reduce != "amax" &&
      reduce != "amin")
    throw_error<RuntimeError>(name(),
                              "reduce argument must be either add, multiply, amax or "
                              "amin, got ",
                              reduce);
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList Scatter::grad(const GradContext& ctx, const TensorList& dy) const {
  const std::string& reduce = ctx.attrs.get<std::string>("reduce");
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  const Tensor& index = ctx.inputs[1];
  TensorList dx(3);
  if (reduce == "add") {
    if (ctx.needs_input_grad[0]) dx[0] = dy[0];
    if (ctx.needs_input_grad[2]) dx[2] = F::gather(dy[0], dim, index);
    return dx;
  }
  if (reduce == "none") {
    if (ctx.needs_input_grad[0]) {
      Tensor zeros = F::zeros_like(ctx.inputs[2]);
      dx[0] = F::scatter(dy[0], dim, index, zeros, "none");
    }
    if (ctx.needs_input_grad[2]) dx[2] = F::gather(dy[0], dim, index);
    return dx;
  }
  const Tensor& self = ctx.inputs[0];
  const Tensor& src = ctx.inputs[2];
  const Tensor& out = ctx.outputs[0];
  if (src->shape() != index->shape())
    throw_error<NotImplementedError>(name(), "the gradient of scatter with reduce='", reduce,
                                     "' and a src larger than the index is not implemented");
  const Scalar zero = Scalar::from_int(0), one = Scalar::from_int(1);
  if (reduce == "amax" || reduce == "amin") {
    // As PyTorch: the gradient is shared evenly by the elements (of self and src) equal to the
    // result.
    Tensor self_hit = F::to(F::compare(CompareFn::kEq, self, out), self->dtype(), std::nullopt);
    Tensor src_hit = F::to(F::compare(CompareFn::kEq, src, F::gather(out, dim, index)),
                           src->dtype(), std::nullopt);
    Tensor share = F::div(dy[0], F::scatter(self_hit, dim, index, src_hit, "add"));
    if (ctx.needs_input_grad[0]) dx[0] = F::mul(share, self_hit);
    if (ctx.needs_input_grad[2]) dx[2] = F::mul(F::gather(share, dim, index), src_hit);
    return dx;
  }
  // multiply, as PyTorch: each element's gradient is dy times the product of the others, taken
  // without dividing by a zero (a zero in self, or the only zero among the src of a position).
  if (ctx.needs_input_grad[0]) {
    Tensor masked_self = F::where(F::compare(CompareFn::kEq, self, zero), one, self);
    Tensor others = F::scatter(masked_self, dim, index, src, "multiply");
    dx[0] = F::div(F::mul(dy[0], others), masked_self);
  }
  if (ctx.needs_input_grad[2]) {
    Tensor src_zero = F::compare(CompareFn::kEq, src, zero);
    Tensor zeros_at = F::gather(F::scatter(F::zeros_like(self), dim, index,
                                           F::to(src_zero, self->dtype(), std::nullopt), "add"),
                                dim, index);
    Tensor single_zero = F::logical_and(src_zero, F::compare(CompareFn::kEq, zeros_at, one));
    Tensor without_it = F::scatter(self, dim, index, F::where(single_zero, one, src), "multiply");
    Tensor by_division =
        F::div(F::gather(F::mul(dy[0], out), dim, index), F::where(src_zero, one, src));
    dx[2] = F::where(single_zero, F::gather(F::mul(dy[0], without_it), dim, index), by_division);
  }
  return dx;
}

// ---- cat ----

std::vector<TensorMeta> Cat::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.empty()) throw_error<RuntimeError>(name(), "expected a non-empty list of Tensors");
  const int64_t dim = attrs.get<int64_t>("dim");
  if (attrs.has("stack")) {  // torch.stack: equal shapes, a new dim of in.size() slices
    const Shape& s = in[0]->shape();
    for (size_t i = 1; i < in.size(); ++i) {
      if (in[i]->shape() != s)
        throw_error<RuntimeError>("stack", "expects each tensor to be equal size, but got ",
                                  shape_str(s), " at entry 0 and ", shape_str(in[i]->shape()),
                                  " at entry ", i);
      if (in[i]->dtype() != in[0]->dtype())
        throw_error<RuntimeError>(name(), "expected all tensors to have the same dtype, got ",
                                  dtype_name(in[0]->dtype()), " and ", dtype_name(in[i]->dtype()));
    }
    Shape out = s;
    out.insert(out.begin() + dim, static_cast<int64_t>(in.size()));
    return {contiguous_meta(out, in[0]->dtype(), in[0]->device())};
  }
  Shape out = in[0]->shape();
  out[dim] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& s = in[i]->shape();
    if (in[i]->dtype() != in[0]->dtype())
      throw_error<RuntimeError>(name(), "expected all tensors to have the same dtype, got ",
                                dtype_name(in[0]->dtype()), " and ", dtype_name(in[i]->dtype()));
    if (s.size() != out.size())
      throw_error<RuntimeError>(name(), "tensors must have same number of dimensions: got ",
                                out.size(), " and ", s.size());
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int64_t>(d) != dim && s[d] != out[d])
        throw_error<RuntimeError>(name(), "sizes of tensors must match except in dimension ", dim,
                                  ". Expected size ", out[d], " but got size ", s[d],
                                  " for tensor number ", i, " in the list (shapes ",
                                  shape_str(in[0]->shape()), " and ", shape_str(s), ")");
    out[dim] += s[dim];
  }
  return {contiguous_meta(out, in[0]->dtype(), in[0]->device())};
}

TensorList Cat::grad(const GradContext& ctx, const TensorList& dy) const {
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  TensorList dx(ctx.input_metas.size());
  if (ctx.attrs.has("stack")) {
    for (size_t i = 0; i < dx.size(); ++i)
      if (ctx.needs_input_grad[i]) dx[i] = F::select(dy[0], dim, static_cast<int64_t>(i));
    return dx;
  }
  int64_t start = 0;
  for (size_t i = 0; i < dx.size(); ++i) {
    const int64_t len = ctx.input_metas[i].shape[dim];
    if (ctx.needs_input_grad[i]) dx[i] = F::narrow(dy[0], dim, start, len);
    start += len;
  }
  return dx;
}

// ---- searchsorted ----

PrimTraits SearchSorted::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> SearchSorted::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 2 && in.size() != 3) throw_error<RuntimeError>(name(), "expected 2 or 3 inputs");
  const Tensor &seq = in[0], &values = in[1];
  if (seq->dtype() != values->dtype())
    throw_error<RuntimeError>(name(), "expected boundaries and values of one dtype, got ",
                              dtype_name(seq->dtype()), " and ", dtype_name(values->dtype()));
  if (seq->ndim() == 0)
    throw_error<RuntimeError>(name(), "expected boundaries with at least one dimension");
  if (seq->ndim() > 1) {
    const Shape& s = seq->shape();
    const Shape& v = values->shape();
    if (v.size() != s.size() || !std::equal(s.begin(), s.end() - 1, v.begin()))
      throw_error<RuntimeError>(name(), "boundaries tensor should be 1 dimension or the first N-1 ",
                                "dimensions of boundaries and values must match, got ",
                                shape_str(s), " and ", shape_str(v));
  }
  if (in.size() == 3 && (in[2]->dtype() != DType::kInt64 || in[2]->shape() != seq->shape()))
    throw_error<RuntimeError>(name(), "expected an int64 sorter of the boundaries' shape ",
                              shape_str(seq->shape()), ", got ", dtype_name(in[2]->dtype()), " ",
                              shape_str(in[2]->shape()));
  const DType out =
      attrs.has("out_int32") && attrs.get<bool>("out_int32") ? DType::kInt32 : DType::kInt64;
  return {contiguous_meta(values->shape(), out, values->device())};
}

// ---- histc ----

PrimTraits Histc::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> Histc::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 1) throw_error<RuntimeError>(name(), "expected 1 input, got ", in.size());
  if (!is_floating(in[0]->dtype()))
    throw_error<NotImplementedError>(name(), "expected a floating point input, got ",
                                     dtype_name(in[0]->dtype()));
  const int64_t bins = attrs.get<int64_t>("bins");
  if (bins <= 0) throw_error<RuntimeError>(name(), "bins must be > 0, got ", bins);
  if (!(attrs.get<double>("hi") > attrs.get<double>("lo")))
    throw_error<RuntimeError>(name(), "expected max > min, got ", attrs.get<double>("lo"), " and ",
                              attrs.get<double>("hi"));
  return {contiguous_meta({bins}, in[0]->dtype(), in[0]->device())};
}

namespace prim {
const Gather& gather() {
  static const Gather instance;
  return instance;
}
const Scatter& scatter() {
  static const Scatter instance;
  return instance;
}
const Cat& cat() {
  static const Cat instance;
  return instance;
}
const SearchSorted& search_sorted() {
  static const SearchSorted instance;
  return instance;
}
const Histc& histc() {
  static const Histc instance;
  return instance;
}
}  // namespace prim

}  // namespace oneflow
