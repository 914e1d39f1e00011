// Optimizers: SGD (momentum, dampening, Nesterov, weight decay) and Adam / AdamW, as
// torch.optim with its default (for-loop) update order. step() updates each parameter
// in place on its own device; its state (momentum buffer, moments) lives there too.
#pragma once
#include <vector>

#include "core/refcounted.h"
#include "core/tensor.h"

namespace dt::nn {

class Optimizer : public RefCounted {
 public:
  explicit Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {}
  virtual ~Optimizer() = default;
  static void destroy(Optimizer* o) { delete o; }
  virtual void step() = 0;
  void zero_grad();  // drops every gradient (PyTorch's set_to_none=True)

 protected:
  std::vector<Tensor> params_;
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
