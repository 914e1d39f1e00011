// Front end of the fused SGD step (KernelOp::SgdStep): which operands it takes, then one
// kernel per parameter. nn/optim.cpp decides when to use it.
#include "core/backend.h"
#include "core/error.h"
#include "core/registry.h"
#include "ops/ops.h"

namespace dt::ops {

bool sgd_step_fusable(const Tensor& param, const Tensor& grad, const Tensor* buf) {
  const DType d = param.dtype();
  // A read-only parameter is left to the unfused step, which refuses it before any write.
  if ((d != DType::Float32 && d != DType::Float64) || !param.is_contiguous() || param.storage()->read_only())
    return false;
  auto fits = [&](const Tensor& t) {
    return t.dtype() == d && t.device() == param.device() && t.shape() == param.shape() && t.is_contiguous() &&
           t.storage() != param.storage();
  };
  if (!fits(grad) || (buf && (!fits(*buf) || buf->storage() == grad.storage()))) return false;
  Backend* b = find_backend(param.device().type);
  return b && b->supports(code_of(KernelOp::SgdStep));
}

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor* buf, double lr, double momentum, bool fresh,
               bool nesterov) {
  if (!sgd_step_fusable(param, grad, buf))
    fail(DT_ERR_INVALID_ARGUMENT, "sgd_step_: the parameter, gradient and momentum buffer must be distinct contiguous "
                                  "float32 or float64 tensors of one dtype, shape and device");
  if (param.numel() == 0) return;
  param.storage()->begin_write("sgd_step", "_");
  if (buf) buf->storage()->begin_write("sgd_step", "_");
  OpArgs args{&param, &grad};
  if (buf) args.t[args.nt++] = buf;
  args.f[0] = lr;
  args.f[1] = momentum;
  args.i[0] = fresh ? 1 : 0;
  args.i[1] = nesterov ? 1 : 0;
  run_op(KernelOp::SgdStep, args);
}

}  // namespace dt::ops
