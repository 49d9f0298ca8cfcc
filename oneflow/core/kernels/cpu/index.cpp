// CPU kernels of advanced indexing: IndexGather (x[i_0, ..., i_k-1]) and IndexPut (the in-place
// write or accumulation). Operands are contiguous; negative indices count from the end. The
// functional layer checks the indices' bounds before it queues the op, and the kernels check
// them again (a compiled graph replays the kernels without the functional layer). Also the
// host-side search for the true elements of a mask (nonzero, masked_select, boolean indexing).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

// x viewed as [pre, adv_0, ..., adv_{k-1}, post] around the indexed dims.
struct IndexGeometry {
  int64_t pre = 1, post = 1, nb = 1;  // nb: number of index positions (numel of B)
  std::vector<int64_t> sizes;         // sizes of the indexed dims
  std::vector<const int64_t*> idx;
};

IndexGeometry geometry(const char* op, const Tensor& x, const TensorList& indices, int64_t dim) {
  IndexGeometry g;
  const int64_t k = static_cast<int64_t>(indices.size());
  for (int64_t d = 0; d < x->ndim(); ++d) {
    if (d < dim) g.pre *= x->shape()[d];
    if (d >= dim + k) g.post *= x->shape()[d];
  }
  g.nb = indices[0]->numel();
  for (int64_t j = 0; j < k; ++j) {
    const int64_t size = x->shape()[dim + j];
    const int64_t* v = indices[j]->data_as<int64_t>();
    bool bad = false;  // a vectorised test first; the reporting loop runs only on failure
    for (int64_t b = 0; b < g.nb; ++b)
      bad |= static_cast<uint64_t>(v[b] + size) >= static_cast<uint64_t>(2 * size);
    for (int64_t b = 0; bad && b < g.nb; ++b)
      if (v[b] < -size || v[b] >= size)
        throw_error<IndexError>(op, "index ", v[b], " is out of bounds for dimension ", dim + j,
                                " with size ", size);
    g.sizes.push_back(size);
    g.idx.push_back(v);
  }
  return g;
}

// Row of x (in units of `post` elements, within one `pre` block) that index position b names.
inline int64_t row_of(const IndexGeometry& g, int64_t b) {
  int64_t row = 0;
  for (size_t j = 0; j < g.sizes.size(); ++j) {
    int64_t v = g.idx[j][b];
    if (v < 0) v += g.sizes[j];
    row = row * g.sizes[j] + v;
  }
  return row;
}

int64_t rows_per_pre(const IndexGeometry& g) {
  int64_t r = 1;
  for (int64_t s : g.sizes) r *= s;
  return r;
}

}  // namespace

void IndexGather::compute_cpu(const TensorList& in, const TensorList& out,
                              const Attrs& attrs) const {
  const TensorList indices(in.begin() + 1, in.end());
  if (out[0]->numel() == 0) return;
  const IndexGeometry g = geometry(name(), in[0], indices, attrs.get<int64_t>("dim"));
  const int64_t rows = rows_per_pre(g), isz = static_cast<int64_t>(itemsize(in[0]->dtype()));
  const char* x = static_cast<const char*>(in[0]->data());
  char* o = static_cast<char*>(out[0]->data());
  const int64_t work = g.pre * g.nb;
  if (g.post == 1 && (isz == 1 || isz == 2 || isz == 4 || isz == 8)) {
    // Single elements (e.g. index_select along the last dim): typed loads and stores, the rows
    // decoded once, instead of a memcpy call per element.
    std::vector<int64_t> row(static_cast<size_t>(g.nb));
    for (int64_t b = 0; b < g.nb; ++b) row[b] = row_of(g, b);
    auto gather = [&]<typename U>() {
      const U* xs = reinterpret_cast<const U*>(x);
      U* os = reinterpret_cast<U*>(o);
      const int64_t* r = row.data();
      if (g.pre >= 4 * omp_get_max_threads()) {  // whole output rows per thread: a tight loop
        OF_OMP_FOR_IF(
            work > cpu::kParallelGrain, schedule(static), for (int64_t p = 0; p < g.pre; ++p) {
              const U* xr = xs + p * rows;
              U* orow = os + p * g.nb;
              for (int64_t b = 0; b < g.nb; ++b) orow[b] = xr[r[b]];
            });
        return;
      }
      OF_OMP_FOR_IF(work > cpu::kParallelGrain, collapse(2) schedule(static),
                    for (int64_t p = 0; p < g.pre; ++p) for (int64_t b = 0; b < g.nb; ++b)
                        os[p * g.nb + b] = xs[p * rows + r[b]];);
    };
    if (isz == 1) gather.template operator()<uint8_t>();
    if (isz == 2) gather.template operator()<uint16_t>();
    if (isz == 4) gather.template operator()<uint32_t>();
    if (isz == 8) gather.template operator()<uint64_t>();
    return;
  }
  OF_OMP_FOR_IF(
      work * g.post > cpu::kParallelGrain, schedule(static), for (int64_t w = 0; w < work; ++w) {
        const int64_t p = w / g.nb, b = w % g.nb;
        const int64_t src = (p * rows + row_of(g, b)) * g.post;
        std::memcpy(o + w * g.post * isz, x + src * isz, static_cast<size_t>(g.post * isz));
      });
}

void IndexPut::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const TensorList indices(in.begin() + 2, in.end());
  // Out of place (an in-place put on a view of a tensor that requires grad runs on a copy):
  // the positions not indexed keep the destination's values.
  if (out[0]->data() != in[0]->data())
    std::memcpy(out[0]->data(), in[0]->data(),
                static_cast<size_t>(in[0]->numel()) * itemsize(in[0]->dtype()));
  if (in[1]->numel() == 0) return;
  const IndexGeometry g = geometry(name(), out[0], indices, attrs.get<int64_t>("dim"));
  const int64_t rows = rows_per_pre(g);
  const bool accumulate = attrs.get<bool>("accumulate");
  std::vector<int64_t> row(static_cast<size_t>(g.nb));
  for (int64_t b = 0; b < g.nb; ++b) row[b] = row_of(g, b);
  const int64_t work = g.pre * g.nb * g.post;
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    T* dst = out[0]->data_as<T>();
    const T* v = in[1]->data_as<T>();
    // Each `pre` block writes its own part of dst, so blocks run in parallel; within a block the
    // positions go in order: repeated indices accumulate (or, without accumulate, the last write
    // wins).
    OF_OMP_FOR_IF(
        g.pre > 1 && work > cpu::kParallelGrain, schedule(static),
        for (int64_t p = 0; p < g.pre; ++p) for (int64_t b = 0; b < g.nb; ++b) {
          T* d = dst + (p * rows + row[b]) * g.post;
          const T* s = v + (p * g.nb + b) * g.post;
          if (accumulate) {
            if constexpr (std::is_same_v<T, bool>) {
              for (int64_t i = 0; i < g.post; ++i) d[i] = d[i] || s[i];
            } else {
              for (int64_t i = 0; i < g.post; ++i)
                d[i] = T(compute_t<T>(d[i]) + compute_t<T>(s[i]));
            }
          } else if (g.post == 1) {
            *d = *s;
          } else {
            std::memcpy(d, s, static_cast<size_t>(g.post) * sizeof(T));
          }
        });
  });
}

NonzeroPlan nonzero_plan_cpu(const bool* mask, int64_t n) {
  NonzeroPlan p;
  p.block = 1 << 16;
  const int64_t blocks = (n + p.block - 1) / p.block;
  p.first_output.assign(static_cast<size_t>(blocks), 0);
  const uint8_t* m = reinterpret_cast<const uint8_t*>(mask);
  OF_OMP_FOR_IF(
      n > cpu::kParallelGrain, schedule(static), for (int64_t b = 0; b < blocks; ++b) {
        const int64_t hi = std::min(n, (b + 1) * p.block);
        int64_t c = 0;
        for (int64_t i = b * p.block; i < hi; ++i) c += m[i] != 0;
        p.first_output[b] = c;
      });
  for (int64_t& c : p.first_output) {
    const int64_t count = c;
    c = p.total;
    p.total += count;
  }
  return p;
}

void nonzero_fill_cpu(const NonzeroPlan& plan, const bool* mask, const Shape& shape,
                      const std::vector<int64_t*>& cols, int64_t stride) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const bool flat = cols.size() == 1 && nd != 1;
  const int64_t inner = nd == 0 ? 1 : shape[nd - 1];
  const int64_t blocks = static_cast<int64_t>(plan.first_output.size());
  const uint8_t* m = reinterpret_cast<const uint8_t*>(mask);
  OF_OMP_FOR_IF(
      n > cpu::kParallelGrain, schedule(static), for (int64_t b = 0; b < blocks; ++b) {
        int64_t w = plan.first_output[b];
        const int64_t w_end = b + 1 < blocks ? plan.first_output[b + 1] : plan.total;
        if (w == w_end) continue;
        int64_t i = b * plan.block;
        const int64_t hi = std::min(n, i + plan.block);
        std::vector<int64_t> coord(static_cast<size_t>(nd));
        for (int64_t d = nd - 1, rem = i; d >= 0; --d) {
          coord[d] = rem % shape[d];
          rem /= shape[d];
        }
        // Per run of the last dim: the offsets of its true elements (a branch-free compaction into
        // a small buffer), then one column at a time.
        constexpr int64_t kChunk = 512;
        uint32_t found[kChunk];
        while (i < hi) {
          const int64_t j0 = nd == 0 ? 0 : coord[nd - 1];
          const int64_t len = std::min(inner - j0, hi - i);
          for (int64_t c0 = 0; c0 < len; c0 += kChunk) {
            const int64_t cl = std::min(kChunk, len - c0);
            const uint8_t* mc = m + i + c0;
            int64_t k = 0;
            for (int64_t t = 0; t < cl; ++t) {
              found[k] = static_cast<uint32_t>(t);
              k += mc[t] != 0;
            }
            if (flat) {
              int64_t* o = cols[0] + w * stride;
              for (int64_t q = 0; q < k; ++q) o[q * stride] = i + c0 + found[q];
            } else {
              for (int64_t d = 0; d + 1 < nd; ++d) {
                int64_t* o = cols[d] + w * stride;
                for (int64_t q = 0; q < k; ++q) o[q * stride] = coord[d];
              }
              int64_t* o = cols[nd - 1] + w * stride;
              for (int64_t q = 0; q < k; ++q) o[q * stride] = j0 + c0 + found[q];
            }
            w += k;
          }
          i += len;
          if (nd == 0) break;
          coord[nd - 1] += len;
          for (int64_t d = nd - 1; d > 0 && coord[d] == shape[d]; --d) {
            coord[d] = 0;
            ++coord[d - 1];
          }
        }
      });
}

// ---- searchsorted: binary searches, eight values in lockstep, blocks of values in parallel ----

namespace {

// Positions of v[i0, i1) in the lines of b (line `line_values` values each; one line for all
// when line_values is 0). Each search keeps a window [base, base + count) whose count halves
// the same way for every value, so the eight searches of a block step together and their loads
// overlap; the window moves with a select, not a branch (each step's outcome is a coin toss).
template <typename T, bool kRight, bool kSorter, typename O>
void search_block(const T* b, const int64_t* sorter, int64_t len, const T* v, int64_t line_values,
                  int64_t i0, int64_t i1, O* o) {
  using C = compute_t<T>;
  constexpr int kLanes = 8;
  // Whether boundary m lies before the insertion point of x, in the order where NaN follows
  // every number and equals itself (sort's order): a NaN boundary is never before a number, and
  // a NaN value goes before the first NaN boundary (after it with kRight).
  // (Bitwise operators: no branches, so that the compiler can run the lanes as vectors.)
  auto before = [](C m, C x) -> bool {
    if constexpr (kRight)
      return (m <= x) | (x != x);
    else
      return (m < x) | ((x != x) & (m == m));
  };
  for (int64_t s = i0; s < i1; s += kLanes) {
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, i1 - s));
    const T* line[kLanes];
    const int64_t* order[kLanes];
    int64_t base[kLanes];
    C x[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      const int64_t i = s + std::min(l, lanes - 1);
      const int64_t ln = line_values > 0 ? i / line_values : 0;
      line[l] = b + ln * len;
      order[l] = kSorter ? sorter + ln * len : nullptr;
      base[l] = 0;
      x[l] = static_cast<C>(v[i]);
    }
    auto at = [&](int l, int64_t p) { return static_cast<C>(line[l][kSorter ? order[l][p] : p]); };
    if (len == 0) {
      for (int l = 0; l < lanes; ++l) o[s + l] = O(0);
      continue;
    }
    for (int64_t count = len; count > 1;) {
      const int64_t half = count >> 1;
      for (int l = 0; l < kLanes; ++l)
        base[l] += half & -static_cast<int64_t>(before(at(l, base[l] + half - 1), x[l]));
      count -= half;
    }
    for (int l = 0; l < lanes; ++l) o[s + l] = O(base[l] + (before(at(l, base[l]), x[l]) ? 1 : 0));
  }
}

}  // namespace

void Histc::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const int64_t bins = attrs.get<int64_t>("bins"), n = in[0]->numel();
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const C lo = C(T(attrs.get<double>("lo"))), hi = C(T(attrs.get<double>("hi")));
      const C width = hi - lo, nb = C(bins);
      const T* x = in[0]->data_as<T>();
      // per-thread counts, added in thread order
      const int threads = n > cpu::kParallelGrain ? omp_get_max_threads() : 1;
      std::vector<int64_t> counts(static_cast<size_t>(threads * bins), 0);
      OF_OMP_FOR_IF(
          threads > 1, schedule(static) num_threads(threads), for (int t = 0; t < threads; ++t) {
            int64_t* c = counts.data() + t * bins;
            const int64_t b = n * t / threads, e = n * (t + 1) / threads;
            for (int64_t i = b; i < e; ++i) {
              const C v = C(x[i]);
              if (!(v >= lo && v <= hi)) continue;  // outside, or NaN
              int64_t pos = static_cast<int64_t>((v - lo) * nb / width);
              if (pos >= bins) pos = bins - 1;  // v == hi
              ++c[pos];
            }
          });
      T* o = out[0]->data_as<T>();
      for (int64_t k = 0; k < bins; ++k) {
        int64_t total = 0;
        for (int t = 0; t < threads; ++t) total += counts[t * bins + k];
        o[k] = T(C(total));
      }
    }
  });
}

void SearchSorted::compute_cpu(const TensorList& in, const TensorList& out,
                               const Attrs& attrs) const {
  const Tensor &seq = in[0], &values = in[1];
  const int64_t n = values->numel();
  if (n == 0) return;
  const int64_t len = seq->shape().back();
  const int64_t line_values = seq->ndim() > 1 ? values->shape().back() : 0;
  const int64_t* sorter = in.size() == 3 ? in[2]->data_as<int64_t>() : nullptr;
  if (sorter != nullptr)
    for (int64_t i = 0, total = in[2]->numel(); i < total; ++i)
      if (sorter[i] < 0 || sorter[i] >= len)
        throw_error<RuntimeError>(name(), "sorter index out of range: ", sorter[i],
                                  " for boundaries of ", len, " along the last dim");
  const bool right = attrs.get<bool>("right");
  int64_t steps = 1;
  while ((int64_t{1} << steps) <= len) ++steps;
  const int64_t blocks = (n + 63) / 64;
  visit_dtype(seq->dtype(), [&]<typename T>() {
    const T* b = seq->data_as<T>();
    const T* v = values->data_as<T>();
    auto run = [&]<typename O>(O* o) {
      auto block =
          right ? (sorter ? &search_block<T, true, true, O> : &search_block<T, true, false, O>)
                : (sorter ? &search_block<T, false, true, O> : &search_block<T, false, false, O>);
      // ~1-2 ns a step
      OF_OMP_FOR_IF(n * steps > 4096, schedule(static),
                    for (int64_t k = 0; k < blocks; ++k) block(
                        b, sorter, len, v, line_values, k * 64, std::min(n, k * 64 + 64), o););
    };
    if (out[0]->dtype() == DType::kInt32)
      run(out[0]->data_as<int32_t>());
    else
      run(out[0]->data_as<int64_t>());
  });
}

}  // namespace oneflow
