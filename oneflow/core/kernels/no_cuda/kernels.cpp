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
void Mul::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { no_cuda(*this); }
void Relu::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void ReluGrad::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
void ReduceSum::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
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
template <CompareFn K>
void Compare<K>::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const {
  no_cuda(*this);
}
template void Unary<UnaryFn::kAbs>::compute_cuda(const TensorList&, const TensorList&,
                                                 const Attrs&) const;
template void Unary<UnaryFn::kSqrt>::compute_cuda(const TensorList&, const TensorList&,
                                                  const Attrs&) const;
template void Unary<UnaryFn::kRsqrt>::compute_cuda(const TensorList&, const TensorList&,
                                                   const Attrs&) const;
template void Unary<UnaryFn::kLog>::compute_cuda(const TensorList&, const TensorList&,
                                                 const Attrs&) const;
template void Unary<UnaryFn::kLog1p>::compute_cuda(const TensorList&, const TensorList&,
                                                   const Attrs&) const;
template void Unary<UnaryFn::kSin>::compute_cuda(const TensorList&, const TensorList&,
                                                 const Attrs&) const;
template void Unary<UnaryFn::kCos>::compute_cuda(const TensorList&, const TensorList&,
                                                 const Attrs&) const;
template void Unary<UnaryFn::kTanh>::compute_cuda(const TensorList&, const TensorList&,
                                                  const Attrs&) const;
template void Unary<UnaryFn::kSigmoid>::compute_cuda(const TensorList&, const TensorList&,
                                                     const Attrs&) const;
template void Unary<UnaryFn::kFloor>::compute_cuda(const TensorList&, const TensorList&,
                                                   const Attrs&) const;
template void Unary<UnaryFn::kCeil>::compute_cuda(const TensorList&, const TensorList&,
                                                  const Attrs&) const;
template void Unary<UnaryFn::kRound>::compute_cuda(const TensorList&, const TensorList&,
                                                   const Attrs&) const;
template void Unary<UnaryFn::kReciprocal>::compute_cuda(const TensorList&, const TensorList&,
                                                        const Attrs&) const;
template void Compare<CompareFn::kEq>::compute_cuda(const TensorList&, const TensorList&,
                                                    const Attrs&) const;
template void Compare<CompareFn::kNe>::compute_cuda(const TensorList&, const TensorList&,
                                                    const Attrs&) const;
template void Compare<CompareFn::kLt>::compute_cuda(const TensorList&, const TensorList&,
                                                    const Attrs&) const;
template void Compare<CompareFn::kLe>::compute_cuda(const TensorList&, const TensorList&,
                                                    const Attrs&) const;
template void Compare<CompareFn::kGt>::compute_cuda(const TensorList&, const TensorList&,
                                                    const Attrs&) const;
template void Compare<CompareFn::kGe>::compute_cuda(const TensorList&, const TensorList&,
                                                    const Attrs&) const;

void Pow::compute_cuda(const TensorList&, const TensorList&, const Attrs&) const { no_cuda(*this); }

}  // namespace oneflow
