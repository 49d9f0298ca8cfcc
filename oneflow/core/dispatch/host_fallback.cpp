#include "oneflow/core/dispatch/host_fallback.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <unordered_set>

namespace oneflow {

namespace {
// Filled during static initialisation (before main, one thread), read-only afterwards.
std::unordered_set<std::type_index>& pending() {
  static std::unordered_set<std::type_index> classes;
  return classes;
}
}  // namespace

bool register_cuda_pending(std::type_index primitive_class) {
  pending().insert(primitive_class);
  return true;
}

bool cuda_kernel_pending(const Primitive& prim) {
  const auto& classes = pending();
  return !classes.empty() && classes.count(std::type_index(typeid(prim))) > 0;
}

bool host_fallback_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("ONEFLOW_CUDA_HOST_FALLBACK");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

void note_host_fallback(const Primitive& prim) {
  static std::mutex mu;
  static std::set<std::string> noted;
  std::lock_guard<std::mutex> lock(mu);
  if (!noted.insert(prim.name()).second) return;
  std::fprintf(stderr,
               "oneflow: %s has no CUDA kernel yet and runs on the host, with copies to and from "
               "the GPU (ONEFLOW_CUDA_HOST_FALLBACK=0 raises instead)\n",
               prim.name());
}

}  // namespace oneflow
