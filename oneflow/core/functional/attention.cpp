// scaled_dot_product_attention on the fused CPU kernel (functional/attention.h).
#include "oneflow/core/functional/attention.h"

#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/ops/attention_primitives.h"

namespace oneflow::functional {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

// The kernel reads rows through their strides but wants each row contiguous.
Tensor rows_contiguous(const Tensor& t) {
  return t->strides().back() == 1 || t->shape().back() == 1 ? t : contiguous(t);
}

Shape batch_of(const Tensor& t) { return Shape(t->shape().begin(), t->shape().end() - 2); }

}  // namespace

bool fused_attention_supported(const Tensor& q, const Tensor& k, const Tensor& v) {
  const DType dt = q->dtype();
  if (dt != DType::kFloat32 && dt != DType::kFloat64) return false;
  if (k->dtype() != dt || v->dtype() != dt) return false;
  for (const Tensor* t : {&q, &k, &v})
    if ((*t)->device().type != DeviceType::kCPU || (*t)->ndim() < 2 || (*t)->numel() == 0)
      return false;
  if (q->ndim() != k->ndim() || q->ndim() != v->ndim()) return false;
  if (batch_of(q) != batch_of(k) || batch_of(q) != batch_of(v)) return false;
  return q->shape().back() == k->shape().back() &&
         k->shape()[k->ndim() - 2] == v->shape()[v->ndim() - 2];
}

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                       bool causal) {
  if (!fused_attention_supported(q, k, v))
    throw_error<RuntimeError>(kOp,
                              "the fused CPU kernel expects float32 or float64 CPU tensors "
                              "[..., L, E], [..., S, E], [..., S, Ev] with the same batch dims, "
                              "got ",
                              shape_str(q->shape()), " ", dtype_name(q->dtype()), ", ",
                              shape_str(k->shape()), " ", dtype_name(k->dtype()), ", ",
                              shape_str(v->shape()), " ", dtype_name(v->dtype()));
  const TensorList out =
      dispatch(prim::attention(), {rows_contiguous(q), rows_contiguous(k), rows_contiguous(v)},
               Attrs{{"scale", scale}, {"causal", causal}});
  return out[0];
}

TensorList fused_attention_grad(const Tensor& q, const Tensor& k, const Tensor& v,
                                const Tensor& out, const Tensor& lse, const Tensor& dout,
                                double scale, bool causal) {
  OF_ASSERT(dout->shape() == out->shape() && dout->dtype() == out->dtype());
  return dispatch(
      prim::attention_grad(),
      {rows_contiguous(q), rows_contiguous(k), rows_contiguous(v), out, lse, rows_contiguous(dout)},
      Attrs{{"scale", scale}, {"causal", causal}});
}

}  // namespace oneflow::functional
