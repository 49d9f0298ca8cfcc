// addcmul, addcdiv and lerp on the fused pointwise primitives (functional/ternary.h).
#include "oneflow/core/functional/ternary.h"

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/ops/ternary_primitives.h"

namespace oneflow::functional {

namespace {

Attrs value_attrs(Scalar value) { return Attrs{{"value", value.to_double()}}; }

template <TernaryFn K>
Tensor run(const Tensor& a, const Tensor& b, const Tensor& c, const Attrs& attrs) {
  const DType dt = result_type({a, b, c});
  return dispatch1(prim::ternary<K>(),
                   {to(a, dt, std::nullopt), to(b, dt, std::nullopt), to(c, dt, std::nullopt)},
                   attrs);
}

template <TernaryFn K>
Tensor run_(const char* op, const Tensor& a, const Tensor& b, const Tensor& c, const Attrs& attrs) {
  const DType dt = result_type({a, b, c});
  if (!can_cast(dt, a->dtype()))
    throw_error<RuntimeError>(op, "result type ", dtype_name(dt),
                              " can't be cast to the desired output type ", dtype_name(a->dtype()));
  return dispatch1(prim::ternary<K>(),
                   {a, to(b, a->dtype(), std::nullopt), to(c, a->dtype(), std::nullopt)}, attrs, a);
}

Tensor weight_tensor(const Tensor& a, Scalar w) {
  return scalar_tensor(w, a->dtype(), a->device());
}

}  // namespace

Tensor addcmul(const Tensor& a, const Tensor& b, const Tensor& c, Scalar value) {
  return run<TernaryFn::kAddcmul>(a, b, c, value_attrs(value));
}
Tensor addcdiv(const Tensor& a, const Tensor& b, const Tensor& c, Scalar value) {
  return run<TernaryFn::kAddcdiv>(a, b, c, value_attrs(value));
}
Tensor lerp(const Tensor& a, const Tensor& end, const Tensor& weight) {
  return run<TernaryFn::kLerp>(a, end, weight, {});
}
Tensor lerp(const Tensor& a, const Tensor& end, Scalar weight) {
  return run<TernaryFn::kLerp>(a, end, weight_tensor(a, weight), {});
}

Tensor addcmul_(const Tensor& a, const Tensor& b, const Tensor& c, Scalar value) {
  return run_<TernaryFn::kAddcmul>("addcmul_", a, b, c, value_attrs(value));
}
Tensor addcdiv_(const Tensor& a, const Tensor& b, const Tensor& c, Scalar value) {
  return run_<TernaryFn::kAddcdiv>("addcdiv_", a, b, c, value_attrs(value));
}
Tensor lerp_(const Tensor& a, const Tensor& end, const Tensor& weight) {
  return run_<TernaryFn::kLerp>("lerp_", a, end, weight, {});
}
Tensor lerp_(const Tensor& a, const Tensor& end, Scalar weight) {
  return run_<TernaryFn::kLerp>("lerp_", a, end, weight_tensor(a, weight), {});
}

}  // namespace oneflow::functional
