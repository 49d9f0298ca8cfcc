// The kernel profiler behind oneflow.profiler: while it runs, every kernel the eager engine, the
// dispatcher or a compiled graph's replay executes is timed where it runs (the CPU stream
// thread, the calling thread for kernels run at the call, the launching thread for CUDA
// kernels, whose time is then the launch's) and kept as an event: the primitive's name, the
// device, the thread, start and end on the steady clock, optionally the inputs' shapes. Off, it
// costs one relaxed atomic load per kernel.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "oneflow/core/ops/primitive.h"

namespace oneflow::profiler {

struct Event {
  std::string name;
  bool cuda = false;
  int thread = 0;  // 0 for the first thread seen, 1 for the next, ...
  int64_t start_ns = 0, end_ns = 0;
  std::vector<Shape> shapes;  // the inputs', with record_shapes
};

extern std::atomic<bool> g_enabled;
inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

// Nanoseconds on the steady clock (CLOCK_MONOTONIC, as Python's time.perf_counter_ns).
int64_t now_ns();
// Starts collecting (dropping what an earlier run left); raises if a run is active.
void start(bool record_shapes);
// Stops collecting and returns the events in the order they ended.
std::vector<Event> stop();
// The calling thread's number in the events of the current run.
int thread_index();
void record(const char* name, const TensorList& inputs, bool cuda, int64_t start_ns,
            int64_t end_ns);

// Runs `kernel` (a callable), timed while the profiler runs.
template <typename F>
void timed(const char* name, const TensorList& inputs, bool cuda, F&& kernel) {
  if (!enabled()) return kernel();
  const int64_t start_ns = now_ns();
  kernel();
  record(name, inputs, cuda, start_ns, now_ns());
}

}  // namespace oneflow::profiler
