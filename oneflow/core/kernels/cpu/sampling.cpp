// CPU kernels of grid_sample (4-D, bilinear and nearest), pdist and the CTC loss, with their
// gradients (ops/sampling_primitives.h). The arithmetic follows PyTorch's CPU kernels step by
// step (the same coordinate transforms, tap weights and log-space recursions), so results agree
// to the last bits and gradients match PyTorch's conventions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/sampling_primitives.h"

namespace oneflow {

namespace {

template <typename F>
void visit_float(DType dt, F&& f) {
  if (dt == DType::kFloat64)
    f.template operator()<double>();
  else
    f.template operator()<float>();
}

// ---- grid_sample: source coordinates ----

// A grid coordinate in [-1, 1] as a pixel position along an axis of `size`, with d(position) /
// d(coordinate) in *g, then the padding rule applied (border: clamped; reflection: mirrored and
// clamped), its derivative multiplied into *g.
template <typename T>
T clip(T x, int64_t size, T* g) {
  if (x <= T(0)) {
    *g = 0;
    return 0;
  }
  const T hi = static_cast<T>(size - 1);
  if (x >= hi) {
    *g = 0;
    return hi;
  }
  *g = 1;
  return x;
}

// Mirrors x into [twice_low / 2, twice_high / 2] (the bounds are doubled so that the -0.5 of
// align_corners=False stays an integer).
template <typename T>
T reflect(T x, int64_t twice_low, int64_t twice_high, T* g) {
  if (twice_low == twice_high) {
    *g = 0;
    return 0;
  }
  const T lo = static_cast<T>(twice_low) / 2;
  const T span = static_cast<T>(twice_high - twice_low) / 2;
  x -= lo;
  T sign = 1;
  if (x < 0) {
    sign = -1;
    x = -x;
  }
  const T extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::floor(x / span));
  if (flips % 2 == 0) {
    *g = sign;
    return extra + lo;
  }
  *g = -sign;
  return span - extra + lo;
}

template <typename T>
T source_index(T coord, int64_t size, GridPadding padding, bool align_corners, bool volume, T* g) {
  // coord * scale + offset, as PyTorch: a coordinate near the largest float (1e38) stays finite
  *g = align_corners ? static_cast<T>(size - 1) / 2 : static_cast<T>(size) / 2;
  T x = coord * *g + static_cast<T>(size - 1) / 2;
  T g2 = 1, g3 = 1;
  if (padding != GridPadding::kZeros && !std::isfinite(x)) {
    // +-inf at the border: the last or the first pixel. NaN, and a reflected infinity (a NaN
    // remainder): the first pixel for images, as PyTorch's vectorised 2-D kernel's clamp, the
    // last for volumes, as its scalar 3-D kernel's std::min(size - 1, std::max(x, 0))
    *g = 0;
    const T last = static_cast<T>(size - 1);
    if (padding == GridPadding::kBorder && !std::isnan(x)) return x > 0 ? last : T(0);
    return volume ? last : T(0);
  }
  if (padding == GridPadding::kBorder) {
    x = clip(x, size, &g2);
  } else if (padding == GridPadding::kReflection) {
    x = align_corners ? reflect(x, 0, 2 * (size - 1), &g2) : reflect(x, -1, 2 * size - 1, &g2);
    x = clip(x, size, &g3);
  }
  *g *= g2 * g3;
  // zeros padding: an infinite or NaN position, outside (TapTable::build)
  if (!std::isfinite(x)) return std::numeric_limits<T>::quiet_NaN();
  // Far outside: every tap misses, as for any position below -1 or past size; bounded here so
  // that the integer taps below stay defined.
  if (!(x > T(-2))) x = -2;
  if (x > static_cast<T>(size + 1)) x = static_cast<T>(size + 1);
  return x;
}

struct GridArgs {
  GridMode mode;
  GridPadding padding;
  bool align_corners;
  int spatial;      // 2 or 3
  int64_t n, c;     // batch and channels
  int64_t size[3];  // the input's spatial sizes along x (W), y (H)[, z (D)]
  int64_t plane;    // H * W [* D]
  int64_t points;   // output positions per batch element
};

GridArgs grid_args(const Tensor& x, const Tensor& grid, const Attrs& attrs) {
  GridArgs a{};
  a.mode = GridMode(attrs.get<int64_t>("mode"));
  a.padding = GridPadding(attrs.get<int64_t>("padding"));
  a.align_corners = attrs.get<bool>("align_corners");
  a.spatial = static_cast<int>(x->ndim()) - 2;
  a.n = x->shape()[0];
  a.c = x->shape()[1];
  a.plane = 1;
  for (int k = 0; k < a.spatial; ++k) {
    a.size[k] = x->shape()[x->ndim() - 1 - k];
    a.plane *= a.size[k];
  }
  a.points = 1;
  for (int k = 1; k <= a.spatial; ++k) a.points *= grid->shape()[k];
  return a;
}

// The element offset of integer position pos (x, y[, z]) in a plane, or -1 outside.
inline int64_t plane_offset(const int64_t* pos, const GridArgs& a) {
  int64_t off = 0, stride = 1;
  for (int k = 0; k < a.spatial; ++k) {
    if (pos[k] < 0 || pos[k] >= a.size[k]) return -1;
    off += pos[k] * stride;
    stride *= a.size[k];
  }
  return off;
}

// ---- pdist ----

// Pair (i, j), i < j, of n rows: its index in the condensed distance vector.
inline int64_t pair_index(int64_t i, int64_t j, int64_t n) {
  return i * n - i * (i + 1) / 2 + (j - i - 1);
}

enum class PNorm { kZero, kOne, kTwo, kInf, kLessThanTwo, kOther };

PNorm p_norm(double p) {
  if (p == 0) return PNorm::kZero;
  if (p == 1) return PNorm::kOne;
  if (p == 2) return PNorm::kTwo;
  if (std::isinf(p)) return PNorm::kInf;
  return p < 2 ? PNorm::kLessThanTwo : PNorm::kOther;
}

template <typename T>
__attribute__((always_inline)) inline T sign_of(T d) {
  return d > 0 ? T(1) : (d < 0 ? T(-1) : T(0));
}

// The rows are read column by column from x^T (m, n): for row i, acc[j] over j > i gathers the
// p-th powers (or maxima) of one column at a time, so the inner loop runs along j, unit-stride
// and without a horizontal sum, and acc stays in the L1 cache. Inlined into the AVX2 / AVX-512
// loops (cpu::run_loop).
template <PNorm kind, typename T>
__attribute__((always_inline)) inline T distance_term(T acc, T d, T pt) {
  if constexpr (kind == PNorm::kZero)  // NaN counts NaN, as PyTorch's
    return acc + (d > 0 ? T(1) : (d == 0 ? T(0) : d));
  else if constexpr (kind == PNorm::kOne)
    return acc + d;
  else if constexpr (kind == PNorm::kTwo)
    return acc + d * d;
  else if constexpr (kind == PNorm::kInf)  // a NaN stays, as PyTorch's
    return acc < d || d != d ? d : acc;
  else
    return acc + std::pow(d, pt);
}

// 64 bytes of T as one value of GCC's vector extension (a zmm register under AVX-512).
template <typename T>
struct Vec64;
template <>
struct Vec64<float> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct Vec64<double> {
  typedef double type __attribute__((vector_size(64)));
};

template <PNorm kind, typename T>
__attribute__((always_inline)) inline void row_distances(const T* xt, const T* xi, int64_t i,
                                                         int64_t n, int64_t m, T pt, T* acc) {
  int64_t j0 = i + 1;
  if constexpr (kind != PNorm::kLessThanTwo && kind != PNorm::kOther) {
    // Blocks of four 64-byte vectors of pairs whose sums are held as vector values (GCC's
    // vector extension) over all m columns: four independent chains of additions. An array of
    // sums (the loop below) was stored and reloaded at every column, a chain of store-to-load
    // latencies (~9 cycles a column for 32 pairs). Same terms, same order.
    using V = typename Vec64<T>::type;
    constexpr int64_t kLanes = 64 / sizeof(T);
    for (; j0 + 4 * kLanes <= n; j0 += 4 * kLanes) {
      V sum[4] = {};
      for (int64_t k = 0; k < m; ++k) {
        const V a = V{} + xi[k];
        const T* col = xt + k * n + j0;
        for (int u = 0; u < 4; ++u) {
          V c;
          std::memcpy(&c, col + u * kLanes, sizeof(V));
          V d = c - a;
          if constexpr (kind != PNorm::kTwo) d = d < 0 ? -d : d;  // (-d)^2 is d^2 exactly
          if constexpr (kind == PNorm::kZero)
            sum[u] += d > 0 ? V{} + 1 : (d == 0 ? V{} : d);
          else if constexpr (kind == PNorm::kOne)
            sum[u] += d;
          else if constexpr (kind == PNorm::kTwo)
            sum[u] += d * d;
          else
            sum[u] = (sum[u] < d) | (d != d) ? d : sum[u];
        }
      }
      std::memcpy(acc + j0, sum, sizeof(sum));
    }
  }
  // blocks of kBlock pairs whose sums stay in registers over all m columns, then the rest
  constexpr int64_t kBlock = 64 / sizeof(T) * 2;  // two 64-byte vectors
  for (; j0 + kBlock <= n; j0 += kBlock) {
    T block[kBlock] = {};
    for (int64_t k = 0; k < m; ++k) {
      const T a = xi[k];
      const T* col = xt + k * n + j0;
#pragma omp simd
      for (int64_t j = 0; j < kBlock; ++j)
        block[j] = distance_term<kind>(block[j], std::abs(col[j] - a), pt);
    }
    for (int64_t j = 0; j < kBlock; ++j) acc[j0 + j] = block[j];
  }
  std::fill(acc + j0, acc + n, T(0));
  for (int64_t k = 0; k < m && j0 < n; ++k) {
    const T a = xi[k];
    const T* col = xt + k * n;
    for (int64_t j = j0; j < n; ++j) acc[j] = distance_term<kind>(acc[j], std::abs(col[j] - a), pt);
  }
  if constexpr (kind == PNorm::kTwo)
    for (int64_t j = i + 1; j < n; ++j) acc[j] = std::sqrt(acc[j]);
  if constexpr (kind == PNorm::kLessThanTwo || kind == PNorm::kOther)
    for (int64_t j = i + 1; j < n; ++j) acc[j] = std::pow(acc[j], T(1) / pt);
}

// dx_i[k] = sum over j != i of coef[j] * h(x_i[k] - x_j[k]), h the derivative of the p-norm in
// one component without its pair factor (coef[j] holds dy / dist^(p - 1) or dy, 0 for j = i and
// for pairs at distance 0), read column by column from x^T.
template <PNorm kind, typename T>
__attribute__((always_inline)) inline void row_distance_grad(const T* xt, const T* xi,
                                                             const T* coef, const T* dist,
                                                             int64_t n, int64_t m, T pt, T* dxi) {
  for (int64_t k = 0; k < m; ++k) {
    const T a = xi[k];
    const T* col = xt + k * n;
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) {
      const T d = a - col[j];
      if constexpr (kind == PNorm::kOne) {
        sum += coef[j] * sign_of(d);
      } else if constexpr (kind == PNorm::kTwo) {
        sum += coef[j] * d;
      } else if constexpr (kind == PNorm::kInf) {
        sum += std::abs(d) == dist[j] ? coef[j] * sign_of(d) : T(0);
      } else if constexpr (kind == PNorm::kLessThanTwo) {
        // PyTorch's rule below 1: a zero component contributes nothing (not 0 * inf)
        if (!(d == 0 && pt < 1)) sum += coef[j] * sign_of(d) * std::pow(std::abs(d), pt - 1);
      } else {
        sum += coef[j] * d * std::pow(std::abs(d), pt - 2);
      }
    }
    dxi[k] = sum;
  }
}

// ---- CTC ----

template <typename T>
T log_add(T a, T b) {
  const T m = std::max(a, b);
  if (m == -std::numeric_limits<T>::infinity()) return m;
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

template <typename T>
T log_add3(T a, T b, T c) {
  T m = std::max(a, std::max(b, c));
  if (m == -std::numeric_limits<T>::infinity()) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

// One sequence's view of the CTC inputs: its lengths and its labels in the blank-extended target
// (blank, l1, blank, l2, ..., blank).
struct CtcSeq {
  int64_t len_in, len_target;
  const int64_t* labels;
  int64_t blank;
  int64_t ext(int64_t s) const { return s % 2 == 0 ? blank : labels[s / 2]; }
  // Whether the path may skip from s - 2 to s (a label differing from the previous one).
  bool skip(int64_t s) const { return s % 2 == 1 && s > 1 && labels[s / 2] != labels[s / 2 - 1]; }
};

std::vector<CtcSeq> ctc_sequences(const Tensor& targets, const Tensor& il, const Tensor& tl,
                                  int64_t classes, int64_t blank, int64_t t_max) {
  const int64_t n = il->numel();
  const int64_t* in_len = il->data_as<int64_t>();
  const int64_t* tgt_len = tl->data_as<int64_t>();
  const int64_t* tg = targets->data_as<int64_t>();
  const bool padded = targets->ndim() == 2;
  const int64_t width = padded ? targets->shape()[1] : targets->numel();
  std::vector<CtcSeq> seqs(n);
  int64_t offset = 0;
  for (int64_t b = 0; b < n; ++b) {
    const int64_t li = in_len[b], lt = tgt_len[b];
    if (li < 0 || li > t_max)
      throw_error<RuntimeError>("ctc_loss", "expected input_lengths in [0, ", t_max, "], got ", li);
    if (lt < 0 || lt > width || (!padded && offset + lt > width))
      throw_error<RuntimeError>("ctc_loss", "target length ", lt, " of sequence ", b,
                                " runs past the targets");
    const int64_t* labels = padded ? tg + b * width : tg + offset;
    for (int64_t s = 0; s < lt; ++s)
      if (labels[s] < 0 || labels[s] >= classes)
        throw_error<RuntimeError>("ctc_loss", "target ", labels[s], " of sequence ", b,
                                  " is not a class in [0, ", classes, ")");
    seqs[b] = CtcSeq{li, lt, labels, blank};
    offset += lt;
  }
  return seqs;
}

}  // namespace

// ---- grid_sample ----

namespace {

// The taps of every output point of one batch element, tap-major: the point's k-th tap reads
// plane[off[k * points + p]] with weight w[k * points + p], and the weight's derivative along
// each axis (dw[axis]). A tap outside has offset -1 and reads nothing (an infinite value in the
// input must not turn into 0 * inf). Nearest sampling has one tap, (bi/tri)linear 2^spatial:
// corner bit k set takes the upper neighbour along axis k.
// A NaN or infinite position is outside (zeros padding). As PyTorch, bilinear 2-D sampling then
// gives NaN, and a NaN gradient along the axis whose weights multiply the non-finite one's (its
// vectorised kernel): such points are listed in nan_points, with a bit per non-finite axis in
// nan_axes. Nearest and trilinear give 0 (and gradients 0). The input's gradient gets nothing.
template <typename T>
struct TapTable {
  int taps = 0;
  std::vector<int64_t> off;
  std::vector<T> w, dw[3], g[3];
  std::vector<int64_t> nan_points;
  std::vector<uint8_t> nan_axes;
  // For the forward pass of a plane below 2^31 elements: the offsets with every outside tap at
  // 0 (weight 0, or a nearest tap's 1), read without a branch by every point, and the points
  // with a tap outside or a NaN position, whose values are then computed again from off and w.
  std::vector<int32_t> safe;
  std::vector<int64_t> edge;

  void build_safe(const GridArgs& a) {
    const int64_t points = a.points;
    safe.resize(off.size());
    edge.clear();
    for (int64_t p = 0; p < points; ++p) {
      bool outside = false;
      for (int k = 0; k < taps; ++k) {
        const int64_t o = off[k * points + p];
        outside = outside || o < 0;
        safe[k * points + p] = static_cast<int32_t>(o < 0 ? 0 : o);
      }
      if (outside) edge.push_back(p);
    }
  }

  // Bilinear 2-D sampling with zeros padding (the default): the same values as the general
  // path in the same order, in one branch-free pass over the points that vectorises (run under
  // cpu::run_loop), offsets in int32 (the caller checks that the plane fits), then the points
  // whose position is not finite (NaN, as the general path) set one by one.
  template <bool kGrad, bool kAlign>
  __attribute__((always_inline)) inline void build_bilinear_2d_zeros(const T* grid,
                                                                     const GridArgs& a) {
    const int64_t points = a.points;
    const int32_t width = static_cast<int32_t>(a.size[0]), height = static_cast<int32_t>(a.size[1]);
    taps = 4;
    off.resize(4 * points);
    w.resize(4 * points);
    safe.resize(4 * points);
    if (kGrad)
      for (int k = 0; k < 2; ++k) {
        dw[k].resize(4 * points);
        g[k].assign(points, a.align_corners ? static_cast<T>(a.size[k] - 1) / 2
                                            : static_cast<T>(a.size[k]) / 2);
      }
    const T fw = static_cast<T>(width), fh = static_cast<T>(height);
    const T sx = kAlign ? (fw - 1) / 2 : fw / 2, sy = kAlign ? (fh - 1) / 2 : fh / 2;
    const T ox = (fw - 1) / 2, oy = (fh - 1) / 2;
    const T top = std::numeric_limits<T>::max();
    const T* g_ = grid;
    int64_t* o_ = off.data();
    int32_t* s_ = safe.data();
    T* w_ = w.data();
    T* dx_ = kGrad ? dw[0].data() : nullptr;
    T* dy_ = kGrad ? dw[1].data() : nullptr;
    const int64_t m = points;
#pragma omp simd
    for (int64_t p = 0; p < m; ++p) {
      const T gx = g_[2 * p], gy = g_[2 * p + 1];
      T px = gx * sx + ox, py = gy * sy + oy;
      const bool finite = (std::abs(px) <= top) & (std::abs(py) <= top);
      px = std::min(std::max(finite ? px : T(0), T(-2)), fw + 1);
      py = std::min(std::max(finite ? py : T(0), T(-2)), fh + 1);
      const T fx = std::floor(px), fy = std::floor(py);
      const int32_t x0 = static_cast<int32_t>(fx), y0 = static_cast<int32_t>(fy);
      const T lx = fx + 1 - px, ux = px - fx, ly = fy + 1 - py, uy = py - fy;
      const bool in_x0 = (x0 >= 0) & (x0 < width), in_x1 = (x0 >= -1) & (x0 + 1 < width);
      const bool in_y0 = (y0 >= 0) & (y0 < height), in_y1 = (y0 >= -1) & (y0 + 1 < height);
      const int32_t o = x0 + y0 * width;
      const bool in0 = in_x0 & in_y0, in1 = in_x1 & in_y0, in2 = in_x0 & in_y1, in3 = in_x1 & in_y1;
      o_[p] = in0 ? o : -1;
      o_[m + p] = in1 ? o + 1 : -1;
      o_[2 * m + p] = in2 ? o + width : -1;
      o_[3 * m + p] = in3 ? o + width + 1 : -1;
      s_[p] = in0 ? o : 0;
      s_[m + p] = in1 ? o + 1 : 0;
      s_[2 * m + p] = in2 ? o + width : 0;
      s_[3 * m + p] = in3 ? o + width + 1 : 0;
      w_[p] = in0 ? lx * ly : T(0);
      w_[m + p] = in1 ? ux * ly : T(0);
      w_[2 * m + p] = in2 ? lx * uy : T(0);
      w_[3 * m + p] = in3 ? ux * uy : T(0);
      if constexpr (kGrad) {
        dx_[p] = in0 ? -ly : T(0);
        dx_[m + p] = in1 ? ly : T(0);
        dx_[2 * m + p] = in2 ? -uy : T(0);
        dx_[3 * m + p] = in3 ? uy : T(0);
        dy_[p] = in0 ? -lx : T(0);
        dy_[m + p] = in1 ? -ux : T(0);
        dy_[2 * m + p] = in2 ? lx : T(0);
        dy_[3 * m + p] = in3 ? ux : T(0);
      }
    }
    edge.clear();
    nan_points.clear();
    nan_axes.clear();
    for (int64_t p = 0; p < m; ++p) {
      const T px = g_[2 * p] * sx + ox, py = g_[2 * p + 1] * sy + oy;
      if (!std::isfinite(px) || !std::isfinite(py)) {
        for (int k = 0; k < 4; ++k) {
          off[k * m + p] = -1;
          w[k * m + p] = 0;
          if (kGrad) dw[0][k * m + p] = dw[1][k * m + p] = 0;
        }
        nan_points.push_back(p);
        nan_axes.push_back(
            static_cast<uint8_t>((std::isfinite(px) ? 0 : 1) | (std::isfinite(py) ? 0 : 2)));
      } else if (off[p] < 0 || off[m + p] < 0 || off[2 * m + p] < 0 || off[3 * m + p] < 0) {
        edge.push_back(p);
      }
    }
  }

  // Whether build() takes the one-pass bilinear 2-D path (and then fills safe and edge too).
  static bool bilinear_2d_zeros(const GridArgs& a) {
    return a.mode == GridMode::kBilinear && a.spatial == 2 && a.padding == GridPadding::kZeros &&
           a.plane + 2 * a.size[0] + 2 < std::numeric_limits<int32_t>::max();
  }

  // The taps of every point (any mode, padding and rank), under run_loop's tier for the
  // bilinear 2-D path.
  void build_any(const T* grid, const GridArgs& a, bool with_grad, cpu::Capability tier) {
    if (!bilinear_2d_zeros(a)) return build(grid, a, with_grad);
    cpu::run_loop(
        tier, [&]() __attribute__((always_inline)) {
          if (with_grad && a.align_corners)
            build_bilinear_2d_zeros<true, true>(grid, a);
          else if (with_grad)
            build_bilinear_2d_zeros<true, false>(grid, a);
          else if (a.align_corners)
            build_bilinear_2d_zeros<false, true>(grid, a);
          else
            build_bilinear_2d_zeros<false, false>(grid, a);
        });
  }

  void build(const T* grid, const GridArgs& a, bool with_grad) {
    const int64_t points = a.points;
    const int sp = a.spatial;
    taps = a.mode == GridMode::kNearest ? 1 : 1 << sp;
    off.assign(taps * points, -1);
    w.assign(taps * points, T(0));
    nan_points.clear();
    nan_axes.clear();
    for (int k = 0; k < sp && with_grad; ++k) {
      dw[k].assign(taps * points, T(0));
      g[k].resize(points);
    }
    for (int64_t p = 0; p < points; ++p) {
      T pos[3], mult[3];
      bool nan = false;
      uint8_t axes = 0;
      for (int k = 0; k < sp; ++k) {
        pos[k] = source_index(grid[sp * p + k], a.size[k], a.padding, a.align_corners, sp == 3,
                              &mult[k]);
        nan = nan || std::isnan(pos[k]);  // a non-finite zeros-padded position
        axes |= static_cast<uint8_t>(std::isnan(pos[k]) << k);
        if (with_grad) g[k][p] = mult[k];
      }
      if (taps == 1) {
        int64_t at[3];
        for (int k = 0; k < sp; ++k) at[k] = static_cast<int64_t>(std::nearbyint(pos[k]));
        off[p] = nan ? -1 : plane_offset(at, a);  // outside or NaN: zero, as PyTorch
        w[p] = 1;
        continue;
      }
      if (nan) {  // every tap outside
        if (sp == 2) {
          nan_points.push_back(p);
          nan_axes.push_back(axes);
        }
        continue;
      }
      int64_t lo[3];
      T lower[3], upper[3];  // the weights of the lower and the upper neighbour along each axis
      for (int k = 0; k < sp; ++k) {
        const T f = std::floor(pos[k]);
        lo[k] = static_cast<int64_t>(f);
        lower[k] = f + 1 - pos[k];
        upper[k] = pos[k] - f;
      }
      for (int corner = 0; corner < taps; ++corner) {
        int64_t at[3];
        for (int k = 0; k < sp; ++k) at[k] = lo[k] + ((corner >> k) & 1);
        const int64_t o = plane_offset(at, a);
        if (o < 0) continue;
        const int64_t i = corner * points + p;
        off[i] = o;
        T weight = 1;
        for (int k = 0; k < sp; ++k) weight *= (corner >> k) & 1 ? upper[k] : lower[k];
        w[i] = weight;
        if (!with_grad) continue;
        for (int k = 0; k < sp; ++k) {
          T d = (corner >> k) & 1 ? T(1) : T(-1);
          for (int j = 0; j < sp; ++j)
            if (j != k) d *= (corner >> j) & 1 ? upper[j] : lower[j];
          dw[k][i] = d;
        }
      }
    }
  }
};

}  // namespace

// Every point of one channel plane through its taps without a branch (the edge points' values
// are garbage here and are written again by the caller), in the taps' order of summation.
template <int kTaps, typename T>
__attribute__((always_inline)) inline void sample_plane(const T* xc, T* yc, const int32_t* so,
                                                        const T* w, int64_t points) {
  const T* x_ = xc;
  T* y_ = yc;
  const int32_t* o_ = so;
  const T* w_ = w;
  const int64_t m = points;
#pragma omp simd
  for (int64_t p = 0; p < m; ++p) {
    T v = x_[o_[p]] * w_[p];
    for (int k = 1; k < kTaps; ++k) v += x_[o_[k * m + p]] * w_[k * m + p];
    y_[p] = v;
  }
}

void GridSample::compute_cpu(const TensorList& in, const TensorList& out,
                             const Attrs& attrs) const {
  const GridArgs a = grid_args(in[0], in[1], attrs);
  const bool branch_free = a.plane <= std::numeric_limits<int32_t>::max();
  const auto tier = cpu::loop_tier();
  visit_float(in[0]->dtype(), [&]<typename T>() {
    const T* x = in[0]->data_as<T>();
    const T* grid = in[1]->data_as<T>();
    T* y = out[0]->data_as<T>();
    const int64_t plane = a.plane, points = a.points;
    // Per batch element: the taps once, then each channel plane read through them (one plane
    // and one output row of points at a time).
    OF_OMP_FOR_IF(
        a.n > 1 && a.n * points * a.c > cpu::kParallelGrain / 4, schedule(static),
        for (int64_t b = 0; b < a.n; ++b) {
          TapTable<T> tt;
          tt.build_any(grid + b * points * a.spatial, a, false, tier);
          if (branch_free && !TapTable<T>::bilinear_2d_zeros(a)) tt.build_safe(a);
          const int64_t* o = tt.off.data();
          const T* w = tt.w.data();
          for (int64_t ch = 0; ch < a.c; ++ch) {
            const T* xc = x + (b * a.c + ch) * plane;
            T* yc = y + (b * a.c + ch) * points;
            auto tap = [&](int64_t i) { return o[i] < 0 ? T(0) : xc[o[i]] * w[i]; };
            auto exact = [&](int64_t p) {
              T v = tap(p);
              for (int k = 1; k < tt.taps; ++k) v += tap(k * points + p);
              return v;
            };
            if (!branch_free) {
              for (int64_t p = 0; p < points; ++p) yc[p] = exact(p);
              for (const int64_t p : tt.nan_points) yc[p] = std::numeric_limits<T>::quiet_NaN();
              continue;
            }
            const int32_t* so = tt.safe.data();
            cpu::run_loop(
                tier, [&]() __attribute__((always_inline)) {
                  if (tt.taps == 1)
                    sample_plane<1>(xc, yc, so, w, points);
                  else if (tt.taps == 4)
                    sample_plane<4>(xc, yc, so, w, points);
                  else
                    sample_plane<8>(xc, yc, so, w, points);
                });
            for (const int64_t p : tt.edge) yc[p] = exact(p);
            for (const int64_t p : tt.nan_points) yc[p] = std::numeric_limits<T>::quiet_NaN();
          }
        });
  });
}

namespace {

// One channel plane's backward through a batch element's (bi/tri)linear taps, in one pass over
// its points: dy scattered into dx through the weights, and the position's gradient (the input
// at the taps times the weights' derivatives) added into acc (axis-major, per point).
template <int SP, typename T>
void linear_plane_backward(const T* xc, T* dxc, const T* gy, const TapTable<T>& tt, int64_t points,
                           bool need_input, bool need_grid, T* acc) {
  constexpr int kTaps = 1 << SP;
  const int64_t* o = tt.off.data();
  const T* w = tt.w.data();
  const T* d[SP];
  for (int axis = 0; axis < SP; ++axis) d[axis] = need_grid ? tt.dw[axis].data() : nullptr;
  for (int64_t p = 0; p < points; ++p) {
    const T g = gy[p];
    T s[SP] = {};
    for (int k = 0; k < kTaps; ++k) {
      const int64_t i = k * points + p;
      const int64_t at = o[i];
      if (at < 0) continue;
      if (need_input) dxc[at] += w[i] * g;
      if (need_grid) {
        const T v = xc[at];
        for (int axis = 0; axis < SP; ++axis) s[axis] += v * d[axis][i];
      }
    }
    if (need_grid)
      for (int axis = 0; axis < SP; ++axis) acc[axis * points + p] += s[axis] * g;
  }
}

}  // namespace

void GridSampleGrad::compute_cpu(const TensorList& in, const TensorList& out,
                                 const Attrs& attrs) const {
  const GridArgs a = grid_args(in[1], in[2], attrs);
  const bool need_input = attrs.get<bool>("need_input");
  const bool need_grid = attrs.get<bool>("need_grid") && a.mode != GridMode::kNearest;
  const auto tier = cpu::loop_tier();
  visit_float(in[1]->dtype(), [&]<typename T>() {
    const T* dy = in[0]->data_as<T>();
    const T* x = in[1]->data_as<T>();
    const T* grid = in[2]->data_as<T>();
    T* dx = out[0]->data_as<T>();
    T* dgrid = out[1]->data_as<T>();
    const int64_t plane = a.plane, points = a.points;
    const int sp = a.spatial;
    // One batch element per thread: its input gradient is written by its points only.
    OF_OMP_FOR_IF(
        a.n > 1 && a.n * points * a.c > cpu::kParallelGrain / 4, schedule(static),
        for (int64_t b = 0; b < a.n; ++b) {
          // each thread zeroes its own batch elements' gradients (nearest: the grid's stays 0)
          // (an empty gradient may have no memory at all: memset of a null pointer is undefined)
          if (a.c * plane > 0) std::memset(dx + b * a.c * plane, 0, sizeof(T) * a.c * plane);
          if (points > 0) std::memset(dgrid + b * points * sp, 0, sizeof(T) * points * sp);
          TapTable<T> tt;
          tt.build_any(grid + b * points * sp, a, need_grid, tier);
          std::vector<T> acc(need_grid ? sp * points : 0);  // d loss / d position
          const int64_t* o = tt.off.data();
          for (int64_t ch = 0; ch < a.c; ++ch) {
            const T* xc = x + (b * a.c + ch) * plane;
            T* dxc = dx + (b * a.c + ch) * plane;
            const T* gy = dy + (b * a.c + ch) * points;
            if (tt.taps == 1) {  // nearest: dy to the tap; the grid's gradient is zero
              if (need_input)
                for (int64_t p = 0; p < points; ++p)
                  if (o[p] >= 0) dxc[o[p]] += gy[p];
            } else if (sp == 2) {
              linear_plane_backward<2>(xc, dxc, gy, tt, points, need_input, need_grid, acc.data());
            } else {
              linear_plane_backward<3>(xc, dxc, gy, tt, points, need_input, need_grid, acc.data());
            }
          }
          if (need_grid && a.c > 0) {  // no channels: a zero gradient, NaN points too
            T* dg = dgrid + b * points * sp;
            for (int64_t p = 0; p < points; ++p)
              for (int axis = 0; axis < sp; ++axis)
                dg[sp * p + axis] = acc[axis * points + p] * tt.g[axis][p];
            const T nan = std::numeric_limits<T>::quiet_NaN();
            for (size_t i = 0; i < tt.nan_points.size(); ++i) {  // 2-D: x by y's weights
              dg[2 * tt.nan_points[i]] = tt.nan_axes[i] & 2 ? nan : T(0);
              dg[2 * tt.nan_points[i] + 1] = tt.nan_axes[i] & 1 ? nan : T(0);
            }
          }
        });
  });
}

// ---- pdist ----

namespace {

template <typename F>
void visit_p_norm(PNorm kind, F&& f) {
  switch (kind) {
    case PNorm::kZero:
      return f.template operator()<PNorm::kZero>();
    case PNorm::kOne:
      return f.template operator()<PNorm::kOne>();
    case PNorm::kTwo:
      return f.template operator()<PNorm::kTwo>();
    case PNorm::kInf:
      return f.template operator()<PNorm::kInf>();
    case PNorm::kLessThanTwo:
      return f.template operator()<PNorm::kLessThanTwo>();
    case PNorm::kOther:
      return f.template operator()<PNorm::kOther>();
  }
}

// x (n, m) transposed into a fresh (m, n) buffer.
template <typename T>
std::vector<T> transposed(const T* x, int64_t n, int64_t m) {
  std::vector<T> xt(n * m);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < m; ++k) xt[k * n + i] = x[i * m + k];
  return xt;
}

}  // namespace

void Pdist::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const double p = attrs.get<double>("p");
  const int64_t n = in[0]->shape()[0], m = in[0]->shape()[1];
  if (n < 2) return;
  visit_float(in[0]->dtype(), [&]<typename T>() {
    const T* x = in[0]->data_as<T>();
    T* y = out[0]->data_as<T>();
    const std::vector<T> xt = transposed(x, n, m);
    const auto tier = cpu::loop_tier();
    const T pt = static_cast<T>(p);
    visit_p_norm(p_norm(p), [&]<PNorm kind>() {
      auto region = [&] {
        std::vector<T> acc(n);
#pragma omp for schedule(dynamic, 4)
        for (int64_t i = 0; i < n - 1; ++i) {
          cpu::run_loop(
              tier, [&]() __attribute__((always_inline)) {
                row_distances<kind>(xt.data(), x + i * m, i, n, m, pt, acc.data());
              });
          std::copy(acc.begin() + i + 1, acc.end(), y + pair_index(i, i + 1, n));
        }
      };
      OF_OMP_PARALLEL_IF(out[0]->numel() * m > cpu::kParallelGrain, , region);
    });
  });
}

void PdistGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const double p = attrs.get<double>("p");
  const int64_t n = in[1]->shape()[0], m = in[1]->shape()[1];
  visit_float(in[1]->dtype(), [&]<typename T>() {
    const T* dy = in[0]->data_as<T>();
    const T* x = in[1]->data_as<T>();
    const T* dist = in[2]->data_as<T>();
    T* dx = out[0]->data_as<T>();
    const PNorm kind_ = p_norm(p);
    if (kind_ == PNorm::kZero || n < 2) {
      std::fill(dx, dx + n * m, T(0));
      return;
    }
    const std::vector<T> xt = transposed(x, n, m);
    const auto tier = cpu::loop_tier();
    const T pt = static_cast<T>(p);
    visit_p_norm(kind_, [&]<PNorm kind>() {
      // Row i's gradient gathers every pair it is in (each pair's term is odd in x_i - x_j),
      // so each row is written by one thread.
      auto region = [&] {
        std::vector<T> coef(n), dists(n);
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            const int64_t k = i < j ? pair_index(i, j, n) : pair_index(j, i, n);
            const T d = j == i ? T(0) : dist[k];
            dists[j] = d;
            if (d == 0) {
              coef[j] = 0;
            } else if constexpr (kind == PNorm::kOne || kind == PNorm::kInf) {
              coef[j] = dy[k];
            } else if constexpr (kind == PNorm::kTwo) {
              coef[j] = dy[k] / d;
            } else {
              coef[j] = dy[k] / std::pow(d, pt - 1);
            }
          }
          cpu::run_loop(
              tier, [&]() __attribute__((always_inline)) {
                row_distance_grad<kind>(xt.data(), x + i * m, coef.data(), dists.data(), n, m, pt,
                                        dx + i * m);
              });
        }
      };
      OF_OMP_PARALLEL_IF(in[0]->numel() * m > cpu::kParallelGrain / 2, , region);
    });
  });
}

// ---- CTC loss ----

void CtcLoss::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const Tensor& lp = in[0];
  const int64_t t_max = lp->shape()[0], n = lp->shape()[1], classes = lp->shape()[2];
  const int64_t blank = attrs.get<int64_t>("blank");
  const std::vector<CtcSeq> seqs = ctc_sequences(in[1], in[2], in[3], classes, blank, t_max);
  const int64_t width = out[1]->shape()[2];
  visit_float(lp->dtype(), [&]<typename T>() {
    constexpr T kNegInf = -std::numeric_limits<T>::infinity();
    const T* logp = lp->data_as<T>();
    T* nll = out[0]->data_as<T>();
    T* alpha_all = out[1]->data_as<T>();
    OF_OMP_FOR_IF(
        n > 1 && out[1]->numel() > cpu::kParallelGrain / 8, schedule(dynamic, 1),
        for (int64_t b = 0; b < n; ++b) {
          const CtcSeq& q = seqs[b];
          T* alpha = alpha_all + b * t_max * width;
          std::fill(alpha, alpha + t_max * width, kNegInf);
          const int64_t len = 2 * q.len_target + 1;
          if (q.len_in == 0) {
            nll[b] = q.len_target == 0 ? T(0) : std::numeric_limits<T>::infinity();
            continue;
          }
          // lp at time t for class c of sequence b
          auto at = [&](int64_t t, int64_t c) { return logp[(t * n + b) * classes + c]; };
          alpha[0] = at(0, blank);
          if (len > 1) alpha[1] = at(0, q.ext(1));
          for (int64_t t = 1; t < q.len_in; ++t) {
            const T* prev = alpha + (t - 1) * width;
            T* cur = alpha + t * width;
            for (int64_t s = 0; s < len; ++s) {
              const T l2 = s > 0 ? prev[s - 1] : kNegInf;
              const T l3 = q.skip(s) ? prev[s - 2] : kNegInf;
              cur[s] = log_add3(prev[s], l2, l3) + at(t, q.ext(s));
            }
          }
          const T* last = alpha + (q.len_in - 1) * width;
          nll[b] = -(len > 1 ? log_add(last[len - 1], last[len - 2]) : last[0]);
        });
  });
}

void CtcLossGrad::compute_cpu(const TensorList& in, const TensorList& out,
                              const Attrs& attrs) const {
  const Tensor& lp = in[1];
  const int64_t t_max = lp->shape()[0], n = lp->shape()[1], classes = lp->shape()[2];
  const int64_t blank = attrs.get<int64_t>("blank");
  const bool zero_infinity = attrs.get<bool>("zero_infinity");
  const std::vector<CtcSeq> seqs = ctc_sequences(in[2], in[3], in[4], classes, blank, t_max);
  const int64_t width = in[6]->shape()[2];
  visit_float(lp->dtype(), [&]<typename T>() {
    constexpr T kNegInf = -std::numeric_limits<T>::infinity();
    const T* dy = in[0]->data_as<T>();
    const T* logp = lp->data_as<T>();
    const T* nll = in[5]->data_as<T>();
    const T* alpha_all = in[6]->data_as<T>();
    T* dlp = out[0]->data_as<T>();
    OF_OMP_FOR_IF(
        n > 1 && in[6]->numel() > cpu::kParallelGrain / 8, schedule(dynamic, 1),
        for (int64_t b = 0; b < n; ++b) {
          const CtcSeq& q = seqs[b];
          const int64_t len = 2 * q.len_target + 1;
          auto row = [&](int64_t t) { return (t * n + b) * classes; };
          const T loss = nll[b];
          // PyTorch's convention: the gradient of the loss as if log_probs were
          // renormalised by a log_softmax (exp(lp) minus the label posteriors).
          const bool zero = q.len_in == 0 || (zero_infinity && std::isinf(loss));
          for (int64_t t = 0; t < t_max; ++t) std::fill(dlp + row(t), dlp + row(t) + classes, T(0));
          if (zero) continue;
          const T g = dy[b];
          const T* alpha = alpha_all + b * t_max * width;
          std::vector<T> beta(2 * len, kNegInf), lcab(classes);
          T* next = beta.data();
          T* cur = beta.data() + len;
          for (int64_t t = q.len_in - 1; t >= 0; --t) {
            const T* lpt = logp + row(t);
            if (t == q.len_in - 1) {
              std::fill(cur, cur + len, kNegInf);
              cur[len - 1] = lpt[blank];
              if (len > 1) cur[len - 2] = lpt[q.ext(len - 2)];
            } else {
              for (int64_t s = 0; s < len; ++s) {
                const T b2 = s + 1 < len ? next[s + 1] : kNegInf;
                const T b3 = s + 2 < len && q.skip(s + 2) ? next[s + 2] : kNegInf;
                cur[s] = log_add3(next[s], b2, b3) + lpt[q.ext(s)];
              }
            }
            std::fill(lcab.begin(), lcab.end(), kNegInf);
            const T* at = alpha + t * width;
            for (int64_t s = 0; s < len; ++s) {
              T& acc = lcab[q.ext(s)];
              acc = log_add(acc, at[s] + cur[s]);
            }
            T* d = dlp + row(t);
            for (int64_t c = 0; c < classes; ++c)
              d[c] = (std::exp(lpt[c]) - std::exp(lcab[c] + loss - lpt[c])) * g;
            std::swap(cur, next);
          }
        });
  });
}

// ---- segment max ----

void SegmentMax::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const int64_t dim = in[0]->shape()[1], segments = out[0]->shape()[0];
  const int64_t rows = in[1]->numel();
  const int64_t* seg = in[1]->data_as<int64_t>();
  const int64_t* row_of = in.size() == 3 ? in[2]->data_as<int64_t>() : nullptr;
  const int64_t value_rows = in[0]->shape()[0];
  int64_t* arg = out[1]->data_as<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    if (seg[r] < 0 || seg[r] >= segments || (r > 0 && seg[r] < seg[r - 1]))
      throw_error<RuntimeError>("embedding_bag", "segment id ", seg[r], " of row ", r,
                                " is out of order or outside [0, ", segments, ")");
    if (row_of && (row_of[r] < 0 || row_of[r] >= value_rows))
      throw_error<IndexError>("embedding_bag", "row ", row_of[r], " outside [0, ", value_rows, ")");
  }
  visit_float(in[0]->dtype(), [&]<typename T>() {
    const T* v = in[0]->data_as<T>();
    T* y = out[0]->data_as<T>();
    // Segments are runs of rows: each segment's maxima start at its first row and are updated
    // by the rest (the first of equal maxima stays, as PyTorch's strict comparison keeps it);
    // an empty segment is zeros with argmax -1. Segments split over the threads.
    std::vector<int64_t> first(segments + 1, rows);
    for (int64_t r = rows - 1; r >= 0; --r) first[seg[r]] = r;
    for (int64_t s = segments - 1; s >= 0; --s) first[s] = std::min(first[s], first[s + 1]);
    auto segment = [&](int64_t s) {
      T* ys = y + s * dim;
      int64_t* as = arg + s * dim;
      const int64_t begin = first[s], end = first[s + 1];
      if (begin == end) {
        std::fill(ys, ys + dim, T(0));
        std::fill(as, as + dim, int64_t(-1));
        return;
      }
      const int64_t r0 = row_of ? row_of[begin] : begin;
      std::copy(v + r0 * dim, v + (r0 + 1) * dim, ys);
      std::fill(as, as + dim, r0);
      for (int64_t r = begin + 1; r < end; ++r) {
        const int64_t vr_at = row_of ? row_of[r] : r;
        const T* vr = v + vr_at * dim;
        for (int64_t d = 0; d < dim; ++d) {
          const bool more = vr[d] > ys[d];
          ys[d] = more ? vr[d] : ys[d];
          as[d] = more ? vr_at : as[d];
        }
      }
    };
    OF_OMP_FOR_IF(
        segments > 1 && rows * dim > cpu::kParallelGrain, schedule(static),
        for (int64_t s = 0; s < segments; ++s) { segment(s); });
  });
}

void SegmentMaxGrad::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const int64_t segments = in[0]->shape()[0], dim = in[0]->shape()[1];
  const int64_t* arg = in[1]->data_as<int64_t>();
  visit_float(in[0]->dtype(), [&]<typename T>() {
    const T* dy = in[0]->data_as<T>();
    T* dx = out[0]->data_as<T>();
    if (out[0]->numel() > 0) std::memset(dx, 0, sizeof(T) * out[0]->numel());  // dx may be null
    for (int64_t s = 0; s < segments; ++s)
      for (int64_t d = 0; d < dim; ++d) {
        const int64_t r = arg[s * dim + d];
        if (r >= 0) dx[r * dim + d] += dy[s * dim + d];
      }
  });
}

}  // namespace oneflow
