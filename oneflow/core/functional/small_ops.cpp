// Small ops on their one-pass primitives or short C++ paths (functional/small_ops.h).
#include "oneflow/core/functional/small_ops.h"
#include "oneflow/core/framework/global.h"

#include <algorithm>

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/autocast.h"
#include "oneflow/core/graph/graph.h"
#include "oneflow/core/ops/small_ops_primitives.h"

namespace oneflow::functional {

namespace {

// A 0-dim integer tensor's value, read on the host (a synchronisation point, as in PyTorch).
// The reductions feeding it run on the stream: a scan on this thread would compete with the
// stream's threads for the cores.
int64_t host_value(const Tensor& x) {
  Tensor t = to(x, DType::kInt64, Device{});
  if (t->global()) t = global::whole_value(t);
  return *t->read_as<int64_t>();
}
int64_t host_max(const Tensor& x) { return host_value(amax(x)); }
int64_t host_min(const Tensor& x) { return host_value(amin(x)); }

}  // namespace

Tensor one_hot(const Tensor& index, int64_t num_classes) {
  if (index->dtype() != DType::kInt64)
    throw_error<RuntimeError>("one_hot", "is only applicable to index tensor of type int64, got ",
                              dtype_name(index->dtype()));
  if (num_classes < 0) {
    if (index->numel() == 0)
      throw_error<RuntimeError>("one_hot",
                                "can not infer total number of classes from empty tensor");
    graph::check_not_tracing("one_hot without num_classes (a shape read from the values)");
    num_classes = std::max<int64_t>(host_max(index) + 1, 0);
  }
  if (index->device().type == DeviceType::kCPU)  // one pass that also tests the range
    return dispatch1(prim::one_hot(), {contiguous(index)}, Attrs{{"num_classes", num_classes}});
  if (index->numel() && index->device().type != DeviceType::kMeta) {  // meta: no values
    const int64_t lo = host_min(index), hi = host_max(index);
    if (lo < 0) throw_error<RuntimeError>("one_hot", "class values must be non-negative, got ", lo);
    if (hi >= num_classes)
      throw_error<RuntimeError>("one_hot", "class values must be smaller than num_classes, got ",
                                hi, " with num_classes=", num_classes);
  }
  const Tensor classes = arange(Scalar::from_int(0), Scalar::from_int(num_classes),
                                Scalar::from_int(1), DType::kInt64, index->device());
  return to(compare(CompareFn::kEq, unsqueeze(index, -1), classes), DType::kInt64, std::nullopt);
}

Tensor bincount(const Tensor& x, const Tensor& weights_in, int64_t minlength) {
  if (x->dtype() == DType::kBool || is_floating(x->dtype()))
    throw_error<NotImplementedError>("bincount", "expected an integer input, got ",
                                     dtype_name(x->dtype()));
  if (x->ndim() != 1)
    throw_error<RuntimeError>("bincount", "only supports 1-d non-negative integral inputs, got a ",
                              x->ndim(), "-d tensor");
  if (minlength < 0)
    throw_error<RuntimeError>("bincount", "minlength should be >= 0, got ", minlength);
  if (weights_in && (weights_in->ndim() != 1 || weights_in->shape()[0] != x->shape()[0]))
    throw_error<RuntimeError>("bincount",
                              "weights should be 1-d and have the same length as input");
  const CreationOptions opts{DType::kInt64, x->device(), ""};
  if (x->numel() == 0) return zeros({minlength}, opts);  // as PyTorch: int64, weights or not
  graph::check_not_tracing("bincount (a shape read from the values)");
  const int64_t length = std::max(host_max(x) + 1, minlength);
  // As PyTorch: float32 and float64 weights keep their dtype, all others sum in float64.
  Tensor weights = weights_in;
  if (weights && weights->dtype() != DType::kFloat32 && weights->dtype() != DType::kFloat64)
    weights = to(weights, DType::kFloat64, std::nullopt);
  if (x->device().type == DeviceType::kCPU) {  // one pass that also tests the range
    TensorList in{contiguous(x)};
    if (weights) in.push_back(contiguous(weights));
    return dispatch1(prim::bincount(), in, Attrs{{"length", length}});
  }
  const int64_t lo = host_min(x);
  if (lo < 0) throw_error<RuntimeError>("bincount", "input must be non-negative, got ", lo);
  const Tensor src = weights ? weights : ones(x->shape(), opts);
  const Tensor out = zeros({length}, CreationOptions{src->dtype(), x->device(), ""});
  return scatter(out, 0, to(x, DType::kInt64, std::nullopt), src, "add");
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim_in) {
  if (a->dtype() == DType::kBool || b->dtype() == DType::kBool)
    throw_error<NotImplementedError>("cross", "expected numeric inputs, got ",
                                     dtype_name(a->dtype()), " and ", dtype_name(b->dtype()));
  if (a->ndim() != b->ndim())
    throw_error<RuntimeError>("cross", "inputs must have the same number of dimensions, got ",
                              a->ndim(), " and ", b->ndim());
  if (a->dtype() != b->dtype())  // PyTorch does not promote here either
    throw_error<RuntimeError>("cross", "expected both inputs to have the same dtype, got ",
                              dtype_name(a->dtype()), " and ", dtype_name(b->dtype()));
  const Shape shape = broadcast_shapes("cross", a->shape(), b->shape());
  int64_t dim = 0;
  if (dim_in) {
    if (shape.empty())  // wrap_dim takes 0 and -1 for 0-d tensors; cross needs a real dim
      throw_error<IndexError>("cross", "Dimension specified as ", *dim_in,
                              " but tensor has no dimensions");
    dim = wrap_dim("cross", *dim_in, static_cast<int64_t>(shape.size()));
  } else {  // torch.cross without dim: the first dim of size 3
    const auto it = std::find(shape.begin(), shape.end(), int64_t(3));
    if (it == shape.end())
      throw_error<RuntimeError>("cross", "no dimension of size 3 in input of shape ",
                                shape_str(a->shape()));
    dim = it - shape.begin();
  }
  if (a->shape()[dim] != 3 || b->shape()[dim] != 3)
    throw_error<RuntimeError>("cross", "inputs dimension ", dim, " must have length 3, got ",
                              a->shape()[dim], " and ", b->shape()[dim]);
  if (a->device().type == DeviceType::kCPU) {
    auto prepare = [&](const Tensor& t) {
      return contiguous(t->shape() != shape ? expand(t, shape) : t);
    };
    return dispatch1(prim::cross(), {prepare(a), prepare(b)}, Attrs{{"dim", dim}});
  }
  // elsewhere: from the three components' products
  auto part = [&](const Tensor& t, int64_t i) { return narrow(t, dim, i, 1); };
  const Tensor a0 = part(a, 0), a1 = part(a, 1), a2 = part(a, 2);
  const Tensor b0 = part(b, 0), b1 = part(b, 1), b2 = part(b, 2);
  return cat(
      {sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)), sub(mul(a0, b1), mul(a1, b0))},
      dim);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  if (a->ndim() != 1 || b->ndim() != 1)
    throw_error<RuntimeError>("dot", "1D tensors expected, but got ", a->ndim(), "D and ",
                              b->ndim(), "D tensors");
  if (a->shape()[0] != b->shape()[0])
    throw_error<RuntimeError>("dot", "inconsistent tensor size, expected tensor [", a->shape()[0],
                              "] and src [", b->shape()[0],
                              "] to have the same number of elements");
  if (a->dtype() != b->dtype())
    throw_error<RuntimeError>("dot", "expected both vectors to have same dtype, but found ",
                              dtype_name(a->dtype()), " and ", dtype_name(b->dtype()));
  if (a->device().type != DeviceType::kCPU || is_complex(a->dtype())) return matmul(a, b);
  return dispatch1(prim::dot(), {contiguous(a), contiguous(b)});
}

Tensor outer(const Tensor& a, const Tensor& b) {
  if (a->ndim() != 1)
    throw_error<RuntimeError>("outer", "expected 1-D argument input, but got ", a->ndim(), "-D");
  if (b->ndim() != 1)
    throw_error<RuntimeError>("outer", "expected 1-D argument vec2, but got ", b->ndim(), "-D");
  if (is_complex(a->dtype()) || is_complex(b->dtype())) [[unlikely]]
    return mul(unsqueeze(a, 1), unsqueeze(b, 0));
  const bool cpu = a->device().type == DeviceType::kCPU && b->device().type == DeviceType::kCPU;
  // The one-pass kernel saves dispatches on small products; large ones are memory bound and the
  // broadcasting elementwise driver writes them about twice as fast (1024 x 1024: 39 vs 83 us).
  constexpr int64_t kKernelMaxElements = int64_t{1} << 15;
  if (!cpu || a->numel() * b->numel() > kKernelMaxElements)
    return mul(unsqueeze(a, 1), unsqueeze(b, 0));
  const DType dt = promote_types(a->dtype(), b->dtype());
  return dispatch1(prim::outer(), {a->dtype() == dt ? a : to(a, dt, std::nullopt),
                                   b->dtype() == dt ? b : to(b, dt, std::nullopt)});
}

Tensor trace(const Tensor& x_lo) {
  const Tensor x = autocast::to_float(x_lo);  // in PyTorch's autocast float32 lists
  if (x->ndim() != 2)
    throw_error<RuntimeError>("trace", "expected a matrix, got a ", x->ndim(), "-D tensor");
  if (x->dtype() == DType::kBool)
    throw_error<NotImplementedError>("trace", "bool inputs are not supported");
  if (is_complex(x->dtype())) [[unlikely]]
    return sum(diagonal(x));
  if (x->device().type == DeviceType::kCPU) return dispatch1(prim::trace(), {x});
  return sum(diagonal(x, 0, 0, 1));
}

}  // namespace oneflow::functional
