// Meta inference, traits and gradient rules of the fused pointwise primitives
// (ternary_primitives.h). User-facing checks and promotion live in functional/ternary.cpp.
#include "oneflow/core/ops/ternary_primitives.h"

#include "oneflow/core/functional/functional.h"

namespace oneflow {

namespace F = functional;

template <TernaryFn K>
const char* Ternary<K>::name() const {
  if constexpr (K == TernaryFn::kAddcmul) return "addcmul";
  if constexpr (K == TernaryFn::kAddcdiv) return "addcdiv";
  return "lerp";
}

template <TernaryFn K>
PrimTraits Ternary<K>::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.may_run_in_place = true;
  t.elementwise = true;
  return t;
}

template <TernaryFn K>
std::vector<TensorMeta> Ternary<K>::infer(const TensorList& in, const Attrs&) const {
  if (in.size() != 3) throw_error<RuntimeError>(name(), "expected 3 inputs, got ", in.size());
  const DType dt = in[0]->dtype();
  if (!is_floating(dt))
    throw_error<NotImplementedError>(name(), "expected floating point inputs, got ",
                                     dtype_name(dt));
  for (size_t i = 1; i < 3; ++i)
    if (in[i]->dtype() != dt)
      throw_error<RuntimeError>(name(), "expected all inputs to have dtype ", dtype_name(dt),
                                ", got ", dtype_name(in[i]->dtype()));
  const Shape s = broadcast_shapes(name(), broadcast_shapes(name(), in[0]->shape(), in[1]->shape()),
                                   in[2]->shape());
  return {TensorMeta{s, contiguous_strides(s), 0, dt, in[0]->device()}};
}

// addcmul: b for c's gradient, c for b's. addcdiv: b for c's, c for both. lerp: the weight c
// for a's and b's, a and b for c's.
template <TernaryFn K>
bool Ternary<K>::reads_saved_input(size_t i, const std::vector<bool>& needs) const {
  if constexpr (K == TernaryFn::kAddcmul) return (i == 1 && needs[2]) || (i == 2 && needs[1]);
  if constexpr (K == TernaryFn::kAddcdiv) return (i == 1 && needs[2]) || i == 2;
  return i == 2 ? needs[0] || needs[1] : needs[2];
}

template <TernaryFn K>
TensorList Ternary<K>::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor& g = dy[0];
  TensorList dx(3);
  auto to_input = [&](size_t i, const Tensor& t) {
    if (ctx.needs_input_grad[i]) dx[i] = F::sum_to(t, ctx.input_metas[i].shape);
  };
  if constexpr (K == TernaryFn::kLerp) {
    const Tensor& w = ctx.inputs[2];
    if (ctx.needs_input_grad[0]) to_input(0, F::mul(g, F::rsub(w, Scalar::from_double(1.0))));
    if (ctx.needs_input_grad[1]) to_input(1, F::mul(g, w));
    if (ctx.needs_input_grad[2]) to_input(2, F::mul(g, F::sub(ctx.inputs[1], ctx.inputs[0])));
  } else {
    const Scalar value = Scalar::from_double(ctx.attrs.get<double>("value"));
    to_input(0, g);
    const Tensor gv = ctx.needs_input_grad[1] || ctx.needs_input_grad[2] ? F::mul(g, value) : g;
    if constexpr (K == TernaryFn::kAddcmul) {
      if (ctx.needs_input_grad[1]) to_input(1, F::mul(gv, ctx.inputs[2]));
      if (ctx.needs_input_grad[2]) to_input(2, F::mul(gv, ctx.inputs[1]));
    } else {
      const Tensor& c = ctx.inputs[2];
      if (ctx.needs_input_grad[1]) to_input(1, F::div(gv, c));
      if (ctx.needs_input_grad[2])
        to_input(2, F::neg(F::div(F::mul(gv, ctx.inputs[1]), F::mul(c, c))));
    }
  }
  return dx;
}

namespace prim {
template <TernaryFn K>
const Ternary<K>& ternary() {
  static const Ternary<K> instance;
  return instance;
}
template const Ternary<TernaryFn::kAddcmul>& ternary<TernaryFn::kAddcmul>();
template const Ternary<TernaryFn::kAddcdiv>& ternary<TernaryFn::kAddcdiv>();
template const Ternary<TernaryFn::kLerp>& ternary<TernaryFn::kLerp>();
}  // namespace prim

template class Ternary<TernaryFn::kAddcmul>;
template class Ternary<TernaryFn::kAddcdiv>;
template class Ternary<TernaryFn::kLerp>;

}  // namespace oneflow
