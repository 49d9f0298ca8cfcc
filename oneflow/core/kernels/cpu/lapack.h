// Matrix decompositions and solves on LAPACK (OpenBLAS's): Cholesky, LU, triangular solves, QR,
// the symmetric and the general eigendecomposition and the SVD, for float32/float64 CPU tensors of
// shape (..., m, n) with any strides; LU, the eigendecompositions and the SVD for
// complex64/complex128 as well. Each returns new contiguous tensors;
// the call waits for the result (the routines run on the eager stream thread, one matrix of a batch
// per OpenMP thread). They are not differentiable: oneflow.linalg composes their gradients.
//
// Numerical failures are reported, not raised, where PyTorch reports them (`info` of the
// factorizations); the eigen and singular value solvers raise LinAlgError when they do not
// converge.
#pragma once

#include <string>
#include <tuple>

#include "oneflow/core/framework/tensor.h"

namespace oneflow::lapack {

// potrf: L (or U when upper) with the other triangle zero; info (int32, the batch shape): k > 0
// when the leading minor of order k is not positive-definite.
std::tuple<Tensor, Tensor> cholesky(const Tensor& a, bool upper);
// getrf of (..., m, n): LU packed as LAPACK's, pivots (int32, 1-based, (..., min(m, n))), info.
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& a);
// Solves A X = B (A^H X = B with adjoint) from lu()'s factors (getrs's job, as row-major
// triangular solves); b (..., n, k) with the batch shape of lu.
Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool adjoint);
// trsm: A X = B (left) or X A = B, reading the named triangle of a (and a unit diagonal when
// unitriangular); b has a's batch shape.
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left,
                        bool unitriangular);
// geqrf + orgqr; mode "reduced", "complete" or "r" (Q is then empty), as torch.linalg.qr.
std::tuple<Tensor, Tensor> qr(const Tensor& a, const std::string& mode);
// syevd: ascending eigenvalues and (when compute_v) the eigenvectors as columns; reads the
// upper triangle when upper, else the lower.
std::tuple<Tensor, Tensor> eigh(const Tensor& a, bool upper, bool compute_v);
// gesdd: U, descending S, Vh (U and Vh empty unless compute_uv).
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& a, bool full_matrices, bool compute_uv);
// geev: the eigenvalues and (when compute_v) right eigenvectors as columns of unit norm, both
// complex (complex64 for float32 input, complex128 for float64).
std::tuple<Tensor, Tensor> eig(const Tensor& a, bool compute_v);

}  // namespace oneflow::lapack
