// The asynchronous eager engine (DESIGN.md section 5).
//
// Eager CPU ops become instructions on the CPU stream: a ring of bounded size that one stream
// thread executes in order. The calling thread returns as soon as the outputs' metas are known.
// Each Storage records the sequence number of the last instruction that uses it (as input or
// output); host code that touches a storage's bytes (`Storage::data()` off the stream thread)
// waits for that instruction first. Instructions hold their tensors, so memory returns to the
// allocator only after the kernels that use it have run.
//
// The stream thread may take the GIL (dropping the last reference to a tensor can release a
// Python object: a hook, NumPy memory), so every wait here releases it first (Hooks).
//
// A small, quick op that finds the stream idle runs on the calling thread instead
// (run_here_if_idle): queuing it would cost more than running it.
//
// A kernel error is kept and raised at the next synchronisation point, naming the op and the
// Python line that queued it; the instructions queued behind a failed one are skipped. With
// ONEFLOW_SYNC_EXECUTION=1 every op runs on the calling thread before the call returns.
//
// CUDA ops are launched from the calling thread onto the device's own CUDA stream (already
// asynchronous on the GPU) unless ONEFLOW_ASYNC_CUDA=1 (or set_queue_cuda_ops(true)): then an
// op whose operands all live on one CUDA device is an instruction on that device's stream here,
// whose thread launches it, so Python waits for neither the kernel nor its launch. Ops that mix
// devices (copies) run on the calling thread; `data()` orders them after the queued
// instructions of every operand's stream.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "oneflow/core/common/attrs.h"
#include "oneflow/core/framework/tensor.h"

namespace oneflow {

class Primitive;

namespace eager {

// Where a Python program queued an op: a code object (kept alive by the binding) and the
// instruction offset in it. Resolved to "file:line" only when an error is reported.
struct Location {
  const void* code = nullptr;
  int lasti = -1;
};

// Installed by the Python binding. Every member may be null (C++ programs and tests).
struct Hooks {
  // Runs fn(arg) with the GIL released when the calling thread holds it; rethrows fn's error.
  void (*without_gil)(void (*fn)(void*), void* arg) = nullptr;
  // Called about every 20 ms by a waiting thread; throws to abandon the wait (KeyboardInterrupt).
  void (*check_interrupts)() = nullptr;
  // The calling thread's Python location when it holds the GIL (ops bound without releasing it).
  Location (*locate)() = nullptr;
  // "file.py:12" for a recorded location.
  std::string (*describe)(const Location&) = nullptr;
};
void set_hooks(const Hooks& hooks);

// The calling thread's Python location, recorded by the binding before it releases the GIL.
void set_current_location(const Location& loc);
const Location& current_location();

// True when ops should be queued rather than run on the calling thread: the engine is on
// (ONEFLOW_SYNC_EXECUTION is unset or 0, no set_sync_execution(true)) and the caller is not
// the stream thread itself (a composite kernel's inner ops run inline).
bool async_enabled();
bool sync_execution();
void set_sync_execution(bool sync);
bool on_stream_thread();

// Queues prim.compute_cpu(inputs, outputs, attrs) on the CPU stream. Blocks while the queue is
// full (too many instructions, or too many bytes of outputs not yet computed).
//
// fresh_outputs: the outputs were just allocated for this op and nothing else refers to them.
// Each such output of 64 KiB or more then takes over, when there is one, the memory of a
// same-sized tensor that only queued instructions still reference (a result the program has
// dropped): stream-ordered reuse. The op runs after those instructions, so it may write that
// memory; host access to the output waits for them. A loop of ops whose results are dropped
// then writes one buffer that stays in cache, where fresh buffers would cycle several through
// it (4 MB outputs: two buffers cost ~40% on the 2-vCPU EPYC, four ~90%).
void enqueue(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
             const Attrs& attrs, bool fresh_outputs = false);
// Runs prim.compute_cpu here, now, when its operands are small (20 KiB read and written at
// most), its kernel is quick and the CPU stream has nothing queued, and returns true; returns false
// otherwise (Note [Small ops run here] in engine.cpp). Off with ONEFLOW_QUEUE_EVERY_OP=1 or
// set_queue_every_op(true): every op is queued, and every kernel error surfaces at a
// synchronisation point.
bool run_here_if_idle(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                      const Attrs& attrs);
bool queue_every_op();
void set_queue_every_op(bool queue);
// The kernel time (ns, default 600) below which a small op runs at the call (tests raise it to
// make every small op on an idle stream run there).
void set_small_kernel_ns_limit(uint32_t ns);
uint32_t small_kernel_ns_limit();
// Whether CUDA ops are queued on their device's stream (ONEFLOW_ASYNC_CUDA=1), and the switch
// (switching off drains the queues first).
bool queue_cuda_ops();
void set_queue_cuda_ops(bool queue);
// Queues prim.compute_cuda(inputs, outputs, attrs) on CUDA device `index`'s stream: every
// operand lives on that device. Runs it here when the index is past the engine's table (64).
void enqueue_cuda(int index, const Primitive& prim, const TensorList& inputs,
                  const TensorList& outputs, const Attrs& attrs);

// Runs prim.compute_cpu on the stream thread after the queued instructions and waits for it
// (ops on memory NumPy or DLPack may touch: they complete before the call returns). The
// kernel's own error raises as it is; an earlier pending error raises as at a synchronisation.
void run_and_wait(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                  const Attrs& attrs);

// Runs `fn` (host work with OpenMP parallel regions, e.g. the count of a mask's true elements
// before nonzero allocates its output) on the stream thread after the queued instructions, and
// waits for it; runs it here in synchronous mode or on the stream thread. One OpenMP team does
// all parallel work that way (see run_and_wait). Its exception raises as it is.
void run_on_stream(const std::function<void()>& fn);

// A queued collective: its communication stream and sequence number there.
struct CommTicket {
  void* stream = nullptr;
  uint64_t seq = 0;
};
// Queues `fn` (a collective of the group `group`, any key that identifies it) on that group's
// communication stream. It reads the memory of `reads` and writes that of `writes` (both stay
// alive until it has run), and runs after the CPU instructions and other groups' collectives
// queued so far that write what it reads or use what it writes. Later CPU ops and other groups'
// collectives that read what it writes or write what it uses wait for it, as does host access
// to those bytes; the others run beside it (Notes [Events between the CPU and communication
// streams] and [A communication stream per group] in engine.cpp). An exception from fn is
// raised at the next synchronisation point, naming `name`.
CommTicket enqueue_comm(const char* name, std::function<void()> fn, const TensorList& reads,
                        const TensorList& writes, const void* group = nullptr);
// Waits until the collective has run, then raises a pending communication error.
void wait_comm(const CommTicket& ticket);
// True on a communication stream's thread.
bool on_comm_stream();

// Waits until every queued instruction of every stream has run, then raises a pending kernel
// error.
void synchronize();
// Waits until every queued instruction has run; a pending kernel error stays pending (fork).
// With comm false, the communication streams are left running (a fork: their collectives may
// wait for peers that wait for this process's later work).
void drain(bool comm = true);
// The same for CUDA device `index`'s stream only (its kernels are then launched, not finished).
void synchronize_cuda(int index);
// Waits for the instructions using `storage` (Storage::data() calls this off the fast path).
void wait_for(const Storage& storage);
// Waits for the queued instructions that write `storage` (Storage::read_data()).
void wait_for_write(const Storage& storage);
// Drops every queued instruction that has not started (after an interrupt).
void cancel_pending();
// The same, callable from a signal handler (async-signal-safe): the instructions queued when it
// is called are dropped by the stream thread; later ones run.
void interrupt_from_signal();
// Instructions queued and not yet finished.
uint64_t pending_instructions();
// Outputs that took over a dropped tensor's memory so far (stream-ordered reuse, see enqueue).
uint64_t reused_outputs();

// The stream thread's OpenMP team size (the team that runs the CPU kernels, shared with
// oneDNN). set_num_threads applies it before the next instruction.
void set_num_threads(int n);
int num_threads();

}  // namespace eager
}  // namespace oneflow
