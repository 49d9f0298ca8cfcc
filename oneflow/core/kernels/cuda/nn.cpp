// CUDA kernels of the convolution and pooling primitives: not written yet (cuDNN is the plan,
// DESIGN.md section 9). Each registers for the host fallback (Note [Host fallback] in
// dispatch/host_fallback.h); with the fallback off, a CUDA tensor reaching them raises
// NotImplementedError naming the op.
#include "oneflow/core/dispatch/host_fallback.h"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {
[[noreturn]] void not_yet(const Primitive& p, const char* ops) {
  throw_error<NotImplementedError>(p.name(), "the CUDA kernel is not implemented yet (", ops,
                                   " run on CPU tensors only)");
}
}  // namespace

#define OF_NN_CUDA_PENDING(cls, ops)                                                 \
  void cls::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { \
    not_yet(*this, ops);                                                             \
  }                                                                                  \
  [[maybe_unused]] static const bool cls##_pending = register_cuda_pending(typeid(cls));
OF_NN_CUDA_PENDING(ConvForward, "conv1d/conv2d/conv3d")
OF_NN_CUDA_PENDING(ConvBackwardData, "conv backward and conv_transpose1d/2d/3d")
OF_NN_CUDA_PENDING(ConvBackwardWeight, "conv backward")
OF_NN_CUDA_PENDING(MaxPool, "max_pool1d/2d/3d")
OF_NN_CUDA_PENDING(MaxPoolGrad, "max pooling backward")
OF_NN_CUDA_PENDING(AvgPool, "avg_pool1d/2d/3d")
OF_NN_CUDA_PENDING(AvgPoolGrad, "avg pooling backward")
OF_NN_CUDA_PENDING(AdaptiveAvgPool, "adaptive_avg_pool1d/2d/3d")
OF_NN_CUDA_PENDING(AdaptiveAvgPoolGrad, "adaptive_avg_pool backward")
OF_NN_CUDA_PENDING(AdaptiveMaxPool, "adaptive_max_pool1d/2d/3d")
#undef OF_NN_CUDA_PENDING

}  // namespace oneflow
