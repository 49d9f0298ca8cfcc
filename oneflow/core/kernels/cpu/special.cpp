// CPU kernel of the regularised incomplete gamma functions (ops/special_primitives.h). Both are
// computed in double: P(a, x) by its power series
//   P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) (a + 2) ... (a + n))
// where it converges quickly (x < a + 1), and Q(a, x) by Legendre's continued fraction
//   Q = x^a e^-x / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a ...
// evaluated by the modified Lentz method elsewhere; the other function is 1 minus the one found.
// For a >= 1e7 both would need ~sqrt(a) terms and lose digits to the prefactor's cancellation
// (a log x - x - log Gamma(a)): Temme's uniform asymptotic expansion (DLMF 8.12) instead.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/kernels/cpu/strided_loop.h"
#include "oneflow/core/ops/special_primitives.h"

namespace oneflow {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxIterations = 100000;

// x^a e^-x / Gamma(a + shift) in log space (shift 1 for the series, 0 for the fraction).
double log_prefactor(double a, double x, double shift) {
  return a * std::log(x) - x - std::lgamma(a + shift);
}

// P(a, x) by the series, summed until what is left (at most term * x / (a + n + 1 - x): the
// ratio of successive terms only falls) is below eps times the result: P, or 1 - P when upper
// (Q = 1 - P with P near 1 would otherwise keep only a few digits).
double lower_series(double a, double x, double eps, bool upper) {
  const double scale = std::exp(log_prefactor(a, x, 1));
  double term = 1, sum = 1;
  for (int n = 1; n < kMaxIterations; ++n) {
    term *= x / (a + n);
    sum += term;
    const double rest = term * x, room = eps * (a + n + 1 - x);
    if (upper ? rest * scale < room * (1 - sum * scale) : rest < room * sum) break;
    if (term < sum * (kEps / 64)) break;  // 1 - P rounds to 0
  }
  return scale * sum;
}

// log Gamma(1 + a) for |a| < 0.2 to a's own precision (std::lgamma(1 + a) loses a below
// 1e-16): -gamma a + sum_{k >= 2} (-1)^k zeta(k) a^k / k, with the 1 of each zeta(k) summed in
// closed form, a - log(1 + a).
double lgamma1p_small(double a) {
  constexpr double kEuler = 0.57721566490153286061;
  constexpr double kZetaMinusOne[] = {
      // zeta(k) - 1, k = 2 ... 20
      0.64493406684822643647,   0.2020569031595942854,     0.082323233711138191516,
      0.036927755143369926331,  0.017343061984449139715,   0.0083492773819228268398,
      0.0040773561979443393787, 0.0020083928260822144179,  0.00099457512781808533715,
      0.0004941886041194645587, 0.00024608655330804829864, 0.00012271334757848914675,
      6.1248135058704829259e-5, 3.0588236307020493552e-5,  1.5282259408651871733e-5,
      7.6371976378997622736e-6, 3.8172932649998398565e-6,  1.9082127165539389257e-6,
      9.5396203387279611315e-7};
  double sum = 0, power = -a;
  for (int k = 2; k <= 20; ++k) {
    power *= -a;  // (-a)^k
    sum += kZetaMinusOne[k - 2] * power / k;
  }
  return -kEuler * a + sum + (a - std::log1p(a));
}

// Q(a, x) for a < 0.2 on the series' side (x < a + 1), where P is near 1 and 1 - P would keep
// few of Q's digits (none below a ~ 1e-16): with P = x^a / Gamma(1 + a) (1 + a S),
// S = sum_{n >= 1} (-x)^n / (n! (a + n)),
//   Q = -expm1(a log x - log Gamma(1 + a)) - x^a / Gamma(1 + a) a S.
double upper_small_a(double a, double x, double eps) {
  const double l = a * std::log(x) - lgamma1p_small(a);
  double term = 1, sum = 0;
  for (int n = 1; n < 200; ++n) {
    term *= -x / n;  // (-x)^n / n!
    const double t = term / (a + n);
    sum += t;
    if (std::abs(t) <= std::abs(sum) * eps) break;
  }
  return -std::expm1(l) - std::exp(l) * a * sum;
}

double upper_fraction(double a, double x, double eps) {
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a, c = 1 / kTiny, d = 1 / b, h = d;
  for (int i = 1; i < kMaxIterations; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < eps) break;
  }
  return std::exp(log_prefactor(a, x, 0)) * h;
}

// Temme's expansion (DLMF 8.12.3-8.12.10) to the 1/a term, for a >= kTemmeFrom: with
// lambda = x / a and eta^2 / 2 = lambda - 1 - log(lambda) (eta of lambda - 1's sign),
//   Q = erfc(eta sqrt(a / 2)) / 2 + R,  P = erfc(-eta sqrt(a / 2)) / 2 - R,
//   R = e^(-a eta^2 / 2) / sqrt(2 pi a) (c0(eta) + c1(eta) / a).
// The next term, c2 / a^2 (c2(0) = 25/6048), is below 1e-20 there. Near eta = 0, where the
// closed forms of c0 and c1 cancel, their Taylor series (DLMF 8.12.11).
constexpr double kTemmeFrom = 1e7;
// mu - log(1 + mu) (>= 0), by its series for small mu, where the difference would cancel.
double mu_minus_log1p(double mu) {
  if (std::abs(mu) >= 0.1) return mu - std::log1p(mu);
  double sum = 0, power = mu * mu;
  for (int k = 2; k < 40; ++k, power *= -mu) {
    sum += power / k;
    if (std::abs(power) < 1e-18 * sum) break;
  }
  return sum;
}

double temme(double a, double x, bool upper) {
  const double mu = (x - a) / a;  // lambda - 1
  const double half_eta2 = mu_minus_log1p(mu);
  const double eta = std::copysign(std::sqrt(2 * half_eta2), mu);
  double c0, c1;
  if (std::abs(eta) < 0.05) {
    c0 = -1.0 / 3 +
         eta * (1.0 / 12 +
                eta * (-2.0 / 135 + eta * (1.0 / 864 + eta * (1.0 / 2835 - eta * 139.0 / 777600))));
  } else {
    c0 = 1 / mu - 1 / eta;
  }
  if (std::abs(eta) < 0.01) {
    c1 = -1.0 / 540 - eta / 288;
  } else {
    c1 = 1 / (eta * eta * eta) - 1 / (mu * mu * mu) - 1 / (mu * mu) - 1 / (12 * mu);
  }
  const double r = std::exp(-a * half_eta2) / std::sqrt(2 * M_PI * a) * (c0 + c1 / a);
  const double s = eta * std::sqrt(a / 2);
  return upper ? 0.5 * std::erfc(s) + r : 0.5 * std::erfc(-s) - r;
}

// P(a, x), or Q(a, x) when upper; PyTorch's values at the edges of the domain. The sums stop
// when a term changes them by less than eps relative.
double incomplete_gamma(double a, double x, bool upper, double eps) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? (upper ? 0.0 : 1.0) : kNaN;
  if (x == 0) return upper ? 1.0 : 0.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : (upper ? 1.0 : 0.0);
  if (std::isinf(x)) return upper ? 0.0 : 1.0;
  if (a >= kTemmeFrom) return temme(a, x, upper);
  if (x < a + 1) {
    if (upper && a < 0.2) return upper_small_a(a, x, eps);
    const double p = lower_series(a, x, eps, upper);
    return upper ? 1 - p : p;
  }
  const double q = upper_fraction(a, x, eps);
  return upper ? q : 1 - q;
}

// dP/dx = x^(a-1) e^-x / Gamma(a). From a = 100 on, (a - 1) log x - x - log Gamma(a) cancels
// (a relative error of ~a 1e-16: 80% at 1e15); there, with x = a (1 + mu) and Stirling's
// log Gamma(a) = (a - 1/2) log a - a + log(2 pi) / 2 + c(a),
//   log dP/dx = -a (mu - log(1 + mu)) + log(a / (2 pi)) / 2 - c(a) - log x,
// c(a) = 1/(12 a) - 1/(360 a^3) + 1/(1260 a^5) - 1/(1680 a^7) (the next term: 2e-21 at 100).
double density(double a, double x) {
  if (std::isnan(a) || std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (a < 100) return std::exp((a - 1) * std::log(x) - x - std::lgamma(a));
  if (x == 0 || std::isinf(x) || std::isinf(a)) return 0;
  const double r = 1 / (a * a);
  const double c = (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r / 1680))) / a;
  const double mu = (x - a) / a;
  return std::exp(-a * mu_minus_log1p(mu) + 0.5 * std::log(a / (2 * M_PI)) - c - std::log(x));
}

}  // namespace

void Igamma::compute_cpu(const TensorList& in, const TensorList& out, const Attrs& attrs) const {
  const bool upper = attrs.get<bool>("upper");
  const bool want_density = attrs.has("density") && attrs.get<bool>("density");
  const int64_t n = out[0]->numel();
  auto run = [&]<typename T>() {
    // a float result needs the sums to about 2^-28 (its unit roundoff is 2^-24): about half the
    // terms a double needs
    const double eps = std::is_same_v<T, float> ? std::ldexp(1.0, -28) : kEps;
    const T* a = in[0]->data_as<T>();
    const T* x = in[1]->data_as<T>();
    T* y = out[0]->data_as<T>();
    OF_OMP_FOR_IF(
        n > 256, schedule(dynamic, 64), for (int64_t i = 0; i < n; ++i) {
          y[i] = static_cast<T>(want_density
                                    ? density(double(a[i]), double(x[i]))
                                    : incomplete_gamma(double(a[i]), double(x[i]), upper, eps));
        });
  };
  if (out[0]->dtype() == DType::kFloat64)
    run.template operator()<double>();
  else
    run.template operator()<float>();
}

}  // namespace oneflow
