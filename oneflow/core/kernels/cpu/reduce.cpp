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
  const int64_t n_outer_red = n_red / inner;
#pragma omp parallel for schedule(static) if (n_out * n_red > cpu::kParallelGrain)
  for (int64_t k = 0; k < n_out; ++k) {
    int64_t off0 = 0, rem = k;
    for (int64_t d = static_cast<int64_t>(p.kept_shape.size()) - 1; d >= 0; --d) {
      off0 += (rem % p.kept_shape[d]) * p.kept_strides[d];
      rem /= p.kept_shape[d];
    }
    A total = A(0);
    for (int64_t j = 0; j < n_outer_red; ++j) {
      int64_t off = off0, jr = j;
      for (int64_t d = nr - 2; d >= 0; --d) {
        off += (jr % p.red_shape[d]) * p.red_strides[d];
        jr /= p.red_shape[d];
      }
      const T* run = base + off;
      // Four partial sums: independent chains the compiler can vectorise.
      A s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int64_t i = 0;
      if (inner_stride == 1) {
        for (; i + 4 <= inner; i += 4) {
          s0 += A(compute_t<T>(run[i]));
          s1 += A(compute_t<T>(run[i + 1]));
          s2 += A(compute_t<T>(run[i + 2]));
          s3 += A(compute_t<T>(run[i + 3]));
        }
      }
      for (; i < inner; ++i) s0 += A(compute_t<T>(run[i * inner_stride]));
      total += (s0 + s1) + (s2 + s3);
    }
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
