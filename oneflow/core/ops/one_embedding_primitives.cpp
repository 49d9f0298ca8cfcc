// Meta inference and gradients of the one_embedding kernels (one_embedding_primitives.h).
#include "oneflow/core/ops/one_embedding_primitives.h"

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/embedding/embedding_store.h"
#include "oneflow/core/functional/functional.h"

namespace oneflow {

namespace {

Attrs key_attrs(const Attrs& attrs) {
  Attrs out{{"store", attrs.get<int64_t>("store")},
            {"has_padding", attrs.get<bool>("has_padding")}};
  if (attrs.get<bool>("has_padding")) out.set("padding_idx", attrs.get<int64_t>("padding_idx"));
  return out;
}

void check_ids(const char* op, const Tensor& ids) {
  if (ids->dtype() != DType::kInt64 && ids->dtype() != DType::kInt32)
    throw_error<TypeError>(op, "expected int32 or int64 ids, got ", dtype_name(ids->dtype()));
  if (!ids->is_contiguous()) throw_error<RuntimeError>(op, "expected contiguous ids");
}

PrimTraits side_effect_traits() {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

}  // namespace

PrimTraits OneEmbeddingLookup::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

uint64_t OneEmbeddingLookup::cpu_work(const TensorList& in, const TensorList& out) const {
  return in[1]->numel() * 8 + out[0]->numel() * 4;
}

std::vector<TensorMeta> OneEmbeddingLookup::infer(const TensorList& in, const Attrs& attrs) const {
  const bool has_table_ids = attrs.get<bool>("has_table_ids");
  if (in.size() != (has_table_ids ? 3u : 2u))
    throw_error<RuntimeError>(name(), "expected shadow, ids",
                              has_table_ids ? " and table_ids" : "");
  const Tensor& ids = in[1];
  check_ids(name(), ids);
  if (has_table_ids) {
    const Tensor& t = in[2];
    if (t->dtype() != DType::kInt32 || t->shape() != ids->shape() || !t->is_contiguous())
      throw_error<RuntimeError>(name(), "expected contiguous int32 table_ids of shape ",
                                shape_str(ids->shape()), ", got ", dtype_name(t->dtype()),
                                shape_str(t->shape()));
  }
  Shape shape = ids->shape();
  shape.push_back(attrs.get<int64_t>("embedding_dim"));
  Strides strides = contiguous_strides(shape);
  return {TensorMeta{std::move(shape), std::move(strides), 0, DType::kFloat32, ids->device()}};
}

TensorList OneEmbeddingLookup::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(ctx.input_metas.size());
  if (!ctx.needs_input_grad[0] || !dy[0]) return dx;
  const Tensor& shadow = ctx.inputs[0];
  const Tensor g = functional::contiguous(functional::to(dy[0], DType::kFloat32, std::nullopt));
  dispatch(prim::one_embedding_push_grad(), {shadow, ctx.inputs[1], g}, key_attrs(ctx.attrs));
  dx[0] = functional::zeros_like(shadow);
  return dx;
}

PrimTraits OneEmbeddingPushGrad::traits() const { return side_effect_traits(); }

std::vector<TensorMeta> OneEmbeddingPushGrad::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 3);
  check_ids(name(), in[1]);
  OF_ASSERT(in[2]->dtype() == DType::kFloat32 && in[2]->is_contiguous());
  OF_ASSERT(in[2]->numel() % std::max<int64_t>(in[1]->numel(), 1) == 0);
  return {};
}

PrimTraits OneEmbeddingUpdate::traits() const { return side_effect_traits(); }

std::vector<TensorMeta> OneEmbeddingUpdate::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 2);
  const Tensor& s = in[1];
  const int64_t count = attrs.get<std::string>("kind") == "adam" ? 3 : 1;
  if (s->dtype() != DType::kFloat64 || !s->is_contiguous() ||
      s->device().type != DeviceType::kCPU || s->numel() < count)
    throw_error<RuntimeError>(name(),
                              "expected the per-step numbers as a contiguous CPU "
                              "float64 tensor of ",
                              count, " elements, got ", dtype_name(s->dtype()),
                              shape_str(s->shape()), " on ", s->device().str());
  return {};
}

namespace prim {
const OneEmbeddingLookup& one_embedding_lookup() {
  static const OneEmbeddingLookup instance;
  return instance;
}
const OneEmbeddingPushGrad& one_embedding_push_grad() {
  static const OneEmbeddingPushGrad instance;
  return instance;
}
const OneEmbeddingUpdate& one_embedding_update() {
  static const OneEmbeddingUpdate instance;
  return instance;
}
}  // namespace prim

namespace functional {

Tensor one_embedding_lookup(const Tensor& shadow, const Tensor& ids, const Tensor& table_ids,
                            int64_t store, const std::optional<int64_t>& padding_idx) {
  const auto handle = embedding::find_store(store);  // raises when released
  Attrs attrs{{"store", store},
              {"embedding_dim", handle->options().embedding_dim},
              {"has_table_ids", table_ids != nullptr},
              {"has_padding", padding_idx.has_value()}};
  if (padding_idx) attrs.set("padding_idx", *padding_idx);
  TensorList in = {shadow, contiguous(ids)};
  if (table_ids) in.push_back(contiguous(table_ids));
  Tensor rows = dispatch1(prim::one_embedding_lookup(), in, attrs);
  // Rows come in the store's float32; the result takes the shadow's dtype, as OneFlow's.
  return shadow->dtype() == DType::kFloat32 ? rows : to(rows, shadow->dtype(), std::nullopt);
}

void one_embedding_update(const Tensor& shadow, const Tensor& scalars, const Attrs& attrs) {
  embedding::find_store(attrs.get<int64_t>("store"));
  dispatch(prim::one_embedding_update(), {shadow, scalars}, attrs);
}

}  // namespace functional

}  // namespace oneflow
