// Polynomial coefficients shared by the AVX2 and AVX-512 erf, erfinv, tanh, sin, cos and log
// kernels (vec/avx2.cpp, vec/avx512.cpp), highest power first.
#pragma once

namespace oneflow::cpu::erf_coeffs {

// erf(x) = x (kTwoOverSqrtPiHi + kSmall(x^2)) for |x| < 1: the fit's relative error is 1.4e-8;
// 2/sqrt(pi) is split into two floats, the low part being kSmall's constant term.
constexpr float kTwoOverSqrtPiHi = 1.128379225730896f;
constexpr float kSmall[] = {7.919062045402825e-05f,  -0.0008031124016270041f, 0.005190897732973099f,
                            -0.026855312287807465f,  0.11283627152442932f,    -0.37612631916999817f,
                            -5.8635382771399236e-08f};

// erfc(x) exp(x^2) = kTail((min(x, 3.92) - 2.46) * kTailScale) on [1, 3.92], absolute error
// 2.3e-9 (erf rounds to 1 from 3.92 on).
constexpr float kTailMax = 3.92f, kTailMid = 2.46f, kTailScale = 0.6849315166473389f;
constexpr float kTail[] = {-0.000803099072072655f, -0.0008310236735269427f, -0.0014756176387891173f,
                           0.0026195046957582235f, -0.004712911322712898f,  0.012025777250528336f,
                           -0.02619999274611473f,  0.05523855984210968f,    -0.11151837557554245f,
                           0.21382075548171997f};

// erfc(x) exp(x^2) = kErfcMid((x - 1.75) / 0.75) on [1, 2.5] and
// erfc(x) exp(x^2) x = kErfcFar((1 / x^2 - kFarMid) * kFarScale) on [2.5, 10.1] (erfc underflows
// to 0 past 10.06), fitted for relative error with each coefficient rounded to float in turn and
// the rest refitted: 1.1e-7 and 6.8e-8 as evaluated in float.
constexpr float kErfcMid[] = {-3.1111360385693843e-06f, 1.2922137102577835e-05f,
                              -4.5003191189607605e-05f, 0.00018262826779391617f,
                              -0.0007174228085204959f,  0.0026603855658322573f,
                              -0.009390800260007381f,   0.03136678412556648f,
                              -0.09823226928710938f,    0.28497225046157837f};
constexpr float kFarMid = 0.0849014802470346f, kFarScale = 1 / 0.0750985197529654f;
constexpr float kErfcFar[] = {1.398212589265313e-06f, -6.10544975643279e-06f,
                              2.883244087570347e-05f, -0.00017942508566193283f,
                              0.0014262441545724869f, -0.017038468271493912f,
                              0.5427834391593933f};

// Giles' single-precision erfinv: erfinv(y) ~ y P(w), w = -log((1 - y)(1 + y)), with
// P = kGilesCentral(w - 2.5) below w = 5 and kGilesTail(sqrt(w) - 3) from 5 on.
constexpr float kGilesCentral[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                   -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                   -0.00417768164f,  0.246640727f,    1.50140941f};
constexpr float kGilesTail[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                0.00943887047f,   1.00167406f,     2.83297682f};

// sin and cos: |x| = j pi/2 + r with j = round(|x| 2/pi) and pi/2 in three parts (exact
// products with FMA; j < kSinCosMax / (pi/2) keeps r accurate), |r| <= pi/4. Then sin r =
// r + r^3 kSinPoly(r^2) and cos r = 1 + r^2 kCosPoly(r^2), their Taylor polynomials of degree 9
// and 10 (the next terms are below 3e-9 relatively), chosen and signed by the quadrant j mod 4:
// within 1.5 ulp of sin and cos over |x| < kSinCosMax (measured). Larger |x| and non-finite x
// go to Sleef's u10 functions.
constexpr float kTwoOverPi = 0.636619772367581343f;
constexpr float kPio2Hi = 1.57079637050628662109375f, kPio2Mid = -4.37113900018624283e-8f,
                kPio2Lo = -1.71512451000590880e-15f;
constexpr float kSinCosMax = 8192.0f;
constexpr float kSinPoly[] = {2.75573192239858907e-6f, -1.98412698412698413e-4f,
                              8.33333333333333333e-3f, -1.66666666666666667e-1f};
constexpr float kCosPoly[] = {-2.75573192239858907e-7f, 2.48015873015873016e-5f,
                              -1.38888888888888889e-3f, 4.16666666666666667e-2f, -0.5f};

// log: v = m 2^k with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), and log(1 + f) =
// f - f^2/2 + f^3 kLogPoly(f) (a least-squares fit for the relative error of log1p, reweighted
// towards minimax: 1e-8), plus k ln2 in two parts (kLn2HiF exact in products with k): within
// 0.9 ulp of log over every 13th positive float (measured). Zero, negative, subnormal (AVX2),
// infinite and NaN inputs go to Sleef's u10 log.
constexpr float kLn2HiF = 0.693359375f, kLn2LoF = -2.12194440e-4f;
constexpr float kLogPoly[] = {-0.08238893002271652f, 0.130486860871315f,   -0.1305951625108719f,
                              0.14151540398597717f,  -0.1662893146276474f, 0.20003847777843475f,
                              -0.25000709295272827f, 0.33333295583724976f};

// atan: z = min(|x|, 1) / max(|x|, 1), atan(z) = z + z t kAtanPoly(t) with t = z^2 (a
// least-squares fit for relative error, reweighted towards minimax: 2.4e-8 with these float
// coefficients), and pi/2 - atan(z) above 1, the rounding of pi/2 - z kept (Fast2Sum) and pi/2 in
// two parts: within 1.4 ulp of atan over every 7th float (measured).
constexpr float kAtanPoly[] = {
    0.0029610656201839447f, -0.016514671966433525f, 0.043421514332294464f, -0.07566962391138077f,
    0.10671152919530869f,   -0.14211784303188324f,  0.19993767142295837f,  -0.33333146572113037f};

// asin and acos: a = |x|. Up to 1/2, asin(a) = a + a t kAsinPoly(t) with t = a^2; above,
// asin(a) = pi/2 - 2 asin(s) with z = (1 - a) / 2 (exact), s = sqrt(z) and the rounding of s
// (z - s^2, exact with FMA) kept, asin(s) = s + s z kAsinPoly(z). acos from the same pieces:
// pi/2 - asin(x) up to 1/2, 2 asin(s) above 1/2, pi - 2 asin(s) below -1/2. The differences with
// pi/2 and pi keep their roundings (Fast2Sum). kAsinPoly is a least-squares fit on [0, 1/4] for
// the relative error of (asin(sqrt(t)) - sqrt(t)) / t^(3/2), reweighted towards minimax, each
// coefficient rounded to float and the rest refitted: 6e-8.
constexpr float kAsinPoly[] = {0.03379933163523674f,  0.017081880941987038f, 0.031115273013710976f,
                               0.044598110020160675f, 0.07500098645687103f,  0.1666666567325592f};

}  // namespace oneflow::cpu::erf_coeffs

// The double-precision Newton step of the erfinv kernels needs erf(x) to ~1e-13 of the result
// and exp(-x^2), for 0 <= x <= 4 only (Sleef's double erf was 80% of the kernel's time):
//   erf(x) = x kErfCentral(2 x^2 - 1) for x < 1: degree 9, relative error 2e-14 (least squares
//            on Chebyshev nodes against 40-digit values);
//   erfc(x) = exp(-x^2) kErfcTail((x - 2.5) / 1.5) for 1 <= x <= 4: degree 18, relative error
//            1.5e-13;
//   exp(-u), 0 <= u <= 16: u = n ln2 - r, Taylor to r^11 (|r| <= ln2 / 2: ~3e-15), times 2^-n.
namespace oneflow::cpu::erf_coeffs {

constexpr double kErfCentral[] = {
    -2.0386886671511924e-10, 4.138733089079398e-09, -7.511622648387219e-08, 1.2233627096812527e-06,
    -1.753716870671467e-05,  0.0002175171631703337, -0.002285485561399137,  0.019852496688097455,
    -0.1405360890226945,     0.9654687386698853};

constexpr double kErfcTail[] = {
    2.252827638024674e-08,  -7.389283968097615e-08,  1.1813755491507222e-07, -3.229469422103375e-07,
    1.1250348408512867e-06, -3.2190389309438408e-06, 8.708199619166468e-06,  -2.356239633973073e-05,
    6.2578293844204e-05,    -0.00016203025957449514, 0.00040908588431990355, -0.0010058272098483142,
    0.0024036473931677653,  -0.005570706699987722,   0.012489373914105175,   -0.02700529663571307,
    0.05611049344352866,    -0.11152102018515744,    0.21080636406115288};

constexpr double kExpTaylor[] = {1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320,
                                 1.0 / 5040,     1.0 / 720,     1.0 / 120,    1.0 / 24,
                                 1.0 / 6,        0.5,           1.0,          1.0};

// exp(u) for 0 <= u <= 1 to 1.2e-9 (interpolation at the 8 Chebyshev nodes of [0, 1]), where a
// relative error of 1e-8 is enough.
constexpr double kExpUnit[] = {0.0003294060657466164, 0.0011574931412234326, 0.008537126242750374,
                               0.04156894257381071,   0.16669188690101835,   0.4999968213897212,
                               1.0000001520051718,    0.9999999988114732};

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2Hi = 0.6931471803691238;  // ln2 = hi + lo, hi with 32 significant bits
constexpr double kLn2Lo = 1.9082149292705877e-10;
constexpr double kTwoOverSqrtPi = 1.1283791670955126;

// tanh(x) = x + x^3 kTanhSmall(x^2) for |x| < kTanhSmallMax (a least-squares fit for relative
// error, reweighted towards minimax: within 1 ulp of tanh as evaluated in float); above it
// tanh(x) = 1 - 2 / (exp(2x) + 1), and 1 from kTanhMax on (tanh(9.02) already rounds to 1).
constexpr float kTanhSmallMax = 0.625f, kTanhMax = 10.0f;
constexpr float kTanhSmall[] = {-0.005790185183286667f, 0.020721757784485817f,
                                -0.05376730114221573f, 0.1333179920911789f, -0.33333295583724976f};

}  // namespace oneflow::cpu::erf_coeffs
