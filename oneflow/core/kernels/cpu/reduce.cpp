// CPU kernels of the reductions (sum). Accumulation runs in double for floating types and in
// int64 for integers and bool.
#include <algorithm>

#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

// Splits the input's dims into kept (in output order) and reduced ones, coalescing each group.
struct ReducePlan {
  Shape kept_shape, red_shape;
  Strides kept_strides, red_strides;  // input strides in elements
};

void push_coalesced(Shape& shape, Strides& strides, int64_t size, int64_t stride) {
  if (size == 1) return;
  if (!shape.empty() && strides.back() == stride * size) {
    shape.back() *= size;
    strides.back() = stride;
    return;
  }
  shape.push_back(size);
  strides.push_back(stride);
}

ReducePlan make_plan(const Tensor& x, const std::vector<int64_t>& dims) {
  ReducePlan p;
  for (int64_t d = 0; d < x->ndim(); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (reduced)
      push_coalesced(p.red_shape, p.red_strides, x->shape()[d], x->strides()[d]);
    else
      push_coalesced(p.kept_shape, p.kept_strides, x->shape()[d], x->strides()[d]);
  }
  return p;
}

// Sum of n contiguous elements. Floating types add in blocks of 2048 with eight independent
// float lanes (which the compiler vectorises) and combine the blocks in double: close to a
// double-precision sum at the speed of a float one. Integers and bool add in int64.
template <typename T>
acc_t<T> sum_contiguous(const T* p, int64_t n) {
  using C = compute_t<T>;
  if constexpr (std::is_floating_point_v<C> && !std::is_same_v<C, double>) {
    constexpr int64_t kBlock = 2048;
    double total = 0;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t e = std::min(n, b + kBlock);
      float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t i = b;
      for (; i + 8 <= e; i += 8)
        for (int l = 0; l < 8; ++l) lanes[l] += static_cast<float>(C(p[i + l]));
      float s = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
      for (; i < e; ++i) s += static_cast<float>(C(p[i]));
      total += s;
    }
    return total;
  } else {
    using A = acc_t<T>;
    A lanes[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int l = 0; l < 4; ++l) lanes[l] += A(C(p[i + l]));
    A s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; i < n; ++i) s += A(C(p[i]));
    return s;
  }
}

template <typename T>
acc_t<T> sum_strided(const T* p, int64_t stride, int64_t n) {
  acc_t<T> s = 0;
  for (int64_t i = 0; i < n; ++i) s += acc_t<T>(compute_t<T>(p[i * stride]));
  return s;
}

template <typename T, typename O>
void sum_kernel(const Tensor& x, const Tensor& out, const std::vector<int64_t>& dims) {
  using A = acc_t<T>;
  const ReducePlan p = make_plan(x, dims);
  const T* base = x->data_as<T>();
  O* o = out->data_as<O>();
  const int64_t n_out = numel(p.kept_shape), n_red = numel(p.red_shape);
  if (out->numel() == 0) return;
  if (n_red == 0 || x->numel() == 0) {
    std::fill(o, o + out->numel(), O(0));
    return;
  }
  const int64_t nr = static_cast<int64_t>(p.red_shape.size());
  // Column case: the innermost kept dim has stride 1 and is inside the reduced dims; sum whole
  // rows into an accumulator row (reads stay sequential).
  const bool column = !p.kept_strides.empty() && p.kept_strides.back() == 1 && nr > 0 &&
                      p.red_strides.back() > 1 && p.kept_shape.back() > 1;
  if (column) {
    const int64_t inner = p.kept_shape.back();
    const int64_t n_rows_out = n_out / inner;
#pragma omp parallel for schedule(static) if (n_out * n_red > cpu::kParallelGrain)
    for (int64_t r = 0; r < n_rows_out; ++r) {
      std::vector<A> acc(inner, A(0));
      int64_t off0 = 0, rem = r;
      for (int64_t d = static_cast<int64_t>(p.kept_shape.size()) - 2; d >= 0; --d) {
        off0 += (rem % p.kept_shape[d]) * p.kept_strides[d];
        rem /= p.kept_shape[d];
      }
      for (int64_t j = 0; j < n_red; ++j) {
        int64_t off = off0, jr = j;
        for (int64_t d = nr - 1; d >= 0; --d) {
          off += (jr % p.red_shape[d]) * p.red_strides[d];
          jr /= p.red_shape[d];
        }
        const T* row = base + off;
        for (int64_t i = 0; i < inner; ++i) acc[i] += A(compute_t<T>(row[i]));
      }
      for (int64_t i = 0; i < inner; ++i) o[r * inner + i] = O(compute_t<O>(acc[i]));
    }
    return;
  }
  const int64_t inner = p.red_shape.empty() ? 1 : p.red_shape.back();
  const int64_t inner_stride = p.red_strides.empty() ? 0 : p.red_strides.back();
  // Sums reduced elements [r0, r1) (flat index over the reduced dims) of output k.
  auto sum_range = [&](int64_t k, int64_t r0, int64_t r1) {
    int64_t off0 = 0, rem = k;
    for (int64_t d = static_cast<int64_t>(p.kept_shape.size()) - 1; d >= 0; --d) {
      off0 += (rem % p.kept_shape[d]) * p.kept_strides[d];
      rem /= p.kept_shape[d];
    }
    A total = A(0);
    for (int64_t r = r0; r < r1;) {
      const int64_t j = r / inner, i0 = r % inner, count = std::min(inner - i0, r1 - r);
      int64_t off = off0 + i0 * inner_stride, jr = j;
      for (int64_t d = nr - 2; d >= 0; --d) {
        off += (jr % p.red_shape[d]) * p.red_strides[d];
        jr /= p.red_shape[d];
      }
      total += inner_stride == 1 ? sum_contiguous(base + off, count)
                                 : sum_strided(base + off, inner_stride, count);
      r += count;
    }
    return total;
  };
  // With fewer outputs than threads (a full reduction, say), each output's reduction is split
  // into chunks summed on different threads and combined afterwards.
  const int nthreads = omp_get_max_threads();
  const bool parallel = n_out * n_red > cpu::kParallelGrain && nthreads > 1;
  int64_t split = 1;
  if (parallel && n_out < nthreads)
    split = std::min<int64_t>((nthreads + n_out - 1) / n_out * 4, n_red / 4096 + 1);
  if (split == 1) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t k = 0; k < n_out; ++k) o[k] = O(compute_t<O>(sum_range(k, 0, n_red)));
    return;
  }
  std::vector<A> partial(n_out * split);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t k = 0; k < n_out; ++k)
    for (int64_t s = 0; s < split; ++s)
      partial[k * split + s] = sum_range(k, n_red * s / split, n_red * (s + 1) / split);
  for (int64_t k = 0; k < n_out; ++k) {
    A total = A(0);
    for (int64_t s = 0; s < split; ++s) total += partial[k * split + s];
    o[k] = O(compute_t<O>(total));
  }
}

}  // namespace

void ReduceSum::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    visit_dtype(out[0]->dtype(), [&]<typename O>() { sum_kernel<T, O>(in[0], out[0], dims); });
  });
}

}  // namespace oneflow
