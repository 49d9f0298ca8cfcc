// oneflow._C bindings of the reductions beyond sum, the scans, sort, gather, scatter and cat.
// Functions returning (values, indices) return a tuple; the Python layer names its fields.
#include "oneflow/api/python/common.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/functional/small_ops.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow::python {

namespace F = functional;

namespace {
std::vector<int64_t> optional_dims(py::handle dim, const char* op) {
  return dim.is_none() ? std::vector<int64_t>{} : dims_from_py(dim, op);
}

py::tuple pair_to_py(std::pair<Tensor, Tensor> p) { return py::make_tuple(p.first, p.second); }
}  // namespace

void init_reductions(py::module_& m) {
  m.def(
      "prod",
      [](py::handle x, py::handle dim, bool keepdim, py::handle dtype) {
        Tensor t = as_tensor(x, "prod", "input");
        std::optional<int64_t> d;
        if (!dim.is_none()) d = dim.cast<int64_t>();
        return F::prod(t, d, keepdim, optional_dtype(dtype, "prod"));
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none());
  for (const char* name : {"amax", "amin", "all", "any"}) {
    m.def(
        name,
        [name](py::handle x, py::handle dim, bool keepdim) {
          Tensor t = as_tensor(x, name, "input");
          std::vector<int64_t> dims = optional_dims(dim, name);
          ReleaseGil nogil;
          const std::string n = name;
          if (n == "amax") return F::amax(t, dims, keepdim);
          if (n == "amin") return F::amin(t, dims, keepdim);
          if (n == "all") return F::all(t, dims, keepdim);
          return F::any(t, dims, keepdim);
        },
        py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  }
  m.def(
      "vector_norm2",
      [](py::handle x, py::handle dim, bool keepdim) {
        Tensor t = as_tensor(x, "linalg_vector_norm", "input");
        std::vector<int64_t> dims = optional_dims(dim, "linalg_vector_norm");
        ReleaseGil nogil;
        return F::vector_norm2(t, dims, keepdim);
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def(
      "max_dim",
      [](py::handle x, int64_t dim, bool keepdim) {
        return pair_to_py(F::max_dim(as_tensor(x, "max", "input"), dim, keepdim));
      },
      py::arg("input"), py::arg("dim"), py::arg("keepdim") = false);
  m.def(
      "min_dim",
      [](py::handle x, int64_t dim, bool keepdim) {
        return pair_to_py(F::min_dim(as_tensor(x, "min", "input"), dim, keepdim));
      },
      py::arg("input"), py::arg("dim"), py::arg("keepdim") = false);
  m.def(
      "argmax",
      [](py::handle x, std::optional<int64_t> dim, bool keepdim) {
        return F::argmax(as_tensor(x, "argmax", "input"), dim, keepdim);
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def(
      "argmin",
      [](py::handle x, std::optional<int64_t> dim, bool keepdim) {
        return F::argmin(as_tensor(x, "argmin", "input"), dim, keepdim);
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def(
      "cumsum",
      [](py::handle x, int64_t dim, py::handle dtype) {
        return F::cumsum(as_tensor(x, "cumsum", "input"), dim, optional_dtype(dtype, "cumsum"));
      },
      py::arg("input"), py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  m.def(
      "cumprod",
      [](py::handle x, int64_t dim, py::handle dtype) {
        return F::cumprod(as_tensor(x, "cumprod", "input"), dim, optional_dtype(dtype, "cumprod"));
      },
      py::arg("input"), py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  m.def(
      "cummax",
      [](py::handle x, int64_t dim) {
        return pair_to_py(F::cummax(as_tensor(x, "cummax", "input"), dim));
      },
      py::arg("input"), py::arg("dim"));
  m.def(
      "cummin",
      [](py::handle x, int64_t dim) {
        return pair_to_py(F::cummin(as_tensor(x, "cummin", "input"), dim));
      },
      py::arg("input"), py::arg("dim"));
  m.def(
      "mode",
      [](py::handle x, int64_t dim, bool keepdim) {
        return pair_to_py(F::mode(as_tensor(x, "mode", "input"), dim, keepdim));
      },
      py::arg("input"), py::arg("dim") = -1, py::arg("keepdim") = false);
  m.def(
      "_log_softmax",
      [](const Tensor& x, int64_t dim) {
        ReleaseGil nogil;
        return F::log_softmax(x, dim);
      },
      py::arg("input"), py::arg("dim"));
  m.def("_batch_norm_train",
        [](const Tensor& x, std::optional<Tensor> w, std::optional<Tensor> b, double eps) {
          ReleaseGil nogil;
          TensorList r = F::batch_norm_train(x, w.value_or(nullptr), b.value_or(nullptr), eps);
          return std::make_tuple(r[0], r[1], r[2]);
        });
  m.def("_batch_norm_inference", [](const Tensor& x, const Tensor& mean, const Tensor& var,
                                    std::optional<Tensor> w, std::optional<Tensor> b, double eps) {
    ReleaseGil nogil;
    return F::batch_norm_inference(x, mean, var, w.value_or(nullptr), b.value_or(nullptr), eps);
  });
  m.def("_layer_norm", [](const Tensor& x, int64_t size, std::optional<Tensor> w,
                          std::optional<Tensor> b, double eps) {
    ReleaseGil nogil;
    return F::layer_norm(x, size, w.value_or(nullptr), b.value_or(nullptr), eps);
  });
  m.def("_group_norm", [](const Tensor& x, int64_t num_groups, std::optional<Tensor> w,
                          std::optional<Tensor> b, double eps) {
    ReleaseGil nogil;
    return F::group_norm(x, num_groups, w.value_or(nullptr), b.value_or(nullptr), eps);
  });
  m.def("_adam_update_",
        [](const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, double lr, double b1,
           double b2, double eps, double wd, bool decoupled, double c1, double c2) {
          ReleaseGil nogil;
          F::adam_update_(p, g, m, v, lr, b1, b2, eps, wd, decoupled, c1, c2);
        });
  m.def("_sgd_update_",
        [](const Tensor& p, const Tensor& g, std::optional<Tensor> buf, double lr, double momentum,
           double dampening, double wd, bool nesterov, bool first) {
          ReleaseGil nogil;
          F::sgd_update_(p, g, buf.value_or(nullptr), lr, momentum, dampening, wd, nesterov, first);
        });
  // The updates of a compiled graph: the per-step numbers come as a float64 tensor input
  // (Adam [lr, bias_correction1, bias_correction2], SGD [lr, the buffer's coefficient of the
  // gradient]), so that the recorded kernel reads each step's values.
  m.def("_adam_update_fed_",
        [](const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v,
           const Tensor& scalars, double b1, double b2, double eps, double wd, bool decoupled) {
          ReleaseGil nogil;
          dispatch(prim::adam_update(), {p, F::contiguous(g), m, v, scalars},
                   Attrs{{"beta1", b1},
                         {"beta2", b2},
                         {"eps", eps},
                         {"weight_decay", wd},
                         {"decoupled", decoupled},
                         {"scalars", true}});
          for (const Tensor& t : {p, m, v}) t->bump_version();
        });
  m.def("_sgd_update_fed_", [](const Tensor& p, const Tensor& g, std::optional<Tensor> buf,
                               const Tensor& scalars, double momentum, double wd, bool nesterov) {
    ReleaseGil nogil;
    TensorList in = {p, F::contiguous(g)};
    if (buf) in.push_back(*buf);
    in.push_back(scalars);
    dispatch(prim::sgd_update(), in,
             Attrs{{"momentum", momentum},
                   {"weight_decay", wd},
                   {"nesterov", nesterov},
                   {"scalars", true}});
    p->bump_version();
    if (buf) (*buf)->bump_version();
  });
  m.def("inverse", [](py::handle x) { return F::inverse(as_tensor(x, "linalg.inv", "input")); });
  m.def("det", [](py::handle x) { return F::det(as_tensor(x, "linalg.det", "input")); });
  m.def(
      "sort",
      [](py::handle x, int64_t dim, bool descending) {
        Tensor t = as_tensor(x, "sort", "input");
        ReleaseGil nogil;
        auto p = F::sort(t, dim, descending);
        py::gil_scoped_acquire gil;
        return pair_to_py(p);
      },
      py::arg("input"), py::arg("dim") = -1, py::arg("descending") = false);
  m.def("topk", [](py::handle x, int64_t k, int64_t dim, bool largest) {
    Tensor t = as_tensor(x, "topk", "input");
    ReleaseGil nogil;
    auto p = F::topk(t, k, dim, largest);
    py::gil_scoped_acquire gil;
    return pair_to_py(p);
  });
  m.def("kthvalue", [](py::handle x, int64_t k, int64_t dim, bool nan_wins) {
    Tensor t = as_tensor(x, "kthvalue", "input");
    ReleaseGil nogil;
    auto p = F::kthvalue(t, k, dim, nan_wins);
    py::gil_scoped_acquire gil;
    return pair_to_py(p);
  });
  m.def("_histc", [](py::handle x, int64_t bins, double lo, double hi) {
    Tensor t = as_tensor(x, "histc", "input");
    ReleaseGil nogil;
    return F::histc(t, bins, lo, hi);
  });
  // functional/small_ops.h: one-pass kernels on the CPU.
  m.def("_one_hot", [](py::handle x, int64_t num_classes) {
    Tensor t = as_tensor(x, "one_hot", "input");
    ReleaseGil nogil;
    return F::one_hot(t, num_classes);
  });
  m.def("_bincount", [](py::handle x, py::handle weights, int64_t minlength) {
    Tensor t = as_tensor(x, "bincount", "input");
    Tensor w = weights.is_none() ? Tensor() : as_tensor(weights, "bincount", "weights");
    ReleaseGil nogil;
    return F::bincount(t, w, minlength);
  });
  m.def("_dot", [](py::handle a, py::handle b) {
    Tensor ta = as_tensor(a, "dot", "input"), tb = as_tensor(b, "dot", "other");
    ReleaseGil nogil;
    return F::dot(ta, tb);
  });
  m.def("_outer", [](py::handle a, py::handle b) {
    Tensor ta = as_tensor(a, "outer", "input"), tb = as_tensor(b, "outer", "vec2");
    ReleaseGil nogil;
    return F::outer(ta, tb);
  });
  m.def("_trace", [](py::handle x) {
    Tensor t = as_tensor(x, "trace", "input");
    ReleaseGil nogil;
    return F::trace(t);
  });
  m.def("_cross", [](py::handle a, py::handle b, std::optional<int64_t> dim) {
    Tensor ta = as_tensor(a, "cross", "input"), tb = as_tensor(b, "cross", "other");
    ReleaseGil nogil;
    return F::cross(ta, tb, dim);
  });
  m.def(
      "searchsorted",
      [](py::handle seq, py::handle values, bool right, bool out_int32,
         std::optional<Tensor> sorter) {
        Tensor s = as_tensor(seq, "searchsorted", "sorted_sequence");
        Tensor v = as_tensor(values, "searchsorted", "input");
        ReleaseGil nogil;
        return F::searchsorted(s, v, right, out_int32, sorter.value_or(nullptr));
      },
      py::arg("sorted_sequence"), py::arg("input"), py::arg("right") = false,
      py::arg("out_int32") = false, py::arg("sorter") = py::none());
  m.def(
      "gather",
      [](py::handle x, int64_t dim, py::handle index, const std::string& target_of) {
        return F::gather(as_tensor(x, "gather", "input"), dim, as_tensor(index, "gather", "index"),
                         target_of);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::kw_only(),
      py::arg("_target_of") = "");
  m.def(
      "scatter",
      [](py::handle x, int64_t dim, py::handle index, py::handle src, std::string reduce) {
        Tensor self = as_tensor(x, "scatter", "input");
        Tensor idx = as_tensor(index, "scatter", "index");
        if (is_tensor(src)) return F::scatter(self, dim, idx, src.cast<Tensor>(), reduce);
        return F::scatter(self, dim, idx, scalar_from_py(src, "scatter"), reduce);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src"),
      py::arg("reduce") = "none");
  m.def(
      "cat",
      [](py::sequence tensors, int64_t dim) {
        TensorList xs;
        for (py::handle h : py::handle(tensors))  // iter(): see ints() in nn.cpp
          xs.push_back(as_tensor(h, "cat", "tensors"));
        ReleaseGil nogil;
        return F::cat(xs, dim);
      },
      py::arg("tensors"), py::arg("dim") = 0);
  // torch.stack: the tensors (of one shape) as slices of a new dim, one Cat with attrs "stack"
  // (its kernel inserts the dim in views of its own): a Python loop of unsqueezes and a cat cost
  // ~1.5 us a tensor (64 rows: 107 us, PyTorch 9).
  m.def(
      "_stack",
      [](py::sequence tensors, int64_t dim) {
        TensorList xs;
        for (py::handle h : py::handle(tensors)) xs.push_back(as_tensor(h, "stack", "tensors"));
        if (xs.empty()) throw_error<RuntimeError>("stack", "expected a non-empty list of Tensors");
        const Shape& shape = xs[0]->shape();
        for (size_t i = 1; i < xs.size(); ++i)
          if (xs[i]->shape() != shape)
            throw_error<RuntimeError>("stack", "expects each tensor to be equal size, but got ",
                                      shape_str(shape), " at entry 0 and ",
                                      shape_str(xs[i]->shape()), " at entry ", i);
        const int64_t nd = static_cast<int64_t>(shape.size()) + 1;
        if (dim < -nd || dim >= nd)
          throw_error<IndexError>("stack", "dim ", dim, " out of range [", -nd, ", ", nd - 1, "]");
        const int64_t d = dim < 0 ? dim + nd : dim;
        ReleaseGil nogil;
        bool local = true;
        bool complex = false;
        for (const Tensor& t : xs) {
          local = local && !t->global();
          complex = complex || is_complex(t->dtype());
        }
        // global tensors: the cat of unsqueezed views (its SBP rules); complex ones: cat's real
        // views
        if (!local || complex) {
          for (Tensor& t : xs) t = F::unsqueeze(t, d);
          return F::cat(xs, d);
        }
        const DType dt = F::result_type(xs);
        for (Tensor& t : xs) t = F::to(t, dt, std::nullopt);
        return dispatch1(prim::cat(), xs, Attrs{{"dim", d}, {"stack", true}});
      },
      py::arg("tensors"), py::arg("dim") = 0);
}

}  // namespace oneflow::python
