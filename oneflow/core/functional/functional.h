// The C++ functional API (oneflow._C): public ops that validate arguments, promote dtypes,
// broadcast and compose primitives through the dispatcher. flow.*, flow.nn.functional.* and
// Tensor.* are bound to these. Errors name the op as the user called it.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "oneflow/core/common/attrs.h"
#include "oneflow/core/common/op_kinds.h"
#include "oneflow/core/framework/tensor.h"

namespace oneflow {

// A Python number passed where a tensor may go; promotes as a "wrapped number" (PyTorch's rule:
// it never raises a tensor operand's dtype within the same category).
struct Scalar {
  enum class Kind : int8_t { kBool, kInt, kFloat } kind = Kind::kInt;
  int64_t i = 0;
  double f = 0.0;

  Scalar() = default;
  static Scalar from_bool(bool v) { return Scalar{Kind::kBool, v ? 1 : 0, v ? 1.0 : 0.0}; }
  static Scalar from_int(int64_t v) { return Scalar{Kind::kInt, v, static_cast<double>(v)}; }
  static Scalar from_double(double v) { return Scalar{Kind::kFloat, static_cast<int64_t>(v), v}; }
  double to_double() const { return kind == Kind::kFloat ? f : static_cast<double>(i); }
  // The dtype a wrapped number of this kind takes: bool, int64, or the default float dtype.
  DType dtype() const;

 private:
  Scalar(Kind k, int64_t iv, double fv) : kind(k), i(iv), f(fv) {}
};

// A counter-based (Philox) random generator: a seed and the next unused counter. Every random
// op reserves a block of counters, so results depend only on (seed, offset), never on threads.
class Generator {
 public:
  explicit Generator(uint64_t seed);
  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const;
  // Reserves `n` counter values and returns the first.
  uint64_t reserve(uint64_t n);
  // (seed, offset), for get_rng_state / set_rng_state.
  std::pair<uint64_t, uint64_t> state() const;
  void set_state(uint64_t seed, uint64_t offset);

 private:
  mutable std::mutex mu_;
  uint64_t seed_, offset_ = 0;
};
std::shared_ptr<Generator> default_generator();

// Placement of a global tensor ("cpu:[0,1]"); empty means a local tensor. `generator` is used
// by random creation ops (null: the default generator).
struct CreationOptions {
  DType dtype;
  Device device;
  std::string placement;
  std::shared_ptr<Generator> generator = nullptr;
};

namespace functional {

// ---- type promotion ----
// PyTorch's result_type over tensor operands (by dim > zero-dim) and wrapped scalars.
DType result_type(const std::vector<Tensor>& tensors, const std::vector<Scalar>& scalars = {});
// PyTorch's rule for writing a result of dtype `from` into a tensor of dtype `to` (in-place ops):
// not floating into integral, not non-bool into bool; narrowing within a kind is allowed.
bool can_cast(DType from, DType to);

// ---- elementwise ----
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = Scalar::from_int(1));
Tensor add(const Tensor& a, Scalar b, Scalar alpha = Scalar::from_int(1));
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = Scalar::from_int(1));
Tensor sub(const Tensor& a, Scalar b, Scalar alpha = Scalar::from_int(1));
Tensor rsub(const Tensor& a, Scalar b, Scalar alpha = Scalar::from_int(1));  // b - alpha a
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, Scalar b);
Tensor neg(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor relu_grad(const Tensor& dy, const Tensor& y);
// dy * f'(x) from y = f(x) for fn sigmoid, tanh or sqrt (one pass; not differentiable).
Tensor unary_grad(UnaryFn fn, const Tensor& dy, const Tensor& y);
// True division; integer inputs divide as the default float dtype.
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, Scalar b);
Tensor rdiv(const Tensor& a, Scalar b);  // b / a
Tensor exp(const Tensor& x);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, Scalar b);
Tensor rpow(const Tensor& a, Scalar b);  // b ** a
// Elementwise max/min of two tensors, and clamping to optional bounds (composites of where).
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);
// abs/floor/ceil/round keep integer dtypes; the others compute integers in the default dtype.
Tensor unary(UnaryFn fn, const Tensor& x);
// round to `decimals` decimal places (negative: to tens, hundreds, ...), as PyTorch:
// round(x * 10^d) / 10^d in x's floating dtype; decimals 0 is the unary round.
Tensor round(const Tensor& x, int64_t decimals);
// Elementwise binary functions. Operands promote like add; the logical functions compare as
// bool, atan2 computes integers in the default float dtype; integer division by zero raises.
Tensor binary(BinaryFn fn, const Tensor& a, const Tensor& b);
Tensor binary(BinaryFn fn, const Tensor& a, Scalar b);
Tensor binary(BinaryFn fn, Scalar a, const Tensor& b);
inline Tensor logical_or(const Tensor& a, const Tensor& b) {
  return binary(BinaryFn::kLogicalOr, a, b);
}
inline Tensor logical_and(const Tensor& a, const Tensor& b) {
  return binary(BinaryFn::kLogicalAnd, a, b);
}
Tensor logical_not(const Tensor& x);
// rounding_mode: "" (true division), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode);
// Comparisons (promoting like add), bool results.
Tensor compare(CompareFn fn, const Tensor& a, const Tensor& b);
Tensor compare(CompareFn fn, const Tensor& a, Scalar b);
inline Tensor gt(const Tensor& a, Scalar b) { return compare(CompareFn::kGt, a, b); }
inline Tensor lt(const Tensor& a, Scalar b) { return compare(CompareFn::kLt, a, b); }
// x where cond else y; x and y promote together (tensors or numbers).
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);
Tensor where(const Tensor& cond, const Tensor& x, Scalar y);
Tensor where(const Tensor& cond, Scalar x, const Tensor& y);
Tensor where(const Tensor& cond, Scalar x, Scalar y);
// approximate: "none" or "tanh"
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor gelu_grad(const Tensor& dy, const Tensor& x, const std::string& approximate);
// The activation functions of op_kinds.h (parameters a, b, c as listed there) on a floating
// input, and their fused gradient dy * f'(x).
Tensor activation(ActFn fn, const Tensor& x, double a = 0, double b = 0, double c = 0);
Tensor activation_grad(ActFn fn, const Tensor& dy, const Tensor& x, const Attrs& attrs);
// f(a - b) in one pass for the functions of OF_DIFF_ACTIVATION_FNS, a and b promoted to a
// common floating dtype and broadcast.
Tensor activation_of_difference(ActFn fn, const Tensor& a, const Tensor& b, double p0 = 0,
                                double p1 = 0, double p2 = 0);
Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor softmax_grad(const Tensor& dy, const Tensor& y, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
// In place: self = self + alpha * other; returns self.
Tensor add_(const Tensor& self, const Tensor& other, Scalar alpha = Scalar::from_int(1));
Tensor add_(const Tensor& self, Scalar other, Scalar alpha = Scalar::from_int(1));
Tensor mul_(const Tensor& self, const Tensor& other);
Tensor mul_(const Tensor& self, Scalar other);

// ---- reductions ----
// dims empty: all dims. dtype: output dtype (default: int64 for integers/bool, else the input's).
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
// dims empty: all dims; floating (or dtype=) only, like PyTorch.
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
// prod over one dim or all (dim empty); dtype as sum's.
Tensor prod(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
// amax/amin over dims (empty: all).
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// sqrt(sum(x * x)) over dims (every dim when empty) in one pass; floating x.
Tensor vector_norm2(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// max/min along one dim: (values, int64 indices).
std::pair<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim = false);
// Index of the first max/min, over the flattened input when dim is empty.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// Logical all/any over dims (empty: all), bool result.
Tensor all(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor any(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
// cummax/cummin along dim: (values, int64 indices).
std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim);
// Most frequent value along dim and the index of its last occurrence.
std::pair<Tensor, Tensor> mode(const Tensor& x, int64_t dim = -1, bool keepdim = false);
// Inverse and determinant of (batches of) square float matrices.
Tensor inverse(const Tensor& x);
Tensor det(const Tensor& x);
// Layer normalisation over the last `size` elements of each row (float32/float64 on the CPU).
// Training-mode batch norm over dim 1 of a float32 input: (y, batch mean, biased batch variance).
TensorList batch_norm_train(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);
Tensor batch_norm_inference(const Tensor& x, const Tensor& mean, const Tensor& var,
                            const Tensor& weight, const Tensor& bias, double eps);
Tensor layer_norm(const Tensor& x, int64_t size, const Tensor& weight, const Tensor& bias,
                  double eps);
// Group normalisation of a float32/float64 (N, C, *) input, one fused kernel on CPU; weight and
// bias of C elements or null.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps);
// Fused optimizer steps, in place on the parameter and its state (see AdamUpdate/SgdUpdate).
void adam_update_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                  const Tensor& exp_avg_sq, double lr, double beta1, double beta2, double eps,
                  double weight_decay, bool decoupled, double bias_correction1,
                  double bias_correction2);
void sgd_update_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, double lr,
                 double momentum, double dampening, double weight_decay, bool nesterov, bool first);
// (values, int64 indices).
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
// The k largest (or smallest) values along dim in sorted order, with their indices.
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest);
// The k-th smallest value along dim (1-based) and its index; dim is kept with size 1. NaN is
// larger than every number; with nan_wins (median), a line with a NaN gives its first NaN.
std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool nan_wins = false);
// out[i][j] = x[index[i][j]][j] (dim 0) and so on; index int64 (or int32) of x's rank.
// With `target_of` (a loss's name), an index out of range is that loss's class-index target:
// IndexError "nll_loss: target 7 is out of bounds ...", raised by the kernel.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index, const std::string& target_of = "");
// The insertion positions of values in boundaries sorted along their last dim (PyTorch's
// searchsorted): the two promote to one dtype; sorter (optional, int64) is the permutation that
// sorts each line of boundaries; int64 positions, or int32 with out_int32.
// torch.histc over [lo, hi] (hi > lo, found by the caller when the user gave min == max).
Tensor histc(const Tensor& x, int64_t bins, double lo, double hi);
Tensor searchsorted(const Tensor& boundaries, const Tensor& values, bool right = false,
                    bool out_int32 = false, const Tensor& sorter = nullptr);
// A copy of self with src scattered along dim at index; reduce: "none", "add", "multiply",
// "amax", "amin".
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const std::string& reduce = "none");
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value,
               const std::string& reduce = "none");
// Concatenation along dim; dtypes promote; 1-D empty tensors are skipped, as in PyTorch.
Tensor cat(const TensorList& xs, int64_t dim = 0);
// Sums `x` down to `shape` (the inverse of broadcasting it).
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- linear algebra ----
Tensor matmul(const Tensor& a, const Tensor& b);
// x @ weight^T + bias (bias may be undefined; a 1-D weight is used as it is), as F.linear;
// on the CPU the bias of a float32/float64 product is fused into its GEMM.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// ---- views and copies ----
Tensor permute(const Tensor& x, const std::vector<int64_t>& perm);
// The elements along `dims` in reverse order, as a new contiguous tensor.
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims);
// tril (upper false) / triu (upper true): the triangle on and below / above diagonal.
Tensor triangle(const Tensor& x, int64_t diagonal, bool upper);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor view(const Tensor& x, const Shape& shape);
Tensor contiguous(const Tensor& x);
// Python-slice semantics on one dim: start/stop clamp, negative ones count from the end,
// step > 0.
Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> stop, int64_t step = 1);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
// dims empty: every size-1 dim.
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& dims = {});
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
// A view of x's storage (offset in elements; default: x's own). Differentiable when x is
// contiguous.
Tensor as_strided(const Tensor& x, const Shape& size, const Strides& stride,
                  std::optional<int64_t> storage_offset);
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// Windows of `size` elements every `step` along `dim`, as a new last dim (a view).
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step);
// In place: dst = src (broadcast, cast, moved to dst's device); returns dst.
Tensor copy_(const Tensor& dst, const Tensor& src);
Tensor fill_(const Tensor& dst, Scalar value);
// Advanced indexing on consecutive dims [dim, dim + k) with k index tensors (int64 or int32,
// broadcast together; negative indices count from the end). Out-of-range indices raise
// IndexError.
Tensor index(const Tensor& x, const TensorList& indices, int64_t dim);
// In place: x[indices] = value (broadcast), or += with accumulate; returns x.
Tensor index_put_(const Tensor& x, const TensorList& indices, int64_t dim, const Tensor& value,
                  bool accumulate);
// The primitives behind them, for prepared operands (see IndexGather / IndexPut).
Tensor index_gather_raw(const Tensor& x, const TensorList& indices, int64_t dim);
Tensor index_put_raw(const Tensor& dst, const Tensor& value, const TensorList& indices, int64_t dim,
                     bool accumulate);
// Indices of the true elements of a bool tensor, one int64 tensor per dim (as_tuple form).
TensorList nonzero(const Tensor& mask);  // one int64 tensor of coordinates per dim
Tensor argwhere(const Tensor& mask);     // [count, ndim] coordinates
Tensor flatnonzero(const Tensor& mask);  // [count] flat (row-major) positions
Tensor masked_select(const Tensor& x, const Tensor& mask);
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
// A copy cast to dtype and moved to device; returns x itself when nothing changes and !copy.
Tensor to(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device,
          bool copy = false);
Tensor clone(const Tensor& x);
Tensor detach(const Tensor& x);

// ---- creation ----
Tensor full(const Shape& shape, Scalar value, const CreationOptions& opts);
Tensor empty(const Shape& shape, const CreationOptions& opts);
Tensor zeros(const Shape& shape, const CreationOptions& opts);
Tensor ones(const Shape& shape, const CreationOptions& opts);
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
Tensor randn(const Shape& shape, const CreationOptions& opts);
Tensor rand(const Shape& shape, const CreationOptions& opts);
Tensor randint(int64_t low, int64_t high, const Shape& shape, const CreationOptions& opts);
Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype, Device device);
Tensor linspace(double start, double end, int64_t steps, const CreationOptions& opts);
Tensor normal(double mean, double std, const Shape& shape, const CreationOptions& opts);
Tensor bernoulli(const Tensor& p, const std::shared_ptr<Generator>& generator = nullptr);
Tensor randperm(int64_t n, const CreationOptions& opts);
Tensor multinomial(const Tensor& weights, int64_t num_samples, bool replacement,
                   const std::shared_ptr<Generator>& generator = nullptr);
// A 0-dim tensor holding `s` with the given dtype on `device`.
Tensor scalar_tensor(Scalar s, DType dtype, Device device);

}  // namespace functional

// The default generator's seed (DESIGN.md section 4).
void manual_seed(uint64_t seed);
uint64_t initial_seed();

}  // namespace oneflow
