// oneflow._oneflow_internal: the native module. Submodules and classes are initialised from the
// explicit list below; core exceptions map to the Python exception of the same name.
#include <cstring>

#include "oneflow/api/python/common.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"

namespace oneflow::python {

void init_graph(py::module_& m);          // graph.cpp
void init_one_embedding(py::module_& m);  // one_embedding.cpp
void init_data(py::module_& m);           // data.cpp
void init_complex(py::module_& m);        // complex.cpp

namespace {
// oneflow._oneflow_internal._LinAlgError, a subclass of RuntimeError (PyTorch's
// torch._C._LinAlgError); python/oneflow/linalg.py exports it as oneflow.linalg.LinAlgError.
PyObject* g_linalg_error = nullptr;
// oneflow.OutOfMemoryError (also oneflow.cuda.OutOfMemoryError), a subclass of RuntimeError as
// PyTorch's: what an allocator raises when an allocation fails ("...: out of memory: ...").
PyObject* g_oom_error = nullptr;
}  // namespace

bool set_python_error(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const LinAlgError& e) {
    PyErr_SetString(g_linalg_error, e.what());
  } catch (const Error& e) {
    const bool oom = std::strstr(e.what(), ": out of memory: ") != nullptr;
    PyErr_SetString(oom ? g_oom_error : PyExc_RuntimeError, e.what());
  } catch (...) {
    return false;
  }
  return true;
}

PYBIND11_MODULE(_oneflow_internal, m) {
  m.doc() = "OneFlow's native core";
  g_linalg_error =
      PyErr_NewException("oneflow._oneflow_internal._LinAlgError", PyExc_RuntimeError, nullptr);
  if (g_linalg_error == nullptr) throw py::error_already_set();
  m.add_object("_LinAlgError", py::handle(g_linalg_error));
  g_oom_error =
      PyErr_NewException("oneflow._oneflow_internal.OutOfMemoryError", PyExc_RuntimeError, nullptr);
  if (g_oom_error == nullptr) throw py::error_already_set();
  m.add_object("OutOfMemoryError", py::handle(g_oom_error));
  py::register_exception_translator([](std::exception_ptr p) {
    // Others are rethrown to pybind11's own translation.
    if (p && !set_python_error(p)) std::rethrow_exception(p);
  });

  init_dtype_device(m);
  init_tensor(m);
  py::module_ c = m.def_submodule("_C", "the functional API (oneflow._C)");
  init_functional(c);
  init_reductions(c);
  init_nn(c);
  init_complex(c);
  init_autograd(m);
  init_dlpack(m);
  init_eager(m);
  init_fast_methods(m);
  init_comm(m);
  init_lapack(m);
  init_graph(m);
  init_one_embedding(m);
  init_data(m);
  // The CPU kernels' thread count (OpenMP, shared with oneDNN).
  c.def(
      "set_num_threads",
      [](int n) {
        if (n <= 0)
          throw_error<RuntimeError>("set_num_threads",
                                    "expected a positive number of threads, "
                                    "got ",
                                    n);
        eager::set_num_threads(n);
      },
      py::arg("num"));
  c.def("get_num_threads", [] { return eager::num_threads(); });
  // The vector tier of the CPU kernels (kernels/cpu/vec/avx2.h).
  c.def("_cpu_capability", [] { return std::string(cpu::capability_name()); });

  m.attr("with_cuda") = cuda_built();
}

}  // namespace oneflow::python
