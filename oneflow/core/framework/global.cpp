#include "oneflow/core/framework/global.h"

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/comm/comm.h"
#include "oneflow/core/common/error.h"
#include "oneflow/core/functional/functional.h"

namespace oneflow {

namespace F = functional;

void throw_global_data_access() {
  throw_error<RuntimeError>("global tensor",
                            "the values of a global tensor live on several processes; call "
                            "to_local() for this process's shard, or numpy() for the whole value");
}

std::string Sbp::str() const {
  switch (kind) {
    case kSplit:
      return "S(" + std::to_string(axis) + ")";
    case kBroadcast:
      return "B";
    case kPartialSum:
      return "P";
  }
  return "?";
}

std::string nd_sbp_str(const NdSbp& nd) {
  std::string s = "(";
  for (size_t i = 0; i < nd.size(); ++i) s += (i ? ", " : "") + nd[i].str();
  return s + ")";
}

namespace {
// ranks[begin, begin + size of axes from `axis` on) nested as the hierarchy says.
std::string nested_ranks(const Placement& p, size_t axis, int64_t begin) {
  if (axis + 1 >= p.hierarchy.size()) {
    const int64_t n = p.nd() ? p.hierarchy.back() : static_cast<int64_t>(p.ranks.size());
    std::string s = "[";
    for (int64_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(p.ranks[begin + i]);
    return s + "]";
  }
  int64_t inner = 1;
  for (size_t a = axis + 1; a < p.hierarchy.size(); ++a) inner *= p.hierarchy[a];
  std::string s = "[";
  for (int64_t i = 0; i < p.hierarchy[axis]; ++i)
    s += (i ? ", " : "") + nested_ranks(p, axis + 1, begin + i * inner);
  return s + "]";
}
}  // namespace

std::string Placement::str() const {
  return std::string("placement(type=\"") + (type == DeviceType::kCPU ? "cpu" : "cuda") +
         "\", ranks=" + nested_ranks(*this, 0, 0) + ")";
}

namespace global {

int64_t rank() { return comm::initialized() ? comm::rank() : 0; }
int64_t world_size() { return comm::initialized() ? comm::world_size() : 1; }

void check_placement(const Placement& p, const char* op) {
  const int64_t k = world_size();
  if (p.ranks.empty()) throw_error<ValueError>(op, "a placement needs at least one rank");
  if (p.nd()) {
    int64_t n = 1;
    for (int64_t h : p.hierarchy) n *= h;
    if (n != static_cast<int64_t>(p.ranks.size()))
      throw_error<ValueError>(op, "placement ", p.str(), ": the nested lists of ranks must all ",
                              "have the same length");
  }
  for (size_t i = 0; i < p.ranks.size(); ++i) {
    const int64_t r = p.ranks[i];
    if (r < 0 || r >= k)
      throw_error<ValueError>(op, "placement ", p.str(), " names rank ", r,
                              ", which is not in the process group of ", k, " process",
                              k == 1 ? "" : "es", " (ranks 0..", k - 1, ")");
    for (size_t j = 0; j < i; ++j)
      if (p.ranks[j] == r)
        throw_error<ValueError>(op, "placement ", p.str(), " names rank ", r, " twice");
  }
}

int64_t rank_in(const Placement& p) {
  const int64_t me = rank();
  for (size_t i = 0; i < p.ranks.size(); ++i)
    if (p.ranks[i] == me) return static_cast<int64_t>(i);
  return -1;
}

bool absent(const Tensor& t) {
  return t->global() && t->global()->local->device().type == DeviceType::kMeta;
}

Device local_device(const Placement& p) {
  if (p.type == DeviceType::kCPU) return Device{DeviceType::kCPU, 0};
  const char* lr = std::getenv("LOCAL_RANK");
  return Device{DeviceType::kCUDA, lr ? std::atoi(lr) : static_cast<int>(rank())};
}

std::pair<int64_t, int64_t> split_range(int64_t n, int64_t k, int64_t r) {
  const int64_t base = n / k, extra = n % k;
  const int64_t begin = r * base + std::min(r, extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

std::vector<int64_t> coords(const Placement& p, int64_t index) {
  if (!p.nd()) return {index};
  std::vector<int64_t> c(p.hierarchy.size());
  for (size_t a = p.hierarchy.size(); a-- > 0;) {
    c[a] = index % p.hierarchy[a];
    index /= p.hierarchy[a];
  }
  return c;
}

Placement axis_group(const Placement& p, int64_t axis, int64_t index) {
  if (!p.nd()) return p;
  if (index < 0) index = std::max<int64_t>(rank_in(p), 0);
  int64_t stride = 1;
  for (size_t a = axis + 1; a < p.hierarchy.size(); ++a) stride *= p.hierarchy[a];
  const int64_t n = p.hierarchy[axis];
  const int64_t first = index - ((index / stride) % n) * stride;
  Placement g{p.type, {}, {}};
  for (int64_t i = 0; i < n; ++i) g.ranks.push_back(p.ranks[first + i * stride]);
  return g;
}

NdSbp uniform(const Placement& p, const Sbp& s) { return NdSbp(p.ndim(), s); }

Shape local_shape(const Shape& global_shape, const NdSbp& nd, const Placement& p, int64_t index) {
  if (!p.nd()) return local_shape(global_shape, nd.at(0), p);
  if (index < 0) index = std::max<int64_t>(rank_in(p), 0);
  const std::vector<int64_t> c = coords(p, index);
  Shape s = global_shape;
  for (size_t a = 0; a < nd.size(); ++a)
    if (nd[a].is_split()) {
      auto [b, e] = split_range(s[nd[a].axis], p.hierarchy[a], c[a]);
      s[nd[a].axis] = e - b;
    }
  return s;
}

Shape local_shape(const Shape& global_shape, const Sbp& sbp, const Placement& p) {
  if (p.nd()) return local_shape(global_shape, uniform(p, sbp), p);
  Shape s = global_shape;
  if (sbp.is_split()) {
    const int64_t k = static_cast<int64_t>(p.ranks.size());
    auto [b, e] = split_range(s[sbp.axis], k, std::max<int64_t>(rank_in(p), 0));
    s[sbp.axis] = e - b;
  }
  return s;
}

namespace {

constexpr int64_t kMaxDims = 16;         // dims of a shape exchanged by check_meta
constexpr int64_t kMeta = 4 + kMaxDims;  // per process: dtype, ndim, dims, two layout values

// Every process's dtype, number of dims, dims and two values naming the layout it passed
// (kMeta values each, in rank order): what from_local checks the shards against.
std::vector<int64_t> gather_metas(const Tensor& local, int64_t layout_a, int64_t layout_b) {
  std::vector<int64_t> mine(kMeta, -1);
  mine[0] = static_cast<int64_t>(local->dtype());
  mine[1] = local->ndim();
  for (int64_t d = 0; d < local->ndim() && d < kMaxDims; ++d) mine[2 + d] = local->shape()[d];
  mine[kMeta - 2] = layout_a;
  mine[kMeta - 1] = layout_b;
  GradModeGuard no_grad(false);
  Tensor t = F::zeros(Shape{kMeta}, CreationOptions{DType::kInt64, Device{}, ""});
  std::copy(mine.begin(), mine.end(), t->data_as<int64_t>());
  const int64_t k = comm::world_size();
  Tensor all = F::zeros(Shape{k * kMeta}, CreationOptions{DType::kInt64, Device{}, ""});
  comm::all_gather(all, t);
  const int64_t* v = all->read_as<int64_t>();
  return std::vector<int64_t>(v, v + k * kMeta);
}

// Whether t's elements fill one range of its storage exactly once (dims of size 1 aside; an
// empty shard is dense: it must not give its rank other strides than the others').
bool dense_layout(const TensorImpl& t) {
  if (t.numel() == 0) return true;
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (t.shape()[d] != 1) dims.emplace_back(t.strides()[d], t.shape()[d]);
  std::sort(dims.begin(), dims.end());
  int64_t next = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != next) return false;
    next *= size;
  }
  return true;
}

}  // namespace

// Note [Global strides]: a global tensor's strides address no memory, but the functional layer
// reads them to decide whether a copy is needed (contiguous(), reshape, matmul's transposed
// operands): they mirror the shard's layout. A contiguous shard gives contiguous strides; a
// permuted one the dense strides of the global shape in the shard's dim order; expanded dims
// stride 0; a shard that is not dense (a stepped slice) also gets a gap on a dim the global
// shape does not hold once, so that nothing takes it for contiguous. Every rank must see the
// same strides (they choose code paths, some of which communicate): a shard whose dim holds 0
// or 1 rows of a larger global dim says nothing about that dim's place in the order from its
// contiguity (which ignores size-1 dims), so its order is read from the strides, which the
// ranks' views share.
Strides global_strides(const TensorImpl& local, const Shape& shape) {
  const int64_t nd = local.ndim();
  bool plain = local.is_contiguous();
  for (int64_t d = 0; d < nd && plain; ++d) plain = local.shape()[d] > 1 || shape[d] <= 1;
  if (plain) return contiguous_strides(shape);
  std::vector<int64_t> order(nd);
  for (int64_t d = 0; d < nd; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return local.strides()[a] > local.strides()[b]; });
  Strides strides(nd, 0);
  int64_t next = 1;
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t d = order[i];
    if (local.strides()[d] == 0 && local.shape()[d] != 1) continue;  // expanded
    strides[d] = next;
    next *= std::max<int64_t>(shape[d], 1);
  }
  if (!dense_layout(local))
    for (int64_t d : order)
      if (strides[d] != 0 && shape[d] > 1) {
        strides[d] *= 2;
        break;
      }
  return strides;
}

namespace {

// The meta shard of a process that p leaves out (Note [Absent shards]).
Tensor absent_shard(const Shape& global_shape, const NdSbp& nd, const Placement& p, DType dt) {
  return F::zeros(local_shape(global_shape, nd, p),
                  CreationOptions{dt, Device{DeviceType::kMeta, 0}, ""});
}
Tensor absent_shard(const Shape& global_shape, const Sbp& sbp, const Placement& p, DType dt) {
  return absent_shard(global_shape, uniform(p, sbp), p, dt);
}

}  // namespace

Tensor make(const Tensor& local, const Placement& p, const Sbp& sbp, const Shape& global_shape,
            bool copied_view, const Tensor& view_base) {
  if (p.nd()) return make(local, p, uniform(p, sbp), global_shape, copied_view, view_base);
  return make(local, p, NdSbp{sbp}, global_shape, copied_view, view_base);
}

Tensor make(const Tensor& local, const Placement& p, const NdSbp& nd, const Shape& global_shape,
            bool copied_view, const Tensor& view_base) {
  if (static_cast<int64_t>(nd.size()) != p.ndim())
    throw_error<ValueError>("to_global", "expected ", p.ndim(), " sbp for the placement ", p.str(),
                            ", got ", nd.size());
  const bool meta = local->device().type == DeviceType::kMeta;
  TensorMeta m{global_shape, global_strides(*local, global_shape), 0, local->dtype(),
               meta ? local_device(p) : local->device()};
  auto t = std::make_shared<TensorImpl>(std::move(m), local->storage(), local->version_counter());
  auto g = std::make_shared<GlobalMeta>();
  g->placement = p;
  g->sbp = nd[0];
  if (p.nd()) g->nd_sbp = nd;
  g->local = local;
  g->copied_view = copied_view;
  g->view_base = view_base;
  t->set_global(std::move(g));
  return t;
}

Tensor broadcast_like(const Tensor& ref, const Tensor& value) {
  if (!ref->global()) return value;
  return make(value, ref->global()->placement, Sbp::broadcast(), value->shape());
}

const GlobalMeta& meta(const Tensor& t) {
  if (!t->global())
    throw_error<RuntimeError>("to_local", "expected a global tensor, got a local one");
  return *t->global();
}

namespace {

// Every rank's shard of a split along `axis`, concatenated: the whole value.
Tensor gather_split(const Tensor& local, int64_t axis, int64_t n, int64_t k) {
  const int64_t rows = (n + k - 1) / k;  // the largest shard
  std::vector<int64_t> perm(local->ndim());
  perm[0] = axis;
  for (int64_t d = 0, j = 1; d < local->ndim(); ++d)
    if (d != axis) perm[j++] = d;
  Tensor x = F::contiguous(F::permute(local, perm));
  if (x->shape()[0] < rows) {  // pad to equal blocks
    Shape pad = x->shape();
    pad[0] = rows - x->shape()[0];
    x = F::cat({x, F::zeros(pad, CreationOptions{x->dtype(), x->device(), ""})}, 0);
  }
  Shape all = x->shape();
  all[0] = rows * k;
  Tensor out = F::zeros(all, CreationOptions{x->dtype(), x->device(), ""});
  comm::all_gather(out, x);
  TensorList parts;
  for (int64_t r = 0; r < k; ++r) {
    auto [b, e] = split_range(n, k, r);
    parts.push_back(F::narrow(out, 0, r * rows, e - b));
  }
  Tensor whole = F::cat(parts, 0);
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return F::contiguous(F::permute(whole, inv));
}

// x padded with zeros along dim d to `size`.
Tensor stack0(const TensorList& xs) {
  TensorList u;
  for (const Tensor& x : xs) u.push_back(F::unsqueeze(x, 0));
  return F::cat(u, 0);
}

Tensor pad_dim(const Tensor& x, int64_t d, int64_t size) {
  if (x->shape()[d] == size) return x;
  Shape pad = x->shape();
  pad[d] = size - x->shape()[d];
  return F::cat({x, F::zeros(pad, CreationOptions{x->dtype(), x->device(), ""})}, d);
}

// This rank's rows (along `axis`) of the sum of every rank's `local` (whole-shaped): one
// reduce-scatter of equal blocks, rank r's rows padded to the largest shard in block r.
Tensor reduce_scatter_split(const Tensor& local, int64_t axis, int64_t k, int64_t me) {
  const int64_t n = local->shape()[axis];
  const int64_t rows = (n + k - 1) / k;
  TensorList blocks;
  for (int64_t r = 0; r < k; ++r) {
    auto [b, e] = split_range(n, k, r);
    blocks.push_back(pad_dim(F::narrow(local, axis, b, e - b), axis, rows));
  }
  Tensor in = F::contiguous(stack0(blocks));
  Shape block = in->shape();
  block.erase(block.begin());
  Tensor out = F::zeros(block, CreationOptions{in->dtype(), in->device(), ""});
  comm::reduce_scatter(out, in, comm::ReduceOp::kSum);
  auto [b, e] = split_range(n, k, me);
  return F::contiguous(F::narrow(out, axis, 0, e - b));
}

// split(i) -> split(j) with one all-to-all: the piece of this shard that rank r keeps (its
// rows along j) goes to r, every piece padded to the largest shard along both dims.
Tensor all_to_all_split(const Tensor& local, const Shape& global_shape, int64_t i, int64_t j,
                        int64_t k, int64_t me) {
  const int64_t ni = global_shape[i], nj = global_shape[j];
  const int64_t rows_i = (ni + k - 1) / k, rows_j = (nj + k - 1) / k;
  TensorList pieces;
  for (int64_t r = 0; r < k; ++r) {
    auto [b, e] = split_range(nj, k, r);
    pieces.push_back(pad_dim(pad_dim(F::narrow(local, j, b, e - b), j, rows_j), i, rows_i));
  }
  Tensor in = F::contiguous(stack0(pieces));
  Tensor out = F::zeros(in->shape(), CreationOptions{in->dtype(), in->device(), ""});
  comm::all_to_all(out, in);
  auto [bj, ej] = split_range(nj, k, me);
  TensorList mine;
  for (int64_t r = 0; r < k; ++r) {
    auto [b, e] = split_range(ni, k, r);
    mine.push_back(F::narrow(F::narrow(F::select(out, 0, r), i, 0, e - b), j, 0, ej - bj));
  }
  return F::contiguous(F::cat(mine, i));
}

Tensor my_rows(const Tensor& whole, int64_t axis, int64_t k, int64_t me) {
  auto [b, e] = split_range(whole->shape()[axis], k, me);
  return F::contiguous(F::narrow(whole, axis, b, e - b));
}

}  // namespace

Tensor box_local(const Tensor& t, const Sbp& dst) {
  const GlobalMeta& g = meta(t);
  const Tensor& local = g.local;
  const Placement& p = g.placement;
  if (p.nd()) return box_local(t, uniform(p, dst));
  const int64_t k = static_cast<int64_t>(p.ranks.size()), me = rank_in(p);
  if (g.sbp == dst || k == 1) return local;
  if (me < 0) return absent_shard(t->shape(), dst, p, t->dtype());
  GradModeGuard no_grad(false);
  if (p.type != DeviceType::kCPU)
    throw_error<NotImplementedError>("to_global",
                                     "changing the sbp of a CUDA global tensor across processes "
                                     "needs the NCCL backend, which is not built yet");
  const comm::GroupScope among(p.ranks);
  if (g.sbp.kind == Sbp::kPartialSum && dst.is_split())
    return reduce_scatter_split(local, dst.axis, k, me);
  if (g.sbp.is_split() && dst.is_split())
    return all_to_all_split(local, t->shape(), g.sbp.axis, dst.axis, k, me);
  Tensor whole;  // the value, when needed
  switch (g.sbp.kind) {
    case Sbp::kSplit:
      whole = gather_split(local, g.sbp.axis, t->shape()[g.sbp.axis], k);
      break;
    case Sbp::kBroadcast:
      whole = local;
      break;
    case Sbp::kPartialSum:
      whole = F::clone(local);
      comm::all_reduce(whole, comm::ReduceOp::kSum);
      break;
  }
  switch (dst.kind) {
    case Sbp::kBroadcast:
      return whole;
    case Sbp::kSplit:
      return my_rows(whole, dst.axis, k, me);
    case Sbp::kPartialSum:
      return me == 0 ? (whole == local ? F::clone(local) : whole) : F::zeros_like(whole);
  }
  return whole;
}

void broadcast_from_first(const Tensor& local, const Placement& p) {
  if (p.ranks.size() < 2 || !holds(p)) return;
  const comm::GroupScope among(p.ranks);
  comm::broadcast(local, 0);
}

Tensor box(const Tensor& t, const Sbp& dst) {
  const GlobalMeta& g = meta(t);
  if (g.placement.nd()) return box(t, uniform(g.placement, dst));
  if (g.sbp == dst) return t;
  return make(box_local(t, dst), g.placement, dst, t->shape());
}

// Note [N-D boxing]: one axis's sbp changes by a 1-D boxing among the ranks of its axis group
// (the value there: the piece the axes before it pick, cut along the dims the axes after it
// split to this rank's part). That is right when no later axis splits a dim the change moves
// (the one the axis splits before or after): S(0) -> B on axis 0 under (., S(1)) gathers
// column blocks of row pieces, which concatenate into the column block of the whole; under
// (., S(0)) each rank holds rows of a row piece, whose concatenation is not a row block of the
// whole. Axes change from the first that differs; when a later axis's split is in the way,
// the last split axis becomes broadcast first (nothing after it splits), and is laid out as
// the destination says when its turn comes. Partial sums on other axes commute with all of
// it (boxing is linear).
Tensor box_local(const Tensor& t, const NdSbp& dst) {
  const GlobalMeta& g = meta(t);
  const Placement& p = g.placement;
  if (!p.nd()) {
    if (dst.size() != 1)
      throw_error<ValueError>("to_global", "expected 1 sbp for the placement ", p.str(), ", got ",
                              dst.size());
    return box_local(t, dst[0]);
  }
  const int64_t n = p.ndim();
  if (static_cast<int64_t>(dst.size()) != n)
    throw_error<ValueError>("to_global", "expected ", n, " sbp for the placement ", p.str(),
                            ", got ", dst.size());
  NdSbp cur = g.layout();
  if (cur == dst) return g.local;
  const int64_t me = rank_in(p);
  if (me < 0) return absent_shard(t->shape(), dst, p, t->dtype());
  GradModeGuard no_grad(false);
  const std::vector<int64_t> c = coords(p, me);
  Tensor local = g.local;
  // Changes axis k to `to` by a 1-D boxing in its axis group.
  auto step = [&](int64_t k, const Sbp& to) {
    Shape piece = t->shape();
    for (int64_t a = 0; a < k; ++a)
      if (cur[a].is_split()) {
        auto [b, e] = split_range(piece[cur[a].axis], p.hierarchy[a], c[a]);
        piece[cur[a].axis] = e - b;
      }
    for (int64_t a = k + 1; a < n; ++a)
      if (cur[a].is_split()) piece[cur[a].axis] = local->shape()[cur[a].axis];
    local = box_local(make(local, axis_group(p, k, me), cur[k], piece), to);
    cur[k] = to;
  };
  auto moves = [](const Sbp& s, const Sbp& u) { return s.is_split() && s.axis == u.axis; };
  for (;;) {
    int64_t k = 0;
    while (k < n && cur[k] == dst[k]) ++k;
    if (k == n) break;
    int64_t last_split = -1;  // the last later axis that splits a dim axis k's change moves
    for (int64_t a = k + 1; a < n; ++a)
      if (cur[a].is_split() && (moves(cur[k], cur[a]) || moves(dst[k], cur[a]))) last_split = a;
    if (last_split < 0) {
      step(k, dst[k]);
      continue;
    }
    for (int64_t a = n - 1; a > k; --a)
      if (cur[a].is_split()) {
        step(a, Sbp::broadcast());
        break;
      }
  }
  return local;
}

Tensor box(const Tensor& t, const NdSbp& dst) {
  const GlobalMeta& g = meta(t);
  if (!g.placement.nd() && dst.size() == 1) return box(t, dst[0]);
  if (g.layout() == dst) return t;
  return make(box_local(t, dst), g.placement, dst, t->shape());
}

namespace {

constexpr int kTransferTag = 0x4F460000;  // point-to-point messages of transfer()

}  // namespace

// Note [Transfers between placements]: where the source's layout already puts a destination
// rank's shard on a source rank (the same sbp on as many ranks, or a broadcast source), that
// source rank sends it directly. Otherwise the first rank of the source placement gathers the
// value (a boxing to broadcast among the source's ranks) and sends each destination rank the
// shard it holds under `dst` (a partial sum's value goes to the first destination rank, the
// others hold zeros). A rank in both placements keeps its own shard. The other processes take
// no part. Every process runs the call, so each knows the global shape.
Tensor transfer(const Tensor& t, const Placement& to, const Sbp& dst) {
  const GlobalMeta& g = meta(t);
  const Placement& from = g.placement;
  if (from.nd() || to.nd()) return transfer(t, to, uniform(to, dst));
  if (from == to) return box(t, dst);
  if (from.type != DeviceType::kCPU || to.type != DeviceType::kCPU)
    throw_error<NotImplementedError>("to_global",
                                     "moving a CUDA global tensor to another placement needs "
                                     "the NCCL backend, which is not built yet");
  GradModeGuard no_grad(false);
  const Shape& shape = t->shape();
  const int64_t root = from.ranks[0], me = rank();
  const int64_t k = static_cast<int64_t>(to.ranks.size()), mine_at = rank_in(to);
  // Rank j of `to`'s shard, cut from the whole value; null for a partial sum's zeros.
  auto shard = [&](const Tensor& whole, int64_t j) -> Tensor {
    if (dst.kind == Sbp::kPartialSum) return j == 0 ? whole : nullptr;
    return dst.is_split() ? my_rows(whole, dst.axis, k, j) : whole;
  };
  // Shard to shard: where a source rank already holds destination rank j's shard (the same
  // layout on as many ranks, or a broadcast source: any rank holds the whole value), source
  // rank j % (its number of ranks) sends it directly; nothing is gathered.
  const int64_t kf = static_cast<int64_t>(from.ranks.size());
  const bool same = g.sbp == dst && (dst.kind == Sbp::kBroadcast || kf == k);
  const bool direct = same || g.sbp.kind == Sbp::kBroadcast;
  auto sender = [&](int64_t j) { return direct ? from.ranks[j % kf] : root; };
  Tensor source;  // what this process cuts the shards it sends from
  if (direct) {
    if (holds(from)) source = g.local;
  } else if (me == root) {
    source = F::contiguous(box_local(t, Sbp::broadcast()));
  } else if (holds(from)) {
    box_local(t, Sbp::broadcast());  // the other source ranks take part in the gathering
  }
  Tensor mine;
  for (int64_t j = 0; j < k && source; ++j) {
    if (sender(j) != me) continue;
    const Tensor piece = same ? source : shard(source, j);
    if (!piece) continue;  // a partial sum's zeros
    if (to.ranks[j] == me)
      mine = F::clone(piece);
    else
      comm::send(F::contiguous(piece), static_cast<int>(to.ranks[j]), kTransferTag);
  }
  if (mine_at < 0) return make(absent_shard(shape, dst, to, t->dtype()), to, dst, shape);
  if (!mine) {
    mine = F::zeros(local_shape(shape, dst, to), CreationOptions{t->dtype(), local_device(to), ""});
    if (same || dst.kind != Sbp::kPartialSum || mine_at == 0)  // else a partial sum's zeros
      comm::recv(mine, static_cast<int>(sender(mine_at)), kTransferTag);
  }
  return make(mine, to, dst, shape);
}

// Note [Transfers between placements] on N-D placements: the value is gathered to broadcast
// on the source's axes (a 1-D broadcast tensor on its flat list of ranks), moved as a 1-D
// broadcast, and laid out on the destination's axes from there.
Tensor transfer(const Tensor& t, const Placement& to, const NdSbp& dst) {
  const GlobalMeta& g = meta(t);
  const Placement& from = g.placement;
  if (static_cast<int64_t>(dst.size()) != to.ndim())
    throw_error<ValueError>("to_global", "expected ", to.ndim(), " sbp for the placement ",
                            to.str(), ", got ", dst.size());
  if (!from.nd() && !to.nd()) return transfer(t, to, dst[0]);
  if (from == to) return box(t, dst);
  GradModeGuard no_grad(false);
  const Shape& shape = t->shape();
  Tensor src = t;
  if (from.nd()) {
    const Placement flat{from.type, from.ranks, {}};
    src = make(box_local(t, uniform(from, Sbp::broadcast())), flat, Sbp::broadcast(), shape);
  }
  if (!to.nd()) return transfer(src, to, dst[0]);
  const Placement flat{to.type, to.ranks, {}};
  const Tensor b = transfer(src, flat, Sbp::broadcast());
  return box(make(local_of(b), to, uniform(to, Sbp::broadcast()), shape), dst);
}

Tensor whole_value(const Tensor& t) {
  const Placement& p = meta(t).placement;
  Placement all{p.type, {}, {}};
  for (int64_t r = 0; r < world_size(); ++r) all.ranks.push_back(r);
  if (p.ranks == all.ranks) return box_local(t, uniform(p, Sbp::broadcast()));
  return local_of(transfer(t, all, NdSbp{Sbp::broadcast()}));
}

Tensor from_local(const Tensor& local_in, const Placement& p, const Sbp& sbp_in, bool check_meta,
                  bool sync_broadcast, const Shape* known_shape) {
  if (p.nd())
    return from_local(local_in, p, uniform(p, sbp_in), check_meta, sync_broadcast, known_shape);
  Sbp sbp = sbp_in;
  check_placement(p, "to_global");
  Tensor local = local_in;
  const int64_t me = rank_in(p), kp = static_cast<int64_t>(p.ranks.size());
  if (me >= 0 && local->device() != local_device(p))
    throw_error<RuntimeError>("to_global", "the local tensor is on ", local->device().str(),
                              " but the placement ", p.str(), " puts this rank's shard on ",
                              local_device(p).str());
  const int64_t k = world_size();
  // A process the placement leaves out passes a tensor that is ignored: with check_meta it
  // takes the placement's dtype, shape and split axis from the others.
  const bool learns = me < 0 && !known_shape && k > 1 && check_meta;
  if (sbp.is_split() && (sbp.axis < 0 || sbp.axis >= local->ndim()) && !learns)
    throw_error<IndexError>("to_global", "split axis ", sbp.axis, " is out of range for a ",
                            local->ndim(), "-d tensor");
  Shape shape = local->shape();
  if (known_shape) {
    if (me >= 0 && local_shape(*known_shape, sbp, p) != local->shape())
      throw_error<RuntimeError>("to_global", "internal error: a shard of shape ",
                                shape_str(local->shape()), " for the global shape ",
                                shape_str(*known_shape), " under ", sbp.str());
    shape = *known_shape;
  } else if (k > 1 && check_meta) {
    // Every process's dtype and shape (also those p leaves out: they learn the global shape):
    // the shards must agree but for the split dim, whose sizes must be balanced. Every process
    // sees every one's meta, so all raise together.
    if (local->ndim() > kMaxDims)
      throw_error<NotImplementedError>("to_global", "tensors of more than ", kMaxDims,
                                       " dims cannot be made global");
    const std::vector<int64_t> metas = gather_metas(local, sbp.kind, sbp.axis);
    const int64_t* v = metas.data();
    const int64_t first = p.ranks[0];
    const int64_t* ref = v + first * kMeta;
    for (int64_t r : p.ranks) {
      const int64_t* m = v + r * kMeta;
      if (m[kMeta - 2] != ref[kMeta - 2] || m[kMeta - 1] != ref[kMeta - 1])
        throw_error<ValueError>("to_global", "every rank must pass the same sbp: rank ", r,
                                " passed another one than rank ", first);
    }
    if (me < 0) sbp = Sbp{static_cast<Sbp::Kind>(ref[kMeta - 2]), ref[kMeta - 1]};
    int64_t n = 0;
    for (int64_t r : p.ranks) {
      const int64_t* m = v + r * kMeta;
      bool same = m[0] == ref[0] && m[1] == ref[1];
      for (int64_t d = 0; same && d < ref[1]; ++d)
        same = d == (sbp.is_split() ? sbp.axis : -1) || m[2 + d] == ref[2 + d];
      if (!same)
        throw_error<ValueError>("to_global",
                                "the local tensors of the ranks must have one dtype "
                                "and shape",
                                sbp.is_split() ? " (but for the split dim)" : "", ": rank ", r,
                                " differs from rank ", first);
      if (sbp.is_split()) n += m[2 + sbp.axis];
    }
    shape.assign(ref + 2, ref + 2 + ref[1]);  // the placement's shards' shape
    if (sbp.is_split()) {
      for (int64_t j = 0; j < kp; ++j) {
        auto [b, e] = split_range(n, kp, j);
        const int64_t rows = v[p.ranks[j] * kMeta + 2 + sbp.axis];
        if (rows != e - b)
          throw_error<ValueError>("to_global", "the shards of split(", sbp.axis,
                                  ") must be balanced (the first n % k ranks one row more): "
                                  "rank ",
                                  p.ranks[j], " holds ", rows, " of ", n, " rows, expected ",
                                  e - b);
      }
      shape[sbp.axis] = n;
    }
    if (me < 0 && ref[0] != static_cast<int64_t>(local->dtype()))  // left out: the placement's
      local = F::zeros(Shape{0}, CreationOptions{static_cast<DType>(ref[0]), Device{}, ""});
  } else if (sbp.is_split()) {
    shape[sbp.axis] *= kp;  // without check_meta every shard has this one's size
  }
  if (me < 0) return make(absent_shard(shape, sbp, p, local->dtype()), p, sbp, shape);
  if (sbp.kind == Sbp::kBroadcast && sync_broadcast && kp > 1) {
    if (p.type != DeviceType::kCPU)
      throw_error<NotImplementedError>("to_global",
                                       "broadcasting a CUDA tensor across processes "
                                       "needs the NCCL backend, which is not built yet");
    if (!local->is_contiguous()) {
      GradModeGuard no_grad(false);
      local = F::contiguous(local);  // rank 0's values land in this copy
    }
    broadcast_from_first(local, p);
  }
  return make(local, p, sbp, shape);
}

// From shards on an N-D placement: with check_meta every process's dtype and shape are
// gathered; the global shape is built axis by axis from the last (a split axis's piece is its
// groups' pieces concatenated), and every shard must then be the one its coordinates pick.
Tensor from_local(const Tensor& local_in, const Placement& p, const NdSbp& nd, bool check_meta,
                  bool sync_broadcast, const Shape* known_shape) {
  if (!p.nd()) {
    if (nd.size() != 1)
      throw_error<ValueError>("to_global", "expected 1 sbp for the placement ", p.str(), ", got ",
                              nd.size());
    return from_local(local_in, p, nd[0], check_meta, sync_broadcast, known_shape);
  }
  check_placement(p, "to_global");
  const int64_t n = p.ndim();
  if (static_cast<int64_t>(nd.size()) != n)
    throw_error<ValueError>("to_global", "expected ", n, " sbp for the placement ", p.str(),
                            " (one per hierarchy axis), got ", nd.size());
  Tensor local = local_in;
  const int64_t me = rank_in(p), k = world_size();
  if (me >= 0 && local->device() != local_device(p))
    throw_error<RuntimeError>("to_global", "the local tensor is on ", local->device().str(),
                              " but the placement ", p.str(), " puts this rank's shard on ",
                              local_device(p).str());
  const bool learns = me < 0 && !known_shape && k > 1 && check_meta;
  for (const Sbp& s : nd)
    if (s.is_split() && (s.axis < 0 || s.axis >= local->ndim()) && !learns)
      throw_error<IndexError>("to_global", "split axis ", s.axis, " is out of range for a ",
                              local->ndim(), "-d tensor");
  Shape shape = local->shape();
  if (known_shape) {
    shape = *known_shape;
  } else if (k > 1 && check_meta) {
    if (local->ndim() > kMaxDims)
      throw_error<NotImplementedError>("to_global", "tensors of more than ", kMaxDims,
                                       " dims cannot be made global");
    int64_t code = 0;  // the nd sbp, 7 bits per axis
    for (int64_t a = 0; a < n && a < 9; ++a)
      code |= (static_cast<int64_t>(nd[a].kind) * 32 + nd[a].axis + 1) << (7 * a);
    const std::vector<int64_t> metas = gather_metas(local, code, n);
    const int64_t* v = metas.data();
    const int64_t* ref = v + p.ranks[0] * kMeta;
    for (int64_t r : p.ranks) {
      const int64_t* m = v + r * kMeta;
      if (m[kMeta - 2] != ref[kMeta - 2] || m[kMeta - 1] != ref[kMeta - 1])
        throw_error<ValueError>("to_global", "every rank must pass the same sbp: rank ", r,
                                " passed another one than rank ", p.ranks[0]);
      if (m[0] != ref[0] || m[1] != ref[1])
        throw_error<ValueError>("to_global", "the local tensors of the ranks must have one dtype ",
                                "and number of dims: rank ", r, " differs from rank ", p.ranks[0]);
    }
    auto shard_shape = [&](int64_t index) {
      const int64_t* m = v + p.ranks[index] * kMeta;
      return Shape(m + 2, m + 2 + m[1]);
    };
    // The shape of the piece at coordinates c[0..axis) (the rest 0 on entry).
    std::vector<int64_t> c(n, 0);
    std::function<Shape(int64_t)> piece = [&](int64_t axis) -> Shape {
      if (axis == n) {
        int64_t index = 0;
        for (int64_t a = 0; a < n; ++a) index = index * p.hierarchy[a] + c[a];
        return shard_shape(index);
      }
      c[axis] = 0;
      Shape s = piece(axis + 1);
      if (nd[axis].is_split()) {
        int64_t rows = 0;
        for (int64_t i = 0; i < p.hierarchy[axis]; ++i) {
          c[axis] = i;
          rows += piece(axis + 1)[nd[axis].axis];
        }
        s[nd[axis].axis] = rows;
      }
      c[axis] = 0;
      return s;
    };
    shape = piece(0);
    for (int64_t j = 0; j < static_cast<int64_t>(p.ranks.size()); ++j)
      if (shard_shape(j) != local_shape(shape, nd, p, j))
        throw_error<ValueError>("to_global", "rank ", p.ranks[j], "'s local tensor of shape ",
                                shape_str(shard_shape(j)), " is not its shard of a value of shape ",
                                shape_str(shape), " laid out as ", nd_sbp_str(nd), " on ", p.str(),
                                " (expected ", shape_str(local_shape(shape, nd, p, j)),
                                "; splits are balanced, the first n % k ranks one row more)");
    if (me < 0 && ref[0] != static_cast<int64_t>(local->dtype()))  // left out: the placement's
      local = F::zeros(Shape{0}, CreationOptions{static_cast<DType>(ref[0]), Device{}, ""});
  } else {
    for (int64_t a = 0; a < n; ++a)  // without check_meta every shard has this one's size
      if (nd[a].is_split()) shape[nd[a].axis] *= p.hierarchy[a];
  }
  if (me >= 0 && local_shape(shape, nd, p) != local->shape())
    throw_error<RuntimeError>("to_global", "a shard of shape ", shape_str(local->shape()),
                              " for the global shape ", shape_str(shape), " under ",
                              nd_sbp_str(nd));
  if (me < 0) return make(absent_shard(shape, nd, p, local->dtype()), p, nd, shape);
  if (sync_broadcast) {
    for (int64_t a = 0; a < n; ++a) {
      if (nd[a].kind != Sbp::kBroadcast || p.hierarchy[a] < 2) continue;
      if (p.type != DeviceType::kCPU)
        throw_error<NotImplementedError>("to_global",
                                         "broadcasting a CUDA tensor across processes "
                                         "needs the NCCL backend, which is not built yet");
      if (!local->is_contiguous()) {
        GradModeGuard no_grad(false);
        local = F::contiguous(local);  // the first rank's values land in this copy
      }
      broadcast_from_first(local, axis_group(p, a, me));
    }
  }
  return make(local, p, nd, shape);
}

}  // namespace global
}  // namespace oneflow
