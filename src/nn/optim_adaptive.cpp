// RMSprop and Adagrad (optim.h), as torch.optim.RMSprop / Adagrad with their default
// (for-loop) update: the same order of operations, the same state under the same names
// (square_avg, momentum_buffer, grad_avg; sum), the same validation. Like Adam
// (optim.cpp), each step runs as one kernel per parameter where the backend has
// KernelOp::AdaptiveStep (the CPU), and as a plan of plain ops elsewhere, with the same
// bits; and like Adam they keep a step count on the host, so neither can be captured
// into a graph.
#include <cmath>

#include "core/error.h"
#include "core/graph.h"
#include "nn/autograd.h"
#include "nn/optim.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

Tensor mul(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Mul, a, s); }
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Add, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Div, a, b); }
Tensor square(const Tensor& a) { return ops::binary(BinaryOp::Mul, a, a); }

const char kNoCapture[] =
    "its step count lives on the host, so every replay would repeat one step's; capture SGD, or step outside "
    "the graph";

class Rmsprop final : public Optimizer {
 public:
  Rmsprop(std::vector<Tensor> params, const RmspropOptions& o)
      : Optimizer(std::move(params)),
        o_(o),
        square_avg_(params_.size()),
        momentum_buffer_(params_.size()),
        grad_avg_(params_.size()),
        steps_(params_.size(), 0) {}

 private:
  void refuse_capture(const Tensor& p) const override {
    refuse_while_capturing(p.device(), "RMSprop step", kNoCapture);
  }

  // One kernel per parameter (ops::adaptive_step_): plan()'s bits in one pass, the state
  // (slots(): square_avg, then the momentum buffer and grad_avg as kept) in place.
  bool step_fused() override {
    const int flags = (o_.weight_decay != 0 ? ops::kL2Decay : 0) | (o_.centered ? ops::kCentered : 0) |
                      (o_.momentum > 0 ? ops::kMomentum : 0);
    return fused_adaptive_step(ops::AdaptiveKind::Rmsprop, flags);
  }
  std::vector<double> step_constants(size_t) override {
    return {o_.weight_decay, o_.alpha, 1.0 - o_.alpha, o_.eps, o_.momentum, o_.lr};
  }

  std::vector<Update> plan() override {
    std::vector<Update> out;
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor& p = params_[i];
      Tensor g = step_grad(i);
      if (!g.defined()) continue;
      refuse_capture(p);
      Update u{i, Tensor(), Tensor(), {}};
      if (o_.weight_decay != 0) g = add(g, mul(p, o_.weight_decay));
      // square_avg = alpha * square_avg + (1 - alpha) * g^2
      const Tensor sq0 = square_avg_[i].defined() ? square_avg_[i] : initial_state(p);
      Tensor sq = add(mul(sq0, o_.alpha), mul(square(g), 1.0 - o_.alpha));
      Tensor avg;
      Tensor grad_avg;
      if (o_.centered) {
        // grad_avg = alpha * grad_avg + (1 - alpha) * g; avg = sqrt(square_avg - grad_avg^2)
        const Tensor ga0 = grad_avg_[i].defined() ? grad_avg_[i] : initial_state(p);
        grad_avg = add(mul(ga0, o_.alpha), mul(g, 1.0 - o_.alpha));
        avg = ops::unary(UnaryOp::Sqrt, ops::binary(BinaryOp::Sub, sq, square(grad_avg)));
      } else {
        avg = ops::unary(UnaryOp::Sqrt, sq);
      }
      avg = ops::binary_scalar(BinaryOp::Add, avg, o_.eps);
      Tensor buf;
      if (o_.momentum > 0) {
        // buf = momentum * buf + g / avg; p -= lr * buf
        const Tensor b0 = momentum_buffer_[i].defined() ? momentum_buffer_[i] : initial_state(p);
        buf = add(mul(b0, o_.momentum), div(g, avg));
        u.subtract = mul(buf, o_.lr);
      } else {
        u.subtract = mul(div(g, avg), o_.lr);
      }
      u.state = {sq, buf, grad_avg};
      out.push_back(std::move(u));
    }
    return out;
  }
  void keep_state(Update& u) override {
    square_avg_[u.index] = std::move(u.state[0]);
    if (u.state[1].defined()) momentum_buffer_[u.index] = std::move(u.state[1]);
    if (u.state[2].defined()) grad_avg_[u.index] = std::move(u.state[2]);
    ++steps_[u.index];
  }

  void follow_parameters() override {
    follow(square_avg_);
    follow(momentum_buffer_);
    follow(grad_avg_);
  }

  const char* name() const override { return "RMSprop"; }
  double& lr_slot() override { return o_.lr; }
  std::vector<Setting> settings() override {
    return {{"lr", &o_.lr, nullptr},
            {"alpha", &o_.alpha, nullptr},
            {"eps", &o_.eps, nullptr},
            {"weight_decay", &o_.weight_decay, nullptr},
            {"momentum", &o_.momentum, nullptr},
            {"centered", nullptr, &o_.centered},
            {"maximize", nullptr, &maximize_}};
  }
  void check_settings() const override { check_rmsprop_options(o_); }
  // PyTorch's order of a parameter's state: step, square_avg, momentum_buffer, grad_avg.
  std::vector<Slot> slots() override {
    std::vector<Slot> s{{"square_avg", &square_avg_}};
    if (o_.momentum > 0) s.push_back({"momentum_buffer", &momentum_buffer_});
    if (o_.centered) s.push_back({"grad_avg", &grad_avg_});
    return s;
  }
  std::vector<int64_t>* step_counts() override { return &steps_; }

  RmspropOptions o_;
  std::vector<Tensor> square_avg_, momentum_buffer_, grad_avg_;
  std::vector<int64_t> steps_;
};

class Adagrad final : public Optimizer {
 public:
  // As PyTorch's, the sums exist from the start (filled with initial_accumulator_value),
  // so a state dict taken before the first step already holds them, with step 0.
  Adagrad(std::vector<Tensor> params, const AdagradOptions& o)
      : Optimizer(std::move(params)), o_(o), sum_(params_.size()), steps_(params_.size(), 0) {
    for (size_t i = 0; i < params_.size(); ++i) sum_[i] = initial_state(params_[i]);
  }

 private:
  void refuse_capture(const Tensor& p) const override {
    refuse_while_capturing(p.device(), "Adagrad step", kNoCapture);
  }
  // A sum filled with initial_accumulator_value (a state dict loaded without a
  // parameter's entry leaves its sum undefined: it starts again from this).
  Tensor initial_state(const Tensor& p) const override {
    return ops::full(p.shape(), o_.initial_accumulator_value, p.dtype(), p.device());
  }

  // One kernel per parameter (ops::adaptive_step_): plan()'s bits in one pass, the sum
  // updated in place.
  bool step_fused() override {
    return fused_adaptive_step(ops::AdaptiveKind::Adagrad, o_.weight_decay != 0 ? ops::kL2Decay : 0);
  }
  std::vector<double> step_constants(size_t i) override {
    const double step = static_cast<double>(steps_[i] + 1);
    return {o_.weight_decay, o_.eps, o_.lr / (1 + (step - 1) * o_.lr_decay)};
  }

  std::vector<Update> plan() override {
    std::vector<Update> out;
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor& p = params_[i];
      Tensor g = step_grad(i);
      if (!g.defined()) continue;
      refuse_capture(p);
      Update u{i, Tensor(), Tensor(), {}};
      if (o_.weight_decay != 0) g = add(g, mul(p, o_.weight_decay));
      const double clr = step_constants(i)[2];  // lr / (1 + (step - 1) * lr_decay)
      // sum += g^2; p -= clr * g / (sqrt(sum) + eps). (A state dict loaded without this
      // parameter's entry leaves its sum undefined: it starts again from the initial value.)
      const Tensor sum0 = sum_[i].defined() ? sum_[i] : initial_state(p);
      Tensor sum = add(sum0, square(g));
      Tensor std_dev = ops::binary_scalar(BinaryOp::Add, ops::unary(UnaryOp::Sqrt, sum), o_.eps);
      u.subtract = mul(div(g, std_dev), clr);
      u.state = {sum};
      out.push_back(std::move(u));
    }
    return out;
  }
  void keep_state(Update& u) override {
    sum_[u.index] = std::move(u.state[0]);
    ++steps_[u.index];
  }

  void follow_parameters() override { follow(sum_); }

  const char* name() const override { return "Adagrad"; }
  double& lr_slot() override { return o_.lr; }
  std::vector<Setting> settings() override {
    return {{"lr", &o_.lr, nullptr},
            {"lr_decay", &o_.lr_decay, nullptr},
            {"weight_decay", &o_.weight_decay, nullptr},
            {"eps", &o_.eps, nullptr},
            {"initial_accumulator_value", &o_.initial_accumulator_value, nullptr},
            {"maximize", nullptr, &maximize_}};
  }
  void check_settings() const override { check_adagrad_options(o_); }
  std::vector<Slot> slots() override { return {{"sum", &sum_}}; }
  std::vector<int64_t>* step_counts() override { return &steps_; }

  AdagradOptions o_;
  std::vector<Tensor> sum_;
  std::vector<int64_t> steps_;
};

// value >= 0 (NaN fails), or INVALID_ARGUMENT in PyTorch's words.
void require_non_negative(const char* who, const char* what, double value) {
  if (!(value >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": invalid ", what, " ", value));
}

}  // namespace

void check_rmsprop_options(const RmspropOptions& o) {
  require_non_negative("RMSprop", "learning rate", o.lr);
  require_non_negative("RMSprop", "epsilon value", o.eps);
  require_non_negative("RMSprop", "momentum value", o.momentum);
  require_non_negative("RMSprop", "weight_decay value", o.weight_decay);
  require_non_negative("RMSprop", "alpha value", o.alpha);
}

void check_adagrad_options(const AdagradOptions& o) {
  require_non_negative("Adagrad", "learning rate", o.lr);
  require_non_negative("Adagrad", "lr_decay value", o.lr_decay);
  require_non_negative("Adagrad", "weight_decay value", o.weight_decay);
  require_non_negative("Adagrad", "initial_accumulator_value", o.initial_accumulator_value);
  require_non_negative("Adagrad", "epsilon value", o.eps);
}

Optimizer* new_rmsprop(std::vector<Tensor> params, const RmspropOptions& o) {
  check_params(params, "RMSprop");
  check_rmsprop_options(o);
  if (params.empty()) fail(DT_ERR_INVALID_ARGUMENT, "RMSprop: optimizer got an empty parameter list");
  return new Rmsprop(std::move(params), o);
}

Optimizer* new_adagrad(std::vector<Tensor> params, const AdagradOptions& o) {
  check_params(params, "Adagrad");
  check_adagrad_options(o);
  if (params.empty()) fail(DT_ERR_INVALID_ARGUMENT, "Adagrad: optimizer got an empty parameter list");
  return new Adagrad(std::move(params), o);
}

}  // namespace dt::nn
