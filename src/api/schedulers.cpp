// Learning-rate scheduler entry points (nn/lr_scheduler.h): constructors, stepping,
// reading and checkpoint state.
#include <cstring>
#include <memory>
#include <vector>

#include "api/objects.h"
#include "api/shim.h"
#include "api/state_dicts.h"
#include "nn/lr_scheduler.h"

using namespace dt;
using namespace dt::api;

namespace {

nn::LrScheduler* scheduler_arg(const dt_lr_scheduler* s, const char* fn) {
  return object_arg<nn::LrScheduler, HandleKind::LrScheduler>(s, fn, "s");
}
// The scheduler for a call that takes its lock: refused inside a scheduler's function.
nn::LrScheduler* locking_scheduler_arg(const dt_lr_scheduler* s, const char* fn) {
  nn::refuse_inside_lr_lambda(fn);
  return scheduler_arg(s, fn);
}

// The optimizer behind opt, with a reference of the scheduler's own. (Every constructor
// starts here: none may run inside a scheduler's function.)
Ref<nn::Optimizer> optimizer_ref(dt_optimizer* opt, const char* fn) {
  nn::refuse_inside_lr_lambda(fn);
  nn::Optimizer* o = object_arg<nn::Optimizer, HandleKind::Optimizer>(opt, fn, "opt");
  o->ref();
  return Ref<nn::Optimizer>::adopt(o);
}

// The n schedulers of a SequentialLR or ChainedScheduler, each with a reference of its own.
std::vector<Ref<nn::LrScheduler>> schedulers_arg(dt_lr_scheduler* const* schedulers, size_t n, const char* fn) {
  if (n > 0 && !schedulers) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": schedulers is NULL but n is ", n));
  std::vector<Ref<nn::LrScheduler>> held;
  for (size_t k = 0; k < n; ++k) {
    nn::LrScheduler* s = object_arg<nn::LrScheduler, HandleKind::LrScheduler>(schedulers[k], fn, "schedulers[k]");
    s->ref();
    held.push_back(Ref<nn::LrScheduler>::adopt(s));
  }
  return held;
}

// Registers a new scheduler under *out (released if that fails).
void publish(nn::LrScheduler* s, dt_lr_scheduler** out) {
  *out = static_cast<dt_lr_scheduler*>(new_object_handle<nn::LrScheduler, HandleKind::LrScheduler>(s));
}

// One of two words (true for the second), INVALID_ARGUMENT naming both otherwise.
bool choice_arg(const char* v, const char* first, const char* second, const char* fn, const char* param) {
  require(v, fn, param);
  if (std::strcmp(v, first) == 0) return false;
  if (std::strcmp(v, second) == 0) return true;
  fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", param, " must be \"", first, "\" or \"", second, "\", got \"", v, "\""));
}

std::vector<int64_t> milestones_arg(const int64_t* milestones, size_t n, const char* fn) {
  if (n > 0 && !milestones) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": milestones is NULL but n is ", n));
  return n > 0 ? std::vector<int64_t>(milestones, milestones + n) : std::vector<int64_t>{};
}

// LambdaLR and MultiplicativeLR: the user's data becomes the scheduler's to free only
// once the handle is out; a failure before leaves it to the caller.
using LambdaMaker = nn::LrScheduler* (*)(Ref<nn::Optimizer>, std::unique_ptr<nn::LrLambda>);
dt_status lambda_scheduler_new(const char* fn, LambdaMaker make, dt_optimizer* opt, dt_lr_lambda_fn f,
                               void* user_data, dt_lr_lambda_free_fn free_user_data, dt_lr_scheduler** out) {
  return guard([&] {
    require(out, fn, "out");
    require(f, fn, "fn");
    auto lambda = std::make_unique<nn::LrLambda>();
    lambda->fn = f;
    lambda->user_data = user_data;
    lambda->free_user_data = free_user_data;
    nn::LrLambda* held = lambda.get();  // the scheduler's from here; alive while *out is
    publish(make(optimizer_ref(opt, fn), std::move(lambda)), out);
    held->owned = true;  // before the caller can see the handle, so no other thread reads it yet
  });
}

}  // namespace

extern "C" {

DT_API dt_status dt_step_lr_new(dt_optimizer* opt, int64_t step_size, double gamma, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_step_lr_new";
    require(out, fn, "out");
    publish(nn::new_step_lr(optimizer_ref(opt, fn), step_size, gamma), out);
  });
}

DT_API dt_status dt_multi_step_lr_new(dt_optimizer* opt, const int64_t* milestones, size_t n, double gamma,
                                      dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_multi_step_lr_new";
    require(out, fn, "out");
    std::vector<int64_t> ms = milestones_arg(milestones, n, fn);
    publish(nn::new_multi_step_lr(optimizer_ref(opt, fn), std::move(ms), gamma), out);
  });
}

DT_API dt_status dt_exponential_lr_new(dt_optimizer* opt, double gamma, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_exponential_lr_new";
    require(out, fn, "out");
    publish(nn::new_exponential_lr(optimizer_ref(opt, fn), gamma), out);
  });
}

DT_API dt_status dt_linear_lr_new(dt_optimizer* opt, double start_factor, double end_factor, int64_t total_iters,
                                  dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_linear_lr_new";
    require(out, fn, "out");
    publish(nn::new_linear_lr(optimizer_ref(opt, fn), start_factor, end_factor, total_iters), out);
  });
}

DT_API dt_status dt_constant_lr_new(dt_optimizer* opt, double factor, int64_t total_iters, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_constant_lr_new";
    require(out, fn, "out");
    publish(nn::new_constant_lr(optimizer_ref(opt, fn), factor, total_iters), out);
  });
}

DT_API dt_status dt_polynomial_lr_new(dt_optimizer* opt, int64_t total_iters, double power, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_polynomial_lr_new";
    require(out, fn, "out");
    publish(nn::new_polynomial_lr(optimizer_ref(opt, fn), total_iters, power), out);
  });
}

DT_API dt_status dt_cosine_annealing_lr_new(dt_optimizer* opt, int64_t t_max, double eta_min,
                                            dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_cosine_annealing_lr_new";
    require(out, fn, "out");
    publish(nn::new_cosine_annealing_lr(optimizer_ref(opt, fn), t_max, eta_min), out);
  });
}

DT_API dt_status dt_cosine_annealing_warm_restarts_new(dt_optimizer* opt, int64_t t_0, int64_t t_mult,
                                                       double eta_min, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_cosine_annealing_warm_restarts_new";
    require(out, fn, "out");
    publish(nn::new_cosine_annealing_warm_restarts(optimizer_ref(opt, fn), t_0, t_mult, eta_min), out);
  });
}

DT_API dt_status dt_one_cycle_lr_new(dt_optimizer* opt, double max_lr, int64_t total_steps, double pct_start,
                                     const char* anneal_strategy, int32_t cycle_momentum, double base_momentum,
                                     double max_momentum, double div_factor, double final_div_factor,
                                     int32_t three_phase, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_one_cycle_lr_new";
    require(out, fn, "out");
    const bool linear = choice_arg(anneal_strategy, "cos", "linear", fn, "anneal_strategy");
    const bool cycle = flag_arg(cycle_momentum, fn, "cycle_momentum");
    const bool three = flag_arg(three_phase, fn, "three_phase");
    nn::OneCycleOptions o{max_lr,        total_steps,  pct_start,  linear,           cycle,
                          base_momentum, max_momentum, div_factor, final_div_factor, three};
    publish(nn::new_one_cycle_lr(optimizer_ref(opt, fn), o), out);
  });
}

DT_API dt_status dt_cyclic_lr_new(dt_optimizer* opt, double base_lr, double max_lr, int64_t step_size_up,
                                  int64_t step_size_down, const char* mode, double gamma, int32_t cycle_momentum,
                                  double base_momentum, double max_momentum, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_cyclic_lr_new";
    require(out, fn, "out");
    require(mode, fn, "mode");
    int64_t m = nn::kCyclicTriangular;
    if (std::strcmp(mode, "triangular2") == 0) {
      m = nn::kCyclicTriangular2;
    } else if (std::strcmp(mode, "exp_range") == 0) {
      m = nn::kCyclicExpRange;
    } else if (std::strcmp(mode, "triangular") != 0) {
      fail(DT_ERR_INVALID_ARGUMENT,
           cat(fn, ": mode must be \"triangular\", \"triangular2\" or \"exp_range\", got \"", mode, "\""));
    }
    const bool cycle = flag_arg(cycle_momentum, fn, "cycle_momentum");
    nn::CyclicOptions o{base_lr, max_lr, step_size_up, step_size_down, m, gamma, cycle, base_momentum, max_momentum};
    publish(nn::new_cyclic_lr(optimizer_ref(opt, fn), o), out);
  });
}

DT_API dt_status dt_reduce_lr_on_plateau_new(dt_optimizer* opt, const char* mode, double factor, int64_t patience,
                                             double threshold, const char* threshold_mode, int64_t cooldown,
                                             double min_lr, double eps, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_reduce_lr_on_plateau_new";
    require(out, fn, "out");
    const bool max = choice_arg(mode, "min", "max", fn, "mode");
    const bool abs = choice_arg(threshold_mode, "rel", "abs", fn, "threshold_mode");
    nn::PlateauOptions o{max, factor, patience, threshold, abs, cooldown, min_lr, eps};
    publish(nn::new_reduce_lr_on_plateau(optimizer_ref(opt, fn), o), out);
  });
}

DT_API dt_status dt_sequential_lr_new(dt_optimizer* opt, dt_lr_scheduler* const* schedulers, size_t n,
                                      const int64_t* milestones, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_sequential_lr_new";
    require(out, fn, "out");
    std::vector<Ref<nn::LrScheduler>> held = schedulers_arg(schedulers, n, fn);
    std::vector<int64_t> ms = milestones_arg(milestones, n > 0 ? n - 1 : 0, fn);
    publish(nn::new_sequential_lr(optimizer_ref(opt, fn), std::move(held), std::move(ms)), out);
  });
}

DT_API dt_status dt_chained_scheduler_new(dt_lr_scheduler* const* schedulers, size_t n, dt_lr_scheduler** out) {
  return guard([&] {
    const char* fn = "dt_chained_scheduler_new";
    nn::refuse_inside_lr_lambda(fn);
    require(out, fn, "out");
    publish(nn::new_chained_scheduler(schedulers_arg(schedulers, n, fn)), out);
  });
}

DT_API dt_status dt_lambda_lr_new(dt_optimizer* opt, dt_lr_lambda_fn fn, void* user_data,
                                  dt_lr_lambda_free_fn free_user_data, dt_lr_scheduler** out) {
  return lambda_scheduler_new("dt_lambda_lr_new", nn::new_lambda_lr, opt, fn, user_data, free_user_data, out);
}

DT_API dt_status dt_multiplicative_lr_new(dt_optimizer* opt, dt_lr_lambda_fn fn, void* user_data,
                                          dt_lr_lambda_free_fn free_user_data, dt_lr_scheduler** out) {
  return lambda_scheduler_new("dt_multiplicative_lr_new", nn::new_multiplicative_lr, opt, fn, user_data,
                              free_user_data, out);
}

DT_API dt_status dt_lr_scheduler_step(dt_lr_scheduler* s) {
  return guard([&] { locking_scheduler_arg(s, "dt_lr_scheduler_step")->step(); });
}

DT_API dt_status dt_lr_scheduler_step_metric(dt_lr_scheduler* s, double metric) {
  return guard([&] { locking_scheduler_arg(s, "dt_lr_scheduler_step_metric")->step_metric(metric); });
}

DT_API dt_status dt_lr_scheduler_last_lr(const dt_lr_scheduler* s, double* out) {
  return guard([&] {
    const char* fn = "dt_lr_scheduler_last_lr";
    nn::LrScheduler* sch = locking_scheduler_arg(s, fn);
    require(out, fn, "out");
    *out = sch->last_lr();
  });
}

DT_API dt_status dt_lr_scheduler_last_epoch(const dt_lr_scheduler* s, int64_t* out) {
  return guard([&] {
    const char* fn = "dt_lr_scheduler_last_epoch";
    nn::LrScheduler* sch = locking_scheduler_arg(s, fn);
    require(out, fn, "out");
    *out = sch->last_epoch();
  });
}

DT_API dt_status dt_lr_scheduler_kind(const dt_lr_scheduler* s, char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    check_string_buffer(buf, cap, "dt_lr_scheduler_kind");
    write_string(scheduler_arg(s, "dt_lr_scheduler_kind")->name(), buf, cap, needed);
  });
}

DT_API dt_status dt_lr_scheduler_state_dict(const dt_lr_scheduler* s, dt_state_dict** out) {
  return guard([&] {
    const char* fn = "dt_lr_scheduler_state_dict";
    nn::LrScheduler* sch = locking_scheduler_arg(s, fn);
    require(out, fn, "out");
    auto sd = std::make_unique<io::StateDict>();
    for (auto& [name, t] : sch->state_dict()) sd->set(name, std::move(t));
    *out = new_state_dict_handle(std::move(sd));
  });
}

DT_API dt_status dt_lr_scheduler_load_state_dict(dt_lr_scheduler* s, const dt_state_dict* sd) {
  return guard([&] {
    const char* fn = "dt_lr_scheduler_load_state_dict";
    nn::LrScheduler* sch = locking_scheduler_arg(s, fn);
    const io::StateDict& dict = state_dict_arg(sd, fn, "sd");
    nn::Named entries;
    for (auto& [name, t] : dict.entries()) entries.emplace_back(name, t);
    sch->load_state_dict(entries);
  });
}

DT_API dt_status dt_lr_scheduler_retain(dt_lr_scheduler* s) {
  return guard([&] {
    if (!s) fail(DT_ERR_INVALID_ARGUMENT, "dt_lr_scheduler_retain: s is NULL");
    handle_retain(s, HandleKind::LrScheduler);
  });
}

DT_API dt_status dt_lr_scheduler_release(dt_lr_scheduler* s) {
  return guard([&] {
    if (s) handle_release(s, HandleKind::LrScheduler);
  });
}

}  // extern "C"
