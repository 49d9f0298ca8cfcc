// Functional ops over the reductions (sum, mean and the others), the scans, sort, gather, scatter
// and cat: argument checks, dim wrapping and dtype rules in PyTorch's terms, then dispatch.
#include <algorithm>

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/functional/autocast.h"
#include "oneflow/core/functional/complex.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow::functional {

namespace {

// Sorted, wrapped, distinct dims; empty means every dim.
std::vector<int64_t> reduce_dims(const char* op, const Tensor& x,
                                 const std::vector<int64_t>& dims_in) {
  const int64_t nd = x->ndim();
  std::vector<int64_t> dims;
  if (dims_in.empty()) {
    for (int64_t d = 0; d < nd; ++d) dims.push_back(d);
    return dims;
  }
  for (int64_t d : dims_in) {
    const int64_t w = wrap_dim(op, d, nd);
    if (nd == 0) continue;
    if (std::find(dims.begin(), dims.end(), w) != dims.end())
      throw_error<RuntimeError>(op, "dim ", w, " appears multiple times in the list of dims");
    dims.push_back(w);
  }
  std::sort(dims.begin(), dims.end());
  return dims;
}

int64_t one_dim(const char* op, const Tensor& x, int64_t dim) {
  const int64_t w = wrap_dim(op, dim, x->ndim());
  return x->ndim() == 0 ? 0 : w;
}

template <ReduceFn K>
Tensor extreme(const char* op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  std::vector<int64_t> d = reduce_dims(op, x, dims);
  if (x->numel() == 0 && dims.empty())
    throw_error<RuntimeError>(op,
                              "expected a non-empty input when reducing over all dims (the "
                              "reduction of an empty set has no identity)");
  return dispatch1(prim::reduce<K>(), {x}, Attrs{{"dims", d}, {"keepdim", keepdim}});
}

template <ReduceFn K>
std::pair<Tensor, Tensor> arg_extreme(const char* op, const Tensor& x, int64_t dim, bool keepdim) {
  const int64_t d = one_dim(op, x, dim);
  TensorList out = dispatch(prim::arg_reduce<K>(), {x}, Attrs{{"dim", d}, {"keepdim", keepdim}});
  return {out[0], out[1]};
}

// An int64 contiguous index on x's device with x's rank (gather/scatter's rules).
Tensor prepare_index(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                     const Tensor* src) {
  if (index->dtype() != DType::kInt64 && index->dtype() != DType::kInt32)
    throw_error<RuntimeError>(op, "expected dtype int64 for index, got ",
                              dtype_name(index->dtype()));
  const int64_t nd = std::max<int64_t>(x->ndim(), 1);
  if (std::max<int64_t>(index->ndim(), 1) != nd)
    throw_error<RuntimeError>(op, "index tensor must have the same number of dimensions as ",
                              "input tensor (input ", shape_str(x->shape()), ", index ",
                              shape_str(index->shape()), ")");
  for (int64_t d = 0; d < index->ndim() && x->ndim() > 0; ++d) {
    if (d != dim && index->shape()[d] > x->shape()[d])
      throw_error<RuntimeError>(op, "size of dimension ", d, " of index (", index->shape()[d],
                                ") must not exceed the input's (", x->shape()[d], "): input ",
                                shape_str(x->shape()), ", index ", shape_str(index->shape()));
    if (src && (*src)->ndim() > 0 && index->shape()[d] > (*src)->shape()[d])
      throw_error<RuntimeError>(op, "size of dimension ", d, " of index (", index->shape()[d],
                                ") must not exceed src's (", (*src)->shape()[d], ")");
  }
  return contiguous(to(index, DType::kInt64, x->device()));
}

}  // namespace

Tensor prod(const Tensor& x_lo, std::optional<int64_t> dim, bool keepdim,
            std::optional<DType> dtype) {
  if (complex_ops::any(x_lo)) [[unlikely]]
    return complex_ops::prod(x_lo, dim, keepdim, dtype);
  const Tensor x_in = autocast::to_float(x_lo);  // in PyTorch's autocast float32 lists
  DType out = dtype.value_or(is_integral(x_in->dtype(), true) ? DType::kInt64 : x_in->dtype());
  Tensor x = to(x_in, out, std::nullopt);
  std::vector<int64_t> dims =
      dim ? reduce_dims("prod", x, {*dim}) : reduce_dims("prod", x, std::vector<int64_t>{});
  return dispatch1(prim::reduce<ReduceFn::kProd>(), {x},
                   Attrs{{"dims", dims}, {"keepdim", keepdim}});
}

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme<ReduceFn::kMax>("amax", x, dims, keepdim);
}

Tensor vector_norm2(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return dispatch1(
      prim::vector_norm2(), {x},
      Attrs{{"dims", reduce_dims("linalg_vector_norm", x, dims)}, {"keepdim", keepdim}});
}

Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme<ReduceFn::kMin>("amin", x, dims, keepdim);
}

std::pair<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return arg_extreme<ReduceFn::kMax>("max", x, dim, keepdim);
}

std::pair<Tensor, Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return arg_extreme<ReduceFn::kMin>("min", x, dim, keepdim);
}

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (x->dtype() == DType::kBool)  // max/min accept bool; PyTorch's arg forms do not
    throw_error<RuntimeError>("argmax", "does not support bool input");
  if (!dim) {
    if (x->numel() == 0)
      throw_error<IndexError>("argmax",
                              "expected reduction dim to be specified for an empty input "
                              "(argmax of an empty tensor)");
    Tensor i = arg_extreme<ReduceFn::kMax>("argmax", reshape(x, {x->numel()}), 0, false).second;
    return keepdim ? reshape(i, Shape(x->ndim(), 1)) : i;
  }
  return arg_extreme<ReduceFn::kMax>("argmax", x, *dim, keepdim).second;
}

Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (x->dtype() == DType::kBool)  // max/min accept bool; PyTorch's arg forms do not
    throw_error<RuntimeError>("argmin", "does not support bool input");
  if (!dim) {
    if (x->numel() == 0)
      throw_error<IndexError>("argmin",
                              "expected reduction dim to be specified for an empty input "
                              "(argmin of an empty tensor)");
    Tensor i = arg_extreme<ReduceFn::kMin>("argmin", reshape(x, {x->numel()}), 0, false).second;
    return keepdim ? reshape(i, Shape(x->ndim(), 1)) : i;
  }
  return arg_extreme<ReduceFn::kMin>("argmin", x, *dim, keepdim).second;
}

Tensor all(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor b = to(x, DType::kBool, std::nullopt);
  if (b->numel() == 0) {
    Tensor s = sum(b, dims, keepdim);
    return compare(CompareFn::kEq, s, Scalar::from_int(0));
  }
  return dispatch1(prim::reduce<ReduceFn::kMin>(), {b},
                   Attrs{{"dims", reduce_dims("all", b, dims)}, {"keepdim", keepdim}});
}

Tensor any(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor b = to(x, DType::kBool, std::nullopt);
  if (b->numel() == 0) {
    Tensor s = sum(b, dims, keepdim);
    return compare(CompareFn::kNe, s, Scalar::from_int(0));
  }
  return dispatch1(prim::reduce<ReduceFn::kMax>(), {b},
                   Attrs{{"dims", reduce_dims("any", b, dims)}, {"keepdim", keepdim}});
}

namespace {
Tensor scan(const Primitive& p, const char* op, const Tensor& x_in, int64_t dim,
            std::optional<DType> dtype) {
  DType out = dtype.value_or(is_integral(x_in->dtype(), true) ? DType::kInt64 : x_in->dtype());
  Tensor x = to(x_in, out, std::nullopt);
  return dispatch1(p, {x}, Attrs{{"dim", one_dim(op, x, dim)}});
}
}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  if (complex_ops::any(x)) [[unlikely]]
    return complex_ops::cumsum(x, dim, dtype);
  return scan(prim::cumsum(), "cumsum", x, dim, dtype);
}

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  if (complex_ops::any(x)) [[unlikely]]
    return complex_ops::cumprod(x, dim, dtype);
  return scan(prim::cumprod(), "cumprod", x, dim, dtype);
}

std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) {
  TensorList out =
      dispatch(prim::cum_extreme<ReduceFn::kMax>(), {x}, Attrs{{"dim", one_dim("cummax", x, dim)}});
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) {
  TensorList out =
      dispatch(prim::cum_extreme<ReduceFn::kMin>(), {x}, Attrs{{"dim", one_dim("cummin", x, dim)}});
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> mode(const Tensor& x, int64_t dim, bool keepdim) {
  TensorList out =
      dispatch(prim::mode(), {x}, Attrs{{"dim", one_dim("mode", x, dim)}, {"keepdim", keepdim}});
  return {out[0], out[1]};
}

TensorList batch_norm_train(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  const int64_t c = x->ndim() > 1 ? x->shape()[1] : 0;
  const CreationOptions opts{x->dtype(), x->device(), ""};
  Tensor w = weight ? contiguous(weight) : global::broadcast_like(x, ones({c}, opts));
  Tensor b = bias ? contiguous(bias) : global::broadcast_like(x, zeros({c}, opts));
  return dispatch(prim::batch_norm(), {contiguous(x), w, b}, Attrs{{"eps", eps}});
}

Tensor batch_norm_inference(const Tensor& x, const Tensor& mean, const Tensor& var,
                            const Tensor& weight, const Tensor& bias, double eps) {
  const int64_t c = x->ndim() > 1 ? x->shape()[1] : 0;
  const CreationOptions opts{x->dtype(), x->device(), ""};
  Tensor w = weight ? contiguous(weight) : global::broadcast_like(x, ones({c}, opts));
  Tensor b = bias ? contiguous(bias) : global::broadcast_like(x, zeros({c}, opts));
  return dispatch1(prim::batch_norm_inference(),
                   {contiguous(x), contiguous(mean), contiguous(var), w, b}, Attrs{{"eps", eps}});
}

Tensor layer_norm(const Tensor& x_lo, int64_t size, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const Tensor x = autocast::to_float(x_lo, /*cuda_only=*/true);
  const CreationOptions opts{x->dtype(), x->device(), ""};
  Tensor w = weight ? contiguous(weight) : global::broadcast_like(x, ones({size}, opts));
  Tensor b = bias ? contiguous(bias) : global::broadcast_like(x, zeros({size}, opts));
  TensorList out =
      dispatch(prim::layer_norm(), {contiguous(x), w, b}, Attrs{{"size", size}, {"eps", eps}});
  return out[0];
}

Tensor group_norm(const Tensor& x_lo, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const Tensor x = autocast::to_float(x_lo, /*cuda_only=*/true);
  const int64_t c = x->ndim() > 1 ? x->shape()[1] : 0;
  const CreationOptions opts{x->dtype(), x->device(), ""};
  Tensor w = weight ? contiguous(weight) : global::broadcast_like(x, ones({c}, opts));
  Tensor b = bias ? contiguous(bias) : global::broadcast_like(x, zeros({c}, opts));
  return dispatch(prim::group_norm(), {contiguous(x), w, b},
                  Attrs{{"num_groups", num_groups}, {"eps", eps}})[0];
}

void adam_update_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                  const Tensor& exp_avg_sq, double lr, double beta1, double beta2, double eps,
                  double weight_decay, bool decoupled, double bias_correction1,
                  double bias_correction2) {
  dispatch(prim::adam_update(), {param, contiguous(grad), exp_avg, exp_avg_sq},
           Attrs{{"lr", lr},
                 {"beta1", beta1},
                 {"beta2", beta2},
                 {"eps", eps},
                 {"weight_decay", weight_decay},
                 {"decoupled", decoupled},
                 {"bias_correction1", bias_correction1},
                 {"bias_correction2", bias_correction2}});
  for (const Tensor& t : {param, exp_avg, exp_avg_sq}) t->bump_version();
}

void sgd_update_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, double lr,
                 double momentum, double dampening, double weight_decay, bool nesterov,
                 bool first) {
  TensorList in = {param, contiguous(grad)};
  if (momentum_buffer) in.push_back(momentum_buffer);
  dispatch(prim::sgd_update(), in,
           Attrs{{"lr", lr},
                 {"momentum", momentum},
                 {"dampening", dampening},
                 {"weight_decay", weight_decay},
                 {"nesterov", nesterov},
                 {"first", first}});
  param->bump_version();
  if (momentum_buffer) momentum_buffer->bump_version();
}

Tensor inverse(const Tensor& x) { return dispatch1(prim::inverse(), {x}); }

Tensor det(const Tensor& x) { return dispatch1(prim::det(), {x}); }

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  TensorList out = dispatch(prim::sort(), {x},
                            Attrs{{"dim", one_dim("sort", x, dim)}, {"descending", descending}});
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim_in, bool largest) {
  const int64_t dim = one_dim("topk", x, dim_in);
  const int64_t n = x->ndim() == 0 ? 1 : x->shape()[dim];
  if (k < 0 || k > n)
    throw_error<RuntimeError>("topk", "k (", k, ") is out of range for dimension ", dim_in,
                              " of size ", n);
  TensorList out =
      dispatch(prim::sort(), {x}, Attrs{{"dim", dim}, {"descending", largest}, {"k", k}});
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim_in, bool nan_wins) {
  const int64_t dim = one_dim("kthvalue", x, dim_in);
  const int64_t n = x->ndim() == 0 ? 1 : x->shape()[dim];
  if (k < 1 || k > n)
    throw_error<RuntimeError>("kthvalue", "k (", k, ") is out of range for dimension ", dim_in,
                              " of size ", n);
  TensorList out = dispatch(
      prim::sort(), {x},
      Attrs{
          {"dim", dim}, {"descending", false}, {"k", k}, {"select", true}, {"nan_wins", nan_wins}});
  return {out[0], out[1]};
}

Tensor gather(const Tensor& x, int64_t dim_in, const Tensor& index, const std::string& target_of) {
  const int64_t dim = one_dim("gather", x, dim_in);
  if (is_complex(x->dtype())) [[unlikely]] {  // on the pairs, the index repeated for both parts
    Shape pairs = index->shape();
    pairs.push_back(2);
    return complex_ops::from_pairs(
        gather(view_as_real(x), dim, expand(unsqueeze(index, -1), pairs), target_of));
  }
  Tensor idx = prepare_index("gather", x, dim, index, nullptr);
  Attrs attrs{{"dim", dim}};
  if (!target_of.empty()) attrs.set("target_of", target_of);
  return dispatch1(prim::gather(), {x, idx}, attrs);
}

Tensor histc(const Tensor& x, int64_t bins, double lo, double hi) {
  return dispatch1(prim::histc(), {contiguous(x)}, Attrs{{"bins", bins}, {"lo", lo}, {"hi", hi}});
}

Tensor searchsorted(const Tensor& boundaries, const Tensor& values, bool right, bool out_int32,
                    const Tensor& sorter) {
  if (boundaries->dtype() == DType::kBool || values->dtype() == DType::kBool)
    throw_error<NotImplementedError>("searchsorted", "bool boundaries or values are not supported");
  if (sorter && sorter->dtype() != DType::kInt64)
    throw_error<RuntimeError>("searchsorted", "sorter must be a tensor of long dtype, got ",
                              dtype_name(sorter->dtype()));
  const DType dtype = result_type({boundaries, values});
  TensorList in = {contiguous(to(boundaries, dtype, boundaries->device())),
                   contiguous(to(values, dtype, boundaries->device()))};
  if (sorter) in.push_back(contiguous(to(sorter, std::nullopt, boundaries->device())));
  return dispatch1(prim::search_sorted(), in, Attrs{{"right", right}, {"out_int32", out_int32}});
}

Tensor scatter(const Tensor& self, int64_t dim_in, const Tensor& index, const Tensor& src_in,
               const std::string& reduce) {
  const int64_t dim = one_dim("scatter", self, dim_in);
  if (src_in->dtype() != self->dtype())
    throw_error<RuntimeError>("scatter", "expected self and src to have the same dtype, got ",
                              dtype_name(self->dtype()), " and ", dtype_name(src_in->dtype()));
  Tensor src = to(src_in, std::nullopt, self->device());
  if (is_complex(self->dtype()) && self->ndim() > 0) [[unlikely]] {
    // On the real pairs, the index repeated along their trailing dim of 2 (a complex product
    // is not one of the pairs).
    if (reduce == "multiply")
      throw_error<TypeError>("scatter", "reduce='multiply' does not support ",
                             dtype_name(self->dtype()), " tensors yet");
    Shape pairs = index->shape();
    pairs.push_back(2);
    const Tensor idx = expand(unsqueeze(index, index->ndim()), pairs);
    return view_as_complex(scatter(view_as_real(self), dim, idx, view_as_real(src), reduce));
  }
  Tensor idx = prepare_index("scatter", self, dim, index, &src);
  return dispatch1(prim::scatter(), {self, idx, src}, Attrs{{"dim", dim}, {"reduce", reduce}});
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value,
               const std::string& reduce) {
  Tensor src =
      expand(global::broadcast_like(index, scalar_tensor(value, self->dtype(), self->device())),
             index->shape());
  return scatter(self, dim, index, src, reduce);
}

Tensor cat(const TensorList& xs_in, int64_t dim_in) {
  if (xs_in.empty()) throw_error<ValueError>("cat", "expected a non-empty list of Tensors");
  TensorList xs;
  for (const Tensor& t : xs_in)
    if (!(t->ndim() == 1 && t->numel() == 0)) xs.push_back(t);  // legacy empty tensors
  if (xs.empty()) return xs_in[0];
  for (const Tensor& t : xs)
    if (t->ndim() == 0)
      throw_error<RuntimeError>("cat", "zero-dimensional tensor cannot be concatenated");
  for (const Tensor& t : xs)
    if (is_complex(t->dtype())) [[unlikely]]
      return complex_ops::cat(xs, dim_in);
  const int64_t dim = wrap_dim("cat", dim_in, xs[0]->ndim());
  const DType dt = result_type(xs);
  for (Tensor& t : xs) t = to(t, dt, std::nullopt);
  if (xs.size() == 1) return clone(xs[0]);
  return dispatch1(prim::cat(), xs, Attrs{{"dim", dim}});
}

// ---- sum, mean, sum_to ----

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim,
           std::optional<DType> dtype) {
  if (complex_ops::any(x)) [[unlikely]]
    return complex_ops::sum(x, dims_in, keepdim, dtype);
  const int64_t nd = x->ndim();
  std::vector<int64_t> dims;
  if (dims_in.empty()) {
    for (int64_t d = 0; d < nd; ++d) dims.push_back(d);
  } else {
    for (int64_t d : dims_in) {
      int64_t w = wrap_dim("sum", d, nd);
      if (nd == 0) continue;
      if (std::find(dims.begin(), dims.end(), w) != dims.end())
        throw_error<RuntimeError>("sum", "dim ", w, " appears multiple times in the list of dims");
      dims.push_back(w);
    }
    std::sort(dims.begin(), dims.end());
  }
  DType out = dtype.value_or(is_integral(x->dtype(), true) ? DType::kInt64 : x->dtype());
  // With dtype, each element is cast before the sum, as PyTorch (float 1.6 sums as int 1).
  const Tensor in = dtype && *dtype != x->dtype() ? to(x, *dtype, std::nullopt) : x;
  return dispatch1(prim::reduce_sum(), {in},
                   Attrs{{"dims", dims}, {"keepdim", keepdim}, {"dtype", out}});
}

Tensor mean(const Tensor& x_in, const std::vector<int64_t>& dims, bool keepdim,
            std::optional<DType> dtype) {
  if (complex_ops::any(x_in)) [[unlikely]]
    return complex_ops::mean(x_in, dims, keepdim, dtype);
  Tensor x = dtype ? to(x_in, *dtype, std::nullopt) : x_in;
  if (!is_floating(x->dtype()))
    throw_error<RuntimeError>("mean",
                              "could not infer output dtype. Input dtype must be either "
                              "a floating point or complex dtype. Got: ",
                              dtype_name(x->dtype()));
  int64_t count = 1;
  if (dims.empty()) {
    count = x->numel();
  } else {
    for (int64_t d : dims) count *= x->ndim() == 0 ? 1 : x->shape()[wrap_dim("mean", d, x->ndim())];
  }
  const Scalar n = Scalar::from_double(static_cast<double>(count));
  // 16-bit floats sum and divide in float32 (PyTorch's accumulation type), then round once: a
  // float16 sum of [60000, 60000] overflowed.
  if (x->dtype() == DType::kFloat16 || x->dtype() == DType::kBFloat16)
    return to(div(sum(x, dims, keepdim, DType::kFloat32), n), x->dtype(), std::nullopt);
  return div(sum(x, dims, keepdim), n);
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x->shape() == shape) return x;
  const int64_t nd = x->ndim(), lead = nd - static_cast<int64_t>(shape.size());
  if (lead < 0)
    throw_error<RuntimeError>("sum_to", "cannot sum shape ", shape_str(x->shape()), " to ",
                              shape_str(shape));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < nd; ++d)
    if (d < lead || (shape[d - lead] == 1 && x->shape()[d] != 1)) dims.push_back(d);
  Tensor s = dims.empty() ? x : sum(x, dims, true);
  return reshape(s, shape);
}

}  // namespace oneflow::functional
