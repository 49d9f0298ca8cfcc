// oneflow._C's complex ops and discrete Fourier transforms (functional/complex.h). The
// torch.fft-style functions (sizes, norms, Hermitian variants) are Python, in oneflow/fft, over
// fft_c2c, fft_r2c and fft_c2r.
#include "oneflow/core/functional/complex.h"
#include "oneflow/api/python/common.h"

namespace oneflow::python {

namespace F = functional;

namespace {

int64_t normalization_of(int64_t mode) {
  if (mode < 0 || mode > 2)
    throw_error<ValueError>("fft", "normalization must be 0 (none), 1 (1/sqrt(n)) or 2 (1/n), ",
                            "got ", mode);
  return mode;
}

}  // namespace

void init_complex(py::module_& m) {
  // Arguments arrive as handles: None raises a TypeError naming the op (a null Tensor would not).
  m.def("view_as_real",
        [](py::handle z) { return F::view_as_real(as_tensor(z, "view_as_real", "input")); });
  m.def("view_as_complex",
        [](py::handle x) { return F::view_as_complex(as_tensor(x, "view_as_complex", "input")); });
  m.def("real", [](py::handle z) { return F::real(as_tensor(z, "real", "input")); });
  m.def("imag", [](py::handle z) { return F::imag(as_tensor(z, "imag", "input")); });
  m.def("complex", [](py::handle re_h, py::handle im_h) {
    const Tensor re = as_tensor(re_h, "complex", "real"), im = as_tensor(im_h, "complex", "imag");
    ReleaseGil nogil;
    return F::complex(re, im);
  });
  m.def("polar", [](py::handle abs_h, py::handle angle_h) {
    const Tensor abs = as_tensor(abs_h, "polar", "abs");
    const Tensor angle = as_tensor(angle_h, "polar", "angle");
    ReleaseGil nogil;
    return F::polar(abs, angle);
  });
  m.def("conj_physical", [](py::handle z_h) {
    const Tensor z = as_tensor(z_h, "conj_physical", "input");
    ReleaseGil nogil;
    return F::conj_physical(z);
  });
  m.def("_complex_angle", [](py::handle z_h) {
    const Tensor z = as_tensor(z_h, "angle", "input");
    ReleaseGil nogil;
    return F::angle(z);
  });
  m.def("fft_c2c",
        [](py::handle x_h, const std::vector<int64_t>& dims, int64_t normalization, bool forward) {
          const Tensor x = as_tensor(x_h, "fft_c2c", "input");
          ReleaseGil nogil;
          return F::fft_c2c(x, dims, normalization_of(normalization), forward);
        });
  m.def("fft_r2c",
        [](py::handle x_h, const std::vector<int64_t>& dims, int64_t normalization, bool onesided) {
          const Tensor x = as_tensor(x_h, "fft_r2c", "input");
          ReleaseGil nogil;
          return F::fft_r2c(x, dims, normalization_of(normalization), onesided);
        });
  m.def("fft_c2r", [](py::handle x_h, const std::vector<int64_t>& dims, int64_t normalization,
                      int64_t last_dim_size) {
    const Tensor x = as_tensor(x_h, "fft_c2r", "input");
    ReleaseGil nogil;
    return F::fft_c2r(x, dims, normalization_of(normalization), last_dim_size);
  });
}

}  // namespace oneflow::python
