// DLPack interop: tensors leave as "dltensor" capsules (Tensor.__dlpack__, flow.to_dlpack) and
// arrive from capsules or from any object with __dlpack__ (flow.from_dlpack), sharing memory
// both ways. The structs below follow the DLPack ABI (v0.8 layout), declared here.
#include "oneflow/api/python/common.h"
#include "oneflow/core/eager/engine.h"

namespace oneflow::python {

namespace {

enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3 };
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// What an exported capsule owns: the tensor (keeping its storage alive) and the arrays the
// DLTensor points into.
struct Export {
  DLManagedTensor managed;
  Tensor tensor;
  std::vector<int64_t> shape, strides;
};

DLDataType to_dl(DType dt) {
  const uint8_t bits = static_cast<uint8_t>(itemsize(dt) * 8);
  switch (dt) {
    case DType::kBool:
      return {kDLBool, 8, 1};
    case DType::kUInt8:
      return {kDLUInt, 8, 1};
    case DType::kBFloat16:
      return {kDLBfloat, 16, 1};
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return {kDLFloat, bits, 1};
    case DType::kComplex64:
    case DType::kComplex128:
      return {kDLComplex, bits, 1};
    default:
      return {kDLInt, bits, 1};
  }
}

DType from_dl(DLDataType t) {
  if (t.lanes != 1)
    throw_error<TypeError>("from_dlpack", "vector dtypes (lanes=", t.lanes, ") are not supported");
  if (t.code == kDLBool || (t.code == kDLUInt && t.bits == 1)) return DType::kBool;
  if (t.code == kDLUInt && t.bits == 8) return DType::kUInt8;
  if (t.code == kDLInt) {
    if (t.bits == 8) return DType::kInt8;
    if (t.bits == 16) return DType::kInt16;
    if (t.bits == 32) return DType::kInt32;
    if (t.bits == 64) return DType::kInt64;
  }
  if (t.code == kDLFloat) {
    if (t.bits == 16) return DType::kFloat16;
    if (t.bits == 32) return DType::kFloat32;
    if (t.bits == 64) return DType::kFloat64;
  }
  if (t.code == kDLBfloat && t.bits == 16) return DType::kBFloat16;
  if (t.code == kDLComplex && t.bits == 64) return DType::kComplex64;
  if (t.code == kDLComplex && t.bits == 128) return DType::kComplex128;
  throw_error<TypeError>("from_dlpack", "unsupported DLPack dtype (code ", int(t.code), ", bits ",
                         int(t.bits), ")");
}

py::capsule to_dlpack(const Tensor& t) {
  if (t->device().type == DeviceType::kMeta)
    throw_error<NotImplementedError>("to_dlpack", "a meta tensor has no memory to share");
  if (t->device().type == DeviceType::kCUDA) {
    eager::wait_for(*t->storage());  // the queued launches that use it
    cuda_backend().synchronize(t->device().index);
  }
  auto* e = new Export{};
  e->tensor = t;
  e->shape = t->shape();
  e->strides = t->strides();
  DLTensor& d = e->managed.dl_tensor;
  t->storage()->set_shared_outside();  // the consumer reads and writes it without synchronising
  d.data = t->data();
  d.device = t->device().type == DeviceType::kCPU ? DLDevice{kDLCPU, 0}
                                                  : DLDevice{kDLCUDA, t->device().index};
  d.ndim = static_cast<int32_t>(t->ndim());
  d.dtype = to_dl(t->dtype());
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<Export*>(self->manager_ctx);
  };
  // A capsule nobody consumed still owns the tensor; a consumer renames it "used_dltensor".
  return py::capsule(&e->managed, "dltensor", [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
}

Tensor from_capsule(py::handle cap) {
  if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
    throw_error<ValueError>("from_dlpack",
                            "expected an unconsumed DLPack capsule named "
                            "'dltensor' (a capsule can be consumed only once)");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  const DLTensor& d = m->dl_tensor;
  Device dev;
  if (d.device.device_type == kDLCUDA) {
    dev = Device{DeviceType::kCUDA, d.device.device_id};
  } else if (d.device.device_type != kDLCPU && d.device.device_type != kDLCUDAHost) {
    if (m->deleter) m->deleter(m);
    throw_error<RuntimeError>("from_dlpack", "unsupported device type ", d.device.device_type);
  }
  DType dt;
  try {
    dt = from_dl(d.dtype);
  } catch (...) {
    if (m->deleter) m->deleter(m);
    throw;
  }
  Shape shape(d.shape, d.shape + d.ndim);
  Strides strides = d.strides ? Strides(d.strides, d.strides + d.ndim) : contiguous_strides(shape);
  int64_t span = numel(shape) == 0 ? 0 : 1;
  for (size_t i = 0; i < shape.size() && span; ++i) span += (shape[i] - 1) * strides[i];
  void* data = static_cast<char*>(d.data) + d.byte_offset;
  auto storage =
      std::make_shared<Storage>(dev, data, static_cast<size_t>(span) * itemsize(dt), [m] {
        if (m->deleter) m->deleter(m);
      });
  TensorMeta meta{shape, strides, 0, dt, dev};
  return std::make_shared<TensorImpl>(meta, storage, std::make_shared<VersionCounter>());
}

}  // namespace

void init_dlpack(py::module_& m) {
  m.def("to_dlpack", [](py::handle t) {
    if (!is_tensor(t)) throw_error<TypeError>("to_dlpack", "expected a Tensor");
    return to_dlpack(t.cast<Tensor>());
  });
  m.def("from_dlpack", [](py::object obj) {
    if (is_tensor(obj)) return obj.cast<Tensor>();
    if (py::hasattr(obj, "__dlpack__")) {
      py::object dev = obj.attr("__dlpack_device__")();
      py::object cap = obj.attr("__dlpack__")();
      Tensor t = from_capsule(cap);
      // The producer may still be writing on its own CUDA stream: wait for the whole device.
      if (dev.cast<py::tuple>()[0].cast<int>() == kDLCUDA)
        cuda_device_synchronize(t->device().index);
      return t;
    }
    return from_capsule(obj);
  });
}

}  // namespace oneflow::python
