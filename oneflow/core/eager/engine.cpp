#include "oneflow/core/eager/engine.h"

#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "oneflow/core/eager/profiler.h"
#include "oneflow/core/graph/graph.h"
#include "oneflow/core/ops/primitive.h"

namespace oneflow::eager {

namespace {

Hooks g_hooks;
thread_local Location t_location;
class Stream;
thread_local Stream* t_stream = nullptr;  // the stream whose thread this is
constexpr auto kAcquire = std::memory_order_acquire;
constexpr auto kRelaxed = std::memory_order_relaxed;
constexpr auto kRelease = std::memory_order_release;
thread_local TensorList t_graveyard;  // references of finished instructions, to drop

bool sync_from_env() {
  const char* v = std::getenv("ONEFLOW_SYNC_EXECUTION");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}
std::atomic<bool> g_sync{sync_from_env()};
std::atomic<bool> g_exiting{false};  // past stop_at_exit: ops run on the calling thread

bool cuda_queue_from_env() {
  const char* v = std::getenv("ONEFLOW_ASYNC_CUDA");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}
std::atomic<bool> g_queue_cuda{cuda_queue_from_env()};

bool queue_every_op_from_env() {
  const char* v = std::getenv("ONEFLOW_QUEUE_EVERY_OP");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}
std::atomic<bool> g_queue_every_op{queue_every_op_from_env()};
// The kernel time limit of Note [Small ops run here], in ns (settable for tests).
std::atomic<uint32_t> g_small_kernel_ns_limit{600};

// The calling thread's OpenMP team is one thread for a kernel run here (see run_here_if_idle).
class OneOpenMpThread {
 public:
  OneOpenMpThread() : prev_(omp_get_max_threads()) {
    if (prev_ != 1) omp_set_num_threads(1);
  }
  ~OneOpenMpThread() {
    if (prev_ != 1) omp_set_num_threads(prev_);
  }
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  const int prev_;
};

// Runs f() with the GIL released when the binding says there is one to release.
template <typename F>
void without_gil(F& f) {
  if (g_hooks.without_gil == nullptr) {
    f();
    return;
  }
  g_hooks.without_gil([](void* p) { (*static_cast<F*>(p))(); }, &f);
}

class Stream;

struct Instruction {
  const Primitive* prim = nullptr;
  // Instead of prim: a host task (a collective on the communication stream) and its name.
  std::function<void()> task;
  const char* task_name = nullptr;
  // Events: the instruction of the CPU stream (for a communication stream's task) and those of
  // communication streams that must have run before this one starts (0 / empty: none).
  uint64_t wait_cpu = 0;
  std::vector<std::pair<Stream*, uint64_t>> wait_comm;
  TensorList inputs;
  TensorList outputs;
  Attrs attrs;
  Location location;
  size_t bytes = 0;   // output bytes, counted against the queue's byte budget
  uint64_t work = 0;  // bytes the kernel reads and writes: a rough measure of its running time
};

void register_process_hooks();
class Stream;
// Cross-stream events between the CPU and communication streams (defined below the streams):
// the latest queued collective of each communication stream that writes a storage of `reads`
// or uses one of `writes` (none but `except`'s), into `out`.
using CommEvents = std::vector<std::pair<Stream*, uint64_t>>;
void comm_dependencies(const TensorList& reads, const TensorList& writes, CommEvents& out,
                       const Stream* except = nullptr);
bool has_comm_dependency(const TensorList& reads, const TensorList& writes);
Stream& cpu_stream();
const Primitive& comm_marker();

// A stream: a ring of instructions, one thread running them in order. The CPU stream runs CPU
// kernels; a CUDA device's stream runs the host side of its CUDA kernels (argument checks,
// launches onto the device's own CUDA stream), so Python does not wait for launches either.
class Stream {
 public:
  // Bounds on queued work: past them the queuing thread waits (memory stays bounded however
  // far Python runs ahead). The byte bound also keeps the outputs in flight, which the caching
  // allocator cannot hand out again, to a few MiB, so that a stream of large ops cycles through
  // buffers that are still in the cache. (4 MB elementwise ops on a 2-vCPU EPYC slice: 2-3x
  // slower with 32 MiB in flight than with 8 MiB. sysconf's cache size is not usable for this:
  // VMs report the host's.) A CUDA stream's instructions only launch kernels: its bound on
  // bytes keeps the device memory held early by queued outputs (and by inputs Python has
  // dropped) small beside a GPU's; launches block when the GPU's own queue is full, so a busy
  // device can fill the ring.
  static constexpr uint64_t kCapacity = 1024;
  static constexpr size_t kCpuQueuedBytes = size_t{8} << 20;
  static constexpr size_t kCudaQueuedBytes = size_t{256} << 20;
  // Stream-ordered reuse (see eager::enqueue): outputs of at least kReuseMinBytes, a dead
  // storage among the operands of the latest kReuseScan instructions.
  static constexpr size_t kReuseMinBytes = size_t{64} << 10;
  static constexpr uint64_t kReuseScan = 16;
  // Waiters spin while at most this much work (bytes read and written) is ahead of them.
  static constexpr uint64_t kSpinWork = uint64_t{256} << 10;

  // comm: the communication stream, whose tasks (collectives) keep their tensors without
  // counting them as queued uses (a tensor a collective holds is never a dead storage for
  // stream-ordered reuse) and leave the storages' records to the CPU stream.
  explicit Stream(DeviceType type, bool comm = false)
      : type_(type),
        comm_(comm),
        max_bytes_(type == DeviceType::kCPU ? kCpuQueuedBytes : kCudaQueuedBytes),
        ring_(kCapacity) {}

  bool is_cpu() const { return type_ == DeviceType::kCPU && !comm_; }
  bool is_comm() const { return comm_; }

  uint64_t enqueue(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                   const Attrs& attrs, bool fresh_outputs = false) {
    size_t bytes = 0;
    for (const Tensor& t : outputs) bytes += t->storage()->nbytes();
    // A CUDA instruction's host work is a launch: none.
    const uint64_t work = is_cpu() ? prim.cpu_work(inputs, outputs) : 0;
    // Kernels write their outputs; the few without outputs (the optimizer updates) write
    // inputs, so all their inputs count as written. A collective's marker (below) only records
    // the collective's reads (inputs) and writes (outputs): it waits for nothing and holds no
    // bytes.
    const bool marker = &prim == &comm_marker();
    const bool writes_inputs = outputs.empty() && !marker;
    if (marker) bytes = 0;
    // A CPU op on memory a queued collective uses runs after it (an event), even one that only
    // reads what the collective only reads: a collective checks whether the CPU ops it depends
    // on failed once they have run, and a later reader of the same memory must not raise (and
    // so clear) that error before the collective has seen it.
    CommEvents wait_comm;
    if (is_cpu() && !marker) {
      static const TensorList none;
      comm_dependencies(none, inputs, wait_comm);
      if (!outputs.empty()) {
        CommEvents more;
        comm_dependencies(none, outputs, more);
        wait_comm.insert(wait_comm.end(), more.begin(), more.end());
      }
    }
    // Before taking the lock: locating may allocate Python frames, and a garbage collection
    // run there may call back into oneflow.
    Location location = t_location;
    if (location.code == nullptr && g_hooks.locate != nullptr) location = g_hooks.locate();
    std::unique_lock<std::mutex> lk(mu_);
    if (!started_) start();
    reclaim_locked();
    // An output that will take a dead queued storage's memory (below) adds nothing to what is
    // in flight and does not count against the byte budget: a stream of large ops whose results
    // are dropped then queues ahead instead of waiting once per op. (Ops with one output only:
    // two outputs of one size could both find the same dead storage here.)
    size_t new_bytes = bytes;
    if (fresh_outputs && outputs.size() == 1 && reusable(outputs[0]) &&
        dead_storage(outputs[0]->storage()->nbytes()) != nullptr)
      new_bytes = 0;
    wait_for_space(lk, new_bytes);
    std::shared_ptr<Storage> unused;  // freed after the lock: never written
    if (fresh_outputs)
      for (const Tensor& t : outputs) {
        if (!reusable(t)) continue;
        const size_t n = t->storage()->nbytes();
        if (Storage* dead = dead_storage(n)) {
          unused = t->storage();
          t->replace_storage(std::make_shared<Storage>(*dead));
          reused_.fetch_add(1, kRelaxed);
          bytes -= n;
        }
      }
    const uint64_t seq = ++issued_;
    Instruction& ins = ring_[(seq - 1) % kCapacity];
    ins.prim = &prim;
    ins.wait_cpu = 0;
    ins.wait_comm.assign(wait_comm.begin(), wait_comm.end());
    // Assignment reuses the slot's vectors and map nodes: no allocation in the steady state.
    ins.inputs.assign(inputs.begin(), inputs.end());
    ins.outputs.assign(outputs.begin(), outputs.end());
    ins.attrs = attrs;
    ins.location = location;
    ins.bytes = bytes;
    ins.work = work;
    queued_bytes_ += bytes;
    issued_work_.fetch_add(work, kRelaxed);
    for (const Tensor& t : ins.inputs) {
      t->storage()->last_use().store(seq, kRelease);
      if (writes_inputs) t->storage()->last_write().store(seq, kRelease);
      t->add_queued_uses(1);
    }
    for (const Tensor& t : ins.outputs) {
      t->storage()->last_use().store(seq, kRelease);
      t->storage()->last_write().store(seq, kRelease);
      t->add_queued_uses(1);
    }
    published_.store(seq, kRelease);
    if (worker_sleeping_) work_cv_.notify_one();
    lk.unlock();
    release_reclaimed();
    return seq;
  }

  // Queues a host task that uses `held` (kept alive until it has run) after instruction
  // `wait_cpu` of the CPU stream and the events `wait_comm` of other communication streams.
  // Returns its sequence number.
  uint64_t enqueue_task(const char* name, std::function<void()> fn, const TensorList& held,
                        uint64_t wait_cpu, const CommEvents& wait_comm) {
    Location location = t_location;
    if (location.code == nullptr && g_hooks.locate != nullptr) location = g_hooks.locate();
    std::unique_lock<std::mutex> lk(mu_);
    if (!started_) start();
    reclaim_locked();
    wait_for_space(lk, 0);
    const uint64_t seq = ++issued_;
    Instruction& ins = ring_[(seq - 1) % kCapacity];
    ins.prim = nullptr;
    ins.task = std::move(fn);
    ins.task_name = name;
    ins.wait_cpu = wait_cpu;
    ins.wait_comm.assign(wait_comm.begin(), wait_comm.end());
    ins.inputs.assign(held.begin(), held.end());
    ins.outputs.clear();
    ins.attrs = Attrs{};
    ins.location = location;
    ins.bytes = 0;
    ins.work = 0;
    published_.store(seq, kRelease);
    if (worker_sleeping_) work_cv_.notify_one();
    lk.unlock();
    release_reclaimed();
    return seq;
  }

  // With mu_ held by lk: waits (the lock released) until the queue has room for `bytes` more.
  void wait_for_space(std::unique_lock<std::mutex>& lk, size_t bytes) {
    while (!has_space(bytes)) {
      const uint64_t target = space_target(bytes);
      lk.unlock();
      release_reclaimed();
      wait_until(target);
      lk.lock();
      reclaim_locked();
    }
  }

  // Whether a fresh output may take over a dead storage: CPU outputs of kReuseMinBytes or more.
  static bool reusable(const Tensor& t) {
    return t->storage()->nbytes() >= kReuseMinBytes && t->device().type == DeviceType::kCPU;
  }

  // Under mu_: a storage of nbytes whose tensor only queued instructions (or this thread's
  // reclaimed, unreleased ones) still reference (see eager::enqueue), or null. The latest
  // instructions first: their buffers are still in cache.
  Storage* dead_storage(size_t nbytes) {
    const uint64_t stop = std::max(reclaimed_, issued_ > kReuseScan ? issued_ - kReuseScan : 0);
    for (uint64_t seq = issued_; seq > stop; --seq) {
      Instruction& ins = ring_[(seq - 1) % kCapacity];
      for (const TensorList* list : {&ins.outputs, &ins.inputs})
        for (const Tensor& t : *list) {
          const std::shared_ptr<Storage>& s = t->storage();
          // Nobody but queued instructions holds the tensor (use_count first: the queued count
          // only falls meanwhile), and no other tensor views its storage.
          if (s->nbytes() == nbytes && s->owns_allocation() && !s->shared_outside() &&
              s->device().type == DeviceType::kCPU && s.use_count() == 1 &&
              t.use_count() - t->queued_uses() == 0)
            return s.get();
        }
    }
    // Finished instructions this thread reclaimed and has not released yet.
    for (auto it = t_graveyard.rbegin(); it != t_graveyard.rend(); ++it) {
      const Tensor& t = *it;
      const std::shared_ptr<Storage>& s = t->storage();
      if (s->nbytes() != nbytes || !s->owns_allocation() || s->shared_outside() ||
          s->device().type != DeviceType::kCPU || s.use_count() != 1)
        continue;
      const long held = t.use_count() - t->queued_uses();
      if (held == std::count(t_graveyard.begin(), t_graveyard.end(), t)) return s.get();
    }
    return nullptr;
  }

  // Note [Small ops run here]: handing an instruction and its tensors' metadata to the stream
  // thread's core costs ~0.5 us (on the 2-vCPU EPYC: an 8x8 trace took 1.2 us queued, 0.6 us
  // run at the call); a kernel that takes less gains nothing from overlapping with Python. So a
  // CPU op whose kernel reads and writes at most kInlineWork bytes (Primitive::cpu_work), and whose
  // kernel took less than g_small_kernel_ns_limit (600) when it last ran here
  // (Primitive::small_kernel_ns, a running estimate), runs on the calling thread when nothing is
  // queued and no kernel error is pending. Longer small kernels -- a reduction's or oneDNN's
  // set-up, ~1-2 us -- stay queued, where Python's next op overlaps them; after kProbeEvery calls
  // queued that way, the next call that finds the stream idle runs here to measure again (a
  // probe). A probe that follows queued runs is cold: the outputs' recycled memory was last
  // written by the stream thread, on the other core (outer 64x64, a ~190 ns kernel here with
  // warm memory: 1.3-2 us), so a slow probe is retried at the next idle call before it counts.
  // (With one probe every 32nd call, believed at once, a loop of outer 64x64 with a read every
  // 100 calls stayed queued at ~1.6 us per op for good, where running here costs ~1.0.) Its
  // team is one OpenMP thread, so no second team of threads starts beside the stream thread's
  // (see run_and_wait). Its error raises at the call. Returns false (nothing ran) otherwise.
  static constexpr uint64_t kInlineWork = uint64_t{20} << 10;
  static constexpr uint32_t kProbeEvery = 32;
  bool run_here_if_idle(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                        const Attrs& attrs) {
    const uint32_t limit = g_small_kernel_ns_limit.load(kRelaxed);
    const uint32_t skipped = prim.small_kernel_skips.load(kRelaxed);
    const bool probe = prim.small_kernel_ns.load(kRelaxed) > limit;
    if (probe && skipped < kProbeEvery) {
      prim.small_kernel_skips.store(skipped + 1, kRelaxed);
      return false;
    }
    if (prim.cpu_work(inputs, outputs) > kInlineWork || failed_.load(kRelaxed)) return false;
    // Any collective on the operands, even one that only reads them: a kernel run here reaches
    // its tensors' bytes through Storage::data(), which waits for every collective on them (on
    // the stream thread it does not).
    if (has_comm_dependency({}, inputs) || has_comm_dependency({}, outputs)) return false;
    const uint64_t done = completed_.load(kAcquire);
    if (published_.load(kAcquire) != done) return false;
    // The finished instructions' slots still hold their tensors: drop them, as a queuing thread
    // would (their memory would otherwise stay held while only small ops run).
    if (reclaimed_seen_.load(kRelaxed) != done) reclaim();
    OneOpenMpThread one;
    const auto start = std::chrono::steady_clock::now();
    prim.compute_cpu(inputs, outputs, attrs);
    const auto end = std::chrono::steady_clock::now();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
    if (profiler::enabled())
      profiler::record(
          prim.name(), inputs, false,
          std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count(),
          std::chrono::duration_cast<std::chrono::nanoseconds>(end.time_since_epoch()).count());
    // A time counted as at most twice the limit, which raises the estimate with weight 1/8 and
    // lowers it with weight 3/4: a preempted run does not queue the next ops, one quick run
    // lets them run here again, and a kernel that always takes longer settles above the limit.
    const uint32_t t = static_cast<uint32_t>(std::clamp<int64_t>(ns, 1, 2 * int64_t{limit}));
    if (probe && t > limit && skipped == kProbeEvery) {
      prim.small_kernel_skips.store(kProbeEvery + 1, kRelaxed);  // the retry, warm
      return true;
    }
    const uint64_t old = prim.small_kernel_ns.load(kRelaxed);
    const uint64_t est = old == 0 ? t : t < old ? (old + 3 * uint64_t{t}) / 4 : (7 * old + t) / 8;
    prim.small_kernel_ns.store(static_cast<uint32_t>(est), kRelaxed);
    prim.small_kernel_skips.store(0, kRelaxed);
    return true;
  }

  // Runs one instruction on the stream thread and waits for it; its own error raises as it
  // came from the kernel. The kernel runs there, not here, so that one OpenMP team does all
  // the work: libgomp counts the threads of every team, and once they outnumber the cores its
  // idle threads sleep after ~100 spins instead of ~300000, so that each parallel region must
  // wake them (a 256x256 elementwise op: ~10 us -> ~60 us, in every team of the process).
  void run_and_wait(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                    const Attrs& attrs) {
    const uint64_t seq = enqueue(prim, inputs, outputs, attrs);
    wait_until(seq);
    reclaim();
    if (failed_.load()) raise_pending_error(seq);
  }

  // Waits until instruction `seq` has run. Short waits spin (a sleeping thread takes ~20 us to
  // wake); long ones sleep at once, since a spinning waiter takes a core from the kernel's
  // OpenMP team, which then runs at the speed of its slowest thread (a 4 MB elementwise op on
  // two cores: ~70 us, ~210 us with the waiter spinning beside it).
  void wait_until(uint64_t seq, bool use_hooks = true) {
    if (completed_.load() >= seq) return;
    if (issued_work_.load(kRelaxed) - completed_work_.load(kRelaxed) <= kSpinWork) {
      for (int i = 0; i < 100 && completed_.load() < seq; ++i) cpu_relax();  // ~2 us
      // Then yield between polls: a kernel that went parallel (a fill of 64K floats is little
      // work but two threads) needs both cores, and a waiter that only pauses keeps one from
      // its team (zeros(65536) and a sync: 65-160 us instead of ~10).
      for (int i = 0; i < 100 && completed_.load() < seq; ++i) std::this_thread::yield();
      if (completed_.load() >= seq) return;
    }
    sleep_until(seq, use_hooks);
  }

  // Drops the references of finished instructions (after a wait: the memory is free again).
  void reclaim() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      reclaim_locked();
    }
    release_reclaimed();
  }

  // Waits for the instruction a storage's record (last_use or last_write) names, then clears
  // the record unless a newer instruction took it meanwhile.
  void wait_for(std::atomic<uint64_t>& record, bool raise = true) {
    if (t_stream == this) return;
    const uint64_t seq = record.load();
    if (seq == 0) return;
    if (t_stream != nullptr) {
      // Another stream's thread (a CUDA launch reading CPU memory) only waits: no Python hooks
      // (it holds no GIL and takes no signals), no reclaiming (the slots' tensors are dropped by
      // the threads that queue; and this stream's lock may be held across a fork waiting for
      // the waiting thread's own stream), and this stream's error stays for its own waiters.
      wait_until(seq, false);
      return;
    }
    wait_until(seq);
    reclaim();
    uint64_t expected = seq;
    record.compare_exchange_strong(expected, 0);
    if (raise && failed_.load()) raise_pending_error();
  }

  void cancel() {
    std::lock_guard<std::mutex> lk(mu_);
    skip_through_.store(issued_);
  }

  // From a signal handler: only lock-free atomics.
  void interrupt() {
    interrupt_through_.store(published_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }

  uint64_t reused() const { return reused_.load(kRelaxed); }
  uint64_t completed() const { return completed_.load(kAcquire); }

  uint64_t pending() {
    std::lock_guard<std::mutex> lk(mu_);
    return issued_ - completed_.load();
  }

  void set_num_threads(int n) { threads_.store(n); }
  int num_threads() { return threads_.load(); }

 private:
  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  // Under mu_.
  void start() {
    if (threads_.load() <= 0) threads_.store(omp_get_max_threads());
    register_process_hooks();
    worker_ = std::thread([this] { run(); });
    worker_.detach();
    started_ = true;
  }

 public:
  // Process exit (after Python's own atexit drain; a C++ program that never synchronised): the
  // queued instructions are dropped, not run -- their kernels would meet objects that static
  // destruction is about to tear down -- and the running one is waited for.
  void stop_at_exit() {
    g_exiting.store(true);
    uint64_t target;
    {
      std::lock_guard<std::mutex> lk(mu_);
      target = issued_;
      skip_through_.store(issued_);
    }
    wait_until(target, false);
  }

 private:
  // Under mu_. Space: a free slot, and the outputs of the unreclaimed instructions within the
  // byte budget (a single instruction may exceed it).
  bool has_space(size_t bytes) const {
    return issued_ - reclaimed_ < kCapacity &&
           (issued_ == reclaimed_ || queued_bytes_ + bytes <= max_bytes_);
  }

  // Under mu_: empties the slots of finished instructions. Their tensors move to this thread's
  // graveyard, released by release_reclaimed() outside the lock: the thread that queued drops
  // the references (no reference counts or heap blocks bounce between threads), and a
  // destructor that needs the GIL never runs under mu_.
  void reclaim_locked() {
    const uint64_t done = completed_.load(kAcquire);
    for (; reclaimed_ < done; ++reclaimed_) {
      Instruction& ins = ring_[reclaimed_ % kCapacity];
      for (TensorList* list : {&ins.inputs, &ins.outputs})
        for (Tensor& t : *list) {
          if (!comm_) t->add_queued_uses(-1);
          t_graveyard.push_back(std::move(t));
        }
      ins.inputs.clear();
      ins.outputs.clear();
      ins.task = nullptr;
      queued_bytes_ -= ins.bytes;
    }
    reclaimed_seen_.store(reclaimed_, kRelaxed);
  }
  static void release_reclaimed() { t_graveyard.clear(); }

  // Under mu_: the instruction after whose completion the queue has room for `bytes` more with
  // half of its slots and bytes free. A full queue thus wakes the queuing thread once per
  // stretch of instructions, not once per instruction (each wake-up costs a context switch,
  // often on the core the kernels run on).
  uint64_t space_target(size_t bytes) const {
    size_t queued = queued_bytes_;
    uint64_t seq = reclaimed_;
    while (seq < issued_ && (issued_ - seq > kCapacity / 2 || queued + bytes > max_bytes_ / 2)) {
      queued -= ring_[seq % kCapacity].bytes;
      ++seq;
    }
    return seq;
  }

  // Sleeps until instruction `seq` has run. With hooks: the GIL is released and interrupts are
  // polled; an interrupt drops the queued instructions and propagates.
  void sleep_until(uint64_t seq, bool use_hooks) {
    auto blocked = [&] { return completed_.load() < seq; };
    auto wait = [&] {
      waiters_.fetch_add(1);
      struct Leave {
        std::atomic<int>& w;
        ~Leave() { w.fetch_sub(1); }
      } leave{waiters_};
      std::unique_lock<std::mutex> lk(mu_);
      while (blocked()) {
        // The stream thread wakes the waiters when the smallest of their targets has run.
        if (seq < notify_from_.load()) notify_from_.store(seq);
        if (!blocked()) break;
        done_cv_.wait_for(lk, std::chrono::milliseconds(20));
        if (!use_hooks || !blocked() || g_hooks.check_interrupts == nullptr) continue;
        lk.unlock();
        try {
          g_hooks.check_interrupts();
        } catch (...) {
          cancel();
          throw;
        }
        lk.lock();
      }
    };
    if (use_hooks)
      without_gil(wait);
    else
      wait();
  }

  void run() {
    t_stream = this;
    int team = 0;
    for (uint64_t seq = completed_.load() + 1;; ++seq) {
      if (published_.load(kAcquire) < seq) {
        // Spin briefly: the next op is usually a few microseconds away. Then poll between
        // yields: after a parallel region the OpenMP worker spins on the other core, and a
        // stream thread that only paused would leave the queuing Python thread no core at all
        // (zeros(65536) and a sync: 65-160 us, 15-18 us with the yields).
        for (int i = 0; i < 200 && published_.load(kAcquire) < seq; ++i) cpu_relax();
        for (int i = 0; i < 200 && published_.load(kAcquire) < seq; ++i) std::this_thread::yield();
        if (published_.load() < seq) {
          std::unique_lock<std::mutex> lk(mu_);
          worker_sleeping_ = true;
          work_cv_.wait(lk, [&] { return published_.load() >= seq; });
          worker_sleeping_ = false;
        }
      }
      Instruction& ins = ring_[(seq - 1) % kCapacity];
      // Cores are shared with the queuing thread: while it is queuing more work (instructions
      // wait behind this one and nobody waits on the engine) the kernel's OpenMP team leaves it
      // one core; while it waits, or when this is the last instruction queued (the usual case:
      // an op, then a read of its result), the team takes them all. Spinning team threads on an
      // oversubscribed core would stall every parallel region.
      if (is_cpu()) {
        const int all = threads_.load(kAcquire);
        const bool queuing = published_.load(kAcquire) > seq && waiters_.load(kAcquire) == 0;
        const int n = queuing ? std::max(1, all - 1) : all;
        if (n != team) {
          omp_set_num_threads(n);
          team = n;
        }
      }
      // Ctrl-C: drop what was queued when the signal came, wherever the Python thread was.
      const uint64_t interrupted = interrupt_through_.load(std::memory_order_relaxed);
      if (interrupted > skip_through_.load()) skip_through_.store(interrupted);
      // A collective or message after a CPU op (or a collective) that failed does not run: it
      // would send the failed op's garbage (its peers fail at their timeout, or sooner when
      // this process raises the error and exits).
      if (ins.wait_cpu != 0) {
        Stream& cpu = cpu_stream();
        cpu.wait_until(ins.wait_cpu, false);
        if (cpu.failed_through(ins.wait_cpu)) adopt_error(cpu, seq);
      }
      for (const auto& [other, event] : ins.wait_comm) {
        other->wait_until(event, false);
        // A CPU op on the memory of a failed collective fails with the collective's error (it
        // moves here: raised once, by whoever reads the op's result or synchronises first).
        if (is_cpu() ? other->failed_.load() : other->failed_through(event))
          adopt_error(*other, seq);
      }
      if (seq > skip_through_.load() && !failed_.load()) {
        try {
          const char* what = ins.prim != nullptr
                                 ? ins.prim->name()
                                 : (ins.task_name != nullptr ? ins.task_name : "task");
          profiler::timed(what, ins.inputs, !is_cpu(), [&] {
            if (ins.task)
              ins.task();
            else if (is_cpu())
              ins.prim->compute_cpu(ins.inputs, ins.outputs, ins.attrs);
            else
              ins.prim->compute_cuda(ins.inputs, ins.outputs, ins.attrs);
          });
        } catch (...) {
          record_error(std::current_exception(), ins, seq);
        }
      }
      // The slot's tensors are dropped by the next thread that queues or waits.
      completed_work_.fetch_add(ins.work, kRelaxed);
      completed_.store(seq);  // seq_cst: ordered before the notify_from_ load
      if (seq >= notify_from_.load()) {
        std::lock_guard<std::mutex> lk(mu_);
        notify_from_.store(kNobody);  // the waiters still blocked register again
        done_cv_.notify_all();
      }
    }
  }

  // Takes over `from`'s pending error as that of instruction `seq` of this stream; `from` drops
  // its queued instructions, as when its error is raised.
  void adopt_error(Stream& from, uint64_t seq) {
    std::exception_ptr e;
    std::string op;
    Location loc;
    {
      std::lock_guard<std::mutex> lk(from.err_mu_);
      if (!from.error_) return;
      e = from.error_;
      op = from.error_op_;
      loc = from.error_location_;
      from.error_ = nullptr;
      {
        std::lock_guard<std::mutex> qlk(from.mu_);
        from.skip_through_.store(from.issued_);
      }
      from.failed_.store(false);
    }
    std::lock_guard<std::mutex> lk(err_mu_);
    if (error_) return;
    error_ = e;
    error_op_ = op;
    error_location_ = loc;
    error_seq_ = seq;
    failed_.store(true);
  }

 public:
  // Whether an instruction up to `seq` failed (its error not raised yet).
  bool failed_through(uint64_t seq) {
    if (!failed_.load()) return false;
    std::lock_guard<std::mutex> lk(err_mu_);
    return error_ && error_seq_ <= seq;
  }

 private:
  void record_error(std::exception_ptr e, const Instruction& ins, uint64_t seq) {
    std::lock_guard<std::mutex> lk(err_mu_);
    if (error_) return;
    error_ = e;
    error_op_ = ins.prim != nullptr ? ins.prim->name() : ins.task_name;
    error_location_ = ins.location;
    error_seq_ = seq;
    failed_.store(true);
  }

  // Raises the kept kernel error (once) as the same exception type, with the op's location
  // (unless it came from instruction `own`, which the caller waited for: it raises as it is).
  void raise_pending_error(uint64_t own = 0) {
    if (!failed_.load()) return;
    std::exception_ptr e;
    std::string op;
    Location loc;
    {
      std::lock_guard<std::mutex> lk(err_mu_);
      if (!error_) return;
      e = error_;
      op = error_op_;
      loc = error_location_;
      own = own == error_seq_ ? own : 0;
      error_ = nullptr;
      // Instructions queued before the error was taken depend on garbage: drop them.
      {
        std::lock_guard<std::mutex> qlk(mu_);
        skip_through_.store(issued_);
      }
      failed_.store(false);
    }
    if (own != 0) std::rethrow_exception(e);
    std::string where = " (raised asynchronously by the kernel of '" + op + "'";
    if (loc.code != nullptr && g_hooks.describe != nullptr)
      where += ", queued at " + g_hooks.describe(loc);
    where +=
        "; errors inside kernels surface at the next synchronisation point, "
        "ONEFLOW_SYNC_EXECUTION=1 raises them where the op is called)";
    try {
      std::rethrow_exception(e);
    } catch (const TypeError& x) {
      throw TypeError(x.what() + where);
    } catch (const ValueError& x) {
      throw ValueError(x.what() + where);
    } catch (const IndexError& x) {
      throw IndexError(x.what() + where);
    } catch (const NotImplementedError& x) {
      throw NotImplementedError(x.what() + where);
    } catch (const LinAlgError& x) {
      throw LinAlgError(x.what() + where);
    } catch (const std::exception& x) {
      throw RuntimeError(x.what() + where);
    }
  }

 public:
  // Waits until everything queued so far has run; raises nothing (see raise_error).
  void drain() {
    uint64_t target;
    {
      std::lock_guard<std::mutex> lk(mu_);
      target = issued_;
    }
    wait_until(target);
    reclaim();
  }
  void raise_error() { raise_pending_error(); }

  // Fork: the child has no stream thread. Wait for queued work, hold the lock across fork()
  // so no other thread is inside it, and start over in the child.
  void before_fork() {
    // A communication stream is not waited for: its collective may wait for a peer that waits
    // for this process's later work (the child runs none of it).
    if (started_ && !comm_) {
      uint64_t target;
      {
        std::lock_guard<std::mutex> lk(mu_);
        target = issued_;
      }
      // oneflow's os.register_at_fork hook has drained the queue with the GIL released; this
      // catches work queued since by other threads.
      wait_until(target, false);
    }
    mu_.lock();
  }
  void after_fork_parent() { mu_.unlock(); }
  void after_fork_child() {
    if (comm_) {  // the child takes no part in the parent's collectives, nor their errors
      error_ = nullptr;
      failed_.store(false);
    }
    new (&mu_) std::mutex();
    new (&work_cv_) std::condition_variable();
    new (&done_cv_) std::condition_variable();
    new (&err_mu_) std::mutex();
    started_ = false;
    worker_sleeping_ = false;
    waiters_.store(0);
    notify_from_.store(kNobody);
    // Nothing runs the instructions left in the ring: drop them.
    skip_through_.store(issued_);
    for (uint64_t seq = reclaimed_; seq < issued_ && !comm_; ++seq) {
      Instruction& ins = ring_[seq % kCapacity];
      for (Tensor& t : ins.inputs) t->add_queued_uses(-1);
      for (Tensor& t : ins.outputs) t->add_queued_uses(-1);
    }
    for (Instruction& ins : ring_) {
      ins.inputs.clear();
      ins.outputs.clear();
      ins.task = nullptr;
    }
    completed_.store(issued_);
    completed_work_.store(issued_work_.load());
    published_.store(issued_);
    reclaimed_ = issued_;
    reclaimed_seen_.store(issued_);
    queued_bytes_ = 0;
  }

 private:
  const DeviceType type_;
  const bool comm_;
  const size_t max_bytes_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // the stream thread waits for instructions
  std::condition_variable done_cv_;  // threads wait for completion or space
  std::vector<Instruction> ring_;
  uint64_t issued_ = 0;  // under mu_: sequence number of the last queued instruction
  std::atomic<uint64_t> published_{0};
  // Work issued and run so far (monotonic totals; their difference is the work still queued).
  std::atomic<uint64_t> issued_work_{0};
  uint64_t reclaimed_ = 0;                   // under mu_: slots up to here are empty
  std::atomic<uint64_t> reclaimed_seen_{0};  // reclaimed_, read without mu_
  size_t queued_bytes_ = 0;  // under mu_: output bytes of the unreclaimed instructions
  std::atomic<uint64_t> reused_{0};
  // What the stream thread writes for every instruction, on a cache line of its own, and then
  // what it only reads (mostly) on another: sharing lines with the queuing thread's counters
  // above moved them between the cores for every op (on the 2-vCPU Xeon, a loop of queued
  // ops: trace of 1024x1024 ~1.45 -> ~1.25 us per op, outer 64x64 ~1.79 -> ~1.62; within
  // the noise in the benchmark harness).
  alignas(64) std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> completed_work_{0};
  alignas(64) std::atomic<uint64_t> skip_through_{0};
  std::atomic<uint64_t> interrupt_through_{0};  // set by the SIGINT handler
  static_assert(std::atomic<uint64_t>::is_always_lock_free);
  std::atomic<int> waiters_{0};
  // Under mu_ (read without it): the smallest instruction a sleeping waiter waits for.
  static constexpr uint64_t kNobody = ~uint64_t{0};
  std::atomic<uint64_t> notify_from_{kNobody};
  std::atomic<int> threads_{0};
  bool worker_sleeping_ = false;  // under mu_
  bool started_ = false;          // under mu_
  std::thread worker_;

  std::mutex err_mu_;
  std::exception_ptr error_;
  std::string error_op_;
  Location error_location_;
  uint64_t error_seq_ = 0;
  std::atomic<bool> failed_{false};
};

// The streams: the CPU's, created on first use, and one per CUDA device that has queued work
// (never destroyed: a stream thread may still be parked when static destructors run).
constexpr int kMaxCudaStreams = 64;
std::atomic<Stream*> g_cuda_streams[kMaxCudaStreams];
std::mutex g_streams_mu;  // creation of CUDA streams; held across fork()

Stream& cpu_stream() {
  static Stream* s = new Stream(DeviceType::kCPU);
  return *s;
}

// The stream of CUDA device `index`, created when `create`; null for an index past the table.
Stream* cuda_stream(int index, bool create) {
  if (index < 0 || index >= kMaxCudaStreams) return nullptr;
  Stream* s = g_cuda_streams[index].load(kAcquire);
  if (s != nullptr || !create) return s;
  std::lock_guard<std::mutex> lk(g_streams_mu);
  s = g_cuda_streams[index].load(kAcquire);
  if (s == nullptr) {
    s = new Stream(DeviceType::kCUDA);
    g_cuda_streams[index].store(s, kRelease);
  }
  return s;
}

// Note [A communication stream per group]: the collectives of each group (its key: the
// communicator's group object) run on a stream of their own (Gloo contexts of different groups
// are independent), as PyTorch's process groups each have their own work queue: asynchronous
// collectives of different groups may be issued in different orders on different processes
// (rank 0: group A then B; rank 1: B then A) without each stream waiting for a peer that is
// busy in the other group. Within a group they run in issue order. A collective on memory that
// a collective of another group uses waits for it (an event, as between the CPU and
// communication streams). The first kMaxCommStreams groups get streams; later ones share the
// last.
constexpr int kMaxCommStreams = 64;
std::atomic<Stream*> g_comm_streams[kMaxCommStreams];
const void* g_comm_keys[kMaxCommStreams];  // written under g_streams_mu before the stream

// The communication stream of group `key`, created with its first collective.
Stream& comm_stream(const void* key) {
  for (int i = 0; i < kMaxCommStreams; ++i) {
    Stream* s = g_comm_streams[i].load(kAcquire);
    if (s == nullptr) break;
    if (g_comm_keys[i] == key) return *s;
  }
  std::lock_guard<std::mutex> lk(g_streams_mu);
  for (int i = 0; i < kMaxCommStreams; ++i) {
    Stream* s = g_comm_streams[i].load(kAcquire);
    if (s != nullptr && g_comm_keys[i] == key) return *s;
    if (s == nullptr) {
      s = new Stream(DeviceType::kCPU, /*comm=*/true);
      g_comm_keys[i] = key;
      g_comm_streams[i].store(s, kRelease);
      return *s;
    }
  }
  return *g_comm_streams[kMaxCommStreams - 1].load(kAcquire);
}

template <typename F>
void for_each_comm_stream(F&& f) {
  for (std::atomic<Stream*>& p : g_comm_streams) {
    Stream* s = p.load(kAcquire);
    if (s == nullptr) break;
    f(*s);
  }
}

// Note [Events between the CPU and communication streams]: a collective queued on a
// communication stream waits (its instruction's wait_cpu) for the CPU instructions queued
// before it that write the tensors it reads or use those it writes: the latest of their
// storages' last_write and last_use records. The other way, the storages it uses are listed
// here with its stream, its sequence number and whether it writes them, until it has run. A
// CPU op that reads memory the collective writes, or writes memory it uses, waits for it (the
// CPU instruction's wait_comm); a small op that would is queued rather than run at the call;
// host access to the bytes (Storage::data() for any use, read_data() for writes: the
// collective's marker instruction on the CPU stream sets the storages' records, so both reach
// wait_for) waits for it; so does a collective of another group (its wait_comm). Two that only
// read a tensor (an all_gather's input and a send of it, the same input to two groups'
// collectives) do not wait for each other: asynchronous collectives of two groups that read
// one tensor may be issued in either order on each process, and a CPU op reading a tensor
// runs while a collective reads it. Every wait points to an instruction queued earlier, so
// they never form a cycle.
struct CommUse {
  const Storage* storage;
  Stream* stream;
  uint64_t seq;
  bool writes;
};
std::mutex g_comm_uses_mu;
std::vector<CommUse> g_comm_uses;         // under g_comm_uses_mu
std::atomic<size_t> g_comm_uses_size{0};  // read without the lock: 0 on the common path

// Under g_comm_uses_mu: drops the entries of collectives that have run.
// (A failed collective's uses stay until its error is raised: reading its tensors raises it.)
void prune_comm_uses_locked() {
  g_comm_uses.erase(std::remove_if(g_comm_uses.begin(), g_comm_uses.end(),
                                   [&](const CommUse& u) {
                                     return u.seq <= u.stream->completed() &&
                                            !u.stream->failed_through(u.seq);
                                   }),
                    g_comm_uses.end());
  g_comm_uses_size.store(g_comm_uses.size(), kRelease);
}

// Adds use u to the events (the latest per stream).
void add_event(CommEvents& out, const CommUse& u) {
  for (auto& [stream, seq] : out)
    if (stream == u.stream) {
      seq = std::max(seq, u.seq);
      return;
    }
  out.emplace_back(u.stream, u.seq);
}

void comm_dependencies(const TensorList& reads, const TensorList& writes, CommEvents& out,
                       const Stream* except) {
  out.clear();
  if (g_comm_uses_size.load(kAcquire) == 0) return;
  std::lock_guard<std::mutex> lk(g_comm_uses_mu);
  prune_comm_uses_locked();
  for (const bool write : {false, true})
    for (const Tensor& t : write ? writes : reads)
      for (const CommUse& u : g_comm_uses)
        if (u.storage == t->storage().get() && u.stream != except &&
            (write || u.writes || u.stream->failed_through(u.seq)))
          add_event(out, u);  // (a reader takes over a failed collective's error)
}

bool has_comm_dependency(const TensorList& reads, const TensorList& writes) {
  if (g_comm_uses_size.load(kAcquire) == 0) return false;
  CommEvents events;
  comm_dependencies(reads, writes, events);
  return !events.empty();
}

// The collectives queued on `storage` (with writes_only, those that write it).
CommEvents comm_dependencies(const Storage& storage, bool writes_only) {
  CommEvents out;
  if (g_comm_uses_size.load(kAcquire) == 0) return out;
  std::lock_guard<std::mutex> lk(g_comm_uses_mu);
  prune_comm_uses_locked();
  for (const CommUse& u : g_comm_uses)
    if (u.storage == &storage && (u.writes || !writes_only || u.stream->failed_through(u.seq)))
      add_event(out, u);
  return out;
}

// The no-op instruction a collective leaves on the CPU stream: its tensors' records then point
// to the CPU stream, so host access to them goes through eager::wait_for, which also waits for
// the collective (Note [Events between the CPU and communication streams]).
class CommMarker final : public Primitive {
 public:
  const char* name() const override { return "comm_event"; }
  std::vector<TensorMeta> infer(const TensorList&, const Attrs&) const override { return {}; }
  void compute_cpu(const TensorList&, const TensorList&, const Attrs&) const override {}
  void compute_cuda(const TensorList&, const TensorList&, const Attrs&) const override {}
  uint64_t cpu_work(const TensorList&, const TensorList&) const override { return 0; }
};
const Primitive& comm_marker() {
  static const CommMarker marker;
  return marker;
}

// The stream whose instructions a storage's records (last_use, last_write) count.
Stream* stream_of(const Storage& storage) {
  return storage.device().type == DeviceType::kCPU ? &cpu_stream()
                                                   : cuda_stream(storage.device().index, false);
}

template <typename F>
void for_each_stream(F&& f) {
  f(cpu_stream());
  for_each_comm_stream(f);
  for (std::atomic<Stream*>& p : g_cuda_streams)
    if (Stream* s = p.load(kAcquire)) f(*s);
}

// Exit and fork, registered once when the first stream thread starts.
void register_process_hooks() {
  static std::once_flag once;  // a forked child inherits the registrations
  std::call_once(once, [] {
    std::atexit([] { for_each_stream([](Stream& s) { s.stop_at_exit(); }); });
    pthread_atfork(
        [] {
          g_streams_mu.lock();
          for_each_stream([](Stream& s) { s.before_fork(); });
        },
        [] {
          for_each_stream([](Stream& s) { s.after_fork_parent(); });
          g_streams_mu.unlock();
        },
        [] {
          for_each_stream([](Stream& s) { s.after_fork_child(); });
          new (&g_streams_mu) std::mutex();
        });
  });
}

}  // namespace

void set_hooks(const Hooks& hooks) { g_hooks = hooks; }
void set_current_location(const Location& loc) { t_location = loc; }
const Location& current_location() { return t_location; }

bool async_enabled() {
  return t_stream == nullptr && !g_sync.load(std::memory_order_relaxed) &&
         !g_exiting.load(std::memory_order_relaxed);
}
bool sync_execution() { return g_sync.load(); }
void set_sync_execution(bool sync) {
  if (sync) synchronize();
  g_sync.store(sync);
}
bool on_stream_thread() { return t_stream != nullptr; }

bool queue_cuda_ops() { return g_queue_cuda.load(std::memory_order_relaxed); }
void set_queue_cuda_ops(bool queue) {
  g_queue_cuda.store(queue);
  if (!queue) synchronize();  // what was queued runs before later ops launch from the caller
}

void set_small_kernel_ns_limit(uint32_t ns) { g_small_kernel_ns_limit.store(ns); }
uint32_t small_kernel_ns_limit() { return g_small_kernel_ns_limit.load(); }
bool queue_every_op() { return g_queue_every_op.load(std::memory_order_relaxed); }
void set_queue_every_op(bool queue) { g_queue_every_op.store(queue); }

void enqueue(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
             const Attrs& attrs, bool fresh_outputs) {
  cpu_stream().enqueue(prim, inputs, outputs, attrs, fresh_outputs);
}
bool run_here_if_idle(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                      const Attrs& attrs) {
  if (g_queue_every_op.load(std::memory_order_relaxed)) return false;
  return cpu_stream().run_here_if_idle(prim, inputs, outputs, attrs);
}
void enqueue_cuda(int index, const Primitive& prim, const TensorList& inputs,
                  const TensorList& outputs, const Attrs& attrs) {
  if (Stream* s = cuda_stream(index, true))
    s->enqueue(prim, inputs, outputs, attrs);
  else
    profiler::timed(prim.name(), inputs, true, [&] { prim.compute_cuda(inputs, outputs, attrs); });
}
void run_and_wait(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                  const Attrs& attrs) {
  cpu_stream().run_and_wait(prim, inputs, outputs, attrs);
}
namespace {
// A primitive whose kernel is a host closure (run_on_stream). It lives on the caller's stack:
// the caller waits until the stream thread has run it.
class HostTask final : public Primitive {
 public:
  explicit HostTask(const std::function<void()>& fn) : fn_(fn) {}
  const char* name() const override { return "host_task"; }
  std::vector<TensorMeta> infer(const TensorList&, const Attrs&) const override { return {}; }
  void compute_cpu(const TensorList&, const TensorList&, const Attrs&) const override { fn_(); }
  void compute_cuda(const TensorList&, const TensorList&, const Attrs&) const override { fn_(); }

 private:
  const std::function<void()>& fn_;
};
}  // namespace

void run_on_stream(const std::function<void()>& fn) {
  graph::check_not_tracing("a computation on the host (nonzero, masks, linalg decompositions)");
  if (!async_enabled() || on_stream_thread()) return fn();
  const HostTask task(fn);
  cpu_stream().run_and_wait(task, {}, {}, Attrs{});
}
CommTicket enqueue_comm(const char* name, std::function<void()> fn, const TensorList& reads,
                        const TensorList& writes, const void* group) {
  graph::check_not_tracing(name);
  // After the CPU instructions queued so far that write what it reads or use what it writes,
  // and the collectives of other groups queued so on them.
  uint64_t after = 0;
  for (const Tensor& t : reads) after = std::max(after, t->storage()->last_write().load());
  for (const Tensor& t : writes) after = std::max(after, t->storage()->last_use().load());
  Stream& comm = comm_stream(group);
  CommEvents others;
  comm_dependencies(reads, writes, others, &comm);
  TensorList held(reads);
  held.insert(held.end(), writes.begin(), writes.end());
  const uint64_t seq = comm.enqueue_task(name, std::move(fn), held, after, others);
  // The marker before the uses are listed: it must not wait for the collective itself.
  cpu_stream().enqueue(comm_marker(), reads, writes, Attrs{});
  std::lock_guard<std::mutex> lk(g_comm_uses_mu);
  for (const bool write : {false, true})
    for (const Tensor& t : write ? writes : reads)
      g_comm_uses.push_back({t->storage().get(), &comm, seq, write});
  g_comm_uses_size.store(g_comm_uses.size(), kRelease);
  return CommTicket{&comm, seq};
}
namespace {
void wait_comm_event(Stream& s, uint64_t seq) {
  s.wait_until(seq);
  s.reclaim();
  s.raise_error();
}
}  // namespace
void wait_comm(const CommTicket& ticket) {
  if (ticket.stream != nullptr) wait_comm_event(*static_cast<Stream*>(ticket.stream), ticket.seq);
}
bool on_comm_stream() { return t_stream != nullptr && t_stream->is_comm(); }

void synchronize() {
  // Every stream first (the CUDA streams' launches, the CPU kernels), then the first error; a
  // second stream's error stays pending for the next synchronisation.
  for_each_stream([](Stream& s) { s.drain(); });
  for_each_stream([](Stream& s) { s.raise_error(); });
}
void drain(bool comm) {
  for_each_stream([&](Stream& s) {
    if (comm || !s.is_comm()) s.drain();
  });
}
void synchronize_cuda(int index) {
  if (Stream* s = cuda_stream(index, false)) {
    s->drain();
    s->raise_error();
  }
}
// The communication streams' tasks read their tensors' bytes after their events (wait_cpu);
// waiting here for the CPU stream could wait for an op queued behind the task itself.
namespace {
// A host read raises the error of a failed collective on the storage (its group's stream's),
// not those of other groups (they raise where their tensors are read, or at a synchronize).
void wait_for_comm(const Storage& storage, bool writes_only) {
  if (t_stream != nullptr) return;
  for (const auto& [stream, seq] : comm_dependencies(storage, writes_only))
    wait_comm_event(*stream, seq);
}
}  // namespace
// The collectives on the storage are waited for before the stream's error is raised: a
// collective checks whether the ops it depends on failed once they have run, and takes their
// error over; raising it here first would clear it before the collective has seen it (it
// would then send the failed op's garbage).
void wait_for(const Storage& storage) {
  if (t_stream != nullptr && t_stream->is_comm()) return;
  Stream* s = stream_of(storage);
  if (s) s->wait_for(storage.last_use(), false);
  wait_for_comm(storage, false);
  if (s && t_stream == nullptr) s->raise_error();  // (another stream's thread only waits)
}
void wait_for_write(const Storage& storage) {
  if (t_stream != nullptr && t_stream->is_comm()) return;
  Stream* s = stream_of(storage);
  if (s) s->wait_for(storage.last_write(), false);
  wait_for_comm(storage, true);
  if (s && t_stream == nullptr) s->raise_error();
}
void cancel_pending() {
  for_each_stream([](Stream& s) { s.cancel(); });
}
void interrupt_from_signal() {
  for_each_stream([](Stream& s) { s.interrupt(); });
}
uint64_t pending_instructions() {
  uint64_t n = 0;
  for_each_stream([&](Stream& s) { n += s.pending(); });
  return n;
}
uint64_t reused_outputs() { return cpu_stream().reused(); }

void set_num_threads(int n) {
  omp_set_num_threads(n);  // the calling thread's kernels (sync mode, CUDA launches)
  cpu_stream().set_num_threads(n);
}
int num_threads() {
  const int n = cpu_stream().num_threads();
  return n > 0 ? n : omp_get_max_threads();
}

}  // namespace oneflow::eager
