// Autograd: grad mode, the graph of backward nodes recorded by the dispatcher, and the engine
// that walks it (DESIGN.md section 6).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "oneflow/core/common/attrs.h"
#include "oneflow/core/ops/primitive.h"

namespace oneflow {

// ---- grad mode ----
bool grad_mode_enabled();
void set_grad_mode(bool enabled);
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : prev_(grad_mode_enabled()) { set_grad_mode(enabled); }
  ~GradModeGuard() { set_grad_mode(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

// ---- the backward graph ----
class Node;
struct Edge {
  std::shared_ptr<Node> node;  // null: no gradient flows to this input
  int input_nr = 0;            // which of node's forward outputs this edge feeds
};

// Note [Saved tensor hooks]: while a pack hook is set on a thread (Python's
// autograd.graph.saved_tensors_hooks), every tensor an op saves for backward on that thread is
// handed to the innermost hook, and the node keeps what the hook returned instead of the tensor
// (plus the tensor's version counter, for the in-place check); backward unpacks it to get a
// tensor back. Activation checkpointing packs an index and unpacks a recomputed tensor;
// save_on_cpu packs a host copy. The hook runs with no hook set, so tensors it saves are kept
// as they are.
struct PackedTensor {
  virtual ~PackedTensor() = default;
  virtual Tensor unpack() const = 0;
};
using PackHook = std::function<std::shared_ptr<PackedTensor>(const Tensor&)>;
void push_pack_hook(PackHook hook);
void pop_pack_hook();

// A tensor saved for backward, with the version it had then (Note [Version counter sharing]).
struct SavedTensor {
  static constexpr int64_t kUnchecked = -1;  // the gradient does not read it
  Tensor tensor;
  int64_t saved_version = 0;
  std::shared_ptr<PackedTensor> packed;  // set (and tensor null) when a pack hook took it
  // With packed, a saved input's gradient edge: under create_graph the unpacked tensor takes the
  // original's place in the graph (its grad_fn, or its leaf's accumulator), as PyTorch's.
  Edge edge;
  Tensor unpack(const char* op) const;
  // `t` saved now at `version`: through the thread's innermost pack hook when one is set (run
  // without grad mode). Packed tensors are not version-checked, as PyTorch's.
  static SavedTensor save(Tensor t, int64_t version, bool output = false);
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  virtual ~Node() = default;
  // Gradients of this node's forward inputs, given gradients of its forward outputs (entries
  // may be null when no gradient reached that output).
  virtual TensorList apply(TensorList&& out_grads) = 0;
  virtual std::string name() const = 0;
  virtual void release_saved() {}

  std::vector<Edge> next_edges;
  std::vector<TensorMeta> output_metas;
  // Non-leaf tensors that asked for retain_grad(), per forward output.
  std::vector<std::weak_ptr<TensorImpl>> retained;
  // Gradient hooks of non-leaf outputs: (output_nr, id, hook), run in registration order.
  std::vector<std::tuple<int, int64_t, GradHook>> hooks;
  uint64_t sequence_nr = 0;
};

// Backward of one primitive call.
class PrimNode final : public Node {
 public:
  PrimNode(const Primitive& prim, Attrs attrs);
  TensorList apply(TensorList&& out_grads) override;
  std::string name() const override;
  void release_saved() override;

  const Primitive& prim;
  Attrs attrs;
  std::vector<SavedTensor> saved_inputs, saved_outputs;
  std::vector<TensorMeta> input_metas;
  bool released = false;
};

// Accumulates into a leaf's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  TensorList apply(TensorList&& out_grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  Tensor leaf;
};

uint64_t next_sequence_nr();
// Registers `hook` on the gradient flowing into `t` (leaf or not); returns an id for removal.
int64_t register_grad_hook(const Tensor& t, GradHook hook);
void remove_grad_hook(const Tensor& t, int64_t id);
// The edge that carries a gradient into `t` (its grad_fn, or its leaf accumulator).
Edge gradient_edge(const Tensor& t);
// Whether the innermost backward running on this thread accumulates into .grad (backward()
// without `inputs`), where a reentrant checkpoint may run its own backward; false inside
// autograd.grad (PyTorch's torch.autograd._is_checkpoint_valid).
bool checkpoint_valid();

// Runs backward from `outputs` seeded with `grad_outputs` (null: ones for a scalar output).
// With `inputs` empty, accumulates into the leaves' .grad (Tensor.backward); otherwise returns
// the gradients of `inputs` without touching .grad (flow.autograd.grad).
TensorList run_backward(const TensorList& outputs, const TensorList& grad_outputs,
                        bool retain_graph, bool create_graph, const TensorList& inputs = {},
                        bool allow_unused = false);

}  // namespace oneflow
