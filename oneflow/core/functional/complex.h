// Complex tensors in the functional layer. A complex tensor's bytes are (real, imaginary) pairs;
// view_as_real shows them as a real tensor with a trailing dim of 2. The complex branches of the
// arithmetic ops (complex_ops below, called by add, mul, sum, matmul, ... when an operand is
// complex) are compositions of real ops on that view, so autograd needs nothing of its own:
// the real view's gradient is PyTorch's complex gradient (dL/dRe + i dL/dIm).
#pragma once

#include <vector>

#include "oneflow/core/common/op_kinds.h"
#include "oneflow/core/framework/tensor.h"
#include "oneflow/core/functional/functional.h"

namespace oneflow::functional {

Tensor view_as_real(const Tensor& z);
Tensor view_as_complex(const Tensor& x);
// Views of the real and imaginary parts (real() of a real tensor is the tensor itself; imag() of
// one raises, as PyTorch).
Tensor real(const Tensor& z);
Tensor imag(const Tensor& z);
// re + i im (float32 or float64 of one dtype, broadcast together).
Tensor complex(const Tensor& re, const Tensor& im);
// abs * (cos(angle) + i sin(angle)).
Tensor polar(const Tensor& abs, const Tensor& angle);
// The conjugate as a new tensor; a real tensor is returned as it is.
Tensor conj_physical(const Tensor& z);
// The argument of each complex element, in the real dtype.
Tensor angle(const Tensor& z);

// The transforms (ops/complex_primitives.h); dims distinct and wrapped.
Tensor fft_c2c(const Tensor& x, const std::vector<int64_t>& dims, int64_t normalization,
               bool forward);
Tensor fft_r2c(const Tensor& x, const std::vector<int64_t>& dims, int64_t normalization,
               bool onesided);
Tensor fft_c2r(const Tensor& x, const std::vector<int64_t>& dims, int64_t normalization,
               int64_t last_dim_size);

// z with `extra` zeros appended along dim (non-negative).
Tensor complex_pad_dim(const Tensor& z, int64_t dim, int64_t extra);
// z with entries [start, start + length) along dim multiplied by factor.
Tensor complex_scale_range(const Tensor& z, int64_t dim, int64_t start, int64_t length,
                           double factor);
// a * b (a * conj(b) with conj_b) for complex a and b of one dtype.
Tensor complex_mul(const Tensor& a, const Tensor& b, bool conj_b);
// z * r for a real r that broadcasts with z.
Tensor complex_mul_real(const Tensor& z, const Tensor& r);

// The complex branches of the arithmetic ops: at least one operand is complex. The result dtype
// follows PyTorch's promotion (complex64 with float64 gives complex128).
namespace complex_ops {
inline bool any(const Tensor& a) { return is_complex(a->dtype()); }
inline bool any(const Tensor& a, const Tensor& b) {
  return is_complex(a->dtype()) || is_complex(b->dtype());
}
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha);
Tensor add(const Tensor& a, Scalar b, Scalar alpha);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha);
Tensor rsub(const Tensor& a, Scalar b, Scalar alpha);  // b - alpha a
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, Scalar b);
Tensor rdiv(const Tensor& a, Scalar b);  // b / a
Tensor neg(const Tensor& a);
Tensor exp(const Tensor& z);
Tensor abs(const Tensor& z);
// The pointwise functions with complex forms (sqrt, rsqrt, log, log2, log10, sin, cos, sinh,
// cosh, reciprocal, neg, abs); the others raise a TypeError naming the function.
Tensor unary(UnaryFn fn, const Tensor& z);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, Scalar b);
// eq and ne (both parts equal / some part differs); the orderings raise, as PyTorch.
Tensor compare(CompareFn fn, const Tensor& a, const Tensor& b);
Tensor sum(const Tensor& z, const std::vector<int64_t>& dims, bool keepdim,
           std::optional<DType> dtype);
Tensor mean(const Tensor& z, const std::vector<int64_t>& dims, bool keepdim,
            std::optional<DType> dtype);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor cat(const TensorList& xs, int64_t dim);
// The scans and the product along a dim (all dims when dim is empty), as trees of complex
// products: log2(n) rounds of elementwise products of halves / of shifted copies.
Tensor cumsum(const Tensor& z, int64_t dim, std::optional<DType> dtype);
Tensor cumprod(const Tensor& z, int64_t dim, std::optional<DType> dtype);
Tensor prod(const Tensor& z, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype);
// Creation with a complex dtype: `value` in the real part.
Tensor full(const Shape& shape, Scalar value, const CreationOptions& opts);
// Standard complex normal (each part with variance 1/2, as PyTorch) / uniform parts in [0, 1).
Tensor randn(const Shape& shape, const CreationOptions& opts);
Tensor rand(const Shape& shape, const CreationOptions& opts);
// where(cond, x, y) for complex x and y of one dtype and a bool cond.
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);
// A real (..., 2) tensor of pairs, made by the caller and seen by nothing else, as a complex one.
Tensor from_pairs(const Tensor& r);
// self = result, for the in-place forms (self.add_(other), ...).
Tensor assign(const Tensor& self, const Tensor& result);
}  // namespace complex_ops

}  // namespace oneflow::functional
