// CPU kernels of inverse and det on LAPACK's LU routines (getrf, getri) from OpenBLAS. A
// row-major matrix is the column-major transpose, and inv(A^T) = inv(A)^T, det(A^T) = det(A),
// so the data goes to LAPACK as it is.
#include <algorithm>
#include <cstring>
#include <vector>

#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/ops/primitives.h"

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork,
             int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
}

namespace oneflow {

namespace {

inline void getrf(int n, float* a, int* ipiv, int* info) { sgetrf_(&n, &n, a, &n, ipiv, info); }
inline void getrf(int n, double* a, int* ipiv, int* info) { dgetrf_(&n, &n, a, &n, ipiv, info); }
inline void getri(int n, float* a, const int* ipiv, float* work, int lwork, int* info) {
  sgetri_(&n, a, &n, ipiv, work, &lwork, info);
}
inline void getri(int n, double* a, const int* ipiv, double* work, int lwork, int* info) {
  dgetri_(&n, a, &n, ipiv, work, &lwork, info);
}

// Visits each matrix of a contiguous (..., n, n) copy of `x`.
template <typename T, typename Fn>
void for_each_matrix(const Tensor& x, T* data, Fn fn) {
  const int64_t n = x->shape().back(), count = n == 0 ? 0 : x->numel() / (n * n);
  for (int64_t b = 0; b < count; ++b) fn(b, data + b * n * n);
}

}  // namespace

void Inverse::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Tensor& x = in[0];
  const int n = static_cast<int>(x->shape().back());
  copy_cpu(x, out[0]);
  visit_dtype(x->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      std::vector<int> ipiv(std::max(n, 1));
      std::vector<T> work(std::max(n, 1) * 64);
      for_each_matrix<T>(x, out[0]->data_as<T>(), [&](int64_t, T* a) {
        int info = 0;
        getrf(n, a, ipiv.data(), &info);
        if (info > 0)
          throw_error<LinAlgError>("linalg.inv", "the diagonal element ", info,
                                   " is zero, the inversion could not be completed because "
                                   "the input matrix is singular");
        getri(n, a, ipiv.data(), work.data(), static_cast<int>(work.size()), &info);
      });
    }
  });
}

void Det::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Tensor& x = in[0];
  const int n = static_cast<int>(x->shape().back());
  Tensor lu = empty_tensor(x->shape(), x->dtype(), x->device());
  copy_cpu(x, lu);
  visit_dtype(x->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* o = out[0]->data_as<T>();
      std::vector<int> ipiv(std::max(n, 1));
      for_each_matrix<T>(x, lu->data_as<T>(), [&](int64_t b, T* a) {
        int info = 0;
        getrf(n, a, ipiv.data(), &info);
        T d = T(1);
        for (int i = 0; i < n; ++i) {
          d *= a[i * n + i];
          if (ipiv[i] != i + 1) d = -d;
        }
        o[b] = d;
      });
      if (n == 0) std::fill(o, o + out[0]->numel(), T(1));
    }
  });
}

}  // namespace oneflow
