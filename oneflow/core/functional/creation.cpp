// Functional creation ops (full, zeros, ones, the random factories, arange, linspace) and the
// random generators that seed them; split from functional.cpp.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/common/philox.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/functional/autocast.h"
#include "oneflow/core/functional/complex.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/functional/generators.h"
#include "oneflow/core/functional/ternary.h"
#include "oneflow/core/graph/graph.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace functional {

namespace {
std::string device_str(Device d) { return d.str(); }
}  // namespace

// ---- creation ----

namespace {
Attrs creation_attrs(const Shape& shape, const CreationOptions& opts) {
  for (int64_t d : shape)
    if (d < 0)
      throw_error<RuntimeError>("empty", "trying to create tensor with negative dimension ", d,
                                ": ", shape_str(shape));
  return Attrs{{"shape", shape},
               {"dtype", opts.dtype},
               {"device", device_str(opts.device)},
               {"placement", opts.placement}};
}
}  // namespace

Tensor full(const Shape& shape, Scalar value, const CreationOptions& opts) {
  if (is_complex(opts.dtype)) [[unlikely]]
    return complex_ops::full(shape, value, opts);
  Attrs attrs = creation_attrs(shape, opts);
  attrs.set("value", value.to_double());
  // An integer is kept exact too: a double holds integers only up to 2**53.
  if (value.kind != Scalar::Kind::kFloat) attrs.set("int_value", value.i);
  return dispatch1(prim::fill(), {}, attrs);
}

// Memory with unspecified values, as PyTorch's empty: no kernel runs, so nothing is queued (a
// buffer for a collective's output does not wait behind the CPU ops queued so far). Where the
// tensor must be an op (traced into a graph), global, complex or on the meta device, zeros.
Tensor empty(const Shape& shape, const CreationOptions& opts) {
  if (graph::tracing() || !opts.placement.empty() || is_complex(opts.dtype) ||
      opts.device.type == DeviceType::kMeta)
    return zeros(shape, opts);
  return empty_tensor(shape, opts.dtype, opts.device);
}

Tensor zeros(const Shape& shape, const CreationOptions& opts) {
  return full(shape, Scalar::from_int(0), opts);
}

Tensor ones(const Shape& shape, const CreationOptions& opts) {
  return full(shape, Scalar::from_int(1), opts);
}

// Of a global x: a global tensor on x's placement; zeros keep x's sbp, ones keep a split and
// are broadcast otherwise (ones as partial sums would add up to the number of ranks).
Tensor zeros_like(const Tensor& x) {
  if (x->global()) {
    const GlobalMeta& g = *x->global();
    return global::make(zeros_like(g.local), g.placement, g.layout(), x->shape());
  }
  return zeros(x->shape(), CreationOptions{x->dtype(), x->device(), ""});
}

Tensor ones_like(const Tensor& x) {
  if (x->global()) {
    const GlobalMeta& g = *x->global();
    const CreationOptions opts{x->dtype(), g.local->device(), ""};  // meta where absent
    NdSbp nd = g.layout();  // splits kept, partial sums broadcast
    for (Sbp& s : nd)
      if (s.kind == Sbp::kPartialSum) s = Sbp::broadcast();
    return global::make(ones(global::local_shape(x->shape(), nd, g.placement), opts), g.placement,
                        nd, x->shape());
  }
  return ones(x->shape(), CreationOptions{x->dtype(), x->device(), ""});
}

namespace {
// Seed and counter block of a random op drawing `n` numbers: four per counter, two for float64
// results (uniform and normal draws take 64 bits per element there).
void set_random_attrs(Attrs& attrs, int64_t n, const CreationOptions& opts) {
  const std::shared_ptr<Generator> gen =
      opts.generator ? opts.generator : default_generator(opts.device);
  const auto [seed, unused] = gen->state();
  (void)unused;
  const uint64_t counters = opts.dtype == DType::kFloat64 ? static_cast<uint64_t>(n + 1) / 2
                                                          : static_cast<uint64_t>(n + 3) / 4;
  const uint64_t offset = gen->reserve(counters);
  attrs.set("seed", static_cast<int64_t>(seed));
  attrs.set("offset", static_cast<int64_t>(offset));
  graph::record_random(gen, seed, offset, counters);
}
}  // namespace

Tensor normal(double mean, double std, const Shape& shape, const CreationOptions& opts) {
  if (std < 0) throw_error<RuntimeError>("normal", "expects std >= 0.0, but found std ", std);
  Attrs attrs = creation_attrs(shape, opts);
  attrs.set("mean", mean);
  attrs.set("std", std);
  set_random_attrs(attrs, numel(shape), opts);
  return dispatch1(prim::random_normal(), {}, attrs);
}

Tensor bernoulli(const Tensor& p, const std::shared_ptr<Generator>& generator) {
  Attrs a;
  CreationOptions opts{p->dtype(), p->device(), "", generator};
  set_random_attrs(a, p->numel(), opts);
  return dispatch1(prim::bernoulli(), {contiguous(p)}, a);
}

namespace {
// Uniform doubles in [0, 1) drawn on the host from a generator's Philox stream.
// `device` is the one the result goes to: its default generator serves when none is given.
std::vector<double> host_uniforms(int64_t n, const std::shared_ptr<Generator>& generator,
                                  const Device& device) {
  graph::check_not_tracing("drawing random numbers on the host (randperm, multinomial)");
  const std::shared_ptr<Generator> gen = generator ? generator : default_generator(device);
  const uint64_t seed = gen->state().first, offset = gen->reserve((n + 3) / 4);
  Philox4x32 philox(seed);
  std::vector<double> u(n);
  for (int64_t c = 0; c < (n + 3) / 4; ++c) {
    uint32_t r[4];
    philox(offset + static_cast<uint64_t>(c), r);
    for (int64_t k = 0; k < 4 && 4 * c + k < n; ++k) u[4 * c + k] = (r[k] >> 8) / 16777216.0;
  }
  return u;
}
}  // namespace

// randperm and multinomial are sequential by nature; they run on the host and the result moves
// to the requested device.
Tensor randperm(int64_t n, const CreationOptions& opts) {
  if (n < 0) throw_error<RuntimeError>("randperm", "n must be non-negative, got ", n);
  std::vector<double> u = host_uniforms(n, opts.generator, opts.device);
  Tensor t = empty_tensor({n}, DType::kInt64, Device{});
  int64_t* p = t->data_as<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = n - 1; i > 0; --i)  // Fisher-Yates
    std::swap(p[i], p[static_cast<int64_t>(u[i] * static_cast<double>(i + 1))]);
  return to(t, opts.dtype, opts.device);
}

Tensor multinomial(const Tensor& weights, int64_t num_samples, bool replacement,
                   const std::shared_ptr<Generator>& generator) {
  if (weights->ndim() < 1 || weights->ndim() > 2)
    throw_error<RuntimeError>("multinomial", "prob_dist must be 1 or 2 dim, got ", weights->ndim());
  if (!is_floating(weights->dtype()))
    throw_error<RuntimeError>("multinomial",
                              "expected a floating point input (probabilities), got ",
                              dtype_name(weights->dtype()));
  const int64_t rows = weights->ndim() == 2 ? weights->shape()[0] : 1;
  const int64_t cats = weights->shape().back();
  if (!replacement && num_samples > cats)
    throw_error<RuntimeError>("multinomial", "cannot sample n_sample (", num_samples,
                              ") > prob_dist.size(-1) (", cats, ") samples without replacement");
  if (weights->global()) {
    // Every process draws from the whole probabilities; the first rank's draws are kept
    // (generators may differ between processes).
    const Placement& p = weights->global()->placement;
    const Tensor local =
        multinomial(global::whole_value(weights), num_samples, replacement, generator);
    const Shape shape = local->shape();
    return global::from_local(to(local, DType::kInt64, global::local_device(p)), p,
                              Sbp::broadcast(), false, true, &shape);
  }
  if (weights->device().type == DeviceType::kMeta)  // no probabilities to draw from
    return empty_tensor(weights->ndim() == 2 ? Shape{rows, num_samples} : Shape{num_samples},
                        DType::kInt64, weights->device());
  Tensor w = contiguous(to(weights, DType::kFloat64, Device{}));
  const double* wp = w->data_as<double>();
  std::vector<double> u = host_uniforms(rows * num_samples, generator, weights->device());
  Tensor out = empty_tensor({rows, num_samples}, DType::kInt64, Device{});
  int64_t* o = out->data_as<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(wp + r * cats, wp + (r + 1) * cats);
    for (double v : row)
      if (v < 0 || !std::isfinite(v))
        throw_error<RuntimeError>("multinomial",
                                  "probability tensor contains either inf, nan "
                                  "or element < 0");
    std::vector<bool> taken(cats, false);
    for (int64_t s = 0; s < num_samples; ++s) {
      double total = 0;
      for (double v : row) total += v;
      if (total <= 0 && (s == 0 || replacement))
        throw_error<RuntimeError>("multinomial",
                                  "invalid multinomial distribution (sum of "
                                  "probabilities <= 0)");
      if (total <= 0) {
        // Without replacement, once every category of positive weight is drawn the rest are
        // the zero-weight ones (as PyTorch), here in index order.
        int64_t next = 0;
        while (taken[next]) ++next;
        o[r * num_samples + s] = next;
        taken[next] = true;
        continue;
      }
      double target = u[r * num_samples + s] * total, acc = 0;
      int64_t pick = cats - 1;
      for (int64_t c = 0; c < cats; ++c) {
        acc += row[c];
        if (target < acc && row[c] > 0) {
          pick = c;
          break;
        }
      }
      o[r * num_samples + s] = pick;
      taken[pick] = true;
      if (!replacement) row[pick] = 0;
    }
  }
  if (weights->ndim() == 1) out = reshape(out, {num_samples});
  return to(out, std::nullopt, weights->device());
}

Tensor randn(const Shape& shape, const CreationOptions& opts) {
  if (is_complex(opts.dtype)) [[unlikely]]
    return complex_ops::randn(shape, opts);
  return normal(0.0, 1.0, shape, opts);
}

Tensor rand(const Shape& shape, const CreationOptions& opts) {
  if (is_complex(opts.dtype)) [[unlikely]]
    return complex_ops::rand(shape, opts);
  if (!is_floating(opts.dtype))
    throw_error<NotImplementedError>("rand", "expected a floating point dtype, got ",
                                     dtype_name(opts.dtype));
  Attrs attrs = creation_attrs(shape, opts);
  attrs.set("low", 0.0);
  attrs.set("high", 1.0);
  set_random_attrs(attrs, numel(shape), opts);
  return dispatch1(prim::random_uniform(), {}, attrs);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, const CreationOptions& opts) {
  if (low >= high)
    throw_error<RuntimeError>("randint",
                              "random_ expects 'from' to be less than 'to', but got "
                              "from=",
                              low, " >= to=", high);
  if (high - low > (int64_t(1) << 32))
    throw_error<ValueError>("randint", "range [low, high) wider than 2**32 is not supported yet");
  if (is_floating(opts.dtype)) {  // integers in a floating dtype, as PyTorch
    CreationOptions as_int = opts;
    as_int.dtype = DType::kInt64;
    return to(randint(low, high, shape, as_int), opts.dtype, std::nullopt);
  }
  Attrs attrs = creation_attrs(shape, opts);
  attrs.set("low", static_cast<double>(low));
  attrs.set("high", static_cast<double>(high));
  set_random_attrs(attrs, numel(shape), opts);
  return dispatch1(prim::random_uniform(), {}, attrs);
}

Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype, Device device) {
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  if (st == 0) throw_error<RuntimeError>("arange", "step must be nonzero");
  if ((st > 0 && e < s) || (st < 0 && e > s))
    throw_error<RuntimeError>("arange", "upper bound and larger bound inconsistent with step sign");
  const bool integral = start.kind != Scalar::Kind::kFloat && end.kind != Scalar::Kind::kFloat &&
                        step.kind != Scalar::Kind::kFloat;
  const DType dt = dtype.value_or(integral ? DType::kInt64 : default_dtype());
  const int64_t n = static_cast<int64_t>(std::ceil((e - s) / st));
  return dispatch1(prim::arange(), {},
                   Attrs{{"n", std::max<int64_t>(n, 0)},
                         {"start", s},
                         {"step", st},
                         {"dtype", dt},
                         {"device", device_str(device)}});
}

Tensor linspace(double start, double end, int64_t steps, const CreationOptions& opts) {
  if (steps < 0) throw_error<RuntimeError>("linspace", "number of steps must be non-negative");
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  return dispatch1(prim::arange(), {},
                   Attrs{{"n", steps},
                         {"start", start},
                         {"step", step},
                         {"dtype", opts.dtype},
                         {"device", device_str(opts.device)}});
}

}  // namespace functional

Generator::Generator(uint64_t seed) : seed_(seed) {}

void Generator::manual_seed(uint64_t seed) {
  // A replay would not reseed: its draws would differ from the traced call's.
  graph::check_not_tracing("reseeding a generator (manual_seed)");
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seed_;
}

uint64_t Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t start = offset_;
  offset_ += n;
  return start;
}

std::pair<uint64_t, uint64_t> Generator::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {seed_, offset_};
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  graph::check_not_tracing("setting a generator's state (set_rng_state)");
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = offset;
}

namespace {
constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's

struct CudaGenerators {
  std::mutex mu;
  uint64_t seed = kDefaultSeed;  // for the generators made later
  // By device index; a map, so that an absurd index costs one entry.
  std::map<int, std::shared_ptr<Generator>> by_index;
};
CudaGenerators& cuda_generators() {
  static auto* g = new CudaGenerators();
  return *g;
}
}  // namespace

std::shared_ptr<Generator> default_generator() {
  static auto* gen = new std::shared_ptr<Generator>(std::make_shared<Generator>(kDefaultSeed));
  return *gen;
}

std::shared_ptr<Generator> default_generator(const Device& device) {
  if (device.type == DeviceType::kCPU) return default_generator();
  if (device.type == DeviceType::kMeta) {  // meta ops run no kernel: nothing draws from it
    static auto* meta = new std::shared_ptr<Generator>(std::make_shared<Generator>(kDefaultSeed));
    return *meta;
  }
  CudaGenerators& g = cuda_generators();
  std::lock_guard<std::mutex> lock(g.mu);
  std::shared_ptr<Generator>& gen = g.by_index[device.index];
  if (!gen) gen = std::make_shared<Generator>(g.seed);
  return gen;
}

void manual_seed(uint64_t seed) {
  default_generator()->manual_seed(seed);
  CudaGenerators& g = cuda_generators();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  for (const auto& [index, gen] : g.by_index) gen->manual_seed(seed);
}
uint64_t initial_seed() { return default_generator()->initial_seed(); }

}  // namespace oneflow
