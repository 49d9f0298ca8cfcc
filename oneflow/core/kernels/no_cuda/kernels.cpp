// Linked when ONEFLOW_WITH_CUDA=OFF: the CUDA kernels of every primitive raise a clear error.
// (A CUDA tensor cannot be created in such a build, so these are reached only by a bug.)
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {
[[noreturn]] void no_cuda(const Primitive& p) {
  throw_error<RuntimeError>(p.name(),
                            "has no CUDA implementation: this oneflow was built "
                            "without CUDA support (ONEFLOW_WITH_CUDA=OFF)");
}
}  // namespace

void Add::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { no_cuda(*this); }
void Sub::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { no_cuda(*this); }
void Mul::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { no_cuda(*this); }
void Relu::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void ReluGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void UnaryGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void ReduceSum::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void VectorNorm2::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void Matmul::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void Copy::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void Fill::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void RandomNormal::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}

void Div::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { no_cuda(*this); }
void Exp::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { no_cuda(*this); }
void Gelu::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void GeluGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void Softmax::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void SoftmaxGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}

void SliceGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void Assign::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void Arange::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void RandomUniform::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}

void Where::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}

void IndexGather::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void IndexPut::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}

void AsStridedGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void Bernoulli::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}

template <UnaryFn K>
void Unary<K>::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
template <BinaryFn K>
void Binary<K>::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
template <CompareFn K>
void Compare<K>::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
template <ActFn K>
void Activation<K>::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
template <ActFn K>
void ActivationGrad<K>::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
template <ActFn K>
void ActivationOfDifference<K>::compute_cuda(const TensorList&, const TensorList&,
                                             const Attrs&) const {
  no_cuda(*this);
}
#define OF_INSTANTIATE_KERNEL(Family, Kind, E)                                         \
  template void Family<Kind::k##E>::compute_cuda(const TensorList&, const TensorList&, \
                                                 const Attrs&) const;
#define OF_UNARY_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Unary, UnaryFn, E)
#define OF_BINARY_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Binary, BinaryFn, E)
#define OF_COMPARE_KERNEL(E, n) OF_INSTANTIATE_KERNEL(Compare, CompareFn, E)
OF_UNARY_FNS(OF_UNARY_KERNEL)
OF_BINARY_FNS(OF_BINARY_KERNEL)
OF_COMPARE_FNS(OF_COMPARE_KERNEL)
#define OF_ACTIVATION_KERNELS(E, n)           \
  OF_INSTANTIATE_KERNEL(Activation, ActFn, E) \
  OF_INSTANTIATE_KERNEL(ActivationGrad, ActFn, E)
OF_ACTIVATION_FNS(OF_ACTIVATION_KERNELS)
#undef OF_ACTIVATION_KERNELS
#define OF_DIFF_KERNELS(E, n) OF_INSTANTIATE_KERNEL(ActivationOfDifference, ActFn, E)
OF_DIFF_ACTIVATION_FNS(OF_DIFF_KERNELS)
#undef OF_DIFF_KERNELS

void Pow::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { no_cuda(*this); }

#define OF_NO_CUDA(Cls)                                                              \
  void Cls::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { \
    no_cuda(*this);                                                                  \
  }
OF_NO_CUDA(Cumsum)
OF_NO_CUDA(Cumprod)
OF_NO_CUDA(Sort)
OF_NO_CUDA(Flip)
OF_NO_CUDA(Triangle)
OF_NO_CUDA(AdamUpdate)
OF_NO_CUDA(LayerNorm)
OF_NO_CUDA(BatchNorm)
OF_NO_CUDA(BatchNormGrad)
OF_NO_CUDA(BatchNormInference)
OF_NO_CUDA(LogSoftmax)
OF_NO_CUDA(LogSoftmaxGrad)
OF_NO_CUDA(LayerNormGrad)
OF_NO_CUDA(GroupNorm)
OF_NO_CUDA(GroupNormGrad)
OF_NO_CUDA(SgdUpdate)
OF_NO_CUDA(Mode)
OF_NO_CUDA(Inverse)
OF_NO_CUDA(Det)
template <>
OF_NO_CUDA(CumExtreme<ReduceFn::kMax>)
template <>
OF_NO_CUDA(CumExtreme<ReduceFn::kMin>)
OF_NO_CUDA(Gather) OF_NO_CUDA(Scatter) OF_NO_CUDA(Cat) OF_NO_CUDA(SearchSorted)
    OF_NO_CUDA(Histc) template <>
    OF_NO_CUDA(Reduce<ReduceFn::kProd>)
    template <>
    OF_NO_CUDA(Reduce<ReduceFn::kMax>)
    template <>
    OF_NO_CUDA(Reduce<ReduceFn::kMin>)
    template <>
    OF_NO_CUDA(ArgReduce<ReduceFn::kMax>)
    template <>
    OF_NO_CUDA(ArgReduce<ReduceFn::kMin>)
#undef OF_NO_CUDA

}  // namespace oneflow
