// How kernels of both backends see their operands: a matmul operand as [batch, rows, cols] with
// element strides, and a tensor as [outer, n, inner] around one dim (softmax, reductions).
#pragma once

#include "oneflow/core/framework/tensor.h"

namespace oneflow {

struct Mat {
  int64_t batch, rows, cols;
  int64_t bstride, rstride, cstride;  // elements
};

// A 2-D or 3-D tensor as a Mat. Size-1 dims may carry any stride; they are normalised so that
// layout checks see a plain one.
inline Mat as_mat(const Tensor& t) {
  const int64_t nd = t->ndim();
  const auto &s = t->shape(), &st = t->strides();
  Mat m{nd == 3 ? s[0] : 1, s[nd - 2], s[nd - 1], nd == 3 ? st[0] : 0, st[nd - 2], st[nd - 1]};
  if (m.rows == 1) m.rstride = m.cols;
  if (m.cols == 1) m.cstride = 1;
  if (m.batch == 1) m.bstride = m.rows * m.cols;
  return m;
}

struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
};

// A contiguous tensor of `shape` as [outer, n, inner] around `dim`.
inline Rows rows_around(const Shape& shape, int64_t dim) {
  Rows r;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim) r.outer *= shape[d];
    if (d == dim) r.n = shape[d];
    if (d > dim) r.inner *= shape[d];
  }
  return r;
}

}  // namespace oneflow
