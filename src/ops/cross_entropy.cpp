// Front end of the fused cross entropy (KernelOp::CrossEntropy and its backward): which
// operands they take. nn/losses.cpp uses them for CrossEntropyLoss without class weights
// or label smoothing on [N, C] logits, when the backend has both ops; the composed form
// (log_softmax, a gather, masks, sums) remains for the rest.
#include "core/backend.h"
#include "core/error.h"
#include "core/registry.h"
#include "ops/ops.h"

namespace dt::ops {

bool cross_entropy_fusable(const Tensor& x, const Tensor& target) {
  const DType d = x.dtype();
  if ((d != DType::Float32 && d != DType::Float64) || x.ndim() != 2 || x.size(1) == 0 || !x.is_contiguous())
    return false;
  if (target.dtype() != DType::Int64 || target.ndim() != 1 || target.size(0) != x.size(0) ||
      !target.is_contiguous() || target.device() != x.device())
    return false;
  Backend* b = find_backend(x.device().type);
  return b && b->supports(code_of(KernelOp::CrossEntropy)) && b->supports(code_of(KernelOp::CrossEntropyBackward));
}

namespace {
void require_fusable(const Tensor& x, const Tensor& target, int reduction, const char* what) {
  if (!cross_entropy_fusable(x, target))
    fail(DT_ERR_INVALID_ARGUMENT, cat(what, ": the fused kernel takes contiguous float32 or float64 logits [N, C] and "
                                            "int64 class indices [N] of one device"));
  if (reduction < 0 || reduction > 2) fail(DT_ERR_INVALID_ARGUMENT, cat(what, ": unknown reduction ", reduction));
}
}  // namespace

Tensor cross_entropy(const Tensor& x, const Tensor& target, int64_t ignore_index, int reduction, Tensor* lse,
                     Tensor* count) {
  require_fusable(x, target, reduction, "cross_entropy");
  const int64_t N = x.size(0);
  Tensor out = empty(reduction == 0 ? Dims{N} : Dims{}, x.dtype(), x.device());
  *lse = empty(Dims{N}, x.dtype(), x.device());
  *count = empty(Dims{}, x.dtype(), x.device());
  OpArgs args{&out, lse, count, &x, &target};
  args.i[0] = ignore_index;
  args.i[1] = reduction;
  run_op(KernelOp::CrossEntropy, args);
  return out;
}

Tensor cross_entropy_backward(const Tensor& g, const Tensor& x, const Tensor& lse, const Tensor& count,
                              const Tensor& target, int64_t ignore_index, int reduction) {
  require_fusable(x, target, reduction, "cross_entropy_backward");
  const Dims g_shape = reduction == 0 ? Dims{x.size(0)} : Dims{};
  if (!(g.shape() == g_shape) || g.dtype() != x.dtype() || g.device() != x.device())
    fail(DT_ERR_INVALID_ARGUMENT, cat("cross_entropy_backward: expected a gradient of shape ", dims_str(g_shape),
                                      " and the logits' dtype and device, got ", dims_str(g.shape())));
  Tensor gc = contiguous(g);
  Tensor gx = empty(x.shape(), x.dtype(), x.device());
  if (gx.numel() == 0) return gx;
  OpArgs args{&gx, &gc, &x, &lse, &count, &target};
  args.i[0] = ignore_index;
  args.i[1] = reduction;
  run_op(KernelOp::CrossEntropyBackward, args);
  return gx;
}

}  // namespace dt::ops
