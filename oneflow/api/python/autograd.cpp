// Bindings of the autograd engine and of the mode switches (grad mode, lazy mode).
#include "oneflow/core/autograd/autograd.h"
#include "oneflow/api/python/common.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"

namespace oneflow::python {

namespace {

TensorList tensor_list(py::handle h, const char* op) {
  TensorList out;
  if (h.is_none()) return out;
  if (is_tensor(h)) return {h.cast<Tensor>()};
  for (py::handle v : h) out.push_back(v.is_none() ? nullptr : v.cast<Tensor>());
  return out;
}

// The backward of a Python autograd.Function: calls `backward(ctx, *grads)` with the GIL held.
class PyFunctionNode final : public Node {
 public:
  PyFunctionNode(py::object backward, std::string name)
      : backward_(new py::object(std::move(backward)),
                  [](py::object* o) {
                    py::gil_scoped_acquire gil;
                    delete o;
                  }),
        name_(std::move(name)) {}

  TensorList apply(TensorList&& out_grads) override {
    for (size_t i = 0; i < out_grads.size(); ++i)
      if (!out_grads[i]) {
        const TensorMeta& m = output_metas[i];
        out_grads[i] = functional::zeros(m.shape, CreationOptions{m.dtype, m.device, ""});
      }
    py::gil_scoped_acquire gil;
    py::tuple args(out_grads.size());
    for (size_t i = 0; i < out_grads.size(); ++i) args[i] = py::cast(out_grads[i]);
    py::object r = (*backward_)(*args);
    TensorList grads;
    if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
      for (py::handle h : r) grads.push_back(h.is_none() ? nullptr : h.cast<Tensor>());
    } else {
      grads.push_back(r.is_none() ? nullptr : r.cast<Tensor>());
    }
    if (grads.size() != next_edges.size())
      throw_error<RuntimeError>(name_.c_str(),
                                "function backward returned an incorrect number "
                                "of gradients (expected ",
                                next_edges.size(), ", got ", grads.size(), ")");
    for (size_t i = 0; i < grads.size(); ++i)
      if (grads[i] && next_edges[i].node && grads[i]->shape() != input_shapes_[i])
        throw_error<RuntimeError>(name_.c_str(), "function backward returned a gradient of shape ",
                                  shape_str(grads[i]->shape()), " for an input of shape ",
                                  shape_str(input_shapes_[i]));
    return grads;
  }
  std::string name() const override { return name_; }
  void release_saved() override {}

  std::vector<Shape> input_shapes_;

 private:
  std::shared_ptr<py::object> backward_;
  std::string name_;
};

}  // namespace

namespace {

// What a Python pack hook returned for one saved tensor, and the unpack hook that turns it back
// into a tensor (Note [Saved tensor hooks]). Nodes die on any thread: the references are
// dropped with the GIL held.
class PyPackedTensor final : public PackedTensor {
 public:
  PyPackedTensor(py::object value, std::shared_ptr<py::object> unpack)
      : value_(new py::object(std::move(value)), drop), unpack_(std::move(unpack)) {}

  Tensor unpack() const override {
    py::gil_scoped_acquire gil;
    py::object r = (*unpack_)(*value_);
    if (!is_tensor(r))
      throw_error<TypeError>("saved_tensors_hooks", "the unpack hook must return a Tensor, got ",
                             std::string(py::str(py::type::of(r).attr("__name__"))));
    return r.cast<Tensor>();
  }

  static void drop(py::object* o) {
    if (!Py_IsInitialized()) {  // at exit: leak rather than touch a finalized interpreter
      o->release();
      delete o;
      return;
    }
    py::gil_scoped_acquire gil;
    delete o;
  }

 private:
  std::shared_ptr<py::object> value_;
  std::shared_ptr<py::object> unpack_;
};

void push_python_pack_hook(py::object pack, py::object unpack) {
  if (!PyCallable_Check(pack.ptr()) || !PyCallable_Check(unpack.ptr()))
    throw_error<TypeError>("saved_tensors_hooks", "expected callable pack and unpack hooks");
  auto p = std::shared_ptr<py::object>(new py::object(std::move(pack)), PyPackedTensor::drop);
  auto u = std::shared_ptr<py::object>(new py::object(std::move(unpack)), PyPackedTensor::drop);
  push_pack_hook([p, u](const Tensor& t) -> std::shared_ptr<PackedTensor> {
    py::gil_scoped_acquire gil;
    return std::make_shared<PyPackedTensor>((*p)(py::cast(t)), u);
  });
}

}  // namespace

void init_autograd(py::module_& m) {
  py::module_ ag = m.def_submodule("autograd", "autograd engine");
  ag.def("_push_saved_tensors_hooks", &push_python_pack_hook);
  ag.def("_pop_saved_tensors_hooks", &pop_pack_hook);
  ag.def("_is_checkpoint_valid", &checkpoint_valid);
  ag.def(
      "backward",
      [](py::handle outputs, py::handle grads, bool retain_graph, bool create_graph) {
        TensorList outs = tensor_list(outputs, "backward"), gs = tensor_list(grads, "backward");
        ReleaseGil nogil;
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
          ReleaseGil nogil;
          res = run_backward(outs, gs, retain_graph, create_graph, ins, allow_unused);
        }
        py::tuple t(res.size());
        for (size_t i = 0; i < res.size(); ++i) t[i] = res[i] ? py::cast(res[i]) : py::none();
        return t;
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs"), py::arg("retain_graph"),
      py::arg("create_graph"), py::arg("allow_unused"));
  // Connects the outputs of a Python autograd.Function to its inputs: returns aliases of the
  // differentiable outputs whose grad_fn calls `backward(*grads)`.
  ag.def(
      "_attach_function",
      [](py::object backward, const std::string& name, py::handle inputs, py::handle outputs,
         std::vector<bool> differentiable) {
        TensorList ins = tensor_list(inputs, "autograd.Function");
        TensorList outs = tensor_list(outputs, "autograd.Function");
        auto node = std::make_shared<PyFunctionNode>(std::move(backward), name);
        node->sequence_nr = next_sequence_nr();
        for (const Tensor& t : ins) {
          node->next_edges.push_back(t ? gradient_edge(t) : Edge{});
          node->input_shapes_.push_back(t ? t->shape() : Shape{});
        }
        py::list result;
        for (size_t i = 0; i < outs.size(); ++i) {
          Tensor out = alias_detached(outs[i]);
          node->output_metas.push_back(out->meta());
          node->retained.emplace_back();
          if (differentiable[i] && is_differentiable(out->dtype())) {
            AutogradMeta& am = out->autograd();
            am.requires_grad = true;
            am.grad_fn = node;
            am.output_nr = static_cast<int>(i);
          }
          result.append(out);
        }
        return result;
      },
      py::arg("backward"), py::arg("name"), py::arg("inputs"), py::arg("outputs"),
      py::arg("differentiable"));
  ag.def("is_grad_enabled", &grad_mode_enabled);
  ag.def("set_grad_enabled", &set_grad_mode);
  ag.def("is_inference_mode_enabled", &inference_mode_enabled);
  ag.def("set_inference_mode", &set_inference_mode);

  m.def("is_lazy_mode", &lazy_mode_enabled);
  // Returns the previous state; used by oneflow.nn.Graph's tracing context.
  m.def("_set_lazy_mode", [](bool enabled) {
    bool prev = lazy_mode_enabled();
    set_lazy_mode(enabled);
    return prev;
  });
}

}  // namespace oneflow::python
