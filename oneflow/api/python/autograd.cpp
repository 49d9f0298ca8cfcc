// Bindings of the autograd engine and of the mode switches (grad mode, lazy mode).
#include "oneflow/core/autograd/autograd.h"
#include "oneflow/api/python/common.h"
#include "oneflow/core/dispatch/dispatch.h"

namespace oneflow::python {

namespace {

TensorList tensor_list(py::handle h, const char* op) {
  TensorList out;
  if (h.is_none()) return out;
  if (is_tensor(h)) return {h.cast<Tensor>()};
  for (py::handle v : h) out.push_back(v.is_none() ? nullptr : v.cast<Tensor>());
  return out;
}

}  // namespace

void init_autograd(py::module_& m) {
  py::module_ ag = m.def_submodule("autograd", "autograd engine");
  ag.def(
      "backward",
      [](py::handle outputs, py::handle grads, bool retain_graph, bool create_graph) {
        TensorList outs = tensor_list(outputs, "backward"), gs = tensor_list(grads, "backward");
        py::gil_scoped_release nogil;
        run_backward(outs, gs, retain_graph, create_graph);
      },
      py::arg("outputs"), py::arg("grad_outputs"), py::arg("retain_graph"),
      py::arg("create_graph"));
  ag.def(
      "grad",
      [](py::handle outputs, py::handle inputs, py::handle grads, bool retain_graph,
         bool create_graph, bool allow_unused) {
        TensorList outs = tensor_list(outputs, "autograd.grad"),
                   ins = tensor_list(inputs, "autograd.grad"),
                   gs = tensor_list(grads, "autograd.grad");
        TensorList res;
        {
          py::gil_scoped_release nogil;
          res = run_backward(outs, gs, retain_graph, create_graph, ins, allow_unused);
        }
        py::tuple t(res.size());
        for (size_t i = 0; i < res.size(); ++i) t[i] = res[i] ? py::cast(res[i]) : py::none();
        return t;
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs"), py::arg("retain_graph"),
      py::arg("create_graph"), py::arg("allow_unused"));
  ag.def("is_grad_enabled", &grad_mode_enabled);
  ag.def("set_grad_enabled", &set_grad_mode);

  m.def("is_lazy_mode", &lazy_mode_enabled);
  // Returns the previous state; used by oneflow.nn.Graph's tracing context.
  m.def("_set_lazy_mode", [](bool enabled) {
    bool prev = lazy_mode_enabled();
    set_lazy_mode(enabled);
    return prev;
  });
}

}  // namespace oneflow::python
