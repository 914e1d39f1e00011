// Gradient clipping in PyTorch's order of operations: a norm per gradient (on its own
// device, accumulated in float32 for half and bfloat16), the norm of those norms on the
// first gradient's device, then one in-place product per gradient with the clamped
// coefficient, all as device ops that never wait for the device (so a captured training
// step can include them) unless error_if_nonfinite asks to look at the norm.
#include "nn/clip_grad.h"

#include <cmath>

#include "core/error.h"
#include "nn/autograd.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

std::vector<Tensor> gradients(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;
  for (const Tensor& p : params) {
    Tensor g = ag::grad(p);
    if (g.defined()) grads.push_back(std::move(g));
  }
  return grads;
}

DType accumulation_dtype(DType d) { return d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d; }

// The p-norm of t (flattened) as a 0-d tensor; p infinite: the largest |t|.
Tensor norm(const Tensor& t, double p) {
  const Tensor a = ops::unary(UnaryOp::Abs, ops::to(t, t.device(), accumulation_dtype(t.dtype()), false));
  if (std::isinf(p))
    return t.numel() == 0 ? ops::full(Dims{}, 0.0, a.dtype(), a.device())
                          : ops::reduce(ReduceOp::Max, a, nullptr, 0, false);
  if (p == 1) return ops::reduce(ReduceOp::Sum, a, nullptr, 0, false);
  if (p == 2)
    return ops::unary(UnaryOp::Sqrt, ops::reduce(ReduceOp::Sum, ops::binary(BinaryOp::Mul, a, a), nullptr, 0, false));
  const Tensor sum = ops::reduce(ReduceOp::Sum, ops::binary_scalar(BinaryOp::Pow, a, p), nullptr, 0, false);
  return ops::binary_scalar(BinaryOp::Pow, sum, 1.0 / p);
}

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type, bool error_if_nonfinite) {
  if (!(max_norm >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat("clip_grad_norm_: max_norm must be >= 0, got ", max_norm));
  if (!(norm_type > 0))
    fail(DT_ERR_INVALID_ARGUMENT, cat("clip_grad_norm_: norm_type must be positive (or infinity), got ", norm_type));
  const std::vector<Tensor> grads = gradients(params);
  if (grads.empty()) return ops::full(Dims{}, 0.0, DType::Float32, Device{DT_DEVICE_CPU, 0});
  const Device home = grads[0].device();
  const DType acc = accumulation_dtype(grads[0].dtype());
  std::vector<Tensor> norms;
  norms.reserve(grads.size());
  for (const Tensor& g : grads) norms.push_back(ops::to(norm(g, norm_type), home, acc, false));
  Tensor total = norms.size() == 1 ? norms[0] : norm(ops::stack(norms, 0), norm_type);
  total = ops::to(total, home, grads[0].dtype(), false);
  if (error_if_nonfinite) {
    const double v = *ops::to(total, Device{DT_DEVICE_CPU, 0}, DType::Float64, true).data_as<double>();
    if (!std::isfinite(v))
      fail(DT_ERR_INVALID_ARGUMENT,
           cat("clip_grad_norm_: the total norm of order ", norm_type, " of the gradients is ", v,
               ", so they cannot be clipped (error_if_nonfinite is set; pass 0 to scale them anyway)"));
  }
  // min(max_norm / (total + 1e-6), 1), as PyTorch's clamp of the coefficient.
  Tensor coef = ops::binary(BinaryOp::Div, ops::full(Dims{}, max_norm, total.dtype(), home),
                            ops::binary_scalar(BinaryOp::Add, total, 1e-6));
  coef = ops::binary_scalar(BinaryOp::Minimum, coef, 1.0);
  // Every coefficient is made before the first gradient changes.
  std::vector<Tensor> coefs;
  coefs.reserve(grads.size());
  for (const Tensor& g : grads) coefs.push_back(ops::to(coef, g.device(), g.dtype(), false));
  for (size_t i = 0; i < grads.size(); ++i) ops::binary_(BinaryOp::Mul, grads[i], coefs[i]);
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  if (!(clip_value >= 0))
    fail(DT_ERR_INVALID_ARGUMENT, cat("clip_grad_value_: clip_value must be >= 0, got ", clip_value));
  for (const Tensor& g : gradients(params)) {
    ops::binary_scalar_(BinaryOp::Maximum, g, -clip_value);
    ops::binary_scalar_(BinaryOp::Minimum, g, clip_value);
  }
}

}  // namespace dt::nn
