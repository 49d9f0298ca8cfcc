// Note [Eager global dispatch]: an op on global tensors is the primitive applied to the global
// values. The dispatcher picks an sbp signature -- the layout each input must have and the
// layout of the outputs -- so that the primitive applied to this rank's shards gives this rank's
// shard of the result; boxes inputs whose layout differs (global.h); runs the primitive on the
// shards through eager local mode, with autograd off; and wraps the shards as global outputs.
// Autograd is recorded on the global tensors, so gradients are computed by global ops too.
//
// Signatures (an input may also be a local 0-d tensor, a Python number, which acts as
// broadcast):
// - elementwise: split(d) when an input is split along an output dim it does not broadcast
//   (inputs broadcast along d are broadcast); partial_sum kept by the linear ops (add/sub of
//   partial sums; mul/div of one partial sum by broadcast values; neg); broadcast otherwise;
// - matmul: (split(m), B) -> split(m), (B, split(n)) -> split(n), batch splits, a split of
//   the contracted dim k on either side -> partial_sum (the other side sliced along k),
//   (P, B) / (B, P) -> P; a bias is broadcast, or split with the
//   output's columns (with partial sums it would be added once per rank: all broadcast);
// - sum: split along a reduced dim -> partial_sum, along a kept dim -> that dim's split; amax
//   and amin likewise except that a reduced split is gathered first;
// - softmax, log_softmax and their gradients: a split along another dim than the softmax's;
// - cat of pieces with one layout: partial sums, or splits along another dim;
// - nll_loss (and its gradient) summed over rows split along the batch: partial sums of the
//   losses and weights (the functional layer divides their all-reduced pair for the mean);
// - bernoulli keeps a split (each rank draws its rows' numbers; a broadcast result is rank 0's
//   numbers on every rank);
// - copy (clone, contiguous, casts): any layout kept, except partial sums cast to an integer
//   type; copy_ and setitem (assign) as elementwise ops;
// - views: permute, expand, unsqueeze, squeeze, view/reshape and slice carry a split to the
//   dim it becomes (a reshape only when the dims before the split one are unchanged and the
//   split dim stays, merges with the next ones or is factored, the last two when every rank
//   holds as many rows of the coarser dim; a slice
//   only when it keeps the split dim whole; the sections of split() along another dim) and
//   keep broadcast and partial_sum (views are
//   linear); a view that needed boxing is a copy, and in-place writes into it raise;
// - per-sample primitives (convolutions, pools, layer/group norm, inference batch norm,
//   attention, and their gradients): a batch split along dim 0 stays split, the weights are
//   broadcast and the weight gradients partial sums (per_sample_rules);
// - index_gather of a broadcast table by split indices keeps the split (an embedding lookup of
//   a split batch); its gradient, an accumulating index_put into a partial_sum destination of
//   split values, stays a partial sum (index_signature);
// - every other primitive: all inputs broadcast, outputs broadcast (correct for any op; the
//   whole value is computed on every rank).
// The smallest communication is not searched for: the first rule that fits the inputs wins.
#include "oneflow/core/dispatch/global_dispatch.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/attention_primitives.h"
#include "oneflow/core/ops/nn_primitives.h"
#include "oneflow/core/ops/primitives.h"
#include "oneflow/core/ops/split_primitive.h"

namespace oneflow::detail {

namespace {

struct Signature {
  Signature() = default;
  Signature(std::vector<Sbp> ins, Sbp o) : in(std::move(ins)), out(o) {}
  std::vector<Sbp> in;  // per input (ignored for local 0-d inputs)
  Sbp out;
  std::vector<Sbp> outs;  // per output, when they differ (else every output is `out`)
  const Sbp& out_of(size_t i) const { return i < outs.size() ? outs[i] : out; }
};

bool is_global(const Tensor& t) { return t->kind() == TensorKind::kGlobal; }
const Sbp& sbp_of(const Tensor& t) { return global::meta(t).sbp; }
// The number of ranks of t's placement.
int64_t ranks_of(const Tensor& t) {
  return static_cast<int64_t>(global::meta(t).placement.ranks.size());
}

Signature all_broadcast(const TensorList& inputs) {
  return {std::vector<Sbp>(inputs.size(), Sbp::broadcast()), Sbp::broadcast()};
}

bool is_linear(const Primitive& prim) {
  return &prim == &prim::add() || &prim == &prim::sub() || &prim == &prim::mul() ||
         &prim == &prim::div() || &prim == &prim::unary<UnaryFn::kNeg>();
}

// Partial sums survive add/sub when every operand is a partial sum, mul when exactly one is
// (div: the dividend) and the others broadcast, neg always.
bool keeps_partial(const Primitive& prim, const TensorList& inputs) {
  if (!is_linear(prim)) return false;
  int partial = 0, broadcast = 0, local = 0;
  for (const Tensor& t : inputs) {
    if (!is_global(t)) {
      ++local;
    } else if (sbp_of(t).kind == Sbp::kPartialSum) {
      ++partial;
    } else if (sbp_of(t).kind == Sbp::kBroadcast) {
      ++broadcast;
    }
  }
  const int n = static_cast<int>(inputs.size());
  if (partial == 0) return false;
  if (&prim == &prim::add() || &prim == &prim::sub()) return partial == n;
  // mul / div: the other operands must be the same on every rank (broadcast or numbers)
  if (partial != 1 || partial + broadcast + local != n) return false;
  if (&prim == &prim::div())
    return is_global(inputs[0]) && sbp_of(inputs[0]).kind == Sbp::kPartialSum;
  return true;  // mul, neg
}

Signature elementwise_signature(const Primitive& prim, const TensorList& inputs,
                                const Shape& out_shape, const Tensor& inplace_out) {
  const int64_t nd = static_cast<int64_t>(out_shape.size());
  // Whether input i spans output dim d without broadcasting along it.
  auto spans = [&](const Tensor& t, int64_t d) {
    const int64_t off = nd - t->ndim();
    return d - off >= 0 && t->shape()[d - off] == out_shape[d];
  };
  // An in-place result keeps the destination's layout.
  if (inplace_out && sbp_of(inplace_out).kind == Sbp::kBroadcast) return all_broadcast(inputs);
  int64_t split = -1;
  if (inplace_out && sbp_of(inplace_out).is_split()) {
    split = sbp_of(inplace_out).axis + nd - inplace_out->ndim();
  } else if (!inplace_out) {
    for (const Tensor& t : inputs)
      if (is_global(t) && sbp_of(t).is_split()) {
        const int64_t d = sbp_of(t).axis + nd - t->ndim();
        if (spans(t, d)) {
          split = d;
          break;
        }
      }
  }
  Signature sig;
  if (split >= 0) {
    for (const Tensor& t : inputs)
      sig.in.push_back(is_global(t) && spans(t, split) ? Sbp::split(split - (nd - t->ndim()))
                                                       : Sbp::broadcast());
    sig.out = Sbp::split(split);
    return sig;
  }
  const bool partial = keeps_partial(prim, inputs);
  if (inplace_out && sbp_of(inplace_out).kind == Sbp::kPartialSum && !partial)
    throw_error<NotImplementedError>(prim.name(),
                                     "an in-place op on a partial_sum global tensor must keep "
                                     "it a partial sum (add/sub of partial sums, mul/div by "
                                     "broadcast values); convert it with to_global first");
  if (partial) {
    for (const Tensor& t : inputs) sig.in.push_back(is_global(t) ? sbp_of(t) : Sbp::broadcast());
    sig.out = Sbp::partial_sum();
    return sig;
  }
  return all_broadcast(inputs);
}

Signature matmul_signature(const TensorList& in) {
  const Sbp& a = sbp_of(in[0]);
  const Sbp& b = sbp_of(in[1]);
  const int64_t nd = in[0]->ndim();
  const int64_t m = nd - 2, k = nd - 1, n = nd - 1, kb = nd - 2;
  const Sbp B = Sbp::broadcast(), P = Sbp::partial_sum();
  if (nd == 3 && a == Sbp::split(0)) return {{a, Sbp::split(0)}, Sbp::split(0)};
  if (nd == 3 && b == Sbp::split(0)) return {{Sbp::split(0), b}, Sbp::split(0)};
  if (a == Sbp::split(m)) return {{a, B}, Sbp::split(m)};
  if (b == Sbp::split(n)) return {{B, b}, Sbp::split(n)};
  // A split of the contracted dim on one side: the other side is sliced to match (free from
  // broadcast) and the products are partial sums.
  if (a == Sbp::split(k) && b.kind != Sbp::kPartialSum) return {{a, Sbp::split(kb)}, P};
  if (b == Sbp::split(kb) && a.kind != Sbp::kPartialSum) return {{Sbp::split(k), b}, P};
  if (a == P && b.kind != Sbp::kPartialSum) return {{P, B}, P};
  if (b == P && a.kind != Sbp::kPartialSum) return {{B, P}, P};
  return all_broadcast(in);
}

Signature reduce_signature(const Primitive& prim, const Tensor& x, const Attrs& attrs) {
  const Sbp& s = sbp_of(x);
  if (s.kind == Sbp::kBroadcast) return {{s}, s};
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  const bool keepdim = attrs.get<bool>("keepdim");
  const bool sum = &prim == &prim::reduce_sum();
  if (s.kind == Sbp::kPartialSum) return sum ? Signature{{s}, s} : all_broadcast({x});
  const bool reduced = dims.empty() || std::count(dims.begin(), dims.end(), s.axis) > 0;
  if (reduced) return sum ? Signature{{s}, Sbp::partial_sum()} : all_broadcast({x});
  int64_t axis = s.axis;
  if (!keepdim)
    for (int64_t d : dims) axis -= d < s.axis;
  return {{s}, Sbp::split(axis)};
}

// Softmax-like primitives along attrs "dim": every global input split along the same other dim.
Signature rowwise_signature(const TensorList& inputs, const Attrs& attrs) {
  const Tensor& x = inputs[0];
  const Sbp& s = sbp_of(x);
  int64_t dim = attrs.get<int64_t>("dim");
  if (dim < 0) dim += x->ndim();
  if (s.is_split() && s.axis != dim) {
    Signature sig{std::vector<Sbp>(inputs.size(), s), s};
    return sig;
  }
  return all_broadcast(inputs);
}

// Views: where a split dim of the input lands in the output (-1: nowhere safe).
int64_t view_split_dim(const Primitive& prim, const Tensor& x, const Shape& out_shape,
                       const Attrs& attrs, int64_t axis) {
  if (&prim == &prim::permute()) {
    const auto& perm = attrs.get<std::vector<int64_t>>("perm");
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] == axis) return static_cast<int64_t>(i);
    return -1;
  }
  if (&prim == &prim::unsqueeze()) {
    const int64_t dim = attrs.get<int64_t>("dim");
    return axis >= dim ? axis + 1 : axis;
  }
  if (&prim == &prim::squeeze()) {
    // The dims removed are those of `dims` of size 1 (in the global shape).
    const auto& dims = attrs.get<std::vector<int64_t>>("dims");
    auto removed = [&](int64_t d) {
      return x->shape()[d] == 1 && std::find(dims.begin(), dims.end(), d) != dims.end();
    };
    if (removed(axis)) return -1;
    int64_t out = axis;
    for (int64_t d = 0; d < axis; ++d) out -= removed(d);
    return out;
  }
  if (&prim == &prim::expand()) {
    const int64_t off = static_cast<int64_t>(out_shape.size()) - x->ndim();
    return x->shape()[axis] == out_shape[axis + off] ? axis + off : -1;
  }
  if (&prim == &prim::slice()) {
    const auto& starts = attrs.get<std::vector<int64_t>>("starts");
    const auto& steps = attrs.get<std::vector<int64_t>>("steps");
    const auto& sizes = attrs.get<std::vector<int64_t>>("sizes");
    return starts[axis] == 0 && steps[axis] == 1 && sizes[axis] == x->shape()[axis] ? axis : -1;
  }
  if (&prim == &prim::view()) {
    if (static_cast<int64_t>(out_shape.size()) <= axis) return -1;
    for (int64_t d = 0; d < axis; ++d)
      if (out_shape[d] != x->shape()[d]) return -1;
    const int64_t n = x->shape()[axis], m = out_shape[axis];
    if (m == n) return axis;
    // The split dim merged with the dims after it ((B, T, C) -> (B * T, C)) or factored into
    // several ((B * T, C) -> (B, T, C)): rank r's rows are its block of the new dim too when
    // every rank holds as many rows of the coarser dim.
    const int64_t k = ranks_of(x);
    auto prefix = [](const Shape& s, size_t from, int64_t target) {
      int64_t p = 1;
      for (size_t d = from; d < s.size() && p < target; ++d) p *= s[d];
      return p == target;
    };
    if (m > n && n % k == 0 && prefix(x->shape(), axis, m)) return axis;
    if (m < n && m % k == 0 && prefix(out_shape, axis, n)) return axis;
    return -1;
  }
  return -1;
}

Signature view_signature(const Primitive& prim, const Tensor& x, const Shape& out_shape,
                         const Attrs& attrs) {
  const Sbp& s = sbp_of(x);
  // A partial sum expanded to more elements is summed first: its all-reduce is the small
  // tensor's, where the expanded partial sum would be reduced whole by the next op that needs
  // its value (the gradient of a batch mean, expanded over the batch: 4 MB reduce-scattered
  // per use; a composed batch norm's forward and backward on 2 processes 35 -> 21 ms).
  if (s.kind == Sbp::kPartialSum && &prim == &prim::expand() && numel(out_shape) > x->numel())
    return all_broadcast({x});
  if (!s.is_split()) return {{s}, s};
  const int64_t d = view_split_dim(prim, x, out_shape, attrs, s.axis);
  if (d >= 0) return {{s}, Sbp::split(d)};
  return all_broadcast({x});
}

// Per-sample primitives: each index of dim 0 (the batch) of the inputs marked 'S' gives the same
// index of the outputs marked 'S', with the inputs marked 'B' (weights, statistics) shared;
// outputs marked 'P' (weight gradients) sum over the batch.
struct PerSample {
  const Primitive* prim;
  const char* in;
  const char* out;
  // Norm statistics: the rows of every sample flattened, output 1 of the forward and input 2
  // of the gradient (-1: none).
  int stats_output, stats_input;
};

const std::vector<PerSample>& per_sample_rules() {
  static const std::vector<PerSample> rules = {
      {&prim::conv_forward(), "SBB", "S", -1, -1},
      {&prim::conv_backward_data(), "SB", "S", -1, -1},
      {&prim::conv_backward_weight(), "SS", "P", -1, -1},
      {&prim::max_pool(), "S", "SS", -1, -1},
      {&prim::max_pool_grad(), "SS", "S", -1, -1},
      {&prim::avg_pool(), "S", "S", -1, -1},
      {&prim::avg_pool_grad(), "S", "S", -1, -1},
      {&prim::adaptive_avg_pool(), "S", "S", -1, -1},
      {&prim::adaptive_avg_pool_grad(), "S", "S", -1, -1},
      {&prim::adaptive_max_pool(), "S", "SS", -1, -1},
      {&prim::batch_norm_inference(), "SBBBB", "S", -1, -1},
      {&prim::layer_norm(), "SBB", "SSS", 1, -1},
      {&prim::layer_norm_grad(), "SSSSB", "SPP", -1, 2},
      {&prim::group_norm(), "SBB", "SSS", 1, -1},
      {&prim::group_norm_grad(), "SSSSB", "SPP", -1, 2},
      {&prim::attention(), "SSS", "SS", -1, -1},
      {&prim::attention_grad(), "SSSSSS", "SSS", -1, -1},
  };
  return rules;
}

Sbp sbp_of_mark(char c) {
  return c == 'S' ? Sbp::split(0) : c == 'P' ? Sbp::partial_sum() : Sbp::broadcast();
}

// The per-sample signature when input 0 is split along the batch; nullopt otherwise.
std::optional<Signature> per_sample_signature(const Primitive& prim, const TensorList& inputs,
                                              const std::vector<TensorMeta>& out_metas) {
  if (inputs.empty() || sbp_of(inputs[0]) != Sbp::split(0) || inputs[0]->ndim() < 2) return {};
  for (const PerSample& r : per_sample_rules()) {
    if (r.prim != &prim) continue;
    // attention's inputs are [..., L, E]: dim 0 is a batch dim only with one more
    const bool attention = &prim == &prim::attention() || &prim == &prim::attention_grad();
    if (attention && inputs[0]->ndim() < 3) return {};
    // (a convolution without bias, a max pool without indices: the marks' first ones)
    if (inputs.size() > std::strlen(r.in) || out_metas.size() > std::strlen(r.out) ||
        out_metas.empty())
      return {};
    const int64_t n = inputs[0]->shape()[0];
    if (r.stats_output >= 0 || r.stats_input >= 0) {
      // Statistics of rows_per_sample rows per sample, flattened: rank r's samples hold rank
      // r's block of the rows only when every rank holds as many samples (or one row each).
      const Shape& stats =
          r.stats_output >= 0 ? out_metas[r.stats_output].shape : inputs[r.stats_input]->shape();
      const int64_t rows = stats.empty() ? 0 : stats[0];
      if (n == 0 || rows % n != 0) return {};
      if (rows / n != 1 && n % ranks_of(inputs[0]) != 0) return {};
    }
    Signature sig;
    for (size_t i = 0; i < inputs.size(); ++i) sig.in.push_back(sbp_of_mark(r.in[i]));
    for (size_t i = 0; i < out_metas.size(); ++i) sig.outs.push_back(sbp_of_mark(r.out[i]));
    sig.out = sig.outs[0];
    return sig;
  }
  return {};
}

// The axis all of `indices` are split along (they share one shape), or -1.
int64_t common_split(TensorList::const_iterator begin, TensorList::const_iterator end) {
  if (begin == end || !is_global(*begin) || !sbp_of(*begin).is_split()) return -1;
  const Sbp s = sbp_of(*begin);
  for (auto it = begin; it != end; ++it)
    if (!is_global(*it) || sbp_of(*it) != s) return -1;
  return s.axis;
}

// Gathers of rows by split indices (an embedding lookup of a split batch): each rank gathers
// its indices' rows of a broadcast table, and the gradient's scatter-add into a partial_sum
// destination stays a partial sum (each rank adds its rows).
std::optional<Signature> index_signature(const Primitive& prim, const TensorList& inputs,
                                         const Attrs& attrs, const Tensor& inplace_out) {
  if (&prim == &prim::index_gather() && !inplace_out && inputs.size() >= 2 &&
      is_global(inputs[0]) && sbp_of(inputs[0]).kind == Sbp::kBroadcast) {
    const int64_t a = common_split(inputs.begin() + 1, inputs.end());
    if (a < 0) return {};
    Signature sig{std::vector<Sbp>(inputs.size(), Sbp::split(a)),
                  Sbp::split(attrs.get<int64_t>("dim") + a)};
    sig.in[0] = Sbp::broadcast();
    return sig;
  }
  if (&prim == &prim::index_put() && inplace_out && inputs.size() >= 3 &&
      attrs.get<bool>("accumulate") && sbp_of(inplace_out).kind == Sbp::kPartialSum &&
      inputs[0] == inplace_out) {
    const int64_t a = common_split(inputs.begin() + 2, inputs.end());
    const Sbp value = Sbp::split(attrs.get<int64_t>("dim") + a);
    if (a < 0 || !is_global(inputs[1]) || sbp_of(inputs[1]) != value) return {};
    Signature sig{std::vector<Sbp>(inputs.size(), Sbp::split(a)), Sbp::partial_sum()};
    sig.in[0] = Sbp::partial_sum();
    sig.in[1] = value;
    return sig;
  }
  return {};
}

Signature choose_signature(const Primitive& prim, const TensorList& inputs, const Attrs& attrs,
                           const std::vector<TensorMeta>& out_metas, const Tensor& inplace_out) {
  const PrimTraits traits = prim.traits();
  if (auto sig = index_signature(prim, inputs, attrs, inplace_out)) return *sig;
  if ((traits.elementwise || &prim == &prim::assign()) && out_metas.size() == 1)
    return elementwise_signature(prim, inputs, out_metas[0].shape, inplace_out);
  if (&prim == &prim::copy() && !inplace_out) {
    if (out_metas[0].device != inputs[0]->device())
      throw_error<NotImplementedError>(prim.name(),
                                       "moving a global tensor to another device "
                                       "is not supported; use to_global with another placement");
    const Sbp& s = sbp_of(inputs[0]);
    // A cast of partial sums from or to an integer type (rounding, wrap-around, bools) is not
    // the cast of their sum.
    if (s.kind == Sbp::kPartialSum &&
        !(is_floating(out_metas[0].dtype) && is_floating(inputs[0]->dtype())))
      return all_broadcast(inputs);
    return {{s}, s};
  }
  if (&prim == &prim::sgd_update() || &prim == &prim::adam_update()) {
    // They write the parameter (input 0) and its state in place: those keep their layout,
    // which must be the parameter's; the gradient (input 1) is boxed to it.
    const Sbp s = sbp_of(inputs[0]);
    if (s.kind == Sbp::kPartialSum)
      throw_error<NotImplementedError>(prim.name(), "cannot update a partial_sum parameter");
    for (size_t i = 2; i < inputs.size(); ++i)
      if (is_global(inputs[i]) && sbp_of(inputs[i]) != s)
        throw_error<NotImplementedError>(prim.name(), "the optimizer state (input ", i, ", ",
                                         sbp_of(inputs[i]).str(),
                                         ") must have the parameter's layout ", s.str());
    return {std::vector<Sbp>(inputs.size(), s), s};
  }
  if (inplace_out) {
    // Other in-place primitives (copy_, index_put_, ...) run on the whole value.
    if (sbp_of(inplace_out).kind != Sbp::kBroadcast)
      throw_error<NotImplementedError>(prim.name(),
                                       "this in-place op on a global tensor needs it to be "
                                       "broadcast, got ",
                                       sbp_of(inplace_out).str(), "; convert it with to_global");
    return all_broadcast(inputs);
  }
  const bool all_global = std::all_of(inputs.begin(), inputs.end(), is_global);
  if (!all_global || inputs.empty()) return all_broadcast(inputs);
  if (&prim == &prim::matmul() && inputs.size() == 2) return matmul_signature(inputs);
  if (&prim == &prim::matmul() && inputs.size() == 3 && inputs[2]->ndim() == 1) {
    // With a bias [n] added to every row: broadcast, or split with the output's columns.
    Signature sig = matmul_signature({inputs[0], inputs[1]});
    const int64_t n = inputs[0]->ndim() - 1;
    if (sig.out.kind == Sbp::kPartialSum) return all_broadcast(inputs);
    sig.in.push_back(sig.out == Sbp::split(n) ? Sbp::split(0) : Sbp::broadcast());
    return sig;
  }
  if ((&prim == &prim::reduce_sum() || &prim == &prim::reduce<ReduceFn::kMax>() ||
       &prim == &prim::reduce<ReduceFn::kMin>()) &&
      inputs[0]->ndim() > 0)
    return reduce_signature(prim, inputs[0], attrs);
  if (&prim == &prim::cat()) {
    // Pieces with one layout: partial sums concatenate into partial sums, splits along
    // another dim than the cat's stay split.
    const Sbp s = sbp_of(inputs[0]);
    bool same = true;
    for (const Tensor& t : inputs) same = same && sbp_of(t) == s;
    int64_t dim = attrs.get<int64_t>("dim");
    if (same && (s.kind == Sbp::kPartialSum || (s.is_split() && s.axis != dim)))
      return {std::vector<Sbp>(inputs.size(), s), s};
    return all_broadcast(inputs);
  }
  if (&prim == &prim::nll_loss() && !attrs.get<bool>("mean") && inputs[0]->ndim() >= 1 &&
      sbp_of(inputs[0]) == Sbp::split(0) && sbp_of(inputs[2]).kind == Sbp::kBroadcast) {
    // A summed loss over rows split along the batch: each rank sums its rows' losses and
    // weights (partial sums); the row statistics of the logits form stay split.
    Signature sig{{Sbp::split(0), Sbp::split(0), Sbp::broadcast()}, Sbp::partial_sum()};
    sig.outs = {Sbp::partial_sum(), Sbp::partial_sum(), Sbp::split(0)};
    return sig;
  }
  if (&prim == &prim::nll_loss_grad() && !attrs.get<bool>("mean") &&
      sbp_of(inputs[1]) == Sbp::split(0) && sbp_of(inputs[0]).kind == Sbp::kBroadcast &&
      sbp_of(inputs[2]).kind == Sbp::kBroadcast &&
      (inputs.size() < 6 ||
       (sbp_of(inputs[4]) == Sbp::split(0) && sbp_of(inputs[5]) == Sbp::split(0)))) {
    // (dy, target, weight, total[, logits, stats]) of a summed loss: the total is not read.
    Signature sig{{Sbp::broadcast(), Sbp::split(0), Sbp::broadcast(), sbp_of(inputs[3])},
                  Sbp::split(0)};
    for (size_t i = 4; i < inputs.size(); ++i) sig.in.push_back(Sbp::split(0));
    return sig;
  }
  if (&prim == &prim::bernoulli() && inputs.size() == 1 && sbp_of(inputs[0]).is_split())
    return {{sbp_of(inputs[0])}, sbp_of(inputs[0])};  // each rank draws its rows' numbers
  if (&prim == &prim::softmax() || &prim == &prim::log_softmax())
    return rowwise_signature(inputs, attrs);
  if (&prim == &prim::softmax_grad() || &prim == &prim::log_softmax_grad()) {
    // (dy, y): the dim is in the attributes as for the forward.
    if (attrs.has("dim") && sbp_of(inputs[0]) == sbp_of(inputs[1]))
      return rowwise_signature(inputs, attrs);
    return all_broadcast(inputs);
  }
  if (traits.is_view && inputs.size() == 1 && out_metas.size() == 1)
    return view_signature(prim, inputs[0], out_metas[0].shape, attrs);
  if (&prim == &prim::split() && inputs.size() == 1) {
    // Sections along another dim than a split one are views of each shard (qkv.split(C, 2)).
    const Sbp& s = sbp_of(inputs[0]);
    if (!s.is_split() || s.axis != attrs.get<int64_t>("dim")) return {{s}, s};
    return all_broadcast(inputs);
  }
  if (auto sig = per_sample_signature(prim, inputs, out_metas)) return *sig;
  return all_broadcast(inputs);
}

// A local 0-d tensor with a history, taken by a global op as a broadcast number: its gradient
// comes back global and goes on into the local graph as this rank's (whole) value.
class LocalAsGlobalNode final : public Node {
 public:
  TensorList apply(TensorList&& out_grads) override {
    const Tensor& g = out_grads[0];
    return {g && g->global() ? global::whole_value(g) : g};
  }
  std::string name() const override { return "LocalAsGlobalBackward"; }
};

Tensor local_as_global(const Tensor& t, const Placement& placement) {
  Tensor g = global::make(alias_detached(t), placement, Sbp::broadcast(), t->shape());
  auto node = std::make_shared<LocalAsGlobalNode>();
  node->sequence_nr = next_sequence_nr();
  node->next_edges.push_back(gradient_edge(t));
  node->output_metas.push_back(g->meta());
  node->retained.emplace_back();
  AutogradMeta& am = g->autograd();
  am.requires_grad = true;
  am.grad_fn = node;
  am.output_nr = 0;
  return g;
}

// The attributes of the primitive run on the shards: the shape attributes of views that keep
// a split (view/expand "shape", slice "sizes", nll_loss_grad "input_shape") hold the global size of
// the split dim; the shards' run needs the local one.
Attrs local_attrs(const Primitive& prim, const Attrs& attrs, const Signature& sig,
                  const Shape& out_shape, const Placement& placement) {
  if (!sig.out.is_split()) return attrs;
  const bool input_shape = &prim == &prim::nll_loss_grad() ||
                           &prim == &prim::conv_backward_data() ||
                           &prim == &prim::max_pool_grad() || &prim == &prim::avg_pool_grad() ||
                           &prim == &prim::adaptive_avg_pool_grad();
  const char* key = &prim == &prim::view() || &prim == &prim::expand() ? "shape"
                    : &prim == &prim::slice()                          ? "sizes"
                    : input_shape                                      ? "input_shape"
                                                                       : nullptr;
  if (!key) return attrs;
  Attrs local = attrs;
  auto sizes = attrs.get<std::vector<int64_t>>(key);
  sizes[sig.out.axis] = global::local_shape(out_shape, sig.out, placement)[sig.out.axis];
  local.set(key, sizes);
  return local;
}

// An op's signature on every hierarchy axis of its placement (one on 1-D placements) and the
// attributes of the primitive run on the shards.
struct Plan {
  std::vector<Signature> axes;
  Attrs shard_attrs;
  NdSbp in(size_t i) const {
    NdSbp nd;
    for (const Signature& s : axes) nd.push_back(s.in[i]);
    return nd;
  }
  NdSbp out(size_t i) const {
    NdSbp nd;
    for (const Signature& s : axes) nd.push_back(s.out_of(i));
    return nd;
  }
  bool any_out(size_t i, bool (*pred)(const Sbp&)) const {
    for (const Signature& s : axes)
      if (pred(s.out_of(i))) return true;
    return false;
  }
};

// Note [N-D signatures]: on an N-D placement the op picks a 1-D signature per hierarchy axis,
// from the first. Axis k sees each input as the 1-D global tensor of its axis group: the piece
// of the value the axes before k pick (as the signatures chosen there lay the inputs out),
// with the input's own sbp on axis k; the op on that piece, with the attributes the axes
// before k rewrote for it (local_attrs), is what axis k's signature splits further. Each
// axis's signature makes the op on its pieces the op on the whole, so the nesting does too.
Plan plan_op(const Primitive& prim, const TensorList& inputs, const Attrs& attrs,
             const std::vector<TensorMeta>& metas, const Tensor& inplace_out,
             const Placement& placement) {
  Plan plan;
  if (!placement.nd()) {
    plan.axes.push_back(choose_signature(prim, inputs, attrs, metas, inplace_out));
    plan.shard_attrs =
        metas.empty() ? attrs : local_attrs(prim, attrs, plan.axes[0], metas[0].shape, placement);
    return plan;
  }
  std::vector<Shape> shapes;  // each input's piece at the current axis
  for (const Tensor& t : inputs) shapes.push_back(t->shape());
  Shape inplace_piece = inplace_out ? inplace_out->shape() : Shape{};
  Attrs a = attrs;
  std::vector<TensorMeta> m = metas;
  for (int64_t k = 0; k < placement.ndim(); ++k) {
    const Placement group = global::axis_group(placement, k);
    TensorList proxies;
    Tensor inplace_proxy;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      if (!is_global(t)) {
        proxies.push_back(t);
        continue;
      }
      const Sbp s = global::meta(t).layout()[k];
      const CreationOptions meta{t->dtype(), Device{DeviceType::kMeta, 0}, ""};
      proxies.push_back(global::make(
          functional::zeros(global::local_shape(shapes[i], s, group), meta), group, s, shapes[i]));
      if (t == inplace_out) inplace_proxy = proxies.back();
    }
    if (inplace_out && !inplace_proxy) {
      const Sbp s = global::meta(inplace_out).layout()[k];
      const CreationOptions meta{inplace_out->dtype(), Device{DeviceType::kMeta, 0}, ""};
      inplace_proxy =
          global::make(functional::zeros(global::local_shape(inplace_piece, s, group), meta), group,
                       s, inplace_piece);
    }
    if (k > 0) m = prim.infer(proxies, a);
    Signature sig = choose_signature(prim, proxies, a, m, inplace_proxy);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (is_global(inputs[i])) shapes[i] = global::local_shape(shapes[i], sig.in[i], group);
    if (inplace_out) inplace_piece = global::local_shape(inplace_piece, sig.out, group);
    if (!m.empty()) a = local_attrs(prim, a, sig, m[0].shape, group);
    plan.axes.push_back(std::move(sig));
  }
  plan.shard_attrs = std::move(a);
  return plan;
}

}  // namespace

TensorList eager_global(const Primitive& prim, const TensorList& inputs, const Attrs& attrs,
                        const Tensor& inplace_out) {
  const Placement* placement = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t) throw_error<TypeError>(prim.name(), "input ", i, " is None");
    if (!is_global(t)) {
      if (t->ndim() != 0)
        throw_error<RuntimeError>(prim.name(),
                                  "expected all inputs to be global tensors, but "
                                  "input ",
                                  i, " is a local tensor of shape ", shape_str(t->shape()),
                                  "; make it global with to_global()");
      continue;
    }
    const Placement& p = global::meta(t).placement;
    if (!placement) {
      placement = &p;
    } else if (p != *placement) {
      throw_error<RuntimeError>(prim.name(), "expected all inputs on the same placement, got ",
                                placement->str(), " and ", p.str());
    }
  }
  if (inplace_out && !is_global(inplace_out))
    throw_error<RuntimeError>(prim.name(), "cannot write a global result into a local tensor");
  if (inplace_out && global::meta(inplace_out).copied_view)
    throw_error<NotImplementedError>(prim.name(),
                                     "this view of a global tensor is a copy (its layout needed "
                                     "communication), so writing into it would not change the "
                                     "tensor; in-place writes through such views are not "
                                     "supported yet");
  if (!placement)
    throw_error<NotImplementedError>(prim.name(),
                                     "creating a global tensor here is not "
                                     "supported; pass placement= and sbp= to oneflow.zeros, "
                                     "ones, rand, randn, full, tensor, ... or call to_global()");

  // Local 0-d operands that need a gradient join the global graph through a node of their own.
  const bool recording = grad_mode_enabled() && !inference_mode_enabled();
  TensorList wrapped;
  for (const Tensor& t : inputs)
    if (!is_global(t) && recording && t->requires_grad() && prim.traits().differentiable) {
      wrapped = inputs;
      for (Tensor& w : wrapped)
        if (!is_global(w) && w->requires_grad()) w = local_as_global(w, *placement);
      break;
    }
  if (!wrapped.empty()) return eager_global(prim, wrapped, attrs, inplace_out);

  // Global output metas: the primitive's own inference on the global shapes.
  const std::vector<TensorMeta> metas = prim.infer(inputs, attrs);
  // Note [In-place through the whole value]: an in-place op no signature covers for its
  // destination's layout (index_put_, scatter_, masked_scatter_ on a split tensor; an in-place
  // op that does not keep a partial sum one) runs on a broadcast copy of the destination, whose
  // new value is laid out as the destination again and copied into its shard.
  Plan plan;
  bool through_whole = false;
  try {
    plan = plan_op(prim, inputs, attrs, metas, inplace_out, *placement);
  } catch (const NotImplementedError&) {
    if (!inplace_out) throw;
    through_whole = true;
  }
  const bool nd = placement->nd();

  bool needs_grad = false;
  if (prim.traits().differentiable && recording)
    for (const Tensor& t : inputs) needs_grad = needs_grad || t->requires_grad();
  if (inplace_out && recording && inplace_out->requires_grad() && inplace_out->is_leaf())
    throw_error<RuntimeError>(prim.name(),
                              "a leaf Variable that requires grad is being used in "
                              "an in-place operation.");
  // An in-place write through a view must also rewrite the history of the tensor viewed (local
  // mode's Note [In-place on views]); global views do not do that yet: refuse rather than give
  // the viewed tensor's old gradient.
  if (needs_grad && inplace_out && global::meta(inplace_out).view_base)
    throw_error<NotImplementedError>(prim.name(),
                                     "in-place operations on a view of a global tensor are not "
                                     "supported when autograd records them; write into the "
                                     "tensor out of place (where, index_put, cat) or under "
                                     "no_grad");
  Tensor original;
  if (needs_grad && inplace_out && prim.traits().saves_inputs) {
    GradModeGuard no_grad(false);
    original = functional::clone(inplace_out);
  }
  std::vector<int64_t> input_versions;
  if (needs_grad)
    for (const Tensor& t : inputs) input_versions.push_back(t->version());

  // A process the placement leaves out runs nothing: its outputs are meta shards (Note [Absent
  // shards] in global.h), and autograd records the op as on the other processes.
  if (!global::holds(*placement)) {
    TensorList outputs;
    if (inplace_out) {  // a write, as on the other processes: saved copies of it go stale
      inplace_out->bump_version();
      outputs.push_back(inplace_out);
    }
    for (size_t i = 0; i < metas.size() && !inplace_out; ++i) {
      const NdSbp out_sbp = plan.out(i);
      const Shape shard = global::local_shape(metas[i].shape, out_sbp, *placement);
      const CreationOptions meta{metas[i].dtype, Device{DeviceType::kMeta, 0}, ""};
      outputs.push_back(
          global::make(functional::zeros(shard, meta), *placement, out_sbp, metas[i].shape));
    }
    if (needs_grad) record_autograd(prim, inputs, outputs, attrs, input_versions, original);
    return outputs;
  }
  if (through_whole) {
    const NdSbp layout = global::meta(inplace_out).layout();
    {
      GradModeGuard no_grad(false);
      const Tensor whole = global::box(inplace_out, global::uniform(*placement, Sbp::broadcast()));
      const Tensor copy = whole == inplace_out ? functional::clone(whole) : whole;
      TensorList on_whole = inputs;
      for (Tensor& t : on_whole)
        if (t == inplace_out) t = copy;
      eager_global(prim, on_whole, attrs, copy);
      functional::copy_(global::local_of(inplace_out), global::box_local(copy, layout));
    }
    if (needs_grad) record_autograd(prim, inputs, {inplace_out}, attrs, input_versions, original);
    return {inplace_out};
  }
  TensorList local_in;
  local_in.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    local_in.push_back(!is_global(t) ? t
                       : nd          ? global::box_local(t, plan.in(i))
                                     : global::box_local(t, plan.axes[0].in[i]));
  }
  // A random primitive with a split result draws each shard's numbers from a stream of its own:
  // every rank's generator holds the same seed and offset (they are seeded alike), which would
  // repeat one shard's numbers on every rank (dropout's mask on each data-parallel shard).
  Attrs shard_attrs = plan.shard_attrs;
  const int64_t me = global::rank_in(*placement);
  if (attrs.has("seed") && placement->ranks.size() > 1 && me > 0) {
    bool split = false;
    for (size_t i = 0; i < std::max<size_t>(metas.size(), 1); ++i)
      split = split || plan.any_out(i, [](const Sbp& s) { return s.is_split(); });
    if (split) {
      // "seed_mix" tells an nn.Graph recording the draw which generator state it came from
      // (and what to mix into the seeds it draws at each replay).
      const uint64_t seed = static_cast<uint64_t>(shard_attrs.get<int64_t>("seed"));
      const uint64_t mix = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(me);
      shard_attrs.set("seed", static_cast<int64_t>(seed ^ mix));
      shard_attrs.set("seed_mix", static_cast<int64_t>(mix));
    }
  }
  TensorList local_out;
  {
    GradModeGuard no_grad(false);
    local_out = dispatch(prim, local_in, shard_attrs,
                         inplace_out ? global::local_of(inplace_out) : nullptr);
  }
  // A random primitive's broadcast result must be the same on every rank, whatever each
  // rank's generator holds: rank 0's numbers (split results are per-rank numbers anyway).
  // (On N-D placements: along each axis whose sbp is broadcast, its axis group's first rank's.)
  if (attrs.has("seed") && !inplace_out && placement->ranks.size() > 1)
    for (size_t i = 0; i < local_out.size(); ++i)
      for (size_t k = 0; k < plan.axes.size(); ++k)
        if (plan.axes[k].out_of(i).kind == Sbp::kBroadcast)
          global::broadcast_from_first(local_out[i],
                                       global::axis_group(*placement, static_cast<int64_t>(k)));
  TensorList outputs;
  outputs.reserve(local_out.size());
  for (size_t i = 0; i < local_out.size(); ++i) {
    if (inplace_out) {
      outputs.push_back(inplace_out);
      continue;
    }
    const NdSbp out_sbp = plan.out(i);
    const Shape expected = global::local_shape(metas[i].shape, out_sbp, *placement);
    if (local_out[i]->shape() != expected)
      throw_error<RuntimeError>(
          prim.name(), "internal error: the shard of output ", i, " under ", nd_sbp_str(out_sbp),
          " has shape ", shape_str(local_out[i]->shape()), ", expected ", shape_str(expected));
    const bool copied_view =
        prim.traits().is_view && is_global(inputs[0]) &&
        (local_in[0] != global::local_of(inputs[0]) || global::meta(inputs[0]).copied_view);
    Tensor base;
    if (prim.traits().is_view && is_global(inputs[0])) {
      base = global::meta(inputs[0]).view_base;
      if (!base) base = inputs[0];
    }
    outputs.push_back(
        global::make(local_out[i], *placement, out_sbp, metas[i].shape, copied_view, base));
  }
  if (needs_grad) record_autograd(prim, inputs, outputs, attrs, input_versions, original);
  return outputs;
}

}  // namespace oneflow::detail
