// The scheduler base (stepping, state dicts) and the epoch schedulers of
// torch.optim.lr_scheduler: StepLR, MultiStepLR, ExponentialLR, LinearLR, ConstantLR,
// PolynomialLR, CosineAnnealingLR and CosineAnnealingWarmRestarts, with PyTorch 1.13's
// formulas.
#include "nn/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

constexpr Device kHost{DT_DEVICE_CPU, 0};
constexpr double kPi = 3.14159265358979323846;

// A finite number in [lo, hi] (INVALID_ARGUMENT naming it otherwise).
void check_range(const char* who, const char* what, double v, double lo, double hi) {
  if (!(v >= lo && v <= hi) || !std::isfinite(v))
    fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": ", what, " must be in [", lo, ", ", hi, "], got ", v));
}
void check_at_least(const char* who, const char* what, int64_t v, int64_t lo) {
  if (v < lo) fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": ", what, " must be >= ", lo, ", got ", v));
  if (v > kMaxWhole)
    fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": ", what, " must be at most 2^53 (what a checkpoint's float64 holds",
                                      " exactly), got ", v));
}
void check_finite_nonnegative(const char* who, const char* what, double v) {
  if (!(v >= 0) || !std::isfinite(v))
    fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": ", what, " must be finite and >= 0, got ", v));
}

// PyTorch's test for the bottom of a cosine of half-period t, (e - 1 - t) % (2 t) == 0
// in Python's modulo, for e >= 1: e - 1 == t modulo 2 t, without forming 2 t when that
// overflows int64 (then e - 1 < 2 t, and only e - 1 == t is a bottom).
bool at_cosine_bottom(int64_t e, int64_t t) {
  const int64_t k = e - 1;
  if (t > INT64_MAX / 2) return k == t;
  return k % (2 * t) == t;
}

}  // namespace

std::vector<int64_t> whole_numbers(const char* who, const std::string& key, const Tensor& t) {
  if (t.ndim() != 1)
    fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" must be 1-d, got shape ", dims_str(t.shape())));
  Tensor host = ops::to(t, kHost, DType::Float64, true);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = host.data_as<double>()[i];
    if (!(v >= 0) || v != std::floor(v) || v > static_cast<double>(kMaxWhole))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" must hold whole numbers in [0, 2^53], got ", v));
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

Tensor whole_numbers_tensor(const std::vector<int64_t>& values) {
  Tensor t = ops::empty(Dims{static_cast<int64_t>(values.size())}, DType::Int64, kHost);
  std::copy(values.begin(), values.end(), t.data_as<int64_t>());
  return t;
}

// ------------------------------------------------------------------------------ base

double LrScheduler::field_value(const Field& f) {
  if (f.number) return *f.number;
  if (f.whole) return static_cast<double>(*f.whole);
  return *f.flag ? 1.0 : 0.0;
}

void LrScheduler::set_field(const Field& f, double v) {
  if (f.number) *f.number = v;
  else if (f.whole) *f.whole = static_cast<int64_t>(v);
  else *f.flag = v == 1;
}

LrScheduler::LrScheduler(Ref<Optimizer> opt) : opt_(std::move(opt)) {}

void LrScheduler::initial_step() {
  base_lr_ = opt_->initial_lr();
  last_epoch_ = -1;
  advance(false);
}

void LrScheduler::set_rate(double lr) {
  opt_->set_lr(lr);
  last_lr_ = lr;
}

void LrScheduler::advance(bool restart) {
  const int64_t e = restart ? 0 : last_epoch_ + 1;
  const double current = opt_->lr();
  const double lr = restart ? closed_form_lr(e, current) : chained_lr(e, current);
  set_rate(lr);
  last_epoch_ = e;
}

void LrScheduler::advance_metric(double /*metric*/) {
  fail(DT_ERR_INVALID_ARGUMENT,
       cat(name(), " steps without a metric: call dt_lr_scheduler_step (only ReduceLROnPlateau takes a metric)"));
}

void LrScheduler::step() {
  std::lock_guard<std::mutex> lock(mu_);
  advance(false);
}

void LrScheduler::step_metric(double metric) {
  std::lock_guard<std::mutex> lock(mu_);
  advance_metric(metric);
}

double LrScheduler::last_lr() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_lr_;
}

int64_t LrScheduler::last_epoch() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_epoch_;
}

std::vector<LrScheduler::Field> LrScheduler::base_fields() {
  return {{"base_lr", &base_lr_, nullptr}, {"last_epoch", nullptr, &last_epoch_}, {"last_lr", &last_lr_, nullptr}};
}

Named LrScheduler::state_dict() {
  std::lock_guard<std::mutex> lock(mu_);
  Named out;
  for (const Field& f : fields()) out.emplace_back(f.name, ops::full(Dims{}, field_value(f), DType::Float64, kHost));
  for (auto& entry : save_extra()) out.push_back(std::move(entry));
  return out;
}

void LrScheduler::load_extra(const Named& extra) {
  if (extra.empty()) return;
  std::string names;
  for (const Field& f : fields()) names += cat(names.empty() ? "" : ", ", f.name);
  fail(DT_ERR_INVALID_ARGUMENT,
       cat(name(), ": unexpected key \"", extra.front().first, "\" (its state dict holds: ", names, ")"));
}

void LrScheduler::load_state_dict(const Named& entries) {
  std::lock_guard<std::mutex> lock(mu_);
  const char* who = name();
  const std::vector<Field> all = fields();
  // Every value is read and checked before any is written; on a failed check of the
  // settings together, the old values are put back.
  std::vector<double> before(all.size());
  for (size_t k = 0; k < all.size(); ++k) before[k] = field_value(all[k]);
  std::vector<double> after = before;
  Named extra;
  for (const auto& [key, t] : entries) {
    size_t k = 0;
    while (k < all.size() && key != all[k].name) ++k;
    if (k == all.size()) {
      extra.emplace_back(key, t);
      continue;
    }
    const double v = one_value(key, t, who);
    if (std::isnan(v)) fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" is NaN"));
    if (all[k].whole && (v != std::floor(v) || !(std::fabs(v) <= static_cast<double>(kMaxWhole))))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" must be a whole number, got ", v));
    if (all[k].flag && v != 0 && v != 1)
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" is a flag (0 or 1), got ", v));
    after[k] = v;
  }
  auto assign = [&](const std::vector<double>& values) {
    for (size_t k = 0; k < all.size(); ++k) set_field(all[k], values[k]);
  };
  assign(after);
  try {
    check();
    // -1: a scheduler of a SequentialLR whose turn has not come yet.
    if (last_epoch_ < -1) fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"last_epoch\" must be >= -1, got ", last_epoch_));
    load_extra(extra);
  } catch (...) {
    assign(before);
    throw;
  }
}

// --------------------------------------------------------------------- the schedulers
namespace {

class StepScheduler final : public LrScheduler {
 public:
  StepScheduler(Ref<Optimizer> opt, int64_t step_size, double gamma)
      : LrScheduler(std::move(opt)), step_size_(step_size), gamma_(gamma) {
    check();
    initial_step();
  }
  const char* name() const override { return "StepLR"; }

 private:
  void check() const override {
    check_at_least(name(), "step_size", step_size_, 1);
    check_finite_nonnegative(name(), "gamma", gamma_);
  }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"step_size", nullptr, &step_size_});
    f.push_back({"gamma", &gamma_, nullptr});
    return f;
  }
  double chained_lr(int64_t e, double current) override {
    return (e == 0 || e % step_size_ != 0) ? current : current * gamma_;
  }
  double closed_form_lr(int64_t e, double) override {
    return base_lr_ * std::pow(gamma_, static_cast<double>(e / step_size_));
  }
  int64_t step_size_;
  double gamma_;
};

class MultiStepScheduler final : public LrScheduler {
 public:
  MultiStepScheduler(Ref<Optimizer> opt, std::vector<int64_t> milestones, double gamma)
      : LrScheduler(std::move(opt)), milestones_(std::move(milestones)), gamma_(gamma) {
    // PyTorch keeps a Counter: a milestone listed twice multiplies by gamma twice.
    std::sort(milestones_.begin(), milestones_.end());
    check();
    initial_step();
  }
  const char* name() const override { return "MultiStepLR"; }

 private:
  void check() const override {
    check_finite_nonnegative(name(), "gamma", gamma_);
    for (int64_t m : milestones_)
      if (m < 0 || m > kMaxWhole)
        fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": milestones must be in [0, 2^53], got ", m));
  }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"gamma", &gamma_, nullptr});
    return f;
  }
  Named save_extra() override { return {{"milestones", whole_numbers_tensor(milestones_)}}; }
  void load_extra(const Named& extra) override {
    std::vector<int64_t> ms = milestones_;
    for (const auto& [key, t] : extra) {
      if (key != "milestones") LrScheduler::load_extra({{key, t}});
      ms = whole_numbers(name(), key, t);
    }
    std::sort(ms.begin(), ms.end());
    milestones_ = std::move(ms);  // the last step: nothing after it can fail
  }
  double chained_lr(int64_t e, double current) override {
    const auto n = std::count(milestones_.begin(), milestones_.end(), e);
    return n == 0 ? current : current * std::pow(gamma_, static_cast<double>(n));
  }
  double closed_form_lr(int64_t e, double) override {
    const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), e) - milestones_.begin();
    return base_lr_ * std::pow(gamma_, static_cast<double>(passed));
  }
  std::vector<int64_t> milestones_;
  double gamma_;
};

class ExponentialScheduler final : public LrScheduler {
 public:
  ExponentialScheduler(Ref<Optimizer> opt, double gamma) : LrScheduler(std::move(opt)), gamma_(gamma) {
    check();
    initial_step();
  }
  const char* name() const override { return "ExponentialLR"; }

 private:
  void check() const override { check_finite_nonnegative(name(), "gamma", gamma_); }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"gamma", &gamma_, nullptr});
    return f;
  }
  double chained_lr(int64_t e, double current) override { return e == 0 ? current : current * gamma_; }
  double closed_form_lr(int64_t e, double) override { return base_lr_ * std::pow(gamma_, static_cast<double>(e)); }
  double gamma_;
};

class LinearScheduler final : public LrScheduler {
 public:
  LinearScheduler(Ref<Optimizer> opt, double start, double end, int64_t total)
      : LrScheduler(std::move(opt)), start_(start), end_(end), total_(total) {
    check();
    initial_step();
  }
  const char* name() const override { return "LinearLR"; }

 private:
  void check() const override {
    // PyTorch 1.13 takes a start_factor of 0 and then divides by zero at its second
    // step; later versions refuse it, as here.
    if (!(start_ > 0 && start_ <= 1))
      fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": start_factor must be in (0, 1], got ", start_));
    check_range(name(), "end_factor", end_, 0, 1);
    check_at_least(name(), "total_iters", total_, 1);
  }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"start_factor", &start_, nullptr});
    f.push_back({"end_factor", &end_, nullptr});
    f.push_back({"total_iters", nullptr, &total_});
    return f;
  }
  double chained_lr(int64_t e, double current) override {
    if (e == 0) return current * start_;
    if (e > total_) return current;
    const double t = static_cast<double>(total_), k = static_cast<double>(e - 1);
    return current * (1.0 + (end_ - start_) / (t * start_ + k * (end_ - start_)));
  }
  double closed_form_lr(int64_t e, double) override {
    return base_lr_ * (start_ + (end_ - start_) * static_cast<double>(std::min(total_, e)) / static_cast<double>(total_));
  }
  double start_, end_;
  int64_t total_;
};

class ConstantScheduler final : public LrScheduler {
 public:
  ConstantScheduler(Ref<Optimizer> opt, double factor, int64_t total)
      : LrScheduler(std::move(opt)), factor_(factor), total_(total) {
    check();
    initial_step();
  }
  const char* name() const override { return "ConstantLR"; }

 private:
  void check() const override {
    // PyTorch 1.13 takes a factor of 0 and divides by zero at total_iters, and a
    // total_iters of 0 that never gives the rate back (against its own closed form).
    if (!(factor_ > 0 && factor_ <= 1))
      fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": factor must be in (0, 1], got ", factor_));
    check_at_least(name(), "total_iters", total_, 1);
  }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"factor", &factor_, nullptr});
    f.push_back({"total_iters", nullptr, &total_});
    return f;
  }
  double chained_lr(int64_t e, double current) override {
    if (e == 0) return current * factor_;
    if (e != total_) return current;
    return current * (1.0 / factor_);  // PyTorch's own rounding: the reciprocal first
  }
  double closed_form_lr(int64_t e, double) override {
    return base_lr_ * (factor_ + (e >= total_ ? 1.0 - factor_ : 0.0));
  }
  double factor_;
  int64_t total_;
};

class PolynomialScheduler final : public LrScheduler {
 public:
  PolynomialScheduler(Ref<Optimizer> opt, int64_t total, double power)
      : LrScheduler(std::move(opt)), total_(total), power_(power) {
    check();
    initial_step();
  }
  const char* name() const override { return "PolynomialLR"; }

 private:
  void check() const override {
    // PyTorch 1.13 checks neither: it divides by zero at total_iters 0, and a negative
    // power raises 0 to it at epoch total_iters (and raises the rate before that).
    check_at_least(name(), "total_iters", total_, 1);
    check_finite_nonnegative(name(), "power", power_);
  }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"total_iters", nullptr, &total_});
    f.push_back({"power", &power_, nullptr});
    return f;
  }
  double chained_lr(int64_t e, double current) override {
    if (e == 0 || e > total_) return current;
    const double t = static_cast<double>(total_), ed = static_cast<double>(e);
    return current * std::pow((1.0 - ed / t) / (1.0 - (ed - 1) / t), power_);
  }
  double closed_form_lr(int64_t e, double) override {
    const double t = static_cast<double>(total_);
    return base_lr_ * std::pow(1.0 - static_cast<double>(std::min(total_, e)) / t, power_);
  }
  int64_t total_;
  double power_;
};

class CosineScheduler final : public LrScheduler {
 public:
  CosineScheduler(Ref<Optimizer> opt, int64_t t_max, double eta_min)
      : LrScheduler(std::move(opt)), t_max_(t_max), eta_min_(eta_min) {
    check();
    initial_step();
  }
  const char* name() const override { return "CosineAnnealingLR"; }

 private:
  void check() const override {
    check_at_least(name(), "T_max", t_max_, 1);
    check_finite_nonnegative(name(), "eta_min", eta_min_);
  }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"T_max", nullptr, &t_max_});
    f.push_back({"eta_min", &eta_min_, nullptr});
    return f;
  }
  double chained_lr(int64_t e, double current) override {
    const double t = static_cast<double>(t_max_);
    if (e == 0) return current;
    // At the bottom of a cosine the ratio below is 0/0: PyTorch adds the step instead.
    if (at_cosine_bottom(e, t_max_))
      return current + (base_lr_ - eta_min_) * (1 - std::cos(kPi / t)) / 2;
    const double ed = static_cast<double>(e);
    // Rounding can take the rate a hair below 0 when eta_min is 0: clamp it there.
    const double lr = (1 + std::cos(kPi * ed / t)) / (1 + std::cos(kPi * (ed - 1) / t)) * (current - eta_min_) + eta_min_;
    return std::max(lr, 0.0);
  }
  double closed_form_lr(int64_t e, double) override {
    return eta_min_ + (base_lr_ - eta_min_) * (1 + std::cos(kPi * static_cast<double>(e) / static_cast<double>(t_max_))) / 2;
  }
  int64_t t_max_;
  double eta_min_;
};

class WarmRestartsScheduler final : public LrScheduler {
 public:
  WarmRestartsScheduler(Ref<Optimizer> opt, int64_t t_0, int64_t t_mult, double eta_min)
      : LrScheduler(std::move(opt)), t_0_(t_0), t_i_(t_0), t_mult_(t_mult), eta_min_(eta_min) {
    check();
    initial_step();
  }
  const char* name() const override { return "CosineAnnealingWarmRestarts"; }

 private:
  void check() const override {
    check_at_least(name(), "T_0", t_0_, 1);
    check_at_least(name(), "T_mult", t_mult_, 1);
    check_at_least(name(), "T_i", t_i_, 1);
    if (t_cur_ < 0 || t_cur_ >= t_i_)
      fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": T_cur must be in [0, T_i), got ", t_cur_, " with T_i ", t_i_));
    check_finite_nonnegative(name(), "eta_min", eta_min_);
  }
  std::vector<Field> fields() override {
    auto f = base_fields();
    f.push_back({"T_0", nullptr, &t_0_});
    f.push_back({"T_i", nullptr, &t_i_});
    f.push_back({"T_mult", nullptr, &t_mult_});
    f.push_back({"eta_min", &eta_min_, nullptr});
    f.push_back({"T_cur", nullptr, &t_cur_});
    return f;
  }
  double rate(int64_t t_cur, int64_t t_i) const {
    return eta_min_ + (base_lr_ - eta_min_) * (1 + std::cos(kPi * static_cast<double>(t_cur) / static_cast<double>(t_i))) / 2;
  }
  // Not chainable: every rate comes from T_cur and T_i (PyTorch's own step()).
  double chained_lr(int64_t, double) override { return rate(t_cur_, t_i_); }
  void advance(bool restart) override {
    int64_t t_cur = 0, t_i = t_0_, e = 0;
    if (!restart && last_epoch_ >= 0) {
      e = last_epoch_ + 1;
      t_cur = t_cur_ + 1;
      t_i = t_i_;
      if (t_cur >= t_i) {
        t_cur -= t_i;
        if (t_i > kMaxWhole / t_mult_)
          fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": the next period would pass 2^53 epochs"));
        t_i *= t_mult_;
      }
    }
    set_rate(rate(t_cur, t_i));
    t_cur_ = t_cur;
    t_i_ = t_i;
    last_epoch_ = e;
  }
  int64_t t_0_, t_i_, t_mult_;
  double eta_min_;
  int64_t t_cur_ = 0;
};

}  // namespace

LrScheduler* new_step_lr(Ref<Optimizer> opt, int64_t step_size, double gamma) {
  return new StepScheduler(std::move(opt), step_size, gamma);
}
LrScheduler* new_multi_step_lr(Ref<Optimizer> opt, std::vector<int64_t> milestones, double gamma) {
  return new MultiStepScheduler(std::move(opt), std::move(milestones), gamma);
}
LrScheduler* new_exponential_lr(Ref<Optimizer> opt, double gamma) {
  return new ExponentialScheduler(std::move(opt), gamma);
}
LrScheduler* new_linear_lr(Ref<Optimizer> opt, double start_factor, double end_factor, int64_t total_iters) {
  return new LinearScheduler(std::move(opt), start_factor, end_factor, total_iters);
}
LrScheduler* new_constant_lr(Ref<Optimizer> opt, double factor, int64_t total_iters) {
  return new ConstantScheduler(std::move(opt), factor, total_iters);
}
LrScheduler* new_polynomial_lr(Ref<Optimizer> opt, int64_t total_iters, double power) {
  return new PolynomialScheduler(std::move(opt), total_iters, power);
}
LrScheduler* new_cosine_annealing_lr(Ref<Optimizer> opt, int64_t t_max, double eta_min) {
  return new CosineScheduler(std::move(opt), t_max, eta_min);
}
LrScheduler* new_cosine_annealing_warm_restarts(Ref<Optimizer> opt, int64_t t_0, int64_t t_mult, double eta_min) {
  return new WarmRestartsScheduler(std::move(opt), t_0, t_mult, eta_min);
}

}  // namespace dt::nn
