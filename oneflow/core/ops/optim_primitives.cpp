// Meta inference and traits of the fused optimizer updates: no outputs, not differentiable; the
// functional layer bumps the version of every tensor the kernel wrote.
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {
void check_update_inputs(const char* op, const TensorList& in, size_t min_n, size_t max_n) {
  if (in.size() < min_n || in.size() > max_n)
    throw_error<RuntimeError>(op, "expected ", min_n, " to ", max_n, " tensors, got ", in.size());
  for (const Tensor& t : in) {
    if (t->dtype() != in[0]->dtype() || t->shape() != in[0]->shape())
      throw_error<RuntimeError>(op, "expected tensors of one dtype and shape, got ",
                                dtype_name(t->dtype()), shape_str(t->shape()), " and ",
                                dtype_name(in[0]->dtype()), shape_str(in[0]->shape()));
    if (!t->is_contiguous()) throw_error<RuntimeError>(op, "expected contiguous tensors");
  }
  if (!is_floating(in[0]->dtype()))
    throw_error<RuntimeError>(op, "expected floating point tensors, got ",
                              dtype_name(in[0]->dtype()));
}

PrimTraits update_traits() {
  PrimTraits t;
  t.differentiable = false;
  return t;
}
}  // namespace

PrimTraits AdamUpdate::traits() const { return update_traits(); }

std::vector<TensorMeta> AdamUpdate::infer(const TensorList& in, const Attrs&) const {
  check_update_inputs(name(), in, 4, 4);
  return {};
}

PrimTraits SgdUpdate::traits() const { return update_traits(); }

std::vector<TensorMeta> SgdUpdate::infer(const TensorList& in, const Attrs&) const {
  check_update_inputs(name(), in, 2, 3);
  return {};
}

namespace prim {
const AdamUpdate& adam_update() {
  static const AdamUpdate instance;
  return instance;
}
const SgdUpdate& sgd_update() {
  static const SgdUpdate instance;
  return instance;
}
}  // namespace prim

}  // namespace oneflow
