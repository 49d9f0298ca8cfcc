// CPU kernels of the reductions (sum, prod, amax, amin, max/min with indices), the scans
// (cumsum, cumprod) and sort. Sums and products accumulate in double for floating types and in
// int64 for integers and bool.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

// Whether x, its dims taken in memory order (largest stride first), is contiguous with the
// reduced dims consecutive and the kept dims in their own order: then it is (outer, red, inner)
// contiguous elements from its data pointer, and the output (kept dims in order) is (outer,
// inner). A contiguous input, or a transposed one reduced over either dim, say.
bool as_blocks(const Tensor& x, const std::vector<int64_t>& dims, int64_t& outer, int64_t& red,
               int64_t& inner) {
  if (dims.empty() || x->numel() == 0) return false;
  std::vector<int64_t> order;  // dims longer than 1, in memory order
  for (int64_t d = 0; d < x->ndim(); ++d)
    if (x->shape()[d] != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return x->strides()[a] > x->strides()[b]; });
  int64_t expect = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (x->strides()[*it] != expect) return false;
    expect *= x->shape()[*it];
  }
  auto reduced = [&](int64_t d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); };
  int part = 0;  // 0: outer kept dims, 1: reduced dims, 2: inner kept dims
  int64_t last_kept = -1;
  outer = red = inner = 1;
  for (const int64_t d : order) {
    if (reduced(d)) {
      if (part == 2) return false;
      part = 1;
      red *= x->shape()[d];
    } else {
      if (d < last_kept) return false;
      last_kept = d;
      if (part == 1) part = 2;
      (part == 0 ? outer : inner) *= x->shape()[d];
    }
  }
  return true;
}

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

// The reduced dims are walked in memory order (largest stride outermost, broadcast dims of
// stride 0 outside all), which the result does not depend on: a transposed input reduces
// as one contiguous run.
ReducePlan make_plan(const Tensor& x, const std::vector<int64_t>& dims) {
  ReducePlan p;
  std::vector<int64_t> red;
  for (int64_t d = 0; d < x->ndim(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end())
      red.push_back(d);
    else
      push_coalesced(p.kept_shape, p.kept_strides, x->shape()[d], x->strides()[d]);
  }
  auto order = [&](int64_t d) {
    const int64_t s = x->strides()[d];
    return s == 0 ? std::numeric_limits<int64_t>::max() : std::abs(s);
  };
  std::stable_sort(red.begin(), red.end(),
                   [&](int64_t a, int64_t b) { return order(a) > order(b); });
  for (const int64_t d : red)
    push_coalesced(p.red_shape, p.red_strides, x->shape()[d], x->strides()[d]);
  return p;
}

// Sum of n contiguous elements. Floating types add in blocks of 2048 with eight independent
// float lanes (which the compiler vectorises) and combine the blocks in double: close to a
// double-precision sum at the speed of a float one. Integers and bool add in int64.
// sq(v): v * v when summing squares (the 2-norm), else v.
template <bool Sq, typename V>
inline V sq(V v) {
  if constexpr (Sq)
    return v * v;
  else
    return v;
}

template <typename T, bool Sq = false>
acc_t<T> sum_contiguous(const T* p, int64_t n) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (cpu::avx2::has_avx2()) return Sq ? cpu::avx2::sum_squares(p, n) : cpu::avx2::sum(p, n);
  }
  if constexpr (std::is_floating_point_v<C> && !std::is_same_v<C, double>) {
    constexpr int64_t kBlock = 2048;
    double total = 0;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t e = std::min(n, b + kBlock);
      float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t i = b;
      for (; i + 8 <= e; i += 8)
        for (int l = 0; l < 8; ++l) lanes[l] += sq<Sq>(static_cast<float>(C(p[i + l])));
      float s = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
      for (; i < e; ++i) s += sq<Sq>(static_cast<float>(C(p[i])));
      total += s;
    }
    return total;
  } else {
    using A = acc_t<T>;
    A lanes[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int l = 0; l < 4; ++l) lanes[l] += sq<Sq>(A(C(p[i + l])));
    A s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; i < n; ++i) s += sq<Sq>(A(C(p[i])));
    return s;
  }
}

template <typename T, bool Sq = false>
acc_t<T> sum_strided(const T* p, int64_t stride, int64_t n) {
  acc_t<T> s = 0;
  for (int64_t i = 0; i < n; ++i) s += sq<Sq>(acc_t<T>(compute_t<T>(p[i * stride])));
  return s;
}

// out = the sum over `dims` of x (of x * x with Sq).
template <typename T, typename O, bool Sq = false>
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
    // Work items: (output row, block of up to kColumns columns, slice of the reduced rows). Rows
    // are sliced when there are fewer (row, block) pairs than threads (a sum over dim 0, say);
    // the slices' partial sums are then added in slice order. Wide blocks keep each thread's
    // reads long sequential runs (a narrow block of a wide row touches a new page every row).
    constexpr int64_t kColumns = 4096, kRows = 64;
    const int64_t inner = p.kept_shape.back();
    const bool parallel = n_out * n_red > cpu::kParallelGrain;
    const int64_t threads = parallel ? omp_get_max_threads() : 1;
    const int64_t n_rows_out = n_out / inner;
    int64_t blocks = (inner + kColumns - 1) / kColumns;
    // Too few reduced rows to slice between the threads: narrower blocks instead.
    if (n_rows_out * blocks < threads && n_red < 4 * kRows * threads)
      blocks = std::max<int64_t>(
          blocks, std::min<int64_t>(inner / 64, (threads + n_rows_out - 1) / n_rows_out));
    const int64_t cols = (inner + blocks - 1) / blocks;
    const int64_t items = n_rows_out * blocks;
    const int64_t slices =
        items >= threads ? 1 : std::max<int64_t>(1, std::min(threads / items, n_red / (4 * kRows)));
    const int64_t per_slice = (n_red + slices - 1) / slices;
    std::vector<A> partial(slices > 1 ? static_cast<size_t>(items * slices * cols) : 0);
    // The work items, shared out by an orphaned omp for (see OF_OMP_PARALLEL_IF).
    auto columns = [&] {
      // Each thread's accumulator rows, made once (not per work item).
      std::vector<A> own(slices > 1 ? 0 : cols);
      std::vector<float> part_buf(cols);
#pragma omp for schedule(static)
      for (int64_t w = 0; w < items * slices; ++w) {
        const int64_t item = w / slices, slice = w % slices;
        const int64_t r = item / blocks, c0 = item % blocks * cols;
        const int64_t width = std::min(cols, inner - c0);
        const int64_t j_lo = slice * per_slice, j_hi = std::min(n_red, j_lo + per_slice);
        A* acc = slices > 1 ? partial.data() + w * cols : own.data();
        std::fill_n(acc, width, A(0));
        int64_t off0 = c0, rem = r;
        for (int64_t d = static_cast<int64_t>(p.kept_shape.size()) - 2; d >= 0; --d) {
          off0 += (rem % p.kept_shape[d]) * p.kept_strides[d];
          rem /= p.kept_shape[d];
        }
        auto row_at = [&](int64_t j) {
          if (nr == 1) return base + off0 + j * p.red_strides[0];  // no divisions
          int64_t off = off0, jr = j;
          for (int64_t d = nr - 1; d >= 0; --d) {
            off += (jr % p.red_shape[d]) * p.red_strides[d];
            jr /= p.red_shape[d];
          }
          return base + off;
        };
        if constexpr (std::is_same_v<compute_t<T>, float> && std::is_same_v<A, double>) {
          // Float lanes over blocks of 64 rows (twice the SIMD width of double, no conversions in
          // the inner loop), each block's sums added in double.
          float* part = part_buf.data();
          for (int64_t j0 = j_lo; j0 < j_hi; j0 += kRows) {
            std::fill_n(part, width, 0.0f);
            const int64_t j1 = std::min(j_hi, j0 + kRows);
            int64_t j = j0;
            if constexpr (std::is_same_v<T, float>)
              if (nr == 1 && cpu::avx2::has_avx2()) {
                cpu::avx2::sum_rows(part, row_at(j0), p.red_strides[0], j1 - j0, width, Sq);
                j = j1;
              }
            // Four rows per pass over the block's sums: a quarter of the stores.
            for (; j + 4 <= j1; j += 4) {
              const T *r0 = row_at(j), *r1 = row_at(j + 1), *r2 = row_at(j + 2),
                      *r3 = row_at(j + 3);
              for (int64_t i = 0; i < width; ++i)
                part[i] += (sq<Sq>(float(r0[i])) + sq<Sq>(float(r1[i]))) +
                           (sq<Sq>(float(r2[i])) + sq<Sq>(float(r3[i])));
            }
            for (; j < j1; ++j) {
              const T* row = row_at(j);
              for (int64_t i = 0; i < width; ++i) part[i] += sq<Sq>(float(row[i]));
            }
            for (int64_t i = 0; i < width; ++i) acc[i] += part[i];
          }
        } else {
          for (int64_t j = j_lo; j < j_hi; ++j) {
            const T* row = row_at(j);
            for (int64_t i = 0; i < width; ++i) acc[i] += sq<Sq>(A(compute_t<T>(row[i])));
          }
        }
        if (slices == 1)
          for (int64_t i = 0; i < width; ++i) o[r * inner + c0 + i] = O(compute_t<O>(acc[i]));
      }
    };
    OF_OMP_PARALLEL_IF(parallel, , columns);
    if (slices > 1)
      for (int64_t item = 0; item < items; ++item) {
        const int64_t r = item / blocks, c0 = item % blocks * cols;
        const int64_t width = std::min(cols, inner - c0);
        for (int64_t i = 0; i < width; ++i) {
          A total = A(0);
          for (int64_t sl = 0; sl < slices; ++sl) total += partial[(item * slices + sl) * cols + i];
          o[r * inner + c0 + i] = O(compute_t<O>(total));
        }
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
      total += inner_stride == 1 ? sum_contiguous<T, Sq>(base + off, count)
                                 : sum_strided<T, Sq>(base + off, inner_stride, count);
      r += count;
    }
    return total;
  };
  // With fewer outputs than threads (a full reduction, say), each output's reduction is split
  // into chunks summed on different threads and combined afterwards.
  const int nthreads = omp_get_max_threads();
  const bool parallel = n_out * n_red > cpu::kParallelGrain && nthreads > 1;
  if constexpr (std::is_same_v<T, float>) {
    // Short contiguous runs, one per output (a sum over the last dim of a tall tensor): several
    // runs side by side per pass, blocks of runs per thread.
    if (cpu::avx2::has_avx2() && nr == 1 && inner_stride == 1 && n_red < cpu::avx2::kShortRun &&
        p.kept_shape.size() == 1 && p.kept_strides[0] == n_red) {
      constexpr int64_t kRuns = 64;
      const int64_t blocks = (n_out + kRuns - 1) / kRuns;
      OF_OMP_FOR_IF(
          parallel, schedule(static), for (int64_t b = 0; b < blocks; ++b) {
            const int64_t k0 = b * kRuns, m = std::min(kRuns, n_out - k0);
            double r[kRuns];
            cpu::avx2::sum_runs(base + k0 * n_red, m, n_red, r, Sq);
            for (int64_t i = 0; i < m; ++i) o[k0 + i] = O(compute_t<O>(r[i]));
          });
      return;
    }
  }
  int64_t split = 1;
  if (parallel && n_out < nthreads)
    split = std::min<int64_t>((nthreads + n_out - 1) / n_out * 4, n_red / 4096 + 1);
  if (split == 1) {
    OF_OMP_FOR_IF(
        parallel, schedule(static),
        for (int64_t k = 0; k < n_out; ++k) o[k] = O(compute_t<O>(sum_range(k, 0, n_red))););
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
    // Bools (0 or 1) are summed as bytes: GCC vectorises uint8 loops, not bool ones.
    using U = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
    visit_dtype(out[0]->dtype(), [&]<typename O>() { sum_kernel<U, O>(in[0], out[0], dims); });
  });
}

void VectorNorm2::compute_cpu(const TensorList& in, const TensorList& out,
                              const Attrs& attrs) const {
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  auto run = [&]<typename T>() {
    sum_kernel<T, T, true>(in[0], out[0], dims);
    T* o = out[0]->data_as<T>();
    for (int64_t i = 0, n = out[0]->numel(); i < n; ++i) o[i] = std::sqrt(o[i]);
  };
  if (in[0]->dtype() == DType::kFloat64)
    run.template operator()<double>();
  else
    run.template operator()<float>();
}

namespace {

// Element offset of reduced position j (flat over the plan's reduced dims).
inline int64_t reduced_offset(const ReducePlan& p, int64_t j) {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(p.red_shape.size()) - 1; d >= 0; --d) {
    off += (j % p.red_shape[d]) * p.red_strides[d];
    j /= p.red_shape[d];
  }
  return off;
}

inline int64_t kept_offset(const ReducePlan& p, int64_t k) {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(p.kept_shape.size()) - 1; d >= 0; --d) {
    off += (k % p.kept_shape[d]) * p.kept_strides[d];
    k /= p.kept_shape[d];
  }
  return off;
}

// One step of the reduction K: NaN wins for max/min (and stays), as PyTorch.
template <ReduceFn K, typename A>
inline A reduce_step(A acc, A v) {
  if constexpr (K == ReduceFn::kProd) {
    if constexpr (std::is_same_v<A, bool>)
      return acc && v;
    else if constexpr (std::is_integral_v<A>)  // wraps (any order gives the same bits)
      return A(std::make_unsigned_t<A>(acc) * std::make_unsigned_t<A>(v));
    else
      return acc * v;
  } else {
    const bool take = (K == ReduceFn::kMax ? v > acc : v < acc) | (v != v);
    return take ? v : acc;
  }
}

// An input that as_blocks sees as (outer, red, inner) (contiguous in some order of its dims). With
// inner > 1 a row of `inner` accumulators takes whole contiguous rows (vectorised across the
// row); with inner == 1 each run of `red` elements is reduced in kLanes independent
// accumulators (vectorised), and a single run (a full reduction) is split between threads.
// False when the layout does not fit.
template <ReduceFn K, typename T>
bool reduce_blocks(const Tensor& x, const Tensor& out, const std::vector<int64_t>& dims) {
  using C = compute_t<T>;
  using A = std::conditional_t<K == ReduceFn::kProd, acc_t<T>, C>;
  int64_t outer = 1, red = 1, inner = 1;
  if (!as_blocks(x, dims, outer, red, inner)) return false;
  if (red == 0) return false;
  const T* xp = x->data_as<T>();
  T* op = out->data_as<T>();
  const A init = K == ReduceFn::kProd ? A(1) : A(C(xp[0]));
  if (inner > 1) {
    constexpr int64_t kBlock = 256;  // small enough that one output row is shared by threads
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    OF_OMP_FOR_IF(
        outer * red * inner > cpu::kParallelGrain, schedule(static),
        for (int64_t w = 0; w < outer * blocks; ++w) {
          const int64_t o = w / blocks, k0 = (w % blocks) * kBlock;
          const int64_t width = std::min(kBlock, inner - k0);
          const T* src = xp + o * red * inner + k0;
          A acc[kBlock];
          auto init = [&] {
            for (int64_t k = 0; k < width; ++k) acc[k] = K == ReduceFn::kProd ? A(1) : A(C(src[k]));
          };
          if constexpr (std::is_same_v<T, float>) {
            if (cpu::avx2::has_avx2()) {
              if constexpr (K == ReduceFn::kProd) {
                cpu::avx2::prod_cols(acc, src, inner, red, width);  // sets acc itself
              } else {
                init();
                cpu::avx2::max_rows(acc, src, inner, red, width, K == ReduceFn::kMax);
              }
              for (int64_t k = 0; k < width; ++k) op[o * inner + k0 + k] = T(C(acc[k]));
              continue;
            }
          }
          init();
          for (int64_t j = 0; j < red; ++j) {
            const T* row = src + j * inner;
            for (int64_t k = 0; k < width; ++k) acc[k] = reduce_step<K>(acc[k], A(C(row[k])));
          }
          for (int64_t k = 0; k < width; ++k) op[o * inner + k0 + k] = T(C(acc[k]));
        });
    return true;
  }
  constexpr int64_t kLanes = 16;
  // Reduces p[0, n) into one value.
  auto run = [](const T* p, int64_t n, A start) {
    if constexpr (K != ReduceFn::kProd && std::is_same_v<T, float>)
      if (cpu::avx2::has_avx2() && n > 0)
        return reduce_step<K>(start, A(cpu::avx2::max_run(p, n, K == ReduceFn::kMax)));
    A lane[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = start;
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lane[l] = reduce_step<K>(lane[l], A(C(p[i + l])));
    A acc = start;
    for (int64_t l = 0; l < kLanes; ++l) acc = reduce_step<K>(acc, lane[l]);
    for (; i < n; ++i) acc = reduce_step<K>(acc, A(C(p[i])));
    return acc;
  };
  if (outer == 1) {
    const int threads = red > cpu::kParallelGrain ? omp_get_max_threads() : 1;
    std::vector<A> part(threads, init);
    OF_OMP_FOR_IF(
        threads > 1, schedule(static) num_threads(threads), for (int t = 0; t < threads; ++t) {
          const int64_t b = red * t / threads, e = red * (t + 1) / threads;
          if constexpr (K == ReduceFn::kProd && std::is_same_v<T, float>) {
            if (cpu::avx2::has_avx2()) {
              double r;
              cpu::avx2::prod_runs(xp + b, 1, e - b, &r);
              part[t] = r;
              continue;
            }
          }
          part[t] = run(xp + b, e - b, init);
        });
    A acc = init;
    for (const A& v : part) acc = reduce_step<K>(acc, v);
    op[0] = T(C(acc));
    return true;
  }
  if constexpr (K == ReduceFn::kProd && std::is_same_v<T, float>) {
    if (cpu::avx2::has_avx2()) {
      // Blocks of runs (of at least ~16K elements) per pass of the float kernel.
      constexpr int64_t kMaxRuns = 256;
      const int64_t runs = std::clamp<int64_t>(16384 / red, 16, kMaxRuns);
      const int64_t blocks = (outer + runs - 1) / runs;
      OF_OMP_FOR_IF(
          outer * red > cpu::kParallelGrain, schedule(static),
          for (int64_t b = 0; b < blocks; ++b) {
            const int64_t o0 = b * runs, m = std::min(runs, outer - o0);
            double r[kMaxRuns];
            cpu::avx2::prod_runs(xp + o0 * red, m, red, r);
            for (int64_t i = 0; i < m; ++i) op[o0 + i] = float(r[i]);
          });
      return true;
    }
  }
  if constexpr (K != ReduceFn::kProd && std::is_same_v<T, float>) {
    if (cpu::avx2::has_avx2() && red < cpu::avx2::kShortRun) {
      constexpr int64_t kRuns = 64;
      const int64_t blocks = (outer + kRuns - 1) / kRuns;
      OF_OMP_FOR_IF(
          outer * red > cpu::kParallelGrain, schedule(static),
          for (int64_t b = 0; b < blocks; ++b) {
            const int64_t o0 = b * kRuns;
            cpu::avx2::max_runs(xp + o0 * red, std::min(kRuns, outer - o0), red, op + o0,
                                K == ReduceFn::kMax);
          });
      return true;
    }
  }
  OF_OMP_FOR_IF(
      outer * red > cpu::kParallelGrain, schedule(static), for (int64_t o = 0; o < outer; ++o) {
        const T* p = xp + o * red;
        op[o] = T(C(run(p, red, K == ReduceFn::kProd ? A(1) : A(C(p[0])))));
      });
  return true;
}

template <ReduceFn K, typename T>
void reduce_kernel(const Tensor& x, const Tensor& out, const std::vector<int64_t>& dims) {
  using C = compute_t<T>;
  using A = std::conditional_t<K == ReduceFn::kProd, acc_t<T>, C>;
  if (reduce_blocks<K, T>(x, out, dims)) return;
  const ReducePlan p = make_plan(x, dims);
  const T* base = x->data_as<T>();
  T* o = out->data_as<T>();
  const int64_t n_out = out->numel(), n_red = numel(p.red_shape);
  OF_OMP_FOR_IF(
      n_out * n_red > cpu::kParallelGrain && n_out > 1, schedule(static),
      for (int64_t k = 0; k < n_out; ++k) {
        const T* row = base + kept_offset(p, k);
        A acc = K == ReduceFn::kProd ? A(1) : A(C(row[reduced_offset(p, 0)]));
        for (int64_t j = 0; j < n_red; ++j) {
          const C v = C(row[reduced_offset(p, j)]);
          if constexpr (K == ReduceFn::kProd) {
            acc = reduce_step<K>(acc, A(v));
          } else if constexpr (K == ReduceFn::kMax) {
            if (v > acc || v != v) acc = v;
            if constexpr (std::is_floating_point_v<C>)
              if (acc != acc) break;
          } else {
            if (v < acc || v != v) acc = v;
            if constexpr (std::is_floating_point_v<C>)
              if (acc != acc) break;
          }
        }
        o[k] = T(compute_t<T>(acc));
      });
}

// Iterates the lines of `t` along `dim`: fn(line, offset of the line's first element).
template <typename Fn>
void for_each_line(const Shape& shape, const Strides& strides, int64_t dim, Fn fn) {
  const int64_t len = shape.empty() ? 1 : shape[dim];
  const int64_t lines = len == 0 ? 0 : numel(shape) / len;
  OF_OMP_FOR_IF(
      numel(shape) > cpu::kParallelGrain && lines > 1, schedule(static),
      for (int64_t l = 0; l < lines; ++l) {
        int64_t off = 0, rem = l;
        for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
          if (d == dim) continue;
          off += (rem % shape[d]) * strides[d];
          rem /= shape[d];
        }
        fn(l, off);
      });
}

// The offset of the first element of each line of `t` along `dim`, in for_each_line's order
// (so a kernel can walk its input's lines and find the same line of a differently strided output).
std::vector<int64_t> line_offsets(const Tensor& t, int64_t dim) {
  const int64_t len = t->ndim() == 0 ? 1 : t->shape()[dim];
  std::vector<int64_t> offsets(len == 0 ? 0 : t->numel() / len);
  for_each_line(t->shape(), t->strides(), dim, [&](int64_t l, int64_t off) { offsets[l] = off; });
  return offsets;
}

inline int64_t dim_stride(const Tensor& t, int64_t dim) {
  return t->ndim() == 0 ? 1 : t->strides()[dim];
}

inline int64_t dim_size(const Tensor& t, int64_t dim) {
  return t->ndim() == 0 ? 1 : t->shape()[dim];
}

}  // namespace

template <ReduceFn K>
void Reduce<K>::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  if (out[0]->numel() == 0) return;
  visit_dtype(in[0]->dtype(), [&]<typename T>() {
    // all/any (min/max of bools, which are 0 or 1) as bytes: GCC vectorises uint8 min/max, not
    // the same loops over bool.
    reduce_kernel<K, std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>(in[0], out[0], dims);
  });
}

template <ReduceFn K>
void ArgReduce<K>::compute_cpu(const TensorList& in, const TensorList& out,
                               const Attrs& attrs) const {
  const Tensor& x = in[0];
  const int64_t dim = attrs.get<int64_t>("dim");
  const int64_t len = dim_size(x, dim), step = dim_stride(x, dim);
  // Outputs are contiguous with x's shape minus `dim`: line l of x is output element l.
  visit_dtype(x->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* base = x->data_as<T>();
    T* vals = out[0]->data_as<T>();
    int64_t* idxs = out[1]->data_as<int64_t>();
    for_each_line(x->shape(), x->strides(), dim, [&](int64_t l, int64_t off) {
      const T* p = base + off;
      if constexpr (std::is_same_v<T, float>) {
        if (step == 1 && len >= 64 && cpu::avx2::has_avx2()) {
          // The extreme (or first NaN) in one vector pass, then its first position.
          const float best = cpu::avx2::max_run(p, len, K == ReduceFn::kMax);
          int64_t at = 0;
          if (best == best)
            while (p[at] != best) ++at;
          else
            while (p[at] == p[at]) ++at;
          vals[l] = p[at];
          idxs[l] = at;
          return;
        }
      }
      C best = C(p[0]);
      int64_t at = 0;
      for (int64_t i = 1; i < len; ++i) {
        if constexpr (std::is_floating_point_v<C>)
          if (best != best) break;
        const C v = C(p[i * step]);
        const bool better = K == ReduceFn::kMax ? v > best : v < best;
        if (better || v != v) {
          best = v;
          at = i;
        }
      }
      vals[l] = T(best);
      idxs[l] = at;
    });
  });
}

namespace {
// A scan along a dim that is not the innermost, x and out contiguous: seen as (outer, len, inner),
// each step adds a whole contiguous row of `inner` elements to a row of accumulators (vectorised),
// instead of walking `inner` lines with a stride of `inner` elements.
// An unsigned key whose order is the sort order of v: NaN above everything, -0.0 equal to 0.0.
template <typename C>
uint64_t sort_key(C v) {
  if constexpr (std::is_same_v<C, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_floating_point_v<C>) {
    if (v != v) return ~uint64_t{0};
    const double d = v == 0 ? 0.0 : double(v);  // float -> double is exact and keeps the order
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    return (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
  } else if constexpr (std::is_signed_v<C>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v)) ^ (uint64_t{1} << 63);
  } else {
    return static_cast<uint64_t>(v);
  }
}

// sort_key for values of up to 32 bits (float, and the integer types that fit), in 32 bits.
template <typename C>
uint64_t sort_key32(C v) {
  if constexpr (std::is_same_v<C, float>) {
    if (v != v) return ~uint32_t{0};
    const float f = v == 0 ? 0.0f : v;
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return (bits >> 31) ? ~bits : bits | (uint32_t{1} << 31);
  } else if constexpr (std::is_same_v<C, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_integral_v<C> && std::is_signed_v<C> && sizeof(C) <= 4) {
    return static_cast<uint32_t>(static_cast<int32_t>(v)) ^ (uint32_t{1} << 31);
  } else if constexpr (std::is_integral_v<C> && sizeof(C) <= 4) {
    return static_cast<uint32_t>(v);
  } else {
    return 0;  // wider types use sort_key
  }
}

// The integer (or bool) whose sort_key / sort_key32 is `key`: a sorted integer line is written
// from its keys, without a random read of the input per element.
template <typename C>
C from_sort_key(uint64_t key) {
  if constexpr (std::is_same_v<C, bool>)
    return key != 0;
  else if constexpr (std::is_signed_v<C>)
    return C(static_cast<int64_t>(key ^ (uint64_t{1} << 63)));
  else
    return C(key);
}

template <typename C>
C from_sort_key32(uint32_t key) {
  if constexpr (std::is_same_v<C, bool>)
    return key != 0;
  else if constexpr (std::is_signed_v<C>)
    return C(static_cast<int32_t>(key ^ (uint32_t{1} << 31)));
  else
    return C(key);
}

// Puts a line's items in order as far as needed: the first k sorted (topk; k = size for a full
// sort), or only position k - 1 in place (select, kthvalue).
template <typename Item, typename Before>
void order_items(std::vector<Item>& items, int64_t k, bool select, Before before) {
  if (select) {
    std::nth_element(items.begin(), items.begin() + (k - 1), items.end(), before);
    return;
  }
  const int64_t n = static_cast<int64_t>(items.size());
  if (k > 0 && k <= 64 && k * 16 <= n) {
    // A few of many: keep the best k sorted at the front and scan the rest against the k-th,
    // which rarely admits one once the front holds good values (mostly predictable compares,
    // where a selection moves every item several times).
    std::sort(items.begin(), items.begin() + k, before);
    for (int64_t i = k; i < n; ++i) {
      if (!before(items[i], items[k - 1])) continue;
      const Item v = items[i];
      int64_t j = k - 1;
      for (; j > 0 && before(v, items[j - 1]); --j) items[j] = items[j - 1];
      items[j] = v;
    }
    return;
  }
  if (k < n) std::nth_element(items.begin(), items.begin() + k, items.end(), before);
  std::sort(items.begin(), items.begin() + k, before);
}

// Sorts items by their unsigned key (key_of, kBytes bytes wide), stably: items built in index
// order end in (key, index) order. Least significant byte first: one counting pass for every
// byte, then one scatter per byte; a byte that is the same in every key is skipped (int64 values
// of a small range sort in two passes). O(n) against the comparison sort's O(n log n) with a
// mispredicted branch per comparison.
template <int kBytes, typename Item, typename KeyOf>
void radix_sort(std::vector<Item>& items, KeyOf key_of) {
  const size_t n = items.size();
  if (n == 0) return;
  std::array<std::array<size_t, 256>, kBytes> count{};
  for (const Item& v : items) {
    const uint64_t key = key_of(v);
    for (int b = 0; b < kBytes; ++b) ++count[b][(key >> (8 * b)) & 0xff];
  }
  thread_local std::vector<Item> spare;
  spare.resize(n);
  Item* src = items.data();
  Item* dst = spare.data();
  for (int b = 0; b < kBytes; ++b) {
    const int shift = 8 * b;
    if (count[b][(key_of(src[0]) >> shift) & 0xff] == n) continue;  // one byte value: in order
    size_t at[256];
    size_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      at[d] = sum;
      sum += count[b][d];
    }
    for (size_t i = 0; i < n; ++i) dst[at[(key_of(src[i]) >> shift) & 0xff]++] = src[i];
    std::swap(src, dst);
  }
  if (src != items.data()) std::memcpy(items.data(), src, n * sizeof(Item));
}

// Narrow items: a 32-bit key above a 32-bit index.
void radix_sort_narrow(std::vector<uint64_t>& items) {
  radix_sort<4>(items, [](uint64_t v) { return v >> 32; });
}

// Lines at least this long sort their items by radix (sort(dim=1) of 2048-long rows and
// unique's one long line).
constexpr int64_t kRadixMin = 1024;

// Columns per task of a scan along an outer dim: up to `most`, narrower when there are fewer
// (outer, block) tasks than threads (a 1024 x 1024 scan along dim 0 is one block of 1024).
int64_t scan_width(int64_t outer, int64_t inner, int64_t most) {
  const int64_t threads = omp_get_max_threads();
  if (outer >= threads) return most;
  const int64_t per = (inner * outer + threads - 1) / threads;
  return std::clamp<int64_t>((per + 15) / 16 * 16, 16, most);
}

template <bool kProd>
void scan_rows(const Tensor& x, const Tensor& out, int64_t dim) {
  const Shape& shape = x->shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  for (int64_t d = dim + 1; d < x->ndim(); ++d) inner *= shape[d];
  const int64_t len = shape[dim];
  constexpr int64_t kChunk = 1024;  // accumulators per task
  const int64_t width = scan_width(outer, inner, kChunk);
  const int64_t chunks = (inner + width - 1) / width;
  visit_dtype(x->dtype(), [&]<typename T>() {
    using A = acc_t<T>;
    const T* src = x->data_as<T>();
    T* dst = out->data_as<T>();
    OF_OMP_FOR_IF(
        x->numel() > cpu::kParallelGrain && outer * chunks > 1, schedule(static),
        for (int64_t task = 0; task < outer * chunks; ++task) {
          const int64_t o = task / chunks, j0 = (task % chunks) * width;
          const int64_t m = std::min(width, inner - j0);
          A acc[kChunk];
          std::fill_n(acc, m, kProd ? A(1) : A(0));
          for (int64_t i = 0; i < len; ++i) {
            const int64_t row = (o * len + i) * inner + j0;
            const T* p = src + row;
            T* q = dst + row;
            for (int64_t j = 0; j < m; ++j) {
              if constexpr (std::is_same_v<T, bool>) {
                acc[j] = kProd ? A(acc[j] && p[j]) : A(acc[j] + A(p[j]));
                q[j] = acc[j] != 0;
              } else {
                const A v = A(compute_t<T>(p[j]));
                acc[j] = kProd ? acc[j] * v : acc[j] + v;
                q[j] = T(compute_t<T>(acc[j]));
              }
            }
          }
        });
  });
}

// One step of a scan: acc + v (acc * v; integer products wrap), in the accumulator type (also
// the combination of two accumulators, with T = A).
template <bool kProd, typename T, typename A>
inline A scan_step(A acc, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return kProd ? A(acc && v) : A(acc + A(v));
  } else {
    const A x = A(compute_t<T>(v));
    if constexpr (kProd && std::is_integral_v<A>)
      return A(std::make_unsigned_t<A>(acc) * std::make_unsigned_t<A>(x));
    else
      return kProd ? acc * x : acc + x;
  }
}

template <typename T, typename A>
inline T scan_value(A acc) {
  if constexpr (std::is_same_v<T, bool>)
    return acc != 0;
  else
    return T(compute_t<T>(acc));
}

// Scans along the last dim of contiguous x and out (lines of len). A line's running value is a
// chain of dependent adds (multiplies) in the accumulator type, so four lines (or pieces of
// lines) are scanned side by side: four independent chains. With too few lines for the threads,
// each line is cut into segments whose starting values come from a first pass that reduces
// every segment but the last (in four lanes each).
template <bool kProd, typename T>
void scan_lines(const T* src, T* dst, int64_t lines, int64_t len) {
  using A = acc_t<T>;
  const A init = kProd ? A(1) : A(0);
  // Four pieces of n elements from (p[j], q[j], starting at a[j], which ends at the pieces'
  // last values) side by side, the chains in locals (registers); and one piece.
  auto four = [](const T* const* p, T* const* q, A* a, int64_t n) {
    const T *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3];
    T *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];
    A a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    for (int64_t i = 0; i < n; ++i) {
      a0 = scan_step<kProd>(a0, p0[i]);
      a1 = scan_step<kProd>(a1, p1[i]);
      a2 = scan_step<kProd>(a2, p2[i]);
      a3 = scan_step<kProd>(a3, p3[i]);
      q0[i] = scan_value<T>(a0);
      q1[i] = scan_value<T>(a1);
      q2[i] = scan_value<T>(a2);
      q3[i] = scan_value<T>(a3);
    }
    a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
  };
  auto one = [](const T* p, T* q, A a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      a = scan_step<kProd>(a, p[i]);
      q[i] = scan_value<T>(a);
    }
  };
  const int64_t threads = omp_get_max_threads();
  const bool parallel = lines * len > cpu::kParallelGrain && threads > 1;
  const int64_t segs =
      parallel && lines < 4 * threads
          ? std::clamp<int64_t>((4 * threads + lines - 1) / lines, 1, len / 4096 + 1)
          : 1;
  if (segs == 1) {
    // Whole lines, four per task.
    const int64_t groups = (lines + 3) / 4;
    OF_OMP_FOR_IF(
        parallel, schedule(static), for (int64_t g = 0; g < groups; ++g) {
          const int64_t l0 = 4 * g;
          if (l0 + 4 <= lines) {
            const T* p[4] = {src + l0 * len, src + (l0 + 1) * len, src + (l0 + 2) * len,
                             src + (l0 + 3) * len};
            T* q[4] = {dst + l0 * len, dst + (l0 + 1) * len, dst + (l0 + 2) * len,
                       dst + (l0 + 3) * len};
            A a[4] = {init, init, init, init};
            four(p, q, a, len);
          } else {
            for (int64_t l = l0; l < lines; ++l) one(src + l * len, dst + l * len, init, len);
          }
        });
    return;
  }
  // Segments: (line, seg) units; a first pass reduces each segment but a line's last, the
  // starting values are their running combination along the line.
  const int64_t units = lines * segs;
  auto seg_begin = [&](int64_t u) { return u / segs * len + len * (u % segs) / segs; };
  auto seg_end = [&](int64_t u) { return u / segs * len + len * (u % segs + 1) / segs; };
  std::vector<A> start(units, init);
#pragma omp parallel for schedule(static)
  for (int64_t u = 0; u < units; ++u) {
    if (u % segs == segs - 1) continue;
    const int64_t b = seg_begin(u), e = seg_end(u);
    A lane[4] = {init, init, init, init};
    int64_t i = b;
    for (; i + 4 <= e; i += 4)
      for (int l = 0; l < 4; ++l) lane[l] = scan_step<kProd>(lane[l], src[i + l]);
    for (; i < e; ++i) lane[0] = scan_step<kProd>(lane[0], src[i]);
    start[u] = scan_step<kProd, A>(scan_step<kProd, A>(lane[0], lane[1]),
                                   scan_step<kProd, A>(lane[2], lane[3]));
  }
  for (int64_t line = 0; line < lines; ++line) {
    A run = init;
    for (int64_t s = 0; s < segs; ++s) {
      const A own = start[line * segs + s];
      start[line * segs + s] = run;
      run = scan_step<kProd, A>(run, own);
    }
  }
  const int64_t groups = (units + 3) / 4;
#pragma omp parallel for schedule(static)
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t u0 = 4 * g, k = std::min<int64_t>(4, units - u0);
    if (k == 4) {
      // Segments of one line differ in length by at most one: the common part side by side.
      int64_t n = std::numeric_limits<int64_t>::max();
      for (int64_t j = 0; j < 4; ++j) n = std::min(n, seg_end(u0 + j) - seg_begin(u0 + j));
      const T* p[4];
      T* q[4];
      A a[4];
      for (int64_t j = 0; j < 4; ++j)
        p[j] = src + seg_begin(u0 + j), q[j] = dst + seg_begin(u0 + j), a[j] = start[u0 + j];
      four(p, q, a, n);
      for (int64_t j = 0; j < 4; ++j)
        one(p[j] + n, q[j] + n, a[j], seg_end(u0 + j) - seg_begin(u0 + j) - n);
    } else {
      for (int64_t u = u0; u < units; ++u)
        one(src + seg_begin(u), dst + seg_begin(u), start[u], seg_end(u) - seg_begin(u));
    }
  }
}

template <bool kProd>
void scan_kernel(const Tensor& x, const Tensor& out, int64_t dim) {
  if (x->ndim() > 0 && dim == x->ndim() - 1 && x->is_contiguous() && out->is_contiguous() &&
      x->numel() > 0) {
    const int64_t len = x->shape()[dim];
    return visit_dtype(x->dtype(), [&]<typename T>() {
      scan_lines<kProd, T>(x->data_as<T>(), out->data_as<T>(), x->numel() / len, len);
    });
  }
  if (x->ndim() > 0 && dim < x->ndim() - 1 && x->is_contiguous() && out->is_contiguous() &&
      x->numel() > 0)
    return scan_rows<kProd>(x, out, dim);
  const int64_t len = dim_size(x, dim), step = dim_stride(x, dim), ostep = dim_stride(out, dim);
  Strides os = out->strides();
  visit_dtype(x->dtype(), [&]<typename T>() {
    using A = acc_t<T>;
    const T* base = x->data_as<T>();
    T* obase = out->data_as<T>();
    // Lines of x and of out are enumerated in the same order (same shape).
    const std::vector<int64_t> out_offsets = line_offsets(out, dim);
    for_each_line(x->shape(), x->strides(), dim, [&](int64_t l, int64_t off) {
      A acc = kProd ? A(1) : A(0);
      const T* p = base + off;
      T* q = obase + out_offsets[l];
      for (int64_t i = 0; i < len; ++i) {
        if constexpr (std::is_same_v<T, bool>) {
          acc = kProd ? A(acc && p[i * step]) : A(acc + A(p[i * step]));
          q[i * ostep] = acc != 0;
        } else {
          const A v = A(compute_t<T>(p[i * step]));
          acc = kProd ? acc * v : acc + v;
          q[i * ostep] = T(compute_t<T>(acc));
        }
      }
    });
  });
}
}  // namespace

void Cumsum::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  scan_kernel<false>(in[0], out[0], attrs.get<int64_t>("dim"));
}

void Cumprod::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  scan_kernel<true>(in[0], out[0], attrs.get<int64_t>("dim"));
}

void Sort::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor& x = in[0];
  if (out[0]->numel() == 0) return;
  const int64_t dim = attrs.get<int64_t>("dim");
  const bool descending = attrs.get<bool>("descending");
  const int64_t len = dim_size(x, dim), step = dim_stride(x, dim);
  // topk keeps the first k positions of the sorted order, kthvalue (select) only position k - 1.
  const int64_t k = attrs.has("k") ? attrs.get<int64_t>("k") : len;
  const bool select = attrs.has("select") && attrs.get<bool>("select");
  const bool nan_wins = attrs.has("nan_wins") && attrs.get<bool>("nan_wins");
  const int64_t ostep = dim_stride(out[0], dim);
  const std::vector<int64_t> out_offsets = line_offsets(out[0], dim);
  visit_dtype(x->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* base = x->data_as<T>();
    T* vals = out[0]->data_as<T>();
    int64_t* idxs = out[1]->data_as<int64_t>();
    // Each line's values become unsigned keys in the sort order (NaN largest, -0.0 == 0.0), so
    // that (key, position) pairs order with integer compares; ties break by position, which
    // gives the stable order (also for a partial selection: the order is total). Descending
    // flips the keys. Keys of up to 32 bits and their position pack into one 64-bit integer.
    const bool narrow = sizeof(C) <= 4 && len <= int64_t{UINT32_MAX};
    const int64_t first = select ? k - 1 : 0;  // the sorted positions [first, k) are output
    for_each_line(x->shape(), x->strides(), dim, [&](int64_t l, int64_t off) {
      const T* p = base + off;
      const int64_t o = out_offsets[l];
      auto emit = [&](int64_t j, int64_t pos) {
        vals[o + j * ostep] = p[pos * step];
        idxs[o + j * ostep] = pos;
      };
      if constexpr (std::is_floating_point_v<C>) {
        if (nan_wins) {  // median: a line with a NaN selects its first NaN
          for (int64_t i = 0; i < len; ++i) {
            const C v = C(p[i * step]);
            if (v != v) return emit(0, i);
          }
        }
      }
      if (narrow) {
        thread_local std::vector<uint64_t> items;
        items.resize(len);
        const uint32_t flip = descending ? ~uint32_t{0} : 0;
        for (int64_t i = 0; i < len; ++i) {
          const uint32_t key = static_cast<uint32_t>(sort_key32(C(p[i * step]))) ^ flip;
          items[i] = (uint64_t{key} << 32) | static_cast<uint64_t>(i);
        }
        if (!select && k == len && len >= kRadixMin)
          radix_sort_narrow(items);
        else
          order_items(items, k, select, std::less<uint64_t>());
        if constexpr (std::is_integral_v<C>) {
          for (int64_t j = first; j < k; ++j) {
            const uint64_t v = items[j];
            vals[o + (j - first) * ostep] = T(from_sort_key32<C>(uint32_t(v >> 32) ^ flip));
            idxs[o + (j - first) * ostep] = int64_t(v & 0xffffffffu);
          }
        } else {
          for (int64_t j = first; j < k; ++j) emit(j - first, int64_t(items[j] & 0xffffffffu));
        }
      } else {
        struct Item {
          uint64_t key;
          int64_t i;
        };
        thread_local std::vector<Item> items;
        items.resize(len);
        for (int64_t i = 0; i < len; ++i) {
          const uint64_t key = sort_key(C(p[i * step]));
          items[i] = {descending ? ~key : key, i};
        }
        if (!select && k == len && len >= kRadixMin)
          radix_sort<8>(items, [](const Item& v) { return v.key; });
        else
          order_items(items, k, select, [](const Item& a, const Item& b) {
            return a.key != b.key ? a.key < b.key : a.i < b.i;
          });
        if constexpr (std::is_integral_v<C>) {
          for (int64_t j = first; j < k; ++j) {
            const Item v = items[j];
            vals[o + (j - first) * ostep] = T(from_sort_key<C>(descending ? ~v.key : v.key));
            idxs[o + (j - first) * ostep] = v.i;
          }
        } else {
          for (int64_t j = first; j < k; ++j) emit(j - first, items[j].i);
        }
      }
    });
  });
}

namespace {
// cummax / cummin along an outer dim of contiguous tensors: whole rows at a time, a running
// extreme and its index per column (the walk of scan_rows). false: not of that form.
template <ReduceFn K>
bool cum_extreme_rows(const Tensor& x, const Tensor& vals, const Tensor& idxs, int64_t dim) {
  if (x->ndim() == 0 || dim >= x->ndim() - 1 || x->numel() == 0 || !x->is_contiguous() ||
      !vals->is_contiguous() || !idxs->is_contiguous())
    return false;
  const Shape& shape = x->shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  for (int64_t d = dim + 1; d < x->ndim(); ++d) inner *= shape[d];
  const int64_t len = shape[dim];
  constexpr int64_t kChunk = 512;
  const int64_t width = scan_width(outer, inner, kChunk);
  const int64_t chunks = (inner + width - 1) / width;
  visit_dtype(x->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* src = x->data_as<T>();
    T* vp = vals->data_as<T>();
    int64_t* ip = idxs->data_as<int64_t>();
    OF_OMP_FOR_IF(
        x->numel() > cpu::kParallelGrain && outer * chunks > 1, schedule(static),
        for (int64_t task = 0; task < outer * chunks; ++task) {
          const int64_t o = task / chunks, j0 = (task % chunks) * width;
          const int64_t m = std::min(width, inner - j0);
          C best[kChunk];
          int64_t at[kChunk];
          for (int64_t i = 0; i < len; ++i) {
            const int64_t row = (o * len + i) * inner + j0;
            const T* p = src + row;
            T* q = vp + row;
            int64_t* r = ip + row;
            for (int64_t j = 0; j < m; ++j) {
              const C v = C(p[j]);
              // The first row starts every column; a NaN extreme stays, and each later NaN takes
              // its place (PyTorch's rule: the index is the latest NaN's).
              const bool take =
                  i == 0 || v != v ||
                  (best[j] == best[j] && (K == ReduceFn::kMax ? v >= best[j] : v <= best[j]));
              best[j] = take ? v : best[j];
              at[j] = take ? i : at[j];
              q[j] = T(best[j]);
              r[j] = at[j];
            }
          }
        });
  });
  return true;
}
}  // namespace

template <ReduceFn K>
void CumExtreme<K>::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  const Tensor& x = in[0];
  const int64_t dim = attrs.get<int64_t>("dim");
  if (cum_extreme_rows<K>(x, out[0], out[1], dim)) return;
  const int64_t len = dim_size(x, dim), step = dim_stride(x, dim);
  const int64_t ostep = dim_stride(out[0], dim);
  const std::vector<int64_t> out_offsets = line_offsets(out[0], dim);
  visit_dtype(x->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* base = x->data_as<T>();
    T* vals = out[0]->data_as<T>();
    int64_t* idxs = out[1]->data_as<int64_t>();
    for_each_line(x->shape(), x->strides(), dim, [&](int64_t l, int64_t off) {
      // Locals, not the captures: the stores below could alias those, and the loop would
      // reload every bound and pointer per element.
      const int64_t n = len, xs = step, os = ostep;
      const T* p = base + off;
      T* v_out = vals + out_offsets[l];
      int64_t* i_out = idxs + out_offsets[l];
      C best = C(p[0]);
      int64_t at = 0, i = 0;
      for (; i < n; ++i) {
        const C v = C(p[i * xs]);
        if (K == ReduceFn::kMax ? v >= best : v <= best) {
          best = v;
          at = i;
        } else if (v != v) {
          break;  // a NaN stays the running extreme
        }
        v_out[i * os] = T(best);
        i_out[i * os] = at;
      }
      for (int64_t nan_at = i; i < n; ++i) {  // each later NaN takes the index (PyTorch)
        if (C(p[i * xs]) != C(p[i * xs])) nan_at = i;
        v_out[i * os] = p[nan_at * xs];
        i_out[i * os] = nan_at;
      }
    });
  });
}

void Mode::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor& x = in[0];
  const int64_t dim = attrs.get<int64_t>("dim");
  const int64_t len = dim_size(x, dim), step = dim_stride(x, dim);
  visit_dtype(x->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* base = x->data_as<T>();
    T* vals = out[0]->data_as<T>();
    int64_t* idxs = out[1]->data_as<int64_t>();
    for_each_line(x->shape(), x->strides(), dim, [&](int64_t l, int64_t off) {
      const T* p = base + off;
      std::vector<int64_t> order(len);
      std::iota(order.begin(), order.end(), 0);
      // NaN sorts last and equals NaN: with plain < and == the sort's order is undefined and
      // the run of a NaN is empty, so the loop below never advanced.
      auto is_nan = [](C v) { return v != v; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const C va = C(p[a * step]), vb = C(p[b * step]);
        if (is_nan(vb)) return !is_nan(va);
        return !is_nan(va) && va < vb;
      });
      auto same = [&](C a, C b) { return a == b || (is_nan(a) && is_nan(b)); };
      int64_t best_count = 0, best_last = 0;
      for (int64_t i = 0; i < len;) {
        int64_t j = i, last = order[i];
        while (j < len && same(C(p[order[j] * step]), C(p[order[i] * step]))) {
          last = std::max(last, order[j]);
          ++j;
        }
        if (j - i > best_count) {  // strictly more: the smallest value wins ties
          best_count = j - i;
          best_last = last;
        }
        i = j;
      }
      vals[l] = p[best_last * step];
      idxs[l] = best_last;
    });
  });
}

template void CumExtreme<ReduceFn::kMax>::compute_cpu(const TensorList&, const TensorList&,
                                                      const Attrs&) const;
template void CumExtreme<ReduceFn::kMin>::compute_cpu(const TensorList&, const TensorList&,
                                                      const Attrs&) const;
template void Reduce<ReduceFn::kProd>::compute_cpu(const TensorList&, const TensorList&,
                                                   const Attrs&) const;
template void Reduce<ReduceFn::kMax>::compute_cpu(const TensorList&, const TensorList&,
                                                  const Attrs&) const;
template void Reduce<ReduceFn::kMin>::compute_cpu(const TensorList&, const TensorList&,
                                                  const Attrs&) const;
template void ArgReduce<ReduceFn::kMax>::compute_cpu(const TensorList&, const TensorList&,
                                                     const Attrs&) const;
template void ArgReduce<ReduceFn::kMin>::compute_cpu(const TensorList&, const TensorList&,
                                                     const Attrs&) const;

}  // namespace oneflow
