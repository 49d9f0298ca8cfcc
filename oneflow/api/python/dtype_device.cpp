// Bindings of flow.dtype and flow.device, and the Python <-> core conversions in common.h.
#include <array>

#include "oneflow/api/python/common.h"
#include "oneflow/core/device/caching_allocator.h"
#include "oneflow/core/device/cuda_device.h"
#include "oneflow/core/eager/engine.h"

namespace oneflow::python {

namespace {

struct PyDType {
  DType dt;
};

std::array<py::object, kNumDTypes>& dtype_objects() {
  static auto* objs = new std::array<py::object, kNumDTypes>();
  return *objs;
}

}  // namespace

py::object dtype_to_py(DType dt) { return dtype_objects()[static_cast<int>(dt)]; }

DType dtype_from_py(py::handle h, const char* op) {
  if (py::isinstance<PyDType>(h)) return h.cast<PyDType&>().dt;
  throw_error<TypeError>(op, "expected a oneflow.dtype, got ",
                         std::string(py::str(py::type::of(h).attr("__name__"))));
}

std::optional<DType> optional_dtype(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return dtype_from_py(h, op);
}

py::object device_to_py(Device d) { return py::cast(d); }

Device device_from_py(py::handle h, const char* op) {
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  if (py::isinstance<py::str>(h)) return Device::parse(h.cast<std::string>());
  if (py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h))
    return Device{DeviceType::kCUDA, h.cast<int>()};
  throw_error<TypeError>(op, "expected a oneflow.device or a device string, got ",
                         std::string(py::str(py::type::of(h).attr("__name__"))));
}

std::optional<Device> optional_device(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return device_from_py(h, op);
}

bool is_tensor(py::handle h) { return py::isinstance<TensorImpl>(h); }

bool is_scalar(py::handle h) {
  if (PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr())) return true;
  static py::handle np_generic = py::object(py::module_::import("numpy").attr("generic")).release();
  return py::isinstance(h, np_generic);
}

Scalar scalar_from_py(py::handle h, const char* op) {
  if (PyBool_Check(h.ptr())) return Scalar::from_bool(h.ptr() == Py_True);
  if (PyLong_Check(h.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow) {  // OverflowError, as PyTorch
      PyErr_SetString(PyExc_OverflowError, "int too big to convert");
      throw py::error_already_set();
    }
    return Scalar::from_int(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(h.ptr())) return Scalar::from_double(h.cast<double>());
  // NumPy scalars and anything else with item()
  if (py::hasattr(h, "item")) {
    py::object v = h.attr("item")();
    if (PyBool_Check(v.ptr()) || PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr()))
      return scalar_from_py(v, op);
  }
  throw_error<TypeError>(op, "expected a Tensor or a Python number, got ",
                         std::string(py::str(py::type::of(h).attr("__name__"))));
}

Shape shape_from_sequence(py::handle h, const char* op) {
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h))
    throw_error<TypeError>(op, "expected a sequence of ints for the size, got ",
                           std::string(py::str(py::type::of(h).attr("__name__"))));
  Shape s;
  for (py::handle v : h) {
    if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr())) {
      if (py::hasattr(v, "__index__") && !PyBool_Check(v.ptr())) {
        s.push_back(v.attr("__index__")().cast<int64_t>());
        continue;
      }
      throw_error<TypeError>(op, "expected ints in the size, got ",
                             std::string(py::str(py::type::of(v).attr("__name__"))));
    }
    s.push_back(v.cast<int64_t>());
  }
  return s;
}

Shape shape_from_args(py::args args, const char* op) {
  if (args.size() == 1 && py::isinstance<py::sequence>(args[0]))
    return shape_from_sequence(args[0], op);
  return shape_from_sequence(args, op);
}

std::vector<int64_t> dims_from_py(py::handle h, const char* op) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return {h.cast<int64_t>()};
  return shape_from_sequence(h, op);
}

void init_dtype_device(py::module_& m) {
  py::class_<PyDType>(m, "dtype")
      .def("__repr__", [](const PyDType& d) { return std::string("oneflow.") + dtype_name(d.dt); })
      .def("__str__", [](const PyDType& d) { return std::string("oneflow.") + dtype_name(d.dt); })
      .def("__hash__", [](const PyDType& d) { return static_cast<int>(d.dt); })
      .def("__eq__",
           [](const PyDType& a, py::handle b) {
             return py::isinstance<PyDType>(b) && b.cast<PyDType&>().dt == a.dt;
           })
      .def_property_readonly("is_floating_point",
                             [](const PyDType& d) { return is_floating(d.dt); })
      .def_property_readonly("is_complex", [](const PyDType& d) { return is_complex(d.dt); })
      .def_property_readonly(
          "is_signed",
          [](const PyDType& d) { return d.dt != DType::kBool && d.dt != DType::kUInt8; })
      .def_property_readonly("itemsize", [](const PyDType& d) { return itemsize(d.dt); });
  for (int i = 0; i < kNumDTypes; ++i) {
    DType dt = static_cast<DType>(i);
    dtype_objects()[i] = py::cast(PyDType{dt});
    m.attr(dtype_name(dt)) = dtype_objects()[i];
  }
  m.def("get_default_dtype", [] { return dtype_to_py(default_dtype()); });
  m.def("set_default_dtype",
        [](py::handle d) { set_default_dtype(dtype_from_py(d, "set_default_dtype")); });
  m.def("promote_types", [](py::handle a, py::handle b) {
    return dtype_to_py(
        promote_types(dtype_from_py(a, "promote_types"), dtype_from_py(b, "promote_types")));
  });

  py::class_<Device>(m, "device")
      .def(py::init([](py::handle spec, py::object index) {
             if (py::isinstance<Device>(spec)) return spec.cast<Device>();
             Device d = device_from_py(spec, "device");
             if (!index.is_none()) {
               if (py::isinstance<py::str>(spec) &&
                   spec.cast<std::string>().find(':') != std::string::npos)
                 throw_error<ValueError>("device",
                                         "type (string) must not include an index "
                                         "because index was passed explicitly: ",
                                         spec.cast<std::string>());
               d.index = index.cast<int>();
             }
             return d;
           }),
           py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type); })
      .def_property_readonly("index", [](const Device& d) { return d.index; })
      .def("__repr__",
           [](const Device& d) {
             return str_cat("device(type='", device_type_name(d.type), "', index=", d.index, ")");
           })
      .def("__str__", &Device::str)
      .def("__eq__",
           [](const Device& a, py::handle b) {
             if (py::isinstance<Device>(b)) return a == b.cast<Device>();
             if (py::isinstance<py::str>(b)) return a == Device::parse(b.cast<std::string>());
             return false;
           })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1024 + d.index; });

  m.def("cuda_device_count", [] { return cuda_built() ? cuda_backend().device_count() : 0; });
  m.def("cuda_current_device", [] { return current_cuda_device(); });
  m.def("cuda_set_device", [](int index) { set_current_cuda_device(index); });
  m.def("cuda_device_properties", [](int index) {
    const CudaDeviceProperties p = cuda_device_properties(index);
    return py::make_tuple(p.name, p.major, p.minor, p.total_memory, p.multi_processor_count);
  });
  m.def(
      "cuda_synchronize",
      [](int index) {
        eager::synchronize_cuda(index);  // the launches queued on the device's stream
        cuda_backend().synchronize(index);
      },
      py::arg("index") = 0);
  m.def("memory_allocated", [](py::handle dev) {
    Device d = device_from_py(dev, "memory_allocated");
    return backend_of(d.type).allocator(d.index).allocated_bytes();
  });
  m.def("memory_reserved", [](py::handle dev) {
    Device d = device_from_py(dev, "memory_reserved");
    auto& a = backend_of(d.type).allocator(d.index);
    return a.allocated_bytes() + a.cached_bytes();
  });
  // The caching allocator's peaks and counts (torch.cuda.max_memory_allocated, memory_stats).
  m.def("_memory_stats", [](py::handle dev) {
    Device d = device_from_py(dev, "memory_stats");
    auto& a = backend_of(d.type).allocator(d.index);
    py::dict stats;
    stats["allocated_bytes.all.current"] = a.allocated_bytes();
    stats["reserved_bytes.all.current"] = a.allocated_bytes() + a.cached_bytes();
    if (auto* c = dynamic_cast<CachingAllocator*>(&a)) {
      stats["allocated_bytes.all.peak"] = c->peak_allocated_bytes();
      stats["reserved_bytes.all.peak"] = c->peak_reserved_bytes();
      stats["allocation.all.allocated"] = c->allocations();
    }
    return stats;
  });
  m.def("_reset_peak_memory_stats", [](py::handle dev) {
    Device d = device_from_py(dev, "reset_peak_memory_stats");
    if (auto* c = dynamic_cast<CachingAllocator*>(&backend_of(d.type).allocator(d.index)))
      c->reset_peaks();
  });
  m.def("empty_cache", [](py::handle dev) {
    Device d = device_from_py(dev, "empty_cache");
    backend_of(d.type).allocator(d.index).empty_cache();
  });
}

}  // namespace oneflow::python
