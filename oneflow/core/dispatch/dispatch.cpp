#include "oneflow/core/dispatch/dispatch.h"

#include <algorithm>
#include <unordered_map>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/global_dispatch.h"
#include "oneflow/core/dispatch/host_fallback.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/eager/profiler.h"
#include "oneflow/core/functional/complex.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/graph/graph.h"
#include "oneflow/core/ops/primitives.h"
#include "oneflow/core/ops/unread_saved.h"

namespace oneflow {

namespace {

thread_local bool t_lazy_mode = false;

DispatchMode select_mode(const TensorList& inputs, const Attrs& attrs, const Tensor& inplace_out) {
  if (t_lazy_mode) return DispatchMode::kLazy;
  if (inplace_out && inplace_out->kind() == TensorKind::kGlobal) return DispatchMode::kEagerGlobal;
  for (const Tensor& t : inputs)
    if (t->kind() == TensorKind::kGlobal) return DispatchMode::kEagerGlobal;
  if (attrs.has("placement") && !attrs.get<std::string>("placement").empty())
    return DispatchMode::kEagerGlobal;
  return DispatchMode::kEagerLocal;
}

[[noreturn]] void throw_complex_input(const Primitive& prim, DType dt) {
  throw_error<TypeError>(prim.name(), "does not support ", dtype_name(dt), " inputs yet");
}

bool meta_with_cpu_scalar(const Tensor& a, const Tensor& b) {
  auto scalar = [](const Tensor& t) { return t->device().type == DeviceType::kCPU && !t->ndim(); };
  return (a->device().type == DeviceType::kMeta && scalar(b)) ||
         (b->device().type == DeviceType::kMeta && scalar(a));
}

// Returns true when the inputs mix meta tensors with 0-dim CPU tensors (which PyTorch takes as
// scalars on any device): the op then runs with those moved to the meta device.
bool check_inputs(const Primitive& prim, const TensorList& inputs) {
  bool meta_scalars = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) throw_error<TypeError>(prim.name(), "input ", i, " is None");
    if (is_complex(inputs[i]->dtype())) [[unlikely]] {
      const PrimTraits traits = prim.traits();
      if (!traits.complex && !traits.is_view) throw_complex_input(prim, inputs[i]->dtype());
    }
    if (prim.traits().cross_device) continue;
    if (inputs[i]->device() != inputs[0]->device()) {
      if (!meta_with_cpu_scalar(inputs[i], inputs[0]))
        throw_error<RuntimeError>(prim.name(),
                                  "expected all tensors to be on the same device, but "
                                  "found at least two devices, ",
                                  inputs[0]->device().str(), " and ", inputs[i]->device().str());
      meta_scalars = true;
    }
  }
  return meta_scalars;
}

// Where a CPU kernel runs in asynchronous mode: queued when every operand is CPU memory that only
// oneflow touches; on the stream thread, waited for, when some operand is CPU memory NumPy or
// DLPack may touch; here when an operand is on another device (copies: they use that device's
// API from the calling thread).
enum class CpuPlacement { kQueue, kStreamAndWait, kHere };
CpuPlacement cpu_placement(const TensorList& inputs, const TensorList& outputs) {
  CpuPlacement placement = CpuPlacement::kQueue;
  for (const TensorList* list : {&inputs, &outputs})
    for (const Tensor& t : *list) {
      if (t->device().type != DeviceType::kCPU) return CpuPlacement::kHere;
      if (t->storage()->shared_outside()) placement = CpuPlacement::kStreamAndWait;
    }
  return placement;
}

// Whether every operand lives on `device` in memory only oneflow touches: a CUDA op that may go
// to that device's stream in the engine.
bool on_one_device(const Device& device, const TensorList& inputs, const TensorList& outputs) {
  for (const TensorList* list : {&inputs, &outputs})
    for (const Tensor& t : *list)
      if (t->device() != device || t->storage()->shared_outside()) return false;
  return true;
}

// CPU kernels go to the CPU stream of the eager engine unless execution is synchronous, this
// is the stream thread itself, or the op is small and quick and the stream idle (see
// cpu_placement and eager::run_here_if_idle; a kernel run here after queued ops on its
// operands is ordered by data(), which waits for them). CUDA kernels are launched here, onto
// the device's CUDA stream, or with ONEFLOW_ASYNC_CUDA=1 queued on the device's stream in the
// engine when all their operands live on that device (copies between devices run here).
void run_kernel(const Primitive& prim, Device device, const TensorList& inputs,
                const TensorList& outputs, const Attrs& attrs, bool fresh_outputs) {
  if (device.type == DeviceType::kMeta) return;  // the outputs' metas are all there is
  auto cpu = [&] { prim.compute_cpu(inputs, outputs, attrs); };
  if (device.type == DeviceType::kCPU) {
    if (!eager::async_enabled()) {
      profiler::timed(prim.name(), inputs, false, cpu);
      return;
    }
    switch (cpu_placement(inputs, outputs)) {
      case CpuPlacement::kQueue:
        if (!eager::run_here_if_idle(prim, inputs, outputs, attrs))
          eager::enqueue(prim, inputs, outputs, attrs, fresh_outputs);
        break;
      case CpuPlacement::kStreamAndWait:
        if (!eager::run_here_if_idle(prim, inputs, outputs, attrs))
          eager::run_and_wait(prim, inputs, outputs, attrs);
        break;
      case CpuPlacement::kHere:
        profiler::timed(prim.name(), inputs, false, cpu);
        break;
    }
  } else if (eager::queue_cuda_ops() && eager::async_enabled() &&
             on_one_device(device, inputs, outputs)) {
    eager::enqueue_cuda(device.index, prim, inputs, outputs, attrs);
  } else {
    profiler::timed(prim.name(), inputs, true, [&] { prim.compute_cuda(inputs, outputs, attrs); });
  }
}

// A view's history as a view of its base's current history (see Note [In-place on views]).
void adopt_history(const Tensor& view, const Tensor& fresh) {
  AutogradMeta& am = view->autograd();
  am.requires_grad = fresh->requires_grad();
  am.grad_fn = fresh->autograd().grad_fn;
  am.output_nr = fresh->autograd().output_nr;
  view->set_history_version(view->version());
}

// `view` as a differentiable view of `base`'s current values (the view's history after an in-place
// change of the base). A view in another dtype (view_as_real, view_as_complex) goes through the
// real view of the complex one.
Tensor view_of(const Tensor& base, const Tensor& view) {
  if (view->dtype() == base->dtype())
    return functional::as_strided(base, view->shape(), view->strides(), view->offset());
  if (is_complex(base->dtype()))  // a real view of a complex base
    return functional::as_strided(functional::view_as_real(base), view->shape(), view->strides(),
                                  view->offset());
  Shape shape = view->shape();
  Strides strides = view->strides();
  for (int64_t& s : strides) s *= 2;
  shape.push_back(2);
  strides.push_back(1);
  return functional::view_as_complex(
      functional::as_strided(base, shape, strides, view->offset() * 2));
}

// Regenerates a view's grad_fn when its base was modified in place since the view's was made.
void refresh_view_history(const Tensor& view) {
  const Tensor& base = view->view_base();
  if (!base || view->version() == view->history_version() || !base->requires_grad() ||
      !base->is_contiguous())
    return;
  adopt_history(view, view_of(base, view));
}

// Inference tensors cannot be saved for backward (Note [Inference tensors]); only the inputs the
// gradient reads count as saved.
void check_no_inference_saved(const Primitive& prim, const TensorList& inputs) {
  std::vector<bool> needs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) needs[i] = inputs[i]->requires_grad();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]->is_inference() && prim.reads_saved_input(i, needs))
      throw_error<RuntimeError>(prim.name(),
                                "Inference tensors cannot be saved for backward. Please do not "
                                "use Tensors created in inference mode in computation tracked by "
                                "autograd. To work around this, you can make a clone to get a "
                                "normal tensor and use it in autograd, or use `oneflow.no_grad()` "
                                "instead of `oneflow.inference_mode()`.");
}

// `input_versions`: the inputs' versions before the kernel ran, so that an in-place op that
// overwrote a saved input is caught at backward time. `original`: for an in-place op, a copy of
// the output's old values, saved in its place.
void record_autograd(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                     const Attrs& attrs, const std::vector<int64_t>& input_versions,
                     const Tensor& original) {
  const PrimTraits traits = prim.traits();
  for (const Tensor& t : inputs)
    if (t->is_view()) refresh_view_history(t);
  auto node = std::make_shared<PrimNode>(prim, attrs);
  node->sequence_nr = next_sequence_nr();
  node->next_edges.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    node->next_edges.push_back(gradient_edge(t));
    node->input_metas.push_back(t->meta());
  }
  if (traits.saves_inputs) {
    std::vector<bool> needs(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) needs[i] = inputs[i]->requires_grad();
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (original && inputs[i] == outputs[0])
        node->saved_inputs.push_back(SavedTensor::save(original, original->version()));
      else if (prim.reads_saved_input(i, needs) && !saved_unread(prim, attrs, false, i))
        node->saved_inputs.push_back(SavedTensor::save(inputs[i], input_versions[i]));
      else  // kept for the input's position; its later in-place changes do not matter
        node->saved_inputs.push_back(SavedTensor::save(inputs[i], SavedTensor::kUnchecked));
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    node->output_metas.push_back(out->meta());
    node->retained.emplace_back();
    // Saving the output itself would make it own its own grad_fn; save a detached alias.
    if (traits.saves_outputs && saved_unread(prim, attrs, true, i)) {
      SavedTensor none;  // keeps the positions of the outputs after it
      none.saved_version = SavedTensor::kUnchecked;
      node->saved_outputs.push_back(std::move(none));
    } else if (traits.saves_outputs) {
      node->saved_outputs.push_back(
          SavedTensor::save(alias_detached(out), out->version(), /*output=*/true));
    }
    if (!is_differentiable(out->dtype())) continue;
    AutogradMeta& am = out->autograd();
    // An in-place op gives a tensor that retains its gradient a new node: the gradient retained is
    // the new version's, as PyTorch.
    if (am.retains_grad && am.grad_fn) {
      if (static_cast<size_t>(am.output_nr) < am.grad_fn->retained.size())
        am.grad_fn->retained[am.output_nr].reset();
      node->retained[i] = out;
    }
    am.requires_grad = true;
    am.grad_fn = node;
    am.output_nr = static_cast<int>(i);
    if (out->is_view()) out->set_history_version(out->version());
  }
}

// Note [Meta cache]: infer() is a function of the inputs' metas and the attributes only, so the
// last result per primitive (primitives are singletons) and thread is reused when both repeat, as
// they do in every step of a training loop.
struct MetaCacheEntry {
  bool valid = false;
  std::vector<TensorMeta> inputs;
  Attrs attrs;
  std::vector<TensorMeta> outputs;
};
thread_local std::unordered_map<const Primitive*, MetaCacheEntry> t_meta_cache;

bool same_meta(const TensorMeta& m, const TensorImpl& t) {
  return m.dtype == t.dtype() && m.device == t.device() && m.offset == t.offset() &&
         m.shape == t.shape() && m.strides == t.strides();
}

const std::vector<TensorMeta>& infer_cached(const Primitive& prim, const TensorList& inputs,
                                            const Attrs& attrs) {
  MetaCacheEntry& e = t_meta_cache[&prim];
  bool hit = e.valid && e.inputs.size() == inputs.size();
  for (size_t i = 0; hit && i < inputs.size(); ++i) hit = same_meta(e.inputs[i], *inputs[i]);
  if (hit && e.attrs == attrs) return e.outputs;
  e.valid = false;
  e.outputs = prim.infer(inputs, attrs);  // may throw: the entry stays invalid
  e.inputs.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) e.inputs[i] = inputs[i]->meta();
  e.attrs = attrs;
  e.valid = true;
  return e.outputs;
}

// Note [In-place on views]: an in-place op on a view of a tensor that requires grad rewrites
// the history of the view's base (PyTorch's CopySlices). The op runs out of place on a copy of
// the view's values; strided_assign_ writes the result into the base's region, in place on the
// base, so the base's grad_fn becomes that node (gradient: the region's part of the incoming
// gradient goes to the result, the rest to the base's old values); the view's grad_fn is then
// regenerated as a view of the new base. Other views of the base taken before the write keep
// their old history.
TensorList inplace_on_view(const Primitive& prim, const TensorList& inputs, const Attrs& attrs,
                           const Tensor& view) {
  const Tensor& base = view->view_base();
  if (!base || !base->is_contiguous())
    throw_error<NotImplementedError>(prim.name(),
                                     "in-place operations on a view of a non-contiguous tensor "
                                     "that requires grad are not supported yet");
  if (base->requires_grad() && base->is_leaf())
    throw_error<RuntimeError>(prim.name(),
                              "a view of a leaf Variable that requires grad is being used in an "
                              "in-place operation.");
  Tensor old = functional::clone(view);
  TensorList ins = inputs;
  for (Tensor& t : ins)
    if (t == view) t = old;
  Tensor result = dispatch(prim, ins, attrs)[0];
  if (result->dtype() != view->dtype())
    throw_error<RuntimeError>(prim.name(), "result type ", dtype_name(result->dtype()),
                              " can't be cast to the desired output type ",
                              dtype_name(view->dtype()));
  if (result->shape() != view->shape())
    throw_error<RuntimeError>(prim.name(), "output with shape ", shape_str(view->shape()),
                              " doesn't match the broadcast shape ", shape_str(result->shape()));
  Shape size = view->shape();
  Strides stride = view->strides();
  int64_t offset = view->offset();
  if (view->dtype() != base->dtype()) {
    if (is_complex(base->dtype()))
      throw_error<NotImplementedError>(prim.name(),
                                       "in-place operations on a real view of a complex tensor "
                                       "that requires grad are not supported yet");
    // a complex view of a real base: write the result's (real, imaginary) pairs
    result = functional::contiguous(functional::view_as_real(result));
    for (int64_t& s : stride) s *= 2;
    size.push_back(2);
    stride.push_back(1);
    offset *= 2;
  }
  Attrs region{{"size", std::vector<int64_t>(size)},
               {"stride", std::vector<int64_t>(stride)},
               {"offset", offset},
               {"rel_offset", offset - base->offset()}};
  dispatch(prim::strided_assign(), {base, result}, region, base);
  adopt_history(view, view_of(base, view));
  return {view};
}

// Whether t's elements fill one range of its storage exactly once, in some order of its dims
// (PyTorch's non-overlapping and dense).
bool dense(const TensorImpl& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims of size > 1
  for (size_t d = 0; d < t.shape().size(); ++d)
    if (t.shape()[d] != 1) dims.emplace_back(t.strides()[d], t.shape()[d]);
  std::sort(dims.begin(), dims.end());
  int64_t next = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != next) return false;
    next *= size;
  }
  return true;
}

// Note [In-place overlap]: as PyTorch, an in-place write is refused when two of the written
// elements share memory (an expanded destination: the result would depend on the order of the
// writes), except a fill with one value; and when an input overlaps the destination without being
// it (a[1:].add_(a[:-1]) would read elements already written). Layouts where overlap is costly to
// decide (strided, non-dense views) pass, as there.
void check_inplace_overlap(const Primitive& prim, const TensorList& inputs, const TensorImpl& out) {
  const bool assign = &prim == &prim::assign();
  if (out.numel() == 0 || !(prim.traits().elementwise || assign || &prim == &prim::index_put()))
    return;
  const bool fill = assign && inputs.size() == 2 && inputs[1]->numel() == 1;
  for (size_t d = 0; d < out.shape().size() && !fill; ++d)
    if (out.shape()[d] > 1 && out.strides()[d] == 0)
      throw_error<RuntimeError>(prim.name(),
                                "unsupported operation: more than one element of the written-to "
                                "tensor refers to a single memory location. Please clone() the "
                                "tensor before performing the operation.");
  bool shared = false;  // the common case: no input in the destination's storage
  for (const Tensor& t : inputs)
    shared = shared || (t.get() != &out && t->storage() == out.storage());
  if (!shared || !dense(out)) return;
  const int64_t begin = out.offset() * static_cast<int64_t>(itemsize(out.dtype()));
  const int64_t end = begin + out.numel() * static_cast<int64_t>(itemsize(out.dtype()));
  for (const Tensor& t : inputs) {
    if (t.get() == &out || t->storage() != out.storage() || t->numel() == 0 || !dense(*t)) continue;
    const int64_t b = t->offset() * static_cast<int64_t>(itemsize(t->dtype()));
    const int64_t e = b + t->numel() * static_cast<int64_t>(itemsize(t->dtype()));
    if (b == begin && e == end && t->strides() == out.strides()) continue;  // the same elements
    if (b < end && begin < e)
      throw_error<RuntimeError>(prim.name(),
                                "unsupported operation: some elements of the input tensor and "
                                "the written-to tensor refer to a single memory location. Please "
                                "clone() the tensor before performing the operation.");
  }
}

TensorList eager_local(const Primitive& prim, const TensorList& inputs, const Attrs& attrs,
                       const Tensor& inplace_out);

// Runs `prim`, which has no CUDA kernel yet, for GPU inputs on host copies of them (Note [Host
// fallback]): the copies, the host op and the copies back are recorded by autograd as any ops.
TensorList run_on_host(const Primitive& prim, const TensorList& inputs, const Attrs& attrs,
                       const Tensor& inplace_out) {
  if (!host_fallback_enabled())
    throw_error<NotImplementedError>(prim.name(),
                                     "the CUDA kernel is not implemented yet (with "
                                     "ONEFLOW_CUDA_HOST_FALLBACK=1 it runs on the host)");
  note_host_fallback(prim);
  const Device gpu = inputs[0]->device();
  TensorList host;
  host.reserve(inputs.size());
  for (const Tensor& t : inputs) host.push_back(functional::to(t, std::nullopt, Device{}));
  TensorList outputs = eager_local(prim, host, attrs, nullptr);
  if (outputs.empty())  // it acts on its inputs, which are host copies: the GPU's stay as they were
    throw_error<NotImplementedError>(prim.name(),
                                     "the CUDA kernel is not implemented yet, and the op writes "
                                     "into its inputs, so it cannot run on host copies");
  for (Tensor& t : outputs) t = functional::to(t, std::nullopt, gpu);
  if (!inplace_out) return outputs;
  if (!prim.traits().may_run_in_place || outputs.size() != 1)
    throw_error<RuntimeError>(prim.name(), "cannot run in place");
  if (outputs[0]->shape() != inplace_out->shape())
    throw_error<RuntimeError>(prim.name(), "output with shape ", shape_str(inplace_out->shape()),
                              " doesn't match the broadcast shape ",
                              shape_str(outputs[0]->shape()));
  if (outputs[0]->dtype() != inplace_out->dtype())
    throw_error<RuntimeError>(prim.name(), "result type ", dtype_name(outputs[0]->dtype()),
                              " can't be cast to the desired output type ",
                              dtype_name(inplace_out->dtype()));
  return {functional::copy_(inplace_out, outputs[0])};
}

TensorList eager_local(const Primitive& prim, const TensorList& inputs, const Attrs& attrs,
                       const Tensor& inplace_out) {
  if (check_inputs(prim, inputs)) [[unlikely]] {
    if (inplace_out && inplace_out->device().type != DeviceType::kMeta)
      throw_error<RuntimeError>(prim.name(),
                                "expected all tensors to be on the same device, "
                                "but found at least two devices, meta and ",
                                inplace_out->device().str());
    TensorList on_meta = inputs;
    for (Tensor& t : on_meta)  // the CPU scalars; any other CPU tensor is refused again
      if (t->device().type == DeviceType::kCPU && !t->ndim())
        t = functional::to(t, std::nullopt, Device{DeviceType::kMeta, 0});
    return eager_local(prim, on_meta, attrs, inplace_out);
  }
  if (!inputs.empty() && inputs[0]->device().type == DeviceType::kCUDA && cuda_kernel_pending(prim))
      [[unlikely]]
    return run_on_host(prim, inputs, attrs, inplace_out);
  const PrimTraits traits = prim.traits();
  // A reference into the cache: read before anything below can dispatch again.
  const std::vector<TensorMeta>& metas = infer_cached(prim, inputs, attrs);
  for (const TensorMeta& m : metas)  // creation ops asked for a complex dtype
    if (is_complex(m.dtype)) [[unlikely]] {
      const PrimTraits t = prim.traits();
      if (!t.complex && !t.is_view)
        throw_error<TypeError>(prim.name(), "does not support ", dtype_name(m.dtype),
                               " outputs yet");
    }
  TensorList outputs;
  outputs.reserve(metas.size());
  if (traits.is_view) {
    for (const TensorMeta& m : metas)
      outputs.push_back(make_view(inputs[0], m.shape, m.strides, m.offset, m.dtype));
  } else if (inplace_out) {
    if (inplace_out->is_inference() && !inference_mode_enabled())
      throw_error<RuntimeError>(prim.name(),
                                "Inplace update to inference tensor outside InferenceMode is not "
                                "allowed. You can make a clone to get a normal tensor before "
                                "doing inplace update.");
    if (!traits.may_run_in_place || metas.size() != 1)
      throw_error<RuntimeError>(prim.name(), "cannot run in place");
    check_inplace_overlap(prim, inputs, *inplace_out);
    if (metas[0].shape != inplace_out->shape())
      throw_error<RuntimeError>(prim.name(), "output with shape ", shape_str(inplace_out->shape()),
                                " doesn't match the broadcast shape ", shape_str(metas[0].shape));
    if (metas[0].dtype != inplace_out->dtype())
      throw_error<RuntimeError>(prim.name(), "result type ", dtype_name(metas[0].dtype),
                                " can't be cast to the desired output type ",
                                dtype_name(inplace_out->dtype()));
    outputs.push_back(inplace_out);
  } else {
    for (const TensorMeta& m : metas) {
      Strides layout;
      if (traits.elementwise && m.device.type != DeviceType::kCUDA)  // cpu, meta
        layout = elementwise_strides(inputs, m.shape);
      outputs.push_back(layout.empty() ? empty_tensor(m.shape, m.dtype, m.device)
                                       : empty_strided_tensor(m.shape, layout, m.dtype, m.device));
    }
  }

  // Inference mode records nothing, whatever the grad mode (Note [Inference tensors]).
  const bool recording = grad_mode_enabled() && !inference_mode_enabled();
  bool needs_grad = false;
  if (traits.differentiable && recording)
    for (const Tensor& t : inputs) needs_grad = needs_grad || t->requires_grad();
  if (inplace_out && recording && inplace_out->requires_grad() && inplace_out->is_leaf())
    throw_error<RuntimeError>(prim.name(),
                              "a leaf Variable that requires grad is being used in "
                              "an in-place operation.");
  if (inplace_out && needs_grad && inplace_out->is_view())
    return inplace_on_view(prim, inputs, attrs, inplace_out);
  if (needs_grad && traits.saves_inputs) check_no_inference_saved(prim, inputs);

  // An in-place op overwrites the input its gradient may read (x.mul_(y): dy needs x): the
  // gradient keeps a copy of the old values, taken before the write (PyTorch's original_self).
  // The copy keeps the old values' history, so that second-order gradients reach through it
  // (`(x * 2).mul_(x)` under create_graph).
  Tensor original;
  if (needs_grad && inplace_out && traits.saves_inputs) original = functional::clone(inplace_out);
  std::vector<int64_t> input_versions;
  if (needs_grad)
    for (const Tensor& t : inputs) input_versions.push_back(t->version());
  if (!traits.is_view) {
    Device device = metas.empty() ? inputs[0]->device() : metas[0].device;
    if (traits.cross_device && !inputs.empty() && inputs[0]->device().type == DeviceType::kCUDA)
      device = inputs[0]->device();  // copies out of a GPU run on the GPU's backend
    if (traits.cross_device && device.type != DeviceType::kMeta)
      for (const Tensor& t : inputs)
        if (t->device().type == DeviceType::kMeta)
          throw_error<NotImplementedError>(prim.name(),
                                           "Cannot copy out of meta tensor; please use "
                                           "'to_empty' instead");
    run_kernel(prim, device, inputs, outputs, attrs, /*fresh_outputs=*/!inplace_out);
    if (graph::tracing())
      graph::record_kernel(prim, device, inputs, outputs, attrs, inplace_out != nullptr);
  } else if (graph::tracing()) {
    for (const Tensor& out : outputs) graph::record_view(inputs[0], out);
  }
  if (inplace_out) inplace_out->bump_version();
  if (needs_grad) record_autograd(prim, inputs, outputs, attrs, input_versions, original);
  return outputs;
}

}  // namespace

void detail::record_autograd(const Primitive& prim, const TensorList& inputs,
                             const TensorList& outputs, const Attrs& attrs,
                             const std::vector<int64_t>& input_versions, const Tensor& original) {
  oneflow::record_autograd(prim, inputs, outputs, attrs, input_versions, original);
}

void graph::run_kernel(const Primitive& prim, Device device, const TensorList& inputs,
                       const TensorList& outputs, const Attrs& attrs, bool fresh_outputs) {
  oneflow::run_kernel(prim, device, inputs, outputs, attrs, fresh_outputs);
}

bool lazy_mode_enabled() { return t_lazy_mode; }
void set_lazy_mode(bool enabled) { t_lazy_mode = enabled; }
LazyModeGuard::LazyModeGuard(bool enabled) : prev_(t_lazy_mode) { t_lazy_mode = enabled; }
LazyModeGuard::~LazyModeGuard() { t_lazy_mode = prev_; }

TensorList dispatch(const Primitive& prim, const TensorList& inputs, const Attrs& attrs,
                    const Tensor& inplace_out) {
  switch (select_mode(inputs, attrs, inplace_out)) {
    case DispatchMode::kLazy:
      throw_error<NotImplementedError>(prim.name(),
                                       "lazy mode (tracing inside nn.Graph) is not "
                                       "implemented yet");
    case DispatchMode::kEagerGlobal:
      return detail::eager_global(prim, inputs, attrs, inplace_out);
    case DispatchMode::kEagerLocal:
      return eager_local(prim, inputs, attrs, inplace_out);
  }
  throw_error<RuntimeError>(prim.name(), "unknown dispatch mode");
}

}  // namespace oneflow
