// Optimizer entry points, the learning rate and checkpoint state of optimizers, and
// gradient clipping.
#include <vector>

#include "api/objects.h"
#include "api/shim.h"
#include "api/state_dicts.h"
#include "nn/clip_grad.h"
#include "nn/optim.h"

using namespace dt;
using namespace dt::api;

namespace {

nn::Optimizer* optimizer_arg(const dt_optimizer* o, const char* fn) {
  return object_arg<nn::Optimizer, HandleKind::Optimizer>(o, fn, "opt");
}

// The n tensors of params (NULL only when n is 0).
std::vector<Tensor> params_arg(const dt_tensor* const* params, size_t n, const char* fn) {
  if (n > 0 && !params) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": params is NULL but n is ", n));
  std::vector<Tensor> v;
  for (size_t i = 0; i < n; ++i) {
    Borrowed b = tensor_arg(params[i], fn, "params[i]");
    v.push_back(b);
  }
  return v;
}

}  // namespace

extern "C" {

DT_API dt_status dt_sgd_new(const dt_tensor* const* params, size_t n, double lr, double momentum, double dampening,
                            double weight_decay, int32_t nesterov, dt_optimizer** out) {
  return guard([&] {
    const char* fn = "dt_sgd_new";
    require(out, fn, "out");
    flag_arg(nesterov, fn, "nesterov");
    nn::Optimizer* o = nn::new_sgd(params_arg(params, n, fn), {lr, momentum, dampening, weight_decay, nesterov == 1});
    *out = static_cast<dt_optimizer*>(new_object_handle<nn::Optimizer, HandleKind::Optimizer>(o));
  });
}

DT_API dt_status dt_adam_new(const dt_tensor* const* params, size_t n, double lr, double beta1, double beta2,
                             double eps, double weight_decay, int32_t decoupled, dt_optimizer** out) {
  return guard([&] {
    const char* fn = "dt_adam_new";
    require(out, fn, "out");
    flag_arg(decoupled, fn, "decoupled");
    nn::Optimizer* o = nn::new_adam(params_arg(params, n, fn), {lr, beta1, beta2, eps, weight_decay, decoupled == 1});
    *out = static_cast<dt_optimizer*>(new_object_handle<nn::Optimizer, HandleKind::Optimizer>(o));
  });
}

DT_API dt_status dt_rmsprop_new(const dt_tensor* const* params, size_t n, double lr, double alpha, double eps,
                                double weight_decay, double momentum, int32_t centered, dt_optimizer** out) {
  return guard([&] {
    const char* fn = "dt_rmsprop_new";
    require(out, fn, "out");
    flag_arg(centered, fn, "centered");
    nn::Optimizer* o =
        nn::new_rmsprop(params_arg(params, n, fn), {lr, alpha, eps, weight_decay, momentum, centered == 1});
    *out = static_cast<dt_optimizer*>(new_object_handle<nn::Optimizer, HandleKind::Optimizer>(o));
  });
}

DT_API dt_status dt_adagrad_new(const dt_tensor* const* params, size_t n, double lr, double lr_decay,
                                double weight_decay, double initial_accumulator_value, double eps,
                                dt_optimizer** out) {
  return guard([&] {
    const char* fn = "dt_adagrad_new";
    require(out, fn, "out");
    std::vector<Tensor> ps = params_arg(params, n, fn);
    // The sums are made now, on each parameter's device: hold the parameters where they are.
    for (const Tensor& p : ps) pin_for_call(p.impl());
    nn::Optimizer* o = nn::new_adagrad(std::move(ps), {lr, lr_decay, weight_decay, initial_accumulator_value, eps});
    *out = static_cast<dt_optimizer*>(new_object_handle<nn::Optimizer, HandleKind::Optimizer>(o));
  });
}

DT_API dt_status dt_optimizer_step(dt_optimizer* opt) {
  return guard([&] {
    nn::Optimizer* o = optimizer_arg(opt, "dt_optimizer_step");
    for (const Tensor& p : o->params()) pin_for_call(p.impl());
    o->step();
  });
}
DT_API dt_status dt_optimizer_zero_grad(dt_optimizer* opt) {
  return guard([&] { optimizer_arg(opt, "dt_optimizer_zero_grad")->zero_grad(); });
}
DT_API dt_status dt_optimizer_retain(dt_optimizer* opt) {
  return guard([&] {
    if (!opt) fail(DT_ERR_INVALID_ARGUMENT, "dt_optimizer_retain: opt is NULL");
    handle_retain(opt, HandleKind::Optimizer);
  });
}
DT_API dt_status dt_optimizer_release(dt_optimizer* opt) {
  return guard([&] {
    if (opt) handle_release(opt, HandleKind::Optimizer);
  });
}

DT_API dt_status dt_optimizer_lr(const dt_optimizer* opt, double* out) {
  return guard([&] {
    const char* fn = "dt_optimizer_lr";
    nn::Optimizer* o = optimizer_arg(opt, fn);
    require(out, fn, "out");
    *out = o->lr();
  });
}

DT_API dt_status dt_optimizer_set_lr(dt_optimizer* opt, double lr) {
  return guard([&] { optimizer_arg(opt, "dt_optimizer_set_lr")->set_lr(lr); });
}

DT_API dt_status dt_optimizer_option(const dt_optimizer* opt, const char* name, double* out) {
  return guard([&] {
    const char* fn = "dt_optimizer_option";
    nn::Optimizer* o = optimizer_arg(opt, fn);
    require(name, fn, "name");
    require(out, fn, "out");
    *out = o->option(name);
  });
}

DT_API dt_status dt_optimizer_set_option(dt_optimizer* opt, const char* name, double value) {
  return guard([&] {
    const char* fn = "dt_optimizer_set_option";
    nn::Optimizer* o = optimizer_arg(opt, fn);
    require(name, fn, "name");
    o->set_option(name, value);
  });
}

DT_API dt_status dt_optimizer_state_dict(const dt_optimizer* opt, dt_state_dict** out) {
  return guard([&] {
    const char* fn = "dt_optimizer_state_dict";
    nn::Optimizer* o = optimizer_arg(opt, fn);
    require(out, fn, "out");
    auto sd = std::make_unique<io::StateDict>();
    for (auto& [name, t] : o->state_dict()) sd->set(name, std::move(t));
    *out = new_state_dict_handle(std::move(sd));
  });
}

DT_API dt_status dt_optimizer_load_state_dict(dt_optimizer* opt, const dt_state_dict* sd) {
  return guard([&] {
    const char* fn = "dt_optimizer_load_state_dict";
    nn::Optimizer* o = optimizer_arg(opt, fn);
    const io::StateDict& dict = state_dict_arg(sd, fn, "sd");
    nn::Named entries;
    for (auto& [name, t] : dict.entries()) entries.emplace_back(name, std::move(t));
    for (const Tensor& p : o->params()) pin_for_call(p.impl());
    o->load_state_dict(entries);
  });
}

DT_API dt_status dt_clip_grad_norm_(const dt_tensor* const* params, size_t n, double max_norm, double norm_type,
                                    int32_t error_if_nonfinite, dt_tensor** total_norm) {
  return guard([&] {
    const char* fn = "dt_clip_grad_norm_";
    const bool check = flag_arg(error_if_nonfinite, fn, "error_if_nonfinite");
    std::vector<Tensor> ps = params_arg(params, n, fn);
    for (const Tensor& p : ps) pin_for_call(p.impl());
    Tensor norm = nn::clip_grad_norm_(ps, max_norm, norm_type, check);
    if (total_norm) *total_norm = new_handle(std::move(norm));
  });
}

DT_API dt_status dt_clip_grad_value_(const dt_tensor* const* params, size_t n, double clip_value) {
  return guard([&] {
    const char* fn = "dt_clip_grad_value_";
    std::vector<Tensor> ps = params_arg(params, n, fn);
    for (const Tensor& p : ps) pin_for_call(p.impl());
    nn::clip_grad_value_(ps, clip_value);
  });
}

}  // extern "C"
