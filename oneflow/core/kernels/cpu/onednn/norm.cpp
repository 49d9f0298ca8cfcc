// Batch normalisation (training mode) and its backward on oneDNN, float32, plain NC* layout.
// Primitives are cached by shape and eps; each call takes its scratchpad from the allocator.
#include <dnnl.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "oneflow/core/kernels/cpu/onednn/common.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

class OneDnnBatchNorm {
 public:
  static OneDnnBatchNorm& get() {
    static OneDnnBatchNorm* instance = new OneDnnBatchNorm();
    return *instance;
  }

  // Forward: x -> y, mean, var. Backward: dy, x, mean, var, weight -> dx, dweight, dbias.
  void forward(const Shape& shape, float eps, void* x, void* w, void* b, void* y, void* mean,
               void* var) {
    std::shared_ptr<Entry> e = entry(false, shape, eps);
    dnnl::stream stream(engine_);
    onednn::execute(e->prim, stream,
                    {{DNNL_ARG_SRC, mem(e->data, x)},
                     {DNNL_ARG_DST, mem(e->data, y)},
                     {DNNL_ARG_SCALE, mem(e->channel, w)},
                     {DNNL_ARG_SHIFT, mem(e->channel, b)},
                     {DNNL_ARG_MEAN, mem(e->channel, mean)},
                     {DNNL_ARG_VARIANCE, mem(e->channel, var)}},
                    e->scratch, engine_);
    stream.wait();
  }

  void backward(const Shape& shape, float eps, void* dy, void* x, void* mean, void* var, void* w,
                void* dx, void* dw, void* db) {
    std::shared_ptr<Entry> e = entry(true, shape, eps);
    dnnl::stream stream(engine_);
    onednn::execute(e->prim, stream,
                    {{DNNL_ARG_DIFF_DST, mem(e->data, dy)},
                     {DNNL_ARG_SRC, mem(e->data, x)},
                     {DNNL_ARG_MEAN, mem(e->channel, mean)},
                     {DNNL_ARG_VARIANCE, mem(e->channel, var)},
                     {DNNL_ARG_SCALE, mem(e->channel, w)},
                     {DNNL_ARG_SHIFT, mem(e->channel, w)},  // read by no kernel; checked present
                     {DNNL_ARG_DIFF_SRC, mem(e->data, dx)},
                     {DNNL_ARG_DIFF_SCALE, mem(e->channel, dw)},
                     {DNNL_ARG_DIFF_SHIFT, mem(e->channel, db)}},
                    e->scratch, engine_);
    stream.wait();
  }

 private:
  struct Entry {
    dnnl::primitive prim;
    dnnl::memory::desc data, channel, scratch;
  };

  OneDnnBatchNorm() : engine_(dnnl::engine::kind::cpu, 0) {}

  dnnl::memory mem(const dnnl::memory::desc& d, void* p) const {
    return dnnl::memory(d, engine_, p);
  }

  std::shared_ptr<Entry> entry(bool backward, const Shape& shape, float eps) {
    std::string key = backward ? "b" : "f";
    for (int64_t d : shape) key += std::to_string(d) + ",";
    key += std::to_string(eps);
    return cache_.get(key, [&] { return build(backward, shape, eps); });
  }

  std::shared_ptr<Entry> build(bool backward, const Shape& shape, float eps) {
    using dnnl::memory;
    auto e = std::make_shared<Entry>();
    const memory::dims dims(shape.begin(), shape.end());
    const Strides st = contiguous_strides(shape);
    e->data = memory::desc(dims, memory::data_type::f32, memory::dims(st.begin(), st.end()));
    e->channel = memory::desc({shape[1]}, memory::data_type::f32, memory::format_tag::a);
    const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    const dnnl::primitive_attr attr = onednn::user_scratchpad();
    dnnl::batch_normalization_forward::primitive_desc fwd(
        dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, e->data, eps,
                                                flags),
        attr, engine_);
    if (backward) {
      dnnl::batch_normalization_backward::primitive_desc bwd(
          dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward, e->data, e->data, eps,
                                                   flags),
          attr, engine_, fwd);
      e->prim = dnnl::batch_normalization_backward(bwd);
      e->scratch = bwd.scratchpad_desc();
    } else {
      e->prim = dnnl::batch_normalization_forward(fwd);
      e->scratch = fwd.scratchpad_desc();
    }
    return e;
  }

  dnnl::engine engine_;
  onednn::PrimitiveCache<Entry> cache_;
};

}  // namespace

void BatchNorm::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  OneDnnBatchNorm::get().forward(in[0]->shape(), static_cast<float>(attrs.get<double>("eps")),
                                 in[0]->data(), in[1]->data(), in[2]->data(), out[0]->data(),
                                 out[1]->data(), out[2]->data());
}

void BatchNormGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  OneDnnBatchNorm::get().backward(in[1]->shape(), static_cast<float>(attrs.get<double>("eps")),
                                  in[0]->data(), in[1]->data(), in[2]->data(), in[3]->data(),
                                  in[4]->data(), out[0]->data(), out[1]->data(), out[2]->data());
}

}  // namespace oneflow
