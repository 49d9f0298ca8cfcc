// The LAPACK routines of kernels/cpu/lapack.h for oneflow.linalg (which adds the gradients).
#include "oneflow/core/kernels/cpu/lapack.h"
#include "oneflow/api/python/common.h"

namespace oneflow::python {

void init_lapack(py::module_& m) {
  m.def(
      "_lapack_cholesky",
      [](py::handle a, bool upper) {
        return lapack::cholesky(as_tensor(a, "linalg.cholesky", "A"), upper);
      },
      py::arg("a"), py::arg("upper") = false);
  m.def(
      "_lapack_lu", [](py::handle a) { return lapack::lu(as_tensor(a, "linalg.lu_factor", "A")); },
      py::arg("a"));
  m.def(
      "_lapack_lu_solve",
      [](py::handle lu, py::handle pivots, py::handle b, bool adjoint) {
        const char* op = "linalg.lu_solve";
        return lapack::lu_solve(as_tensor(lu, op, "LU"), as_tensor(pivots, op, "pivots"),
                                as_tensor(b, op, "B"), adjoint);
      },
      py::arg("lu"), py::arg("pivots"), py::arg("b"), py::arg("adjoint") = false);
  m.def(
      "_lapack_solve_triangular",
      [](py::handle a, py::handle b, bool upper, bool left, bool unitriangular) {
        const char* op = "linalg.solve_triangular";
        return lapack::solve_triangular(as_tensor(a, op, "A"), as_tensor(b, op, "B"), upper, left,
                                        unitriangular);
      },
      py::arg("a"), py::arg("b"), py::arg("upper"), py::arg("left") = true,
      py::arg("unitriangular") = false);
  m.def(
      "_lapack_qr",
      [](py::handle a, const std::string& mode) {
        return lapack::qr(as_tensor(a, "linalg.qr", "A"), mode);
      },
      py::arg("a"), py::arg("mode") = "reduced");
  m.def(
      "_lapack_eigh",
      [](py::handle a, bool upper, bool compute_v) {
        return lapack::eigh(as_tensor(a, "linalg.eigh", "A"), upper, compute_v);
      },
      py::arg("a"), py::arg("upper") = false, py::arg("compute_v") = true);
  m.def(
      "_lapack_svd",
      [](py::handle a, bool full_matrices, bool compute_uv) {
        return lapack::svd(as_tensor(a, "linalg.svd", "A"), full_matrices, compute_uv);
      },
      py::arg("a"), py::arg("full_matrices") = true, py::arg("compute_uv") = true);
  m.def(
      "_lapack_eig",
      [](py::handle a, bool compute_v) {
        return lapack::eig(as_tensor(a, "linalg.eig", "A"), compute_v);
      },
      py::arg("a"), py::arg("compute_v") = true);
}

}  // namespace oneflow::python
