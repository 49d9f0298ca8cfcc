// CUDA matmul: cublasGemmStridedBatchedEx for float16, bfloat16 (float accumulation), float32
// and float64. cuBLAS is column-major, so the row-major product C = A B runs as C^T = B^T A^T:
// a row-major matrix read column-major is its transpose. Host code only (no device code here).
#include <algorithm>
#include <climits>

#include "oneflow/core/common/backend_flags.h"
#include "oneflow/core/device/cuda/cuda_context.h"
#include "oneflow/core/kernels/common/layouts.h"
#include "oneflow/core/kernels/cuda/cuda_kernels.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

// How cuBLAS reads one operand of C^T = B^T A^T: a row-major matrix (unit column stride) is its
// own transpose read column-major (no op, leading dim = row stride); a column-major one (unit
// row stride) needs CUBLAS_OP_T with leading dim = column stride.
struct GemmOperand {
  cublasOperation_t op;
  int64_t ld;
};

// The operand's layout, or ld == 0 when cuBLAS cannot read it (a leading dim smaller than the
// matrix, e.g. a row-broadcast view with row stride 0).
GemmOperand gemm_layout(const Mat& m) {
  if (m.cstride == 1 && m.rstride >= std::max<int64_t>(1, m.cols)) return {CUBLAS_OP_N, m.rstride};
  if (m.rstride == 1 && m.cstride >= std::max<int64_t>(1, m.rows)) return {CUBLAS_OP_T, m.cstride};
  return {CUBLAS_OP_N, 0};
}

struct CublasTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

CublasTypes cublas_types(DType dt) {
  switch (dt) {
    case DType::kFloat16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case DType::kBFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case DType::kFloat32:  // set_float32_matmul_precision: tensor cores below "highest"
      switch (float32_matmul_precision()) {
        case MatmulPrecision::kHigh:
          return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
        case MatmulPrecision::kMedium:
          return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16BF};
        default:
          return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
      }
    case DType::kFloat64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    default:
      // NotImplementedError is a RuntimeError, PyTorch's type for integer products on CUDA.
      throw_error<NotImplementedError>("matmul",
                                       "CUDA matmul supports float16, bfloat16, float32 and "
                                       "float64, got ",
                                       dtype_name(dt));
  }
}

void check_int(const char* what, int64_t v) {
  if (v > INT_MAX)
    throw_error<RuntimeError>("matmul", "CUDA matmul supports ", what, " up to ", INT_MAX, ", got ",
                              v);
}

}  // namespace

void Matmul::compute_cuda(const TensorList& in, const TensorList& out, const Attrs&) const {
  if (in.size() != 2)  // F::linear fuses a bias on the CPU only
    throw_error<NotImplementedError>(name(), "a fused bias is not implemented on CUDA");
  const DType dt = out[0]->dtype();
  const CublasTypes types = cublas_types(dt);  // throws for dtypes cuBLAS has no GEMM for
  Tensor ta = in[0], tb = in[1];
  const Tensor& tc = out[0];
  Mat a = as_mat(ta), b = as_mat(tb);
  const Mat c = as_mat(tc);
  if (c.batch * c.rows * c.cols == 0) return;
  const int index = tc->device().index;
  cudaStream_t stream = cuda_stream(index);
  if (a.cols == 0) {  // empty inner dimension: the product is all zeros
    OF_CUDA_CHECK(cudaMemsetAsync(tc->data(), 0, tc->numel() * itemsize(dt), stream));
    return;
  }
  OF_ASSERT(tc->is_contiguous());
  GemmOperand la = gemm_layout(a), lb = gemm_layout(b);
  // Layouts cuBLAS cannot read (the functional layer passes only unit-stride rows or columns,
  // but a broadcast row may have stride 0) are made contiguous on the GPU first.
  if (la.ld == 0) {
    Tensor t = empty_tensor(ta->shape(), dt, ta->device());
    copy_cuda(ta, t);
    ta = t;
    a = as_mat(ta);
    la = gemm_layout(a);
  }
  if (lb.ld == 0) {
    Tensor t = empty_tensor(tb->shape(), dt, tb->device());
    copy_cuda(tb, t);
    tb = t;
    b = as_mat(tb);
    lb = gemm_layout(b);
  }
  OF_ASSERT(la.ld > 0 && lb.ld > 0);
  const int64_t m = c.rows, n = c.cols, k = a.cols;
  for (int64_t v : {m, n, k, la.ld, lb.ld}) check_int("matrix dims and strides", v);
  check_int("batch sizes", c.batch);

  // C^T (n x m, ld n) = op(B^T) (n x k) * op(A^T) (k x m).
  const float alpha32 = 1.0f, beta32 = 0.0f;
  const double alpha64 = 1.0, beta64 = 0.0;
  const bool f64 = types.compute == CUBLAS_COMPUTE_64F;
  const void* alpha = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
  cublasHandle_t handle = cublas_handle(index);  // bound to `stream` by the backend
  OF_CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  OF_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle, lb.op, la.op, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha,
      tb->data(), types.data, static_cast<int>(lb.ld), b.bstride, ta->data(), types.data,
      static_cast<int>(la.ld), a.bstride, beta, tc->data(), types.data, static_cast<int>(n), m * n,
      static_cast<int>(c.batch), types.compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace oneflow
