// The schedulers that are not a plain function of the epoch: OneCycleLR and CyclicLR
// (which also cycle the momentum) and ReduceLROnPlateau (driven by a metric), as
// PyTorch 1.13's.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "nn/lr_scheduler.h"

namespace dt::nn {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The setting a momentum cycle moves (momentum_option); INVALID_ARGUMENT when the
// optimizer has neither.
const char* cycled_momentum(const char* who, Optimizer& opt) {
  if (const char* name = momentum_option(opt)) return name;
  fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": cycle_momentum needs an optimizer with a momentum or betas, and ",
                                    opt.kind(), " has neither (pass cycle_momentum 0)"));
}

// Sets the momentum `name` to `first`, then `last`, so that the optimizer refuses a
// cycle's end it cannot take at construction rather than mid-schedule; on a refusal
// the old value is put back.
void try_momentum_ends(Optimizer& opt, const char* name, double first, double last) {
  const double old = opt.option(name);
  try {
    opt.set_option(name, first);
    opt.set_option(name, last);
  } catch (...) {
    opt.set_option(name, old);
    throw;
  }
}

// Both momentum ends finite and >= 0 (the optimizer checks the rest).
void check_momentum_ends(const char* who, double base_momentum, double max_momentum) {
  for (double m : {base_momentum, max_momentum})
    if (!(m >= 0) || !std::isfinite(m))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": base_momentum and max_momentum must be finite and >= 0, got ", m));
}

class OneCycleScheduler final : public LrScheduler {
 public:
  OneCycleScheduler(Ref<Optimizer> opt, const OneCycleOptions& o)
      : LrScheduler(std::move(opt)),
        max_lr_(o.max_lr),
        total_steps_(o.total_steps),
        pct_start_(o.pct_start),
        anneal_linear_(o.anneal_linear),
        cycle_momentum_(o.cycle_momentum),
        base_momentum_(o.base_momentum),
        max_momentum_(o.max_momentum),
        three_phase_(o.three_phase) {
    const char* who = name();
    if (!(o.div_factor > 0) || !std::isfinite(o.div_factor))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": div_factor must be finite and > 0, got ", o.div_factor));
    if (!(o.final_div_factor > 0) || !std::isfinite(o.final_div_factor))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": final_div_factor must be finite and > 0, got ", o.final_div_factor));
    initial_lr_ = max_lr_ / o.div_factor;
    min_lr_ = initial_lr_ / o.final_div_factor;
    check();
    if (cycle_momentum_) try_momentum_ends(*opt_, momentum_name_, base_momentum_, max_momentum_);  // starts at max
    opt_->set_initial_lr(initial_lr_);
    initial_step();
  }
  const char* name() const override { return "OneCycleLR"; }

 private:
  struct Phase {
    double end_step, start_lr, end_lr, start_momentum, end_momentum;
  };
  std::vector<Phase> phases() const {
    const double t = static_cast<double>(total_steps_), p = pct_start_;
    if (three_phase_)
      return {{p * t - 1, initial_lr_, max_lr_, max_momentum_, base_momentum_},
              {2 * p * t - 2, max_lr_, initial_lr_, base_momentum_, max_momentum_},
              {t - 1, initial_lr_, min_lr_, max_momentum_, max_momentum_}};
    return {{p * t - 1, initial_lr_, max_lr_, max_momentum_, base_momentum_},
            {t - 1, max_lr_, min_lr_, base_momentum_, max_momentum_}};
  }
  double anneal(double start, double end, double pct) const {
    if (anneal_linear_) return (end - start) * pct + start;
    return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1);
  }
  void check() const override {
    const char* who = name();
    if (!(max_lr_ >= 0) || !std::isfinite(max_lr_))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": max_lr must be finite and >= 0, got ", max_lr_));
    if (total_steps_ < 1 || total_steps_ > kMaxWhole)
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": total_steps must be in [1, 2^53], got ", total_steps_));
    if (!(pct_start_ >= 0 && pct_start_ <= 1))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": pct_start must be in [0, 1], got ", pct_start_));
    // PyTorch divides by each phase's length: one of length 0 (or less) would make its
    // first rate 0/0. Refused here rather than failing at that step.
    double start = 0;
    for (const Phase& ph : phases()) {
      if (!(ph.end_step > start))
        fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": pct_start ", pct_start_, " with total_steps ", total_steps_,
                                          " leaves a phase without steps (each phase needs pct_start * total_steps",
                                          " to leave it at least one step past the previous)"));
      start = ph.end_step;
    }
    check_momentum_ends(who, base_momentum_, max_momentum_);
    if (!(initial_lr_ >= 0) || !std::isfinite(initial_lr_) || !(min_lr_ >= 0) || !std::isfinite(min_lr_))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": initial_lr and min_lr must be finite and >= 0"));
    if (cycle_momentum_) momentum_name_ = cycled_momentum(who, *opt_);
  }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"max_lr", &max_lr_});
    f.push_back({"initial_lr", &initial_lr_});
    f.push_back({"min_lr", &min_lr_});
    f.push_back({"total_steps", nullptr, &total_steps_});
    f.push_back({"pct_start", &pct_start_});
    f.push_back({"anneal_linear", nullptr, nullptr, &anneal_linear_});
    f.push_back({"cycle_momentum", nullptr, nullptr, &cycle_momentum_});
    f.push_back({"base_momentum", &base_momentum_});
    f.push_back({"max_momentum", &max_momentum_});
    f.push_back({"three_phase", nullptr, nullptr, &three_phase_});
    return f;
  }
  double chained_lr(int64_t, double current) override { return current; }  // advance() is the whole step
  void advance(bool restart) override {
    const int64_t e = restart ? 0 : last_epoch_ + 1;
    if (e > total_steps_)
      fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": tried to step ", e + 1, " times; total_steps is ", total_steps_));
    const double step = static_cast<double>(e);
    const std::vector<Phase> all = phases();
    double start = 0, lr = 0, momentum = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      const Phase& ph = all[i];
      if (step <= ph.end_step || i + 1 == all.size()) {
        const double pct = (step - start) / (ph.end_step - start);
        lr = anneal(ph.start_lr, ph.end_lr, pct);
        momentum = anneal(ph.start_momentum, ph.end_momentum, pct);
        break;
      }
      start = ph.end_step;
    }
    // The step past the last (e == total_steps, which PyTorch allows) extrapolates the
    // anneal; a linear one can go past its ends there, where PyTorch sets a negative rate
    // or a momentum outside [base, max] (a beta1 of 1 or more, which Adam refuses): the
    // rate stops at 0 and the momentum at the ends of its range.
    lr = std::max(lr, 0.0);
    momentum = std::clamp(momentum, std::min(base_momentum_, max_momentum_), std::max(base_momentum_, max_momentum_));
    // The momentum first: its checks are the optimizer's, and a refusal leaves the rate.
    if (cycle_momentum_) opt_->set_option(momentum_name_, momentum);
    set_rate(lr);
    last_epoch_ = e;
  }
  double max_lr_;
  int64_t total_steps_;
  double pct_start_;
  bool anneal_linear_, cycle_momentum_;
  double base_momentum_, max_momentum_;
  bool three_phase_;
  mutable const char* momentum_name_ = "momentum";  // found by check(), from the optimizer's settings
  double initial_lr_ = 0, min_lr_ = 0;
};

class CyclicScheduler final : public LrScheduler {
 public:
  CyclicScheduler(Ref<Optimizer> opt, const CyclicOptions& o)
      : LrScheduler(std::move(opt)),
        max_lr_(o.max_lr),
        mode_(o.mode),
        gamma_(o.gamma),
        cycle_momentum_(o.cycle_momentum),
        base_momentum_(o.base_momentum),
        max_momentum_(o.max_momentum) {
    const char* who = name();
    if (o.step_size_up < 1 || o.step_size_up > kMaxWhole)
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": step_size_up must be in [1, 2^53], got ", o.step_size_up));
    if (o.step_size_down < 0 || o.step_size_down > kMaxWhole)
      fail(DT_ERR_INVALID_ARGUMENT,
           cat(who, ": step_size_down must be in [0, 2^53] (0: as step_size_up), got ", o.step_size_down));
    const double up = static_cast<double>(o.step_size_up);
    total_size_ = up + (o.step_size_down == 0 ? up : static_cast<double>(o.step_size_down));
    step_ratio_ = up / total_size_;
    base_lr_ = o.base_lr;
    check();
    if (cycle_momentum_) try_momentum_ends(*opt_, momentum_name_, base_momentum_, max_momentum_);
    // PyTorch sets the rate to base_lr before its first step, so base_lr becomes the
    // optimizer's initial_lr unless an earlier scheduler set one, and that first step
    // starts from initial_lr; the cycle goes from base_lr after it.
    opt_->initial_lr_or(o.base_lr);
    initial_step();
    base_lr_ = o.base_lr;
  }
  const char* name() const override { return "CyclicLR"; }

 private:
  void check() const override {
    const char* who = name();
    if (!(base_lr_ >= 0) || !std::isfinite(base_lr_))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": base_lr must be finite and >= 0, got ", base_lr_));
    if (!(max_lr_ >= 0) || !std::isfinite(max_lr_))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": max_lr must be finite and >= 0, got ", max_lr_));
    if (!(total_size_ >= 2) || !(total_size_ <= 2 * static_cast<double>(kMaxWhole)))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": total_size must be in [2, 2^54], got ", total_size_));
    if (!(step_ratio_ > 0 && step_ratio_ < 1))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": step_ratio must be in (0, 1), got ", step_ratio_));
    if (mode_ < kCyclicTriangular || mode_ > kCyclicExpRange)
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": mode must be 0 (triangular), 1 (triangular2) or 2 (exp_range), got ",
                                        mode_));
    if (!(gamma_ >= 0) || !std::isfinite(gamma_))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": gamma must be finite and >= 0, got ", gamma_));
    check_momentum_ends(who, base_momentum_, max_momentum_);
    if (cycle_momentum_) momentum_name_ = cycled_momentum(who, *opt_);
  }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"max_lr", &max_lr_});
    f.push_back({"total_size", &total_size_});
    f.push_back({"step_ratio", &step_ratio_});
    f.push_back({"mode", nullptr, &mode_});
    f.push_back({"gamma", &gamma_});
    f.push_back({"cycle_momentum", nullptr, nullptr, &cycle_momentum_});
    f.push_back({"base_momentum", &base_momentum_});
    f.push_back({"max_momentum", &max_momentum_});
    return f;
  }
  double chained_lr(int64_t, double current) override { return current; }  // advance() is the whole step
  // PyTorch's get_lr, in its order of operations (the same roundings).
  void advance(bool restart) override {
    const int64_t e = restart ? 0 : last_epoch_ + 1;
    const double ed = static_cast<double>(e);
    const double cycle = std::floor(1 + ed / total_size_);
    const double x = 1. + ed / total_size_ - cycle;
    const double scale = x <= step_ratio_ ? x / step_ratio_ : (x - 1) / (step_ratio_ - 1);
    double amplitude = 1.;  // triangular
    if (mode_ == kCyclicTriangular2) amplitude = 1 / std::pow(2., cycle - 1);
    if (mode_ == kCyclicExpRange) amplitude = std::pow(gamma_, ed);
    const double lr = base_lr_ + (max_lr_ - base_lr_) * scale * amplitude;
    if (!(lr >= 0) || !std::isfinite(lr))
      fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": the rate at step ", e, " would be ", lr));
    // The momentum first: its checks are the optimizer's, and a refusal leaves the rate.
    if (cycle_momentum_)
      opt_->set_option(momentum_name_, max_momentum_ - (max_momentum_ - base_momentum_) * scale * amplitude);
    set_rate(lr);
    last_epoch_ = e;
  }
  double max_lr_;
  int64_t mode_;
  double gamma_;
  bool cycle_momentum_;
  double base_momentum_, max_momentum_;
  double total_size_ = 0, step_ratio_ = 0;
  mutable const char* momentum_name_ = "momentum";  // found by check(), from the optimizer's settings
};

class PlateauScheduler final : public LrScheduler {
 public:
  PlateauScheduler(Ref<Optimizer> opt, const PlateauOptions& o)
      : LrScheduler(std::move(opt)),
        mode_max_(o.mode_max),
        factor_(o.factor),
        patience_(o.patience),
        threshold_(o.threshold),
        threshold_abs_(o.threshold_abs),
        cooldown_(o.cooldown),
        min_lr_(o.min_lr),
        eps_(o.eps) {
    check();
    best_ = mode_max_ ? -INFINITY : INFINITY;
    // No first step: the rate stays as it is until a metric stops improving.
    last_epoch_ = 0;
    last_lr_ = opt_->lr();
  }
  const char* name() const override { return "ReduceLROnPlateau"; }
  bool steps_by_epoch() const override { return false; }

 private:
  void check() const override {
    const char* who = name();
    if (!(factor_ >= 0 && factor_ < 1))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": factor must be in [0, 1), got ", factor_));
    if (patience_ < 0 || patience_ > kMaxWhole)
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": patience must be in [0, 2^53], got ", patience_));
    if (cooldown_ < 0 || cooldown_ > kMaxWhole)
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": cooldown must be in [0, 2^53], got ", cooldown_));
    if (num_bad_epochs_ < 0 || cooldown_counter_ < 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": num_bad_epochs and cooldown_counter must be >= 0"));
    const std::pair<const char*, double> numbers[] = {{"threshold", threshold_}, {"min_lr", min_lr_}, {"eps", eps_}};
    for (const auto& [what, v] : numbers)
      if (!(v >= 0) || !std::isfinite(v))
        fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": ", what, " must be finite and >= 0, got ", v));
  }
  std::vector<Field> fields() override {
    return {{"last_epoch", nullptr, &last_epoch_},
            {"last_lr", &last_lr_},
            {"mode_max", nullptr, nullptr, &mode_max_},
            {"factor", &factor_},
            {"patience", nullptr, &patience_},
            {"threshold", &threshold_},
            {"threshold_mode_abs", nullptr, nullptr, &threshold_abs_},
            {"cooldown", nullptr, &cooldown_},
            {"min_lr", &min_lr_},
            {"eps", &eps_},
            {"best", &best_},
            {"num_bad_epochs", nullptr, &num_bad_epochs_},
            {"cooldown_counter", nullptr, &cooldown_counter_}};
  }
  double chained_lr(int64_t, double current) override { return current; }
  void advance(bool) override {
    fail(DT_ERR_INVALID_ARGUMENT,
         cat(name(), " steps on a metric: call dt_lr_scheduler_step_metric with the value it watches"));
  }
  bool is_better(double a) const {
    if (mode_max_) return threshold_abs_ ? a > best_ + threshold_ : a > best_ * (1 + threshold_);
    return threshold_abs_ ? a < best_ - threshold_ : a < best_ * (1 - threshold_);
  }
  void advance_metric(double metric) override {
    double best = best_;
    int64_t bad = num_bad_epochs_ + 1, cooling = cooldown_counter_;
    if (is_better(metric)) {
      best = metric;
      bad = 0;
    }
    if (cooling > 0) {  // bad epochs in a cooldown do not count
      --cooling;
      bad = 0;
    }
    const double old_lr = opt_->lr();
    double lr = old_lr;
    if (bad > patience_) {
      const double reduced = std::max(old_lr * factor_, min_lr_);
      if (old_lr - reduced > eps_) lr = reduced;
      cooling = cooldown_;
      bad = 0;
    }
    if (lr != old_lr) opt_->set_lr(lr);
    best_ = best;
    num_bad_epochs_ = bad;
    cooldown_counter_ = cooling;
    last_lr_ = lr;
    ++last_epoch_;
  }
  bool mode_max_;
  double factor_;
  int64_t patience_;
  double threshold_;
  bool threshold_abs_;
  int64_t cooldown_;
  double min_lr_, eps_;
  double best_ = 0;
  int64_t num_bad_epochs_ = 0, cooldown_counter_ = 0;
};

}  // namespace

const char* momentum_option(Optimizer& opt) {
  if (opt.has_option("beta1")) return "beta1";
  if (opt.has_option("momentum")) return "momentum";
  return nullptr;
}

LrScheduler* new_cyclic_lr(Ref<Optimizer> opt, const CyclicOptions& o) { return new CyclicScheduler(std::move(opt), o); }
LrScheduler* new_one_cycle_lr(Ref<Optimizer> opt, const OneCycleOptions& o) {
  return new OneCycleScheduler(std::move(opt), o);
}
LrScheduler* new_reduce_lr_on_plateau(Ref<Optimizer> opt, const PlateauOptions& o) {
  return new PlateauScheduler(std::move(opt), o);
}

}  // namespace dt::nn
