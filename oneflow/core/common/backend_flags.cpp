#include "oneflow/core/common/backend_flags.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "oneflow/core/common/error.h"

namespace oneflow {

namespace {
std::atomic<int> g_precision{static_cast<int>(MatmulPrecision::kHighest)};
std::atomic<int> g_deterministic{0};
std::atomic<int> g_anomaly{0};
}  // namespace

MatmulPrecision float32_matmul_precision() {
  return static_cast<MatmulPrecision>(g_precision.load(std::memory_order_relaxed));
}
void set_float32_matmul_precision(MatmulPrecision p) {
  g_precision.store(static_cast<int>(p), std::memory_order_relaxed);
}

int deterministic_mode() { return g_deterministic.load(std::memory_order_relaxed); }
void set_deterministic_mode(int mode) { g_deterministic.store(mode, std::memory_order_relaxed); }

int anomaly_mode() { return g_anomaly.load(std::memory_order_relaxed); }
void set_anomaly_mode(int mode) { g_anomaly.store(mode, std::memory_order_relaxed); }

void check_deterministic(const char* op, bool warn_only) {
  const int mode = deterministic_mode();
  if (mode == 0) return;
  if (mode == 2 && !warn_only)
    throw_error<RuntimeError>(op,
                              "does not have a deterministic implementation, but you set "
                              "'use_deterministic_algorithms(True)'. You can turn off determinism "
                              "just for this operation, or you can use the 'warn_only=True' "
                              "option, if that's acceptable for your application.");
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lk(mu);
  if (warned.insert(op).second)
    std::fprintf(stderr,
                 "UserWarning: %s does not have a deterministic implementation, but you set "
                 "'use_deterministic_algorithms(True)'; it runs non-deterministically.\n",
                 op);
}

}  // namespace oneflow
