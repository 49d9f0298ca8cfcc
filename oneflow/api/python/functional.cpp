// oneflow._C: the functional API bound from functional/functional.h. Arguments that may be a
// tensor or a Python number are parsed here; the GIL is released around the computation.
#include <cstring>
#include <random>

#include "oneflow/api/python/common.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/functional/autocast.h"
#include "oneflow/core/functional/complex.h"
#include "oneflow/core/functional/generators.h"
#include "oneflow/core/functional/split.h"
#include "oneflow/core/functional/ternary.h"
#include "oneflow/core/ops/index_check_primitive.h"
#include "oneflow/core/ops/rnn_primitives.h"

namespace oneflow::python {

namespace F = functional;

namespace {

bool is_complex_scalar(py::handle h) { return PyComplex_Check(h.ptr()); }

// A Python complex as a 0-dim tensor beside `like` (its device; a broadcast global tensor beside
// a global one), which promotes as a wrapped number does (complex64, or complex128 when the
// default dtype is float64).
Tensor complex_scalar_tensor(py::handle h, const Tensor& like) {
  const double re = PyComplex_RealAsDouble(h.ptr()), im = PyComplex_ImagAsDouble(h.ptr());
  const bool wide = default_dtype() == DType::kFloat64;
  Tensor t = empty_tensor({}, wide ? DType::kComplex128 : DType::kComplex64, Device{});
  if (wide) {
    double* p = t->data_as<double>();
    p[0] = re;
    p[1] = im;
  } else {
    float* p = t->data_as<float>();
    p[0] = static_cast<float>(re);
    p[1] = static_cast<float>(im);
  }
  return global::broadcast_like(like, F::to(t, std::nullopt, like->device()));
}

// Runs a binary op whose second operand may be a tensor or a number.
template <typename TT, typename TS>
Tensor binary(const char* op, py::handle a, py::handle b, TT tensor_tensor, TS tensor_scalar) {
  if (is_tensor(a) && is_tensor(b)) {
    Tensor x = a.cast<Tensor>(), y = b.cast<Tensor>();
    ReleaseGil nogil;
    return tensor_tensor(x, y);
  }
  if (is_tensor(a) && is_complex_scalar(b)) {
    Tensor x = a.cast<Tensor>();
    Tensor y = complex_scalar_tensor(b, x);
    ReleaseGil nogil;
    return tensor_tensor(x, y);
  }
  if (is_tensor(a) && is_scalar(b)) {
    Tensor x = a.cast<Tensor>();
    Scalar s = scalar_from_py(b, op);
    ReleaseGil nogil;
    return tensor_scalar(x, s);
  }
  throw_error<TypeError>(op, "expected (Tensor input, Tensor or number other), got (",
                         std::string(py::str(py::type::of(a).attr("__name__"))), ", ",
                         std::string(py::str(py::type::of(b).attr("__name__"))), ")");
}

// The device of factory calls without one (oneflow.set_default_device, `with oneflow.device(...)`);
// per thread, as PyTorch's; unset: the CPU.
thread_local std::optional<Device> t_default_device;

CreationOptions creation_options(py::handle dtype, py::handle device, py::handle placement,
                                 py::handle sbp, const char* op) {
  CreationOptions o{optional_dtype(dtype, op).value_or(default_dtype()),
                    optional_device(device, op).value_or(t_default_device.value_or(Device{})), ""};
  if (!placement.is_none()) {
    o.placement = std::string(py::str(placement));
    if (o.placement.empty()) o.placement = "placement";
  } else if (!sbp.is_none()) {
    throw_error<ValueError>(op, "sbp was given without a placement");
  }
  return o;
}

Tensor with_grad(Tensor t, bool requires_grad) {
  if (requires_grad) {
    if (!is_differentiable(t->dtype()))
      throw_error<RuntimeError>("requires_grad",
                                "only Tensors of floating point and complex dtype can "
                                "require gradients, got ",
                                dtype_name(t->dtype()));
    t->autograd().requires_grad = true;
  }
  return t;
}

std::shared_ptr<Generator> generator_from_py(py::handle h) {
  if (h.is_none()) return nullptr;
  if (!py::isinstance<Generator>(h))
    throw_error<TypeError>("generator", "expected a oneflow.Generator, got ",
                           std::string(py::str(py::type::of(h).attr("__name__"))));
  return h.cast<std::shared_ptr<Generator>>();
}

uint64_t seed_from_py(py::int_ seed) {
  // Like PyTorch, any Python int is accepted and taken modulo 2**64.
  py::int_ mod = py::reinterpret_steal<py::int_>(
      PyNumber_And(seed.ptr(), py::int_(0xFFFFFFFFFFFFFFFFull).ptr()));
  return mod.cast<uint64_t>();
}

// The state as a 16-byte uint8 CPU tensor: seed then offset, little endian.
Tensor rng_state_tensor(const Generator& g) {
  auto [seed, offset] = g.state();
  Tensor t = empty_tensor({16}, DType::kUInt8, Device{});
  std::memcpy(t->data(), &seed, 8);
  std::memcpy(t->data_as<uint8_t>() + 8, &offset, 8);
  return t;
}

// x.view(dtype) (see the binding); of a global tensor, the view of its shard on the same
// placement and sbp.
Tensor view_dtype(const Tensor& x, DType to) {
  if (x->global()) {
    const GlobalMeta& g = *x->global();
    if (itemsize(x->dtype()) != itemsize(to) && x->ndim() > 0)
      for (const Sbp& sbp : g.layout())
        if (sbp.is_split() && sbp.axis == x->ndim() - 1)
          throw_error<RuntimeError>(
              "view", "cannot view a global tensor split along its last dim as ", dtype_name(to),
              " (another element size): its shards would not split the new last",
              " dim as the layout says; make that dim broadcast first (to_global)");
    const Tensor local = view_dtype(g.local, to);
    Shape shape = x->shape();
    if (!shape.empty()) {
      const int64_t from_size = static_cast<int64_t>(itemsize(x->dtype()));
      const int64_t to_size = static_cast<int64_t>(itemsize(to));
      shape.back() = shape.back() * from_size / to_size;
    }
    return global::make(local, g.placement, g.layout(), shape, g.copied_view,
                        g.view_base ? g.view_base : x);
  }
  TensorMeta meta = x->meta();
  meta.dtype = to;
  const int64_t from_size = static_cast<int64_t>(itemsize(x->dtype()));
  const int64_t to_size = static_cast<int64_t>(itemsize(to));
  if (from_size != to_size) {
    const std::string what = std::string(" to view ") + dtype_name(x->dtype()) + " as " +
                             dtype_name(to) + " (different element sizes)";
    const int64_t nd = x->ndim();
    if (nd == 0) throw_error<RuntimeError>("view", "self.dim() cannot be 0", what);
    if (meta.strides[nd - 1] != 1)
      throw_error<RuntimeError>("view", "self.stride(-1) must be 1", what, ", but got ",
                                meta.strides[nd - 1]);
    if (to_size < from_size) {
      const int64_t ratio = from_size / to_size;
      meta.shape[nd - 1] *= ratio;
      for (int64_t d = 0; d + 1 < nd; ++d) meta.strides[d] *= ratio;
      meta.offset *= ratio;
    } else {
      const int64_t ratio = to_size / from_size;
      if (meta.shape[nd - 1] % ratio != 0)
        throw_error<RuntimeError>("view", "self.size(-1) must be divisible by ", ratio, what,
                                  ", but got ", meta.shape[nd - 1]);
      if (meta.offset % ratio != 0)
        throw_error<RuntimeError>("view", "self.storage_offset() must be divisible by ", ratio,
                                  what, ", but got ", meta.offset);
      for (int64_t d = 0; d + 1 < nd; ++d) {
        if (meta.strides[d] % ratio != 0)
          throw_error<RuntimeError>("view", "self.stride(", d, ") must be divisible by ", ratio,
                                    what, ", but got ", meta.strides[d]);
        meta.strides[d] /= ratio;
      }
      meta.shape[nd - 1] /= ratio;
      meta.offset /= ratio;
    }
  }
  auto t = std::make_shared<TensorImpl>(std::move(meta), x->storage(), x->version_counter());
  t->set_is_view(true);
  t->set_view_base(x->is_view() && x->view_base() ? x->view_base() : x);
  return t;
}

void set_rng_state(Generator& g, py::handle h) {
  if (!is_tensor(h)) throw_error<TypeError>("set_rng_state", "expected a uint8 Tensor");
  Tensor t = F::contiguous(F::to(h.cast<Tensor>(), std::nullopt, Device{}));
  if (t->dtype() != DType::kUInt8 || t->numel() != 16)
    throw_error<ValueError>("set_rng_state", "expected a uint8 tensor of 16 bytes, got ",
                            dtype_name(t->dtype()), " of shape ", shape_str(t->shape()));
  uint64_t seed, offset;
  std::memcpy(&seed, t->data(), 8);
  std::memcpy(&offset, t->data_as<uint8_t>() + 8, 8);
  g.set_state(seed, offset);
}

// The input of nonzero / argwhere / flatnonzero as a bool tensor (each element's truth).
Tensor truth_of(const Tensor& t) {
  return t->dtype() == DType::kBool ? t : F::to(t, DType::kBool, std::nullopt);
}

}  // namespace

void init_functional(py::module_& m) {
  // flow.autocast's state on this thread (python/oneflow/amp).
  m.def("_autocast_set", [](const std::string& device_type, bool enabled, py::handle dtype) {
    const DeviceType type = device_type == "cpu" ? DeviceType::kCPU : DeviceType::kCUDA;
    autocast::State& s = autocast::state(type);
    s.enabled = enabled;
    s.dtype = dtype_from_py(dtype, "autocast");
  });
  // A fresh float64 CPU tensor holding `values`, written here: nothing queued can use it yet, so
  // unlike a tensor copied from NumPy memory it waits for no queued work (a compiled graph's
  // per-step numbers).
  m.def("_float64_tensor", [](const std::vector<double>& values) {
    Tensor t = empty_tensor({static_cast<int64_t>(values.size())}, DType::kFloat64, Device{});
    std::copy(values.begin(), values.end(), t->data_as<double>());
    return t;
  });
  m.def("_autocast_to_float", [](const Tensor& t) { return autocast::to_float(t); });
  m.def("_autocast_lower", [](const Tensor& t) { return autocast::lower(t); });
  m.def("_set_default_device", [](py::handle device) {
    t_default_device = optional_device(device, "set_default_device");
  });
  m.def("_get_default_device",
        []() -> py::object { return t_default_device ? py::cast(*t_default_device) : py::none(); });
  m.def("_autocast_get", [](const std::string& device_type) {
    const DeviceType type = device_type == "cpu" ? DeviceType::kCPU : DeviceType::kCUDA;
    const autocast::State s = autocast::state(type);
    return py::make_tuple(s.enabled, dtype_to_py(s.dtype));
  });
  py::class_<Generator, std::shared_ptr<Generator>>(m, "Generator")
      .def(py::init([](py::handle device) {
             if (!device.is_none()) device_from_py(device, "Generator");
             return std::make_shared<Generator>(67280421310721ull);
           }),
           py::arg("device") = py::none())
      .def("manual_seed",
           [](std::shared_ptr<Generator> g, py::int_ seed) {
             g->manual_seed(seed_from_py(seed));
             return g;
           })
      .def("initial_seed", &Generator::initial_seed)
      .def("seed",
           [](Generator& g) {
             uint64_t s =
                 static_cast<uint64_t>(std::random_device{}()) << 32 | std::random_device{}();
             g.manual_seed(s);
             return s;
           })
      .def("get_state", [](const Generator& g) { return rng_state_tensor(g); })
      .def("set_state", [](Generator& g, py::handle t) { set_rng_state(g, t); });
  m.attr("default_generator") = default_generator();
  m.def("default_generator_of", [](py::handle device) {
    return default_generator(device_from_py(device, "default_generator"));
  });
  m.def("get_rng_state", [] { return rng_state_tensor(*default_generator()); });
  m.def("set_rng_state", [](py::handle t) { set_rng_state(*default_generator(), t); });

  m.def(
      "add",
      [](py::handle a, py::handle b, py::handle alpha) {
        Scalar al = scalar_from_py(alpha, "add");
        if (!is_tensor(a) && is_tensor(b) && (is_scalar(a) || is_complex_scalar(a)))
          std::swap(a, b);  // number + tensor
        return binary(
            "add", a, b, [&](const Tensor& x, const Tensor& y) { return F::add(x, y, al); },
            [&](const Tensor& x, Scalar s) { return F::add(x, s, al); });
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def(
      "sub",
      [](py::handle a, py::handle b, py::handle alpha) {
        Scalar al = scalar_from_py(alpha, "sub");
        if (!is_tensor(a) && is_tensor(b) && is_complex_scalar(a)) {
          Tensor y = b.cast<Tensor>();
          Tensor x = complex_scalar_tensor(a, y);
          ReleaseGil nogil;
          return F::sub(x, y, al);
        }
        if (!is_tensor(a) && is_tensor(b) && is_scalar(a)) {
          Tensor y = b.cast<Tensor>();
          Scalar s = scalar_from_py(a, "sub");
          ReleaseGil nogil;
          return F::rsub(y, s, al);
        }
        return binary(
            "sub", a, b, [&](const Tensor& x, const Tensor& y) { return F::sub(x, y, al); },
            [&](const Tensor& x, Scalar s) { return F::sub(x, s, al); });
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def(
      "mul",
      [](py::handle a, py::handle b) {
        if (!is_tensor(a) && is_tensor(b) && (is_scalar(a) || is_complex_scalar(a)))
          std::swap(a, b);
        return binary(
            "mul", a, b, [](const Tensor& x, const Tensor& y) { return F::mul(x, y); },
            [](const Tensor& x, Scalar s) { return F::mul(x, s); });
      },
      py::arg("input"), py::arg("other"));
  m.def(
      "add_",
      [](py::handle self, py::handle other, py::handle alpha) {
        Scalar al = scalar_from_py(alpha, "add_");
        return binary(
            "add_", self, other,
            [&](const Tensor& x, const Tensor& y) { return F::add_(x, y, al); },
            [&](const Tensor& x, Scalar s) { return F::add_(x, s, al); });
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def(
      "mul_",
      [](py::handle self, py::handle other) {
        return binary(
            "mul_", self, other, [](const Tensor& x, const Tensor& y) { return F::mul_(x, y); },
            [](const Tensor& x, Scalar s) { return F::mul_(x, s); });
      },
      py::arg("input"), py::arg("other"));
  m.def(
      "div",
      [](py::handle a, py::handle b, py::handle rounding_mode) {
        if (!rounding_mode.is_none()) {
          const std::string mode = rounding_mode.cast<std::string>();
          const BinaryFn fn = mode == "floor"   ? BinaryFn::kFloorDivide
                              : mode == "trunc" ? BinaryFn::kTruncDivide
                                                : BinaryFn::kAtan2;
          if (fn == BinaryFn::kAtan2)
            throw_error<RuntimeError>("div",
                                      "expected rounding_mode to be one of None, 'trunc', or "
                                      "'floor' but found '",
                                      mode, "'");
          if (!is_tensor(a) && is_tensor(b) && is_scalar(a))
            return F::binary(fn, scalar_from_py(a, "div"), b.cast<Tensor>());
          return binary(
              "div", a, b, [fn](const Tensor& x, const Tensor& y) { return F::binary(fn, x, y); },
              [fn](const Tensor& x, Scalar s) { return F::binary(fn, x, s); });
        }
        if (!is_tensor(a) && is_tensor(b) && is_complex_scalar(a)) {
          Tensor y = b.cast<Tensor>();
          Tensor x = complex_scalar_tensor(a, y);
          ReleaseGil nogil;
          return F::div(x, y);
        }
        if (!is_tensor(a) && is_tensor(b) && is_scalar(a)) {
          Tensor y = b.cast<Tensor>();
          Scalar s = scalar_from_py(a, "div");
          ReleaseGil nogil;
          return F::rdiv(y, s);
        }
        return binary(
            "div", a, b, [](const Tensor& x, const Tensor& y) { return F::div(x, y); },
            [](const Tensor& x, Scalar s) { return F::div(x, s); });
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  m.def(
      "where",
      [](py::handle cond, py::handle x, py::handle y) {
        Tensor c = as_tensor(cond, "where", "condition");
        if (is_complex_scalar(x) || is_complex_scalar(y)) {
          // A Python complex: complex128 beside a double-precision tensor, else the default
          // complex dtype (as a wrapped number promotes).
          auto operand = [&](py::handle h, py::handle other) -> Tensor {
            if (is_tensor(h)) return h.cast<Tensor>();
            const bool wide =
                is_tensor(other) && (other.cast<Tensor>()->dtype() == DType::kFloat64 ||
                                     other.cast<Tensor>()->dtype() == DType::kComplex128);
            if (is_complex_scalar(h)) {
              Tensor t = complex_scalar_tensor(h, c);
              return wide ? F::to(t, DType::kComplex128, std::nullopt) : t;
            }
            const DType dt = is_tensor(other) ? other.cast<Tensor>()->dtype() : DType::kComplex64;
            return F::full({}, scalar_from_py(h, "where"), CreationOptions{dt, c->device(), ""});
          };
          return F::where(c, operand(x, y), operand(y, x));
        }
        const bool tx = is_tensor(x), ty = is_tensor(y);
        if (tx && ty) return F::where(c, x.cast<Tensor>(), y.cast<Tensor>());
        if (tx) return F::where(c, x.cast<Tensor>(), scalar_from_py(y, "where"));
        if (ty) return F::where(c, scalar_from_py(x, "where"), y.cast<Tensor>());
        return F::where(c, scalar_from_py(x, "where"), scalar_from_py(y, "where"));
      },
      py::arg("condition"), py::arg("input"), py::arg("other"));
  m.def(
      "exp",
      [](py::handle x) {
        Tensor t = as_tensor(x, "exp", "input");
        ReleaseGil nogil;
        return F::exp(t);
      },
      py::arg("input"));
  m.def(
      "gelu",
      [](py::handle x, const std::string& approximate) {
        Tensor t = as_tensor(x, "gelu", "input");
        ReleaseGil nogil;
        return F::gelu(t, approximate);
      },
      py::arg("input"), py::kw_only(), py::arg("approximate") = "none");
  m.def(
      "_activation",
      [](int kind, py::handle x, double a, double b, double c) {
        Tensor t = as_tensor(x, fn_name(ActFn(kind)), "input");
        ReleaseGil nogil;
        return F::activation(ActFn(kind), t, a, b, c);
      },
      py::arg("kind"), py::arg("input"), py::arg("a") = 0.0, py::arg("b") = 0.0,
      py::arg("c") = 0.0);
  m.def(
      "_activation_of_difference",
      [](int kind, py::handle x, py::handle y, double a, double b, double c) {
        Tensor tx = as_tensor(x, fn_name(ActFn(kind)), "input");
        Tensor ty = as_tensor(y, fn_name(ActFn(kind)), "target");
        ReleaseGil nogil;
        return F::activation_of_difference(ActFn(kind), tx, ty, a, b, c);
      },
      py::arg("kind"), py::arg("input"), py::arg("target"), py::arg("a") = 0.0, py::arg("b") = 0.0,
      py::arg("c") = 0.0);
  {
    py::dict kinds;
#define OF_ACTIVATION_KIND(E, n) kinds[#n] = int(ActFn::k##E);
    OF_ACTIVATION_FNS(OF_ACTIVATION_KIND)
#undef OF_ACTIVATION_KIND
    m.attr("_activation_kinds") = kinds;
  }
  m.def(
      "softmax",
      [](py::handle x, py::handle dim, py::handle dtype) {
        Tensor t = as_tensor(x, "softmax", "input");
        if (dim.is_none())
          throw_error<TypeError>("softmax",
                                 "dim must be given (implicit dim choice is deprecated)");
        int64_t d = dim.cast<int64_t>();
        auto dt = optional_dtype(dtype, "softmax");
        ReleaseGil nogil;
        return F::softmax(t, d, dt);
      },
      py::arg("input"), py::arg("dim") = py::none(), py::kw_only(), py::arg("dtype") = py::none());
  m.def(
      "mean",
      [](py::handle x, py::handle dim, bool keepdim, py::handle dtype) {
        Tensor t = as_tensor(x, "mean", "input");
        std::vector<int64_t> dims =
            dim.is_none() ? std::vector<int64_t>{} : dims_from_py(dim, "mean");
        auto dt = optional_dtype(dtype, "mean");
        ReleaseGil nogil;
        return F::mean(t, dims, keepdim, dt);
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none());
  m.def("neg", [](py::handle x) { return F::neg(as_tensor(x, "neg", "input")); });
  m.def(
      "relu",
      [](py::handle x) {
        Tensor t = as_tensor(x, "relu", "input");
        ReleaseGil nogil;
        return F::relu(t);
      },
      py::arg("input"));
  m.def(
      "matmul",
      [](py::handle a, py::handle b, bool transpose_a, bool transpose_b, double alpha) {
        Tensor x = as_tensor(a, "matmul", "input"), y = as_tensor(b, "matmul", "other");
        ReleaseGil nogil;
        // OneFlow's keywords: op(a) @ op(b) * alpha, op a transpose of the last two dims
        if (transpose_a && x->ndim() >= 2) x = F::transpose(x, -2, -1);
        if (transpose_b && y->ndim() >= 2) y = F::transpose(y, -2, -1);
        Tensor out = F::matmul(x, y);
        return alpha == 1.0 ? out : F::mul(out, Scalar::from_double(alpha));
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("transpose_a") = false,
      py::arg("transpose_b") = false, py::arg("alpha") = 1.0);
  m.def(
      "_linear",
      [](py::handle x, py::handle w, py::handle b) {
        Tensor tx = as_tensor(x, "linear", "input"), tw = as_tensor(w, "linear", "weight");
        Tensor tb = b.is_none() ? Tensor() : as_tensor(b, "linear", "bias");
        ReleaseGil nogil;
        return F::linear(tx, tw, tb);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
  m.def(
      "sum",
      [](py::handle x, py::handle dim, bool keepdim, py::handle dtype) {
        Tensor t = as_tensor(x, "sum", "input");
        std::vector<int64_t> dims =
            dim.is_none() ? std::vector<int64_t>{} : dims_from_py(dim, "sum");
        if (!dim.is_none() && dims.empty()) dims = {};  // sum(x, dim=[]) reduces everything
        auto dt = optional_dtype(dtype, "sum");
        ReleaseGil nogil;
        return F::sum(t, dims, keepdim, dt);
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none());

  // ---- views and copies ----
  m.def("reshape", [](py::handle x, py::args shape) {
    return F::reshape(as_tensor(x, "reshape", "input"), shape_from_args(shape, "reshape"));
  });
  m.def("view", [](py::handle x, py::args shape) {
    return F::view(as_tensor(x, "view", "input"), shape_from_args(shape, "view"));
  });
  // x.view(dtype): x's bytes read as another dtype, as PyTorch: with another element size the
  // last dim must have stride 1, and its size, the other strides and the offset scale by the
  // ratio of the sizes (and must divide by it when the new elements are larger). A view of the
  // same storage and version counter, outside autograd (PyTorch's is not differentiable either).
  m.def("view_dtype", [](py::handle xh, py::handle dh) {
    return view_dtype(as_tensor(xh, "view", "input"), *optional_dtype(dh, "view"));
  });
  m.def("triangle", [](py::handle x, int64_t diagonal, bool upper) {
    return F::triangle(as_tensor(x, upper ? "triu" : "tril", "input"), diagonal, upper);
  });
  m.def("flip", [](py::handle x, const std::vector<int64_t>& dims) {
    return F::flip(as_tensor(x, "flip", "input"), dims);
  });
  m.def("permute", [](py::handle x, py::args dims) {
    return F::permute(as_tensor(x, "permute", "input"), shape_from_args(dims, "permute"));
  });
  m.def(
      "transpose",
      [](py::handle x, int64_t d0, int64_t d1) {
        return F::transpose(as_tensor(x, "transpose", "input"), d0, d1);
      },
      py::arg("input"), py::arg("dim0"), py::arg("dim1"));
  m.def("expand", [](py::handle x, py::args shape) {
    return F::expand(as_tensor(x, "expand", "input"), shape_from_args(shape, "expand"));
  });
  m.def(
      "slice",
      [](py::handle x, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop,
         int64_t step) { return F::slice(as_tensor(x, "slice", "input"), dim, start, stop, step); },
      py::arg("input"), py::arg("dim"), py::arg("start"), py::arg("stop"), py::arg("step") = 1);
  // The fused pointwise ops (functional/ternary.h); the Python functions choose them for CPU
  // tensors of floating dtypes.
  for (bool inplace : {false, true}) {
    const std::string suffix = inplace ? "_" : "";
    m.def(("_addcmul" + suffix).c_str(),
          [inplace](py::handle a, py::handle b, py::handle c, py::handle value) {
            Tensor ta = as_tensor(a, "addcmul", "input"), tb = as_tensor(b, "addcmul", "tensor1"),
                   tc = as_tensor(c, "addcmul", "tensor2");
            const Scalar v = scalar_from_py(value, "addcmul");
            ReleaseGil nogil;
            return inplace ? F::addcmul_(ta, tb, tc, v) : F::addcmul(ta, tb, tc, v);
          });
    m.def(("_addcdiv" + suffix).c_str(),
          [inplace](py::handle a, py::handle b, py::handle c, py::handle value) {
            Tensor ta = as_tensor(a, "addcdiv", "input"), tb = as_tensor(b, "addcdiv", "tensor1"),
                   tc = as_tensor(c, "addcdiv", "tensor2");
            const Scalar v = scalar_from_py(value, "addcdiv");
            ReleaseGil nogil;
            return inplace ? F::addcdiv_(ta, tb, tc, v) : F::addcdiv(ta, tb, tc, v);
          });
    m.def(("_lerp" + suffix).c_str(), [inplace](py::handle a, py::handle end, py::handle w) {
      Tensor ta = as_tensor(a, "lerp", "input"), te = as_tensor(end, "lerp", "end");
      if (is_scalar(w)) {
        const Scalar v = scalar_from_py(w, "lerp");
        ReleaseGil nogil;
        return inplace ? F::lerp_(ta, te, v) : F::lerp(ta, te, v);
      }
      Tensor tw = as_tensor(w, "lerp", "weight");
      ReleaseGil nogil;
      return inplace ? F::lerp_(ta, te, tw) : F::lerp(ta, te, tw);
    });
  }
  m.def(
      "split_with_sizes",
      [](py::handle x, const std::vector<int64_t>& sizes, int64_t dim) {
        TensorList parts = F::split_with_sizes(as_tensor(x, "split", "input"), sizes, dim);
        py::tuple out(parts.size());
        for (size_t i = 0; i < parts.size(); ++i) out[i] = py::cast(parts[i]);
        return out;
      },
      py::arg("input"), py::arg("split_sizes"), py::arg("dim") = 0);
  m.def(
      "narrow",
      [](py::handle x, int64_t dim, int64_t start, int64_t length) {
        return F::narrow(as_tensor(x, "narrow", "input"), dim, start, length);
      },
      py::arg("input"), py::arg("dim"), py::arg("start"), py::arg("length"));
  m.def(
      "select",
      [](py::handle x, int64_t dim, int64_t index) {
        return F::select(as_tensor(x, "select", "input"), dim, index);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"));
  m.def(
      "squeeze",
      [](py::handle x, py::handle dim) {
        std::vector<int64_t> dims =
            dim.is_none() ? std::vector<int64_t>{} : dims_from_py(dim, "squeeze");
        return F::squeeze(as_tensor(x, "squeeze", "input"), dims);
      },
      py::arg("input"), py::arg("dim") = py::none());
  m.def(
      "unsqueeze",
      [](py::handle x, int64_t dim) {
        return F::unsqueeze(as_tensor(x, "unsqueeze", "input"), dim);
      },
      py::arg("input"), py::arg("dim"));
  m.def(
      "flatten",
      [](py::handle x, int64_t start_dim, int64_t end_dim) {
        return F::flatten(as_tensor(x, "flatten", "input"), start_dim, end_dim);
      },
      py::arg("input"), py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  m.def(
      "copy_",
      [](py::handle dst, py::handle src) {
        Tensor d = as_tensor(dst, "copy_", "self");
        if (is_tensor(src)) {
          Tensor s = src.cast<Tensor>();
          if (is_complex(s->dtype()) && !is_complex(d->dtype()) && d->dtype() != DType::kBool) {
            // PyTorch's ComplexWarning (to bool: nonzero, of either part)
            PyErr_WarnEx(PyExc_UserWarning,
                         "Casting complex values to real discards the imaginary part", 1);
            s = F::real(s);
          }
          return F::copy_(d, s);
        }
        if (is_complex_scalar(src)) return F::copy_(d, complex_scalar_tensor(src, d));
        return F::fill_(d, scalar_from_py(src, "copy_"));
      },
      py::arg("input"), py::arg("src"));
  m.def(
      "fill_",
      [](py::handle dst, py::handle value) {
        Tensor d = as_tensor(dst, "fill_", "self");
        if (is_tensor(value)) {
          Tensor v = value.cast<Tensor>();
          if (v->ndim() != 0)
            throw_error<RuntimeError>("fill_",
                                      "only supports 0-dimension value tensor but got "
                                      "tensor with ",
                                      v->ndim(), " dimensions.");
          return F::copy_(d, v);
        }
        if (is_complex_scalar(value)) return F::copy_(d, complex_scalar_tensor(value, d));
        return F::fill_(d, scalar_from_py(value, "fill_"));
      },
      py::arg("input"), py::arg("value"));
  m.def(
      "index",
      [](py::handle x, std::vector<Tensor> indices, int64_t dim) {
        return F::index(as_tensor(x, "index", "input"), indices, dim);
      },
      py::arg("input"), py::arg("indices"), py::arg("dim"));
  // index_add / index_copy writing whole rows of a CPU tensor (movement_ops.py): an index_put on
  // `x` along `dim` after PyTorch's checks of the index, which (unlike indexing) rejects negative
  // values. Out of range, index_add raises IndexError on a 1-D tensor and RuntimeError
  // otherwise, index_copy IndexError.
  m.def("_index_rows_",
        [](py::handle x, py::handle index, int64_t dim, py::handle values, bool accumulate) {
          const char* op = accumulate ? "index_add" : "index_copy_()";
          Tensor t = as_tensor(x, op, "input"), v = as_tensor(values, op, "source");
          Tensor idx = F::to(as_tensor(index, op, "index"), DType::kInt64, std::nullopt);
          ReleaseGil nogil;
          const int64_t size = t->shape()[dim], n = idx->numel();
          const int64_t* p = idx->read_as<int64_t>();
          for (int64_t i = 0; i < n; ++i) {
            if (p[i] >= 0 && p[i] < size) continue;
            if (accumulate && t->ndim() == 1)
              throw_error<IndexError>(op, "index out of range in self");
            if (accumulate)
              throw_error<RuntimeError>(op, "index ", p[i], " is out of bounds for dimension ", dim,
                                        " with size ", size);
            throw_error<IndexError>(op, "index ", p[i], " is out of bounds for dimension ", dim,
                                    " with size ", size);
          }
          return F::index_put_(t, {idx}, dim, v, accumulate);
        });
  // The smallest and largest values of an index (0 and -1 when it is empty), read on the host:
  // waits only for the ops that write the index, not for the queued work ahead of it, so range
  // checks in Python do not drain the queue.
  m.def("_index_bounds", [](const Tensor& index) {
    Tensor idx = F::contiguous(F::to(index, DType::kInt64, std::nullopt));
    Tensor host = idx->device().type == DeviceType::kCPU ? idx : F::to(idx, std::nullopt, Device{});
    if (host->global()) host = global::whole_value(host);  // every value
    ReleaseGil nogil;
    const int64_t count = host->numel();
    const int64_t* p = host->read_as<int64_t>();
    int64_t lo = count ? p[0] : 0, hi = count ? p[0] : -1;
    for (int64_t i = 1; i < count; ++i) lo = std::min(lo, p[i]), hi = std::max(hi, p[i]);
    return std::make_pair(lo, hi);
  });
  // F.embedding's lookup: weight[input] after PyTorch's check that every index is in
  // [0, num_embeddings), made on the index's values alone (they are read on the host, waiting
  // only for the ops that write them, not for the queued work behind the weight).
  m.def("_embedding_rows", [](const Tensor& weight, const Tensor& input) {
    Tensor idx = F::contiguous(F::to(input, DType::kInt64, weight->device()));
    if (idx->device().type != DeviceType::kMeta) {  // a meta index has no values to check
      Tensor host =
          idx->device().type == DeviceType::kCPU ? idx : F::to(idx, std::nullopt, Device{});
      if (host->global()) host = global::whole_value(host);
      ReleaseGil nogil;
      const int64_t n = weight->shape()[0], count = host->numel();
      const int64_t* p = host->read_as<int64_t>();
      for (int64_t i = 0; i < count; ++i)
        if (p[i] < 0 || p[i] >= n)
          throw_error<IndexError>("embedding",
                                  "index out of range in self (indices must be in [0, ", n,
                                  "), weight has shape ", shape_str(weight->shape()), ")");
    }
    // A compiled graph replays the gather without the check above (its kernel takes negative
    // indices from the end): record the check too.
    F::record_index_check(idx, 0, weight->shape()[0], "embedding", 0, weight->shape()[0]);
    return F::index_gather_raw(F::contiguous(weight), {idx}, 0);
  });
  // While a graph is traced: records a kernel that checks index's values against [lo, hi)
  // at each replay (ops/index_check_primitive.h); nothing in eager mode.
  // One LSTM step's gate math from its two projections: (h', c') (ops/rnn_primitives.h).
  m.def("_lstm_cell", [](const Tensor& gi, const Tensor& gh, const Tensor& c) {
    return F::lstm_cell(gi, gh, c);
  });
  // One LSTM layer over a sequence from its input projection: (out, h_n, c_n).
  m.def("_lstm_layer", [](const Tensor& gi, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                          py::handle b_hh, bool reverse) {
    Tensor tb = b_hh.is_none() ? Tensor() : as_tensor(b_hh, "lstm", "bias_hh");
    ReleaseGil nogil;
    return F::lstm_layer(gi, h0, c0, w_hh, tb, reverse);
  });
  // One GRU layer over a sequence from its input projection: (out, h_n).
  m.def("_gru_layer",
        [](const Tensor& gi, const Tensor& h0, const Tensor& w_hh, py::handle b_hh, bool reverse) {
          Tensor tb = b_hh.is_none() ? Tensor() : as_tensor(b_hh, "gru", "bias_hh");
          ReleaseGil nogil;
          return F::gru_layer(gi, h0, w_hh, tb, reverse);
        });
  m.def("_record_index_check",
        [](const Tensor& index, int64_t lo, int64_t hi, const std::string& op, int64_t dim,
           int64_t size) { F::record_index_check(index, lo, hi, op, dim, size); });
  m.def(
      "index_put_",
      [](py::handle x, std::vector<Tensor> indices, int64_t dim, py::handle value,
         bool accumulate) {
        Tensor t = as_tensor(x, "index_put_", "input");
        Tensor v = is_tensor(value) ? value.cast<Tensor>()
                                    : F::scalar_tensor(scalar_from_py(value, "index_put_"),
                                                       t->dtype(), t->device());
        return F::index_put_(t, indices, dim, v, accumulate);
      },
      py::arg("input"), py::arg("indices"), py::arg("dim"), py::arg("values"),
      py::arg("accumulate") = false);
  m.def(
      "nonzero",
      [](py::handle x) {
        Tensor t = truth_of(as_tensor(x, "nonzero", "input"));
        TensorList parts = F::nonzero(t);
        py::tuple out(parts.size());
        for (size_t i = 0; i < parts.size(); ++i) out[i] = parts[i];
        return out;
      },
      py::arg("input"));
  m.def(
      "argwhere",
      [](py::handle x) { return F::argwhere(truth_of(as_tensor(x, "argwhere", "input"))); },
      py::arg("input"));
  m.def(
      "flatnonzero",
      [](py::handle x) { return F::flatnonzero(truth_of(as_tensor(x, "flatnonzero", "input"))); },
      py::arg("input"));
  m.def(
      "masked_select",
      [](py::handle x, py::handle mask) {
        return F::masked_select(as_tensor(x, "masked_select", "input"),
                                as_tensor(mask, "masked_select", "mask"));
      },
      py::arg("input"), py::arg("mask"));
  m.def(
      "masked_scatter",
      [](py::handle x, py::handle mask, py::handle source) {
        return F::masked_scatter(as_tensor(x, "masked_scatter", "input"),
                                 as_tensor(mask, "masked_scatter", "mask"),
                                 as_tensor(source, "masked_scatter", "source"));
      },
      py::arg("input"), py::arg("mask"), py::arg("source"));
  m.def(
      "as_strided",
      [](py::handle x, py::handle size, py::handle stride, std::optional<int64_t> offset) {
        return F::as_strided(as_tensor(x, "as_strided", "input"),
                             shape_from_sequence(size, "as_strided"),
                             shape_from_sequence(stride, "as_strided"), offset);
      },
      py::arg("input"), py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none());
  m.def(
      "diagonal",
      [](py::handle x, int64_t offset, int64_t dim1, int64_t dim2) {
        return F::diagonal(as_tensor(x, "diagonal", "input"), offset, dim1, dim2);
      },
      py::arg("input"), py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1);
  m.def(
      "unfold",
      [](py::handle x, int64_t dim, int64_t size, int64_t step) {
        return F::unfold(as_tensor(x, "unfold", "input"), dim, size, step);
      },
      py::arg("input"), py::arg("dimension"), py::arg("size"), py::arg("step"));
  m.def(
      "bernoulli",
      [](py::handle p, py::handle generator) {
        return F::bernoulli(as_tensor(p, "bernoulli", "input"), generator_from_py(generator));
      },
      py::arg("input"), py::kw_only(), py::arg("generator") = py::none());
  m.def(
      "randperm",
      [](int64_t n, py::handle dtype, py::handle device, py::handle generator) {
        CreationOptions o = creation_options(dtype, device, py::none(), py::none(), "randperm");
        if (dtype.is_none()) o.dtype = DType::kInt64;
        o.generator = generator_from_py(generator);
        return F::randperm(n, o);
      },
      py::arg("n"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("generator") = py::none());
  m.def(
      "multinomial",
      [](py::handle w, int64_t num_samples, bool replacement, py::handle generator) {
        return F::multinomial(as_tensor(w, "multinomial", "input"), num_samples, replacement,
                              generator_from_py(generator));
      },
      py::arg("input"), py::arg("num_samples"), py::arg("replacement") = false, py::kw_only(),
      py::arg("generator") = py::none());
  // Pointwise math functions and comparisons, one binding each.
  const std::pair<const char*, UnaryFn> unary_fns[] = {
#define OF_UNARY_ENTRY(E, n) {#n, UnaryFn::k##E},
      OF_UNARY_FNS(OF_UNARY_ENTRY)
#undef OF_UNARY_ENTRY
  };
  // The families' public names, so the Python layer exports exactly what the X-macro lists hold.
  py::list unary_names;
  for (const auto& entry : unary_fns) unary_names.append(entry.first);
  m.attr("_unary_fns") = unary_names;
  for (const auto& [name, fn] : unary_fns) {
    if (fn == UnaryFn::kRound) continue;  // below, with decimals
    m.def(
        name,
        [name = name, fn = fn](py::handle x) {
          Tensor t = as_tensor(x, name, "input");
          ReleaseGil nogil;
          return F::unary(fn, t);
        },
        py::arg("input"));
  }
  m.def(
      "round",
      [](py::handle x, int64_t decimals) {
        Tensor t = as_tensor(x, "round", "input");
        ReleaseGil nogil;
        return F::round(t, decimals);
      },
      py::arg("input"), py::kw_only(), py::arg("decimals") = 0);
  // Elementwise binary functions: (tensor, tensor), (tensor, number) and (number, tensor).
  const std::pair<const char*, BinaryFn> binary_fns[] = {
#define OF_BINARY_ENTRY(E, n) {#n, BinaryFn::k##E},
      OF_BINARY_FNS(OF_BINARY_ENTRY)
#undef OF_BINARY_ENTRY
  };
  py::list binary_names;
  for (const auto& entry : binary_fns) binary_names.append(entry.first);
  m.attr("_binary_fns") = binary_names;
  for (const auto& [name, fn] : binary_fns) {
    m.def(
        name,
        [name = name, fn = fn](py::handle a, py::handle b) {
          if (!is_tensor(a) && is_tensor(b) && is_scalar(a)) {
            Tensor y = b.cast<Tensor>();
            Scalar s = scalar_from_py(a, name);
            ReleaseGil nogil;
            return F::binary(fn, s, y);
          }
          return binary(
              name, a, b, [fn](const Tensor& x, const Tensor& y) { return F::binary(fn, x, y); },
              [fn](const Tensor& x, Scalar s) { return F::binary(fn, x, s); });
        },
        py::arg("input"), py::arg("other"));
  }
  m.def(
      "logical_not",
      [](py::handle x) { return F::logical_not(as_tensor(x, "logical_not", "input")); },
      py::arg("input"));
  const std::pair<const char*, CompareFn> compare_fns[] = {
      {"eq", CompareFn::kEq}, {"ne", CompareFn::kNe}, {"lt", CompareFn::kLt},
      {"le", CompareFn::kLe}, {"gt", CompareFn::kGt}, {"ge", CompareFn::kGe},
  };
  for (const auto& [name, fn] : compare_fns) {
    m.def(
        name,
        [name = name, fn = fn](py::handle a, py::handle b) {
          return binary(
              name, a, b, [fn](const Tensor& x, const Tensor& y) { return F::compare(fn, x, y); },
              [fn](const Tensor& x, Scalar s) { return F::compare(fn, x, s); });
        },
        py::arg("input"), py::arg("other"));
  }
  m.def(
      "pow",
      [](py::handle a, py::handle b) {
        if (!is_tensor(a) && is_tensor(b) && is_scalar(a)) {
          Tensor y = b.cast<Tensor>();
          Scalar s = scalar_from_py(a, "pow");
          ReleaseGil nogil;
          return F::rpow(y, s);
        }
        return binary(
            "pow", a, b, [](const Tensor& x, const Tensor& y) { return F::pow(x, y); },
            [](const Tensor& x, Scalar s) { return F::pow(x, s); });
      },
      py::arg("input"), py::arg("exponent"));

  m.def(
      "clamp",
      [](py::handle x, py::handle min, py::handle max) {
        std::optional<Scalar> lo, hi;
        if (!min.is_none()) lo = scalar_from_py(min, "clamp");
        if (!max.is_none()) hi = scalar_from_py(max, "clamp");
        return F::clamp(as_tensor(x, "clamp", "input"), lo, hi);
      },
      py::arg("input"), py::arg("min") = py::none(), py::arg("max") = py::none());
  m.def("contiguous",
        [](py::handle x) { return F::contiguous(as_tensor(x, "contiguous", "input")); });
  m.def("clone", [](py::handle x) { return F::clone(as_tensor(x, "clone", "input")); });
  m.def("detach", [](py::handle x) { return F::detach(as_tensor(x, "detach", "input")); });
  m.def(
      "to",
      [](py::handle x, py::handle dtype, py::handle device, bool copy) {
        Tensor t = as_tensor(x, "to", "input");
        auto dt = optional_dtype(dtype, "to");
        auto dev = optional_device(device, "to");
        if (dt && is_complex(t->dtype()) && !is_complex(*dt) && *dt != DType::kBool) {
          // PyTorch's ComplexWarning (to bool: nonzero, of either part)
          PyErr_WarnEx(PyExc_UserWarning,
                       "Casting complex values to real discards the imaginary part", 1);
          t = F::real(t);
        }
        ReleaseGil nogil;
        return F::to(t, dt, dev, copy);
      },
      py::arg("input"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("copy") = false);
  m.def("result_type", [](py::args args) {
    std::vector<Tensor> ts;
    std::vector<Scalar> ss;
    bool complex_number = false;
    for (py::handle a : args) {
      if (is_tensor(a))
        ts.push_back(a.cast<Tensor>());
      else if (is_complex_scalar(a))
        complex_number = true;
      else
        ss.push_back(scalar_from_py(a, "result_type"));
    }
    if (!complex_number) return dtype_to_py(F::result_type(ts, ss));
    // A Python complex lifts a floating result to its complex dtype and anything below
    // floating to the default complex dtype, as PyTorch's wrapped numbers.
    const DType r = ts.empty() && ss.empty() ? DType::kBool : F::result_type(ts, ss);
    if (is_complex(r)) return dtype_to_py(r);
    if (r == DType::kFloat64) return dtype_to_py(DType::kComplex128);
    if (is_floating(r)) return dtype_to_py(DType::kComplex64);
    return dtype_to_py(real_to_complex(default_dtype()));
  });

  // ---- creation ----
  m.def(
      "full",
      [](py::handle size, py::handle value, py::handle dtype, py::handle device, bool requires_grad,
         py::handle placement, py::handle sbp) {
        Scalar v = scalar_from_py(value, "full");
        CreationOptions o = creation_options(dtype, device, placement, sbp, "full");
        if (dtype.is_none()) o.dtype = v.dtype();
        return with_grad(F::full(shape_from_sequence(size, "full"), v, o), requires_grad);
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false,
      py::arg("placement") = py::none(), py::arg("sbp") = py::none());
  auto creation = [&m](const char* name, Tensor (*fn)(const Shape&, const CreationOptions&)) {
    m.def(
        name,
        [name, fn](py::args size, py::handle dtype, py::handle device, bool requires_grad,
                   py::handle placement, py::handle sbp) {
          CreationOptions o = creation_options(dtype, device, placement, sbp, name);
          Shape shape = shape_from_args(size, name);
          Tensor t;
          {
            ReleaseGil nogil;
            t = fn(shape, o);
          }
          return with_grad(t, requires_grad);
        },
        py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false, py::arg("placement") = py::none(),
        py::arg("sbp") = py::none());
  };
  creation("empty", &F::empty);
  creation("zeros", &F::zeros);
  creation("ones", &F::ones);
  m.def(
      "rand",
      [](py::args size, py::handle dtype, py::handle device, bool requires_grad,
         py::handle placement, py::handle sbp, py::handle generator) {
        CreationOptions o = creation_options(dtype, device, placement, sbp, "rand");
        o.generator = generator_from_py(generator);
        return with_grad(F::rand(shape_from_args(size, "rand"), o), requires_grad);
      },
      py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("placement") = py::none(),
      py::arg("sbp") = py::none(), py::arg("generator") = py::none());
  m.def(
      "randn",
      [](py::args size, py::handle dtype, py::handle device, bool requires_grad,
         py::handle placement, py::handle sbp, py::handle generator) {
        CreationOptions o = creation_options(dtype, device, placement, sbp, "randn");
        o.generator = generator_from_py(generator);
        return with_grad(F::randn(shape_from_args(size, "randn"), o), requires_grad);
      },
      py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("placement") = py::none(),
      py::arg("sbp") = py::none(), py::arg("generator") = py::none());
  m.def(
      "normal",
      [](double mean, double std, py::handle size, py::handle dtype, py::handle device,
         bool requires_grad, py::handle generator) {
        CreationOptions o = creation_options(dtype, device, py::none(), py::none(), "normal");
        o.generator = generator_from_py(generator);
        return with_grad(F::normal(mean, std, shape_from_sequence(size, "normal"), o),
                         requires_grad);
      },
      py::arg("mean"), py::arg("std"), py::arg("size"), py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("generator") = py::none());
  m.def(
      "randint",
      [](int64_t low, int64_t high, py::handle size, py::handle dtype, py::handle device,
         py::handle placement, py::handle sbp, py::handle generator) {
        CreationOptions o = creation_options(dtype, device, placement, sbp, "randint");
        o.generator = generator_from_py(generator);
        if (dtype.is_none()) o.dtype = DType::kInt64;
        return F::randint(low, high, shape_from_sequence(size, "randint"), o);
      },
      py::arg("low"), py::arg("high"), py::arg("size"), py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("placement") = py::none(), py::arg("sbp") = py::none(),
      py::arg("generator") = py::none());
  m.def(
      "arange",
      [](py::handle start, py::handle end, py::handle step, py::handle dtype, py::handle device,
         bool requires_grad) {
        Scalar s = scalar_from_py(start, "arange"), st = scalar_from_py(step, "arange");
        Scalar e;
        if (end.is_none()) {
          e = s;
          s = Scalar::from_int(0);
        } else {
          e = scalar_from_py(end, "arange");
        }
        Tensor t = F::arange(
            s, e, st, optional_dtype(dtype, "arange"),
            optional_device(device, "arange").value_or(t_default_device.value_or(Device{})));
        return with_grad(t, requires_grad);
      },
      py::arg("start"), py::arg("end") = py::none(), py::arg("step") = 1, py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "linspace",
      [](double start, double end, int64_t steps, py::handle dtype, py::handle device,
         bool requires_grad) {
        CreationOptions o = creation_options(dtype, device, py::none(), py::none(), "linspace");
        return with_grad(F::linspace(start, end, steps, o), requires_grad);
      },
      py::arg("start"), py::arg("end"), py::arg("steps"), py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def("zeros_like",
        [](py::handle x) { return F::zeros_like(as_tensor(x, "zeros_like", "input")); });
  m.def("ones_like", [](py::handle x) { return F::ones_like(as_tensor(x, "ones_like", "input")); });
  m.def(
      "manual_seed", [](py::int_ seed) { manual_seed(seed_from_py(seed)); }, py::arg("seed"));
  m.def("initial_seed", [] { return initial_seed(); });
}

}  // namespace oneflow::python
