// Compiled nn.Graph programs to and from the protobuf IR (graph.proto).
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "oneflow/core/functional/functional.h"
#include "oneflow/core/functional/generators.h"
#include "oneflow/core/graph/graph.h"
#include "oneflow/core/graph/graph.pb.h"
#include "oneflow/core/ops/attention_primitives.h"
#include "oneflow/core/ops/index_check_primitive.h"
#include "oneflow/core/ops/nn_primitives.h"
#include "oneflow/core/ops/primitives.h"
#include "oneflow/core/ops/rnn_primitives.h"
#include "oneflow/core/ops/small_ops_primitives.h"
#include "oneflow/core/ops/split_primitive.h"
#include "oneflow/core/ops/ternary_primitives.h"

namespace oneflow::graph {

// Note [Saved graphs]: a compiled program is saved as a oneflow.graph.proto.Graph: its values
// (metas, which value's memory each views), its steps in order (a kernel by its primitive's name
// and attributes, or a view by its layout), its inputs and outputs, and when each value is
// released. The program is saved after the passes, so loading it skips tracing and compiling.
// Captured tensors -- what the program reads or writes outside itself -- are saved by the name
// the caller gives them (nn.Graph: a module's parameters and buffers as in its state_dict), and
// bound by that name to the loading graph's own tensors, which must have the saved layout;
// captured tensors without a name (constants the passes made, tensors of other objects) are saved
// by value and loaded as constants of the program. A random step names no generator: it draws
// from its device's default generator, and a program whose random steps use another one is not
// saved. Primitives are found by name in a table of every primitive instance (primitives()).

namespace {

constexpr int kVersion = 1;

// name -> the primitive's single instance, built on first use.
const std::unordered_map<std::string, const Primitive*>& primitives() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, const Primitive*>();
    auto add = [t](const Primitive& p) {
      auto [it, fresh] = t->emplace(p.name(), &p);
      if (!fresh && it->second != &p)
        throw_error<RuntimeError>("nn.Graph", "two primitives are named ", p.name());
    };
    // clang-format off
#define OF_ADD(fn) add(prim::fn());
    OF_ADD(attention) OF_ADD(attention_grad) OF_ADD(conv_forward) OF_ADD(conv_backward_data)
    OF_ADD(conv_backward_weight) OF_ADD(max_pool) OF_ADD(max_pool_grad) OF_ADD(avg_pool)
    OF_ADD(avg_pool_grad) OF_ADD(adaptive_avg_pool) OF_ADD(adaptive_avg_pool_grad)
    OF_ADD(adaptive_max_pool) OF_ADD(pad) OF_ADD(pad_grad) OF_ADD(pair_loss) OF_ADD(pair_loss_grad)
    OF_ADD(nll_loss) OF_ADD(nll_loss_grad) OF_ADD(resample) OF_ADD(resample_grad) OF_ADD(add)
    OF_ADD(sub) OF_ADD(mul) OF_ADD(relu) OF_ADD(relu_grad) OF_ADD(unary_grad) OF_ADD(div)
    OF_ADD(pow) OF_ADD(where) OF_ADD(vector_norm2) OF_ADD(cumsum) OF_ADD(mode) OF_ADD(inverse)
    OF_ADD(det) OF_ADD(cumprod) OF_ADD(sort) OF_ADD(flip) OF_ADD(triangle) OF_ADD(gather)
    OF_ADD(adam_update) OF_ADD(layer_norm) OF_ADD(batch_norm) OF_ADD(batch_norm_grad)
    OF_ADD(batch_norm_inference) OF_ADD(log_softmax) OF_ADD(log_softmax_grad)
    OF_ADD(layer_norm_grad) OF_ADD(group_norm) OF_ADD(group_norm_grad) OF_ADD(sgd_update)
    OF_ADD(scatter) OF_ADD(cat) OF_ADD(search_sorted) OF_ADD(histc) OF_ADD(exp) OF_ADD(gelu)
    OF_ADD(gelu_grad) OF_ADD(softmax) OF_ADD(softmax_grad) OF_ADD(reduce_sum) OF_ADD(matmul)
    OF_ADD(copy) OF_ADD(fill) OF_ADD(random_normal) OF_ADD(permute) OF_ADD(expand) OF_ADD(view)
    OF_ADD(slice) OF_ADD(as_strided) OF_ADD(as_strided_grad) OF_ADD(bernoulli) OF_ADD(squeeze)
    OF_ADD(unsqueeze) OF_ADD(slice_grad) OF_ADD(assign) OF_ADD(strided_assign) OF_ADD(arange)
    OF_ADD(index_gather) OF_ADD(index_put) OF_ADD(random_uniform) OF_ADD(dot) OF_ADD(trace)
    OF_ADD(outer) OF_ADD(one_hot) OF_ADD(bincount) OF_ADD(cross) OF_ADD(split)
    OF_ADD(check_index_range) OF_ADD(lstm_cell) OF_ADD(lstm_cell_grad) OF_ADD(lstm_layer)
    OF_ADD(lstm_layer_grad) OF_ADD(gru_layer) OF_ADD(gru_layer_grad)
#undef OF_ADD
#define OF_ADD_FN(family, Enum, E) add(prim::family<Enum::k##E>());
#define OF_ADD_UNARY(E, n) OF_ADD_FN(unary, UnaryFn, E)
    OF_UNARY_FNS(OF_ADD_UNARY)
#undef OF_ADD_UNARY
#define OF_ADD_BINARY(E, n) OF_ADD_FN(binary, BinaryFn, E)
    OF_BINARY_FNS(OF_ADD_BINARY)
#undef OF_ADD_BINARY
#define OF_ADD_COMPARE(E, n) OF_ADD_FN(compare, CompareFn, E)
    OF_COMPARE_FNS(OF_ADD_COMPARE)
#undef OF_ADD_COMPARE
#define OF_ADD_ACTIVATION(E, n) \
  OF_ADD_FN(activation, ActFn, E) OF_ADD_FN(activation_grad, ActFn, E)
    OF_ACTIVATION_FNS(OF_ADD_ACTIVATION)
#undef OF_ADD_ACTIVATION
#define OF_ADD_DIFF(E, n) OF_ADD_FN(activation_of_difference, ActFn, E)
    OF_DIFF_ACTIVATION_FNS(OF_ADD_DIFF)
#undef OF_ADD_DIFF
    OF_ADD_FN(reduce, ReduceFn, Prod) OF_ADD_FN(reduce, ReduceFn, Max)
    OF_ADD_FN(reduce, ReduceFn, Min) OF_ADD_FN(arg_reduce, ReduceFn, Max)
    OF_ADD_FN(arg_reduce, ReduceFn, Min) OF_ADD_FN(cum_extreme, ReduceFn, Max)
    OF_ADD_FN(cum_extreme, ReduceFn, Min) OF_ADD_FN(ternary, TernaryFn, Addcmul)
    OF_ADD_FN(ternary, TernaryFn, Addcdiv) OF_ADD_FN(ternary, TernaryFn, Lerp)
#undef OF_ADD_FN
        // clang-format on
        // and every other primitive the registry lists (those above are the ones it does not)
        for (const Primitive* p : all_primitives()) add(*p);
    return t;
  }();
  return *table;
}

[[noreturn]] void bad_file(const std::string& why) {
  throw_error<ValueError>("nn.Graph", "cannot load the saved graph: ", why);
}

DType dtype_named(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
  bad_file(str_cat("unknown dtype '", name, "'"));
}

constexpr int64_t kHuge = std::numeric_limits<int64_t>::max() / 4;

// Elements a layout reaches past its offset (0 for an empty one; kHuge or more when that
// overflows); strides are non-negative.
int64_t extent(const TensorMeta& m) {
  int64_t last = 0;
  for (size_t i = 0; i < m.shape.size(); ++i) {
    if (m.shape[i] == 0) return 0;
    int64_t step = 0;
    if (__builtin_mul_overflow(m.shape[i] - 1, m.strides[i], &step) ||
        __builtin_add_overflow(last, step, &last) || last >= kHuge)
      return kHuge;
  }
  return last + 1;
}

// Elements of memory a layout reaches from the start of its storage.
int64_t span(const TensorMeta& m) { return m.offset + extent(m); }

// Whether some element of a layout is reached by two indices (a broadcast view).
bool overlapping(const TensorMeta& m) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims of size > 1
  for (size_t i = 0; i < m.shape.size(); ++i) {
    if (m.shape[i] == 0) return false;
    if (m.shape[i] > 1) dims.emplace_back(m.strides[i], m.shape[i]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 1;  // elements the smaller dims span
  for (const auto& [stride, size] : dims) {
    if (stride < reach) return true;
    reach = stride * (size - 1) + reach;
  }
  return false;
}

// Whether a layout is dense (no element twice, no gap) from offset 0: how kernels' outputs are
// allocated.
bool dense_layout(const TensorMeta& m) {
  int64_t elements = 1;
  for (int64_t d : m.shape) elements *= d;
  return m.offset == 0 && (elements == 0 || (!overlapping(m) && extent(m) == elements));
}

void to_proto(const TensorMeta& m, proto::TensorMeta* p) {
  for (int64_t d : m.shape) p->add_shape(d);
  for (int64_t s : m.strides) p->add_strides(s);
  p->set_offset(m.offset);
  p->set_dtype(dtype_name(m.dtype));
  p->set_device(m.device.str());
}

TensorMeta from_proto(const proto::TensorMeta& p) {
  TensorMeta m;
  m.shape.assign(p.shape().begin(), p.shape().end());
  m.strides.assign(p.strides().begin(), p.strides().end());
  if (m.shape.size() != m.strides.size()) bad_file("a layout's shape and strides differ in rank");
  m.offset = p.offset();
  int64_t elements = 1;
  for (size_t i = 0; i < m.shape.size(); ++i) {
    if (m.shape[i] < 0 || m.strides[i] < 0) bad_file("a layout with a negative size or stride");
    if (__builtin_mul_overflow(elements, m.shape[i], &elements) || elements >= kHuge)
      bad_file("a layout of too many elements");
  }
  if (m.offset < 0 || m.offset >= kHuge || extent(m) >= kHuge - m.offset)
    bad_file("a layout with a negative or huge offset or extent");
  m.dtype = dtype_named(p.dtype());
  m.device = Device::parse(p.device());
  return m;
}

void to_proto(const AttrValue& v, proto::AttrValue* p) {
  std::visit(
      [p](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          p->set_i(x);
        } else if constexpr (std::is_same_v<T, double>) {
          p->set_f(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          p->set_b(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          p->set_s(x);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          for (int64_t e : x) p->mutable_ints()->add_values(e);
        } else {
          p->set_dtype(dtype_name(x));
        }
      },
      v);
}

AttrValue from_proto(const proto::AttrValue& p) {
  switch (p.value_case()) {
    case proto::AttrValue::kI:
      return p.i();
    case proto::AttrValue::kF:
      return p.f();
    case proto::AttrValue::kB:
      return p.b();
    case proto::AttrValue::kS:
      return p.s();
    case proto::AttrValue::kInts:
      return std::vector<int64_t>(p.ints().values().begin(), p.ints().values().end());
    case proto::AttrValue::kDtype:
      return dtype_named(p.dtype());
    default:
      bad_file("an attribute without a value");
  }
}

using Variables = std::vector<std::pair<std::string, Tensor>>;

}  // namespace

std::string save_graph(const CompiledGraph& g, const Variables& variables) {
  std::unordered_map<const TensorImpl*, const std::string*> names;
  std::unordered_map<const Storage*, const std::string*> storages;
  for (const auto& [name, t] : variables)
    if (t) {
      names.emplace(t.get(), &name);
      storages.emplace(t->storage().get(), &name);
    }
  if (!g.current())
    throw_error<ValueError>("nn.Graph",
                            "the compiled plan is out of date: a tensor it captured "
                            "changed its dtype or layout since it was traced");
  proto::Graph p;
  p.set_version(kVersion);
  for (const Value& v : g.values_) {
    proto::Value* pv = p.add_values();
    pv->set_kind(v.kind == Value::Kind::kInput     ? proto::Value::INPUT
                 : v.kind == Value::Kind::kCapture ? proto::Value::CAPTURE
                                                   : proto::Value::MADE);
    to_proto(v.meta, pv->mutable_meta());
    pv->set_root(v.root);
    if (v.kind != Value::Kind::kCapture) continue;
    if (auto it = names.find(v.captured.get()); it != names.end()) {
      pv->set_variable(*it->second);
      continue;
    }
    if (auto it = storages.find(v.captured->storage().get()); it != storages.end()) {
      // another layout of a variable's memory (a slice a module keeps): a view of it
      pv->set_variable(*it->second);
      pv->set_variable_view(true);
      continue;
    }
    // A constant: the memory it and the values viewing it reach, through the host; its
    // offset is rebased to the first element kept.
    int64_t first = v.meta.offset, end = span(v.meta);
    for (const Value& w : g.values_)
      if (&g.values_[w.root] == &v && extent(w.meta) > 0) {
        first = std::min(first, w.meta.offset);
        end = std::max(end, span(w.meta));
      }
    const int64_t n = end - first;
    const Tensor flat = make_view(v.captured, {n}, {1}, first);
    const Tensor host = functional::to(flat, std::nullopt, Device{}, true);
    pv->set_constant(static_cast<const char*>(host->data()), n * itemsize(v.meta.dtype));
    pv->set_constant_elements(n);
    pv->mutable_meta()->set_offset(v.meta.offset - first);
  }
  for (const Step& s : g.steps_) {
    proto::Step* ps = p.add_steps();
    ps->set_kind(s.kind == Step::Kind::kView ? proto::Step::VIEW : proto::Step::KERNEL);
    if (s.collective)
      throw_error<NotImplementedError>("nn.Graph", "saving a graph with collectives (",
                                       s.prim->name(),
                                       ": a graph on global tensors over several processes)");
    if (s.kind == Step::Kind::kKernel) {
      ps->set_primitive(s.prim->name());
      for (const auto& [key, value] : s.attrs.items())
        to_proto(value, &(*ps->mutable_attrs())[key]);
      ps->set_device(s.device.str());
    }
    for (int v : s.inputs) ps->add_inputs(v);
    for (int v : s.outputs) ps->add_outputs(v);
    ps->set_in_place(s.in_place);
    ps->set_offset_delta(s.offset_delta);
    if (s.generator) {
      if (s.generator != default_generator(s.device))
        throw_error<NotImplementedError>(
            "nn.Graph", "saving a graph whose ", s.prim->name(),
            " draws from a generator other than its device's default one");
      ps->set_random(true);
      ps->set_counters(s.counters);
    }
    for (int v : s.release) ps->add_release(v);
  }
  for (int v : g.inputs_) p.add_inputs(v);
  for (int v : g.outputs_) p.add_outputs(v);
  p.set_traced_steps(static_cast<int64_t>(g.traced_steps_));
  std::string bytes;
  if (!p.SerializeToString(&bytes))
    throw_error<RuntimeError>("nn.Graph", "could not serialize the graph");
  return bytes;
}

// Note [Checking a loaded program]: the kernels trust the metas and operands the program gives
// them, so a program read from a file is checked before it can run: every step reads values
// that exist at that point (inputs, captures, made by an earlier step and not yet released),
// makes each value once, makes kernel outputs of the dense layouts kernels are given and of the
// shape, dtype and device the primitive infers from its inputs' metas, and views memory within
// what its base's memory holds (a made value: its allocation; a capture: its storage; an input:
// its own layout), and writes in place only through views that reach each element once. Before
// the checks, kernels other than the elementwise ones get dense copies of broadcast operands
// (dense_broadcast_operands). Limit: a primitive whose inference does not check its input count
// trusts it. Load programs from trusted sources, as model files.
void validate(const CompiledGraph& g) {
  const std::vector<Value>& values = g.values_;
  const size_t n = values.size();
  std::vector<char> defined(n, 0), listed(n, 0);
  std::vector<int64_t> rel(n, 0), lo(n, 0), hi(n, 0);  // offsets relative to the root's offset
  for (int v : g.inputs_) {
    if (values[v].kind != Value::Kind::kInput || listed[v])
      bad_file("a graph input that is not an input value, or listed twice");
    listed[v] = 1;
  }
  for (size_t v = 0; v < n; ++v) {
    const Value& val = values[v];
    if (val.kind == Value::Kind::kMade) continue;
    if (val.root != static_cast<int>(v)) bad_file("an input or capture that views another value");
    if (val.kind == Value::Kind::kInput && !listed[v])
      bad_file("an input value that is not an input of the graph");
    defined[v] = 1;
    hi[v] = extent(val.meta);
    if (val.kind == Value::Kind::kCapture) {
      const int64_t held =
          static_cast<int64_t>(val.captured->storage()->nbytes() / itemsize(val.captured->dtype()));
      lo[v] = -val.captured->offset();
      hi[v] = held - val.captured->offset();
    }
  }
  auto step_error = [](size_t i, const Step& s, const char* what) {
    bad_file(str_cat("step ", i, " (", s.kind == Step::Kind::kView ? "view" : s.prim->name(), ") ",
                     what));
  };
  for (size_t i = 0; i < g.steps_.size(); ++i) {
    const Step& s = g.steps_[i];
    for (int v : s.inputs)
      if (!defined[v]) step_error(i, s, "reads a value before it is made or after it is released");
    auto fresh = [&](int v) {
      if (values[v].kind != Value::Kind::kMade || defined[v])
        step_error(i, s, "makes a value that is not new");
      defined[v] = 1;
    };
    if (s.kind == Step::Kind::kView) {
      const int in = s.inputs[0], out = s.outputs[0];
      fresh(out);
      const TensorMeta &base = values[in].meta, &view = values[out].meta;
      const int root = values[in].root;
      if (values[out].root != root || view.dtype != base.dtype || view.device != base.device)
        step_error(i, s, "views another value's memory or dtype");
      rel[out] = rel[in] + s.offset_delta;
      const int64_t reach = extent(view);
      if (reach > 0 && (rel[out] < lo[root] || rel[out] > hi[root] - reach))
        step_error(i, s, "views memory outside its base");
    } else {
      if (s.in_place) {
        if (!defined[s.outputs[0]]) step_error(i, s, "writes a value that does not exist");
        if (overlapping(values[s.outputs[0]].meta))
          step_error(i, s, "writes in place through a view that reaches an element twice");
      } else {
        for (int v : s.outputs) {
          fresh(v);
          if (values[v].root != v || !dense_layout(values[v].meta))
            step_error(i, s, "makes a value of a layout its kernel cannot fill");
          hi[v] = extent(values[v].meta);
        }
      }
      if (!s.prim->traits().cross_device)
        for (const std::vector<int>* list : {&s.inputs, &s.outputs})
          for (int v : *list)
            if (values[v].meta.device != s.device)
              step_error(i, s, "has an operand on another device than its kernel");
      // What the primitive makes of these inputs: the outputs it writes (in place too), none
      // for the fused updates (their checks run here).
      TensorList metas;
      for (int v : s.inputs)
        metas.push_back(std::make_shared<TensorImpl>(values[v].meta, nullptr,
                                                     std::make_shared<VersionCounter>()));
      std::vector<TensorMeta> inferred;
      try {
        inferred = s.prim->infer(metas, s.attrs);
      } catch (const std::exception& e) {
        step_error(i, s, str_cat("does not fit its inputs: ", e.what()).c_str());
      }
      // (An in-place result may narrow into its destination's dtype: float32 += float64.)
      bool same = inferred.size() == s.outputs.size();
      for (size_t k = 0; same && k < inferred.size(); ++k) {
        const TensorMeta& m = values[s.outputs[k]].meta;
        same = inferred[k].shape == m.shape && inferred[k].device == m.device &&
               (s.in_place || inferred[k].dtype == m.dtype);
      }
      if (!same) step_error(i, s, "makes outputs other than its primitive infers");
    }
    for (int v : s.release) {
      if (values[v].kind != Value::Kind::kMade || !defined[v])
        step_error(i, s, "releases a value that is not a live value it made");
      defined[v] = 0;
    }
  }
  for (int v : g.outputs_)
    if (!defined[v]) bad_file("a graph output that is never made or is released");
}

// A loaded program's kernels other than the elementwise ones (which index every operand
// through its strides) get broadcast views (one element reached by several indices) as dense
// copies, made by a copy step just before: a kernel that reads its operand as contiguous then
// stays inside its memory. Traced programs give such kernels broadcast views rarely (a sum of an
// expanded tensor); the values are the same either way.
void dense_broadcast_operands(CompiledGraph& g) {
  std::vector<Step> steps;
  steps.reserve(g.steps_.size());
  for (Step& s : g.steps_) {
    if (s.kind == Step::Kind::kKernel && !s.prim->traits().elementwise &&
        !s.prim->traits().cross_device) {
      for (int& in : s.inputs) {
        if (in < 0 || in >= static_cast<int>(g.values_.size()) || !overlapping(g.values_[in].meta))
          continue;
        const TensorMeta m = g.values_[in].meta;
        const int id = static_cast<int>(g.values_.size());
        Value dense;
        dense.meta = TensorMeta{m.shape, contiguous_strides(m.shape), 0, m.dtype, m.device};
        dense.root = id;
        g.values_.push_back(std::move(dense));
        Step copy;
        copy.prim = &prim::copy();
        copy.attrs = Attrs{{"dtype", m.dtype}, {"device", m.device.str()}};
        copy.device = m.device;
        copy.inputs = {in};
        copy.outputs = {id};
        steps.push_back(std::move(copy));
        s.release.push_back(id);
        in = id;
      }
    }
    steps.push_back(std::move(s));
  }
  g.steps_ = std::move(steps);
}

std::shared_ptr<CompiledGraph> load_graph(const std::string& bytes, const Variables& variables) {
  proto::Graph p;
  if (!p.ParseFromString(bytes)) bad_file("not a serialized oneflow.graph.proto.Graph");
  if (p.version() != kVersion)
    bad_file(str_cat("it has version ", p.version(), ", this build reads version ", kVersion));
  std::unordered_map<std::string, Tensor> by_name;
  for (const auto& [name, t] : variables) by_name.emplace(name, t);
  auto g = std::make_shared<CompiledGraph>();
  const int nvalues = p.values_size();
  auto check_id = [nvalues](int v) {
    if (v < 0 || v >= nvalues) bad_file(str_cat("a step names value ", v));
    return v;
  };
  for (const proto::Value& pv : p.values()) {
    Value v;
    v.kind = pv.kind() == proto::Value::INPUT     ? Value::Kind::kInput
             : pv.kind() == proto::Value::CAPTURE ? Value::Kind::kCapture
                                                  : Value::Kind::kMade;
    v.meta = from_proto(pv.meta());
    v.root = check_id(pv.root());
    if (v.kind == Value::Kind::kCapture && !pv.variable().empty()) {
      auto it = by_name.find(pv.variable());
      if (it == by_name.end() || !it->second)
        throw_error<ValueError>("nn.Graph", "the saved graph uses the variable '", pv.variable(),
                                "', which this graph does not have");
      const TensorImpl& t = *it->second;
      const TensorMeta& m = v.meta;
      if (pv.variable_view()) {
        if (t.dtype() != m.dtype || t.device() != m.device ||
            static_cast<size_t>(span(m)) * itemsize(m.dtype) > t.storage()->nbytes())
          throw_error<ValueError>("nn.Graph", "the saved graph views the memory of the variable '",
                                  pv.variable(), "' as ", dtype_name(m.dtype), shape_str(m.shape),
                                  " on ", m.device.str(), ", which this graph's '", pv.variable(),
                                  "' (", dtype_name(t.dtype()), ", ", t.storage()->nbytes(),
                                  " bytes on ", t.device().str(), ") cannot hold");
        v.captured = make_view(it->second, m.shape, m.strides, m.offset);
        g->values_.push_back(std::move(v));
        continue;
      }
      if (t.dtype() != m.dtype || t.device() != m.device || t.shape() != m.shape ||
          t.strides() != m.strides || t.offset() != m.offset)
        throw_error<ValueError>("nn.Graph", "the variable '", pv.variable(), "' is ",
                                dtype_name(t.dtype()), shape_str(t.shape()), " on ",
                                t.device().str(), "; the saved graph has it as ",
                                dtype_name(m.dtype), shape_str(m.shape), " on ", m.device.str(),
                                " (with the same strides and offset)");
      v.captured = it->second;
    } else if (v.kind == Value::Kind::kCapture) {
      // The program owns it: the memory saved, its offset rebased into it.
      const int64_t n = pv.constant_elements();
      if (n < span(v.meta) ||
          pv.constant().size() != static_cast<size_t>(n) * itemsize(v.meta.dtype))
        bad_file("a constant's bytes do not fit its layout");
      Tensor host = empty_tensor({n}, v.meta.dtype, Device{});
      std::memcpy(host->data(), pv.constant().data(), pv.constant().size());
      const Tensor flat = functional::to(host, std::nullopt, v.meta.device, false);
      v.captured = make_view(flat, v.meta.shape, v.meta.strides, v.meta.offset);
    }
    g->values_.push_back(std::move(v));
  }
  const auto& table = primitives();
  for (const proto::Step& ps : p.steps()) {
    Step s;
    s.kind = ps.kind() == proto::Step::VIEW ? Step::Kind::kView : Step::Kind::kKernel;
    if (s.kind == Step::Kind::kKernel) {
      auto it = table.find(ps.primitive());
      if (it == table.end()) bad_file(str_cat("unknown primitive '", ps.primitive(), "'"));
      s.prim = it->second;
      for (const auto& [key, value] : ps.attrs()) s.attrs.set(key, from_proto(value));
      s.device = Device::parse(ps.device());
    }
    for (int v : ps.inputs()) s.inputs.push_back(check_id(v));
    for (int v : ps.outputs()) s.outputs.push_back(check_id(v));
    if (s.kind == Step::Kind::kView && (s.inputs.size() != 1 || s.outputs.size() != 1))
      bad_file("a view step without one input and one output");
    if (s.in_place = ps.in_place(); s.in_place && s.outputs.size() != 1)
      bad_file("an in-place step without one output");
    s.offset_delta = ps.offset_delta();
    if (ps.random()) {
      s.generator = default_generator(s.device);
      s.counters = ps.counters();
    }
    for (int v : ps.release()) s.release.push_back(check_id(v));
    g->steps_.push_back(std::move(s));
  }
  for (int v : p.inputs()) g->inputs_.push_back(check_id(v));
  for (int v : p.outputs()) g->outputs_.push_back(check_id(v));
  if (p.traced_steps() < 0) bad_file("a negative count of traced steps");
  g->traced_steps_ = static_cast<size_t>(p.traced_steps());
  dense_broadcast_operands(*g);
  validate(*g);
  g->plan_one_instruction();
  return g;
}

std::vector<std::string> graph_variables(const std::string& bytes) {
  proto::Graph p;
  if (!p.ParseFromString(bytes)) bad_file("not a serialized oneflow.graph.proto.Graph");
  std::vector<std::string> names;
  for (const proto::Value& v : p.values())
    if (!v.variable().empty() && std::find(names.begin(), names.end(), v.variable()) == names.end())
      names.push_back(v.variable());
  return names;
}

std::string graph_text(const std::string& bytes) {
  proto::Graph p;
  if (!p.ParseFromString(bytes)) bad_file("not a serialized oneflow.graph.proto.Graph");
  // Constants print as their size only.
  for (proto::Value& v : *p.mutable_values())
    if (!v.constant().empty()) v.set_constant(str_cat("<", v.constant().size(), " bytes>"));
  std::string text;
  google::protobuf::TextFormat::PrintToString(p, &text);
  return text;
}

}  // namespace oneflow::graph
