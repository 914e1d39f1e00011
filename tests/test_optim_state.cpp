// What a training loop needs around the optimizer step, through the C API: the learning
// rate read and set between steps (schedules), the optimizer's state saved and restored
// (checkpoints; PyTorch's key names; all-or-nothing loading with the key named in each
// error), gradient clipping by norm and by value against PyTorch
// (tests/reference/module_cases.json, "clip_grad"), and a 20-step run with a learning
// rate drop and clipped gradients, interrupted by a checkpoint after 10 steps, that must
// follow PyTorch's uninterrupted curve ("resume"). And the adaptive optimizers, RMSprop
// and Adagrad, and the settings read and set by name (amsgrad, maximize, schedules of
// momentum and betas), step by step against torch.optim's ("optim_steps"): parameters
// after every step and the final state dict, their checkpoints, their errors.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/dt_test.h"
#include "support/module_cases.h"

namespace {

using json = nlohmann::json;
using O = Handle<dt_optimizer, dt_optimizer_release>;
using SD = Handle<dt_state_dict, dt_state_dict_release>;

class OptimState : public LeakChecked {};

T doubles_tensor(const std::vector<double>& v, std::vector<int64_t> shape, dt_dtype dtype = DT_FLOAT64) {
  T f64, out;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * 8, shape.data(), shape.size(), DT_FLOAT64, cpu(), f64.out()),
            DT_OK);
  EXPECT_EQ(dt_tensor_to(f64, cpu(), dtype, DT_TO_COPY, out.out()), DT_OK);
  return out;
}

// A leaf parameter with value v whose gradient is g (backward of sum(p * g)).
T param_with_grad(const std::vector<double>& v, const std::vector<double>& g, std::vector<int64_t> shape,
                  dt_dtype dtype = DT_FLOAT64) {
  T p = doubles_tensor(v, shape, dtype), gt = doubles_tensor(g, shape, dtype), prod, total;
  EXPECT_EQ(dt_tensor_set_requires_grad(p, 1), DT_OK);
  EXPECT_EQ(dt_mul(p, gt, prod.out()), DT_OK);
  EXPECT_EQ(dt_sum(prod, nullptr, 0, 0, total.out()), DT_OK);
  EXPECT_EQ(dt_backward(total, nullptr), DT_OK);
  return p;
}
void set_grad(dt_tensor* p, const std::vector<double>& g, std::vector<int64_t> shape) {
  T gt = doubles_tensor(g, shape), prod, total;
  EXPECT_EQ(dt_tensor_clear_grad(p), DT_OK);
  EXPECT_EQ(dt_mul(p, gt, prod.out()), DT_OK);
  EXPECT_EQ(dt_sum(prod, nullptr, 0, 0, total.out()), DT_OK);
  EXPECT_EQ(dt_backward(total, nullptr), DT_OK);
}
std::vector<double> grad_of(dt_tensor* p) {
  T g;
  EXPECT_EQ(dt_tensor_grad(p, g.out()), DT_OK);
  return g.get() ? values<double>(g) : std::vector<double>();
}
// A new float32 leaf that requires grad, with p's values.
T leaf_copy(dt_tensor* p) {
  std::vector<float> v = values<float>(p);
  const int64_t n = static_cast<int64_t>(v.size());
  T q;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * 4, &n, 1, DT_FLOAT32, cpu(), q.out()), DT_OK);
  EXPECT_EQ(dt_tensor_set_requires_grad(q, 1), DT_OK);
  return q;
}
std::vector<std::string> keys(dt_state_dict* sd) {
  size_t n = 0;
  EXPECT_EQ(dt_state_dict_count(sd, &n), DT_OK);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    char name[64];
    EXPECT_EQ(dt_state_dict_name(sd, i, name, sizeof name, nullptr), DT_OK);
    out.push_back(name);
  }
  return out;
}
// The settings every checkpoint of an optimizer kind starts with (dt_optimizer_option's
// names, in the header's order), then `state`.
std::vector<std::string> with_settings(const std::string& kind, std::vector<std::string> state) {
  std::vector<std::string> out;
  if (kind == "sgd") out = {"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"};
  if (kind == "adam") out = {"lr", "beta1", "beta2", "eps", "weight_decay", "amsgrad", "maximize"};
  if (kind == "rmsprop") out = {"lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"};
  if (kind == "adagrad") out = {"lr", "lr_decay", "weight_decay", "eps", "initial_accumulator_value", "maximize"};
  out.insert(out.end(), state.begin(), state.end());
  return out;
}
double entry(dt_state_dict* sd, const char* key) {
  T t;
  EXPECT_EQ(dt_state_dict_find(sd, key, t.out()), DT_OK) << key;
  T f;
  EXPECT_EQ(dt_tensor_to(t, cpu(), DT_FLOAT64, 0, f.out()), DT_OK);
  return values<double>(f).at(0);
}

// A new state dict in *sd holding the same tensors as `from` (to add or replace entries
// in), or only those of `only` when it is not empty.
void copy_of(dt_state_dict* from, SD* sd, std::vector<std::string> only = {}) {
  EXPECT_EQ(dt_state_dict_new(sd->out()), DT_OK);
  for (const std::string& k : only.empty() ? keys(from) : only) {
    T t;
    EXPECT_EQ(dt_state_dict_find(from, k.c_str(), t.out()), DT_OK);
    EXPECT_EQ(dt_state_dict_set(*sd, k.c_str(), t), DT_OK);
  }
}

TEST_F(OptimState, TheLearningRateIsReadAndSetBetweenSteps) {
  T p = param_with_grad({1.0, 2.0}, {0.5, -1.0}, {2});
  const dt_tensor* ps[] = {p};
  O opt;
  DT_ASSERT_OK(dt_sgd_new(ps, 1, 0.1, 0.0, 0.0, 0.0, 0, opt.out()));
  double lr = 0;
  DT_ASSERT_OK(dt_optimizer_lr(opt, &lr));
  EXPECT_EQ(lr, 0.1);
  DT_ASSERT_OK(dt_optimizer_set_lr(opt, 0.5));
  DT_ASSERT_OK(dt_optimizer_step(opt));
  // p - 0.5 g = [1 - 0.25, 2 + 0.5]
  EXPECT_EQ(values<double>(p), (std::vector<double>{0.75, 2.5}));
  // Refused, and nothing changed.
  DT_EXPECT_STATUS(dt_optimizer_set_lr(opt, -1.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "SGD: invalid learning rate")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_optimizer_set_lr(opt, NAN), DT_ERR_INVALID_ARGUMENT);
  DT_ASSERT_OK(dt_optimizer_lr(opt, &lr));
  EXPECT_EQ(lr, 0.5);
  DT_EXPECT_STATUS(dt_optimizer_lr(opt, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_optimizer_lr(nullptr, &lr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_optimizer_set_lr(nullptr, 0.1), DT_ERR_INVALID_ARGUMENT);
}

TEST_F(OptimState, TheStateDictUsesPyTorchsNamesAndHoldsCopies) {
  T a = param_with_grad({1, 2, 3, 4}, {0.1, 0.2, 0.3, 0.4}, {2, 2});
  T b = doubles_tensor({5}, {1});  // never gets a gradient: no state
  DT_ASSERT_OK(dt_tensor_set_requires_grad(b, 1));
  const dt_tensor* ps[] = {a, b};
  O adam, sgd, plain;
  DT_ASSERT_OK(dt_adam_new(ps, 2, 0.01, 0.9, 0.999, 1e-8, 0.0, 0, adam.out()));
  DT_ASSERT_OK(dt_sgd_new(ps, 2, 0.1, 0.9, 0.0, 0.0, 0, sgd.out()));
  DT_ASSERT_OK(dt_sgd_new(ps, 2, 0.1, 0.0, 0.0, 0.0, 0, plain.out()));
  SD before;
  DT_ASSERT_OK(dt_optimizer_state_dict(adam, before.out()));
  EXPECT_EQ(keys(before), with_settings("adam", {}));
  DT_ASSERT_OK(dt_optimizer_step(adam));
  DT_ASSERT_OK(dt_optimizer_step(adam));
  DT_ASSERT_OK(dt_optimizer_step(sgd));
  DT_ASSERT_OK(dt_optimizer_step(plain));
  SD s_adam, s_sgd, s_plain;
  DT_ASSERT_OK(dt_optimizer_state_dict(adam, s_adam.out()));
  DT_ASSERT_OK(dt_optimizer_state_dict(sgd, s_sgd.out()));
  DT_ASSERT_OK(dt_optimizer_state_dict(plain, s_plain.out()));
  EXPECT_EQ(keys(s_adam), with_settings("adam", {"state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq"}));
  EXPECT_EQ(keys(s_sgd), with_settings("sgd", {"state.0.momentum_buffer"}));
  EXPECT_EQ(keys(s_plain), with_settings("sgd", {}));
  EXPECT_EQ(entry(s_adam, "lr"), 0.01);
  EXPECT_EQ(entry(s_adam, "state.0.step"), 2.0);
  T step;
  DT_ASSERT_OK(dt_state_dict_find(s_adam, "state.0.step", step.out()));
  dt_dtype dt{};
  DT_ASSERT_OK(dt_tensor_dtype(step, &dt));
  EXPECT_EQ(dt, DT_FLOAT32) << "PyTorch keeps Adam's step as a float32 tensor";
  // exp_avg after two steps of the same gradient: 0.1 g + 0.9 * 0.1 g = 0.19 g
  T m;
  DT_ASSERT_OK(dt_state_dict_find(s_adam, "state.0.exp_avg", m.out()));
  std::vector<double> mv = values<double>(m);
  EXPECT_NEAR(mv[3], 0.19 * 0.4, 1e-15);
  // The momentum buffer of SGD's first step is the gradient; a copy, kept by later steps.
  T buf;
  DT_ASSERT_OK(dt_state_dict_find(s_sgd, "state.0.momentum_buffer", buf.out()));
  EXPECT_EQ(values<double>(buf), (std::vector<double>{0.1, 0.2, 0.3, 0.4}));
  DT_ASSERT_OK(dt_optimizer_step(sgd));
  EXPECT_EQ(values<double>(buf), (std::vector<double>{0.1, 0.2, 0.3, 0.4}));
  DT_EXPECT_STATUS(dt_optimizer_state_dict(adam, nullptr), DT_ERR_INVALID_ARGUMENT);
}

// Two Adam optimizers over equal parameters: one stepped twice, checkpointed through a
// safetensors file, and a fresh one loaded from it; from then on both step to the
// same bits.
TEST_F(OptimState, ALoadedCheckpointStepsExactlyAsTheOriginal) {
  char dir[] = "/tmp/dt_optim_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/adam.safetensors";
  const std::vector<double> g1 = {0.3, -0.2, 0.1}, g2 = {-0.5, 0.4, 0.25};
  T p = param_with_grad({1, 2, 3}, g1, {3}, DT_FLOAT32);
  const dt_tensor* ps[] = {p};
  O first;
  DT_ASSERT_OK(dt_adam_new(ps, 1, 0.05, 0.9, 0.99, 1e-8, 0.01, 1, first.out()));
  DT_ASSERT_OK(dt_optimizer_step(first));
  DT_ASSERT_OK(dt_optimizer_step(first));
  DT_ASSERT_OK(dt_optimizer_set_lr(first, 0.02));
  {
    SD sd;
    DT_ASSERT_OK(dt_optimizer_state_dict(first, sd.out()));
    DT_ASSERT_OK(dt_safetensors_save(sd, path.c_str()));
  }
  T q = leaf_copy(p);  // the same values as p, another tensor
  const dt_tensor* qs[] = {q};
  O second;
  DT_ASSERT_OK(dt_adam_new(qs, 1, 0.05, 0.9, 0.99, 1e-8, 0.01, 1, second.out()));
  {
    SD sd;
    DT_ASSERT_OK(dt_safetensors_load(path.c_str(), cpu(), sd.out()));
    DT_ASSERT_OK(dt_optimizer_load_state_dict(second, sd));
  }
  double lr = 0;
  DT_ASSERT_OK(dt_optimizer_lr(second, &lr));
  EXPECT_EQ(lr, 0.02);
  for (int step = 0; step < 3; ++step) {
    set_grad(p, g2, {3});
    set_grad(q, g2, {3});
    DT_ASSERT_OK(dt_optimizer_step(first));
    DT_ASSERT_OK(dt_optimizer_step(second));
    EXPECT_EQ(values<float>(p), values<float>(q)) << "step " << step;
  }
  // Without the checkpoint the fresh optimizer would have stepped differently (its bias
  // correction starts again), so the equality above tested the loaded state.
  T r = leaf_copy(p);
  const dt_tensor* rs[] = {r};
  O fresh;
  DT_ASSERT_OK(dt_adam_new(rs, 1, 0.02, 0.9, 0.99, 1e-8, 0.01, 1, fresh.out()));
  set_grad(p, g2, {3});
  set_grad(r, g2, {3});
  DT_ASSERT_OK(dt_optimizer_step(first));
  DT_ASSERT_OK(dt_optimizer_step(fresh));
  EXPECT_NE(values<float>(p), values<float>(r));
  unlink(path.c_str());
  rmdir(dir);
}

// Each bad dict is refused naming the key, and the optimizer is left as it was.
TEST_F(OptimState, ABadStateDictIsRefusedWholeNamingTheKey) {
  T a = param_with_grad({1, 2}, {0.5, 0.5}, {2}), b = param_with_grad({3}, {1.0}, {1});
  const dt_tensor* ps[] = {a, b};
  O adam, sgd;
  DT_ASSERT_OK(dt_adam_new(ps, 2, 0.01, 0.9, 0.999, 1e-8, 0.0, 0, adam.out()));
  DT_ASSERT_OK(dt_sgd_new(ps, 2, 0.1, 0.9, 0.0, 0.0, 0, sgd.out()));
  DT_ASSERT_OK(dt_optimizer_step(adam));
  DT_ASSERT_OK(dt_optimizer_step(sgd));
  SD good;
  DT_ASSERT_OK(dt_optimizer_state_dict(adam, good.out()));
  auto snapshot = [](dt_optimizer* o) {
    SD sd;
    EXPECT_EQ(dt_optimizer_state_dict(o, sd.out()), DT_OK);
    std::vector<double> all;
    for (const std::string& k : keys(sd)) {
      T t, f;
      EXPECT_EQ(dt_state_dict_find(sd, k.c_str(), t.out()), DT_OK);
      EXPECT_EQ(dt_tensor_to(t, cpu(), DT_FLOAT64, 0, f.out()), DT_OK);
      for (double v : values<double>(f)) all.push_back(v);
    }
    return all;
  };
  const std::vector<double> adam_before = snapshot(adam), sgd_before = snapshot(sgd);
  struct Bad {
    const char* key;
    std::vector<double> value;
    std::vector<int64_t> shape;
    const char* message;
  };
  const std::vector<Bad> bads = {
      {"state.0.momentum", {0, 0}, {2}, "unexpected key \"state.0.momentum\""},
      {"state.2.exp_avg", {0}, {1}, "names parameter 2 but the optimizer has 2"},
      {"state.0.exp_avg", {0, 0, 0}, {3}, "\"state.0.exp_avg\" has shape [3] but parameter 0 has shape [2]"},
      {"state.0.step", {-1}, {}, "whole number of steps"},
      {"state.0.step", {1.5}, {}, "whole number of steps"},
      {"lr", {-0.1}, {}, "\"lr\" must be a finite learning rate"},
      {"lr", {0.1, 0.2}, {2}, "\"lr\" must hold one value"},
      {"optimizer", {0}, {}, "unexpected key \"optimizer\""},
      {"state.x.step", {0}, {}, "unexpected key \"state.x.step\""},
  };
  for (const Bad& bad : bads) {
    SCOPED_TRACE(bad.key);
    SD sd;
    copy_of(good, &sd);
    T v = doubles_tensor(bad.value, bad.shape);
    DT_ASSERT_OK(dt_state_dict_set(sd, bad.key, v));
    DT_EXPECT_STATUS(dt_optimizer_load_state_dict(adam, sd), DT_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(has(dt_last_error_message(), bad.message)) << dt_last_error_message();
    EXPECT_EQ(snapshot(adam), adam_before);
  }
  // Part of a parameter's state missing.
  SD partial;
  copy_of(good, &partial, {"state.1.step", "state.1.exp_avg"});
  DT_EXPECT_STATUS(dt_optimizer_load_state_dict(adam, partial), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "\"state.1.exp_avg_sq\" is missing")) << dt_last_error_message();
  // Adam's state into SGD.
  DT_EXPECT_STATUS(dt_optimizer_load_state_dict(sgd, good), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "SGD: unexpected key \"beta1\"")) << dt_last_error_message();
  EXPECT_EQ(snapshot(sgd), sgd_before);
  EXPECT_EQ(snapshot(adam), adam_before);
  DT_EXPECT_STATUS(dt_optimizer_load_state_dict(adam, nullptr), DT_ERR_INVALID_ARGUMENT);
  // A dict with only "lr" clears the state (as before the first step) and sets the rate.
  SD lr_only;
  DT_ASSERT_OK(dt_state_dict_new(lr_only.out()));
  T lr = doubles_tensor({0.003}, {});
  DT_ASSERT_OK(dt_state_dict_set(lr_only, "lr", lr));
  DT_ASSERT_OK(dt_optimizer_load_state_dict(adam, lr_only));
  SD after;
  DT_ASSERT_OK(dt_optimizer_state_dict(adam, after.out()));
  EXPECT_EQ(keys(after), with_settings("adam", {}));
  EXPECT_EQ(entry(after, "lr"), 0.003);
}

// The settings travel in the checkpoint (PyTorch's param_groups): one made with momentum
// resumes in an optimizer made without it, buffer and all, step for step; a setting the
// constructor would refuse is refused whole, and the older checkpoints without settings
// leave them as they are.
TEST_F(OptimState, CheckpointsCarryTheSettingsAndRefuseBadOnesWhole) {
  T a = param_with_grad({1, -2, 3}, {0.5, 0.25, -1}, {3});
  T b = doubles_tensor({1, -2, 3}, {3});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(b, 1));
  const dt_tensor* pa[] = {a};
  const dt_tensor* pb[] = {b};
  O first, second;
  DT_ASSERT_OK(dt_sgd_new(pa, 1, 0.1, 0.9, 0.0, 0.01, 1, first.out()));
  DT_ASSERT_OK(dt_optimizer_set_option(first, "maximize", 1));
  DT_ASSERT_OK(dt_optimizer_step(first));
  SD sd;
  DT_ASSERT_OK(dt_optimizer_state_dict(first, sd.out()));
  EXPECT_EQ(entry(sd, "momentum"), 0.9);
  EXPECT_EQ(entry(sd, "weight_decay"), 0.01);
  EXPECT_EQ(entry(sd, "nesterov"), 1.0);
  EXPECT_EQ(entry(sd, "maximize"), 1.0);
  DT_ASSERT_OK(dt_sgd_new(pb, 1, 0.5, 0.0, 0.0, 0.0, 0, second.out()));  // plain SGD
  DT_ASSERT_OK(dt_set_grad_enabled(0));  // b = a's value after the first step
  DT_ASSERT_OK(dt_copy_(b, a, 0));
  DT_ASSERT_OK(dt_set_grad_enabled(1));
  DT_ASSERT_OK(dt_optimizer_load_state_dict(second, sd));
  for (const char* name : {"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"}) {
    double x = -1, y = -2;
    DT_ASSERT_OK(dt_optimizer_option(first, name, &x));
    DT_ASSERT_OK(dt_optimizer_option(second, name, &y));
    EXPECT_EQ(x, y) << name;
  }
  for (int step = 0; step < 3; ++step) {
    const std::vector<double> g = {0.1 * step - 0.3, 0.7, -0.2 * step};
    set_grad(a, g, {3});
    set_grad(b, g, {3});
    DT_ASSERT_OK(dt_optimizer_step(first));
    DT_ASSERT_OK(dt_optimizer_step(second));
    EXPECT_EQ(values<double>(a), values<double>(b)) << "step " << step;
  }
  // Refused whole: nesterov with dampening (the constructor's rule), a flag of 2, a
  // negative momentum; the settings and the state stay as they were.
  SD now;
  DT_ASSERT_OK(dt_optimizer_state_dict(second, now.out()));
  struct Bad {
    std::vector<std::pair<const char*, double>> set;
    const char* message;
  };
  for (const Bad& bad : {Bad{{{"dampening", 0.5}}, "SGD: Nesterov momentum requires a momentum and zero dampening"},
                         Bad{{{"nesterov", 2}}, "SGD: \"nesterov\" is a flag: 0 or 1, got 2"},
                         Bad{{{"lr", 0.01}, {"momentum", -0.5}}, "SGD: invalid momentum value -0.5"}}) {
    SD sd2;
    copy_of(now, &sd2);
    for (const auto& [name, value] : bad.set) {
      T v = doubles_tensor({value}, {});
      DT_ASSERT_OK(dt_state_dict_set(sd2, name, v));
    }
    DT_EXPECT_STATUS(dt_optimizer_load_state_dict(second, sd2), DT_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(has(dt_last_error_message(), bad.message)) << dt_last_error_message();
    SD after;
    DT_ASSERT_OK(dt_optimizer_state_dict(second, after.out()));
    ASSERT_EQ(keys(after), keys(now));
    for (const std::string& k : keys(now)) {
      T x, y;
      DT_ASSERT_OK(dt_state_dict_find(now, k.c_str(), x.out()));
      DT_ASSERT_OK(dt_state_dict_find(after, k.c_str(), y.out()));
      T xf, yf;
      DT_ASSERT_OK(dt_tensor_to(x, cpu(), DT_FLOAT64, 0, xf.out()));
      DT_ASSERT_OK(dt_tensor_to(y, cpu(), DT_FLOAT64, 0, yf.out()));
      EXPECT_EQ(values<double>(xf), values<double>(yf)) << k << " changed by a refused load";
    }
  }
  // A checkpoint of the older kind (lr and the state only) keeps the other settings.
  SD old_kind;
  copy_of(now, &old_kind, {"lr", "state.0.momentum_buffer"});
  DT_ASSERT_OK(dt_optimizer_set_option(second, "weight_decay", 0.25));
  DT_ASSERT_OK(dt_optimizer_load_state_dict(second, old_kind));
  double wd = 0;
  DT_ASSERT_OK(dt_optimizer_option(second, "weight_decay", &wd));
  EXPECT_EQ(wd, 0.25);
}

std::vector<std::vector<int64_t>> shapes_of(const json& grads) {
  std::vector<std::vector<int64_t>> out;
  for (const json& g : grads) out.push_back(g.at("shape").get<std::vector<int64_t>>());
  return out;
}

TEST_F(OptimState, ClippingMatchesPyTorch) {
  ASSERT_TRUE(Cases().contains("clip_grad")) << "regenerate tests/reference/module_cases.json";
  for (const json& c : Cases().at("clip_grad")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    std::vector<T> ps;
    std::vector<const dt_tensor*> raw;
    for (const json& g : c.at("grads")) {
      const std::vector<double> gv = g.at("data").get<std::vector<double>>();
      ps.push_back(param_with_grad(std::vector<double>(gv.size(), 0.0), gv, g.at("shape").get<std::vector<int64_t>>()));
      raw.push_back(ps.back());
    }
    const double max_norm = c.at("max_norm");
    if (c.contains("total_norm")) {
      const double norm_type = c.at("norm_type").is_string() ? INFINITY : c.at("norm_type").get<double>();
      T total;
      DT_ASSERT_OK(dt_clip_grad_norm_(raw.data(), raw.size(), max_norm, norm_type, 1, total.out()));
      EXPECT_NEAR(values<double>(total)[0], c.at("total_norm").get<double>(), 1e-12);
    } else {
      DT_ASSERT_OK(dt_clip_grad_value_(raw.data(), raw.size(), max_norm));
    }
    for (size_t i = 0; i < ps.size(); ++i) {
      const std::vector<double> got = grad_of(ps[i]), want = c.at("clipped")[i].get<std::vector<double>>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-12) << i << ", " << k;
    }
  }
}

TEST_F(OptimState, ClippingEdgesAndErrors) {
  // By hand: gradients [3] and [4] have norm 5; clipped to 1 they become 3/5, 4/5
  // (times 5 / (5 + 1e-6)).
  T a = param_with_grad({0}, {3}, {1}), b = param_with_grad({0}, {4}, {1}, DT_FLOAT32);
  T none = doubles_tensor({0}, {1});  // no gradient: skipped
  DT_ASSERT_OK(dt_tensor_set_requires_grad(none, 1));
  const dt_tensor* ps[] = {a, none, b};
  T total;
  DT_ASSERT_OK(dt_clip_grad_norm_(ps, 3, 1.0, 2.0, 0, total.out()));
  dt_dtype dt{};
  DT_ASSERT_OK(dt_tensor_dtype(total, &dt));
  EXPECT_EQ(dt, DT_FLOAT64) << "the first gradient's dtype";
  EXPECT_EQ(values<double>(total)[0], 5.0);
  EXPECT_NEAR(grad_of(a)[0], 0.6, 1e-6);
  T gb;
  DT_ASSERT_OK(dt_tensor_grad(b, gb.out()));
  EXPECT_NEAR(values<float>(gb)[0], 0.8f, 1e-6);
  // Under max_norm: unchanged; the norm need not be returned.
  DT_ASSERT_OK(dt_clip_grad_norm_(ps, 3, 10.0, 2.0, 0, nullptr));
  EXPECT_NEAR(grad_of(a)[0], 0.6, 1e-6);
  // No gradient at all: a float32 zero.
  const dt_tensor* only_none[] = {none};
  T zero;
  DT_ASSERT_OK(dt_clip_grad_norm_(only_none, 1, 1.0, 2.0, 1, zero.out()));
  DT_ASSERT_OK(dt_tensor_dtype(zero, &dt));
  EXPECT_EQ(dt, DT_FLOAT32);
  EXPECT_EQ(values<float>(zero)[0], 0.0f);
  DT_ASSERT_OK(dt_clip_grad_norm_(nullptr, 0, 1.0, 2.0, 0, nullptr));
  // A non-finite norm: refused with error_if_nonfinite, gradients untouched.
  T c = param_with_grad({0, 0}, {INFINITY, 1.0}, {2});
  const dt_tensor* pc[] = {c};
  dt_tensor* out = nullptr;
  DT_EXPECT_STATUS(dt_clip_grad_norm_(pc, 1, 1.0, 2.0, 1, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "is inf")) << dt_last_error_message();
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(grad_of(c), (std::vector<double>{INFINITY, 1.0}));
  // Bad arguments.
  DT_EXPECT_STATUS(dt_clip_grad_norm_(ps, 3, -1.0, 2.0, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_clip_grad_norm_(ps, 3, NAN, 2.0, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_clip_grad_norm_(ps, 3, 1.0, 0.0, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "norm_type")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_clip_grad_norm_(ps, 3, 1.0, 2.0, 2, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_clip_grad_norm_(nullptr, 2, 1.0, 2.0, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_clip_grad_value_(ps, 3, -0.5), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_clip_grad_value_(nullptr, 1, 0.5), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NEAR(grad_of(a)[0], 0.6, 1e-6) << "nothing was changed by the refused calls";
  // clip_grad_value_ keeps NaN, as PyTorch's clamp.
  T d = param_with_grad({0, 0, 0}, {NAN, -2.0, 0.25}, {3});
  const dt_tensor* pd[] = {d};
  DT_ASSERT_OK(dt_clip_grad_value_(pd, 1, 0.5));
  std::vector<double> gd = grad_of(d);
  EXPECT_TRUE(std::isnan(gd[0]));
  EXPECT_EQ(gd[1], -0.5);
  EXPECT_EQ(gd[2], 0.25);
}

// The checkpoint / schedule scenario: PyTorch's 20 steps with the rate cut tenfold at
// step 10 and gradients clipped to norm 0.5; here the optimizer is checkpointed after 10
// steps (to a file), released, and a new one resumes from the file.
TEST_F(OptimState, AResumedRunFollowsPyTorchsUninterruptedRun) {
  ASSERT_TRUE(Cases().contains("resume")) << "regenerate tests/reference/module_cases.json";
  char dir[] = "/tmp/dt_resume_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  for (const json& run : Cases().at("resume")) {
    SCOPED_TRACE(run.at("id").get<std::string>());
    M l1, relu, l2, net, lossf;
    DT_ASSERT_OK(dt_linear_new(8, 16, 1, DT_FLOAT32, cpu(), l1.out()));
    DT_ASSERT_OK(dt_relu_new(relu.out()));
    DT_ASSERT_OK(dt_linear_new(16, 3, 1, DT_FLOAT32, cpu(), l2.out()));
    dt_module* parts[] = {l1, relu, l2};
    DT_ASSERT_OK(dt_sequential_new(parts, 3, net.out()));
    const std::string weights = std::string(DT_TEST_DATA_DIR) + "/reference/" + run.at("weights").get<std::string>();
    DT_ASSERT_OK(dt_module_load(net, weights.c_str()));
    DT_ASSERT_OK(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0, lossf.out()));
    T x = doubles_tensor(run.at("x").at("data").get<std::vector<double>>(), {32, 8}, DT_FLOAT32);
    std::vector<int64_t> yv = run.at("y").get<std::vector<int64_t>>();
    const int64_t n = static_cast<int64_t>(yv.size());
    T y;
    DT_ASSERT_OK(dt_tensor_from_data(yv.data(), yv.size() * 8, &n, 1, DT_INT64, cpu(), y.out()));
    size_t np = 0;
    DT_ASSERT_OK(dt_module_parameter_count(net, &np));
    std::vector<T> params(np);
    std::vector<const dt_tensor*> raw;
    for (size_t i = 0; i < np; ++i) {
      DT_ASSERT_OK(dt_module_parameter(net, i, nullptr, 0, nullptr, params[i].out()));
      raw.push_back(params[i]);
    }
    const bool sgd = run.at("optimizer") == "sgd";
    const double lr = run.at("lr");
    auto make = [&](O* opt) {
      if (sgd) return dt_sgd_new(raw.data(), raw.size(), lr, 0.9, 0.0, 0.0, 0, opt->out());
      return dt_adam_new(raw.data(), raw.size(), lr, 0.9, 0.999, 1e-8, 0.01, 1, opt->out());
    };
    const std::vector<double> losses = run.at("losses"), norms = run.at("grad_norms");
    const std::string path = std::string(dir) + "/opt.safetensors";
    O opt;
    DT_ASSERT_OK(make(&opt));
    for (size_t step = 0; step < losses.size(); ++step) {
      if (step == 10) {  // checkpoint, drop the optimizer, resume from the file
        {
          SD sd;
          DT_ASSERT_OK(dt_optimizer_state_dict(opt, sd.out()));
          std::vector<std::string> got = keys(sd);
          got.erase(got.begin(), got.begin() + with_settings(sgd ? "sgd" : "adam", {}).size());
          std::sort(got.begin(), got.end());
          EXPECT_EQ(got, run.at("state_keys").get<std::vector<std::string>>()) << "PyTorch's keys";
          DT_ASSERT_OK(dt_safetensors_save(sd, path.c_str()));
        }
        DT_ASSERT_OK(make(&opt));
        SD loaded;
        DT_ASSERT_OK(dt_safetensors_load(path.c_str(), cpu(), loaded.out()));
        DT_ASSERT_OK(dt_optimizer_load_state_dict(opt, loaded));
        DT_ASSERT_OK(dt_optimizer_set_lr(opt, lr * 0.1));
      }
      DT_ASSERT_OK(dt_optimizer_zero_grad(opt));
      T logits, l, norm;
      const dt_tensor* in[] = {x};
      DT_ASSERT_OK(dt_module_forward(net, in, 1, logits.out()));
      const dt_tensor* args[] = {logits, y};
      DT_ASSERT_OK(dt_module_forward(lossf, args, 2, l.out()));
      double v = 0, nv = 0;
      DT_ASSERT_OK(dt_tensor_item(l, &v));
      EXPECT_NEAR(v, losses[step], 1e-4 * losses[step]) << "step " << step;
      DT_ASSERT_OK(dt_backward(l, nullptr));
      DT_ASSERT_OK(dt_clip_grad_norm_(raw.data(), raw.size(), 0.5, 2.0, 0, norm.out()));
      DT_ASSERT_OK(dt_tensor_item(norm, &nv));
      EXPECT_NEAR(nv, norms[step], 1e-4 * norms[step]) << "step " << step;
      DT_ASSERT_OK(dt_optimizer_step(opt));
    }
    unlink(path.c_str());
  }
  rmdir(dir);
}

// ---------------------------------------------------------------- RMSprop and Adagrad

// The tensor v of `shape` in dtype on device (through a float64 tensor on the host).
T on_device(const std::vector<double>& v, std::vector<int64_t> shape, dt_dtype dtype, dt_device device) {
  T host = doubles_tensor(v, std::move(shape), dtype), out;
  EXPECT_EQ(dt_tensor_to(host, device, dtype, DT_TO_COPY, out.out()), DT_OK);
  return out;
}
std::vector<double> host_values(dt_tensor* t) {
  T f;
  EXPECT_EQ(dt_tensor_to(t, cpu(), DT_FLOAT64, DT_TO_COPY, f.out()), DT_OK);
  return values<double>(f);
}
// p's gradient becomes g (backward of sum(p * g)), or none when g is null.
void give_grad(dt_tensor* p, const json& g, std::vector<int64_t> shape, dt_dtype dtype, dt_device device) {
  EXPECT_EQ(dt_tensor_clear_grad(p), DT_OK);
  if (g.is_null()) return;
  T gt = on_device(g.get<std::vector<double>>(), std::move(shape), dtype, device), prod, total;
  EXPECT_EQ(dt_mul(p, gt, prod.out()), DT_OK);
  EXPECT_EQ(dt_sum(prod, nullptr, 0, 0, total.out()), DT_OK);
  EXPECT_EQ(dt_backward(total, nullptr), DT_OK);
}
dt_status make_optimizer(const json& c, const std::vector<const dt_tensor*>& ps, O* opt) {
  const json& o = c.at("options");
  const std::string kind = c.at("optimizer");
  if (kind == "sgd")
    return dt_sgd_new(ps.data(), ps.size(), o.at("lr"), o.at("momentum"), o.at("dampening"), o.at("weight_decay"),
                      o.at("nesterov").get<int32_t>(), opt->out());
  if (kind == "adam" || kind == "adamw")
    return dt_adam_new(ps.data(), ps.size(), o.at("lr"), o.at("beta1"), o.at("beta2"), o.at("eps"),
                       o.at("weight_decay"), kind == "adamw", opt->out());
  if (kind == "rmsprop")
    return dt_rmsprop_new(ps.data(), ps.size(), o.at("lr"), o.at("alpha"), o.at("eps"), o.at("weight_decay"),
                          o.at("momentum"), o.at("centered").get<int32_t>(), opt->out());
  return dt_adagrad_new(ps.data(), ps.size(), o.at("lr"), o.at("lr_decay"), o.at("weight_decay"),
                        o.at("initial_accumulator_value"), o.at("eps"), opt->out());
}
// dt_optimizer_set_option for each setting of `settings`, read back with dt_optimizer_option.
void set_options(dt_optimizer* opt, const json& settings) {
  for (const auto& [name, value] : settings.items()) {
    DT_ASSERT_OK(dt_optimizer_set_option(opt, name.c_str(), value.get<double>()));
    double back = -1;
    DT_ASSERT_OK(dt_optimizer_option(opt, name.c_str(), &back));
    EXPECT_EQ(back, value.get<double>()) << name;
  }
}
void expect_values_near(const std::vector<double>& got, const json& want, double tol, const std::string& what) {
  const std::vector<double> w = want.get<std::vector<double>>();
  ASSERT_EQ(got.size(), w.size()) << what;
  for (size_t k = 0; k < w.size(); ++k)
    ASSERT_NEAR(got[k], w[k], tol * (1 + std::fabs(w[k]))) << what << " [" << k << "]";
}

void optimizer_steps_match_pytorch(dt_device device) {
  ASSERT_TRUE(Cases().contains("optim_steps")) << "regenerate tests/reference/module_cases.json";
  for (const json& c : Cases().at("optim_steps")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    const dt_dtype dtype = c.at("dtype") == "float32" ? DT_FLOAT32 : DT_FLOAT64;
    const double tol = dtype == DT_FLOAT32 ? 2e-6 : 1e-12;
    std::vector<T> ps;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<const dt_tensor*> raw;
    for (const json& p : c.at("initial")) {
      shapes.push_back(p.at("shape").get<std::vector<int64_t>>());
      ps.push_back(on_device(p.at("data").get<std::vector<double>>(), shapes.back(), dtype, device));
      DT_ASSERT_OK(dt_tensor_set_requires_grad(ps.back(), 1));
      raw.push_back(ps.back());
    }
    O opt;
    DT_ASSERT_OK(make_optimizer(c, raw, &opt));
    set_options(opt, c.at("set"));
    const json& grads = c.at("grads");
    for (size_t step = 0; step < grads.size(); ++step) {
      for (const json& change : c.at("changes"))
        if (change.at("step") == step) set_options(opt, change.at("set"));
      for (size_t i = 0; i < ps.size(); ++i) give_grad(ps[i], grads[step][i], shapes[i], dtype, device);
      DT_ASSERT_OK(dt_optimizer_step(opt));
      for (size_t i = 0; i < ps.size(); ++i)
        expect_values_near(host_values(ps[i]), c.at("after")[step][i], tol,
                           "step " + std::to_string(step) + " param " + std::to_string(i));
    }
    // The settings as PyTorch's param_groups hold them after the schedule, then the
    // state under PyTorch's names, in its order, with its values.
    SD sd;
    DT_ASSERT_OK(dt_optimizer_state_dict(opt, sd.out()));
    const std::string kind = c.at("optimizer") == "adamw" ? "adam" : c.at("optimizer").get<std::string>();
    const std::vector<std::string> setting_names = with_settings(kind, {});
    std::vector<std::string> want_keys = setting_names;
    for (const json& e : c.at("state")) want_keys.push_back(e.at("key"));
    EXPECT_EQ(keys(sd), want_keys);
    const json& group = c.at("param_groups");
    for (const std::string& name : setting_names) {
      ASSERT_TRUE(group.contains(name)) << "PyTorch's param_groups have no " << name;
      EXPECT_EQ(entry(sd, name.c_str()), group.at(name).get<double>()) << name;
    }
    for (const json& e : c.at("state")) {
      const std::string key = e.at("key");
      T t;
      DT_ASSERT_OK(dt_state_dict_find(sd, key.c_str(), t.out()));
      EXPECT_EQ(shape_of(t), e.at("shape").get<std::vector<int64_t>>()) << key;
      expect_values_near(host_values(t), e.at("data"), tol, key);
    }
    // Loaded into an optimizer made as the first one was (before any setting changed),
    // the checkpoint brings back the settings too: every one reads as PyTorch's.
    O resumed;
    DT_ASSERT_OK(make_optimizer(c, raw, &resumed));
    DT_ASSERT_OK(dt_optimizer_load_state_dict(resumed, sd));
    for (const std::string& name : setting_names) {
      double v = -1;
      DT_ASSERT_OK(dt_optimizer_option(resumed, name.c_str(), &v));
      EXPECT_EQ(v, group.at(name).get<double>()) << name << " after loading";
    }
  }
}

// RMSprop, Adagrad, and the settings set after construction (amsgrad, maximize, and
// schedules of momentum, betas and others between steps) of every optimizer.
TEST_F(OptimState, OptimizerStepsMatchPyTorchsStepByStep) { optimizer_steps_match_pytorch(cpu()); }

// The same cases on a GPU, where one is (the steps are plain ops there as anywhere).
TEST_F(OptimState, OptimizerStepsMatchPyTorchsStepByStepOnCuda) {
  if (!dt_cuda_is_available()) GTEST_SKIP() << "CUDA is not available";
  optimizer_steps_match_pytorch(dt_device{DT_DEVICE_CUDA, 0});
}

// Every optimizer's settings by PyTorch's names: the constructor's values and the
// defaults read back; a refused value (alone, or with the others: Nesterov without
// momentum) changes nothing and says why; an unknown name lists the optimizer's names.
TEST_F(OptimState, SettingsAreReadAndSetByPyTorchsNames) {
  T p = param_with_grad({1, -2}, {0.5, 0.25}, {2});
  const dt_tensor* ps[] = {p};
  O sgd, adam, adamw, rms, ada;
  DT_ASSERT_OK(dt_sgd_new(ps, 1, 0.1, 0.9, 0.0, 0.01, 1, sgd.out()));
  DT_ASSERT_OK(dt_adam_new(ps, 1, 0.001, 0.8, 0.95, 1e-6, 0.0, 0, adam.out()));
  DT_ASSERT_OK(dt_adam_new(ps, 1, 0.002, 0.9, 0.999, 1e-8, 0.01, 1, adamw.out()));
  DT_ASSERT_OK(dt_rmsprop_new(ps, 1, 0.01, 0.99, 1e-8, 0.0, 0.5, 1, rms.out()));
  DT_ASSERT_OK(dt_adagrad_new(ps, 1, 0.05, 0.1, 0.0, 0.3, 1e-10, ada.out()));
  auto read = [](dt_optimizer* o, const char* name) {
    double v = -12345;
    EXPECT_EQ(dt_optimizer_option(o, name, &v), DT_OK) << name << ": " << dt_last_error_message();
    return v;
  };
  EXPECT_EQ(read(sgd, "lr"), 0.1);
  EXPECT_EQ(read(sgd, "momentum"), 0.9);
  EXPECT_EQ(read(sgd, "dampening"), 0.0);
  EXPECT_EQ(read(sgd, "weight_decay"), 0.01);
  EXPECT_EQ(read(sgd, "nesterov"), 1.0);
  EXPECT_EQ(read(adam, "beta1"), 0.8);
  EXPECT_EQ(read(adam, "beta2"), 0.95);
  EXPECT_EQ(read(adam, "eps"), 1e-6);
  EXPECT_EQ(read(adam, "amsgrad"), 0.0);
  EXPECT_EQ(read(adamw, "weight_decay"), 0.01);
  EXPECT_EQ(read(rms, "alpha"), 0.99);
  EXPECT_EQ(read(rms, "centered"), 1.0);
  EXPECT_EQ(read(ada, "lr_decay"), 0.1);
  EXPECT_EQ(read(ada, "initial_accumulator_value"), 0.3);
  for (dt_optimizer* o : {sgd.get(), adam.get(), adamw.get(), rms.get(), ada.get()}) EXPECT_EQ(read(o, "maximize"), 0.0);

  // The learning rate is one setting, whichever way it is set.
  DT_ASSERT_OK(dt_optimizer_set_option(adam, "lr", 0.125));
  double lr = 0;
  DT_ASSERT_OK(dt_optimizer_lr(adam, &lr));
  EXPECT_EQ(lr, 0.125);
  DT_ASSERT_OK(dt_optimizer_set_lr(adam, 0.25));
  EXPECT_EQ(read(adam, "lr"), 0.25);

  struct Refused {
    dt_optimizer* opt;
    const char* name;
    double value;
    const char* message;
  };
  const double nan = std::nan("");
  for (const Refused& r : std::vector<Refused>{
           {sgd, "momentum", 0.0, "SGD: Nesterov momentum requires a momentum and zero dampening"},
           {sgd, "dampening", 0.5, "SGD: Nesterov momentum requires a momentum and zero dampening"},
           {sgd, "weight_decay", -1, "SGD: invalid weight_decay value -1"},
           {sgd, "nesterov", 2, "SGD: \"nesterov\" is a flag: 0 or 1, got 2"},
           {adam, "beta1", 1.0, "Adam: invalid beta parameter at index 0: 1"},
           {adam, "beta2", nan, "Adam: invalid beta parameter at index 1: nan"},
           {adam, "amsgrad", 0.5, "Adam: \"amsgrad\" is a flag: 0 or 1, got 0.5"},
           {adamw, "eps", -1e-8, "AdamW: invalid epsilon value -1e-08"},
           {adamw, "lr", INFINITY, "AdamW: invalid learning rate inf"},
           {rms, "alpha", -0.5, "RMSprop: invalid alpha value -0.5"},
           {ada, "lr_decay", nan, "Adagrad: invalid lr_decay value nan"},
           {ada, "maximize", -1, "Adagrad: \"maximize\" is a flag: 0 or 1, got -1"}}) {
    const double before = read(r.opt, r.name);
    DT_EXPECT_STATUS(dt_optimizer_set_option(r.opt, r.name, r.value), DT_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(dt_last_error_message(), r.message) << r.name;
    EXPECT_EQ(read(r.opt, r.name), before) << r.name << " changed though refused";
  }
  // A change that makes Nesterov valid again goes through in the right order.
  DT_ASSERT_OK(dt_optimizer_set_option(sgd, "nesterov", 0));
  DT_ASSERT_OK(dt_optimizer_set_option(sgd, "momentum", 0));
  EXPECT_EQ(read(sgd, "momentum"), 0.0);

  double untouched = 7;
  DT_EXPECT_STATUS(dt_optimizer_option(adam, "betas", &untouched), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error_message(),
               "Adam has no setting \"betas\" (its settings: lr, beta1, beta2, eps, weight_decay, amsgrad, maximize)");
  EXPECT_EQ(untouched, 7);
  DT_EXPECT_STATUS(dt_optimizer_set_option(ada, "momentum", 0.9), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error_message(), "Adagrad has no setting \"momentum\" (its settings: lr, lr_decay, "
                                        "weight_decay, eps, initial_accumulator_value, maximize)");
}

// amsgrad switched on after some steps: its max_exp_avg_sq starts from zeros (so from
// exp_avg_sq itself) at the next step and the checkpoint holds it from then on; off
// again, the step is Adam's plain one (the fused CPU step: the bits of the plain ops).
TEST_F(OptimState, AmsgradSwitchedOnLaterStartsItsMaximumThen) {
  T a = param_with_grad({1, -2, 3}, {0.5, 0.25, -1}, {3});
  T b = param_with_grad({1, -2, 3}, {0.5, 0.25, -1}, {3});
  const dt_tensor* pa[] = {a};
  const dt_tensor* pb[] = {b};
  O with, without;
  DT_ASSERT_OK(dt_adam_new(pa, 1, 0.1, 0.9, 0.999, 1e-8, 0.0, 0, with.out()));
  DT_ASSERT_OK(dt_adam_new(pb, 1, 0.1, 0.9, 0.999, 1e-8, 0.0, 0, without.out()));
  DT_ASSERT_OK(dt_optimizer_step(with));
  DT_ASSERT_OK(dt_optimizer_step(without));
  DT_ASSERT_OK(dt_optimizer_set_option(with, "amsgrad", 1));
  // Step 2 with a smaller gradient: exp_avg_sq falls, so amsgrad's maximum (set from
  // zeros and exp_avg_sq now) equals it this step; the parameters stay equal.
  set_grad(a, {0.1, 0.1, 0.1}, {3});
  set_grad(b, {0.1, 0.1, 0.1}, {3});
  DT_ASSERT_OK(dt_optimizer_step(with));
  DT_ASSERT_OK(dt_optimizer_step(without));
  EXPECT_EQ(values<double>(a), values<double>(b));
  SD sd;
  DT_ASSERT_OK(dt_optimizer_state_dict(with, sd.out()));
  EXPECT_EQ(keys(sd), with_settings("adam", {"state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq",
                                              "state.0.max_exp_avg_sq"}));
  // Step 3 with a zero gradient: exp_avg_sq only decays, so the maximum (step 2's) is
  // above it and amsgrad steps less far than Adam (exp_avg still moves it), on every element.
  set_grad(a, {0, 0, 0}, {3});
  set_grad(b, {0, 0, 0}, {3});
  std::vector<double> a0 = values<double>(a), b0 = values<double>(b);
  DT_ASSERT_OK(dt_optimizer_step(with));
  DT_ASSERT_OK(dt_optimizer_step(without));
  std::vector<double> a1 = values<double>(a), b1 = values<double>(b);
  for (size_t k = 0; k < 3; ++k) EXPECT_LT(std::fabs(a1[k] - a0[k]), std::fabs(b1[k] - b0[k])) << k;
}

// A checkpoint of either, loaded into a new optimizer over copies of the parameters,
// steps to the same bits as the original going on.
TEST_F(OptimState, RmspropAndAdagradCheckpointsResumeExactly) {
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "rmsprop" : "adagrad");
    auto make = [&](const std::vector<const dt_tensor*>& ps, O* opt) {
      if (kind == 0) return dt_rmsprop_new(ps.data(), ps.size(), 0.01, 0.9, 1e-8, 0.01, 0.5, 1, opt->out());
      return dt_adagrad_new(ps.data(), ps.size(), 0.1, 0.05, 0.01, 0.3, 1e-10, opt->out());
    };
    T a = param_with_grad({1, -2, 3}, {0.5, 0.25, -1}, {3});
    T b = param_with_grad({0.5}, {2}, {1});
    std::vector<const dt_tensor*> ps{a, b};
    O orig;
    DT_ASSERT_OK(make(ps, &orig));
    DT_ASSERT_OK(dt_optimizer_step(orig));
    DT_ASSERT_OK(dt_optimizer_step(orig));
    SD sd;
    DT_ASSERT_OK(dt_optimizer_state_dict(orig, sd.out()));
    EXPECT_EQ(entry(sd, "state.1.step"), 2.0);
    T a2 = doubles_tensor(values<double>(a), {3}), b2 = doubles_tensor(values<double>(b), {1});
    DT_ASSERT_OK(dt_tensor_set_requires_grad(a2, 1));
    DT_ASSERT_OK(dt_tensor_set_requires_grad(b2, 1));
    std::vector<const dt_tensor*> ps2{a2, b2};
    O resumed;
    DT_ASSERT_OK(make(ps2, &resumed));
    DT_ASSERT_OK(dt_optimizer_load_state_dict(resumed, sd));
    for (int step = 0; step < 3; ++step) {
      const std::vector<double> ga{0.1 * step - 0.3, 0.7, -0.2 * step}, gb{1.5 - step};
      set_grad(a, ga, {3});
      set_grad(b, gb, {1});
      set_grad(a2, ga, {3});
      set_grad(b2, gb, {1});
      DT_ASSERT_OK(dt_optimizer_step(orig));
      DT_ASSERT_OK(dt_optimizer_step(resumed));
      EXPECT_EQ(values<double>(a), values<double>(a2)) << "step " << step;
      EXPECT_EQ(values<double>(b), values<double>(b2)) << "step " << step;
    }
    // Another optimizer's state is refused, naming the first key it does not know: one of
    // SGD's settings.
    O sgd;
    DT_ASSERT_OK(dt_sgd_new(ps.data(), ps.size(), 0.1, 0.9, 0.0, 0.0, 0, sgd.out()));
    DT_ASSERT_OK(dt_optimizer_step(sgd));
    SD sgd_sd;
    DT_ASSERT_OK(dt_optimizer_state_dict(sgd, sgd_sd.out()));
    DT_EXPECT_STATUS(dt_optimizer_load_state_dict(resumed, sgd_sd), DT_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(has(dt_last_error_message(),
                    kind == 0 ? "RMSprop: unexpected key \"dampening\" (expected a setting: lr, alpha, eps, "
                              : "Adagrad: unexpected key \"momentum\" (expected a setting: lr, lr_decay, "))
        << dt_last_error_message();
  }
}

// The fused step (one kernel per parameter, KernelOp::AdaptiveStep, taken for contiguous
// float32/float64 parameters on the CPU) gives the bits of the plan of plain ops that
// every other case takes (here: a transposed, non-contiguous parameter), over several
// steps and every flag: weight decay coupled and decoupled, centered, momentum, decay.
TEST_F(OptimState, FusedAdaptiveStepsGiveTheBitsOfThePlainOps) {
  const double v0[] = {0.3, -1.2, 0.7, 2.5, -0.4, 0.05, 1.9, -2.2, 0.0, 0.8, -0.6, 1.1};
  for (dt_dtype dtype : {DT_FLOAT32, DT_FLOAT64}) {
    for (int kind = 0; kind < 6; ++kind) {
      SCOPED_TRACE(std::string(dtype == DT_FLOAT32 ? "float32 " : "float64 ") + std::to_string(kind));
      // fused: a contiguous [3, 4]; plain: the transpose of a contiguous [4, 3] holding
      // the same values in the same logical places.
      std::vector<double> tv(12);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) tv[j * 3 + i] = v0[i * 4 + j];
      T fused = doubles_tensor(std::vector<double>(v0, v0 + 12), {3, 4}, dtype);
      T base = doubles_tensor(tv, {4, 3}, dtype), plain;
      DT_ASSERT_OK(dt_transpose(base, 0, 1, plain.out()));
      DT_ASSERT_OK(dt_tensor_set_requires_grad(fused, 1));
      DT_ASSERT_OK(dt_tensor_set_requires_grad(plain, 1));
      O of, op;
      auto make = [&](dt_tensor* p, O* o) {
        const dt_tensor* ps[] = {p};
        switch (kind) {
          case 0: return dt_adam_new(ps, 1, 0.01, 0.9, 0.999, 1e-8, 0.1, 0, o->out());
          case 1: return dt_adam_new(ps, 1, 0.01, 0.8, 0.99, 1e-6, 0.05, 1, o->out());
          case 2: return dt_rmsprop_new(ps, 1, 0.01, 0.9, 1e-8, 0.1, 0.7, 1, o->out());
          case 3: return dt_rmsprop_new(ps, 1, 0.02, 0.99, 1e-8, 0, 0, 0, o->out());
          case 4: return dt_adagrad_new(ps, 1, 0.1, 0.05, 0.1, 0.2, 1e-10, o->out());
          default: return dt_adagrad_new(ps, 1, 0.1, 0, 0, 0, 1e-10, o->out());
        }
      };
      DT_ASSERT_OK(make(fused, &of));
      DT_ASSERT_OK(make(plain, &op));
      for (int step = 0; step < 4; ++step) {
        std::vector<double> g(12);
        for (int k = 0; k < 12; ++k) g[k] = std::sin(1.7 * k + step) * (step == 1 && k % 3 == 0 ? 0.0 : 1.0);
        for (dt_tensor* p : {fused.get(), plain.get()}) {
          T gt = doubles_tensor(g, {3, 4}, dtype), prod, total;
          DT_ASSERT_OK(dt_tensor_clear_grad(p));
          DT_ASSERT_OK(dt_mul(p, gt, prod.out()));
          DT_ASSERT_OK(dt_sum(prod, nullptr, 0, 0, total.out()));
          DT_ASSERT_OK(dt_backward(total, nullptr));
        }
        DT_ASSERT_OK(dt_optimizer_step(of));
        DT_ASSERT_OK(dt_optimizer_step(op));
        T a, b;
        DT_ASSERT_OK(dt_tensor_to(fused, cpu(), DT_FLOAT64, DT_TO_COPY, a.out()));
        DT_ASSERT_OK(dt_tensor_to(plain, cpu(), DT_FLOAT64, DT_TO_COPY, b.out()));
        ASSERT_EQ(values<double>(a), values<double>(b)) << "step " << step;  // exact: float32 widens exactly
      }
      EXPECT_NE(host_values(base), tv) << "the plain optimizer wrote through the transposed view";
    }
  }
}

// Adagrad's sums exist from the start, as PyTorch's: a state dict before any step holds
// them (filled with initial_accumulator_value) and step 0.
TEST_F(OptimState, AdagradsSumsExistBeforeTheFirstStep) {
  T a = doubles_tensor({1, 2}, {2});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(a, 1));
  const dt_tensor* ps[] = {a};
  O opt;
  DT_ASSERT_OK(dt_adagrad_new(ps, 1, 0.01, 0.0, 0.0, 0.25, 1e-10, opt.out()));
  SD sd;
  DT_ASSERT_OK(dt_optimizer_state_dict(opt, sd.out()));
  EXPECT_EQ(keys(sd), with_settings("adagrad", {"state.0.step", "state.0.sum"}));
  EXPECT_EQ(entry(sd, "state.0.step"), 0.0);
  T sum;
  DT_ASSERT_OK(dt_state_dict_find(sd, "state.0.sum", sum.out()));
  EXPECT_EQ(values<double>(sum), (std::vector<double>{0.25, 0.25}));
  // A step without a gradient changes nothing, the count included.
  DT_ASSERT_OK(dt_optimizer_step(opt));
  EXPECT_EQ(values<double>(a), (std::vector<double>{1, 2}));
  SD again;
  DT_ASSERT_OK(dt_optimizer_state_dict(opt, again.out()));
  EXPECT_EQ(entry(again, "state.0.step"), 0.0);
}

TEST_F(OptimState, RmspropAndAdagradRefuseBadSettingsNamingThem) {
  T a = doubles_tensor({1, 2}, {2});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(a, 1));
  const dt_tensor* ps[] = {a};
  struct Bad {
    dt_status got;
    const char* message;
  };
  O o;
  const Bad bad[] = {
      {dt_rmsprop_new(ps, 1, -0.1, 0.99, 1e-8, 0, 0, 0, o.out()), "RMSprop: invalid learning rate -0.1"},
      {dt_rmsprop_new(ps, 1, 0.01, -1, 1e-8, 0, 0, 0, o.out()), "RMSprop: invalid alpha value -1"},
      {dt_rmsprop_new(ps, 1, 0.01, 0.99, NAN, 0, 0, 0, o.out()), "RMSprop: invalid epsilon value nan"},
      {dt_rmsprop_new(ps, 1, 0.01, 0.99, 1e-8, -2, 0, 0, o.out()), "RMSprop: invalid weight_decay value -2"},
      {dt_rmsprop_new(ps, 1, 0.01, 0.99, 1e-8, 0, -0.5, 0, o.out()), "RMSprop: invalid momentum value -0.5"},
      {dt_rmsprop_new(ps, 1, 0.01, 0.99, 1e-8, 0, 0, 2, o.out()), "centered"},
      {dt_rmsprop_new(ps, 0, 0.01, 0.99, 1e-8, 0, 0, 0, o.out()), "RMSprop: optimizer got an empty parameter list"},
      {dt_adagrad_new(ps, 1, -1, 0, 0, 0, 1e-10, o.out()), "Adagrad: invalid learning rate -1"},
      {dt_adagrad_new(ps, 1, 0.01, -0.5, 0, 0, 1e-10, o.out()), "Adagrad: invalid lr_decay value -0.5"},
      {dt_adagrad_new(ps, 1, 0.01, 0, -3, 0, 1e-10, o.out()), "Adagrad: invalid weight_decay value -3"},
      {dt_adagrad_new(ps, 1, 0.01, 0, 0, -0.1, 1e-10, o.out()), "Adagrad: invalid initial_accumulator_value -0.1"},
      {dt_adagrad_new(ps, 1, 0.01, 0, 0, 0, -1e-10, o.out()), "Adagrad: invalid epsilon value -1e-10"},
      {dt_adagrad_new(ps, 0, 0.01, 0, 0, 0, 1e-10, o.out()), "Adagrad: optimizer got an empty parameter list"},
  };
  // (dt_last_error_message is per thread and per call: each check re-runs its call.)
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) EXPECT_EQ(bad[k].got, DT_ERR_INVALID_ARGUMENT) << k;
  EXPECT_EQ(o.get(), nullptr) << "outputs are untouched on failure";
  DT_EXPECT_STATUS(dt_adagrad_new(ps, 1, 0.01, 0, 0, -0.1, 1e-10, o.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), bad[10].message)) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_rmsprop_new(ps, 1, 0.01, 0.99, NAN, 0, 0, 0, o.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), bad[2].message)) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_rmsprop_new(ps, 1, 0.01, 0.99, 1e-8, 0, 0, 2, o.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), bad[5].message)) << dt_last_error_message();
  // A non-floating parameter, and one listed twice.
  T ints;
  const int64_t iv[] = {1, 2}, two = 2;
  DT_ASSERT_OK(dt_tensor_from_data(iv, sizeof iv, &two, 1, DT_INT64, cpu(), ints.out()));
  const dt_tensor* int_ps[] = {ints};
  DT_EXPECT_STATUS(dt_adagrad_new(int_ps, 1, 0.01, 0, 0, 0, 1e-10, o.out()), DT_ERR_DTYPE_MISMATCH);
  EXPECT_TRUE(has(dt_last_error_message(), "Adagrad: can only optimize floating tensors, got int64"))
      << dt_last_error_message();
  const dt_tensor* twice[] = {a, a};
  DT_EXPECT_STATUS(dt_rmsprop_new(twice, 2, 0.01, 0.99, 1e-8, 0, 0, 0, o.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "params[1] is params[0] again")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_adagrad_new(ps, 1, 0.01, 0, 0, 0, 1e-10, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_rmsprop_new(nullptr, 1, 0.01, 0.99, 1e-8, 0, 0, 0, o.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(o.get(), nullptr);
}

// Their step counts live on the host, so a captured step is refused, as Adam's, and the
// stream captures on.
TEST_F(OptimState, RmspropAndAdagradStepsAreNotCaptured) {
  T a = param_with_grad({1, 2}, {0.5, -1}, {2});
  const dt_tensor* ps[] = {a};
  O rms, ada;
  DT_ASSERT_OK(dt_rmsprop_new(ps, 1, 0.01, 0.99, 1e-8, 0, 0, 0, rms.out()));
  DT_ASSERT_OK(dt_adagrad_new(ps, 1, 0.01, 0, 0, 0, 1e-10, ada.out()));
  Handle<dt_stream, dt_stream_release> s;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_EXPECT_STATUS(dt_optimizer_step(rms), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(has(dt_last_error_message(), "RMSprop step: cannot be captured")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_optimizer_step(ada), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(has(dt_last_error_message(), "Adagrad step: cannot be captured")) << dt_last_error_message();
  Handle<dt_graph, dt_graph_release> g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  EXPECT_EQ(values<double>(a), (std::vector<double>{1, 2})) << "a refused step writes nothing";
  DT_ASSERT_OK(dt_optimizer_step(rms));
  DT_ASSERT_OK(dt_optimizer_step(ada));
  EXPECT_NE(values<double>(a), (std::vector<double>{1, 2}));
}

}  // namespace
