// Losses of torch.nn, forward taking (input, target): CrossEntropyLoss (class weights
// as a buffer, reductions, ignore_index, label smoothing), NLLLoss and MSELoss
// (losses.cpp); L1Loss, SmoothL1Loss, HuberLoss, BCELoss, BCEWithLogitsLoss and
// KLDivLoss (pointwise_losses.cpp).
#pragma once
#include "nn/module.h"

namespace dt::nn {

enum class Reduction { None = 0, Mean = 1, Sum = 2 };
// INVALID_ARGUMENT naming `kind` for a value outside the enum.
void check_reduction(Reduction r, const char* kind);

Module* new_cross_entropy(const Tensor& weight, Reduction r, int64_t ignore_index, double label_smoothing);
Module* new_nll(const Tensor& weight, Reduction r, int64_t ignore_index);
Module* new_mse(Reduction r);
Module* new_l1(Reduction r);
Module* new_smooth_l1(Reduction r, double beta);
Module* new_huber(Reduction r, double delta);
// weight and pos_weight (undefined: none) are copied into buffers of those names.
Module* new_bce(const Tensor& weight, Reduction r);
Module* new_bce_with_logits(const Tensor& weight, const Tensor& pos_weight, Reduction r);
// batchmean: PyTorch's reduction="batchmean" (r is then ignored).
Module* new_kl_div(Reduction r, bool batchmean, bool log_target);

}  // namespace dt::nn
