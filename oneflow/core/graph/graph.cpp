#include "oneflow/core/graph/graph.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "oneflow/core/eager/engine.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/graph/trace_pause.h"

namespace oneflow::graph {

namespace {
// What a global op mixed into a random kernel's seed on this rank (0: nothing).
uint64_t seed_mix(const Attrs& attrs) {
  return attrs.has("seed_mix") ? static_cast<uint64_t>(attrs.get<int64_t>("seed_mix")) : 0;
}
}  // namespace

// Note [Tracing by running]: rather than tracing metas in a lazy mode, the first call runs
// build() eagerly and records what the dispatcher runs (DESIGN.md section 7), so every op, its
// gradient and the optimizer's update work in a graph as soon as they work eagerly, and the
// first call returns real values. The recorder identifies a tensor by its TensorImpl, through a
// weak reference (so that memory is freed as in eager execution, and the gradient accumulation's
// reuse of unshared gradients still applies); an entry whose tensor died is stale:
// - a tensor a recorded kernel made is a made value: replays allocate it with the traced layout;
// - the tensors the caller names as variables (the graph's parameters, buffers and optimizer
//   state) existed before tracing: captured by reference;
// - a tensor never seen before that shares memory with a value (an alias made without the
//   dispatcher: a detached alias, .data) is that value when its layout is the same, else a view
//   of the first value seen with that memory;
// - any other tensor never seen before existed before tracing (a constant made on the host, a
//   tensor of some other object): captured by reference.
// A made tensor that takes another layout in place (t_, squeeze_, `.data =`) names that layout's
// value from then on; inputs and captured tensors may not change layout (a replay could not
// repeat it on the caller's objects). Replays check that captured tensors kept their layout.
// What the recorder cannot see is refused while tracing (check_not_tracing): reading values on
// the host (the program would bake in one call's control flow), host-side computations whose
// output shapes depend on values. Random kernels carry their generator and
// counter count, and draw fresh counters at each replay, in the traced order: a replay draws what
// eager execution would have drawn.
//
// Note [Collectives in a graph]: a graph on global tensors records the local kernels the global
// dispatcher runs on this rank's shards, and the collectives that box them (oneflow.comm's
// all_reduce, broadcast, all_gather, reduce_scatter, all_to_all, send and recv, whose calls
// record themselves while tracing, with the ranks of the subgroup they ran in). Every rank
// traces the same build() and so records the same collectives in the same order; on placements
// over part of the processes a process records only the kernels of the ops it holds shards of
// and the messages it sends and receives (pipeline stages: Note [Absent shards] in
// framework/global.h), so each process's program is its own stage. Dead-step elimination keeps
// every collective (a rank that dropped one would leave its peers waiting). A replay issues
// each collective again, queued on the communication stream after the kernels before it, as
// eager collectives are, so such programs replay step by step rather than as one instruction.
class Recorder {
 public:
  Recorder(const TensorList& inputs, const TensorList& variables)
      : graph_(std::make_shared<CompiledGraph>()) {
    for (const Tensor& t : inputs) {
      if (!t) throw_error<TypeError>("nn.Graph", "graph inputs must be tensors");
      const int id = add_value(t, Value::Kind::kInput);
      graph_->inputs_.push_back(id);
      own_storage(t, id);
    }
    for (const Tensor& t : variables)
      if (t) variables_.emplace(t.get(), t);
  }

  void kernel(const Primitive& prim, Device device, const TensorList& inputs,
              const TensorList& outputs, const Attrs& attrs, bool in_place) {
    Step step;
    step.kind = Step::Kind::kKernel;
    step.prim = &prim;
    step.attrs = attrs;
    step.device = device;
    step.in_place = in_place;
    for (const Tensor& t : inputs) step.inputs.push_back(value_of(t));
    if (in_place) {
      step.outputs.push_back(value_of(outputs.at(0)));
    } else {
      for (const Tensor& t : outputs) {
        const int id = add_value(t, Value::Kind::kMade);
        own_storage(t, id);
        step.outputs.push_back(id);
      }
    }
    if (attrs.has("seed") && attrs.has("offset")) attach_random(step);
    graph_->steps_.push_back(std::move(step));
  }

  void collective(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                  const Attrs& attrs) {
    Step step;
    step.kind = Step::Kind::kKernel;
    step.collective = true;
    step.prim = &prim;
    step.attrs = attrs;
    // (a send has no output: it reads its input)
    step.device = (outputs.empty() ? inputs.at(0) : outputs.at(0))->device();
    for (const Tensor& t : inputs) step.inputs.push_back(value_of(t));
    if (outputs.empty()) {
      graph_->steps_.push_back(std::move(step));
      return;
    }
    const Tensor& out = outputs.at(0);
    step.in_place = known(out);
    if (step.in_place) {
      step.outputs.push_back(value_of(out));
    } else {
      const int id = add_value(out, Value::Kind::kMade);
      own_storage(out, id);
      step.outputs.push_back(id);
    }
    graph_->steps_.push_back(std::move(step));
  }

  void view(const Tensor& base, const Tensor& view) {
    const int in = value_of(base);
    add_view_step(in, view);
  }

  // `t` (a made tensor) takes the layout and memory of `src`.
  void rebind(const Tensor& t, const Tensor& src) {
    const int from = value_of(t);
    if (graph_->values_[graph_->values_[from].root].kind != Value::Kind::kMade)
      throw_error<RuntimeError>("nn.Graph",
                                "changing the shape or memory of an input or of a tensor that "
                                "existed before tracing in place (t_, transpose_, squeeze_, "
                                "unsqueeze_, as_strided_, `.data =`) cannot be part of a graph");
    ids_[t.get()] = {value_of(src), t};
  }

  void random(const std::shared_ptr<Generator>& gen, uint64_t seed, uint64_t offset,
              uint64_t counters) {
    pending_random_.push_back({gen, seed, offset, counters});
  }

  std::shared_ptr<CompiledGraph> finish(const TensorList& outputs) {
    for (const Tensor& t : outputs) {
      if (!t) throw_error<TypeError>("nn.Graph", "graph outputs must be tensors");
      graph_->outputs_.push_back(value_of(t));
    }
    graph_->traced_steps_ = graph_->steps_.size();
    eliminate_dead_steps();
    fold_constant_fills();
    alias_dead_copies();
    eliminate_dead_steps();  // views only the removed copies read
    note_last_uses();
    for (Value& v : graph_->values_)  // made values keep only their meta
      if (v.kind != Value::Kind::kCapture) v.captured.reset();
    graph_->plan_one_instruction();
    return graph_;
  }

 private:
  struct PendingRandom {
    std::shared_ptr<Generator> gen;
    uint64_t seed, offset, counters;
  };

  int add_value(const Tensor& t, Value::Kind kind) {
    const int id = static_cast<int>(graph_->values_.size());
    Value v;
    v.kind = kind;
    v.meta = t->meta();
    v.root = id;
    if (kind == Value::Kind::kCapture) v.captured = t;
    graph_->values_.push_back(std::move(v));
    ids_[t.get()] = {id, t};
    return id;
  }

  // The values seen with each storage, the first one first.
  void own_storage(const Tensor& t, int id) {
    Owners& o = owners_[t->storage().get()];
    if (o.storage.expired()) o = Owners{t->storage(), {}};
    o.values.push_back(id);
  }

  int add_view_step(int in, const Tensor& view) {
    const int id = add_value(view, Value::Kind::kMade);
    graph_->values_[id].root = graph_->values_[in].root;
    Step step;
    step.kind = Step::Kind::kView;
    step.inputs = {in};
    step.outputs = {id};
    // In elements of the view's dtype (view_as_real/view_as_complex change the element size).
    const TensorMeta& base = graph_->values_[in].meta;
    step.offset_delta = view->offset() - base.offset * static_cast<int64_t>(itemsize(base.dtype)) /
                                             static_cast<int64_t>(itemsize(view->dtype()));
    graph_->steps_.push_back(std::move(step));
    return id;
  }

  // Whether value_of(t) names a value the program has or captures (not a tensor made outside
  // the dispatcher during the trace).
  bool known(const Tensor& t) const {
    if (auto it = ids_.find(t.get()); it != ids_.end() && !it->second.second.expired()) return true;
    if (variables_.count(t.get())) return true;
    auto it = owners_.find(t->storage().get());
    return it != owners_.end() && !it->second.storage.expired();
  }

  int value_of(const Tensor& t) {
    if (auto it = ids_.find(t.get()); it != ids_.end() && !it->second.second.expired())
      return it->second.first;
    if (auto it = variables_.find(t.get()); it != variables_.end()) {
      const int id = add_value(t, Value::Kind::kCapture);
      own_storage(t, id);
      return id;
    }
    if (auto it = owners_.find(t->storage().get());
        it != owners_.end() && !it->second.storage.expired()) {
      for (int v : it->second.values)
        if (same_layout(graph_->values_[v].meta, *t)) {
          ids_[t.get()] = {v, t};
          return v;
        }
      return add_view_step(it->second.values.front(), t);
    }
    const int id = add_value(t, Value::Kind::kCapture);
    own_storage(t, id);  // later aliases of a captured tensor view it
    return id;
  }

  void attach_random(Step& step) {
    // (a global op's shard mixes its rank into the generator's seed: global_dispatch.cpp)
    const auto seed = static_cast<uint64_t>(step.attrs.get<int64_t>("seed")) ^ seed_mix(step.attrs);
    const auto offset = static_cast<uint64_t>(step.attrs.get<int64_t>("offset"));
    for (auto it = pending_random_.begin(); it != pending_random_.end(); ++it)
      if (it->seed == seed && it->offset == offset) {
        step.generator = it->gen;
        step.counters = it->counters;
        pending_random_.erase(it);
        return;
      }
    throw_error<RuntimeError>("nn.Graph", step.prim->name(),
                              " draws random numbers from no known generator");
  }

  // Whether the step writes memory that outlives the program. A kernel without outputs (the
  // fused optimizer updates) writes its inputs.
  // A random kernel is kept too, used or not: it advances its generator, and later draws (in
  // the program or after it) must see the counters eager execution would.
  bool writes_outside(const Step& s) const {
    if (s.kind == Step::Kind::kKernel && (s.outputs.empty() || s.generator || s.collective))
      return true;
    if (!s.in_place) return false;
    const Value& root = graph_->values_[graph_->values_[s.outputs[0]].root];
    return root.kind != Value::Kind::kMade;
  }

  // A step is kept when the program's outputs or a later kept step read what it writes, or when
  // it writes memory that outlives the program (an input or a captured tensor). A value counts
  // as read when any view of its memory is read, so writes through views are kept.
  void eliminate_dead_steps() {
    std::vector<Value>& values = graph_->values_;
    std::vector<bool> used(values.size(), false);
    auto use = [&](int v) {
      used[v] = true;
      used[values[v].root] = true;
    };
    for (int v : graph_->outputs_) use(v);
    std::vector<Step> kept;
    for (auto it = graph_->steps_.rbegin(); it != graph_->steps_.rend(); ++it) {
      // A view writes nothing: it is needed only when its own value is read.
      const bool view = it->kind == Step::Kind::kView;
      bool needed = writes_outside(*it);
      for (int v : it->outputs) needed = needed || used[v] || (!view && used[values[v].root]);
      if (!needed) continue;
      for (int v : it->inputs) use(v);
      for (int v : it->outputs) use(v);
      kept.push_back(std::move(*it));
    }
    graph_->steps_.assign(std::make_move_iterator(kept.rbegin()),
                          std::make_move_iterator(kept.rend()));
  }

  // Whether any step from `from` on writes a value whose memory is `root`'s: in place, or as
  // an input of a kernel without outputs (the fused optimizer updates write their inputs).
  bool written_from(size_t from, int root) const {
    const std::vector<Value>& values = graph_->values_;
    for (size_t i = from; i < graph_->steps_.size(); ++i) {
      const Step& s = graph_->steps_[i];
      if (s.kind != Step::Kind::kKernel) continue;
      if (s.in_place && values[s.outputs[0]].root == root) return true;
      if (s.outputs.empty())
        for (int v : s.inputs)
          if (values[v].root == root) return true;
    }
    return false;
  }

  bool reaches_outputs(int root) const {
    for (int v : graph_->outputs_)
      if (graph_->values_[v].root == root) return true;
    return false;
  }

  // Note [Graph passes]: a fill whose result nothing writes and the program does not return
  // (a loss's seed gradient, a loss's default class weights) is made once, here, and captured
  // as a constant: each replay saved a kernel. A copy into a fresh tensor of the same layout,
  // dtype and device whose source memory nothing reads or writes afterwards (the contiguous
  // weight gradient autograd copies out of a transposed product) becomes a view of the source:
  // the replay skips the copy and the memory is released when the last view of it is. A copy
  // the program returns stays a copy (a compact tensor of its own, as eagerly).
  void fold_constant_fills() {
    std::vector<Value>& values = graph_->values_;
    std::vector<Step> kept;
    for (size_t i = 0; i < graph_->steps_.size(); ++i) {
      Step& s = graph_->steps_[i];
      const bool fill = s.kind == Step::Kind::kKernel && !s.in_place && !s.generator &&
                        s.inputs.empty() && s.outputs.size() == 1 &&
                        std::string(s.prim->name()) == "fill";
      const int v = fill ? s.outputs[0] : -1;
      if (!fill || written_from(i + 1, v) || reaches_outputs(v)) {
        kept.push_back(std::move(s));
        continue;
      }
      const TensorMeta& m = values[v].meta;
      Tensor constant = empty_strided_tensor(m.shape, m.strides, m.dtype, m.device);
      run_kernel(*s.prim, s.device, {}, {constant}, s.attrs, true);
      values[v].kind = Value::Kind::kCapture;
      values[v].captured = constant;
    }
    graph_->steps_ = std::move(kept);
  }

  void alias_dead_copies() {
    std::vector<Value>& values = graph_->values_;
    for (size_t i = 0; i < graph_->steps_.size(); ++i) {
      Step& s = graph_->steps_[i];
      if (s.kind != Step::Kind::kKernel || s.in_place || s.generator || s.inputs.size() != 1 ||
          s.outputs.size() != 1 || std::string(s.prim->name()) != "copy")
        continue;
      const int u = s.inputs[0], v = s.outputs[0];
      const TensorMeta &src = values[u].meta, &dst = values[v].meta;
      const int root = values[u].root;
      if (values[root].kind != Value::Kind::kMade || src.dtype != dst.dtype ||
          !(src.device == dst.device) || src.shape != dst.shape || src.strides != dst.strides ||
          reaches_outputs(root) || reaches_outputs(v))
        continue;
      bool later_use = false;
      for (size_t j = i + 1; j < graph_->steps_.size() && !later_use; ++j) {
        const Step& t = graph_->steps_[j];
        for (int w : t.inputs) later_use = later_use || values[w].root == root;
        for (int w : t.outputs) later_use = later_use || values[w].root == root;
      }
      if (later_use) continue;
      // v (at the source's offset) and the values viewing it now view the source's memory;
      // later views keep their distance from v.
      for (Value& w : values)
        if (w.root == v) w.root = root;
      values[v].meta.offset = src.offset;
      s.kind = Step::Kind::kView;
      s.prim = nullptr;
      s.attrs = Attrs{};
      s.offset_delta = 0;
    }
  }

  // Each made value is dropped after the last step that mentions it, unless it is an output, so
  // a replay holds no more memory than eager execution would.
  void note_last_uses() {
    const std::vector<Value>& values = graph_->values_;
    std::vector<int> last(values.size(), -1);
    for (size_t i = 0; i < graph_->steps_.size(); ++i) {
      for (int v : graph_->steps_[i].inputs) last[v] = static_cast<int>(i);
      for (int v : graph_->steps_[i].outputs) last[v] = static_cast<int>(i);
    }
    std::vector<bool> keep(values.size(), false);
    for (int v : graph_->outputs_) keep[v] = true;
    for (size_t v = 0; v < values.size(); ++v)
      if (last[v] >= 0 && !keep[v] && values[v].kind == Value::Kind::kMade)
        graph_->steps_[last[v]].release.push_back(static_cast<int>(v));
  }

  std::shared_ptr<CompiledGraph> graph_;
  struct Owners {
    std::weak_ptr<Storage> storage;
    std::vector<int> values;
  };
  static bool same_layout(const TensorMeta& m, const TensorImpl& t) {
    return m.dtype == t.dtype() && m.offset == t.offset() && m.shape == t.shape() &&
           m.strides == t.strides();
  }

  std::unordered_map<const TensorImpl*, std::pair<int, std::weak_ptr<TensorImpl>>> ids_;
  std::unordered_map<const Storage*, Owners> owners_;
  std::unordered_map<const TensorImpl*, Tensor> variables_;
  std::vector<PendingRandom> pending_random_;
};

namespace {
thread_local std::unique_ptr<Recorder> t_recorder;
}  // namespace

namespace {
// Recorders set aside by pause_trace, innermost last (null entries: nothing was recorded).
thread_local std::vector<std::unique_ptr<Recorder>> t_paused;
}  // namespace

bool tracing() { return t_recorder != nullptr; }

void pause_trace() { t_paused.push_back(std::move(t_recorder)); }

void resume_trace() {
  if (t_paused.empty()) throw_error<RuntimeError>("nn.Graph", "resume_trace without pause_trace");
  t_recorder = std::move(t_paused.back());
  t_paused.pop_back();
}

void begin_trace(const TensorList& inputs, const TensorList& variables) {
  if (t_recorder)
    throw_error<RuntimeError>("nn.Graph", "a graph is already being traced on this thread");
  t_recorder = std::make_unique<Recorder>(inputs, variables);
}

std::shared_ptr<CompiledGraph> end_trace(const TensorList& outputs) {
  if (!t_recorder) throw_error<RuntimeError>("nn.Graph", "no graph is being traced");
  std::unique_ptr<Recorder> recorder = std::move(t_recorder);
  return recorder->finish(outputs);
}

void abort_trace() { t_recorder.reset(); }

void check_not_tracing(const char* what) {
  if (t_recorder)
    throw_error<RuntimeError>("nn.Graph", what,
                              " cannot be part of a graph: build() is traced once and replayed, "
                              "so it may not depend on tensor values read on the host, nor "
                              "compute on the host");
}

void record_kernel(const Primitive& prim, Device device, const TensorList& inputs,
                   const TensorList& outputs, const Attrs& attrs, bool in_place) {
  if (t_recorder) t_recorder->kernel(prim, device, inputs, outputs, attrs, in_place);
}

void record_view(const Tensor& base, const Tensor& view) {
  if (t_recorder) t_recorder->view(base, view);
}

void record_collective(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                       const Attrs& attrs) {
  if (t_recorder) t_recorder->collective(prim, inputs, outputs, attrs);
}

void record_rebind(const Tensor& t, const Tensor& src) {
  if (t_recorder) t_recorder->rebind(t, src);
}

void record_random(const std::shared_ptr<Generator>& gen, uint64_t seed, uint64_t offset,
                   uint64_t counters) {
  if (t_recorder) t_recorder->random(gen, seed, offset, counters);
}

namespace {
bool same_meta(const TensorMeta& m, const TensorImpl& t) {
  return m.dtype == t.dtype() && m.device == t.device() && m.shape == t.shape() &&
         m.strides == t.strides();
}
bool same_layout(const TensorMeta& m, const TensorImpl& t) {
  return same_meta(m, t) && m.offset == t.offset();
}
}  // namespace

// Note [A replay as one instruction]: replaying a CPU program step by step queued each kernel
// on the eager engine's stream: for a small model the handoffs cost more than the kernels (the
// digits MLP's Adam step: 172 us queued, 131 us with every kernel run at the call). So the
// whole walk is one instruction: ReplayKernel runs the steps on the stream thread, where every
// kernel runs inline. At the call, on the calling thread: the outputs are allocated (Python
// gets them at once; host reads wait for the instruction, as for any queued op) and random
// steps reserve their counters in program order; the tensors outside the program that it
// writes get their version bumps there in either mode. The instruction reads the inputs and
// the captured tensors the program only reads, and writes the outputs and the captured tensors
// it writes (parameters, optimizer state), so later ops and host reads on those wait for it.
// Programs with CUDA steps, or whose outputs are not values their own kernels make (an input,
// a parameter, a view), replay step by step.
class ReplayKernel final : public Primitive {
 public:
  explicit ReplayKernel(const CompiledGraph& g) : g_(g) {}
  const char* name() const override { return "nn.Graph replay"; }
  std::vector<TensorMeta> infer(const TensorList&, const Attrs&) const override { return {}; }
  void compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const override {
    const TensorList inputs(in.begin(), in.begin() + g_.inputs_.size());
    const TensorList outputs(out.begin(), out.begin() + g_.out_values_.size());
    g_.walk(inputs, outputs, attrs.get<std::vector<int64_t>>("random"));
  }
  void compute_cuda(const TensorList&, const TensorList&, const Attrs&) const override {
    throw_error<RuntimeError>("nn.Graph", "a one-instruction replay runs CPU programs only");
  }

 private:
  const CompiledGraph& g_;
};

CompiledGraph::CompiledGraph() = default;

CompiledGraph::~CompiledGraph() {
  if (!queued_.load()) return;
  // An interrupt (Ctrl-C) raised while waiting drops the instructions not yet started; the
  // running one may still be this program's: wait again until it is done. A destructor cannot
  // pass the interrupt on.
  for (;;) {
    try {
      eager::drain();
      return;
    } catch (...) {
    }
  }
}

void CompiledGraph::plan_one_instruction() {
  std::vector<bool> made_by_kernel(values_.size(), false), written(values_.size(), false);
  bool cpu_only = true;
  for (const Step& s : steps_) {
    if (s.kind != Step::Kind::kKernel) continue;
    // Collectives queue on the communication stream: such programs replay step by step.
    cpu_only = cpu_only && s.device.type == DeviceType::kCPU && !s.collective;
    if (!s.in_place)
      for (int v : s.outputs) made_by_kernel[v] = true;
    if (s.in_place) written[values_[s.outputs[0]].root] = true;
    if (s.outputs.empty())  // fused updates write their inputs
      for (int v : s.inputs) written[values_[v].root] = true;
  }
  for (size_t v = 0; v < values_.size(); ++v) {
    if (values_[v].kind == Value::Kind::kCapture)
      (written[v] ? written_captures_ : read_captures_).push_back(static_cast<int>(v));
    if (values_[v].kind == Value::Kind::kInput && written[v])
      written_inputs_.push_back(static_cast<int>(
          std::find(inputs_.begin(), inputs_.end(), static_cast<int>(v)) - inputs_.begin()));
  }
  if (!cpu_only) return;
  for (int v : outputs_) {
    if (!made_by_kernel[v] || values_[v].root != v) return;
    if (std::find(out_values_.begin(), out_values_.end(), v) == out_values_.end())
      out_values_.push_back(v);
  }
  replay_kernel_ = std::make_unique<ReplayKernel>(*this);
}

bool CompiledGraph::current() const {
  for (const Value& v : values_)
    if (v.kind == Value::Kind::kCapture && !same_layout(v.meta, *v.captured)) return false;
  return true;
}

std::optional<TensorList> CompiledGraph::run(const TensorList& inputs) const {
  if (inputs.size() != inputs_.size())
    throw_error<ValueError>("nn.Graph", "the compiled graph takes ", inputs_.size(),
                            " input tensors, got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = values_[inputs_[i]];
    if (!inputs[i] || !same_meta(v.meta, *inputs[i]))
      throw_error<ValueError>("nn.Graph", "input ", i, " differs from the traced input (",
                              shape_str(v.meta.shape), ", ", dtype_name(v.meta.dtype), ", ",
                              v.meta.device.str(), ")");
  }
  // A parameter moved to another dtype or given other data (`module.to(...)`, `.data =`)
  // since the trace: the program's kernels and layouts no longer fit it.
  if (!current()) return std::nullopt;
  // The tensors outside the program that it writes take a version bump at the call, as eager
  // in-place ops and optimizer steps give theirs (a saved tensor they change fails backward).
  for (int v : written_captures_) values_[v].captured->bump_version();
  for (int i : written_inputs_) inputs[i]->bump_version();
  if (!replay_kernel_ || !eager::async_enabled()) return walk(inputs, {}, {});

  // The instruction reads the inputs and the captures the program only reads, and writes its
  // outputs, the captures it writes and the inputs it writes (later host reads of those, such
  // as index bounds checks, wait for it).
  TensorList ins(inputs), outs;
  for (int v : out_values_) {
    const TensorMeta& m = values_[v].meta;
    outs.push_back(empty_strided_tensor(m.shape, m.strides, m.dtype, m.device));
  }
  for (int v : read_captures_) ins.push_back(values_[v].captured);
  for (int v : written_captures_) outs.push_back(values_[v].captured);
  for (int i : written_inputs_) outs.push_back(inputs[i]);
  bool shared = false;
  for (const TensorList* list : {&ins, &outs})
    for (const Tensor& t : *list) shared = shared || t->storage()->shared_outside();
  std::vector<int64_t> random;
  for (const Step& s : steps_)
    if (s.generator) {
      random.push_back(static_cast<int64_t>(s.generator->state().first));
      random.push_back(static_cast<int64_t>(s.generator->reserve(s.counters)));
    }
  const Attrs attrs{{"random", random}};
  queued_.store(true);
  if (shared)  // memory NumPy may touch: done before the call returns, as eager ops on it
    eager::run_and_wait(*replay_kernel_, ins, outs, attrs);
  else
    eager::enqueue(*replay_kernel_, ins, outs, attrs, false);
  TensorList result;
  result.reserve(outputs_.size());
  for (int v : outputs_)
    result.push_back(
        outs[std::find(out_values_.begin(), out_values_.end(), v) - out_values_.begin()]);
  return result;
}

TensorList CompiledGraph::walk(const TensorList& inputs, const TensorList& outputs,
                               const std::vector<int64_t>& random) const {
  TensorList slots(values_.size());
  for (size_t i = 0; i < inputs.size(); ++i) slots[inputs_[i]] = inputs[i];
  for (size_t v = 0; v < values_.size(); ++v)
    if (values_[v].kind == Value::Kind::kCapture) slots[v] = values_[v].captured;
  std::vector<int> given(values_.size(), -1);  // value -> index in `outputs`
  for (size_t k = 0; k < outputs.size(); ++k) given[out_values_[k]] = static_cast<int>(k);
  size_t next_random = 0;
  TensorList ins, outs;
  for (const Step& s : steps_) {
    ins.clear();
    for (int v : s.inputs) ins.push_back(slots[v]);
    if (s.kind == Step::Kind::kView) {
      const TensorMeta& m = values_[s.outputs[0]].meta;
      const int64_t bytes = ins[0]->offset() * static_cast<int64_t>(itemsize(ins[0]->dtype()));
      const int64_t view_size = static_cast<int64_t>(itemsize(m.dtype));
      if (bytes % view_size != 0)  // view_as_complex of an input at an odd offset
        throw_error<RuntimeError>("view_as_complex",
                                  "Tensor must have a storage_offset divisible by 2");
      const int64_t base_offset = bytes / view_size;
      slots[s.outputs[0]] =
          make_view(ins[0], m.shape, m.strides, base_offset + s.offset_delta, m.dtype);
    } else {
      outs.clear();
      for (int v : s.outputs) {
        if (!s.in_place) {
          const TensorMeta& m = values_[v].meta;
          slots[v] = given[v] >= 0 ? outputs[given[v]]
                                   : empty_strided_tensor(m.shape, m.strides, m.dtype, m.device);
        }
        outs.push_back(slots[v]);
      }
      if (s.generator) {
        Attrs attrs = s.attrs;
        const uint64_t mix = seed_mix(s.attrs);
        if (next_random < random.size()) {  // reserved at the call
          attrs.set("seed", static_cast<int64_t>(static_cast<uint64_t>(random[next_random]) ^ mix));
          attrs.set("offset", random[next_random + 1]);
          next_random += 2;
        } else {
          attrs.set("seed", static_cast<int64_t>(s.generator->state().first ^ mix));
          attrs.set("offset", static_cast<int64_t>(s.generator->reserve(s.counters)));
        }
        run_kernel(*s.prim, s.device, ins, outs, attrs, !s.in_place);
      } else if (s.collective) {
        s.prim->compute_cpu(ins, outs, s.attrs);
      } else {
        run_kernel(*s.prim, s.device, ins, outs, s.attrs, !s.in_place);
      }
      // (run() bumped the tensors outside the program once)
      if (s.in_place && values_[values_[s.outputs[0]].root].kind == Value::Kind::kMade)
        outs[0]->bump_version();
    }
    for (int v : s.release) slots[v].reset();
  }
  TensorList result;
  result.reserve(outputs_.size());
  for (int v : outputs_) result.push_back(slots[v]);
  return result;
}

std::string CompiledGraph::ir() const {
  std::ostringstream os;
  auto name = [&](int v) {
    const Value& val = values_[v];
    const char* kind = val.kind == Value::Kind::kInput     ? "in"
                       : val.kind == Value::Kind::kCapture ? "var"
                                                           : "t";
    return std::string(kind) + std::to_string(v);
  };
  auto meta = [&](int v) {
    const TensorMeta& m = values_[v].meta;
    return std::string(dtype_name(m.dtype)) + shape_str(m.shape);
  };
  os << "graph(";
  for (size_t i = 0; i < inputs_.size(); ++i)
    os << (i ? ", " : "") << name(inputs_[i]) << ": " << meta(inputs_[i]);
  os << ") {\n";
  for (const Step& s : steps_) {
    os << "  ";
    for (size_t i = 0; i < s.outputs.size(); ++i)
      os << (i ? ", " : "") << name(s.outputs[i]) << ": " << meta(s.outputs[i]);
    os << (s.in_place ? " <- " : " = ");
    os << (s.kind == Step::Kind::kView ? "view" : s.prim->name()) << "(";
    for (size_t i = 0; i < s.inputs.size(); ++i) os << (i ? ", " : "") << name(s.inputs[i]);
    os << ")" << (s.generator ? " random" : "") << "\n";
  }
  os << "  return ";
  for (size_t i = 0; i < outputs_.size(); ++i) os << (i ? ", " : "") << name(outputs_[i]);
  os << "\n}  // " << steps_.size() << " steps (" << traced_steps_ << " traced)\n";
  return os.str();
}

}  // namespace oneflow::graph
