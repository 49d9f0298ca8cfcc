// Meta inference, traits and gradient rules of the complex views and the transforms
// (complex_primitives.h).
#include "oneflow/core/ops/complex_primitives.h"

#include "oneflow/core/common/op_kinds.h"

#include "oneflow/core/functional/complex.h"
#include "oneflow/core/functional/functional.h"

namespace oneflow {

namespace F = functional;

namespace {

PrimTraits complex_view_traits() {
  PrimTraits t;
  t.is_view = true;
  t.complex = true;
  return t;
}

PrimTraits fft_traits() {
  PrimTraits t;
  t.complex = true;
  return t;
}

const std::vector<int64_t>& fft_dims(const Primitive& p, const TensorImpl& x, const Attrs& attrs) {
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  if (dims.empty()) throw_error<RuntimeError>(p.name(), "expected at least one dim to transform");
  std::vector<bool> seen(x.ndim(), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= x.ndim() || seen[d])
      throw_error<RuntimeError>(p.name(), "expected distinct dims in [0, ", x.ndim(), "), got ",
                                shape_str(Shape(dims)));
    seen[d] = true;
    if (x.shape()[d] < 1)
      throw_error<RuntimeError>(p.name(), "Invalid number of data points (", x.shape()[d],
                                ") specified");
  }
  return dims;
}

void check_floating(const Primitive& p, DType dt) {
  if (dt != DType::kFloat32 && dt != DType::kFloat64)
    throw_error<RuntimeError>(p.name(), "Unsupported dtype ", dtype_name(dt),
                              ": expected float32 or float64 (complex64 or complex128)");
}

// Bytes times log2(n) of the transformed dims: the transform's share of the running time.
uint64_t fft_work(const TensorList& in, const TensorList& out) {
  uint64_t bytes = 0;
  for (const Tensor& t : in) bytes += t->numel() * itemsize(t->dtype());
  for (const Tensor& t : out) bytes += t->numel() * itemsize(t->dtype());
  uint64_t logn = 1;
  for (int64_t n = out[0]->numel(); n > 1; n >>= 1) ++logn;
  return bytes * logn;
}

}  // namespace

PrimTraits ViewAsReal::traits() const { return complex_view_traits(); }

std::vector<TensorMeta> ViewAsReal::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 1);
  const TensorMeta& m = in[0]->meta();
  if (!is_complex(m.dtype))
    throw_error<RuntimeError>(name(), "view_as_real is only supported for complex tensors, got ",
                              dtype_name(m.dtype));
  TensorMeta out = m;
  out.dtype = complex_to_real(m.dtype);
  for (int64_t& s : out.strides) s *= 2;
  out.shape.push_back(2);
  out.strides.push_back(1);
  out.offset = m.offset * 2;
  return {out};
}

TensorList ViewAsReal::grad(const GradContext&, const TensorList& dy) const {
  return {F::view_as_complex(F::contiguous(dy[0]))};
}

PrimTraits ViewAsComplex::traits() const { return complex_view_traits(); }

std::vector<TensorMeta> ViewAsComplex::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 1);
  const TensorMeta& m = in[0]->meta();
  if (m.dtype != DType::kFloat32 && m.dtype != DType::kFloat64)
    throw_error<RuntimeError>(name(),
                              "view_as_complex is only supported for float and double "
                              "tensors, but got a tensor of scalar type: ",
                              dtype_name(m.dtype));
  if (m.shape.empty() || m.shape.back() != 2)
    throw_error<RuntimeError>(name(), "Tensor must have a last dimension of size 2");
  if (m.strides.back() != 1)
    throw_error<RuntimeError>(name(), "Tensor must have a last dimension with stride 1");
  for (size_t d = 0; d + 1 < m.shape.size(); ++d)  // a size-1 dim's stride is never used
    if (m.strides[d] % 2 != 0 && m.shape[d] != 1)
      throw_error<RuntimeError>(name(),
                                "Tensor must have a stride divisible by 2 for all but "
                                "last dimension");
  if (m.offset % 2 != 0)
    throw_error<RuntimeError>(name(), "Tensor must have a storage_offset divisible by 2");
  TensorMeta out = m;
  out.dtype = real_to_complex(m.dtype);
  out.shape.pop_back();
  out.strides.pop_back();
  for (int64_t& s : out.strides) s /= 2;
  out.offset = m.offset / 2;
  return {out};
}

TensorList ViewAsComplex::grad(const GradContext&, const TensorList& dy) const {
  return {F::view_as_real(dy[0])};
}

PrimTraits ComplexAbs::traits() const {
  PrimTraits t;
  t.complex = true;
  t.saves_inputs = true;  // |z| is recomputed: an in-place change of the output stays legal
  return t;
}

std::vector<TensorMeta> ComplexAbs::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 1);
  const TensorImpl& z = *in[0];
  if (!is_complex(z.dtype()))
    throw_error<RuntimeError>(name(), "expected a complex input, got ", dtype_name(z.dtype()));
  return {TensorMeta{z.shape(), contiguous_strides(z.shape()), 0, complex_to_real(z.dtype()),
                     z.device()}};
}

TensorList ComplexAbs::grad(const GradContext& ctx, const TensorList& dy) const {
  const Tensor y = F::complex_ops::abs(ctx.inputs[0]);
  const Tensor zero = F::compare(CompareFn::kEq, y, Scalar::from_int(0));
  const Tensor scale = F::where(zero, Scalar::from_int(0), F::div(dy[0], y));
  return {F::complex_mul_real(ctx.inputs[0], scale)};
}

PrimTraits ComplexMul::traits() const {
  PrimTraits t;
  t.complex = true;
  t.saves_inputs = true;
  return t;
}

std::vector<TensorMeta> ComplexMul::infer(const TensorList& in, const Attrs&) const {
  OF_ASSERT(in.size() == 2);
  const TensorImpl &a = *in[0], &b = *in[1];
  if (!is_complex(a.dtype()) || a.dtype() != b.dtype())
    throw_error<RuntimeError>(name(), "expected complex inputs of one dtype, got ",
                              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  const Shape shape = broadcast_shapes(name(), a.shape(), b.shape());
  return {TensorMeta{shape, contiguous_strides(shape), 0, a.dtype(), a.device()}};
}

TensorList ComplexMul::grad(const GradContext& ctx, const TensorList& dy) const {
  // y = a b: da = dy conj(b), db = dy conj(a). y = a conj(b): da = dy b, db = a conj(dy).
  TensorList dx(2);
  if (!dy[0]) return dx;
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  const bool conj_b = ctx.attrs.get<bool>("conj_b");
  if (ctx.needs_input_grad[0]) dx[0] = F::sum_to(F::complex_mul(dy[0], b, !conj_b), a->shape());
  if (ctx.needs_input_grad[1])
    dx[1] = F::sum_to(conj_b ? F::complex_mul(a, dy[0], true) : F::complex_mul(dy[0], a, true),
                      b->shape());
  return dx;
}

// ---- transforms ----

PrimTraits FftC2C::traits() const { return fft_traits(); }

std::vector<TensorMeta> FftC2C::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  const TensorImpl& x = *in[0];
  if (!is_complex(x.dtype()))
    throw_error<RuntimeError>(name(), "expected a complex input, got ", dtype_name(x.dtype()));
  fft_dims(*this, x, attrs);
  return {TensorMeta{x.shape(), contiguous_strides(x.shape()), 0, x.dtype(), x.device()}};
}

TensorList FftC2C::grad(const GradContext& ctx, const TensorList& dy) const {
  // y = s W x with W the DFT matrix of one direction: x's gradient is s W^H dy, the other
  // direction with the same scale.
  return {F::fft_c2c(dy[0], ctx.attrs.get<std::vector<int64_t>>("dims"),
                     ctx.attrs.get<int64_t>("normalization"), !ctx.attrs.get<bool>("forward"))};
}

uint64_t FftC2C::cpu_work(const TensorList& in, const TensorList& out) const {
  return fft_work(in, out);
}

PrimTraits FftR2C::traits() const { return fft_traits(); }

std::vector<TensorMeta> FftR2C::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  const TensorImpl& x = *in[0];
  check_floating(*this, x.dtype());
  const auto& dims = fft_dims(*this, x, attrs);
  Shape shape = x.shape();
  if (attrs.get<bool>("onesided")) shape[dims.back()] = shape[dims.back()] / 2 + 1;
  return {TensorMeta{shape, contiguous_strides(shape), 0, real_to_complex(x.dtype()), x.device()}};
}

TensorList FftR2C::grad(const GradContext& ctx, const TensorList& dy) const {
  // x is real, so its gradient is Re(F^H g), F^H the inverse direction (unnormalised, then the
  // forward's scale). The one-sided output is the full transform's first n/2 + 1 entries along
  // the last dim: Re of the inverse of g zero-padded to n is the c2r transform of g with entries
  // 1 .. (n - 1) / 2 halved (c2r counts each of them twice, for its mirrored conjugate, and drops
  // the imaginary parts of entries 0 and n/2, as Re does): a half-length transform, no padding.
  const auto& dims = ctx.attrs.get<std::vector<int64_t>>("dims");
  const int64_t normalization = ctx.attrs.get<int64_t>("normalization");
  const Tensor& g = dy[0];
  const int64_t last = dims.back();
  const int64_t n = ctx.input_metas[0].shape[last];
  if (ctx.attrs.get<bool>("onesided")) {
    const int64_t halved = (n - 1) / 2;
    const Tensor h = halved > 0 ? F::complex_scale_range(g, last, 1, halved, 0.5) : g;
    return {F::fft_c2r(h, dims, normalization, n)};
  }
  return {F::real(F::fft_c2c(g, dims, normalization, false))};
}

uint64_t FftR2C::cpu_work(const TensorList& in, const TensorList& out) const {
  return fft_work(in, out);
}

PrimTraits FftC2R::traits() const { return fft_traits(); }

std::vector<TensorMeta> FftC2R::infer(const TensorList& in, const Attrs& attrs) const {
  OF_ASSERT(in.size() == 1);
  const TensorImpl& x = *in[0];
  if (!is_complex(x.dtype()))
    throw_error<RuntimeError>(name(), "expected a complex input, got ", dtype_name(x.dtype()));
  const auto& dims = fft_dims(*this, x, attrs);
  const int64_t n = attrs.get<int64_t>("last_dim_size");
  if (n < 1) throw_error<RuntimeError>(name(), "Invalid number of data points (", n, ") specified");
  if (x.shape()[dims.back()] != n / 2 + 1)
    throw_error<RuntimeError>(name(), "expected ", n / 2 + 1, " entries along dim ", dims.back(),
                              " for an output of ", n, ", got ", x.shape()[dims.back()]);
  Shape shape = x.shape();
  shape[dims.back()] = n;
  return {TensorMeta{shape, contiguous_strides(shape), 0, complex_to_real(x.dtype()), x.device()}};
}

TensorList FftC2R::grad(const GradContext& ctx, const TensorList& dy) const {
  // Entries 1 .. n - (n/2 + 1) of the last dim stand for themselves and their mirrored
  // conjugates: their gradient counts twice.
  const auto& dims = ctx.attrs.get<std::vector<int64_t>>("dims");
  Tensor g = F::fft_r2c(dy[0], dims, ctx.attrs.get<int64_t>("normalization"), true);
  const int64_t last = dims.back();
  const int64_t n = ctx.attrs.get<int64_t>("last_dim_size");
  const int64_t doubled = n - (n / 2 + 1);
  if (doubled > 0) g = F::complex_scale_range(g, last, 1, doubled, 2.0);
  return {g};
}

uint64_t FftC2R::cpu_work(const TensorList& in, const TensorList& out) const {
  return fft_work(in, out);
}

namespace prim {
const ViewAsReal& view_as_real() {
  static const ViewAsReal p;
  return p;
}
const ViewAsComplex& view_as_complex() {
  static const ViewAsComplex p;
  return p;
}
const ComplexAbs& complex_abs() {
  static const ComplexAbs p;
  return p;
}
const ComplexMul& complex_mul() {
  static const ComplexMul p;
  return p;
}
const FftC2C& fft_c2c() {
  static const FftC2C p;
  return p;
}
const FftR2C& fft_r2c() {
  static const FftR2C p;
  return p;
}
const FftC2R& fft_c2r() {
  static const FftC2R p;
  return p;
}
}  // namespace prim

}  // namespace oneflow
