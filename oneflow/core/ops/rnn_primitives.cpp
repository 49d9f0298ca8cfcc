// Meta inference, gradient and functional entry of the LSTM cell (rnn_primitives.h).
#include "oneflow/core/ops/rnn_primitives.h"

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/functional/split.h"

namespace oneflow {

namespace {
TensorMeta dense_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}

// Every operand contiguous, of in[0]'s dtype and device, of the shape `want` gives.
void check_shapes(const char* op, const TensorList& in, const std::vector<Shape>& want) {
  if (in.size() != want.size())
    throw_error<RuntimeError>(op, "expected ", want.size(), " tensors, got ", in.size());
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i]->shape() != want[i] || in[i]->dtype() != in[0]->dtype() ||
        in[i]->device() != in[0]->device() || !in[i]->is_contiguous())
      throw_error<RuntimeError>(op, "expected operand ", i, " to be a contiguous ",
                                dtype_name(in[0]->dtype()), shape_str(want[i]), " on ",
                                in[0]->device().str(), ", got ", dtype_name(in[i]->dtype()),
                                shape_str(in[i]->shape()), " on ", in[i]->device().str());
}

// A float32/float64 operand t of `ndim` dims whose last is `gates` H (a cell's (B, 4H), a
// layer's (T, B, 4H)): returns H.
int64_t check_gates(const char* op, const Tensor& t, int64_t ndim, int64_t gates) {
  const bool floating = t->dtype() == DType::kFloat32 || t->dtype() == DType::kFloat64;
  if (!floating || t->ndim() != ndim || t->shape().back() % gates != 0)
    throw_error<RuntimeError>(op, "expected a float32 or float64 tensor of ", ndim,
                              " dims whose last is ", gates, " times the hidden size, got ",
                              dtype_name(t->dtype()), shape_str(t->shape()));
  return t->shape().back() / gates;
}

// The cell from differentiable ops: the gates' activations and the new state.
struct CompositeCell {
  Tensor i, f, g, o, c2, h;
};
CompositeCell composite_cell(const Tensor& gi, const Tensor& gh, const Tensor& c) {
  namespace F = functional;
  const int64_t h = c->shape().back();
  CompositeCell r;
  const Tensor pre = F::add(gi, gh);
  r.i = F::unary(UnaryFn::kSigmoid, F::narrow(pre, 1, 0, h));
  r.f = F::unary(UnaryFn::kSigmoid, F::narrow(pre, 1, h, h));
  r.g = F::unary(UnaryFn::kTanh, F::narrow(pre, 1, 2 * h, h));
  r.o = F::unary(UnaryFn::kSigmoid, F::narrow(pre, 1, 3 * h, h));
  r.c2 = F::add(F::mul(r.f, c), F::mul(r.i, r.g));
  r.h = F::mul(r.o, F::unary(UnaryFn::kTanh, r.c2));
  return r;
}
}  // namespace

// Only the inputs are saved (the backward recomputes the gates from gi + gh): the cell's
// outputs may be changed in place before backward, as PyTorch's (states masked between steps).
PrimTraits LstmCell::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> LstmCell::infer(const TensorList& in, const Attrs&) const {
  if (in.empty()) throw_error<RuntimeError>(name(), "expected 3 tensors, got none");
  const int64_t h = check_gates(name(), in[0], 2, 4), b = in[0]->shape()[0];
  check_shapes(name(), in, {{b, 4 * h}, {b, 4 * h}, {b, h}});
  const TensorMeta& c = in[2]->meta();
  return {dense_meta(c.shape, c.dtype, c.device), dense_meta(c.shape, c.dtype, c.device)};
}

bool LstmCell::reads_saved_input(size_t, const std::vector<bool>&) const { return true; }

TensorList LstmCell::grad(const GradContext& ctx, const TensorList& dy) const {
  namespace F = functional;
  const Tensor &gi = ctx.inputs[0], &gh = ctx.inputs[1], &c = ctx.inputs[2];
  if (grad_mode_enabled()) {
    // create_graph: the same gradients from differentiable ops on the inputs, so that
    // second-order gradients reach gi, gh and c through them.
    const CompositeCell cell = composite_cell(gi, gh, c);
    const Tensor &i = cell.i, &f = cell.f, &g = cell.g, &o = cell.o;
    auto one = Scalar::from_int(1);
    auto dsigmoid = [&](const Tensor& s) { return F::mul(s, F::rsub(s, one)); };
    const Tensor tc = F::unary(UnaryFn::kTanh, cell.c2);
    const Tensor dc2 = F::add(dy[1], F::mul(F::mul(dy[0], o), F::rsub(F::mul(tc, tc), one)));
    const Tensor di = F::mul(F::mul(dc2, g), dsigmoid(i));
    const Tensor df = F::mul(F::mul(dc2, c), dsigmoid(f));
    const Tensor dg = F::mul(F::mul(dc2, i), F::rsub(F::mul(g, g), one));
    const Tensor d_o = F::mul(F::mul(dy[0], tc), dsigmoid(o));
    const Tensor dgates = F::cat({di, df, dg, d_o}, 1);
    return {dgates, dgates, F::mul(dc2, f)};
  }
  auto dense = [](const Tensor& t) { return t->is_contiguous() ? t : F::contiguous(t); };
  TensorList r = dispatch(prim::lstm_cell_grad(), {dense(dy[0]), dense(dy[1]), gi, gh, c});
  return {r[0], r[0], r[1]};
}

PrimTraits LstmCellGrad::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> LstmCellGrad::infer(const TensorList& in, const Attrs&) const {
  if (in.size() != 5) throw_error<RuntimeError>(name(), "expected 5 tensors, got ", in.size());
  // (dh, dc', gi, gh, c)
  const int64_t h = check_gates(name(), in[2], 2, 4), b = in[2]->shape()[0];
  check_shapes(name(), {in[2], in[0], in[1], in[3], in[4]},
               {{b, 4 * h}, {b, h}, {b, h}, {b, 4 * h}, {b, h}});
  const TensorMeta& c = in[4]->meta();
  return {dense_meta(in[2]->shape(), c.dtype, c.device), dense_meta(c.shape, c.dtype, c.device)};
}

namespace {
// LstmLayer's operands: gi (T, B, 4H), h0 and c0 (B, H), w_hh (4H, H), b_hh (4H), contiguous,
// of one float dtype and device.
void check_layer_operands(const char* op, const TensorList& in) {
  if (in.empty()) throw_error<RuntimeError>(op, "expected 5 tensors, got none");
  const int64_t h = check_gates(op, in[0], 3, 4), b = in[0]->shape()[1];
  check_shapes(op, in, {in[0]->shape(), {b, h}, {b, h}, {4 * h, h}, {4 * h}});
}

// The steps of a layer in the order they run: step s is time t(s).
int64_t time_of(int64_t s, int64_t steps, bool reverse) { return reverse ? steps - 1 - s : s; }

// create_graph form of LstmLayer's gradient from differentiable ops on what the forward saved:
// the inputs h0, c0, w_hh and the outputs, which under create_graph are this node's outputs
// again (so second-order gradients flow back through the node itself).
TensorList composite_layer_grad(const TensorList& in, const TensorList& out, const TensorList& dy,
                                bool reverse) {
  namespace F = functional;
  const Tensor &w = in[3], &hs = out[0], &cs = out[1], &act = out[2];
  const int64_t steps = act->shape()[0], h = in[1]->shape()[1];
  auto one = Scalar::from_int(1);
  auto dsigmoid = [&](const Tensor& v) { return F::mul(v, F::rsub(v, one)); };
  std::vector<Tensor> dgates(steps);
  Tensor dh_next, dc_next, dw, db;
  for (int64_t s = steps - 1; s >= 0; --s) {
    const int64_t t = time_of(s, steps, reverse), tp = reverse ? t + 1 : t - 1;
    const Tensor h_prev = s == 0 ? in[1] : F::select(hs, 0, tp);
    const Tensor c_prev = s == 0 ? in[2] : F::select(cs, 0, tp);
    const Tensor a = F::select(act, 0, t), da = F::select(dy[2], 0, t);
    auto gate = [&](const Tensor& v, int k) { return F::narrow(v, 1, k * h, h); };
    const Tensor i = gate(a, 0), f = gate(a, 1), g = gate(a, 2), o = gate(a, 3);
    Tensor dh = F::select(dy[0], 0, t), dc = F::select(dy[1], 0, t);
    if (dh_next) dh = F::add(dh, dh_next);
    if (dc_next) dc = F::add(dc, dc_next);
    const Tensor tc = F::unary(UnaryFn::kTanh, F::select(cs, 0, t));
    const Tensor dc2 = F::add(dc, F::mul(F::mul(dh, o), F::rsub(F::mul(tc, tc), one)));
    const Tensor di = F::mul(F::add(F::mul(dc2, g), gate(da, 0)), dsigmoid(i));
    const Tensor df = F::mul(F::add(F::mul(dc2, c_prev), gate(da, 1)), dsigmoid(f));
    const Tensor dg = F::mul(F::add(F::mul(dc2, i), gate(da, 2)), F::rsub(F::mul(g, g), one));
    const Tensor d_o = F::mul(F::add(F::mul(dh, tc), gate(da, 3)), dsigmoid(o));
    const Tensor dgate = F::cat({di, df, dg, d_o}, 1);
    dgates[t] = F::unsqueeze(dgate, 0);
    dc_next = F::mul(dc2, f);
    dh_next = F::matmul(dgate, w);
    const Tensor dws = F::matmul(F::transpose(dgate, 0, 1), h_prev);
    dw = dw ? F::add(dw, dws) : dws;
    const Tensor dbs = F::sum(dgate, {0});
    db = db ? F::add(db, dbs) : dbs;
  }
  return {F::cat(dgates, 0), dh_next, dc_next, dw, db};
}
}  // namespace

PrimTraits LstmLayer::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> LstmLayer::infer(const TensorList& in, const Attrs& attrs) const {
  (void)attrs.get<bool>("reverse");
  check_layer_operands(name(), in);
  const Shape& g = in[0]->shape();
  const Shape state{g[0], g[1], g[2] / 4};
  const DType dt = in[0]->dtype();
  const Device dev = in[0]->device();
  return {dense_meta(state, dt, dev), dense_meta(state, dt, dev), dense_meta(g, dt, dev)};
}

// Both backward forms read h0, c0 and w_hh (and the outputs), not gi or b_hh.
bool LstmLayer::reads_saved_input(size_t i, const std::vector<bool>&) const {
  return i >= 1 && i <= 3;
}

TensorList LstmLayer::grad(const GradContext& ctx, const TensorList& dy) const {
  namespace F = functional;
  const bool reverse = ctx.attrs.get<bool>("reverse");
  if (grad_mode_enabled()) return composite_layer_grad(ctx.inputs, ctx.outputs, dy, reverse);
  auto dense = [](const Tensor& t) { return t->is_contiguous() ? t : F::contiguous(t); };
  TensorList r = dispatch(prim::lstm_layer_grad(),
                          {dense(dy[0]), dense(dy[1]), dense(dy[2]), ctx.inputs[1], ctx.inputs[2],
                           ctx.inputs[3], ctx.outputs[0], ctx.outputs[1], ctx.outputs[2]},
                          ctx.attrs);
  return {r[0], r[1], r[2], r[3], r[4]};
}

PrimTraits LstmLayerGrad::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> LstmLayerGrad::infer(const TensorList& in, const Attrs& attrs) const {
  (void)attrs.get<bool>("reverse");
  // (d out, d cs, d act, h0, c0, w_hh, out, cs, act)
  if (in.size() != 9) throw_error<RuntimeError>(name(), "expected 9 tensors, got ", in.size());
  const Tensor& act = in[8];
  const int64_t h = check_gates(name(), act, 3, 4), b = act->shape()[1];
  const Shape seq{act->shape()[0], b, h}, state{b, h};
  check_shapes(name(), {act, in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7]},
               {act->shape(), seq, seq, act->shape(), state, state, {4 * h, h}, seq, seq});
  const DType dt = act->dtype();
  const Device dev = act->device();
  return {dense_meta(act->shape(), dt, dev), dense_meta(state, dt, dev), dense_meta(state, dt, dev),
          dense_meta({4 * h, h}, dt, dev), dense_meta({4 * h}, dt, dev)};
}

namespace {
// GRU's step from differentiable ops: the gates, W_hn h + b_hn and the new state.
struct CompositeGru {
  Tensor r, z, n, hn, h;
};
CompositeGru composite_gru(const Tensor& gi, const Tensor& gh, const Tensor& hp) {
  namespace F = functional;
  const int64_t h = hp->shape().back();
  CompositeGru c;
  auto part = [&](const Tensor& t, int k) { return F::narrow(t, 1, k * h, h); };
  c.r = F::unary(UnaryFn::kSigmoid, F::add(part(gi, 0), part(gh, 0)));
  c.z = F::unary(UnaryFn::kSigmoid, F::add(part(gi, 1), part(gh, 1)));
  c.hn = part(gh, 2);
  c.n = F::unary(UnaryFn::kTanh, F::add(part(gi, 2), F::mul(c.r, c.hn)));
  c.h = F::add(F::mul(F::rsub(c.z, Scalar::from_int(1)), c.n), F::mul(c.z, hp));
  return c;
}

// create_graph form of GruLayer's gradient (as composite_layer_grad for the LSTM).
TensorList composite_gru_grad(const TensorList& in, const TensorList& out, const TensorList& dy,
                              bool reverse) {
  namespace F = functional;
  const Tensor &w = in[2], &hs = out[0], &act = out[1];
  const int64_t steps = act->shape()[0], h = in[1]->shape()[1];
  auto one = Scalar::from_int(1);
  auto dsigmoid = [&](const Tensor& v) { return F::mul(v, F::rsub(v, one)); };
  std::vector<Tensor> dgis(steps);
  Tensor dh_next, dw, db;
  for (int64_t s = steps - 1; s >= 0; --s) {
    const int64_t t = time_of(s, steps, reverse), tp = reverse ? t + 1 : t - 1;
    const Tensor h_prev = s == 0 ? in[1] : F::select(hs, 0, tp);
    const Tensor a = F::select(act, 0, t), da = F::select(dy[1], 0, t);
    auto part = [&](const Tensor& v, int k) { return F::narrow(v, 1, k * h, h); };
    const Tensor r = part(a, 0), z = part(a, 1), n = part(a, 2), hn = part(a, 3);
    Tensor dh = F::select(dy[0], 0, t);
    if (dh_next) dh = F::add(dh, dh_next);
    const Tensor dn = F::add(F::mul(dh, F::rsub(z, one)), part(da, 2));
    const Tensor dz = F::add(F::mul(dh, F::sub(h_prev, n)), part(da, 1));
    const Tensor dn_pre = F::mul(dn, F::rsub(F::mul(n, n), one));
    const Tensor dhn = F::add(F::mul(dn_pre, r), part(da, 3));
    const Tensor dr = F::add(F::mul(dn_pre, hn), part(da, 0));
    const Tensor dr_pre = F::mul(dr, dsigmoid(r)), dz_pre = F::mul(dz, dsigmoid(z));
    dgis[t] = F::unsqueeze(F::cat({dr_pre, dz_pre, dn_pre}, 1), 0);
    const Tensor dgh = F::cat({dr_pre, dz_pre, dhn}, 1);
    dh_next = F::add(F::mul(dh, z), F::matmul(dgh, w));
    const Tensor dws = F::matmul(F::transpose(dgh, 0, 1), h_prev);
    dw = dw ? F::add(dw, dws) : dws;
    const Tensor dbs = F::sum(dgh, {0});
    db = db ? F::add(db, dbs) : dbs;
  }
  return {F::cat(dgis, 0), dh_next, dw, db};
}
}  // namespace

PrimTraits GruLayer::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> GruLayer::infer(const TensorList& in, const Attrs& attrs) const {
  (void)attrs.get<bool>("reverse");
  if (in.empty()) throw_error<RuntimeError>(name(), "expected 4 tensors, got none");
  const int64_t h = check_gates(name(), in[0], 3, 3), b = in[0]->shape()[1];
  check_shapes(name(), in, {in[0]->shape(), {b, h}, {3 * h, h}, {3 * h}});
  const DType dt = in[0]->dtype();
  const Device dev = in[0]->device();
  const int64_t steps = in[0]->shape()[0];
  return {dense_meta({steps, b, h}, dt, dev), dense_meta({steps, b, 4 * h}, dt, dev)};
}

// Both backward forms read h0 and w_hh (and the outputs), not gi or b_hh.
bool GruLayer::reads_saved_input(size_t i, const std::vector<bool>&) const {
  return i == 1 || i == 2;
}

TensorList GruLayer::grad(const GradContext& ctx, const TensorList& dy) const {
  namespace F = functional;
  if (grad_mode_enabled())
    return composite_gru_grad(ctx.inputs, ctx.outputs, dy, ctx.attrs.get<bool>("reverse"));
  auto dense = [](const Tensor& t) { return t->is_contiguous() ? t : F::contiguous(t); };
  TensorList r = dispatch(
      prim::gru_layer_grad(),
      {dense(dy[0]), dense(dy[1]), ctx.inputs[1], ctx.inputs[2], ctx.outputs[0], ctx.outputs[1]},
      ctx.attrs);
  return {r[0], r[1], r[2], r[3]};
}

PrimTraits GruLayerGrad::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> GruLayerGrad::infer(const TensorList& in, const Attrs& attrs) const {
  (void)attrs.get<bool>("reverse");
  // (d out, d act, h0, w_hh, out, act)
  if (in.size() != 6) throw_error<RuntimeError>(name(), "expected 6 tensors, got ", in.size());
  const Tensor& act = in[5];
  const int64_t h = check_gates(name(), act, 3, 4), b = act->shape()[1];
  const Shape seq{act->shape()[0], b, h}, state{b, h};
  check_shapes(name(), {act, in[0], in[1], in[2], in[3], in[4]},
               {act->shape(), seq, act->shape(), state, {3 * h, h}, seq});
  const DType dt = act->dtype();
  const Device dev = act->device();
  return {dense_meta({act->shape()[0], b, 3 * h}, dt, dev), dense_meta(state, dt, dev),
          dense_meta({3 * h, h}, dt, dev), dense_meta({3 * h}, dt, dev)};
}

namespace prim {
const GruLayer& gru_layer() {
  static const GruLayer instance;
  return instance;
}
const GruLayerGrad& gru_layer_grad() {
  static const GruLayerGrad instance;
  return instance;
}
const LstmLayer& lstm_layer() {
  static const LstmLayer instance;
  return instance;
}
const LstmLayerGrad& lstm_layer_grad() {
  static const LstmLayerGrad instance;
  return instance;
}
const LstmCell& lstm_cell() {
  static const LstmCell instance;
  return instance;
}
const LstmCellGrad& lstm_cell_grad() {
  static const LstmCellGrad instance;
  return instance;
}
}  // namespace prim

namespace functional {

std::pair<Tensor, Tensor> lstm_cell(const Tensor& gi, const Tensor& gh, const Tensor& c) {
  const DType dt = c->dtype();
  const bool fused = !gi->global() && !gh->global() && !c->global() &&
                     c->device().type == DeviceType::kCPU && gi->device() == c->device() &&
                     gh->device() == c->device() && gi->dtype() == dt && gh->dtype() == dt &&
                     (dt == DType::kFloat32 || dt == DType::kFloat64) && c->ndim() == 2 &&
                     gi->ndim() == 2 && gi->shape() == gh->shape() &&
                     gi->shape()[0] == c->shape()[0] && gi->shape()[1] == 4 * c->shape()[1];
  if (!fused) {
    const CompositeCell r = composite_cell(gi, gh, c);
    return {r.h, r.c2};
  }
  auto dense = [](const Tensor& t) { return t->is_contiguous() ? t : contiguous(t); };
  TensorList r = dispatch(prim::lstm_cell(), {dense(gi), dense(gh), dense(c)});
  return {r[0], r[1]};
}

std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& gi, const Tensor& h0, const Tensor& c0,
                                              const Tensor& w_hh, const Tensor& b_hh,
                                              bool reverse) {
  const DType dt = gi->dtype();
  const Device dev = gi->device();
  bool fused = dev.type == DeviceType::kCPU && (dt == DType::kFloat32 || dt == DType::kFloat64) &&
               gi->ndim() == 3 && gi->shape()[0] > 0 && gi->shape()[2] % 4 == 0;
  const int64_t h = fused ? gi->shape()[2] / 4 : 0;
  for (const Tensor& t : {gi, h0, c0, w_hh, b_hh})
    if (t && (t->global() || t->dtype() != dt || t->device() != dev)) fused = false;
  if (fused)
    fused = h0->shape() == Shape{gi->shape()[1], h} && c0->shape() == h0->shape() &&
            w_hh->shape() == Shape{4 * h, h} && (!b_hh || b_hh->shape() == Shape{4 * h});
  const int64_t steps = gi->ndim() > 0 ? gi->shape()[0] : 0;
  if (!fused) {
    // step by step: the projections' slices from one split (one cat in backward)
    std::vector<int64_t> ones(steps, 1);
    TensorList gis = split_with_sizes(gi, ones, 0);
    TensorList outs(steps);
    Tensor hs = h0, cs = c0;
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = time_of(s, steps, reverse);
      std::tie(hs, cs) = lstm_cell(squeeze(gis[t], {0}), linear(hs, w_hh, b_hh), cs);
      outs[t] = unsqueeze(hs, 0);
    }
    return {cat(outs, 0), hs, cs};
  }
  auto dense = [](const Tensor& t) { return t->is_contiguous() ? t : contiguous(t); };
  const Tensor bias = b_hh ? dense(b_hh) : zeros({4 * h}, CreationOptions{dt, dev, ""});
  TensorList r = dispatch(prim::lstm_layer(), {dense(gi), dense(h0), dense(c0), dense(w_hh), bias},
                          Attrs{{"reverse", reverse}});
  // the results are copies: the kernel's outputs are saved for backward, and a caller may
  // change output, h_n or c_n in place before it (as PyTorch's allow)
  const int64_t last = reverse ? 0 : steps - 1;
  return {clone(r[0]), clone(select(r[0], 0, last)), clone(select(r[1], 0, last))};
}

std::pair<Tensor, Tensor> gru_layer(const Tensor& gi, const Tensor& h0, const Tensor& w_hh,
                                    const Tensor& b_hh, bool reverse) {
  const DType dt = gi->dtype();
  const Device dev = gi->device();
  bool fused = dev.type == DeviceType::kCPU && (dt == DType::kFloat32 || dt == DType::kFloat64) &&
               gi->ndim() == 3 && gi->shape()[0] > 0 && gi->shape()[2] % 3 == 0;
  const int64_t h = fused ? gi->shape()[2] / 3 : 0;
  for (const Tensor& t : {gi, h0, w_hh, b_hh})
    if (t && (t->global() || t->dtype() != dt || t->device() != dev)) fused = false;
  if (fused)
    fused = h0->shape() == Shape{gi->shape()[1], h} && w_hh->shape() == Shape{3 * h, h} &&
            (!b_hh || b_hh->shape() == Shape{3 * h});
  const int64_t steps = gi->ndim() > 0 ? gi->shape()[0] : 0;
  if (!fused) {
    std::vector<int64_t> ones(steps, 1);
    TensorList gis = split_with_sizes(gi, ones, 0);
    TensorList outs(steps);
    Tensor hs = h0;
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = time_of(s, steps, reverse);
      hs = composite_gru(squeeze(gis[t], {0}), linear(hs, w_hh, b_hh), hs).h;
      outs[t] = unsqueeze(hs, 0);
    }
    return {cat(outs, 0), hs};
  }
  auto dense = [](const Tensor& t) { return t->is_contiguous() ? t : contiguous(t); };
  const Tensor bias = b_hh ? dense(b_hh) : zeros({3 * h}, CreationOptions{dt, dev, ""});
  TensorList r = dispatch(prim::gru_layer(), {dense(gi), dense(h0), dense(w_hh), bias},
                          Attrs{{"reverse", reverse}});
  // copies, as lstm_layer's
  return {clone(r[0]), clone(select(r[0], 0, reverse ? 0 : steps - 1))};
}

}  // namespace functional

}  // namespace oneflow
