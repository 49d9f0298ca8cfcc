// Global tensors (DESIGN.md section 8): a tensor whose value is spread over the processes of a
// placement. Each process holds one shard, a local tensor; the sbp says how the shards make the
// global value: split(axis) (the shards, concatenated along axis in rank order), broadcast
// (every shard is the whole value) or partial_sum (the value is the sum of the shards).
//
// A placement is a device type and a list of ranks of the process group. A rank's place in
// the list is its rank within the placement: split shards go in that order, and collectives
// that box a tensor run among the placement's ranks only. Shards of a split are balanced: with
// n rows over k ranks, the first n % k ranks hold one row more.
//
// Note [N-D placements]: a placement may arrange its ranks as an N-D array (its hierarchy,
// ranks in row-major order), and a tensor on it has one sbp per hierarchy axis (an nd_sbp).
// The layouts nest: axis 0's sbp lays the value out over the rows of the array (each row a
// group of ranks holding one piece), axis 1's lays each piece out over that row's ranks, and
// so on; a rank's shard is the piece its coordinates pick at the last axis. (S(0), S(1)) on a
// 2 x 2 array: rank [i][j] holds block (i, j) of a matrix; (S(0), B): the rows of row i of the
// array all hold batch piece i (data parallel over the first axis, replicated over the second).
// The ranks along one axis through a rank (its axis group) are a 1-D placement: changing one
// axis's sbp is a 1-D boxing among them (box_local), and ops choose a 1-D signature per axis
// (global_dispatch.cpp).
//
// Note [Absent shards]: every process runs every op of the program, also on tensors whose
// placement leaves it out (pipeline stages). There the tensor's shard is a meta tensor (a shape
// and dtype, no memory): ops on it only infer the output metas (global_dispatch.cpp), so
// autograd records the same graph on every process, and a conversion to another placement
// (transfer) is where its values reach the processes that are in.
#pragma once

#include <string>
#include <vector>

#include "oneflow/core/framework/tensor.h"

namespace oneflow {

struct Sbp {
  enum Kind : int8_t { kSplit, kBroadcast, kPartialSum };
  Kind kind = kBroadcast;
  int64_t axis = -1;  // kSplit only

  static Sbp split(int64_t axis) { return {kSplit, axis}; }
  static Sbp broadcast() { return {kBroadcast, -1}; }
  static Sbp partial_sum() { return {kPartialSum, -1}; }
  bool is_split() const { return kind == kSplit; }
  bool operator==(const Sbp& o) const { return kind == o.kind && axis == o.axis; }
  bool operator!=(const Sbp& o) const { return !(*this == o); }
  std::string str() const;  // "S(0)", "B", "P"
};

struct Placement {
  DeviceType type = DeviceType::kCPU;
  std::vector<int64_t> ranks;      // row-major over the hierarchy
  std::vector<int64_t> hierarchy;  // the N-D shape of the ranks; empty for 1-D placements
  bool nd() const { return hierarchy.size() > 1; }
  // The number of hierarchy axes (1 for 1-D placements).
  int64_t ndim() const { return nd() ? static_cast<int64_t>(hierarchy.size()) : 1; }
  bool operator==(const Placement& o) const {
    return type == o.type && ranks == o.ranks && hierarchy == o.hierarchy;
  }
  bool operator!=(const Placement& o) const { return !(*this == o); }
  std::string str() const;
};

// One sbp per axis of a placement's hierarchy (Note [N-D placements]).
using NdSbp = std::vector<Sbp>;
std::string nd_sbp_str(const NdSbp& nd);  // "(S(0), B)"

struct GlobalMeta {
  Placement placement;
  Sbp sbp;       // 1-D placements; nd_sbp[0] on N-D ones
  NdSbp nd_sbp;  // N-D placements only (empty on 1-D ones)
  // The sbp of every hierarchy axis ({sbp} on 1-D placements).
  NdSbp layout() const { return nd_sbp.empty() ? NdSbp{sbp} : nd_sbp; }
  Tensor local;  // this process's shard; no autograd state (autograd runs on the global tensor)
  // A view op's result whose shard views a boxed copy of its input, not the input's shard:
  // writing into it would not change the input, so in-place ops on it raise.
  bool copied_view = false;
  // A view op's result: the global tensor it views (the root of a chain of views). In-place
  // ops that need autograd through such a view are refused (global_dispatch.cpp).
  Tensor view_base;
};

namespace global {

// This process's rank and the group size (0 and 1 before oneflow.comm is initialised).
int64_t rank();
int64_t world_size();
// Checks a placement against the process group; `op` names the caller in errors.
void check_placement(const Placement& p, const char* op);
// This process's rank within p (its place in p.ranks), or -1 when p leaves it out.
int64_t rank_in(const Placement& p);
inline bool holds(const Placement& p) { return rank_in(p) >= 0; }
// The device a placement's shards live on in this process.
Device local_device(const Placement& p);
// [begin, end) of rank r's rows when n rows are split over k ranks.
std::pair<int64_t, int64_t> split_range(int64_t n, int64_t k, int64_t r);
// The shard shape of `global_shape` under sbp on this rank of p (rank 0's where p leaves this
// process out: the shape of its meta shard).
Shape local_shape(const Shape& global_shape, const Sbp& sbp, const Placement& p);
// N-D placements (Note [N-D placements]): a rank's coordinates in the hierarchy from its
// place in p.ranks; the 1-D placement of the ranks along `axis` through the rank at place
// `index` (this process's place, or 0 where p leaves it out, when index < 0); the shard shape
// of the rank at `index` (the same default) under nd.
std::vector<int64_t> coords(const Placement& p, int64_t index);
Placement axis_group(const Placement& p, int64_t axis, int64_t index = -1);
Shape local_shape(const Shape& global_shape, const NdSbp& nd, const Placement& p,
                  int64_t index = -1);
// nd on p: a 1-D placement's single sbp, or nd itself (one sbp per axis) on an N-D one; a
// single sbp on an N-D placement is that sbp on every axis.
NdSbp uniform(const Placement& p, const Sbp& s);
// Whether t is global and its shard is absent here (Note [Absent shards]).
bool absent(const Tensor& t);

// A global tensor viewing `local` as this rank's shard (no data moves, no autograd).
Tensor make(const Tensor& local, const Placement& p, const Sbp& sbp, const Shape& global_shape,
            bool copied_view = false, const Tensor& view_base = nullptr);
Tensor make(const Tensor& local, const Placement& p, const NdSbp& nd, const Shape& global_shape,
            bool copied_view = false, const Tensor& view_base = nullptr);
const GlobalMeta& meta(const Tensor& t);
inline const Tensor& local_of(const Tensor& t) { return meta(t).local; }

// `value` (a local tensor holding a whole value, the same on every rank) as a broadcast
// global tensor on ref's placement when ref is global; `value` itself otherwise. For constants
// a functional op makes beside its inputs (default weights).
Tensor broadcast_like(const Tensor& ref, const Tensor& value);

// Overwrites a contiguous shard with the one of p's first rank (a queued collective).
void broadcast_from_first(const Tensor& local, const Placement& p);

// A global tensor's strides, mirroring its shard's layout (Note [Global strides]).
Strides global_strides(const TensorImpl& local, const Shape& shape);

// This rank's shard of t's value laid out as `dst` (collectives through oneflow.comm; no
// autograd). Returns t's own shard when the layouts agree.
Tensor box_local(const Tensor& t, const Sbp& dst);
// A global tensor with t's value laid out as `dst` (no autograd).
Tensor box(const Tensor& t, const Sbp& dst);
// The same with one sbp per hierarchy axis of t's placement (any placement).
Tensor box_local(const Tensor& t, const NdSbp& dst);
Tensor box(const Tensor& t, const NdSbp& dst);
// A global tensor with t's value on another placement, laid out as `dst` (no autograd): the
// first rank of t's placement sends each rank of `to` its shard.
Tensor transfer(const Tensor& t, const Placement& to, const Sbp& dst);
// The same to a placement of any hierarchy (N-D sources or destinations go through a broadcast
// layout on the flat list of ranks).
Tensor transfer(const Tensor& t, const Placement& to, const NdSbp& dst);
// t's whole value as a local tensor on every process (also those t's placement leaves out).
Tensor whole_value(const Tensor& t);

// local -> global: `local` is this rank's shard of a value laid out as sbp. With check_meta
// the global shape of a split is found by gathering the shards' sizes (without, every shard is
// taken to have this one's size). With sync_broadcast a broadcast value is rank 0's: it is
// copied into `local` on the other ranks (OneFlow's to_global of a local tensor).
// With known_shape (the global shape, known to the caller) nothing is gathered.
Tensor from_local(const Tensor& local, const Placement& p, const Sbp& sbp, bool check_meta = true,
                  bool sync_broadcast = false, const Shape* known_shape = nullptr);
// The same with one sbp per hierarchy axis of p (any placement).
Tensor from_local(const Tensor& local, const Placement& p, const NdSbp& nd, bool check_meta = true,
                  bool sync_broadcast = false, const Shape* known_shape = nullptr);

}  // namespace global
}  // namespace oneflow
