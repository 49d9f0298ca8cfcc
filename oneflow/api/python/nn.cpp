// oneflow._C convolution and pooling ops, bound from functional/nn_functional.h with PyTorch's
// signatures (conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1), ...).
// Registered into the same _C submodule as functional.cpp.
#include "oneflow/api/python/common.h"
#include "oneflow/core/dispatch/dispatch.h"
#include "oneflow/core/functional/attention.h"
#include "oneflow/core/functional/nn_functional.h"
#include "oneflow/core/ops/sampling_primitives.h"
#include "oneflow/core/ops/special_primitives.h"

namespace oneflow::python {

namespace F = functional;

namespace {

std::string type_name(py::handle h) { return py::str(py::type::of(h).attr("__name__")); }

Tensor tensor_arg(py::handle h, const char* op, const char* what) {
  if (is_tensor(h)) return h.cast<Tensor>();
  throw_error<TypeError>(op, "expected ", what, " to be a Tensor, got ", type_name(h));
}

Tensor optional_tensor(py::handle h, const char* op, const char* what) {
  return h.is_none() ? nullptr : tensor_arg(h, op, what);
}

// An int or a sequence of ints; None entries (adaptive output sizes) become -1.
F::IntList ints(py::handle h, const char* op, const char* what, bool allow_none = false) {
  auto one = [&](py::handle v) -> int64_t {
    if (allow_none && v.is_none()) return -1;
    if (PyBool_Check(v.ptr()) || !PyLong_Check(v.ptr()))
      throw_error<TypeError>(op, "expected ", what, " to be an int or a tuple of ints, got ",
                             type_name(v));
    return v.cast<int64_t>();
  };
  if (py::isinstance<py::sequence>(h) && !py::isinstance<py::str>(h)) {
    F::IntList out;
    // iter() rather than len() and indexing: len() of a 0-dim tensor raises, and pybind11's
    // sequence loop would leave that error set (a SystemError later).
    for (py::handle v : h) out.push_back(one(v));
    return out;
  }
  return {one(h)};
}

py::object pool_result(const TensorList& out) {
  if (out.size() == 1) return py::cast(out[0]);
  return py::make_tuple(out[0], out[1]);
}

template <int64_t NSP>
void bind_nd(py::module_& m) {
  static const std::string sfx = std::to_string(NSP) + "d";
  static const std::string conv = "conv" + sfx, convt = "conv_transpose" + sfx,
                           maxp = "max_pool" + sfx, avgp = "avg_pool" + sfx,
                           aavg = "adaptive_avg_pool" + sfx, amax = "adaptive_max_pool" + sfx;
  const char *conv_op = conv.c_str(), *convt_op = convt.c_str(), *max_op = maxp.c_str(),
             *avg_op = avgp.c_str(), *aavg_op = aavg.c_str(), *amax_op = amax.c_str();

  m.def(
      conv_op,
      [conv_op](py::handle input, py::handle weight, py::handle bias, py::handle stride,
                py::handle padding, py::handle dilation, int64_t groups) {
        Tensor x = tensor_arg(input, conv_op, "input"), w = tensor_arg(weight, conv_op, "weight");
        Tensor b = optional_tensor(bias, conv_op, "bias");
        std::string mode;
        F::IntList pad{0};
        if (py::isinstance<py::str>(padding))
          mode = padding.cast<std::string>();
        else
          pad = ints(padding, conv_op, "padding");
        F::IntList st = ints(stride, conv_op, "stride"), dil = ints(dilation, conv_op, "dilation");
        ReleaseGil nogil;
        return F::conv(conv_op, NSP, x, w, b, st, pad, mode, dil, groups);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);

  m.def(
      convt_op,
      [convt_op](py::handle input, py::handle weight, py::handle bias, py::handle stride,
                 py::handle padding, py::handle output_padding, int64_t groups,
                 py::handle dilation) {
        Tensor x = tensor_arg(input, convt_op, "input");
        Tensor w = tensor_arg(weight, convt_op, "weight");
        Tensor b = optional_tensor(bias, convt_op, "bias");
        F::IntList st = ints(stride, convt_op, "stride"), pad = ints(padding, convt_op, "padding"),
                   op = ints(output_padding, convt_op, "output_padding"),
                   dil = ints(dilation, convt_op, "dilation");
        ReleaseGil nogil;
        return F::conv_transpose(convt_op, NSP, x, w, b, st, pad, op, groups, dil);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("groups") = 1,
      py::arg("dilation") = 1);

  m.def(
      max_op,
      [max_op](py::handle input, py::handle kernel_size, py::handle stride, py::handle padding,
               py::handle dilation, bool ceil_mode, bool return_indices) {
        Tensor x = tensor_arg(input, max_op, "input");
        F::IntList k = ints(kernel_size, max_op, "kernel_size");
        // None or an empty list (PyTorch's default) means stride = kernel_size.
        F::IntList st = stride.is_none() ? F::IntList{} : ints(stride, max_op, "stride");
        F::IntList pad = ints(padding, max_op, "padding"), dil = ints(dilation, max_op, "dilation");
        TensorList out;
        {
          ReleaseGil nogil;
          out = F::max_pool(max_op, NSP, x, k, st, pad, dil, ceil_mode, return_indices);
        }
        return pool_result(out);
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(),
      py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("ceil_mode") = false,
      py::arg("return_indices") = false);

  auto avg = [avg_op](py::handle input, py::handle kernel_size, py::handle stride,
                      py::handle padding, bool ceil_mode, bool count_include_pad,
                      py::handle divisor_override) {
    Tensor x = tensor_arg(input, avg_op, "input");
    F::IntList k = ints(kernel_size, avg_op, "kernel_size");
    F::IntList st = stride.is_none() ? F::IntList{} : ints(stride, avg_op, "stride");
    F::IntList pad = ints(padding, avg_op, "padding");
    std::optional<int64_t> div;
    if (!divisor_override.is_none()) {
      const F::IntList d = ints(divisor_override, avg_op, "divisor_override");
      if (d.size() != 1)  // an empty list or tensor: there is no [0] to read
        throw_error<TypeError>(avg_op, "expected divisor_override to be an int, got ",
                               type_name(divisor_override));
      div = d[0];
    }
    ReleaseGil nogil;
    return F::avg_pool(avg_op, NSP, x, k, st, pad, ceil_mode, count_include_pad, div);
  };
  if constexpr (NSP == 1) {
    m.def(
        avg_op,
        [avg](py::handle input, py::handle kernel_size, py::handle stride, py::handle padding,
              bool ceil_mode, bool count_include_pad) {
          return avg(input, kernel_size, stride, padding, ceil_mode, count_include_pad, py::none());
        },
        py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(),
        py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true);
  } else {
    m.def(avg_op, avg, py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(),
          py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true,
          py::arg("divisor_override") = py::none());
  }

  m.def(
      aavg_op,
      [aavg_op](py::handle input, py::handle output_size) {
        Tensor x = tensor_arg(input, aavg_op, "input");
        F::IntList os = ints(output_size, aavg_op, "output_size", true);
        ReleaseGil nogil;
        return F::adaptive_avg_pool(aavg_op, NSP, x, os);
      },
      py::arg("input"), py::arg("output_size"));

  m.def(
      amax_op,
      [amax_op](py::handle input, py::handle output_size, bool return_indices) {
        Tensor x = tensor_arg(input, amax_op, "input");
        F::IntList os = ints(output_size, amax_op, "output_size", true);
        TensorList out;
        {
          ReleaseGil nogil;
          out = F::adaptive_max_pool(amax_op, NSP, x, os, return_indices);
        }
        return pool_result(out);
      },
      py::arg("input"), py::arg("output_size"), py::arg("return_indices") = false);
}

}  // namespace

void init_nn(py::module_& m) {
  bind_nd<1>(m);
  bind_nd<2>(m);
  bind_nd<3>(m);
  m.def(
      "border_pad",
      [](py::handle input, py::handle pad, const std::string& mode, double value) {
        Tensor x = tensor_arg(input, "pad", "input");
        F::IntList p = ints(pad, "pad", "pad");
        ReleaseGil nogil;
        return F::border_pad(x, p, mode, value);
      },
      py::arg("input"), py::arg("pad"), py::arg("mode"), py::arg("value") = 0.0);
  m.def(
      "resample",
      [](py::handle input, const Tensor& index, const Tensor& weight, int64_t dim) {
        Tensor x = tensor_arg(input, "resample", "input");
        ReleaseGil nogil;
        return F::resample(x, index, weight, dim);
      },
      py::arg("input"), py::arg("index"), py::arg("weight"), py::arg("dim"));
  m.def("_fused_attention_supported", [](const Tensor& q, const Tensor& k, const Tensor& v) {
    return F::fused_attention_supported(q, k, v);
  });
  m.def(
      "_fused_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal) {
        ReleaseGil nogil;
        return F::fused_attention(q, k, v, scale, causal);
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("scale"), py::arg("causal"));
  m.def("_nll_loss", [](const Tensor& logp, const Tensor& target, std::optional<Tensor> weight,
                        int64_t ignore_index, bool mean) {
    ReleaseGil nogil;
    return F::nll_loss(logp, target, weight.value_or(nullptr), ignore_index, mean);
  });
  m.def("_cross_entropy",
        [](const Tensor& logits, const Tensor& target, std::optional<Tensor> weight,
           int64_t ignore_index, bool mean, double label_smoothing) {
          ReleaseGil nogil;
          return F::cross_entropy_indices(logits, target, weight.value_or(nullptr), ignore_index,
                                          mean, label_smoothing);
        });
  m.def(
      "mse_loss",
      [](py::handle input, py::handle target, const std::string& reduction) {
        Tensor x = tensor_arg(input, "mse_loss", "input");
        Tensor t = tensor_arg(target, "mse_loss", "target");
        ReleaseGil nogil;
        return F::mse_loss(x, t, reduction);
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean");
  m.def("_pointwise_loss",
        [](int act, double p, py::handle input, py::handle target, const std::string& reduction) {
          Tensor x = tensor_arg(input, fn_name(ActFn(act)), "input");
          Tensor t = tensor_arg(target, fn_name(ActFn(act)), "target");
          ReleaseGil nogil;
          return F::pointwise_loss(ActFn(act), p, x, t, reduction);
        });
  // The one-pass CPU kernels of grid_sample (4-D and 5-D; mode 0 (bi/tri)linear, 1 nearest; padding
  // 0 zeros, 1 border, 2 reflection), pdist and the CTC loss (per-sequence negative log
  // likelihood). The Python layer checks the arguments and picks these or its composition.
  m.def("_grid_sample", [](const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                           bool align_corners) {
    ReleaseGil nogil;
    return dispatch1(prim::grid_sample(), {F::contiguous(input), F::contiguous(grid)},
                     Attrs{{"mode", mode}, {"padding", padding}, {"align_corners", align_corners}});
  });
  // P(a, x) or, with upper, Q(a, x): a and x already broadcast to one shape and floating dtype.
  m.def("_igamma", [](const Tensor& a, const Tensor& x, bool upper) {
    ReleaseGil nogil;
    return dispatch1(prim::igamma(), {F::contiguous(a), F::contiguous(x)}, Attrs{{"upper", upper}});
  });
  // embedding_bag's max: rows (K, D) grouped by non-decreasing segment ids -> max; with row
  // numbers, the rows values[rows[k]] (the weight read in place)
  m.def(
      "_segment_max",
      [](const Tensor& values, const Tensor& segments, int64_t count,
         const std::optional<Tensor>& rows) {
        ReleaseGil nogil;
        TensorList in{F::contiguous(values), F::contiguous(segments)};
        if (rows) in.push_back(F::contiguous(*rows));
        return dispatch(prim::segment_max(), in, Attrs{{"segments", count}})[0];
      },
      py::arg("values"), py::arg("segments"), py::arg("count"), py::arg("rows") = py::none());
  m.def("_pdist", [](const Tensor& input, double p) {
    ReleaseGil nogil;
    return dispatch1(prim::pdist(), {F::contiguous(input)}, Attrs{{"p", p}});
  });
  m.def("_ctc_loss", [](const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                        const Tensor& target_lengths, int64_t blank, bool zero_infinity) {
    ReleaseGil nogil;
    return dispatch(prim::ctc_loss(),
                    {F::contiguous(log_probs), F::contiguous(targets), F::contiguous(input_lengths),
                     F::contiguous(target_lengths)},
                    Attrs{{"blank", blank}, {"zero_infinity", zero_infinity}})[0];
  });
}

}  // namespace oneflow::python
