// Global tensors (DESIGN.md section 8): a tensor whose value is spread over the processes of a
// placement. Each process holds one shard, a local tensor; the sbp says how the shards make the
// global value: split(axis) (the shards, concatenated along axis in rank order), broadcast
// (every shard is the whole value) or partial_sum (the value is the sum of the shards).
//
// Placements are 1-D here: a device type and a list of ranks of the process group (N-D
// hierarchies raise NotImplementedError). A rank's place in the list is its rank within the
// placement: split shards go in that order, and collectives that box a tensor run among the
// placement's ranks only. Shards of a split are balanced: with n rows over k ranks, the first
// n % k ranks hold one row more.
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
  std::vector<int64_t> ranks;
  bool operator==(const Placement& o) const { return type == o.type && ranks == o.ranks; }
  bool operator!=(const Placement& o) const { return !(*this == o); }
  std::string str() const;
};

struct GlobalMeta {
  Placement placement;
  Sbp sbp;
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
// Whether t is global and its shard is absent here (Note [Absent shards]).
bool absent(const Tensor& t);

// A global tensor viewing `local` as this rank's shard (no data moves, no autograd).
Tensor make(const Tensor& local, const Placement& p, const Sbp& sbp, const Shape& global_shape,
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
// A global tensor with t's value on another placement, laid out as `dst` (no autograd): the
// first rank of t's placement sends each rank of `to` its shard.
Tensor transfer(const Tensor& t, const Placement& to, const Sbp& dst);
// t's whole value as a local tensor on every process (also those t's placement leaves out).
Tensor whole_value(const Tensor& t);

// local -> global: `local` is this rank's shard of a value laid out as sbp. With check_meta
// the global shape of a split is found by gathering the shards' sizes (without, every shard is
// taken to have this one's size). With sync_broadcast a broadcast value is rank 0's: it is
// copied into `local` on the other ranks (OneFlow's to_global of a local tensor).
// With known_shape (the global shape, known to the caller) nothing is gathered.
Tensor from_local(const Tensor& local, const Placement& p, const Sbp& sbp, bool check_meta = true,
                  bool sync_broadcast = false, const Shape* known_shape = nullptr);

}  // namespace global
}  // namespace oneflow
