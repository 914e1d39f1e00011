// Random sampling (sampling.cpp): torch.randint, randperm and multinomial, made from the
// float64 uniforms every backend draws bit-identically (random_value.h) and ops every
// backend has, so one seed gives the same integers, permutation and draws on every
// device. Nothing here is differentiable.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace dt::ops {

// Integers in [low, high): low + floor(u * (high - low)) for element i's float64 uniform
// u. The range may be at most 2^53 wide, and dtype must hold low and high - 1 exactly.
Tensor randint(int64_t low, int64_t high, const Dims& shape, DType dtype, Device device);

// 0 .. n-1 in the order of a stable sort of n float64 uniforms.
Tensor randperm(int64_t n, DType dtype, Device device);

// num_samples category indices (int64) per row of probs ([C] or [R, C] weights).
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement);

}  // namespace dt::ops
