// The CPU FFT engine (kernels/cpu/fft.h).
//
// A transform of length n runs as a Stockham autosort FFT: n = p_1 p_2 ... p_s, and pass t
// (radix p = p_t, ls = p_1 ... p_{t-1} values per sub-transform so far, L = p ls, r = n / L
// sub-transforms) turns the r p transforms of length ls held at y[j r p + k] (frequency j,
// sub-transform k) into r transforms of length L:
//   y'[(j + ls q') r + k] = sum_q W_p^{q q'} W_L^{q j} y[(j p + q) r + k],  W_m = exp(-2 pi i / m),
// a p-point DFT of twiddled values per (j, k), ping-ponging between two buffers; the result is in
// natural order without a bit-reversal pass. Radix 4, 2, 3 and 5 passes are written out; any
// other prime up to kMaxDirectFactor takes a generic O(p^2) pass. A length with a larger prime
// factor runs as Bluestein's chirp-z convolution instead:
//   X_k = w_k sum_j (x_j w_j) conj(w_{k-j}),  w_j = exp(-i pi j^2 / n),
// a circular convolution of a power-of-two length m >= 2n - 1 done with two transforms of length
// m (the chirp's transform is part of the plan), O(n log n) for every n.
//
// Lines run in groups of kLanes (8 floats or 4 doubles: one 32-byte vector): a group is gathered
// so that element k of the buffer holds element k of every line of the group, and every pass
// then works on whole vectors, whatever its radix and stride. Fewer lines than half a group, and
// lines longer than 65536, run one at a time on scalars, their passes on vectors of consecutive
// sub-transforms where those share twiddles; a long complex line runs as the four-step
// transform instead (below), whose two batches fill the lanes. The passes are compiled twice,
// for the baseline and for AVX2 + FMA (chosen per group from cpu::capability()).
//
// A real transform of even length n = 2h runs as a complex one of length h on z_k = x_2k +
// i x_2k+1 with a twiddle pass: X_k = E_k + W_n^k O_k, E_k = (Z_k + conj Z_h-k) / 2,
// O_k = (Z_k - conj Z_h-k) / 2i; the inverse (c2r) runs that pass backwards. Odd lengths run as
// complex transforms.
//
// Plans (factors, twiddles, the chirp) are built in double precision and kept in a small cache
// keyed by length and direction.
#include "oneflow/core/kernels/cpu/fft.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/vec/avx2.h"

namespace oneflow::cpu::fft {

namespace {

#define OF_FFT_INLINE __attribute__((always_inline)) inline

constexpr int64_t kMaxDirectFactor = 61;

template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(32)));
};

// One Stockham pass.
template <typename T>
struct Stage {
  int p = 0;
  int64_t ls = 0, r = 0;
  std::vector<T> wr, wi;  // W_L^{q j} (direction applied) at j (p - 1) + q - 1, 1 <= q < p
  std::vector<T> cr, ci;  // radix above 5: cos(2 pi k / p), sign * sin(2 pi k / p), k < p
};

template <typename T>
struct Plan {
  int64_t n = 0;
  T sign = -1;  // -1 forward, +1 inverse
  std::vector<Stage<T>> stages;
  // Bluestein: sub-plans of the power-of-two length m, the chirp w_j and the kernel
  // (the forward transform of the wrapped conj(w), divided by m).
  int64_t m = 0;
  std::shared_ptr<const Plan<T>> sub_fwd, sub_inv;
  std::vector<T> chr, chi, kr, ki;
  // Vector elements of scratch a run needs beyond its two n-element buffers (per part).
  int64_t scratch() const { return 4 * m; }
};

// W_n^k = exp(-2 pi i k / n) for k < n / 2: the twiddles of the real-transform pass.
template <typename T>
struct RealTwiddles {
  std::vector<T> wr, wi;
};

int64_t largest_prime_factor(int64_t n) {
  int64_t largest = 1;
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      largest = p;
      n /= p;
    }
  return n > 1 ? std::max(largest, n) : largest;
}

// exp(i * sign * 2 pi num / den), num reduced modulo den exactly first.
std::pair<double, double> unit(double sign, int64_t num, int64_t den) {
  const int64_t r = num % den;
  const double a = sign * 2.0 * M_PI * static_cast<double>(r) / static_cast<double>(den);
  return {std::cos(a), std::sin(a)};
}

template <typename T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, bool forward);

// ---- the passes (inlined into run, which is compiled per vector tier) ------------------------

template <typename E, typename T>
OF_FFT_INLINE void cmul(E& re, E& im, T wr, T wi) {
  const E t = re * wr - im * wi;
  im = re * wi + im * wr;
  re = t;
}

// In-place p-point DFTs of (vr, vi) in the plan's direction (sign -1 forward).
template <int P, typename E, typename T>
OF_FFT_INLINE void small_dft(E* vr, E* vi, T sign) {
  if constexpr (P == 2) {
    const E tr = vr[0] - vr[1], ti = vi[0] - vi[1];
    vr[0] += vr[1];
    vi[0] += vi[1];
    vr[1] = tr;
    vi[1] = ti;
  } else if constexpr (P == 3) {
    const T h = sign * T(0.86602540378443864676);
    const E t1r = vr[1] + vr[2], t1i = vi[1] + vi[2];
    const E t2r = (vr[1] - vr[2]) * h, t2i = (vi[1] - vi[2]) * h;
    const E mr = vr[0] - T(0.5) * t1r, mi = vi[0] - T(0.5) * t1i;
    vr[0] += t1r;
    vi[0] += t1i;
    vr[1] = mr - t2i;
    vi[1] = mi + t2r;
    vr[2] = mr + t2i;
    vi[2] = mi - t2r;
  } else if constexpr (P == 4) {
    const E t0r = vr[0] + vr[2], t0i = vi[0] + vi[2];
    const E t1r = vr[0] - vr[2], t1i = vi[0] - vi[2];
    const E t2r = vr[1] + vr[3], t2i = vi[1] + vi[3];
    const E t3r = (vr[1] - vr[3]) * sign, t3i = (vi[1] - vi[3]) * sign;
    vr[0] = t0r + t2r;
    vi[0] = t0i + t2i;
    vr[2] = t0r - t2r;
    vi[2] = t0i - t2i;
    vr[1] = t1r - t3i;
    vi[1] = t1i + t3r;
    vr[3] = t1r + t3i;
    vi[3] = t1i - t3r;
  } else {
    static_assert(P == 5);
    const T c1 = T(0.30901699437494742410), c2 = T(-0.80901699437494742410);
    const T s1 = sign * T(0.95105651629515357212), s2 = sign * T(0.58778525229247312917);
    const E t1r = vr[1] + vr[4], t1i = vi[1] + vi[4], t2r = vr[2] + vr[3], t2i = vi[2] + vi[3];
    const E t3r = vr[1] - vr[4], t3i = vi[1] - vi[4], t4r = vr[2] - vr[3], t4i = vi[2] - vi[3];
    const E m1r = vr[0] + c1 * t1r + c2 * t2r, m1i = vi[0] + c1 * t1i + c2 * t2i;
    const E m2r = vr[0] + c2 * t1r + c1 * t2r, m2i = vi[0] + c2 * t1i + c1 * t2i;
    const E d1r = s1 * t3r + s2 * t4r, d1i = s1 * t3i + s2 * t4i;  // b1 = m1 + i d1
    const E d2r = s2 * t3r - s1 * t4r, d2i = s2 * t3i - s1 * t4i;  // b2 = m2 + i d2
    vr[0] += t1r + t2r;
    vi[0] += t1i + t2i;
    vr[1] = m1r - d1i;
    vi[1] = m1i + d1r;
    vr[4] = m1r + d1i;
    vi[4] = m1i - d1r;
    vr[2] = m2r - d2i;
    vi[2] = m2i + d2r;
    vr[3] = m2r + d2i;
    vi[3] = m2i - d2r;
  }
}

// Pass of radix P over the sub-transforms k < r at frequency j.
// r: the sub-transforms in elements of E (s.r, or s.r / W when W consecutive ones share a vector).
template <int P, bool kTwiddle, typename E, typename T>
OF_FFT_INLINE void fixed_pass(const Stage<T>& s, int64_t r, int64_t j, T sign, const E* xr,
                              const E* xi, E* yr, E* yi) {
  const int64_t out = s.ls * r;
  const E* ar = xr + j * P * r;
  const E* ai = xi + j * P * r;
  E* br = yr + j * r;
  E* bi = yi + j * r;
  T wr[P], wi[P];
  if constexpr (kTwiddle)
    for (int q = 1; q < P; ++q) {
      wr[q] = s.wr[j * (P - 1) + q - 1];
      wi[q] = s.wi[j * (P - 1) + q - 1];
    }
  for (int64_t k = 0; k < r; ++k) {
    E vr[P], vi[P];
    for (int q = 0; q < P; ++q) {
      vr[q] = ar[q * r + k];
      vi[q] = ai[q * r + k];
    }
    if constexpr (kTwiddle)
      for (int q = 1; q < P; ++q) cmul(vr[q], vi[q], wr[q], wi[q]);
    small_dft<P>(vr, vi, sign);
    for (int q = 0; q < P; ++q) {
      br[q * out + k] = vr[q];
      bi[q * out + k] = vi[q];
    }
  }
}

template <int P, typename E, typename T>
OF_FFT_INLINE void fixed_stage(const Stage<T>& s, int64_t r, T sign, const E* xr, const E* xi,
                               E* yr, E* yi) {
  fixed_pass<P, false>(s, r, 0, sign, xr, xi, yr, yi);
  for (int64_t j = 1; j < s.ls; ++j) fixed_pass<P, true>(s, r, j, sign, xr, xi, yr, yi);
}

// A pass of odd prime radix p (7 <= p <= kMaxDirectFactor): the p-point DFT pairs q and p - q,
// whose factors are conjugate.
template <typename E, typename T>
OF_FFT_INLINE void generic_stage(const Stage<T>& s, int64_t r, const E* xr, const E* xi, E* yr,
                                 E* yi) {
  constexpr int kMax = kMaxDirectFactor;
  const int p = s.p, h = (p - 1) / 2;
  E ar[kMax], ai[kMax], pr[kMax], pi[kMax], mr[kMax], mi[kMax];
  for (int64_t j = 0; j < s.ls; ++j) {
    const E* xr_j = xr + j * p * r;
    const E* xi_j = xi + j * p * r;
    for (int64_t k = 0; k < r; ++k) {
      for (int q = 0; q < p; ++q) {
        ar[q] = xr_j[q * r + k];
        ai[q] = xi_j[q * r + k];
      }
      if (j > 0)
        for (int q = 1; q < p; ++q)
          cmul(ar[q], ai[q], s.wr[j * (p - 1) + q - 1], s.wi[j * (p - 1) + q - 1]);
      E sum_r = ar[0], sum_i = ai[0];
      for (int q = 1; q <= h; ++q) {
        pr[q] = ar[q] + ar[p - q];
        pi[q] = ai[q] + ai[p - q];
        mr[q] = ar[q] - ar[p - q];
        mi[q] = ai[q] - ai[p - q];
        sum_r += pr[q];
        sum_i += pi[q];
      }
      yr[j * r + k] = sum_r;
      yi[j * r + k] = sum_i;
      for (int f = 1; f <= h; ++f) {
        E sr = ar[0], si = ai[0], dr{}, di{};
        int idx = 0;
        for (int q = 1; q <= h; ++q) {
          idx += f;
          if (idx >= p) idx -= p;
          const T c = s.cr[idx], sn = s.ci[idx];
          sr += c * pr[q];
          si += c * pi[q];
          dr += sn * mr[q];
          di += sn * mi[q];
        }
        yr[(j + s.ls * f) * r + k] = sr - di;
        yi[(j + s.ls * f) * r + k] = si + dr;
        yr[(j + s.ls * (p - f)) * r + k] = sr + di;
        yi[(j + s.ls * (p - f)) * r + k] = si - dr;
      }
    }
  }
}

template <typename E, typename T>
OF_FFT_INLINE void stage(const Stage<T>& s, int64_t r, T sign, E* sr, E* si, E* dr, E* di) {
  switch (s.p) {
    case 4:
      fixed_stage<4>(s, r, sign, sr, si, dr, di);
      break;
    case 2:
      fixed_stage<2>(s, r, sign, sr, si, dr, di);
      break;
    case 3:
      fixed_stage<3>(s, r, sign, sr, si, dr, di);
      break;
    case 5:
      fixed_stage<5>(s, r, sign, sr, si, dr, di);
      break;
    default:
      generic_stage(s, r, sr, si, dr, di);
  }
}

// Runs the Stockham passes of a direct plan from (xr, xi), using (wr, wi) as the other buffer;
// points (rr, ri) at the buffer left holding the result.
template <typename E, typename T>
OF_FFT_INLINE void stockham(const Plan<T>& plan, E* xr, E* xi, E* wr, E* wi, E*& rr, E*& ri) {
  E *sr = xr, *si = xi, *dr = wr, *di = wi;
  for (const Stage<T>& s : plan.stages) {
    if constexpr (std::is_same_v<E, T>) {
      // One line on scalars: W consecutive sub-transforms k share their twiddles, so a pass
      // with r a multiple of W runs on vectors of them (the buffers are 64-byte aligned).
      using V = typename VecOf<T>::type;
      constexpr int64_t W = sizeof(V) / sizeof(T);
      if (s.r % W == 0) {
        stage(s, s.r / W, plan.sign, reinterpret_cast<V*>(sr), reinterpret_cast<V*>(si),
              reinterpret_cast<V*>(dr), reinterpret_cast<V*>(di));
        std::swap(sr, dr);
        std::swap(si, di);
        continue;
      }
    }
    stage(s, s.r, plan.sign, sr, si, dr, di);
    std::swap(sr, dr);
    std::swap(si, di);
  }
  rr = sr;
  ri = si;
}

// Transforms the n elements of (xr, xi); points (rr, ri) at the result, which is in x or w.
template <typename E, typename T>
OF_FFT_INLINE void run(const Plan<T>& plan, E* xr, E* xi, E* wr, E* wi, E* scratch, E*& rr,
                       E*& ri) {
  if (plan.m == 0) {
    stockham(plan, xr, xi, wr, wi, rr, ri);
    return;
  }
  const int64_t n = plan.n, m = plan.m;
  E *ar = scratch, *ai = scratch + m, *br = scratch + 2 * m, *bi = scratch + 3 * m;
  for (int64_t j = 0; j < n; ++j) {
    ar[j] = xr[j];
    ai[j] = xi[j];
    cmul(ar[j], ai[j], plan.chr[j], plan.chi[j]);
  }
  for (int64_t j = n; j < m; ++j) ar[j] = ai[j] = E{};
  E *fr, *fi;
  stockham(*plan.sub_fwd, ar, ai, br, bi, fr, fi);
  for (int64_t k = 0; k < m; ++k) cmul(fr[k], fi[k], plan.kr[k], plan.ki[k]);
  E *gr, *gi;
  if (fr == ar)
    stockham(*plan.sub_inv, ar, ai, br, bi, gr, gi);
  else
    stockham(*plan.sub_inv, br, bi, ar, ai, gr, gi);
  for (int64_t k = 0; k < n; ++k) {
    xr[k] = gr[k];
    xi[k] = gi[k];
    cmul(xr[k], xi[k], plan.chr[k], plan.chi[k]);
  }
  rr = xr;
  ri = xi;
}

// run() compiled once per vector tier; the group bodies call it through run_any.
template <typename E, typename T>
__attribute__((target("avx2,fma"), noinline)) void run_avx2(const Plan<T>& plan, E* xr, E* xi,
                                                            E* wr, E* wi, E* scratch, E** rr,
                                                            E** ri) {
  run(plan, xr, xi, wr, wi, scratch, *rr, *ri);
}
template <typename E, typename T>
__attribute__((noinline)) void run_baseline(const Plan<T>& plan, E* xr, E* xi, E* wr, E* wi,
                                            E* scratch, E** rr, E** ri) {
  run(plan, xr, xi, wr, wi, scratch, *rr, *ri);
}
template <typename E, typename T>
OF_FFT_INLINE void run_any(const Plan<T>& plan, E* xr, E* xi, E* wr, E* wi, E* scratch, E*& rr,
                           E*& ri) {
  if (capability() != Capability::kBaseline)
    run_avx2(plan, xr, xi, wr, wi, scratch, &rr, &ri);
  else
    run_baseline(plan, xr, xi, wr, wi, scratch, &rr, &ri);
}

// Buffers of (vector) elements, 64-byte aligned.
template <typename E>
class Workspace {
 public:
  // Not initialised: every use writes its elements before it reads them.
  explicit Workspace(int64_t elems)
      : bytes_((elems + 2) * sizeof(E)), raw_(new unsigned char[bytes_ + 64]) {}
  E* data() {
    const auto p = reinterpret_cast<std::uintptr_t>(raw_.get());
    return reinterpret_cast<E*>((p + 63) & ~static_cast<std::uintptr_t>(63));
  }
  void zero() { std::memset(static_cast<void*>(data()), 0, bytes_); }

 private:
  size_t bytes_;
  std::unique_ptr<unsigned char[]> raw_;
};

// ---- plans --------------------------------------------------------------------------------

template <typename T>
std::shared_ptr<const Plan<T>> build_plan(int64_t n, bool forward) {
  auto plan = std::make_shared<Plan<T>>();
  plan->n = n;
  plan->sign = forward ? T(-1) : T(1);
  const double sign = forward ? -1.0 : 1.0;
  if (n <= 1) return plan;
  if (largest_prime_factor(n) > kMaxDirectFactor) {
    int64_t m = 1;
    while (m < 2 * n - 1) m *= 2;
    plan->m = m;
    plan->sub_fwd = get_plan<T>(m, true);
    plan->sub_inv = get_plan<T>(m, false);
    // The chirp w_j = exp(sign i pi j^2 / n): the phase j^2 mod 2n in integers.
    std::vector<double> cr(n), ci(n);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t q = static_cast<int64_t>((static_cast<__int128>(j) * j) % (2 * n));
      std::tie(cr[j], ci[j]) = unit(sign, q, 2 * n);
    }
    plan->chr.assign(cr.begin(), cr.end());
    plan->chi.assign(ci.begin(), ci.end());
    // The kernel in double: the forward transform of b_j = conj(w_j), b_{m-j} = b_j.
    Workspace<double> b(4 * m);
    b.zero();
    double *br = b.data(), *bi = br + m, *no_scratch = nullptr;
    br[0] = cr[0];
    bi[0] = -ci[0];
    for (int64_t j = 1; j < n; ++j) {
      br[j] = br[m - j] = cr[j];
      bi[j] = bi[m - j] = -ci[j];
    }
    double *rr, *ri;
    run_baseline<double, double>(*get_plan<double>(m, true), br, bi, br + 2 * m, br + 3 * m,
                                 no_scratch, &rr, &ri);
    plan->kr.resize(m);
    plan->ki.resize(m);
    for (int64_t k = 0; k < m; ++k) {
      plan->kr[k] = static_cast<T>(rr[k] / static_cast<double>(m));
      plan->ki[k] = static_cast<T>(ri[k] / static_cast<double>(m));
    }
    return plan;
  }
  std::vector<int> radices;
  int64_t rest = n;
  while (rest % 4 == 0) {
    radices.push_back(4);
    rest /= 4;
  }
  if (rest % 2 == 0) {
    radices.push_back(2);
    rest /= 2;
  }
  for (int64_t p = 3; p * p <= rest; p += 2)
    while (rest % p == 0) {
      radices.push_back(static_cast<int>(p));
      rest /= p;
    }
  if (rest > 1) radices.push_back(static_cast<int>(rest));
  int64_t ls = 1;
  for (int p : radices) {
    Stage<T> s;
    s.p = p;
    s.ls = ls;
    const int64_t L = ls * p;
    s.r = n / L;
    s.wr.resize(ls * (p - 1));
    s.wi.resize(ls * (p - 1));
    for (int64_t j = 0; j < ls; ++j)
      for (int q = 1; q < p; ++q) {
        const auto [c, sn] = unit(sign, q * j, L);
        s.wr[j * (p - 1) + q - 1] = static_cast<T>(c);
        s.wi[j * (p - 1) + q - 1] = static_cast<T>(sn);
      }
    if (p > 5) {
      s.cr.resize(p);
      s.ci.resize(p);
      for (int k = 0; k < p; ++k) {
        const auto [c, sn] = unit(sign, k, p);
        s.cr[k] = static_cast<T>(c);
        s.ci[k] = static_cast<T>(sn);
      }
    }
    plan->stages.push_back(std::move(s));
    ls = L;
  }
  return plan;
}

// A small cache of built objects by (length, flag); cleared when full.
template <typename V>
class Cache {
 public:
  template <typename Make>
  std::shared_ptr<const V> get(int64_t n, bool flag, Make&& make) {
    const auto key = std::make_pair(n, flag);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = items_.find(key);
      if (it != items_.end()) return it->second;
    }
    std::shared_ptr<const V> made = make();  // outside the lock: a plan builds its sub-plans
    std::lock_guard<std::mutex> lock(mu_);
    if (items_.size() >= 64) items_.clear();
    return items_.emplace(key, std::move(made)).first->second;
  }

 private:
  std::mutex mu_;
  std::map<std::pair<int64_t, bool>, std::shared_ptr<const V>> items_;
};

template <typename T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, bool forward) {
  static Cache<Plan<T>> cache;
  return cache.get(n, forward, [&] { return build_plan<T>(n, forward); });
}

template <typename T>
std::shared_ptr<const RealTwiddles<T>> get_real_twiddles(int64_t n) {
  static Cache<RealTwiddles<T>> cache;
  return cache.get(n, true, [&] {
    auto tw = std::make_shared<RealTwiddles<T>>();
    tw->wr.resize(n / 2);
    tw->wi.resize(n / 2);
    for (int64_t k = 0; k < n / 2; ++k) {
      const auto [c, s] = unit(-1.0, k, n);
      tw->wr[k] = static_cast<T>(c);
      tw->wi[k] = static_cast<T>(s);
    }
    return std::shared_ptr<const RealTwiddles<T>>(std::move(tw));
  });
}

// ---- lines and groups -----------------------------------------------------------------------

// Line t of a (outer, len, inner) array starts at element line_start(t, len); its stride is inner.
struct Lines {
  int64_t outer, inner;
  int64_t count() const { return outer * inner; }
  int64_t line_start(int64_t t, int64_t len) const { return (t / inner) * len * inner + t % inner; }
};

// Runs f() compiled for AVX2 + FMA where the CPU has them (f's operator() is always_inline, and
// so are the gathers and scatters it calls), else for the baseline.
template <typename F>
__attribute__((target("avx2,fma"))) void in_avx2(const F& f) {
  f();
}
template <typename F>
void in_tier(const F& f) {
  if (capability() != Capability::kBaseline)
    in_avx2(f);
  else
    f();
}

// Calls group(first line, lines in the group, workspace) for every group of kLanes lines, the
// groups spread over at most one OpenMP thread each when the work is large enough (and this is
// not already inside a parallel region). A thread makes its workspace at its first group.
template <typename E, typename T, typename Group>
void for_groups(int64_t count, int64_t n, int64_t ws_elems, Group&& group) {
  constexpr int64_t kLanes = sizeof(E) / sizeof(T);
  const int64_t groups = (count + kLanes - 1) / kLanes;
  auto run = [&](int64_t g, std::unique_ptr<Workspace<E>>& ws) {
    if (!ws) ws = std::make_unique<Workspace<E>>(ws_elems);
    group(g * kLanes, std::min<int64_t>(kLanes, count - g * kLanes), ws->data());
  };
  const int threads = static_cast<int>(std::min<int64_t>(groups, omp_get_max_threads()));
  if (threads > 1 && count * n > 8192 && !omp_in_parallel()) {
#pragma omp parallel num_threads(threads)
    {
      std::unique_ptr<Workspace<E>> ws;
#pragma omp for schedule(static)
      for (int64_t g = 0; g < groups; ++g) run(g, ws);
    }
    return;
  }
  std::unique_ptr<Workspace<E>> ws;
  for (int64_t g = 0; g < groups; ++g) run(g, ws);
}

// ---- moving lines in and out of the lane layout (inlined into the group bodies) ------------
//
// A group's lane pointers point at the first real of each line: line first + v for the used
// lanes, the last used line again for the others (read, never written). Lines of one group are
// either rows (inner == 1: each line contiguous), moved through W x W register transposes, or
// adjacent columns (inner > 1, all lanes in one outer slice: element k of every lane contiguous),
// moved as whole vectors; anything else goes lane by lane.

template <typename E, typename T>
constexpr int64_t kWidth = sizeof(E) / sizeof(T);

template <typename E, typename T>
OF_FFT_INLINE void load(E& v, const T* p) {
  std::memcpy(&v, p, sizeof(E));
}
template <typename E, typename T>
OF_FFT_INLINE void store(T* p, const E& v) {
  std::memcpy(p, &v, sizeof(E));
}

// lo / hi = the first / second halves of a0 b0 a1 b1 ...; even / odd = the even / odd entries
// of (lo, hi) (the inverse).
template <typename E, typename T>
OF_FFT_INLINE void interleave(const E& a, const E& b, E& lo, E& hi) {
  if constexpr (kWidth<E, T> == 8) {
    typedef int M __attribute__((vector_size(32)));
    lo = __builtin_shuffle(a, b, M{0, 8, 1, 9, 2, 10, 3, 11});
    hi = __builtin_shuffle(a, b, M{4, 12, 5, 13, 6, 14, 7, 15});
  } else {
    static_assert(kWidth<E, T> == 4);
    typedef long long M __attribute__((vector_size(32)));
    lo = __builtin_shuffle(a, b, M{0, 4, 1, 5});
    hi = __builtin_shuffle(a, b, M{2, 6, 3, 7});
  }
}
template <typename E, typename T>
OF_FFT_INLINE void deinterleave(const E& lo, const E& hi, E& even, E& odd) {
  if constexpr (kWidth<E, T> == 8) {
    typedef int M __attribute__((vector_size(32)));
    even = __builtin_shuffle(lo, hi, M{0, 2, 4, 6, 8, 10, 12, 14});
    odd = __builtin_shuffle(lo, hi, M{1, 3, 5, 7, 9, 11, 13, 15});
  } else {
    static_assert(kWidth<E, T> == 4);
    typedef long long M __attribute__((vector_size(32)));
    even = __builtin_shuffle(lo, hi, M{0, 2, 4, 6});
    odd = __builtin_shuffle(lo, hi, M{1, 3, 5, 7});
  }
}

// v[j] lane i <-> v[i] lane j: log2(W) rounds of pairing v[i] with v[i + W/2].
template <typename E, typename T>
OF_FFT_INLINE void transpose(E* v) {
  constexpr int64_t W = kWidth<E, T>;
  E t[W];
#pragma GCC unroll 4
  for (int64_t round = 1; round < W; round *= 2) {
#pragma GCC unroll 8
    for (int64_t i = 0; i < W / 2; ++i)
      interleave<E, T>(v[i], v[i + W / 2], t[2 * i], t[2 * i + 1]);
#pragma GCC unroll 8
    for (int64_t i = 0; i < W; ++i) v[i] = t[i];
  }
}

template <typename E, typename T>
OF_FFT_INLINE bool adjacent(const T* const* lanes, int64_t used, int64_t reals) {
  return used == kWidth<E, T> && lanes[kWidth<E, T> - 1] == lanes[0] + reals * (used - 1);
}

// (xr, xi)[k < n] = element k of each lane: complex values (re, im adjacent) when `pairs`, else
// real pairs (x_2k, x_2k+1), each line with stride `inner` elements.
template <typename E, typename T>
OF_FFT_INLINE void gather_pairs(const T* const* in, int64_t inner, int64_t n, bool pairs,
                                int64_t used, E* xr, E* xi) {
  constexpr int64_t W = kWidth<E, T>;
  T* sr = reinterpret_cast<T*>(xr);
  T* si = reinterpret_cast<T*>(xi);
  int64_t k = 0;
  if constexpr (W > 1) {
    if (inner == 1) {  // rows: either layout is re, im, re, im, ...
      for (; k + W / 2 <= n; k += W / 2) {
        E v[W];
#pragma GCC unroll 8
        for (int64_t i = 0; i < W; ++i) load(v[i], in[i] + 2 * k);
        transpose<E, T>(v);
#pragma GCC unroll 8
        for (int64_t c = 0; c < W / 2; ++c) {
          xr[k + c] = v[2 * c];
          xi[k + c] = v[2 * c + 1];
        }
      }
    } else if (pairs && adjacent<E, T>(in, used, 2)) {
      for (; k < n; ++k) {
        E lo, hi;
        load(lo, in[0] + 2 * k * inner);
        load(hi, in[0] + 2 * k * inner + W);
        deinterleave<E, T>(lo, hi, xr[k], xi[k]);
      }
    } else if (!pairs && adjacent<E, T>(in, used, 1)) {
      for (; k < n; ++k) {
        load(xr[k], in[0] + 2 * k * inner);
        load(xi[k], in[0] + (2 * k + 1) * inner);
      }
    }
  }
  const int64_t re = 2 * inner, im = pairs ? 1 : inner;
  for (; k < n; ++k)
    for (int64_t v = 0; v < W; ++v) {
      sr[k * W + v] = in[v][k * re];
      si[k * W + v] = in[v][k * re + im];
    }
}

// The inverse of gather_pairs for the used lanes.
template <typename E, typename T>
OF_FFT_INLINE void scatter_pairs(T* const* out, int64_t inner, int64_t n, bool pairs, int64_t used,
                                 const E* yr, const E* yi) {
  constexpr int64_t W = kWidth<E, T>;
  const T* sr = reinterpret_cast<const T*>(yr);
  const T* si = reinterpret_cast<const T*>(yi);
  int64_t k = 0;
  if constexpr (W > 1) {
    if (inner == 1) {
      for (; k + W / 2 <= n; k += W / 2) {
        E v[W];
#pragma GCC unroll 8
        for (int64_t c = 0; c < W / 2; ++c) {
          v[2 * c] = yr[k + c];
          v[2 * c + 1] = yi[k + c];
        }
        transpose<E, T>(v);
        if (used == W) {  // constant bounds keep v in registers
#pragma GCC unroll 8
          for (int64_t i = 0; i < W; ++i) store(out[i] + 2 * k, v[i]);
        } else {
          for (int64_t i = 0; i < used; ++i) store(out[i] + 2 * k, v[i]);
        }
      }
    } else if (pairs && adjacent<E, T>(out, used, 2)) {
      for (; k < n; ++k) {
        E lo, hi;
        interleave<E, T>(yr[k], yi[k], lo, hi);
        store(out[0] + 2 * k * inner, lo);
        store(out[0] + 2 * k * inner + W, hi);
      }
    } else if (!pairs && adjacent<E, T>(out, used, 1)) {
      for (; k < n; ++k) {
        store(out[0] + 2 * k * inner, yr[k]);
        store(out[0] + (2 * k + 1) * inner, yi[k]);
      }
    }
  }
  const int64_t re = 2 * inner, im = pairs ? 1 : inner;
  for (; k < n; ++k)
    for (int64_t v = 0; v < used; ++v) {
      out[v][k * re] = sr[k * W + v];
      out[v][k * re + im] = si[k * W + v];
    }
}

// xr[k < n] = real element k of each lane.
template <typename E, typename T>
OF_FFT_INLINE void gather_reals(const T* const* in, int64_t inner, int64_t n, int64_t used, E* xr) {
  constexpr int64_t W = kWidth<E, T>;
  T* sr = reinterpret_cast<T*>(xr);
  int64_t k = 0;
  if constexpr (W > 1) {
    if (inner == 1) {
      for (; k + W <= n; k += W) {
        E v[W];
#pragma GCC unroll 8
        for (int64_t i = 0; i < W; ++i) load(v[i], in[i] + k);
        transpose<E, T>(v);
#pragma GCC unroll 8
        for (int64_t c = 0; c < W; ++c) xr[k + c] = v[c];
      }
    } else if (adjacent<E, T>(in, used, 1)) {
      for (; k < n; ++k) load(xr[k], in[0] + k * inner);
    }
  }
  for (; k < n; ++k)
    for (int64_t v = 0; v < W; ++v) sr[k * W + v] = in[v][k * inner];
}

template <typename E, typename T>
OF_FFT_INLINE void scatter_reals(T* const* out, int64_t inner, int64_t n, int64_t used,
                                 const E* yr) {
  constexpr int64_t W = kWidth<E, T>;
  const T* sr = reinterpret_cast<const T*>(yr);
  int64_t k = 0;
  if constexpr (W > 1) {
    if (inner == 1) {
      for (; k + W <= n; k += W) {
        E v[W];
#pragma GCC unroll 8
        for (int64_t c = 0; c < W; ++c) v[c] = yr[k + c];
        transpose<E, T>(v);
        if (used == W) {  // constant bounds keep v in registers
#pragma GCC unroll 8
          for (int64_t i = 0; i < W; ++i) store(out[i] + k, v[i]);
        } else {
          for (int64_t i = 0; i < used; ++i) store(out[i] + k, v[i]);
        }
      }
    } else if (adjacent<E, T>(out, used, 1)) {
      for (; k < n; ++k) store(out[0] + k * inner, yr[k]);
    }
  }
  for (; k < n; ++k)
    for (int64_t v = 0; v < used; ++v) out[v][k * inner] = sr[k * W + v];
}

// The lane pointers of a group of lines of `len` values of `reals` reals each.
template <typename P, int64_t kLanes>
void lane_starts(P base, const Lines& l, int64_t len, int64_t reals, int64_t first, int64_t used,
                 P (&out)[kLanes]) {
  for (int64_t v = 0; v < kLanes; ++v)
    out[v] = base + reals * l.line_start(first + std::min(v, used - 1), len);
}

// ---- the three transforms ------------------------------------------------------------------
//
// Each group's buffers start at multiples of 16 elements (64 bytes), so that a line on scalars
// can be read as whole vectors.
inline int64_t padded(int64_t n) { return (n + 15) / 16 * 16; }

template <typename E, typename T>
void c2c_lines(const T* src, T* dst, const Lines& l, int64_t n, bool forward) {
  constexpr int64_t W = kWidth<E, T>;
  const auto plan = get_plan<T>(n, forward);
  const int64_t N = padded(n);
  for_groups<E, T>(l.count(), n, 4 * N + plan->scratch(), [&](int64_t first, int64_t used, E* ws) {
    const T* in[W];
    T* out[W];
    lane_starts<const T*, W>(src, l, n, 2, first, used, in);
    lane_starts<T*, W>(dst, l, n, 2, first, used, out);
    in_tier([&]() __attribute__((always_inline)) {
      E *xr = ws, *xi = ws + N, *rr, *ri;
      gather_pairs<E, T>(in, l.inner, n, true, used, xr, xi);
      run_any(*plan, xr, xi, ws + 2 * N, ws + 3 * N, ws + 4 * N, rr, ri);
      scatter_pairs<E, T>(out, l.inner, n, true, used, rr, ri);
    });
  });
}

template <typename E, typename T>
void r2c_lines(const T* src, T* dst, const Lines& l, int64_t n, int64_t m) {
  constexpr int64_t W = kWidth<E, T>;
  const bool even = n % 2 == 0;
  const int64_t h = even ? n / 2 : n;  // the complex transform's length
  const auto plan = get_plan<T>(h, true);
  const auto tw = even ? get_real_twiddles<T>(n) : nullptr;
  // Buffers: x, w (h each, re and im), the spectrum y (h + 1, re and im), Bluestein scratch.
  const int64_t H = padded(h), H1 = padded(h + 1);
  for_groups<E, T>(
      l.count(), n, 4 * H + 2 * H1 + plan->scratch(), [&](int64_t first, int64_t used, E* ws) {
        const T* in[W];
        T* out[W];
        lane_starts<const T*, W>(src, l, n, 1, first, used, in);
        lane_starts<T*, W>(dst, l, m, 2, first, used, out);
        in_tier([&]() __attribute__((always_inline)) {
          E *xr = ws, *xi = ws + H, *yr = ws + 4 * H, *yi = yr + H1, *zr, *zi;
          if (even) {
            gather_pairs<E, T>(in, l.inner, h, false, used, xr, xi);
          } else {
            gather_reals<E, T>(in, l.inner, n, used, xr);
            for (int64_t k = 0; k < n; ++k) xi[k] = E{};
          }
          run_any(*plan, xr, xi, ws + 2 * H, ws + 3 * H, yi + H1, zr, zi);
          int64_t direct = m;  // entries computed; the rest mirror them
          if (even) {
            const T* wkr = tw->wr.data();
            const T* wki = tw->wi.data();
            yr[0] = zr[0] + zi[0];
            yi[0] = E{};
            yr[h] = zr[0] - zi[0];
            yi[h] = E{};
            for (int64_t k = 1; k < h; ++k) {
              // X_k = E_k + W^k O_k, E_k = (Z_k + conj Z_h-k) / 2, O_k = (Z_k - conj Z_h-k) / 2i
              const E ar = zr[k], ai = zi[k], br = zr[h - k], bi = -zi[h - k];
              const E er = (ar + br) * T(0.5), ei = (ai + bi) * T(0.5);
              const E orr = (ai - bi) * T(0.5), oi = (br - ar) * T(0.5);
              yr[k] = er + orr * wkr[k] - oi * wki[k];
              yi[k] = ei + oi * wkr[k] + orr * wki[k];
            }
            direct = std::min(m, h + 1);
          } else {
            yr = zr;
            yi = zi;
          }
          scatter_pairs<E, T>(out, l.inner, direct, true, used, yr, yi);
          const T* qr = reinterpret_cast<const T*>(yr);
          const T* qi = reinterpret_cast<const T*>(yi);
          for (int64_t k = direct; k < m; ++k)  // the full spectrum: the mirrored conjugates
            for (int64_t v = 0; v < used; ++v) {
              out[v][2 * k * l.inner] = qr[(n - k) * W + v];
              out[v][2 * k * l.inner + 1] = -qi[(n - k) * W + v];
            }
        });
      });
}

template <typename E, typename T>
void c2r_lines(const T* src, T* dst, const Lines& l, int64_t n) {
  constexpr int64_t W = kWidth<E, T>;
  const bool even = n % 2 == 0;
  const int64_t h = even ? n / 2 : n;
  const int64_t half = n / 2 + 1;  // entries per source line
  const auto plan = get_plan<T>(h, false);
  const auto tw = even ? get_real_twiddles<T>(n) : nullptr;
  // Buffers: x, w (h each, re and im), the source line (half, re and im), Bluestein scratch.
  const int64_t H = padded(h), H1 = padded(half);
  for_groups<E, T>(l.count(), n, 4 * H + 2 * H1 + plan->scratch(),
                   [&](int64_t first, int64_t used, E* ws) {
                     const T* in[W];
                     T* out[W];
                     lane_starts<const T*, W>(src, l, half, 2, first, used, in);
                     lane_starts<T*, W>(dst, l, n, 1, first, used, out);
                     in_tier([&]() __attribute__((always_inline)) {
                       E *xr = ws, *xi = ws + H, *ar = ws + 4 * H, *ai = ar + H1, *zr, *zi;
                       gather_pairs<E, T>(in, l.inner, half, true, used, ar, ai);
                       ai[0] = E{};
                       if (even) {
                         ai[h] = E{};
                         const T* wkr = tw->wr.data();
                         const T* wki = tw->wi.data();
                         for (int64_t k = 0; k < h; ++k) {
                           // Z_k = (X_k + conj X_h-k) + i conj(W^k) (X_k - conj X_h-k)
                           const E pr = ar[k] + ar[h - k], pi = ai[k] - ai[h - k];
                           const E dr = ar[k] - ar[h - k], di = ai[k] + ai[h - k];
                           const E er = dr * wkr[k] + di * wki[k], ei = di * wkr[k] - dr * wki[k];
                           xr[k] = pr - ei;
                           xi[k] = pi + er;
                         }
                       } else {
                         for (int64_t k = 0; k < half; ++k) {
                           xr[k] = ar[k];
                           xi[k] = ai[k];
                         }
                         for (int64_t k = half; k < n; ++k) {
                           xr[k] = ar[n - k];
                           xi[k] = -ai[n - k];
                         }
                       }
                       run_any(*plan, xr, xi, ws + 2 * H, ws + 3 * H, ai + H1, zr, zi);
                       if (even)
                         scatter_pairs<E, T>(out, l.inner, h, false, used, zr, zi);
                       else
                         scatter_reals<E, T>(out, l.inner, n, used, zr);
                     });
                   });
}

// Whole vectors for at least half a group of lines, scalars for fewer; scalars also for lines
// longer than 65536, whose vector buffers (32 bytes an element, four of them, four more of up to
// 4n for Bluestein) would take tens of megabytes a thread.
template <typename T>
bool use_vectors(int64_t count, int64_t n) {
  return n <= 65536 &&
         count >= static_cast<int64_t>(sizeof(typename VecOf<T>::type) / sizeof(T) / 2);
}

}  // namespace

// ---- one long line: four steps ----------------------------------------------------------------
//
// n = n1 n2, the line seen as an n1 x n2 matrix x[a n2 + b]: X[k1 + n1 k2] =
//   sum_b W_n2^(b k2) [W_n^(b k1) sum_a W_n1^(a k1) x[a n2 + b]]:
// transforms of length n1 down the n2 columns (adjacent lanes), the twiddles W_n^(b k1), transforms
// of length n2 along the n1 rows, and a transpose. Both batches run as whole vector groups, where
// the line alone would leave the lanes empty.

// The divisor of n nearest sqrt(n) from below, if n is long enough for the four steps to pay and
// both factors fill a group of lanes (and stay within the vector groups' line length); 0
// otherwise.
int64_t four_step_split(int64_t n) {
  if (n < 4096 || largest_prime_factor(n) > kMaxDirectFactor) return 0;
  int64_t n1 = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (n1 > 1 && n % n1 != 0) --n1;
  return n1 >= 16 && n / n1 >= 16 && n / n1 <= 65536 ? n1 : 0;
}

template <typename T>
std::shared_ptr<const RealTwiddles<T>> get_four_step_twiddles(int64_t n, int64_t n1, bool forward) {
  static Cache<RealTwiddles<T>> cache;  // W_n^(b k1) at k1 n2 + b (the sign of the direction)
  return cache.get(n * (forward ? 1 : -1), true, [&] {
    auto tw = std::make_shared<RealTwiddles<T>>();
    const int64_t n2 = n / n1;
    tw->wr.resize(n);
    tw->wi.resize(n);
    for (int64_t k1 = 0; k1 < n1; ++k1)
      for (int64_t b = 0; b < n2; ++b) {
        const auto [c, sn] = unit(forward ? -1.0 : 1.0, k1 * b, n);
        tw->wr[k1 * n2 + b] = static_cast<T>(c);
        tw->wi[k1 * n2 + b] = static_cast<T>(sn);
      }
    return std::shared_ptr<const RealTwiddles<T>>(std::move(tw));
  });
}

template <typename T>
void c2c_four_step(const T* src, T* dst, int64_t n, int64_t n1, bool forward) {
  using V = typename VecOf<T>::type;
  const int64_t n2 = n / n1;
  const auto tw = get_four_step_twiddles<T>(n, n1, forward);
  std::vector<T> y(2 * n);
  c2c_lines<V, T>(src, y.data(), Lines{1, n2}, n1, forward);
  const T* wr = tw->wr.data();
  const T* wi = tw->wi.data();
  T* py = y.data();
  OF_OMP_FOR_IF(
      n > (1 << 16), schedule(static), for (int64_t i = 0; i < n; ++i) {
        const T re = py[2 * i], im = py[2 * i + 1];
        py[2 * i] = re * wr[i] - im * wi[i];
        py[2 * i + 1] = re * wi[i] + im * wr[i];
      });
  c2c_lines<V, T>(py, py, Lines{n1, 1}, n2, forward);
  // dst[k2 n1 + k1] = y[k1 n2 + k2], in tiles that stay in the cache
  constexpr int64_t kTile = 32;
  OF_OMP_FOR_IF(
      n > (1 << 16), schedule(static), for (int64_t t1 = 0; t1 < n1; t1 += kTile) {
        for (int64_t t2 = 0; t2 < n2; t2 += kTile)
          for (int64_t k1 = t1; k1 < std::min(n1, t1 + kTile); ++k1)
            for (int64_t k2 = t2; k2 < std::min(n2, t2 + kTile); ++k2) {
              dst[2 * (k2 * n1 + k1)] = py[2 * (k1 * n2 + k2)];
              dst[2 * (k2 * n1 + k1) + 1] = py[2 * (k1 * n2 + k2) + 1];
            }
      });
}

template <typename T>
void c2c(const std::complex<T>* src, std::complex<T>* dst, int64_t outer, int64_t n, int64_t inner,
         bool forward) {
  const Lines l{outer, inner};
  if (l.count() == 0 || n == 0) return;
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  if (use_vectors<T>(l.count(), n)) {
    c2c_lines<typename VecOf<T>::type, T>(s, d, l, n, forward);
  } else if (const int64_t n1 = inner == 1 ? four_step_split(n) : 0; n1 > 0) {
    for (int64_t t = 0; t < l.count(); ++t)
      c2c_four_step<T>(s + 2 * t * n, d + 2 * t * n, n, n1, forward);
  } else {
    c2c_lines<T, T>(s, d, l, n, forward);
  }
}

template <typename T>
void r2c(const T* src, std::complex<T>* dst, int64_t outer, int64_t n, int64_t inner, int64_t m) {
  const Lines l{outer, inner};
  if (l.count() == 0 || n == 0 || m == 0) return;
  T* d = reinterpret_cast<T*>(dst);
  if (use_vectors<T>(l.count(), n))
    r2c_lines<typename VecOf<T>::type, T>(src, d, l, n, m);
  else
    r2c_lines<T, T>(src, d, l, n, m);
}

template <typename T>
void c2r(const std::complex<T>* src, T* dst, int64_t outer, int64_t n, int64_t inner) {
  const Lines l{outer, inner};
  if (l.count() == 0 || n == 0) return;
  const T* s = reinterpret_cast<const T*>(src);
  if (use_vectors<T>(l.count(), n))
    c2r_lines<typename VecOf<T>::type, T>(s, dst, l, n);
  else
    c2r_lines<T, T>(s, dst, l, n);
}

template void c2c<float>(const std::complex<float>*, std::complex<float>*, int64_t, int64_t,
                         int64_t, bool);
template void c2c<double>(const std::complex<double>*, std::complex<double>*, int64_t, int64_t,
                          int64_t, bool);
template void r2c<float>(const float*, std::complex<float>*, int64_t, int64_t, int64_t, int64_t);
template void r2c<double>(const double*, std::complex<double>*, int64_t, int64_t, int64_t, int64_t);
template void c2r<float>(const std::complex<float>*, float*, int64_t, int64_t, int64_t);
template void c2r<double>(const std::complex<double>*, double*, int64_t, int64_t, int64_t);

}  // namespace oneflow::cpu::fft
