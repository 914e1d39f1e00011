// The part of one pooling window that lies inside its input: shared by the CPU's and the
// CUDA plugin's max pooling kernels (cpu/kernels_pool.cpp, cuda/pool.cu), which skip the
// padding instead of reading it.
#pragma once
#include <cstdint>

#include "core/macros.h"

namespace dt::ops {

// The kernel offsets [*first, *last) of a window starting at `start` (its elements
// `dilation` apart, k of them) that fall inside [0, size). In constant time: a kernel may
// be 2^62 wide when the padding makes room for it, and the arithmetic stays within the
// padded input (start >= -padding, size + padding fits in int64; window_output checks).
DT_HD void window_inside(int64_t start, int64_t k, int64_t dilation, int64_t size, int64_t* first, int64_t* last) {
  // The first offset at or past 0: ceil(-start / dilation) when the window starts before 0
  // (written so that no sum can overflow).
  int64_t a = start >= 0 ? 0 : (-start - 1) / dilation + 1;
  // The last offset before size: floor((size - 1 - start) / dilation), none when start >= size.
  int64_t b = start >= size ? 0 : ((size - 1 - start) / dilation < k ? (size - 1 - start) / dilation + 1 : k);
  if (a > k) a = k;
  if (b < a) b = a;
  *first = a;
  *last = b;
}

}  // namespace dt::ops
