// Complex tensors in the functional layer (complex.h): the views, the transforms' entry points,
// and the complex branches of the arithmetic ops as real ops on (real, imaginary) pairs.
#include "oneflow/core/functional/complex.h"

#include <cmath>

#include "oneflow/core/common/op_kinds.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/framework/global.h"
#include "oneflow/core/ops/complex_primitives.h"

namespace oneflow::functional {

namespace {

// The real dtype of a complex dtype, and a real dtype itself.
DType value_dtype(DType dt) { return is_complex(dt) ? complex_to_real(dt) : dt; }

// A complex result dtype's operand: complex tensors cast to it; real ones to its real dtype.
Tensor as_operand(const Tensor& t, DType result) {
  return is_complex(t->dtype()) ? to(t, result, std::nullopt)
                                : to(t, complex_to_real(result), std::nullopt);
}

Tensor as_complex(const Tensor& t, DType result) { return to(t, result, std::nullopt); }

Tensor re_of(const Tensor& z) { return select(view_as_real(z), -1, 0); }
Tensor im_of(const Tensor& z) { return select(view_as_real(z), -1, 1); }

// A real tensor (..., 2) of any layout, made here and seen by nothing else, as a complex one: a
// tensor of its own rather than a view of the pairs, so that in-place ops on it are ordinary
// (the storage and version counter stay shared with the pairs).
Tensor pairs_to_complex(const Tensor& r) {
  Tensor z = view_as_complex(contiguous(r));
  z->set_is_view(false);
  z->set_view_base(nullptr);
  return z;
}

// Result dtype of an op with a complex operand.
DType complex_result(const Tensor& a, const Tensor& b) {
  const DType dt = result_type({a, b});
  return is_complex(dt) ? dt : real_to_complex(dt);
}

// Dims of z (wrapped; every dim when empty) as dims of its real view.
std::vector<int64_t> real_view_dims(const char* op, const Tensor& z,
                                    const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < z->ndim(); ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap_dim(op, d, std::max<int64_t>(z->ndim(), 1)));
  return out;
}

Tensor complex_of_real_dims(const char* op, const Tensor& z, const std::vector<int64_t>& dims,
                            bool keepdim, std::optional<DType> dtype, bool take_mean) {
  Tensor x = z;
  if (dtype) {
    if (!is_complex(*dtype))
      throw_error<RuntimeError>(op, "expected a complex dtype for a complex input, got ",
                                dtype_name(*dtype));
    x = to(x, *dtype, std::nullopt);
  }
  if (x->ndim() == 0) return clone(x);
  const std::vector<int64_t> rd = real_view_dims(op, x, dims);
  const Tensor r = view_as_real(x);
  return pairs_to_complex(take_mean ? functional::mean(r, rd, keepdim)
                                    : functional::sum(r, rd, keepdim));
}

// A real (2,) tensor [v, 0] of r's dtype beside r (broadcast global beside a global r): adds v to
// the real parts of the real view r by broadcasting.
Tensor real_part_only(const Tensor& r, double v) {
  const CreationOptions o{r->dtype(), r->device(), ""};
  return global::broadcast_like(r, cat({full({1}, Scalar::from_double(v), o), zeros({1}, o)}, 0));
}

}  // namespace

// ---- views and parts ----

Tensor view_as_real(const Tensor& z) { return dispatch1(prim::view_as_real(), {z}); }

Tensor view_as_complex(const Tensor& x) { return dispatch1(prim::view_as_complex(), {x}); }

Tensor real(const Tensor& z) { return is_complex(z->dtype()) ? re_of(z) : z; }

Tensor imag(const Tensor& z) {
  if (!is_complex(z->dtype()))
    throw_error<RuntimeError>("imag",
                              "imag is not implemented for tensors with non-complex "
                              "dtypes.");
  return im_of(z);
}

Tensor complex(const Tensor& re, const Tensor& im) {
  for (const Tensor* t : {&re, &im})
    if ((*t)->dtype() != DType::kFloat32 && (*t)->dtype() != DType::kFloat64)
      throw_error<RuntimeError>("complex",
                                "Expected both inputs to be Float or Double tensors "
                                "but got ",
                                dtype_name(re->dtype()), " and ", dtype_name(im->dtype()));
  if (re->dtype() != im->dtype())
    throw_error<RuntimeError>("complex", "Expected object of scalar type ", dtype_name(re->dtype()),
                              " but got scalar type ", dtype_name(im->dtype()),
                              " for second argument");
  const Shape shape = broadcast_shapes("complex", re->shape(), im->shape());
  return pairs_to_complex(
      functional::cat({unsqueeze(expand(re, shape), -1), unsqueeze(expand(im, shape), -1)}, -1));
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  for (const Tensor* t : {&abs, &angle})
    if ((*t)->dtype() != DType::kFloat32 && (*t)->dtype() != DType::kFloat64)
      throw_error<RuntimeError>("polar",
                                "Expected both inputs to be Float or Double tensors "
                                "but got ",
                                dtype_name(abs->dtype()), " and ", dtype_name(angle->dtype()));
  return complex(functional::mul(abs, unary(UnaryFn::kCos, angle)),
                 functional::mul(abs, unary(UnaryFn::kSin, angle)));
}

Tensor conj_physical(const Tensor& z) {
  if (!is_complex(z->dtype())) return z;
  const DType rt = complex_to_real(z->dtype());
  const Tensor sign = cat({ones({1}, CreationOptions{rt, z->device(), ""}),
                           full({1}, Scalar::from_int(-1), CreationOptions{rt, z->device(), ""})},
                          0);
  return pairs_to_complex(functional::mul(view_as_real(z), global::broadcast_like(z, sign)));
}

Tensor angle(const Tensor& z) {
  // At z = 0 the angle is 0 and so is its gradient (as PyTorch): atan2's would be 0 / 0 there.
  const Tensor re = re_of(z), im = im_of(z);
  const Tensor zero =
      logical_not(functional::add(unary(UnaryFn::kAbs, re), unary(UnaryFn::kAbs, im)));
  return binary(BinaryFn::kAtan2, where(zero, Scalar::from_int(0), im),
                where(zero, Scalar::from_int(1), re));
}

// ---- transforms ----

namespace {
// The transforms have CPU kernels only (no cuFFT yet): a CUDA tensor is transformed on the host
// and copied back, differentiably.
Tensor on_host(const Primitive& prim, const Tensor& x, const Attrs& attrs) {
  if (x->device().type != DeviceType::kCUDA) return dispatch1(prim, {x}, attrs);  // cpu, meta
  return to(dispatch1(prim, {to(x, std::nullopt, Device{})}, attrs), std::nullopt, x->device());
}
}  // namespace

Tensor fft_c2c(const Tensor& x, const std::vector<int64_t>& dims, int64_t normalization,
               bool forward) {
  return on_host(prim::fft_c2c(), x,
                 Attrs{{"dims", dims}, {"normalization", normalization}, {"forward", forward}});
}

Tensor fft_r2c(const Tensor& x, const std::vector<int64_t>& dims, int64_t normalization,
               bool onesided) {
  return on_host(prim::fft_r2c(), x,
                 Attrs{{"dims", dims}, {"normalization", normalization}, {"onesided", onesided}});
}

Tensor fft_c2r(const Tensor& x, const std::vector<int64_t>& dims, int64_t normalization,
               int64_t last_dim_size) {
  return on_host(
      prim::fft_c2r(), x,
      Attrs{{"dims", dims}, {"normalization", normalization}, {"last_dim_size", last_dim_size}});
}

Tensor complex_pad_dim(const Tensor& z, int64_t dim, int64_t extra) {
  const Tensor r = view_as_real(z);
  Shape shape = r->shape();
  shape[dim] = extra;
  return pairs_to_complex(functional::cat(
      {r, global::broadcast_like(r, zeros(shape, CreationOptions{r->dtype(), r->device(), ""}))},
      dim));
}

Tensor complex_scale_range(const Tensor& z, int64_t dim, int64_t start, int64_t length,
                           double factor) {
  const DType rt = complex_to_real(z->dtype());
  const int64_t n = z->shape()[dim];
  const CreationOptions o{rt, z->device(), ""};
  Tensor w = cat({ones({start}, o), full({length}, Scalar::from_double(factor), o),
                  ones({n - start - length}, o)},
                 0);
  Shape shape(static_cast<size_t>(z->ndim() - dim), 1);
  shape[0] = n;
  return complex_mul_real(z, global::broadcast_like(z, reshape(w, shape)));
}

Tensor complex_mul(const Tensor& a, const Tensor& b, bool conj_b) {
  if (a->device().type == DeviceType::kCPU)
    return dispatch1(prim::complex_mul(), {a, b}, Attrs{{"conj_b", conj_b}});
  // Elsewhere (no kernel yet): (ar br -+ ai bi) + i (ai br +- ar bi) from real ops.
  const Tensor ar = re_of(a), ai = im_of(a), br = re_of(b), bi = im_of(b);
  const Tensor rr = functional::mul(ar, br), ii = functional::mul(ai, bi);
  const Tensor ri = functional::mul(ar, bi), ir = functional::mul(ai, br);
  return conj_b ? complex(functional::add(rr, ii), functional::sub(ir, ri))
                : complex(functional::sub(rr, ii), functional::add(ri, ir));
}

Tensor complex_mul_real(const Tensor& z, const Tensor& r) {
  return pairs_to_complex(functional::mul(view_as_real(z), unsqueeze(r, -1)));
}

// ---- the arithmetic ops' complex branches ----

namespace complex_ops {

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  const DType dt = complex_result(a, b);
  return pairs_to_complex(
      functional::add(view_as_real(as_complex(a, dt)), view_as_real(as_complex(b, dt)), alpha));
}

Tensor add(const Tensor& a, Scalar b, Scalar alpha) {
  const Tensor r = view_as_real(a);
  return pairs_to_complex(functional::add(r, real_part_only(r, b.to_double() * alpha.to_double())));
}

Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  const DType dt = complex_result(a, b);
  return pairs_to_complex(
      functional::sub(view_as_real(as_complex(a, dt)), view_as_real(as_complex(b, dt)), alpha));
}

Tensor rsub(const Tensor& a, Scalar b, Scalar alpha) {
  const Tensor r = view_as_real(a);
  return pairs_to_complex(functional::sub(real_part_only(r, b.to_double()), r, alpha));
}

Tensor mul(const Tensor& a, const Tensor& b) {
  const DType dt = complex_result(a, b);
  const Tensor x = as_operand(a, dt), y = as_operand(b, dt);
  if (!is_complex(y->dtype())) return complex_mul_real(x, y);
  if (!is_complex(x->dtype())) return complex_mul_real(y, x);
  return complex_mul(x, y, false);
}

Tensor mul(const Tensor& a, Scalar b) {
  return pairs_to_complex(functional::mul(view_as_real(a), b));
}

Tensor div(const Tensor& a, const Tensor& b) {
  const DType dt = complex_result(a, b);
  const Tensor x = as_operand(a, dt), y = as_operand(b, dt);
  if (!is_complex(y->dtype()))
    return pairs_to_complex(functional::div(view_as_real(x), unsqueeze(y, -1)));
  // x / y = x conj(y) / |y|^2 with y scaled by s = max(|yr|, |yi|) first (Smith's idea), so
  // that |y|^2 neither overflows nor underflows: x conj(y / s) / (|y / s|^2 s).
  const Tensor xc = as_complex(x, dt);
  const Tensor yr = re_of(y), yi = im_of(y);
  const Tensor s = functional::maximum(functional::unary(UnaryFn::kAbs, yr),
                                       functional::unary(UnaryFn::kAbs, yi));
  const Tensor zero = functional::compare(CompareFn::kEq, s, Scalar::from_int(0));
  const Tensor safe = functional::where(zero, Scalar::from_int(1), s);
  const Tensor ys = complex(functional::div(yr, safe), functional::div(yi, safe));
  const Tensor denom = functional::mul(
      functional::add(functional::mul(re_of(ys), re_of(ys)), functional::mul(im_of(ys), im_of(ys))),
      safe);  // 0 where y = 0: x / 0 gives inf or NaN parts, as PyTorch
  return pairs_to_complex(
      functional::div(view_as_real(complex_mul(xc, ys, true)), unsqueeze(denom, -1)));
}

Tensor div(const Tensor& a, Scalar b) {
  return pairs_to_complex(functional::div(view_as_real(a), b));
}

Tensor rdiv(const Tensor& a, Scalar b) {
  return div(global::broadcast_like(
                 a, full({}, b, CreationOptions{value_dtype(a->dtype()), a->device(), ""})),
             a);
}

Tensor neg(const Tensor& a) { return pairs_to_complex(functional::neg(view_as_real(a))); }

Tensor exp(const Tensor& z) {
  const Tensor im = im_of(z);
  return complex_mul_real(
      complex(functional::unary(UnaryFn::kCos, im), functional::unary(UnaryFn::kSin, im)),
      functional::exp(re_of(z)));
}

Tensor abs(const Tensor& z) {
  if (z->device().type == DeviceType::kCPU) return dispatch1(prim::complex_abs(), {contiguous(z)});
  // Elsewhere (no kernel yet): sqrt(re^2 + im^2), with a zero gradient at 0.
  const Tensor re = re_of(z), im = im_of(z);
  const Tensor r2 = functional::add(functional::mul(re, re), functional::mul(im, im));
  const Tensor zero = functional::compare(CompareFn::kEq, r2, Scalar::from_int(0));
  return functional::where(
      zero, Scalar::from_int(0),
      functional::unary(UnaryFn::kSqrt, functional::where(zero, Scalar::from_int(1), r2)));
}

namespace {

Tensor sqrt_of(const Tensor& z) {
  // The principal root without cancellation. For x >= 0: t = sqrt((|z| + x) / 2) is the real part
  // and y / 2t the imaginary part; for x < 0: t = sqrt((|z| - x) / 2) is the imaginary part's
  // size, with y's sign (-0 included: 1 / y is -inf), and |y| / 2t the real part. Each branch is
  // computed on safe values where the other applies, so no NaN reaches a gradient; written
  // without |x| or |y| so that the gradient on the cut is the one-sided one, as PyTorch's.
  const Tensor x = re_of(z), y = im_of(z);
  const Tensor r = abs(z);
  const Tensor one = global::broadcast_like(
      x, functional::full({}, Scalar::from_int(1), CreationOptions{x->dtype(), x->device(), ""}));
  const Tensor right = functional::compare(CompareFn::kGe, x, Scalar::from_int(0));
  const Tensor half = global::broadcast_like(
      x,
      functional::full({}, Scalar::from_double(0.5), CreationOptions{x->dtype(), x->device(), ""}));
  const Tensor t = functional::unary(
      UnaryFn::kSqrt,
      functional::where(
          right, functional::mul(functional::add(r, x), half),
          functional::where(right, one, functional::mul(functional::sub(r, x), half))));
  const Tensor zero = functional::compare(CompareFn::kEq, t, Scalar::from_int(0));
  const Tensor other = functional::where(
      zero, Scalar::from_int(0),
      functional::div(y, functional::mul(functional::where(zero, one, t), Scalar::from_int(2))));
  const Tensor y_sign = functional::where(
      functional::compare(CompareFn::kLt, functional::rdiv(y, Scalar::from_int(1)),
                          Scalar::from_int(0)),
      Scalar::from_int(-1), Scalar::from_int(1));
  return complex(functional::where(right, t, functional::mul(other, y_sign)),
                 functional::where(right, other, functional::mul(t, y_sign)));
}

Tensor log_of(const Tensor& z) {
  return complex(functional::unary(UnaryFn::kLog, abs(z)), angle(z));
}

// z + v for a real v, added to the real part only: an imaginary part of -0 stays -0 (adding
// v + 0i would make it +0), which decides the side of a branch cut.
Tensor plus_real(const Tensor& z, double v) {
  return complex(functional::add(re_of(z), Scalar::from_double(v)), im_of(z));
}

// i z and -i z.
Tensor times_i(const Tensor& z) { return complex(functional::neg(im_of(z)), re_of(z)); }
Tensor times_minus_i(const Tensor& z) { return complex(im_of(z), functional::neg(re_of(z))); }

// The sign of Re z, -1 for -0 too (1 / x < 0), in the real dtype (a constant: no gradient
// flows through it): the odd functions keep the side of their branch cuts.
Tensor re_sign(const Tensor& z) {
  const Tensor x = re_of(z);
  const Tensor negative =
      functional::to(functional::compare(CompareFn::kLt, functional::rdiv(x, Scalar::from_int(1)),
                                         Scalar::from_int(0)),
                     x->dtype(), std::nullopt);
  return functional::rsub(functional::mul(negative, Scalar::from_int(2)), Scalar::from_int(1),
                          Scalar::from_int(1));
}

// e^z - 1 without cancellation near 0: (expm1(x) cos y - 2 sin^2(y / 2)) + i e^x sin y.
Tensor expm1_of(const Tensor& z) {
  const Tensor x = re_of(z), y = im_of(z);
  const Tensor h = functional::unary(UnaryFn::kSin, functional::mul(y, Scalar::from_double(0.5)));
  return complex(functional::sub(functional::mul(functional::unary(UnaryFn::kExpm1, x),
                                                 functional::unary(UnaryFn::kCos, y)),
                                 functional::mul(functional::mul(h, h), Scalar::from_int(2))),
                 functional::mul(functional::exp(x), functional::unary(UnaryFn::kSin, y)));
}

// log(1 + z) without cancellation near 0: log|1 + z| = log1p(x (2 + x) + y^2) / 2.
Tensor log1p_of(const Tensor& z) {
  const Tensor x = re_of(z), y = im_of(z);
  const Tensor r = functional::add(functional::mul(x, functional::add(x, Scalar::from_int(2))),
                                   functional::mul(y, y));
  return complex(functional::mul(functional::unary(UnaryFn::kLog1p, r), Scalar::from_double(0.5)),
                 functional::binary(BinaryFn::kAtan2, y, functional::add(x, Scalar::from_int(1))));
}

// tanh is odd, and on Re w >= 0 it is -expm1(-2w) / (2 + expm1(-2w)), where |e^(-2w)| <= 1: no
// overflow for any z, and no cancellation near 0.
Tensor tanh_of(const Tensor& z) {
  const Tensor s = re_sign(z);
  const Tensor e = expm1_of(mul(complex_mul_real(z, s), Scalar::from_int(-2)));
  return complex_mul_real(div(neg(e), plus_real(e, 2)), s);
}

// asinh is odd, and on Re w >= 0 it is log1p(w + w^2 / (1 + sqrt(1 + w^2))), which keeps the
// precision near 0 and has no cancellation between w and the root.
Tensor asinh_of(const Tensor& z) {
  const Tensor s = re_sign(z);
  const Tensor w = complex_mul_real(z, s);
  const Tensor w2 = mul(w, w);
  const Tensor t = add(w, div(w2, plus_real(sqrt_of(plus_real(w2, 1)), 1)), Scalar::from_int(1));
  return complex_mul_real(log1p_of(t), s);
}

// atanh z = (log1p(z) - log1p(-z)) / 2.
Tensor atanh_of(const Tensor& z) {
  return mul(sub(log1p_of(z), log1p_of(neg(z)), Scalar::from_int(1)), Scalar::from_double(0.5));
}

}  // namespace

Tensor unary(UnaryFn fn, const Tensor& z) {
  const Tensor x = re_of(z), y = im_of(z);
  switch (fn) {
    case UnaryFn::kAbs:
      return abs(z);
    case UnaryFn::kNeg:
      return neg(z);
    case UnaryFn::kReciprocal:
      return rdiv(z, Scalar::from_int(1));
    case UnaryFn::kSign: {  // sgn: z / |z|, 0 at 0
      const Tensor r = abs(z);
      const Tensor zero = functional::compare(CompareFn::kEq, r, Scalar::from_int(0));
      return complex_mul_real(
          z, functional::where(zero, Scalar::from_int(0),
                               functional::rdiv(functional::where(zero, Scalar::from_int(1), r),
                                                Scalar::from_int(1))));
    }
    case UnaryFn::kSqrt:
      return sqrt_of(z);
    case UnaryFn::kRsqrt:
      return rdiv(sqrt_of(z), Scalar::from_int(1));
    case UnaryFn::kLog:
      return log_of(z);
    case UnaryFn::kLog2:
      return functional::div(log_of(z), Scalar::from_double(std::log(2.0)));
    case UnaryFn::kLog10:
      return functional::div(log_of(z), Scalar::from_double(std::log(10.0)));
    case UnaryFn::kSin:  // sin x cosh y + i cos x sinh y
      return complex(functional::mul(functional::unary(UnaryFn::kSin, x),
                                     functional::unary(UnaryFn::kCosh, y)),
                     functional::mul(functional::unary(UnaryFn::kCos, x),
                                     functional::unary(UnaryFn::kSinh, y)));
    case UnaryFn::kCos:  // cos x cosh y - i sin x sinh y
      return complex(functional::mul(functional::unary(UnaryFn::kCos, x),
                                     functional::unary(UnaryFn::kCosh, y)),
                     functional::neg(functional::mul(functional::unary(UnaryFn::kSin, x),
                                                     functional::unary(UnaryFn::kSinh, y))));
    case UnaryFn::kSinh:  // sinh x cos y + i cosh x sin y
      return complex(functional::mul(functional::unary(UnaryFn::kSinh, x),
                                     functional::unary(UnaryFn::kCos, y)),
                     functional::mul(functional::unary(UnaryFn::kCosh, x),
                                     functional::unary(UnaryFn::kSin, y)));
    case UnaryFn::kCosh:  // cosh x cos y + i sinh x sin y
      return complex(functional::mul(functional::unary(UnaryFn::kCosh, x),
                                     functional::unary(UnaryFn::kCos, y)),
                     functional::mul(functional::unary(UnaryFn::kSinh, x),
                                     functional::unary(UnaryFn::kSin, y)));
    case UnaryFn::kExp2:
      return exp(mul(z, Scalar::from_double(std::log(2.0))));
    case UnaryFn::kExpm1:
      return expm1_of(z);
    case UnaryFn::kLog1p:
      return log1p_of(z);
    case UnaryFn::kTanh:
      return tanh_of(z);
    case UnaryFn::kSigmoid: {  // 1 / (1 + e^-z) for Re z >= 0, e^z / (1 + e^z) below: |e^..| <= 1
      const Tensor s = re_sign(z);
      const Tensor u = exp(complex_mul_real(z, functional::neg(s)));
      const Tensor d = plus_real(u, 1);
      const Tensor positive = functional::compare(CompareFn::kGt, s, Scalar::from_int(0));
      return functional::where(positive, rdiv(d, Scalar::from_int(1)), div(u, d));
    }
    case UnaryFn::kTan:  // -i tanh(i z)
      return times_minus_i(tanh_of(times_i(z)));
    case UnaryFn::kAsinh:
      return asinh_of(z);
    case UnaryFn::kAsin:  // -i asinh(i z)
      return times_minus_i(asinh_of(times_i(z)));
    case UnaryFn::kAcos:  // pi / 2 - asin z
      return rsub(times_minus_i(asinh_of(times_i(z))), Scalar::from_double(M_PI / 2),
                  Scalar::from_int(1));
    case UnaryFn::kAtanh:
      return atanh_of(z);
    case UnaryFn::kAtan:  // -i atanh(i z)
      return times_minus_i(atanh_of(times_i(z)));
    case UnaryFn::kAcosh: {  // log(z + sqrt(z + 1) sqrt(z - 1))
      const Tensor p = sqrt_of(plus_real(z, 1)), m = sqrt_of(plus_real(z, -1));
      return log_of(add(z, mul(p, m), Scalar::from_int(1)));
    }
    default:
      throw_error<TypeError>(fn_name(fn), "does not support ", dtype_name(z->dtype()),
                             " inputs yet");
  }
}

Tensor pow(const Tensor& a, const Tensor& b) {
  const DType dt = complex_result(a, b);
  const Tensor x = as_complex(a, dt), y = as_operand(b, dt);
  return exp(is_complex(y->dtype()) ? mul(y, log_of(x)) : complex_mul_real(log_of(x), y));
}

Tensor pow(const Tensor& a, Scalar b) {
  // PyTorch's shortcuts for the common exponents; exp(b log a) otherwise.
  if (b.kind != Scalar::Kind::kFloat || b.f == std::floor(b.f)) {
    const double e = b.to_double();
    if (e == 0)
      return global::broadcast_like(
          a, complex_ops::full(a->shape(), Scalar::from_int(1),
                               CreationOptions{a->dtype(), a->device(), ""}));
    if (e == 1) return clone(a);
    if (e == 2) return mul(a, a);
    if (e == 3) return mul(mul(a, a), a);
    if (e == -1) return rdiv(a, Scalar::from_int(1));
    if (e == -2) return rdiv(mul(a, a), Scalar::from_int(1));
  }
  if (b.kind == Scalar::Kind::kFloat && b.f == 0.5) return sqrt_of(a);
  return exp(functional::mul(log_of(a), b));
}

Tensor compare(CompareFn fn, const Tensor& a, const Tensor& b) {
  if (fn != CompareFn::kEq && fn != CompareFn::kNe)
    throw_error<TypeError>(fn_name(fn), "is not defined for complex inputs (",
                           dtype_name(a->dtype()), ", ", dtype_name(b->dtype()), ")");
  const DType dt = complex_result(a, b);
  const Tensor x = as_complex(a, dt), y = as_complex(b, dt);
  const Tensor re = functional::compare(fn, re_of(x), re_of(y));
  const Tensor im = functional::compare(fn, im_of(x), im_of(y));
  return fn == CompareFn::kEq ? binary(BinaryFn::kLogicalAnd, re, im)
                              : binary(BinaryFn::kLogicalOr, re, im);
}

Tensor sum(const Tensor& z, const std::vector<int64_t>& dims, bool keepdim,
           std::optional<DType> dtype) {
  return complex_of_real_dims("sum", z, dims, keepdim, dtype, false);
}

Tensor mean(const Tensor& z, const std::vector<int64_t>& dims, bool keepdim,
            std::optional<DType> dtype) {
  return complex_of_real_dims("mean", z, dims, keepdim, dtype, true);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  const DType dt = complex_result(a, b);
  const Tensor x = as_operand(a, dt), y = as_operand(b, dt);
  if (!is_complex(x->dtype()))
    return complex(functional::matmul(x, re_of(y)), functional::matmul(x, im_of(y)));
  if (!is_complex(y->dtype()))
    return complex(functional::matmul(re_of(x), y), functional::matmul(im_of(x), y));
  const Tensor xr = re_of(x), xi = im_of(x), yr = re_of(y), yi = im_of(y);
  return complex(functional::sub(functional::matmul(xr, yr), functional::matmul(xi, yi)),
                 functional::add(functional::matmul(xr, yi), functional::matmul(xi, yr)));
}

Tensor cat(const TensorList& xs, int64_t dim) {
  DType dt = xs[0]->dtype();
  for (const Tensor& t : xs) dt = promote_types(dt, t->dtype());
  const int64_t d = wrap_dim("cat", dim, std::max<int64_t>(xs[0]->ndim(), 1));
  TensorList reals;
  for (const Tensor& t : xs) reals.push_back(view_as_real(as_complex(t, dt)));
  return pairs_to_complex(functional::cat(reals, d));
}

Tensor cumsum(const Tensor& z, int64_t dim, std::optional<DType> dtype) {
  const Tensor x = as_complex(z, dtype.value_or(z->dtype()));
  const int64_t d = wrap_dim("cumsum", dim, std::max<int64_t>(x->ndim(), 1));
  if (x->ndim() == 0) return clone(x);
  return pairs_to_complex(functional::cumsum(view_as_real(x), d, std::nullopt));
}

Tensor cumprod(const Tensor& z, int64_t dim, std::optional<DType> dtype) {
  Tensor x = as_complex(z, dtype.value_or(z->dtype()));
  const int64_t d = wrap_dim("cumprod", dim, std::max<int64_t>(x->ndim(), 1));
  if (x->ndim() == 0 || x->shape()[d] <= 1) return clone(x);
  // Inclusive scan: after the round of offset k, entry i holds the product of entries
  // i - 2k + 1 .. i.
  const int64_t n = x->shape()[d];
  for (int64_t k = 1; k < n; k *= 2)
    x = cat(
        {narrow(x, d, 0, k), complex_mul(narrow(x, d, k, n - k), narrow(x, d, 0, n - k), false)},
        d);
  return x;
}

Tensor prod(const Tensor& z, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype) {
  Tensor x = as_complex(z, dtype.value_or(z->dtype()));
  if (!dim) {
    const Tensor p = prod(reshape(x, {x->numel()}), 0, false, std::nullopt);
    return keepdim ? reshape(p, Shape(x->ndim(), 1)) : p;
  }
  const int64_t d = wrap_dim("prod", *dim, std::max<int64_t>(x->ndim(), 1));
  if (x->ndim() == 0) return clone(x);
  int64_t n = x->shape()[d];
  Shape one = x->shape();
  one[d] = 1;
  const CreationOptions opts{x->dtype(), x->device(), ""};
  if (n == 0) x = full(one, Scalar::from_int(1), opts);
  while (n > 1) {  // the product of the two halves, a padding 1 first for an odd length
    if (n % 2) {
      x = cat({x, full(one, Scalar::from_int(1), opts)}, d);
      ++n;
    }
    n /= 2;
    x = complex_mul(narrow(x, d, 0, n), narrow(x, d, n, n), false);
  }
  return keepdim ? x : squeeze(x, {d});
}

Tensor full(const Shape& shape, Scalar value, const CreationOptions& opts) {
  CreationOptions o = opts;
  o.dtype = complex_to_real(opts.dtype);
  Shape s = shape;
  s.push_back(1);
  const bool zero = value.to_double() == 0;
  Shape pairs = shape;
  pairs.push_back(2);
  if (zero) return pairs_to_complex(functional::full(pairs, value, o));
  return pairs_to_complex(
      functional::cat({functional::full(s, value, o), functional::zeros(s, o)}, -1));
}

Tensor randn(const Shape& shape, const CreationOptions& opts) {
  CreationOptions o = opts;
  o.dtype = complex_to_real(opts.dtype);
  Shape pairs = shape;
  pairs.push_back(2);
  return pairs_to_complex(normal(0.0, std::sqrt(0.5), pairs, o));
}

Tensor rand(const Shape& shape, const CreationOptions& opts) {
  CreationOptions o = opts;
  o.dtype = complex_to_real(opts.dtype);
  Shape pairs = shape;
  pairs.push_back(2);
  return pairs_to_complex(functional::rand(pairs, o));
}

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  return pairs_to_complex(functional::where(unsqueeze(cond, -1), view_as_real(x), view_as_real(y)));
}

Tensor from_pairs(const Tensor& r) { return pairs_to_complex(r); }

Tensor assign(const Tensor& self, const Tensor& result) { return copy_(self, result); }

}  // namespace complex_ops

}  // namespace oneflow::functional
