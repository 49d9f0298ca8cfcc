// Meta inference, traits and the gradient rule of igamma (special_primitives.h).
#include "oneflow/core/ops/special_primitives.h"

#include "oneflow/core/common/op_kinds.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"

namespace oneflow {

namespace F = functional;

PrimTraits Igamma::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> Igamma::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 2);
  const Tensor &a = in[0], &x = in[1];
  if (a->dtype() != x->dtype() || a->shape() != x->shape())
    throw_error<RuntimeError>(name(), "expected inputs of one shape and dtype");
  if (a->dtype() != DType::kFloat32 && a->dtype() != DType::kFloat64)
    throw_error<NotImplementedError>(name(), "not implemented for ", dtype_name(a->dtype()));
  if (!a->is_contiguous() || !x->is_contiguous())
    throw_error<RuntimeError>(name(), "expected contiguous inputs");
  return {TensorMeta{a->shape(), contiguous_strides(a->shape()), 0, a->dtype(), a->device()}};
}

TensorList Igamma::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(2);
  if (!dy[0]) return dx;
  if (ctx.needs_input_grad[0])
    throw_error<NotImplementedError>(name(), "the derivative with respect to input (a) is not ",
                                     "implemented");
  if (!ctx.needs_input_grad[1]) return dx;
  const Tensor &a = ctx.inputs[0], &x = ctx.inputs[1];
  if (ctx.attrs.has("density") && ctx.attrs.get<bool>("density")) {
    // d/dx x^(a-1) e^-x / Gamma(a) = that density times (a - 1) / x - 1
    Tensor slope = F::sub(F::div(F::sub(a, Scalar::from_int(1)), x), Scalar::from_int(1));
    Tensor d = dispatch1(prim::igamma(), {a, x}, ctx.attrs);  // outputs are not kept
    dx[1] = F::mul(dy[0], F::mul(d, slope));
    return dx;
  }
  // d P / dx = x^(a-1) e^-x / Gamma(a) (the kernel's density mode, without the cancellation of
  // its logarithm for large a); Q's is its negative.
  Tensor density = dispatch1(prim::igamma(), {a, x}, Attrs{{"upper", false}, {"density", true}});
  if (ctx.attrs.get<bool>("upper")) density = F::neg(density);
  dx[1] = F::mul(dy[0], density);
  return dx;
}

uint64_t Igamma::cpu_work(const TensorList& in, const TensorList& out) const {
  // tens of iterations per element, each a few flops: far more than the bytes it moves
  return 32 * static_cast<uint64_t>(out[0]->numel()) * itemsize(out[0]->dtype());
}

namespace prim {
const Igamma& igamma() {
  static const Igamma p;
  return p;
}
}  // namespace prim

}  // namespace oneflow
