// Every primitive of the core, in one list. A primitive is registered by being declared here;
// `all_primitives()` (primitives.cpp) enumerates them for tests and the graph IR.
#pragma once

#include "oneflow/core/common/op_kinds.h"
#include "oneflow/core/ops/primitive.h"

namespace oneflow {

#define OF_PRIMITIVE_KERNELS                                                                 \
  void compute_cpu(const TensorList& inputs, const TensorList& outputs, const Attrs& attrs)  \
      const override;                                                                        \
  void compute_cuda(const TensorList& inputs, const TensorList& outputs, const Attrs& attrs) \
      const override;

#define OF_VIEW_KERNELS                                                                  \
  void compute_cpu(const TensorList&, const TensorList&, const Attrs&) const override {} \
  void compute_cuda(const TensorList&, const TensorList&, const Attrs&) const override {}

// ---- elementwise (kernels/*/elementwise.*) ----------------------------------------------
// Binary elementwise ops take two inputs of one dtype whose shapes broadcast; the functional
// layer promotes dtypes first.
class BinaryElementwise : public Primitive {
 public:
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
};

class Add final : public BinaryElementwise {
 public:
  const char* name() const override { return "add"; }
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// a - b (b * alpha first when alpha != 1; integer and floating dtypes, not bool).
class Sub final : public BinaryElementwise {
 public:
  const char* name() const override { return "sub"; }
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

class Mul final : public BinaryElementwise {
 public:
  const char* name() const override { return "mul"; }
  PrimTraits traits() const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs) const override;
  OF_PRIMITIVE_KERNELS
};

class Relu final : public Primitive {
 public:
  const char* name() const override { return "relu"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// relu_grad(dy, y) = 0 where y <= 0, else dy (a NaN y passes dy, as PyTorch).
class ReluGrad final : public BinaryElementwise {
 public:
  const char* name() const override { return "relu_grad"; }
  PrimTraits traits() const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// dy * f'(x) in one pass from a saved value v (attr fn, a UnaryFn): the output y = f(x) for
// sigmoid (1 - y) y, tanh 1 - y^2, sqrt 1 / (2 y), rsqrt -y^3 / 2, reciprocal -y^2, exp2
// y ln 2, expm1 y + 1 and tan 1 + y^2; the input x for asin 1 / sqrt(1 - x^2),
// acos -1 / sqrt(1 - x^2), atan 1 / (1 + x^2), asinh 1 / sqrt(x^2 + 1), acosh
// 1 / sqrt(x^2 - 1), atanh 1 / (1 - x^2), log1p 1 / (x + 1), log2 1 / (x ln 2) and log10
// 1 / (x ln 10) (`unary_grad_reads_input`). Not differentiable: the gradient rules use it only
// when no graph of the gradient is built.
class UnaryGrad final : public BinaryElementwise {
 public:
  const char* name() const override { return "unary_grad"; }
  PrimTraits traits() const override;
  OF_PRIMITIVE_KERNELS
};

// pow(a, b) elementwise on floating inputs of one dtype (the functional layer promotes).
class Pow final : public BinaryElementwise {
 public:
  const char* name() const override { return "pow"; }
  PrimTraits traits() const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// where(cond, x, y): cond is bool; x and y share a dtype; all three broadcast together.
class Where final : public Primitive {
 public:
  const char* name() const override { return "where"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs) const override;
  OF_PRIMITIVE_KERNELS
};

// true division: floating inputs (the functional layer casts integers to the default dtype).
class Div final : public BinaryElementwise {
 public:
  const char* name() const override { return "div"; }
  PrimTraits traits() const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- unary math (kernels/cpu/unary_math.cpp, kernels/cuda/unary_math.cu) -----------------
// y = f(x) on floating inputs, same shape and dtype.
class UnaryMath : public Primitive {
 public:
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
};

class Exp final : public UnaryMath {
 public:
  const char* name() const override { return "exp"; }
  PrimTraits traits() const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// The pointwise math functions that share one template: y = f(x). abs/floor/ceil/round accept
// every numeric dtype, the others floating ones (the functional layer casts integers).
template <UnaryFn F>
class Unary final : public UnaryMath {
 public:
  const char* name() const override { return fn_name(F); }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// Comparisons: two inputs of one dtype (promoted by the functional layer), broadcast; the
// output is bool. Not differentiable.
template <CompareFn F>
class Compare final : public Primitive {
 public:
  const char* name() const override { return fn_name(F); }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// Elementwise binary functions (maximum, fmod, floor_divide, atan2, bitwise and logical ops, ...):
// two inputs of one dtype, broadcast; the output has that dtype. The logical functions take bool
// inputs (the functional layer casts); the bitwise ones integers or bool.
template <BinaryFn F>
class Binary final : public BinaryElementwise {
 public:
  const char* name() const override { return fn_name(F); }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// attrs approximate: "none" (erf form) or "tanh".
class Gelu final : public UnaryMath {
 public:
  const char* name() const override { return "gelu"; }
  PrimTraits traits() const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// gelu_grad(dy, x) = dy * gelu'(x); attrs approximate as Gelu. Its own gradient (for
// create_graph) is composite: gelu_grad for dy, dy * gelu''(x) for x.
class GeluGrad final : public BinaryElementwise {
 public:
  const char* name() const override { return "gelu_grad"; }
  PrimTraits traits() const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// The activation functions of op_kinds.h's OF_ACTIVATION_FNS: y = f(x) on a floating input,
// attrs a, b, c (doubles, the function's parameters). The gradient is the fused
// ActivationGrad kernel; under create_graph it is built from differentiable ops instead
// (ops/activation_primitives.cpp).
template <ActFn F>
class Activation final : public UnaryMath {
 public:
  const char* name() const override { return fn_name(F); }
  PrimTraits traits() const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// activation_grad(dy, x) = dy * f'(x), attrs as Activation<F>; not differentiable.
template <ActFn F>
class ActivationGrad final : public BinaryElementwise {
 public:
  const char* name() const override;
  PrimTraits traits() const override;
  OF_PRIMITIVE_KERNELS
};

// f(a - b) for the activations of OF_DIFF_ACTIVATION_FNS (smooth_l1_loss and huber_loss without
// the reduction) in one pass, broadcasting; attrs as Activation<F>. Gradients: dy * f'(a - b)
// and its negation.
template <ActFn F>
class ActivationOfDifference final : public BinaryElementwise {
 public:
  const char* name() const override;
  PrimTraits traits() const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// Softmax over attrs dim of a contiguous floating input.
class Softmax final : public Primitive {
 public:
  const char* name() const override { return "softmax"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// softmax_grad(dy, y) = y * (dy - sum(dy * y, dim)); attrs dim. Differentiable (composite
// rule) for higher-order gradients.
class SoftmaxGrad final : public Primitive {
 public:
  const char* name() const override { return "softmax_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- reductions (kernels/*/reduce.*) -----------------------------------------------------
// attrs: dims (sorted, wrapped, non-empty unless the input is 0-dim), keepdim, dtype (output).
class ReduceSum final : public Primitive {
 public:
  const char* name() const override { return "sum"; }
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// prod / amax / amin over attrs dims (as ReduceSum) and keepdim; the output keeps the dtype.
// amax/amin of an empty reduction raise. Rules in ops/reduce_primitives.cpp.
template <ReduceFn F>
class Reduce final : public Primitive {
 public:
  const char* name() const override;
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// max/min along attrs dim (wrapped) with keepdim: outputs (values, int64 indices of the first
// extreme element; NaN counts as the extreme, as in PyTorch).
template <ReduceFn F>
class ArgReduce final : public Primitive {
 public:
  const char* name() const override;
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// The 2-norm sqrt(sum x^2) of a float32 / float64 input over attrs dims (as ReduceSum) with
// keepdim, in one pass (sums in double for float, as ReduceSum). Its gradient x * dy / norm is zero
// where the norm is zero (PyTorch's rule), where the composite sqrt(sum(x * x)) gives NaN.
class VectorNorm2 final : public Primitive {
 public:
  const char* name() const override { return "linalg_vector_norm"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// Inclusive prefix sum / product along attrs dim (wrapped); same shape and dtype.
class Cumsum final : public Primitive {
 public:
  const char* name() const override { return "cumsum"; }
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

class Cumprod final : public Primitive {
 public:
  const char* name() const override { return "cumprod"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// Sorts along attrs dim (wrapped), attrs descending and stable: outputs (values, int64
// indices). NaN sorts as larger than every number. With attrs k, only the first k positions of
// the sorted order are output (topk); with attrs select too, only position k - 1 (kthvalue,
// dim kept with size 1). Both select rather than sort the whole line.
class Sort final : public Primitive {
 public:
  const char* name() const override { return "sort"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// cummax / cummin along attrs dim: outputs (values, int64 indices of the running extreme; ties
// take the later index, NaN propagates), as PyTorch.
template <ReduceFn F>
class CumExtreme final : public Primitive {
 public:
  const char* name() const override { return F == ReduceFn::kMax ? "cummax" : "cummin"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// The most frequent value along attrs dim (the smallest among equally frequent ones) and the
// index of its last occurrence; attrs keepdim.
class Mode final : public Primitive {
 public:
  const char* name() const override { return "mode"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- linear algebra on LAPACK (ops/linalg_primitives.cpp, kernels/cpu/linalg.cpp) ---------
// Inverse and determinant of square matrices (..., n, n), float32/float64, via LU (getrf).
class Inverse final : public Primitive {
 public:
  const char* name() const override { return "linalg_inv"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

class Det final : public Primitive {
 public:
  const char* name() const override { return "linalg_det"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- layer normalisation (ops/fused_primitives.cpp, kernels/cpu/norm.cpp) ----------------
// layer_norm(x, weight, bias) over the last attrs `size` elements of each row (x contiguous,
// float32/float64; weight and bias of `size` elements): outputs y, mean and rstd per row.
class LayerNorm final : public Primitive {
 public:
  const char* name() const override { return "layer_norm"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// layer_norm_grad(dy, x, mean, rstd, weight) -> dx, dweight, dbias. Not differentiable itself:
// under create_graph, LayerNorm::grad builds the same values from differentiable ops instead.
class LayerNormGrad final : public Primitive {
 public:
  const char* name() const override { return "layer_norm_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// group_norm(x, weight, bias) of a contiguous float32/float64 (N, C, *) input over attrs
// num_groups groups of C / num_groups consecutive channels: y = (x - mean) * rstd * weight[c] +
// bias[c], mean and rstd per (sample, group) as outputs 1 and 2 (N * num_groups); attrs eps.
// group_norm_grad(dy, x, mean, rstd, weight) -> dx, dweight, dbias, not differentiable itself:
// under create_graph GroupNorm::grad builds the same values from differentiable ops. CPU kernels
// in kernels/cpu/norm.cpp, rules in ops/fused_primitives.cpp.
class GroupNorm final : public Primitive {
 public:
  const char* name() const override { return "group_norm"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

class GroupNormGrad final : public Primitive {
 public:
  const char* name() const override { return "group_norm_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// batch_norm(x, weight, bias) in training mode over dim 1 of a contiguous float32/float64 input
// (N, C, *): -> y, mean (C), biased variance (C); attrs eps. batch_norm_grad(dy, x, mean, var,
// weight) -> dx, dweight, dbias. CPU kernels in kernels/cpu/batch_norm.cpp; rules in
// ops/fused_primitives.cpp. Under create_graph the gradient is built from differentiable ops.
class BatchNorm final : public Primitive {
 public:
  const char* name() const override { return "batch_norm"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

class BatchNormGrad final : public Primitive {
 public:
  const char* name() const override { return "batch_norm_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// batch_norm in inference mode: (x, mean, var, weight, bias) -> (x - mean) / sqrt(var + eps) *
// weight + bias, the per-channel vectors (C) broadcast over dim 1 of a contiguous float32/float64
// (N, C, *) input; attrs eps. One pass on CPU (kernels/cpu/batch_norm.cpp); the gradient (for
// every input) is built from differentiable ops.
class BatchNormInference final : public Primitive {
 public:
  const char* name() const override { return "batch_norm_inference"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// log_softmax along attrs dim (contiguous floating input), and its backward
// log_softmax_grad(dy, y) = dy - exp(y) * sum(dy, dim) (differentiable, composite rule). Rules in
// ops/fused_primitives.cpp, CPU kernels next to softmax's.
class LogSoftmax final : public Primitive {
 public:
  const char* name() const override { return "log_softmax"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

class LogSoftmaxGrad final : public Primitive {
 public:
  const char* name() const override { return "log_softmax_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- fused optimizer updates (ops/fused_primitives.cpp, kernels/cpu/optim.cpp) -----------
// One pass over a parameter and its state, in place, under no autograd: the kernels behind
// flow.optim's fused path. Inputs are contiguous tensors of one floating dtype and shape.
// adam_update(param, grad, exp_avg, exp_avg_sq): attrs lr, beta1, beta2, eps, weight_decay,
// decoupled (AdamW), bias_correction1, bias_correction2 (1 - beta^step, or 1).
class AdamUpdate final : public Primitive {
 public:
  const char* name() const override { return "adam_update"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// sgd_update(param, grad[, momentum_buffer]): attrs lr, momentum, dampening, weight_decay,
// nesterov, first (the buffer starts as the gradient).
class SgdUpdate final : public Primitive {
 public:
  const char* name() const override { return "sgd_update"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- gather, scatter, cat (ops/gather_primitives.cpp, kernels/cpu/gather.cpp) ------------
// out[..i..] = x[..index[..i..]..] along attrs dim; index is int64 with x's rank and sizes no
// larger than x's outside dim (checked by the functional layer, as are index bounds).
class Gather final : public Primitive {
 public:
  const char* name() const override { return "gather"; }
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// out = copy of self, then out[..index[..i..]..] = src[..i..] along attrs dim, or combined with
// attrs reduce: "none" (assign), "add", "multiply", "amax", "amin". Inputs (self, index, src).
class Scatter final : public Primitive {
 public:
  const char* name() const override { return "scatter"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// Concatenation along attrs dim of inputs of one dtype and rank whose other sizes agree.
class Cat final : public Primitive {
 public:
  const char* name() const override { return "cat"; }
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// Binary search of sorted sequences (kernels/cpu/index.cpp). Inputs: the boundaries, sorted
// along their last dim (1-D, or the values' leading dims then the boundaries), the values, of
// the boundaries' dtype, and optionally an int64 sorter (the permutation that sorts each line of
// boundaries). Output: for each value the first position whose boundary is >= it, or with attrs
// right the first whose boundary is > it; int64, or int32 with attrs out_int32. NaN follows
// every number and equals itself, as in sort and NumPy (the same answers as PyTorch unless the
// boundaries hold NaN, where PyTorch's depend on its probe order).
class SearchSorted final : public Primitive {
 public:
  const char* name() const override { return "searchsorted"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// Histogram of a floating tensor into attrs bins equal bins over [attrs lo, attrs hi] (hi > lo),
// as torch.histc: bin int((x - lo) * bins / (hi - lo)) computed in the input's type, x == hi
// in the last bin, values outside the range and NaN skipped. Output (bins,) of the input's dtype.
class Histc final : public Primitive {
 public:
  const char* name() const override { return "histc"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- linear algebra (kernels/cpu/onednn/matmul.cpp, kernels/cuda/matmul.cpp) -------------
// [b, m, k] x [b, k, n] -> [b, m, n], or the same without the batch dim; any strides.
class Matmul final : public Primitive {
 public:
  const char* name() const override { return "matmul"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  bool reads_saved_input(size_t i, const std::vector<bool>& needs) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- copies and creation (kernels/*/copy.*, kernels/*/random.*) --------------------------
// Copies any strided input into a new contiguous tensor; attrs dtype and device choose a cast
// and a device transfer.
class Copy final : public Primitive {
 public:
  const char* name() const override { return "copy"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// Reverses the order of the elements along attrs dims (wrapped, distinct) into a new
// contiguous tensor: a strided copy from a view of the input with those strides negated.
class Flip final : public Primitive {
 public:
  const char* name() const override { return "flip"; }
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// The lower (attr upper false: tril) or upper (true: triu) triangle of the matrices in the last
// two dims, relative to attr diagonal (int64), into a new contiguous tensor; the rest is zero.
class Triangle final : public Primitive {
 public:
  const char* name() const override { return "triangle"; }
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// No inputs; attrs shape, dtype, device, value (double).
class Fill final : public Primitive {
 public:
  const char* name() const override { return "fill"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// No inputs; attrs shape, dtype, device, mean, std, seed, offset (Philox counter base).
class RandomNormal final : public Primitive {
 public:
  const char* name() const override { return "normal"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- views (no kernels: outputs alias input 0) -------------------------------------------
// attrs perm: a permutation of the dims.
class Permute final : public Primitive {
 public:
  const char* name() const override { return "permute"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_VIEW_KERNELS
};

// attrs shape: the broadcast target (same rank or more leading dims).
class Expand final : public Primitive {
 public:
  const char* name() const override { return "expand"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_VIEW_KERNELS
};

// attrs shape: a new shape for a contiguous input (the functional layer copies otherwise).
class View final : public Primitive {
 public:
  const char* name() const override { return "view"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_VIEW_KERNELS
};

// attrs starts, steps, sizes: one per input dim (steps > 0). Keeps the rank.
class Slice final : public Primitive {
 public:
  const char* name() const override { return "slice"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_VIEW_KERNELS
};

// Removes the size-1 dims listed in attrs dims (sorted).
class Squeeze final : public Primitive {
 public:
  const char* name() const override { return "squeeze"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_VIEW_KERNELS
};

// Inserts a size-1 dim at attrs dim (in [0, ndim]).
class Unsqueeze final : public Primitive {
 public:
  const char* name() const override { return "unsqueeze"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_VIEW_KERNELS
};

// A view with any size/stride/storage offset (attrs size, stride, offset: absolute, on input
// 0's storage). attrs grad_size/grad_stride/grad_offset place the same elements on a
// contiguous tensor of the input's shape; empty grad_stride means no gradient rule (a strided
// input given to as_strided).
class AsStrided final : public Primitive {
 public:
  const char* name() const override { return "as_strided"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_VIEW_KERNELS
};

#undef OF_VIEW_KERNELS

// ---- scatter into zeros and in-place assignment (kernels/*/copy.*) -----------------------
// The gradient of Slice: zeros of attrs shape with the slice (attrs starts, steps) set to the
// input.
class SliceGrad final : public Primitive {
 public:
  const char* name() const override { return "slice_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// assign(dst, src): writes src (same dtype and device, broadcast to dst's shape) into dst in
// place -- Tensor.copy_ and __setitem__.
class Assign final : public Primitive {
 public:
  const char* name() const override { return "copy_"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// strided_assign_(base, src): writes src into the region of base named by attrs size/stride/
// offset (absolute, on base's storage), in place on base -- the write behind an in-place op on a
// view of a tensor that requires grad (dispatch.cpp, Note [In-place on views]). attrs rel_offset
// is offset minus base's offset: the region on a contiguous tensor of base's shape (gradients).
// Its kernels are assign's, on a view of the output.
class StridedAssign final : public Primitive {
 public:
  const char* name() const override { return "strided_assign_"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs) const override;
  void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) const override;
};

// The gradient of AsStrided: zeros of attrs shape, then dy added at the positions attrs
// grad_size/grad_stride/grad_offset name (repeats accumulate: unfold with overlapping windows).
class AsStridedGrad final : public Primitive {
 public:
  const char* name() const override { return "as_strided_grad"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// Draws 0/1 with probability input (floating, in [0, 1]); attrs seed, offset.
class Bernoulli final : public Primitive {
 public:
  const char* name() const override { return "bernoulli"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// ---- advanced indexing (kernels/*/index.*) ------------------------------------------------
// x[i_0, ..., i_{k-1}] on dims [dim, dim + k) of a contiguous x; the k index tensors are int64,
// contiguous and of one shape B. out = x.shape[:dim] + B + x.shape[dim + k:]. attrs dim.
class IndexGather final : public Primitive {
 public:
  const char* name() const override { return "index"; }
  uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const override;
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// In place on a contiguous dst: dst[i_0, ..., i_{k-1}] = value (or += with attrs accumulate);
// inputs (dst, value, i_0, ..., i_{k-1}), value contiguous with the gathered shape. attrs dim.
class IndexPut final : public Primitive {
 public:
  const char* name() const override { return "index_put_"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  TensorList grad(const GradContext& ctx, const TensorList& out_grads) const override;
  OF_PRIMITIVE_KERNELS
};

// No inputs; attrs n, start, step (double), dtype, device: out[i] = start + i * step.
class Arange final : public Primitive {
 public:
  const char* name() const override { return "arange"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// No inputs; attrs shape, dtype, device, low, high, seed, offset. Floating dtypes: uniform in
// [low, high); integer dtypes: integers in [low, high).
class RandomUniform final : public Primitive {
 public:
  const char* name() const override { return "uniform"; }
  PrimTraits traits() const override;
  std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const override;
  OF_PRIMITIVE_KERNELS
};

// The single instance of each primitive.
namespace prim {
const Add& add();
const Sub& sub();
const Mul& mul();
const Relu& relu();
const ReluGrad& relu_grad();
const UnaryGrad& unary_grad();
const Div& div();
const Pow& pow();
const Where& where();
template <UnaryFn F>
const Unary<F>& unary();
template <CompareFn F>
const Compare<F>& compare();
template <BinaryFn F>
const Binary<F>& binary();
template <ReduceFn F>
const Reduce<F>& reduce();
template <ReduceFn F>
const ArgReduce<F>& arg_reduce();
const VectorNorm2& vector_norm2();
const Cumsum& cumsum();
template <ReduceFn F>
const CumExtreme<F>& cum_extreme();
const Mode& mode();
const Inverse& inverse();
const Det& det();
const Cumprod& cumprod();
const Sort& sort();
const Flip& flip();
const Triangle& triangle();
const Gather& gather();
const AdamUpdate& adam_update();
const LayerNorm& layer_norm();
const BatchNorm& batch_norm();
const BatchNormGrad& batch_norm_grad();
const BatchNormInference& batch_norm_inference();
const LogSoftmax& log_softmax();
const LogSoftmaxGrad& log_softmax_grad();
const LayerNormGrad& layer_norm_grad();
const GroupNorm& group_norm();
const GroupNormGrad& group_norm_grad();
const SgdUpdate& sgd_update();
const Scatter& scatter();
const Cat& cat();
const SearchSorted& search_sorted();
const Histc& histc();
const Exp& exp();
const Gelu& gelu();
template <ActFn F>
const Activation<F>& activation();
template <ActFn F>
const ActivationGrad<F>& activation_grad();
template <ActFn F>
const ActivationOfDifference<F>& activation_of_difference();
const GeluGrad& gelu_grad();
const Softmax& softmax();
const SoftmaxGrad& softmax_grad();
const ReduceSum& reduce_sum();
const Matmul& matmul();
const Copy& copy();
const Fill& fill();
const RandomNormal& random_normal();
const Permute& permute();
const Expand& expand();
const View& view();
const Slice& slice();
const AsStrided& as_strided();
const AsStridedGrad& as_strided_grad();
const Bernoulli& bernoulli();
const Squeeze& squeeze();
const Unsqueeze& unsqueeze();
const SliceGrad& slice_grad();
const Assign& assign();
const StridedAssign& strided_assign();
const Arange& arange();
const IndexGather& index_gather();
const IndexPut& index_put();
const RandomUniform& random_uniform();
}  // namespace prim

std::vector<const Primitive*> all_primitives();

}  // namespace oneflow
