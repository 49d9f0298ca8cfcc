// CPU kernels of the one_embedding ops (ops/one_embedding_primitives.h): they call the key-value
// store (embedding/embedding_store.h) in the engine's order. The store lives in host memory;
// CUDA ids are not supported yet.
#include <vector>

#include "oneflow/core/embedding/embedding_store.h"
#include "oneflow/core/ops/one_embedding_primitives.h"

namespace oneflow {

namespace {

// The ids as int64: int64 ids in place, int32 ids widened into `widened`.
const int64_t* keys_of(const Tensor& ids, std::vector<int64_t>* widened) {
  if (ids->dtype() == DType::kInt64) return ids->read_as<int64_t>();
  const int64_t n = ids->numel();
  const int32_t* p = ids->read_as<int32_t>();
  widened->assign(p, p + n);
  return widened->data();
}

std::optional<int64_t> padding_of(const Attrs& attrs) {
  if (!attrs.get<bool>("has_padding")) return std::nullopt;
  return attrs.get<int64_t>("padding_idx");
}

[[noreturn]] void no_cuda_kernel(const Primitive& p) {
  throw_error<NotImplementedError>(p.name(),
                                   "the CUDA kernel is not implemented yet: the table lives in "
                                   "host memory; pass CPU ids");
}

embedding::UpdateRule rule_of(const Attrs& a) {
  embedding::UpdateRule r;
  const std::string& kind = a.get<std::string>("kind");
  if (kind == "sgd") {
    r.kind = embedding::UpdateRule::Kind::kSgd;
    r.momentum = a.get<double>("momentum");
    r.dampening = a.get<double>("dampening");
    r.nesterov = a.get<bool>("nesterov") ? 1 : 0;
  } else if (kind == "adam") {
    r.kind = embedding::UpdateRule::Kind::kAdam;
    r.beta1 = a.get<double>("beta1");
    r.beta2 = a.get<double>("beta2");
    r.eps = a.get<double>("eps");
    r.decoupled = a.get<bool>("decoupled") ? 1 : 0;
  } else if (kind == "adagrad") {
    r.kind = embedding::UpdateRule::Kind::kAdagrad;
    r.eps = a.get<double>("eps");
    r.initial_accumulator = a.get<double>("initial_accumulator_value");
  } else {
    throw_error<NotImplementedError>("one_embedding_update", "no update rule named '", kind, "'");
  }
  r.weight_decay = a.get<double>("weight_decay");
  r.maximize = a.get<bool>("maximize");
  return r;
}

}  // namespace

void OneEmbeddingLookup::compute_cpu(const TensorList& in, const TensorList& out,
                                     const Attrs& attrs) const {
  const auto store = embedding::find_store(attrs.get<int64_t>("store"));
  std::vector<int64_t> widened;
  const int64_t* keys = keys_of(in[1], &widened);
  const int32_t* tables = attrs.get<bool>("has_table_ids") ? in[2]->read_as<int32_t>() : nullptr;
  const std::optional<int64_t> padding = padding_of(attrs);
  store->lookup(keys, tables, in[1]->numel(), padding ? &*padding : nullptr,
                out[0]->data_as<float>());
}

void OneEmbeddingPushGrad::compute_cpu(const TensorList& in, const TensorList&,
                                       const Attrs& attrs) const {
  const auto store = embedding::find_store(attrs.get<int64_t>("store"));
  std::vector<int64_t> widened;
  const int64_t* keys = keys_of(in[1], &widened);
  const std::optional<int64_t> padding = padding_of(attrs);
  store->push_grad(keys, in[1]->numel(), padding ? &*padding : nullptr, in[2]->read_as<float>());
}

void OneEmbeddingUpdate::compute_cpu(const TensorList& in, const TensorList&,
                                     const Attrs& attrs) const {
  const auto store = embedding::find_store(attrs.get<int64_t>("store"));
  const std::string& kind = attrs.get<std::string>("kind");
  if (kind == "clear_grad") {
    store->clear_grad();
    return;
  }
  if (kind == "scale_grad") {
    store->scale_grad(in[1]->read_as<double>()[0]);
    return;
  }
  store->update(rule_of(attrs), in[1]->read_as<double>());
}

void OneEmbeddingLookup::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda_kernel(*this);
}
void OneEmbeddingPushGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda_kernel(*this);
}
void OneEmbeddingUpdate::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda_kernel(*this);
}

}  // namespace oneflow
