// Data types: the DType enum, its properties, type promotion, and the visitor that kernels use to
// pick the C++ type for a DType (one switch, no per-dtype registration).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "oneflow/core/common/error.h"
#include "oneflow/core/common/half.h"

namespace oneflow {

enum class DType : int8_t {
  kBool,
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  // (real, imaginary) pairs of float32 / float64. Kernels see them through their real view
  // (functional/complex.h): visit_dtype has no C++ type for them and raises.
  kComplex64,
  kComplex128,
};
constexpr int kNumDTypes = 12;

size_t itemsize(DType dt);
// OneFlow's name without the module prefix: "float32", "int64", ...
const char* dtype_name(DType dt);
bool is_floating(DType dt);
bool is_integral(DType dt, bool include_bool);
inline bool is_complex(DType dt) { return dt == DType::kComplex64 || dt == DType::kComplex128; }
// Dtypes whose tensors may require gradients: floating and complex.
inline bool is_differentiable(DType dt) { return is_floating(dt) || is_complex(dt); }
// complex64 <-> float32, complex128 <-> float64 (float16 and bfloat16 go to complex64).
DType complex_to_real(DType dt);
DType real_to_complex(DType dt);
// PyTorch's promotion lattice for two dtypes (bool < integers < floating < complex).
DType promote_types(DType a, DType b);

DType default_dtype();
void set_default_dtype(DType dt);

template <typename T>
struct DTypeOf;
#define OF_DTYPE_OF(T, D)             \
  template <>                         \
  struct DTypeOf<T> {                 \
    static constexpr DType value = D; \
  };
OF_DTYPE_OF(bool, DType::kBool)
OF_DTYPE_OF(uint8_t, DType::kUInt8)
OF_DTYPE_OF(int8_t, DType::kInt8)
OF_DTYPE_OF(int16_t, DType::kInt16)
OF_DTYPE_OF(int32_t, DType::kInt32)
OF_DTYPE_OF(int64_t, DType::kInt64)
OF_DTYPE_OF(float16, DType::kFloat16)
OF_DTYPE_OF(bfloat16, DType::kBFloat16)
OF_DTYPE_OF(float, DType::kFloat32)
OF_DTYPE_OF(double, DType::kFloat64)
#undef OF_DTYPE_OF

// Raised where a kernel meets a complex dtype it has no code for.
[[noreturn]] void throw_complex_unsupported(DType dt);

// visit_dtype(dt, [&]<typename T>() { ... }) calls the lambda with T the C++ type of dt.
template <typename F>
decltype(auto) visit_dtype(DType dt, F&& f) {
  switch (dt) {
    case DType::kBool:
      return f.template operator()<bool>();
    case DType::kUInt8:
      return f.template operator()<uint8_t>();
    case DType::kInt8:
      return f.template operator()<int8_t>();
    case DType::kInt16:
      return f.template operator()<int16_t>();
    case DType::kInt32:
      return f.template operator()<int32_t>();
    case DType::kInt64:
      return f.template operator()<int64_t>();
    case DType::kFloat16:
      return f.template operator()<float16>();
    case DType::kBFloat16:
      return f.template operator()<bfloat16>();
    case DType::kFloat32:
      return f.template operator()<float>();
    case DType::kFloat64:
      return f.template operator()<double>();
    case DType::kComplex64:
    case DType::kComplex128:
      break;
  }
  throw_complex_unsupported(dt);
}

// The type arithmetic happens in: float for the 16-bit floats, the type itself otherwise.
template <typename T>
struct ComputeType {
  using type = T;
};
template <>
struct ComputeType<float16> {
  using type = float;
};
template <>
struct ComputeType<bfloat16> {
  using type = float;
};
template <typename T>
using compute_t = typename ComputeType<T>::type;

}  // namespace oneflow
