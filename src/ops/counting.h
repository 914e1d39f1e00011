// Counting distinct values (counting.cpp): torch.unique (sorted, over the flattened
// tensor, with the inverse and the counts) and torch.bincount, made from a sort, the
// true positions of a mask (nonzero.h) and index_add, so every backend runs them. Each
// reads one small result back to the host (how many values, or the largest one), so it
// waits for the tensor's device. Not differentiable.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace dt::ops {

struct UniqueResult {
  Tensor values;   // 1-d, a's dtype, ascending (NaN last, each NaN its own value)
  Tensor inverse;  // int64, a's shape: the index into values of each element (when asked)
  Tensor counts;   // int64 [values]: how often each value occurs (when asked)
};
UniqueResult unique(const Tensor& a, bool want_inverse, bool want_counts);

// How often each value 0 .. max(x, minlength - 1) occurs in the 1-d integer tensor x, or
// the sum of its weights (a 1-d tensor of x's length; NULL: ones).
Tensor bincount(const Tensor& x, const Tensor* weights, int64_t minlength);

}  // namespace dt::ops
