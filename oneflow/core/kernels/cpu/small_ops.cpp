// CPU kernels of dot, trace, outer, one_hot, bincount and cross (ops/small_ops_primitives.h). The
// index kernels test the range in their one pass and raise after it (their outputs are fresh, so
// nothing the user holds is half-written), naming the first bad value.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/small_ops_primitives.h"

namespace oneflow {

namespace {

// Threads for `work` elements: one below the grain.
int threads_for(int64_t work) { return work > cpu::kParallelGrain ? omp_get_max_threads() : 1; }

// dot's accumulator: integers wrap (unsigned arithmetic), 16-bit floats sum in float.
template <typename T, bool = std::is_integral_v<T>>
struct DotAcc {
  using type = compute_t<T>;
};
template <typename T>
struct DotAcc<T, true> {
  using type = std::make_unsigned_t<T>;
};

}  // namespace

void Dot::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const int64_t n = in[0]->numel();
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    const T* a = in[0]->data_as<T>();
    const T* b = in[1]->data_as<T>();
    T* o = out[0]->data_as<T>();
    if constexpr (std::is_same_v<T, float>) {
      *o = cblas_sdot(static_cast<int>(n), a, 1, b, 1);
    } else if constexpr (std::is_same_v<T, double>) {
      *o = cblas_ddot(static_cast<int>(n), a, 1, b, 1);
    } else if constexpr (!std::is_same_v<T, bool>) {  // (infer rejects bool)
      // 16-bit floats in float, integers wrapping as PyTorch's
      using C = typename DotAcc<T>::type;
      C acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += C(compute_t<T>(a[i])) * C(compute_t<T>(b[i]));
      *o = T(static_cast<compute_t<T>>(acc));
    }
  });
}

void Trace::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Tensor& x = in[0];
  const int64_t len = std::min(x->shape()[0], x->shape()[1]);
  const int64_t step = x->strides()[0] + x->strides()[1];
  // Four partial sums: one chain of dependent additions would take the adder's latency per
  // element (1024 elements: ~1.3 us of a ~1.9 us call on the Xeon).
  auto sum4 = [&]<typename A, typename T>(const T* p, auto value) {
    A acc[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= len; i += 4)
      for (int k = 0; k < 4; ++k) acc[k] += value(p[(i + k) * step]);
    for (; i < len; ++i) acc[0] += value(p[i * step]);
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
  };
  visit_dtype(x->dtype(), [&]<typename T>() {
    const T* p = x->data_as<T>();
    if constexpr (std::is_integral_v<T>) {  // int64 output; wraps as PyTorch's (infer rejects bool)
      const uint64_t acc = sum4.template operator()<uint64_t>(
          p, [](T v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); });
      *out[0]->data_as<int64_t>() = static_cast<int64_t>(acc);
    } else {  // floats accumulate in double (PyTorch's CPU accumulator for float)
      const double acc = sum4.template operator()<double>(
          p, [](T v) { return static_cast<double>(compute_t<T>(v)); });
      *out[0]->data_as<T>() = T(static_cast<compute_t<T>>(acc));
    }
  });
}

void Outer::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const int64_t rows = in[0]->shape()[0], cols = in[1]->shape()[0];
  const int64_t sa = in[0]->strides()[0], sb = in[1]->strides()[0];
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    const T* a = in[0]->data_as<T>();
    const T* b = in[1]->data_as<T>();
    T* o = out[0]->data_as<T>();
    // A strided b is gathered once, so every row is a unit-stride loop the compiler vectorises.
    std::unique_ptr<T[]> packed;
    if (sb != 1) {
      packed.reset(new T[static_cast<size_t>(cols)]);
      for (int64_t j = 0; j < cols; ++j) packed[j] = b[j * sb];
    }
    const T* bp = packed ? packed.get() : b;
    // One thread: the functional layer sends products above the parallel grain to the
    // broadcasting elementwise driver. The rows are built for the widest tier: the stores are
    // the kernel's time (64 x 64 float32 with 16-byte stores ~450 ns, most of the op's cost run
    // at the call). Pointers and counts are locals of the body (see run_loop).
    cpu::run_loop(cpu::loop_tier(), [&] {
      const T* a_ = a;
      const T* b_ = bp;
      T* o_ = o;
      const int64_t n = rows, m = cols, step = sa;
      for (int64_t i = 0; i < n; ++i) {
        T* row = o_ + i * m;
        if constexpr (std::is_same_v<T, bool>) {
          const bool ai = a_[i * step];
          for (int64_t j = 0; j < m; ++j) row[j] = ai && b_[j];
        } else {
          const compute_t<T> ai = compute_t<T>(a_[i * step]);
          for (int64_t j = 0; j < m; ++j) row[j] = T(ai * compute_t<T>(b_[j]));
        }
      }
    });
  });
}

void OneHot::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const int64_t classes = attrs.get<int64_t>("num_classes"), n = in[0]->numel();
  const int64_t* idx = in[0]->data_as<int64_t>();
  int64_t* o = out[0]->data_as<int64_t>();
  const uint64_t uc = static_cast<uint64_t>(classes);
  const int threads = threads_for(n * std::max<int64_t>(classes, 1));
  int bad = 0;
  // Each thread clears its own rows in one run, then sets one element per row.
  OF_OMP_FOR_IF(
      threads > 1,
      reduction(|
                : bad) schedule(static) num_threads(threads),
      for (int t = 0; t < threads; ++t) {
        const int64_t b = n * t / threads, e = n * (t + 1) / threads;
        if (e > b && classes > 0)  // (an empty output may have no buffer at all)
          std::memset(o + b * classes, 0, static_cast<size_t>((e - b) * classes) * sizeof(int64_t));
        int bt = 0;
        for (int64_t i = b; i < e; ++i) {
          const uint64_t v = static_cast<uint64_t>(idx[i]);
          const bool ok = v < uc;
          bt |= !ok;
          if (ok) o[i * classes + static_cast<int64_t>(v)] = 1;
        }
        bad |= bt;
      });
  if (!bad) return;
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] < 0)
      throw_error<RuntimeError>(name(), "class values must be non-negative, got ", idx[i]);
    if (idx[i] >= classes)
      throw_error<RuntimeError>(name(), "class values must be smaller than num_classes, got ",
                                idx[i], " with num_classes=", classes);
  }
}

void Bincount::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const int64_t length = attrs.get<int64_t>("length"), n = in[0]->numel();
  const bool weighted = in.size() == 2;
  // Per-thread partial bins only when they are few next to the input.
  const int threads = length <= n / 4 ? threads_for(n) : 1;
  const uint64_t ulen = static_cast<uint64_t>(length);
  int bad = 0;
  visit_dtype(in[0]->dtype(), [&]<typename I>() {
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      const I* x = in[0]->data_as<I>();
      auto count = [&]<typename W, typename A>(const W* w, A* bins, int64_t b, int64_t e) {
        int bt = 0;
        for (int64_t i = b; i < e; ++i) {
          const uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(x[i]));
          const bool ok = v < ulen;
          bt |= !ok;
          if (ok) bins[v] += w ? A(w[i]) : A(1);
        }
        return bt;
      };
      visit_dtype(out[0]->dtype(), [&]<typename O>() {
        if constexpr (std::is_same_v<O, int64_t> || std::is_same_v<O, float> ||
                      std::is_same_v<O, double>) {
          // counts in int64, sums of weights in double
          using A = std::conditional_t<std::is_same_v<O, int64_t>, int64_t, double>;
          const O* w = weighted ? in[1]->data_as<O>() : nullptr;
          O* o = out[0]->data_as<O>();
          if (threads == 1 && std::is_same_v<A, O>) {
            std::fill_n(o, length, O(0));
            bad = count(w, reinterpret_cast<A*>(o), 0, n);
            return;
          }
          std::vector<A> part(static_cast<size_t>(threads * length), A(0));
          OF_OMP_FOR_IF(threads > 1,
                        reduction(|
                                  : bad) schedule(static) num_threads(threads),
                        for (int t = 0; t < threads; ++t) bad |= count(
                            w, part.data() + t * length, n * t / threads, n * (t + 1) / threads););
          for (int64_t k = 0; k < length; ++k) {
            A total = 0;
            for (int t = 0; t < threads; ++t) total += part[t * length + k];
            o[k] = O(total);
          }
        }
      });
    }
  });
  if (!bad) return;
  visit_dtype(in[0]->dtype(), [&]<typename I>() {
    const I* x = in[0]->data_as<I>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = static_cast<int64_t>(x[i]);
      if (v < 0) throw_error<RuntimeError>(name(), "input must be non-negative, got ", v);
      if (v >= length)
        throw_error<RuntimeError>(name(), "value ", v, " is out of range for ", length, " bins");
    }
  });
}

void Cross::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Shape& shape = in[0]->shape();
  const int64_t dim = attrs.get<int64_t>("dim"), n = in[0]->numel();
  if (n == 0) return;
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t outer = n / (3 * inner);
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      using C = compute_t<T>;
      const T* a = in[0]->data_as<T>();
      const T* b = in[1]->data_as<T>();
      T* o = out[0]->data_as<T>();
      if (inner == 1) {  // (..., 3): three products per row
        OF_OMP_FOR_IF(
            n > cpu::kParallelGrain, schedule(static), for (int64_t r = 0; r < outer; ++r) {
              const T *p = a + 3 * r, *q = b + 3 * r;
              const C a0 = C(p[0]), a1 = C(p[1]), a2 = C(p[2]);
              const C b0 = C(q[0]), b1 = C(q[1]), b2 = C(q[2]);
              T* y = o + 3 * r;
              y[0] = T(C(a1 * b2 - a2 * b1));
              y[1] = T(C(a2 * b0 - a0 * b2));
              y[2] = T(C(a0 * b1 - a1 * b0));
            });
        return;
      }
      // three planes of `inner` elements per outer index; the inner loop vectorises
      OF_OMP_FOR_IF(
          n > cpu::kParallelGrain, schedule(static), for (int64_t r = 0; r < outer; ++r) {
            const T *a0 = a + 3 * r * inner, *a1 = a0 + inner, *a2 = a1 + inner;
            const T *b0 = b + 3 * r * inner, *b1 = b0 + inner, *b2 = b1 + inner;
            T *y0 = o + 3 * r * inner, *y1 = y0 + inner, *y2 = y1 + inner;
            for (int64_t k = 0; k < inner; ++k) {
              y0[k] = T(C(C(a1[k]) * C(b2[k]) - C(a2[k]) * C(b1[k])));
              y1[k] = T(C(C(a2[k]) * C(b0[k]) - C(a0[k]) * C(b2[k])));
              y2[k] = T(C(C(a0[k]) * C(b1[k]) - C(a1[k]) * C(b0[k])));
            }
          });
    }
  });
}

}  // namespace oneflow
