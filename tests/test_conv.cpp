// Conv2d, the module and the functional form, beyond the PyTorch reference values (the
// reference suites, test_reference_ops and test_autograd, hold dt_conv2d's outputs and
// gradients against torch.nn.functional.conv2d, with finite differences in float64):
// PyTorch's parameter names, shapes and initialisation bounds, the module agreeing with
// the functional form, and every bad input answered by a clear error naming the module
// and the shapes.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/dt_test.h"

namespace {

class Conv : public LeakChecked {};

std::string param_name(dt_module* m, size_t i, T* t) {
  char buf[64] = {};
  EXPECT_EQ(dt_module_parameter(m, i, buf, sizeof buf, nullptr, t->out()), DT_OK) << dt_last_error_message();
  return buf;
}

M conv(int64_t in, int64_t out, int64_t k, const int64_t* stride = nullptr, const int64_t* padding = nullptr,
       int64_t groups = 1, int32_t bias = 1) {
  M m;
  const int64_t kernel[2] = {k, k};
  EXPECT_EQ(dt_conv2d_new(in, out, kernel, stride, padding, nullptr, groups, bias, DT_FLOAT32, cpu(), m.out()), DT_OK)
      << dt_last_error_message();
  return m;
}

TEST_F(Conv, ParametersHavePyTorchsNamesShapesAndBounds) {
  DT_ASSERT_OK(dt_manual_seed(3));
  M m = conv(6, 8, 3, nullptr, nullptr, 2);
  size_t n = 0;
  DT_ASSERT_OK(dt_module_parameter_count(m, &n));
  ASSERT_EQ(n, 2u);
  T w, b;
  EXPECT_EQ(param_name(m, 0, &w), "weight");
  EXPECT_EQ(param_name(m, 1, &b), "bias");
  EXPECT_EQ(shape_of(w), (std::vector<int64_t>{8, 3, 3, 3}));  // [out, in / groups, kH, kW]
  EXPECT_EQ(shape_of(b), (std::vector<int64_t>{8}));
  // kaiming_uniform_(a=sqrt(5)): bound 1 / sqrt(fan_in), fan_in = 3 * 3 * 3.
  const double bound = 1.0 / std::sqrt(27.0);
  double largest = 0;
  for (float v : values<float>(w)) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  for (float v : values<float>(b)) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  EXPECT_LE(largest, bound);
  EXPECT_GT(largest, 0.8 * bound) << "216 + 8 uniform draws should come near the bound";
  M plain = conv(3, 4, 3, nullptr, nullptr, 1, 0);
  DT_ASSERT_OK(dt_module_parameter_count(plain, &n));
  EXPECT_EQ(n, 1u) << "bias=0: no bias parameter";
}

TEST_F(Conv, TheModuleIsTheFunctionalFormWithItsParameters) {
  const int64_t stride[2] = {2, 1}, padding[2] = {1, 2};
  M m = conv(3, 5, 3, stride, padding);
  T w, b, x, via_module, via_functional;
  param_name(m, 0, &w);
  param_name(m, 1, &b);
  const int64_t xs[] = {2, 3, 9, 7};
  DT_ASSERT_OK(dt_tensor_randn(xs, 4, DT_FLOAT32, cpu(), x.out()));
  const dt_tensor* in[] = {x};
  DT_ASSERT_OK(dt_module_forward(m, in, 1, via_module.out()));
  DT_ASSERT_OK(dt_conv2d(x, w, b, stride, padding, nullptr, 1, via_functional.out()));
  EXPECT_EQ(shape_of(via_module), (std::vector<int64_t>{2, 5, 5, 9}));  // (9+2-3)/2+1, (7+4-3)/1+1
  EXPECT_EQ(values<float>(via_module), values<float>(via_functional));
}

TEST_F(Conv, SamePaddingKeepsTheSizeAndRefusesAStride) {
  const int64_t same[2] = {DT_PADDING_SAME, 0}, stride[2] = {2, 2};
  M m = conv(2, 3, 4, nullptr, same);
  T x, y;
  const int64_t xs[] = {1, 2, 6, 5};
  DT_ASSERT_OK(dt_tensor_randn(xs, 4, DT_FLOAT32, cpu(), x.out()));
  const dt_tensor* in[] = {x};
  DT_ASSERT_OK(dt_module_forward(m, in, 1, y.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 3, 6, 5}));
  M bad;
  const int64_t kernel[2] = {3, 3};
  DT_EXPECT_STATUS(dt_conv2d_new(2, 3, kernel, stride, same, nullptr, 1, 1, DT_FLOAT32, cpu(), bad.out()),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("padding='same' is not supported for strided convolutions"),
            std::string::npos)
      << dt_last_error_message();
}

TEST_F(Conv, BadInputNamesTheModuleAndTheShapes) {
  M m = conv(3, 8, 3);
  T x, y, small, ints;
  const int64_t xs[] = {2, 4, 10, 10}, tiny[] = {1, 3, 2, 2};
  DT_ASSERT_OK(dt_tensor_zeros(xs, 4, DT_FLOAT32, cpu(), x.out()));
  const dt_tensor* in[] = {x};
  DT_EXPECT_STATUS(dt_module_forward(m, in, 1, y.out()), DT_ERR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message())
                .find("Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1)): expected an input of shape [N, 3, H, W] or "
                      "[3, H, W] but got [2, 4, 10, 10]"),
            std::string::npos)
      << dt_last_error_message();
  // A kernel larger than the (padded) input.
  DT_ASSERT_OK(dt_tensor_zeros(tiny, 4, DT_FLOAT32, cpu(), small.out()));
  const dt_tensor* in2[] = {small};
  DT_EXPECT_STATUS(dt_module_forward(m, in2, 1, y.out()), DT_ERR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("is smaller than the kernel"), std::string::npos)
      << dt_last_error_message();
  EXPECT_NE(std::string(dt_last_error_message()).find("Conv2d(3, 8"), std::string::npos) << dt_last_error_message();
  // An input of another dtype than the parameters.
  const int64_t ok[] = {1, 3, 5, 5};
  DT_ASSERT_OK(dt_tensor_zeros(ok, 4, DT_FLOAT64, cpu(), ints.out()));
  const dt_tensor* in3[] = {ints};
  DT_EXPECT_STATUS(dt_module_forward(m, in3, 1, y.out()), DT_ERR_DTYPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("input (float64), weight (float32)"), std::string::npos)
      << dt_last_error_message();
}

TEST_F(Conv, BadConstructionAndFunctionalArgumentsAreRefused) {
  M m;
  const int64_t k3[2] = {3, 3}, zero[2] = {0, 1}, negative[2] = {-2, 0};
  DT_EXPECT_STATUS(dt_conv2d_new(6, 8, k3, nullptr, nullptr, nullptr, 4, 1, DT_FLOAT32, cpu(), m.out()),
                   DT_ERR_INVALID_ARGUMENT);  // 6 % 4
  EXPECT_NE(std::string(dt_last_error_message()).find("in_channels (6) must be divisible by groups (4)"),
            std::string::npos)
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_conv2d_new(4, 6, k3, nullptr, nullptr, nullptr, 4, 1, DT_FLOAT32, cpu(), m.out()),
                   DT_ERR_INVALID_ARGUMENT);  // 6 % 4
  DT_EXPECT_STATUS(dt_conv2d_new(3, 8, zero, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, cpu(), m.out()),
                   DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_conv2d_new(3, 8, k3, nullptr, negative, nullptr, 1, 1, DT_FLOAT32, cpu(), m.out()),
                   DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_conv2d_new(3, 8, nullptr, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, cpu(), m.out()),
                   DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_conv2d_new(3, 8, k3, nullptr, nullptr, nullptr, 1, 1, DT_INT64, cpu(), m.out()),
                   DT_ERR_DTYPE_MISMATCH);
  DT_EXPECT_STATUS(dt_conv2d_new(3, 8, k3, nullptr, nullptr, nullptr, 1, 2, DT_FLOAT32, cpu(), m.out()),
                   DT_ERR_INVALID_ARGUMENT);
  // A weight with more elements than int64 holds: refused when it is sized (found by
  // fuzz_modules: the initialisation's fan-in, in_channels / groups * kernel, overflowed
  // first).
  const int64_t huge_kernel[2] = {(int64_t{1} << 62) + 1, 1};
  DT_EXPECT_STATUS(dt_conv2d_new(2, 2, huge_kernel, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, cpu(), m.out()),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("more elements than fit in int64"), std::string::npos)
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_conv1d_new(2, 2, INT64_MAX, 1, 0, 1, 1, 1, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(
      dt_conv_transpose2d_new(2, 4, huge_kernel, nullptr, nullptr, nullptr, 1, 1, nullptr, DT_FLOAT32, cpu(), m.out()),
      DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(static_cast<dt_module*>(m), nullptr) << "outputs stay untouched on failure";

  T x, w3, w, b, y;
  const int64_t xs[] = {1, 3, 5, 5}, w3s[] = {4, 3, 3}, ws[] = {4, 3, 3, 3}, bs[] = {5};
  DT_ASSERT_OK(dt_tensor_zeros(xs, 4, DT_FLOAT32, cpu(), x.out()));
  DT_ASSERT_OK(dt_tensor_zeros(w3s, 3, DT_FLOAT32, cpu(), w3.out()));
  DT_ASSERT_OK(dt_tensor_zeros(ws, 4, DT_FLOAT32, cpu(), w.out()));
  DT_ASSERT_OK(dt_tensor_zeros(bs, 1, DT_FLOAT32, cpu(), b.out()));
  DT_EXPECT_STATUS(dt_conv2d(x, w3, nullptr, nullptr, nullptr, nullptr, 1, y.out()), DT_ERR_SHAPE_MISMATCH);
  DT_EXPECT_STATUS(dt_conv2d(x, w, b, nullptr, nullptr, nullptr, 1, y.out()), DT_ERR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("expected bias of size [4]"), std::string::npos)
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_conv2d(x, w, nullptr, nullptr, nullptr, nullptr, 3, y.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_conv2d(nullptr, w, nullptr, nullptr, nullptr, nullptr, 1, y.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_conv2d(x, w, nullptr, nullptr, nullptr, nullptr, 1, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(y.get(), nullptr);
}

TEST_F(Conv, AConvNetTrainsAndItsStateDictRoundTrips) {
  // conv -> relu -> flatten -> linear on random data: the loss falls under SGD, and the
  // parameters keep PyTorch's names inside a Sequential ("0.weight", "3.weight").
  DT_ASSERT_OK(dt_manual_seed(17));
  M c = conv(1, 4, 3), relu, flat, lin, net, mse;
  DT_ASSERT_OK(dt_relu_new(relu.out()));
  DT_ASSERT_OK(dt_flatten_new(1, -1, flat.out()));
  DT_ASSERT_OK(dt_linear_new(4 * 4 * 4, 2, 1, DT_FLOAT32, cpu(), lin.out()));
  dt_module* parts[] = {c, relu, flat, lin};
  DT_ASSERT_OK(dt_sequential_new(parts, 4, net.out()));
  DT_ASSERT_OK(dt_mse_loss_new(DT_REDUCTION_MEAN, mse.out()));
  size_t n = 0;
  DT_ASSERT_OK(dt_module_parameter_count(net, &n));
  ASSERT_EQ(n, 4u);
  std::vector<T> params(n);
  std::vector<const dt_tensor*> raw;
  for (size_t i = 0; i < n; ++i) {
    char buf[32] = {};
    DT_ASSERT_OK(dt_module_parameter(net, i, buf, sizeof buf, nullptr, params[i].out()));
    if (i == 0) EXPECT_STREQ(buf, "0.weight");
    if (i == 2) EXPECT_STREQ(buf, "3.weight");
    raw.push_back(params[i]);
  }
  dt_optimizer* opt = nullptr;
  DT_ASSERT_OK(dt_sgd_new(raw.data(), raw.size(), 0.05, 0.9, 0.0, 0.0, 0, &opt));
  T x, target;
  const int64_t xs[] = {8, 1, 6, 6}, ts[] = {8, 2};
  DT_ASSERT_OK(dt_tensor_randn(xs, 4, DT_FLOAT32, cpu(), x.out()));
  DT_ASSERT_OK(dt_tensor_randn(ts, 2, DT_FLOAT32, cpu(), target.out()));
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    T out, loss;
    const dt_tensor* in[] = {x};
    DT_ASSERT_OK(dt_module_forward(net, in, 1, out.out()));
    const dt_tensor* pair[] = {out, target};
    DT_ASSERT_OK(dt_module_forward(mse, pair, 2, loss.out()));
    DT_ASSERT_OK(dt_tensor_item(loss, step == 0 ? &first : &last));
    DT_ASSERT_OK(dt_backward(loss, nullptr));
    DT_ASSERT_OK(dt_optimizer_step(opt));
    DT_ASSERT_OK(dt_optimizer_zero_grad(opt));
  }
  EXPECT_LT(last, 0.5 * first) << "first " << first << ", last " << last;
  DT_ASSERT_OK(dt_optimizer_release(opt));
}

M conv_transpose(int64_t in, int64_t out, int64_t k, const int64_t* stride = nullptr, const int64_t* padding = nullptr,
                 const int64_t* output_padding = nullptr, int64_t groups = 1, int32_t bias = 1) {
  M m;
  const int64_t kernel[2] = {k, k};
  EXPECT_EQ(dt_conv_transpose2d_new(in, out, kernel, stride, padding, output_padding, groups, bias, nullptr, DT_FLOAT32,
                                    cpu(), m.out()),
            DT_OK)
      << dt_last_error_message();
  return m;
}

TEST_F(Conv, ConvTranspose2dHasPyTorchsNamesShapesAndBounds) {
  DT_ASSERT_OK(dt_manual_seed(5));
  M m = conv_transpose(6, 4, 3, nullptr, nullptr, nullptr, 2);
  char kind[32] = {};
  DT_ASSERT_OK(dt_module_kind(m, kind, sizeof kind, nullptr));
  EXPECT_STREQ(kind, "ConvTranspose2d");
  T w, b;
  EXPECT_EQ(param_name(m, 0, &w), "weight");
  EXPECT_EQ(param_name(m, 1, &b), "bias");
  EXPECT_EQ(shape_of(w), (std::vector<int64_t>{6, 2, 3, 3}));  // [in, out / groups, kH, kW]
  EXPECT_EQ(shape_of(b), (std::vector<int64_t>{4}));
  // PyTorch's fan_in of a transposed weight is its second dimension x the kernel: 2 * 9.
  const double bound = 1.0 / std::sqrt(18.0);
  double largest = 0;
  for (float v : values<float>(w)) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  EXPECT_LE(largest, bound);
  EXPECT_GT(largest, 0.8 * bound) << "108 uniform draws should come near the bound";
}

TEST_F(Conv, ConvTranspose2dByHandAndAsTheModulesFunctionalForm) {
  // One input channel, one output channel, kernel [[1, 2], [3, 4]], stride 2: each input
  // pixel stamps value * kernel into its own 2 x 2 block (no overlap).
  T x, w, y;
  x = T();
  const float xv[] = {1, 10, 100, 1000}, wv[] = {1, 2, 3, 4};
  const int64_t xs[] = {1, 1, 2, 2}, ws[] = {1, 1, 2, 2}, s2[2] = {2, 2};
  DT_ASSERT_OK(dt_tensor_from_data(xv, sizeof xv, xs, 4, DT_FLOAT32, cpu(), x.out()));
  DT_ASSERT_OK(dt_tensor_from_data(wv, sizeof wv, ws, 4, DT_FLOAT32, cpu(), w.out()));
  DT_ASSERT_OK(dt_conv_transpose2d(x, w, nullptr, s2, nullptr, nullptr, 1, nullptr, y.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 2, 10, 20, 3, 4, 30, 40, 100, 200, 1000, 2000, 300, 400, 3000,
                                                   4000}));
  // Stride 1: the stamps overlap and add; output_padding needs stride or dilation above it.
  T y1;
  DT_ASSERT_OK(dt_conv_transpose2d(x, w, nullptr, nullptr, nullptr, nullptr, 1, nullptr, y1.out()));
  EXPECT_EQ(values<float>(y1), (std::vector<float>{1, 12, 20, 103, 1234, 2040, 300, 3400, 4000}));
  const int64_t one[2] = {1, 1};
  DT_EXPECT_STATUS(dt_conv_transpose2d(x, w, nullptr, nullptr, nullptr, one, 1, nullptr, y1.out()),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("output padding must be smaller than either stride or dilation"),
            std::string::npos)
      << dt_last_error_message();

  // The module: stride 2, padding 1, output_padding 1 doubles the size (the decoder's step).
  const int64_t p1[2] = {1, 1};
  M m = conv_transpose(3, 5, 3, s2, p1, p1);
  T mw, mb, in, via_module, via_functional;
  param_name(m, 0, &mw);
  param_name(m, 1, &mb);
  const int64_t ins[] = {2, 3, 4, 5};
  DT_ASSERT_OK(dt_tensor_randn(ins, 4, DT_FLOAT32, cpu(), in.out()));
  const dt_tensor* args[] = {in};
  DT_ASSERT_OK(dt_module_forward(m, args, 1, via_module.out()));
  DT_ASSERT_OK(dt_conv_transpose2d(in, mw, mb, s2, p1, p1, 1, nullptr, via_functional.out()));
  EXPECT_EQ(shape_of(via_module), (std::vector<int64_t>{2, 5, 8, 10}));
  EXPECT_EQ(values<float>(via_module), values<float>(via_functional));
}

TEST_F(Conv, ConvTranspose2dBadInputNamesTheModuleAndTheShapes) {
  const int64_t s2[2] = {2, 2}, p1[2] = {1, 1};
  M m = conv_transpose(4, 2, 3, s2, p1, p1);
  T x, y, f64;
  const int64_t xs[] = {1, 3, 5, 5};
  DT_ASSERT_OK(dt_tensor_zeros(xs, 4, DT_FLOAT32, cpu(), x.out()));
  const dt_tensor* in[] = {x};
  DT_EXPECT_STATUS(dt_module_forward(m, in, 1, y.out()), DT_ERR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message())
                .find("ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, "
                      "1)): expected an input of shape [N, 4, H, W] or [4, H, W] but got [1, 3, 5, 5]"),
            std::string::npos)
      << dt_last_error_message();
  const int64_t ok[] = {4, 3, 3};
  DT_ASSERT_OK(dt_tensor_zeros(ok, 3, DT_FLOAT64, cpu(), f64.out()));
  const dt_tensor* in2[] = {f64};
  DT_EXPECT_STATUS(dt_module_forward(m, in2, 1, y.out()), DT_ERR_DTYPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("ConvTranspose2d(4, 2"), std::string::npos);
  EXPECT_EQ(y.get(), nullptr) << "outputs stay untouched on failure";

  M bad;
  const int64_t k3[2] = {3, 3}, same[2] = {DT_PADDING_SAME, 0}, two[2] = {2, 2};
  DT_EXPECT_STATUS(dt_conv_transpose2d_new(4, 6, k3, nullptr, nullptr, nullptr, 4, 1, nullptr, DT_FLOAT32, cpu(),
                                           bad.out()),
                   DT_ERR_INVALID_ARGUMENT);  // 6 % 4
  DT_EXPECT_STATUS(dt_conv_transpose2d_new(4, 4, k3, s2, nullptr, two, 1, 1, nullptr, DT_FLOAT32, cpu(), bad.out()),
                   DT_ERR_INVALID_ARGUMENT);  // output_padding 2 with stride 2
  DT_EXPECT_STATUS(dt_conv_transpose2d_new(4, 4, k3, nullptr, same, nullptr, 1, 1, nullptr, DT_FLOAT32, cpu(),
                                           bad.out()),
                   DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_conv_transpose2d_new(4, 4, nullptr, nullptr, nullptr, nullptr, 1, 1, nullptr, DT_FLOAT32, cpu(),
                                           bad.out()),
                   DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_conv_transpose2d_new(4, 4, k3, nullptr, nullptr, nullptr, 1, 1, nullptr, DT_INT32, cpu(),
                                           bad.out()),
                   DT_ERR_DTYPE_MISMATCH);
  EXPECT_EQ(static_cast<dt_module*>(bad), nullptr);

  // Conv2d(4, 2, 3)'s state dict has the same keys but the other weight layout ([out, in,
  // kH, kW] = [2, 4, 3, 3] against [in, out, kH, kW] = [4, 2, 3, 3]): refused, naming both.
  M conv2 = conv(4, 2, 3);
  dt_state_dict* sd = nullptr;
  DT_ASSERT_OK(dt_module_state_dict(conv2, &sd));
  DT_EXPECT_STATUS(dt_module_load_state_dict(m, sd), DT_ERR_INVALID_ARGUMENT);
  const std::string msg = dt_last_error_message();
  EXPECT_NE(msg.find("weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2, 4, 3, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4, 2, 3, 3]"), std::string::npos) << msg;
  dt_state_dict_release(sd);
}

// Geometry whose arithmetic overflows int64 (found by fuzz/fuzz_nn.cpp): a stride or a
// dilation that is never taken gives PyTorch's result; anything that would make a size
// larger than int64 holds is a clean error. The ASan/UBSan build runs these too, so an
// overflow on the way is a failure there.
TEST_F(Conv, ExtremeGeometryGivesTheResultOrAClearError) {
  constexpr int64_t kMax = INT64_MAX;
  const int64_t xs[4] = {1, 2, 5, 5}, ws[4] = {3, 2, 3, 3}, w1s[4] = {3, 2, 1, 1};
  T x, w, w1, y;
  DT_ASSERT_OK(dt_tensor_ones(xs, 4, DT_FLOAT64, cpu(), x.out()));
  DT_ASSERT_OK(dt_tensor_ones(ws, 4, DT_FLOAT64, cpu(), w.out()));
  DT_ASSERT_OK(dt_tensor_ones(w1s, 4, DT_FLOAT64, cpu(), w1.out()));
  auto message_has = [](const char* text) {
    EXPECT_NE(std::string(dt_last_error_message()).find(text), std::string::npos) << dt_last_error_message();
  };
  // A stride as large as int64: one window, the sum of 2 x 3 x 3 ones.
  const int64_t huge[2] = {kMax, kMax};
  DT_ASSERT_OK(dt_conv2d(x, w, nullptr, huge, nullptr, nullptr, 1, y.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 3, 1, 1}));
  EXPECT_EQ(values<double>(y), std::vector<double>(3, 18.0));
  // A 1x1 kernel has no second tap: any dilation gives the 1x1 convolution (2 channels of ones).
  DT_ASSERT_OK(dt_conv2d(x, w1, nullptr, nullptr, nullptr, huge, 1, y.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 3, 5, 5}));
  EXPECT_EQ(values<double>(y), std::vector<double>(75, 2.0));
  // A 3x3 kernel dilated past int64 is larger than any input.
  const int64_t dilated[2] = {kMax, 1};
  DT_EXPECT_STATUS(dt_conv2d(x, w, nullptr, nullptr, nullptr, dilated, 1, y.out()), DT_ERR_SHAPE_MISMATCH);
  message_has("larger than int64 holds");
  // Padding that makes the padded input larger than int64.
  const int64_t padded[2] = {kMax / 2, kMax / 2};
  DT_EXPECT_STATUS(dt_conv2d(x, w, nullptr, nullptr, padded, nullptr, 1, y.out()), DT_ERR_INVALID_ARGUMENT);
  message_has("larger than int64 holds");
  // Padding that fits, but gives an output (2^33 + 3 squared per channel) of more elements
  // than int64 counts.
  const int64_t wide[2] = {int64_t{1} << 32, int64_t{1} << 32};
  DT_EXPECT_STATUS(dt_conv2d(x, w, nullptr, nullptr, wide, nullptr, 1, y.out()), DT_ERR_INVALID_ARGUMENT);
  message_has("more elements than fit in int64");
  // An empty batch of inputs without rows, padded to 2^63 - 2 rows: an empty output whose
  // other sizes multiply past int64 (2^63 - 4 rows of 3) is refused as well (fuzz_nn).
  const int64_t no_rows[4] = {0, 2, 0, 5}, tall_pad[2] = {kMax / 2, 0};
  T empty_batch;
  DT_ASSERT_OK(dt_tensor_ones(no_rows, 4, DT_FLOAT64, cpu(), empty_batch.out()));
  DT_EXPECT_STATUS(dt_conv2d(empty_batch, w, nullptr, nullptr, tall_pad, nullptr, 1, y.out()), DT_ERR_INVALID_ARGUMENT);
  message_has("more elements than fit in int64");
  // padding='same' pads by dilation * (kernel - 1): past int64.
  const int64_t same[2] = {DT_PADDING_SAME, 0};
  DT_EXPECT_STATUS(dt_conv2d(x, w, nullptr, nullptr, same, dilated, 1, y.out()), DT_ERR_INVALID_ARGUMENT);
  message_has("padding='same'");
  // groups times the weight's second dimension past int64 (no channel at all, so every
  // divisibility rule holds).
  const int64_t empty_xs[4] = {1, 0, 5, 5}, empty_ws[4] = {0, 2, 3, 3};
  T ex, ew;
  DT_ASSERT_OK(dt_tensor_ones(empty_xs, 4, DT_FLOAT64, cpu(), ex.out()));
  DT_ASSERT_OK(dt_tensor_ones(empty_ws, 4, DT_FLOAT64, cpu(), ew.out()));
  DT_EXPECT_STATUS(dt_conv2d(ex, ew, nullptr, nullptr, nullptr, nullptr, kMax, y.out()), DT_ERR_SHAPE_MISMATCH);
  message_has("more channels than int64 holds");
  // conv1d: a stride as large as int64, one window of 3 taps over 2 channels of ones.
  const int64_t x1s[3] = {1, 2, 5}, w1d[3] = {3, 2, 3};
  T x1, k1;
  DT_ASSERT_OK(dt_tensor_ones(x1s, 3, DT_FLOAT64, cpu(), x1.out()));
  DT_ASSERT_OK(dt_tensor_ones(w1d, 3, DT_FLOAT64, cpu(), k1.out()));
  DT_ASSERT_OK(dt_conv1d(x1, k1, nullptr, kMax, 0, 1, 1, y.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 3, 1}));
  EXPECT_EQ(values<double>(y), std::vector<double>(3, 6.0));
}

TEST_F(Conv, TransposedExtremeGeometryGivesTheResultOrAClearError) {
  constexpr int64_t kMax = INT64_MAX;
  const int64_t ws[4] = {2, 3, 3, 3}, pixel[4] = {1, 2, 1, 1}, image[4] = {1, 2, 3, 3};
  T w, px, im, y;
  DT_ASSERT_OK(dt_tensor_ones(ws, 4, DT_FLOAT64, cpu(), w.out()));
  DT_ASSERT_OK(dt_tensor_ones(pixel, 4, DT_FLOAT64, cpu(), px.out()));
  DT_ASSERT_OK(dt_tensor_ones(image, 4, DT_FLOAT64, cpu(), im.out()));
  // One input pixel never steps: any stride spreads it over one 3x3 patch, 2 channels of ones.
  const int64_t huge[2] = {kMax, kMax};
  DT_ASSERT_OK(dt_conv_transpose2d(px, w, nullptr, huge, nullptr, nullptr, 1, nullptr, y.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 3, 3, 3}));
  EXPECT_EQ(values<double>(y), std::vector<double>(27, 2.0));
  // Three rows that far apart: an output past int64.
  DT_EXPECT_STATUS(dt_conv_transpose2d(im, w, nullptr, huge, nullptr, nullptr, 1, nullptr, y.out()),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("more than int64 holds"), std::string::npos)
      << dt_last_error_message();
  // An output of 5 rows ((3 - 1) * (2^62 + 1) - 2 * 2^62 + 3), but 2^63 + 5 with its
  // padding, which the computation needs.
  const int64_t stride[2] = {(int64_t{1} << 62) + 1, 1}, padding[2] = {int64_t{1} << 62, 0};
  DT_EXPECT_STATUS(dt_conv_transpose2d(im, w, nullptr, stride, padding, nullptr, 1, nullptr, y.out()),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("padding included"), std::string::npos)
      << dt_last_error_message();
  EXPECT_EQ(y.get(), nullptr);
}

TEST_F(Conv, Conv1dHasPyTorchsNamesAndIsTheFunctionalForm) {
  DT_ASSERT_OK(dt_manual_seed(4));
  M m;
  DT_ASSERT_OK(dt_conv1d_new(4, 6, 3, 2, 1, 1, 2, 1, DT_FLOAT64, cpu(), m.out()));
  T w, b;
  EXPECT_EQ(param_name(m, 0, &w), "weight");
  EXPECT_EQ(param_name(m, 1, &b), "bias");
  EXPECT_EQ(shape_of(w), (std::vector<int64_t>{6, 2, 3}));  // [out, in / groups, k]
  const double bound = 1.0 / std::sqrt(6.0);               // fan_in = 2 * 3
  for (double v : values<double>(w)) EXPECT_LE(std::fabs(v), bound);
  // The module is dt_conv1d with its own parameters: [2, 4, 9] -> [2, 6, 5].
  const int64_t xs[3] = {2, 4, 9};
  T x, y, z;
  DT_ASSERT_OK(dt_tensor_ones(xs, 3, DT_FLOAT64, cpu(), x.out()));
  const dt_tensor* in[1] = {x.get()};
  DT_ASSERT_OK(dt_module_forward(m, in, 1, y.out()));
  DT_ASSERT_OK(dt_conv1d(x, w, b, 2, 1, 1, 2, z.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 6, 5}));
  EXPECT_EQ(values<double>(y), values<double>(z));
  // A 4-channel module given 3 channels: the module and both shapes in the message.
  const int64_t bad[3] = {2, 3, 9};
  T x3;
  DT_ASSERT_OK(dt_tensor_ones(bad, 3, DT_FLOAT64, cpu(), x3.out()));
  in[0] = x3.get();
  T none;
  DT_EXPECT_STATUS(dt_module_forward(m, in, 1, none.out()), DT_ERR_SHAPE_MISMATCH);
  const std::string msg = dt_last_error_message();
  // The module as PyTorch prints it (print(torch.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2))).
  EXPECT_NE(msg.find("Conv1d(4, 6, kernel_size=(3,), stride=(2,), padding=(1,), groups=2): "), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("[2, 3, 9]"), std::string::npos) << msg;
}

}  // namespace

// float32 convolutions take the backend's library where it has one (oneDNN on the CPU:
// dt_build_info's "cpu convolutions" line), float64 ones the im2col path; the two must
// agree, forward and both gradients, on shapes the reference cases keep small: wider
// channels, odd sizes, strides, dilation, groups, a non-contiguous input.
TEST_F(Conv, Float32KernelsAgreeWithTheIm2colPathInFloat64) {
  struct Case {
    int64_t n, c, h, w, oc, k, stride, pad, dil, groups;
    bool transposed_input;
  };
  const Case cases[] = {
      {2, 16, 13, 11, 24, 3, 1, 1, 1, 1, false}, {3, 8, 17, 9, 12, 5, 2, 2, 1, 1, false},
      {2, 12, 15, 15, 18, 3, 2, 0, 2, 3, false}, {1, 32, 7, 7, 32, 3, 1, 1, 1, 32, false},
      {2, 6, 10, 14, 8, 1, 1, 0, 1, 2, true},
  };
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  auto tensor64 = [&](std::vector<int64_t> shape) {
    size_t n = 1;
    for (int64_t s : shape) n *= static_cast<size_t>(s);
    std::vector<double> v(n);
    for (double& x : v) x = normal(rng);
    T t;
    EXPECT_EQ(dt_tensor_from_data(v.data(), n * sizeof(double), shape.data(), shape.size(), DT_FLOAT64, cpu(),
                                  t.out()),
              DT_OK);
    return t;
  };
  auto as32 = [](dt_tensor* t) {
    T r;
    EXPECT_EQ(dt_tensor_to(t, cpu(), DT_FLOAT32, 0, r.out()), DT_OK) << dt_last_error_message();
    return r;
  };
  auto expect_close = [](dt_tensor* f32, dt_tensor* f64, const std::string& what) {
    const std::vector<float> a = values<float>(f32);
    const std::vector<double> b = values<double>(f64);
    ASSERT_EQ(a.size(), b.size()) << what;
    double scale = 0, worst = 0;
    for (double v : b) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
    EXPECT_LE(worst, 1e-5 * std::max(1.0, scale)) << what << ": largest difference " << worst << " on values up to "
                                                   << scale;
  };
  for (const Case& c : cases) {
    const std::string what = "conv2d of [" + std::to_string(c.n) + ", " + std::to_string(c.c) + ", " +
                             std::to_string(c.h) + ", " + std::to_string(c.w) + "], " + std::to_string(c.oc) +
                             " channels, kernel " + std::to_string(c.k) + ", groups " + std::to_string(c.groups);
    // A transposed input is the same values read through [N, C, W, H] strides.
    T x64 = tensor64(c.transposed_input ? std::vector<int64_t>{c.n, c.c, c.w, c.h}
                                        : std::vector<int64_t>{c.n, c.c, c.h, c.w});
    T x32 = as32(x64);
    if (c.transposed_input) {
      T t64, t32;
      DT_ASSERT_OK(dt_transpose(x64, 2, 3, t64.out()));
      DT_ASSERT_OK(dt_transpose(x32, 2, 3, t32.out()));
      x64 = std::move(t64);
      x32 = std::move(t32);
    }
    T w64 = tensor64({c.oc, c.c / c.groups, c.k, c.k}), b64 = tensor64({c.oc}), up64 = T();
    T w32 = as32(w64), b32 = as32(b64);
    const int64_t stride[2] = {c.stride, c.stride}, pad[2] = {c.pad, c.pad}, dil[2] = {c.dil, c.dil};
    T out64, out32, up32;
    for (dt_tensor* t : {x64.get(), w64.get(), x32.get(), w32.get()}) DT_ASSERT_OK(dt_tensor_set_requires_grad(t, 1));
    DT_ASSERT_OK(dt_conv2d(x64, w64, b64, stride, pad, dil, c.groups, out64.out()));
    DT_ASSERT_OK(dt_conv2d(x32, w32, b32, stride, pad, dil, c.groups, out32.out()));
    expect_close(out32, out64, what + ": output");
    // Backward from a random upstream gradient, the same in both dtypes.
    up64 = tensor64(shape_of(out64));
    up32 = as32(up64);
    DT_ASSERT_OK(dt_backward(out64, up64));
    DT_ASSERT_OK(dt_backward(out32, up32));
    T gx64, gx32, gw64, gw32;
    DT_ASSERT_OK(dt_tensor_grad(x64, gx64.out()));
    DT_ASSERT_OK(dt_tensor_grad(x32, gx32.out()));
    DT_ASSERT_OK(dt_tensor_grad(w64, gw64.out()));
    DT_ASSERT_OK(dt_tensor_grad(w32, gw32.out()));
    expect_close(gx32, gx64, what + ": input gradient");
    expect_close(gw32, gw64, what + ": weight gradient");
  }
}

// Convolutions from several threads at once (DataParallel's workers, a server's request
// threads): each thread's result equals the one computed alone. On the CPU they go through
// oneDNN, each call with its own stream and OpenMP team.
TEST_F(Conv, ConcurrentCallsFromManyThreadsGiveTheSequentialResults) {
  constexpr int kThreads = 4, kRounds = 6;
  const int64_t x_shape[4] = {2, 8, 12, 12}, w_shape[4] = {16, 8, 3, 3};
  const int64_t pad[2] = {1, 1};
  std::vector<T> xs(kThreads), expected(kThreads);
  T w;
  DT_ASSERT_OK(dt_manual_seed(21));
  DT_ASSERT_OK(dt_tensor_randn(w_shape, 4, DT_FLOAT32, cpu(), w.out()));
  for (int i = 0; i < kThreads; ++i) {
    DT_ASSERT_OK(dt_tensor_randn(x_shape, 4, DT_FLOAT32, cpu(), xs[i].out()));
    DT_ASSERT_OK(dt_conv2d(xs[i], w, nullptr, nullptr, pad, nullptr, 1, expected[i].out()));
  }
  std::vector<std::string> problems(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int r = 0; r < kRounds; ++r) {
        T out;
        if (dt_conv2d(xs[i], w, nullptr, nullptr, pad, nullptr, 1, out.out()) != DT_OK) {
          problems[i] = dt_last_error_message();
          return;
        }
        const std::vector<float> got = values<float>(out), want = values<float>(expected[i]);
        for (size_t k = 0; k < got.size(); ++k)
          if (std::fabs(got[k] - want[k]) > 1e-5f * std::max(1.0f, std::fabs(want[k]))) {
            problems[i] = "round " + std::to_string(r) + ", element " + std::to_string(k) + ": " +
                          std::to_string(got[k]) + " vs " + std::to_string(want[k]);
            return;
          }
      }
    });
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(problems[i], "") << "thread " << i;
}

// dt_build_info says which path float32 convolutions take on the CPU, so a user comparing
// speeds knows whether this build has oneDNN.
TEST_F(Conv, BuildInfoNamesTheCpuConvolutionPath) {
  const std::string info = build_info_text();
  const size_t at = info.find("cpu convolutions (float32): ");
  ASSERT_NE(at, std::string::npos) << info;
  const std::string line = info.substr(at, info.find('\n', at) - at);
  EXPECT_TRUE(line.find("oneDNN 2.") != std::string::npos || line.find("im2col + BLAS") != std::string::npos) << line;
  // The float32 GEMM path follows the same build choice (src/cpu/gemm.h).
  const size_t gemm_at = info.find("cpu matrix products (float32): ");
  ASSERT_NE(gemm_at, std::string::npos) << info;
  const std::string gemm_line = info.substr(gemm_at, info.find('\n', gemm_at) - gemm_at);
  const bool onednn = line.find("oneDNN 2.") != std::string::npos;
  EXPECT_NE(gemm_line.find(onednn ? "oneDNN 2." : "OpenBLAS"), std::string::npos) << gemm_line;
}
