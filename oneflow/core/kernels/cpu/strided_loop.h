// The CPU elementwise driver: walks N operands of one shape (operand 0 is the output) with
// per-operand strides, where stride 0 broadcasts. Dims are coalesced first, the walk is split
// across OpenMP threads, and the innermost run is handed to a typed functor that can take a
// vectorisable path when its strides are unit. Included only by kernels/cpu/*.cpp.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

#include "oneflow/core/framework/tensor.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"

namespace oneflow::cpu {

// Runs f() compiled for AVX-512 / AVX2 (f is inlined here, so its loops vectorise 16 / 8 floats
// wide). Memory-bound loops need the wide stores: with 16-byte ones a 4 MB relu took twice as
// long on an AVX-512 CPU. Call each only where capability() has that tier (loop_tier()).
template <typename F>
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,prefer-vector-width=512"))) inline void
avx512_loop(F&& f) {
  f();
}
template <typename F>
__attribute__((target("avx2"))) inline void avx2_loop(F&& f) {
  f();
}

// The tier run_loop compiles its bodies for (read once per kernel call).
inline Capability loop_tier() { return capability(); }

// Runs body() through the loop built for `tier`.
//
// The body of a run_loop lambda reads its captures through the closure, which a store of
// 1-byte elements (bool, uint8, int8: char types alias everything) may modify as far as the
// compiler knows: the pointers and the count are then reloaded on every iteration and the loop
// is not vectorised (a bool -> uint8 cast ran at ~1 ns per element). The bodies copy the
// pointers to locals (o_, x_, ...) and the count to `m` first: no store can reach those.
template <typename F>
inline void run_loop(Capability tier, F&& body) {
  if (tier == Capability::kAvx512)
    avx512_loop(body);
  else if (tier == Capability::kAvx2)
    avx2_loop(body);
  else
    body();
}

// Byte strides of `t` broadcast to `shape` (t's dims align with the trailing dims of `shape`).
inline std::vector<int64_t> broadcast_byte_strides(const TensorImpl& t, const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 0);
  const size_t lead = shape.size() - t.shape().size();
  const int64_t isz = static_cast<int64_t>(itemsize(t.dtype()));
  for (size_t i = 0; i < t.shape().size(); ++i)
    s[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i] * isz;
  return s;
}
inline std::vector<int64_t> broadcast_byte_strides(const Tensor& t, const Shape& shape) {
  return broadcast_byte_strides(*t, shape);
}

// Elements below which the walk stays on one thread.
constexpr int64_t kParallelGrain = 32768;

// fn(std::array<char*, N> ptrs, const std::array<int64_t, N>& byte_strides, int64_t count)
// processes `count` elements along the innermost dim starting at ptrs.
template <size_t N, typename Fn>
void strided_loop(const Shape& in_shape, std::array<std::vector<int64_t>, N> strides,
                  std::array<char*, N> base, Fn&& fn) {
  // The walk follows the output's memory order: an output (operand 0) whose strides do not
  // decrease along its dims (a transposed result, an in-place op on a transposed view) has
  // its dims permuted first, so the innermost run is its smallest stride.
  const Shape* shape_p = &in_shape;
  Shape permuted;
  {
    const std::vector<int64_t>& o = strides[0];
    bool ordered = true;
    int64_t prev = -1;  // |stride| of the last dim longer than 1
    for (size_t d = 0; d < in_shape.size() && ordered; ++d) {
      if (in_shape[d] == 1) continue;
      ordered = prev < 0 || prev >= std::abs(o[d]);
      prev = std::abs(o[d]);
    }
    if (!ordered) {
      std::vector<size_t> order;
      for (size_t d = 0; d < in_shape.size(); ++d)
        if (in_shape[d] != 1) order.push_back(d);
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return std::abs(o[a]) > std::abs(o[b]); });
      for (size_t d : order) permuted.push_back(in_shape[d]);
      for (size_t k = 0; k < N; ++k) {
        std::vector<int64_t> s;
        for (size_t d : order) s.push_back(strides[k][d]);
        strides[k] = std::move(s);
      }
      shape_p = &permuted;
    }
  }
  const Shape& shape = *shape_p;
  // Coalesce: drop size-1 dims, merge dim i into i+1 when every operand is contiguous across it.
  Shape dims;
  std::array<std::vector<int64_t>, N> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!dims.empty()) {
      bool merge = true;
      for (size_t k = 0; k < N; ++k) merge = merge && st[k].back() == strides[k][d] * shape[d];
      if (merge) {
        dims.back() *= shape[d];
        for (size_t k = 0; k < N; ++k) st[k].back() = strides[k][d];
        continue;
      }
    }
    dims.push_back(shape[d]);
    for (size_t k = 0; k < N; ++k) st[k].push_back(strides[k][d]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (size_t k = 0; k < N; ++k) st[k].push_back(0);
  }
  for (int64_t d : dims)
    if (d == 0) return;
  const int64_t nd = static_cast<int64_t>(dims.size());
  const int64_t inner = dims[nd - 1];
  int64_t outer = 1;
  for (int64_t d = 0; d < nd - 1; ++d) outer *= dims[d];
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = st[k][nd - 1];

  // Runs elements [begin, end) of the flattened index space: the position is decoded once, then
  // advanced run by run like an odometer (no division per run: short inner runs stay cheap).
  auto run_range = [&](int64_t begin, int64_t end) {
    int64_t idx_small[16] = {};
    std::vector<int64_t> idx_big;
    int64_t* idx = idx_small;
    if (nd > 16) idx = (idx_big.assign(nd, 0), idx_big.data());
    std::array<char*, N> p = base;
    int64_t rem = begin / inner, col = begin % inner;
    for (int64_t d = nd - 2; d >= 0; --d) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
      for (size_t k = 0; k < N; ++k) p[k] += idx[d] * st[k][d];
    }
    for (int64_t pos = begin; pos < end;) {
      if (col == 0 && nd >= 2) {
        // whole runs to the end of the second innermost dim: a tight loop of pointer steps
        const int64_t rows = std::min(dims[nd - 2] - idx[nd - 2], (end - pos) / inner);
        if (rows > 1) {
          std::array<int64_t, N> step;
          for (size_t k = 0; k < N; ++k) step[k] = st[k][nd - 2];
          for (int64_t r = 0; r + 1 < rows; ++r) {
            fn(p, inner_strides, inner);
            for (size_t k = 0; k < N; ++k) p[k] += step[k];
          }
          idx[nd - 2] += rows - 1;
          pos += (rows - 1) * inner;
        }
      }
      const int64_t count = std::min(inner - col, end - pos);
      std::array<char*, N> q = p;
      for (size_t k = 0; k < N; ++k) q[k] += col * inner_strides[k];
      fn(q, inner_strides, count);
      pos += count;
      col = 0;
      for (int64_t d = nd - 2; d >= 0; --d) {
        for (size_t k = 0; k < N; ++k) p[k] += st[k][d];
        if (++idx[d] < dims[d]) break;
        for (size_t k = 0; k < N; ++k) p[k] -= st[k][d] * dims[d];
        idx[d] = 0;
      }
    }
  };
  const int64_t total = outer * inner;
  const int nthreads = omp_get_max_threads();
  if (total < kParallelGrain || nthreads == 1) {
    run_range(0, total);
    return;
  }
  const int64_t chunks = std::min<int64_t>(nthreads, (total + kParallelGrain - 1) / kParallelGrain);
  if (chunks == 1) {
    run_range(0, total);
    return;
  }
  // The whole team runs every region and threads past `chunks` have nothing to do: a
  // num_threads(chunks) clause would make libgomp end the pool's surplus threads whenever a
  // region is smaller than the one before and start them again for the next larger one (a
  // pthread_create per thread per op on many-core machines).
#pragma omp parallel
  {
    const int64_t team = omp_get_num_threads();
    for (int64_t c = omp_get_thread_num(); c < chunks; c += team) {
      // 64-element aligned chunk boundaries keep vector loops aligned with each other.
      int64_t b = total * c / chunks / 64 * 64,
              e = c + 1 == chunks ? total : total * (c + 1) / chunks / 64 * 64;
      if (b < e) run_range(b, e);
    }
  }
}

// Whether `t` is dense in row-major order with `shape`'s dims (leading 1s aside).
inline bool contiguous_with_dims(const TensorImpl& t, const Shape& shape) {
  const Shape& ts = t.shape();
  size_t a = 0, b = 0;
  while (a < ts.size() && ts[a] == 1) ++a;
  while (b < shape.size() && shape[b] == 1) ++b;
  return ts.size() - a == shape.size() - b &&
         std::equal(ts.begin() + a, ts.end(), shape.begin() + b) && t.is_contiguous();
}

// strided_loop over tensors: ts[0] is the output, the others are broadcast to its shape.
//
// A small op (one thread's worth of elements) whose output is contiguous and whose inputs are
// each contiguous with the output's dims or a single element, the usual case, is one run: fn
// is called once on all elements with unit or zero strides, and no stride vectors are built.
// Their allocations (two per operand) cost more than the kernel of a 64-element add.
template <size_t N, typename Fn>
void tensor_loop(const std::array<const TensorImpl*, N>& ts, Fn&& fn) {
  const TensorImpl& out = *ts[0];
  const Shape& shape = out.shape();
  const int64_t total = out.numel();
  if (total < kParallelGrain && out.is_contiguous()) {
    std::array<char*, N> ptrs;
    std::array<int64_t, N> steps;
    bool flat = true;
    for (size_t k = 0; k < N && flat; ++k) {
      const TensorImpl& t = *ts[k];
      if (k == 0 || contiguous_with_dims(t, shape))
        steps[k] = static_cast<int64_t>(itemsize(t.dtype()));
      else if (t.numel() == 1)
        steps[k] = 0;
      else
        flat = false;
    }
    if (flat) {
      if (total == 0) return;
      for (size_t k = 0; k < N; ++k) ptrs[k] = static_cast<char*>(ts[k]->data());
      fn(ptrs, steps, total);
      return;
    }
  }
  std::array<std::vector<int64_t>, N> strides;
  std::array<char*, N> ptrs;
  for (size_t k = 0; k < N; ++k) {
    strides[k] = broadcast_byte_strides(*ts[k], shape);
    ptrs[k] = static_cast<char*>(ts[k]->data());
  }
  strided_loop<N>(shape, std::move(strides), ptrs, std::forward<Fn>(fn));
}

// out = op(a, b) with a, b broadcast to out's shape; the arithmetic runs in compute_t<T>.
template <typename T, typename Op>
void binary_loop(const Tensor& a, const Tensor& b, const Tensor& out, Op op) {
  using C = compute_t<T>;
  constexpr int64_t sz = sizeof(T);
  const auto tier = loop_tier();
  tensor_loop<3>({out.get(), a.get(), b.get()},
                 [&](std::array<char*, 3> p, const auto& s, int64_t n) {
                   T* o = reinterpret_cast<T*>(p[0]);
                   const T* x = reinterpret_cast<const T*>(p[1]);
                   const T* y = reinterpret_cast<const T*>(p[2]);
                   if (s[0] == sz && s[1] == sz && s[2] == sz) {
                     run_loop(tier, [&] {
                       auto* const o_ = o;
                       auto* const x_ = x;
                       auto* const y_ = y;
                       const int64_t m = n;
                       for (int64_t i = 0; i < m; ++i) o_[i] = T(op(C(x_[i]), C(y_[i])));
                     });
                   } else if (s[0] == sz && s[1] == sz && s[2] == 0) {
                     const C yv = C(*y);
                     run_loop(tier, [&] {
                       auto* const o_ = o;
                       auto* const x_ = x;
                       const int64_t m = n;
                       const C yv_ = yv;
                       for (int64_t i = 0; i < m; ++i) o_[i] = T(op(C(x_[i]), yv_));
                     });
                   } else if (s[0] == sz && s[1] == 0 && s[2] == sz) {
                     const C xv = C(*x);
                     run_loop(tier, [&] {
                       auto* const o_ = o;
                       auto* const y_ = y;
                       const int64_t m = n;
                       const C xv_ = xv;
                       for (int64_t i = 0; i < m; ++i) o_[i] = T(op(xv_, C(y_[i])));
                     });
                   } else if (s[0] == sz && s[1] == 0 && s[2] == 0) {
                     std::fill_n(o, n, T(op(C(*x), C(*y))));
                   } else {
                     for (int64_t i = 0; i < n; ++i)
                       *reinterpret_cast<T*>(p[0] + i * s[0]) =
                           T(op(C(*reinterpret_cast<const T*>(p[1] + i * s[1])),
                                C(*reinterpret_cast<const T*>(p[2] + i * s[2]))));
                   }
                 });
}

// binary_loop with a vector kernel for the runs where the output is contiguous and each operand
// contiguous or one broadcast value: fast(x, xs, y, ys, out, n) with xs, ys 1 or 0 (avx2.h's
// BinaryKernel). The other runs, and every run when fast is null, take op.
template <typename T, typename Op>
void binary_loop(const Tensor& a, const Tensor& b, const Tensor& out,
                 void (*fast)(const T*, int64_t, const T*, int64_t, T*, int64_t), Op op) {
  if (fast == nullptr) return binary_loop<T>(a, b, out, op);
  constexpr int64_t sz = sizeof(T);
  tensor_loop<3>(
      {out.get(), a.get(), b.get()}, [&](std::array<char*, 3> p, const auto& s, int64_t n) {
        const bool x_ok = s[1] == sz || s[1] == 0, y_ok = s[2] == sz || s[2] == 0;
        if (s[0] == sz && x_ok && y_ok) {
          fast(reinterpret_cast<const T*>(p[1]), s[1] / sz, reinterpret_cast<const T*>(p[2]),
               s[2] / sz, reinterpret_cast<T*>(p[0]), n);
          return;
        }
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<T*>(p[0] + i * s[0]) = op(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                                                      *reinterpret_cast<const T*>(p[2] + i * s[2]));
      });
}

template <typename T, typename Op>
void unary_loop(const Tensor& a, const Tensor& out, Op op) {
  using C = compute_t<T>;
  constexpr int64_t sz = sizeof(T);
  const auto tier = loop_tier();
  tensor_loop<2>({out.get(), a.get()}, [&](std::array<char*, 2> p, const auto& s, int64_t n) {
    T* o = reinterpret_cast<T*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    if (s[0] == sz && s[1] == sz) {
      run_loop(tier, [&] {
        auto* const o_ = o;
        auto* const x_ = x;
        const int64_t m = n;
        for (int64_t i = 0; i < m; ++i) o_[i] = T(op(C(x_[i])));
      });
    } else if (s[0] == sz && s[1] == 0) {
      std::fill_n(o, n, T(op(C(*x))));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            T(op(C(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
    }
  });
}

}  // namespace oneflow::cpu
