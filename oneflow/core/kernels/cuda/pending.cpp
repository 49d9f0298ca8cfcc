// CUDA entry points of primitives whose device kernels are not written yet: each registers its
// class for the host fallback (Note [Host fallback] in dispatch/host_fallback.h), so that eager
// dispatch runs it on host copies of GPU inputs; with the fallback off, dispatch raises
// NotImplementedError naming the op, and so does the stub if it is reached some other way. Cat
// already runs on the GPU (its kernel is a set of strided copies).
#include "oneflow/core/dispatch/host_fallback.h"
#include "oneflow/core/kernels/common/stack_slices.h"
#include "oneflow/core/kernels/cuda/cuda_kernels.h"
#include "oneflow/core/ops/complex_primitives.h"
#include "oneflow/core/ops/primitives.h"
#include "oneflow/core/ops/sampling_primitives.h"
#include "oneflow/core/ops/small_ops_primitives.h"
#include "oneflow/core/ops/special_primitives.h"

namespace oneflow {

namespace {
[[noreturn]] void not_yet(const Primitive& p) {
  throw_error<NotImplementedError>(p.name(), "the CUDA kernel is not implemented yet");
}
}  // namespace

// The fused optimizer updates write into their inputs (the parameter and its state): a host copy
// would take the update, so they are not registered for the host fallback (flow.optim uses them
// for CPU parameters only).
void AdamUpdate::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  not_yet(*this);
}
void SgdUpdate::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  not_yet(*this);
}

void Cat::compute_cuda(const TensorList& in_, const TensorList& out, const Attrs& attrs) const {
  const int64_t dim = attrs.get<int64_t>("dim");
  const Tensor& o = out[0];
  const TensorList in = attrs.has("stack") ? stack_slices(in_, dim) : in_;
  int64_t start = 0;
  for (const Tensor& t : in) {
    const int64_t len = t->shape()[dim];
    if (t->numel() > 0)
      copy_cuda(t, make_view(o, t->shape(), o->strides(), o->offset() + start * o->strides()[dim]));
    start += len;
  }
}

#define OF_PENDING_FLAG_(n) pending_##n
#define OF_PENDING_FLAG(n) OF_PENDING_FLAG_(n)
#define OF_NOT_YET(Cls)                                                              \
  void Cls::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { \
    not_yet(*this);                                                                  \
  }                                                                                  \
  [[maybe_unused]] static const bool OF_PENDING_FLAG(__COUNTER__) =                  \
      register_cuda_pending(typeid(Cls));
OF_NOT_YET(VectorNorm2)
OF_NOT_YET(OneHot)
OF_NOT_YET(Dot)
OF_NOT_YET(Trace)
OF_NOT_YET(Outer)
OF_NOT_YET(Bincount)
OF_NOT_YET(Cross)
OF_NOT_YET(GridSample)
OF_NOT_YET(GridSampleGrad)
OF_NOT_YET(Pdist)
OF_NOT_YET(PdistGrad)
OF_NOT_YET(CtcLoss)
OF_NOT_YET(CtcLossGrad)
OF_NOT_YET(SegmentMax)
OF_NOT_YET(SegmentMaxGrad)
OF_NOT_YET(Igamma)
OF_NOT_YET(ComplexAbs)
OF_NOT_YET(ComplexMul)
OF_NOT_YET(FftC2C)
OF_NOT_YET(FftR2C)
OF_NOT_YET(FftC2R)
OF_NOT_YET(Sort)
OF_NOT_YET(Mode)
OF_NOT_YET(Inverse)
OF_NOT_YET(Det)
OF_NOT_YET(Gather)
OF_NOT_YET(Scatter) OF_NOT_YET(SearchSorted) OF_NOT_YET(Histc)
#undef OF_NOT_YET
#undef OF_PENDING_FLAG
#undef OF_PENDING_FLAG_

}  // namespace oneflow
