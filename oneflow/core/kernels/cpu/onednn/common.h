// What the oneDNN kernels share: a cache of built primitives, and execution with a scratchpad
// owned by each call. oneDNN's default scratchpad is one buffer shared by all primitives, which
// corrupts results when two threads run primitives at once; with scratchpad_mode::user every call
// takes its buffer from the CPU caching allocator.
#pragma once

#include <dnnl.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "oneflow/core/framework/tensor.h"

namespace oneflow::onednn {

inline dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// Executes `prim` on `stream` with `args` plus a scratchpad of `desc` (empty descs need none).
inline void execute(const dnnl::primitive& prim, dnnl::stream& stream,
                    std::unordered_map<int, dnnl::memory> args, const dnnl::memory::desc& desc,
                    const dnnl::engine& engine) {
  Tensor buffer;
  if (desc.get_size() > 0) {
    buffer = empty_tensor({static_cast<int64_t>(desc.get_size())}, DType::kUInt8, Device{});
    args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(desc, engine, buffer->data());
  }
  prim.execute(stream, args);
}

// Built primitives by problem key, shared by threads. Entries are held by shared_ptr, so a call
// keeps its entry while another thread clears a full cache.
template <typename Entry>
class PrimitiveCache {
 public:
  // The entry for `key`, made by `build()` on a miss. A null entry (a problem oneDNN has no
  // kernel for) is cached too, so the caller's fallback takes that problem from then on.
  template <typename Build>
  std::shared_ptr<Entry> get(const std::string& key, Build&& build) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    std::shared_ptr<Entry> e = build();
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kCapacity) map_.clear();
    map_[key] = e;
    return e;
  }

 private:
  static constexpr size_t kCapacity = 1024;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> map_;
};

}  // namespace oneflow::onednn
