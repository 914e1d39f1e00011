// Front end of ReLU's gradient in one kernel (KernelOp::ReluBackward): which operands it
// takes. nn/grad_elementwise.cpp uses it for ReluBackward0; the composed form (a fill for
// the scalar 0, the comparison, a zero tensor and a where: four calls, PyTorch's
// threshold_backward is one) remains for the rest. A training step of 16 Linear + ReLU
// layers made 64 of its 224 calls through a backend here.
#include "core/backend.h"
#include "core/error.h"
#include "core/registry.h"
#include "ops/ops.h"

namespace dt::ops {

bool relu_backward_fusable(const Tensor& o, const Tensor& g) {
  const DType d = o.dtype();
  if ((d != DType::Float32 && d != DType::Float64) || g.dtype() != d || g.device() != o.device() ||
      !(g.shape() == o.shape()) || !o.is_contiguous() || !g.is_contiguous())
    return false;
  Backend* b = find_backend(o.device().type);
  return b && b->supports(code_of(KernelOp::ReluBackward));
}

Tensor relu_backward(const Tensor& o, const Tensor& g) {
  if (!relu_backward_fusable(o, g))
    fail(DT_ERR_INVALID_ARGUMENT, "relu backward: the fused kernel takes a contiguous float32 or float64 output and "
                                  "gradient of one shape and device");
  Tensor out = empty(o.shape(), o.dtype(), o.device());
  if (o.numel() == 0) return out;
  OpArgs args{&out, &o, &g};
  run_op(KernelOp::ReluBackward, args);
  return out;
}

}  // namespace dt::ops
