// Linked when ONEFLOW_WITH_CUDA=OFF: the CUDA kernels of the convolution, pooling, loss,
// resampling, attention, small-op and fused pointwise (Ternary) primitives
// (see kernels/no_cuda/kernels.cpp for the others).
#include "oneflow/core/ops/attention_primitives.h"
#include "oneflow/core/ops/complex_primitives.h"
#include "oneflow/core/ops/nn_primitives.h"
#include "oneflow/core/ops/sampling_primitives.h"
#include "oneflow/core/ops/small_ops_primitives.h"
#include "oneflow/core/ops/special_primitives.h"
#include "oneflow/core/ops/ternary_primitives.h"

namespace oneflow {

namespace {
[[noreturn]] void no_cuda(const Primitive& p) {
  throw_error<RuntimeError>(p.name(),
                            "has no CUDA implementation: this oneflow was built "
                            "without CUDA support (ONEFLOW_WITH_CUDA=OFF)");
}
}  // namespace

#define OF_NN_NO_CUDA(cls)                                                           \
  void cls::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { \
    no_cuda(*this);                                                                  \
  }
OF_NN_NO_CUDA(ConvForward)
OF_NN_NO_CUDA(ConvBackwardData)
OF_NN_NO_CUDA(ConvBackwardWeight)
OF_NN_NO_CUDA(MaxPool)
OF_NN_NO_CUDA(MaxPoolGrad)
OF_NN_NO_CUDA(AvgPool)
OF_NN_NO_CUDA(AvgPoolGrad)
OF_NN_NO_CUDA(AdaptiveAvgPool)
OF_NN_NO_CUDA(AdaptiveAvgPoolGrad)
OF_NN_NO_CUDA(AdaptiveMaxPool)
OF_NN_NO_CUDA(Pad)
OF_NN_NO_CUDA(PadGrad)
OF_NN_NO_CUDA(PairLoss)
OF_NN_NO_CUDA(PairLossGrad)
OF_NN_NO_CUDA(NllLoss)
OF_NN_NO_CUDA(NllLossGrad)
OF_NN_NO_CUDA(Resample)
OF_NN_NO_CUDA(ResampleGrad)
OF_NN_NO_CUDA(Attention)
OF_NN_NO_CUDA(AttentionGrad)
OF_NN_NO_CUDA(OneHot)
OF_NN_NO_CUDA(Dot)
OF_NN_NO_CUDA(Trace)
OF_NN_NO_CUDA(Outer)
OF_NN_NO_CUDA(Bincount)
OF_NN_NO_CUDA(Cross)
OF_NN_NO_CUDA(GridSample)
OF_NN_NO_CUDA(GridSampleGrad)
OF_NN_NO_CUDA(Pdist)
OF_NN_NO_CUDA(PdistGrad)
OF_NN_NO_CUDA(CtcLoss)
OF_NN_NO_CUDA(CtcLossGrad)
OF_NN_NO_CUDA(SegmentMax)
OF_NN_NO_CUDA(SegmentMaxGrad)
OF_NN_NO_CUDA(Igamma)
OF_NN_NO_CUDA(ComplexAbs)
OF_NN_NO_CUDA(ComplexMul)
OF_NN_NO_CUDA(FftC2C)
OF_NN_NO_CUDA(FftR2C)
OF_NN_NO_CUDA(FftC2R)
#undef OF_NN_NO_CUDA

template <TernaryFn K>
void Ternary<K>::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
template void Ternary<TernaryFn::kAddcmul>::compute_cuda(const TensorList&, const TensorList&,
                                                         const Attrs&) const;
template void Ternary<TernaryFn::kAddcdiv>::compute_cuda(const TensorList&, const TensorList&,
                                                         const Attrs&) const;
template void Ternary<TernaryFn::kLerp>::compute_cuda(const TensorList&, const TensorList&,
                                                      const Attrs&) const;

}  // namespace oneflow
