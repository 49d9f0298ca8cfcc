// Complex tensors (complex64, complex128): the views between a complex tensor and its real pairs,
// and the discrete Fourier transforms. Every other complex op is a composition of real ops on
// the real view (functional/complex.cpp), so its gradient follows from theirs.
//
// Gradients use PyTorch's convention: the gradient of a real loss L with respect to a complex
// z = x + iy is dL/dx + i dL/dy, which is what the real view's gradient holds.
//
// The transforms run on the CPU through the engine in kernels/cpu/fft.h (vectorised Stockham
// passes, Bluestein for large prime factors), one dim at a time; attrs dims (distinct, wrapped) and
// normalization (0: none, 1: 1/sqrt(n), 2: 1/n, n the product of the signal sizes along dims) are
// common to the three. Outputs are contiguous. Sizes are the functional layer's business (padding,
// trimming).
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// complex (..., ) -> its real dtype (..., 2): a view of the same bytes.
class ViewAsReal final : public Primitive {
 public:
  const char* name() const override { return "view_as_real"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList&, const TensorList&, const Attrs&) const override {}
  void compute_cuda(const TensorList&, const TensorList&, const Attrs&) const override {}
};

// float32/float64 (..., 2), last stride 1, other strides and the offset even -> complex (...).
class ViewAsComplex final : public Primitive {
 public:
  const char* name() const override { return "view_as_complex"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList&, const TensorList&, const Attrs&) const override {}
  void compute_cuda(const TensorList&, const TensorList&, const Attrs&) const override {}
};

// |z| of a complex tensor, in its real dtype, without overflow in the squares (hypot). The
// gradient is dy * z / |z|, zero where z is zero (as PyTorch).
class ComplexAbs final : public Primitive {
 public:
  const char* name() const override { return "complex_abs"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// a * b, or a * conj(b) with attr conj_b, for complex a and b of one dtype whose shapes
// broadcast: one pass over (real, imaginary) pairs instead of six real ops. CPU kernel only (the
// functional layer composes the product from real ops elsewhere).
class ComplexMul final : public Primitive {
 public:
  const char* name() const override { return "complex_mul"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// Complex to complex of the same shape; attr forward (true: exp(-2 pi i jk/n), false: the
// unnormalised inverse, exp(+2 pi i jk/n)).
class FftC2C final : public Primitive {
 public:
  const char* name() const override { return "fft_c2c"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// Real (float32/float64) to complex, forward; attr onesided: the last of dims keeps n/2 + 1
// entries (the others follow from Hermitian symmetry).
class FftR2C final : public Primitive {
 public:
  const char* name() const override { return "fft_r2c"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// Complex, Hermitian along the last of dims (given by its first last_dim_size/2 + 1 entries), to
// real, inverse and unnormalised: the output's last transformed dim has attr last_dim_size. The
// imaginary parts of the entries that must be real (index 0, and n/2 for even n) are ignored.
class FftC2R final : public Primitive {
 public:
  const char* name() const override { return "fft_c2r"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

namespace prim {
const ViewAsReal& view_as_real();
const ViewAsComplex& view_as_complex();
const ComplexAbs& complex_abs();
const ComplexMul& complex_mul();
const FftC2C& fft_c2c();
const FftR2C& fft_r2c();
const FftC2R& fft_c2r();
}  // namespace prim

}  // namespace oneflow
