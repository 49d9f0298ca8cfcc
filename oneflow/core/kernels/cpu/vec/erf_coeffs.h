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

// erfinv on AVX-512 from 32 polynomials of degree 8, fitted for relative error by
// tools/fit_erfinv.py (their largest errors as stored: 4.3e-10 for entry 0, 2.5e-10 over entries
// 1-30), one row per coefficient (one column per entry): the seven highest powers in float, then
// the x^1 and x^0 coefficients each as a float pair (hi, lo).
//   entry 0: erfinv(b) = b P(b^2) for |b| <= 1/2;
//   entries 1-30: erfinv(1 - q) = P(4 m - 5) for q = m 2^e, m in [1, 1.5), and P(4 m - 7) for
//   m in [1.5, 2), entry -2 e - 3 + [m >= 1.5], e = -2 .. -16 (1/2 < |b| <= 1 - 2^-16);
//   entry 31 repeats entry 30 (no lane reaches it).
alignas(64) constexpr float kErfinvRows[][32] = {
    {0.0951130763f,   8.85098288e-08f, 6.00671957e-09f, 8.27719688e-08f, 5.59306956e-09f,
     7.77491351e-08f, 5.23279908e-09f, 7.34145189e-08f, 4.92467933e-09f, 6.96590163e-08f,
     4.65975214e-09f, 6.63800108e-08f, 4.42995951e-09f, 6.34929904e-08f, 4.22878443e-09f,
     6.09305957e-08f, 4.05107148e-09f, 5.86392659e-08f, 3.8929695e-09f,  5.65765497e-08f,
     3.75113807e-09f, 5.47081314e-08f, 3.62304786e-09f, 5.30063531e-08f, 3.50674134e-09f,
     5.14484384e-08f, 3.40055917e-09f, 5.00158777e-08f, 3.30328942e-09f, 4.8693046e-08f,
     3.21348703e-09f, 3.21348703e-09f},
    {0.000454485824f,  -5.14640419e-07f, -4.90543925e-08f, -4.78218908e-07f, -4.53925608e-08f,
     -4.47647125e-07f, -4.23402007e-08f, -4.21701685e-07f, -3.97644726e-08f, -3.9943103e-07f,
     -3.7566096e-08f,  -3.80105831e-07f, -3.56686236e-08f, -3.63167999e-07f, -3.40136594e-08f,
     -3.4818774e-07f,  -3.25563825e-08f, -3.34830929e-07f, -3.12621395e-08f, -3.22834921e-07f,
     -3.01038376e-08f, -3.11990846e-07f, -2.90600735e-08f, -3.02130786e-07f, -2.81136945e-08f,
     -2.93118376e-07f, -2.725087e-08f,   -2.84841576e-07f, -2.64603006e-08f, -2.77207761e-07f,
     -2.57326587e-08f, -2.57326587e-08f},
    {0.0528375618f,   2.85274405e-06f, 3.94468913e-07f, 2.64430946e-06f, 3.64431003e-07f,
     2.47013168e-06f, 3.39243257e-07f, 2.32290995e-06f, 3.18055328e-07f, 2.19699336e-06f,
     3.00028773e-07f, 2.08808137e-06f, 2.84516261e-07f, 1.99289707e-06f, 2.71023339e-07f,
     1.90892774e-06f, 2.59171571e-07f, 1.83422731e-06f, 2.4866867e-07f,  1.76727144e-06f,
     2.39287516e-07f, 1.70685314e-06f, 2.30848798e-07f, 1.65200493e-06f, 2.23209483e-07f,
     1.6019435e-06f,  2.16254449e-07f, 1.55602766e-06f, 2.09889606e-07f, 1.51372797e-06f,
     2.04038543e-07f, 2.04038543e-07f},
    {0.0501731262f,    -1.7537086e-05f,  -3.4069526e-06f,  -1.62155284e-05f, -3.13183796e-06f,
     -1.51162176e-05f, -2.90863227e-06f, -1.41894343e-05f, -2.72149396e-06f, -1.33991789e-05f,
     -2.56280282e-06f, -1.27177345e-05f, -2.42669557e-06f, -1.21238954e-05f, -2.30867704e-06f,
     -1.16013998e-05f, -2.20530728e-06f, -1.11376803e-05f, -2.11393899e-06f, -1.07229207e-05f,
     -2.03251489e-06f, -1.03493703e-05f, -1.95941971e-06f, -1.00108382e-05f, -1.8933705e-06f,
     -9.70232577e-06f, -1.833336e-06f,   -9.41975395e-06f, -1.77847971e-06f, -9.15976398e-06f,
     -1.72811519e-06f, -1.72811519e-06f},
    {0.0650994778f,   0.000113066599f, 3.05312606e-05f, 0.000104392551f, 2.82302954e-05f,
     9.70442707e-05f, 2.61473815e-05f, 9.08671718e-05f, 2.43997893e-05f, 8.56223342e-05f,
     2.29237266e-05f, 8.11187638e-05f, 2.16631724e-05f, 7.72096391e-05f, 2.05746383e-05f,
     7.37824594e-05f, 1.96248129e-05f, 7.07505751e-05f, 1.87881142e-05f, 6.80465673e-05f,
     1.8044746e-05f,  6.56174525e-05f, 1.73792268e-05f, 6.34210883e-05f, 1.67793114e-05f,
     6.1423576e-05f,  1.62352098e-05f, 5.95973979e-05f, 1.57390059e-05f, 5.79199514e-05f,
     1.52842294e-05f, 1.52842294e-05f},
    {0.0865451619f,    -0.000795383996f, -0.000308604387f, -0.00072492304f,  -0.000275537837f,
     -0.000670607318f, -0.000253499864f, -0.000625591143f, -0.000235585103f, -0.00058762799f,
     -0.000220581176f, -0.000555225241f, -0.000207847363f, -0.000527257042f, -0.00019691496f,
     -0.000502863084f, -0.000187426878f, -0.000481382624f, -0.000179109644f, -0.00046230451f,
     -0.000171752472f, -0.000445229089f, -0.000165191479f, -0.000429840584f, -0.000159297822f,
     -0.000415886549f, -0.000153969086f, -0.000403163023f, -0.00014912292f,  -0.000391503505f,
     -0.000144692487f, -0.000144692487f},
    {0.127556354f,   0.00607669214f, 0.00307778781f, 0.00573965115f, 0.0030270766f,  0.00532065332f,
     0.00281711598f, 0.00494373497f, 0.00261215074f, 0.00462135207f, 0.00243434613f, 0.00434693601f,
     0.00228301878f, 0.00411177613f, 0.00215384713f, 0.00390830869f, 0.00204261905f, 0.00373051758f,
     0.00194588711f, 0.00357371639f, 0.00186094979f, 0.00343425642f, 0.00178570638f, 0.00330927712f,
     0.00171851623f, 0.00319651281f, 0.00165808655f, 0.00309414999f, 0.00160338788f, 0.00300072087f,
     0.00155359146f, 0.00155359146f},
    {0.232013658f,   -0.0922428146f, -0.0748734772f, -0.0756646842f, -0.058998581f,  -0.0653548241f,
     -0.0498842001f, -0.0582076311f, -0.0438483544f, -0.0529025868f, -0.0394992903f, -0.0487754457f,
     -0.0361856073f, -0.0454526171f, -0.0335585177f, -0.0427065045f, -0.0314129926f, -0.0403898433f,
     -0.0296199489f, -0.0384027436f, -0.0280936845f, -0.0366748348f, -0.026774874f,  -0.0351549722f,
     -0.0256210174f, -0.0338050164f, -0.0246007945f, -0.0325958692f, -0.0236905646f, -0.0315049216f,
     -0.0228721108f, -0.0228721108f},
    {7.207825e-09f,    4.81951257e-10f,  1.81653981e-09f,  2.5826925e-09f,   -1.69898762e-09f,
     -7.66454789e-10f, -4.37220704e-10f, 1.00003401e-10f,  5.96773242e-10f,  -1.46674839e-09f,
     5.87642601e-10f,  9.46553946e-10f,  -6.88703705e-10f, 1.11867582e-09f,  9.30628463e-10f,
     -1.16833365e-09f, -1.17296972e-09f, -1.31136402e-09f, 9.1737673e-10f,   2.63130795e-10f,
     6.78788692e-10f,  1.74525649e-09f,  2.57429217e-10f,  -8.28134394e-10f, -3.0959596e-10f,
     5.08619979e-10f,  -3.37176426e-10f, -2.69180123e-10f, 7.07991499e-10f,  7.25071281e-10f,
     -7.79409093e-10f, -7.79409093e-10f},
    {0.886226952f, 0.714170873f, 0.549013078f, 1.00253391f, 0.869641483f, 1.24568903f, 1.13208413f,
     1.45913458f,  1.35860014f,  1.65125906f,  1.56028426f, 1.82717776f,  1.74356329f, 1.99026859f,
     1.91253483f,  2.14289451f,  2.06999207f,  2.28678203f, 2.21793628f,  2.42323518f, 2.35785604f,
     2.55326819f,  2.4908936f,   2.67768574f,  2.61794734f, 2.79713988f,  2.73973727f, 2.9121666f,
     2.85685253f,  3.02321362f,  2.96978021f,  2.96978021f},
    {-2.66206559e-08f, 2.44405616e-08f,  1.41555487e-08f,  5.79661474e-08f,  -1.42863357e-08f,
     5.89234297e-08f,  -4.75614286e-08f, -8.6352685e-09f,  2.19232597e-08f,  5.36119344e-08f,
     4.18765467e-08f,  5.17838039e-09f,  2.67888076e-08f,  2.43186804e-08f,  -1.00333981e-08f,
     8.2425224e-08f,   1.00731434e-07f,  -1.13558322e-07f, -3.39559669e-08f, 1.00345687e-07f,
     -3.36278116e-10f, -3.99593887e-08f, 8.99237307e-08f,  -2.68527316e-08f, -1.12087825e-07f,
     -8.52186588e-08f, 5.14012939e-08f,  5.72693892e-08f,  -9.42466585e-08f, -1.07729406e-07f,
     1.1458849e-08f,   1.1458849e-08f},
};

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
