// The schedulers that hold schedulers, as PyTorch 1.13's: SequentialLR (hands over from
// one to the next at its milestones) and ChainedScheduler (steps all of them at each
// step), with what they share: the checks of the list, and their schedulers' state
// under "schedulers.<k>." in a state dict.
#include <algorithm>
#include <functional>
#include <mutex>
#include <string>

#include "core/error.h"
#include "nn/lr_scheduler.h"

namespace dt::nn {

// A scheduler over a list of schedulers of one optimizer. Friend of LrScheduler: it
// reads and loads the state of those it holds.
class SchedulerList : public LrScheduler {
 public:
  bool holds_schedulers() const override { return true; }

 protected:
  SchedulerList(Ref<Optimizer> opt, std::vector<Ref<LrScheduler>> schedulers)
      : LrScheduler(std::move(opt)), schedulers_(std::move(schedulers)) {}

  // INVALID_ARGUMENT for an empty list, a scheduler of another optimizer than opt_
  // (`whose`: which one that is, in the message), one this list cannot step (`why`), or
  // one listed twice.
  void check_schedulers(const char* whose, const char* why) const {
    const char* who = name();
    if (schedulers_.empty()) fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": needs at least one scheduler"));
    for (size_t k = 0; k < schedulers_.size(); ++k) {
      LrScheduler* s = schedulers_[k].get();
      if (s->optimizer() != opt_.get())
        fail(DT_ERR_INVALID_ARGUMENT,
             cat(who, ": schedulers[", k, "] (", s->name(), ") belongs to another optimizer than ", whose));
      if (!s->steps_by_epoch() || s->holds_schedulers())
        fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": schedulers[", k, "] is a ", s->name(), ", ", why));
      for (size_t j = 0; j < k; ++j)
        if (schedulers_[j].get() == s)
          fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": schedulers[", j, "] and schedulers[", k, "] are the same scheduler"));
    }
  }

  Named schedulers_state() {
    Named out;
    for (size_t k = 0; k < schedulers_.size(); ++k)
      for (auto& [key, t] : schedulers_[k]->state_dict()) out.emplace_back(cat("schedulers.", k, ".", key), t);
    return out;
  }

  // The entries under "schedulers.<k>." by scheduler (the prefix taken off); the others
  // go to *rest. INVALID_ARGUMENT for a k past the list.
  std::vector<Named> split_schedulers_state(const Named& extra, Named* rest) const {
    std::vector<Named> parts(schedulers_.size());
    const std::string prefix = "schedulers.";
    for (const auto& [key, t] : extra) {
      size_t at = prefix.size(), end = at;
      if (key.compare(0, at, prefix) == 0)
        while (end < key.size() && end - at < 6 && key[end] >= '0' && key[end] <= '9') ++end;
      if (end == at || end >= key.size() || key[end] != '.') {
        rest->emplace_back(key, t);
        continue;
      }
      const size_t k = std::stoul(key.substr(at, end - at));
      if (k >= schedulers_.size())
        fail(DT_ERR_INVALID_ARGUMENT, cat(name(), ": \"", key, "\" names scheduler ", k, " but there are ",
                                          schedulers_.size()));
      parts[k].emplace_back(key.substr(end + 1), t);
    }
    return parts;
  }

  // Each scheduler's part, all or nothing: those loaded before one that refuses its
  // entries get their old state back.
  void load_schedulers_state(const std::vector<Named>& parts) {
    std::vector<Named> before;
    try {
      for (size_t k = 0; k < schedulers_.size(); ++k) {
        before.push_back(schedulers_[k]->state_dict());
        if (!parts[k].empty()) schedulers_[k]->load_state_dict(parts[k]);
      }
    } catch (...) {
      for (size_t k = 0; k < before.size(); ++k) schedulers_[k]->load_state_dict(before[k]);
      throw;
    }
  }

  double chained_lr(int64_t, double current) override { return current; }  // advance() is the whole step
  std::vector<Field> fields() override { return base_fields(); }

  std::vector<Ref<LrScheduler>> schedulers_;
};

// Friend of LrScheduler: it steps and restarts the schedulers it holds.
class SequentialScheduler final : public SchedulerList {
 public:
  SequentialScheduler(Ref<Optimizer> opt, std::vector<Ref<LrScheduler>> schedulers, std::vector<int64_t> milestones)
      : SchedulerList(std::move(opt), std::move(schedulers)), milestones_(std::move(milestones)) {
    check_schedulers("the one given", "which cannot be restarted at a milestone");
    check();
    // PyTorch's constructor: the rate back to the initial one, every scheduler one epoch
    // back, and the first one started again.
    base_lr_ = opt_->initial_lr();
    opt_->set_lr(base_lr_);
    last_epoch_ = 0;
    for (Ref<LrScheduler>& s : schedulers_) {
      std::lock_guard<std::mutex> lock(s->mu_);
      s->last_epoch_ -= 1;
    }
    LrScheduler& first = *schedulers_.front();
    std::lock_guard<std::mutex> lock(first.mu_);
    first.advance(false);
    last_lr_ = first.last_lr_;
  }
  const char* name() const override { return "SequentialLR"; }

 private:
  void check() const override {
    const char* who = name();
    if (milestones_.size() + 1 != schedulers_.size())
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": expects one milestone fewer than schedulers, got ", schedulers_.size(),
                                        " schedulers and ", milestones_.size(), " milestones"));
    for (size_t k = 0; k < milestones_.size(); ++k)
      if (milestones_[k] < 1 || milestones_[k] > kMaxWhole || (k > 0 && milestones_[k] <= milestones_[k - 1]))
        fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": milestones must be in [1, 2^53] and increasing, got ", milestones_[k],
                                          " at ", k));
  }
  Named save_extra() override {
    Named out{{"milestones", whole_numbers_tensor(milestones_)}};
    for (auto& entry : schedulers_state()) out.push_back(std::move(entry));
    return out;
  }
  // The milestones and each scheduler's state, all or nothing.
  void load_extra(const Named& extra) override {
    Named rest, unknown;
    const std::vector<Named> parts = split_schedulers_state(extra, &rest);
    std::vector<int64_t> ms = milestones_;
    for (const auto& [key, t] : rest) {
      if (key == "milestones")
        ms = whole_numbers(name(), key, t);
      else
        unknown.emplace_back(key, t);
    }
    LrScheduler::load_extra(unknown);  // refuses any
    std::swap(ms, milestones_);
    try {
      check();
      load_schedulers_state(parts);
    } catch (...) {
      std::swap(ms, milestones_);
      throw;
    }
  }
  void advance(bool) override {
    const int64_t e = last_epoch_ + 1;
    const size_t idx = static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), e) -
                                           milestones_.begin());
    LrScheduler& s = *schedulers_[idx];
    std::lock_guard<std::mutex> lock(s.mu_);
    s.advance(idx > 0 && milestones_[idx - 1] == e);
    last_epoch_ = e;
    last_lr_ = s.last_lr_;
  }
  std::vector<int64_t> milestones_;
};

// Friend of LrScheduler: it steps the schedulers it holds, and puts their numbers back
// when one of them refuses a step.
class ChainedScheduler final : public SchedulerList {
 public:
  // opt: schedulers[0]'s (PyTorch's ChainedScheduler takes no optimizer).
  ChainedScheduler(Ref<Optimizer> opt, std::vector<Ref<LrScheduler>> schedulers)
      : SchedulerList(std::move(opt), std::move(schedulers)) {
    check_schedulers("schedulers[0]", "which a ChainedScheduler cannot step");
    for (Ref<LrScheduler>& s : schedulers_) lock_order_.push_back(s.get());
    std::sort(lock_order_.begin(), lock_order_.end(), std::less<LrScheduler*>());
    // PyTorch's constructor steps nothing: the rate stays, and is the last one.
    base_lr_ = opt_->initial_lr();
    last_epoch_ = 0;
    last_lr_ = opt_->lr();
  }
  const char* name() const override { return "ChainedScheduler"; }

 private:
  Named save_extra() override { return schedulers_state(); }
  void load_extra(const Named& extra) override {
    Named rest;
    const std::vector<Named> parts = split_schedulers_state(extra, &rest);
    LrScheduler::load_extra(rest);  // refuses any
    load_schedulers_state(parts);
  }
  // Every scheduler's step in order, all or nothing. They are locked for the whole step
  // in address order, so two chains sharing schedulers cannot deadlock; their numbers
  // (every one that a step changes is a Field) and the optimizer's rate and momentum are
  // kept to put back if one refuses. What a LambdaLR's function did is the user's.
  void advance(bool restart) override {
    if (restart) fail(DT_ERR_INVALID_ARGUMENT, cat(name(), " cannot be restarted at a milestone"));
    std::vector<std::unique_lock<std::mutex>> locks;
    for (LrScheduler* s : lock_order_) locks.emplace_back(s->mu_);
    struct Kept {
      std::vector<Field> fields;
      std::vector<double> values;
    };
    std::vector<Kept> kept;
    for (Ref<LrScheduler>& s : schedulers_) {
      Kept k{s->fields(), {}};
      for (const Field& f : k.fields) k.values.push_back(field_value(f));
      kept.push_back(std::move(k));
    }
    const double lr = opt_->lr();
    const char* momentum = momentum_option(*opt_);
    const double m = momentum ? opt_->option(momentum) : 0;
    try {
      for (Ref<LrScheduler>& s : schedulers_) s->advance(false);
    } catch (...) {
      for (const Kept& k : kept)
        for (size_t j = 0; j < k.fields.size(); ++j) set_field(k.fields[j], k.values[j]);
      if (momentum) opt_->set_option(momentum, m);
      opt_->set_lr(lr);
      throw;
    }
    ++last_epoch_;
    last_lr_ = opt_->lr();
  }
  std::vector<LrScheduler*> lock_order_;  // schedulers_ by address: the order advance() locks them in
};

LrScheduler* new_sequential_lr(Ref<Optimizer> opt, std::vector<Ref<LrScheduler>> schedulers,
                               std::vector<int64_t> milestones) {
  return new SequentialScheduler(std::move(opt), std::move(schedulers), std::move(milestones));
}
LrScheduler* new_chained_scheduler(std::vector<Ref<LrScheduler>> schedulers) {
  if (schedulers.empty()) fail(DT_ERR_INVALID_ARGUMENT, "ChainedScheduler: needs at least one scheduler");
  Optimizer* opt = schedulers.front()->optimizer();
  opt->ref();
  return new ChainedScheduler(Ref<Optimizer>::adopt(opt), std::move(schedulers));
}

}  // namespace dt::nn
