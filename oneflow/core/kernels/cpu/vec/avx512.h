// The AVX-512 tier of avx2.h's kernels: vec/avx512.cpp and vec/activation_avx512.cpp, built with
// -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma, 16 floats / 8 doubles per instruction.
// Reached only through avx2.h's entry points, which hand these out when
// cpu::capability() is kAvx512; each returns nullptr where it has no kernel for the function.
#pragma once

#include <cstdint>

#include "oneflow/core/kernels/cpu/vec/avx2.h"

namespace oneflow::cpu::avx512 {

avx2::UnaryKernel unary_kernel(UnaryFn fn);
avx2::UnaryKernel exp_kernel();
template <typename T>
avx2::BinaryKernel<T> binary_kernel(BinaryFn fn);
template <typename T>
avx2::BinaryKernel<T> pow_kernel();
template <typename T>
avx2::BinaryKernel<T> div_kernel();
void prod_rows(double* acc, const float* rows, int64_t stride, int64_t nrows, int64_t n);
void gelu(const float* x, float* y, int64_t n, bool tanh_form);
void gelu_grad(const float* dy, const float* x, float* dx, int64_t n, bool tanh_form);
template <typename C>
avx2::ActKernel<C> activation_kernel(ActFn fn);
template <typename C>
avx2::ActGradKernel<C> activation_grad_kernel(ActFn fn);
template <typename C>
avx2::ActGradKernel<C> activation_of_difference_kernel(ActFn fn);

}  // namespace oneflow::cpu::avx512
