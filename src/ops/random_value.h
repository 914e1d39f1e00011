// Element i of a random tensor, for every backend: the one definition of how Philox
// blocks map to elements and how their bits become values, so the CPU and CUDA give the
// same numbers for the same (seed, offset).
//   rand:  bit-identical everywhere (integer bits scaled by a power of two).
//   randn: Box-Muller. The narrow floats take their uniforms from 32-bit lanes like rand
//          but do the log/cos/sqrt in double and round once: CUDA's single-precision
//          logf/cosf differ from glibc's by up to 2 ulp each, so float math differed by up
//          to 3 ulp after composition; in double the libraries' last-bit differences almost
//          never survive the rounding to float (at most 1 ulp, and that rarely).
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/macros.h"
#include "core/philox.h"
#include "ops/cast.h"

namespace dt {

template <typename T>
DT_HD T random_value(int64_t i, bool uniform, uint64_t seed, uint64_t offset) {
  constexpr bool wide = std::is_same<T, double>::value;
  constexpr double kTwoPi = 6.283185307179586;
  if (uniform) {
    if constexpr (wide) {
      Philox4 r = philox_block(seed, offset, static_cast<uint64_t>(i) / 2);
      int k = static_cast<int>(i % 2) * 2;
      return uniform_double(r.v[k], r.v[k + 1]);
    } else {
      Philox4 r = philox_block(seed, offset, static_cast<uint64_t>(i) / 4);
      float u = uniform_float(r.v[i % 4]);
      if constexpr (is_reduced_float<T>::value) {
        // keep only the bits the type holds so rounding can never reach 1.0
        constexpr int bits = std::is_same<T, float16>::value ? 11 : 8;
        u = static_cast<float>(r.v[i % 4] >> (32 - bits)) / static_cast<float>(1u << bits);
      }
      return T(u);
    }
  }
  if constexpr (wide) {
    Philox4 r = philox_block(seed, offset, static_cast<uint64_t>(i));
    double u1 = 1.0 - uniform_double(r.v[0], r.v[1]);  // (0, 1]
    double u2 = uniform_double(r.v[2], r.v[3]);
    return sqrt(-2.0 * log(u1)) * cos(kTwoPi * u2);
  } else {
    Philox4 r = philox_block(seed, offset, static_cast<uint64_t>(i) / 2);
    int k = static_cast<int>(i % 2) * 2;
    double u1 = 1.0 - static_cast<double>(uniform_float(r.v[k]));  // (0, 1]
    double u2 = static_cast<double>(uniform_float(r.v[k + 1]));
    return T(static_cast<float>(sqrt(-2.0 * log(u1)) * cos(kTwoPi * u2)));
  }
}

}  // namespace dt
