// The part of one pooling window that lies inside its input: shared by the CPU's and the
// CUDA plugin's max pooling kernels (cpu/kernels_pool.cpp, cuda/pool.cu), which skip the
// padding instead of reading it.
#pragma once
#include <cstdint>

#include "core/macros.h"

namespace dt::ops {

// The kernel offsets [*first, *last) of a window starting at `start` (its elements
// `dilation` apart) that fall inside [0, size).
DT_HD void window_inside(int64_t start, int64_t k, int64_t dilation, int64_t size, int64_t* first, int64_t* last) {
  int64_t a = 0, b = k;
  while (a < b && start + a * dilation < 0) ++a;
  while (b > a && start + (b - 1) * dilation >= size) --b;
  *first = a;
  *last = b;
}

}  // namespace dt::ops
