// The running sum of one line, written once for every backend (__host__ __device__ under
// nvcc): the CPU (cpu/kernels_scan.cpp) and CUDA (cuda/scan.cu) kernels differ only in
// how they hand out the lines.
#pragma once
#include <cstdint>

#include "core/dtype.h"
#include "core/macros.h"
#include "ops/functors.h"

namespace dt::scan {

// Line `line` of a contiguous tensor viewed as [outer, n, inner]: y[k] = x[0] + ... + x[k]
// along n (from the end when `reverse`), summed in scan_acc_t (core/dtype.h), integers
// wrapping on overflow.
template <typename T>
DT_HD void cumsum_line(const T* x, T* y, int64_t line, int64_t n, int64_t inner, bool reverse) {
  using A = scan_acc_t<T>;
  const int64_t base = (line / inner) * n * inner + line % inner;
  A acc = A(0);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t at = base + (reverse ? n - 1 - k : k) * inner;
    acc = fn::wrap_add(acc, static_cast<A>(x[at]));
    y[at] = static_cast<T>(acc);
  }
}

}  // namespace dt::scan
