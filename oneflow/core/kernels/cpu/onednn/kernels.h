// oneDNN kernels that the CPU kernels of other files call for float32 (their own loops take the
// other dtypes). Each takes contiguous tensors of the primitive's layout.
#pragma once

#include "oneflow/core/framework/tensor.h"

namespace oneflow::onednn {

// Softmax (or log-softmax) of x along `dim` into y.
void softmax_forward(const Tensor& x, const Tensor& y, int64_t dim, bool log);
// dx from dy and the forward's output y.
void softmax_backward(const Tensor& dy, const Tensor& y, const Tensor& dx, int64_t dim, bool log);

// Layer normalisation of rows of `size` elements: y, and per row the mean and 1/sqrt(var + eps).
void layer_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
                        const Tensor& mean, const Tensor& rstd, int64_t size, float eps);
void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                         const Tensor& w, const Tensor& dx, const Tensor& dw, const Tensor& db,
                         int64_t size, float eps);

// C = alpha op(A) op(B) + beta C, row-major with row strides lda, ldb, ldc (op: transposed
// when ta / tb): float32 through oneDNN's sgemm, float64 through OpenBLAS's dgemm.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace oneflow::onednn
