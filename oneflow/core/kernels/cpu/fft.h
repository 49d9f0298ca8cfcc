// The CPU discrete Fourier transform engine behind the FftC2C / FftR2C / FftC2R kernels
// (kernels/cpu/complex.cpp). Included only by kernels/cpu/*.cpp.
//
// Each routine transforms every line along the middle dim of a contiguous array seen as
// (outer, n, inner): count = outer * inner lines of n values, line (o, i) starting at
// o * n * inner + i with stride `inner`. Transforms are unnormalised; forward uses
// exp(-2 pi i jk / n).
#pragma once

#include <complex>
#include <cstdint>

namespace oneflow::cpu::fft {

// dst (outer, n, inner) = the transforms of the lines of src (outer, n, inner). dst may be src.
template <typename T>
void c2c(const std::complex<T>* src, std::complex<T>* dst, int64_t outer, int64_t n, int64_t inner,
         bool forward);

// dst (outer, m, inner) = the first m (<= n) entries of the forward transforms of the real lines
// of src (outer, n, inner).
template <typename T>
void r2c(const T* src, std::complex<T>* dst, int64_t outer, int64_t n, int64_t inner, int64_t m);

// dst (outer, n, inner) = the inverse transforms of the Hermitian lines whose first n / 2 + 1
// entries are src (outer, n / 2 + 1, inner). The imaginary parts of entry 0 (and of entry n / 2
// for even n) are ignored, as a real signal's transform has none.
template <typename T>
void c2r(const std::complex<T>* src, T* dst, int64_t outer, int64_t n, int64_t inner);

}  // namespace oneflow::cpu::fft
