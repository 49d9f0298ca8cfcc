// Softmax and log-softmax, forward and backward, on oneDNN (float32). The tensor is seen as
// (outer, n, inner) around the softmax dim, so one primitive serves every shape with the same
// three sizes. Primitives are cached by those sizes and the algorithm.
#include <cmath>
#include <dnnl.hpp>
#include <limits>
#include <memory>
#include <string>

#include <omp.h>

#include "oneflow/core/kernels/cpu/onednn/common.h"
#include "oneflow/core/kernels/cpu/onednn/kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"

namespace oneflow::onednn {

namespace {

class OneDnnSoftmax {
 public:
  static OneDnnSoftmax& get() {
    static OneDnnSoftmax* instance = new OneDnnSoftmax();
    return *instance;
  }

  void forward(const Tensor& x, const Tensor& y, int64_t dim, bool log) {
    std::shared_ptr<Entry> e = entry(false, x->shape(), dim, log);
    dnnl::stream stream(engine_);
    execute(e->prim, stream, {{DNNL_ARG_SRC, mem(e->data, x)}, {DNNL_ARG_DST, mem(e->data, y)}},
            e->scratch, engine_);
    stream.wait();
  }

  void backward(const Tensor& dy, const Tensor& y, const Tensor& dx, int64_t dim, bool log) {
    std::shared_ptr<Entry> e = entry(true, y->shape(), dim, log);
    dnnl::stream stream(engine_);
    execute(e->prim, stream,
            {{DNNL_ARG_DST, mem(e->data, y)},
             {DNNL_ARG_DIFF_DST, mem(e->data, dy)},
             {DNNL_ARG_DIFF_SRC, mem(e->data, dx)}},
            e->scratch, engine_);
    stream.wait();
  }

 private:
  struct Entry {
    dnnl::primitive prim;
    dnnl::memory::desc data, scratch;
  };

  OneDnnSoftmax() : engine_(dnnl::engine::kind::cpu, 0) {}

  dnnl::memory mem(const dnnl::memory::desc& d, const Tensor& t) const {
    return dnnl::memory(d, engine_, t->data());
  }

  std::shared_ptr<Entry> entry(bool backward, const Shape& shape, int64_t dim, bool log) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
    for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d) inner *= shape[d];
    const int64_t n = shape.empty() ? 1 : shape[dim];
    const std::string key = std::string(backward ? "b" : "f") + (log ? "l" : "s") +
                            std::to_string(outer) + "," + std::to_string(n) + "," +
                            std::to_string(inner);
    return cache_.get(key, [&] { return build(backward, outer, n, inner, log); });
  }

  std::shared_ptr<Entry> build(bool backward, int64_t outer, int64_t n, int64_t inner, bool log) {
    using dnnl::memory;
    auto e = std::make_shared<Entry>();
    e->data = inner == 1 ? memory::desc({outer, n}, memory::data_type::f32, memory::format_tag::ab)
                         : memory::desc({outer, n, inner}, memory::data_type::f32,
                                        memory::format_tag::abc);
    const auto alg = log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
    const dnnl::primitive_attr attr = user_scratchpad();
    dnnl::softmax_v2_forward::primitive_desc fwd(
        dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_training, alg, e->data, e->data, 1),
        attr, engine_);
    if (backward) {
      dnnl::softmax_v2_backward::primitive_desc bwd(
          dnnl::softmax_v2_backward::desc(alg, e->data, e->data, e->data, 1), attr, engine_, fwd);
      e->prim = dnnl::softmax_v2_backward(bwd);
      e->scratch = bwd.scratchpad_desc();
    } else {
      e->prim = dnnl::softmax_v2_forward(fwd);
      e->scratch = fwd.scratchpad_desc();
    }
    return e;
  }

  dnnl::engine engine_;
  PrimitiveCache<Entry> cache_;
};

// oneDNN's softmax skips NaN when it takes a row's maximum, so a NaN (or +inf, or a row of
// -inf) spoils only its own element; PyTorch's whole row is NaN then. And its log-softmax
// backward clamps exp's argument, so a NaN row of y gives finite or infinite gradients. Rows of
// `dst` whose row of `src` holds a NaN are filled with NaN (a scan of `src`; the fill runs only
// when it finds one).
void spread_nan_over_rows(const Tensor& src, const Tensor& dst, int64_t dim) {
  const float* p = src->data_as<float>();
  float* q = dst->data_as<float>();
  const int64_t total = src->numel();
  int any = 0;  // an OR of comparisons, which the compiler vectorises
  OF_OMP_FOR_IF(total > (1 << 16),
                reduction(|
                          : any) schedule(static),
                for (int64_t i = 0; i < total; ++i) any |= p[i] != p[i];);
  if (!any) return;
  const Shape& shape = src->shape();
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d) inner *= shape[d];
  const int64_t n = shape.empty() ? 1 : shape[dim], outer = total / (n * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      const int64_t start = o * n * inner + k;
      bool nan = false;
      for (int64_t i = 0; i < n && !nan; ++i) nan = std::isnan(p[start + i * inner]);
      if (nan)
        for (int64_t i = 0; i < n; ++i)
          q[start + i * inner] = std::numeric_limits<float>::quiet_NaN();
    }
}

}  // namespace

void softmax_forward(const Tensor& x, const Tensor& y, int64_t dim, bool log) {
  if (x->numel() == 0) return;
  OneDnnSoftmax::get().forward(x, y, dim, log);
  spread_nan_over_rows(y, y, dim);
}

void softmax_backward(const Tensor& dy, const Tensor& y, const Tensor& dx, int64_t dim, bool log) {
  if (y->numel() == 0) return;
  OneDnnSoftmax::get().backward(dy, y, dx, dim, log);
  if (log) spread_nan_over_rows(y, dx, dim);
}

}  // namespace oneflow::onednn
