// Meta inference, traits and gradient rules of the fused attention primitives declared in
// attention_primitives.h. User-facing checks live in functional/attention.cpp.
#include "oneflow/core/ops/attention_primitives.h"

#include "oneflow/core/functional/attention.h"

namespace oneflow {

namespace {

TensorMeta contiguous_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}

// shape with its last dim replaced by n (dropped when n < 0).
Shape last_dim(Shape shape, int64_t n) {
  if (n < 0)
    shape.pop_back();
  else
    shape.back() = n;
  return shape;
}

}  // namespace

PrimTraits Attention::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> Attention::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 3 && in[0]->ndim() >= 2);
  const Tensor &q = in[0], &v = in[2];
  return {contiguous_meta(last_dim(q->shape(), v->shape().back()), q->dtype(), q->device()),
          contiguous_meta(last_dim(q->shape(), -1), q->dtype(), q->device())};
}

TensorList Attention::grad(const GradContext& ctx, const TensorList& dy) const {
  if (!dy[0]) return {nullptr, nullptr, nullptr};
  return functional::fused_attention_grad(
      ctx.inputs[0], ctx.inputs[1], ctx.inputs[2], ctx.outputs[0], ctx.outputs[1], dy[0],
      ctx.attrs.get<double>("scale"), ctx.attrs.get<bool>("causal"));
}

PrimTraits AttentionGrad::traits() const { return {}; }

std::vector<TensorMeta> AttentionGrad::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 6);
  std::vector<TensorMeta> metas;
  for (size_t i = 0; i < 3; ++i)
    metas.push_back(contiguous_meta(in[i]->shape(), in[i]->dtype(), in[i]->device()));
  return metas;
}

TensorList AttentionGrad::grad(const GradContext&, const TensorList&) const {
  throw_error<RuntimeError>("scaled_dot_product_attention",
                            "the derivative of the fused attention backward is not implemented "
                            "(a second derivative of scaled_dot_product_attention); compute the "
                            "attention with explicit ops to differentiate it twice");
}

namespace prim {
const Attention& attention() {
  static const Attention instance;
  return instance;
}
const AttentionGrad& attention_grad() {
  static const AttentionGrad instance;
  return instance;
}
}  // namespace prim

}  // namespace oneflow
