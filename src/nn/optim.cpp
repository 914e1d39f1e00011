#include "nn/optim.h"

#include <cmath>

#include "core/error.h"
#include "nn/autograd.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

Tensor mul(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Mul, a, s); }
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Add, a, b); }
void add_(const Tensor& a, const Tensor& b) { ops::binary_(BinaryOp::Add, a, b); }
void sub_(const Tensor& a, const Tensor& b) { ops::binary_(BinaryOp::Sub, a, b); }

void check_params(const std::vector<Tensor>& params, const char* name) {
  for (const Tensor& p : params)
    if (!is_floating(p.dtype()))
      fail(DT_ERR_DTYPE_MISMATCH, cat(name, ": can only optimize floating tensors, got ", dtype_name(p.dtype())));
}

class Sgd final : public Optimizer {
 public:
  Sgd(std::vector<Tensor> params, const SgdOptions& o) : Optimizer(std::move(params)), o_(o), buf_(params_.size()) {}
  void step() override {
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor& p = params_[i];
      Tensor g = ag::grad(p);
      if (!g.defined()) continue;
      if (o_.weight_decay != 0) g = add(g, mul(p, o_.weight_decay));
      if (o_.momentum != 0) {
        if (!buf_[i].defined()) {
          buf_[i] = ops::to(g, p.device(), p.dtype(), true);  // the first buffer is the gradient itself
        } else {
          ops::binary_scalar_(BinaryOp::Mul, buf_[i], o_.momentum);
          add_(buf_[i], mul(g, 1.0 - o_.dampening));
        }
        g = o_.nesterov ? add(g, mul(buf_[i], o_.momentum)) : buf_[i];
      }
      sub_(p, mul(g, o_.lr));
    }
  }

 private:
  SgdOptions o_;
  std::vector<Tensor> buf_;
};

class Adam final : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& o)
      : Optimizer(std::move(params)), o_(o), m_(params_.size()), v_(params_.size()), steps_(params_.size(), 0) {}
  void step() override {
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor& p = params_[i];
      Tensor g = ag::grad(p);
      if (!g.defined()) continue;
      if (!m_[i].defined()) {
        m_[i] = ops::full(p.shape(), 0.0, p.dtype(), p.device());
        v_[i] = ops::full(p.shape(), 0.0, p.dtype(), p.device());
      }
      const double t = static_cast<double>(++steps_[i]);
      if (o_.weight_decay != 0) {
        if (o_.decoupled) ops::binary_scalar_(BinaryOp::Mul, p, 1.0 - o_.lr * o_.weight_decay);
        else g = add(g, mul(p, o_.weight_decay));
      }
      // m = b1 m + (1 - b1) g ; v = b2 v + (1 - b2) g^2
      ops::binary_scalar_(BinaryOp::Mul, m_[i], o_.beta1);
      add_(m_[i], mul(g, 1.0 - o_.beta1));
      ops::binary_scalar_(BinaryOp::Mul, v_[i], o_.beta2);
      add_(v_[i], mul(ops::binary(BinaryOp::Mul, g, g), 1.0 - o_.beta2));
      const double bc1 = 1.0 - std::pow(o_.beta1, t), bc2 = 1.0 - std::pow(o_.beta2, t);
      // p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps), in PyTorch's order of operations
      Tensor denom = ops::binary_scalar(BinaryOp::Add,
                                        ops::binary_scalar(BinaryOp::Div, ops::unary(UnaryOp::Sqrt, v_[i]), std::sqrt(bc2)),
                                        o_.eps);
      sub_(p, mul(ops::binary(BinaryOp::Div, m_[i], denom), o_.lr / bc1));
    }
  }

 private:
  AdamOptions o_;
  std::vector<Tensor> m_, v_;
  std::vector<int64_t> steps_;
};

}  // namespace

void Optimizer::zero_grad() {
  for (const Tensor& p : params_) ag::set_grad(p, Tensor());
}

Optimizer* new_sgd(std::vector<Tensor> params, const SgdOptions& o) {
  check_params(params, "SGD");
  if (!(o.lr >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat("SGD: invalid learning rate ", o.lr));
  if (!(o.momentum >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat("SGD: invalid momentum value ", o.momentum));
  if (!(o.weight_decay >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat("SGD: invalid weight_decay value ", o.weight_decay));
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
    fail(DT_ERR_INVALID_ARGUMENT, "SGD: Nesterov momentum requires a momentum and zero dampening");
  return new Sgd(std::move(params), o);
}

Optimizer* new_adam(std::vector<Tensor> params, const AdamOptions& o) {
  const char* name = o.decoupled ? "AdamW" : "Adam";
  check_params(params, name);
  if (!(o.lr >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid learning rate ", o.lr));
  if (!(o.eps >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid epsilon value ", o.eps));
  if (!(o.beta1 >= 0 && o.beta1 < 1)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid beta parameter at index 0: ", o.beta1));
  if (!(o.beta2 >= 0 && o.beta2 < 1)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid beta parameter at index 1: ", o.beta2));
  if (!(o.weight_decay >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid weight_decay value ", o.weight_decay));
  return new Adam(std::move(params), o);
}

}  // namespace dt::nn
