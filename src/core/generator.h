// Per-device random state: a seed and a counter offset. Each random tensor reserves a
// range of Philox counters, so two calls never reuse numbers and the values of one call
// do not depend on how it is split across threads or blocks.
#pragma once
#include <cstdint>

#include "core/device.h"

namespace dt {

constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default seed

struct RandomRange {
  uint64_t seed;
  uint64_t offset;  // first Philox counter of the range
};

// Reserves `blocks` Philox counters on device d.
RandomRange reserve_random(Device d, uint64_t blocks);
void manual_seed_all(uint64_t seed);
void manual_seed(Device d, uint64_t seed);

}  // namespace dt
