// Learning-rate schedulers, as torch.optim.lr_scheduler (PyTorch 1.13): each holds its
// optimizer and, at every step, sets the optimizer's learning rate (and OneCycleLR its
// momentum or beta1) between optimizer steps. They use PyTorch's chainable formulas:
// a step scales the optimizer's current rate rather than recomputing it from the
// start, so schedulers stacked on one optimizer, or a rate set by hand between steps,
// combine as they do in PyTorch; SequentialLR's restart of a scheduler at its
// milestone uses the closed form at epoch 0, as PyTorch's step(0).
//
// A step is all or nothing: the new rate (and momentum) is computed first, then set;
// if setting it fails, the scheduler's own state is as before. Steps and reads of one
// scheduler run one at a time (a mutex per scheduler).
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/refcounted.h"
#include "nn/module.h"  // Named
#include "nn/optim.h"

namespace dt::nn {

class LrScheduler : public RefCounted {
 public:
  virtual ~LrScheduler() = default;
  static void destroy(LrScheduler* s) { delete s; }

  // PyTorch's step(): one epoch (or batch) on, the optimizer's rate set for it.
  // ReduceLROnPlateau refuses it (it steps with a metric).
  void step();
  // ReduceLROnPlateau's step(metrics); the other schedulers refuse it.
  void step_metric(double metric);
  // get_last_lr(): the rate the last step set (at construction, the first one).
  double last_lr();
  // last_epoch: how many steps since the start (0 right after construction).
  int64_t last_epoch();
  Optimizer* optimizer() const { return opt_.get(); }
  virtual const char* name() const = 0;
  // False for ReduceLROnPlateau, which steps on a metric.
  virtual bool steps_by_epoch() const { return true; }
  // True for SequentialLR and ChainedScheduler, which step schedulers they hold: neither
  // holds one of these (nor a ReduceLROnPlateau).
  virtual bool holds_schedulers() const { return false; }

  // The scheduler's settings and state, each a 0-d float64 on the CPU under PyTorch's
  // attribute name (milestones: a 1-d int64), and SequentialLR's schedulers' under
  // "schedulers.<k>.". Loading is all or nothing: every key and value is checked, then
  // the settings together as the constructor checks them; the optimizer is not touched
  // (its own state dict restores its rate), as PyTorch's load_state_dict.
  Named state_dict();
  void load_state_dict(const Named& entries);

 protected:
  explicit LrScheduler(Ref<Optimizer> opt);

  // A number the state dict holds: a double, a whole number or a flag (0 or 1).
  struct Field {
    const char* name;
    double* number;
    int64_t* whole = nullptr;
    bool* flag = nullptr;
  };
  virtual std::vector<Field> fields() = 0;  // every field, base ones included
  static double field_value(const Field& f);
  static void set_field(const Field& f, double v);
  std::vector<Field> base_fields();         // base_lr, last_epoch, last_lr
  // The constructor's checks of the settings together (INVALID_ARGUMENT).
  virtual void check() const {}

  // The rate at epoch e (last_epoch_ + 1, not yet stored) from the optimizer's current
  // rate: PyTorch's get_lr(). Must not change the scheduler's state.
  virtual double chained_lr(int64_t e, double current) = 0;
  // The closed form at epoch e (PyTorch's _get_closed_form_lr); the chained form where
  // PyTorch has none.
  virtual double closed_form_lr(int64_t e, double current) { return chained_lr(e, current); }
  // One step (with mu_ held): by default epoch + 1, chained_lr, set. `restart`: go to
  // epoch 0 by the closed form instead (SequentialLR at a milestone).
  virtual void advance(bool restart);
  // ReduceLROnPlateau's step (with mu_ held); the default refuses.
  virtual void advance_metric(double metric);
  // What a Field-backed load cannot check: the rest of the entries (names not among
  // fields()); the default refuses any.
  virtual void load_extra(const Named& extra);
  virtual Named save_extra() { return {}; }
  // PyTorch's _initial_step: epoch -1 -> 0, the first rate set. The last thing each
  // constructor does.
  void initial_step();
  // Sets the optimizer's rate and records it as last_lr_.
  void set_rate(double lr);

  friend class SequentialScheduler;
  friend class ChainedScheduler;
  friend class SchedulerList;
  Ref<Optimizer> opt_;
  double base_lr_ = 0;  // PyTorch's base_lrs[0] (the optimizer's initial_lr)
  int64_t last_epoch_ = -1;
  double last_lr_ = 0;
  std::mutex mu_;
};

// The largest whole-number setting or counter: a checkpoint holds each as a float64,
// which is exact up to 2^53.
constexpr int64_t kMaxWhole = int64_t{1} << 53;

// A 1-d tensor of whole numbers >= 0 (milestones) as a vector, INVALID_ARGUMENT naming
// key otherwise; and such a vector as a 1-d int64 tensor on the CPU.
std::vector<int64_t> whole_numbers(const char* who, const std::string& key, const Tensor& t);
Tensor whole_numbers_tensor(const std::vector<int64_t>& values);

// Constructors; each checks its settings as PyTorch does (INVALID_ARGUMENT, in its words)
// and then makes its first step, which sets the optimizer's rate for epoch 0.
LrScheduler* new_step_lr(Ref<Optimizer> opt, int64_t step_size, double gamma);
LrScheduler* new_multi_step_lr(Ref<Optimizer> opt, std::vector<int64_t> milestones, double gamma);
LrScheduler* new_exponential_lr(Ref<Optimizer> opt, double gamma);
LrScheduler* new_linear_lr(Ref<Optimizer> opt, double start_factor, double end_factor, int64_t total_iters);
LrScheduler* new_constant_lr(Ref<Optimizer> opt, double factor, int64_t total_iters);
LrScheduler* new_polynomial_lr(Ref<Optimizer> opt, int64_t total_iters, double power);
LrScheduler* new_cosine_annealing_lr(Ref<Optimizer> opt, int64_t t_max, double eta_min);
LrScheduler* new_cosine_annealing_warm_restarts(Ref<Optimizer> opt, int64_t t_0, int64_t t_mult, double eta_min);

struct OneCycleOptions {
  double max_lr;
  int64_t total_steps;
  double pct_start;
  bool anneal_linear;  // anneal_strategy "linear" (else "cos")
  bool cycle_momentum;
  double base_momentum, max_momentum, div_factor, final_div_factor;
  bool three_phase;
};
LrScheduler* new_one_cycle_lr(Ref<Optimizer> opt, const OneCycleOptions& o);  // lr_scheduler_cycles.cpp

// The setting a momentum schedule moves: "beta1" (Adam's momentum, PyTorch's
// use_beta1), "momentum", or nullptr when the optimizer has neither (Adagrad).
const char* momentum_option(Optimizer& opt);  // lr_scheduler_cycles.cpp

// CyclicLR's modes: the amplitude of cycle c (from 1) at step e is 1 (triangular),
// 1 / 2^(c - 1) (triangular2) or gamma^e (exp_range). The numbers its state dict keeps.
enum : int64_t { kCyclicTriangular = 0, kCyclicTriangular2 = 1, kCyclicExpRange = 2 };
struct CyclicOptions {
  double base_lr, max_lr;
  int64_t step_size_up, step_size_down;  // step_size_down 0: as step_size_up (PyTorch's None)
  int64_t mode;
  double gamma;
  bool cycle_momentum;
  double base_momentum, max_momentum;
};
LrScheduler* new_cyclic_lr(Ref<Optimizer> opt, const CyclicOptions& o);  // lr_scheduler_cycles.cpp

struct PlateauOptions {
  bool mode_max;       // mode "max" (else "min")
  double factor;
  int64_t patience;
  double threshold;
  bool threshold_abs;  // threshold_mode "abs" (else "rel")
  int64_t cooldown;
  double min_lr, eps;
};
LrScheduler* new_reduce_lr_on_plateau(Ref<Optimizer> opt, const PlateauOptions& o);  // lr_scheduler_cycles.cpp
// SequentialLR and ChainedScheduler (lr_scheduler_lists.cpp). A ChainedScheduler steps
// every one of its schedulers at each step, all or nothing: if one refuses, those
// stepped before it, and the optimizer's rate and momentum, are put back.
LrScheduler* new_sequential_lr(Ref<Optimizer> opt, std::vector<Ref<LrScheduler>> schedulers,
                               std::vector<int64_t> milestones);
LrScheduler* new_chained_scheduler(std::vector<Ref<LrScheduler>> schedulers);

// A user's function of the epoch (the C ABI's dt_lr_lambda_fn) with its data, owned by
// the scheduler that calls it. The data's destructor runs with the scheduler's, and only
// once `owned` is set (by the API, before the handle reaches the caller): a constructor
// that fails leaves the data to its caller.
struct LrLambda {
  double (*fn)(int64_t epoch, void* user_data) = nullptr;
  void* user_data = nullptr;
  void (*free_user_data)(void* user_data) = nullptr;
  bool owned = false;
  ~LrLambda() {
    if (owned && free_user_data) free_user_data(user_data);
  }
};
// LambdaLR and MultiplicativeLR (lr_scheduler_lambda.cpp): INVALID_ARGUMENT when the
// function returns a number that is not finite, or a factor that makes the rate negative.
LrScheduler* new_lambda_lr(Ref<Optimizer> opt, std::unique_ptr<LrLambda> f);
LrScheduler* new_multiplicative_lr(Ref<Optimizer> opt, std::unique_ptr<LrLambda> f);
// INVALID_ARGUMENT naming fn while this thread runs a scheduler's LrLambda: a scheduler
// call from in there could wait on a lock the thread already holds (the scheduler being
// stepped, or the SequentialLR over it).
void refuse_inside_lr_lambda(const char* fn);

}  // namespace dt::nn
