// Front end of the fused SGD step (KernelOp::SgdStep): which operands it takes, then one
// kernel per parameter; of its multi-parameter form (KernelOp::SgdStepMulti: one call
// for many parameters, from a table of their addresses); and of the fused Adam, RMSprop
// and Adagrad step (KernelOp::AdaptiveStep). nn/optim*.cpp decide when.
#include <algorithm>

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

bool sgd_step_multi_offered(Device device) {
  Backend* b = find_backend(device.type);
  return b && b->supports(code_of(KernelOp::SgdStepMulti));
}

void sgd_step_multi_(const std::vector<SgdItem>& items, double lr, double momentum, bool nesterov) {
  if (items.empty()) return;
  const Tensor& first = *items[0].param;
  for (const SgdItem& it : items)
    if (!sgd_step_fusable(*it.param, *it.grad, it.buf) || it.param->device() != first.device() ||
        it.param->dtype() != first.dtype())
      fail(DT_ERR_INVALID_ARGUMENT, "sgd_step_multi_: every parameter, gradient and momentum buffer must be a distinct "
                                    "contiguous tensor of the first parameter's dtype (float32 or float64) and device");
  // The table of addresses the backend walks (plugin_abi.h, DTP_OP_SgdStepMulti).
  Tensor table = empty(Dims{static_cast<int64_t>(items.size()), 5}, DType::Int64, Device{DT_DEVICE_CPU, 0});
  int64_t* row = table.data_as<int64_t>();
  for (const SgdItem& it : items) {
    it.param->storage()->begin_write("sgd_step", "_");
    if (it.buf) it.buf->storage()->begin_write("sgd_step", "_");
    row[0] = reinterpret_cast<int64_t>(it.param->data());
    row[1] = reinterpret_cast<int64_t>(it.grad->data());
    row[2] = it.buf ? reinterpret_cast<int64_t>(it.buf->data()) : 0;
    row[3] = it.param->numel();
    row[4] = it.fresh ? 1 : 0;
    row += 5;
  }
  OpArgs args{&first, &table};
  args.f[0] = lr;
  args.f[1] = momentum;
  args.i[0] = nesterov ? 1 : 0;
  run_op(KernelOp::SgdStepMulti, args);
}

bool adaptive_step_fusable(const Tensor& param, const Tensor& grad, const std::vector<const Tensor*>& state) {
  const DType d = param.dtype();
  if ((d != DType::Float32 && d != DType::Float64) || !param.is_contiguous() || param.storage()->read_only())
    return false;
  std::vector<const Tensor*> all{&grad};
  all.insert(all.end(), state.begin(), state.end());
  for (size_t k = 0; k < all.size(); ++k) {
    const Tensor& t = *all[k];
    if (t.dtype() != d || t.device() != param.device() || t.shape() != param.shape() || !t.is_contiguous() ||
        t.storage() == param.storage())
      return false;
    for (size_t j = 0; j < k; ++j)
      if (all[j]->storage() == t.storage()) return false;
  }
  Backend* b = find_backend(param.device().type);
  return b && b->supports(code_of(KernelOp::AdaptiveStep));
}

Tensor adaptive_constants(const std::vector<double>& values) {
  Tensor t = empty(Dims{static_cast<int64_t>(values.size())}, DType::Float64, Device{DT_DEVICE_CPU, 0});
  std::copy(values.begin(), values.end(), t.data_as<double>());
  return t;
}

void adaptive_step_(AdaptiveKind kind, int flags, const Tensor& param, const Tensor& grad,
                    const std::vector<const Tensor*>& state, const Tensor& constants) {
  if (!adaptive_step_fusable(param, grad, state) || state.empty() || state.size() > 3)
    fail(DT_ERR_INVALID_ARGUMENT, "adaptive_step_: the parameter, gradient and state must be distinct contiguous "
                                  "float32 or float64 tensors of one dtype, shape and device");
  if (constants.dtype() != DType::Float64 || constants.device().type != DT_DEVICE_CPU || !constants.is_contiguous())
    fail(DT_ERR_INVALID_ARGUMENT, "adaptive_step_: the constants must be a contiguous float64 tensor on the host");
  if (param.numel() == 0) return;
  param.storage()->begin_write("adaptive_step", "_");
  for (const Tensor* t : state) t->storage()->begin_write("adaptive_step", "_");
  OpArgs args{&param, &grad, &constants};
  for (const Tensor* t : state) args.t[args.nt++] = t;
  args.i[0] = static_cast<int64_t>(kind);
  args.i[1] = flags;
  run_op(KernelOp::AdaptiveStep, args);
}

}  // namespace dt::ops
