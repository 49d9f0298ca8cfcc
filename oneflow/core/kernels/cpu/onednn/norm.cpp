// Layer normalisation on oneDNN, float32, rows of a plain (rows, size) layout: forward and
// backward. Primitives are cached by problem; each call takes its scratchpad from the allocator
// (onednn/common.h). Batch normalisation is not here: oneDNN 2.6's plain-layout batch
// normalisation ran at a quarter (inference) to a half (training) of PyTorch's speed, and the
// per-channel kernels of kernels/cpu/batch_norm.cpp are faster than both.
#include <cmath>
#include <dnnl.hpp>
#include <memory>
#include <string>

#include "oneflow/core/kernels/cpu/onednn/common.h"
#include "oneflow/core/kernels/cpu/onednn/kernels.h"

namespace oneflow {

namespace {

using dnnl::memory;
using dnnl::normalization_flags;
using dnnl::prop_kind;

const auto kScaleShift = normalization_flags::use_scale | normalization_flags::use_shift;

struct Entry {
  dnnl::primitive prim;
  memory::desc data, stats, channel, scratch;
};

template <typename Primitive, typename Desc>
void set_primitive(Entry& e, const Desc& pd) {
  e.prim = Primitive(pd);
  e.scratch = pd.scratchpad_desc();
}

class OneDnnLayerNorm {
 public:
  enum class Kind { kLayerForward, kLayerBackward };

  static OneDnnLayerNorm& get() {
    static OneDnnLayerNorm* instance = new OneDnnLayerNorm();
    return *instance;
  }

  // `shape`: (rows, size).
  std::shared_ptr<Entry> entry(Kind kind, const Shape& shape, float eps) {
    std::string key = std::to_string(static_cast<int>(kind)) + ":";
    for (int64_t d : shape) key += std::to_string(d) + ",";
    key += std::to_string(eps);
    return cache_.get(key, [&] { return build(kind, shape, eps); });
  }

  void run(const Entry& e, std::unordered_map<int, memory> args) {
    dnnl::stream stream(engine_);
    onednn::execute(e.prim, stream, std::move(args), e.scratch, engine_);
    stream.wait();
  }

  memory mem(const memory::desc& d, const Tensor& t) const { return memory(d, engine_, t->data()); }

 private:
  OneDnnLayerNorm() : engine_(dnnl::engine::kind::cpu, 0) {}

  std::shared_ptr<Entry> build(Kind kind, const Shape& shape, float eps) {
    auto e = std::make_shared<Entry>();
    const memory::dims dims(shape.begin(), shape.end());
    const Strides st = contiguous_strides(shape);
    e->data = memory::desc(dims, memory::data_type::f32, memory::dims(st.begin(), st.end()));
    const dnnl::primitive_attr attr = onednn::user_scratchpad();
    e->stats = memory::desc({shape[0]}, memory::data_type::f32, memory::format_tag::a);
    e->channel = memory::desc({shape[1]}, memory::data_type::f32, memory::format_tag::a);
    dnnl::layer_normalization_forward::primitive_desc fwd(
        dnnl::layer_normalization_forward::desc(prop_kind::forward_training, e->data, e->stats, eps,
                                                kScaleShift),
        attr, engine_);
    if (kind == Kind::kLayerForward) {
      set_primitive<dnnl::layer_normalization_forward>(*e, fwd);
    } else {
      set_primitive<dnnl::layer_normalization_backward>(
          *e, dnnl::layer_normalization_backward::primitive_desc(
                  dnnl::layer_normalization_backward::desc(prop_kind::backward, e->data, e->data,
                                                           e->stats, eps, kScaleShift),
                  attr, engine_, fwd));
    }
    return e;
  }

  dnnl::engine engine_;
  onednn::PrimitiveCache<Entry> cache_;
};

using Kind = OneDnnLayerNorm::Kind;

}  // namespace

namespace onednn {

// oneDNN's layer normalisation keeps the variance per row; the primitives keep 1/sqrt(var + eps).
void layer_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
                        const Tensor& mean, const Tensor& rstd, int64_t size, float eps) {
  const int64_t rows = x->numel() / size;
  if (rows == 0) return;
  OneDnnLayerNorm& dnn = OneDnnLayerNorm::get();
  std::shared_ptr<Entry> e = dnn.entry(Kind::kLayerForward, {rows, size}, eps);
  dnn.run(*e, {{DNNL_ARG_SRC, dnn.mem(e->data, x)},
               {DNNL_ARG_DST, dnn.mem(e->data, y)},
               {DNNL_ARG_SCALE, dnn.mem(e->channel, w)},
               {DNNL_ARG_SHIFT, dnn.mem(e->channel, b)},
               {DNNL_ARG_MEAN, dnn.mem(e->stats, mean)},
               {DNNL_ARG_VARIANCE, dnn.mem(e->stats, rstd)}});
  float* r = rstd->data_as<float>();
  for (int64_t i = 0; i < rows; ++i) r[i] = static_cast<float>(1.0 / std::sqrt(double(r[i]) + eps));
}

void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                         const Tensor& w, const Tensor& dx, const Tensor& dw, const Tensor& db,
                         int64_t size, float eps) {
  const int64_t rows = x->numel() / size;
  if (rows == 0) {
    std::fill_n(dw->data_as<float>(), size, 0.f);
    std::fill_n(db->data_as<float>(), size, 0.f);
    return;
  }
  Tensor var = empty_tensor({rows}, DType::kFloat32, x->device());
  const float* r = rstd->data_as<float>();
  float* v = var->data_as<float>();
  for (int64_t i = 0; i < rows; ++i)
    v[i] = static_cast<float>(std::max(1.0 / (double(r[i]) * r[i]) - eps, 0.0));
  OneDnnLayerNorm& dnn = OneDnnLayerNorm::get();
  std::shared_ptr<Entry> e = dnn.entry(Kind::kLayerBackward, {rows, size}, eps);
  dnn.run(*e, {{DNNL_ARG_DIFF_DST, dnn.mem(e->data, dy)},
               {DNNL_ARG_SRC, dnn.mem(e->data, x)},
               {DNNL_ARG_MEAN, dnn.mem(e->stats, mean)},
               {DNNL_ARG_VARIANCE, dnn.mem(e->stats, var)},
               {DNNL_ARG_SCALE, dnn.mem(e->channel, w)},
               {DNNL_ARG_SHIFT, dnn.mem(e->channel, w)},  // read by no kernel; checked present
               {DNNL_ARG_DIFF_SRC, dnn.mem(e->data, dx)},
               {DNNL_ARG_DIFF_SCALE, dnn.mem(e->channel, dw)},
               {DNNL_ARG_DIFF_SHIFT, dnn.mem(e->channel, db)}});
}

}  // namespace onednn

}  // namespace oneflow
