// Meta inference of CheckIndexRange (index_check_primitive.h).
#include "oneflow/core/ops/index_check_primitive.h"

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/graph/graph.h"

namespace oneflow {

PrimTraits CheckIndexRange::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> CheckIndexRange::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 1);
  OF_ASSERT(in[0]->dtype() == DType::kInt64 || in[0]->dtype() == DType::kInt32);
  return {};
}

namespace prim {
const CheckIndexRange& check_index_range() {
  static const CheckIndexRange instance;
  return instance;
}
}  // namespace prim

namespace functional {

void record_index_check(const Tensor& index, int64_t lo, int64_t hi, const std::string& op,
                        int64_t dim, int64_t size) {
  if (!graph::tracing() || index->global() || index->device().type != DeviceType::kCPU ||
      (index->dtype() != DType::kInt64 && index->dtype() != DType::kInt32))
    return;
  dispatch(prim::check_index_range(), {index},
           Attrs{{"lo", lo}, {"hi", hi}, {"op", op}, {"dim", dim}, {"size", size}});
}

}  // namespace functional

}  // namespace oneflow
