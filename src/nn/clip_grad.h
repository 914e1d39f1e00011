// torch.nn.utils.clip_grad_norm_ and clip_grad_value_: scale or clamp parameters'
// gradients in place before an optimizer step.
#pragma once
#include <vector>

#include "core/tensor.h"

namespace dt::nn {

// The norm_type norm (infinity: the largest magnitude) of every gradient of params
// together, a 0-d tensor on the first gradient's device in its dtype (half and
// bfloat16 accumulate in float32; a float32 0 on the host when no parameter has a
// gradient); when it
// exceeds max_norm each gradient is scaled by max_norm / (norm + 1e-6). With
// error_if_nonfinite a NaN or infinite norm is INVALID_ARGUMENT before any gradient
// changes (that check reads the norm on the host, waiting for the device).
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type, bool error_if_nonfinite);
// Clamps each gradient of params to [-clip_value, clip_value] in place.
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace dt::nn
