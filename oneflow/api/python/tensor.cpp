// Binding of oneflow.Tensor: metadata, autograd attributes and NumPy interop. Most methods
// (arithmetic, printing, reshaping) are attached in python/oneflow/_tensor.py on top of _C.
#include <cstring>

#include "oneflow/api/python/common.h"
#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/device/pinned_memory.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/graph/graph.h"

namespace oneflow::python {

namespace {

[[noreturn]] void throw_meta_values(const char* op) {
  throw_error<NotImplementedError>(op, "cannot be called on meta tensors: they have no values");
}

void check_may_require_grad(const TensorImpl& t) {
  if (!is_differentiable(t.dtype()))
    throw_error<RuntimeError>("requires_grad",
                              "only Tensors of floating point and complex dtype can require "
                              "gradients, got ",
                              dtype_name(t.dtype()));
  if (t.is_inference() && !inference_mode_enabled())
    throw_error<RuntimeError>("requires_grad",
                              "Setting requires_grad=True on inference tensor outside "
                              "InferenceMode is not allowed.");
}

const char* numpy_format(DType dt) {
  switch (dt) {
    case DType::kBool:
      return "?";
    case DType::kUInt8:
      return "B";
    case DType::kInt8:
      return "b";
    case DType::kInt16:
      return "h";
    case DType::kInt32:
      return "i";
    case DType::kInt64:
      return "q";
    case DType::kFloat16:
      return "e";
    case DType::kFloat32:
      return "f";
    case DType::kFloat64:
      return "d";
    case DType::kComplex64:
      return "F";
    case DType::kComplex128:
      return "D";
    case DType::kBFloat16:
      break;
  }
  throw_error<TypeError>("numpy", "got unsupported dtype ", dtype_name(dt),
                         " (NumPy has no bfloat16; convert with .float() first)");
}

DType dtype_from_numpy(const py::dtype& d) {
  const char kind = d.kind();
  const size_t size = d.itemsize();
  if (kind == 'b') return DType::kBool;
  if (kind == 'u' && size == 1) return DType::kUInt8;
  if (kind == 'i') {
    if (size == 1) return DType::kInt8;
    if (size == 2) return DType::kInt16;
    if (size == 4) return DType::kInt32;
    if (size == 8) return DType::kInt64;
  }
  if (kind == 'f') {
    if (size == 2) return DType::kFloat16;
    if (size == 4) return DType::kFloat32;
    if (size == 8) return DType::kFloat64;
  }
  if (kind == 'c') {
    if (size == 8) return DType::kComplex64;
    if (size == 16) return DType::kComplex128;
  }
  throw_error<TypeError>("from_numpy", "can't convert np.ndarray of type ", std::string(py::str(d)),
                         ". The only supported types are: float64, float32, float16, complex64, "
                         "complex128, int64, int32, int16, int8, uint8, and bool.");
}

// A NumPy array viewing a CPU tensor's memory (the array keeps the tensor's storage alive), or
// with `copy` an array of its own (reading values: item(), tolist(), printing).
py::array numpy_view(const Tensor& t, bool copy = false) {
  graph::check_not_tracing(
      "reading a tensor's values on the host (numpy, item, tolist, bool, print)");
  const size_t isz = itemsize(t->dtype());
  std::vector<py::ssize_t> shape(t->shape().begin(), t->shape().end()), strides;
  for (int64_t s : t->strides()) strides.push_back(static_cast<py::ssize_t>(s * isz));
  // complex: by NumPy's name (the one-letter codes go through PEP 3118 parsing here)
  py::dtype dt = is_complex(t->dtype()) ? py::dtype::from_args(py::str(dtype_name(t->dtype())))
                                        : py::dtype(numpy_format(t->dtype()));
  if (copy) return py::array(dt, shape, strides, t->data());  // no base: pybind11 copies
  t->storage()->set_shared_outside();  // NumPy reads and writes it without synchronising
  auto* keep = new std::shared_ptr<Storage>(t->storage());
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  return py::array(dt, shape, strides, t->data(), owner);
}

Tensor from_numpy(py::array arr) {
  DType dt = dtype_from_numpy(arr.dtype());
  // '>' on this little-endian host: the bytes would be read as garbage
  if (arr.dtype().byteorder() == '>')
    throw_error<ValueError>("from_numpy",
                            "given numpy array has byte order different from the native byte "
                            "order. Conversion between byte orders is currently not supported.");
  const size_t isz = itemsize(dt);
  Shape shape;
  Strides strides;
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
    shape.push_back(arr.shape(i));
    if (arr.strides(i) < 0)
      throw_error<ValueError>("from_numpy",
                              "at least one stride in the given numpy array is "
                              "negative, and tensors with negative strides are not currently "
                              "supported. (You can probably work around this by making a copy "
                              "of your array with array.copy().)");
    if (arr.strides(i) % static_cast<py::ssize_t>(isz) != 0)
      throw_error<ValueError>("from_numpy",
                              "given numpy array strides not a multiple of the "
                              "element byte size. Copy the numpy array to reallocate the memory.");
    strides.push_back(arr.strides(i) / static_cast<py::ssize_t>(isz));
  }
  if (!arr.writeable())
    PyErr_WarnEx(PyExc_UserWarning,
                 "The given NumPy array is not writable; writing to the "
                 "tensor is undefined behavior.",
                 1);
  // The storage spans the bytes the view can reach; it holds a reference to the array.
  int64_t span = 1;
  for (size_t i = 0; i < shape.size(); ++i) span += (shape[i] - 1) * strides[i];
  if (numel(shape) == 0) span = 0;
  auto* ref = new py::object(arr);
  auto storage = std::make_shared<Storage>(Device{}, const_cast<void*>(arr.data()),
                                           static_cast<size_t>(span) * isz, [ref] {
                                             py::gil_scoped_acquire gil;
                                             delete ref;
                                           });
  TensorMeta meta{shape, strides, 0, dt, Device{}};
  return std::make_shared<TensorImpl>(meta, storage, std::make_shared<VersionCounter>());
}

py::tuple to_tuple(const std::vector<int64_t>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = v[i];
  return t;
}

// oneflow.Size is a Python subclass (framework/size.py) of _SizeBase, a tuple whose slices are
// of the subclass again; indexing by an integer is tuple's own C slot, and Tensor.shape builds
// the subclass straight from the shape here (no Python code runs for `x.shape[0]`).
PyTypeObject* g_size_type = nullptr;  // set once by _set_size_type; kept alive

// A new instance of `type` (a tuple subclass) holding the items of tuple t.
PyObject* tuple_of_type(PyTypeObject* type, PyObject* t) {
  const Py_ssize_t n = PyTuple_GET_SIZE(t);
  PyObject* o = type->tp_alloc(type, n);
  if (o == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(t, i);
    Py_INCREF(item);
    PyTuple_SET_ITEM(o, i, item);
  }
  return o;
}

PyObject* size_subscript(PyObject* self, PyObject* key) {
  PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
  if (r == nullptr || !PySlice_Check(key)) return r;
  PyObject* out = tuple_of_type(Py_TYPE(self), r);
  Py_DECREF(r);
  return out;
}

py::object make_size_base() {
  static PyType_Slot slots[] = {{Py_mp_subscript, reinterpret_cast<void*>(size_subscript)},
                                {0, nullptr}};
  static PyType_Spec spec = {"oneflow._oneflow_internal._SizeBase", 0, 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  py::tuple bases = py::make_tuple(
      py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyTuple_Type)));
  PyObject* type = PyType_FromSpecWithBases(&spec, bases.ptr());
  if (type == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(type);
}

// The shape as a oneflow.Size (a plain tuple before framework/size.py has registered it).
py::object to_size(const Shape& shape) {
  if (g_size_type == nullptr) return to_tuple(shape);
  const Py_ssize_t n = static_cast<Py_ssize_t>(shape.size());
  PyObject* o = g_size_type->tp_alloc(g_size_type, n);
  if (o == nullptr) throw py::error_already_set();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(shape[i]);
    if (v == nullptr) {
      Py_DECREF(o);
      throw py::error_already_set();
    }
    PyTuple_SET_ITEM(o, i, v);
  }
  return py::reinterpret_steal<py::object>(o);
}

}  // namespace

void init_tensor(py::module_& m) {
  m.attr("_SizeBase") = make_size_base();
  m.def("_set_size_type", [](py::object type) {
    if (!PyType_Check(type.ptr()) ||
        !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type.ptr()), &PyTuple_Type))
      throw_error<TypeError>("_set_size_type", "expected a subclass of tuple");
    type.inc_ref();  // kept for the life of the process
    g_size_type = reinterpret_cast<PyTypeObject*>(type.ptr());
  });
  py::class_<Node, std::shared_ptr<Node>>(m, "FunctionNode")
      .def("name", &Node::name)
      .def("__repr__", [](const Node& n) { return "<" + n.name() + ">"; })
      .def_property_readonly("next_functions", [](const Node& n) {
        py::list l;
        for (const Edge& e : n.next_edges)
          l.append(py::make_tuple(e.node ? py::cast(e.node) : py::none(), e.input_nr));
        return py::tuple(l);
      });

  py::class_<TensorImpl, std::shared_ptr<TensorImpl>>(m, "Tensor", py::dynamic_attr())
      // Tensor(other, requires_grad=False): a leaf sharing other's storage (what nn.Parameter
      // builds on); Tensor(*sizes): an uninitialised tensor of the default dtype; Tensor(data):
      // a copy of a sequence or array in the default dtype.
      .def(py::init([](py::args args, py::kwargs kwargs) {
        bool requires_grad = false;
        if (kwargs.contains("requires_grad")) requires_grad = kwargs["requires_grad"].cast<bool>();
        Tensor t;
        py::module_ flow = py::module_::import("oneflow");
        const bool one_size = args.size() == 1 && py::isinstance(args[0], flow.attr("Size"));
        if (one_size || py::len(kwargs) > (kwargs.contains("requires_grad") ? 1u : 0u)) {
          // dtype, device, placement and sbp (OneFlow's keywords), or a Size of sizes
          py::dict rest;
          for (auto item : kwargs)
            if (item.first.cast<std::string>() != "requires_grad") rest[item.first] = item.second;
          t = py::module_::import("oneflow.framework.torch_compat")
                  .attr("legacy_construct")(*args, **rest)
                  .cast<Tensor>();
        } else if (args.size() == 1 && is_tensor(args[0])) {
          t = alias_detached(args[0].cast<Tensor>());
        } else {
          bool sizes = true;
          for (py::handle a : args) sizes = sizes && py::isinstance<py::int_>(a);
          py::object made;
          if (args.size() == 0)  // an empty 1-D tensor, as PyTorch (accumulate-with-cat idiom)
            made = flow.attr("empty")(0);
          else if (sizes)
            made = flow.attr("empty")(*args);
          else
            made =
                flow.attr("tensor")(args[0], py::arg("dtype") = flow.attr("get_default_dtype")());
          t = alias_detached(made.cast<Tensor>());
        }
        if (requires_grad) {
          check_may_require_grad(*t);
          t->autograd().requires_grad = true;
        }
        return t;
      }))
      .def_property_readonly("_shape", [](const TensorImpl& t) { return to_tuple(t.shape()); })
      .def_property_readonly("shape", [](const TensorImpl& t) { return to_size(t.shape()); })
      .def(
          "stride",
          [](const TensorImpl& t, py::object dim) -> py::object {
            if (dim.is_none()) return to_tuple(t.strides());
            const int64_t d = dim.cast<int64_t>();
            if (t.ndim() == 0)  // wrap_dim accepts 0 and -1 for a 0-dim tensor; it has no stride
              throw_error<IndexError>("stride", "dimension specified as ", d,
                                      " but tensor has no dimensions");
            return py::int_(t.strides()[wrap_dim("stride", d, t.ndim())]);
          },
          py::arg("dim") = py::none())
      .def_property_readonly("dtype", [](const TensorImpl& t) { return dtype_to_py(t.dtype()); })
      .def_property_readonly("device", [](const TensorImpl& t) { return device_to_py(t.device()); })
      .def_property_readonly(
          "is_cuda", [](const TensorImpl& t) { return t.device().type == DeviceType::kCUDA; })
      .def_property_readonly(
          "is_meta", [](const TensorImpl& t) { return t.device().type == DeviceType::kMeta; })
      .def_property_readonly("ndim", &TensorImpl::ndim)
      .def("dim", &TensorImpl::ndim)
      .def("numel", &TensorImpl::numel)
      .def("nelement", &TensorImpl::numel)
      .def("element_size", [](const TensorImpl& t) { return itemsize(t.dtype()); })
      .def("storage_offset", &TensorImpl::offset)
      .def("is_contiguous", &TensorImpl::is_contiguous)
      .def("data_ptr",
           [](const TensorImpl& t) -> uintptr_t {
             if (t.device().type == DeviceType::kMeta) return 0;  // no memory, as PyTorch
             t.storage()->set_shared_outside();  // the address may be used outside oneflow
             return reinterpret_cast<uintptr_t>(t.data());
           })
      // The identity of the tensor's storage (the same for all its views) while it lives; it
      // neither waits for queued work nor lends the memory out (oneflow/multiprocessing).
      .def("_storage_id",
           [](const TensorImpl& t) { return reinterpret_cast<uintptr_t>(t.storage().get()); })
      // (address, byte count) of the whole storage (Tensor.untyped_storage()); as data_ptr, the
      // address may be used outside oneflow.
      .def("_storage_span",
           [](const TensorImpl& t) {
             t.storage()->set_shared_outside();
             return py::make_tuple(reinterpret_cast<uintptr_t>(t.storage()->data()),
                                   t.storage()->nbytes());
           })
      .def_property_readonly("is_global",
                             [](const TensorImpl& t) { return t.kind() == TensorKind::kGlobal; })
      .def_property_readonly("is_local",
                             [](const TensorImpl& t) { return t.kind() == TensorKind::kLocal; })
      .def_property_readonly("is_lazy",
                             [](const TensorImpl& t) { return t.kind() == TensorKind::kLazy; })
      .def_property_readonly("_version",
                             [](const TensorImpl& t) {
                               if (t.is_inference())
                                 throw_error<RuntimeError>(
                                     "_version", "Inference tensors do not track version counter.");
                               return t.version();
                             })
      .def("is_inference", &TensorImpl::is_inference)
      // ---- autograd ----
      .def_property("requires_grad", &TensorImpl::requires_grad,
                    [](TensorImpl& t, bool v) {
                      if (!t.is_leaf() && !v)
                        throw_error<RuntimeError>("requires_grad",
                                                  "you can only change "
                                                  "requires_grad flags of leaf variables. If you "
                                                  "want to use a computed variable in a subgraph "
                                                  "that doesn't require differentiation use "
                                                  "var_no_grad = var.detach().");
                      if (v) check_may_require_grad(t);
                      t.autograd().requires_grad = v;
                    })
      .def(
          "_register_hook",
          [](const Tensor& t, py::function fn) {
            // The Python callable is owned through a shared_ptr whose deleter takes the GIL, so
            // the graph may drop it on any thread.
            auto owned =
                std::shared_ptr<py::function>(new py::function(std::move(fn)), [](py::function* f) {
                  py::gil_scoped_acquire gil;
                  delete f;
                });
            return register_grad_hook(t, [owned](const Tensor& g) -> Tensor {
              py::gil_scoped_acquire gil;
              py::object r = (*owned)(g);
              if (r.is_none()) return nullptr;
              if (!is_tensor(r))
                throw_error<TypeError>("register_hook", "a hook must return None or a Tensor");
              return r.cast<Tensor>();
            });
          },
          py::arg("hook"))
      .def("_remove_hook", [](const Tensor& t, int64_t id) { remove_grad_hook(t, id); })
      .def_property_readonly("is_leaf", &TensorImpl::is_leaf)
      .def_property_readonly("grad_fn", [](const TensorImpl& t) { return t.autograd().grad_fn; })
      // Which output of its grad_fn the tensor is (0 for leaves), as PyTorch's output_nr.
      .def_property_readonly(
          "output_nr",
          [](const TensorImpl& t) { return t.autograd().grad_fn ? t.autograd().output_nr : 0; })
      // detach_(): the tensor itself becomes a leaf that does not require grad (its history is
      // dropped; tensors computed from it keep theirs). Views are refused, as in PyTorch: their
      // history is their base's.
      .def("detach_",
           [](const Tensor& t) {
             if (t->is_view())
               throw_error<RuntimeError>("detach_",
                                         "Can't detach views in-place. Use detach() instead.");
             AutogradMeta& meta = t->autograd();
             meta.grad_fn = nullptr;
             meta.output_nr = 0;
             meta.requires_grad = false;
             return t;
           })
      .def_property(
          "grad", [](const TensorImpl& t) { return t.autograd().grad; },
          [](TensorImpl& t, std::shared_ptr<TensorImpl> g) {
            if (g && (g->global() == nullptr) != (t.global() == nullptr))
              throw_error<RuntimeError>("grad", "assigned grad is a ",
                                        g->global() ? "global" : "local", " tensor but the ",
                                        "tensor is ", t.global() ? "global" : "local");
            if (g && !g->global() && g->device() != t.device())
              throw_error<RuntimeError>("grad", "assigned grad has data located on a different ",
                                        "device: ", g->device().str(), " vs ", t.device().str());
            if (g && g->shape() != t.shape())
              throw_error<RuntimeError>("grad", "assigned grad has data of a different size: ",
                                        shape_str(g->shape()), " vs ", shape_str(t.shape()));
            if (g && g->dtype() != t.dtype())
              throw_error<RuntimeError>("grad", "assigned grad has data of a different type: ",
                                        dtype_name(g->dtype()), " vs ", dtype_name(t.dtype()));
            t.autograd().grad = std::move(g);
          })
      // PyTorch's .data: the same memory, detached, with a version counter of its own (in-place
      // changes through it are not seen by autograd's checks).
      .def_property(
          "data",
          [](const std::shared_ptr<TensorImpl>& t) {
            auto version = std::make_shared<VersionCounter>();
            auto d = std::make_shared<TensorImpl>(t->meta(), t->storage(), version);
            if (t->global()) {  // the shard's alias with the same version counter
              auto g = std::make_shared<GlobalMeta>(*t->global());
              g->local =
                  std::make_shared<TensorImpl>(g->local->meta(), g->local->storage(), version);
              d->set_global(std::move(g));
            }
            return d;
          },
          [](const std::shared_ptr<TensorImpl>& self, std::shared_ptr<TensorImpl> d) {
            TensorImpl& t = *self;
            if (!d) throw_error<TypeError>("data", "expected a Tensor, got None");
            if (t.requires_grad() && !is_differentiable(d->dtype()))
              throw_error<RuntimeError>("data",
                                        "a tensor that requires grad takes only "
                                        "floating point data, got ",
                                        dtype_name(d->dtype()));
            graph::record_rebind(self, d);
            eager::wait_for(
                *t.storage());  // queued kernels read this tensor's layout when they run
            t.set_data(*d);
          })
      // The in-place view ops (squeeze_, unsqueeze_, as_strided_): this tensor takes the layout
      // and the autograd history of `view`, a view of its own storage.
      .def("_take_view",
           [](const std::shared_ptr<TensorImpl>& self, const std::shared_ptr<TensorImpl>& view) {
             TensorImpl& t = *self;
             if (view->storage() != t.storage())
               throw_error<RuntimeError>("_take_view", "expected a view of the tensor's storage");
             graph::record_rebind(self, view);
             eager::wait_for(*t.storage());  // queued kernels read the layout when they run
             const bool was_view = t.is_view();
             std::shared_ptr<TensorImpl> base = t.view_base();
             t.set_data(*view);
             t.set_is_view(was_view);
             t.set_view_base(std::move(base));
             if (view->autograd().grad_fn) {
               t.autograd().grad_fn = view->autograd().grad_fn;
               t.autograd().output_nr = view->autograd().output_nr;
             }
           })
      // pin_memory(): a copy in page-locked host memory (device/pinned_memory.h).
      .def("_pin_memory",
           [](const Tensor& t) {
             graph::check_not_tracing("pin_memory");
             ReleaseGil nogil;
             return pin_memory(t);
           })
      .def("_is_pinned",
           [](const Tensor& t) {
             ReleaseGil nogil;
             return is_pinned(t);
           })
      // resize_(*sizes): the storage read contiguously from the tensor's offset with the new
      // shape, grown (its bytes kept) when too small, as PyTorch; other views of the old storage
      // keep it. Not for tensors that require grad.
      .def("_resize",
           [](TensorImpl& t, const std::vector<int64_t>& sizes) {
             graph::check_not_tracing("resize_");
             if (t.requires_grad())
               throw_error<RuntimeError>("resize_", "cannot resize variables that require grad");
             for (int64_t s : sizes)
               if (s < 0)
                 throw_error<RuntimeError>("resize_",
                                           "Trying to create tensor with negative "
                                           "dimension ",
                                           s, ": ", shape_str(sizes));
             const Shape shape(sizes.begin(), sizes.end());
             if (shape == t.shape()) return;  // the same size keeps the layout, as PyTorch
             int64_t elems = 1, bytes = 0;
             bool overflow = false;
             for (int64_t d : shape)
               overflow = overflow || __builtin_mul_overflow(elems, d, &elems);
             if (overflow || __builtin_add_overflow(elems, t.offset(), &elems) ||
                 __builtin_mul_overflow(elems, static_cast<int64_t>(itemsize(t.dtype())), &bytes))
               throw_error<RuntimeError>(
                   "resize_", "Storage size calculation overflowed with sizes=", shape_str(shape));
             const size_t need = static_cast<size_t>(bytes);
             eager::wait_for(*t.storage());  // queued kernels read the layout when they run
             std::shared_ptr<Storage> storage = t.storage();
             if (need > storage->nbytes() && t.device().type == DeviceType::kMeta) {
               storage = std::make_shared<Storage>(t.device(), need);  // no memory to keep
             } else if (need > storage->nbytes()) {
               if (t.device().type != DeviceType::kCPU)
                 throw_error<NotImplementedError>("resize_", "growing a ", t.device().str(),
                                                  " tensor's storage");
               auto grown = std::make_shared<Storage>(t.device(), need);
               // An empty storage may have no memory at all (memcpy's pointers must not be
               // null, even for no bytes).
               if (storage->nbytes() > 0)
                 std::memcpy(grown->data(), storage->data(), storage->nbytes());
               std::memset(static_cast<char*>(grown->data()) + storage->nbytes(), 0,
                           need - storage->nbytes());
               storage = std::move(grown);
             }
             TensorImpl resized(
                 TensorMeta{shape, contiguous_strides(shape), t.offset(), t.dtype(), t.device()},
                 std::move(storage), t.version_counter());
             t.set_data(resized);
           })
      .def("retain_grad",
           [](std::shared_ptr<TensorImpl> t) {
             if (!t->requires_grad())
               throw_error<RuntimeError>("retain_grad",
                                         "can't retain_grad on Tensor that has "
                                         "requires_grad=False");
             AutogradMeta& am = t->autograd();
             if (!am.grad_fn) return;
             am.retains_grad = true;
             am.grad_fn->retained.resize(am.grad_fn->output_metas.size());
             am.grad_fn->retained[am.output_nr] = t;
           })
      .def_property_readonly("retains_grad",
                             [](const TensorImpl& t) { return t.autograd().retains_grad; })
      // ---- NumPy ----
      .def("numpy",
           [](std::shared_ptr<TensorImpl> t) {
             if (t->device().type == DeviceType::kMeta) throw_meta_values("numpy");
             if (t->device().type != DeviceType::kCPU)
               t = functional::to(t, std::nullopt, Device{});
             return numpy_view(t);
           })
      .def("_numpy_copy", [](std::shared_ptr<TensorImpl> t) {
        if (t->device().type == DeviceType::kMeta) throw_meta_values("numpy");
        if (t->device().type != DeviceType::kCPU) t = functional::to(t, std::nullopt, Device{});
        return numpy_view(t, true);
      });

  m.def("from_numpy", [](py::object obj) {
    if (!py::isinstance<py::array>(obj))
      throw_error<TypeError>("from_numpy", "expected np.ndarray (got ",
                             std::string(py::str(py::type::of(obj).attr("__name__"))), ")");
    return from_numpy(obj.cast<py::array>());
  });
  // A copy of a C-contiguous array in a fresh tensor, made here: flow.tensor(array). Unlike a
  // copy kernel reading the array's memory (an op on memory NumPy may touch runs to completion,
  // after the queued work), it waits for nothing queued.
  m.def("_copy_from_numpy", [](const py::array& arr) {
    if (!(arr.flags() & py::array::c_style))
      throw_error<ValueError>("_copy_from_numpy", "expected a C-contiguous array");
    Tensor view = from_numpy(arr);
    Tensor t = empty_tensor(view->shape(), view->dtype(), Device{});
    if (t->numel() > 0)
      std::memcpy(t->data(), arr.data(), static_cast<size_t>(t->numel()) * itemsize(t->dtype()));
    return t;
  });
}

}  // namespace oneflow::python
