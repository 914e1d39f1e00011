// Predicates and boolean reductions (logical.cpp): torch.isnan / isinf / isfinite,
// logical_not / and / or / xor, any and all. Bool results, made from the comparison and
// reduction ops every backend has; never differentiable (autograd records nothing).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/tensor.h"

namespace dt::ops {

enum class Predicate { IsNan, IsInf, IsFinite };
// Elementwise; integer and bool tensors are never NaN or infinite.
Tensor predicate(Predicate p, const Tensor& a);

enum class LogicalOp { And, Or, Xor };
// a and b taken as truth values (nonzero: true; NaN is nonzero), broadcast together.
Tensor logical(LogicalOp op, const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);

// Whether any (all) element over dims (all when ndims == 0) is nonzero; over no
// element: false (true), the identities.
Tensor any_all(bool all, const Tensor& a, const int64_t* dims, size_t ndims, bool keepdim);

}  // namespace dt::ops
