// Meta inference, gradient and functional entry of the LSTM cell (rnn_primitives.h).
#include "oneflow/core/ops/rnn_primitives.h"

#include "oneflow/core/autograd/autograd.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"

namespace oneflow {

namespace {
TensorMeta dense_meta(Shape shape, DType dtype, Device device) {
  Strides strides = contiguous_strides(shape);
  return TensorMeta{std::move(shape), std::move(strides), 0, dtype, device};
}

// Every operand contiguous, of one float dtype and device; `wide` of them (B, 4H), the rest
// (B, H), with B and H those of the first operand.
void check_operands(const char* op, const TensorList& in, size_t count, size_t wide) {
  if (in.size() != count)
    throw_error<RuntimeError>(op, "expected ", count, " tensors, got ", in.size());
  const Tensor& g = in[0];
  const bool floating = g->dtype() == DType::kFloat32 || g->dtype() == DType::kFloat64;
  const int64_t four_h = g->ndim() == 2 ? g->shape().back() : 0;
  if (!floating || g->ndim() != 2 || four_h % 4 != 0)
    throw_error<RuntimeError>(op, "expected 2-D float32 or float64 operands, got ",
                              dtype_name(g->dtype()), shape_str(g->shape()));
  const Shape gates{g->shape()[0], four_h}, state{g->shape()[0], four_h / 4};
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& want = i < wide ? gates : state;
    if (in[i]->shape() != want || in[i]->dtype() != g->dtype() || in[i]->device() != g->device() ||
        !in[i]->is_contiguous())
      throw_error<RuntimeError>(op, "expected operand ", i, " to be a contiguous ",
                                dtype_name(g->dtype()), shape_str(want), " on ", g->device().str(),
                                ", got ", dtype_name(in[i]->dtype()), shape_str(in[i]->shape()),
                                " on ", in[i]->device().str());
  }
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

PrimTraits LstmCell::traits() const {
  PrimTraits t;
  t.saves_inputs = true;
  t.saves_outputs = true;
  return t;
}

std::vector<TensorMeta> LstmCell::infer(const TensorList& in, const Attrs&) const {
  check_operands(name(), in, 3, 2);
  const TensorMeta& c = in[2]->meta();
  return {dense_meta(c.shape, c.dtype, c.device), dense_meta(c.shape, c.dtype, c.device),
          dense_meta(in[0]->shape(), c.dtype, c.device)};
}

// The fused backward reads c; the create_graph form recomputes everything from the inputs.
bool LstmCell::reads_saved_input(size_t i, const std::vector<bool>&) const {
  return i == 2 || grad_mode_enabled();
}

TensorList LstmCell::grad(const GradContext& ctx, const TensorList& dy) const {
  namespace F = functional;
  if (grad_mode_enabled()) {
    // create_graph: the same gradients from differentiable ops on the inputs, so that
    // second-order gradients reach gi, gh and c through them.
    const Tensor &gi = ctx.inputs[0], &gh = ctx.inputs[1], &c = ctx.inputs[2];
    const int64_t h = c->shape().back();
    const CompositeCell cell = composite_cell(gi, gh, c);
    const Tensor &i = cell.i, &f = cell.f, &g = cell.g, &o = cell.o, &c2 = cell.c2;
    auto slice = [&](int k) { return F::narrow(dy[2], 1, k * h, h); };
    auto dsigmoid = [](const Tensor& s) { return F::mul(s, F::rsub(s, Scalar::from_int(1))); };
    const Tensor tc = F::unary(UnaryFn::kTanh, c2);
    const Tensor dc2 =
        F::add(dy[1], F::mul(F::mul(dy[0], o), F::rsub(F::mul(tc, tc), Scalar::from_int(1))));
    const Tensor di = F::mul(F::add(F::mul(dc2, g), slice(0)), dsigmoid(i));
    const Tensor df = F::mul(F::add(F::mul(dc2, c), slice(1)), dsigmoid(f));
    const Tensor dg =
        F::mul(F::add(F::mul(dc2, i), slice(2)), F::rsub(F::mul(g, g), Scalar::from_int(1)));
    const Tensor d_o = F::mul(F::add(F::mul(dy[0], tc), slice(3)), dsigmoid(o));
    const Tensor dgates = F::cat({di, df, dg, d_o}, 1);
    return {dgates, dgates, F::mul(dc2, f)};
  }
  auto dense = [](const Tensor& t) { return t->is_contiguous() ? t : F::contiguous(t); };
  TensorList r = dispatch(prim::lstm_cell_grad(), {dense(dy[0]), dense(dy[1]), dense(dy[2]),
                                                   ctx.inputs[2], ctx.outputs[1], ctx.outputs[2]});
  return {r[0], r[0], r[1]};
}

PrimTraits LstmCellGrad::traits() const {
  PrimTraits t;
  t.differentiable = false;
  return t;
}

std::vector<TensorMeta> LstmCellGrad::infer(const TensorList& in, const Attrs&) const {
  if (in.size() != 6) throw_error<RuntimeError>(name(), "expected 6 tensors, got ", in.size());
  // (dh, dc', dact, c, c', act): reorder to the wide-first layout the check takes
  check_operands(name(), {in[2], in[5], in[0], in[1], in[3], in[4]}, 6, 2);
  const TensorMeta& c = in[3]->meta();
  return {dense_meta(in[5]->shape(), c.dtype, c.device), dense_meta(c.shape, c.dtype, c.device)};
}

namespace prim {
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

}  // namespace functional

}  // namespace oneflow
