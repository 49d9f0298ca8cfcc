// Meta inference and gradient of Split (split_primitive.h).
#include "oneflow/core/ops/split_primitive.h"

#include "oneflow/core/functional/functional.h"

namespace oneflow {

PrimTraits Split::traits() const {
  PrimTraits t;
  t.is_view = true;
  return t;
}

std::vector<TensorMeta> Split::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  const int64_t dim = attrs.get<int64_t>("dim");
  const auto& sizes = attrs.get<std::vector<int64_t>>("sizes");
  const TensorMeta& m = in[0]->meta();
  OF_ASSERT(dim >= 0 && dim < static_cast<int64_t>(m.shape.size()));
  std::vector<TensorMeta> metas;
  int64_t start = 0;
  for (int64_t size : sizes) {
    TensorMeta out = m;
    out.shape[dim] = size;
    if (size > 0) out.offset += start * m.strides[dim];
    metas.push_back(out);
    start += size;
  }
  OF_ASSERT(start == m.shape[dim]);
  return metas;
}

TensorList Split::grad(const GradContext& ctx, const TensorList& dy) const {
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  const TensorMeta& in = ctx.input_metas[0];
  const auto& sizes = ctx.attrs.get<std::vector<int64_t>>("sizes");
  TensorList parts;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (dy[i]) {
      parts.push_back(dy[i]);
    } else {
      Shape shape = in.shape;
      shape[dim] = sizes[i];
      parts.push_back(functional::zeros(shape, CreationOptions{in.dtype, in.device, ""}));
    }
  }
  return {functional::cat(parts, dim)};
}

namespace prim {
const Split& split() {
  static const Split instance;
  return instance;
}
}  // namespace prim

}  // namespace oneflow
