// Functional matmul and linear: operand layouts the GEMM kernels take, the bias fused into the
// product where one GEMM computes it, then dispatch.
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/autocast.h"
#include "oneflow/core/functional/complex.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow::functional {

namespace {
// cuBLAS and oneDNN take each matrix with a unit stride along rows or columns and the other
// stride at least the length of those (rows that do not overlap); anything else (and broadcast
// batch dims) is made contiguous first.
Tensor gemm_operand(const Tensor& t) {
  const int64_t nd = t->ndim();
  const auto& st = t->strides();
  const int64_t rows = t->shape()[nd - 2], cols = t->shape()[nd - 1];
  bool ok = (st[nd - 1] == 1 && (rows <= 1 || st[nd - 2] >= cols)) ||
            (st[nd - 2] == 1 && (cols <= 1 || st[nd - 1] >= rows));
  if (nd == 3 && st[0] == 0 && t->shape()[0] > 1) ok = false;
  return ok ? t : contiguous(t);
}
}  // namespace

namespace {
// a @ b, plus `bias` (1-D, one value per column; may be undefined) fused into the product where
// it is one GEMM with b a matrix on the CPU (the kernel starts the output from the bias rows),
// else added after.
Tensor matmul_bias(const Tensor& a_lo, const Tensor& b_lo, const Tensor& bias_lo) {
  const Tensor a_in = autocast::lower(a_lo), b_in = autocast::lower(b_lo);
  const Tensor bias = autocast::lower(bias_lo);
  const int64_t na = a_in->ndim(), nb = b_in->ndim();
  if (na == 0 || nb == 0)
    throw_error<RuntimeError>("matmul",
                              "both arguments to matmul need to be at least 1D, but "
                              "they are ",
                              na, "D and ", nb, "D");
  if (a_in->dtype() != b_in->dtype())
    throw_error<RuntimeError>("matmul", "expected both inputs to have the same dtype, but got ",
                              dtype_name(a_in->dtype()), " and ", dtype_name(b_in->dtype()));
  if (a_in->dtype() == DType::kBool)
    throw_error<NotImplementedError>("matmul", "expected a numeric dtype, got bool");
  const Shape &sa = a_in->shape(), &sb = b_in->shape();
  const int64_t k_a = sa[na - 1], k_b = nb == 1 ? sb[0] : sb[nb - 2];
  if (k_a != k_b)
    throw_error<RuntimeError>("matmul", "shapes ", shape_str(sa), " and ", shape_str(sb),
                              " cannot be multiplied (", na == 1 ? 1 : sa[na - 2], "x", k_a,
                              " and ", k_b, "x", nb == 1 ? 1 : sb[nb - 1], ")");
  // Promote 1-D operands to matrices, remembering which dims to drop from the result.
  Tensor a = na == 1 ? reshape(a_in, {1, sa[0]}) : a_in;
  Tensor b = nb == 1 ? reshape(b_in, {sb[0], 1}) : b_in;
  Tensor out;
  const bool fuse = bias && na >= 2 && nb == 2 && bias->ndim() == 1 && bias->shape()[0] == sb[1] &&
                    bias->dtype() == a->dtype() && bias->device() == a->device() &&
                    a->device().type == DeviceType::kCPU &&
                    (a->dtype() == DType::kFloat32 || a->dtype() == DType::kFloat64);
  // [..., m, k] @ [k, n] with a not contiguous (a transposed sequence, [T, B, k] from [B, T, k]):
  // the batch is still folded into rows, by a reshape that copies a (a batched product would
  // copy b once per batch: an LSTM's input projection over 32 steps 2.05 -> 0.9 ms)
  if (fuse) {
    // [..., m, k] @ [k, n] + bias: the batch folded into rows, one GEMM from the bias rows
    const Shape& s = a->shape();
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < s.size(); ++d) rows *= s[d];
    Tensor a2 = a->ndim() == 2 ? gemm_operand(a) : reshape(a, {rows, s.back()});
    Tensor o2 = dispatch1(prim::matmul(), {a2, gemm_operand(b), bias});
    Shape os(s.begin(), s.end() - 1);
    os.push_back(sb[1]);
    return a->ndim() == 2 ? o2 : reshape(o2, os);
  }
  if (a->ndim() == 2 && b->ndim() == 2) {
    out = dispatch1(prim::matmul(), {gemm_operand(a), gemm_operand(b)});
  } else if (b->ndim() == 2) {
    // [..., m, k] @ [k, n]: fold the batch into rows, one GEMM.
    const Shape& s = a->shape();
    int64_t rows = 1;  // the product of the other dims: numel / k divides by zero when k == 0
    for (size_t d = 0; d + 1 < s.size(); ++d) rows *= s[d];
    Tensor a2 = reshape(a, {rows, s.back()});
    Tensor o2 = dispatch1(prim::matmul(), {a2, gemm_operand(b)});
    Shape os(s.begin(), s.end() - 1);
    os.push_back(b->shape()[1]);
    out = reshape(o2, os);
  } else {
    const Shape &s1 = a->shape(), &s2 = b->shape();
    Shape batch = broadcast_shapes("matmul", Shape(s1.begin(), s1.end() - 2),
                                   Shape(s2.begin(), s2.end() - 2));
    const int64_t nbatch = numel(batch);
    Shape ea = batch, eb = batch;
    ea.insert(ea.end(), s1.end() - 2, s1.end());
    eb.insert(eb.end(), s2.end() - 2, s2.end());
    auto as3 = [&](const Tensor& t, const Shape& full) {
      Tensor e = expand(t, full);
      if (batch.size() == 1 && e->strides()[0] != 0) return gemm_operand(e);
      return gemm_operand(reshape(e, {nbatch, full[full.size() - 2], full.back()}));
    };
    Tensor o3 = dispatch1(prim::matmul(), {as3(a, ea), as3(b, eb)});
    Shape os = batch;
    os.push_back(s1[s1.size() - 2]);
    os.push_back(s2.back());
    out = reshape(o3, os);
  }
  if (na == 1 || nb == 1) {
    Shape os = out->shape();
    if (nb == 1) os.erase(os.end() - 1);
    if (na == 1) os.erase(os.end() - (nb == 1 ? 1 : 2));
    out = reshape(out, os);
  }
  return bias ? add(out, bias) : out;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (complex_ops::any(a, b)) [[unlikely]]
    return complex_ops::matmul(a, b);
  return matmul_bias(a, b, Tensor());
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const Tensor w = weight->ndim() == 2 ? transpose(weight, 0, 1) : weight;
  if (complex_ops::any(x, weight) || (bias && is_complex(bias->dtype()))) [[unlikely]]
    return bias ? add(complex_ops::matmul(x, w), bias) : complex_ops::matmul(x, w);
  return matmul_bias(x, w, bias);
}

}  // namespace oneflow::functional
