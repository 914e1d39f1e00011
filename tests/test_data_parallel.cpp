// DataParallel through the C API over four logical CPU devices (DEVTENSOR_CPU_DEVICES=4):
// outputs and gradients equal the plain module's (float32 rounding) for even and uneven
// batches, torch.chunk's piece sizes, losses gathered as one value per piece, the output
// device, replicas refreshed after a parameter changes and only then, and every error:
// the module on the wrong device (PyTorch's message), an invalid ordinal, a duplicate, a
// NULL list, nesting. No test leaves a handle behind.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "../src/api/testing.h"
#include "support/dt_test.h"

namespace {

// Four logical CPU devices, before the library reads the variable.
const bool kDevicesSet = [] { return setenv("DEVTENSOR_CPU_DEVICES", "4", 1) == 0; }();

class DataParallel : public LeakChecked {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kDevicesSet);
    size_t n = 0;
    ASSERT_EQ(dt_device_count(DT_DEVICE_CPU, &n), DT_OK);
    ASSERT_EQ(n, 4u) << "DEVTENSOR_CPU_DEVICES=4 gives four logical CPU devices";
    LeakChecked::SetUp();
  }
};

// Sequential(Linear(5, 8), Tanh, Linear(8, 3)) in float32 on `device`, from a fixed seed.
void make_mlp(dt_device device, M* out) {
  M l1, act, l2;
  ASSERT_EQ(dt_manual_seed(7), DT_OK);
  ASSERT_EQ(dt_linear_new(5, 8, 1, DT_FLOAT32, device, l1.out()), DT_OK);
  ASSERT_EQ(dt_tanh_new(act.out()), DT_OK);
  ASSERT_EQ(dt_linear_new(8, 3, 1, DT_FLOAT32, device, l2.out()), DT_OK);
  dt_module* layers[3] = {l1, act, l2};
  ASSERT_EQ(dt_sequential_new(layers, 3, out->out()), DT_OK);
}

// rows x cols of float32 from a fixed formula (no generator involved), requiring grad.
T input(int64_t rows, int64_t cols, dt_device device) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 0.1));
  const int64_t shape[2] = {rows, cols};
  T x;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * 4, shape, 2, DT_FLOAT32, device, x.out()), DT_OK);
  EXPECT_EQ(dt_tensor_set_requires_grad(x, 1), DT_OK);
  return x;
}

T labels(int64_t rows, dt_device device) {
  std::vector<int64_t> v(static_cast<size_t>(rows));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>((i * 7 + 1) % 3);
  T y;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * 8, &rows, 1, DT_INT64, device, y.out()), DT_OK);
  return y;
}

T forward(dt_module* m, std::vector<dt_tensor*> in) {
  T out;
  EXPECT_EQ(dt_module_forward(m, in.data(), in.size(), out.out()), DT_OK) << dt_last_error_message();
  return out;
}

// Outputs, loss, and the gradients of every parameter and of the input after backward.
struct StepResult {
  std::vector<int64_t> out_shape;
  dt_device out_device{};
  std::vector<float> out;
  double loss = 0;
  std::vector<std::vector<float>> grads;  // parameters in order, then the input
};

StepResult train_step(dt_module* model, dt_module* params_of, int64_t rows) {
  StepResult r;
  T x = input(rows, 5, cpu(0));
  T y = labels(rows, cpu(0));
  M ce;
  EXPECT_EQ(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0.0, ce.out()), DT_OK);
  T out = forward(model, {x});
  r.out_shape = shape_of(out);
  EXPECT_EQ(dt_tensor_device(out, &r.out_device), DT_OK);
  r.out = values<float>(out);
  T y_there;  // the labels where the output was gathered (cuda:0 in the GPU test)
  EXPECT_EQ(dt_tensor_to(y, r.out_device, DT_INT64, 0, y_there.out()), DT_OK) << dt_last_error_message();
  T loss = forward(ce, {out, y_there});
  EXPECT_EQ(dt_tensor_item(loss, &r.loss), DT_OK);
  EXPECT_EQ(dt_backward(loss, nullptr), DT_OK) << dt_last_error_message();
  size_t n = 0;
  EXPECT_EQ(dt_module_parameter_count(params_of, &n), DT_OK);
  for (size_t i = 0; i < n; ++i) {
    T p, g;
    EXPECT_EQ(dt_module_parameter(params_of, i, nullptr, 0, nullptr, p.out()), DT_OK);
    EXPECT_EQ(dt_tensor_grad(p, g.out()), DT_OK);
    r.grads.push_back(g.get() ? values<float>(g) : std::vector<float>());
    EXPECT_EQ(dt_tensor_clear_grad(p), DT_OK);  // the next run starts from none
  }
  T gx;
  EXPECT_EQ(dt_tensor_grad(x, gx.out()), DT_OK);
  r.grads.push_back(gx.get() ? values<float>(gx) : std::vector<float>());
  return r;
}

// Within float32 rounding: tol absolute plus tol relative (cuBLAS and OpenBLAS may sum a
// row in different orders, hence the GPU test's looser tol).
void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what,
                  double tol = 2e-6) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol + tol * std::fabs(want[i])) << what << " [" << i << "]";
}

dt_device four[4] = {cpu(0), cpu(1), cpu(2), cpu(3)};
const dt_device kDefault{DT_DEVICE_DEFAULT, 0};

TEST_F(DataParallel, SameOutputsAndGradientsAsThePlainModule) {
  // 8 rows: 2 per device; 7 and 5: uneven (torch.chunk: 2,2,2,1 and 2,2,1); 3 and 1:
  // fewer rows than devices.
  for (int64_t rows : {8, 7, 5, 3, 1}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    M model, dp;
    make_mlp(cpu(0), &model);
    ASSERT_EQ(dt_data_parallel_new(model, four, 4, kDefault, dp.out()), DT_OK) << dt_last_error_message();
    StepResult plain = train_step(model, model, rows);
    StepResult split = train_step(dp, model, rows);
    EXPECT_EQ(split.out_shape, (std::vector<int64_t>{rows, 3}));
    EXPECT_EQ(split.out_device.index, 0) << "gathered on device_ids[0]";
    expect_close(split.out, plain.out, "output");
    EXPECT_NEAR(split.loss, plain.loss, 1e-6);
    ASSERT_EQ(split.grads.size(), 5u);
    for (size_t i = 0; i < split.grads.size(); ++i) {
      ASSERT_FALSE(split.grads[i].empty()) << "gradient " << i << " missing";
      expect_close(split.grads[i], plain.grads[i], "gradient " + std::to_string(i));
    }
  }
}

TEST_F(DataParallel, NamesParametersAsPyTorchAndGathersOnTheOutputDevice) {
  M model, dp;
  make_mlp(cpu(0), &model);
  ASSERT_EQ(dt_data_parallel_new(model, four, 2, cpu(3), dp.out()), DT_OK) << dt_last_error_message();
  char name[64];
  size_t need = 0;
  ASSERT_EQ(dt_module_parameter(dp, 0, name, sizeof name, &need, nullptr), DT_OK);
  EXPECT_STREQ(name, "module.0.weight");
  T x = input(6, 5, cpu(1));  // the input may live anywhere: the pieces are copied over
  T out = forward(dp, {x});
  dt_device d{};
  ASSERT_EQ(dt_tensor_device(out, &d), DT_OK);
  EXPECT_EQ(d.index, 3);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{6, 3}));
}

TEST_F(DataParallel, LossesGiveOneValuePerPiece) {
  // torch.chunk of 5 rows over 4 devices: pieces of 2, 2 and 1 rows, so three losses.
  M ce, dp;
  ASSERT_EQ(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_SUM, -100, 0.0, ce.out()), DT_OK);
  ASSERT_EQ(dt_data_parallel_new(ce, four, 4, kDefault, dp.out()), DT_OK);
  T x = input(5, 3, cpu(0));
  T y = labels(5, cpu(0));
  T per_piece = forward(dp, {x, y});
  ASSERT_EQ(shape_of(per_piece), (std::vector<int64_t>{3}));
  std::vector<float> got = values<float>(per_piece);
  const int64_t starts[3] = {0, 2, 4}, lens[3] = {2, 2, 1};
  for (int k = 0; k < 3; ++k) {
    T xs, ys;
    ASSERT_EQ(dt_narrow(x, 0, starts[k], lens[k], xs.out()), DT_OK);
    ASSERT_EQ(dt_narrow(y, 0, starts[k], lens[k], ys.out()), DT_OK);
    T want = forward(ce, {xs, ys});
    EXPECT_NEAR(got[k], values<float>(want)[0], 1e-6) << "piece " << k;
  }
  // An input and a target of different batch sizes cannot be split alike.
  T y4 = labels(4, cpu(0));
  T bad;
  const dt_tensor* in[2] = {x, y4};
  DT_EXPECT_STATUS(dt_module_forward(dp, in, 2, bad.out()), DT_ERR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("input 0 has 5 and input 1 has 4"), std::string::npos)
      << dt_last_error_message();
}

TEST_F(DataParallel, AnEmptyBatchGivesAnEmptyOutput) {
  M model, dp;
  make_mlp(cpu(0), &model);
  ASSERT_EQ(dt_data_parallel_new(model, four, 4, kDefault, dp.out()), DT_OK);
  T x = input(0, 5, cpu(0));
  T out = forward(dp, {x});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{0, 3}));
}

TEST_F(DataParallel, ReplicasFollowParameterChangesAndAreNotRemadeOtherwise) {
  M model, dp;
  make_mlp(cpu(0), &model);
  ASSERT_EQ(dt_data_parallel_new(model, four, 4, kDefault, dp.out()), DT_OK);
  ASSERT_EQ(dt_set_grad_enabled(0), DT_OK);
  T x = input(8, 5, cpu(0));
  auto allocations_of_forward = [&] {
    dt_testing_fail_allocation(INT64_MAX, 0);  // counts, and never fails
    T out = forward(dp, {x});
    const int64_t n = dt_testing_allocation_count();
    dt_testing_fail_allocation(0, 0);
    return n;
  };
  allocations_of_forward();                     // makes the replicas
  const int64_t steady = allocations_of_forward();  // reuses them
  EXPECT_EQ(allocations_of_forward(), steady);
  // An in-place change of one parameter (as an optimizer step makes) must reach every
  // replica: DataParallel's output then equals the plain module's new output.
  T w;
  ASSERT_EQ(dt_module_parameter(model, 0, nullptr, 0, nullptr, w.out()), DT_OK);
  ASSERT_EQ(dt_add_scalar_(w, 0.25), DT_OK);
  const int64_t after_change = allocations_of_forward();
  EXPECT_GT(after_change, steady) << "the replicas were not made again after a parameter changed";
  EXPECT_EQ(allocations_of_forward(), steady) << "the replicas are made on every forward";
  T want = forward(model, {x});
  T got = forward(dp, {x});
  expect_close(values<float>(got), values<float>(want), "output after the change");
  ASSERT_EQ(dt_set_grad_enabled(1), DT_OK);
}

TEST_F(DataParallel, TheModuleMustSitOnTheFirstDevice) {
  M model, dp;
  make_mlp(cpu(1), &model);
  ASSERT_EQ(dt_data_parallel_new(model, four, 2, kDefault, dp.out()), DT_OK);
  T x = input(4, 5, cpu(0));
  T out;
  const dt_tensor* in[1] = {x};
  DT_EXPECT_STATUS(dt_module_forward(dp, in, 1, out.out()), DT_ERR_DEVICE_MISMATCH);
  EXPECT_EQ(out.get(), nullptr) << "the output is left untouched on failure";
  EXPECT_NE(std::string(dt_last_error_message())
                .find("module must have its parameters and buffers on device cpu:0 (device_ids[0]) but found one "
                      "of them on device: cpu:1"),
            std::string::npos)
      << dt_last_error_message();
  // Moved to device_ids[0] (through the DataParallel, as PyTorch's .to), it runs.
  ASSERT_EQ(dt_module_to(dp, cpu(0)), DT_OK);
  T ok = forward(dp, {x});
  EXPECT_EQ(shape_of(ok), (std::vector<int64_t>{4, 3}));
}

TEST_F(DataParallel, RefusesBadDeviceLists) {
  M model;
  make_mlp(cpu(0), &model);
  dt_module* dp = nullptr;
  const dt_device bad_ordinal[2] = {cpu(0), cpu(7)};
  DT_EXPECT_STATUS(dt_data_parallel_new(model, bad_ordinal, 2, kDefault, &dp), DT_ERR_INVALID_DEVICE);
  EXPECT_NE(std::string(dt_last_error_message()).find("device_ids[1]"), std::string::npos) << dt_last_error_message();
  EXPECT_NE(std::string(dt_last_error_message()).find("cpu:7"), std::string::npos) << dt_last_error_message();
  const dt_device twice[3] = {cpu(0), cpu(1), cpu(0)};
  DT_EXPECT_STATUS(dt_data_parallel_new(model, twice, 3, kDefault, &dp), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("appears twice"), std::string::npos) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_data_parallel_new(model, nullptr, 2, kDefault, &dp), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_data_parallel_new(model, four, 2, cpu(9), &dp), DT_ERR_INVALID_DEVICE);
  EXPECT_NE(std::string(dt_last_error_message()).find("output_device"), std::string::npos) << dt_last_error_message();
  const dt_device negative[1] = {cpu(-1)};
  DT_EXPECT_STATUS(dt_data_parallel_new(model, negative, 1, kDefault, &dp), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_data_parallel_new(nullptr, four, 2, kDefault, &dp), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_data_parallel_new(model, four, 2, kDefault, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dp, nullptr) << "out is left untouched on failure";
  // Nesting is refused.
  M once;
  ASSERT_EQ(dt_data_parallel_new(model, four, 2, kDefault, once.out()), DT_OK);
  DT_EXPECT_STATUS(dt_data_parallel_new(once, four, 2, kDefault, &dp), DT_ERR_INVALID_ARGUMENT);
  // No device list: every device of the module's type (here the four CPU devices).
  M all;
  ASSERT_EQ(dt_data_parallel_new(model, nullptr, 0, kDefault, all.out()), DT_OK);
  T x = input(4, 5, cpu(0));
  T y = labels(4, cpu(0));
  M ce, dp_loss;
  ASSERT_EQ(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_SUM, -100, 0.0, ce.out()), DT_OK);
  ASSERT_EQ(dt_data_parallel_new(ce, nullptr, 0, kDefault, dp_loss.out()), DT_OK);
  EXPECT_EQ(shape_of(forward(dp_loss, {x, y})), (std::vector<int64_t>{4})) << "one loss per CPU device";
}

// On a GPU: over [cuda:0] alone and over the mixed [cuda:0, cpu:1] (a CPU replica beside the
// GPU one), outputs and gradients equal the plain module's on cuda:0. Skipped without one.
TEST_F(DataParallel, OnAGpuAloneAndMixedWithACpuDevice) {
  size_t gpus = 0;
  ASSERT_EQ(dt_device_count(DT_DEVICE_CUDA, &gpus), DT_OK);
  if (gpus == 0) GTEST_SKIP() << "no GPU";
  const dt_device gpu{DT_DEVICE_CUDA, 0};
  const dt_device alone[1] = {gpu};
  const dt_device mixed[2] = {gpu, cpu(1)};
  for (const dt_device* ids : {alone, mixed}) {
    const size_t n = ids == alone ? 1 : 2;
    SCOPED_TRACE(n == 1 ? "[cuda:0]" : "[cuda:0, cpu:1]");
    for (int64_t rows : {8, 5}) {
      M model, dp;
      make_mlp(gpu, &model);
      ASSERT_EQ(dt_data_parallel_new(model, ids, n, kDefault, dp.out()), DT_OK) << dt_last_error_message();
      // train_step's data is on cpu:0 (DataParallel copies the pieces over); the plain
      // run gets the same values made on cuda:0.
      StepResult split = train_step(dp, model, rows);
      EXPECT_EQ(split.out_device.type, DT_DEVICE_CUDA) << "gathered on device_ids[0]";
      T x = input(rows, 5, gpu);
      T y = labels(rows, gpu);
      M ce;
      ASSERT_EQ(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0.0, ce.out()), DT_OK);
      T out = forward(model, {x});
      T loss = forward(ce, {out, y});
      ASSERT_EQ(dt_backward(loss, nullptr), DT_OK) << dt_last_error_message();
      expect_close(split.out, values<float>(out), "output", 1e-5);
      T w, gw, gx;
      ASSERT_EQ(dt_module_parameter(model, 0, nullptr, 0, nullptr, w.out()), DT_OK);
      ASSERT_EQ(dt_tensor_grad(w, gw.out()), DT_OK);
      ASSERT_NE(gw.get(), nullptr);
      expect_close(split.grads[0], values<float>(gw), "weight gradient", 1e-5);
      ASSERT_EQ(dt_tensor_grad(x, gx.out()), DT_OK);
      expect_close(split.grads.back(), values<float>(gx), "input gradient", 1e-5);
    }
  }
}

TEST_F(DataParallel, CudaDevicesWithoutAGpuAreUnavailable) {
  size_t gpus = 0;
  ASSERT_EQ(dt_device_count(DT_DEVICE_CUDA, &gpus), DT_OK);
  if (gpus > 0) GTEST_SKIP() << "a GPU is present (the CUDA tests cover DataParallel there)";
  M model;
  make_mlp(cpu(0), &model);
  dt_module* dp = nullptr;
  const dt_device mixed[2] = {cpu(0), dt_device{DT_DEVICE_CUDA, 0}};
  DT_EXPECT_STATUS(dt_data_parallel_new(model, mixed, 2, kDefault, &dp), DT_ERR_DEVICE_UNAVAILABLE);
  EXPECT_NE(std::string(dt_last_error_message()).find("device_ids[1]"), std::string::npos) << dt_last_error_message();
}

}  // namespace
