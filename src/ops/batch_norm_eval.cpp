// Front end of batch norm with fixed statistics in one kernel (KernelOp::BatchNormEval):
// which operands it takes. nn/grad_norm.cpp decides when to use it; the unfused ops (seven
// calls on the [C] vectors, a fill for eps among them, and two passes over x) remain for
// the rest. On a GPU this is one launch per layer instead of nine.
#include "core/backend.h"
#include "core/error.h"
#include "core/registry.h"
#include "ops/ops.h"

namespace dt::ops {

bool batch_norm_eval_fusable(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor& weight,
                             const Tensor& bias) {
  const DType d = x.dtype();
  if ((d != DType::Float32 && d != DType::Float64) || x.ndim() < 2 || !x.is_contiguous()) return false;
  const Dims c{x.size(1)};
  auto fits = [&](const Tensor& t) {
    return t.dtype() == d && t.device() == x.device() && t.shape() == c && t.is_contiguous();
  };
  if (!fits(mean) || !fits(var) || (weight.defined() && !fits(weight)) || (bias.defined() && !fits(bias)))
    return false;
  Backend* b = find_backend(x.device().type);
  return b && b->supports(code_of(KernelOp::BatchNormEval));
}

Tensor batch_norm_eval(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor& weight, const Tensor& bias,
                       double eps) {
  if (!batch_norm_eval_fusable(x, mean, var, weight, bias))
    fail(DT_ERR_INVALID_ARGUMENT, "batch_norm (eval): the fused kernel takes a contiguous float32 or float64 input "
                                  "and contiguous [C] statistics, weight and bias of its dtype and device");
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  if (x.numel() == 0) return out;
  OpArgs args{&out, &x, &mean, &var};
  if (weight.defined()) args.t[args.nt++] = &weight;
  if (bias.defined()) args.t[args.nt++] = &bias;
  args.f[0] = eps;
  args.i[0] = weight.defined() ? 1 : 0;
  args.i[1] = bias.defined() ? 1 : 0;
  run_op(KernelOp::BatchNormEval, args);
  return out;
}

}  // namespace dt::ops
