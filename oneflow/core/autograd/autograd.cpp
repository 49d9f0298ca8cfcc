#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/common/backend_flags.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/functional/autocast.h"

#include <algorithm>
#include <atomic>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "oneflow/core/functional/functional.h"

namespace oneflow {

namespace F = functional;

namespace {
thread_local bool t_grad_mode = true;
std::atomic<uint64_t> g_sequence_nr{0};
}  // namespace

bool grad_mode_enabled() { return t_grad_mode; }
void set_grad_mode(bool enabled) { t_grad_mode = enabled; }
uint64_t next_sequence_nr() { return g_sequence_nr.fetch_add(1, std::memory_order_relaxed); }

namespace {
thread_local std::vector<PackHook> t_pack_hooks;
}  // namespace

void push_pack_hook(PackHook hook) { t_pack_hooks.push_back(std::move(hook)); }
void pop_pack_hook() {
  if (!t_pack_hooks.empty()) t_pack_hooks.pop_back();
}

SavedTensor SavedTensor::save(Tensor t, int64_t version, bool output) {
  SavedTensor s;
  s.saved_version = version;
  if (t_pack_hooks.empty()) {
    s.tensor = std::move(t);
    return s;
  }
  // the hook runs with no hook set and without grad mode (Note [Saved tensor hooks]); both
  // restored however it ends
  std::vector<PackHook> hooks;
  hooks.swap(t_pack_hooks);
  struct Restore {
    std::vector<PackHook>& from;
    ~Restore() { t_pack_hooks.swap(from); }
  } restore{hooks};
  GradModeGuard no_grad(false);
  // (a saved output's edge would be its own node: outputs are re-attached in PrimNode::apply)
  if (!output && t->requires_grad()) s.edge = gradient_edge(t);
  s.packed = hooks.back()(t);
  if (!s.packed)
    throw_error<RuntimeError>("saved_tensors_hooks", "the pack hook returned nothing to keep");
  return s;
}

Tensor SavedTensor::unpack(const char* op) const {
  if (packed) {
    Tensor t = packed->unpack();
    if (edge.node && grad_mode_enabled()) {
      t = alias_detached(t);
      AutogradMeta& am = t->autograd();
      am.requires_grad = true;
      am.grad_fn = edge.node;
      am.output_nr = edge.input_nr;
    }
    return t;
  }
  if (saved_version != kUnchecked && tensor->version() != saved_version)
    throw_error<RuntimeError>(
        op,
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [",
        dtype_name(tensor->dtype()), " ", shape_str(tensor->shape()), "] is at version ",
        tensor->version(), "; expected version ", saved_version, " instead.");
  return tensor;
}

PrimNode::PrimNode(const Primitive& p, Attrs a) : prim(p), attrs(std::move(a)) {}

std::string PrimNode::name() const { return std::string(prim.name()) + "Backward"; }

void PrimNode::release_saved() {
  // Nothing saved, nothing freed: a second backward through this node is fine, as PyTorch.
  if (saved_inputs.empty() && saved_outputs.empty()) return;
  saved_inputs.clear();
  saved_outputs.clear();
  released = true;
}

namespace {
// While autograd.grad runs: the nodes a requested input is reached through (at or below them).
// A node computes gradients only for the edges into them (PyTorch's pruning): the others would
// be dropped. Null during backward().
thread_local const std::unordered_set<Node*>* t_reached = nullptr;
}  // namespace

TensorList PrimNode::apply(TensorList&& out_grads) {
  if (released)
    throw_error<RuntimeError>(
        prim.name(),
        "trying to backward through the graph a second time (or directly access "
        "saved tensors after they have already been freed). Saved intermediate "
        "values of the graph are freed when you call .backward() or "
        "autograd.grad(). Specify retain_graph=True if you need to backward "
        "through the graph a second time.");
  Tensor global_grad;  // outputs of a global op get global zeros
  for (const Tensor& g : out_grads)
    if (g && g->global()) global_grad = g;
  for (size_t i = 0; i < out_grads.size(); ++i)
    if (!out_grads[i]) {
      const TensorMeta& m = output_metas[i];
      Tensor zeros = F::zeros(m.shape, CreationOptions{m.dtype, m.device, ""});
      out_grads[i] = global_grad ? global::broadcast_like(global_grad, zeros) : zeros;
    }
  TensorList inputs, outputs;
  for (const auto& s : saved_inputs) inputs.push_back(s.unpack(prim.name()));
  // Under create_graph a saved output takes part in the new graph as this node's output again,
  // so that second-order gradients reach the inputs through it (it is saved detached to avoid
  // a reference cycle).
  const bool reattach = grad_mode_enabled();
  for (size_t i = 0; i < saved_outputs.size(); ++i) {
    Tensor t = saved_outputs[i].unpack(prim.name());
    if (t && reattach && is_differentiable(t->dtype())) {
      t = alias_detached(t);
      AutogradMeta& am = t->autograd();
      am.requires_grad = true;
      am.grad_fn = shared_from_this();
      am.output_nr = static_cast<int>(i);
    }
    outputs.push_back(std::move(t));
  }
  std::vector<bool> needs(next_edges.size());
  for (size_t i = 0; i < next_edges.size(); ++i)
    needs[i] = next_edges[i].node != nullptr &&
               (t_reached == nullptr || t_reached->count(next_edges[i].node.get()) > 0);
  GradContext ctx{attrs, inputs, outputs, input_metas, needs};
  TensorList grads = prim.grad(ctx, out_grads);
  grads.resize(next_edges.size());
  return grads;
}

AccumulateGrad::AccumulateGrad(Tensor l) : leaf(std::move(l)) {
  output_metas.push_back(leaf->meta());
}

namespace {
// A leaf's gradient hooks, in registration order; each may replace the gradient.
// A hook's replacement gradient must keep the gradient's shape and dtype, as PyTorch checks.
Tensor checked_hook_result(const Tensor& g, Tensor r) {
  if ((r->global() == nullptr) != (g->global() == nullptr))
    throw_error<RuntimeError>("register_hook", "hook has changed a ",
                              g->global() ? "global" : "local", " gradient into a ",
                              r->global() ? "global" : "local", " one");
  if (r->shape() != g->shape())
    throw_error<RuntimeError>("register_hook", "hook has changed the size of value (was ",
                              shape_str(g->shape()), ", got ", shape_str(r->shape()), ")");
  if (r->dtype() != g->dtype())
    throw_error<RuntimeError>("register_hook", "hook has changed the type of value (was ",
                              dtype_name(g->dtype()), ", got ", dtype_name(r->dtype()), ")");
  return r;
}

// Whether no other tensor uses t's memory. A global tensor's storage is its shard's too: the
// shard must have no other holder than t's GlobalMeta.
bool sole_owner_of_memory(const TensorImpl& t) {
  if (!t.global()) return t.storage().use_count() == 1;
  const Tensor& local = t.global()->local;
  return t.storage().use_count() == 2 && local.use_count() - local->queued_uses() == 1 &&
         t.global().use_count() == 1;
}

Tensor run_leaf_hooks(const Tensor& leaf, Tensor g) {
  for (const auto& [id, hook] : std::vector<std::pair<int64_t, GradHook>>(leaf->autograd().hooks))
    if (Tensor r = hook(g)) g = checked_hook_result(g, std::move(r));
  return g;
}
}  // namespace

namespace {

// Note [Bucketed gradient all-reduce]: in data parallelism with global tensors, a broadcast
// parameter's gradient comes out as a partial sum. During a backward() that writes .grad, the
// partial sums of broadcast leaves wait in a bucket and are all-reduced together, one
// collective per dtype, when backward ends (DDP's buckets: a collective's latency, not its
// bytes, dominates small models); other layouts are converted at once.
struct PendingGrad {
  Tensor leaf, grad;
};
thread_local std::vector<PendingGrad>* t_bucket = nullptr;

void accumulate_into_grad(const Tensor& leaf, Tensor g);

void flush_bucket(std::vector<PendingGrad>& bucket) {
  std::vector<PendingGrad> pending;
  pending.swap(bucket);
  std::vector<bool> done(pending.size(), false);
  for (size_t i = 0; i < pending.size(); ++i) {
    if (done[i]) continue;
    const DType dt = pending[i].grad->dtype();
    const GlobalMeta& first = *pending[i].grad->global();
    std::vector<size_t> group;
    TensorList flats;
    for (size_t j = i; j < pending.size(); ++j) {
      const GlobalMeta& g = *pending[j].grad->global();
      if (done[j] || pending[j].grad->dtype() != dt || g.placement != first.placement) continue;
      done[j] = true;
      group.push_back(j);
      flats.push_back(F::reshape(F::contiguous(g.local), {-1}));
    }
    Tensor flat = F::cat(flats, 0);
    const Tensor sum = global::box_local(
        global::make(flat, first.placement, Sbp::partial_sum(), flat->shape()), Sbp::broadcast());
    int64_t offset = 0;
    for (size_t j : group) {
      const Tensor& leaf = pending[j].leaf;
      const int64_t n = leaf->numel();
      Tensor piece = F::reshape(F::narrow(sum, 0, offset, n), leaf->shape());
      offset += n;
      accumulate_into_grad(leaf,
                           global::make(piece, first.placement, Sbp::broadcast(), leaf->shape()));
    }
  }
}

// Anomaly mode (Note in core/common/backend_flags.h): a backward function that returned NaN
// is named, as PyTorch's detect_anomaly. Waits for each gradient.
void check_no_nan(const Node& n, const TensorList& grads) {
  for (size_t k = 0; k < grads.size(); ++k) {
    const Tensor& g = grads[k];
    if (!g || g->global() || g->numel() == 0 || !is_floating(g->dtype())) continue;
    Tensor nan = F::to(F::any(F::compare(CompareFn::kNe, g, g)), DType::kBool, Device{});
    if (*nan->read_as<bool>())
      throw_error<RuntimeError>("backward", "Function '", n.name(), "' returned nan values in its ",
                                k, "th output.");
  }
}

}  // namespace

TensorList AccumulateGrad::apply(TensorList&& out_grads) {
  Tensor g = std::move(out_grads[0]);
  if (!g) return {};
  g = run_leaf_hooks(leaf, std::move(g));
  if (g->global() && leaf->global() && !grad_mode_enabled() && t_bucket &&
      g->global()->nd_sbp.empty() && g->global()->sbp.kind == Sbp::kPartialSum &&
      leaf->global()->sbp.kind == Sbp::kBroadcast && g->shape() == leaf->shape()) {
    t_bucket->push_back({leaf, g});  // Note [Bucketed gradient all-reduce]
    return {};
  }
  accumulate_into_grad(leaf, std::move(g));
  return {};
}

namespace {
void accumulate_into_grad(const Tensor& leaf, Tensor g) {
  AutogradMeta& am = leaf->autograd();
  // A global leaf's gradient takes the leaf's layout.
  if (g->global() && leaf->global() && !grad_mode_enabled() &&
      g->global()->layout() != leaf->global()->layout() && g->shape() == leaf->shape())
    g = global::box(g, leaf->global()->layout());
  // A local leaf that took part in global ops as a number (a 0-d operand) gets the whole
  // gradient, the same on every rank.
  if (g->global() && !leaf->global() && !grad_mode_enabled()) g = global::whole_value(g);
  if (am.grad) {
    // In place, as PyTorch (a tensor read from .grad earlier sees the sum), unless the
    // gradient must keep a history.
    if (grad_mode_enabled() || am.grad->requires_grad() || g->requires_grad() ||
        !am.grad->is_contiguous() || am.grad->shape() != g->shape() ||
        am.grad->dtype() != g->dtype() || am.grad->device() != g->device())
      am.grad = F::add(am.grad, g);
    else
      F::add_(am.grad, g);
  } else if (grad_mode_enabled()) {
    am.grad = g;  // create_graph: keep the gradient's own history
  } else if (g.use_count() - g->queued_uses() == 1 && sole_owner_of_memory(*g) &&
             g->is_contiguous() && !g->requires_grad()) {
    // Nobody else sees this memory (queued kernels that write or read it run before any later
    // op on .grad): take it.
    am.grad = g;
  } else {
    // It aliases memory someone else holds (an expanded view, a user's tensor): copy, so that a
    // later in-place update of .grad cannot write through it.
    am.grad = F::clone(F::detach(g));
  }
}
}  // namespace

namespace {
int64_t next_hook_id() {
  static std::atomic<int64_t> id{0};
  return ++id;
}
}  // namespace

int64_t register_grad_hook(const Tensor& t, GradHook hook) {
  if (!t->requires_grad())
    throw_error<RuntimeError>("register_hook",
                              "cannot register a hook on a tensor that doesn't require gradient");
  const int64_t id = next_hook_id();
  AutogradMeta& am = t->autograd();
  if (am.grad_fn)
    am.grad_fn->hooks.emplace_back(am.output_nr, id, std::move(hook));
  else
    am.hooks.emplace_back(id, std::move(hook));
  return id;
}

void remove_grad_hook(const Tensor& t, int64_t id) {
  AutogradMeta& am = t->autograd();
  std::erase_if(am.hooks, [id](const auto& h) { return h.first == id; });
  if (am.grad_fn)
    std::erase_if(am.grad_fn->hooks, [id](const auto& h) { return std::get<1>(h) == id; });
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta& am = t->autograd();
  if (am.grad_fn) return Edge{am.grad_fn, am.output_nr};
  if (!am.requires_grad) return Edge{};
  std::shared_ptr<Node> acc = am.grad_accumulator.lock();
  if (!acc) {
    auto node = std::make_shared<AccumulateGrad>(t);
    node->sequence_nr = UINT64_MAX;  // leaves run last
    am.grad_accumulator = node;
    acc = node;
  }
  return Edge{acc, 0};
}

namespace {
thread_local bool t_checkpoint_valid = true;
}  // namespace

bool checkpoint_valid() { return t_checkpoint_valid; }

TensorList run_backward(const TensorList& outputs, const TensorList& grad_outputs,
                        bool retain_graph, bool create_graph, const TensorList& inputs,
                        bool allow_unused) {
  struct ValidScope {
    bool prev = t_checkpoint_valid;
    explicit ValidScope(bool v) { t_checkpoint_valid = v; }
    ~ValidScope() { t_checkpoint_valid = prev; }
  } valid_scope(inputs.empty());
  // Gradients run in the dtypes their forward ops produced, not under autocast.
  autocast::Suspend no_autocast;
  const char* op = inputs.empty() ? "backward" : "autograd.grad";
  GradModeGuard mode(create_graph);
  // Note [Bucketed gradient all-reduce]: a backward that writes .grad on several ranks.
  std::vector<PendingGrad> bucket;
  struct BucketScope {
    std::vector<PendingGrad>* prev;
    explicit BucketScope(std::vector<PendingGrad>* b) : prev(t_bucket) { t_bucket = b; }
    ~BucketScope() { t_bucket = prev; }
  } bucket_scope(inputs.empty() && !create_graph && global::world_size() > 1 ? &bucket : nullptr);
  // Seed gradients.
  std::unordered_map<Node*, TensorList> buffers;
  std::unordered_map<Node*, std::shared_ptr<Node>> owners;
  std::vector<Node*> roots;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    if (!out->requires_grad())
      throw_error<RuntimeError>(op, "element ", i,
                                " of tensors does not require grad and does "
                                "not have a grad_fn");
    Tensor g = i < grad_outputs.size() ? grad_outputs[i] : nullptr;
    if (!g) {
      if (is_complex(out->dtype()))
        throw_error<RuntimeError>(op,
                                  "grad can be implicitly created only for real scalar "
                                  "outputs");
      if (out->numel() != 1)
        throw_error<RuntimeError>(op,
                                  "grad can be implicitly created only for scalar outputs, "
                                  "got an output of shape ",
                                  shape_str(out->shape()));
      g = out->global() ? F::ones_like(out)
                        : F::ones(out->shape(), CreationOptions{out->dtype(), out->device(), ""});
    } else if ((g->global() == nullptr) != (out->global() == nullptr)) {
      throw_error<RuntimeError>(op, "grad_output[", i, "] is a ", g->global() ? "global" : "local",
                                " tensor but output[", i, "] is ",
                                out->global() ? "global" : "local");
    } else if (g->shape() != out->shape()) {
      throw_error<RuntimeError>(op, "mismatch in shape: grad_output[", i, "] has a shape of ",
                                shape_str(g->shape()), " and output[", i, "] has a shape of ",
                                shape_str(out->shape()));
    }
    Edge e = gradient_edge(out);
    Node* n = e.node.get();
    owners[n] = e.node;
    TensorList& buf = buffers[n];
    buf.resize(n->output_metas.size());
    buf[e.input_nr] = buf[e.input_nr] ? F::add(buf[e.input_nr], g) : g;
    // A node seeded twice (the same tensor, or two outputs of one node) is one root: counting
    // its edges twice would leave every node below it waiting forever.
    if (std::find(roots.begin(), roots.end(), n) == roots.end()) roots.push_back(n);
  }
  // Dependencies: how many edges point at each reachable node.
  std::unordered_map<Node*, int> deps;
  {
    std::vector<Node*> stack(roots.begin(), roots.end());
    std::unordered_set<Node*> seen(roots.begin(), roots.end());
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges) {
        if (!e.node) continue;
        deps[e.node.get()]++;
        owners.emplace(e.node.get(), e.node);
        if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
      }
    }
  }
  // Capture points for autograd.grad.
  std::unordered_map<Node*, std::vector<std::pair<int, size_t>>> captures;
  TensorList results(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]->requires_grad())
      throw_error<RuntimeError>(op, "one of the differentiated tensors (input ", i,
                                ") does not require grad");
    Edge e = gradient_edge(inputs[i]);
    captures[e.node.get()].push_back({e.input_nr, i});
    owners.emplace(e.node.get(), e.node);
  }

  // autograd.grad runs only the nodes with a capture point below them, as PyTorch does: others
  // would compute unused gradients, and a gradient with a side effect (one_embedding's push
  // into its table) must not run for a gradient nobody asked for.
  std::unordered_set<Node*> needed, reached;
  if (!inputs.empty()) {
    std::unordered_map<Node*, bool> memo;
    std::vector<std::pair<Node*, size_t>> stack;
    for (Node* r : roots) {
      if (memo.count(r)) continue;
      memo[r] = false;
      stack.push_back({r, 0});
      while (!stack.empty()) {
        auto& [n, next] = stack.back();
        if (next < n->next_edges.size()) {
          Node* child = n->next_edges[next++].node.get();
          if (child && !memo.count(child)) {
            memo[child] = false;
            stack.push_back({child, 0});
          }
          continue;
        }
        // Applied when a capture lies below; reached (for its parents) when one lies here too.
        bool below = false;
        for (const Edge& e : n->next_edges) below = below || (e.node && memo[e.node.get()]);
        memo[n] = below || captures.count(n) > 0;
        if (below) needed.insert(n);
        if (memo[n]) reached.insert(n);
        stack.pop_back();
      }
    }
  }

  // Set for this call's nodes (restored after: a hook or a custom backward may call grad or
  // backward again).
  struct ReachedScope {
    const std::unordered_set<Node*>* prev;
    explicit ReachedScope(const std::unordered_set<Node*>* r) : prev(t_reached) { t_reached = r; }
    ~ReachedScope() { t_reached = prev; }
  } reached_scope(inputs.empty() ? nullptr : &reached);

  auto later_first = [](Node* a, Node* b) { return a->sequence_nr < b->sequence_nr; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later_first)> ready(later_first);
  std::unordered_set<Node*> queued;
  for (Node* r : roots)
    if (deps[r] == 0 && queued.insert(r).second) ready.push(r);

  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    TensorList grads = std::move(buffers[n]);
    grads.resize(n->output_metas.size());
    buffers.erase(n);
    // autograd.grad: a node with no requested input at or below it is skipped before its hooks
    // and retained gradients, as in PyTorch.
    if (!inputs.empty() && !needed.count(n) && !captures.count(n)) {
      for (const Edge& e : n->next_edges)
        if (e.node && --deps[e.node.get()] == 0 && queued.insert(e.node.get()).second)
          ready.push(e.node.get());
      continue;
    }
    for (const auto& [nr, id, hook] : std::vector<std::tuple<int, int64_t, GradHook>>(n->hooks))
      if (nr < static_cast<int>(grads.size()) && grads[nr])
        if (Tensor r = hook(grads[nr])) grads[nr] = checked_hook_result(grads[nr], std::move(r));
    // A retained gradient accumulates over backward passes, as a leaf's does.
    for (size_t k = 0; k < n->retained.size() && k < grads.size(); ++k)
      if (auto t = n->retained[k].lock(); t && grads[k]) {
        Tensor& slot = t->autograd().grad;
        Tensor g = create_graph ? grads[k] : F::clone(F::detach(grads[k]));
        slot = slot ? F::add(slot, g) : g;
      }
    if (auto it = captures.find(n); it != captures.end()) {
      auto* acc = dynamic_cast<AccumulateGrad*>(n);
      // A leaf's hooks see the gradient autograd.grad returns for it, as in PyTorch.
      if (acc && !grads.empty() && grads[0]) grads[0] = run_leaf_hooks(acc->leaf, grads[0]);
      for (auto [nr, idx] : it->second) results[idx] = grads[nr];
      if (acc) continue;  // autograd.grad never writes .grad
    }
    if (!inputs.empty() && dynamic_cast<AccumulateGrad*>(n)) continue;
    if (!inputs.empty() && !needed.count(n)) {  // captured here, nothing requested below
      for (const Edge& e : n->next_edges)
        if (e.node && --deps[e.node.get()] == 0 && queued.insert(e.node.get()).second)
          ready.push(e.node.get());
      continue;
    }
    TensorList in_grads = n->apply(std::move(grads));
    if (anomaly_mode() == 1) check_no_nan(*n, in_grads);
    if (!retain_graph) n->release_saved();
    for (size_t k = 0; k < n->next_edges.size() && k < in_grads.size(); ++k) {
      const Edge& e = n->next_edges[k];
      if (!e.node) continue;
      Node* next = e.node.get();
      if (in_grads[k]) {
        TensorList& buf = buffers[next];
        buf.resize(next->output_metas.size());
        buf[e.input_nr] = buf[e.input_nr] ? F::add(buf[e.input_nr], in_grads[k]) : in_grads[k];
      }
      if (--deps[next] == 0 && queued.insert(next).second) ready.push(next);
    }
  }
  if (!bucket.empty()) flush_bucket(bucket);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!results[i] && !allow_unused)
      throw_error<RuntimeError>(op, "one of the differentiated tensors (input ", i,
                                ") appears to not have been used in the graph. Set "
                                "allow_unused=True if this is the desired behavior.");
  return results;
}

}  // namespace oneflow
