// Philox4x32-10 counter-based generator (Salmon et al., SC'11). Element i of a random op draws
// from counter (offset + i / 4), so results depend only on (seed, offset, i): the same on every
// run, thread count and device.
#pragma once

#include <cmath>
#include <cstdint>

#include "oneflow/core/common/half.h"

namespace oneflow {

struct Philox4x32 {
  uint32_t key0, key1;

  OF_HD Philox4x32(uint64_t seed) : key0(uint32_t(seed)), key1(uint32_t(seed >> 32)) {}

  // Four 32-bit random words for 128-bit counter `ctr`.
  OF_HD void operator()(uint64_t ctr, uint32_t out[4]) const {
    uint32_t c0 = uint32_t(ctr), c1 = uint32_t(ctr >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = key0, k1 = key1;
    for (int r = 0; r < 10; ++r) {
      if (r > 0) {
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
      }
      uint64_t p0 = uint64_t(0xD2511F53u) * c0;
      uint64_t p1 = uint64_t(0xCD9E8D57u) * c2;
      uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0;
      uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
      c1 = uint32_t(p1);
      c3 = uint32_t(p0);
      c0 = n0;
      c2 = n2;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
  }
};

// Uniform in (0, 1] from 32 random bits (never 0, so log() below is finite).
OF_HD inline float uint_to_unit_float(uint32_t x) {
  return (static_cast<float>(x >> 8) + 1.0f) * (1.0f / 16777216.0f);
}

// Uniform in (0, 1] from 64 random bits with 53 bits of resolution (float64 draws take two
// words per element, so they are not float32 draws widened).
OF_HD inline double bits_to_unit_double(uint32_t hi, uint32_t lo) {
  const uint64_t x = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  return (static_cast<double>(x) + 1.0) * (1.0 / 9007199254740992.0);
}

// One float64 uniform draw in [low, high) from 64 random bits (53 of them used).
OF_HD inline double uniform_value_f64(uint32_t hi, uint32_t lo, double low, double high) {
  const uint64_t x = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  const double u = static_cast<double>(x) * (1.0 / 9007199254740992.0);  // [0, 1)
  double v = low + u * (high - low);
  if (v >= high) v = low;
  return v;
}

// Standard normal pair by Box-Muller from two uniforms (in double for float64 draws).
OF_HD inline void box_muller(double u1, double u2, double* z0, double* z1) {
  const double r = sqrt(-2.0 * log(u1));
  const double t = 6.28318530717958647692 * u2;
  *z0 = r * cos(t);
  *z1 = r * sin(t);
}

// Standard normal pair by Box-Muller from two uniforms.
OF_HD inline void box_muller(float u1, float u2, float* z0, float* z1) {
  float r = sqrtf(-2.0f * logf(u1));
  float t = 6.28318530717958647692f * u2;
  *z0 = r * cosf(t);
  *z1 = r * sinf(t);
}

}  // namespace oneflow
