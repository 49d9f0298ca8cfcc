// The kernel profiler's event store (profiler.h): one list under a mutex, appended by whichever
// thread ran the kernel.
#include "oneflow/core/eager/profiler.h"

#include <chrono>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "oneflow/core/common/error.h"

namespace oneflow::profiler {

std::atomic<bool> g_enabled{false};

namespace {
struct Store {
  std::mutex mu;
  bool record_shapes = false;
  std::vector<Event> events;
  std::unordered_map<std::thread::id, int> threads;
};
Store& store() {
  static Store* s = new Store();
  return *s;
}
}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void start(bool record_shapes) {
  Store& s = store();
  std::lock_guard<std::mutex> lk(s.mu);
  if (g_enabled.load())
    throw_error<RuntimeError>("profiler", "a profiler is already running in this process");
  s.events.clear();
  s.threads.clear();
  s.record_shapes = record_shapes;
  g_enabled.store(true);
}

std::vector<Event> stop() {
  Store& s = store();
  std::lock_guard<std::mutex> lk(s.mu);
  g_enabled.store(false);
  std::vector<Event> out;
  out.swap(s.events);
  return out;
}

namespace {
int thread_index_locked(Store& s) {
  auto [it, fresh] = s.threads.emplace(std::this_thread::get_id(), 0);
  if (fresh) it->second = static_cast<int>(s.threads.size()) - 1;
  return it->second;
}
}  // namespace

int thread_index() {
  Store& s = store();
  std::lock_guard<std::mutex> lk(s.mu);
  return thread_index_locked(s);
}

void record(const char* name, const TensorList& inputs, bool cuda, int64_t start_ns,
            int64_t end_ns) {
  Store& s = store();
  std::lock_guard<std::mutex> lk(s.mu);
  if (!g_enabled.load(std::memory_order_relaxed)) return;  // stopped while the kernel ran
  Event e;
  e.name = name;
  e.cuda = cuda;
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  e.thread = thread_index_locked(s);
  if (s.record_shapes) {
    e.shapes.reserve(inputs.size());
    for (const Tensor& t : inputs) e.shapes.push_back(t ? t->shape() : Shape{});
  }
  s.events.push_back(std::move(e));
}

}  // namespace oneflow::profiler
