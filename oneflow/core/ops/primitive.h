// The Primitive interface: the unit that has kernels (DESIGN.md section 3).
//
// One class per primitive declares its meta inference, traits and gradient here in ops/; its
// kernels are the compute_cpu / compute_cuda methods, defined in kernels/cpu/ and kernels/cuda/
// (kernels/no_cuda/ when CUDA is off). Gradients are written with functional ops, so they are
// differentiable themselves and will trace into graphs unchanged.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "oneflow/core/common/attrs.h"
#include "oneflow/core/framework/tensor.h"

namespace oneflow {

struct PrimTraits {
  bool differentiable = true;
  bool is_view = false;           // outputs alias input 0's storage; no kernel runs
  bool cross_device = false;      // inputs and outputs may live on different devices
  bool saves_inputs = false;      // grad() reads ctx.inputs
  bool saves_outputs = false;     // grad() reads ctx.outputs
  bool may_run_in_place = false;  // the output may be input 0 itself (x.add_(y))
  // Elementwise: a fresh CPU output takes the dim order of the first input of its shape (a
  // transposed input gives a transposed result, as in PyTorch); see elementwise_strides.
  bool elementwise = false;
  // Its kernels take complex operands. Other primitives given one raise a TypeError naming them
  // (views always take them: no kernel runs).
  bool complex = false;
};

// What a gradient rule sees: the attributes, what the forward saved, and which inputs need a
// gradient. Metas of all inputs are always available.
struct GradContext {
  const Attrs& attrs;
  const TensorList& inputs;   // empty unless traits().saves_inputs
  const TensorList& outputs;  // empty unless traits().saves_outputs
  const std::vector<TensorMeta>& input_metas;
  const std::vector<bool>& needs_input_grad;
};

class Primitive {
 public:
  virtual ~Primitive() = default;
  virtual const char* name() const = 0;
  virtual PrimTraits traits() const { return {}; }
  // Output metas. For views, strides and offset address input 0's storage; otherwise outputs
  // are allocated contiguous (elementwise ones on the CPU: in their inputs' dim order, see
  // PrimTraits::elementwise) and only shape, dtype and device matter. A function of the inputs'
  // metas and the attributes only (never of values): the dispatcher caches the result by them,
  // keyed by the primitive's address (every primitive is a singleton).
  virtual std::vector<TensorMeta> infer(const TensorList& inputs, const Attrs& attrs) const = 0;
  // Gradients of the inputs given the gradients of the outputs (null where none flows).
  virtual TensorList grad(const GradContext& ctx, const TensorList& out_grads) const;
  // With traits().saves_inputs: whether grad() reads saved input i when `needs_input_grad` says
  // which inputs get a gradient. An input it does not read may be modified in place before
  // backward (x * 2 keeps no claim on x's values).
  virtual bool reads_saved_input(size_t i, const std::vector<bool>& needs_input_grad) const {
    return true;
  }

  virtual void compute_cpu(const TensorList& inputs, const TensorList& outputs,
                           const Attrs& attrs) const = 0;
  virtual void compute_cuda(const TensorList& inputs, const TensorList& outputs,
                            const Attrs& attrs) const = 0;

  // Bytes the CPU kernel reads and writes: the eager engine's measure of its running time
  // (whether a small op runs at the call, whether a waiter spins). Every element of every operand
  // by default; a kernel that reads only part of an input (trace: the diagonal; gather: the
  // selected rows) says so, or a quick op on a large input would always queue.
  virtual uint64_t cpu_work(const TensorList& inputs, const TensorList& outputs) const;

  // The eager engine's running estimate of the CPU kernel's time on small operands when run at
  // the call, in ns (0: not measured yet); it decides whether a small op runs there (Note [Small
  // ops run here] in eager/engine.cpp).
  mutable std::atomic<uint32_t> small_kernel_ns{0};
  // Calls queued since the estimate was last measured (the engine probes again after 32).
  mutable std::atomic<uint32_t> small_kernel_skips{0};
};

}  // namespace oneflow
