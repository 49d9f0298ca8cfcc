// oneflow.comm's core: the process group and the collectives (core/comm/comm.h). Each call
// releases the GIL: a collective may wait for queue space, and in synchronous mode for its peers.
#include <optional>

#include "oneflow/api/python/common.h"
#include "oneflow/core/comm/comm.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/framework/global.h"

namespace oneflow::python {

namespace {

// None or a Tensor.
Tensor optional_tensor(py::handle h, const char* op, const char* what) {
  if (h.is_none()) return nullptr;
  return as_tensor(h, op, what);
}

Sbp sbp_from_py(const std::string& kind, int64_t axis, const char* op) {
  if (kind == "split") return Sbp::split(axis);
  if (kind == "broadcast") return Sbp::broadcast();
  if (kind == "partial_sum") return Sbp::partial_sum();
  throw_error<ValueError>(op, "unknown sbp ", kind);
}

// Ranks nested as the hierarchy (Note [N-D placements]), flattened row-major.
void flatten_ranks(py::handle h, size_t depth, Placement& p) {
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h)) {
    p.ranks.push_back(h.cast<int64_t>());
    return;
  }
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  const int64_t n = static_cast<int64_t>(py::len(seq));
  if (p.hierarchy.size() == depth) {
    p.hierarchy.push_back(n);
  } else if (p.hierarchy.size() < depth || p.hierarchy[depth] != n) {
    throw_error<ValueError>("placement", "the nested lists of ranks must all have the same length");
  }
  for (py::handle item : seq) flatten_ranks(item, depth + 1, p);
}

Placement placement_from_py(const std::string& type, py::handle ranks) {
  Placement p{type == "cuda" ? DeviceType::kCUDA : DeviceType::kCPU, {}, {}};
  flatten_ranks(ranks, 0, p);
  if (p.hierarchy.size() == 1) p.hierarchy.clear();  // 1-D
  if (static_cast<int64_t>(p.ranks.size()) !=
          [&] {
            int64_t n = 1;
            for (int64_t h : p.hierarchy) n *= h;
            return n;
          }() &&
      p.nd())
    throw_error<ValueError>("placement", "the nested lists of ranks must all have the same length");
  return p;
}

// One sbp ("split", axis), or a list of (kind, axis) pairs, one per hierarchy axis of p (one
// sbp on an N-D placement: the same on every axis); negative split axes count from ndim.
NdSbp nd_sbp_from_py(py::handle kind, int64_t axis, int64_t ndim, const Placement& p,
                     const char* op) {
  auto one = [&](const std::string& k, int64_t a) {
    Sbp s = sbp_from_py(k, a, op);
    if (s.is_split() && a < 0) s.axis = a + ndim;
    return s;
  };
  if (py::isinstance<py::str>(kind)) return global::uniform(p, one(kind.cast<std::string>(), axis));
  NdSbp nd;
  for (py::handle item : kind) {
    auto pair = item.cast<std::pair<std::string, int64_t>>();
    nd.push_back(one(pair.first, pair.second));
  }
  return nd;
}

py::object nested_ranks_to_py(const Placement& p, size_t axis, int64_t begin) {
  if (!p.nd()) return py::cast(p.ranks);
  py::list out;
  int64_t inner = 1;
  for (size_t a = axis + 1; a < p.hierarchy.size(); ++a) inner *= p.hierarchy[a];
  for (int64_t i = 0; i < p.hierarchy[axis]; ++i) {
    if (axis + 1 == p.hierarchy.size())
      out.append(p.ranks[begin + i]);
    else
      out.append(nested_ranks_to_py(p, axis + 1, begin + i * inner));
  }
  return out;
}

const char* sbp_kind_name(const Sbp& s) {
  return s.kind == Sbp::kSplit ? "split" : s.kind == Sbp::kBroadcast ? "broadcast" : "partial_sum";
}

// Global tensors' core (framework/global.h); oneflow/framework/global_tensor.py adds autograd.
void init_global(py::module_& m) {
  m.def(
      "_global_from_local",
      [](const Tensor& local, const std::string& type, py::handle ranks, py::handle kind,
         int64_t axis, bool check_meta, bool sync_broadcast,
         std::optional<std::vector<int64_t>> shape) {
        if (local->global()) throw_error<RuntimeError>("to_global", "the tensor is global already");
        const Placement p = placement_from_py(type, ranks);
        const NdSbp nd = nd_sbp_from_py(kind, axis, local->ndim(), p, "to_global");
        ReleaseGil nogil;
        const Shape known = shape ? Shape(*shape) : Shape{};
        return global::from_local(alias_detached(local), p, nd, check_meta, sync_broadcast,
                                  shape ? &known : nullptr);
      },
      py::arg("local"), py::arg("type"), py::arg("ranks"), py::arg("kind"), py::arg("axis"),
      py::arg("check_meta") = true, py::arg("sync_broadcast") = false,
      py::arg("shape") = py::none());
  m.def("_global_box", [](const Tensor& t, py::handle kind, int64_t axis) {
    const NdSbp nd = nd_sbp_from_py(kind, axis, t->ndim(), global::meta(t).placement, "to_global");
    for (const Sbp& sbp : nd)
      if (sbp.is_split() && (sbp.axis < 0 || sbp.axis >= t->ndim()))
        throw_error<IndexError>("to_global", "split axis ", sbp.axis, " is out of range for a ",
                                t->ndim(), "-d tensor");
    ReleaseGil nogil;
    return global::box(t, nd);
  });
  m.def("_comm_log_collectives", [](bool on) { comm::log_collectives(on); });
  m.def("_comm_logged_collectives", [] { return comm::logged_collectives(); });
  m.def("_global_transfer", [](const Tensor& t, const std::string& type, py::handle ranks,
                               py::handle kind, int64_t axis) {
    const Placement to = placement_from_py(type, ranks);
    global::check_placement(to, "to_global");
    const NdSbp nd = nd_sbp_from_py(kind, axis, t->ndim(), to, "to_global");
    ReleaseGil nogil;
    return global::transfer(t, to, nd);
  });
  m.def("_global_whole", [](const Tensor& t) {
    ReleaseGil nogil;
    return alias_detached(global::whole_value(t));
  });
  // Whether this process holds a shard of t (Note [Absent shards] in global.h).
  m.def("_global_holds", [](const Tensor& t) { return !global::absent(t); });
  m.def("_global_to_local", [](const Tensor& t) { return alias_detached(global::local_of(t)); });
  m.def("_global_placement", [](const Tensor& t) {
    const Placement& p = global::meta(t).placement;
    return py::make_tuple(p.type == DeviceType::kCUDA ? "cuda" : "cpu",
                          nested_ranks_to_py(p, 0, 0));
  });
  m.def("_global_sbp", [](const Tensor& t) {
    const Sbp& s = global::meta(t).sbp;
    return py::make_tuple(sbp_kind_name(s), s.axis);
  });
  // Every hierarchy axis's sbp, as (kind, axis) pairs.
  m.def("_global_nd_sbp", [](const Tensor& t) {
    py::list out;
    for (const Sbp& s : global::meta(t).layout())
      out.append(py::make_tuple(sbp_kind_name(s), s.axis));
    return out;
  });
  m.def("_global_check_placement", [](const std::string& type, py::handle ranks) {
    global::check_placement(placement_from_py(type, ranks), "placement");
  });
}

// `with _CommGroupScope(ranks, id=0):` runs the collectives of this thread among `ranks` (comm.h
// GroupScope; a nonzero id: new_group's group of its own); rank(), world_size(), src and dst
// are the subgroup's inside.
class PyGroupScope {
 public:
  PyGroupScope(std::vector<int64_t> ranks, int64_t id) : ranks_(std::move(ranks)), id_(id) {}
  void enter() {
    if (scope_) throw_error<RuntimeError>("process group", "this group scope is already entered");
    ReleaseGil nogil;  // the first use connects the group's members
    scope_.emplace(ranks_, id_);
  }
  void exit() { scope_.reset(); }

 private:
  std::vector<int64_t> ranks_;
  int64_t id_;
  std::optional<comm::GroupScope> scope_;
};

}  // namespace

void init_comm(py::module_& m) {
  init_global(m);
  py::class_<PyGroupScope>(m, "_CommGroupScope")
      .def(py::init<std::vector<int64_t>, int64_t>(), py::arg("ranks"), py::arg("id") = 0)
      .def("__enter__", [](PyGroupScope& s) { s.enter(); })
      .def("__exit__", [](PyGroupScope& s, py::args) {
        s.exit();
        return false;
      });
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
  // Work.wait(): until the collectives on these tensors have run (their errors raise), or,
  // without tensors, until the group's queued collectives and sends have (ranks None: the
  // process group's).
  m.def("_comm_wait_tensors", [](const std::vector<Tensor>& tensors) {
    ReleaseGil nogil;
    for (const Tensor& t : tensors) eager::wait_for(*t->storage());
  });
  m.def(
      "_comm_wait_group",
      [](std::optional<std::vector<int64_t>> ranks, int64_t id) {
        ReleaseGil nogil;
        std::optional<comm::GroupScope> among;
        if (ranks) among.emplace(*ranks, id);
        comm::wait_group();
      },
      py::arg("ranks"), py::arg("id") = 0);
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
