// Enumerations that name the members of primitive families (shared by ops/, functional/, the
// kernels and the bindings). Each family is one X-macro list, so adding a member is one line here
// plus its value rule (kernels/common/values.h) and gradient rule (ops/primitives.cpp).
#pragma once

#include <cstdint>

namespace oneflow {

// Pointwise math functions of the Unary<F> primitive: X(Enum, public name). In three parts,
// whose CPU kernels compile in separate translation units (kernels/cpu/elementwise_fns.h).
#define OF_UNARY_FNS_1(X) \
  X(Abs, abs)             \
  X(Sqrt, sqrt)           \
  X(Rsqrt, rsqrt)         \
  X(Log, log)             \
  X(Log1p, log1p)         \
  X(Sin, sin)             \
  X(Cos, cos)             \
  X(Tanh, tanh)           \
  X(Sigmoid, sigmoid)     \
  X(Floor, floor)         \
  X(Ceil, ceil)           \
  X(Round, round)
#define OF_UNARY_FNS_2(X)   \
  X(Reciprocal, reciprocal) \
  X(Trunc, trunc)           \
  X(Sign, sign)             \
  X(Neg, neg)               \
  X(Exp2, exp2)             \
  X(Expm1, expm1)           \
  X(Log2, log2)             \
  X(Log10, log10)           \
  X(Tan, tan)               \
  X(Asin, asin)             \
  X(Acos, acos)             \
  X(Atan, atan)
#define OF_UNARY_FNS_3(X) \
  X(Sinh, sinh)           \
  X(Cosh, cosh)           \
  X(Asinh, asinh)         \
  X(Acosh, acosh)         \
  X(Atanh, atanh)         \
  X(Erf, erf)             \
  X(Erfc, erfc)           \
  X(Erfinv, erfinv)       \
  X(Lgamma, lgamma)       \
  X(Digamma, digamma)     \
  X(Trigamma, trigamma)   \
  X(BitwiseNot, bitwise_not)
#define OF_UNARY_FNS(X) OF_UNARY_FNS_1(X) OF_UNARY_FNS_2(X) OF_UNARY_FNS_3(X)

enum class UnaryFn : int8_t {
#define OF_ENUM_MEMBER(E, n) k##E,
  OF_UNARY_FNS(OF_ENUM_MEMBER)
};

// Activation functions of the Activation<F> primitive (kernels/common/activations.h): y = f(x)
// with up to three parameters a, b, c, and a fused gradient kernel dx = dy * f'(x).
//   leaky_relu: a = negative slope.          elu: a = alpha, b = scale, c = input scale
//   softplus: a = beta, b = threshold.       hardtanh: a = min, b = max
//   hardshrink, softshrink: a = lambda.      threshold: a = threshold, b = value
//   nan_to_num: a, b, c replace NaN, +inf, -inf.  clamp: a = min, b = max (inclusive gradient)
//   logistic, absolute: sigmoid and abs, whose forward runs as Unary; their fused gradients.
#define OF_ACTIVATION_FNS(X)  \
  X(LeakyRelu, leaky_relu)    \
  X(Elu, elu)                 \
  X(Silu, silu)               \
  X(Mish, mish)               \
  X(Softplus, softplus)       \
  X(Hardtanh, hardtanh)       \
  X(Hardsigmoid, hardsigmoid) \
  X(Hardswish, hardswish)     \
  X(Logsigmoid, logsigmoid)   \
  X(Softsign, softsign)       \
  X(Hardshrink, hardshrink)   \
  X(Softshrink, softshrink)   \
  X(Tanhshrink, tanhshrink)   \
  X(Threshold, threshold)     \
  X(NanToNum, nan_to_num)     \
  X(Clamp, clamp)             \
  X(Sigmoid, logistic)        \
  X(SmoothL1, smooth_l1)      \
  X(Huber, huber)             \
  X(Frac, frac)               \
  X(Abs, absolute)

// The activations that also run on a difference, f(a - b) in one pass
// (ActivationOfDifference<F>): the pointwise losses.
#define OF_DIFF_ACTIVATION_FNS(X) X(SmoothL1, smooth_l1) X(Huber, huber)

// Elementwise binary functions of the Binary<F> primitive (inputs and output of one dtype).
// prelu(x, w) = x > 0 ? x : w x. In two parts, whose CPU kernels compile in separate translation
// units (kernels/cpu/elementwise_fns.h).
#define OF_BINARY_FNS_1(X)     \
  X(Maximum, maximum)          \
  X(Minimum, minimum)          \
  X(Fmax, fmax)                \
  X(Fmin, fmin)                \
  X(Fmod, fmod)                \
  X(Remainder, remainder)      \
  X(FloorDivide, floor_divide) \
  X(TruncDivide, trunc_divide) \
  X(Atan2, atan2)
#define OF_BINARY_FNS_2(X)           \
  X(Prelu, prelu)                    \
  X(BitwiseAnd, bitwise_and)         \
  X(BitwiseOr, bitwise_or)           \
  X(BitwiseXor, bitwise_xor)         \
  X(LeftShift, bitwise_left_shift)   \
  X(RightShift, bitwise_right_shift) \
  X(LogicalAnd, logical_and)         \
  X(LogicalOr, logical_or)           \
  X(LogicalXor, logical_xor)
#define OF_BINARY_FNS(X) OF_BINARY_FNS_1(X) OF_BINARY_FNS_2(X)

enum class BinaryFn : int8_t { OF_BINARY_FNS(OF_ENUM_MEMBER) };

enum class ActFn : int8_t { OF_ACTIVATION_FNS(OF_ENUM_MEMBER) };

// Comparisons of the Compare<F> primitive.
#define OF_COMPARE_FNS(X) X(Eq, eq) X(Ne, ne) X(Lt, lt) X(Le, le) X(Gt, gt) X(Ge, ge)

enum class CompareFn : int8_t { OF_COMPARE_FNS(OF_ENUM_MEMBER) };
#undef OF_ENUM_MEMBER

#define OF_CASE_NAME(E, n) \
  case Fn::k##E:           \
    return #n;
constexpr const char* fn_name(UnaryFn f) {
  using Fn = UnaryFn;
  switch (f) { OF_UNARY_FNS(OF_CASE_NAME) }
  return "unary";
}
constexpr const char* fn_name(BinaryFn f) {
  using Fn = BinaryFn;
  switch (f) { OF_BINARY_FNS(OF_CASE_NAME) }
  return "binary";
}
constexpr const char* fn_name(ActFn f) {
  using Fn = ActFn;
  switch (f) { OF_ACTIVATION_FNS(OF_CASE_NAME) }
  return "activation";
}
constexpr const char* fn_name(CompareFn f) {
  using Fn = CompareFn;
  switch (f) { OF_COMPARE_FNS(OF_CASE_NAME) }
  return "compare";
}
#undef OF_CASE_NAME

// Reductions other than sum, over a set of dims (Reduce<F>) or one dim with indices
// (ArgReduce<F>).
enum class ReduceFn : int8_t { kProd, kMax, kMin };

// Integer inputs keep their dtype (the others compute in the floating result type).
constexpr bool keeps_integers(UnaryFn k) {
  return k == UnaryFn::kAbs || k == UnaryFn::kFloor || k == UnaryFn::kCeil ||
         k == UnaryFn::kRound || k == UnaryFn::kTrunc || k == UnaryFn::kSign ||
         k == UnaryFn::kNeg || k == UnaryFn::kBitwiseNot;
}

// The functions whose one-pass gradient (UnaryGrad) reads the input x; sigmoid, tanh and sqrt
// read the output.
constexpr bool unary_grad_reads_input(UnaryFn k) {
  return k == UnaryFn::kAsin || k == UnaryFn::kAcos || k == UnaryFn::kAtan ||
         k == UnaryFn::kAsinh || k == UnaryFn::kAcosh || k == UnaryFn::kAtanh ||
         k == UnaryFn::kLog1p || k == UnaryFn::kLog2 || k == UnaryFn::kLog10;
}

// The functions whose one-pass float32 CPU gradient (UnaryGrad) applies a vector function to
// the saved value: erf and erfc exp(-x^2), sin cos x and cos sin x from the input; erfinv
// exp(y^2) from the output.
constexpr bool unary_grad_takes_vector_fn(UnaryFn k) {
  return k == UnaryFn::kErf || k == UnaryFn::kErfc || k == UnaryFn::kSin || k == UnaryFn::kCos ||
         k == UnaryFn::kErfinv;
}

// Functions defined on integers and bool only.
constexpr bool bitwise_fn(BinaryFn k) {
  return k == BinaryFn::kBitwiseAnd || k == BinaryFn::kBitwiseOr || k == BinaryFn::kBitwiseXor;
}
// Shifts: integers only (not bool).
constexpr bool shift_fn(BinaryFn k) {
  return k == BinaryFn::kLeftShift || k == BinaryFn::kRightShift;
}
constexpr bool logical_fn(BinaryFn k) {
  return k == BinaryFn::kLogicalAnd || k == BinaryFn::kLogicalOr || k == BinaryFn::kLogicalXor;
}

}  // namespace oneflow
