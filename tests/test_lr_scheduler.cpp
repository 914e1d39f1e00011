// Learning-rate schedulers through the C ABI, against torch.optim.lr_scheduler: every
// case of tests/reference/scheduler_cases.json (from gen_scheduler_reference.py) runs
// its script (steps, metrics, a rate set by hand) and must give PyTorch's rate,
// momentum, get_last_lr() and last_epoch after each action; then again interrupted
// half-way by a checkpoint (the optimizer's and the schedulers' state dicts loaded into
// fresh ones), which must go on as the uninterrupted run. And the errors: settings
// PyTorch refuses, a step of the wrong kind, a OneCycleLR stepped too far, the checks of
// SequentialLR, state dicts that do not fit; each leaves the optimizer's rate and the
// scheduler's state as they were.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/dt_test.h"

namespace {

using json = nlohmann::json;
using O = Handle<dt_optimizer, dt_optimizer_release>;
using S = Handle<dt_lr_scheduler, dt_lr_scheduler_release>;
using SD = Handle<dt_state_dict, dt_state_dict_release>;

class LrScheduler : public LeakChecked {};

const json& Cases() {
  static const json cases = [] {
    std::ifstream in(std::string(DT_TEST_DATA_DIR) + "/reference/scheduler_cases.json");
    return in ? json::parse(in)["cases"] : json::array();
  }();
  return cases;
}

// A float32 parameter of two zeros.
T parameter() {
  T p;
  const int64_t shape[] = {2};
  EXPECT_EQ(dt_tensor_zeros(shape, 1, DT_FLOAT32, cpu(), p.out()), DT_OK);
  EXPECT_EQ(dt_tensor_set_requires_grad(p, 1), DT_OK);
  return p;
}

dt_status make_optimizer(const json& spec, dt_tensor* p, dt_optimizer** out) {
  const dt_tensor* ps[] = {p};
  const std::string kind = spec["kind"];
  const double lr = spec["lr"];
  if (kind == "sgd") return dt_sgd_new(ps, 1, lr, spec.value("momentum", 0.0), 0, 0, 0, out);
  if (kind == "adam") return dt_adam_new(ps, 1, lr, 0.9, 0.999, 1e-8, 0, 0, out);
  if (kind == "adagrad") return dt_adagrad_new(ps, 1, lr, 0, 0, 0, 1e-10, out);
  ADD_FAILURE() << "unknown optimizer " << kind;
  return DT_ERR_INVALID_ARGUMENT;
}

// The functions of gen_scheduler_reference.py's LAMBDAS, by the same names.
dt_lr_lambda_fn lambda_named(const std::string& name) {
  if (name == "hf_linear_warmup_3_10")
    return [](int64_t e, void*) { return e < 3 ? double(e) / 3 : std::max(0.0, double(10 - e) / 7); };
  if (name == "inverse_sqrt_4")
    return [](int64_t e, void*) { return e < 4 ? double(e + 1) / 4 : 2 / std::sqrt(double(e + 1)); };
  if (name == "times_0_9") return [](int64_t, void*) { return 0.9; };
  if (name == "halve_every_third") return [](int64_t e, void*) { return e % 3 == 0 ? 0.5 : 1.0; };
  ADD_FAILURE() << "unknown lr_lambda " << name;
  return nullptr;
}

// One scheduler of a case, with PyTorch's defaults for the arguments the case leaves out.
dt_status make_scheduler(const json& spec, dt_optimizer* opt, const std::vector<dt_lr_scheduler*>& made,
                         dt_lr_scheduler** out) {
  const std::string kind = spec["kind"];
  const json a = spec.value("args", json::object());
  if (kind == "StepLR") return dt_step_lr_new(opt, a["step_size"], a.value("gamma", 0.1), out);
  if (kind == "MultiStepLR") {
    std::vector<int64_t> ms = a["milestones"];
    return dt_multi_step_lr_new(opt, ms.data(), ms.size(), a.value("gamma", 0.1), out);
  }
  if (kind == "ExponentialLR") return dt_exponential_lr_new(opt, a["gamma"], out);
  if (kind == "LinearLR")
    return dt_linear_lr_new(opt, a.value("start_factor", 1.0 / 3), a.value("end_factor", 1.0),
                            a.value("total_iters", int64_t{5}), out);
  if (kind == "ConstantLR")
    return dt_constant_lr_new(opt, a.value("factor", 1.0 / 3), a.value("total_iters", int64_t{5}), out);
  if (kind == "PolynomialLR")
    return dt_polynomial_lr_new(opt, a.value("total_iters", int64_t{5}), a.value("power", 1.0), out);
  if (kind == "CosineAnnealingLR") return dt_cosine_annealing_lr_new(opt, a["T_max"], a.value("eta_min", 0.0), out);
  if (kind == "CosineAnnealingWarmRestarts")
    return dt_cosine_annealing_warm_restarts_new(opt, a["T_0"], a.value("T_mult", int64_t{1}), a.value("eta_min", 0.0),
                                                 out);
  if (kind == "OneCycleLR")
    return dt_one_cycle_lr_new(opt, a["max_lr"], a["total_steps"], a.value("pct_start", 0.3),
                               a.value("anneal_strategy", std::string("cos")).c_str(), a.value("cycle_momentum", true),
                               a.value("base_momentum", 0.85), a.value("max_momentum", 0.95),
                               a.value("div_factor", 25.0), a.value("final_div_factor", 1e4),
                               a.value("three_phase", false), out);
  if (kind == "CyclicLR")
    return dt_cyclic_lr_new(opt, a["base_lr"], a["max_lr"], a.value("step_size_up", int64_t{2000}),
                            a.value("step_size_down", int64_t{0}), a.value("mode", std::string("triangular")).c_str(),
                            a.value("gamma", 1.0), a.value("cycle_momentum", true), a.value("base_momentum", 0.8),
                            a.value("max_momentum", 0.9), out);
  if (kind == "ReduceLROnPlateau")
    return dt_reduce_lr_on_plateau_new(opt, a.value("mode", std::string("min")).c_str(), a.value("factor", 0.1),
                                       a.value("patience", int64_t{10}), a.value("threshold", 1e-4),
                                       a.value("threshold_mode", std::string("rel")).c_str(),
                                       a.value("cooldown", int64_t{0}), a.value("min_lr", 0.0), a.value("eps", 1e-8),
                                       out);
  if (kind == "LambdaLR") return dt_lambda_lr_new(opt, lambda_named(a["lr_lambda"]), nullptr, nullptr, out);
  if (kind == "MultiplicativeLR")
    return dt_multiplicative_lr_new(opt, lambda_named(a["lr_lambda"]), nullptr, nullptr, out);
  if (kind == "ChainedScheduler") {
    std::vector<dt_lr_scheduler*> children;
    for (size_t i : spec["children"]) children.push_back(made[i]);
    return dt_chained_scheduler_new(children.data(), children.size(), out);
  }
  if (kind == "SequentialLR") {
    std::vector<dt_lr_scheduler*> children;
    for (size_t i : spec["children"]) children.push_back(made[i]);
    std::vector<int64_t> ms = spec["milestones"];
    return dt_sequential_lr_new(opt, children.data(), children.size(), ms.data(), out);
  }
  ADD_FAILURE() << "unknown scheduler " << kind;
  return DT_ERR_INVALID_ARGUMENT;
}

// A case's optimizer and schedulers, as its script makes them.
struct ScriptRun {
  T p = parameter();
  O opt;
  std::vector<dt_lr_scheduler*> scheds;
  explicit ScriptRun(const json& c) {
    EXPECT_EQ(make_optimizer(c["optimizer"], p, opt.out()), DT_OK) << dt_last_error_message();
    for (const json& s : c["schedulers"]) {
      dt_lr_scheduler* h = nullptr;
      EXPECT_EQ(make_scheduler(s, opt, scheds, &h), DT_OK) << s.dump() << ": " << dt_last_error_message();
      scheds.push_back(h);
    }
  }
  ~ScriptRun() {
    for (dt_lr_scheduler* s : scheds) dt_lr_scheduler_release(s);
  }
  void act(const json& a) {
    if (a.contains("step")) {
      DT_ASSERT_OK(dt_optimizer_step(opt));
      DT_ASSERT_OK(dt_lr_scheduler_step(scheds[a["step"].get<size_t>()]));
    } else if (a.contains("metric")) {
      DT_ASSERT_OK(dt_lr_scheduler_step_metric(scheds[a["sched"].get<size_t>()], a["metric"]));
    } else {
      DT_ASSERT_OK(dt_optimizer_set_lr(opt, a["set_lr"]));
    }
  }
};

// PyTorch's rate, within rounding. A OneCycleLR stepped once past its last step
// extrapolates; PyTorch then sets a negative rate, devtensor's rates stop at 0.
void expect_rate(double got, double want, const std::string& where) {
  want = std::max(want, 0.0);
  EXPECT_NEAR(got, want, 1e-12 + 1e-12 * std::fabs(want)) << where;
}

void expect_record(ScriptRun& r, const json& want, const std::string& where) {
  double lr = -1;
  ASSERT_EQ(dt_optimizer_lr(r.opt, &lr), DT_OK);
  expect_rate(lr, want["lr"], where + " lr");
  if (!want["momentum"].is_null()) {
    double m = -1;
    if (dt_optimizer_option(r.opt, "beta1", &m) != DT_OK) ASSERT_EQ(dt_optimizer_option(r.opt, "momentum", &m), DT_OK);
    EXPECT_NEAR(m, want["momentum"].get<double>(), 1e-12) << where << " momentum";
  }
  for (size_t k = 0; k < r.scheds.size(); ++k) {
    int64_t epoch = -7;
    ASSERT_EQ(dt_lr_scheduler_last_epoch(r.scheds[k], &epoch), DT_OK);
    EXPECT_EQ(epoch, want["last_epoch"][k].get<int64_t>()) << where << " last_epoch of scheduler " << k;
    if (want["last_lr"][k].is_null()) continue;  // PyTorch's plateau has none before its first step
    double last = -1;
    ASSERT_EQ(dt_lr_scheduler_last_lr(r.scheds[k], &last), DT_OK);
    expect_rate(last, want["last_lr"][k], where + " last_lr of scheduler " + std::to_string(k));
  }
}

TEST_F(LrScheduler, EveryCaseFollowsPyTorchsSchedule) {
  ASSERT_GE(Cases().size(), 23u) << "regenerate tests/reference/scheduler_cases.json";
  for (const json& c : Cases()) {
    const std::string id = c["id"];
    SCOPED_TRACE(id);
    ScriptRun r(c);
    expect_record(r, c["expected"][0], id + " after construction");
    for (size_t i = 0; i < c["actions"].size(); ++i) {
      r.act(c["actions"][i]);
      expect_record(r, c["expected"][i + 1], id + " after action " + std::to_string(i));
    }
  }
}

TEST_F(LrScheduler, ACheckpointHalfWayGoesOnAsTheUninterruptedRun) {
  for (const json& c : Cases()) {
    const std::string id = c["id"];
    SCOPED_TRACE(id);
    const size_t cut = c["actions"].size() / 2;
    std::vector<SD> saved_scheds(c["schedulers"].size());
    SD saved_opt;
    {
      ScriptRun first(c);
      for (size_t i = 0; i < cut; ++i) first.act(c["actions"][i]);
      DT_ASSERT_OK(dt_optimizer_state_dict(first.opt, saved_opt.out()));
      for (size_t k = 0; k < first.scheds.size(); ++k)
        DT_ASSERT_OK(dt_lr_scheduler_state_dict(first.scheds[k], saved_scheds[k].out()));
    }
    // Fresh objects, as a restarted program makes them, then the checkpoint.
    ScriptRun second(c);
    DT_ASSERT_OK(dt_optimizer_load_state_dict(second.opt, saved_opt));
    for (size_t k = 0; k < second.scheds.size(); ++k)
      DT_ASSERT_OK(dt_lr_scheduler_load_state_dict(second.scheds[k], saved_scheds[k]));
    expect_record(second, c["expected"][cut], id + " after loading");
    for (size_t i = cut; i < c["actions"].size(); ++i) {
      second.act(c["actions"][i]);
      expect_record(second, c["expected"][i + 1], id + " after action " + std::to_string(i));
    }
  }
}

// ------------------------------------------------------------------------ hand checks

struct Sgd {
  T p = parameter();
  O opt;
  explicit Sgd(double lr = 0.1, double momentum = 0) {
    const dt_tensor* ps[] = {p};
    EXPECT_EQ(dt_sgd_new(ps, 1, lr, momentum, 0, 0, 0, opt.out()), DT_OK);
  }
  double lr() const {
    double v = -1;
    EXPECT_EQ(dt_optimizer_lr(opt, &v), DT_OK);
    return v;
  }
};

std::string kind_of(dt_lr_scheduler* s) {
  size_t need = 0;
  EXPECT_EQ(dt_lr_scheduler_kind(s, nullptr, 0, &need), DT_OK);
  std::string out(need, '\0');
  EXPECT_EQ(dt_lr_scheduler_kind(s, &out[0], need, &need), DT_OK);
  out.resize(need - 1);
  return out;
}

TEST_F(LrScheduler, StepLRByHand) {
  Sgd o(1.0);
  S s;
  DT_ASSERT_OK(dt_step_lr_new(o.opt, 2, 0.5, s.out()));
  EXPECT_EQ(kind_of(s), "StepLR");
  // Epochs 0..5: 1, 1, 0.5, 0.5, 0.25, 0.25 (halved every 2).
  const double want[] = {1, 1, 0.5, 0.5, 0.25, 0.25};
  for (int e = 0; e < 6; ++e) {
    EXPECT_DOUBLE_EQ(o.lr(), want[e]) << "epoch " << e;
    DT_ASSERT_OK(dt_lr_scheduler_step(s));
  }
}

TEST_F(LrScheduler, WholeNumbersStopAt2To53SoACheckpointHoldsThem) {
  // A checkpoint holds each setting as a float64, exact up to 2^53: T_max 2^63 - 1 (a
  // fuzz_modules find, regressions/fuzz_modules/cosine-t-max-int64-max: its cosine test
  // overflowed 2 T_max, and its state dict did not load back) is refused; 2^53 steps,
  // saves and loads back.
  Sgd o(0.1);
  S s;
  EXPECT_EQ(dt_cosine_annealing_lr_new(o.opt, INT64_MAX, 0, s.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "T_max must be at most 2^53")) << dt_last_error_message();
  DT_ASSERT_OK(dt_cosine_annealing_lr_new(o.opt, int64_t{1} << 53, 0, s.out()));
  for (int i = 0; i < 3; ++i) DT_ASSERT_OK(dt_lr_scheduler_step(s));
  EXPECT_DOUBLE_EQ(o.lr(), 0.1);
  SD sd;
  DT_ASSERT_OK(dt_lr_scheduler_state_dict(s, sd.out()));
  DT_ASSERT_OK(dt_lr_scheduler_load_state_dict(s, sd));
}

TEST_F(LrScheduler, TheSchedulerKeepsItsOptimizerAlive) {
  S s;
  double lr = -1;
  {
    Sgd o(0.2);
    DT_ASSERT_OK(dt_exponential_lr_new(o.opt, 0.5, s.out()));
  }  // the caller's optimizer and parameter handles are gone
  DT_ASSERT_OK(dt_lr_scheduler_step(s));
  DT_ASSERT_OK(dt_lr_scheduler_last_lr(s, &lr));
  EXPECT_DOUBLE_EQ(lr, 0.1);
}

TEST_F(LrScheduler, BadSettingsAreRefusedAndLeaveTheRateAlone) {
  Sgd o(0.1, 0.9);
  struct Bad {
    const char* what;
    std::function<dt_status(dt_lr_scheduler**)> make;
    const char* msg;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int64_t neg[] = {3, -1};
  const std::vector<Bad> bad = {
      {"step_size 0", [&](dt_lr_scheduler** out) { return dt_step_lr_new(o.opt, 0, 0.1, out); }, "step_size"},
      {"gamma NaN", [&](dt_lr_scheduler** out) { return dt_step_lr_new(o.opt, 2, nan, out); }, "gamma"},
      {"milestone -1", [&](dt_lr_scheduler** out) { return dt_multi_step_lr_new(o.opt, neg, 2, 0.1, out); },
       "milestones"},
      {"milestones NULL", [&](dt_lr_scheduler** out) { return dt_multi_step_lr_new(o.opt, nullptr, 2, 0.1, out); },
       "milestones is NULL"},
      {"gamma -1", [&](dt_lr_scheduler** out) { return dt_exponential_lr_new(o.opt, -1, out); }, "gamma"},
      {"start_factor 0", [&](dt_lr_scheduler** out) { return dt_linear_lr_new(o.opt, 0, 1, 5, out); }, "start_factor"},
      {"end_factor 2", [&](dt_lr_scheduler** out) { return dt_linear_lr_new(o.opt, 0.5, 2, 5, out); }, "end_factor"},
      {"total_iters 0", [&](dt_lr_scheduler** out) { return dt_linear_lr_new(o.opt, 0.5, 1, 0, out); }, "total_iters"},
      {"factor 0", [&](dt_lr_scheduler** out) { return dt_constant_lr_new(o.opt, 0, 5, out); }, "factor"},
      {"factor 1.5", [&](dt_lr_scheduler** out) { return dt_constant_lr_new(o.opt, 1.5, 5, out); }, "factor"},
      {"ConstantLR total_iters 0", [&](dt_lr_scheduler** out) { return dt_constant_lr_new(o.opt, 0.5, 0, out); },
       "total_iters"},
      {"PolynomialLR total_iters 0", [&](dt_lr_scheduler** out) { return dt_polynomial_lr_new(o.opt, 0, 1, out); },
       "total_iters"},
      {"power -1", [&](dt_lr_scheduler** out) { return dt_polynomial_lr_new(o.opt, 5, -1, out); }, "power"},
      {"power NaN", [&](dt_lr_scheduler** out) { return dt_polynomial_lr_new(o.opt, 5, nan, out); }, "power"},
      {"T_max 0", [&](dt_lr_scheduler** out) { return dt_cosine_annealing_lr_new(o.opt, 0, 0, out); }, "T_max"},
      {"eta_min -1", [&](dt_lr_scheduler** out) { return dt_cosine_annealing_lr_new(o.opt, 5, -1, out); }, "eta_min"},
      {"T_0 0", [&](dt_lr_scheduler** out) { return dt_cosine_annealing_warm_restarts_new(o.opt, 0, 1, 0, out); },
       "T_0"},
      {"T_mult 0", [&](dt_lr_scheduler** out) { return dt_cosine_annealing_warm_restarts_new(o.opt, 2, 0, 0, out); },
       "T_mult"},
      {"pct_start 2",
       [&](dt_lr_scheduler** out) {
         return dt_one_cycle_lr_new(o.opt, 1, 10, 2, "cos", 1, 0.85, 0.95, 25, 1e4, 0, out);
       },
       "pct_start"},
      {"a phase without steps",
       [&](dt_lr_scheduler** out) {
         return dt_one_cycle_lr_new(o.opt, 1, 10, 0.1, "cos", 1, 0.85, 0.95, 25, 1e4, 0, out);
       },
       "leaves a phase without steps"},
      {"anneal_strategy", [&](dt_lr_scheduler** out) {
         return dt_one_cycle_lr_new(o.opt, 1, 10, 0.3, "cosine", 1, 0.85, 0.95, 25, 1e4, 0, out);
       },
       "\"cos\" or \"linear\""},
      {"div_factor 0",
       [&](dt_lr_scheduler** out) {
         return dt_one_cycle_lr_new(o.opt, 1, 10, 0.3, "cos", 1, 0.85, 0.95, 0, 1e4, 0, out);
       },
       "div_factor"},
      {"CyclicLR step_size_up 0",
       [&](dt_lr_scheduler** out) { return dt_cyclic_lr_new(o.opt, 0.01, 0.1, 0, 0, "triangular", 1, 1, 0.8, 0.9, out); },
       "step_size_up"},
      {"CyclicLR step_size_down -1",
       [&](dt_lr_scheduler** out) { return dt_cyclic_lr_new(o.opt, 0.01, 0.1, 2, -1, "triangular", 1, 1, 0.8, 0.9, out); },
       "step_size_down"},
      {"CyclicLR mode",
       [&](dt_lr_scheduler** out) { return dt_cyclic_lr_new(o.opt, 0.01, 0.1, 2, 0, "triangle", 1, 1, 0.8, 0.9, out); },
       "\"exp_range\""},
      {"CyclicLR base_lr NaN",
       [&](dt_lr_scheduler** out) { return dt_cyclic_lr_new(o.opt, nan, 0.1, 2, 0, "triangular", 1, 1, 0.8, 0.9, out); },
       "base_lr"},
      {"CyclicLR gamma -1",
       [&](dt_lr_scheduler** out) { return dt_cyclic_lr_new(o.opt, 0.01, 0.1, 2, 0, "exp_range", -1, 1, 0.8, 0.9, out); },
       "gamma"},
      {"CyclicLR base_momentum -1",
       [&](dt_lr_scheduler** out) { return dt_cyclic_lr_new(o.opt, 0.01, 0.1, 2, 0, "triangular", 1, 1, -1, 0.9, out); },
       "momentum"},
      {"factor 1",
       [&](dt_lr_scheduler** out) {
         return dt_reduce_lr_on_plateau_new(o.opt, "min", 1.0, 10, 1e-4, "rel", 0, 0, 1e-8, out);
       },
       "factor"},
      {"mode", [&](dt_lr_scheduler** out) {
         return dt_reduce_lr_on_plateau_new(o.opt, "minimum", 0.1, 10, 1e-4, "rel", 0, 0, 1e-8, out);
       },
       "\"min\" or \"max\""},
      {"threshold_mode NULL", [&](dt_lr_scheduler** out) {
         return dt_reduce_lr_on_plateau_new(o.opt, "min", 0.1, 10, 1e-4, nullptr, 0, 0, 1e-8, out);
       },
       "threshold_mode is NULL"},
      {"patience -1", [&](dt_lr_scheduler** out) {
         return dt_reduce_lr_on_plateau_new(o.opt, "min", 0.1, -1, 1e-4, "rel", 0, 0, 1e-8, out);
       },
       "patience"},
  };
  for (const Bad& b : bad) {
    dt_lr_scheduler* out = reinterpret_cast<dt_lr_scheduler*>(&o);  // must stay as it is
    dt_lr_scheduler* const before = out;
    EXPECT_EQ(b.make(&out), DT_ERR_INVALID_ARGUMENT) << b.what;
    EXPECT_TRUE(has(dt_last_error_message(), b.msg)) << b.what << ": " << dt_last_error_message();
    EXPECT_EQ(out, before) << b.what;
    EXPECT_DOUBLE_EQ(o.lr(), 0.1) << b.what;
  }
  double m = -1;
  DT_ASSERT_OK(dt_optimizer_option(o.opt, "momentum", &m));
  EXPECT_DOUBLE_EQ(m, 0.9) << "a refused OneCycleLR left the momentum as it was";
}

TEST_F(LrScheduler, OneCycleNeedsAMomentumToCycleAndStopsAfterItsLastStep) {
  T p = parameter();
  O ada;
  const dt_tensor* ps[] = {p};
  DT_ASSERT_OK(dt_adagrad_new(ps, 1, 0.01, 0, 0, 0, 1e-10, ada.out()));
  S s;
  EXPECT_EQ(dt_one_cycle_lr_new(ada, 1, 10, 0.3, "cos", 1, 0.85, 0.95, 25, 1e4, 0, s.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "Adagrad has neither")) << dt_last_error_message();
  // Adam cycles beta1; a beta1 of 1 or more it cannot take is refused before anything changes.
  O adam;
  DT_ASSERT_OK(dt_adam_new(ps, 1, 0.001, 0.9, 0.999, 1e-8, 0, 0, adam.out()));
  EXPECT_EQ(dt_one_cycle_lr_new(adam, 1, 10, 0.3, "cos", 1, 0.85, 1.5, 25, 1e4, 0, s.out()), DT_ERR_INVALID_ARGUMENT);
  double v = -1;
  DT_ASSERT_OK(dt_optimizer_option(adam, "beta1", &v));
  EXPECT_DOUBLE_EQ(v, 0.9);
  DT_ASSERT_OK(dt_optimizer_lr(adam, &v));
  EXPECT_DOUBLE_EQ(v, 0.001);
  // total_steps 4: epochs 0..4 are allowed (PyTorch allows the one past the end), 5 is not.
  DT_ASSERT_OK(dt_one_cycle_lr_new(adam, 0.1, 4, 0.5, "linear", 1, 0.85, 0.95, 10, 10, 0, s.out()));
  for (int i = 0; i < 4; ++i) DT_ASSERT_OK(dt_lr_scheduler_step(s));
  double before = -1, after = -1;
  DT_ASSERT_OK(dt_optimizer_lr(adam, &before));
  EXPECT_EQ(dt_lr_scheduler_step(s), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "tried to step 6 times; total_steps is 4")) << dt_last_error_message();
  DT_ASSERT_OK(dt_optimizer_lr(adam, &after));
  EXPECT_EQ(before, after);
  int64_t epoch = -1;
  DT_ASSERT_OK(dt_lr_scheduler_last_epoch(s, &epoch));
  EXPECT_EQ(epoch, 4);
}

// CyclicLR's momentum: Adam's beta1 by hand (PyTorch 1.13 refuses Adam there; 2.x
// cycles beta1), refused ends leave it alone; and a step whose rate would be negative.
TEST_F(LrScheduler, CyclicCyclesBeta1AndAStepBelowZeroChangesNothing) {
  T p = parameter();
  const dt_tensor* ps[] = {p};
  O ada;
  DT_ASSERT_OK(dt_adagrad_new(ps, 1, 0.01, 0, 0, 0, 1e-10, ada.out()));
  S s;
  EXPECT_EQ(dt_cyclic_lr_new(ada, 0.001, 0.01, 2, 0, "triangular", 1, 1, 0.8, 0.9, s.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "Adagrad has neither")) << dt_last_error_message();
  O adam;
  DT_ASSERT_OK(dt_adam_new(ps, 1, 0.001, 0.9, 0.999, 1e-8, 0, 0, adam.out()));
  auto beta1 = [&] {
    double v = -1;
    EXPECT_EQ(dt_optimizer_option(adam, "beta1", &v), DT_OK);
    return v;
  };
  auto lr = [](dt_optimizer* o) {
    double v = -1;
    EXPECT_EQ(dt_optimizer_lr(o, &v), DT_OK);
    return v;
  };
  // A beta1 of 1 Adam cannot take: refused, beta1 and the rate as they were.
  EXPECT_EQ(dt_cyclic_lr_new(adam, 0.001, 0.01, 2, 0, "triangular", 1, 1, 0.8, 1.0, s.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_DOUBLE_EQ(beta1(), 0.9);
  EXPECT_DOUBLE_EQ(lr(adam), 0.001);
  // Up over 2 steps from 0.001 to 0.01 and back; beta1 from 0.9 down to 0.8 and back.
  DT_ASSERT_OK(dt_cyclic_lr_new(adam, 0.001, 0.01, 2, 0, "triangular", 1, 1, 0.8, 0.9, s.out()));
  const double want_lr[] = {0.001, 0.0055, 0.01, 0.0055, 0.001, 0.0055};
  const double want_beta1[] = {0.9, 0.85, 0.8, 0.85, 0.9, 0.85};
  for (int e = 0; e < 6; ++e) {
    if (e > 0) DT_ASSERT_OK(dt_lr_scheduler_step(s));
    EXPECT_NEAR(lr(adam), want_lr[e], 1e-15) << "step " << e;
    EXPECT_NEAR(beta1(), want_beta1[e], 1e-15) << "step " << e;
  }
  // exp_range with gamma 2 and max_lr below base_lr: at step 1 the rate is
  // 0.1 - 0.08 * 0.5 * 2 = 0.02 and the momentum 0.9 - 0.1 * 0.5 * 2 = 0.8; at step 2 the
  // rate would be 0.1 - 0.08 * 1 * 4 < 0: refused, nothing changed.
  Sgd o(0.1, 0.9);
  S c;
  DT_ASSERT_OK(dt_cyclic_lr_new(o.opt, 0.1, 0.02, 2, 0, "exp_range", 2, 1, 0.8, 0.9, c.out()));
  DT_ASSERT_OK(dt_lr_scheduler_step(c));
  EXPECT_NEAR(o.lr(), 0.02, 1e-15);
  EXPECT_EQ(dt_lr_scheduler_step(c), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "the rate at step 2 would be -0.22")) << dt_last_error_message();
  EXPECT_NEAR(o.lr(), 0.02, 1e-15);
  double m = -1, last = -1;
  int64_t epoch = -1;
  DT_ASSERT_OK(dt_optimizer_option(o.opt, "momentum", &m));
  EXPECT_NEAR(m, 0.8, 1e-15);
  DT_ASSERT_OK(dt_lr_scheduler_last_lr(c, &last));
  EXPECT_NEAR(last, 0.02, 1e-15);
  DT_ASSERT_OK(dt_lr_scheduler_last_epoch(c, &epoch));
  EXPECT_EQ(epoch, 1);
}

TEST_F(LrScheduler, OnlyThePlateauTakesAMetricAndItTakesNothingElse) {
  Sgd o;
  S plateau, step;
  DT_ASSERT_OK(dt_reduce_lr_on_plateau_new(o.opt, "min", 0.1, 0, 0, "abs", 0, 0, 0, plateau.out()));
  EXPECT_EQ(kind_of(plateau), "ReduceLROnPlateau");
  EXPECT_EQ(dt_lr_scheduler_step(plateau), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "dt_lr_scheduler_step_metric")) << dt_last_error_message();
  DT_ASSERT_OK(dt_step_lr_new(o.opt, 1, 0.5, step.out()));
  EXPECT_EQ(dt_lr_scheduler_step_metric(step, 1.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "StepLR steps without a metric")) << dt_last_error_message();
  // Patience 0: the second metric that is no better cuts the rate at once.
  DT_ASSERT_OK(dt_lr_scheduler_step_metric(plateau, 1.0));
  EXPECT_DOUBLE_EQ(o.lr(), 0.1);
  DT_ASSERT_OK(dt_lr_scheduler_step_metric(plateau, 1.0));
  EXPECT_NEAR(o.lr(), 0.01, 1e-17);
}

TEST_F(LrScheduler, SequentialChecksItsSchedulers) {
  Sgd o, other;
  S a, b, foreign, plateau, seq;
  DT_ASSERT_OK(dt_linear_lr_new(o.opt, 0.5, 1, 2, a.out()));
  DT_ASSERT_OK(dt_exponential_lr_new(o.opt, 0.9, b.out()));
  DT_ASSERT_OK(dt_step_lr_new(other.opt, 1, 0.5, foreign.out()));
  DT_ASSERT_OK(dt_reduce_lr_on_plateau_new(o.opt, "min", 0.1, 10, 1e-4, "rel", 0, 0, 1e-8, plateau.out()));
  const int64_t m1[] = {2};
  struct Bad {
    std::vector<dt_lr_scheduler*> list;
    const char* msg;
  };
  for (const Bad& c : {Bad{{a, foreign}, "belongs to another optimizer"}, Bad{{a, a}, "are the same scheduler"},
                       Bad{{a, plateau}, "cannot be restarted"}, Bad{{}, "needs at least one"}}) {
    dt_lr_scheduler* out = nullptr;
    EXPECT_EQ(dt_sequential_lr_new(o.opt, c.list.data(), c.list.size(), m1, &out), DT_ERR_INVALID_ARGUMENT) << c.msg;
    EXPECT_TRUE(has(dt_last_error_message(), c.msg)) << dt_last_error_message();
    EXPECT_EQ(out, nullptr);
  }
  dt_lr_scheduler* ab[] = {a, b};
  const int64_t m0[] = {0};
  EXPECT_EQ(dt_sequential_lr_new(o.opt, ab, 2, m0, seq.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "milestones must be in [1, 2^53]")) << dt_last_error_message();
  DT_ASSERT_OK(dt_sequential_lr_new(o.opt, ab, 2, m1, seq.out()));
  EXPECT_EQ(kind_of(seq), "SequentialLR");
  // A SequentialLR inside another cannot be restarted at a milestone either.
  S outer;
  dt_lr_scheduler* nested[] = {seq, b};
  EXPECT_EQ(dt_sequential_lr_new(o.opt, nested, 2, m1, outer.out()), DT_ERR_INVALID_ARGUMENT);
  // Nor a ChainedScheduler; and a chain takes the same list checks, and neither kind
  // of list inside it.
  S chain;
  DT_ASSERT_OK(dt_chained_scheduler_new(ab, 2, chain.out()));
  EXPECT_EQ(kind_of(chain), "ChainedScheduler");
  dt_lr_scheduler* with_chain[] = {chain, b};
  EXPECT_EQ(dt_sequential_lr_new(o.opt, with_chain, 2, m1, outer.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "is a ChainedScheduler, which cannot be restarted")) << dt_last_error_message();
  for (const Bad& c : {Bad{{a, foreign}, "schedulers[1] (StepLR) belongs to another optimizer than schedulers[0]"},
                       Bad{{a, a}, "are the same scheduler"}, Bad{{a, plateau}, "which a ChainedScheduler cannot step"},
                       Bad{{seq}, "is a SequentialLR"}, Bad{{chain}, "is a ChainedScheduler"},
                       Bad{{}, "needs at least one"}}) {
    dt_lr_scheduler* out = nullptr;
    EXPECT_EQ(dt_chained_scheduler_new(c.list.data(), c.list.size(), &out), DT_ERR_INVALID_ARGUMENT) << c.msg;
    EXPECT_TRUE(has(dt_last_error_message(), c.msg)) << dt_last_error_message();
    EXPECT_EQ(out, nullptr);
  }
}

// Two chains over the same two schedulers, listed in opposite orders, stepped from two
// threads at once: locking in address order keeps them from deadlocking, and every step
// lands (each scheduler's epoch counts both chains' steps; the rate is every factor's
// product, 0.999 per step of the ExponentialLR and 0.9 per 7th of the StepLR).
TEST_F(LrScheduler, TwoChainsSharingSchedulersStepFromTwoThreads) {
  Sgd o(0.1);
  S a, b, ab, ba;
  DT_ASSERT_OK(dt_exponential_lr_new(o.opt, 0.999, a.out()));
  DT_ASSERT_OK(dt_step_lr_new(o.opt, 7, 0.9, b.out()));
  dt_lr_scheduler* forward[] = {a, b};
  dt_lr_scheduler* backward[] = {b, a};
  DT_ASSERT_OK(dt_chained_scheduler_new(forward, 2, ab.out()));
  DT_ASSERT_OK(dt_chained_scheduler_new(backward, 2, ba.out()));
  constexpr int kSteps = 500;
  std::atomic<int> failed{0};
  auto run = [&failed](dt_lr_scheduler* chain) {
    for (int i = 0; i < kSteps; ++i)
      if (dt_lr_scheduler_step(chain) != DT_OK) ++failed;
  };
  std::thread first(run, ab.get()), second(run, ba.get());
  first.join();
  second.join();
  EXPECT_EQ(failed.load(), 0);
  int64_t epoch = -1;
  for (dt_lr_scheduler* s : {a.get(), b.get()}) {
    DT_ASSERT_OK(dt_lr_scheduler_last_epoch(s, &epoch));
    EXPECT_EQ(epoch, 2 * kSteps);
  }
  DT_ASSERT_OK(dt_lr_scheduler_last_epoch(ab, &epoch));
  EXPECT_EQ(epoch, kSteps);
  const double want = 0.1 * std::pow(0.999, 2 * kSteps) * std::pow(0.9, (2 * kSteps) / 7);
  EXPECT_NEAR(o.lr(), want, 1e-12 * want);
}

// A chain's step is all or nothing: when OneCycleLR refuses the step past its end, the
// ExponentialLR stepped before it, the optimizer's rate and its momentum go back.
TEST_F(LrScheduler, AChainThatFailsMidStepPutsEverythingBack) {
  Sgd o(0.1, 0.9);
  S exp, cycle, chain;
  DT_ASSERT_OK(dt_exponential_lr_new(o.opt, 0.5, exp.out()));
  DT_ASSERT_OK(dt_one_cycle_lr_new(o.opt, 1, 4, 0.5, "linear", 1, 0.85, 0.95, 10, 10, 0, cycle.out()));
  dt_lr_scheduler* both[] = {exp, cycle};
  DT_ASSERT_OK(dt_chained_scheduler_new(both, 2, chain.out()));
  for (int i = 0; i < 4; ++i) DT_ASSERT_OK(dt_lr_scheduler_step(chain));  // OneCycleLR allows one past its 4
  auto snapshot = [&] {
    std::vector<double> v;
    double x = -1;
    int64_t e = -1;
    EXPECT_EQ(dt_optimizer_lr(o.opt, &x), DT_OK);
    v.push_back(x);
    EXPECT_EQ(dt_optimizer_option(o.opt, "momentum", &x), DT_OK);
    v.push_back(x);
    for (dt_lr_scheduler* s : {exp.get(), cycle.get(), chain.get()}) {
      EXPECT_EQ(dt_lr_scheduler_last_lr(s, &x), DT_OK);
      EXPECT_EQ(dt_lr_scheduler_last_epoch(s, &e), DT_OK);
      v.push_back(x);
      v.push_back(static_cast<double>(e));
    }
    return v;
  };
  const std::vector<double> before = snapshot();
  EXPECT_EQ(before[3], 4);  // ExponentialLR at epoch 4
  EXPECT_EQ(dt_lr_scheduler_step(chain), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "tried to step 6 times; total_steps is 4")) << dt_last_error_message();
  EXPECT_EQ(snapshot(), before);
}

// The state dict of s as name -> value (every entry but milestones is one number).
std::vector<std::pair<std::string, double>> numbers_of(dt_lr_scheduler* s) {
  SD sd;
  EXPECT_EQ(dt_lr_scheduler_state_dict(s, sd.out()), DT_OK);
  size_t n = 0;
  EXPECT_EQ(dt_state_dict_count(sd, &n), DT_OK);
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < n; ++i) {
    size_t need = 0;
    EXPECT_EQ(dt_state_dict_name(sd, i, nullptr, 0, &need), DT_OK);
    std::string name(need, '\0');
    EXPECT_EQ(dt_state_dict_name(sd, i, &name[0], need, &need), DT_OK);
    name.resize(need - 1);
    T t;
    EXPECT_EQ(dt_state_dict_get(sd, i, t.out()), DT_OK);
    size_t numel = 0;
    dt_tensor_numel(t, &numel);
    if (numel != 1) continue;
    double v = 0;
    EXPECT_EQ(dt_tensor_item(t, &v), DT_OK);
    out.emplace_back(name, v);
  }
  return out;
}

T scalar(double v) {
  T t;
  EXPECT_EQ(dt_tensor_full(nullptr, 0, v, DT_FLOAT64, cpu(), t.out()), DT_OK);
  return t;
}

TEST_F(LrScheduler, StateDictsNameEveryNumberAndLoadAllOrNothing) {
  Sgd o;
  S s;
  DT_ASSERT_OK(dt_cosine_annealing_warm_restarts_new(o.opt, 3, 2, 0.01, s.out()));
  for (int i = 0; i < 4; ++i) DT_ASSERT_OK(dt_lr_scheduler_step(s));
  const auto before = numbers_of(s);
  std::vector<std::string> names;
  for (const auto& [name, v] : before) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"base_lr", "last_epoch", "last_lr", "T_0", "T_i", "T_mult", "eta_min",
                                              "T_cur"}));
  // After 4 steps of T_0 3, T_mult 2: the second period (6 long), one step into it.
  for (const auto& [name, v] : before) {
    if (name == "T_i") EXPECT_EQ(v, 6);
    if (name == "T_cur") EXPECT_EQ(v, 1);
    if (name == "last_epoch") EXPECT_EQ(v, 4);
  }
  struct Bad {
    const char* key;
    double value;
    const char* msg;
  };
  for (const Bad& b : {Bad{"T_cur", 1.5, "whole number"}, Bad{"T_cur", 9, "T_cur must be in [0, T_i)"},
                       Bad{"eta_min", std::numeric_limits<double>::quiet_NaN(), "is NaN"},
                       Bad{"gamma", 0.5, "unexpected key \"gamma\""}, Bad{"T_0", 0, "T_0 must be >= 1"}}) {
    SD sd;
    DT_ASSERT_OK(dt_state_dict_new(sd.out()));
    T good = scalar(2), bad = scalar(b.value);
    DT_ASSERT_OK(dt_state_dict_set(sd, "T_mult", good));  // a good entry first: it must not stick
    DT_ASSERT_OK(dt_state_dict_set(sd, b.key, bad));
    EXPECT_EQ(dt_lr_scheduler_load_state_dict(s, sd), DT_ERR_INVALID_ARGUMENT) << b.key;
    EXPECT_TRUE(has(dt_last_error_message(), b.msg)) << dt_last_error_message();
    EXPECT_EQ(numbers_of(s), before) << b.key;
  }
  // A key absent keeps its value; one present is taken.
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  T t_mult = scalar(3);
  DT_ASSERT_OK(dt_state_dict_set(sd, "T_mult", t_mult));
  DT_ASSERT_OK(dt_lr_scheduler_load_state_dict(s, sd));
  for (const auto& [name, v] : numbers_of(s)) {
    if (name == "T_mult") EXPECT_EQ(v, 3);
    if (name == "T_i") EXPECT_EQ(v, 6);
  }
}

TEST_F(LrScheduler, ASequentialLoadsItsSchedulersAllOrNothing) {
  Sgd o;
  S warm, cos, seq;
  DT_ASSERT_OK(dt_linear_lr_new(o.opt, 0.5, 1, 2, warm.out()));
  DT_ASSERT_OK(dt_cosine_annealing_lr_new(o.opt, 4, 0, cos.out()));
  dt_lr_scheduler* both[] = {warm, cos};
  const int64_t m[] = {2};
  DT_ASSERT_OK(dt_sequential_lr_new(o.opt, both, 2, m, seq.out()));
  for (int i = 0; i < 3; ++i) DT_ASSERT_OK(dt_lr_scheduler_step(seq));
  const auto warm_before = numbers_of(warm), cos_before = numbers_of(cos), seq_before = numbers_of(seq);
  // Scheduler 0's entry is fine, scheduler 1's is not: neither may change.
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  T one = scalar(1), zero = scalar(0);
  DT_ASSERT_OK(dt_state_dict_set(sd, "schedulers.0.total_iters", one));
  DT_ASSERT_OK(dt_state_dict_set(sd, "schedulers.1.T_max", zero));
  EXPECT_EQ(dt_lr_scheduler_load_state_dict(seq, sd), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "T_max")) << dt_last_error_message();
  EXPECT_EQ(numbers_of(warm), warm_before);
  EXPECT_EQ(numbers_of(cos), cos_before);
  EXPECT_EQ(numbers_of(seq), seq_before);
  SD bad_index;
  DT_ASSERT_OK(dt_state_dict_new(bad_index.out()));
  DT_ASSERT_OK(dt_state_dict_set(bad_index, "schedulers.2.T_max", one));
  EXPECT_EQ(dt_lr_scheduler_load_state_dict(seq, bad_index), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "names scheduler 2 but there are 2")) << dt_last_error_message();
}

TEST_F(LrScheduler, AScheduleCheckpointSurvivesASafetensorsFile) {
  char path[] = "/tmp/dt_sched_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  Sgd o;
  S s;
  const int64_t ms[] = {2, 4};
  DT_ASSERT_OK(dt_multi_step_lr_new(o.opt, ms, 2, 0.5, s.out()));
  for (int i = 0; i < 3; ++i) DT_ASSERT_OK(dt_lr_scheduler_step(s));
  {
    SD sd;
    DT_ASSERT_OK(dt_lr_scheduler_state_dict(s, sd.out()));
    DT_ASSERT_OK(dt_safetensors_save(sd, path));
  }
  Sgd o2;
  S s2;
  DT_ASSERT_OK(dt_multi_step_lr_new(o2.opt, nullptr, 0, 0.1, s2.out()));  // other milestones and gamma
  SD loaded;
  DT_ASSERT_OK(dt_safetensors_load(path, cpu(), loaded.out()));
  DT_ASSERT_OK(dt_lr_scheduler_load_state_dict(s2, loaded));
  DT_ASSERT_OK(dt_optimizer_set_lr(o2.opt, o.lr()));  // the optimizer's own checkpoint would do this
  EXPECT_EQ(numbers_of(s2), numbers_of(s));
  // Epoch 4 is a milestone of the saved schedule (not of the one s2 was made with).
  DT_ASSERT_OK(dt_lr_scheduler_step(s));
  DT_ASSERT_OK(dt_lr_scheduler_step(s2));
  EXPECT_DOUBLE_EQ(o2.lr(), o.lr());
  EXPECT_DOUBLE_EQ(o2.lr(), 0.025);
  unlink(path);
}

}  // namespace

// ------------------------------------------------- LambdaLR and MultiplicativeLR by hand

// What a test's lr_lambda saw, and how it ends: its user_data.
struct LambdaLog {
  std::vector<int64_t> epochs;  // every call, in order
  double factor = 0.5;          // what it returns
  int freed = 0;                // calls of the free function
  dt_lr_scheduler* self = nullptr;
  dt_optimizer* opt = nullptr;
  std::vector<dt_status> inside;  // what the calls made from inside it returned
};
double logged_factor(int64_t epoch, void* user_data) {
  auto* log = static_cast<LambdaLog*>(user_data);
  log->epochs.push_back(epoch);
  return log->factor;
}
void free_log(void* user_data) { ++static_cast<LambdaLog*>(user_data)->freed; }

TEST_F(LrScheduler, LambdaGetsEachEpochAndItsDataIsFreedWithTheLastReference) {
  Sgd o(0.2);
  LambdaLog log;
  dt_lr_scheduler* s = nullptr;
  DT_ASSERT_OK(dt_lambda_lr_new(o.opt, logged_factor, &log, free_log, &s));
  EXPECT_EQ(kind_of(s), "LambdaLR");
  EXPECT_EQ(log.epochs, (std::vector<int64_t>{0}));  // the first step, at construction
  EXPECT_DOUBLE_EQ(o.lr(), 0.1);                     // 0.2 * 0.5
  log.factor = 0.25;
  DT_ASSERT_OK(dt_lr_scheduler_step(s));
  EXPECT_DOUBLE_EQ(o.lr(), 0.05);  // from the initial rate, not the current one
  EXPECT_EQ(log.epochs, (std::vector<int64_t>{0, 1}));

  // A SequentialLR holds the scheduler too: the data lives until both let go.
  dt_lr_scheduler* seq = nullptr;
  DT_ASSERT_OK(dt_sequential_lr_new(o.opt, &s, 1, nullptr, &seq));
  DT_ASSERT_OK(dt_lr_scheduler_release(s));
  EXPECT_EQ(log.freed, 0);
  DT_ASSERT_OK(dt_lr_scheduler_release(seq));
  EXPECT_EQ(log.freed, 1);
}

TEST_F(LrScheduler, MultiplicativeCallsItsFunctionFromTheFirstStepOn) {
  Sgd o(0.2);
  LambdaLog log;
  {
    S s;
    DT_ASSERT_OK(dt_multiplicative_lr_new(o.opt, logged_factor, &log, free_log, s.out()));
    EXPECT_EQ(kind_of(s), "MultiplicativeLR");
    EXPECT_TRUE(log.epochs.empty());
    EXPECT_DOUBLE_EQ(o.lr(), 0.2);
    DT_ASSERT_OK(dt_lr_scheduler_step(s));
    DT_ASSERT_OK(dt_lr_scheduler_step(s));
    EXPECT_EQ(log.epochs, (std::vector<int64_t>{1, 2}));
    EXPECT_DOUBLE_EQ(o.lr(), 0.05);  // 0.2 * 0.5 * 0.5
    // Its state dict: the base fields, no function.
    SD sd;
    DT_ASSERT_OK(dt_lr_scheduler_state_dict(s, sd.out()));
    size_t n = 0;
    DT_ASSERT_OK(dt_state_dict_count(sd, &n));
    EXPECT_EQ(n, 3u);
  }
  EXPECT_EQ(log.freed, 1);
}

TEST_F(LrScheduler, AFunctionReturningWhatNoRateCanBeFailsTheStepAndChangesNothing) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -0.5, 1e308}) {
    SCOPED_TRACE(bad);
    Sgd o(10.0);
    LambdaLog log;
    log.factor = 0.5;
    S s;
    DT_ASSERT_OK(dt_multiplicative_lr_new(o.opt, logged_factor, &log, nullptr, s.out()));
    DT_ASSERT_OK(dt_lr_scheduler_step(s));  // epoch 1: 5
    log.factor = bad;
    EXPECT_EQ(dt_lr_scheduler_step(s), DT_ERR_INVALID_ARGUMENT);
    const std::string msg = dt_last_error_message();
    EXPECT_TRUE(has(msg, "MultiplicativeLR: its function returned")) << msg;
    EXPECT_TRUE(has(msg, "at epoch 2")) << msg;
    EXPECT_DOUBLE_EQ(o.lr(), 5.0);
    int64_t epoch = -1;
    DT_ASSERT_OK(dt_lr_scheduler_last_epoch(s, &epoch));
    EXPECT_EQ(epoch, 1);
    double last = -1;
    DT_ASSERT_OK(dt_lr_scheduler_last_lr(s, &last));
    EXPECT_DOUBLE_EQ(last, 5.0);
    log.factor = 2;  // a good value again: the schedule goes on from epoch 2
    DT_ASSERT_OK(dt_lr_scheduler_step(s));
    EXPECT_DOUBLE_EQ(o.lr(), 10.0);
    EXPECT_EQ(log.epochs, (std::vector<int64_t>{1, 2, 2}));
  }
}

TEST_F(LrScheduler, AFailedConstructorLeavesTheDataToItsCaller) {
  Sgd o(0.3);
  LambdaLog log;
  log.factor = std::nan("");
  dt_lr_scheduler* out = reinterpret_cast<dt_lr_scheduler*>(&log);  // a sentinel
  EXPECT_EQ(dt_lambda_lr_new(o.opt, logged_factor, &log, free_log, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "LambdaLR: its function returned nan at epoch 0")) << dt_last_error_message();
  EXPECT_EQ(out, reinterpret_cast<dt_lr_scheduler*>(&log));
  EXPECT_EQ(log.freed, 0);
  EXPECT_DOUBLE_EQ(o.lr(), 0.3);
  EXPECT_EQ(dt_lambda_lr_new(o.opt, nullptr, &log, free_log, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "fn is NULL")) << dt_last_error_message();
  EXPECT_EQ(log.freed, 0);
}

double calls_back_in(int64_t, void* user_data) {
  auto* log = static_cast<LambdaLog*>(user_data);
  double lr = -1, last = -1;
  log->inside.push_back(dt_optimizer_lr(log->opt, &lr));  // allowed
  if (log->self) log->inside.push_back(dt_lr_scheduler_last_lr(log->self, &last));
  dt_lr_scheduler* other = nullptr;
  log->inside.push_back(dt_exponential_lr_new(log->opt, 0.5, &other));
  dt_lr_scheduler_release(other);
  return 1.0;
}

TEST_F(LrScheduler, TheFunctionMayCallDevtensorButNotTheSchedulers) {
  Sgd o(0.1);
  LambdaLog log;
  log.opt = o.opt;
  S s;
  DT_ASSERT_OK(dt_lambda_lr_new(o.opt, calls_back_in, &log, nullptr, s.out()));
  EXPECT_EQ(log.inside, (std::vector<dt_status>{DT_OK, DT_ERR_INVALID_ARGUMENT}));
  log.inside.clear();
  log.self = s;
  DT_ASSERT_OK(dt_lr_scheduler_step(s));  // no deadlock: the inner calls are refused
  EXPECT_EQ(log.inside, (std::vector<dt_status>{DT_OK, DT_ERR_INVALID_ARGUMENT, DT_ERR_INVALID_ARGUMENT}));
  // Outside the function, the same calls work.
  double last = -1;
  DT_ASSERT_OK(dt_lr_scheduler_last_lr(s, &last));
  EXPECT_DOUBLE_EQ(last, 0.1);
}
