// oneDNN primitives with a scratchpad owned by each call. oneDNN's default scratchpad is one
// buffer shared by all primitives, which corrupts results when two threads run primitives at
// once; with scratchpad_mode::user every call takes its buffer from the CPU caching allocator.
#pragma once

#include <dnnl.hpp>
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

}  // namespace oneflow::onednn
