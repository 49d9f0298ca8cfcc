#include "oneflow/core/common/dtype.h"

namespace oneflow {

size_t itemsize(DType dt) {
  switch (dt) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
      return 1;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
    case DType::kComplex64:
      return 8;
    case DType::kComplex128:
      return 16;
  }
  return 0;
}

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::kBool:
      return "bool";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kComplex64:
      return "complex64";
    case DType::kComplex128:
      return "complex128";
  }
  return "unknown";
}

bool is_floating(DType dt) {
  return dt == DType::kFloat16 || dt == DType::kBFloat16 || dt == DType::kFloat32 ||
         dt == DType::kFloat64;
}

bool is_integral(DType dt, bool include_bool) {
  return (include_bool && dt == DType::kBool) || dt == DType::kUInt8 || dt == DType::kInt8 ||
         dt == DType::kInt16 || dt == DType::kInt32 || dt == DType::kInt64;
}

DType complex_to_real(DType dt) {
  if (dt == DType::kComplex64) return DType::kFloat32;
  if (dt == DType::kComplex128) return DType::kFloat64;
  return dt;
}

DType real_to_complex(DType dt) {
  if (is_complex(dt)) return dt;
  return dt == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64;
}

void throw_complex_unsupported(DType dt) {
  throw_error<TypeError>("kernel", "this operation does not support ", dtype_name(dt),
                         " tensors yet");
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  if (is_complex(a) || is_complex(b)) {
    // the wider of the complex dtype and the complex counterpart of the other's floating type
    const DType ca = is_floating(a) || is_complex(a) ? real_to_complex(a) : DType::kComplex64;
    const DType cb = is_floating(b) || is_complex(b) ? real_to_complex(b) : DType::kComplex64;
    return ca == DType::kComplex128 || cb == DType::kComplex128 ? DType::kComplex128
                                                                : DType::kComplex64;
  }
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (fa) {  // both floating
    if ((a == DType::kFloat16 && b == DType::kBFloat16) ||
        (a == DType::kBFloat16 && b == DType::kFloat16))
      return DType::kFloat32;
    return itemsize(a) >= itemsize(b) ? a : b;
  }
  // both integers; uint8 with a signed type needs a signed type wider than 8 bits
  if (a == DType::kUInt8 || b == DType::kUInt8) {
    DType other = a == DType::kUInt8 ? b : a;
    return other == DType::kInt8 ? DType::kInt16 : other;
  }
  return itemsize(a) >= itemsize(b) ? a : b;
}

namespace {
DType g_default_dtype = DType::kFloat32;
}

DType default_dtype() { return g_default_dtype; }

void set_default_dtype(DType dt) {
  if (!is_floating(dt))
    throw_error<TypeError>("set_default_dtype", "expected a floating point dtype, got ",
                           dtype_name(dt));
  g_default_dtype = dt;
}

}  // namespace oneflow
