// Tensors with a fixed structure (structured.cpp): torch.linspace, torch.eye and
// torch.nn.functional.one_hot, made from aranges, comparisons and casts every backend
// has. Not differentiable.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace dt::ops {

// steps values from start to end, both included, by PyTorch's two-sided formula.
Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device);

// n x m, ones on the diagonal.
Tensor eye(int64_t n, int64_t m, DType dtype, Device device);

// int64 [..., num_classes], 1 at each int64 index's class; num_classes -1: max + 1.
Tensor one_hot(const Tensor& indices, int64_t num_classes);

}  // namespace dt::ops
