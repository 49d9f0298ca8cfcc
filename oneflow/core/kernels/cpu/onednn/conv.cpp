// CPU convolution kernels: forward, backward-data and backward-weights.
//
// float32 runs on oneDNN: the primitive picks its preferred (blocked) memory formats
// (format_tag::any) and the operands are reordered from and to the plain NC* layout; primitives,
// reorders and the blocked buffers are cached per shape and parameters. float64 (oneDNN has no
// f64 convolution), empty tensors and the rare parameter sets oneDNN rejects run the direct
// OpenMP loops below (reference-grade speed). Every oneDNN call stays in kernels/cpu/onednn/
// (DESIGN.md section 9).
#include <dnnl.hpp>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "oneflow/core/kernels/cpu/onednn/common.h"
#include "oneflow/core/ops/nn_primitives.h"

namespace oneflow {

namespace {

using Ints = std::vector<int64_t>;

// A conv problem: x [N, C, *in], w [O, C / G, *k], y [N, O, *out]. The spatial arrays are
// canonical 3-D: missing leading dims have size 1, kernel 1, stride 1, no padding.
struct ConvGeom {
  int64_t nsp = 0, N = 0, C = 0, O = 0, G = 1;
  int64_t in[3], out[3], k[3], s[3], pl[3], d[3];

  ConvGeom(const Shape& x, const Shape& w, const Shape& y, const Attrs& a) {
    const auto &stride = a.get<Ints>("stride"), &pad = a.get<Ints>("padding_l"),
               &dil = a.get<Ints>("dilation");
    nsp = static_cast<int64_t>(stride.size());
    N = x[0], C = x[1], O = w[0], G = a.get<int64_t>("groups");
    const int64_t lead = 3 - nsp;
    for (int64_t i = 0; i < 3; ++i) {
      const bool real = i >= lead;
      in[i] = real ? x[2 + i - lead] : 1;
      out[i] = real ? y[2 + i - lead] : 1;
      k[i] = real ? w[2 + i - lead] : 1;
      s[i] = real ? stride[i - lead] : 1;
      pl[i] = real ? pad[i - lead] : 0;
      d[i] = real ? dil[i - lead] : 1;
    }
  }
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

// ---- direct loops (float64 and fallbacks) ----

template <typename T>
void conv_forward_loop(const ConvGeom& g, const T* x, const T* w, const T* b, T* y) {
  const int64_t Cg = g.C / g.G, Og = g.O / g.G, IS = g.in_size(), OS = g.out_size();
  const int64_t KS = g.k_size();
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t o = 0; o < g.O; ++o) {
      const int64_t grp = o / Og;
      T* yp = y + (n * g.O + o) * OS;
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            T acc = b ? b[o] : T(0);
            for (int64_t c = 0; c < Cg; ++c) {
              const T* xp = x + (n * g.C + grp * Cg + c) * IS;
              const T* wp = w + (o * Cg + c) * KS;
              for (int64_t kd = 0; kd < g.k[0]; ++kd) {
                const int64_t id = od * g.s[0] - g.pl[0] + kd * g.d[0];
                if (id < 0 || id >= g.in[0]) continue;
                for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                  const int64_t ih = oh * g.s[1] - g.pl[1] + kh * g.d[1];
                  if (ih < 0 || ih >= g.in[1]) continue;
                  for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                    const int64_t iw = ow * g.s[2] - g.pl[2] + kw * g.d[2];
                    if (iw < 0 || iw >= g.in[2]) continue;
                    acc += xp[(id * g.in[1] + ih) * g.in[2] + iw] *
                           wp[(kd * g.k[1] + kh) * g.k[2] + kw];
                  }
                }
              }
            }
            yp[(od * g.out[1] + oh) * g.out[2] + ow] = acc;
          }
    }
}

// Input position `i` meets output position o = (i + pad - k * dil) / stride when that divides.
inline bool out_pos(int64_t i, int64_t pad, int64_t kk, int64_t dil, int64_t stride, int64_t n,
                    int64_t* o) {
  const int64_t t = i + pad - kk * dil;
  if (t < 0 || t % stride != 0) return false;
  *o = t / stride;
  return *o < n;
}

template <typename T>
void conv_backward_data_loop(const ConvGeom& g, const T* dy, const T* w, T* dx) {
  const int64_t Cg = g.C / g.G, Og = g.O / g.G, IS = g.in_size(), OS = g.out_size();
  const int64_t KS = g.k_size();
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t ci = 0; ci < g.C; ++ci) {
      const int64_t grp = ci / Cg, c = ci % Cg;
      T* dxp = dx + (n * g.C + ci) * IS;
      for (int64_t id = 0; id < g.in[0]; ++id)
        for (int64_t ih = 0; ih < g.in[1]; ++ih)
          for (int64_t iw = 0; iw < g.in[2]; ++iw) {
            T acc = T(0);
            for (int64_t o = grp * Og; o < (grp + 1) * Og; ++o) {
              const T* dyp = dy + (n * g.O + o) * OS;
              const T* wp = w + (o * Cg + c) * KS;
              for (int64_t kd = 0; kd < g.k[0]; ++kd) {
                int64_t od, oh, ow;
                if (!out_pos(id, g.pl[0], kd, g.d[0], g.s[0], g.out[0], &od)) continue;
                for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                  if (!out_pos(ih, g.pl[1], kh, g.d[1], g.s[1], g.out[1], &oh)) continue;
                  for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                    if (!out_pos(iw, g.pl[2], kw, g.d[2], g.s[2], g.out[2], &ow)) continue;
                    acc += dyp[(od * g.out[1] + oh) * g.out[2] + ow] *
                           wp[(kd * g.k[1] + kh) * g.k[2] + kw];
                  }
                }
              }
            }
            dxp[(id * g.in[1] + ih) * g.in[2] + iw] = acc;
          }
    }
}

template <typename T>
void conv_backward_weight_loop(const ConvGeom& g, const T* x, const T* dy, T* dw) {
  const int64_t Cg = g.C / g.G, Og = g.O / g.G, IS = g.in_size(), OS = g.out_size();
  const int64_t KS = g.k_size();
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < g.O; ++o)
    for (int64_t c = 0; c < Cg; ++c) {
      const int64_t ci = (o / Og) * Cg + c;
      for (int64_t kd = 0; kd < g.k[0]; ++kd)
        for (int64_t kh = 0; kh < g.k[1]; ++kh)
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            T acc = T(0);
            for (int64_t n = 0; n < g.N; ++n) {
              const T* xp = x + (n * g.C + ci) * IS;
              const T* dyp = dy + (n * g.O + o) * OS;
              for (int64_t od = 0; od < g.out[0]; ++od) {
                const int64_t id = od * g.s[0] - g.pl[0] + kd * g.d[0];
                if (id < 0 || id >= g.in[0]) continue;
                for (int64_t oh = 0; oh < g.out[1]; ++oh) {
                  const int64_t ih = oh * g.s[1] - g.pl[1] + kh * g.d[1];
                  if (ih < 0 || ih >= g.in[1]) continue;
                  for (int64_t ow = 0; ow < g.out[2]; ++ow) {
                    const int64_t iw = ow * g.s[2] - g.pl[2] + kw * g.d[2];
                    if (iw < 0 || iw >= g.in[2]) continue;
                    acc += dyp[(od * g.out[1] + oh) * g.out[2] + ow] *
                           xp[(id * g.in[1] + ih) * g.in[2] + iw];
                  }
                }
              }
            }
            dw[(o * Cg + c) * KS + (kd * g.k[1] + kh) * g.k[2] + kw] = acc;
          }
    }
}

// ---- oneDNN ----

enum class ConvKind { kForward, kBackwardData, kBackwardWeight };

// The operands of a conv problem by role: X (input / its gradient), W (weights / their
// gradient), Y (output / its gradient), B (bias, forward only).
enum Role { kX = 0, kW = 1, kY = 2 };

class OneDnnConv {
 public:
  static OneDnnConv& get() {
    static OneDnnConv* instance = new OneDnnConv();
    return *instance;
  }

  // Runs one conv problem on plain contiguous buffers; false when oneDNN has no kernel for it
  // (the caller then runs the direct loop).
  bool run(ConvKind kind, const Shape& xs, const Shape& ws, const Shape& ys, const Attrs& a,
           void* x, void* w, void* y, void* bias) {
    std::shared_ptr<Entry> e = entry(kind, xs, ws, ys, a, bias != nullptr);
    if (!e) return false;
    std::lock_guard<std::mutex> lock(e->mu);
    dnnl::stream stream(engine_);
    void* user[3] = {x, w, y};
    std::unordered_map<int, dnnl::memory> args;
    for (int r = 0; r < 3; ++r) {
      dnnl::memory um(e->user_md[r], engine_, user[r]);
      const bool is_out = r == e->output_role;
      if (e->reorder[r]) {
        if (!is_out)
          onednn::execute(e->to_prim[r], stream, {{DNNL_ARG_FROM, um}, {DNNL_ARG_TO, e->tmp[r]}},
                          e->to_prim_scratch[r], engine_);
        args[e->arg[r]] = e->tmp[r];
      } else {
        args[e->arg[r]] = um;
      }
    }
    if (bias) args[DNNL_ARG_BIAS] = dnnl::memory(e->bias_md, engine_, bias);
    onednn::execute(e->prim, stream, std::move(args), e->scratch, engine_);
    const int r = e->output_role;
    if (e->reorder[r]) {
      dnnl::memory um(e->user_md[r], engine_, user[r]);
      onednn::execute(e->to_user, stream, {{DNNL_ARG_FROM, e->tmp[r]}, {DNNL_ARG_TO, um}},
                      e->to_user_scratch, engine_);
    }
    stream.wait();
    return true;
  }

 private:
  struct Entry {
    std::mutex mu;
    dnnl::primitive prim;
    dnnl::memory::desc user_md[3], bias_md;
    int arg[3] = {0, 0, 0};
    int output_role = kY;
    bool reorder[3] = {false, false, false};
    dnnl::reorder to_prim[3];  // user -> primitive layout, for inputs
    dnnl::reorder to_user;     // primitive -> user layout, for the output
    dnnl::memory tmp[3];       // the operands in the primitive's layout
    dnnl::memory::desc scratch, to_prim_scratch[3], to_user_scratch;
  };

  OneDnnConv() : engine_(dnnl::engine::kind::cpu, 0) {}

  static dnnl::memory::dims dims_of(const Shape& s) {
    return dnnl::memory::dims(s.begin(), s.end());
  }

  std::shared_ptr<Entry> entry(ConvKind kind, const Shape& xs, const Shape& ws, const Shape& ys,
                               const Attrs& a, bool with_bias) {
    const int64_t groups = a.get<int64_t>("groups");
    const auto &stride = a.get<Ints>("stride"), &pl = a.get<Ints>("padding_l"),
               &dil = a.get<Ints>("dilation");
    // oneDNN checks (in - ext_k + pl + pr) / s + 1 == out; the right padding that makes it exact
    // changes nothing else (only pl and the stride place the windows).
    Ints pr(stride.size()), dl(stride.size());
    for (size_t i = 0; i < stride.size(); ++i) {
      pr[i] = (ys[i + 2] - 1) * stride[i] + dil[i] * (ws[i + 2] - 1) + 1 - xs[i + 2] - pl[i];
      if (pr[i] + stride[i] <= 0) return nullptr;
      dl[i] = dil[i] - 1;
    }
    std::string key;
    key += static_cast<char>('0' + static_cast<int>(kind));
    key += with_bias ? 'b' : '-';
    auto add = [&key](const auto& v) {
      for (int64_t x : v) key += std::to_string(x) + ",";
    };
    add(xs), add(ws), add(ys), add(stride), add(pl), add(pr), add(dil);
    key += std::to_string(groups);
    return cache_.get(key, [&]() -> std::shared_ptr<Entry> {
      try {
        return build(kind, xs, ws, ys, groups, stride, dl, pl, pr, with_bias);
      } catch (const dnnl::error&) {
        return nullptr;  // the loop handles this problem from now on
      }
    });
  }

  std::shared_ptr<Entry> build(ConvKind kind, const Shape& xs, const Shape& ws, const Shape& ys,
                               int64_t groups, const Ints& stride, const Ints& dl, const Ints& pl,
                               const Ints& pr, bool with_bias) {
    using dnnl::memory;
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    Shape wdims = ws;  // grouped weights: [G, O / G, C / G, *k], same memory as [O, C / G, *k]
    if (groups > 1) {
      wdims[0] /= groups;
      wdims.insert(wdims.begin(), groups);
    }
    auto e = std::make_shared<Entry>();
    e->user_md[kX] = memory::desc(dims_of(xs), f32, dims_of(contiguous_strides(xs)));
    e->user_md[kW] = memory::desc(dims_of(wdims), f32, dims_of(contiguous_strides(wdims)));
    e->user_md[kY] = memory::desc(dims_of(ys), f32, dims_of(contiguous_strides(ys)));
    e->bias_md = memory::desc({ws[0]}, f32, tag::a);
    const memory::desc x_any(dims_of(xs), f32, tag::any), w_any(dims_of(wdims), f32, tag::any),
        y_any(dims_of(ys), f32, tag::any);
    const auto alg = dnnl::algorithm::convolution_direct;
    const memory::dims st(stride.begin(), stride.end()), pad_l(pl.begin(), pl.end()),
        pad_r(pr.begin(), pr.end()), dil(dl.begin(), dl.end());
    const dnnl::primitive_attr attr = onednn::user_scratchpad();
    dnnl::convolution_forward::primitive_desc fwd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, x_any, w_any,
                                        with_bias ? e->bias_md : memory::desc(), y_any, st, dil,
                                        pad_l, pad_r),
        attr, engine_);
    memory::desc prim_md[3];
    switch (kind) {
      case ConvKind::kForward:
        e->prim = dnnl::convolution_forward(fwd);
        e->scratch = fwd.scratchpad_desc();
        prim_md[kX] = fwd.src_desc(), prim_md[kW] = fwd.weights_desc();
        prim_md[kY] = fwd.dst_desc();
        e->arg[kX] = DNNL_ARG_SRC, e->arg[kW] = DNNL_ARG_WEIGHTS, e->arg[kY] = DNNL_ARG_DST;
        e->output_role = kY;
        break;
      case ConvKind::kBackwardData: {
        dnnl::convolution_backward_data::primitive_desc pd(
            dnnl::convolution_backward_data::desc(alg, x_any, w_any, y_any, st, dil, pad_l, pad_r),
            attr, engine_, fwd);
        e->prim = dnnl::convolution_backward_data(pd);
        e->scratch = pd.scratchpad_desc();
        prim_md[kX] = pd.diff_src_desc(), prim_md[kW] = pd.weights_desc();
        prim_md[kY] = pd.diff_dst_desc();
        e->arg[kX] = DNNL_ARG_DIFF_SRC, e->arg[kW] = DNNL_ARG_WEIGHTS;
        e->arg[kY] = DNNL_ARG_DIFF_DST;
        e->output_role = kX;
        break;
      }
      case ConvKind::kBackwardWeight: {
        dnnl::convolution_backward_weights::primitive_desc pd(
            dnnl::convolution_backward_weights::desc(alg, x_any, w_any, y_any, st, dil, pad_l,
                                                     pad_r),
            attr, engine_, fwd);
        e->prim = dnnl::convolution_backward_weights(pd);
        e->scratch = pd.scratchpad_desc();
        prim_md[kX] = pd.src_desc(), prim_md[kW] = pd.diff_weights_desc();
        prim_md[kY] = pd.diff_dst_desc();
        e->arg[kX] = DNNL_ARG_SRC, e->arg[kW] = DNNL_ARG_DIFF_WEIGHTS;
        e->arg[kY] = DNNL_ARG_DIFF_DST;
        e->output_role = kW;
        break;
      }
    }
    for (int r = 0; r < 3; ++r) {
      if (prim_md[r] == e->user_md[r]) continue;
      e->reorder[r] = true;
      e->tmp[r] = memory(prim_md[r], engine_);
      if (r == e->output_role) {
        dnnl::reorder::primitive_desc rpd(engine_, prim_md[r], engine_, e->user_md[r], attr);
        e->to_user = dnnl::reorder(rpd);
        e->to_user_scratch = rpd.scratchpad_desc();
      } else {
        dnnl::reorder::primitive_desc rpd(engine_, e->user_md[r], engine_, prim_md[r], attr);
        e->to_prim[r] = dnnl::reorder(rpd);
        e->to_prim_scratch[r] = rpd.scratchpad_desc();
      }
    }
    return e;
  }

  dnnl::engine engine_;
  onednn::PrimitiveCache<Entry> cache_;
};

bool has_zero(const Shape& s) {
  for (int64_t v : s)
    if (v == 0) return true;
  return false;
}

// Runs the problem on oneDNN when it can (float32, nothing empty), else the direct loop.
template <typename Loop>
void run_conv(ConvKind kind, DType dt, const Shape& xs, const Shape& ws, const Shape& ys,
              const Attrs& a, void* x, void* w, void* y, void* bias, Loop loop) {
  if (dt == DType::kFloat32 && !has_zero(xs) && !has_zero(ws) && !has_zero(ys) &&
      OneDnnConv::get().run(kind, xs, ws, ys, a, x, w, y, bias))
    return;
  if (dt == DType::kFloat32)
    loop.template operator()<float>();
  else if (dt == DType::kFloat64)
    loop.template operator()<double>();
  else if (is_integral(dt, false))  // forward only, wrapping like PyTorch's integer slow_conv
    visit_dtype(dt, [&]<typename T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        loop.template operator()<T>();
    });
  else
    throw_error<RuntimeError>("conv", "unsupported dtype ", dtype_name(dt));
}

}  // namespace

void ConvForward::compute_cpu(const TensorList& in, const TensorList& out,
                              const Attrs& attrs) const {
  const Tensor &x = in[0], &w = in[1], &y = out[0];
  const Tensor bias = in.size() == 3 ? in[2] : nullptr;
  if (y->numel() == 0) return;
  const ConvGeom g(x->shape(), w->shape(), y->shape(), attrs);
  run_conv(ConvKind::kForward, x->dtype(), x->shape(), w->shape(), y->shape(), attrs, x->data(),
           w->data(), y->data(), bias ? bias->data() : nullptr, [&]<typename T>() {
             conv_forward_loop<T>(g, x->data_as<T>(), w->data_as<T>(),
                                  bias ? bias->data_as<T>() : nullptr, y->data_as<T>());
           });
}

void ConvBackwardData::compute_cpu(const TensorList& in, const TensorList& out,
                                   const Attrs& attrs) const {
  const Tensor &dy = in[0], &w = in[1], &dx = out[0];
  if (dx->numel() == 0) return;
  const ConvGeom g(dx->shape(), w->shape(), dy->shape(), attrs);
  run_conv(ConvKind::kBackwardData, dy->dtype(), dx->shape(), w->shape(), dy->shape(), attrs,
           dx->data(), w->data(), dy->data(), nullptr, [&]<typename T>() {
             conv_backward_data_loop<T>(g, dy->data_as<T>(), w->data_as<T>(), dx->data_as<T>());
           });
}

void ConvBackwardWeight::compute_cpu(const TensorList& in, const TensorList& out,
                                     const Attrs& attrs) const {
  const Tensor &x = in[0], &dy = in[1], &dw = out[0];
  if (dw->numel() == 0) return;
  const ConvGeom g(x->shape(), dw->shape(), dy->shape(), attrs);
  run_conv(ConvKind::kBackwardWeight, x->dtype(), x->shape(), dw->shape(), dy->shape(), attrs,
           x->data(), dw->data(), dy->data(), nullptr, [&]<typename T>() {
             conv_backward_weight_loop<T>(g, x->data_as<T>(), dy->data_as<T>(), dw->data_as<T>());
           });
}

}  // namespace oneflow
