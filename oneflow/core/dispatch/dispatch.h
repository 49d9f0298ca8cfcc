// The one entry point every op passes through (DESIGN.md section 2). It picks the mode --
// lazy (inside nn.Graph tracing), eager global, or eager local -- and, in eager local mode,
// infers output metas, allocates outputs (or aliases them for views), records the autograd node
// and runs the device's kernel.
#pragma once

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

enum class DispatchMode : int8_t { kLazy, kEagerGlobal, kEagerLocal };

// Lazy mode is on while a graph is being traced (thread-local).
bool lazy_mode_enabled();
void set_lazy_mode(bool enabled);
class LazyModeGuard {
 public:
  explicit LazyModeGuard(bool enabled);
  ~LazyModeGuard();
  LazyModeGuard(const LazyModeGuard&) = delete;
  LazyModeGuard& operator=(const LazyModeGuard&) = delete;

 private:
  bool prev_;
};

// Runs `prim` on `inputs`. When `inplace_out` is given, the single output is written into it
// (the primitive must allow running in place and the shapes must agree).
TensorList dispatch(const Primitive& prim, const TensorList& inputs, const Attrs& attrs = {},
                    const Tensor& inplace_out = nullptr);

// Convenience for single-output primitives.
inline Tensor dispatch1(const Primitive& prim, const TensorList& inputs, const Attrs& attrs = {},
                        const Tensor& inplace_out = nullptr) {
  return dispatch(prim, inputs, attrs, inplace_out)[0];
}

}  // namespace oneflow
