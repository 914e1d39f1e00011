// Where a tensor is nonzero (nonzero.cpp): torch.nonzero, and the flat positions of a
// bool vector's true elements that masked_select (nn/grad_masked.cpp) gathers. The count
// is read back to the host (the result's size depends on it), so these wait for the
// tensor's device; the rest is a cumsum and a scatter on the device, every backend.
#pragma once
#include <cstdint>
#include <utility>

#include "core/tensor.h"

namespace dt::ops {

// The positions (int64 [count], ascending) of the true elements of a 1-d bool tensor.
Tensor true_positions(const Tensor& mask);

// The smallest and largest element of a non-empty integer tensor, read back in one copy
// (one_hot's and bincount's range checks).
std::pair<int64_t, int64_t> host_min_max(const Tensor& a);

// torch.nonzero: the int64 [count, ndim] indices of a's nonzero elements (NaN is
// nonzero), in row-major order.
Tensor nonzero(const Tensor& a);

}  // namespace dt::ops
