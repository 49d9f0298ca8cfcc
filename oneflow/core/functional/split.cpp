// split / chunk as one multi-output view (functional/split.h, ops/split_primitive.h).
#include "oneflow/core/functional/split.h"

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/ops/split_primitive.h"

namespace oneflow {

namespace functional {

namespace {

std::string sizes_str(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

}  // namespace

TensorList split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  if (x->ndim() == 0)
    throw_error<RuntimeError>("split", "split expects at least a 1-dimensional tensor");
  const int64_t d = wrap_dim("split", dim, x->ndim());
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      throw_error<RuntimeError>("split",
                                "split_with_sizes expects split_sizes have only "
                                "non-negative entries, but got split_sizes=",
                                sizes_str(sizes));
    total += s;
  }
  if (total != x->shape()[d])
    throw_error<RuntimeError>("split", "split_with_sizes expects split_sizes to sum exactly to ",
                              x->shape()[d], " (input tensor's size at dimension ", d,
                              "), but got split_sizes=", sizes_str(sizes));
  return dispatch(prim::split(), {x}, Attrs{{"dim", d}, {"sizes", sizes}});
}

}  // namespace functional

}  // namespace oneflow
