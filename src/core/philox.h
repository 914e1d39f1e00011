// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11),
// a counter-based generator: the output depends only on (key, counter), so element i of
// a random tensor is a pure function of (seed, offset, i) on any thread or device.
#pragma once
#include <cstdint>

#include "core/macros.h"

namespace dt {

struct Philox4 {
  uint32_t v[4];
};

DT_HD uint32_t mulhilo32(uint32_t a, uint32_t b, uint32_t* hi) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  return static_cast<uint32_t>(p);
}

// counter = (c0, c1, c2, c3), key = (k0, k1).
DT_HD Philox4 philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
  constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    uint32_t lo0 = mulhilo32(M0, c0, &hi0);
    uint32_t lo1 = mulhilo32(M1, c2, &hi1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += W0;
    k1 += W1;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// Block b of the stream (seed, offset): counter = offset + b as a 64-bit value.
DT_HD Philox4 philox_block(uint64_t seed, uint64_t offset, uint64_t b) {
  uint64_t c = offset + b;
  return philox4x32_10(static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0,
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// 24 random bits -> [0, 1) exactly representable in float.
DT_HD float uniform_float(uint32_t x) { return static_cast<float>(x >> 8) * 5.9604644775390625e-8f; }
// 53 random bits -> [0, 1) exactly representable in double.
DT_HD double uniform_double(uint32_t hi, uint32_t lo) {
  uint64_t bits = ((static_cast<uint64_t>(hi) << 32) | lo) >> 11;
  return static_cast<double>(bits) * 1.1102230246251565e-16;
}

}  // namespace dt
