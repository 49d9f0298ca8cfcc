// oneflow.comm's core: the process group and the collectives (core/comm/comm.h). Each call
// releases the GIL: a collective may wait for queue space, and in synchronous mode for its peers.
#include "oneflow/core/comm/comm.h"
#include "oneflow/api/python/common.h"

namespace oneflow::python {

namespace {

// None or a Tensor.
Tensor optional_tensor(py::handle h, const char* op, const char* what) {
  if (h.is_none()) return nullptr;
  return as_tensor(h, op, what);
}

}  // namespace

void init_comm(py::module_& m) {
  m.def(
      "_comm_init",
      [](int rank, int world_size, const std::string& master_addr, int master_port,
         double timeout_seconds) {
        ReleaseGil nogil;
        comm::init(rank, world_size, master_addr, master_port, timeout_seconds);
      },
      py::arg("rank"), py::arg("world_size"), py::arg("master_addr"), py::arg("master_port"),
      py::arg("timeout_seconds"));
  m.def("_comm_initialized", &comm::initialized);
  m.def("_comm_rank", &comm::rank);
  m.def("_comm_world_size", &comm::world_size);
  m.def("_comm_destroy", [] {
    ReleaseGil nogil;
    comm::destroy();
  });
  m.def(
      "_comm_all_reduce",
      [](const Tensor& t, const std::string& op) {
        const comm::ReduceOp r = comm::parse_reduce_op(op, "all_reduce");
        ReleaseGil nogil;
        comm::all_reduce(t, r);
      },
      py::arg("tensor"), py::arg("op") = "sum");
  m.def(
      "_comm_broadcast",
      [](const Tensor& t, int src) {
        ReleaseGil nogil;
        comm::broadcast(t, src);
      },
      py::arg("tensor"), py::arg("src"));
  m.def(
      "_comm_reduce",
      [](const Tensor& t, int dst, const std::string& op) {
        const comm::ReduceOp r = comm::parse_reduce_op(op, "reduce");
        ReleaseGil nogil;
        comm::reduce(t, dst, r);
      },
      py::arg("tensor"), py::arg("dst"), py::arg("op") = "sum");
  m.def(
      "_comm_all_gather",
      [](const Tensor& out, const Tensor& in) {
        ReleaseGil nogil;
        comm::all_gather(out, in);
      },
      py::arg("output"), py::arg("input"));
  m.def(
      "_comm_gather",
      [](py::handle out, const Tensor& in, int dst) {
        Tensor o = optional_tensor(out, "gather", "output");
        ReleaseGil nogil;
        comm::gather(o, in, dst);
      },
      py::arg("output"), py::arg("input"), py::arg("dst"));
  m.def(
      "_comm_scatter",
      [](const Tensor& out, py::handle in, int src) {
        Tensor i = optional_tensor(in, "scatter", "input");
        ReleaseGil nogil;
        comm::scatter(out, i, src);
      },
      py::arg("output"), py::arg("input"), py::arg("src"));
  m.def(
      "_comm_reduce_scatter",
      [](const Tensor& out, const Tensor& in, const std::string& op) {
        const comm::ReduceOp r = comm::parse_reduce_op(op, "reduce_scatter");
        ReleaseGil nogil;
        comm::reduce_scatter(out, in, r);
      },
      py::arg("output"), py::arg("input"), py::arg("op") = "sum");
  m.def(
      "_comm_all_to_all",
      [](const Tensor& out, const Tensor& in) {
        ReleaseGil nogil;
        comm::all_to_all(out, in);
      },
      py::arg("output"), py::arg("input"));
  m.def("_comm_flush_sends", [] {
    ReleaseGil nogil;
    comm::flush_sends();
  });
  m.def("_comm_barrier", [] {
    ReleaseGil nogil;
    comm::barrier();
  });
  m.def(
      "_comm_send",
      [](const Tensor& t, int dst, int tag) {
        ReleaseGil nogil;
        comm::send(t, dst, tag);
      },
      py::arg("tensor"), py::arg("dst"), py::arg("tag") = 0);
  m.def(
      "_comm_recv",
      [](const Tensor& t, int src, int tag) {
        ReleaseGil nogil;
        comm::recv(t, src, tag);
      },
      py::arg("tensor"), py::arg("src"), py::arg("tag") = 0);
}

}  // namespace oneflow::python
