// Meta inference, traits and gradient rules of the reductions beyond sum (prod, amax, amin, max
// and min with indices), the scans (cumsum, cumprod) and sort.
#include <algorithm>

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

// The shape after reducing `dims` (sorted, wrapped) of `in`.
Shape reduced_shape(const Shape& in, const std::vector<int64_t>& dims, bool keepdim) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced)
      out.push_back(in[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// `g` (the gradient of a reduction's output) reshaped so it broadcasts against the input.
Tensor unsqueeze_reduced(const Tensor& g, const Shape& in_shape, const std::vector<int64_t>& dims) {
  Shape kept = in_shape;
  for (int64_t d : dims) kept[d] = 1;
  return F::reshape(g, kept);
}

}  // namespace

// ---- Reduce<F>: prod, amax, amin ----

template <ReduceFn K>
const char* Reduce<K>::name() const {
  return K == ReduceFn::kProd ? "prod" : (K == ReduceFn::kMax ? "amax" : "amin");
}

template <ReduceFn K>
PrimTraits Reduce<K>::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

template <ReduceFn K>
std::vector<TensorMeta> Reduce<K>::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 1) throw_error<RuntimeError>(name(), "expected 1 input");
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  if (K != ReduceFn::kProd)
    for (int64_t d : dims)
      if (in[0]->shape()[d] == 0)
        throw_error<IndexError>(name(), "expected reduction dim ", d,
                                " to have non-zero size (the reduction of an empty set has "
                                "no identity)");
  return {contiguous_meta(reduced_shape(in[0]->shape(), dims, attrs.get<bool>("keepdim")),
                          in[0]->dtype(), in[0]->device())};
}

template <ReduceFn K>
TensorList Reduce<K>::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor& x = ctx.inputs[0];
  const auto& dims = ctx.attrs.get<std::vector<int64_t>>("dims");
  const Shape& shape = ctx.input_metas[0].shape;
  Tensor g = unsqueeze_reduced(dy[0], shape, dims);
  Tensor y = unsqueeze_reduced(ctx.outputs[0], shape, dims);
  Tensor zero = F::zeros({}, CreationOptions{x->dtype(), x->device(), ""});
  if (K != ReduceFn::kProd) {
    // The gradient is shared evenly between the elements equal to the extreme (PyTorch's rule);
    // a NaN extreme is the NaN elements' (x == y is false there).
    Tensor hit = F::compare(CompareFn::kEq, x, y);
    if (is_floating(x->dtype()))
      hit = F::logical_or(
          hit, F::logical_and(F::compare(CompareFn::kNe, x, x), F::compare(CompareFn::kNe, y, y)));
    Tensor count = unsqueeze_reduced(F::sum(hit, dims, false, x->dtype()), shape, dims);
    return {F::where(hit, F::div(g, count), zero)};
  }
  // d prod / d x_i = product of the others: y / x_i without zeros; with exactly one zero, only
  // that element's gradient is non-zero (the product of the rest); with more, all are zero.
  Tensor is_zero = F::compare(CompareFn::kEq, x, Scalar::from_int(0));
  Tensor zeros = unsqueeze_reduced(F::sum(is_zero, dims, false, DType::kInt64), shape, dims);
  Tensor one = F::ones({}, CreationOptions{x->dtype(), x->device(), ""});
  Tensor rest =
      unsqueeze_reduced(dispatch1(*this, {F::where(is_zero, one, x)}, ctx.attrs), shape, dims);
  Tensor no_zero_grad = F::div(y, F::where(is_zero, one, x));
  Tensor one_zero = F::compare(CompareFn::kEq, zeros, Scalar::from_int(1));
  Tensor none = F::compare(CompareFn::kEq, zeros, Scalar::from_int(0));
  Tensor d = F::where(none, no_zero_grad, F::where(F::logical_and(one_zero, is_zero), rest, zero));
  return {F::mul(g, d)};
}

// ---- VectorNorm2 (float32 and float64; half types are converted by the caller) ----

PrimTraits VectorNorm2::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> VectorNorm2::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 1) throw_error<RuntimeError>(name(), "expected 1 input");
  if (in[0]->dtype() != DType::kFloat32 && in[0]->dtype() != DType::kFloat64)
    throw_error<RuntimeError>(name(), "expected a float32 or float64 input, got ",
                              dtype_name(in[0]->dtype()));
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  return {contiguous_meta(reduced_shape(in[0]->shape(), dims, attrs.get<bool>("keepdim")),
                          in[0]->dtype(), in[0]->device())};
}

TensorList VectorNorm2::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor& x = ctx.inputs[0];
  const auto& dims = ctx.attrs.get<std::vector<int64_t>>("dims");
  const Shape& shape = ctx.input_metas[0].shape;
  const Tensor norm = unsqueeze_reduced(ctx.outputs[0], shape, dims);
  const Tensor g = unsqueeze_reduced(dy[0], shape, dims);
  const Tensor zero = F::compare(CompareFn::kEq, norm, Scalar::from_int(0));
  return {F::mul(x, F::where(zero, Scalar::from_int(0), F::div(g, norm)))};
}

// ---- ArgReduce<F>: max / min along one dim with indices ----

template <ReduceFn K>
const char* ArgReduce<K>::name() const {
  return K == ReduceFn::kMax ? "max" : "min";
}

template <ReduceFn K>
PrimTraits ArgReduce<K>::traits() const {
  PrimTraits t;
  t.saves_outputs = true;
  return t;
}

template <ReduceFn K>
std::vector<TensorMeta> ArgReduce<K>::infer(const TensorList& in, const Attrs& attrs) const {
  if (in.size() != 1) throw_error<RuntimeError>(name(), "expected 1 input");
  const int64_t dim = attrs.get<int64_t>("dim");
  const Shape& s = in[0]->shape();
  if (!s.empty() && s[dim] == 0)
    throw_error<IndexError>(name(), "expected reduction dim ", dim,
                            " to have non-zero size, got shape ", shape_str(s));
  const std::vector<int64_t> dims = s.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{dim};
  Shape out = reduced_shape(s, dims, attrs.get<bool>("keepdim"));
  return {contiguous_meta(out, in[0]->dtype(), in[0]->device()),
          contiguous_meta(out, DType::kInt64, in[0]->device())};
}

template <ReduceFn K>
TensorList ArgReduce<K>::grad(const GradContext& ctx, const TensorList& dy) const {
  const Shape& shape = ctx.input_metas[0].shape;
  if (shape.empty()) return {dy[0]};
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  Tensor g = dy[0], idx = ctx.outputs[1];
  if (!ctx.attrs.get<bool>("keepdim")) {
    g = F::unsqueeze(g, dim);
    idx = F::unsqueeze(idx, dim);
  }
  Tensor zeros =
      global::broadcast_like(g, F::zeros(shape, CreationOptions{g->dtype(), g->device(), ""}));
  return {F::scatter(zeros, dim, idx, g, "add")};
}

// ---- scans ----

namespace {
void check_scan(const char* op, const TensorList& in, const Attrs& attrs) {
  if (in.size() != 1) throw_error<RuntimeError>(op, "expected 1 input");
  const int64_t dim = attrs.get<int64_t>("dim");
  if (dim < 0 || dim >= std::max<int64_t>(in[0]->ndim(), 1))
    throw_error<IndexError>(op, "dim ", dim, " out of range");
}

// sum_{j >= i} g_j along dim: the reverse cumulative sum, as total - cumsum + g.
Tensor reverse_cumsum(const Tensor& g, int64_t dim) {
  if (g->ndim() == 0) return g;
  Tensor total = F::sum(g, {dim}, true);
  return F::add(F::sub(total, F::cumsum(g, dim)), g);
}
}  // namespace

std::vector<TensorMeta> Cumsum::infer(const TensorList& in, const Attrs& attrs) const {
  check_scan(name(), in, attrs);
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList Cumsum::grad(const GradContext& ctx, const TensorList& dy) const {
  return {reverse_cumsum(dy[0], ctx.attrs.get<int64_t>("dim"))};
}

PrimTraits Cumprod::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> Cumprod::infer(const TensorList& in, const Attrs& attrs) const {
  check_scan(name(), in, attrs);
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList Cumprod::grad(const GradContext& ctx, const TensorList& dy) const {
  // dx_i = sum_{j >= i} dy_j y_j / x_i before the first zero of the line, where x_i != 0. At the
  // first zero z, y_j / x_z is the product of the other factors: the cumprod y' of the line with
  // x_z set to 1, so dx_z = sum_{j >= z} dy_j y'_j. After it every y_j holds x_z: dx_i = 0. (As
  // PyTorch; the plain quotient gave NaN and inf wherever the line had a zero.)
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  const Tensor &x = ctx.inputs[0], &y = ctx.outputs[0];
  const Tensor zero = F::zeros({}, CreationOptions{x->dtype(), x->device(), ""});
  const Tensor one = F::ones({}, CreationOptions{x->dtype(), x->device(), ""});
  const Tensor is_zero = F::compare(CompareFn::kEq, x, zero);
  const Tensor zeros_so_far = F::cumsum(is_zero, dim, DType::kInt64);
  const Tensor before = F::compare(CompareFn::kEq, zeros_so_far, Scalar::from_int(0));
  const Tensor first =
      F::logical_and(is_zero, F::compare(CompareFn::kEq, zeros_so_far, Scalar::from_int(1)));
  const Tensor quotient = F::div(reverse_cumsum(F::mul(dy[0], y), dim), F::where(before, x, one));
  const Tensor others = F::cumprod(F::where(first, one, x), dim);
  const Tensor at_zero = reverse_cumsum(F::mul(dy[0], others), dim);
  return {F::where(before, quotient, F::where(first, at_zero, zero))};
}

// ---- sort ----

PrimTraits Sort::traits() const {
  PrimTraits t;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> Sort::infer(const TensorList& in, const Attrs& attrs) const {
  check_scan(name(), in, attrs);
  Shape shape = in[0]->shape();
  if (attrs.has("k") && !shape.empty()) {
    const int64_t dim = attrs.get<int64_t>("dim"), k = attrs.get<int64_t>("k");
    const bool select = attrs.has("select") && attrs.get<bool>("select");
    if (k < 0 || k > shape[dim] || (select && k == 0))
      throw_error<RuntimeError>(name(), "k (", k, ") is out of range for dimension ", dim,
                                " of size ", shape[dim]);
    shape[dim] = select ? 1 : k;
  }
  return {contiguous_meta(shape, in[0]->dtype(), in[0]->device()),
          contiguous_meta(shape, DType::kInt64, in[0]->device())};
}

TensorList Sort::grad(const GradContext& ctx, const TensorList& dy) const {
  const Shape& shape = ctx.input_metas[0].shape;
  if (shape.empty()) return {dy[0]};
  Tensor zeros = global::broadcast_like(
      dy[0], F::zeros(shape, CreationOptions{dy[0]->dtype(), dy[0]->device(), ""}));
  return {F::scatter(zeros, ctx.attrs.get<int64_t>("dim"), ctx.outputs[1], dy[0], "none")};
}

template class Reduce<ReduceFn::kProd>;
template class Reduce<ReduceFn::kMax>;
template class Reduce<ReduceFn::kMin>;
template class ArgReduce<ReduceFn::kMax>;
template class ArgReduce<ReduceFn::kMin>;

namespace prim {
template <ReduceFn F>
const Reduce<F>& reduce() {
  static const Reduce<F> instance;
  return instance;
}
template <ReduceFn F>
const ArgReduce<F>& arg_reduce() {
  static const ArgReduce<F> instance;
  return instance;
}
template const Reduce<ReduceFn::kProd>& reduce<ReduceFn::kProd>();
template const Reduce<ReduceFn::kMax>& reduce<ReduceFn::kMax>();
template const Reduce<ReduceFn::kMin>& reduce<ReduceFn::kMin>();
template const ArgReduce<ReduceFn::kMax>& arg_reduce<ReduceFn::kMax>();
template const ArgReduce<ReduceFn::kMin>& arg_reduce<ReduceFn::kMin>();
const VectorNorm2& vector_norm2() {
  static const VectorNorm2 instance;
  return instance;
}
const Cumsum& cumsum() {
  static const Cumsum instance;
  return instance;
}
const Cumprod& cumprod() {
  static const Cumprod instance;
  return instance;
}
const Sort& sort() {
  static const Sort instance;
  return instance;
}
}  // namespace prim

}  // namespace oneflow
