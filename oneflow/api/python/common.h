// Conversions between Python objects and core types shared by the binding files.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "oneflow/core/functional/functional.h"

namespace oneflow::python {

namespace py = pybind11;

// dtype objects are singletons: flow.float32 is x.dtype.
py::object dtype_to_py(DType dt);
DType dtype_from_py(py::handle h, const char* op);
std::optional<DType> optional_dtype(py::handle h, const char* op);

py::object device_to_py(Device d);
// Accepts a flow.device, a string ("cuda:0") or an int (a CUDA index).
Device device_from_py(py::handle h, const char* op);
std::optional<Device> optional_device(py::handle h, const char* op);

bool is_scalar(py::handle h);
Scalar scalar_from_py(py::handle h, const char* op);
bool is_tensor(py::handle h);
// h as a Tensor, or a TypeError naming the op and the argument.
inline Tensor as_tensor(py::handle h, const char* op, const char* what) {
  if (is_tensor(h)) return h.cast<Tensor>();
  throw_error<TypeError>(op, "expected ", what, " to be a Tensor, got ",
                         std::string(py::str(py::type::of(h).attr("__name__"))));
}

// A shape from varargs `(2, 3)`, a single sequence `((2, 3),)` or a flow.Size.
Shape shape_from_args(py::args args, const char* op);
Shape shape_from_sequence(py::handle h, const char* op);
// An int or a sequence of ints (dims).
std::vector<int64_t> dims_from_py(py::handle h, const char* op);

// Sets the Python exception of the same name for a core error (TypeError, ..., RuntimeError);
// false for any other exception (module.cpp).
bool set_python_error(std::exception_ptr p);

// Notes the calling Python line for the eager engine (eager.cpp); needs the GIL.
void record_location();
void clear_location();

// Releases the GIL around a call into the core, after noting the Python line that made it (a
// queued kernel that fails is reported with it).
class ReleaseGil {
 public:
  ReleaseGil() = default;
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  struct Location {
    Location() { record_location(); }
    ~Location() { clear_location(); }
  } location_;  // constructed first: the GIL is still held
  py::gil_scoped_release release_;
};

void init_dtype_device(py::module_& m);
void init_tensor(py::module_& m);
void init_functional(py::module_& m);
void init_reductions(py::module_& m);
void init_nn(py::module_& m);
void init_autograd(py::module_& m);
void init_dlpack(py::module_& m);
void init_eager(py::module_& m);
void init_fast_methods(py::module_& m);
void init_comm(py::module_& m);
void init_lapack(py::module_& m);

}  // namespace oneflow::python
