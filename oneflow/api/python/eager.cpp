// The eager engine's Python side: waits release the GIL and turn Ctrl-C into KeyboardInterrupt,
// each op notes the Python line that issued it (a failing queued kernel names it), and the
// module-level controls (synchronize, synchronous mode).
#include <signal.h>

#include <string>
#include <unordered_map>

#include "oneflow/api/python/common.h"
#include "oneflow/core/common/backend_flags.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/eager/profiler.h"

// After Python.h (included by pybind11 through common.h).
#include <frameobject.h>

namespace oneflow::python {

namespace {

// The oneflow package's folder: frames in files under it are the framework's, not the user's.
std::string g_package_dir;

// Code objects seen, and whether they are the framework's. The map holds a reference to each,
// so a recorded location's code object stays valid; past the cap nothing is recorded.
constexpr size_t kMaxCodeObjects = 16384;
std::unordered_map<PyCodeObject*, bool> g_code_is_internal;

// 1 internal, 0 user code, -1 unknown (cache full).
int is_internal(PyCodeObject* code) {
  auto it = g_code_is_internal.find(code);
  if (it != g_code_is_internal.end()) return it->second ? 1 : 0;
  if (g_code_is_internal.size() >= kMaxCodeObjects) return -1;
  bool internal = false;
  if (!g_package_dir.empty() && code->co_filename != nullptr) {
    Py_ssize_t n = 0;
    const char* file = PyUnicode_AsUTF8AndSize(code->co_filename, &n);
    if (file == nullptr) {
      PyErr_Clear();
    } else {
      internal =
          static_cast<size_t>(n) >= g_package_dir.size() &&
          std::char_traits<char>::compare(file, g_package_dir.data(), g_package_dir.size()) == 0;
    }
  }
  Py_INCREF(code);
  g_code_is_internal.emplace(code, internal);
  return internal ? 1 : 0;
}

void without_gil(void (*fn)(void*), void* arg) {
  if (!Py_IsInitialized() || !PyGILState_Check()) {
    fn(arg);
    return;
  }
  PyThreadState* state = PyEval_SaveThread();
  try {
    fn(arg);
  } catch (...) {
    PyEval_RestoreThread(state);
    throw;
  }
  PyEval_RestoreThread(state);
}

void check_interrupts() {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

std::string describe(const eager::Location& loc) {
  py::gil_scoped_acquire gil;
  auto* code = static_cast<PyCodeObject*>(const_cast<void*>(loc.code));
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  if (file == nullptr) {
    PyErr_Clear();
    file = "<unknown>";
  }
  return str_cat(file, ":", PyCode_Addr2Line(code, loc.lasti));
}

// SIGINT: drop the queued ops, then Python's own handler (KeyboardInterrupt at the next
// bytecode or wait), so Ctrl-C stops a long queue wherever the Python thread is.
struct sigaction g_python_sigint;

void on_sigint(int sig, siginfo_t* info, void* context) {
  eager::interrupt_from_signal();
  if (g_python_sigint.sa_flags & SA_SIGINFO)
    g_python_sigint.sa_sigaction(sig, info, context);
  else if (g_python_sigint.sa_handler != SIG_DFL && g_python_sigint.sa_handler != SIG_IGN)
    g_python_sigint.sa_handler(sig);
}

// Chains in front of Python's C-level SIGINT handler; skipped when SIGINT is ignored or left at
// its default (then Ctrl-C does not raise KeyboardInterrupt anyway). A later signal.signal()
// replaces the chain, and Ctrl-C then drops the queue only while a thread waits on it.
void hook_sigint() {
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  const bool has_siginfo = (current.sa_flags & SA_SIGINFO) != 0;
  if (!has_siginfo && (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN)) return;
  if (has_siginfo && current.sa_sigaction == &on_sigint) return;
  struct sigaction mine = current;
  mine.sa_flags |= SA_SIGINFO;
  mine.sa_sigaction = &on_sigint;
  g_python_sigint = current;
  sigaction(SIGINT, &mine, nullptr);
}

}  // namespace

eager::Location locate() {
  eager::Location loc;
  if (!Py_IsInitialized() || !PyGILState_Check()) return loc;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  PyFrameObject* owned = nullptr;            // frames from PyFrame_GetBack are new references
  for (int depth = 0; frame != nullptr && depth < 32; ++depth) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const int internal = is_internal(code);
    Py_DECREF(code);  // the cache holds its own reference
    if (internal < 0) break;
    if (internal == 0) {
      loc = {code, PyFrame_GetLasti(frame)};
      break;
    }
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_XDECREF(owned);
    owned = back;
    frame = back;
  }
  Py_XDECREF(owned);
  return loc;
}

void record_location() {
  if (eager::async_enabled()) eager::set_current_location(locate());
}

void clear_location() { eager::set_current_location({}); }

void init_eager(py::module_& m) {
  eager::Hooks hooks;
  hooks.without_gil = &without_gil;
  hooks.check_interrupts = &check_interrupts;
  hooks.describe = &describe;
  hooks.locate = &locate;
  eager::set_hooks(hooks);

  m.def(
      "synchronize", [] { eager::synchronize(); },
      "Waits for every queued op (CPU kernels, CUDA launches); raises the error of a failed "
      "kernel.");
  m.def("sync_execution", &eager::sync_execution);
  m.def("set_sync_execution", &eager::set_sync_execution, py::arg("sync"),
        "True runs every op to completion before it returns (ONEFLOW_SYNC_EXECUTION=1).");
  m.def("queue_cuda_ops", &eager::queue_cuda_ops);
  m.def("set_queue_cuda_ops", &eager::set_queue_cuda_ops, py::arg("queue"),
        "True queues CUDA ops on their device's stream in the engine (ONEFLOW_ASYNC_CUDA=1).");
  m.def("queue_every_op", &eager::queue_every_op);
  m.def("set_queue_every_op", &eager::set_queue_every_op, py::arg("queue"),
        "True queues every CPU op, small ones on an idle stream too (ONEFLOW_QUEUE_EVERY_OP=1): "
        "kernel errors then always surface at a synchronisation point.");
  m.def("_small_kernel_ns_limit", &eager::small_kernel_ns_limit);
  m.def("_set_small_kernel_ns_limit", &eager::set_small_kernel_ns_limit, py::arg("ns"));
  m.def("_set_package_dir", [](const std::string& dir) { g_package_dir = dir; });
  m.def("_hook_sigint", &hook_sigint);
  // The kernels' numerics switches (oneflow/framework/determinism.py).
  m.def("_float32_matmul_precision", [] { return static_cast<int>(float32_matmul_precision()); });
  m.def("_set_float32_matmul_precision",
        [](int p) { set_float32_matmul_precision(static_cast<MatmulPrecision>(p)); });
  m.def("_deterministic_mode", &deterministic_mode);
  m.def("_set_deterministic_mode", &set_deterministic_mode);
  m.def("_anomaly_mode", &anomaly_mode);
  m.def("_set_anomaly_mode", &set_anomaly_mode);
  // The kernel profiler (eager/profiler.h) behind oneflow.profiler.
  m.def("_profiler_start", &profiler::start, py::arg("record_shapes"));
  m.def("_profiler_enabled", &profiler::enabled);
  m.def("_profiler_now_ns", &profiler::now_ns);
  m.def("_profiler_thread", &profiler::thread_index);
  m.def("_profiler_stop", [] {
    std::vector<profiler::Event> events = profiler::stop();
    py::list out;
    for (const profiler::Event& e : events) {
      py::list shapes;
      for (const Shape& s : e.shapes) shapes.append(py::cast(s));
      out.append(py::make_tuple(e.name, e.cuda, e.thread, e.start_ns, e.end_ns, shapes));
    }
    return out;
  });
  m.def("pending_instructions", &eager::pending_instructions);
  m.def("reused_outputs", &eager::reused_outputs);
  // Before fork(): let queued work finish; a kernel error stays for the parent's next sync.
  // Before a fork: the CPU and CUDA streams (a collective may wait for this process's work
  // after the fork).
  m.def("_drain", [] { eager::drain(/*comm=*/false); });
  // At exit: let queued work finish; a kernel error nobody synchronised on is printed, not lost.
  m.def("_drain_at_exit", [] {
    try {
      eager::synchronize();
    } catch (const Error& e) {
      PySys_WriteStderr("oneflow: a kernel failed after the last synchronisation: %.4000s\n",
                        e.what());
    }
  });
}

}  // namespace oneflow::python
