// Pooling modules and their functional forms beyond the PyTorch reference values (the
// reference suites hold max_pool2d, avg_pool2d and adaptive_avg_pool2d outputs and
// gradients against torch.nn.functional, with finite differences in float64): PyTorch's
// defaults (stride = kernel size), values worked by hand, and every bad argument answered
// with a clear error naming the module.
#include <cmath>
#include <string>
#include <vector>

#include "support/dt_test.h"

namespace {

class Pooling : public LeakChecked {};

T from(const std::vector<float>& v, std::vector<int64_t> shape) {
  T t;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * sizeof(float), shape.data(), shape.size(), DT_FLOAT32, cpu(),
                                t.out()),
            DT_OK)
      << dt_last_error_message();
  return t;
}

T forward(dt_module* m, dt_tensor* x) {
  T y;
  const dt_tensor* in[] = {x};
  EXPECT_EQ(dt_module_forward(m, in, 1, y.out()), DT_OK) << dt_last_error_message();
  return y;
}

TEST_F(Pooling, MaxAndAveragePoolingByHandWithPyTorchsDefaultStride) {
  // 1 x 1 x 4 x 4, values 0..15: 2 x 2 windows, stride 2 by default.
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  T x = from(v, {1, 1, 4, 4});
  const int64_t k2[2] = {2, 2};
  M maxp, avgp, adapt;
  DT_ASSERT_OK(dt_max_pool2d_new(k2, nullptr, nullptr, nullptr, 0, maxp.out()));
  DT_ASSERT_OK(dt_avg_pool2d_new(k2, nullptr, nullptr, 0, 1, avgp.out()));
  const int64_t one[2] = {1, 1};
  DT_ASSERT_OK(dt_adaptive_avg_pool2d_new(one, adapt.out()));
  T mx = forward(maxp, x), av = forward(avgp, x), ad = forward(adapt, x);
  EXPECT_EQ(shape_of(mx), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(values<float>(mx), (std::vector<float>{5, 7, 13, 15}));
  EXPECT_EQ(values<float>(av), (std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f}));
  EXPECT_EQ(values<float>(ad), (std::vector<float>{7.5f}));
}

TEST_F(Pooling, MaxPoolingSendsTheGradientToEachWindowsLargest) {
  T x = from({1, 9, 2, 3, 4, 0, 8, 7, 5}, {1, 1, 3, 3});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  const int64_t k2[2] = {2, 2}, s1[2] = {1, 1};
  T y, s;
  DT_ASSERT_OK(dt_max_pool2d(x, k2, s1, nullptr, nullptr, 0, y.out()));
  EXPECT_EQ(values<float>(y), (std::vector<float>{9, 9, 8, 7}));  // windows {1,9,3,4} {9,2,4,0} {3,4,8,7} {4,0,7,5}
  DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, s.out()));
  DT_ASSERT_OK(dt_backward(s, nullptr));
  T g;
  DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
  EXPECT_EQ(values<float>(g), (std::vector<float>{0, 2, 0, 0, 0, 0, 1, 1, 0}));  // 9 wins twice
}

TEST_F(Pooling, CeilModeKeepsThePartialWindowsAtTheEdge) {
  // 1 x 1 x 5 x 5, values 0..24, 2 x 2 windows, stride 2: floor mode drops the last row and
  // column (2 x 2 output); ceil mode keeps them as partial windows (3 x 3), as PyTorch.
  std::vector<float> v(25);
  for (int i = 0; i < 25; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  T x = from(v, {1, 1, 5, 5});
  const int64_t k2[2] = {2, 2};
  M floor_max, ceil_max, ceil_avg;
  DT_ASSERT_OK(dt_max_pool2d_new(k2, nullptr, nullptr, nullptr, 0, floor_max.out()));
  DT_ASSERT_OK(dt_max_pool2d_new(k2, nullptr, nullptr, nullptr, 1, ceil_max.out()));
  DT_ASSERT_OK(dt_avg_pool2d_new(k2, nullptr, nullptr, 1, 1, ceil_avg.out()));
  T f = forward(floor_max, x), c = forward(ceil_max, x), a = forward(ceil_avg, x);
  EXPECT_EQ(shape_of(f), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(values<float>(f), (std::vector<float>{6, 8, 16, 18}));
  EXPECT_EQ(shape_of(c), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(values<float>(c), (std::vector<float>{6, 8, 9, 16, 18, 19, 21, 23, 24}));
  // The averages divide by the elements inside only: {4, 9} -> 6.5, {20, 21} -> 20.5, {24} -> 24.
  EXPECT_EQ(values<float>(a), (std::vector<float>{3, 5, 6.5f, 13, 15, 16.5f, 20.5f, 22.5f, 24}));
  // The gradient of the partial windows goes back to their elements only.
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  T y, s, g;
  DT_ASSERT_OK(dt_avg_pool2d(x, k2, nullptr, nullptr, 1, 1, y.out()));
  DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, s.out()));
  DT_ASSERT_OK(dt_backward(s, nullptr));
  DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
  const std::vector<float> gv = values<float>(g);
  EXPECT_FLOAT_EQ(gv[0], 0.25f);
  EXPECT_FLOAT_EQ(gv[4], 0.5f);   // (0, 4): a window of 2 elements
  EXPECT_FLOAT_EQ(gv[24], 1.0f);  // (4, 4): a window of itself alone
}

TEST_F(Pooling, BadArgumentsAreRefusedNamingTheModule) {
  const int64_t k3[2] = {3, 3}, pad2[2] = {2, 2}, zero[2] = {0, 3};
  M m;
  DT_EXPECT_STATUS(dt_max_pool2d_new(k3, nullptr, nullptr, nullptr, 2, m.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("ceil_mode must be 0 or 1, got 2"), std::string::npos)
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_max_pool2d_new(zero, nullptr, nullptr, nullptr, 0, m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_max_pool2d_new(nullptr, nullptr, nullptr, nullptr, 0, m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_avg_pool2d_new(k3, nullptr, nullptr, 0, 2, m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_adaptive_avg_pool2d_new(nullptr, m.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(static_cast<dt_module*>(m), nullptr);

  DT_ASSERT_OK(dt_max_pool2d_new(k3, nullptr, pad2, nullptr, 0, m.out()));
  T x, y, small, ints;
  const int64_t xs[] = {1, 2, 8, 8}, tiny[] = {1, 2, 2, 2};
  DT_ASSERT_OK(dt_tensor_zeros(xs, 4, DT_FLOAT32, cpu(), x.out()));
  const dt_tensor* in[] = {x};
  DT_EXPECT_STATUS(dt_module_forward(m, in, 1, y.out()), DT_ERR_INVALID_ARGUMENT);  // padding 2 > 3 / 2
  EXPECT_NE(std::string(dt_last_error_message()).find("MaxPool2d(kernel_size=(3, 3), stride=(3, 3), padding=(2, 2)): "),
            std::string::npos)
      << dt_last_error_message();
  EXPECT_NE(std::string(dt_last_error_message()).find("at most half of the kernel size"), std::string::npos);
  M plain;
  DT_ASSERT_OK(dt_max_pool2d_new(k3, nullptr, nullptr, nullptr, 0, plain.out()));
  DT_ASSERT_OK(dt_tensor_zeros(tiny, 4, DT_FLOAT32, cpu(), small.out()));
  const dt_tensor* in2[] = {small};
  DT_EXPECT_STATUS(dt_module_forward(plain, in2, 1, y.out()), DT_ERR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("smaller than the kernel"), std::string::npos)
      << dt_last_error_message();
  DT_ASSERT_OK(dt_tensor_zeros(xs, 4, DT_INT64, cpu(), ints.out()));
  const dt_tensor* in3[] = {ints};
  DT_EXPECT_STATUS(dt_module_forward(plain, in3, 1, y.out()), DT_ERR_DTYPE_MISMATCH);
  const int64_t flat[] = {8};
  T one_d;
  DT_ASSERT_OK(dt_tensor_zeros(flat, 1, DT_FLOAT32, cpu(), one_d.out()));
  const int64_t size[2] = {2, 2};
  DT_EXPECT_STATUS(dt_adaptive_avg_pool2d(one_d, size, y.out()), DT_ERR_SHAPE_MISMATCH);
  EXPECT_EQ(y.get(), nullptr);
}

// Upsample by hand: nearest doubles each element; bilinear with align_corners maps the
// corners onto each other ([0, 3] to 4 columns: 0, 1, 2, 3); its gradient sums the
// weights each input element gave; the module names itself in its errors.
TEST_F(Pooling, UpsampleByHandAndItsErrorsNameTheModule) {
  T x = from({0, 3, 6, 9}, {1, 1, 2, 2});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  const double two[1] = {2.0};
  const int64_t size24[2] = {2, 4};
  M nearest, bilinear;
  DT_ASSERT_OK(dt_upsample_new(nullptr, two, 1, nullptr, 0, nearest.out()));
  DT_ASSERT_OK(dt_upsample_new(size24, nullptr, 2, "bilinear", 1, bilinear.out()));
  char kind[32] = "";
  DT_ASSERT_OK(dt_module_kind(nearest, kind, sizeof kind, nullptr));
  EXPECT_EQ(std::string(kind), "Upsample");
  T n = forward(nearest, x), b = forward(bilinear, x);
  EXPECT_EQ(shape_of(n), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_EQ(values<float>(n), (std::vector<float>{0, 0, 3, 3, 0, 0, 3, 3, 6, 6, 9, 9, 6, 6, 9, 9}));
  EXPECT_EQ(values<float>(b), (std::vector<float>{0, 1, 2, 3, 6, 7, 8, 9}));
  T s, g;
  DT_ASSERT_OK(dt_sum(b, nullptr, 0, 0, s.out()));
  DT_ASSERT_OK(dt_backward(s, nullptr));
  DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
  // Columns 0..3 read input column 0 with weights 1, 2/3, 1/3, 0: 2 in all, the same for column 1.
  const std::vector<float> grad = values<float>(g);
  for (float v : grad) EXPECT_NEAR(v, 2.0f, 1e-6f);
  T flat, y;
  const int64_t three_d[] = {1, 2, 5};
  DT_ASSERT_OK(dt_tensor_zeros(three_d, 3, DT_FLOAT32, cpu(), flat.out()));
  const dt_tensor* in[] = {flat};
  DT_EXPECT_STATUS(dt_module_forward(bilinear, in, 1, y.out()), DT_ERR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("Upsample(size=(2, 4), mode='bilinear', align_corners=True): "
                                                      "mode \"bilinear\" takes a 4-d input, got [1, 2, 5]"),
            std::string::npos)
      << dt_last_error_message();
  EXPECT_EQ(y.get(), nullptr);
}

// Geometry whose arithmetic overflows int64 (found by fuzz/fuzz_nn.cpp): a stride or a
// dilation that is never taken gives PyTorch's result; a size past int64 is a clean error.
TEST_F(Pooling, AWindowThatADilationStepsOverGivesMinusInfinityAndNoGradient) {
  // A 2x2 window dilated by 2 and padded by 1 over a 1x1 plane: its taps at -1 and 1 miss
  // the input's one row and column. PyTorch 2.x: output -inf, gradient 0 (found by
  // fuzz_autograd: backward failed with "index -1 is out of bounds").
  T x = from({5, 6}, {1, 2, 1, 1});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  const int64_t k2[2] = {2, 2}, p1[2] = {1, 1}, d2[2] = {2, 2};
  T y, ones, g;
  DT_ASSERT_OK(dt_max_pool2d(x, k2, nullptr, p1, d2, 0, y.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{-INFINITY, -INFINITY}));
  DT_ASSERT_OK(dt_ones_like(y, ones.out()));
  DT_ASSERT_OK(dt_backward(y, ones));
  DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
  EXPECT_EQ(values<float>(g), (std::vector<float>{0, 0}));
}

TEST_F(Pooling, ExtremeGeometryGivesTheResultOrAClearError) {
  constexpr int64_t kMax = INT64_MAX;
  T flat, x, y;
  DT_ASSERT_OK(dt_tensor_arange(0, 25, 1, DT_FLOAT64, cpu(), flat.out()));  // 0..24, row-major 5x5
  const int64_t xs[4] = {1, 1, 5, 5};
  DT_ASSERT_OK(dt_reshape(flat, xs, 4, x.out()));
  const int64_t k2[2] = {2, 2}, k1[2] = {1, 1}, k3[2] = {3, 3}, huge[2] = {kMax, kMax};
  // A stride as large as int64, with ceil_mode: one window, the top-left 2x2 (0, 1, 5, 6).
  DT_ASSERT_OK(dt_max_pool2d(x, k2, huge, nullptr, nullptr, 1, y.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(values<double>(y), std::vector<double>{6.0});
  DT_ASSERT_OK(dt_avg_pool2d(x, k2, huge, nullptr, 1, 1, y.out()));
  EXPECT_EQ(values<double>(y), std::vector<double>{3.0});
  // A 1x1 window has no second tap: any dilation gives the input back.
  DT_ASSERT_OK(dt_max_pool2d(x, k1, nullptr, nullptr, huge, 0, y.out()));
  EXPECT_EQ(values<double>(y), values<double>(flat));
  // A 3x3 window dilated past int64 is larger than any input.
  DT_EXPECT_STATUS(dt_max_pool2d(x, k3, nullptr, nullptr, huge, 1, y.out()), DT_ERR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("larger than int64 holds"), std::string::npos)
      << dt_last_error_message();
  // A window 2^63 - 1 tall over one row padded by 2^62 - 1 on each side: one window, whose
  // only element inside is the input's (the kernel finds its rows inside in constant time;
  // it stepped through all 2^63 offsets). Average pooling pads a copy of the input: a
  // tensor of more bytes than int64 counts.
  T one, big;
  const int64_t ones[4] = {1, 1, 1, 1}, tall[2] = {kMax, 1}, half[2] = {kMax / 2, 0};
  DT_ASSERT_OK(dt_tensor_full(ones, 4, 7.0, DT_FLOAT64, cpu(), one.out()));
  DT_ASSERT_OK(dt_max_pool2d(one, tall, nullptr, half, nullptr, 0, big.out()));
  EXPECT_EQ(shape_of(big), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(values<double>(big), std::vector<double>{7.0});
  // The same padded both ways: each window row starts 2^62 - 1 elements before the plane
  // (found by fuzz_nn: the kernel formed a pointer there, undefined behaviour).
  const int64_t square[2] = {kMax, kMax}, half2[2] = {kMax / 2, kMax / 2};
  DT_ASSERT_OK(dt_max_pool2d(one, square, nullptr, half2, nullptr, 0, big.out()));
  EXPECT_EQ(shape_of(big), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(values<double>(big), std::vector<double>{7.0});
  DT_EXPECT_STATUS(dt_avg_pool2d(one, tall, nullptr, half, 0, 1, y.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("more bytes than fit in memory"), std::string::npos)
      << dt_last_error_message();
  // An empty batch needs no padded copy: the one window per plane of a 2^63 - 1 square
  // kernel divides by kH * kW, a product computed in double (found by fuzz_modules: it
  // overflowed int64).
  T none;
  const int64_t empty[4] = {0, 1, 1, 1};
  DT_ASSERT_OK(dt_tensor_zeros(empty, 4, DT_FLOAT64, cpu(), none.out()));
  DT_ASSERT_OK(dt_avg_pool2d(none, square, nullptr, half2, 0, 1, y.out()));
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{0, 1, 1, 1}));
  // The same max pooling of float16, which the CPU kernel leaves to the generic path of
  // windows: its kH * kW is no size of anything (found by fuzz_nn: it overflowed int64).
  // The result is empty, and so is the gradient, recorded or not.
  T none16, pooled16, total, grad16;
  DT_ASSERT_OK(dt_tensor_zeros(empty, 4, DT_FLOAT16, cpu(), none16.out()));
  DT_ASSERT_OK(dt_max_pool2d(none16, square, nullptr, half2, nullptr, 0, pooled16.out()));
  EXPECT_EQ(shape_of(pooled16), (std::vector<int64_t>{0, 1, 1, 1}));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(none16, 1));
  DT_ASSERT_OK(dt_max_pool2d(none16, square, nullptr, half2, nullptr, 0, pooled16.out()));
  EXPECT_EQ(shape_of(pooled16), (std::vector<int64_t>{0, 1, 1, 1}));
  DT_ASSERT_OK(dt_sum(pooled16, nullptr, 0, 0, total.out()));
  DT_ASSERT_OK(dt_backward(total, nullptr));
  DT_ASSERT_OK(dt_tensor_grad(none16, grad16.out()));
  EXPECT_EQ(shape_of(grad16), (std::vector<int64_t>{0, 1, 1, 1}));
  // An adaptive output of 2^60 rows over 5: a valid request, whose averaging matrix (and
  // output) no memory holds; of 2^62 rows, a matrix of more elements than int64 counts.
  const int64_t size[2] = {int64_t{1} << 60, 1}, larger[2] = {kMax / 2, 1};
  DT_EXPECT_STATUS(dt_adaptive_avg_pool2d(x, size, y.out()), DT_ERR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(dt_last_error_message()).find("averaging matrix"), std::string::npos)
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_adaptive_avg_pool2d(x, larger, y.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("more elements than fit in int64"), std::string::npos)
      << dt_last_error_message();
}

}  // namespace
