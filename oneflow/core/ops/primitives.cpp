// Meta inference, traits and gradient rules of every primitive declared in primitives.h.
#include "oneflow/core/ops/primitives.h"
#include "oneflow/core/framework/global.h"

#include <algorithm>
#include <cmath>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/complex.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/complex_primitives.h"
#include "oneflow/core/ops/nn_primitives.h"
#include "oneflow/core/ops/sampling_primitives.h"
#include "oneflow/core/ops/small_ops_primitives.h"
#include "oneflow/core/ops/special_primitives.h"
#include "oneflow/core/ops/unread_saved.h"

namespace oneflow {

namespace F = functional;

uint64_t Primitive::cpu_work(const TensorList& inputs, const TensorList& outputs) const {
  uint64_t work = 0;
  for (const Tensor& t : inputs) work += t->numel() * itemsize(t->dtype());
  for (const Tensor& t : outputs) work += t->numel() * itemsize(t->dtype());
  return work;
}

TensorList Primitive::grad(const GradContext&, const TensorList&) const {
  throw_error<RuntimeError>(name(), "has no gradient rule");
}

namespace {

TensorMeta contiguous_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}

void check_arity(const Primitive& p, const TensorList& inputs, size_t n) {
  if (inputs.size() != n)
    throw_error<RuntimeError>(p.name(), "expected ", n, " inputs, got ", inputs.size());
}

Device device_attr(const Attrs& attrs) { return Device::parse(attrs.get<std::string>("device")); }

}  // namespace

// ---- elementwise ----

PrimTraits BinaryElementwise::traits() const {
  PrimTraits t;
  t.may_run_in_place = true;
  t.elementwise = true;
  return t;
}

std::vector<TensorMeta> BinaryElementwise::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 2);
  if (in[0]->dtype() != in[1]->dtype())
    throw_error<TypeError>(name(), "expected both inputs to have the same dtype, got ",
                           dtype_name(in[0]->dtype()), " and ", dtype_name(in[1]->dtype()));
  return {contiguous_meta(broadcast_shapes(name(), in[0]->shape(), in[1]->shape()), in[0]->dtype(),
                          in[0]->device())};
}

TensorList Add::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(2);
  for (int i = 0; i < 2; ++i)
    if (ctx.needs_input_grad[i]) dx[i] = F::sum_to(dy[0], ctx.input_metas[i].shape);
  return dx;
}

TensorList Sub::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::sum_to(dy[0], ctx.input_metas[0].shape);
  if (ctx.needs_input_grad[1]) dx[1] = F::neg(F::sum_to(dy[0], ctx.input_metas[1].shape));
  return dx;
}

PrimTraits Mul::traits() const {
  PrimTraits t = BinaryElementwise::traits();
  t.saves_inputs = true;
  return t;
}

TensorList Mul::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList dx(2);
  if (ctx.needs_input_grad[0])
    dx[0] = F::sum_to(F::mul(dy[0], ctx.inputs[1]), ctx.input_metas[0].shape);
  if (ctx.needs_input_grad[1])
    dx[1] = F::sum_to(F::mul(dy[0], ctx.inputs[0]), ctx.input_metas[1].shape);
  return dx;
}

// d(x*y)/dx reads y and d(x*y)/dy reads x.
bool Mul::reads_saved_input(size_t i, const std::vector<bool>& needs) const { return needs[1 - i]; }

PrimTraits Relu::traits() const {
  PrimTraits t;
  t.saves_outputs = true;
  t.may_run_in_place = true;
  t.elementwise = true;
  return t;
}

std::vector<TensorMeta> Relu::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 1);
  if (in[0]->dtype() == DType::kBool)
    throw_error<RuntimeError>(name(),
                              "boolean inputs not supported, expected a numeric dtype, got bool");
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList Relu::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::relu_grad(dy[0], ctx.outputs[0])};
}

PrimTraits UnaryGrad::traits() const {
  PrimTraits t = BinaryElementwise::traits();
  t.differentiable = false;
  return t;
}

PrimTraits ReluGrad::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.elementwise = true;
  return t;
}

TensorList ReluGrad::grad(const GradContext& ctx, const TensorList& dy) const {
  // d/d(dy) relu_grad(dy, y) = mask(y > 0); the mask has zero derivative in y.
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::relu_grad(dy[0], ctx.inputs[1]);
  return dx;
}

PrimTraits Div::traits() const {
  PrimTraits t = BinaryElementwise::traits();
  t.saves_inputs = true;
  return t;
}

TensorList Div::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::sum_to(F::div(dy[0], b), ctx.input_metas[0].shape);
  if (ctx.needs_input_grad[1])  // d(a/b)/db = -a / b^2
    dx[1] = F::sum_to(F::neg(F::div(F::mul(dy[0], a), F::mul(b, b))), ctx.input_metas[1].shape);
  return dx;
}

// d(a/b)/da reads b; d(a/b)/db reads a and b.
bool Div::reads_saved_input(size_t i, const std::vector<bool>& needs) const {
  return i == 1 || needs[1];
}

PrimTraits Pow::traits() const {
  PrimTraits t = BinaryElementwise::traits();
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

TensorList Pow::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1], &y = ctx.outputs[0];
  TensorList dx(2);
  const Scalar zero = Scalar::from_int(0);
  if (ctx.needs_input_grad[0])  // b * a^(b - 1), 0 where b == 0 (0^-1 would make it NaN)
    dx[0] = F::sum_to(F::mul(dy[0], F::where(F::compare(CompareFn::kEq, b, zero), zero,
                                             F::mul(b, F::pow(a, F::sub(b, Scalar::from_int(1)))))),
                      ctx.input_metas[0].shape);
  if (ctx.needs_input_grad[1])  // a^b * log(a), 0 where a == 0 and b >= 0 (as PyTorch)
    dx[1] = F::sum_to(F::mul(dy[0], F::where(F::logical_and(F::compare(CompareFn::kEq, a, zero),
                                                            F::compare(CompareFn::kGe, b, zero)),
                                             zero, F::mul(y, F::unary(UnaryFn::kLog, a)))),
                      ctx.input_metas[1].shape);
  return dx;
}

PrimTraits Where::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.elementwise = true;
  return t;
}

std::vector<TensorMeta> Where::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 3);
  if (in[0]->dtype() != DType::kBool)
    throw_error<RuntimeError>(name(), "expected condition to be a bool tensor, got ",
                              dtype_name(in[0]->dtype()));
  if (in[1]->dtype() != in[2]->dtype())
    throw_error<TypeError>(name(), "expected x and y to have the same dtype, got ",
                           dtype_name(in[1]->dtype()), " and ", dtype_name(in[2]->dtype()));
  Shape s = broadcast_shapes(name(), broadcast_shapes(name(), in[0]->shape(), in[1]->shape()),
                             in[2]->shape());
  return {contiguous_meta(s, in[1]->dtype(), in[1]->device())};
}

// The gradients route dy by the condition; the values of x and y are never read.
bool Where::reads_saved_input(size_t i, const std::vector<bool>&) const { return i == 0; }

TensorList Where::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor& cond = ctx.inputs[0];
  TensorList dx(3);
  Tensor zero = F::zeros({}, CreationOptions{dy[0]->dtype(), dy[0]->device(), ""});
  if (ctx.needs_input_grad[1])
    dx[1] = F::sum_to(F::where(cond, dy[0], zero), ctx.input_metas[1].shape);
  if (ctx.needs_input_grad[2])
    dx[2] = F::sum_to(F::where(cond, zero, dy[0]), ctx.input_metas[2].shape);
  return dx;
}

// ---- unary math ----

PrimTraits UnaryMath::traits() const {
  PrimTraits t;
  t.may_run_in_place = true;
  t.elementwise = true;
  return t;
}

std::vector<TensorMeta> UnaryMath::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 1);
  if (!is_floating(in[0]->dtype()))
    throw_error<NotImplementedError>(name(), "expected a floating point input, got ",
                                     dtype_name(in[0]->dtype()));
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

namespace {
// Rules whose gradient reads the output rather than the input.
constexpr bool grad_from_output(UnaryFn k) {
  return k == UnaryFn::kSqrt || k == UnaryFn::kRsqrt || k == UnaryFn::kTanh ||
         k == UnaryFn::kSigmoid || k == UnaryFn::kReciprocal || k == UnaryFn::kExp2 ||
         k == UnaryFn::kExpm1 || k == UnaryFn::kTan || k == UnaryFn::kErfinv;
}
// Rules whose gradient reads neither (-g, or zeros): nothing is saved.
constexpr bool grad_ignores_value(UnaryFn k) {
  return k == UnaryFn::kNeg || k == UnaryFn::kFloor || k == UnaryFn::kCeil ||
         k == UnaryFn::kRound || k == UnaryFn::kTrunc || k == UnaryFn::kSign;
}
}  // namespace

template <UnaryFn K>
PrimTraits Unary<K>::traits() const {
  PrimTraits t = UnaryMath::traits();
  t.saves_outputs = grad_from_output(K);
  t.saves_inputs = !grad_from_output(K) && !grad_ignores_value(K);
  t.differentiable = K != UnaryFn::kBitwiseNot;
  return t;
}

template <UnaryFn K>
std::vector<TensorMeta> Unary<K>::infer(const TensorList& in, const Attrs& attrs) const {
  if (K == UnaryFn::kBitwiseNot) {
    check_arity(*this, in, 1);
    if (!is_integral(in[0]->dtype(), true))
      throw_error<NotImplementedError>(name(), "expected an integer or bool input, got ",
                                       dtype_name(in[0]->dtype()));
    return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
  }
  if (keeps_integers(K)) {
    check_arity(*this, in, 1);
    if (in[0]->dtype() == DType::kBool)
      throw_error<NotImplementedError>(name(), "expected a numeric input, got bool");
    return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
  }
  return UnaryMath::infer(in, attrs);
}

namespace {
// dy * f'(x) by the activation family's fused gradient kernel (one pass).
Tensor fused_grad(ActFn fn, const Tensor& dy, const Tensor& x) {
  return F::activation_grad(fn, dy, x, Attrs{{"a", 0.0}, {"b", 0.0}, {"c", 0.0}});
}
}  // namespace

template <UnaryFn K>
TensorList Unary<K>::grad(const GradContext& ctx, const TensorList& dy) const {
  static const Tensor kNothingSaved;
  const Tensor& g = dy[0];
  const Tensor& x = !ctx.inputs.empty()    ? ctx.inputs[0]
                    : !ctx.outputs.empty() ? ctx.outputs[0]
                                           : kNothingSaved;
  const Scalar one = Scalar::from_int(1);
  // One pass from the input where no graph of the gradient is built (UnaryGrad).
  if constexpr (unary_grad_reads_input(K)) {
    if (!grad_mode_enabled() && x->dtype() == g->dtype()) return {F::unary_grad(K, g, x)};
  }
  if constexpr (unary_grad_takes_vector_fn(K)) {  // float32 on the CPU only
    const Tensor& v = K == UnaryFn::kErfinv ? ctx.outputs[0] : x;
    if (!grad_mode_enabled() && g->dtype() == DType::kFloat32 && v->dtype() == DType::kFloat32 &&
        g->device().type == DeviceType::kCPU && v->device().type == DeviceType::kCPU)
      return {F::unary_grad(K, g, v)};
  }
  switch (K) {
    case UnaryFn::kAbs: {
      const Tensor& x = ctx.inputs[0];
      if (!grad_mode_enabled()) return {fused_grad(ActFn::kAbs, g, x)};
      Tensor zero = F::zeros({}, CreationOptions{g->dtype(), g->device(), ""});
      return {F::where(F::gt(x, Scalar::from_int(0)), g,
                       F::where(F::lt(x, Scalar::from_int(0)), F::neg(g), zero))};
    }
    case UnaryFn::kSqrt:
      if (!grad_mode_enabled()) return {F::unary_grad(K, g, ctx.outputs[0])};
      return {F::div(g, F::mul(ctx.outputs[0], Scalar::from_int(2)))};
    case UnaryFn::kRsqrt: {
      const Tensor& y = ctx.outputs[0];
      if (!grad_mode_enabled()) return {F::unary_grad(K, g, y)};
      return {F::mul(F::mul(g, F::mul(F::mul(y, y), y)), Scalar::from_double(-0.5))};
    }
    case UnaryFn::kLog:
      return {F::div(g, ctx.inputs[0])};
    case UnaryFn::kLog1p:
      return {F::div(g, F::add(ctx.inputs[0], one))};
    case UnaryFn::kSin:
      return {F::mul(g, F::unary(UnaryFn::kCos, ctx.inputs[0]))};
    case UnaryFn::kCos:
      return {F::neg(F::mul(g, F::unary(UnaryFn::kSin, ctx.inputs[0])))};
    case UnaryFn::kTanh: {
      const Tensor& y = ctx.outputs[0];
      if (!grad_mode_enabled()) return {F::unary_grad(K, g, y)};
      return {F::mul(g, F::rsub(F::mul(y, y), one))};
    }
    case UnaryFn::kSigmoid: {
      const Tensor& y = ctx.outputs[0];
      if (!grad_mode_enabled()) return {F::unary_grad(K, g, y)};
      return {F::mul(g, F::mul(y, F::rsub(y, one)))};
    }
    case UnaryFn::kFloor:
    case UnaryFn::kCeil:
    case UnaryFn::kRound:
    case UnaryFn::kTrunc:
    case UnaryFn::kSign:
      return {F::zeros_like(g)};
    case UnaryFn::kNeg:
      return {F::neg(g)};
    case UnaryFn::kExp2:
      if (!grad_mode_enabled()) return {F::unary_grad(K, g, ctx.outputs[0])};
      return {F::mul(F::mul(g, ctx.outputs[0]), Scalar::from_double(0.69314718055994530942))};
    case UnaryFn::kExpm1:
      if (!grad_mode_enabled()) return {F::unary_grad(K, g, ctx.outputs[0])};
      return {F::mul(g, F::add(ctx.outputs[0], one))};
    case UnaryFn::kLog2:
      return {F::div(g, F::mul(x, Scalar::from_double(0.69314718055994530942)))};
    case UnaryFn::kLog10:
      return {F::div(g, F::mul(x, Scalar::from_double(2.30258509299404568402)))};
    case UnaryFn::kTan: {
      const Tensor& y = ctx.outputs[0];
      if (!grad_mode_enabled()) return {F::unary_grad(K, g, y)};
      return {F::mul(g, F::add(F::mul(y, y), one))};
    }
    case UnaryFn::kAsin:  // 1 / sqrt(1 - x^2)
      return {F::mul(g, F::unary(UnaryFn::kRsqrt, F::rsub(F::mul(x, x), one)))};
    case UnaryFn::kAcos:
      return {F::neg(F::mul(g, F::unary(UnaryFn::kRsqrt, F::rsub(F::mul(x, x), one))))};
    case UnaryFn::kAtan:
      return {F::div(g, F::add(F::mul(x, x), one))};
    case UnaryFn::kSinh:
      return {F::mul(g, F::unary(UnaryFn::kCosh, x))};
    case UnaryFn::kCosh:
      return {F::mul(g, F::unary(UnaryFn::kSinh, x))};
    case UnaryFn::kAsinh:
      return {F::mul(g, F::unary(UnaryFn::kRsqrt, F::add(F::mul(x, x), one)))};
    case UnaryFn::kAcosh:
      return {F::mul(g, F::unary(UnaryFn::kRsqrt, F::sub(F::mul(x, x), one, one)))};
    case UnaryFn::kAtanh:
      return {F::div(g, F::rsub(F::mul(x, x), one))};
    case UnaryFn::kErf:  // 2/sqrt(pi) exp(-x^2)
      return {F::mul(F::mul(g, F::exp(F::neg(F::mul(x, x)))),
                     Scalar::from_double(1.12837916709551257390))};
    case UnaryFn::kErfc:
      return {F::mul(F::mul(g, F::exp(F::neg(F::mul(x, x)))),
                     Scalar::from_double(-1.12837916709551257390))};
    case UnaryFn::kErfinv: {  // sqrt(pi)/2 exp(y^2)
      const Tensor& y = ctx.outputs[0];
      return {F::mul(F::mul(g, F::exp(F::mul(y, y))), Scalar::from_double(0.88622692545275801365))};
    }
    case UnaryFn::kLgamma:
      return {F::mul(g, F::unary(UnaryFn::kDigamma, x))};
    case UnaryFn::kDigamma:
      return {F::mul(g, F::unary(UnaryFn::kTrigamma, x))};
    case UnaryFn::kTrigamma:
      throw_error<NotImplementedError>(name(), "the derivative of trigamma is not implemented");
    case UnaryFn::kBitwiseNot:
      break;
    case UnaryFn::kReciprocal: {
      const Tensor& y = ctx.outputs[0];
      if (!grad_mode_enabled()) return {F::unary_grad(K, g, y)};
      return {F::neg(F::mul(g, F::mul(y, y)))};
    }
  }
  return {nullptr};
}

template <CompareFn K>
PrimTraits Compare<K>::traits() const {
  PrimTraits t;
  t.differentiable = false;
  t.elementwise = true;
  return t;
}

template <CompareFn K>
std::vector<TensorMeta> Compare<K>::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 2);
  if (in[0]->dtype() != in[1]->dtype())
    throw_error<TypeError>(name(), "expected both inputs to have the same dtype, got ",
                           dtype_name(in[0]->dtype()), " and ", dtype_name(in[1]->dtype()));
  return {contiguous_meta(broadcast_shapes(name(), in[0]->shape(), in[1]->shape()), DType::kBool,
                          in[0]->device())};
}

template <BinaryFn K>
PrimTraits Binary<K>::traits() const {
  PrimTraits t = BinaryElementwise::traits();
  // Floor and trunc division are differentiable with a zero gradient, as in PyTorch.
  t.differentiable = !bitwise_fn(K) && !logical_fn(K) && !shift_fn(K);
  t.saves_inputs = t.differentiable && K != BinaryFn::kFloorDivide && K != BinaryFn::kTruncDivide;
  return t;
}

template <BinaryFn K>
std::vector<TensorMeta> Binary<K>::infer(const TensorList& in, const Attrs& attrs) const {
  std::vector<TensorMeta> metas = BinaryElementwise::infer(in, attrs);
  const DType dt = in[0]->dtype();
  if (logical_fn(K) && dt != DType::kBool)
    throw_error<TypeError>(name(), "expected bool inputs, got ", dtype_name(dt));
  if (bitwise_fn(K) && !is_integral(dt, true))
    throw_error<NotImplementedError>(name(), "expected integer or bool inputs, got ",
                                     dtype_name(dt));
  if (shift_fn(K) && !is_integral(dt, false))
    throw_error<NotImplementedError>(name(), "expected integer inputs, got ", dtype_name(dt));
  if (K == BinaryFn::kAtan2 && !is_floating(dt))
    throw_error<TypeError>(name(), "expected floating point inputs, got ", dtype_name(dt));
  if (K == BinaryFn::kPrelu && !is_floating(dt))
    throw_error<NotImplementedError>(name(), "expected a floating point input, got ",
                                     dtype_name(dt));
  if (!bitwise_fn(K) && !logical_fn(K) && !shift_fn(K) && K != BinaryFn::kMaximum &&
      K != BinaryFn::kMinimum && K != BinaryFn::kFmax && K != BinaryFn::kFmin && dt == DType::kBool)
    throw_error<NotImplementedError>(name(), "expected numeric inputs, got bool");
  return metas;
}

template <BinaryFn K>
TensorList Binary<K>::grad(const GradContext& ctx, const TensorList& dy) const {
  const Shape &sa = ctx.input_metas[0].shape, &sb = ctx.input_metas[1].shape;
  TensorList dx(2);
  if (K == BinaryFn::kFloorDivide || K == BinaryFn::kTruncDivide) {
    const CreationOptions opts{dy[0]->dtype(), dy[0]->device(), ""};
    if (ctx.needs_input_grad[0]) dx[0] = global::broadcast_like(dy[0], F::zeros(sa, opts));
    if (ctx.needs_input_grad[1]) dx[1] = global::broadcast_like(dy[0], F::zeros(sb, opts));
    return dx;
  }
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1], &g = dy[0];
  Tensor zero = F::zeros({}, CreationOptions{g->dtype(), g->device(), ""});
  switch (K) {
    case BinaryFn::kMaximum:
    case BinaryFn::kMinimum: {
      // Ties split the gradient in half; otherwise a side gets it unless it lost the
      // comparison (so both sides get it where one is NaN, as in PyTorch).
      const CompareFn loses = K == BinaryFn::kMaximum ? CompareFn::kLt : CompareFn::kGt;
      Tensor half = F::mul(g, Scalar::from_double(0.5));
      Tensor tie = F::compare(CompareFn::kEq, a, b);
      if (ctx.needs_input_grad[0])
        dx[0] = F::sum_to(F::where(tie, half, F::where(F::compare(loses, a, b), zero, g)), sa);
      if (ctx.needs_input_grad[1])
        dx[1] = F::sum_to(F::where(tie, half, F::where(F::compare(loses, b, a), zero, g)), sb);
      return dx;
    }
    case BinaryFn::kFmax:
    case BinaryFn::kFmin: {
      // a is chosen when it wins or ties, or when b is NaN.
      const CompareFn wins = K == BinaryFn::kFmax ? CompareFn::kGe : CompareFn::kLe;
      Tensor pick_a = F::logical_or(F::compare(wins, a, b), F::compare(CompareFn::kNe, b, b));
      if (ctx.needs_input_grad[0]) dx[0] = F::sum_to(F::where(pick_a, g, zero), sa);
      if (ctx.needs_input_grad[1]) dx[1] = F::sum_to(F::where(pick_a, zero, g), sb);
      return dx;
    }
    case BinaryFn::kFmod:
    case BinaryFn::kRemainder: {
      // a - b * q with q = trunc(a / b) (fmod) or floor(a / b) (remainder).
      if (ctx.needs_input_grad[0]) dx[0] = F::sum_to(g, sa);
      if (ctx.needs_input_grad[1]) {
        Tensor q = F::unary(K == BinaryFn::kFmod ? UnaryFn::kTrunc : UnaryFn::kFloor, F::div(a, b));
        dx[1] = F::sum_to(F::neg(F::mul(g, q)), sb);
      }
      return dx;
    }
    case BinaryFn::kPrelu: {
      // dx = dy where x > 0, else w dy; dw = x dy where x <= 0
      Tensor pos = F::compare(CompareFn::kGt, a, zero);
      if (ctx.needs_input_grad[0]) dx[0] = F::sum_to(F::where(pos, g, F::mul(g, b)), sa);
      if (ctx.needs_input_grad[1]) dx[1] = F::sum_to(F::where(pos, zero, F::mul(g, a)), sb);
      return dx;
    }
    case BinaryFn::kAtan2: {
      // 1 / (a^2 + b^2), 0 at the origin (as PyTorch: no NaN from 0 / 0)
      Tensor denom = F::add(F::mul(a, a), F::mul(b, b));
      Tensor recip = F::where(F::compare(CompareFn::kEq, denom, zero), zero,
                              F::rdiv(denom, Scalar::from_int(1)));
      if (ctx.needs_input_grad[0]) dx[0] = F::sum_to(F::mul(F::mul(g, b), recip), sa);
      if (ctx.needs_input_grad[1]) dx[1] = F::sum_to(F::neg(F::mul(F::mul(g, a), recip)), sb);
      return dx;
    }
    default:
      return Primitive::grad(ctx, dy);
  }
}

PrimTraits Exp::traits() const {
  PrimTraits t = UnaryMath::traits();
  t.saves_outputs = true;
  return t;
}

TensorList Exp::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::mul(dy[0], ctx.outputs[0])};
}

PrimTraits Gelu::traits() const {
  PrimTraits t = UnaryMath::traits();
  t.saves_inputs = true;
  return t;
}

TensorList Gelu::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::gelu_grad(dy[0], ctx.inputs[0], ctx.attrs.get<std::string>("approximate"))};
}

PrimTraits GeluGrad::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.elementwise = true;
  return t;
}

TensorList GeluGrad::grad(const GradContext& ctx, const TensorList& dy) const {
  // out = g * gelu'(x): d(g) = dy * gelu'(x), d(x) = dy * g * gelu''(x).
  auto S = [](double v) { return Scalar::from_double(v); };
  const std::string& approximate = ctx.attrs.get<std::string>("approximate");
  const Tensor &g = ctx.inputs[0], &x = ctx.inputs[1];
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::gelu_grad(dy[0], x, approximate);
  if (ctx.needs_input_grad[1]) {
    Tensor second;
    if (approximate == "tanh") {
      // gelu = x/2 (1 + t), t = tanh(u), u = c (x + a x^3):
      // gelu'' = (1 - t^2) (u' + x/2 (u'' - 2 t u'^2)), u' = c (1 + 3 a x^2), u'' = 6 c a x.
      const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
      Tensor x2 = F::mul(x, x);
      Tensor t = F::unary(UnaryFn::kTanh, F::mul(F::add(x, F::mul(F::mul(x2, x), S(a))), S(c)));
      Tensor du = F::mul(F::add(F::mul(x2, S(3 * a)), S(1.0)), S(c));
      Tensor ddu = F::mul(x, S(6 * c * a));
      Tensor inner = F::sub(ddu, F::mul(F::mul(t, F::mul(du, du)), S(2.0)));
      second = F::mul(F::neg(F::sub(F::mul(t, t), S(1.0))),
                      F::add(du, F::mul(F::mul(x, S(0.5)), inner)));
    } else {
      // gelu = x Phi(x): gelu'' = phi(x) (2 - x^2), phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
      Tensor x2 = F::mul(x, x);
      Tensor phi = F::mul(F::exp(F::mul(x2, S(-0.5))), S(1.0 / std::sqrt(2.0 * M_PI)));
      second = F::mul(phi, F::neg(F::sub(x2, S(2.0))));
    }
    dx[1] = F::mul(F::mul(dy[0], g), second);
  }
  return dx;
}

PrimTraits Softmax::traits() const {
  PrimTraits t;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> Softmax::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  if (!is_floating(in[0]->dtype()))
    throw_error<NotImplementedError>(name(), "expected a floating point input, got ",
                                     dtype_name(in[0]->dtype()));
  OF_ASSERT(in[0]->is_contiguous());
  (void)attrs.get<int64_t>("dim");
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList Softmax::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::softmax_grad(dy[0], ctx.outputs[0], ctx.attrs.get<int64_t>("dim"))};
}

PrimTraits SoftmaxGrad::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

TensorList SoftmaxGrad::grad(const GradContext& ctx, const TensorList& dy) const {
  // out = y (g - s), s = sum(g y): d(g) = softmax_grad(dy, y),
  // d(y) = dy (g - s) - g sum(dy y).
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  const Tensor &g = ctx.inputs[0], &y = ctx.inputs[1];
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::softmax_grad(F::contiguous(dy[0]), y, dim);
  if (ctx.needs_input_grad[1]) {
    Tensor s = F::sum(F::mul(g, y), {dim}, true);
    dx[1] = F::sub(F::mul(dy[0], F::sub(g, s)), F::mul(g, F::sum(F::mul(dy[0], y), {dim}, true)));
  }
  return dx;
}

std::vector<TensorMeta> SoftmaxGrad::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 2);
  OF_ASSERT(in[0]->shape() == in[1]->shape() && in[0]->dtype() == in[1]->dtype());
  OF_ASSERT(in[0]->is_contiguous() && in[1]->is_contiguous());
  return {contiguous_meta(in[1]->shape(), in[1]->dtype(), in[1]->device())};
}

// ---- reductions ----

std::vector<TensorMeta> ReduceSum::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  const bool keepdim = attrs.get<bool>("keepdim");
  Shape out;
  for (int64_t d = 0; d < in[0]->ndim(); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced)
      out.push_back(in[0]->shape()[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return {contiguous_meta(out, attrs.get<DType>("dtype"), in[0]->device())};
}

TensorList ReduceSum::grad(const GradContext& ctx, const TensorList& dy) const {
  const Shape& in_shape = ctx.input_metas[0].shape;
  Shape kept = in_shape;
  for (int64_t d : ctx.attrs.get<std::vector<int64_t>>("dims")) kept[d] = 1;
  Tensor g = F::reshape(dy[0], kept);
  if (g->dtype() != ctx.input_metas[0].dtype) g = F::to(g, ctx.input_metas[0].dtype, std::nullopt);
  return {F::expand(g, in_shape)};
}

// ---- linear algebra ----

PrimTraits Matmul::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> Matmul::infer(const TensorList& in, const Attrs&) const {
  if (in.size() != 3) check_arity(*this, in, 2);
  const Tensor &a = in[0], &b = in[1];
  if (a->ndim() != b->ndim() || a->ndim() < 2 || a->ndim() > 3)
    throw_error<RuntimeError>(name(), "expected two 2-D or two 3-D inputs, got shapes ",
                              shape_str(a->shape()), " and ", shape_str(b->shape()));
  if (a->dtype() != b->dtype())
    throw_error<TypeError>(name(), "expected both inputs to have the same dtype, got ",
                           dtype_name(a->dtype()), " and ", dtype_name(b->dtype()));
  const int64_t nd = a->ndim();
  const Shape &sa = a->shape(), &sb = b->shape();
  if (sa[nd - 1] != sb[nd - 2] || (nd == 3 && sa[0] != sb[0]))
    throw_error<RuntimeError>(name(), "shapes ", shape_str(sa), " and ", shape_str(sb),
                              " cannot be multiplied (", sa[nd - 2], "x", sa[nd - 1], " and ",
                              sb[nd - 2], "x", sb[nd - 1], ")");
  if (in.size() == 3) {
    const Tensor& bias = in[2];
    if (nd != 2 || bias->ndim() != 1 || bias->shape()[0] != sb[1] || bias->dtype() != a->dtype() ||
        bias->device() != a->device())
      throw_error<RuntimeError>(name(), "expected a bias of shape (", sb[1], ") and dtype ",
                                dtype_name(a->dtype()), " for 2-D inputs, got shape ",
                                shape_str(bias->shape()), " and dtype ", dtype_name(bias->dtype()));
  }
  Shape out = sa;
  out[nd - 1] = sb[nd - 1];
  return {contiguous_meta(out, a->dtype(), a->device())};
}

// da = dy @ b^T reads b, db = a^T @ dy reads a; the bias's gradient reads nothing.
bool Matmul::reads_saved_input(size_t i, const std::vector<bool>& needs) const {
  return i < 2 && needs[1 - i];
}

namespace {
// Whether an operand is the transpose of a contiguous tensor (its last two dims swapped): x @ W.t()
// in F.linear. Its gradient is then computed transposed, (W.t()'s gradient).t() being the
// contiguous gradient of W: computed untransposed, the transpose view's gradient is a strided
// tensor that accumulating into W.grad copies element by element (a 1024x1024 weight: ~1 ms of a
// ~4 ms single-threaded MLP backward).
bool transposed_contiguous(const TensorMeta& m) {
  const size_t nd = m.shape.size();
  if (nd < 2 || m.shape[nd - 1] == 1 || m.shape[nd - 2] == 1) return false;
  Shape shape = m.shape;
  Strides strides = m.strides;
  std::swap(shape[nd - 1], shape[nd - 2]);
  std::swap(strides[nd - 1], strides[nd - 2]);
  return is_contiguous(shape, strides);
}
}  // namespace

TensorList Matmul::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  const int64_t nd = static_cast<int64_t>(ctx.input_metas[0].shape.size());
  const int64_t r = nd - 2, c = nd - 1;
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) {
    // dA = dY B^T, or (B dY^T)^T for a transposed A.
    dx[0] = transposed_contiguous(ctx.input_metas[0])
                ? F::transpose(F::matmul(b, F::transpose(dy[0], r, c)), r, c)
                : F::matmul(dy[0], F::transpose(b, r, c));
  }
  if (ctx.needs_input_grad[1]) {
    // dB = A^T dY, or (dY^T A)^T for a transposed B.
    dx[1] = transposed_contiguous(ctx.input_metas[1])
                ? F::transpose(F::matmul(F::transpose(dy[0], r, c), a), r, c)
                : F::matmul(F::transpose(a, r, c), dy[0]);
  }
  if (ctx.input_metas.size() == 3) {
    dx.resize(3);
    if (ctx.needs_input_grad[2]) dx[2] = F::sum(dy[0], {0}, false, std::nullopt);
  }
  return dx;
}

// ---- copies and creation ----

PrimTraits Copy::traits() const {
  PrimTraits t;
  t.cross_device = true;
  t.complex = true;
  return t;
}

std::vector<TensorMeta> Copy::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  return {contiguous_meta(in[0]->shape(), attrs.get<DType>("dtype"), device_attr(attrs))};
}

TensorList Copy::grad(const GradContext& ctx, const TensorList& dy) const {
  // A real input cast to complex: its gradient is the real part.
  if (is_complex(dy[0]->dtype()) && !is_complex(ctx.input_metas[0].dtype))
    return {F::to(F::real(dy[0]), ctx.input_metas[0].dtype, ctx.input_metas[0].device)};
  return {F::to(dy[0], ctx.input_metas[0].dtype, ctx.input_metas[0].device)};
}

std::vector<TensorMeta> Flip::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 1);
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList Flip::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::flip(dy[0], ctx.attrs.get<std::vector<int64_t>>("dims"))};
}

std::vector<TensorMeta> Triangle::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 1);
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

TensorList Triangle::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::triangle(dy[0], ctx.attrs.get<int64_t>("diagonal"), ctx.attrs.get<bool>("upper"))};
}

PrimTraits Fill::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> Fill::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 0);
  return {contiguous_meta(attrs.get<std::vector<int64_t>>("shape"), attrs.get<DType>("dtype"),
                          device_attr(attrs))};
}

PrimTraits RandomNormal::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> RandomNormal::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 0);
  DType dt = attrs.get<DType>("dtype");
  if (!is_floating(dt))
    throw_error<NotImplementedError>(name(), "expected a floating point dtype, got ",
                                     dtype_name(dt));
  return {contiguous_meta(attrs.get<std::vector<int64_t>>("shape"), dt, device_attr(attrs))};
}

// ---- views ----

namespace {
PrimTraits view_traits() {
  PrimTraits t;
  t.is_view = true;
  return t;
}
}  // namespace

PrimTraits Permute::traits() const { return view_traits(); }

std::vector<TensorMeta> Permute::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  const auto& perm = attrs.get<std::vector<int64_t>>("perm");
  const TensorMeta& m = in[0]->meta();
  TensorMeta out = m;
  for (size_t i = 0; i < perm.size(); ++i) {
    out.shape[i] = m.shape[perm[i]];
    out.strides[i] = m.strides[perm[i]];
  }
  return {out};
}

TensorList Permute::grad(const GradContext& ctx, const TensorList& dy) const {
  const auto& perm = ctx.attrs.get<std::vector<int64_t>>("perm");
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return {F::permute(dy[0], inv)};
}

PrimTraits Expand::traits() const { return view_traits(); }

std::vector<TensorMeta> Expand::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  const auto& shape = attrs.get<std::vector<int64_t>>("shape");
  const TensorMeta& m = in[0]->meta();
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      throw_error<RuntimeError>(name(), "the expanded size ", shape_str(Shape(shape)),
                                " has more elements than an int64 can count");
  TensorMeta out = m;
  out.shape = shape;
  out.strides.assign(shape.size(), 0);
  const size_t lead = shape.size() - m.shape.size();
  for (size_t i = 0; i < m.shape.size(); ++i)
    out.strides[lead + i] = m.shape[i] == shape[lead + i] ? m.strides[i] : 0;
  return {out};
}

TensorList Expand::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::sum_to(dy[0], ctx.input_metas[0].shape)};
}

PrimTraits View::traits() const { return view_traits(); }

std::vector<TensorMeta> View::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  TensorMeta out = in[0]->meta();
  out.shape = attrs.get<std::vector<int64_t>>("shape");
  out.strides = contiguous_strides(out.shape);
  return {out};
}

TensorList View::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::reshape(dy[0], ctx.input_metas[0].shape)};
}

namespace {
Tensor dispatch_slice_grad(const Tensor& dy, const Shape& in_shape, const Attrs& slice_attrs) {
  Attrs a = slice_attrs;
  a.set("shape", in_shape);
  return dispatch1(prim::slice_grad(), {F::contiguous(dy)}, a);
}
}  // namespace

PrimTraits Slice::traits() const { return view_traits(); }

std::vector<TensorMeta> Slice::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  const auto& starts = attrs.get<std::vector<int64_t>>("starts");
  const auto& steps = attrs.get<std::vector<int64_t>>("steps");
  const auto& sizes = attrs.get<std::vector<int64_t>>("sizes");
  TensorMeta out = in[0]->meta();
  OF_ASSERT(static_cast<int64_t>(starts.size()) == in[0]->ndim());
  for (size_t d = 0; d < starts.size(); ++d) {
    if (sizes[d] > 0) out.offset += starts[d] * out.strides[d];
    out.strides[d] *= steps[d];
    out.shape[d] = sizes[d];
  }
  return {out};
}

TensorList Slice::grad(const GradContext& ctx, const TensorList& dy) const {
  return {dispatch_slice_grad(dy[0], ctx.input_metas[0].shape, ctx.attrs)};
}

PrimTraits Squeeze::traits() const { return view_traits(); }

std::vector<TensorMeta> Squeeze::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  TensorMeta m = in[0]->meta(), out = m;
  out.shape.clear();
  out.strides.clear();
  for (int64_t d = 0; d < in[0]->ndim(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end() && m.shape[d] == 1) continue;
    out.shape.push_back(m.shape[d]);
    out.strides.push_back(m.strides[d]);
  }
  return {out};
}

TensorList Squeeze::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::reshape(dy[0], ctx.input_metas[0].shape)};
}

PrimTraits Unsqueeze::traits() const { return view_traits(); }

std::vector<TensorMeta> Unsqueeze::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  const int64_t dim = attrs.get<int64_t>("dim");
  TensorMeta out = in[0]->meta();
  // The new dim's stride keeps the view contiguous when the input is.
  int64_t stride = dim < in[0]->ndim() ? out.shape[dim] * out.strides[dim] : 1;
  out.shape.insert(out.shape.begin() + dim, 1);
  out.strides.insert(out.strides.begin() + dim, stride);
  return {out};
}

TensorList Unsqueeze::grad(const GradContext& ctx, const TensorList& dy) const {
  return {F::reshape(dy[0], ctx.input_metas[0].shape)};
}

PrimTraits AsStrided::traits() const { return view_traits(); }

std::vector<TensorMeta> AsStrided::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  TensorMeta out = in[0]->meta();
  out.shape = attrs.get<std::vector<int64_t>>("size");
  out.strides = attrs.get<std::vector<int64_t>>("stride");
  out.offset = attrs.get<int64_t>("offset");
  return {out};
}

TensorList AsStrided::grad(const GradContext& ctx, const TensorList& dy) const {
  if (ctx.attrs.get<std::vector<int64_t>>("grad_stride").empty() &&
      !ctx.attrs.get<std::vector<int64_t>>("grad_size").empty())
    throw_error<NotImplementedError>(name(),
                                     "backward of as_strided on a non-contiguous input "
                                     "is not implemented yet");
  Attrs a = ctx.attrs;
  a.set("shape", ctx.input_metas[0].shape);
  if (grad_mode_enabled() && !is_complex(dy[0]->dtype()) && dy[0]->kind() != TensorKind::kGlobal) {
    // Differentiated itself (create_graph): dy added into zeros at the positions of the input
    // the view reads, by an index_put whose own gradient gathers them back (as_strided_grad
    // records no history).
    const Shape& shape = ctx.input_metas[0].shape;
    const Device device = dy[0]->device();
    const Tensor positions =
        F::as_strided(F::arange(Scalar::from_int(0), Scalar::from_int(numel(shape)),
                                Scalar::from_int(1), DType::kInt64, device),
                      a.get<std::vector<int64_t>>("grad_size"),
                      a.get<std::vector<int64_t>>("grad_stride"), a.get<int64_t>("grad_offset"));
    const Tensor flat = F::zeros({numel(shape)}, {dy[0]->dtype(), device, ""});
    return {F::reshape(F::index_put_(flat, {positions}, 0, dy[0], /*accumulate=*/true), shape)};
  }
  if (is_complex(dy[0]->dtype())) {
    // On the real pairs: one more dim of 2, strides and offsets in real elements.
    auto pairs = [&](const char* size_key, const char* stride_key, const char* offset_key) {
      std::vector<int64_t> size = a.get<std::vector<int64_t>>(size_key);
      std::vector<int64_t> stride = a.get<std::vector<int64_t>>(stride_key);
      for (int64_t& s : stride) s *= 2;
      size.push_back(2);
      stride.push_back(1);
      a.set(size_key, size);
      a.set(stride_key, stride);
      a.set(offset_key, a.get<int64_t>(offset_key) * 2);
    };
    pairs("grad_size", "grad_stride", "grad_offset");
    std::vector<int64_t> shape = ctx.input_metas[0].shape;
    shape.push_back(2);
    a.set("shape", shape);
    return {F::view_as_complex(
        dispatch1(prim::as_strided_grad(), {F::contiguous(F::view_as_real(dy[0]))}, a))};
  }
  return {dispatch1(prim::as_strided_grad(), {F::contiguous(dy[0])}, a)};
}

PrimTraits AsStridedGrad::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> AsStridedGrad::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  OF_ASSERT(in[0]->is_contiguous());
  return {
      contiguous_meta(attrs.get<std::vector<int64_t>>("shape"), in[0]->dtype(), in[0]->device())};
}

PrimTraits Bernoulli::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> Bernoulli::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 1);
  if (!is_floating(in[0]->dtype()))
    throw_error<NotImplementedError>(name(), "expected a floating point probability tensor, got ",
                                     dtype_name(in[0]->dtype()));
  return {contiguous_meta(in[0]->shape(), in[0]->dtype(), in[0]->device())};
}

PrimTraits SliceGrad::traits() const {
  PrimTraits t;
  t.complex = true;
  return t;
}

std::vector<TensorMeta> SliceGrad::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 1);
  return {
      contiguous_meta(attrs.get<std::vector<int64_t>>("shape"), in[0]->dtype(), in[0]->device())};
}

TensorList SliceGrad::grad(const GradContext& ctx, const TensorList& dy) const {
  Attrs a = ctx.attrs;
  return {dispatch1(prim::slice(), {dy[0]}, a)};
}

PrimTraits Assign::traits() const {
  PrimTraits t;
  t.may_run_in_place = true;
  t.complex = true;
  return t;
}

std::vector<TensorMeta> Assign::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 2);
  OF_ASSERT(in[0]->dtype() == in[1]->dtype());
  broadcast_shapes(name(), in[1]->shape(), in[0]->shape());
  return {in[0]->meta()};
}

TensorList Assign::grad(const GradContext& ctx, const TensorList& dy) const {
  // dst's old values are overwritten: no gradient flows to them.
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) dx[0] = F::zeros_like(dy[0]);
  if (ctx.needs_input_grad[1]) dx[1] = F::sum_to(dy[0], ctx.input_metas[1].shape);
  return dx;
}

PrimTraits StridedAssign::traits() const {
  PrimTraits t;
  t.may_run_in_place = true;
  t.complex = true;
  return t;
}

std::vector<TensorMeta> StridedAssign::infer(const TensorList& in, const Attrs&) const {
  check_arity(*this, in, 2);
  OF_ASSERT(in[0]->dtype() == in[1]->dtype());
  return {in[0]->meta()};
}

TensorList StridedAssign::grad(const GradContext& ctx, const TensorList& dy) const {
  const auto& size = ctx.attrs.get<std::vector<int64_t>>("size");
  const auto& stride = ctx.attrs.get<std::vector<int64_t>>("stride");
  const int64_t rel = ctx.attrs.get<int64_t>("rel_offset");
  Tensor g = F::contiguous(dy[0]);
  TensorList dx(2);
  if (ctx.needs_input_grad[0]) {
    // The region was overwritten: no gradient reaches the base's old values there.
    Tensor gb = F::clone(g);
    Attrs a = ctx.attrs;
    a.set("offset", gb->offset() + rel);
    const TensorMeta& m = ctx.input_metas[1];
    dispatch(prim::strided_assign(), {gb, F::zeros({}, {m.dtype, m.device, ""})}, a, gb);
    dx[0] = gb;
  }
  if (ctx.needs_input_grad[1])
    dx[1] = F::contiguous(F::as_strided(g, size, stride, g->offset() + rel));
  return dx;
}

void StridedAssign::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  Tensor region =
      make_view(out[0], attrs.get<std::vector<int64_t>>("size"),
                attrs.get<std::vector<int64_t>>("stride"), attrs.get<int64_t>("offset"));
  prim::assign().compute_cpu({region, in[1]}, {region}, {});
}

void StridedAssign::compute_cuda(const TensorList& in, const TensorList& out,
                                 const Attrs& attrs) const {
  Tensor region =
      make_view(out[0], attrs.get<std::vector<int64_t>>("size"),
                attrs.get<std::vector<int64_t>>("stride"), attrs.get<int64_t>("offset"));
  prim::assign().compute_cuda({region, in[1]}, {region}, {});
}

namespace {
// Shape of x[indices] on dims [dim, dim + k) (see IndexGather).
Shape gathered_shape(const Shape& x, const Shape& b, int64_t dim, int64_t k) {
  Shape out(x.begin(), x.begin() + dim);
  for (int64_t s : b) out.push_back(s);
  for (size_t d = dim + k; d < x.size(); ++d) out.push_back(x[d]);
  return out;
}
}  // namespace

PrimTraits IndexGather::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> IndexGather::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() >= 2 && in[0]->is_contiguous());
  const int64_t dim = attrs.get<int64_t>("dim"), k = static_cast<int64_t>(in.size()) - 1;
  OF_ASSERT(dim >= 0 && dim + k <= in[0]->ndim());
  for (int64_t j = 1; j <= k; ++j)
    OF_ASSERT(in[j]->dtype() == DType::kInt64 && in[j]->shape() == in[1]->shape() &&
              in[j]->is_contiguous() && in[j]->device() == in[0]->device());
  return {contiguous_meta(gathered_shape(in[0]->shape(), in[1]->shape(), dim, k), in[0]->dtype(),
                          in[0]->device())};
}

// The selected slices of x (as many elements as the output), the indices, the output.
uint64_t IndexGather::cpu_work(const TensorList& in, const TensorList& out) const {
  uint64_t work = 2 * out[0]->numel() * itemsize(out[0]->dtype());
  for (size_t i = 1; i < in.size(); ++i) work += in[i]->numel() * itemsize(in[i]->dtype());
  return work;
}

TensorList IndexGather::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList idx(ctx.inputs.begin() + 1, ctx.inputs.end());
  const TensorMeta& x = ctx.input_metas[0];
  Tensor zeros = F::zeros(x.shape, CreationOptions{x.dtype, x.device, ""});
  // A split gradient (an embedding of a split batch) scatters each rank's rows into its own
  // zeros: a partial sum (global_dispatch.cpp's index_signature); else the whole value. On an
  // N-D placement, per hierarchy axis: partial sums where the rows are split, broadcast else.
  NdSbp layout;
  bool split_rows = false;
  if (const GlobalMeta* g = dy[0]->global().get()) {
    const NdSbp dl = g->layout();
    for (size_t k = 0; k < dl.size(); ++k) {
      bool split = true;
      for (const Tensor& i : idx) {
        const Sbp s = i->global() ? i->global()->layout()[k] : Sbp::broadcast();
        split =
            split && s.is_split() && dl[k] == Sbp::split(ctx.attrs.get<int64_t>("dim") + s.axis);
      }
      layout.push_back(split ? Sbp::partial_sum() : Sbp::broadcast());
      split_rows = split_rows || split;
    }
  }
  if (split_rows)
    zeros = global::make(zeros, dy[0]->global()->placement, layout, x.shape);
  else
    zeros = global::broadcast_like(dy[0], zeros);
  TensorList dx(ctx.inputs.size());
  // index_put_raw with accumulate, marked as a gradient (backend_flags.h: check_deterministic).
  TensorList in{zeros, F::contiguous(dy[0])};
  in.insert(in.end(), idx.begin(), idx.end());
  Attrs a;
  a.set("dim", ctx.attrs.get<int64_t>("dim"));
  a.set("accumulate", true);
  a.set("gradient", true);
  dx[0] = dispatch1(prim::index_put(), in, a, zeros);
  return dx;
}

PrimTraits IndexPut::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.may_run_in_place = true;
  return t;
}

std::vector<TensorMeta> IndexPut::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() >= 3 && in[0]->is_contiguous() && in[1]->is_contiguous());
  const int64_t dim = attrs.get<int64_t>("dim"), k = static_cast<int64_t>(in.size()) - 2;
  OF_ASSERT(in[1]->shape() == gathered_shape(in[0]->shape(), in[2]->shape(), dim, k));
  OF_ASSERT(in[0]->dtype() == in[1]->dtype());
  return {in[0]->meta()};
}

TensorList IndexPut::grad(const GradContext& ctx, const TensorList& dy) const {
  TensorList idx(ctx.inputs.begin() + 2, ctx.inputs.end());
  const int64_t dim = ctx.attrs.get<int64_t>("dim");
  const bool accumulate = ctx.attrs.get<bool>("accumulate");
  TensorList dx(ctx.inputs.size());
  Tensor g = F::contiguous(dy[0]);
  if (ctx.needs_input_grad[0])
    dx[0] = accumulate
                ? g
                : F::index_put_raw(F::clone(g), F::zeros_like(F::index_gather_raw(g, idx, dim)),
                                   idx, dim, false);
  if (ctx.needs_input_grad[1]) dx[1] = F::index_gather_raw(g, idx, dim);
  return dx;
}

namespace {
// Note [Unread saved tensors]: the gradient of an index gather reads the indices and the input's
// meta, not its values; an index put's reads the indices only (x[m] += 1 after reading x[m]).
// The selections by value (max/min along a dim, sort and topk, cummax/cummin, mode) read their
// indices, not the values they return (v, i = x.topk(k); v.div_(t)).
bool index_values_unread(const Attrs&, bool output, size_t index) { return !output && index == 0; }
bool put_values_unread(const Attrs&, bool output, size_t index) { return !output && index < 2; }
bool selected_values_unread(const Attrs&, bool output, size_t index) {
  return output && index == 0;
}
const bool kIndexingRegistered =
    register_unread_saved(prim::index_gather(), index_values_unread) &&
    register_unread_saved(prim::index_put(), put_values_unread) &&
    register_unread_saved(prim::arg_reduce<ReduceFn::kMax>(), selected_values_unread) &&
    register_unread_saved(prim::arg_reduce<ReduceFn::kMin>(), selected_values_unread) &&
    register_unread_saved(prim::sort(), selected_values_unread) &&
    register_unread_saved(prim::cum_extreme<ReduceFn::kMax>(), selected_values_unread) &&
    register_unread_saved(prim::cum_extreme<ReduceFn::kMin>(), selected_values_unread) &&
    register_unread_saved(prim::mode(), selected_values_unread);
}  // namespace

PrimTraits Arange::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> Arange::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 0);
  return {
      contiguous_meta({attrs.get<int64_t>("n")}, attrs.get<DType>("dtype"), device_attr(attrs))};
}

PrimTraits RandomUniform::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> RandomUniform::infer(const TensorList& in, const Attrs& attrs) const {
  check_arity(*this, in, 0);
  return {contiguous_meta(attrs.get<std::vector<int64_t>>("shape"), attrs.get<DType>("dtype"),
                          device_attr(attrs))};
}

// ---- instances ----

namespace prim {
#define OF_INSTANCE(cls, fn)   \
  const cls& fn() {            \
    static const cls instance; \
    return instance;           \
  }
OF_INSTANCE(Add, add)
OF_INSTANCE(Sub, sub)
OF_INSTANCE(Mul, mul)
OF_INSTANCE(Relu, relu)
OF_INSTANCE(ReluGrad, relu_grad)
OF_INSTANCE(UnaryGrad, unary_grad)
OF_INSTANCE(Div, div)
OF_INSTANCE(Pow, pow)

template <UnaryFn F>
const Unary<F>& unary() {
  static const Unary<F> instance;
  return instance;
}
template <CompareFn F>
const Compare<F>& compare() {
  static const Compare<F> instance;
  return instance;
}
#define OF_UNARY_INSTANCE(E, n) template const Unary<UnaryFn::k##E>& unary<UnaryFn::k##E>();
OF_UNARY_FNS(OF_UNARY_INSTANCE)
#undef OF_UNARY_INSTANCE
#define OF_COMPARE_INSTANCE(E, n) \
  template const Compare<CompareFn::k##E>& compare<CompareFn::k##E>();
OF_COMPARE_FNS(OF_COMPARE_INSTANCE)
#undef OF_COMPARE_INSTANCE
template <BinaryFn F>
const Binary<F>& binary() {
  static const Binary<F> instance;
  return instance;
}
#define OF_BINARY_INSTANCE(E, n) template const Binary<BinaryFn::k##E>& binary<BinaryFn::k##E>();
OF_BINARY_FNS(OF_BINARY_INSTANCE)
#undef OF_BINARY_INSTANCE
OF_INSTANCE(Where, where)
OF_INSTANCE(Exp, exp)
OF_INSTANCE(Gelu, gelu)
OF_INSTANCE(GeluGrad, gelu_grad)
OF_INSTANCE(Softmax, softmax)
OF_INSTANCE(SoftmaxGrad, softmax_grad)
OF_INSTANCE(ReduceSum, reduce_sum)
OF_INSTANCE(Matmul, matmul)
OF_INSTANCE(Copy, copy)
OF_INSTANCE(Flip, flip)
OF_INSTANCE(Triangle, triangle)
OF_INSTANCE(Fill, fill)
OF_INSTANCE(RandomNormal, random_normal)
OF_INSTANCE(Permute, permute)
OF_INSTANCE(Expand, expand)
OF_INSTANCE(View, view)
OF_INSTANCE(Slice, slice)
OF_INSTANCE(AsStrided, as_strided)
OF_INSTANCE(AsStridedGrad, as_strided_grad)
OF_INSTANCE(Bernoulli, bernoulli)
OF_INSTANCE(Squeeze, squeeze)
OF_INSTANCE(Unsqueeze, unsqueeze)
OF_INSTANCE(SliceGrad, slice_grad)
OF_INSTANCE(Assign, assign)
OF_INSTANCE(StridedAssign, strided_assign)
OF_INSTANCE(Arange, arange)
OF_INSTANCE(IndexGather, index_gather)
OF_INSTANCE(IndexPut, index_put)
OF_INSTANCE(RandomUniform, random_uniform)
#undef OF_INSTANCE
}  // namespace prim

std::vector<const Primitive*> all_primitives() {
  std::vector<const Primitive*> list = {
      &prim::add(),
      &prim::sub(),
      &prim::mul(),
      &prim::div(),
      &prim::pow(),
      &prim::where(),
      &prim::relu(),
      &prim::relu_grad(),
      &prim::exp(),
      &prim::gelu(),
      &prim::gelu_grad(),
      &prim::softmax(),
      &prim::softmax_grad(),
      &prim::reduce_sum(),
      &prim::matmul(),
      &prim::copy(),
      &prim::fill(),
      &prim::random_normal(),
      &prim::random_uniform(),
      &prim::arange(),
      &prim::bernoulli(),
      &prim::permute(),
      &prim::expand(),
      &prim::view(),
      &prim::slice(),
      &prim::squeeze(),
      &prim::unsqueeze(),
      &prim::as_strided(),
      &prim::slice_grad(),
      &prim::as_strided_grad(),
      &prim::assign(),
      &prim::strided_assign(),
      &prim::index_gather(),
      &prim::index_put(),
      &prim::reduce<ReduceFn::kProd>(),
      &prim::reduce<ReduceFn::kMax>(),
      &prim::reduce<ReduceFn::kMin>(),
      &prim::arg_reduce<ReduceFn::kMax>(),
      &prim::arg_reduce<ReduceFn::kMin>(),
      &prim::vector_norm2(),
      &prim::cumsum(),
      &prim::cumprod(),
      &prim::sort(),
      &prim::flip(),
      &prim::triangle(),
      &prim::gather(),
      &prim::scatter(),
      &prim::cat(),
      &prim::search_sorted(),
      &prim::histc(),
      &prim::one_hot(),
      &prim::bincount(),
      &prim::cross(),
      &prim::grid_sample(),
      &prim::grid_sample_grad(),
      &prim::pdist(),
      &prim::pdist_grad(),
      &prim::ctc_loss(),
      &prim::ctc_loss_grad(),
      &prim::segment_max(),
      &prim::segment_max_grad(),
      &prim::igamma(),
      &prim::view_as_real(),
      &prim::view_as_complex(),
      &prim::complex_abs(),
      &prim::complex_mul(),
      &prim::fft_c2c(),
      &prim::fft_r2c(),
      &prim::fft_c2r(),
      &prim::dot(),
      &prim::trace(),
      &prim::outer(),
      &prim::cum_extreme<ReduceFn::kMax>(),
      &prim::cum_extreme<ReduceFn::kMin>(),
      &prim::mode(),
      &prim::inverse(),
      &prim::det(),
      &prim::adam_update(),
      &prim::sgd_update(),
      &prim::layer_norm(),
      &prim::layer_norm_grad(),
      &prim::log_softmax(),
      &prim::log_softmax_grad(),
      &prim::conv_forward(),
      &prim::conv_backward_data(),
      &prim::conv_backward_weight(),
      &prim::max_pool(),
      &prim::max_pool_grad(),
      &prim::avg_pool(),
      &prim::avg_pool_grad(),
      &prim::adaptive_avg_pool(),
      &prim::adaptive_avg_pool_grad(),
      &prim::adaptive_max_pool(),
  };
#define OF_LIST_UNARY(E, n) list.push_back(&prim::unary<UnaryFn::k##E>());
  OF_UNARY_FNS(OF_LIST_UNARY)
#undef OF_LIST_UNARY
#define OF_LIST_COMPARE(E, n) list.push_back(&prim::compare<CompareFn::k##E>());
  OF_COMPARE_FNS(OF_LIST_COMPARE)
#undef OF_LIST_COMPARE
#define OF_LIST_ACTIVATION(E, n)                    \
  list.push_back(&prim::activation<ActFn::k##E>()); \
  list.push_back(&prim::activation_grad<ActFn::k##E>());
  OF_ACTIVATION_FNS(OF_LIST_ACTIVATION)
#undef OF_LIST_ACTIVATION
#define OF_LIST_DIFF(E, n) list.push_back(&prim::activation_of_difference<ActFn::k##E>());
  OF_DIFF_ACTIVATION_FNS(OF_LIST_DIFF)
#undef OF_LIST_DIFF
#define OF_LIST_BINARY(E, n) list.push_back(&prim::binary<BinaryFn::k##E>());
  OF_BINARY_FNS(OF_LIST_BINARY)
#undef OF_LIST_BINARY
  return list;
}

// The primitives instantiated from the templates (kernels are instantiated per backend).
#define OF_UNARY_CLASS(E, n) template class Unary<UnaryFn::k##E>;
OF_UNARY_FNS(OF_UNARY_CLASS)
#undef OF_UNARY_CLASS
#define OF_COMPARE_CLASS(E, n) template class Compare<CompareFn::k##E>;
OF_COMPARE_FNS(OF_COMPARE_CLASS)
#undef OF_COMPARE_CLASS
#define OF_BINARY_CLASS(E, n) template class Binary<BinaryFn::k##E>;
OF_BINARY_FNS(OF_BINARY_CLASS)
#undef OF_BINARY_CLASS

}  // namespace oneflow
