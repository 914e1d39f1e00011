// The layers and containers of torch.nn that devtensor provides (losses: nn/losses.h).
#pragma once
#include <vector>

#include "nn/module.h"
#include "core/op_kinds.h"

namespace dt::nn {

Module* new_linear(int64_t in_features, int64_t out_features, bool bias, DType dtype, Device device);
Module* new_sequential(const std::vector<Ref<Module>>& modules);
// A module applying a unary op, named `kind` (PyTorch's class name: "ReLU", "GELU").
Module* new_activation(UnaryOp op, const char* kind);
Module* new_softmax(int64_t dim, bool log);
Module* new_dropout(double p);
Module* new_flatten(int64_t start_dim, int64_t end_dim);

}  // namespace dt::nn
