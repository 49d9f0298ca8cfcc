// Collective communication between the processes of a group (DESIGN.md section 8): Gloo over
// TCP for CPU tensors. One process group per process (the launcher's ranks); ranks rendezvous
// through a TCP key-value store that rank 0 serves (tcp_store.h).
//
// Every collective is queued on its group's communication stream of the eager engine
// (eager/engine.h, enqueue_comm; a stream per group, so collectives of different groups may be
// issued in different orders on different ranks) and returns at once: it runs after the CPU ops
// queued before it on its tensors, and later ops on them (and reads of their values) wait for it,
// while other CPU ops run beside it. Arguments are checked at the call; a failure inside the
// collective (a peer that died, the timeout) raises at the next synchronisation point as a
// RuntimeError naming the collective and the Python line that issued it. With
// ONEFLOW_SYNC_EXECUTION=1 a collective runs before the call returns.
//
// Tensors must be contiguous CPU tensors (the Python layer copies others); CUDA tensors need the
// NCCL backend, which is not built yet.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "oneflow/core/framework/tensor.h"

namespace oneflow::comm {

struct Group;

enum class ReduceOp { kSum, kProduct, kMax, kMin };
// "sum", "product", "max", "min"; a ValueError naming `op` otherwise.
ReduceOp parse_reduce_op(const std::string& name, const char* op);

// Joins the group: rank 0 serves the store at master_addr:master_port, every rank connects and
// Gloo connects every pair over TCP. timeout_seconds bounds the rendezvous and every later
// collective (a peer that stops answering fails the others instead of hanging them).
void init(int rank, int world_size, const std::string& master_addr, int master_port,
          double timeout_seconds);
bool initialized();
int rank();
int world_size();
// Waits for the queued collectives and leaves the group (init may be called again).
void destroy();
// While on: the ranks of the group of every collective this process issues (point-to-point
// sends and receives aside). nn.Graph reads them while it traces a pipeline's first
// micro-batch: a collective over several stages' processes rules out the 1F1B schedule.
void log_collectives(bool on);
std::vector<std::vector<int64_t>> logged_collectives();

// Collectives issued on this thread while a GroupScope lives run among `ranks` only (ranks of
// the process group; a rank's place in the list is its rank in the subgroup, which src and dst
// name); this process must be one of them. The subgroup connects the first time it is used
// (Note [Subgroups] in comm.cpp). The process group itself when `ranks` is every rank in order.
class GroupScope {
 public:
  // id != 0: a group of its own (oneflow.distributed.new_group's), apart from others of the
  // same ranks, also of all ranks; id 0: the group of those ranks (placements' boxing).
  explicit GroupScope(const std::vector<int64_t>& ranks, int64_t id = 0);
  ~GroupScope();
  GroupScope(const GroupScope&) = delete;
  GroupScope& operator=(const GroupScope&) = delete;

 private:
  std::shared_ptr<Group> previous_;
};

void all_reduce(const Tensor& tensor, ReduceOp op);
void broadcast(const Tensor& tensor, int src);
// The reduction lands in `tensor` on dst; other ranks' tensors keep their values.
void reduce(const Tensor& tensor, int dst, ReduceOp op);
// output holds world_size blocks of input's size, rank r's input in block r.
void all_gather(const Tensor& output, const Tensor& input);
// output (null on ranks other than dst) as for all_gather.
void gather(const Tensor& output, const Tensor& input, int dst);
// input (null on ranks other than src) holds world_size blocks; block r goes to rank r.
void scatter(const Tensor& output, const Tensor& input, int src);
// input holds world_size blocks of output's size; rank r gets the reduction of blocks r.
void reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op);
// Equal blocks: block j of rank i's input becomes block i of rank j's output.
void all_to_all(const Tensor& output, const Tensor& input);
void barrier();
// Queued: returns once the bytes are copied and posted; the peer receives them later (a send
// waited for on the stream would deadlock ranks that all send before they receive).
void send(const Tensor& tensor, int dst, int tag);
// Queues a wait for the posted sends: after it has run (a synchronisation), every send issued
// before has reached its peer. Every collective and receive does this first too.
void flush_sends();
void recv(const Tensor& tensor, int src, int tag);
// Waits until the collectives queued so far on this thread's group (its GroupScope's, or the
// process group) have run and its posted sends have reached their peers; raises the group's
// pending error.
void wait_group();

}  // namespace oneflow::comm
