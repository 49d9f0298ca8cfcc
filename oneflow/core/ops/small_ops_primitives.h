// One-pass kernels for ops that were compositions of several dispatches: one_hot and bincount
// (which count or encode class indices, testing their range in the same pass), cross (three
// planes in, three planes out), dot (no reshapes around a matmul), trace (the strided diagonal
// summed in place, no view) and outer (one product per element, no broadcast). CPU kernels in
// kernels/cpu/small_ops.cpp; off the CPU the functional layer (functional/small_ops.cpp) composes
// them from other primitives.
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// int64 index -> int64 (*index.shape, attrs num_classes) with a 1 at each index's class. An index
// outside [0, num_classes) raises after the pass, naming the value (the output is fresh).
class OneHot final : public Primitive {
 public:
  const char* name() const override { return "one_hot"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// Counts of each value of a 1-D integer tensor in a (attrs length,) output: int64 counts, or
// with a second input (weights of the same length, float32 or float64) sums of the weights, in
// the weights' dtype. A negative value or one >= length raises after the pass.
class Bincount final : public Primitive {
 public:
  const char* name() const override { return "bincount"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// a x b along attrs dim (of size 3): inputs of one shape and dtype (the functional layer
// broadcasts and promotes). Gradients b x g and g x a.
class Cross final : public Primitive {
 public:
  const char* name() const override { return "cross"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// The 0-dim sum of a * b over two contiguous 1-D tensors of one length and dtype (BLAS's dot for
// float32 and float64). Gradients g * b and g * a.
class Dot final : public Primitive {
 public:
  const char* name() const override { return "dot"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// The 0-dim sum of a 2-D tensor's main diagonal, read through its strides; integers sum to int64
// (as sum), 16-bit floats in float. The gradient, dy on the diagonal of zeros of the input's shape,
// needs only the input's meta.
class Trace final : public Primitive {
 public:
  const char* name() const override { return "trace"; }
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// a[:, None] * b[None, :] for two 1-D tensors of one dtype (any strides; the functional layer
// promotes, and takes larger products to the broadcasting mul). Gradients g @ b and g^T @ a.
class Outer final : public Primitive {
 public:
  const char* name() const override { return "outer"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
const Dot& dot();
const Trace& trace();
const Outer& outer();
const OneHot& one_hot();
const Bincount& bincount();
const Cross& cross();
}  // namespace prim

}  // namespace oneflow
