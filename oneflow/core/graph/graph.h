// nn.Graph's tracer and compiled programs (DESIGN.md section 7).
//
// Tracing runs build() once, eagerly, while a recorder on the calling thread notes every kernel
// and view the dispatcher runs, in order, with the values they read and write. Values are the
// graph's inputs, tensors that existed before tracing (parameters, buffers, optimizer state,
// constants: captured by reference, so replays update them in place) and the tensors the steps
// make. compile() removes the steps nothing needs and notes when each value is last used; run()
// replays the steps on new inputs through the same kernels, without Python, meta inference or
// autograd. See Note [Tracing by running] in graph.cpp.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oneflow/core/ops/primitive.h"

namespace oneflow {

class Generator;

namespace graph {

// A value of the program: where its tensor comes from at each replay.
struct Value {
  enum class Kind : int8_t { kInput, kCapture, kMade };
  Kind kind = Kind::kMade;
  TensorMeta meta;  // as traced
  Tensor captured;  // kCapture: the tensor itself
  int root = -1;    // the value whose memory this one views (itself when it owns it)
};

// One kernel or view of the program.
struct Step {
  enum class Kind : int8_t { kKernel, kView };
  Kind kind = Kind::kKernel;
  const Primitive* prim = nullptr;
  Attrs attrs;
  Device device;
  std::vector<int> inputs, outputs;
  bool in_place = false;  // outputs[0] is an existing value, written in place
  // kView: outputs[0] views inputs[0] with the traced layout, at the traced distance.
  int64_t offset_delta = 0;
  // Random kernels draw fresh counters from their generator at each replay.
  std::shared_ptr<Generator> generator;
  uint64_t counters = 0;
  std::vector<int> release;  // values no later step needs
  // A collective (Note [Collectives in a graph] in graph.cpp): prim->compute_cpu issues it
  // again on the replay's tensors, queued on the communication stream as eager ones are.
  bool collective = false;
};

class CompiledGraph;
// The program as a serialized oneflow.graph.proto.Graph (graph.proto; Note [Saved graphs] in
// graph_proto.cpp). Captured tensors found among `variables` are saved by their name, the others
// by value. Raises NotImplementedError for random steps that draw from a generator other than
// their device's default one.
std::string save_graph(const CompiledGraph& g,
                       const std::vector<std::pair<std::string, Tensor>>& variables);
// The program save_graph wrote, its named captures bound to the tensors of those names in
// `variables` (which must have the saved layouts). Raises ValueError for bytes that are not a
// saved graph of this version, an unknown primitive, or a missing or different variable.
std::shared_ptr<CompiledGraph> load_graph(
    const std::string& bytes, const std::vector<std::pair<std::string, Tensor>>& variables);
// The names of the variables a saved program binds.
std::vector<std::string> graph_variables(const std::string& bytes);
// A saved program as protobuf text (constants shown by their size).
std::string graph_text(const std::string& bytes);
// Checks a loaded program before it may run, after giving its non-elementwise kernels dense
// copies of broadcast operands (graph_proto.cpp).
void validate(const CompiledGraph& g);
void dense_broadcast_operands(CompiledGraph& g);

class CompiledGraph {
 public:
  CompiledGraph();
  // Waits for queued replays: their instruction runs this program.
  ~CompiledGraph();
  // Replays the program on `inputs` (the traced inputs' count and metas) and returns its
  // outputs; nullopt, running nothing, when a captured tensor's layout or dtype changed since the
  // trace (the caller traces again). A CPU program is one instruction of the eager engine (see
  // Note [A replay as one instruction] in graph.cpp).
  std::optional<TensorList> run(const TensorList& inputs) const;
  size_t num_steps() const { return steps_.size(); }
  // Whether every captured tensor still has the dtype and layout it was traced with (run()
  // replays only then).
  bool current() const;
  size_t num_traced_steps() const { return traced_steps_; }
  // One line per step: its primitive, the values it reads and writes, and their metas.
  std::string ir() const;

 private:
  friend class Recorder;
  friend class ReplayKernel;
  friend std::string save_graph(const CompiledGraph&,
                                const std::vector<std::pair<std::string, Tensor>>&);
  friend void validate(const CompiledGraph& g);
  friend void dense_broadcast_operands(CompiledGraph& g);
  friend std::shared_ptr<CompiledGraph> load_graph(
      const std::string&, const std::vector<std::pair<std::string, Tensor>>&);
  // The steps on `inputs`; `outputs`, when given, are the tensors the distinct output values
  // (out_values_) are written to, and `random` the (seed, offset) of each random step in
  // order (drawn here when empty).
  TensorList walk(const TensorList& inputs, const TensorList& outputs,
                  const std::vector<int64_t>& random) const;
  // After compiling: what the program reads and writes outside itself, and whether replays
  // can be one instruction.
  void plan_one_instruction();

  std::vector<Value> values_;
  std::vector<Step> steps_;
  std::vector<int> inputs_;   // value per graph input
  std::vector<int> outputs_;  // value per graph output
  size_t traced_steps_ = 0;
  // The captured values the program only reads and those it writes; the inputs it writes.
  std::vector<int> read_captures_, written_captures_, written_inputs_;
  // One-instruction replays (CPU programs): the kernel and the distinct output values.
  std::unique_ptr<Primitive> replay_kernel_;
  std::vector<int> out_values_;
  mutable std::atomic<bool> queued_{false};
};

// Whether the calling thread is tracing a graph.
bool tracing();
// Starts recording on the calling thread; `inputs` become the graph's inputs; `variables` are
// tensors that existed before (parameters, buffers, optimizer state), captured when used.
void begin_trace(const TensorList& inputs, const TensorList& variables = {});
// Stops recording and compiles what was recorded into a program returning `outputs`.
std::shared_ptr<CompiledGraph> end_trace(const TensorList& outputs);
// Stops recording, discarding it (nothing happens when not tracing).
void abort_trace();
// Raises, naming `what`, when the calling thread is tracing: for work the tracer cannot record
// (host reads of values, host-side computations, collectives).
void check_not_tracing(const char* what);

// Hooks of the dispatcher and the random ops (no-ops unless tracing).
void record_kernel(const Primitive& prim, Device device, const TensorList& inputs,
                   const TensorList& outputs, const Attrs& attrs, bool in_place);
void record_view(const Tensor& base, const Tensor& view);
// A collective of oneflow.comm on `inputs` writing `outputs` (one tensor: written in place when
// the program knows it, else a value the collective makes). `prim`'s compute_cpu issues the
// collective again at each replay; every rank's program keeps its collectives in traced order.
void record_collective(const Primitive& prim, const TensorList& inputs, const TensorList& outputs,
                       const Attrs& attrs);
// `t` takes the layout and memory of `src` in place (t_, squeeze_, `.data =`); raises for inputs
// and captured tensors.
void record_rebind(const Tensor& t, const Tensor& src);
void record_random(const std::shared_ptr<Generator>& gen, uint64_t seed, uint64_t offset,
                   uint64_t counters);

// Runs a recorded kernel as the dispatcher does (defined in dispatch/dispatch.cpp).
void run_kernel(const Primitive& prim, Device device, const TensorList& inputs,
                const TensorList& outputs, const Attrs& attrs, bool fresh_outputs);

}  // namespace graph
}  // namespace oneflow
