// Optimizers: SGD (momentum, dampening, Nesterov, weight decay) and Adam / AdamW, as
// torch.optim with its default (for-loop) update order. step() updates each parameter
// in place on its own device; its state (momentum buffer, moments) lives there too.
// A step is all or nothing: it first computes every new parameter value and state
// tensor (where it allocates, and can fail), then applies them with writes that
// allocate nothing; a failed step leaves parameters and state as they were. SGD without
// dampening and weight decay runs fused instead (ops::sgd_step_, one pass per parameter,
// the same bits), its checks and allocations also before any write.
#pragma once
#include <mutex>
#include <vector>

#include "core/refcounted.h"
#include "core/tensor.h"

namespace dt::nn {

class Optimizer : public RefCounted {
 public:
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

  std::vector<Tensor> params_;

 private:
  std::mutex mu_;
};

struct SgdOptions {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
};
struct AdamOptions {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled;  // AdamW
};

Optimizer* new_sgd(std::vector<Tensor> params, const SgdOptions& o);
Optimizer* new_adam(std::vector<Tensor> params, const AdamOptions& o);

}  // namespace dt::nn
