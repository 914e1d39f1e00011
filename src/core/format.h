// PyTorch's printed form of a tensor (repr / str), re-implemented: the same element
// formatting (precision 4, integer mode, scientific mode, common width), summarisation
// of tensors with more than 1000 elements (3 edge items), 80-column line wrapping,
// nested brackets, and the device=, dtype=, size= and autograd suffixes.
#pragma once
#include <string>

#include "core/device.h"
#include "core/tensor.h"

namespace dt {

// t must be readable on the host (a CPU tensor; any strides, offset and dtype).
// shown_device is the device printed in the suffix: the C shim copies a GPU tensor to
// the host and passes the original device. The suffix is omitted only for cpu:0; any
// other device prints as device='cuda:1' / device='cpu:2'. The dtype suffix follows
// PyTorch: omitted for the process default dtype (dt::default_dtype()), int64 and bool,
// except that an empty tensor omits it only for the default dtype.
// autograd_suffix, when not empty, comes last: "grad_fn=<MulBackward0>" for a result
// autograd recorded, "requires_grad=True" for a leaf that requires grad (the caller
// knows which: the printed tensor may be a host copy).
std::string format_tensor(const Tensor& t, Device shown_device, const std::string& autograd_suffix = "");

}  // namespace dt
