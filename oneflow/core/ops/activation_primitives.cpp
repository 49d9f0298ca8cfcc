// Traits and gradient rules of the activation family (Activation<F>, ActivationGrad<F>).
// Backward runs the fused ActivationGrad kernel; under create_graph the gradient is written
// with differentiable ops so that second derivatives flow (as PyTorch's double-backward
// formulas), the branches at the kinks as in the kernels (kernels/common/activations.h).
#include <cmath>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace F = functional;

namespace {

Scalar num(double v) { return Scalar::from_double(v); }

// dy * f'(x) from differentiable ops.
template <ActFn K>
Tensor composite_grad(const Tensor& g, const Tensor& x, const Attrs& attrs) {
  const double a = attrs.get<double>("a"), b = attrs.get<double>("b"), c = attrs.get<double>("c");
  auto zero = [&] { return F::zeros({}, CreationOptions{g->dtype(), g->device(), ""}); };
  auto sigmoid = [](const Tensor& t) { return F::unary(UnaryFn::kSigmoid, t); };
  if constexpr (K == ActFn::kLeakyRelu) {
    return F::where(F::gt(x, num(0)), g, F::mul(g, num(a)));
  } else if constexpr (K == ActFn::kElu) {
    return F::where(F::compare(CompareFn::kLe, x, num(0)),
                    F::mul(F::mul(g, F::exp(F::mul(x, num(c)))), num(c * a * b)),
                    F::mul(g, num(b)));
  } else if constexpr (K == ActFn::kSilu) {
    const Tensor s = sigmoid(x);
    return F::mul(F::mul(g, s), F::add(F::mul(x, F::rsub(s, num(1))), num(1)));
  } else if constexpr (K == ActFn::kMish) {
    const Tensor t = F::unary(UnaryFn::kTanh, F::activation(ActFn::kSoftplus, x, 1.0, 20.0));
    return F::mul(g, F::add(t, F::mul(F::mul(x, sigmoid(x)), F::rsub(F::mul(t, t), num(1)))));
  } else if constexpr (K == ActFn::kSoftplus) {
    const Tensor xb = F::mul(x, num(a));
    return F::where(F::gt(xb, num(b)), g, F::mul(g, sigmoid(xb)));
  } else if constexpr (K == ActFn::kHardtanh) {
    return F::where(F::logical_and(F::gt(x, num(a)), F::lt(x, num(b))), g, zero());
  } else if constexpr (K == ActFn::kHardsigmoid) {
    return F::where(F::logical_and(F::gt(x, num(-3)), F::lt(x, num(3))), F::div(g, num(6)), zero());
  } else if constexpr (K == ActFn::kHardswish) {
    return F::where(F::compare(CompareFn::kLe, x, num(-3)), zero(),
                    F::where(F::lt(x, num(3)), F::mul(g, F::add(F::div(x, num(3)), num(0.5))), g));
  } else if constexpr (K == ActFn::kLogsigmoid) {
    return F::mul(g, sigmoid(F::neg(x)));
  } else if constexpr (K == ActFn::kSoftsign) {
    const Tensor ax = F::unary(UnaryFn::kAbs, x), d = F::add(ax, num(1));
    return F::mul(g, F::sub(F::rdiv(d, num(1)), F::div(ax, F::mul(d, d))));
  } else if constexpr (K == ActFn::kHardshrink || K == ActFn::kSoftshrink) {
    return F::where(F::logical_or(F::lt(x, num(-a)), F::gt(x, num(a))), g, zero());
  } else if constexpr (K == ActFn::kTanhshrink) {
    const Tensor t = F::unary(UnaryFn::kTanh, x);
    return F::mul(g, F::mul(t, t));
  } else if constexpr (K == ActFn::kThreshold) {
    return F::where(F::compare(CompareFn::kLe, x, num(a)), zero(), g);
  } else if constexpr (K == ActFn::kNanToNum) {
    return F::where(F::lt(F::unary(UnaryFn::kAbs, x), num(INFINITY)), g, zero());
  } else if constexpr (K == ActFn::kClamp) {
    return F::where(F::logical_and(F::compare(CompareFn::kGe, x, num(a)),
                                   F::compare(CompareFn::kLe, x, num(b))),
                    g, zero());
  } else if constexpr (K == ActFn::kSigmoid) {
    const Tensor s = sigmoid(x);
    return F::mul(F::mul(g, s), F::rsub(s, num(1)));
  } else if constexpr (K == ActFn::kFrac) {
    return g;
  } else if constexpr (K == ActFn::kSmoothL1 || K == ActFn::kHuber) {
    // the slope clamped to [-1, 1] (smooth_l1: x / beta; huber: x / delta, times delta)
    const double scale = K == ActFn::kHuber ? a : 1.0;
    const Tensor slope = F::activation(ActFn::kClamp, F::div(x, num(a)), -1.0, 1.0);
    return F::mul(g, scale == 1.0 ? slope : F::mul(slope, num(scale)));
  } else {  // abs
    return F::where(F::gt(x, num(0)), g, F::where(F::lt(x, num(0)), F::neg(g), zero()));
  }
}

}  // namespace

template <ActFn K>
PrimTraits Activation<K>::traits() const {
  PrimTraits t = UnaryMath::traits();
  t.saves_inputs = true;
  return t;
}

template <ActFn K>
TensorList Activation<K>::grad(const GradContext& ctx, const TensorList& dy) const {
  if (grad_mode_enabled()) return {composite_grad<K>(dy[0], ctx.inputs[0], ctx.attrs)};
  return {dispatch(prim::activation_grad<K>(), {dy[0], ctx.inputs[0]}, ctx.attrs)[0]};
}

template <ActFn K>
const char* ActivationGrad<K>::name() const {
  switch (K) {
#define OF_GRAD_NAME(E, n) \
  case ActFn::k##E:        \
    return #n "_grad";
    OF_ACTIVATION_FNS(OF_GRAD_NAME)
#undef OF_GRAD_NAME
  }
  return "activation_grad";
}

template <ActFn K>
PrimTraits ActivationGrad<K>::traits() const {
  PrimTraits t = BinaryElementwise::traits();
  t.differentiable = false;
  return t;
}

template <ActFn K>
const char* ActivationOfDifference<K>::name() const {
  switch (K) {
#define OF_DIFF_NAME(E, n) \
  case ActFn::k##E:        \
    return #n "_of_difference";
    OF_DIFF_ACTIVATION_FNS(OF_DIFF_NAME)
#undef OF_DIFF_NAME
    default:
      break;
  }
  return "activation_of_difference";
}

template <ActFn K>
PrimTraits ActivationOfDifference<K>::traits() const {
  PrimTraits t = BinaryElementwise::traits();
  t.saves_inputs = true;
  return t;
}

template <ActFn K>
TensorList ActivationOfDifference<K>::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor d = F::sub(ctx.inputs[0], ctx.inputs[1]);
  const Tensor g = grad_mode_enabled()
                       ? composite_grad<K>(dy[0], d, ctx.attrs)
                       : dispatch(prim::activation_grad<K>(), {dy[0], d}, ctx.attrs)[0];
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::sum_to(g, ctx.input_metas[0].shape);
  if (ctx.needs_input_grad[1]) dx[1] = F::sum_to(F::neg(g), ctx.input_metas[1].shape);
  return dx;
}

#define OF_DIFF_CLASSES(E, n) template class ActivationOfDifference<ActFn::k##E>;
OF_DIFF_ACTIVATION_FNS(OF_DIFF_CLASSES)
#undef OF_DIFF_CLASSES

#define OF_ACTIVATION_CLASSES(E, n)       \
  template class Activation<ActFn::k##E>; \
  template class ActivationGrad<ActFn::k##E>;
OF_ACTIVATION_FNS(OF_ACTIVATION_CLASSES)
#undef OF_ACTIVATION_CLASSES

namespace prim {
template <ActFn K>
const Activation<K>& activation() {
  static const Activation<K> instance;
  return instance;
}
template <ActFn K>
const ActivationGrad<K>& activation_grad() {
  static const ActivationGrad<K> instance;
  return instance;
}
#define OF_ACTIVATION_INSTANCES(E, n)                                \
  template const Activation<ActFn::k##E>& activation<ActFn::k##E>(); \
  template const ActivationGrad<ActFn::k##E>& activation_grad<ActFn::k##E>();
OF_ACTIVATION_FNS(OF_ACTIVATION_INSTANCES)
#undef OF_ACTIVATION_INSTANCES
template <ActFn K>
const ActivationOfDifference<K>& activation_of_difference() {
  static const ActivationOfDifference<K> instance;
  return instance;
}
#define OF_DIFF_INSTANCES(E, n) \
  template const ActivationOfDifference<ActFn::k##E>& activation_of_difference<ActFn::k##E>();
OF_DIFF_ACTIVATION_FNS(OF_DIFF_INSTANCES)
#undef OF_DIFF_INSTANCES
}  // namespace prim

}  // namespace oneflow
