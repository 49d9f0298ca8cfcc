#include "oneflow/core/comm/comm.h"

#include <unistd.h>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "oneflow/core/comm/tcp_store.h"
#include "oneflow/core/common/error.h"
#include "oneflow/core/common/half.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/graph/graph.h"
#include "oneflow/core/graph/trace_pause.h"

namespace oneflow::comm {

struct Group;

namespace {

// The subgroup of the innermost GroupScope on this thread (null: the process group).
thread_local std::shared_ptr<Group> t_scoped;

// A collective recorded by a traced nn.Graph (Note [Collectives in a graph] in graph.cpp): its
// compute_cpu issues the collective again on a replay's tensors (queued as an eager one).
class CollectiveStep final : public Primitive {
 public:
  using Issue = void (*)(const TensorList& in, const TensorList& out, const Attrs& attrs);
  CollectiveStep(const char* name, Issue issue) : name_(name), issue_(issue) {}
  const char* name() const override { return name_; }
  std::vector<TensorMeta> infer(const TensorList&, const Attrs&) const override { return {}; }
  void compute_cpu(const TensorList& in, const TensorList& out, const Attrs& a) const override {
    issue(in, out, a);
  }
  void compute_cuda(const TensorList& in, const TensorList& out, const Attrs& a) const override {
    issue(in, out, a);
  }

 private:
  // Among the ranks it was traced in (a subgroup's collective records them).
  void issue(const TensorList& in, const TensorList& out, const Attrs& a) const {
    if (!a.has("group")) return issue_(in, out, a);
    const GroupScope among(a.get<std::vector<int64_t>>("group"),
                           a.has("group_id") ? a.get<int64_t>("group_id") : 0);
    issue_(in, out, a);
  }

  const char* name_;
  Issue issue_;
};

ReduceOp op_attr(const Attrs& a) { return static_cast<ReduceOp>(a.get<int64_t>("op")); }
Attrs op_attrs(ReduceOp op) { return Attrs{{"op", static_cast<int64_t>(op)}}; }

const CollectiveStep kAllReduceStep("all_reduce",
                                    [](const TensorList&, const TensorList& out, const Attrs& a) {
                                      all_reduce(out[0], op_attr(a));
                                    });
const CollectiveStep kBroadcastStep("broadcast",
                                    [](const TensorList&, const TensorList& out, const Attrs& a) {
                                      broadcast(out[0], static_cast<int>(a.get<int64_t>("src")));
                                    });
const CollectiveStep kAllGatherStep("all_gather", [](const TensorList& in, const TensorList& out,
                                                     const Attrs&) { all_gather(out[0], in[0]); });
const CollectiveStep kReduceScatterStep("reduce_scatter",
                                        [](const TensorList& in, const TensorList& out,
                                           const Attrs& a) {
                                          reduce_scatter(out[0], in[0], op_attr(a));
                                        });
const CollectiveStep kAllToAllStep("all_to_all", [](const TensorList& in, const TensorList& out,
                                                    const Attrs&) { all_to_all(out[0], in[0]); });
const CollectiveStep kSendStep("send", [](const TensorList& in, const TensorList&, const Attrs& a) {
  send(in[0], static_cast<int>(a.get<int64_t>("peer")), static_cast<int>(a.get<int64_t>("tag")));
});
const CollectiveStep kRecvStep("recv", [](const TensorList&, const TensorList& out,
                                          const Attrs& a) {
  recv(out[0], static_cast<int>(a.get<int64_t>("peer")), static_cast<int>(a.get<int64_t>("tag")));
});

// The ranks and the id of the subgroup of this thread's innermost GroupScope.
const std::vector<int64_t>& scoped_ranks();
int64_t scoped_id();

// The collectives a traced graph cannot record yet say so (rather than the generic refusal of
// what a graph cannot see).
void refuse_in_graph(const char* op) {
  if (graph::tracing())
    throw_error<NotImplementedError>(op,
                                     "cannot be recorded in nn.Graph yet (all_reduce, broadcast, "
                                     "all_gather, reduce_scatter, all_to_all, send and recv can)");
}

// While a graph is traced: records the collective, and lets it run eagerly (the trace runs
// build()) without recording what it does inside; a subgroup's collective with its ranks.
class Traced {
 public:
  Traced(const CollectiveStep& step, const TensorList& inputs, const TensorList& outputs,
         const Attrs& attrs = {})
      : paused_(graph::tracing()) {
    if (!paused_) return;
    Attrs recorded = attrs;
    if (t_scoped) recorded.set("group", scoped_ranks());
    if (t_scoped && scoped_id() != 0) recorded.set("group_id", scoped_id());
    graph::record_collective(step, inputs, outputs, recorded);
    graph::pause_trace();
  }
  ~Traced() {
    if (paused_) graph::resume_trace();
  }
  Traced(const Traced&) = delete;
  Traced& operator=(const Traced&) = delete;

 private:
  bool paused_;
};

// Note [Sends do not block the stream]: Gloo's send completes only once the peer has posted the
// matching receive, and the tasks run one after another on the communication stream's thread.
// A send that waited there would deadlock a ring of ranks that each send before they receive
// (isend then irecv, a common exchange). So a send copies its bytes, posts them and returns; a
// thread of the group's (SendWaiter) waits for the posted sends in order and frees their copies.
// Every other collective of the group, Work.wait() of a send, flush_sends and process exit wait
// for those waits first (finish_sends); a receive does not: a pipeline stage that sends its
// micro-batches' activations and then receives their gradients would wait in its first receive
// for a send that the peer receives only after it has sent the second gradient, which this
// process receives after the first (it deadlocked when receives waited for the sends). The
// tensor is free to change once the send's task has run.

// The waits for a group's posted sends, run in order on a thread of their own (started with
// the first send). A failed wait keeps its error for wait_all() and the later sends are still
// waited for. The thread shares its state with the group; it ends when the group goes. A forked
// child has no such thread: the parent's sends are not its own (it neither waits for them nor
// frees them).
class SendWaiter {
 public:
  SendWaiter() = default;
  SendWaiter(const SendWaiter&) = delete;
  SendWaiter& operator=(const SendWaiter&) = delete;
  ~SendWaiter() {
    if (getpid() != st_->owner) return;  // a forked child: the state may be mid-update
    std::lock_guard<std::mutex> lk(st_->mu);
    st_->stop = true;
    st_->work.notify_one();
  }

  void add(std::function<void()> wait) {
    std::lock_guard<std::mutex> lk(st_->mu);
    if (st_->owner != getpid()) {  // first send (or first in this process): start the thread
      if (st_->owner != 0) {       // a forked child: set the parent's sends aside (never freed)
        new std::deque<std::function<void()>>(std::move(st_->queue));
        st_->queue.clear();
        st_->added = st_->finished = 0;
        st_->error = nullptr;
      }
      st_->owner = getpid();
      std::thread([st = st_] { run(st); }).detach();
    }
    st_->queue.push_back(std::move(wait));
    ++st_->added;
    st_->work.notify_one();
  }

  // Until the sends added so far have completed or failed; raises the first failure (once).
  void wait_all() {
    std::unique_lock<std::mutex> lk(st_->mu);
    if (st_->owner != 0 && st_->owner != getpid()) return;  // a forked child: not its sends
    const uint64_t target = st_->added;
    st_->done.wait(lk, [&] { return st_->finished >= target; });
    if (st_->error) {
      std::exception_ptr e = std::exchange(st_->error, nullptr);
      lk.unlock();
      std::rethrow_exception(e);
    }
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable work, done;
    std::deque<std::function<void()>> queue;
    uint64_t added = 0, finished = 0;
    std::exception_ptr error;
    bool stop = false;
    pid_t owner = 0;  // the process whose thread runs the waits (0: none yet)
  };

  static void run(const std::shared_ptr<State>& st) {
    std::unique_lock<std::mutex> lk(st->mu);
    for (;;) {
      st->work.wait(lk, [&] { return st->stop || !st->queue.empty(); });
      if (st->queue.empty()) return;  // the group has gone
      std::function<void()> wait = std::move(st->queue.front());
      st->queue.pop_front();
      lk.unlock();
      std::exception_ptr e;
      try {
        wait();
      } catch (...) {
        e = std::current_exception();
      }
      wait = nullptr;  // the send's copy and buffer go here, outside the lock
      lk.lock();
      if (e && !st->error) st->error = e;
      ++st->finished;
      st->done.notify_all();
    }
  }

  std::shared_ptr<State> st_ = std::make_shared<State>();
};
}  // namespace

struct Group {
  int rank = 0;
  int size = 1;
  std::chrono::milliseconds timeout{0};
  std::unique_ptr<TcpStore> store;                 // rank 0 serves it for the group's lifetime
  std::shared_ptr<gloo::rendezvous::Context> ctx;  // null for a group of one
  std::shared_ptr<gloo::transport::Device> device;
  mutable SendWaiter sends;  // the posted sends (Note [Sends do not block the stream])
  // A subgroup's process group (whose store it shares) and its ranks; null for the process group.
  const Group* parent = nullptr;
  std::vector<int64_t> ranks;
  // The subgroups made so far (process group only; under g_mu), keyed by their id and ranks.
  std::map<std::pair<int64_t, std::vector<int64_t>>, std::shared_ptr<Group>> subgroups;
  int64_t id = 0;  // a subgroup's id (0: by its ranks alone; GroupScope)
  const Group& root() const { return parent ? *parent : *this; }
};

namespace {

// Waits for the posted sends to complete (Note [Sends do not block the stream]); raises the
// error of one that failed.
void finish_sends(const Group& g) { g.sends.wait_all(); }

std::mutex g_mu;
std::shared_ptr<Group> g_group;  // under g_mu

const std::vector<int64_t>& scoped_ranks() { return t_scoped->ranks; }
int64_t scoped_id() { return t_scoped->id; }

std::shared_ptr<Group> group(const char* op) {
  if (t_scoped) return t_scoped;
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_group)
    throw_error<RuntimeError>(op,
                              "the process group is not initialized: call "
                              "oneflow.distributed.init_process_group() or start the program "
                              "with python -m oneflow.distributed.launch");
  return g_group;
}

void check_tensor(const Tensor& t, const char* op, const char* what) {
  if (!t) throw_error<ValueError>(op, "expected a tensor for ", what, ", got None");
  if (t->device().type != DeviceType::kCPU)
    throw_error<NotImplementedError>(op, "the ", what, " is on ", t->device().str(),
                                     ": collectives on CUDA tensors need the NCCL backend, which "
                                     "is not built yet; use CPU tensors (the Gloo backend)");
  if (!t->is_contiguous()) throw_error<ValueError>(op, "expected the ", what, " to be contiguous");
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a->dtype() != b->dtype())
    throw_error<ValueError>(op, "expected input and output of the same dtype, got ",
                            dtype_name(b->dtype()), " and ", dtype_name(a->dtype()));
}

void check_rank(int r, const Group& g, const char* op, const char* what) {
  if (r < 0 || r >= g.size)
    throw_error<ValueError>(op, "expected ", what, " in [0, ", g.size - 1, "], got ", r);
}

void check_numel(int64_t got, int64_t want, const char* op, const char* what) {
  if (got != want)
    throw_error<ValueError>(op, "expected the ", what, " to have ", want, " elements, got ", got);
}

size_t nbytes(const TensorImpl& t) { return static_cast<size_t>(t.numel()) * itemsize(t.dtype()); }

// Which peers of the group have gone, as rank 0's store saw their connections close (waits up
// to a second for it to notice); "" when it knows of none.
std::string gone_peers(const Group& g) {
  try {
    for (int i = 0; i < 10; ++i) {
      std::vector<int> gone = g.root().store->gone_ranks();
      if (g.parent)  // a subgroup: its own ranks only
        gone.erase(std::remove_if(gone.begin(), gone.end(),
                                  [&](int r) {
                                    return std::find(g.ranks.begin(), g.ranks.end(), r) ==
                                           g.ranks.end();
                                  }),
                   gone.end());
      if (!gone.empty()) {
        std::string s = gone.size() == 1 ? "rank " : "ranks ";
        for (size_t j = 0; j < gone.size(); ++j) s += (j ? ", " : "") + std::to_string(gone[j]);
        return s + (gone.size() == 1 ? " has" : " have") + " exited";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  } catch (const Error&) {
    return "rank 0 (which serves the group's store) has exited";
  }
  return "";
}

// Runs a Gloo call after the pending sends (unless flush_sends is false: send and recv see to
// them), turning its errors (a peer that closed its connection, a timeout) into a RuntimeError
// that names the collective, this rank and the peers that have gone.
template <typename F>
void run_gloo(const char* op, const Group& g, F&& f, bool flush_sends = true) {
  try {
    if (flush_sends) finish_sends(g);
    f();
  } catch (const gloo::Exception& e) {
    const std::string gone = gone_peers(g);
    std::string where = std::to_string(g.rank) + " of " + std::to_string(g.size);
    if (g.parent) {  // a subgroup: this process's rank, and the group's ranks
      where = std::to_string(g.ranks[g.rank]) + " (rank " + where + " of the group of ranks";
      for (size_t i = 0; i < g.ranks.size(); ++i)
        where += (i ? ", " : " ") + std::to_string(g.ranks[i]);
      where += ")";
    }
    throw_error<RuntimeError>(
        op, "communication failed on rank ", where, ": ",
        gone.empty() ? "a peer process may have exited, or the collective timed out" : gone, " (",
        e.what(), ")");
  }
}

std::atomic<bool> g_log_collectives{false};
std::mutex g_collective_log_mu;
std::vector<std::vector<int64_t>> g_collective_log;  // under g_collective_log_mu

void log_collective(const char* op, const Group& group) {
  if (std::strcmp(op, "send") == 0 || std::strcmp(op, "recv") == 0) return;
  std::vector<int64_t> ranks = group.ranks;
  if (ranks.empty())
    for (int r = 0; r < group.size; ++r) ranks.push_back(r);
  std::lock_guard<std::mutex> lk(g_collective_log_mu);
  g_collective_log.push_back(std::move(ranks));
}

// Queues `fn`, which reads the memory of `reads` and writes that of `writes`, on the group's
// communication stream (see comm.h); runs it here in synchronous mode. Memory code outside
// oneflow may touch (NumPy, DLPack) is done before the call returns.
void submit(const char* op, const Group* group, const TensorList& reads, const TensorList& writes,
            std::function<void()> fn) {
  if (g_log_collectives.load(std::memory_order_relaxed) && group) log_collective(op, *group);
  if (!eager::async_enabled()) {
    for (const Tensor& t : reads) t->storage()->read_data();  // queued writers first
    for (const Tensor& t : writes) t->storage()->data();      // queued users first
    fn();
    return;
  }
  bool shared = false;
  for (const TensorList* list : {&reads, &writes})
    for (const Tensor& t : *list) shared = shared || t->storage()->shared_outside();
  const eager::CommTicket ticket = eager::enqueue_comm(op, std::move(fn), reads, writes, group);
  if (shared) eager::wait_comm(ticket);
}

// Integer sums and products wrap, as the CPU kernels' do (through unsigned arithmetic: signed
// overflow is undefined).
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

template <typename T, typename F>
void combine(void* c, const void* a, const void* b, size_t n, F f) {
  using A = compute_t<T>;  // 16-bit floats reduce in float, rounded per step
  T* out = static_cast<T*>(c);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = T(f(A(x[i]), A(y[i])));
}

// Gloo's reduction callback: out = a op b over n elements.
template <typename T>
std::function<void(void*, const void*, const void*, size_t)> reduce_fn(ReduceOp op) {
  using A = compute_t<T>;  // 16-bit floats reduce in float, rounded per step
  if constexpr (std::is_same_v<T, bool>) {
    // Sum and max of booleans are "any", product and min "all".
    if (op == ReduceOp::kSum || op == ReduceOp::kMax)
      return [](void* c, const void* a, const void* b, size_t n) {
        combine<T>(c, a, b, n, [](bool x, bool y) { return x || y; });
      };
    return [](void* c, const void* a, const void* b, size_t n) {
      combine<T>(c, a, b, n, [](bool x, bool y) { return x && y; });
    };
  } else {
    switch (op) {
      case ReduceOp::kSum:
        return [](void* c, const void* a, const void* b, size_t n) {
          combine<T>(c, a, b, n, [](A x, A y) { return wrap_add(x, y); });
        };
      case ReduceOp::kProduct:
        return [](void* c, const void* a, const void* b, size_t n) {
          combine<T>(c, a, b, n, [](A x, A y) { return wrap_mul(x, y); });
        };
      case ReduceOp::kMax:  // NaN wins, as in the max reductions
        return [](void* c, const void* a, const void* b, size_t n) {
          combine<T>(c, a, b, n, [](A x, A y) { return (x != x || x > y) ? x : y; });
        };
      case ReduceOp::kMin:
        return [](void* c, const void* a, const void* b, size_t n) {
          combine<T>(c, a, b, n, [](A x, A y) { return (x != x || x < y) ? x : y; });
        };
    }
  }
  return {};
}

// Calls f(T{}) with the element type of dt.
template <typename F>
void by_dtype(DType dt, F&& f) {
  switch (dt) {
    case DType::kBool:
      return f(bool{});
    case DType::kUInt8:
      return f(uint8_t{});
    case DType::kInt8:
      return f(int8_t{});
    case DType::kInt16:
      return f(int16_t{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kFloat16:
      return f(float16{});
    case DType::kBFloat16:
      return f(bfloat16{});
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat64:
      return f(double{});
    case DType::kComplex64:
    case DType::kComplex128:
      break;
  }
  throw_error<TypeError>("comm", "collectives on ", dtype_name(dt),
                         " tensors are not supported yet; communicate torch.view_as_real(t)");
}

// A group of one: the reduction of one tensor is itself.
void local_copy(void* dst, const void* src, size_t n) {
  if (n != 0 && dst != src) std::memmove(dst, src, n);
}

// gloo::Slot for point-to-point messages: a prefix apart from the collectives'.
constexpr uint8_t kSendRecvSlotPrefix = 0x7f;

}  // namespace

ReduceOp parse_reduce_op(const std::string& name, const char* op) {
  if (name == "sum") return ReduceOp::kSum;
  if (name == "product" || name == "prod") return ReduceOp::kProduct;
  if (name == "max") return ReduceOp::kMax;
  if (name == "min") return ReduceOp::kMin;
  throw_error<ValueError>(op, "expected a reduction of 'sum', 'product', 'max' or 'min', got '",
                          name, "'");
}

void init(int rank, int world_size, const std::string& master_addr, int master_port,
          double timeout_seconds) {
  const char* op = "init_process_group";
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_group) throw_error<RuntimeError>(op, "the process group is already initialized");
  if (world_size < 1) throw_error<ValueError>(op, "expected world_size >= 1, got ", world_size);
  if (rank < 0 || rank >= world_size)
    throw_error<ValueError>(op, "expected rank in [0, ", world_size - 1, "], got ", rank);
  if (!(timeout_seconds > 0))
    throw_error<ValueError>(op, "expected a positive timeout, got ", timeout_seconds);
  auto g = std::make_shared<Group>();
  g->rank = rank;
  g->size = world_size;
  g->timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  if (world_size > 1) {
    g->store = std::make_unique<TcpStore>(master_addr, master_port, rank == 0, g->timeout);
    // Gloo listens on this host's address: loopback when the whole group is on this machine.
    gloo::transport::tcp::attr attr;
    const bool local =
        master_addr == "127.0.0.1" || master_addr == "localhost" || master_addr == "::1";
    if (local) {
      attr.hostname = "127.0.0.1";
    } else {
      char host[256] = {0};
      ::gethostname(host, sizeof(host) - 1);
      attr.hostname = host;
    }
    try {
      g->device = gloo::transport::tcp::CreateDevice(attr);
      g->ctx = std::make_shared<gloo::rendezvous::Context>(rank, world_size);
      g->ctx->setTimeout(g->timeout);
      g->ctx->connectFullMesh(*g->store, g->device);
      g->store->register_rank(rank);
    } catch (const gloo::Exception& e) {
      throw_error<RuntimeError>(op, "rank ", rank, " of ", world_size,
                                " could not connect to its peers: ", e.what());
    }
  }
  g_group = std::move(g);
}

bool initialized() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_group != nullptr;
}
int rank() { return group("get_rank")->rank; }
int world_size() { return group("get_world_size")->size; }

// Note [Subgroups]: a subgroup is a Gloo context of its own over the process group's device,
// connected through the process group's store under a prefix naming its ranks. Only its
// members connect, the first time a collective needs it; every process runs the same program,
// so the members reach that point in the same order of calls.
GroupScope::GroupScope(const std::vector<int64_t>& ranks, int64_t id) {
  const char* op = "subgroup";
  std::shared_ptr<Group> world = group(op);
  if (world->parent) world = nullptr;  // nested scopes: find the process group below
  if (!world) {
    std::lock_guard<std::mutex> lk(g_mu);
    world = g_group;
  }
  const int n = static_cast<int>(ranks.size());
  bool whole = n == world->size && id == 0;
  for (int i = 0; whole && i < n; ++i) whole = ranks[i] == i;
  previous_ = t_scoped;
  if (whole) {
    t_scoped = nullptr;
    return;
  }
  const auto at = std::find(ranks.begin(), ranks.end(), static_cast<int64_t>(world->rank));
  if (at == ranks.end())
    throw_error<RuntimeError>(op, "internal error: rank ", world->rank,
                              " joins a collective of a group it is not in");
  std::shared_ptr<Group> sub;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    auto it = world->subgroups.find({id, ranks});
    if (it != world->subgroups.end()) sub = it->second;
  }
  if (!sub) {
    sub = std::make_shared<Group>();
    sub->rank = static_cast<int>(at - ranks.begin());
    sub->size = n;
    sub->timeout = world->timeout;
    sub->parent = world.get();
    sub->ranks = ranks;
    sub->id = id;
    if (n > 1) {
      std::string prefix = id ? "subgroup#" + std::to_string(id) : "subgroup";
      for (int64_t r : ranks) prefix += "/" + std::to_string(r);
      try {
        gloo::rendezvous::PrefixStore store(prefix, *world->store);
        sub->ctx = std::make_shared<gloo::rendezvous::Context>(sub->rank, n);
        sub->ctx->setTimeout(world->timeout);
        sub->ctx->connectFullMesh(store, world->device);
      } catch (const gloo::Exception& e) {
        throw_error<RuntimeError>(op, "rank ", world->rank, " could not connect to the group of ",
                                  "ranks ", prefix.substr(9), ": ", e.what());
      }
    }
    std::lock_guard<std::mutex> lk(g_mu);
    world->subgroups[{id, ranks}] = sub;
  }
  t_scoped = std::move(sub);
}

GroupScope::~GroupScope() { t_scoped = std::move(previous_); }

void destroy() {
  std::shared_ptr<Group> g;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    g = std::move(g_group);
  }
  if (!g) return;
  eager::drain();  // the collectives of its subgroups, on their own streams, first
  if (g->size > 1) {
    // Every rank has left the group's last collective before rank 0's store closes, and the
    // store has closed before any rank leaves: a group initialised again on the same port
    // cannot meet this one's store.
    submit("destroy_process_group", g.get(), {}, {}, [g] {
      run_gloo("destroy_process_group", *g, [&] {
        gloo::BarrierOptions o(g->ctx);
        o.setTimeout(g->timeout);
        gloo::barrier(o);
        if (g->rank == 0) g->store->stop_serving();
        gloo::BarrierOptions o2(g->ctx);
        o2.setTimeout(g->timeout);
        gloo::barrier(o2);
      });
    });
  }
  // The queued collectives hold the group; wait for them before the context goes.
  eager::synchronize();
}

void all_reduce(const Tensor& tensor, ReduceOp op) {
  const char* name = "all_reduce";
  auto g = group(name);
  check_tensor(tensor, name, "tensor");
  if (g->size == 1 || tensor->numel() == 0) return;
  const Traced traced(kAllReduceStep, {tensor}, {tensor}, op_attrs(op));
  TensorImpl* t = tensor.get();
  submit(name, g.get(), {}, {tensor}, [g, t, op, name] {
    by_dtype(t->dtype(), [&](auto tag) {
      using T = decltype(tag);
      run_gloo(name, *g, [&] {
        gloo::AllreduceOptions o(g->ctx);
        o.setOutput<T>(t->data_as<T>(), static_cast<size_t>(t->numel()));
        o.setReduceFunction(reduce_fn<T>(op));
        o.setTimeout(g->timeout);
        gloo::allreduce(o);
      });
    });
  });
}

void broadcast(const Tensor& tensor, int src) {
  const char* name = "broadcast";
  auto g = group(name);
  check_tensor(tensor, name, "tensor");
  check_rank(src, *g, name, "src");
  if (g->size == 1 || tensor->numel() == 0) return;
  const Traced traced(kBroadcastStep, {tensor}, {tensor}, Attrs{{"src", int64_t{src}}});
  TensorImpl* t = tensor.get();
  const bool root = g->rank == src;
  submit(name, g.get(), root ? TensorList{tensor} : TensorList{},
         root ? TensorList{} : TensorList{tensor}, [g, t, src, name] {
           run_gloo(name, *g, [&] {
             gloo::BroadcastOptions o(g->ctx);
             o.setOutput<uint8_t>(static_cast<uint8_t*>(t->data()), nbytes(*t));
             o.setRoot(src);
             o.setTimeout(g->timeout);
             gloo::broadcast(o);
           });
         });
}

void reduce(const Tensor& tensor, int dst, ReduceOp op) {
  const char* name = "reduce";
  refuse_in_graph(name);
  auto g = group(name);
  check_tensor(tensor, name, "tensor");
  check_rank(dst, *g, name, "dst");
  if (g->size == 1 || tensor->numel() == 0) return;
  TensorImpl* t = tensor.get();
  const bool root = g->rank == dst;  // the others' tensors keep their values
  submit(name, g.get(), root ? TensorList{} : TensorList{tensor},
         root ? TensorList{tensor} : TensorList{}, [g, t, dst, op, name] {
           by_dtype(t->dtype(), [&](auto tag) {
             using T = decltype(tag);
             const size_t n = static_cast<size_t>(t->numel());
             // Gloo uses the output as scratch on every rank: other ranks' tensors keep their
             // values.
             std::unique_ptr<T[]> scratch(g->rank == dst ? nullptr : new T[n]);
             T* data = t->data_as<T>();
             run_gloo(name, *g, [&] {
               gloo::ReduceOptions o(g->ctx);
               if (g->rank == dst) {
                 o.setOutput<T>(data, n);
               } else {
                 o.setInput<T>(data, n);
                 o.setOutput<T>(scratch.get(), n);
               }
               o.setRoot(dst);
               o.setReduceFunction(reduce_fn<T>(op));
               o.setTimeout(g->timeout);
               gloo::reduce(o);
             });
           });
         });
}

void all_gather(const Tensor& output, const Tensor& input) {
  const char* name = "all_gather";
  auto g = group(name);
  check_tensor(output, name, "output");
  check_tensor(input, name, "input");
  check_same_dtype(output, input, name);
  check_numel(output->numel(), input->numel() * g->size, name, "output");
  if (input->numel() == 0) return;
  const Traced traced(kAllGatherStep, {input}, {output});
  TensorImpl* out = output.get();
  TensorImpl* in = input.get();
  submit(name, g.get(), {input}, {output}, [g, out, in, name] {
    const size_t n = nbytes(*in);
    if (g->size == 1) return local_copy(out->data(), in->data(), n);
    run_gloo(name, *g, [&] {
      gloo::AllgatherOptions o(g->ctx);
      o.setInput<uint8_t>(static_cast<uint8_t*>(in->data()), n);
      o.setOutput<uint8_t>(static_cast<uint8_t*>(out->data()), n * g->size);
      o.setTimeout(g->timeout);
      gloo::allgather(o);
    });
  });
}

void gather(const Tensor& output, const Tensor& input, int dst) {
  const char* name = "gather";
  refuse_in_graph(name);
  auto g = group(name);
  check_rank(dst, *g, name, "dst");
  check_tensor(input, name, "input");
  const bool root = g->rank == dst;
  if (root) {
    check_tensor(output, name, "output");
    check_same_dtype(output, input, name);
    check_numel(output->numel(), input->numel() * g->size, name, "output");
  }
  if (input->numel() == 0) return;
  TensorImpl* out = root ? output.get() : nullptr;
  TensorImpl* in = input.get();
  submit(name, g.get(), {input}, root ? TensorList{output} : TensorList{}, [g, out, in, dst, name] {
    const size_t n = nbytes(*in);
    if (g->size == 1) return local_copy(out->data(), in->data(), n);
    run_gloo(name, *g, [&] {
      gloo::GatherOptions o(g->ctx);
      o.setInput<uint8_t>(static_cast<uint8_t*>(in->data()), n);
      if (out != nullptr) o.setOutput<uint8_t>(static_cast<uint8_t*>(out->data()), n * g->size);
      o.setRoot(dst);
      o.setTimeout(g->timeout);
      gloo::gather(o);
    });
  });
}

void scatter(const Tensor& output, const Tensor& input, int src) {
  const char* name = "scatter";
  refuse_in_graph(name);
  auto g = group(name);
  check_rank(src, *g, name, "src");
  check_tensor(output, name, "output");
  const bool root = g->rank == src;
  if (root) {
    check_tensor(input, name, "input");
    check_same_dtype(output, input, name);
    check_numel(input->numel(), output->numel() * g->size, name, "input");
  }
  if (output->numel() == 0) return;
  TensorImpl* out = output.get();
  TensorImpl* in = root ? input.get() : nullptr;
  submit(name, g.get(), root ? TensorList{input} : TensorList{}, {output}, [g, out, in, src, name] {
    const size_t n = nbytes(*out);
    if (g->size == 1) return local_copy(out->data(), in->data(), n);
    run_gloo(name, *g, [&] {
      gloo::ScatterOptions o(g->ctx);
      std::vector<uint8_t*> blocks;
      if (in != nullptr) {
        uint8_t* base = static_cast<uint8_t*>(in->data());
        for (int r = 0; r < g->size; ++r) blocks.push_back(base + r * n);
        o.setInputs<uint8_t>(blocks, n);
      }
      o.setOutput<uint8_t>(static_cast<uint8_t*>(out->data()), n);
      o.setRoot(src);
      o.setTimeout(g->timeout);
      gloo::scatter(o);
    });
  });
}

void reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op) {
  const char* name = "reduce_scatter";
  auto g = group(name);
  check_tensor(output, name, "output");
  check_tensor(input, name, "input");
  check_same_dtype(output, input, name);
  check_numel(input->numel(), output->numel() * g->size, name, "input");
  if (output->numel() == 0) return;
  const Traced traced(kReduceScatterStep, {input}, {output}, op_attrs(op));
  TensorImpl* out = output.get();
  TensorImpl* in = input.get();
  submit(name, g.get(), {input}, {output}, [g, out, in, op, name] {
    by_dtype(in->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const size_t n = static_cast<size_t>(out->numel());
      // An all-reduce of a copy of the input, then this rank's block: the input keeps its values.
      const size_t total = n * g->size;
      std::unique_ptr<T[]> all(new T[total]);
      std::memcpy(static_cast<void*>(all.get()), in->data(), total * sizeof(T));
      if (g->size > 1)
        run_gloo(name, *g, [&] {
          gloo::AllreduceOptions o(g->ctx);
          o.setOutput<T>(all.get(), total);
          o.setReduceFunction(reduce_fn<T>(op));
          o.setTimeout(g->timeout);
          gloo::allreduce(o);
        });
      std::memcpy(out->data(), all.get() + n * g->rank, n * sizeof(T));
    });
  });
}

void all_to_all(const Tensor& output, const Tensor& input) {
  const char* name = "all_to_all";
  auto g = group(name);
  check_tensor(output, name, "output");
  check_tensor(input, name, "input");
  check_same_dtype(output, input, name);
  check_numel(output->numel(), input->numel(), name, "output");
  if (input->numel() % g->size != 0)
    throw_error<ValueError>(name, "expected the input's ", input->numel(),
                            " elements to split into ", g->size, " equal blocks");
  if (input->numel() == 0) return;
  const Traced traced(kAllToAllStep, {input}, {output});
  TensorImpl* out = output.get();
  TensorImpl* in = input.get();
  submit(name, g.get(), {input}, {output}, [g, out, in, name] {
    const size_t n = nbytes(*in);
    if (g->size == 1) return local_copy(out->data(), in->data(), n);
    // In place (output and input one storage, as all_to_all_single(x, x)): Gloo writes blocks
    // of the output before it has sent the input's, so it sends a copy.
    std::vector<uint8_t> copy;
    uint8_t* src = static_cast<uint8_t*>(in->data());
    if (in->storage() == out->storage()) {
      copy.assign(src, src + n);
      src = copy.data();
    }
    run_gloo(name, *g, [&] {
      gloo::AlltoallOptions o(g->ctx);
      o.setInput<uint8_t>(src, n);
      o.setOutput<uint8_t>(static_cast<uint8_t*>(out->data()), n);
      o.setTimeout(g->timeout);
      gloo::alltoall(o);
    });
  });
}

void barrier() {
  const char* name = "barrier";
  refuse_in_graph(name);
  auto g = group(name);
  if (g->size == 1) return;
  submit(name, g.get(), {}, {}, [g, name] {
    run_gloo(name, *g, [&] {
      gloo::BarrierOptions o(g->ctx);
      o.setTimeout(g->timeout);
      gloo::barrier(o);
    });
  });
}

void flush_sends() {
  std::vector<std::shared_ptr<Group>> groups;  // the process group's and its subgroups'
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_group) return;
    groups.push_back(g_group);
    for (const auto& [key, sub] : g_group->subgroups) groups.push_back(sub);
  }
  for (const std::shared_ptr<Group>& g : groups)
    if (g->size > 1) submit("send", g.get(), {}, {}, [g] { run_gloo("send", *g, [] {}); });
}

void wait_group() {
  const char* name = "wait";
  auto g = group(name);
  if (g->size == 1) return;
  auto fn = [g, name] { run_gloo(name, *g, [] {}); };  // after the pending sends
  if (!eager::async_enabled()) return fn();
  eager::wait_comm(eager::enqueue_comm(name, std::move(fn), {}, {}, g.get()));
}

void log_collectives(bool on) {
  std::lock_guard<std::mutex> lk(g_collective_log_mu);
  g_collective_log.clear();
  g_log_collectives.store(on);
}

std::vector<std::vector<int64_t>> logged_collectives() {
  std::lock_guard<std::mutex> lk(g_collective_log_mu);
  return g_collective_log;
}

void send(const Tensor& tensor, int dst, int tag) {
  const char* name = "send";
  auto g = group(name);
  check_tensor(tensor, name, "tensor");
  check_rank(dst, *g, name, "dst");
  if (dst == g->rank) throw_error<ValueError>(name, "a rank cannot send to itself (dst ", dst, ")");
  if (tag < 0) throw_error<ValueError>(name, "expected a tag >= 0, got ", tag);
  if (tensor->numel() == 0) return;
  const Traced traced(kSendStep, {tensor}, {},
                      Attrs{{"peer", int64_t{dst}}, {"tag", int64_t{tag}}});
  TensorImpl* t = tensor.get();
  submit(name, g.get(), {tensor}, {}, [g, t, dst, tag, name] {
    // The group outlives the buffer (members go in reverse order): the buffer uses its context.
    struct InFlight {
      std::shared_ptr<Group> group;
      std::vector<char> bytes;
      std::unique_ptr<gloo::transport::UnboundBuffer> buf;
    };
    auto s = std::make_shared<InFlight>();
    s->group = g;
    try {
      run_gloo(
          name, *g,
          [&] {
            const char* data = static_cast<const char*>(t->data());
            s->bytes.assign(data, data + nbytes(*t));
            s->buf = g->ctx->createUnboundBuffer(s->bytes.data(), s->bytes.size());
            s->buf->send(dst, gloo::Slot::build(kSendRecvSlotPrefix, static_cast<uint32_t>(tag)));
          },
          /*flush_sends=*/false);
    } catch (...) {
      // A send that cannot be posted (its peer has gone) fails where its completion is waited
      // for, as one that fails later: the group's other messages go on (to live peers).
      g->sends.add([e = std::current_exception()] { std::rethrow_exception(e); });
      return;
    }
    g->sends.add([s, dst, name] {
      const Group& group = *s->group;
      run_gloo(
          name, group,
          [&] {
            const bool sent = s->buf->waitSend(group.timeout);
            s->buf.reset();
            if (!sent) throw gloo::IoException("timed out sending to rank " + std::to_string(dst));
          },
          /*flush_sends=*/false);
    });
  });
}

void recv(const Tensor& tensor, int src, int tag) {
  const char* name = "recv";
  auto g = group(name);
  check_tensor(tensor, name, "tensor");
  check_rank(src, *g, name, "src");
  if (src == g->rank)
    throw_error<ValueError>(name, "a rank cannot receive from itself (src ", src, ")");
  if (tag < 0) throw_error<ValueError>(name, "expected a tag >= 0, got ", tag);
  if (tensor->numel() == 0) return;
  const Traced traced(kRecvStep, {}, {tensor},
                      Attrs{{"peer", int64_t{src}}, {"tag", int64_t{tag}}});
  TensorImpl* t = tensor.get();
  submit(name, g.get(), {}, {tensor}, [g, t, src, tag, name] {
    run_gloo(
        name, *g,
        [&] {
          auto buf = g->ctx->createUnboundBuffer(t->data(), nbytes(*t));
          buf->recv(src, gloo::Slot::build(kSendRecvSlotPrefix, static_cast<uint32_t>(tag)));
          if (!buf->waitRecv(g->timeout))
            throw gloo::IoException("timed out receiving from rank " + std::to_string(src));
        },
        /*flush_sends=*/false);
  });
}

}  // namespace oneflow::comm
