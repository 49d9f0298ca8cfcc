// Contiguous float32 (and a few float64) inner loops compiled for AVX2 + FMA (vec/avx2.cpp is built
// with -mavx2 -mfma). The generic kernels call them on their contiguous float runs when the CPU has
// both extensions (`has_avx2()`, checked once); everything else keeps the baseline (SSE2) code,
// so the library still runs on any x86-64 CPU.
//
// The functions that return kernels (unary_kernel, exp_kernel, the binary, pow and div kernels,
// the activation kernels) and gelu / gelu_grad are the entry to the widest tier the CPU has:
// where it has AVX-512 (F, DQ, BW, VL) they hand out the 16-float builds of vec/avx512.h instead.
// ONEFLOW_CPU_CAPABILITY=avx2 or =default (PyTorch's ATEN_CPU_CAPABILITY values) caps the tier.
#pragma once

#include <cstdint>

#include "oneflow/core/common/op_kinds.h"
#include "oneflow/core/kernels/common/activations.h"

namespace oneflow::cpu {

enum class Capability { kBaseline, kAvx2, kAvx512 };
// The vector tier the kernels use: the CPU's, capped by ONEFLOW_CPU_CAPABILITY (read once).
Capability capability();
// "DEFAULT", "AVX2" or "AVX512", as torch.backends.cpu.get_cpu_capability().
const char* capability_name();

}  // namespace oneflow::cpu

namespace oneflow::cpu::avx2 {

bool has_avx2();
bool has_avx512();

using UnaryKernel = void (*)(const float* x, float* y, int64_t n);

// y = f(x) for the Sleef-backed functions, sigmoid, the roundings (floor, ceil, trunc, round),
// sqrt, rsqrt, abs, neg and reciprocal, or nullptr for the others.
UnaryKernel unary_kernel(UnaryFn fn);
UnaryKernel exp_kernel();
// gelu (erf or tanh form) and its gradient dx = dy * gelu'(x).
void gelu(const float* x, float* y, int64_t n, bool tanh_form);
// dx = dy * gelu'(x) for contiguous runs.
void gelu_grad(const float* dy, const float* x, float* dx, int64_t n, bool tanh_form);
// out = f(x, y) for n elements, where xs and ys are 1 for a contiguous operand and 0 for one
// value broadcast: atan2, fmod, remainder, maximum and minimum (PyTorch's NaN and sign rules);
// nullptr for the other functions.
template <typename T>
using BinaryKernel = void (*)(const T* x, int64_t xs, const T* y, int64_t ys, T* out, int64_t n);
BinaryKernel<float> binary_kernel_f32(BinaryFn fn);
BinaryKernel<double> binary_kernel_f64(BinaryFn fn);
// out = pow(x, y) (Sleef's, C99's special values) with the same operand forms.
BinaryKernel<float> pow_kernel_f32();
BinaryKernel<double> pow_kernel_f64();
// out = x / y (IEEE division) with the same operand forms.
BinaryKernel<float> div_kernel_f32();
BinaryKernel<double> div_kernel_f64();
// start times the product of n floats, in double.
double prod(const float* p, int64_t n, double start);
// part[k] += the sum over the rows j < nrows of rows[j * stride + k] (of its square with
// squares), for k < n, in float: up to 128 columns in registers for all the rows, wider blocks
// four rows per pass over part.
void sum_rows(float* part, const float* rows, int64_t stride, int64_t nrows, int64_t n,
              bool squares);
// acc[k] = max(acc[k], rows[j * stride + k]) (min when !is_max) for k < n over the rows
// j < nrows, a NaN winning, as the reductions.
void max_rows(float* acc, const float* rows, int64_t stride, int64_t nrows, int64_t n, bool is_max);
// acc[k] *= rows[j * stride + k] for k < n over the rows j < nrows, in double.
void prod_rows(double* acc, const float* rows, int64_t stride, int64_t nrows, int64_t n);
// out[r] = the product of the run p[r * n, (r + 1) * n) for r < runs, and acc[k] = the product
// of rows[j * stride + k] over j < nrows for k < n: every factor multiplied in double.
void prod_runs(const float* p, int64_t runs, int64_t n, double* out);
void prod_cols(double* acc, const float* rows, int64_t stride, int64_t nrows, int64_t n);
// One output row of a 2-D max pool over the columns [ow0, ow1), whose windows lie inside the
// input rows of w values: y[ow] = the max over the rows rows[r] (r < nrows, pointers into one
// plane, at flat plane offsets row_off[r]) and the taps kw < k of row[ow * s - p + kw * d];
// PyTorch's rule (the first maximum, or the last NaN). With idx, also its flat index in the
// plane (which must be below 2^31).
void max_pool_row(const float* const* rows, const int64_t* row_off, int64_t nrows, int64_t w,
                  int64_t k, int64_t s, int64_t p, int64_t d, int64_t ow0, int64_t ow1, float* y,
                  int64_t* idx);
// One output row of a 2-D average pool over the columns [ow0, ow1), whose windows lie inside
// the input rows of w values: y[ow] = the sum over the rows rows[r] (r < nrows) and the taps
// kw < k of row[ow * s - p + kw], in that order, divided by div.
void avg_pool_row(const float* const* rows, int64_t nrows, int64_t w, int64_t k, int64_t s,
                  int64_t p, int64_t ow0, int64_t ow1, float* y, float div);
// The sum of n doubles.
double sum(const double* p, int64_t n);
// The sums of the squares of n floats (blocks summed in double, as sum) and of n doubles.
double sum_squares(const float* p, int64_t n);
double sum_squares(const double* p, int64_t n);
// The largest (smallest when !is_max) of p[0, n), n >= 1; the first NaN when there is one.
float max_run(const float* p, int64_t n, bool is_max);
// Short runs (n < kShortRun), several side by side: out[r] = the sum (of the squares with
// squares) of p[r * n, (r + 1) * n) in float lanes, and the largest (smallest when !is_max)
// value of each run (n >= 1), its first NaN when it has one, as max_run.
constexpr int64_t kShortRun = 1024;
void sum_runs(const float* p, int64_t runs, int64_t n, double* out, bool squares);
void max_runs(const float* p, int64_t runs, int64_t n, float* out, bool is_max);
// The activation family's chunk loops (kernels/cpu/activation_chunks.h) built for AVX2 + FMA
// (vec/activation_avx2.cpp), for float and double: y = f(x) and dx = dy * f'(x) for
// n <= kChunk contiguous values; t and u are kChunk-sized scratch buffers.
template <typename C>
using ActKernel = void (*)(const C* x, C* y, int64_t n, ActParams<C> p, C* t, C* u);
template <typename C>
using ActGradKernel = void (*)(const C* dy, const C* x, C* dx, int64_t n, ActParams<C> p, C* t,
                               C* u);
template <typename C>
ActKernel<C> activation_kernel(ActFn fn);
template <typename C>
ActGradKernel<C> activation_grad_kernel(ActFn fn);
// y = f(a - b) for n contiguous values (any n), fn one of OF_DIFF_ACTIVATION_FNS (else nullptr).
template <typename C>
ActGradKernel<C> activation_of_difference_kernel(ActFn fn);
// Sum of n floats: float lanes within blocks, blocks combined in double (as the SSE2 path).
double sum(const float* p, int64_t n);
// One contiguous row of softmax or log_softmax (float lanes, Sleef exp), and its gradient.
void softmax_row(const float* x, float* y, int64_t n, bool log);
void softmax_grad_row(const float* dy, const float* y, float* dx, int64_t n, bool log);
// cross_entropy's row statistics: the max m of x[0, n) (0 for a row of -inf) and ls, the log of
// the sum of exp(x - m), so that log_softmax(x)[k] = (x[k] - m) - ls as softmax_row has it.
void logsumexp_row(const float* x, int64_t n, float* m, float* ls);
// dx[k] = s * exp((x[k] - m) - ls) for k < n: softmax from those statistics, scaled.
void scaled_softmax_row(const float* x, float* dx, int64_t n, float m, float ls, float s);
// Softmax or log_softmax of w <= kSoftmaxColumns columns side by side, along rows of n values
// stride apart: y[i * stride + k] for the column k of x[i * stride + k], i < n.
constexpr int64_t kSoftmaxColumns = 512;
void softmax_columns(const float* x, float* y, int64_t n, int64_t stride, int64_t w, bool log);
// Their gradient: dx from dy and the forward output y, all three laid out as x above.
void softmax_grad_columns(const float* dy, const float* y, float* dx, int64_t n, int64_t stride,
                          int64_t w, bool log);

// memcpy from the end, four 32-byte loads ahead of their stores (see copy_piece in gather.cpp).
void copy_backward(char* dst, const char* src, int64_t n);
// `rows` rows of `bytes` (32 or more) each: row r from src + r * src_step to dst + r * bytes,
// by 32-byte moves written out in the loop (the last one overlapping when bytes is not a
// multiple of 32). A memcpy call per short row was ~40% slower (Note [Short rows] in copy.cpp).
void copy_rows(char* dst, const char* src, int64_t rows, int64_t bytes, int64_t src_step);

}  // namespace oneflow::cpu::avx2
