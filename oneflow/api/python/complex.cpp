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
  m.def("view_as_real", [](const Tensor& z) { return F::view_as_real(z); });
  m.def("view_as_complex", [](const Tensor& x) { return F::view_as_complex(x); });
  m.def("real", [](const Tensor& z) { return F::real(z); });
  m.def("imag", [](const Tensor& z) { return F::imag(z); });
  m.def("complex", [](const Tensor& re, const Tensor& im) {
    ReleaseGil nogil;
    return F::complex(re, im);
  });
  m.def("polar", [](const Tensor& abs, const Tensor& angle) {
    ReleaseGil nogil;
    return F::polar(abs, angle);
  });
  m.def("conj_physical", [](const Tensor& z) {
    ReleaseGil nogil;
    return F::conj_physical(z);
  });
  m.def("_complex_angle", [](const Tensor& z) {
    ReleaseGil nogil;
    return F::angle(z);
  });
  m.def("fft_c2c",
        [](const Tensor& x, const std::vector<int64_t>& dims, int64_t normalization, bool forward) {
          ReleaseGil nogil;
          return F::fft_c2c(x, dims, normalization_of(normalization), forward);
        });
  m.def("fft_r2c", [](const Tensor& x, const std::vector<int64_t>& dims, int64_t normalization,
                      bool onesided) {
    ReleaseGil nogil;
    return F::fft_r2c(x, dims, normalization_of(normalization), onesided);
  });
  m.def("fft_c2r", [](const Tensor& x, const std::vector<int64_t>& dims, int64_t normalization,
                      int64_t last_dim_size) {
    ReleaseGil nogil;
    return F::fft_c2r(x, dims, normalization_of(normalization), last_dim_size);
  });
}

}  // namespace oneflow::python
