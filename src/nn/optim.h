// Optimizers: SGD (momentum, dampening, Nesterov, weight decay), Adam / AdamW, RMSprop
// and Adagrad, as torch.optim with its default (for-loop) update order. step() updates each parameter
// in place on its own device; its state (momentum buffer, moments) lives there too.
// A step is all or nothing: it first computes every new parameter value and state
// tensor (where it allocates, and can fail), then applies them with writes that
// allocate nothing; a failed step leaves parameters and state as they were. SGD without
// dampening and weight decay runs fused instead (ops::sgd_step_, one pass per parameter,
// the same bits), its checks and allocations also before any write; so do Adam,
// RMSprop and Adagrad where the backend has ops::adaptive_step_ (their state then
// updated in place).
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "core/refcounted.h"
#include "core/tensor.h"
#include "nn/module.h"  // Named
#include "ops/ops.h"    // AdaptiveKind

namespace dt::nn {

class Optimizer : public RefCounted {
 public:
  // A setting by PyTorch's name: a number or a flag (0/1), lr included (settings());
  // maximize is every optimizer's and lives here.
  struct Setting {
    const char* name;
    double* number;  // or
    bool* flag;
  };
  explicit Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {}
  virtual ~Optimizer() = default;
  static void destroy(Optimizer* o) { delete o; }
  // One step at a time per optimizer (its state is not shared between steps).
  void step() {
    std::lock_guard<std::mutex> lock(mu_);
    follow_parameters();
    if (!step_fused()) apply(plan());
  }
  void zero_grad();  // drops every gradient (PyTorch's set_to_none=True)
  const std::vector<Tensor>& params() const { return params_; }
  // The learning rate of the next step (PyTorch's param_groups[...]["lr"]); set_lr is
  // what a schedule calls between steps (INVALID_ARGUMENT when negative or NaN).
  double lr();
  void set_lr(double lr);
  // The settings of param_groups[0] by PyTorch's names (dt_optimizer_option): read one,
  // or set one for the steps that follow, checked with the others as the constructor
  // checks them (INVALID_ARGUMENT, nothing changed, on failure or an unknown name).
  double option(const std::string& name);
  void set_option(const std::string& name, double value);
  bool has_option(const std::string& name);
  // PyTorch's param_groups[0]["initial_lr"], what schedulers start from: the first
  // call sets it to the current rate (setdefault), or to `lr` for CyclicLR, which
  // PyTorch sets the rate to first; OneCycleLR sets it outright.
  double initial_lr();
  double initial_lr_or(double lr);
  void set_initial_lr(double lr);
  // "SGD", "Adam", ... for messages.
  const char* kind() const { return name(); }
  // The state for a checkpoint, as copies: every setting under its name (0-d float64,
  // PyTorch's param_groups) and, per parameter i with state, "state.<i>.<name>" under
  // PyTorch's names (momentum_buffer; step, exp_avg, exp_avg_sq), on the parameters'
  // devices; the step a 0-d float32 on the host.
  Named state_dict();
  // Restores such a state, all or nothing: the settings present are set and checked
  // together, then every key, shape and value is checked and every tensor converted
  // before the state changes (INVALID_ARGUMENT naming the key; the settings put back).
  void load_state_dict(const Named& entries);

 protected:
  // What one step writes, computed before anything is written: per parameter, the
  // value to subtract from it (after scaling it by `decay` when that is set, AdamW) and
  // the new state tensors.
  struct Update {
    size_t index;
    Tensor decayed;   // p * (1 - lr * weight_decay), or undefined
    Tensor subtract;  // then p -= subtract
    std::vector<Tensor> state;
  };
  virtual std::vector<Update> plan() = 0;
  // The whole step as one kernel per parameter, where the optimizer and the tensors
  // allow it (true: done); all or nothing too: it writes only once nothing can fail.
  virtual bool step_fused() { return false; }
  // Writes the planned values into the parameters (no allocation) and keeps the state.
  void apply(std::vector<Update> updates);
  virtual void keep_state(Update& u) = 0;
  // Moves the state of each parameter (momentum buffers, moments) to the parameter's
  // device when the module moved since the last step (dt_module_to), so that stepping
  // goes on where the parameters now are.
  virtual void follow_parameters() {}
  // state[i] on params_[i]'s device (a copy when it moves; undefined stays undefined).
  void follow(std::vector<Tensor>& state);

  // The fused step of Adam, RMSprop and Adagrad (ops::adaptive_step_), one kernel per
  // parameter with a gradient over its slots() state in slots()'s order (a missing
  // tensor made by initial_state) and its step_constants; taken only when every such
  // parameter is fusable, everything made before the first write, the state updated in
  // place and the step counts advanced. false: nothing done, the caller plans instead.
  bool fused_adaptive_step(ops::AdaptiveKind kind, int flags);
  // The constants of parameter i's next step, in ops::adaptive_step_'s order.
  virtual std::vector<double> step_constants(size_t /*i*/) { return {}; }
  // A state tensor for parameter p where there is none yet (zeros; Adagrad's initial sum).
  virtual Tensor initial_state(const Tensor& p) const;
  // NOT_SUPPORTED while p's device captures, for the optimizers that cannot be captured.
  virtual void refuse_capture(const Tensor& /*p*/) const {}

  virtual std::vector<Setting> settings() = 0;
  // The constructor's checks of the settings taken together (INVALID_ARGUMENT).
  virtual void check_settings() const = 0;
  // The gradient parameter i steps with: its .grad (undefined when none), negated under
  // maximize, as torch's maximize=True does first.
  Tensor step_grad(size_t i) const;
  bool maximize_ = false;

  // What checkpoints name and restore: the optimizer's name for messages ("SGD"), its
  // learning rate, its per-parameter state tensors under PyTorch's names, and its
  // per-parameter step counts (null when it keeps none).
  struct Slot {
    const char* name;
    std::vector<Tensor>* tensors;  // one per parameter, undefined before the first step
  };
  virtual const char* name() const = 0;
  virtual double& lr_slot() = 0;
  virtual std::vector<Slot> slots() = 0;
  virtual std::vector<int64_t>* step_counts() { return nullptr; }

  std::vector<Tensor> params_;

 private:
  // load_state_dict's per-parameter state, under mu_, with the new settings in place.
  void load_state_locked(const Named& entries, const std::vector<Setting>& settings);
  std::mutex mu_;
  double initial_lr_ = -1;  // < 0: not set yet
};

struct SgdOptions {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
};
struct AdamOptions {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled;        // AdamW
  bool amsgrad = false;  // set through set_option
};

struct RmspropOptions {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered;
};
struct AdagradOptions {
  double lr, lr_decay, weight_decay, initial_accumulator_value, eps;
};

Optimizer* new_sgd(std::vector<Tensor> params, const SgdOptions& o);
Optimizer* new_adam(std::vector<Tensor> params, const AdamOptions& o);
Optimizer* new_rmsprop(std::vector<Tensor> params, const RmspropOptions& o);  // optim_adaptive.cpp
Optimizer* new_adagrad(std::vector<Tensor> params, const AdagradOptions& o);  // optim_adaptive.cpp

// The constructors' checks of their settings (INVALID_ARGUMENT in PyTorch's words), also
// what set_option checks after a change.
void check_sgd_options(const SgdOptions& o);
void check_adam_options(const AdamOptions& o);
void check_rmsprop_options(const RmspropOptions& o);  // optim_adaptive.cpp
void check_adagrad_options(const AdagradOptions& o);  // optim_adaptive.cpp

// The value of a one-element state-dict entry as a double (optimizers' and schedulers'
// settings); INVALID_ARGUMENT naming the key otherwise.
double one_value(const std::string& key, const Tensor& t, const char* who);

// What every optimizer checks of its parameters (name: "SGD", ... for the message):
// floating leaves, each listed once (the constructors refuse an empty list after their
// own settings, as PyTorch's).
void check_params(const std::vector<Tensor>& params, const char* name);

}  // namespace dt::nn
