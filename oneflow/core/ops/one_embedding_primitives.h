// The kernels of oneflow.one_embedding (embedding/embedding_store.h): a lookup that inserts
// missing keys, the gradient push of its backward and the optimizer update. Each names its
// store by the handle in attrs "store"; each takes the module's `shadow` parameter as input 0,
// so that eager execution and a compiled graph order them as they order any other ops on it.
// A graph keeps the push and the update (kernels without outputs write outside the program) and
// replays all three with the ids of each call.
#pragma once

#include <optional>

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// (shadow, ids [int32/int64, any shape], table_ids [int32, ids' shape] optional) -> rows
// [*ids.shape, embedding_dim] float32. attrs: store, embedding_dim, has_table_ids, padding_idx
// (with has_padding). Differentiable in the shadow only: its gradient pushes the rows'
// gradients into the store and gives the shadow zeros, as OneFlow's lookup does.
class OneEmbeddingLookup final : public Primitive {
 public:
  const char* name() const override { return "one_embedding_lookup"; }
  PrimTraits traits() const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>&) const override { return i == 1; }
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (shadow, ids, rows' gradient float32 [*ids.shape, embedding_dim]) -> nothing; adds to the
// keys' pending gradients. attrs: store, padding_idx (with has_padding).
class OneEmbeddingPushGrad final : public Primitive {
 public:
  const char* name() const override { return "one_embedding_push_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// (shadow, per-step numbers float64) -> nothing; applies the optimizer rule of attrs "kind"
// ("sgd", "adam", "adagrad"; "clear_grad" drops the pending gradients, "scale_grad" multiplies
// them by the first number) to the rows with
// pending gradients. The numbers: SGD and Adagrad [lr], Adam [lr, bias_correction1,
// bias_correction2]; the other hyper-parameters are attrs.
class OneEmbeddingUpdate final : public Primitive {
 public:
  const char* name() const override { return "one_embedding_update"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
const OneEmbeddingLookup& one_embedding_lookup();
const OneEmbeddingPushGrad& one_embedding_push_grad();
const OneEmbeddingUpdate& one_embedding_update();
}  // namespace prim

namespace functional {
// table_ids: null or int32 of ids' shape; padding_idx: null or the padding key.
Tensor one_embedding_lookup(const Tensor& shadow, const Tensor& ids, const Tensor& table_ids,
                            int64_t store, const std::optional<int64_t>& padding_idx);
void one_embedding_update(const Tensor& shadow, const Tensor& scalars, const Attrs& attrs);
}  // namespace functional

}  // namespace oneflow
