// Losses of torch.nn: CrossEntropyLoss (class weights as a buffer, reductions,
// ignore_index, label smoothing), NLLLoss and MSELoss. forward takes (input, target).
#pragma once
#include "nn/module.h"

namespace dt::nn {

enum class Reduction { None = 0, Mean = 1, Sum = 2 };

Module* new_cross_entropy(const Tensor& weight, Reduction r, int64_t ignore_index, double label_smoothing);
Module* new_nll(const Tensor& weight, Reduction r, int64_t ignore_index);
Module* new_mse(Reduction r);

}  // namespace dt::nn
