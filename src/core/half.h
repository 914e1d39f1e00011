// float16 and bfloat16 storage types with exact round-to-nearest-even conversion,
// usable on the host and on the device. Arithmetic happens in float (see opmath_t).
#pragma once
#include <cstdint>
#include <cstring>

#include "core/macros.h"

namespace dt {

DT_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
DT_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

struct bfloat16 {
  uint16_t x;
  bfloat16() = default;
  DT_HD explicit bfloat16(float f) : x(from_float(f)) {}
  DT_HD operator float() const { return bits_float(static_cast<uint32_t>(x) << 16); }
  DT_HD static uint16_t from_float(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
    uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>((u + rounding) >> 16);
  }
};

struct float16 {
  uint16_t x;
  float16() = default;
  DT_HD explicit float16(float f) : x(from_float(f)) {}
  DT_HD operator float() const { return to_float(x); }

  DT_HD static float to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));  // inf / nan
    if (exp == 0) {
      if (mant == 0) return bits_float(sign);
      // subnormal: value = mant * 2^-24
      float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
      return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  }
  DT_HD static uint16_t from_float(float f) {
    uint32_t u = float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
    if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
    if (a < 0x38800000u) {
      // result is subnormal (or zero): round a * 2^24 to nearest even integer
      float af = bits_float(a);
      float scaled = af * 16777216.0f;  // exact: power of two
      // round half to even via the magic-number trick
      float r = (scaled + 12582912.0f) - 12582912.0f;
      return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
    }
    // normal: rebias exponent and round mantissa to 10 bits (nearest even)
    uint32_t mant_odd = (a >> 13) & 1u;
    a += 0xc8000fffu + mant_odd;  // (-112 << 23) + rounding bias
    return static_cast<uint16_t>(sign | (a >> 13));
  }
};

}  // namespace dt
