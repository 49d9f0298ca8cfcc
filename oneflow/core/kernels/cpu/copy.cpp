// CPU kernels of the copy and creation primitives: strided copy with dtype cast, fill, and the
// Philox normal generator.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "oneflow/core/common/philox.h"
#include "oneflow/core/kernels/common/values.h"
#include "oneflow/core/kernels/cpu/cpu_kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

// A copy without a cast whose output runs across the input's rows (a transpose, a permute that
// moves the input's contiguous dim): instead of reading the input with a long stride for every
// output row, it goes tile by tile over the plane of the output's contiguous dim (a) and the
// input's (b), kTileA x kTileB elements, so both sides are read and written in whole cache lines.
// Returns false (nothing done) when the copy is not of that form.
bool copy_tiled(const Tensor& src, const Tensor& dst) {
  // 8 input rows per tile: rows a power of two of bytes apart share one L1 set (8-way), so more
  // would evict each other before their lines are used up (32 x 32 tiles measured 5x slower).
  constexpr int64_t kTileA = 8, kTileB = 64;
  if (src->dtype() != dst->dtype() || dst->numel() < cpu::kParallelGrain) return false;
  const int64_t sz = static_cast<int64_t>(itemsize(dst->dtype()));
  if (sz != 1 && sz != 2 && sz != 4 && sz != 8) return false;
  const Shape& shape = dst->shape();
  const std::vector<int64_t> ss = cpu::broadcast_byte_strides(src, shape);
  const std::vector<int64_t> ds = cpu::broadcast_byte_strides(dst, shape);
  int64_t a = -1, b = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (ds[d] == sz) a = static_cast<int64_t>(d);
    if (ss[d] == sz) b = static_cast<int64_t>(d);
  }
  // a may be short (pixel_shuffle's r x r blocks: 2 elements): the tile is then whole rows of a
  if (a < 0 || b < 0 || a == b || shape[a] < 2 || shape[b] < 8) return false;
  std::vector<int64_t> odims, oss, ods;  // the other dims
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int64_t>(d) == a || static_cast<int64_t>(d) == b || shape[d] == 1) continue;
    odims.push_back(shape[d]);
    oss.push_back(ss[d]);
    ods.push_back(ds[d]);
  }
  const int64_t na = shape[a], nb = shape[b], sa = ss[a], db = ds[b];
  const int64_t ta = (na + kTileA - 1) / kTileA, tb = (nb + kTileB - 1) / kTileB;
  const int64_t nd = static_cast<int64_t>(odims.size());
  int64_t outer = 1;
  for (int64_t d : odims) outer *= d;
  const char* s0 = static_cast<const char*>(src->data());
  char* d0 = static_cast<char*>(dst->data());
  auto run = [&]<typename U>() {
    // one tile of the (a, b) plane at sp / dp
    auto tile = [&](const char* sp, char* dp, int64_t ia, int64_t ib) {
      const int64_t ea = std::min(na, ia + kTileA), eb = std::min(nb, ib + kTileB);
      for (int64_t i = ib; i < eb; ++i) {
        U* o = reinterpret_cast<U*>(dp + i * db);
        const char* x = sp + i * sz;
        for (int64_t j = ia; j < ea; ++j) o[j] = *reinterpret_cast<const U*>(x + j * sa);
      }
    };
    const int threads = omp_get_max_threads();
    if (outer >= 4 * threads) {
      // many planes (a batch of small transposes): each thread walks a range of them with an
      // odometer over the other dims, no division per plane
#pragma omp parallel for schedule(static)
      for (int t = 0; t < threads; ++t) {
        const int64_t lo = outer * t / threads, hi = outer * (t + 1) / threads;
        if (lo >= hi) continue;
        std::vector<int64_t> idx(nd, 0);
        const char* sp = s0;
        char* dp = d0;
        for (int64_t d = nd - 1, rem = lo; d >= 0; --d) {
          idx[d] = rem % odims[d];
          rem /= odims[d];
          sp += idx[d] * oss[d];
          dp += idx[d] * ods[d];
        }
        for (int64_t o = lo; o < hi; ++o) {
          for (int64_t ib = 0; ib < nb; ib += kTileB)
            for (int64_t ia = 0; ia < na; ia += kTileA) tile(sp, dp, ia, ib);
          for (int64_t d = nd - 1; d >= 0; --d) {
            sp += oss[d];
            dp += ods[d];
            if (++idx[d] < odims[d]) break;
            sp -= oss[d] * odims[d];
            dp -= ods[d] * odims[d];
            idx[d] = 0;
          }
        }
      }
      return;
    }
    const int64_t tiles = outer * tb * ta;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t rem = t / (tb * ta);
      const int64_t ib = (t / ta) % tb * kTileB, ia = t % ta * kTileA;
      const char* sp = s0;
      char* dp = d0;
      for (int64_t d = nd - 1; d >= 0; --d) {
        const int64_t i = rem % odims[d];
        rem /= odims[d];
        sp += i * oss[d];
        dp += i * ods[d];
      }
      tile(sp, dp, ia, ib);
    }
  };
  if (sz == 1) run.operator()<uint8_t>();
  if (sz == 2) run.operator()<uint16_t>();
  if (sz == 4) run.operator()<uint32_t>();
  if (sz == 8) run.operator()<uint64_t>();
  return true;
}

// Note [Short rows]: a same-dtype copy into a contiguous output whose innermost run is contiguous
// in the input too but short (32-512 bytes: attention's (B, S, H, D) -> (B, H, S, D) moves rows
// of D values) spends its time in the call per run when each run is a memcpy: glibc's memcpy
// picks its strategy by size on every call and the loop around it cannot overlap one row's
// loads with the next row's. avx2::copy_rows moves the rows with inline 32-byte loads and
// stores: 32x128x8x32 float32, 2 threads, 67-71 -> 48-52 us in a standalone comparison.
// Returns false (nothing done) when the copy is not of that form.
bool copy_short_rows(const Tensor& src, const Tensor& dst) {
  if (src->dtype() != dst->dtype() || !cpu::avx2::has_avx2() || !dst->is_contiguous()) return false;
  const Shape& shape = dst->shape();
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (nd < 2 || dst->numel() == 0) return false;
  const int64_t sz = static_cast<int64_t>(itemsize(dst->dtype()));
  const std::vector<int64_t> ss = cpu::broadcast_byte_strides(src, shape);
  // The run: the trailing dims along which the input is contiguous too.
  int64_t d = nd - 1, run = 1;
  for (; d >= 0 && (shape[d] == 1 || ss[d] == run * sz); --d) run *= shape[d];
  const int64_t bytes = run * sz;
  if (d < 0 || bytes < 32 || bytes > 512) return false;
  std::vector<int64_t> dims, st;  // the dims of rows, the last one walked by copy_rows
  for (int64_t k = 0; k <= d; ++k)
    if (shape[k] != 1) {
      dims.push_back(shape[k]);
      st.push_back(ss[k]);
    }
  constexpr int64_t kRowsPerTask = 64;
  const int64_t rows = dims.back(), step = st.back(),
                per = (rows + kRowsPerTask - 1) / kRowsPerTask;
  int64_t blocks = 1;
  for (size_t k = 0; k + 1 < dims.size(); ++k) blocks *= dims[k];
  const char* s0 = static_cast<const char*>(src->data());
  char* d0 = static_cast<char*>(dst->data());
  const int64_t nb = static_cast<int64_t>(dims.size()) - 1;
  OF_OMP_FOR_IF(
      dst->numel() > cpu::kParallelGrain && blocks * per > 1, schedule(static),
      for (int64_t t = 0; t < blocks * per; ++t) {
        const int64_t b = t / per, r0 = t % per * kRowsPerTask;
        int64_t off = 0;
        for (int64_t k = nb - 1, rem = b; k >= 0; --k) {
          off += rem % dims[k] * st[k];
          rem /= dims[k];
        }
        cpu::avx2::copy_rows(d0 + (b * rows + r0) * bytes, s0 + off + r0 * step,
                             std::min(kRowsPerTask, rows - r0), bytes, step);
      });
  return true;
}

// Copies with a complex side through real views: pairs to pairs (with a cast between the two
// precisions), a real tensor into the real parts with zero imaginary parts, the real parts
// into a real tensor (PyTorch discards the imaginary part).
void copy_complex(const Tensor& src, const Tensor& dst) {
  if (is_complex(src->dtype()) && is_complex(dst->dtype())) {
    copy_cpu(complex_pairs_view(src, -1), complex_pairs_view(dst, -1));
  } else if (is_complex(dst->dtype())) {
    copy_cpu(src, complex_pairs_view(dst, 0));
    const Tensor zero = empty_tensor({}, complex_to_real(dst->dtype()), dst->device());
    std::memset(zero->data(), 0, itemsize(zero->dtype()));
    const Tensor imag = complex_pairs_view(dst, 1);
    copy_cpu(make_view(zero, imag->shape(), Strides(imag->ndim(), 0), 0), imag);
  } else {
    copy_cpu(complex_pairs_view(src, 0), dst);
  }
}

}  // namespace

Tensor complex_pairs_view(const Tensor& t, int part) {
  Shape shape = t->shape();
  Strides strides = t->strides();
  for (int64_t& s : strides) s *= 2;
  int64_t offset = t->offset() * 2;
  if (part < 0) {
    shape.push_back(2);
    strides.push_back(1);
  } else {
    offset += part;
  }
  return make_view(t, shape, strides, offset, complex_to_real(t->dtype()));
}

// Copies `src` (any strides, same shape, on the CPU) into `dst` (any strides), casting.
void copy_cpu(const Tensor& src, const Tensor& dst) {
  if (is_complex(src->dtype()) || is_complex(dst->dtype())) [[unlikely]] {
    copy_complex(src, dst);
    return;
  }
  if (copy_tiled(src, dst) || copy_short_rows(src, dst)) return;
  const auto tier = cpu::loop_tier();
  visit_dtype(src->dtype(), [&]<typename S>() {
    visit_dtype(dst->dtype(), [&]<typename D>() {
      cpu::tensor_loop<2>({dst.get(), src.get()},
                          [&](std::array<char*, 2> p, const auto& s, int64_t n) {
                            D* o = reinterpret_cast<D*>(p[0]);
                            const S* x = reinterpret_cast<const S*>(p[1]);
                            if constexpr (std::is_same_v<S, D>) {
                              if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
                                // same type: memcpy (short runs of a permuted copy cost less
                                // than a call into a vector loop)
                                std::memcpy(o, x, n * sizeof(D));
                                return;
                              }
                            }
                            if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
                              cpu::run_loop(tier, [&] {
                                auto* const o_ = o;
                                auto* const x_ = x;
                                const int64_t m = n;
                                for (int64_t i = 0; i < m; ++i) o_[i] = cast_value<D>(x_[i]);
                              });
                            } else if (s[0] == sizeof(D) && s[1] == 0) {
                              // a broadcast value (the gradient of a sum, expand): a fill
                              const D v = cast_value<D>(*x);
                              cpu::run_loop(tier, [&] {
                                auto* const o_ = o;
                                const int64_t m = n;
                                const D v_ = v;
                                for (int64_t i = 0; i < m; ++i) o_[i] = v_;
                              });
                            } else if (s[0] == sizeof(D) && s[1] == -int64_t(sizeof(S))) {
                              // a reversed run (flip): vectorises with a lane permute
                              cpu::run_loop(tier, [&] {
                                auto* const o_ = o;
                                auto* const x_ = x;
                                const int64_t m = n;
                                for (int64_t i = 0; i < m; ++i) o_[i] = cast_value<D>(x_[-i]);
                              });
                            } else {
                              for (int64_t i = 0; i < n; ++i)
                                *reinterpret_cast<D*>(p[0] + i * s[0]) =
                                    cast_value<D>(*reinterpret_cast<const S*>(p[1] + i * s[1]));
                            }
                          });
    });
  });
}

void Copy::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  copy_cpu(in[0], out[0]);
}

void Flip::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  copy_cpu(flipped_view(in[0], attrs.get<std::vector<int64_t>>("dims")), out[0]);
}

// Row by row: the kept columns are copied, the others zeroed (all-zero bits are zero in every
// dtype). A strided input is first copied into the output, then zeroed there.
void Triangle::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor& y = out[0];
  const Shape& shape = y->shape();
  const int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
  if (y->numel() == 0) return;
  const int64_t diagonal = attrs.get<int64_t>("diagonal");
  const bool upper = attrs.get<bool>("upper");
  const int64_t sz = static_cast<int64_t>(itemsize(y->dtype()));
  const char* src = static_cast<const char*>(in[0]->data());
  char* dst = static_cast<char*>(y->data());
  if (!in[0]->is_contiguous()) {
    copy_cpu(in[0], y);
    src = dst;
  }
  const int64_t lines = y->numel() / cols;
  OF_OMP_FOR_IF(
      y->numel() > cpu::kParallelGrain, schedule(static), for (int64_t l = 0; l < lines; ++l) {
        const int64_t r = l % rows;
        // Kept columns [lo, hi): tril keeps c - r <= diagonal, triu keeps c - r >= diagonal.
        const int64_t lo = upper ? std::clamp<int64_t>(r + diagonal, 0, cols) : 0;
        const int64_t hi = upper ? cols : std::clamp<int64_t>(r + diagonal + 1, 0, cols);
        char* o = dst + l * cols * sz;
        if (src != dst && hi > lo)
          std::memcpy(o + lo * sz, src + (l * cols + lo) * sz, (hi - lo) * sz);
        std::memset(o, 0, lo * sz);
        std::memset(o + hi * sz, 0, (cols - hi) * sz);
      });
}

void Fill::compute_cpu(const TensorList&, const TensorList& out, const Attrs& attrs) const {
  const double value = attrs.get<double>("value");
  // int_value: an integer fill value, exact where the double is not (beyond 2**53).
  const bool exact_int = attrs.has("int_value");
  const int64_t int_value = exact_int ? attrs.get<int64_t>("int_value") : 0;
  const int64_t n = out[0]->numel();
  const auto tier = cpu::loop_tier();
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    const T v = exact_int ? cast_value<T>(int_value) : cast_value<T>(value);
    T* o = out[0]->data_as<T>();
    constexpr int64_t kBlock = 1 << 15;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    OF_OMP_FOR_IF(
        n > cpu::kParallelGrain, schedule(static), for (int64_t b = 0; b < blocks; ++b) {
          T* p = o + b * kBlock;
          const int64_t m = std::min(kBlock, n - b * kBlock);
          cpu::run_loop(tier, [&] {
            T* const p_ =
                p;  // locals: an int64 store may alias the captured count (strided_loop.h)
            const int64_t m_ = m;
            const T v_ = v;
            for (int64_t i = 0; i < m_; ++i) p_[i] = v_;
          });
        });
  });
}

void RandomNormal::compute_cpu(const TensorList&, const TensorList& out, const Attrs& attrs) const {
  const double mean = attrs.get<double>("mean"), std = attrs.get<double>("std");
  const Philox4x32 gen(static_cast<uint64_t>(attrs.get<int64_t>("seed")));
  const uint64_t offset = static_cast<uint64_t>(attrs.get<int64_t>("offset"));
  const int64_t n = out[0]->numel();
  if (out[0]->dtype() == DType::kFloat64) {  // counter c: elements 2c, 2c + 1 from 53-bit draws
    double* o = out[0]->data_as<double>();
    OF_OMP_FOR_IF(
        n > cpu::kParallelGrain, schedule(static), for (int64_t c = 0; c < (n + 1) / 2; ++c) {
          uint32_t r[4];
          gen(offset + static_cast<uint64_t>(c), r);
          double z[2];
          box_muller(bits_to_unit_double(r[0], r[1]), bits_to_unit_double(r[2], r[3]), &z[0],
                     &z[1]);
          for (int64_t k = 0; k < 2 && 2 * c + k < n; ++k) o[2 * c + k] = mean + std * z[k];
        });
    return;
  }
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      T* o = out[0]->data_as<T>();
      // Counter c yields elements 4c .. 4c+3 (two Box-Muller pairs).
      const int64_t groups = (n + 3) / 4;
      OF_OMP_FOR_IF(
          n > cpu::kParallelGrain, schedule(static), for (int64_t c = 0; c < groups; ++c) {
            uint32_t r[4];
            gen(offset + static_cast<uint64_t>(c), r);
            float z[4];
            box_muller(uint_to_unit_float(r[0]), uint_to_unit_float(r[1]), &z[0], &z[1]);
            box_muller(uint_to_unit_float(r[2]), uint_to_unit_float(r[3]), &z[2], &z[3]);
            for (int64_t k = 0; k < 4 && 4 * c + k < n; ++k)
              o[4 * c + k] = T(static_cast<compute_t<T>>(mean + std * static_cast<double>(z[k])));
          });
    }
  });
}

}  // namespace oneflow

namespace oneflow {

namespace {
// The view of `t` that Slice's attrs select (the same arithmetic as Slice::infer).
Tensor slice_view(const Tensor& t, const Attrs& attrs) {
  const auto& starts = attrs.get<std::vector<int64_t>>("starts");
  const auto& steps = attrs.get<std::vector<int64_t>>("steps");
  const auto& sizes = attrs.get<std::vector<int64_t>>("sizes");
  Shape shape = t->shape();
  Strides strides = t->strides();
  int64_t offset = t->offset();
  for (size_t d = 0; d < starts.size(); ++d) {
    if (sizes[d] > 0) offset += starts[d] * strides[d];
    strides[d] *= steps[d];
    shape[d] = sizes[d];
  }
  return make_view(t, shape, strides, offset);
}
}  // namespace

Tensor slice_view_of(const Tensor& t, const Attrs& attrs) { return slice_view(t, attrs); }

Tensor flipped_view(const Tensor& t, const std::vector<int64_t>& dims) {
  Strides strides = t->strides();
  int64_t offset = t->offset();
  for (int64_t d : dims) {
    if (t->shape()[d] > 0) offset += (t->shape()[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  return make_view(t, t->shape(), strides, offset);
}

void SliceGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  if (out[0]->numel() == 0) return;
  std::memset(out[0]->data(), 0, out[0]->numel() * itemsize(out[0]->dtype()));
  copy_cpu(in[0], slice_view(out[0], attrs));
}

void Assign::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  copy_cpu(in[1], out[0]);
}

void Arange::compute_cpu(const TensorList&, const TensorList& out, const Attrs& attrs) const {
  const double start = attrs.get<double>("start"), step = attrs.get<double>("step");
  const int64_t n = out[0]->numel();
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    T* o = out[0]->data_as<T>();
    for (int64_t i = 0; i < n; ++i) o[i] = cast_value<T>(start + static_cast<double>(i) * step);
  });
}

void RandomUniform::compute_cpu(const TensorList&, const TensorList& out,
                                const Attrs& attrs) const {
  const double low = attrs.get<double>("low"), high = attrs.get<double>("high");
  const Philox4x32 gen(static_cast<uint64_t>(attrs.get<int64_t>("seed")));
  const uint64_t offset = static_cast<uint64_t>(attrs.get<int64_t>("offset"));
  const int64_t n = out[0]->numel();
  if (out[0]->dtype() == DType::kFloat64) {  // counter c: elements 2c, 2c + 1 from 53-bit draws
    double* o = out[0]->data_as<double>();
    OF_OMP_FOR_IF(
        n > cpu::kParallelGrain, schedule(static), for (int64_t c = 0; c < (n + 1) / 2; ++c) {
          uint32_t r[4];
          gen(offset + static_cast<uint64_t>(c), r);
          for (int64_t k = 0; k < 2 && 2 * c + k < n; ++k)
            o[2 * c + k] = uniform_value_f64(r[2 * k], r[2 * k + 1], low, high);
        });
    return;
  }
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    T* o = out[0]->data_as<T>();
    const int64_t groups = (n + 3) / 4;
    OF_OMP_FOR_IF(
        n > cpu::kParallelGrain, schedule(static), for (int64_t c = 0; c < groups; ++c) {
          uint32_t r[4];
          gen(offset + static_cast<uint64_t>(c), r);
          for (int64_t k = 0; k < 4 && 4 * c + k < n; ++k)
            o[4 * c + k] = uniform_value<T>(r[k], low, high);
        });
  });
}

void AsStridedGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                const Attrs& attrs) const {
  const auto& size = attrs.get<std::vector<int64_t>>("grad_size");
  const auto& stride = attrs.get<std::vector<int64_t>>("grad_stride");
  const int64_t offset = attrs.get<int64_t>("grad_offset");
  const int64_t n = in[0]->numel(), nd = static_cast<int64_t>(size.size());
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    T* o = out[0]->data_as<T>();
    const T* g = in[0]->data_as<T>();
    std::fill(o, o + out[0]->numel(), T(0));
    // Serial: overlapping windows (unfold with step < size) add into the same element. The
    // gradient is walked a run of the innermost dim at a time, the offset of each run kept by an
    // odometer over the outer dims.
    const int64_t inner = nd > 0 ? size[nd - 1] : 1, step = nd > 0 ? stride[nd - 1] : 0;
    if (n == 0 || inner == 0) return;
    std::vector<int64_t> index(nd > 0 ? nd - 1 : 0, 0);
    int64_t base = offset;
    for (int64_t i = 0; i < n; i += inner) {
      T* dst = o + base;
      const T* src = g + i;
      for (int64_t k = 0; k < inner; ++k) {
        if constexpr (std::is_same_v<T, bool>)
          dst[k * step] = dst[k * step] || src[k];
        else
          dst[k * step] = T(compute_t<T>(dst[k * step]) + compute_t<T>(src[k]));
      }
      for (int64_t d = nd - 2; d >= 0; --d) {
        if (++index[d] < size[d]) {
          base += stride[d];
          break;
        }
        base -= (size[d] - 1) * stride[d];
        index[d] = 0;
      }
    }
  });
}

void Bernoulli::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Philox4x32 gen(static_cast<uint64_t>(attrs.get<int64_t>("seed")));
  const uint64_t offset = static_cast<uint64_t>(attrs.get<int64_t>("offset"));
  const int64_t n = out[0]->numel();
  visit_dtype(out[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* p = in[0]->data_as<T>();
      T* o = out[0]->data_as<T>();
      for (int64_t c = 0; c < (n + 3) / 4; ++c) {
        uint32_t r[4];
        gen(offset + static_cast<uint64_t>(c), r);
        for (int64_t k = 0; k < 4 && 4 * c + k < n; ++k)
          o[4 * c + k] = T(uint_to_unit_float(r[k]) <= float(compute_t<T>(p[4 * c + k])) ? 1 : 0);
      }
    }
  });
}

}  // namespace oneflow
