// CPU kernels of gather, scatter and cat. Gather and scatter (whose outputs are always fresh)
// test the index bounds in their one pass over the index and raise after it: gather reads
// element 0 for a bad index, scatter skips it.
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "oneflow/core/kernels/common/stack_slices.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

// Offset (in `strides`) of the first element of line `l` of `shape`, the lines running along
// `along` and enumerated in row-major order; the coordinate along `skip` (when >= 0) counts as 0.
inline int64_t line_offset(int64_t l, const Shape& shape, const Strides& strides, int64_t along,
                           int64_t skip) {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (d == along) continue;
    const int64_t c = l % shape[d];
    l /= shape[d];
    if (d != skip) off += c * strides[d];
  }
  return off;
}

enum class ScatterReduce { kNone, kAdd, kMultiply, kAmax, kAmin };

ScatterReduce scatter_reduce_of(const std::string& reduce) {
  if (reduce == "add") return ScatterReduce::kAdd;
  if (reduce == "multiply") return ScatterReduce::kMultiply;
  if (reduce == "amax") return ScatterReduce::kAmax;
  if (reduce == "amin") return ScatterReduce::kAmin;
  return ScatterReduce::kNone;
}

template <ScatterReduce R, typename T>
inline void scatter_one(T& dst, T v) {
  using C = compute_t<T>;
  if constexpr (R == ScatterReduce::kNone) {
    dst = v;
  } else if constexpr (R == ScatterReduce::kAdd) {
    if constexpr (std::is_same_v<T, bool>)
      dst = dst || v;
    else
      dst = T(C(dst) + C(v));
  } else if constexpr (R == ScatterReduce::kMultiply) {
    if constexpr (std::is_same_v<T, bool>)
      dst = dst && v;
    else
      dst = T(C(dst) * C(v));
  } else if constexpr (R == ScatterReduce::kAmax) {
    if (C(v) > C(dst) || C(v) != C(v)) dst = v;
  } else {
    if (C(v) < C(dst) || C(v) != C(v)) dst = v;
  }
}

// `target_of`: the loss whose class targets the index holds (nll_loss's message and IndexError).
void check_indices(const char* op, const Tensor& index, int64_t size, int64_t dim,
                   const std::string& target_of = "") {
  const int64_t* idx = index->data_as<int64_t>();
  const int64_t n = index->numel();
  int bad = 0;  // a parallel, vectorised test first; the reporting loop runs only on failure
  OF_OMP_FOR_IF(
      n > cpu::kParallelGrain,
      reduction(|
                : bad) schedule(static),
      for (int64_t k = 0; k < n; ++k) bad |= static_cast<uint64_t>(idx[k]) >= uint64_t(size););
  if (!bad) return;
  for (int64_t k = 0; k < n; ++k) {
    if (idx[k] >= 0 && idx[k] < size) continue;
    if (!target_of.empty())
      throw_error<IndexError>(target_of.c_str(), "target ", idx[k],
                              " is out of bounds (expected values in [0, ", size, "))");
    throw_error<RuntimeError>(op, "index ", idx[k], " is out of bounds for dimension ", dim,
                              " with size ", size);
  }
}

}  // namespace

void Gather::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor &x = in[0], &index = in[1];
  const int64_t dim = attrs.get<int64_t>("dim");
  const int64_t n = index->numel();
  if (n == 0) return;
  const int64_t size = x->ndim() == 0 ? 1 : x->shape()[dim];
  const std::string target_of =
      attrs.has("target_of") ? attrs.get<std::string>("target_of") : std::string();
  if (size == 0 || x->numel() == 0)  // every index is out of range: no element 0 to read instead
    check_indices(name(), index, size, dim, target_of);
  // Lines along the index's last dim: per line one base offset into x, then a gather per element
  // (the index picks the coordinate along `dim`). The bounds are tested in the same pass (an
  // index out of range reads element 0 instead) and reported after it: the output is fresh, so
  // nothing the user holds is half-written.
  const int64_t* idx = index->data_as<int64_t>();
  const Shape ishape = index->shape().empty() ? Shape{1} : index->shape();
  Strides xs = x->strides();
  if (xs.empty()) xs.push_back(0);
  const int64_t last = static_cast<int64_t>(ishape.size()) - 1, len = ishape[last];
  // along dim == last the index alone gives the position; else j steps along the last dim too
  const int64_t lines = n / len, dstride = xs[dim], lstride = dim == last ? 0 : xs[last];
  const uint64_t usize = static_cast<uint64_t>(size);
  int bad = 0;
  visit_dtype(x->dtype(), [&]<typename T>() {
    const T* src = x->data_as<T>();
    T* dst = out[0]->data_as<T>();
    OF_OMP_FOR_IF(
        n > cpu::kParallelGrain && lines > 1,
        reduction(|
                  : bad) schedule(static),
        for (int64_t l = 0; l < lines; ++l) {
          const T* base = src + line_offset(l, ishape, xs, last, dim);
          const int64_t* il = idx + l * len;
          T* o = dst + l * len;
          int b = 0;
          if (dim == last && dstride == 1) {
            for (int64_t j = 0; j < len; ++j) {
              const uint64_t i = static_cast<uint64_t>(il[j]);
              b |= i >= usize;
              o[j] = base[i < usize ? i : 0];
            }
          } else {
            for (int64_t j = 0; j < len; ++j) {
              const uint64_t i = static_cast<uint64_t>(il[j]);
              b |= i >= usize;
              o[j] = base[static_cast<int64_t>(i < usize ? i : 0) * dstride + j * lstride];
            }
          }
          bad |= b;
        });
  });
  if (bad)  // reports the first bad index
    check_indices(name(), index, size, dim, target_of);
}

void Scatter::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor &self = in[0], &index = in[1], &src = in[2];
  const int64_t dim = attrs.get<int64_t>("dim");
  const std::string& reduce = attrs.get<std::string>("reduce");
  const int64_t n = index->numel();
  if (n == 0) return copy_cpu(self, out[0]);
  const int64_t size = self->ndim() == 0 ? 1 : self->shape()[dim];
  const uint64_t usize = static_cast<uint64_t>(size);
  // Lines along `dim`: every index element of a line writes into the same line of the output, and
  // no other line writes there, so lines run in parallel and each in order (later writes win,
  // as in a sequential loop).
  const int64_t* idx = index->data_as<int64_t>();
  const Shape ishape = index->shape().empty() ? Shape{1} : index->shape();
  const Strides is = contiguous_strides(ishape);
  Strides os = out[0]->strides(), ss = src->strides(), fs = self->strides();
  if (os.empty()) os.push_back(0);
  if (ss.empty()) ss.push_back(0);
  if (fs.empty()) fs.push_back(0);
  const int64_t len = ishape[dim], lines = n / len;
  const int64_t istep = is[dim], ostep = os[dim], sstep = ss[dim], fstep = fs[dim];
  // Along an outer dim, with src shaped as the index and the dims after `dim` alike in index,
  // src and output, all contiguous: the lines are columns, so walk rows of `inner` elements
  // instead (same per-destination order, contiguous reads).
  const int64_t nd = static_cast<int64_t>(ishape.size());
  int64_t inner = 1;
  bool rows = dim < nd - 1 && src->is_contiguous() && src->shape() == index->shape() &&
              out[0]->is_contiguous();
  for (int64_t d = dim + 1; d < nd && rows; ++d) {
    rows = self->shape()[d] == ishape[d];
    inner *= ishape[d];
  }
  // Note [Scatter copies each line before it writes there]: when the index has a line for every
  // line of the output, each line task first copies self's line into the output (sequential
  // reads and writes), then scatters into it while it is in L1. A copy of the whole tensor
  // first would leave the scatter's random accesses to miss in cache (2048x2048 float32 along
  // the last dim: 4.6 ms that way, the copy 0.6 ms of it).
  bool fused = !rows && self->ndim() > 0;
  for (int64_t d = 0; d < nd && fused; ++d) fused = d == dim || ishape[d] == self->shape()[d];
  if (!fused) copy_cpu(self, out[0]);
  int bad = 0;
  auto run_rows = [&]<ScatterReduce R>() {
    // Column chunks whose output rows (len of them) span ~512 KiB at most, so the scattered
    // writes stay in L2 (2048x2048 float32 along dim 0, a permutation per column, two threads
    // on the Xeon: chunks of 1024 columns, 8 MiB each, 15.6-16.2 ms; of 32 or 64, 10.5-11.4).
    const uint64_t fit = (uint64_t{512} << 10) /
                         static_cast<uint64_t>(std::max<int64_t>(1, len * itemsize(self->dtype())));
    const int64_t chunk = std::clamp<int64_t>(
        static_cast<int64_t>(std::bit_floor(std::max<uint64_t>(fit, 1))), 32, 1024);
    const int64_t outer = lines / inner, chunks = (inner + chunk - 1) / chunk;
    visit_dtype(self->dtype(), [&]<typename T>() {
      T* o = out[0]->data_as<T>();
      const T* s = src->data_as<T>();
      OF_OMP_FOR_IF(
          n > cpu::kParallelGrain && outer * chunks > 1,
          reduction(|
                    : bad) schedule(static),
          for (int64_t task = 0; task < outer * chunks; ++task) {
            const int64_t b = task / chunks, j0 = (task % chunks) * chunk;
            const int64_t m = std::min(chunk, inner - j0);
            int64_t out_base = 0;
            for (int64_t d = dim - 1, rem = b; d >= 0; --d) {
              out_base += (rem % ishape[d]) * os[d];
              rem /= ishape[d];
            }
            int bt = 0;
            for (int64_t i = 0; i < len; ++i) {
              const int64_t row = (b * len + i) * inner + j0;
              const int64_t* ir = idx + row;
              const T* sr = s + row;
              T* orow = o + out_base + j0;
              for (int64_t j = 0; j < m; ++j) {
                const uint64_t k = static_cast<uint64_t>(ir[j]);
                if (k >= usize) {
                  bt = 1;
                  continue;
                }
                scatter_one<R>(orow[static_cast<int64_t>(k) * ostep + j], sr[j]);
              }
            }
            bad |= bt;
          });
    });
  };
  auto run = [&]<ScatterReduce R>() {
    if (rows) return run_rows.template operator()<R>();
    visit_dtype(self->dtype(), [&]<typename T>() {
      T* o = out[0]->data_as<T>();
      const T* s = src->data_as<T>();
      const T* f = self->data_as<T>();
      OF_OMP_FOR_IF(
          n > cpu::kParallelGrain && lines > 1,
          reduction(|
                    : bad) schedule(static),
          for (int64_t l = 0; l < lines; ++l) {
            const int64_t* il = idx + line_offset(l, ishape, is, dim, -1);
            T* ol = o + line_offset(l, ishape, os, dim, -1);
            const T* sl = s + line_offset(l, ishape, ss, dim, -1);
            if (fused) {
              const T* fl = f + line_offset(l, ishape, fs, dim, -1);
              if (ostep == 1 && fstep == 1)
                std::copy_n(fl, size, ol);
              else
                for (int64_t k = 0; k < size; ++k) ol[k * ostep] = fl[k * fstep];
            }
            int bl = 0;
            if (istep == 1 && sstep == 1 && ostep == 1) {  // a contiguous line: plain addressing
              for (int64_t i = 0; i < len; ++i) {
                const uint64_t k = static_cast<uint64_t>(il[i]);
                if (k >= usize) {
                  bl = 1;
                  continue;
                }
                scatter_one<R>(ol[k], sl[i]);
              }
            } else {
              for (int64_t i = 0; i < len; ++i) {
                const uint64_t k = static_cast<uint64_t>(il[i * istep]);
                if (k >= usize) {
                  bl = 1;
                  continue;
                }
                scatter_one<R>(ol[static_cast<int64_t>(k) * ostep], sl[i * sstep]);
              }
            }
            bad |= bl;
          });
    });
  };
  auto dispatch = [&]() {
    switch (scatter_reduce_of(reduce)) {
      case ScatterReduce::kNone:
        return run.template operator()<ScatterReduce::kNone>();
      case ScatterReduce::kAdd:
        return run.template operator()<ScatterReduce::kAdd>();
      case ScatterReduce::kMultiply:
        return run.template operator()<ScatterReduce::kMultiply>();
      case ScatterReduce::kAmax:
        return run.template operator()<ScatterReduce::kAmax>();
      case ScatterReduce::kAmin:
        return run.template operator()<ScatterReduce::kAmin>();
    }
  };
  dispatch();
  if (bad)  // reports the first bad index
    check_indices(name(), index, size, dim);
}

namespace {
// The element stride between rows of `t` seen as (rows before `dim`, the rest) when each row
// is contiguous and the rows are equally spaced (a contiguous tensor, or a narrow of one along
// `dim` or a later dim: roll's pieces), else -1.
int64_t row_stride(const Tensor& t, int64_t dim) {
  const Shape& shape = t->shape();
  const std::vector<int64_t>& st = t->strides();
  int64_t expect = 1;  // the next stride a contiguous layout has
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= dim; --d) {
    if (shape[d] == 1) continue;
    if (st[d] != expect) return -1;
    expect *= shape[d];
  }
  int64_t stride = expect;  // the rows' spacing, set by the innermost outer dim of size > 1
  bool found = false;
  for (int64_t d = dim - 1; d >= 0; --d) {
    if (shape[d] == 1) continue;
    if (!found) {
      stride = st[d];
      found = true;
    } else if (st[d] != expect) {
      return -1;
    }
    expect = st[d] * shape[d];
  }
  return stride;
}

// memcpy, run from the end when the destination lies a little (under 2 KiB, modulo 4 KiB) after
// the source. Copied forwards, each load would then share its address bits 0-11 with a store
// issued shortly before (to dst = src + delta), which the core takes for a possible
// store-to-load forward and stalls on: roll(x, 7, 1) of 1024x1024 float32 ran at ~1.3 ms instead
// of ~0.1 ms. Backwards, the matching stores lie 4 KiB - delta back, long retired.
void copy_piece(char* dst, const char* src, int64_t n) {
  const auto delta = static_cast<uint64_t>(dst - src) & 4095;
  if (delta == 0 || delta >= 2048 || n < 64) {
    std::memcpy(dst, src, n);
    return;
  }
  if (cpu::avx2::has_avx2()) return cpu::avx2::copy_backward(dst, src, n);
  constexpr int64_t kBlock = 32;
  while (n >= kBlock) {
    n -= kBlock;
    char block[kBlock];  // both halves loaded before either is stored
    std::memcpy(block, src + n, kBlock);
    std::memcpy(dst + n, block, kBlock);
  }
  std::memcpy(dst, src, n);
}

// cat of row-contiguous inputs (see row_stride) of the output's dtype into a contiguous output:
// output row r (of the dims before `dim`) is row r of each input in turn, so one parallel pass
// of memcpy writes the output once, front to back (one strided copy per input writes it in as
// many passes).
bool cat_rows(const TensorList& in, const Tensor& o, int64_t dim) {
  if (!o->is_contiguous() || o->numel() == 0) return false;
  const int64_t sz = static_cast<int64_t>(itemsize(o->dtype()));
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= o->shape()[d];
  const int64_t out_row = o->numel() / outer * sz;
  std::vector<const char*> src(in.size());
  std::vector<int64_t> row(in.size()), step(in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    const int64_t stride = in[k]->dtype() == o->dtype() ? row_stride(in[k], dim) : -1;
    if (stride < 0) return false;
    row[k] = in[k]->numel() / outer * sz;
    step[k] = stride * sz;
  }
  for (size_t k = 0; k < in.size(); ++k) src[k] = static_cast<const char*>(in[k]->data());
  char* dst = static_cast<char*>(o->data());
  // Pieces of about 64 KiB: whole output rows, or parts of one row when rows are longer.
  constexpr int64_t kPiece = int64_t{64} << 10;
  const int64_t rows_per = std::max<int64_t>(1, kPiece / std::max<int64_t>(out_row, 1));
  const int64_t splits = out_row > kPiece ? (out_row + kPiece - 1) / kPiece : 1;
  const int64_t tasks = (outer + rows_per - 1) / rows_per * splits;
  OF_OMP_FOR_IF(
      o->numel() > cpu::kParallelGrain && tasks > 1, schedule(static),
      for (int64_t task = 0; task < tasks; ++task) {
        const int64_t r0 = task / splits * rows_per, r1 = std::min(outer, r0 + rows_per);
        // This task's byte range [b0, b1) of each row in the range.
        const int64_t part = task % splits;
        const int64_t b0 = out_row * part / splits, b1 = out_row * (part + 1) / splits;
        for (int64_t r = r0; r < r1; ++r) {
          int64_t at = 0;  // the row's byte where input k starts
          for (size_t k = 0; k < in.size(); ++k) {
            const int64_t lo = std::max(at, b0), hi = std::min(at + row[k], b1);
            if (lo < hi)
              copy_piece(dst + r * out_row + lo, src[k] + r * step[k] + (lo - at), hi - lo);
            at += row[k];
          }
        }
      });
  return true;
}
}  // namespace

void Cat::compute_cpu(const TensorList& in_, const TensorList& out, const Attrs& attrs) const {
  const int64_t dim = attrs.get<int64_t>("dim");
  const Tensor& o = out[0];
  // stack: each input as a view with a size-1 dim inserted, then a cat
  const TensorList in = attrs.has("stack") ? stack_slices(in_, dim) : in_;
  if (cat_rows(in, o, dim)) return;
  int64_t start = 0;
  for (const Tensor& t : in) {
    const int64_t len = t->shape()[dim];
    if (t->numel() > 0)
      copy_cpu(t, make_view(o, t->shape(), o->strides(), o->offset() + start * o->strides()[dim]));
    start += len;
  }
}

}  // namespace oneflow
