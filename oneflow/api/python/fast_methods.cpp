// Tensor arithmetic operators as method descriptors with the vectorcall convention: `x + 1`
// reaches functional::add without a Python frame, an argument tuple or dict, or pybind11's
// argument vectors. Calls these do not handle (keyword arguments, other operand types) go to
// the general binding of the same op in oneflow._C, unchanged. Every other oneflow._C function
// installed as a Tensor method is wrapped in a forwarding method descriptor (TensorMethod below)
// instead of a Python function: `x.abs()` calls _C.abs with x as its first argument, no frame.
#include <cstddef>

#include "oneflow/api/python/common.h"

namespace oneflow::python {

namespace F = functional;

namespace {

// The general binding for each fast method, called for whatever the fast path does not take.
// Strong references, never released (a static py::object would be released after the
// interpreter is gone).
PyObject* g_fallback[8];

// Sets the Python error for the active C++ exception (as the module's exception translator).
void set_active_python_error() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    if (!set_python_error(std::current_exception())) PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

// A Python int/float/bool as a Scalar, without conversions through pybind11.
bool plain_scalar(PyObject* o, Scalar* s) {
  if (PyFloat_CheckExact(o)) {
    *s = Scalar::from_double(PyFloat_AS_DOUBLE(o));
    return true;
  }
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    *s = Scalar::from_int(v);
    return true;
  }
  if (PyBool_Check(o)) {
    *s = Scalar::from_bool(o == Py_True);
    return true;
  }
  return false;
}

struct Add {
  static constexpr int kSlot = 0;
  static Tensor tt(const Tensor& x, const Tensor& y) { return F::add(x, y, Scalar::from_int(1)); }
  static Tensor ts(const Tensor& x, Scalar s) { return F::add(x, s, Scalar::from_int(1)); }
};
struct Sub {
  static constexpr int kSlot = 1;
  static Tensor tt(const Tensor& x, const Tensor& y) { return F::sub(x, y, Scalar::from_int(1)); }
  static Tensor ts(const Tensor& x, Scalar s) { return F::sub(x, s, Scalar::from_int(1)); }
};
struct Mul {
  static constexpr int kSlot = 2;
  static Tensor tt(const Tensor& x, const Tensor& y) { return F::mul(x, y); }
  static Tensor ts(const Tensor& x, Scalar s) { return F::mul(x, s); }
};
struct Div {
  static constexpr int kSlot = 3;
  static Tensor tt(const Tensor& x, const Tensor& y) { return F::div(x, y); }
  static Tensor ts(const Tensor& x, Scalar s) { return F::div(x, s); }
};
struct AddInPlace {
  static constexpr int kSlot = 4;
  static Tensor tt(const Tensor& x, const Tensor& y) { return F::add_(x, y, Scalar::from_int(1)); }
  static Tensor ts(const Tensor& x, Scalar s) { return F::add_(x, s, Scalar::from_int(1)); }
};
struct MulInPlace {
  static constexpr int kSlot = 5;
  static Tensor tt(const Tensor& x, const Tensor& y) { return F::mul_(x, y); }
  static Tensor ts(const Tensor& x, Scalar s) { return F::mul_(x, s); }
};

// self.op(other): the fast path for (Tensor, Tensor) and (Tensor, Python number).
template <typename Op>
PyObject* fast_binary(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  try {
    if (nargs == 1 && kwnames == nullptr && is_tensor(self)) {
      Tensor x = py::handle(self).cast<Tensor>();
      PyObject* other = args[0];
      Scalar s;
      Tensor out;
      if (is_tensor(other)) {
        Tensor y = py::handle(other).cast<Tensor>();
        ReleaseGil nogil;
        out = Op::tt(x, y);
      } else if (plain_scalar(other, &s)) {
        ReleaseGil nogil;
        out = Op::ts(x, s);
      }
      if (out) return py::cast(std::move(out)).release().ptr();
    }
    // Everything else: the general binding, with self prepended.
    const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
    std::vector<PyObject*> full(static_cast<size_t>(nargs + nkw + 1));
    full[0] = self;
    for (Py_ssize_t i = 0; i < nargs + nkw; ++i) full[static_cast<size_t>(i + 1)] = args[i];
    return PyObject_Vectorcall(g_fallback[Op::kSlot], full.data(), static_cast<size_t>(nargs + 1),
                               kwnames);
  } catch (...) {
    set_active_python_error();
    return nullptr;
  }
}

template <typename Op>
PyObject* method(const char* name, PyTypeObject* type) {
  // The descriptor keeps a pointer to its definition: one per name, alive for the process.
  auto* def = new PyMethodDef{};
  def->ml_name = name;
  def->ml_meth = reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_binary<Op>));
  def->ml_flags = METH_FASTCALL | METH_KEYWORDS;
  def->ml_doc = nullptr;
  return PyDescr_NewMethod(type, def);
}

// A method descriptor that calls `target` with the instance as the first argument. CPython's
// method-call path (Py_TPFLAGS_METHOD_DESCRIPTOR) hands it the instance already in front of the
// arguments, so the call forwards the same argument array: no tuple, no bound method object.
struct TensorMethod {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* target;
};

PyObject* tensor_method_call(PyObject* callable, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
  return PyObject_Vectorcall(reinterpret_cast<TensorMethod*>(callable)->target, args, nargsf,
                             kwnames);
}

// Tensor.abs is the descriptor itself; x.abs a bound method (as for a Python function).
PyObject* tensor_method_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

void tensor_method_dealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<TensorMethod*>(self)->target);
  Py_TYPE(self)->tp_free(self);
}

// __name__ and __doc__ are the target's; __qualname__ is Tensor.<name>.
PyObject* tensor_method_attr(PyObject* self, void* name) {
  return PyObject_GetAttrString(reinterpret_cast<TensorMethod*>(self)->target,
                                static_cast<const char*>(name));
}
PyObject* tensor_method_qualname(PyObject* self, void*) {
  PyObject* name =
      PyObject_GetAttrString(reinterpret_cast<TensorMethod*>(self)->target, "__name__");
  if (name == nullptr) return nullptr;
  PyObject* qualname = PyUnicode_FromFormat("Tensor.%U", name);
  Py_DECREF(name);
  return qualname;
}

PyGetSetDef g_tensor_method_getset[] = {
    {"__name__", tensor_method_attr, nullptr, nullptr, const_cast<char*>("__name__")},
    {"__qualname__", tensor_method_qualname, nullptr, nullptr, nullptr},
    {"__doc__", tensor_method_attr, nullptr, nullptr, const_cast<char*>("__doc__")},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// A static type whose instances are called through the vectorcall slot at `offset`; the
// caller sets its other slots and readies it.
PyTypeObject* new_vectorcall_type(const char* name, Py_ssize_t size, Py_ssize_t offset,
                                  unsigned long flags) {
  auto* t = new PyTypeObject();  // zeroed; PyType_Ready fills in the type's own type
  Py_SET_REFCNT(t, 1);
  t->tp_name = name;
  t->tp_basicsize = size;
  t->tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | flags;
  t->tp_vectorcall_offset = offset;
  t->tp_call = PyVectorcall_Call;
  return t;
}

PyTypeObject* tensor_method_type() {
  static PyTypeObject* type = [] {
    PyTypeObject* t =
        new_vectorcall_type("oneflow.tensor_method", sizeof(TensorMethod),
                            offsetof(TensorMethod, vectorcall), Py_TPFLAGS_METHOD_DESCRIPTOR);
    t->tp_descr_get = tensor_method_get;
    t->tp_dealloc = tensor_method_dealloc;
    t->tp_getset = g_tensor_method_getset;
    if (PyType_Ready(t) < 0) throw py::error_already_set();
    return t;
  }();
  return type;
}

// Note [out= arguments]: a oneflow function that PyTorch gives an `out=` keyword is wrapped in a
// FunctionWithOut. A call without `out` (or with out=None) forwards its argument array to the
// function unchanged; a call with one hands the function, the other arguments and `out` to a
// Python handler (oneflow/framework/out_arg.py), which computes the result, checks `out` as
// PyTorch does and writes the result into it. Only calls that pass `out` pay for it.
struct FunctionWithOut {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* target;
  PyObject* handler;   // handler(target, args, kwargs, out)
  PyObject* module;    // where the wrapper is installed ("oneflow", "oneflow.linalg", ...)
  PyObject* name;      // its name there
  PyObject* weakrefs;  // functions may be weakly referenced
};

PyObject* function_with_out_call(PyObject* callable, PyObject* const* args, size_t nargsf,
                                 PyObject* kwnames) {
  auto* self = reinterpret_cast<FunctionWithOut*>(callable);
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  Py_ssize_t at = -1;
  for (Py_ssize_t i = 0; i < nkw && at < 0; ++i)
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "out") == 0) at = i;
  if (at < 0) return PyObject_Vectorcall(self->target, args, nargsf, kwnames);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  try {
    py::tuple positional(nargs);
    for (Py_ssize_t i = 0; i < nargs; ++i)
      positional[static_cast<size_t>(i)] = py::reinterpret_borrow<py::object>(args[i]);
    py::dict keywords;
    for (Py_ssize_t i = 0; i < nkw; ++i)
      if (i != at)
        keywords[py::handle(PyTuple_GET_ITEM(kwnames, i))] =
            py::reinterpret_borrow<py::object>(args[nargs + i]);
    PyObject* out = args[nargs + at];
    if (out == Py_None) return PyObject_Call(self->target, positional.ptr(), keywords.ptr());
    return PyObject_CallFunctionObjArgs(self->handler, self->target, positional.ptr(),
                                        keywords.ptr(), out, nullptr);
  } catch (...) {
    set_active_python_error();
    return nullptr;
  }
}

void function_with_out_dealloc(PyObject* self) {
  auto* f = reinterpret_cast<FunctionWithOut*>(self);
  if (f->weakrefs != nullptr) PyObject_ClearWeakRefs(self);
  Py_XDECREF(f->target);
  Py_XDECREF(f->handler);
  Py_XDECREF(f->module);
  Py_XDECREF(f->name);
  Py_TYPE(self)->tp_free(self);
}

// __doc__ is the function's; __name__/__qualname__ and __module__ say where the wrapper is
// installed, so pickle and copy find it there by name (__reduce__); __wrapped__ is the function
// (inspect.signature follows it).
PyObject* function_with_out_doc(PyObject* self, void*) {
  return PyObject_GetAttrString(reinterpret_cast<FunctionWithOut*>(self)->target, "__doc__");
}
PyObject* function_with_out_name(PyObject* self, void*) {
  PyObject* name = reinterpret_cast<FunctionWithOut*>(self)->name;
  Py_INCREF(name);
  return name;
}
PyObject* function_with_out_module(PyObject* self, void*) {
  PyObject* module = reinterpret_cast<FunctionWithOut*>(self)->module;
  Py_INCREF(module);
  return module;
}
PyObject* function_with_out_wrapped(PyObject* self, void*) {
  PyObject* target = reinterpret_cast<FunctionWithOut*>(self)->target;
  Py_INCREF(target);
  return target;
}
PyObject* function_with_out_repr(PyObject* self) {
  return PyObject_Repr(reinterpret_cast<FunctionWithOut*>(self)->target);
}
PyObject* function_with_out_reduce(PyObject* self, PyObject*) {
  return function_with_out_name(self, nullptr);
}
// As a class attribute it stays a plain function (no bound method), as a builtin function;
// having __get__ also makes inspect.isroutine true.
PyObject* function_with_out_get(PyObject* self, PyObject*, PyObject*) {
  Py_INCREF(self);
  return self;
}

PyGetSetDef g_function_with_out_getset[] = {
    {"__name__", function_with_out_name, nullptr, nullptr, nullptr},
    {"__qualname__", function_with_out_name, nullptr, nullptr, nullptr},
    {"__module__", function_with_out_module, nullptr, nullptr, nullptr},
    {"__doc__", function_with_out_doc, nullptr, nullptr, nullptr},
    {"__wrapped__", function_with_out_wrapped, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef g_function_with_out_methods[] = {
    {"__reduce__", function_with_out_reduce, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};

PyTypeObject* function_with_out_type() {
  static PyTypeObject* type = [] {
    PyTypeObject* t = new_vectorcall_type("oneflow.function_with_out", sizeof(FunctionWithOut),
                                          offsetof(FunctionWithOut, vectorcall), 0);
    t->tp_dealloc = function_with_out_dealloc;
    t->tp_getset = g_function_with_out_getset;
    t->tp_methods = g_function_with_out_methods;
    t->tp_repr = function_with_out_repr;
    t->tp_descr_get = function_with_out_get;
    t->tp_weaklistoffset = offsetof(FunctionWithOut, weakrefs);
    if (PyType_Ready(t) < 0) throw py::error_already_set();
    return t;
  }();
  return type;
}

}  // namespace

void init_fast_methods(py::module_& m) {
  // A Tensor method calling `fn` (a oneflow._C function) with the tensor first.
  m.def("_tensor_method", [](py::object fn) {
    auto* self = PyObject_New(TensorMethod, tensor_method_type());
    if (self == nullptr) throw py::error_already_set();
    self->vectorcall = tensor_method_call;
    self->target = fn.release().ptr();
    return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(self));
  });
  // `fn` accepting `out=` (Note [out= arguments]); `handler(fn, args, kwargs, out)` serves it;
  // the wrapper is installed as `module`.`name`.
  m.def("_function_with_out", [](py::object fn, py::object handler, py::str module, py::str name) {
    auto* self = PyObject_New(FunctionWithOut, function_with_out_type());
    if (self == nullptr) throw py::error_already_set();
    self->vectorcall = function_with_out_call;
    self->target = fn.release().ptr();
    self->handler = handler.release().ptr();
    self->module = module.release().ptr();
    self->name = name.release().ptr();
    self->weakrefs = nullptr;
    return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(self));
  });
  // name -> method descriptor, installed on Tensor by oneflow/framework/tensor_methods.py.
  m.def("_fast_tensor_methods", [](py::module_ c) {
    auto* type = reinterpret_cast<PyTypeObject*>(py::type::of<TensorImpl>().ptr());
    g_fallback[Add::kSlot] = py::object(c.attr("add")).release().ptr();
    g_fallback[Sub::kSlot] = py::object(c.attr("sub")).release().ptr();
    g_fallback[Mul::kSlot] = py::object(c.attr("mul")).release().ptr();
    g_fallback[Div::kSlot] = py::object(c.attr("div")).release().ptr();
    g_fallback[AddInPlace::kSlot] = py::object(c.attr("add_")).release().ptr();
    g_fallback[MulInPlace::kSlot] = py::object(c.attr("mul_")).release().ptr();
    py::dict d;
    auto put = [&](const char* name, PyObject* descr) {
      if (descr == nullptr) throw py::error_already_set();
      d[name] = py::reinterpret_steal<py::object>(descr);
    };
    put("__add__", method<Add>("__add__", type));
    put("__radd__", method<Add>("__radd__", type));
    put("__sub__", method<Sub>("__sub__", type));
    put("__mul__", method<Mul>("__mul__", type));
    put("__rmul__", method<Mul>("__rmul__", type));
    put("__truediv__", method<Div>("__truediv__", type));
    put("__iadd__", method<AddInPlace>("__iadd__", type));
    put("__imul__", method<MulInPlace>("__imul__", type));
    put("add", method<Add>("add", type));
    put("sub", method<Sub>("sub", type));
    put("mul", method<Mul>("mul", type));
    put("div", method<Div>("div", type));
    put("add_", method<AddInPlace>("add_", type));
    put("mul_", method<MulInPlace>("mul_", type));
    return d;
  });
}

}  // namespace oneflow::python
