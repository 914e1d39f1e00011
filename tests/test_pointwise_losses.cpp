// The pointwise losses (L1Loss, SmoothL1Loss, HuberLoss, BCELoss, BCEWithLogitsLoss,
// KLDivLoss) through the C API: values, input and target gradients for a random output
// gradient, and grad_fn names against PyTorch (tests/reference/module_cases.json,
// "pointwise_losses", from gen_module_reference.py); their buffers and state_dict names;
// integer targets; and the errors for bad settings and bad operands, with nothing leaked
// and no output written on failure.
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/dt_test.h"
#include "support/module_cases.h"

namespace {

using json = nlohmann::json;

// Two logical CPU devices, before the library reads the variable.
const bool kDevicesSet = [] { return setenv("DEVTENSOR_CPU_DEVICES", "2", 1) == 0; }();

class PointwiseLosses : public LeakChecked {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kDevicesSet);
    LeakChecked::SetUp();
  }
};

T tensor(const std::vector<double>& v, std::vector<int64_t> shape, dt_dtype dtype = DT_FLOAT64, dt_device d = cpu()) {
  T f64, out;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * 8, shape.data(), shape.size(), DT_FLOAT64, d, f64.out()), DT_OK);
  EXPECT_EQ(dt_tensor_to(f64, d, dtype, DT_TO_COPY, out.out()), DT_OK);
  return out;
}
T tensor_from_spec(const json& spec, dt_dtype dtype, dt_device d = cpu()) {
  return tensor(spec.at("data").get<std::vector<double>>(), spec.at("shape").get<std::vector<int64_t>>(), dtype, d);
}

// The loss module a reference case describes.
void make_loss(const json& c, dt_dtype dtype, dt_device d, M* out) {
  const std::string kind = c.at("loss");
  const int32_t r = c.at("reduction");
  T w, pw;
  if (!c.at("weight").is_null()) w = tensor_from_spec(c.at("weight"), dtype, d);
  if (!c.at("pos_weight").is_null()) pw = tensor_from_spec(c.at("pos_weight"), dtype, d);
  if (kind == "l1")
    DT_ASSERT_OK(dt_l1_loss_new(r, out->out()));
  else if (kind == "smooth_l1")
    DT_ASSERT_OK(dt_smooth_l1_loss_new(r, c.at("beta"), out->out()));
  else if (kind == "huber")
    DT_ASSERT_OK(dt_huber_loss_new(r, c.at("delta"), out->out()));
  else if (kind == "bce")
    DT_ASSERT_OK(dt_bce_loss_new(w, r, out->out()));
  else if (kind == "bce_with_logits")
    DT_ASSERT_OK(dt_bce_with_logits_loss_new(w, pw, r, out->out()));
  else
    DT_ASSERT_OK(dt_kl_div_loss_new(r, c.at("log_target"), out->out()));
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " " << i;
}

std::vector<double> as_doubles(dt_tensor* t) {
  T f64;
  EXPECT_EQ(dt_tensor_to(t, cpu(), DT_FLOAT64, 0, f64.out()), DT_OK);
  return values<double>(f64);
}

// Every case on d: the weights, input, target and output gradient all there.
void match_pytorch(dt_device d) {
  ASSERT_TRUE(Cases().contains("pointwise_losses")) << "regenerate tests/reference/module_cases.json";
  size_t checked = 0;
  for (const json& c : Cases().at("pointwise_losses")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    const dt_dtype dtype = c.at("dtype") == "float32" ? DT_FLOAT32 : DT_FLOAT64;
    const double tol = dtype == DT_FLOAT32 ? 2e-5 : 1e-10;
    M loss;
    make_loss(c, dtype, d, &loss);
    T x = tensor_from_spec(c.at("input"), dtype, d), t = tensor_from_spec(c.at("target"), dtype, d);
    DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
    const bool target_grad = c.at("target_requires_grad");
    if (target_grad) DT_ASSERT_OK(dt_tensor_set_requires_grad(t, 1));
    const dt_tensor* args[] = {x, t};
    T out;
    DT_ASSERT_OK(dt_module_forward(loss, args, 2, out.out()));
    expect_close(as_doubles(out), c.at("expected").get<std::vector<double>>(), tol, "value");
    char name[64] = "";
    DT_ASSERT_OK(dt_tensor_grad_fn_name(out, name, sizeof name, nullptr));
    EXPECT_EQ(std::string(name), c.at("grad_fn").get<std::string>());
    T gout = tensor_from_spec(c.at("grad_output"), dtype, d);
    DT_ASSERT_OK(dt_backward(out, gout));
    T gx, gt;
    DT_ASSERT_OK(dt_tensor_grad(x, gx.out()));
    ASSERT_NE(gx.get(), nullptr);
    expect_close(as_doubles(gx), c.at("input_grad").get<std::vector<double>>(), tol, "input grad");
    if (target_grad) {
      DT_ASSERT_OK(dt_tensor_grad(t, gt.out()));
      ASSERT_NE(gt.get(), nullptr);
      expect_close(as_doubles(gt), c.at("target_grad").get<std::vector<double>>(), tol, "target grad");
    }
    ++checked;
  }
  EXPECT_GE(checked, 50u);
}

TEST_F(PointwiseLosses, MatchPyTorch) { match_pytorch(cpu()); }

TEST_F(PointwiseLosses, MatchPyTorchOnCuda) {
  if (!dt_cuda_is_available()) GTEST_SKIP() << "CUDA is not available";
  match_pytorch(dt_device{DT_DEVICE_CUDA, 0});
}

// 0/1 labels may come as integers (converted to the input's dtype); the loss is then
// the one of the same labels as floats.
TEST_F(PointwiseLosses, IntegerTargetsAreConvertedToTheInputsDtype) {
  M loss;
  DT_ASSERT_OK(dt_bce_with_logits_loss_new(nullptr, nullptr, DT_REDUCTION_MEAN, loss.out()));
  T x = tensor({-1.0, 0.5, 2.0, 0.0}, {4}, DT_FLOAT32);
  const int64_t labels[] = {0, 1, 1, 0}, n = 4;
  T yi, yf = tensor({0, 1, 1, 0}, {4}, DT_FLOAT32);
  DT_ASSERT_OK(dt_tensor_from_data(labels, sizeof labels, &n, 1, DT_INT64, cpu(), yi.out()));
  T a, b;
  const dt_tensor* ai[] = {x, yi};
  const dt_tensor* af[] = {x, yf};
  DT_ASSERT_OK(dt_module_forward(loss, ai, 2, a.out()));
  DT_ASSERT_OK(dt_module_forward(loss, af, 2, b.out()));
  // By hand: mean of log(1 + e^-1)... = (softplus(-1) + softplus(-0.5) + softplus(-2) + softplus(0)) / 4
  const double want =
      (std::log1p(std::exp(-1.0)) + std::log1p(std::exp(-0.5)) + std::log1p(std::exp(-2.0)) + std::log(2.0)) / 4;
  EXPECT_NEAR(values<float>(a)[0], want, 1e-6);
  EXPECT_EQ(values<float>(a)[0], values<float>(b)[0]);
}

// weight and pos_weight are buffers under PyTorch's names (only those given), moved by
// dt_module_to with the module.
TEST_F(PointwiseLosses, WeightsAreBuffersThatMoveWithTheModule) {
  T pw = tensor({2.0, 3.0}, {2});
  M only_pos, both;
  DT_ASSERT_OK(dt_bce_with_logits_loss_new(nullptr, pw, DT_REDUCTION_SUM, only_pos.out()));
  T w = tensor({0.5, 1.0}, {2});
  DT_ASSERT_OK(dt_bce_with_logits_loss_new(w, pw, DT_REDUCTION_SUM, both.out()));
  auto buffer_names = [](dt_module* m) {
    size_t n = 0;
    EXPECT_EQ(dt_module_buffer_count(m, &n), DT_OK);
    std::vector<std::string> names;
    for (size_t i = 0; i < n; ++i) {
      char name[32];
      EXPECT_EQ(dt_module_buffer(m, i, name, sizeof name, nullptr, nullptr), DT_OK);
      names.push_back(name);
    }
    return names;
  };
  EXPECT_EQ(buffer_names(only_pos), (std::vector<std::string>{"pos_weight"}));
  EXPECT_EQ(buffer_names(both), (std::vector<std::string>{"weight", "pos_weight"}));
  // The buffers were copied: changing the caller's tensor changes nothing.
  const double seven[] = {7, 7};
  DT_ASSERT_OK(dt_tensor_copy_from_host(pw, seven, sizeof seven));

  DT_ASSERT_OK(dt_module_to(both, cpu(1)));
  T x = tensor({0.0, 0.0}, {1, 2}, DT_FLOAT64, cpu(1)), y = tensor({1.0, 0.0}, {1, 2}, DT_FLOAT64, cpu(1)), out;
  const dt_tensor* args[] = {x, y};
  DT_ASSERT_OK(dt_module_forward(both, args, 2, out.out()));
  dt_device d{};
  DT_ASSERT_OK(dt_tensor_device(out, &d));
  EXPECT_EQ(d.index, 1);
  // At x = 0 both terms are log 2: 0.5 * 2 * log 2 (positive, pos_weight 2) + 1.0 * log 2.
  EXPECT_NEAR(values<double>(out)[0], 2 * std::log(2.0), 1e-12);
  // Inputs left on cpu:0 are refused, naming the module.
  T x0 = tensor({0.0, 0.0}, {1, 2}), y0 = tensor({1.0, 0.0}, {1, 2});
  const dt_tensor* args0[] = {x0, y0};
  dt_tensor* none = nullptr;
  DT_EXPECT_STATUS(dt_module_forward(both, args0, 2, &none), DT_ERR_DEVICE_MISMATCH);
  EXPECT_EQ(none, nullptr);
}

TEST_F(PointwiseLosses, BadSettingsAreRefused) {
  dt_module* m = nullptr;
  DT_EXPECT_STATUS(dt_l1_loss_new(DT_REDUCTION_MEAN, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_l1_loss_new(7, &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_l1_loss_new(DT_REDUCTION_BATCHMEAN, &m), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "dt_kl_div_loss_new")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_smooth_l1_loss_new(DT_REDUCTION_MEAN, -0.5, &m), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "beta")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_smooth_l1_loss_new(DT_REDUCTION_MEAN, NAN, &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_smooth_l1_loss_new(DT_REDUCTION_MEAN, INFINITY, &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_huber_loss_new(DT_REDUCTION_MEAN, 0.0, &m), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "delta")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_kl_div_loss_new(DT_REDUCTION_MEAN, 2, &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_kl_div_loss_new(4, 0, &m), DT_ERR_INVALID_ARGUMENT);
  const int64_t ints[] = {1, 2}, n = 2;
  T iw;
  DT_ASSERT_OK(dt_tensor_from_data(ints, sizeof ints, &n, 1, DT_INT64, cpu(), iw.out()));
  DT_EXPECT_STATUS(dt_bce_loss_new(iw, DT_REDUCTION_MEAN, &m), DT_ERR_DTYPE_MISMATCH);
  DT_EXPECT_STATUS(dt_bce_with_logits_loss_new(nullptr, iw, DT_REDUCTION_MEAN, &m), DT_ERR_DTYPE_MISMATCH);
  EXPECT_TRUE(has(dt_last_error_message(), "pos_weight")) << dt_last_error_message();
  EXPECT_EQ(m, nullptr) << "no module is written on failure";
}

TEST_F(PointwiseLosses, BadOperandsAreRefusedNamingTheModuleAndShapes) {
  M l1, bce, logits;
  DT_ASSERT_OK(dt_l1_loss_new(DT_REDUCTION_MEAN, l1.out()));
  DT_ASSERT_OK(dt_bce_loss_new(nullptr, DT_REDUCTION_MEAN, bce.out()));
  T w3 = tensor({1, 2, 3}, {3});
  DT_ASSERT_OK(dt_bce_with_logits_loss_new(w3, nullptr, DT_REDUCTION_MEAN, logits.out()));
  dt_tensor* out = nullptr;
  T x = tensor({0.1, 0.2, 0.3, 0.4}, {2, 2}), t3 = tensor({0, 1, 0, 1}, {4});
  const dt_tensor* shapes[] = {x, t3};
  DT_EXPECT_STATUS(dt_module_forward(l1, shapes, 2, &out), DT_ERR_SHAPE_MISMATCH);
  std::string msg = dt_last_error_message();
  EXPECT_TRUE(has(msg, "L1Loss") && has(msg, "[2, 2]") && has(msg, "[4]")) << msg;
  // One input only.
  DT_EXPECT_STATUS(dt_module_forward(l1, shapes, 1, &out), DT_ERR_INVALID_ARGUMENT);
  // An integer input.
  const int64_t iv[] = {0, 1, 0, 1}, two[] = {2, 2};
  T xi;
  DT_ASSERT_OK(dt_tensor_from_data(iv, sizeof iv, two, 2, DT_INT64, cpu(), xi.out()));
  const dt_tensor* ints[] = {xi, x};
  DT_EXPECT_STATUS(dt_module_forward(l1, ints, 2, &out), DT_ERR_DTYPE_MISMATCH);
  // BCE probabilities outside [0, 1], NaN included.
  T y = tensor({0, 1, 0, 1}, {2, 2});
  for (double badv : {1.5, -0.25, static_cast<double>(NAN)}) {
    T p = tensor({0.1, badv, 0.3, 0.4}, {2, 2});
    const dt_tensor* args[] = {p, y};
    DT_EXPECT_STATUS(dt_module_forward(bce, args, 2, &out), DT_ERR_INVALID_ARGUMENT);
    msg = dt_last_error_message();
    EXPECT_TRUE(has(msg, "between 0 and 1") && has(msg, "1 of 4")) << msg;
  }
  // A weight that does not broadcast to the input.
  const dt_tensor* args[] = {x, y};
  DT_EXPECT_STATUS(dt_module_forward(logits, args, 2, &out), DT_ERR_SHAPE_MISMATCH);
  msg = dt_last_error_message();
  EXPECT_TRUE(has(msg, "BCEWithLogitsLoss") && has(msg, "weight of shape [3]") && has(msg, "[2, 2]")) << msg;
  EXPECT_EQ(out, nullptr);
}

// What each formula gives at its edges, by hand: BCE's logs clamped at -100, the
// logits form finite at +-1000, SmoothL1 with beta 0 equal to L1.
TEST_F(PointwiseLosses, EdgesAreFiniteAsInPyTorch) {
  M bce, logits, smooth0, l1;
  DT_ASSERT_OK(dt_bce_loss_new(nullptr, DT_REDUCTION_NONE, bce.out()));
  DT_ASSERT_OK(dt_bce_with_logits_loss_new(nullptr, nullptr, DT_REDUCTION_NONE, logits.out()));
  DT_ASSERT_OK(dt_smooth_l1_loss_new(DT_REDUCTION_SUM, 0.0, smooth0.out()));
  DT_ASSERT_OK(dt_l1_loss_new(DT_REDUCTION_SUM, l1.out()));
  T p = tensor({0.0, 1.0}, {2}), y = tensor({1.0, 0.0}, {2}), out;
  const dt_tensor* a[] = {p, y};
  DT_ASSERT_OK(dt_module_forward(bce, a, 2, out.out()));
  EXPECT_EQ(values<double>(out), (std::vector<double>{100.0, 100.0}));
  T z = tensor({1000.0, -1000.0}, {2}), out2;
  const dt_tensor* b[] = {z, y};
  DT_ASSERT_OK(dt_module_forward(logits, b, 2, out2.out()));
  EXPECT_EQ(values<double>(out2), (std::vector<double>{0.0, 0.0}));
  T x = tensor({0.5, -2.0, 3.0}, {3}), t = tensor({0.0, 0.0, 3.0}, {3}), s, l;
  const dt_tensor* c[] = {x, t};
  DT_ASSERT_OK(dt_module_forward(smooth0, c, 2, s.out()));
  DT_ASSERT_OK(dt_module_forward(l1, c, 2, l.out()));
  EXPECT_EQ(values<double>(s)[0], 2.5);
  EXPECT_EQ(values<double>(l)[0], 2.5);
}

}  // namespace
