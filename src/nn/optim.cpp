#include "nn/optim.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/graph.h"
#include "nn/autograd.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

Tensor mul(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Mul, a, s); }
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Add, a, b); }


class Sgd final : public Optimizer {
 public:
  Sgd(std::vector<Tensor> params, const SgdOptions& o) : Optimizer(std::move(params)), o_(o), buf_(params_.size()) {}

 private:
  // ops::sgd_step_ per parameter: one pass over parameter, gradient and buffer, no
  // temporaries, the unfused step's bits. Taken without dampening and weight decay (its
  // kernel has room for two constants), when every parameter's tensors fit it.
  bool step_fused() override {
    if (o_.dampening != 0 || o_.weight_decay != 0) return false;
    const bool momentum = o_.momentum != 0;
    std::vector<Tensor> grads(params_.size());
    for (size_t i = 0; i < params_.size(); ++i) {
      grads[i] = step_grad(i);
      if (grads[i].defined() && !ops::sgd_step_fusable(params_[i], grads[i], buf_[i].defined() ? &buf_[i] : nullptr))
        return false;
    }
    // What can fail comes first: the first step's momentum buffers are allocated here.
    std::vector<Tensor> fresh(params_.size());
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!momentum || !grads[i].defined() || buf_[i].defined()) continue;
      refuse_first_momentum_capture(params_[i]);
      fresh[i] = ops::empty(params_[i].shape(), params_[i].dtype(), params_[i].device());
    }
    std::vector<ops::SgdItem> items;
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!grads[i].defined() || params_[i].numel() == 0) continue;
      const Tensor* buf = !momentum ? nullptr : fresh[i].defined() ? &fresh[i] : &buf_[i];
      items.push_back({&params_[i], &grads[i], buf, fresh[i].defined()});
    }
    if (one_call_fits(items)) {
      // One call for the lot (PyTorch's foreach step): 32 calls fewer for a 16-layer MLP.
      for (size_t at = 0; at < items.size(); at += kStepsPerCall) {
        const size_t end = std::min(items.size(), at + kStepsPerCall);
        ops::sgd_step_multi_(std::vector<ops::SgdItem>(items.begin() + at, items.begin() + end), o_.lr, o_.momentum,
                             o_.nesterov);
      }
    } else {
      for (const ops::SgdItem& it : items)
        ops::sgd_step_(*it.param, *it.grad, it.buf, o_.lr, o_.momentum, it.fresh, o_.nesterov);
    }
    for (size_t i = 0; i < params_.size(); ++i)
      if (fresh[i].defined()) buf_[i] = std::move(fresh[i]);
    return true;
  }

  // Parameters per multi-parameter call (a table row each: bounded so one launch's
  // arguments stay small).
  static constexpr size_t kStepsPerCall = 64;

  // Whether the step can go as multi-parameter calls: two or more parameters of one
  // device and dtype, a backend with the op, and no graph capturing (the op reads its
  // tensors by address, which a captured graph would not keep alive).
  static bool one_call_fits(const std::vector<ops::SgdItem>& items) {
    if (items.size() < 2) return false;
    const Tensor& first = *items[0].param;
    for (const ops::SgdItem& it : items)
      if (it.param->device() != first.device() || it.param->dtype() != first.dtype()) return false;
    return !capturing(first.device()) && ops::sgd_step_multi_offered(first.device());
  }

  void refuse_first_momentum_capture(const Tensor& p) const {
    if (capturing(p.device()))
      fail(DT_ERR_NOT_SUPPORTED,
           "SGD: a step captured into a graph needs the momentum buffers to exist (the first step sets them "
           "apart, and a replay repeats what was captured): run one step before the capture, as PyTorch's "
           "warm-up does");
  }

  std::vector<Update> plan() override {
    std::vector<Update> out;
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor& p = params_[i];
      Tensor g = step_grad(i);
      if (!g.defined()) continue;
      Update u{i, Tensor(), Tensor(), {}};
      if (o_.weight_decay != 0) g = add(g, mul(p, o_.weight_decay));
      if (o_.momentum != 0) {
        if (!buf_[i].defined()) refuse_first_momentum_capture(p);
        // buf = momentum * buf + (1 - dampening) * g; the first buffer is the gradient itself
        Tensor buf = buf_[i].defined() ? add(mul(buf_[i], o_.momentum), mul(g, 1.0 - o_.dampening))
                                       : ops::to(g, p.device(), p.dtype(), true);
        g = o_.nesterov ? add(g, mul(buf, o_.momentum)) : buf;
        u.state.push_back(buf);
      }
      u.subtract = mul(g, o_.lr);
      out.push_back(std::move(u));
    }
    return out;
  }
  void keep_state(Update& u) override {
    if (u.state.empty()) return;
    Tensor& buf = buf_[u.index];
    // A captured step writes the new momentum into the old buffer, so that each replay
    // reads the one the last replay wrote (core/graph.h); eagerly, the new one is kept.
    if (buf.defined() && capturing(buf.device())) ops::copy_(buf, u.state[0]);
    else buf = std::move(u.state[0]);
  }

  void follow_parameters() override { follow(buf_); }

  const char* name() const override { return "SGD"; }
  double& lr_slot() override { return o_.lr; }
  std::vector<Setting> settings() override {
    return {{"lr", &o_.lr, nullptr},           {"momentum", &o_.momentum, nullptr},
            {"dampening", &o_.dampening, nullptr}, {"weight_decay", &o_.weight_decay, nullptr},
            {"nesterov", nullptr, &o_.nesterov},   {"maximize", nullptr, &maximize_}};
  }
  void check_settings() const override { check_sgd_options(o_); }
  std::vector<Slot> slots() override {
    if (o_.momentum == 0) return {};
    return {{"momentum_buffer", &buf_}};
  }

  SgdOptions o_;
  std::vector<Tensor> buf_;
};

class Adam final : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& o)
      : Optimizer(std::move(params)),
        o_(o),
        m_(params_.size()),
        v_(params_.size()),
        v_max_(params_.size()),
        steps_(params_.size(), 0) {}

 private:
  void refuse_capture(const Tensor& p) const override {
    refuse_while_capturing(p.device(), o_.decoupled ? "AdamW step" : "Adam step",
                           "its step count and bias corrections live on the host, so every replay would repeat "
                           "one step's; capture SGD, or step Adam outside the graph");
  }

  // One kernel per parameter (ops::adaptive_step_): plan()'s bits, in one pass, with the
  // moments updated in place.
  bool step_fused() override {
    if (o_.amsgrad) return false;  // the kernel keeps two moments, not amsgrad's third
    int flags = 0;
    if (o_.weight_decay != 0) flags |= o_.decoupled ? ops::kDecoupledDecay : ops::kL2Decay;
    return fused_adaptive_step(ops::AdaptiveKind::Adam, flags);
  }
  std::vector<double> step_constants(size_t i) override {
    const double t = static_cast<double>(steps_[i] + 1);
    const double bc1 = 1.0 - std::pow(o_.beta1, t), bc2 = 1.0 - std::pow(o_.beta2, t);
    return {o_.weight_decay, o_.beta1, 1.0 - o_.beta1, o_.beta2, 1.0 - o_.beta2,
            std::sqrt(bc2), o_.eps, o_.lr / bc1, 1.0 - o_.lr * o_.weight_decay};
  }

  std::vector<Update> plan() override {
    std::vector<Update> out;
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor& p = params_[i];
      Tensor g = step_grad(i);
      if (!g.defined()) continue;
      refuse_capture(p);
      Update u{i, Tensor(), Tensor(), {}};
      const Tensor m0 = m_[i].defined() ? m_[i] : initial_state(p);
      const Tensor v0 = v_[i].defined() ? v_[i] : initial_state(p);
      const std::vector<double> c = step_constants(i);  // sqrt(bc2) at 5, lr / bc1 at 7
      if (o_.weight_decay != 0) {
        if (o_.decoupled) u.decayed = mul(p, 1.0 - o_.lr * o_.weight_decay);
        else g = add(g, mul(p, o_.weight_decay));
      }
      // m = b1 m + (1 - b1) g ; v = b2 v + (1 - b2) g^2
      Tensor m = add(mul(m0, o_.beta1), mul(g, 1.0 - o_.beta1));
      Tensor v = add(mul(v0, o_.beta2), mul(ops::binary(BinaryOp::Mul, g, g), 1.0 - o_.beta2));
      // amsgrad: v_max = max(v_max, v) normalises instead of v
      Tensor v_max;
      if (o_.amsgrad) v_max = ops::binary(BinaryOp::Maximum, v_max_[i].defined() ? v_max_[i] : initial_state(p), v);
      // p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps), in PyTorch's order of operations
      Tensor denom = ops::binary_scalar(
          BinaryOp::Add, ops::binary_scalar(BinaryOp::Div, ops::unary(UnaryOp::Sqrt, o_.amsgrad ? v_max : v), c[5]),
          o_.eps);
      u.subtract = mul(ops::binary(BinaryOp::Div, m, denom), c[7]);
      u.state = {m, v, v_max};
      out.push_back(std::move(u));
    }
    return out;
  }
  void keep_state(Update& u) override {
    m_[u.index] = std::move(u.state[0]);
    v_[u.index] = std::move(u.state[1]);
    if (u.state[2].defined()) v_max_[u.index] = std::move(u.state[2]);
    ++steps_[u.index];
  }

  void follow_parameters() override {
    follow(m_);
    follow(v_);
    follow(v_max_);
  }

  const char* name() const override { return o_.decoupled ? "AdamW" : "Adam"; }
  double& lr_slot() override { return o_.lr; }
  std::vector<Setting> settings() override {
    return {{"lr", &o_.lr, nullptr},       {"beta1", &o_.beta1, nullptr},
            {"beta2", &o_.beta2, nullptr}, {"eps", &o_.eps, nullptr},
            {"weight_decay", &o_.weight_decay, nullptr}, {"amsgrad", nullptr, &o_.amsgrad},
            {"maximize", nullptr, &maximize_}};
  }
  void check_settings() const override { check_adam_options(o_); }
  // PyTorch's order of a parameter's state: step, exp_avg, exp_avg_sq, max_exp_avg_sq.
  std::vector<Slot> slots() override {
    std::vector<Slot> s{{"exp_avg", &m_}, {"exp_avg_sq", &v_}};
    if (o_.amsgrad) s.push_back({"max_exp_avg_sq", &v_max_});
    return s;
  }
  std::vector<int64_t>* step_counts() override { return &steps_; }

  AdamOptions o_;
  std::vector<Tensor> m_, v_, v_max_;
  std::vector<int64_t> steps_;
};

}  // namespace

void check_params(const std::vector<Tensor>& params, const char* name) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (!is_floating(params[i].dtype()))
      fail(DT_ERR_DTYPE_MISMATCH, cat(name, ": can only optimize floating tensors, got ", dtype_name(params[i].dtype())));
    if (!ag::is_leaf(params[i]))
      fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": can't optimize a non-leaf tensor (params[", i, "] was computed by ",
                                        ag::grad_fn(params[i])->name(), "; pass the leaf it comes from)"));
    // A step plans every update from the parameters as they were, so one listed twice
    // would be updated twice from the same value (PyTorch deprecates this too).
    for (size_t j = 0; j < i; ++j)
      if (params[j].impl() == params[i].impl())
        fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": params[", i, "] is params[", j, "] again; list each tensor once"));
  }
}

void Optimizer::apply(std::vector<Update> updates) {
  // Same device, shape and dtype: copy_ and an in-place subtraction allocate nothing, so
  // once the first write happens the rest cannot run out of memory.
  for (Update& u : updates) {
    const Tensor& p = params_[u.index];
    if (u.decayed.defined()) ops::copy_(p, u.decayed);
    ops::binary_(BinaryOp::Sub, p, u.subtract);
  }
  for (Update& u : updates) keep_state(u);
}

Tensor Optimizer::initial_state(const Tensor& p) const { return ops::full(p.shape(), 0.0, p.dtype(), p.device()); }

bool Optimizer::fused_adaptive_step(ops::AdaptiveKind kind, int flags) {
  const std::vector<Slot> slots = this->slots();
  auto pointers = [](const std::vector<Tensor>& state) {
    std::vector<const Tensor*> out;
    for (const Tensor& t : state) out.push_back(&t);
    return out;
  };
  struct Item {
    size_t index;
    Tensor grad;
    std::vector<Tensor> state;  // slots()'s, in its order
    Tensor constants;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    Tensor g = step_grad(i);
    if (!g.defined()) continue;
    refuse_capture(p);
    Item item{i, std::move(g), {}, Tensor()};
    for (const Slot& s : slots) {
      const Tensor& held = (*s.tensors)[i];
      item.state.push_back(held.defined() ? held : initial_state(p));
    }
    if (!ops::adaptive_step_fusable(p, item.grad, pointers(item.state))) return false;
    item.constants = ops::adaptive_constants(step_constants(i));
    items.push_back(std::move(item));
  }
  for (const Item& it : items)
    ops::adaptive_step_(kind, flags, params_[it.index], it.grad, pointers(it.state), it.constants);
  std::vector<int64_t>* steps = step_counts();
  for (Item& it : items) {
    for (size_t k = 0; k < slots.size(); ++k) (*slots[k].tensors)[it.index] = std::move(it.state[k]);
    if (steps) ++(*steps)[it.index];
  }
  return true;
}

void Optimizer::follow(std::vector<Tensor>& state) {
  for (size_t i = 0; i < state.size(); ++i)
    if (state[i].defined() && state[i].device() != params_[i].device())
      state[i] = ops::to(state[i], params_[i].device(), state[i].dtype(), false);
}

void Optimizer::zero_grad() {
  for (const Tensor& p : params_) ag::set_grad(p, Tensor());
}

Tensor Optimizer::step_grad(size_t i) const {
  Tensor g = ag::grad(params_[i]);
  return maximize_ && g.defined() ? ops::unary(UnaryOp::Neg, g) : g;
}

void check_sgd_options(const SgdOptions& o) {
  if (!(o.lr >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat("SGD: invalid learning rate ", o.lr));
  if (!(o.momentum >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat("SGD: invalid momentum value ", o.momentum));
  if (!(o.weight_decay >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat("SGD: invalid weight_decay value ", o.weight_decay));
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
    fail(DT_ERR_INVALID_ARGUMENT, "SGD: Nesterov momentum requires a momentum and zero dampening");
}

void check_adam_options(const AdamOptions& o) {
  const char* name = o.decoupled ? "AdamW" : "Adam";
  if (!(o.lr >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid learning rate ", o.lr));
  if (!(o.eps >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid epsilon value ", o.eps));
  if (!(o.beta1 >= 0 && o.beta1 < 1)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid beta parameter at index 0: ", o.beta1));
  if (!(o.beta2 >= 0 && o.beta2 < 1)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid beta parameter at index 1: ", o.beta2));
  if (!(o.weight_decay >= 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": invalid weight_decay value ", o.weight_decay));
}

Optimizer* new_sgd(std::vector<Tensor> params, const SgdOptions& o) {
  check_params(params, "SGD");
  check_sgd_options(o);
  if (params.empty()) fail(DT_ERR_INVALID_ARGUMENT, "SGD: optimizer got an empty parameter list");
  return new Sgd(std::move(params), o);
}

Optimizer* new_adam(std::vector<Tensor> params, const AdamOptions& o) {
  const char* name = o.decoupled ? "AdamW" : "Adam";
  check_params(params, name);
  check_adam_options(o);
  if (params.empty()) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": optimizer got an empty parameter list"));
  return new Adam(std::move(params), o);
}

}  // namespace dt::nn
