// PairLoss, PairLossGrad, NllLoss, NllLossGrad, Resample, ResampleGrad, Attention,
// AttentionGrad and the Ternary ops have no CUDA kernels: F.mse_loss, F.nll_loss,
// F.interpolate, F.scaled_dot_product_attention, addcmul, addcdiv and lerp compose other ops for
// CUDA tensors
// (functional/nn_functional.cpp and the Python nn.functional), so these run only when the
// primitives are dispatched directly.
#include "oneflow/core/ops/attention_primitives.h"
#include "oneflow/core/ops/nn_primitives.h"
#include "oneflow/core/ops/ternary_primitives.h"

namespace oneflow {

void PairLoss::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the fused kernel is CPU-only");
}

void PairLossGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the fused kernel is CPU-only");
}

void NllLoss::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the fused kernel is CPU-only");
}

void NllLossGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the fused kernel is CPU-only");
}

void Resample::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the fused kernel is CPU-only");
}

void ResampleGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the fused kernel is CPU-only");
}

void Attention::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the fused kernel is CPU-only");
}

void AttentionGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the fused kernel is CPU-only");
}

template <TernaryFn K>
void Ternary<K>::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  throw_error<NotImplementedError>(name(), "the fused kernel is CPU-only");
}
template void Ternary<TernaryFn::kAddcmul>::compute_cuda(const TensorList&, const TensorList&,
                                                         const Attrs&) const;
template void Ternary<TernaryFn::kAddcdiv>::compute_cuda(const TensorList&, const TensorList&,
                                                         const Attrs&) const;
template void Ternary<TernaryFn::kLerp>::compute_cuda(const TensorList&, const TensorList&,
                                                      const Attrs&) const;

}  // namespace oneflow
