// float16 and bfloat16 storage types with round-to-nearest-even conversion from float.
// Arithmetic on them goes through float; usable from host and CUDA device code.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define OF_HD __host__ __device__
#else
#define OF_HD
#endif

namespace oneflow {

OF_HD inline uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
OF_HD inline float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

struct float16 {
  uint16_t x = 0;
  float16() = default;
  OF_HD float16(float f) : x(from_float(f)) {}  // NOLINT: implicit like a builtin type
  OF_HD operator float() const { return to_float(x); }

  OF_HD static uint16_t from_float(float f) {
    uint32_t u = float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);  // nan/inf
    if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
    if (abs < 0x38800000u) {                        // subnormal half (|f| < 2^-14)
      // Adding 0.5 in float aligns the mantissa so that the float rounding does RNE for us.
      float a = bits_float(abs) + 0.5f;
      return sign | static_cast<uint16_t>(float_bits(a) - 0x3f000000u);
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
    return sign | static_cast<uint16_t>(abs >> 13);
  }
  OF_HD static float to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
      if (mant == 0) return bits_float(sign);
      float v = static_cast<float>(mant) * (1.0f / 16777216.0f);  // mant * 2^-24
      return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

struct bfloat16 {
  uint16_t x = 0;
  bfloat16() = default;
  OF_HD bfloat16(float f) : x(from_float(f)) {}  // NOLINT: implicit like a builtin type
  OF_HD operator float() const { return bits_float(static_cast<uint32_t>(x) << 16); }

  OF_HD static uint16_t from_float(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // nan
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    return static_cast<uint16_t>(u >> 16);
  }
};

}  // namespace oneflow
