// CPU kernels of gather, scatter and cat. Index bounds are checked before anything is written,
// so a bad index raises without leaving a half-written output.
#include <string>

#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

// Element offset (in `strides`) of the element with flat row-major index k of `shape`, with the
// coordinate along `dim` replaced by `dim_index` when dim >= 0.
inline int64_t offset_of(int64_t k, const Shape& shape, const Strides& strides, int64_t dim,
                         int64_t dim_index) {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    const int64_t c = k % shape[d];
    k /= shape[d];
    off += (d == dim ? dim_index : c) * strides[d];
  }
  return off;
}

void check_indices(const char* op, const Tensor& index, int64_t size, int64_t dim) {
  const int64_t* idx = index->data_as<int64_t>();
  for (int64_t k = 0; k < index->numel(); ++k)
    if (idx[k] < 0 || idx[k] >= size)
      throw_error<RuntimeError>(op, "index ", idx[k], " is out of bounds for dimension ", dim,
                                " with size ", size);
}

}  // namespace

void Gather::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor &x = in[0], &index = in[1];
  const int64_t dim = attrs.get<int64_t>("dim");
  const int64_t n = index->numel();
  if (n == 0) return;
  const int64_t size = x->ndim() == 0 ? 1 : x->shape()[dim];
  if (attrs.has("target_of")) {
    const std::string& loss = attrs.get<std::string>("target_of");
    const int64_t* t = index->data_as<int64_t>();
    for (int64_t k = 0; k < n; ++k)
      if (t[k] < 0 || t[k] >= size)
        throw_error<IndexError>(loss.c_str(), "target ", t[k],
                                " is out of bounds (expected values in [0, ", size, "))");
  }
  check_indices(name(), index, size, dim);
  const int64_t* idx = index->data_as<int64_t>();
  const Shape& shape = index->shape();
  Strides xs = x->strides();
  if (xs.empty()) xs.push_back(0);
  Shape ishape = shape.empty() ? Shape{1} : shape;
  visit_dtype(x->dtype(), [&]<typename T>() {
    const T* src = x->data_as<T>();
    T* dst = out[0]->data_as<T>();
#pragma omp parallel for schedule(static) if (n > cpu::kParallelGrain)
    for (int64_t k = 0; k < n; ++k) dst[k] = src[offset_of(k, ishape, xs, dim, idx[k])];
  });
}

void Scatter::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor &self = in[0], &index = in[1], &src = in[2];
  const int64_t dim = attrs.get<int64_t>("dim");
  const std::string& reduce = attrs.get<std::string>("reduce");
  copy_cpu(self, out[0]);
  const int64_t n = index->numel();
  if (n == 0) return;
  const int64_t size = self->ndim() == 0 ? 1 : self->shape()[dim];
  check_indices(name(), index, size, dim);
  const int64_t* idx = index->data_as<int64_t>();
  Shape ishape = index->shape().empty() ? Shape{1} : index->shape();
  Strides os = out[0]->strides(), ss = src->strides();
  if (os.empty()) os.push_back(0);
  if (ss.empty()) ss.push_back(0);
  visit_dtype(self->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    T* o = out[0]->data_as<T>();
    const T* s = src->data_as<T>();
    for (int64_t k = 0; k < n; ++k) {
      T& dst = o[offset_of(k, ishape, os, dim, idx[k])];
      const T v = s[offset_of(k, ishape, ss, -1, 0)];
      if (reduce == "none") {
        dst = v;
      } else if (reduce == "add") {
        if constexpr (std::is_same_v<T, bool>)
          dst = dst || v;
        else
          dst = T(C(dst) + C(v));
      } else if (reduce == "multiply") {
        if constexpr (std::is_same_v<T, bool>)
          dst = dst && v;
        else
          dst = T(C(dst) * C(v));
      } else if (reduce == "amax") {
        if (C(v) > C(dst) || C(v) != C(v)) dst = v;
      } else {
        if (C(v) < C(dst) || C(v) != C(v)) dst = v;
      }
    }
  });
}

void Cat::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const int64_t dim = attrs.get<int64_t>("dim");
  const Tensor& o = out[0];
  int64_t start = 0;
  for (const Tensor& t : in) {
    const int64_t len = t->shape()[dim];
    if (t->numel() > 0)
      copy_cpu(t, make_view(o, t->shape(), o->strides(), o->offset() + start * o->strides()[dim]));
    start += len;
  }
}

}  // namespace oneflow
