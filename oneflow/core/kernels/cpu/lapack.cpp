#include "oneflow/core/kernels/cpu/lapack.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <exception>
#include <mutex>
#include <type_traits>
#include <vector>

#include "oneflow/core/common/error.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/kernels/cpu/parallel.h"

extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
             int* iwork, int* info);
// The complex routines (std::complex has Fortran's COMPLEX layout) and the general eigensolver.
void cpotrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* info);
void zpotrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* info);
void cgeqrf_(const int* m, const int* n, std::complex<float>* a, const int* lda,
             std::complex<float>* tau, std::complex<float>* work, const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, std::complex<double>* a, const int* lda,
             std::complex<double>* tau, std::complex<double>* work, const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, std::complex<float>* a, const int* lda,
             const std::complex<float>* tau, std::complex<float>* work, const int* lwork,
             int* info);
void zungqr_(const int* m, const int* n, const int* k, std::complex<double>* a, const int* lda,
             const std::complex<double>* tau, std::complex<double>* work, const int* lwork,
             int* info);
void cgetrf_(const int* m, const int* n, std::complex<float>* a, const int* lda, int* ipiv,
             int* info);
void zgetrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, int* ipiv,
             int* info);
void cheevd_(const char* jobz, const char* uplo, const int* n, std::complex<float>* a,
             const int* lda, float* w, std::complex<float>* work, const int* lwork, float* rwork,
             const int* lrwork, int* iwork, const int* liwork, int* info);
void zheevd_(const char* jobz, const char* uplo, const int* n, std::complex<double>* a,
             const int* lda, double* w, std::complex<double>* work, const int* lwork, double* rwork,
             const int* lrwork, int* iwork, const int* liwork, int* info);
void cgesdd_(const char* jobz, const int* m, const int* n, std::complex<float>* a, const int* lda,
             float* s, std::complex<float>* u, const int* ldu, std::complex<float>* vt,
             const int* ldvt, std::complex<float>* work, const int* lwork, float* rwork, int* iwork,
             int* info);
void zgesdd_(const char* jobz, const int* m, const int* n, std::complex<double>* a, const int* lda,
             double* s, std::complex<double>* u, const int* ldu, std::complex<double>* vt,
             const int* ldvt, std::complex<double>* work, const int* lwork, double* rwork,
             int* iwork, int* info);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr,
            float* wi, float* vl, const int* ldvl, float* vr, const int* ldvr, float* work,
            const int* lwork, int* info);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
            double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
            double* work, const int* lwork, int* info);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<float>* a,
            const int* lda, std::complex<float>* w, std::complex<float>* vl, const int* ldvl,
            std::complex<float>* vr, const int* ldvr, std::complex<float>* work, const int* lwork,
            float* rwork, int* info);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<double>* a,
            const int* lda, std::complex<double>* w, std::complex<double>* vl, const int* ldvl,
            std::complex<double>* vr, const int* ldvr, std::complex<double>* work, const int* lwork,
            double* rwork, int* info);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int n);
}

namespace oneflow::lapack {

namespace {

namespace F = functional;

// The routines for each element type.
void potrf(char uplo, int n, float* a, int* info) { spotrf_(&uplo, &n, a, &n, info); }
void potrf(char uplo, int n, double* a, int* info) { dpotrf_(&uplo, &n, a, &n, info); }
void getrf(int m, int n, float* a, int* ipiv, int* info) {
  const int lda = std::max(1, m);
  sgetrf_(&m, &n, a, &lda, ipiv, info);
}
void getrf(int m, int n, double* a, int* ipiv, int* info) {
  const int lda = std::max(1, m);
  dgetrf_(&m, &n, a, &lda, ipiv, info);
}
void potrf(char uplo, int n, std::complex<float>* a, int* info) { cpotrf_(&uplo, &n, a, &n, info); }
void potrf(char uplo, int n, std::complex<double>* a, int* info) {
  zpotrf_(&uplo, &n, a, &n, info);
}
void geqrf(int m, int n, std::complex<float>* a, std::complex<float>* tau,
           std::complex<float>* work, int lwork, int* info) {
  const int lda = std::max(1, m);
  cgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void geqrf(int m, int n, std::complex<double>* a, std::complex<double>* tau,
           std::complex<double>* work, int lwork, int* info) {
  const int lda = std::max(1, m);
  zgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
// orgqr for complex matrices is LAPACK's ungqr (Q unitary).
void orgqr(int m, int n, int k, std::complex<float>* a, const std::complex<float>* tau,
           std::complex<float>* work, int lwork, int* info) {
  const int lda = std::max(1, m);
  cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, std::complex<double>* a, const std::complex<double>* tau,
           std::complex<double>* work, int lwork, int* info) {
  const int lda = std::max(1, m);
  zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void getrf(int m, int n, std::complex<float>* a, int* ipiv, int* info) {
  const int lda = std::max(1, m);
  cgetrf_(&m, &n, a, &lda, ipiv, info);
}
void getrf(int m, int n, std::complex<double>* a, int* ipiv, int* info) {
  const int lda = std::max(1, m);
  zgetrf_(&m, &n, a, &lda, ipiv, info);
}
void heevd(char jobz, char uplo, int n, std::complex<float>* a, float* w, std::complex<float>* work,
           int lwork, float* rwork, int lrwork, int* iwork, int liwork, int* info) {
  const int lda = std::max(1, n);
  cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info);
}
void heevd(char jobz, char uplo, int n, std::complex<double>* a, double* w,
           std::complex<double>* work, int lwork, double* rwork, int lrwork, int* iwork, int liwork,
           int* info) {
  const int lda = std::max(1, n);
  zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info);
}
void gesdd(char jobz, int m, int n, std::complex<float>* a, float* s, std::complex<float>* u,
           int ldu, std::complex<float>* vt, int ldvt, std::complex<float>* work, int lwork,
           float* rwork, int* iwork, int* info) {
  const int lda = std::max(1, m);
  cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info);
}
void gesdd(char jobz, int m, int n, std::complex<double>* a, double* s, std::complex<double>* u,
           int ldu, std::complex<double>* vt, int ldvt, std::complex<double>* work, int lwork,
           double* rwork, int* iwork, int* info) {
  const int lda = std::max(1, m);
  zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info);
}
// geev with right eigenvectors only; the real routines return conjugate pairs split in wr/wi
// and in pairs of columns of vr. rwork is unused by them.
void geev(char jobvr, int n, float* a, float* wr, float* wi, float* vr, float* work, int lwork,
          float*, int* info) {
  const char jobvl = 'N';
  const int ld = std::max(1, n), one = 1;
  float vl = 0;
  sgeev_(&jobvl, &jobvr, &n, a, &ld, wr, wi, &vl, &one, vr, &ld, work, &lwork, info);
}
void geev(char jobvr, int n, double* a, double* wr, double* wi, double* vr, double* work, int lwork,
          double*, int* info) {
  const char jobvl = 'N';
  const int ld = std::max(1, n), one = 1;
  double vl = 0;
  dgeev_(&jobvl, &jobvr, &n, a, &ld, wr, wi, &vl, &one, vr, &ld, work, &lwork, info);
}
void geev(char jobvr, int n, std::complex<float>* a, std::complex<float>* w, std::complex<float>*,
          std::complex<float>* vr, std::complex<float>* work, int lwork, float* rwork, int* info) {
  const char jobvl = 'N';
  const int ld = std::max(1, n), one = 1;
  std::complex<float> vl = 0;
  cgeev_(&jobvl, &jobvr, &n, a, &ld, w, &vl, &one, vr, &ld, work, &lwork, rwork, info);
}
void geev(char jobvr, int n, std::complex<double>* a, std::complex<double>* w,
          std::complex<double>*, std::complex<double>* vr, std::complex<double>* work, int lwork,
          double* rwork, int* info) {
  const char jobvl = 'N';
  const int ld = std::max(1, n), one = 1;
  std::complex<double> vl = 0;
  zgeev_(&jobvl, &jobvr, &n, a, &ld, w, &vl, &one, vr, &ld, work, &lwork, rwork, info);
}
void geqrf(int m, int n, float* a, float* tau, float* work, int lwork, int* info) {
  const int lda = std::max(1, m);
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void geqrf(int m, int n, double* a, double* tau, double* work, int lwork, int* info) {
  const int lda = std::max(1, m);
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, float* a, const float* tau, float* work, int lwork, int* info) {
  const int lda = std::max(1, m);
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, double* a, const double* tau, double* work, int lwork, int* info) {
  const int lda = std::max(1, m);
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void syevd(char jobz, char uplo, int n, float* a, float* w, float* work, int lwork, int* iwork,
           int liwork, int* info) {
  const int lda = std::max(1, n);
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info);
}
void syevd(char jobz, char uplo, int n, double* a, double* w, double* work, int lwork, int* iwork,
           int liwork, int* info) {
  const int lda = std::max(1, n);
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info);
}
void gesdd(char jobz, int m, int n, float* a, float* s, float* u, int ldu, float* vt, int ldvt,
           float* work, int lwork, int* iwork, int* info) {
  const int lda = std::max(1, m);
  sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info);
}
void gesdd(char jobz, int m, int n, double* a, double* s, double* u, int ldu, double* vt, int ldvt,
           double* work, int lwork, int* iwork, int* info) {
  const int lda = std::max(1, m);
  dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_DIAG diag, int m, int n, const float* a, int lda,
          float* b, int ldb) {
  cblas_strsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, 1.0f, a, lda, b, ldb);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_DIAG diag, int m, int n, const double* a, int lda,
          double* b, int ldb) {
  cblas_dtrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, 1.0, a, lda, b, ldb);
}

// op(T) X = B from the left for row-major n x n T and n x k B (ld ldb), X in place of B.
void trsm_rows(CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int n, int k,
               const float* t, float* b, int ldb) {
  cblas_strsm(CblasRowMajor, CblasLeft, uplo, trans, diag, n, k, 1.0f, t, n, b, ldb);
}
void trsm_rows(CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int n, int k,
               const double* t, double* b, int ldb) {
  cblas_dtrsm(CblasRowMajor, CblasLeft, uplo, trans, diag, n, k, 1.0, t, n, b, ldb);
}
void trsm_rows(CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int n, int k,
               const std::complex<float>* t, std::complex<float>* b, int ldb) {
  const std::complex<float> one(1);
  cblas_ctrsm(CblasRowMajor, CblasLeft, uplo, trans, diag, n, k, &one, t, n, b, ldb);
}
void trsm_rows(CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int n, int k,
               const std::complex<double>* t, std::complex<double>* b, int ldb) {
  const std::complex<double> one(1);
  cblas_ztrsm(CblasRowMajor, CblasLeft, uplo, trans, diag, n, k, &one, t, n, b, ldb);
}

// getrs's job on row-major data: op(A) X = B with A = P L U given as lu() returns it (row-major LU,
// LAPACK's 1-based interchanges), for the k columns of row-major B at b (ld ldb), in place.
// A X = B is U X = L^-1 P^T B (the interchanges in order, then L and U); A^H X = B is
// X = P L^-H U^-H B (U^H, L^H, then the interchanges backwards). No transposed copies of LU and
// B as getrs needs, and the rows swap as contiguous runs.
template <typename T>
void lu_solve_rows(bool adjoint, int n, int k, const T* lu, const int32_t* pivots, T* b, int ldb) {
  for (int i = 0; i < n; ++i) {  // the swaps below index B's rows by them
    if (pivots[i] < 1)
      throw_error<RuntimeError>("linalg.lu_solve",
                                "Pivots given to lu_solve must all be greater or equal to 1. Did "
                                "you properly pass the result of lu_factor?");
    if (pivots[i] > n)
      throw_error<RuntimeError>("linalg.lu_solve",
                                "Pivots given to lu_solve must all be smaller or equal to "
                                "LU.size(-2). Did you properly pass the result of lu_factor?");
  }
  auto swap_rows = [&](int i) {
    const int p = pivots[i] - 1;
    if (p != i)
      std::swap_ranges(b + int64_t(i) * ldb, b + int64_t(i) * ldb + k, b + int64_t(p) * ldb);
  };
  if (!adjoint) {
    for (int i = 0; i < n; ++i) swap_rows(i);
    trsm_rows(CblasLower, CblasNoTrans, CblasUnit, n, k, lu, b, ldb);
    trsm_rows(CblasUpper, CblasNoTrans, CblasNonUnit, n, k, lu, b, ldb);
  } else {
    trsm_rows(CblasUpper, CblasConjTrans, CblasNonUnit, n, k, lu, b, ldb);
    trsm_rows(CblasLower, CblasConjTrans, CblasUnit, n, k, lu, b, ldb);
    for (int i = n - 1; i >= 0; --i) swap_rows(i);
  }
}

// Calls fn.template operator()<T>() with the element type of a float32/float64 tensor.
template <typename Fn>
void floating(DType dt, Fn&& fn) {
  if (dt == DType::kFloat32)
    fn.template operator()<float>();
  else
    fn.template operator()<double>();
}

// With the complex element types as well (complex64, complex128).
template <typename Fn>
void floating_or_complex(DType dt, Fn&& fn) {
  if (dt == DType::kComplex64)
    fn.template operator()<std::complex<float>>();
  else if (dt == DType::kComplex128)
    fn.template operator()<std::complex<double>>();
  else
    floating(dt, fn);
}

template <typename T>
struct RealOf {
  using type = T;
};
template <typename T>
struct RealOf<std::complex<T>> {
  using type = T;
};
template <typename T>
constexpr bool kIsComplex = !std::is_same_v<typename RealOf<T>::type, T>;

// A LAPACK workspace size from a query's answer (the real part of a complex one).
template <typename T>
int64_t work_size(T answer) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::real(answer)));
}

void check_input(const Tensor& a, const char* op, bool square, bool complex_ok = false) {
  if (a->device().type != DeviceType::kCPU)
    throw_error<NotImplementedError>(op, "is implemented for CPU tensors only, got a tensor on ",
                                     a->device().str());
  const bool ok = a->dtype() == DType::kFloat32 || a->dtype() == DType::kFloat64 ||
                  (complex_ok && is_complex(a->dtype()));
  if (!ok)
    throw_error<TypeError>(op, "expected a float32 or float64", complex_ok ? " or complex" : "",
                           " tensor, got ", dtype_name(a->dtype()));
  if (a->ndim() < 2)
    throw_error<RuntimeError>(op, "The input tensor A must have at least 2 dimensions.");
  const int64_t m = a->shape()[a->ndim() - 2], n = a->shape().back();
  if (square && m != n)
    throw_error<RuntimeError>(op, "A must be batches of square matrices, but they are ", m, " by ",
                              n, " matrices");
  if (m > (int64_t{1} << 30) || n > (int64_t{1} << 30))
    throw_error<ValueError>(op, "matrices of ", m, " x ", n, " are too large for LAPACK");
}

Shape batch_of(const Tensor& a) { return Shape(a->shape().begin(), a->shape().end() - 2); }
Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail.begin(), tail.end());
  return s;
}

// A new contiguous tensor holding x with its last two dims swapped: each matrix in column-major
// order, as LAPACK reads and overwrites it (a copy even when x already has that layout, e.g. a
// transposed view or an (n, 1) column: the routines work in place). row_major is the way back.
Tensor col_major(const Tensor& x) {
  Tensor t = F::transpose(x, -2, -1);
  return t->is_contiguous() ? F::clone(t) : F::contiguous(t);
}
Tensor row_major(const Tensor& cm) { return F::contiguous(F::transpose(cm, -2, -1)); }

Tensor empty(const Shape& shape, DType dt) { return empty_tensor(shape, dt, Device{}); }

// Runs fn(b) for the matrices b of a batch on the stream thread after the queued copies, on its
// OpenMP team, each LAPACK call on one thread (OpenBLAS's own threads would share the cores with
// the team's spinning workers, see kernels/cpu/linalg.cpp). The first exception is rethrown.
// A thread takes runs of matrices worth kMinChunkFlops at least: taking one matrix at a time,
// threads contended for the dynamic schedule's counter and the neighbouring info entries at
// every ~100 ns factorization (2-vCPU AVX-512 EPYC, 1024 Cholesky factorizations of 8 x 8:
// 208-229 -> 161-188 us; det of 1024 8 x 8 matrices 389 -> 273 us).
constexpr int64_t kMinChunkFlops = 32768;
template <typename Fn>
void for_each_matrix(int64_t count, int64_t flops, Fn fn) {
  if (count == 0) return;
  eager::run_on_stream([&] {
    const int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    std::exception_ptr error;
    std::mutex mu;
    const int64_t per_chunk = std::max<int64_t>(1, kMinChunkFlops / std::max<int64_t>(flops, 1));
    const int64_t chunks = (count + per_chunk - 1) / per_chunk;
    OF_OMP_FOR_IF(
        chunks > 1, schedule(dynamic), for (int64_t c = 0; c < chunks; ++c) {
          try {
            const int64_t end = std::min(count, (c + 1) * per_chunk);
            for (int64_t b = c * per_chunk; b < end; ++b) fn(b);
          } catch (...) {
            std::lock_guard<std::mutex> lk(mu);
            if (!error) error = std::current_exception();
          }
        });
    openblas_set_num_threads(blas_threads);
    if (error) std::rethrow_exception(error);
  });
}

int as_int(int64_t v) { return static_cast<int>(v); }

// Blocks of right-hand sides per matrix for the solves: triangular solves treat the columns of
// B (the rows, from the right) independently, so a batch smaller than the OpenMP team, such as
// one matrix and an identity (a determinant's gradient, an inverse), runs one solve per block on
// each thread. Blocks of 16 columns at least.
int64_t rhs_blocks(int64_t count, int64_t columns) {
  const int64_t threads = eager::num_threads();
  if (count == 0 || count >= threads || columns < 32) return 1;
  return std::min<int64_t>((threads + count - 1) / count, columns / 16);
}

// An unblocked Cholesky factorization in place of potrf for small matrices (n <= kSmallCholesky),
// where the LAPACK call's own cost dominates (1024 8x8 matrices: ~0.4 us each through potrf).
// Column-major m; reads the lower (or upper) triangle of A and writes L (or U = L^T) there.
// Returns LAPACK's info: 0, or k when the leading minor of order k is not positive-definite.
constexpr int64_t kSmallCholesky = 16;
template <typename T>
int small_cholesky(T* m, int64_t n, bool upper) {
  // A(i, j) and L(i, j) for i >= j, in the triangle that holds them.
  auto at = [&](int64_t i, int64_t j) -> T& { return upper ? m[i * n + j] : m[j * n + i]; };
  for (int64_t j = 0; j < n; ++j) {
    T d = at(j, j);
    for (int64_t k = 0; k < j; ++k) d -= at(j, k) * at(j, k);
    if (!(d > T(0))) {  // also NaN
      at(j, j) = d;
      return static_cast<int>(j + 1);
    }
    const T l = std::sqrt(d);
    at(j, j) = l;
    for (int64_t i = j + 1; i < n; ++i) {
      T v = at(i, j);
      for (int64_t k = 0; k < j; ++k) v -= at(i, k) * at(j, k);
      at(i, j) = v / l;
    }
  }
  return 0;
}

}  // namespace

std::tuple<Tensor, Tensor> cholesky(const Tensor& a, bool upper) {
  check_input(a, "linalg.cholesky", true, /*complex_ok=*/true);
  const int64_t n = a->shape().back();
  const Shape batch = batch_of(a);
  const int64_t count = numel(batch);
  Tensor cm = col_major(a);
  Tensor info = empty(batch, DType::kInt32);
  if (n == 0) std::fill_n(info->data_as<int32_t>(), count, 0);
  floating_or_complex(a->dtype(), [&]<typename T>() {
    if (n == 0) return;
    for_each_matrix(count, n * n * n, [&](int64_t b) {
      T* m = cm->data_as<T>() + b * n * n;
      int inf = 0;
      if constexpr (!kIsComplex<T>) {
        if (n <= kSmallCholesky) inf = small_cholesky(m, n, upper);
      }
      if (kIsComplex<T> || n > kSmallCholesky) potrf(upper ? 'U' : 'L', as_int(n), m, &inf);
      // The other triangle (column-major: below the diagonal for U, above it for L) is zero.
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
          if (upper ? i > j : i < j) m[j * n + i] = T(0);
      info->data_as<int32_t>()[b] = inf;
    });
  });
  return {row_major(cm), info};
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& a) {
  check_input(a, "linalg.lu_factor", false, /*complex_ok=*/true);
  const int64_t m = a->shape()[a->ndim() - 2], n = a->shape().back(), k = std::min(m, n);
  const Shape batch = batch_of(a);
  const int64_t count = numel(batch);
  Tensor cm = col_major(a);
  Tensor pivots = empty(with(batch, {k}), DType::kInt32);
  Tensor info = empty(batch, DType::kInt32);
  if (k == 0) std::fill_n(info->data_as<int32_t>(), count, 0);
  floating_or_complex(a->dtype(), [&]<typename T>() {
    if (k == 0) return;
    for_each_matrix(count, m * n * k, [&](int64_t b) {
      int inf = 0;
      getrf(as_int(m), as_int(n), cm->data_as<T>() + b * m * n, pivots->data_as<int32_t>() + b * k,
            &inf);
      info->data_as<int32_t>()[b] = inf;
    });
  });
  return {row_major(cm), pivots, info};
}

Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_input(lu, op, true, /*complex_ok=*/true);
  check_input(b, op, false, /*complex_ok=*/true);
  const int64_t n = lu->shape().back(), k = b->shape().back();
  const Shape batch = batch_of(lu);
  if (b->dtype() != lu->dtype())
    throw_error<RuntimeError>(op, "expected LU and B of the same dtype, got ",
                              dtype_name(lu->dtype()), " and ", dtype_name(b->dtype()));
  if (batch_of(b) != batch || b->shape()[b->ndim() - 2] != n)
    throw_error<RuntimeError>(op, "expected B of shape ", shape_str(with(batch, {n, k})), ", got ",
                              shape_str(b->shape()));
  if (pivots->dtype() != DType::kInt32 || pivots->shape() != with(batch, {n}))
    throw_error<RuntimeError>(op, "expected int32 pivots of shape ", shape_str(with(batch, {n})),
                              ", got ", dtype_name(pivots->dtype()), " of shape ",
                              shape_str(pivots->shape()));
  const int64_t count = numel(batch);
  Tensor rows = F::contiguous(lu);
  Tensor piv = F::contiguous(pivots);
  Tensor x = b->is_contiguous() ? F::clone(b) : F::contiguous(b);  // solved in place
  floating_or_complex(lu->dtype(), [&]<typename T>() {
    if (n == 0 || k == 0) return;
    const int64_t blocks = rhs_blocks(count, k);
    for_each_matrix(count * blocks, n * n * k / blocks, [&](int64_t j) {
      const int64_t i = j / blocks, c0 = k * (j % blocks) / blocks,
                    c1 = k * (j % blocks + 1) / blocks;
      lu_solve_rows(adjoint, as_int(n), as_int(c1 - c0), rows->data_as<T>() + i * n * n,
                    piv->data_as<int32_t>() + i * n, x->data_as<T>() + i * n * k + c0, as_int(k));
    });
  });
  return x;
}

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left,
                        bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  check_input(a, op, true);
  check_input(b, op, false);
  const int64_t n = a->shape().back();
  const Shape batch = batch_of(a);
  const int64_t rows = b->shape()[b->ndim() - 2], cols = b->shape().back();
  if (b->dtype() != a->dtype())
    throw_error<RuntimeError>(op, "expected A and B of the same dtype, got ",
                              dtype_name(a->dtype()), " and ", dtype_name(b->dtype()));
  if (batch_of(b) != batch || (left ? rows : cols) != n)
    throw_error<RuntimeError>(op, "incompatible shapes of A ", shape_str(a->shape()), " and B ",
                              shape_str(b->shape()), " (left=", left, ")");
  const int64_t count = numel(batch);
  Tensor cm = col_major(a);
  Tensor x = col_major(b);  // B column-major (rows x cols, ld rows), solved in place
  floating(a->dtype(), [&]<typename T>() {
    if (rows == 0 || cols == 0) return;
    // independent columns of B from the left, rows from the right
    const int64_t blocks = rhs_blocks(count, left ? cols : rows);
    for_each_matrix(count * blocks, n * rows * cols / blocks, [&](int64_t j) {
      const int64_t i = j / blocks, part = j % blocks, total = left ? cols : rows;
      const int64_t lo = total * part / blocks, hi = total * (part + 1) / blocks;
      T* xb = x->data_as<T>() + i * rows * cols + (left ? lo * rows : lo);
      trsm(left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower,
           unitriangular ? CblasUnit : CblasNonUnit, as_int(left ? rows : hi - lo),
           as_int(left ? hi - lo : cols), cm->data_as<T>() + i * n * n,
           as_int(std::max<int64_t>(n, 1)), xb, as_int(std::max<int64_t>(rows, 1)));
    });
  });
  return row_major(x);
}

std::tuple<Tensor, Tensor> qr(const Tensor& a, const std::string& mode) {
  const char* op = "linalg.qr";
  check_input(a, op, false, /*complex_ok=*/true);
  if (mode != "reduced" && mode != "complete" && mode != "r")
    throw_error<RuntimeError>(op, "qr received unrecognized mode '", mode,
                              "' but expected one of 'reduced' (default), 'r', or 'complete'");
  const int64_t m = a->shape()[a->ndim() - 2], n = a->shape().back(), k = std::min(m, n);
  const bool complete = mode == "complete", want_q = mode != "r";
  const int64_t rrows = complete ? m : k, qcols = complete ? m : k;
  const Shape batch = batch_of(a);
  const int64_t count = numel(batch);
  Tensor cm = col_major(a);
  Tensor r = empty(with(batch, {n, rrows}), a->dtype());  // R column-major
  Tensor q = empty(with(batch, {qcols, m}), a->dtype());  // Q column-major
  floating_or_complex(a->dtype(), [&]<typename T>() {
    const auto fill = [&] {
      std::fill_n(r->data_as<T>(), r->numel(), T(0));
      std::fill_n(q->data_as<T>(), q->numel(), T(0));
    };
    if (m == 0) return;
    if (n == 0) {  // R is empty; a complete Q is the identity
      eager::run_on_stream([&] {
        fill();
        for (int64_t i = 0; i < count && complete; ++i)
          for (int64_t j = 0; j < m; ++j) q->data_as<T>()[i * m * m + j * m + j] = T(1);
      });
      return;
    }
    for_each_matrix(count, m * n * k, [&](int64_t i) {
      T* x = cm->data_as<T>() + i * m * n;
      std::vector<T> tau(k);
      T size = 0;
      int inf = 0;
      geqrf(as_int(m), as_int(n), x, tau.data(), &size, -1, &inf);
      std::vector<T> work(work_size(size));
      geqrf(as_int(m), as_int(n), x, tau.data(), work.data(), as_int(work.size()), &inf);
      T* rr = r->data_as<T>() + i * rrows * n;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t row = 0; row < rrows; ++row)
          rr[j * rrows + row] = row <= j ? x[j * m + row] : T(0);
      if (!want_q) return;
      T* qq = q->data_as<T>() + i * m * qcols;
      for (int64_t j = 0; j < qcols; ++j)
        for (int64_t row = 0; row < m; ++row) qq[j * m + row] = j < n ? x[j * m + row] : T(0);
      orgqr(as_int(m), as_int(qcols), as_int(k), qq, tau.data(), &size, -1, &inf);
      work.resize(work_size(size));
      orgqr(as_int(m), as_int(qcols), as_int(k), qq, tau.data(), work.data(), as_int(work.size()),
            &inf);
    });
  });
  Tensor q_out = want_q ? row_major(q) : empty({0}, a->dtype());
  return {q_out, row_major(r)};
}

std::tuple<Tensor, Tensor> eigh(const Tensor& a, bool upper, bool compute_v) {
  const char* op = "linalg.eigh";
  check_input(a, op, true, /*complex_ok=*/true);
  const int64_t n = a->shape().back();
  const Shape batch = batch_of(a);
  const int64_t count = numel(batch);
  Tensor cm = col_major(a);
  const DType real_dt = is_complex(a->dtype()) ? complex_to_real(a->dtype()) : a->dtype();
  Tensor w = empty(with(batch, {n}), real_dt);
  floating_or_complex(a->dtype(), [&]<typename T>() {
    using R = typename RealOf<T>::type;
    if (n == 0) return;
    for_each_matrix(count, n * n * n, [&](int64_t i) {
      const char jobz = compute_v ? 'V' : 'N', uplo = upper ? 'U' : 'L';
      int isize = 0, inf = 0;
      T* x = cm->data_as<T>() + i * n * n;
      R* wi = w->data_as<R>() + i * n;
      T size = 0;
      if constexpr (kIsComplex<T>) {  // heevd: a real workspace besides
        R rsize = 0;
        heevd(jobz, uplo, as_int(n), x, wi, &size, -1, &rsize, -1, &isize, -1, &inf);
        std::vector<T> work(work_size(size));
        std::vector<R> rwork(work_size(rsize));
        std::vector<int> iwork(std::max(1, isize));
        heevd(jobz, uplo, as_int(n), x, wi, work.data(), as_int(work.size()), rwork.data(),
              as_int(rwork.size()), iwork.data(), as_int(iwork.size()), &inf);
      } else {
        syevd(jobz, uplo, as_int(n), x, wi, &size, -1, &isize, -1, &inf);
        std::vector<T> work(work_size(size));
        std::vector<int> iwork(std::max(1, isize));
        syevd(jobz, uplo, as_int(n), x, wi, work.data(), as_int(work.size()), iwork.data(),
              as_int(iwork.size()), &inf);
      }
      if (inf > 0)
        throw_error<LinAlgError>(op,
                                 "The algorithm failed to converge because the input matrix is "
                                 "ill-conditioned or has too many repeated eigenvalues (error "
                                 "code: ",
                                 inf, ").");
    });
  });
  Tensor v = compute_v ? row_major(cm) : empty({0}, a->dtype());
  return {w, v};
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& a, bool full_matrices, bool compute_uv) {
  const char* op = "linalg.svd";
  check_input(a, op, false, /*complex_ok=*/true);
  const int64_t m = a->shape()[a->ndim() - 2], n = a->shape().back(), k = std::min(m, n);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  const Shape batch = batch_of(a);
  const int64_t count = numel(batch);
  Tensor cm = col_major(a);
  const DType real_dt = is_complex(a->dtype()) ? complex_to_real(a->dtype()) : a->dtype();
  Tensor s = empty(with(batch, {k}), real_dt);
  Tensor u = empty(with(batch, {compute_uv ? ucols : 0, compute_uv ? m : 0}), a->dtype());
  Tensor vt = empty(with(batch, {compute_uv ? n : 0, compute_uv ? vrows : 0}), a->dtype());
  floating_or_complex(a->dtype(), [&]<typename T>() {
    using R = typename RealOf<T>::type;
    if (k == 0) {  // full U and V are identities
      if (compute_uv && count > 0)
        eager::run_on_stream([&] {
          std::fill_n(u->data_as<T>(), u->numel(), T(0));
          std::fill_n(vt->data_as<T>(), vt->numel(), T(0));
          for (int64_t i = 0; i < count; ++i) {
            for (int64_t j = 0; j < ucols && j < m; ++j)
              u->data_as<T>()[i * ucols * m + j * m + j] = T(1);
            for (int64_t j = 0; j < vrows && j < n; ++j)
              vt->data_as<T>()[i * n * vrows + j * vrows + j] = T(1);
          }
        });
      return;
    }
    for_each_matrix(count, m * n * k, [&](int64_t i) {
      const char jobz = !compute_uv ? 'N' : full_matrices ? 'A' : 'S';
      T* x = cm->data_as<T>() + i * m * n;
      R* si = s->data_as<R>() + i * k;
      T dummy = 0;
      T* ui = compute_uv ? u->data_as<T>() + i * ucols * m : &dummy;
      T* vi = compute_uv ? vt->data_as<T>() + i * n * vrows : &dummy;
      const int ldu = as_int(std::max<int64_t>(1, m)), ldvt = as_int(std::max<int64_t>(1, vrows));
      std::vector<int> iwork(8 * k);
      T size = 0;
      int inf = 0;
      if constexpr (kIsComplex<T>) {
        // LAPACK's bound on the real workspace (the larger of the 3.6 and 3.7+ ones).
        const int64_t mx = std::max(m, n);
        const int64_t lrwork =
            compute_uv ? std::max(5 * k * k + 5 * k, 2 * mx * k + 2 * k * k + k) : 7 * k;
        std::vector<R> rwork(std::max<int64_t>(1, lrwork));
        gesdd(jobz, as_int(m), as_int(n), x, si, ui, ldu, vi, ldvt, &size, -1, rwork.data(),
              iwork.data(), &inf);
        std::vector<T> work(work_size(size));
        gesdd(jobz, as_int(m), as_int(n), x, si, ui, ldu, vi, ldvt, work.data(),
              as_int(work.size()), rwork.data(), iwork.data(), &inf);
      } else {
        gesdd(jobz, as_int(m), as_int(n), x, si, ui, ldu, vi, ldvt, &size, -1, iwork.data(), &inf);
        std::vector<T> work(work_size(size));
        gesdd(jobz, as_int(m), as_int(n), x, si, ui, ldu, vi, ldvt, work.data(),
              as_int(work.size()), iwork.data(), &inf);
      }
      if (inf > 0)
        throw_error<LinAlgError>(op,
                                 "The algorithm failed to converge because the input matrix is "
                                 "ill-conditioned or has too many repeated singular values "
                                 "(error code: ",
                                 inf, ").");
    });
  });
  if (!compute_uv) return {empty({0}, a->dtype()), s, empty({0}, a->dtype())};
  return {row_major(u), s, row_major(vt)};
}

std::tuple<Tensor, Tensor> eig(const Tensor& a, bool compute_v) {
  const char* op = "linalg.eig";
  check_input(a, op, true, /*complex_ok=*/true);
  const int64_t n = a->shape().back();
  const Shape batch = batch_of(a);
  const int64_t count = numel(batch);
  const DType out_dt = is_complex(a->dtype())          ? a->dtype()
                       : a->dtype() == DType::kFloat32 ? DType::kComplex64
                                                       : DType::kComplex128;
  Tensor cm = col_major(a);
  Tensor w = empty(with(batch, {n}), out_dt);
  Tensor vr = empty(with(batch, {compute_v ? n : 0, compute_v ? n : 0}), out_dt);  // columns
  floating_or_complex(a->dtype(), [&]<typename T>() {
    using R = typename RealOf<T>::type;
    using C = std::complex<R>;
    if (n == 0) return;
    for_each_matrix(count, 10 * n * n * n, [&](int64_t i) {
      const char jobvr = compute_v ? 'V' : 'N';
      T* x = cm->data_as<T>() + i * n * n;
      C* wi = w->data_as<C>() + i * n;
      C* vi = compute_v ? vr->data_as<C>() + i * n * n : nullptr;
      int inf = 0;
      T size = 0;
      if constexpr (kIsComplex<T>) {
        std::vector<R> rwork(2 * n);
        T dummy = 0;
        T* v = compute_v ? vi : &dummy;
        geev(jobvr, as_int(n), x, wi, nullptr, v, &size, -1, rwork.data(), &inf);
        std::vector<T> work(work_size(size));
        geev(jobvr, as_int(n), x, wi, nullptr, v, work.data(), as_int(work.size()), rwork.data(),
             &inf);
      } else {  // conjugate pairs come as (re, im) in wr/wi and as two real columns
        std::vector<R> wr(n), wim(n), v(compute_v ? n * n : 1);
        geev(jobvr, as_int(n), x, wr.data(), wim.data(), v.data(), &size, -1, nullptr, &inf);
        std::vector<T> work(work_size(size));
        geev(jobvr, as_int(n), x, wr.data(), wim.data(), v.data(), work.data(), as_int(work.size()),
             nullptr, &inf);
        for (int64_t j = 0; j < n; ++j) wi[j] = C(wr[j], wim[j]);
        if (compute_v && inf == 0)
          for (int64_t j = 0; j < n; ++j) {
            const R* col = v.data() + j * n;
            if (wim[j] != 0 && j + 1 < n) {
              const R* next = col + n;
              for (int64_t r = 0; r < n; ++r) {
                vi[j * n + r] = C(col[r], next[r]);
                vi[(j + 1) * n + r] = C(col[r], -next[r]);
              }
              ++j;
            } else {
              for (int64_t r = 0; r < n; ++r) vi[j * n + r] = C(col[r], 0);
            }
          }
      }
      if (inf > 0)
        throw_error<LinAlgError>(op,
                                 "The algorithm failed to converge because the input matrix is "
                                 "ill-conditioned or has too many repeated eigenvalues (error "
                                 "code: ",
                                 inf, ").");
    });
  });
  Tensor v = compute_v ? row_major(vr) : empty({0}, out_dt);
  return {w, v};
}

}  // namespace oneflow::lapack
