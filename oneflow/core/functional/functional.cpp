// The functional ops declared in functional.h: argument checks, type promotion, broadcasting,
// and composition of primitives through the dispatcher.
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/framework/global.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/common/philox.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/functional/autocast.h"
#include "oneflow/core/functional/complex.h"
#include "oneflow/core/functional/generators.h"
#include "oneflow/core/functional/ternary.h"
#include "oneflow/core/graph/graph.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

DType Scalar::dtype() const {
  switch (kind) {
    case Kind::kBool:
      return DType::kBool;
    case Kind::kInt:
      return DType::kInt64;
    case Kind::kFloat:
      return default_dtype();
  }
  return DType::kInt64;
}

namespace functional {

namespace {

// PyTorch's combine_categories: `higher` wins unless `lower` is of a higher category.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_complex(*higher)) return higher;
  if (is_complex(*lower))  // a floating `higher` keeps its precision
    return is_floating(*higher) ? promote_types(*higher, real_to_complex(DType::kFloat32)) : lower;
  if (is_floating(*higher)) return higher;
  if (*higher == DType::kBool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}

std::optional<DType> fold(std::optional<DType> acc, DType dt) {
  return acc ? promote_types(*acc, dt) : dt;
}

std::string device_str(Device d) { return d.str(); }

}  // namespace

bool can_cast(DType from, DType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && !is_floating(to) && !is_complex(to)) return false;
  return !(to == DType::kBool && from != DType::kBool);
}

DType result_type(const std::vector<Tensor>& tensors, const std::vector<Scalar>& scalars) {
  std::optional<DType> dim, zero, wrapped;
  for (const Tensor& t : tensors) {
    if (t->ndim() > 0)
      dim = fold(dim, t->dtype());
    else
      zero = fold(zero, t->dtype());
  }
  for (const Scalar& s : scalars) wrapped = fold(wrapped, s.dtype());
  std::optional<DType> r = combine(dim, combine(zero, wrapped));
  return r ? *r : default_dtype();
}

Tensor scalar_tensor(Scalar s, DType dtype, Device device) {
  if (is_complex(dtype)) [[unlikely]]
    return complex_ops::full({}, s, CreationOptions{dtype, device, ""});
  double v = s.to_double();
  const bool exact_int = s.kind != Scalar::Kind::kFloat;  // beyond 2**53 a double rounds it
  if (device.type == DeviceType::kCPU && !lazy_mode_enabled()) {
    // A fresh CPU scalar is written here: no kernel to queue, no attribute map to build.
    Tensor t = empty_tensor({}, dtype, device);
    visit_dtype(dtype, [&]<typename T>() {
      *t->data_as<T>() = exact_int ? cast_value<T>(s.i) : cast_value<T>(v);
    });
    return t;
  }
  Attrs attrs{{"shape", std::vector<int64_t>{}},
              {"dtype", dtype},
              {"device", device_str(device)},
              {"value", v}};
  if (exact_int) attrs.set("int_value", s.i);
  return dispatch1(prim::fill(), {}, attrs);
}

// ---- views and copies ----

Tensor to(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device, bool copy) {
  DType dt = dtype.value_or(x->dtype());
  if (is_complex(x->dtype()) && dt == DType::kBool) [[unlikely]]  // nonzero: either part
    return to(compare(CompareFn::kNe, x, Scalar::from_int(0)), std::nullopt, device, copy);
  if (is_complex(x->dtype()) && !is_complex(dt)) [[unlikely]]
    throw_error<TypeError>("to", "casting ", dtype_name(x->dtype()), " to ", dtype_name(dt),
                           " would discard the imaginary part; take .real or .abs() first");
  Device dev = device.value_or(x->device());
  if (!copy && dt == x->dtype() && dev == x->device()) return x;
  return dispatch1(prim::copy(), {x}, Attrs{{"dtype", dt}, {"device", device_str(dev)}});
}

Tensor clone(const Tensor& x) { return to(x, std::nullopt, std::nullopt, true); }

Tensor contiguous(const Tensor& x) { return x->is_contiguous() ? x : clone(x); }

Tensor detach(const Tensor& x) { return alias_detached(x); }

Tensor permute(const Tensor& x, const std::vector<int64_t>& perm) {
  const int64_t nd = x->ndim();
  if (static_cast<int64_t>(perm.size()) != nd)
    throw_error<RuntimeError>("permute", "number of dims don't match in permute: expected ", nd,
                              " dims, got ", perm.size());
  std::vector<int64_t> p(perm.size());
  std::vector<bool> seen(perm.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    p[i] = wrap_dim("permute", perm[i], nd);
    if (seen[p[i]]) throw_error<RuntimeError>("permute", "repeated dim ", perm[i], " in permute");
    seen[p[i]] = true;
  }
  return dispatch1(prim::permute(), {x}, Attrs{{"perm", p}});
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& dims) {
  const int64_t nd = x->ndim();
  std::vector<int64_t> d(dims.size());
  std::vector<bool> seen(std::max<int64_t>(nd, 1), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    d[i] = wrap_dim("flip", dims[i], nd);
    if (seen[d[i]])
      throw_error<RuntimeError>("flip", "dim ", d[i],
                                " appears multiple times in the list of dims");
    seen[d[i]] = true;
  }
  if (nd == 0) d.clear();
  if (is_complex(x->dtype())) [[unlikely]]  // the dims wrapped: the pairs' dim is left alone
    return complex_ops::from_pairs(flip(view_as_real(x), d));
  return dispatch1(prim::flip(), {x}, Attrs{{"dims", d}});
}

Tensor triangle(const Tensor& x, int64_t diagonal, bool upper) {
  if (x->ndim() < 2)
    throw_error<RuntimeError>(upper ? "triu" : "tril",
                              "input tensor must have at least 2 dimensions, got ", x->ndim());
  if (is_complex(x->dtype())) [[unlikely]] {  // the pairs' dim first, the matrices last
    const int64_t nd = x->ndim() + 1;
    std::vector<int64_t> front{nd - 1}, back;
    for (int64_t d = 0; d + 1 < nd; ++d) front.push_back(d);
    for (int64_t d = 1; d < nd; ++d) back.push_back(d);
    back.push_back(0);
    return complex_ops::from_pairs(
        permute(triangle(permute(view_as_real(x), front), diagonal, upper), back));
  }
  return dispatch1(prim::triangle(), {x}, Attrs{{"diagonal", diagonal}, {"upper", upper}});
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  const int64_t nd = x->ndim();
  if (nd == 0) {  // dims 0 and -1 only
    wrap_dim("transpose", dim0, 0), wrap_dim("transpose", dim1, 0);
    return x;
  }
  std::vector<int64_t> perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = i;
  std::swap(perm[wrap_dim("transpose", dim0, nd)], perm[wrap_dim("transpose", dim1, nd)]);
  return dispatch1(prim::permute(), {x}, Attrs{{"perm", perm}});
}

Tensor expand(const Tensor& x, const Shape& shape_in) {
  const int64_t nd = x->ndim();
  if (static_cast<int64_t>(shape_in.size()) < nd)
    throw_error<RuntimeError>("expand", "the number of sizes provided (", shape_in.size(),
                              ") must be greater or equal to the number of dimensions in the "
                              "tensor (",
                              nd, ")");
  Shape shape = shape_in;
  const size_t lead = shape.size() - nd;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t have = i < lead ? 1 : x->shape()[i - lead];
    if (shape[i] == -1) {
      if (i < lead)
        throw_error<RuntimeError>("expand", "-1 is not allowed in a leading, non-existing dim");
      shape[i] = have;
    }
    if (have != shape[i] && have != 1)
      throw_error<RuntimeError>(
          "expand", "the expanded size of the tensor (", shape[i],
          ") must match the existing size (", have, ") at non-singleton dimension ", i,
          ". Target sizes: ", shape_str(shape_in), ". Tensor sizes: ", shape_str(x->shape()));
  }
  if (shape == x->shape()) return x;
  return dispatch1(prim::expand(), {x}, Attrs{{"shape", shape}});
}

namespace {
Shape infer_reshape(const char* op, const Shape& in, const Shape& shape) {
  Shape out = shape;
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer_at >= 0) throw_error<RuntimeError>(op, "only one dimension can be inferred");
      infer_at = static_cast<int64_t>(i);
    } else if (out[i] < 0) {
      throw_error<RuntimeError>(op, "invalid shape dimension ", out[i]);
    } else {
      known *= out[i];
    }
  }
  const int64_t n = numel(in);
  if (infer_at >= 0) {
    if (known == 0 || n % known != 0)
      throw_error<RuntimeError>(op, "shape '", shape_str(shape), "' is invalid for input of size ",
                                n);
    out[infer_at] = n / known;
  } else if (known != n) {
    throw_error<RuntimeError>(op, "shape '", shape_str(shape), "' is invalid for input of size ",
                              n);
  }
  return out;
}
}  // namespace

namespace {
Tensor strided_view(const Tensor& x, const Shape& size, const Strides& strides, int64_t offset,
                    const Strides& grad_strides, int64_t grad_offset, bool differentiable);

// The strides that view a tensor of shape `from` and strides `st` as `to` without a copy, or
// nothing (PyTorch's rule): each run of dims that is contiguous in memory (a chunk) must be
// covered by whole dims of `to`, which take strides within the chunk.
std::optional<Strides> view_strides(const Shape& from, const Strides& st, const Shape& to) {
  Strides out(to.size(), 1);
  if (from.empty()) return out;
  int64_t numel = 1;
  for (int64_t v : from) numel *= v;
  if (numel == 0) return from == to ? std::optional<Strides>(st) : contiguous_strides(to);
  int64_t view_d = static_cast<int64_t>(to.size()) - 1;
  int64_t chunk_base = st.back(), tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(from.size()) - 1; d >= 0; --d) {
    tensor_numel *= from[d];
    if (d == 0 || (from[d - 1] != 1 && st[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || to[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base;
        view_numel *= to[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) chunk_base = st[d - 1], tensor_numel = 1, view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}
}  // namespace

Tensor view(const Tensor& x, const Shape& shape) {
  Shape out = infer_reshape("view", x->shape(), shape);
  if (x->is_contiguous()) return dispatch1(prim::view(), {x}, Attrs{{"shape", out}});
  // A strided input views without a copy when its memory chunks allow it (x.t().view(...)).
  const std::optional<Strides> st = view_strides(x->shape(), x->strides(), out);
  if (!st)
    throw_error<RuntimeError>("view",
                              "view size is not compatible with input tensor's size and "
                              "stride (at least one dimension spans across two contiguous "
                              "subspaces). Use .reshape(...) instead.");
  // The view reads x's elements in x's logical order: on a contiguous x of the same shape (the
  // gradient's geometry) it is the contiguous layout of `out`.
  return strided_view(x, out, *st, x->offset(), contiguous_strides(out), 0, true);
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  Shape out = infer_reshape("reshape", x->shape(), shape);
  if (out == x->shape()) return x;
  // A view whenever view() would give one, as PyTorch (x[:, :, :2].reshape(6, 2)); else a copy.
  if (!x->is_contiguous() && !x->global())
    if (const std::optional<Strides> st = view_strides(x->shape(), x->strides(), out))
      return strided_view(x, out, *st, x->offset(), contiguous_strides(out), 0, true);
  return dispatch1(prim::view(), {contiguous(x)}, Attrs{{"shape", out}});
}

Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> stop, int64_t step) {
  const int64_t nd = x->ndim();
  if (nd == 0) throw_error<IndexError>("slice", "slicing a 0-dim tensor");
  const int64_t d = wrap_dim("slice", dim, nd);
  if (step <= 0) throw_error<ValueError>("slice", "step must be greater than zero, got ", step);
  const int64_t size = x->shape()[d];
  auto clamp = [size](int64_t v) {
    if (v < 0) v += size;
    return std::min(std::max<int64_t>(v, 0), size);
  };
  const int64_t b = start ? clamp(*start) : 0;
  const int64_t e = stop ? clamp(*stop) : size;
  const int64_t len = e > b ? (e - b - 1) / step + 1 : 0;  // no overflow for any step
  if (len <= 1) step = 1;  // one element or none: any step reads the same (and strides stay small)
  if (b == 0 && len == size && step == 1) return x;
  std::vector<int64_t> starts(nd, 0), steps(nd, 1), sizes(x->shape());
  starts[d] = b;
  steps[d] = step;
  sizes[d] = len;
  return dispatch1(prim::slice(), {x},
                   Attrs{{"starts", starts}, {"steps", steps}, {"sizes", sizes}});
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  const int64_t nd = x->ndim();
  if (nd == 0) throw_error<RuntimeError>("narrow", "narrow() cannot be applied to a 0-dim tensor");
  const int64_t d = wrap_dim("narrow", dim, nd);
  const int64_t size = x->shape()[d];
  if (start < -size || start > size)
    throw_error<IndexError>("narrow", "start out of range (expected to be in range of [", -size,
                            ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  if (length < 0) throw_error<RuntimeError>("narrow", "length must be non-negative, got ", length);
  if (start + length > size)
    throw_error<RuntimeError>("narrow", "start (", start, ") + length (", length,
                              ") exceeds dimension size (", size, ")");
  return slice(x, d, start, start + length, 1);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  const int64_t nd = x->ndim();
  if (nd == 0) throw_error<IndexError>("select", "invalid index of a 0-dim tensor");
  const int64_t d = wrap_dim("select", dim, nd);
  const int64_t size = x->shape()[d];
  if (index < -size || index >= size)
    throw_error<IndexError>("select", "index ", index, " is out of bounds for dimension ", d,
                            " with size ", size);
  if (index < 0) index += size;
  std::vector<int64_t> starts(nd, 0), steps(nd, 1), sizes(x->shape());
  starts[d] = index;
  sizes[d] = 1;
  Tensor s =
      dispatch1(prim::slice(), {x}, Attrs{{"starts", starts}, {"steps", steps}, {"sizes", sizes}});
  Attrs sq;
  sq.set("dims", std::vector<int64_t>(1, d));
  return dispatch1(prim::squeeze(), {s}, sq);
}

Tensor squeeze(const Tensor& x, const std::vector<int64_t>& dims_in) {
  const int64_t nd = x->ndim();
  std::vector<int64_t> dims;
  if (dims_in.empty()) {
    for (int64_t d = 0; d < nd; ++d)
      if (x->shape()[d] == 1) dims.push_back(d);
  } else {
    for (int64_t d : dims_in) {
      int64_t w = wrap_dim("squeeze", d, nd);
      if (nd == 0) continue;
      if (x->shape()[w] == 1) dims.push_back(w);
    }
    std::sort(dims.begin(), dims.end());
  }
  if (dims.empty()) return x;
  return dispatch1(prim::squeeze(), {x}, Attrs{{"dims", dims}});
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  const int64_t d = wrap_dim("unsqueeze", dim, x->ndim() + 1);
  return dispatch1(prim::unsqueeze(), {x}, Attrs{{"dim", d}});
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  const int64_t nd = x->ndim();
  const int64_t s = wrap_dim("flatten", start_dim, nd), e = wrap_dim("flatten", end_dim, nd);
  if (nd == 0) return reshape(x, {1});
  if (s > e) throw_error<RuntimeError>("flatten", "start_dim cannot come after end_dim");
  Shape out;
  int64_t m = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (d < s || d > e) out.push_back(x->shape()[d]);
    if (d >= s && d <= e) m *= x->shape()[d];
    if (d == e) out.push_back(m);
  }
  return reshape(x, out);
}

namespace {
// A view of x through AsStrided: `strides`/`offset` for x's storage, and the same geometry on a
// contiguous tensor of x's shape for the gradient.
Tensor strided_view(const Tensor& x, const Shape& size, const Strides& strides, int64_t offset,
                    const Strides& grad_strides, int64_t grad_offset, bool differentiable) {
  Attrs a;
  a.set("size", size);
  a.set("stride", strides);
  a.set("offset", offset);
  a.set("grad_size", size);
  a.set("grad_stride", differentiable ? grad_strides : Strides{});
  a.set("grad_offset", grad_offset);
  return dispatch1(prim::as_strided(), {x}, a);
}
}  // namespace

Tensor as_strided(const Tensor& x, const Shape& size, const Strides& stride,
                  std::optional<int64_t> storage_offset) {
  if (size.size() != stride.size())
    throw_error<RuntimeError>("as_strided", "mismatch in length of strides and shape");
  const int64_t offset = storage_offset.value_or(x->offset());
  int64_t hi = offset;
  bool empty = false, wraps = false;  // a wrapped bound must not pass the check below
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] < 0 || stride[d] < 0)
      throw_error<RuntimeError>("as_strided", "negative sizes or strides are not supported");
    int64_t span = 0;
    empty = empty || size[d] == 0;
    wraps = wraps || (size[d] > 0 && (__builtin_mul_overflow(size[d] - 1, stride[d], &span) ||
                                      __builtin_add_overflow(hi, span, &hi)));
  }
  const int64_t capacity = static_cast<int64_t>(x->storage()->nbytes() / itemsize(x->dtype()));
  const int64_t n = empty ? 0 : 1;
  if (wraps) hi = std::numeric_limits<int64_t>::max();
  if (n > 0 && (offset < 0 || hi >= capacity))
    throw_error<RuntimeError>("as_strided", "setStorage: sizes ", shape_str(size), ", strides ",
                              shape_str(stride), " and storage offset ", offset,
                              " require memory beyond the storage's ", capacity, " elements");
  return strided_view(x, size, stride, offset, stride, offset - x->offset(), x->is_contiguous());
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = x->ndim();
  // IndexError for dims past a 0-d or 1-d input, as PyTorch
  const int64_t d1 = wrap_dim("diagonal", dim1, nd), d2 = wrap_dim("diagonal", dim2, nd);
  if (d1 == d2)
    throw_error<RuntimeError>("diagonal", "diagonal dimensions cannot be identical ", dim1, ", ",
                              dim2);
  const Strides cs = contiguous_strides(x->shape());
  Shape size;
  Strides st, gst;
  for (int64_t d = 0; d < nd; ++d)
    if (d != d1 && d != d2) {
      size.push_back(x->shape()[d]);
      st.push_back(x->strides()[d]);
      gst.push_back(cs[d]);
    }
  const int64_t n1 = x->shape()[d1], n2 = x->shape()[d2];
  const int64_t len =
      std::max<int64_t>(0, offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2));
  size.push_back(len);
  st.push_back(x->strides()[d1] + x->strides()[d2]);
  gst.push_back(cs[d1] + cs[d2]);
  int64_t off = 0, goff = 0;
  if (len > 0) {
    off = offset >= 0 ? offset * x->strides()[d2] : -offset * x->strides()[d1];
    goff = offset >= 0 ? offset * cs[d2] : -offset * cs[d1];
  }
  return strided_view(x, size, st, x->offset() + off, gst, goff, true);
}

Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step) {
  const int64_t nd = x->ndim();
  const int64_t d = wrap_dim("unfold", dim, nd);
  const int64_t n = nd == 0 ? 1 : x->shape()[d];
  if (size > n)
    throw_error<RuntimeError>("unfold", "maximum size for tensor at dimension ", d, " is ", n,
                              " but size is ", size);
  if (step <= 0) throw_error<RuntimeError>("unfold", "step is ", step, " but must be > 0");
  const Strides cs = contiguous_strides(x->shape());
  Shape out = x->shape();
  Strides st = x->strides(), gst = cs;
  if (nd == 0) {
    out = {size};
    st = {1};
    gst = {1};
  } else {
    out[d] = (n - size) / step + 1;
    st[d] = x->strides()[d] * step;
    gst[d] = cs[d] * step;
    out.push_back(size);
    st.push_back(x->strides()[d]);
    gst.push_back(cs[d]);
  }
  return strided_view(x, out, st, x->offset(), gst, 0, true);
}

Tensor copy_(const Tensor& dst, const Tensor& src) {
  broadcast_shapes("copy_", src->shape(), dst->shape());
  if (numel(broadcast_shapes("copy_", src->shape(), dst->shape())) != dst->numel())
    throw_error<RuntimeError>("copy_", "the source of shape ", shape_str(src->shape()),
                              " does not broadcast to the destination shape ",
                              shape_str(dst->shape()));
  // Leading size-1 dims of a source with more dims than the destination are dropped: the
  // assign kernel broadcasts a source of at most the destination's rank.
  const int64_t extra = src->ndim() - dst->ndim();
  for (int64_t i = 0; i < extra; ++i)
    if (src->shape()[i] != 1)
      throw_error<RuntimeError>("copy_", "the source of shape ", shape_str(src->shape()),
                                " does not broadcast to the destination shape ",
                                shape_str(dst->shape()));
  const Tensor squeezed =
      extra > 0 ? reshape(src, Shape(src->shape().begin() + extra, src->shape().end())) : src;
  Tensor s = to(squeezed, dst->dtype(), dst->device());
  return dispatch1(prim::assign(), {dst, s}, {}, dst);
}

Tensor fill_(const Tensor& dst, Scalar value) {
  return dispatch1(prim::assign(), {dst, scalar_tensor(value, dst->dtype(), dst->device())}, {},
                   dst);
}

namespace {
// Index tensors as IndexGather/IndexPut take them: int64, broadcast together, contiguous, on
// x's device, and checked against the indexed dims' sizes.
TensorList prepare_indices(const char* op, const Tensor& x, const TensorList& indices,
                           int64_t dim) {
  const int64_t k = static_cast<int64_t>(indices.size());
  if (k == 0) throw_error<IndexError>(op, "expected at least one index tensor");
  if (dim < 0 || dim + k > x->ndim())
    throw_error<IndexError>(op, "too many indices for tensor of dimension ", x->ndim());
  Shape b = indices[0]->shape();
  for (const Tensor& t : indices) {
    if (!is_integral(t->dtype(), false))
      throw_error<IndexError>(op,
                              "tensors used as indices must be long, int, byte or bool "
                              "tensors, got ",
                              dtype_name(t->dtype()));
    try {
      b = broadcast_shapes(op, b, t->shape());
    } catch (const RuntimeError&) {
      throw_error<IndexError>(op,
                              "shape mismatch: indexing tensors could not be broadcast "
                              "together with shapes ",
                              shape_str(b), " and ", shape_str(t->shape()));
    }
  }
  TensorList out;
  for (int64_t j = 0; j < k; ++j) {
    Tensor t = contiguous(expand(to(indices[j], DType::kInt64, x->device()), b));
    if (t->device().type == DeviceType::kMeta) {  // no values to check
      out.push_back(t);
      continue;
    }
    // Bounds are checked on the host (a synchronisation point for GPU indices, as in PyTorch).
    Tensor h = x->device().type == DeviceType::kCPU ? t : to(t, std::nullopt, Device{});
    if (h->global()) h = global::whole_value(h);  // every index, on every rank
    const int64_t size = x->shape()[dim + j];
    const int64_t* v = h->read_as<int64_t>();
    for (int64_t i = 0; i < h->numel(); ++i)
      if (v[i] < -size || v[i] >= size)
        throw_error<IndexError>(op, "index ", v[i], " is out of bounds for dimension ", dim + j,
                                " with size ", size);
    out.push_back(t);
  }
  return out;
}
}  // namespace

Tensor index_gather_raw(const Tensor& x, const TensorList& indices, int64_t dim) {
  TensorList in{contiguous(x)};  // the kernel reads rows of a dense input (a no-op when it is)
  in.insert(in.end(), indices.begin(), indices.end());
  Attrs a;
  a.set("dim", dim);
  return dispatch1(prim::index_gather(), in, a);
}

Tensor index_put_raw(const Tensor& dst, const Tensor& value, const TensorList& indices, int64_t dim,
                     bool accumulate) {
  TensorList in{dst, value};
  in.insert(in.end(), indices.begin(), indices.end());
  Attrs a;
  a.set("dim", dim);
  a.set("accumulate", accumulate);
  return dispatch1(prim::index_put(), in, a, dst);
}

Tensor index(const Tensor& x, const TensorList& indices, int64_t dim) {
  if (is_complex(x->dtype())) [[unlikely]]  // the indexed dims lead: the pairs' dim follows
    return complex_ops::from_pairs(index(view_as_real(x), indices, dim));
  TensorList idx = prepare_indices("index", x, indices, dim);
  return index_gather_raw(contiguous(x), idx, dim);
}

Tensor index_put_(const Tensor& x, const TensorList& indices, int64_t dim, const Tensor& value,
                  bool accumulate) {
  if (is_complex(x->dtype())) [[unlikely]] {
    index_put_(view_as_real(x), indices, dim, view_as_real(to(value, x->dtype(), x->device())),
               accumulate);
    return x;
  }
  TensorList idx = prepare_indices("index_put_", x, indices, dim);
  Shape gs(x->shape().begin(), x->shape().begin() + dim);
  for (int64_t s : idx[0]->shape()) gs.push_back(s);
  for (size_t d = dim + idx.size(); d < x->shape().size(); ++d) gs.push_back(x->shape()[d]);
  Tensor v = contiguous(expand(to(value, x->dtype(), x->device()), gs));
  if (x->is_contiguous()) return index_put_raw(x, v, idx, dim, accumulate);
  // A strided destination: update a contiguous copy, then write it back through the view.
  Tensor tmp = clone(x);
  index_put_raw(tmp, v, idx, dim, accumulate);
  return copy_(x, tmp);
}

namespace {

// The mask as a contiguous host tensor (a synchronisation point for device masks, as in PyTorch)
// and the count of its true elements per block.
struct HostMask {
  Tensor t;
  NonzeroPlan plan;
};

HostMask host_mask(const char* op, const Tensor& mask) {
  if (mask->dtype() != DType::kBool)
    throw_error<TypeError>(op, "expected a bool tensor, got ", dtype_name(mask->dtype()));
  Tensor h = contiguous(to(mask, std::nullopt, Device{}));
  // The host passes run on the stream thread: its OpenMP team is the process's only one. They
  // follow the stream's queued ops; a write queued on another stream (a received tensor) is
  // waited for here.
  h->read_as<bool>();
  NonzeroPlan plan;
  eager::run_on_stream([&] { plan = nonzero_plan_cpu(h->data_as<bool>(), h->numel()); });
  return {h, std::move(plan)};
}

}  // namespace

namespace {

// The positions of a global mask's true elements: found in the whole mask on every process (a
// shape that depends on values), broadcast on the mask's placement.
template <typename F>
auto positions_of_global(const Tensor& mask, F&& positions) {
  auto out = positions(global::whole_value(mask));
  auto wrap = [&](const Tensor& t) {
    const Shape shape = t->shape();
    return global::from_local(t, mask->global()->placement, Sbp::broadcast(), false, false, &shape);
  };
  if constexpr (std::is_same_v<decltype(out), TensorList>) {
    for (Tensor& t : out) t = wrap(t);
    return out;
  } else {
    return wrap(out);
  }
}

}  // namespace

TensorList nonzero(const Tensor& mask) {
  if (mask->global()) return positions_of_global(mask, [](const Tensor& m) { return nonzero(m); });
  const HostMask h = host_mask("nonzero", mask);
  TensorList out;
  std::vector<int64_t*> cols;
  for (int64_t d = 0; d < std::max<int64_t>(mask->ndim(), 1); ++d) {
    out.push_back(empty_tensor({h.plan.total}, DType::kInt64, Device{}));
    cols.push_back(out.back()->data_as<int64_t>());
  }
  eager::run_on_stream(
      [&] { nonzero_fill_cpu(h.plan, h.t->data_as<bool>(), h.t->shape(), cols, 1); });
  for (Tensor& t : out) t = to(t, std::nullopt, mask->device());
  return out;
}

Tensor argwhere(const Tensor& mask) {
  if (mask->global()) return positions_of_global(mask, [](const Tensor& m) { return argwhere(m); });
  const HostMask h = host_mask("argwhere", mask);
  const int64_t nd = mask->ndim();
  Tensor out = empty_tensor({h.plan.total, nd}, DType::kInt64, Device{});
  std::vector<int64_t*> cols;
  for (int64_t d = 0; d < nd; ++d) cols.push_back(out->data_as<int64_t>() + d);
  if (nd > 0)
    eager::run_on_stream(
        [&] { nonzero_fill_cpu(h.plan, h.t->data_as<bool>(), h.t->shape(), cols, nd); });
  return to(out, std::nullopt, mask->device());
}

Tensor flatnonzero(const Tensor& mask) {
  if (mask->global())
    return positions_of_global(mask, [](const Tensor& m) { return flatnonzero(m); });
  const HostMask h = host_mask("flatnonzero", mask);
  Tensor out = empty_tensor({h.plan.total}, DType::kInt64, Device{});
  eager::run_on_stream([&] {
    nonzero_fill_cpu(h.plan, h.t->data_as<bool>(), h.t->shape(), {out->data_as<int64_t>()}, 1);
  });
  return to(out, std::nullopt, mask->device());
}

namespace {

// The operands of masked_select / masked_scatter broadcast together, `x` flattened, and the flat
// positions of the mask's true elements.
struct MaskedOperands {
  Shape shape;
  Tensor flat_x, positions;
};

MaskedOperands masked_operands(const char* op, const Tensor& x, const Tensor& mask) {
  if (mask->dtype() != DType::kBool)
    throw_error<RuntimeError>(op, "expected BoolTensor for mask, got ", dtype_name(mask->dtype()));
  if (mask->device() != x->device())
    throw_error<RuntimeError>(op, "expected mask and input on the same device, got ",
                              mask->device().str(), " and ", x->device().str());
  const Shape shape = broadcast_shapes(op, x->shape(), mask->shape());
  return {shape, reshape(expand(x, shape), {-1}), flatnonzero(expand(mask, shape))};
}

}  // namespace

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  if (is_complex(x->dtype())) [[unlikely]] {
    const Tensor flat = masked_select(view_as_real(x), unsqueeze(mask, -1));
    return complex_ops::from_pairs(reshape(flat, Shape{flat->numel() / 2, 2}));
  }
  const MaskedOperands m = masked_operands("masked_select", x, mask);
  return index_gather_raw(m.flat_x, {m.positions}, 0);
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  if (x->device().type == DeviceType::kMeta && mask->device() == x->device() &&
      source->device() == x->device() && source->dtype() == x->dtype() &&
      mask->dtype() == DType::kBool)  // no mask values to count: the broadcast shape alone
    return empty_tensor(broadcast_shapes("masked_scatter", x->shape(), mask->shape()), x->dtype(),
                        x->device());
  const MaskedOperands m = masked_operands("masked_scatter", x, mask);
  if (source->dtype() != x->dtype())
    throw_error<RuntimeError>("masked_scatter",
                              "expected self and source to have same dtypes but got ",
                              dtype_name(x->dtype()), " and ", dtype_name(source->dtype()));
  if (source->device() != x->device())
    throw_error<RuntimeError>("masked_scatter", "expected source on ", x->device().str(), ", got ",
                              source->device().str());
  const int64_t count = m.positions->numel();
  if (source->numel() < count)
    throw_error<RuntimeError>("masked_scatter", "Number of elements of source < number of ones ",
                              "in mask (", source->numel(), " < ", count, ")");
  Tensor values = narrow(reshape(source, {-1}), 0, 0, count);
  if (is_complex(x->dtype())) [[unlikely]] {  // on the pairs: both parts of each masked element
    Shape pairs = m.shape;
    pairs.push_back(2);
    return complex_ops::from_pairs(masked_scatter(expand(view_as_real(x), pairs),
                                                  expand(unsqueeze(mask, mask->ndim()), pairs),
                                                  view_as_real(contiguous(values))));
  }
  Tensor out = index_put_raw(clone(m.flat_x), contiguous(values), {m.positions}, 0, false);
  return reshape(out, m.shape);
}

// ---- elementwise ----

namespace {

// Casts both operands to their promoted dtype.
std::pair<Tensor, Tensor> promote(const Tensor& a, const Tensor& b) {
  DType dt = result_type({a, b});
  return {to(a, dt, std::nullopt), to(b, dt, std::nullopt)};
}

// A wrapped-number operand as a 0-dim tensor of the dtype promotion chose.
Tensor wrap(const Tensor& like, Scalar s, DType* dt) {
  *dt = result_type({like}, {s});
  return scalar_tensor(s, *dt, like->device());
}

bool is_one(Scalar s) { return s.to_double() == 1.0; }

// PyTorch multiplies and divides a 16-bit float tensor by a scalar in float32 (its opmath type;
// its add and sub cast the scalar to the tensor's type): with a scalar the 16-bit type cannot
// hold exactly (1e5 overflows float16, 0.1 rounds), the op runs on float32 copies and the
// result is rounded once.
bool scalar_in_float32(DType dt, Scalar s) {
  const float v = static_cast<float>(s.to_double());
  if (dt == DType::kFloat16) return !(float(float16(v)) == v && double(v) == s.to_double());
  if (dt == DType::kBFloat16) return !(float(bfloat16(v)) == v && double(v) == s.to_double());
  return false;
}

// Note [Fused alpha]: x + alpha * y (and x - alpha * y) of floating CPU tensors of one shape and
// dtype is one addcmul pass with a 0-dim one as its third operand: no temporary for alpha * y and
// one pass over memory instead of two (as PyTorch's add with alpha; optimizers' p.add_(g,
// alpha=-lr)). 16-bit floats compute in float32 and round once, as PyTorch's opmath. Other
// cases multiply first.
bool fused_alpha(const Tensor& x, const Tensor& y, Scalar alpha) {
  return !is_one(alpha) && is_floating(x->dtype()) && y->dtype() == x->dtype() &&
         x->device().type == DeviceType::kCPU && y->device().type == DeviceType::kCPU &&
         !x->global() && !y->global() && x->shape() == y->shape();
}

Tensor one_like_scalar(const Tensor& x) {
  return scalar_tensor(Scalar::from_int(1), x->dtype(), x->device());
}

Scalar negated(Scalar s) {
  return s.kind == Scalar::Kind::kFloat ? Scalar::from_double(-s.f) : Scalar::from_int(-s.i);
}

void check_alpha(const char* op, DType dt, Scalar alpha) {
  if (!is_floating(dt) && alpha.kind == Scalar::Kind::kFloat)
    throw_error<RuntimeError>(op,
                              "for integral input tensors, argument alpha must not be a floating "
                              "point number");
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  if (complex_ops::any(a, b)) [[unlikely]]
    return complex_ops::add(a, b, alpha);
  auto [x, y] = promote(a, b);
  check_alpha("add", x->dtype(), alpha);
  if (x->dtype() == DType::kBool) {  // bool: y * alpha is y and bool(alpha), as in PyTorch
    if (alpha.to_double() == 0) y = zeros_like(y);
  } else if (fused_alpha(x, y, alpha)) {
    return addcmul(x, y, one_like_scalar(x), alpha);  // Note [Fused alpha]
  } else if (!is_one(alpha)) {
    y = mul(y, alpha);
  }
  return dispatch1(prim::add(), {x, y});
}

namespace {
// b * alpha, kept integral when both are.
Scalar scaled(Scalar b, Scalar alpha) {
  if (alpha.kind != Scalar::Kind::kFloat && alpha.i == 1) return b;  // keeps a bool a bool
  if (b.kind == Scalar::Kind::kFloat || alpha.kind == Scalar::Kind::kFloat)
    return Scalar::from_double(b.to_double() * alpha.to_double());
  if (b.kind == Scalar::Kind::kBool && alpha.kind == Scalar::Kind::kBool) return b;
  return Scalar::from_int(b.i * alpha.i);
}
}  // namespace

Tensor add(const Tensor& a, Scalar b, Scalar alpha) {
  if (complex_ops::any(a)) [[unlikely]]
    return complex_ops::add(a, b, alpha);
  DType dt;
  // bool + bool stays bool: alpha * b is b and bool(alpha), as PyTorch
  const Scalar s = a->dtype() == DType::kBool && b.kind == Scalar::Kind::kBool
                       ? Scalar::from_bool(b.i != 0 && alpha.to_double() != 0)
                       : scaled(b, alpha);
  Tensor y = wrap(a, s, &dt);
  return dispatch1(prim::add(), {to(a, dt, std::nullopt), y});
}

Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  if (complex_ops::any(a, b)) [[unlikely]]
    return complex_ops::sub(a, b, alpha);
  if (a->dtype() == DType::kBool || b->dtype() == DType::kBool)
    throw_error<RuntimeError>("sub",
                              "subtraction with a bool tensor is not supported; use the "
                              "`^` or `logical_xor()` operator instead");
  auto [x, y] = promote(a, b);
  check_alpha("sub", x->dtype(), alpha);
  if (fused_alpha(x, y, alpha))
    return addcmul(x, y, one_like_scalar(x), negated(alpha));  // Note [Fused alpha]
  if (!is_one(alpha)) y = mul(y, alpha);
  return dispatch1(prim::sub(), {x, y});
}

Tensor sub(const Tensor& a, Scalar b, Scalar alpha) {
  Scalar nb = b.kind == Scalar::Kind::kFloat ? Scalar::from_double(-b.f) : Scalar::from_int(-b.i);
  return add(a, nb, alpha);
}

Tensor rsub(const Tensor& a, Scalar b, Scalar alpha) {
  if (complex_ops::any(a)) [[unlikely]]
    return complex_ops::rsub(a, b, alpha);
  // b - alpha a in the result type: negating a first wrapped an unsigned a (2.5 - uint8 200
  // was 58.5).
  if (a->dtype() == DType::kBool || b.kind == Scalar::Kind::kBool)
    throw_error<RuntimeError>("sub",
                              "subtraction with a bool tensor is not supported; use the "
                              "`^` or `logical_xor()` operator instead");
  DType dt;
  Tensor y = wrap(a, b, &dt);
  check_alpha("sub", dt, alpha);
  Tensor x = to(a, dt, std::nullopt);
  if (!is_one(alpha)) x = mul(x, alpha);
  return dispatch1(prim::sub(), {y, x});
}

Tensor mul(const Tensor& a, const Tensor& b) {
  if (complex_ops::any(a, b)) [[unlikely]]
    return complex_ops::mul(a, b);
  auto [x, y] = promote(a, b);
  return dispatch1(prim::mul(), {x, y});
}

Tensor mul(const Tensor& a, Scalar b) {
  if (complex_ops::any(a)) [[unlikely]]
    return complex_ops::mul(a, b);
  DType dt;
  Tensor y = wrap(a, b, &dt);
  if (scalar_in_float32(dt, b))
    return to(mul(to(a, DType::kFloat32, std::nullopt), b), dt, std::nullopt);
  return dispatch1(prim::mul(), {to(a, dt, std::nullopt), y});
}

Tensor neg(const Tensor& a) {
  if (complex_ops::any(a)) [[unlikely]]
    return complex_ops::neg(a);
  if (a->dtype() == DType::kBool)
    throw_error<RuntimeError>("neg",
                              "negation, the `-` operator, on a bool tensor is not supported; "
                              "use the `~` or `logical_not()` operator instead");
  return unary(UnaryFn::kNeg, a);
}

Tensor relu(const Tensor& a) { return dispatch1(prim::relu(), {a}); }

Tensor unary_grad(UnaryFn fn, const Tensor& dy, const Tensor& y) {
  return dispatch1(prim::unary_grad(), {dy, y}, Attrs{{"fn", static_cast<int64_t>(fn)}});
}

Tensor relu_grad(const Tensor& dy, const Tensor& y) {
  return dispatch1(prim::relu_grad(), {dy, y});
}

namespace {
// Integer and bool operands of ops with floating results compute in the default float dtype.
DType float_result(DType dt) { return is_floating(dt) ? dt : default_dtype(); }
}  // namespace

Tensor div(const Tensor& a, const Tensor& b) {
  if (complex_ops::any(a, b)) [[unlikely]]
    return complex_ops::div(a, b);
  DType dt = float_result(result_type({a, b}));
  return dispatch1(prim::div(), {to(a, dt, std::nullopt), to(b, dt, std::nullopt)});
}

Tensor div(const Tensor& a, Scalar b) {
  if (complex_ops::any(a)) [[unlikely]]
    return complex_ops::div(a, b);
  DType dt = float_result(result_type({a}, {b}));
  if (scalar_in_float32(dt, b))
    return to(div(to(a, DType::kFloat32, std::nullopt), b), dt, std::nullopt);
  return dispatch1(prim::div(), {to(a, dt, std::nullopt), scalar_tensor(b, dt, a->device())});
}

Tensor rdiv(const Tensor& a, Scalar b) {
  if (complex_ops::any(a)) [[unlikely]]
    return complex_ops::rdiv(a, b);
  DType dt = float_result(result_type({a}, {b}));
  if (scalar_in_float32(dt, b))
    return to(rdiv(to(a, DType::kFloat32, std::nullopt), b), dt, std::nullopt);
  return dispatch1(prim::div(), {scalar_tensor(b, dt, a->device()), to(a, dt, std::nullopt)});
}

namespace {
Tensor where_impl(const Tensor& cond, const Tensor& x, const Tensor& y, DType dt) {
  if (cond->dtype() != DType::kBool)
    throw_error<RuntimeError>("where", "expected condition to be a bool tensor, got ",
                              dtype_name(cond->dtype()));
  if (is_complex(dt)) [[unlikely]]  // on the (real, imaginary) pairs
    return complex_ops::where(cond, to(x, dt, std::nullopt), to(y, dt, std::nullopt));
  return dispatch1(prim::where(), {cond, to(x, dt, std::nullopt), to(y, dt, std::nullopt)});
}
}  // namespace

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  return where_impl(cond, x, y, result_type({x, y}));
}

Tensor where(const Tensor& cond, const Tensor& x, Scalar y) {
  DType dt = result_type({x}, {y});
  return where_impl(cond, x, scalar_tensor(y, dt, x->device()), dt);
}

Tensor where(const Tensor& cond, Scalar x, const Tensor& y) {
  DType dt = result_type({y}, {x});
  return where_impl(cond, scalar_tensor(x, dt, y->device()), y, dt);
}

Tensor where(const Tensor& cond, Scalar x, Scalar y) {
  DType dt = result_type({}, {x, y});
  return where_impl(cond, scalar_tensor(x, dt, cond->device()),
                    scalar_tensor(y, dt, cond->device()), dt);
}

Tensor round(const Tensor& x, int64_t decimals) {
  if (decimals == 0) return unary(UnaryFn::kRound, x);
  if (!is_floating(x->dtype()))
    throw_error<NotImplementedError>(
        "round", "decimals is supported for floating point inputs, got ", dtype_name(x->dtype()));
  // 16-bit floats compute in float32 and round once at the end, as PyTorch.
  if (x->dtype() == DType::kFloat16 || x->dtype() == DType::kBFloat16)
    return to(round(to(x, DType::kFloat32, std::nullopt), decimals), x->dtype(), std::nullopt);
  // x times 10^d in x's dtype, rounded, divided by 10^d (PyTorch's order of operations).
  const Scalar ten = Scalar::from_double(std::pow(10.0, static_cast<double>(std::abs(decimals))));
  if (decimals > 0) return div(unary(UnaryFn::kRound, mul(x, ten)), ten);
  return mul(unary(UnaryFn::kRound, div(x, ten)), ten);
}

Tensor unary(UnaryFn fn, const Tensor& x_in) {
  if (complex_ops::any(x_in)) [[unlikely]]
    return complex_ops::unary(fn, x_in);
  if (fn == UnaryFn::kNeg && x_in->dtype() == DType::kBool) return neg(x_in);     // raises
  if (fn == UnaryFn::kSign && x_in->dtype() == DType::kBool) return clone(x_in);  // as PyTorch
  const Tensor x = keeps_integers(fn) ? x_in : to(x_in, float_result(x_in->dtype()), std::nullopt);
  switch (fn) {
#define OF_UNARY_CASE(E, n) \
  case UnaryFn::k##E:       \
    return dispatch1(prim::unary<UnaryFn::k##E>(), {x});
    OF_UNARY_FNS(OF_UNARY_CASE)
#undef OF_UNARY_CASE
  }
  throw_error<RuntimeError>("unary", "unknown function");
}

Tensor logical_not(const Tensor& x) {
  return compare(CompareFn::kEq, to(x, DType::kBool, std::nullopt), Scalar::from_bool(false));
}

namespace {
Tensor binary_impl(BinaryFn fn, const Tensor& a, const Tensor& b) {
  switch (fn) {
#define OF_BINARY_CASE(E, n) \
  case BinaryFn::k##E:       \
    return dispatch1(prim::binary<BinaryFn::k##E>(), {a, b});
    OF_BINARY_FNS(OF_BINARY_CASE)
#undef OF_BINARY_CASE
  }
  throw_error<RuntimeError>("binary", "unknown function");
}

// The dtype a binary function computes in, from the promoted dtype of its operands.
DType binary_compute_dtype(BinaryFn fn, DType promoted) {
  if (logical_fn(fn)) return DType::kBool;
  if (fn == BinaryFn::kAtan2) return float_result(promoted);
  return promoted;
}

// Integer division and modulo by zero raise, as in PyTorch (the kernels never trap).
void check_integer_divisor(BinaryFn fn, const Tensor& b) {
  if (fn != BinaryFn::kFmod && fn != BinaryFn::kRemainder && fn != BinaryFn::kFloorDivide &&
      fn != BinaryFn::kTruncDivide)
    return;
  if (!is_integral(b->dtype(), false) || b->numel() == 0 || b->device().type == DeviceType::kMeta)
    return;
  Tensor zeros = sum(compare(CompareFn::kEq, b, Scalar::from_int(0)));
  Tensor h = to(zeros, DType::kInt64, Device{});
  if (h->global()) h = global::whole_value(h);
  if (h->data_as<int64_t>()[0] != 0)
    throw_error<RuntimeError>(fn_name(fn), "ZeroDivisionError: integer division by zero");
}
}  // namespace

Tensor binary(BinaryFn fn, const Tensor& a, const Tensor& b) {
  const DType dt = binary_compute_dtype(fn, result_type({a, b}));
  Tensor x = to(a, dt, std::nullopt), y = to(b, dt, std::nullopt);
  check_integer_divisor(fn, y);
  return binary_impl(fn, x, y);
}

Tensor binary(BinaryFn fn, const Tensor& a, Scalar b) {
  const DType dt = binary_compute_dtype(fn, result_type({a}, {b}));
  Tensor y = scalar_tensor(b, dt, a->device());
  check_integer_divisor(fn, y);
  return binary_impl(fn, to(a, dt, std::nullopt), y);
}

Tensor binary(BinaryFn fn, Scalar a, const Tensor& b) {
  const DType dt = binary_compute_dtype(fn, result_type({b}, {a}));
  Tensor y = to(b, dt, std::nullopt);
  check_integer_divisor(fn, y);
  return binary_impl(fn, scalar_tensor(a, dt, b->device()), y);
}

Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode) {
  if (rounding_mode == "floor") return binary(BinaryFn::kFloorDivide, a, b);
  if (rounding_mode == "trunc") return binary(BinaryFn::kTruncDivide, a, b);
  if (!rounding_mode.empty() && rounding_mode != "true")
    throw_error<RuntimeError>("div",
                              "expected rounding_mode to be one of None, 'trunc', or 'floor' "
                              "but found '",
                              rounding_mode, "'");
  return div(a, b);
}

namespace {
Tensor compare_impl(CompareFn fn, const Tensor& a, const Tensor& b) {
  switch (fn) {
#define OF_COMPARE_CASE(E, n) \
  case CompareFn::k##E:       \
    return dispatch1(prim::compare<CompareFn::k##E>(), {a, b});
    OF_COMPARE_FNS(OF_COMPARE_CASE)
#undef OF_COMPARE_CASE
  }
  throw_error<RuntimeError>("compare", "unknown comparison");
}
}  // namespace

Tensor compare(CompareFn fn, const Tensor& a, const Tensor& b) {
  if (complex_ops::any(a, b)) [[unlikely]]
    return complex_ops::compare(fn, a, b);
  DType dt = result_type({a, b});
  return compare_impl(fn, to(a, dt, std::nullopt), to(b, dt, std::nullopt));
}

Tensor compare(CompareFn fn, const Tensor& a, Scalar b) {
  if (complex_ops::any(a)) [[unlikely]]
    return complex_ops::compare(fn, a, full({}, b, CreationOptions{a->dtype(), a->device(), ""}));
  DType dt = result_type({a}, {b});
  return compare_impl(fn, to(a, dt, std::nullopt), scalar_tensor(b, dt, a->device()));
}

Tensor pow(const Tensor& a, const Tensor& b) {
  if (complex_ops::any(a, b)) [[unlikely]]
    return complex_ops::pow(a, b);
  if (a->dtype() == DType::kBool && b->dtype() == DType::kBool)
    throw_error<NotImplementedError>("pow", "expected numeric inputs, got bool and bool");
  // Integer ** integer stays an integer, as in PyTorch.
  DType dt = result_type({a, b});
  if (!is_integral(dt, false)) dt = float_result(dt);
  return dispatch1(prim::pow(), {to(a, dt, std::nullopt), to(b, dt, std::nullopt)});
}

Tensor pow(const Tensor& a, Scalar b) {
  if (complex_ops::any(a)) [[unlikely]]
    return complex_ops::pow(a, b);
  if (b.kind != Scalar::Kind::kFloat && b.i == 2 && is_floating(a->dtype())) return mul(a, a);
  if (b.kind != Scalar::Kind::kFloat && is_integral(a->dtype(), true)) {
    // Integer ** integer stays an integer (square and multiply).
    if (b.i < 0)
      throw_error<RuntimeError>("pow", "integers to negative integer powers are not allowed");
    Tensor x = to(a, result_type({a}, {b}), std::nullopt);
    Tensor result = ones_like(x), base = x;
    for (int64_t e = b.i; e > 0; e >>= 1) {
      if (e & 1) result = mul(result, base);
      if (e > 1) base = mul(base, base);
    }
    return result;
  }
  DType dt = float_result(result_type({a}, {b}));
  return dispatch1(prim::pow(), {to(a, dt, std::nullopt), scalar_tensor(b, dt, a->device())});
}

Tensor rpow(const Tensor& a, Scalar b) {
  if (complex_ops::any(a)) [[unlikely]]
    return complex_ops::pow(full({}, b, CreationOptions{a->dtype(), a->device(), ""}), a);
  DType dt = result_type({a}, {b});  // integer ** integer stays an integer
  if (!is_integral(dt, false)) dt = float_result(dt);
  return dispatch1(prim::pow(), {scalar_tensor(b, dt, a->device()), to(a, dt, std::nullopt)});
}

Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryFn::kMaximum, a, b); }

Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryFn::kMinimum, a, b); }

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  if (!min && !max)
    throw_error<RuntimeError>("clamp", "at least one of 'min' or 'max' must not be None");
  if (is_floating(x->dtype())) {  // one fused pass each way
    const double inf = std::numeric_limits<double>::infinity();
    return activation(ActFn::kClamp, x, min ? min->to_double() : -inf, max ? max->to_double() : inf,
                      0.0);
  }
  Tensor y = x;
  if (min) y = where(compare(CompareFn::kLt, y, *min), *min, y);
  if (max) y = where(compare(CompareFn::kGt, y, *max), *max, y);
  return y;
}

Tensor exp(const Tensor& x) {
  if (complex_ops::any(x)) [[unlikely]]
    return complex_ops::exp(x);
  return dispatch1(prim::exp(), {to(x, float_result(x->dtype()), std::nullopt)});
}

namespace {
void check_approximate(const std::string& approximate) {
  if (approximate != "none" && approximate != "tanh")
    throw_error<RuntimeError>("gelu", "approximate argument must be either none or tanh, got '",
                              approximate, "'");
}
}  // namespace

Tensor gelu(const Tensor& x, const std::string& approximate) {
  check_approximate(approximate);
  return dispatch1(prim::gelu(), {x}, Attrs{{"approximate", approximate}});
}

Tensor gelu_grad(const Tensor& dy, const Tensor& x, const std::string& approximate) {
  check_approximate(approximate);
  return dispatch1(prim::gelu_grad(), {dy, x}, Attrs{{"approximate", approximate}});
}

Tensor activation(ActFn fn, const Tensor& x, double a, double b, double c) {
  Attrs attrs{{"a", a}, {"b", b}, {"c", c}};
  switch (fn) {
#define OF_ACTIVATION_CASE(E, n) \
  case ActFn::k##E:              \
    return dispatch1(prim::activation<ActFn::k##E>(), {x}, attrs);
    OF_ACTIVATION_FNS(OF_ACTIVATION_CASE)
#undef OF_ACTIVATION_CASE
  }
  throw_error<RuntimeError>("activation", "unknown function");
}

Tensor activation_of_difference(ActFn fn, const Tensor& a, const Tensor& b, double p0, double p1,
                                double p2) {
  Attrs attrs{{"a", p0}, {"b", p1}, {"c", p2}};
  const DType dt = float_result(result_type({a, b}));
  const Tensor x = to(a, dt, std::nullopt), y = to(b, dt, std::nullopt);
  switch (fn) {
#define OF_DIFF_CASE(E, n) \
  case ActFn::k##E:        \
    return dispatch1(prim::activation_of_difference<ActFn::k##E>(), {x, y}, attrs);
    OF_DIFF_ACTIVATION_FNS(OF_DIFF_CASE)
#undef OF_DIFF_CASE
    default:
      break;
  }
  throw_error<RuntimeError>(fn_name(fn), "has no fused form on a difference");
}

Tensor activation_grad(ActFn fn, const Tensor& dy, const Tensor& x, const Attrs& attrs) {
  switch (fn) {
#define OF_ACTIVATION_CASE(E, n) \
  case ActFn::k##E:              \
    return dispatch1(prim::activation_grad<ActFn::k##E>(), {dy, x}, attrs);
    OF_ACTIVATION_FNS(OF_ACTIVATION_CASE)
#undef OF_ACTIVATION_CASE
  }
  throw_error<RuntimeError>("activation_grad", "unknown function");
}

Tensor softmax(const Tensor& x_in, int64_t dim, std::optional<DType> dtype) {
  Tensor x = dtype ? to(x_in, *dtype, std::nullopt) : autocast::to_float(x_in, true);
  if (!is_floating(x->dtype()))
    throw_error<NotImplementedError>("softmax", "expected a floating point input, got ",
                                     dtype_name(x->dtype()));
  const int64_t d = wrap_dim("softmax", dim, x->ndim());
  return dispatch1(prim::softmax(), {contiguous(x)}, Attrs{{"dim", d}});
}

Tensor log_softmax(const Tensor& x_in, int64_t dim, std::optional<DType> dtype) {
  Tensor x = dtype ? to(x_in, *dtype, std::nullopt) : autocast::to_float(x_in, true);
  if (!is_floating(x->dtype()))
    throw_error<NotImplementedError>("log_softmax", "expected a floating point input, got ",
                                     dtype_name(x->dtype()));
  const int64_t d = wrap_dim("log_softmax", dim, x->ndim());
  return dispatch1(prim::log_softmax(), {contiguous(x)}, Attrs{{"dim", d}});
}

Tensor softmax_grad(const Tensor& dy, const Tensor& y, int64_t dim) {
  return dispatch1(prim::softmax_grad(), {contiguous(dy), contiguous(y)}, Attrs{{"dim", dim}});
}

namespace {
Tensor inplace_binary(const char* op, const Primitive& p, const Tensor& self, Tensor other) {
  DType dt = result_type({self, other});
  if (!can_cast(dt, self->dtype()))
    throw_error<RuntimeError>(op, "result type ", dtype_name(dt),
                              " can't be cast to the desired output type ",
                              dtype_name(self->dtype()));
  other = to(other, self->dtype(), std::nullopt);
  return dispatch1(p, {self, other}, {}, self);
}
}  // namespace

Tensor add_(const Tensor& self, const Tensor& other, Scalar alpha) {
  if (complex_ops::any(self, other)) [[unlikely]]
    return complex_ops::assign(self, add(self, other, alpha));
  if (fused_alpha(self, other, alpha))
    return addcmul_(self, other, one_like_scalar(self), alpha);  // Note [Fused alpha]
  Tensor y = is_one(alpha) ? other : mul(other, alpha);
  return inplace_binary("add_", prim::add(), self, y);
}

Tensor add_(const Tensor& self, Scalar other, Scalar alpha) {
  if (complex_ops::any(self)) [[unlikely]]
    return complex_ops::assign(self, add(self, other, alpha));
  DType dt;
  const Scalar s = scaled(other, alpha);
  Tensor y = wrap(self, s, &dt);
  return inplace_binary("add_", prim::add(), self, y);
}

Tensor mul_(const Tensor& self, const Tensor& other) {
  if (complex_ops::any(self, other)) [[unlikely]]
    return complex_ops::assign(self, mul(clone(self), other));  // mul saves its operands
  return inplace_binary("mul_", prim::mul(), self, other);
}

Tensor mul_(const Tensor& self, Scalar other) {
  if (complex_ops::any(self)) [[unlikely]]
    return complex_ops::assign(self, mul(clone(self), other));  // mul saves its operands
  DType dt;
  Tensor y = wrap(self, other, &dt);
  if (scalar_in_float32(dt, other))
    return copy_(self, mul(to(self, DType::kFloat32, std::nullopt), other));
  return inplace_binary("mul_", prim::mul(), self, y);
}

}  // namespace functional

}  // namespace oneflow
