// An optimizer's learning rate, its other settings by name, and its checkpoint state
// (optim.h): what a schedule sets between steps, and what dt_optimizer_state_dict /
// _load_state_dict save and restore under PyTorch's names for optimizer.state_dict()'s
// entries.
#include <cmath>
#include <string>

#include "core/error.h"
#include "nn/optim.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

constexpr Device kHost{DT_DEVICE_CPU, 0};

// "state.<i>.<rest>" -> i and rest; false for any other key (or an index that is not a
// plain decimal number).
bool parse_state_key(const std::string& key, size_t* index, std::string* rest) {
  const std::string prefix = "state.";
  if (key.compare(0, prefix.size(), prefix) != 0) return false;
  size_t at = prefix.size(), end = at;
  while (end < key.size() && key[end] >= '0' && key[end] <= '9') ++end;
  if (end == at || end - at > 18 || end >= key.size() || key[end] != '.') return false;
  *index = std::stoull(key.substr(at, end - at));
  *rest = key.substr(end + 1);
  return true;
}

}  // namespace

double one_value(const std::string& key, const Tensor& t, const char* who) {
  if (t.numel() != 1)
    fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" must hold one value but has shape ", dims_str(t.shape())));
  Tensor host = ops::to(t, kHost, DType::Float64, true);
  return *host.data_as<double>();
}

double Optimizer::lr() {
  std::lock_guard<std::mutex> lock(mu_);
  return lr_slot();
}

void Optimizer::set_lr(double lr) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!(lr >= 0) || std::isinf(lr)) fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": invalid learning rate ", lr));
  lr_slot() = lr;
}

namespace {
// The setting called name, or INVALID_ARGUMENT listing the optimizer's settings.
Optimizer::Setting find_setting(const std::vector<Optimizer::Setting>& all, const std::string& name, const char* who) {
  std::string names;
  for (const Optimizer::Setting& s : all) {
    if (name == s.name) return s;
    names += cat(names.empty() ? "" : ", ", s.name);
  }
  fail(DT_ERR_INVALID_ARGUMENT, cat(who, " has no setting \"", name, "\" (its settings: ", names, ")"));
}

double setting_value(const Optimizer::Setting& s) { return s.number ? *s.number : (*s.flag ? 1.0 : 0.0); }
void assign_setting(const Optimizer::Setting& s, double v) {
  if (s.number) *s.number = v;
  else *s.flag = v == 1;
}
// A flag takes 0 or 1; the constructor's checks of all settings together
// (check_settings) follow the assignment.
void check_flag_value(const Optimizer::Setting& s, double value, const char* who) {
  if (s.flag && value != 0 && value != 1)
    fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", s.name, "\" is a flag: 0 or 1, got ", value));
}
}  // namespace

double Optimizer::option(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  return setting_value(find_setting(settings(), name, this->name()));
}

void Optimizer::set_option(const std::string& name, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  const Setting s = find_setting(settings(), name, this->name());
  check_flag_value(s, value, this->name());
  // The learning rate as set_lr takes it (finite); the rest as the constructor does.
  if (s.number == &lr_slot() && std::isinf(value))
    fail(DT_ERR_INVALID_ARGUMENT, cat(this->name(), ": invalid learning rate ", value));
  const double old = setting_value(s);
  assign_setting(s, value);
  try {
    check_settings();
  } catch (...) {
    assign_setting(s, old);
    throw;
  }
}

bool Optimizer::has_option(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Setting& s : settings())
    if (name == s.name) return true;
  return false;
}

double Optimizer::initial_lr() {
  std::lock_guard<std::mutex> lock(mu_);
  if (initial_lr_ < 0) initial_lr_ = lr_slot();
  return initial_lr_;
}

double Optimizer::initial_lr_or(double lr) {
  std::lock_guard<std::mutex> lock(mu_);
  if (initial_lr_ < 0) initial_lr_ = lr;
  return initial_lr_;
}

void Optimizer::set_initial_lr(double lr) {
  std::lock_guard<std::mutex> lock(mu_);
  initial_lr_ = lr;
}

Named Optimizer::state_dict() {
  std::lock_guard<std::mutex> lock(mu_);
  Named out;
  // The settings first, as PyTorch's param_groups: each under its name, a 0-d float64.
  for (const Setting& s : settings()) out.emplace_back(s.name, ops::full(Dims{}, setting_value(s), DType::Float64, kHost));
  const std::vector<Slot> slots = this->slots();
  const std::vector<int64_t>* steps = step_counts();
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string prefix = cat("state.", i, ".");
    bool any = false;
    for (const Slot& s : slots) any = any || (*s.tensors)[i].defined();
    if (!any) continue;
    if (steps)
      out.emplace_back(prefix + "step", ops::full(Dims{}, static_cast<double>((*steps)[i]), DType::Float32, kHost));
    for (const Slot& s : slots) {
      const Tensor& t = (*s.tensors)[i];
      if (t.defined()) out.emplace_back(prefix + s.name, ops::to(t, t.device(), t.dtype(), true));
    }
  }
  return out;
}

void Optimizer::load_state_dict(const Named& entries) {
  std::lock_guard<std::mutex> lock(mu_);
  const char* who = name();
  // The settings first, checked together, since they decide which state a parameter
  // keeps (a momentum buffer only with momentum, max_exp_avg_sq only with amsgrad); put
  // back as they were if anything after them fails.
  const std::vector<Setting> all = settings();
  std::vector<double> before(all.size());
  for (size_t k = 0; k < all.size(); ++k) before[k] = setting_value(all[k]);
  try {
    for (const auto& [key, t] : entries) {
      for (const Setting& s : all) {
        if (key != s.name) continue;
        const double v = one_value(key, t, who);
        check_flag_value(s, v, who);
        if (s.number == &lr_slot() && (!(v >= 0) || std::isinf(v)))
          fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"lr\" must be a finite learning rate >= 0, got ", v));
        assign_setting(s, v);
      }
    }
    check_settings();
    load_state_locked(entries, all);
  } catch (...) {
    for (size_t k = 0; k < all.size(); ++k) assign_setting(all[k], before[k]);
    throw;
  }
}

void Optimizer::load_state_locked(const Named& entries, const std::vector<Setting>& settings) {
  const char* who = name();
  const std::vector<Slot> slots = this->slots();
  std::vector<int64_t>* steps = step_counts();
  const size_t n = params_.size();
  // Everything is read, checked and converted into these first; nothing of the
  // optimizer's state changes until the last check has passed.
  std::vector<std::vector<Tensor>> fresh(slots.size(), std::vector<Tensor>(n));
  std::vector<int64_t> new_steps(n, 0);
  std::vector<bool> has_step(n, false);
  for (const auto& [key, t] : entries) {
    bool setting = false;
    for (const Setting& s : settings) setting = setting || key == s.name;
    if (setting) continue;
    size_t i = 0;
    std::string rest;
    if (!parse_state_key(key, &i, &rest)) {
      std::string names;
      for (const Setting& s : settings) names += cat(s.name, ", ");
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": unexpected key \"", key, "\" (expected a setting: ", names,
                                        "or \"state.<i>.<name>\")"));
    }
    if (i >= n)
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" names parameter ", i, " but the optimizer has ", n));
    if (steps && rest == "step") {
      const double v = one_value(key, t, who);
      if (!(v >= 0) || v != std::floor(v) || v > 9.0e15)
        fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" must be a whole number of steps >= 0, got ", v));
      new_steps[i] = static_cast<int64_t>(v);
      has_step[i] = true;
      continue;
    }
    size_t k = 0;
    while (k < slots.size() && rest != slots[k].name) ++k;
    if (k == slots.size()) {
      std::string names;
      for (const Slot& s : slots) names += cat(names.empty() ? "" : ", ", s.name);
      if (steps) names += ", step";
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": unexpected key \"", key, "\" (this optimizer keeps ",
                                        names.empty() ? std::string("no state per parameter") : names, ")"));
    }
    const Tensor& p = params_[i];
    if (t.shape() != p.shape())
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" has shape ", dims_str(t.shape()), " but parameter ", i,
                                        " has shape ", dims_str(p.shape())));
    if (!is_floating(t.dtype()))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"", key, "\" must be floating, got ", dtype_name(t.dtype())));
    fresh[k][i] = ops::to(t, p.device(), p.dtype(), true);
  }
  // A parameter's state comes whole: every slot (and the step count) or none.
  for (size_t i = 0; i < n; ++i) {
    bool any = has_step[i], all = !steps || has_step[i];
    for (size_t k = 0; k < slots.size(); ++k) {
      any = any || fresh[k][i].defined();
      all = all && fresh[k][i].defined();
    }
    if (!any || all) continue;
    std::string missing = steps && !has_step[i] ? "step" : "";
    for (size_t k = 0; k < slots.size() && missing.empty(); ++k)
      if (!fresh[k][i].defined()) missing = slots[k].name;
    fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": \"state.", i, ".", missing, "\" is missing (the state of parameter ", i,
                                      " is only partly there)"));
  }
  // Commit. A state tensor that exists with the new one's shape, dtype and device takes
  // the values in place (a copy that allocates nothing), so that a graph which captured
  // a step reads the loaded state.
  for (size_t k = 0; k < slots.size(); ++k) {
    std::vector<Tensor>& held = *slots[k].tensors;
    for (size_t i = 0; i < n; ++i) {
      Tensor& now = held[i];
      const Tensor& next = fresh[k][i];
      if (next.defined() && now.defined() && now.device() == next.device() && now.dtype() == next.dtype() &&
          now.shape() == next.shape())
        ops::copy_(now, next);
      else
        now = next;
    }
  }
  if (steps) *steps = new_steps;
}

}  // namespace dt::nn
