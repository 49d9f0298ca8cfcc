// The inputs of a stacking cat (Cat with attrs "stack", torch.stack) as views with a size-1 dim
// inserted at `dim`: the cat of these views along `dim` is the stack. Views of the inputs'
// memory made in the kernel, not dispatched (no autograd, no op per input).
#pragma once

#include "oneflow/core/framework/tensor.h"

namespace oneflow {

inline TensorList stack_slices(const TensorList& in, int64_t dim) {
  TensorList views;
  views.reserve(in.size());
  for (const Tensor& t : in) {
    Shape shape = t->shape();
    Strides strides = t->strides();
    shape.insert(shape.begin() + dim, 1);
    // the new dim's stride: what a contiguous layout would give it (any value serves size 1)
    int64_t stride = 1;
    for (size_t d = dim; d < t->shape().size(); ++d) stride *= t->shape()[d];
    strides.insert(strides.begin() + dim, stride);
    views.push_back(make_view(t, shape, strides, t->offset()));
  }
  return views;
}

}  // namespace oneflow
