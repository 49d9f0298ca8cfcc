// The tracer and compiled programs of core/graph for oneflow.nn.Graph (python/oneflow/nn/graph).
#include "oneflow/core/graph/graph.h"
#include "oneflow/api/python/common.h"
#include "oneflow/core/graph/trace_pause.h"

namespace oneflow::python {

void init_graph(py::module_& m) {
  m.def("_graph_trace_begin", &graph::begin_trace, py::arg("inputs"),
        py::arg("variables") = TensorList{});
  m.def("_graph_trace_end", &graph::end_trace, py::arg("outputs"));
  m.def("_graph_trace_abort", &graph::abort_trace);
  m.def("_graph_tracing", &graph::tracing);
  m.def("_graph_trace_pause", &graph::pause_trace);
  m.def("_graph_trace_resume", &graph::resume_trace);
  // Saved programs (the protobuf IR, core/graph/graph.proto): variables are (name, tensor) pairs.
  m.def(
      "_graph_save",
      [](const graph::CompiledGraph& g,
         const std::vector<std::pair<std::string, Tensor>>& variables) {
        return py::bytes(graph::save_graph(g, variables));
      },
      py::arg("compiled"), py::arg("variables"));
  m.def(
      "_graph_load",
      [](const py::bytes& bytes, const std::vector<std::pair<std::string, Tensor>>& variables) {
        return graph::load_graph(std::string(bytes), variables);
      },
      py::arg("program"), py::arg("variables"));
  m.def(
      "_graph_variables", [](const py::bytes& bytes) { return graph::graph_variables(bytes); },
      py::arg("program"));
  m.def(
      "_graph_proto_text", [](const py::bytes& bytes) { return graph::graph_text(bytes); },
      py::arg("program"));
  py::class_<graph::CompiledGraph, std::shared_ptr<graph::CompiledGraph>>(m, "CompiledGraph")
      .def(
          "run",
          [](const graph::CompiledGraph& g, const TensorList& inputs) {
            ReleaseGil release;
            return g.run(inputs);
          },
          py::arg("inputs"))
      .def_property_readonly("num_steps", &graph::CompiledGraph::num_steps)
      .def_property_readonly("num_traced_steps", &graph::CompiledGraph::num_traced_steps)
      .def_property_readonly("current", &graph::CompiledGraph::current)
      .def("ir", &graph::CompiledGraph::ir)
      .def("__repr__", &graph::CompiledGraph::ir);
}

}  // namespace oneflow::python
