// A backend added as a plugin (tests/plugin/test_backend.cpp, device type 12, "testdev",
// two devices), registered through DEVTENSOR_PLUGINS: its devices parse, print, count and
// describe themselves; tensors move to and from it and between its devices; ops, autograd
// and a training step run there (the plugin's op counter proves the work ran in it);
// mixing it with another device is the usual mismatch; what it lacks is NOT_SUPPORTED.
// ctest sets DEVTENSOR_PLUGINS; run alone, the tests are skipped. (The PyTorch reference
// suite runs on testdev:0 too: ctest's test_reference_ops_plugin.)
#include <dlfcn.h>
#include <dlpack/dlpack.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/dt_test.h"

namespace {

constexpr int32_t kTestDev = 12;
const dt_device kDev0{kTestDev, 0}, kDev1{kTestDev, 1};

// The plugin's op counter, through the same loaded copy the library uses.
uint64_t plugin_ops() {
  const char* path = std::getenv("DEVTENSOR_PLUGINS");
  void* h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto count = h ? reinterpret_cast<uint64_t (*)()>(dlsym(h, "devtensor_test_backend_ops")) : nullptr;
  return count ? count() : 0;
}

class PluginBackend : public LeakChecked {
 protected:
  void SetUp() override {
    if (!std::getenv("DEVTENSOR_PLUGINS")) GTEST_SKIP() << "DEVTENSOR_PLUGINS is not set (ctest sets it)";
    LeakChecked::SetUp();
  }
};

TEST_F(PluginBackend, ItsDevicesParsePrintCountAndDescribeThemselves) {
  dt_device d{};
  DT_ASSERT_OK(dt_device_parse("testdev:1", &d));
  EXPECT_EQ(d.type, kTestDev);
  EXPECT_EQ(d.index, 1);
  char buf[64];
  DT_ASSERT_OK(dt_device_format(kDev1, buf, sizeof buf, nullptr));
  EXPECT_STREQ(buf, "testdev:1");
  size_t n = 0;
  DT_ASSERT_OK(dt_device_count(kTestDev, &n));
  EXPECT_EQ(n, 2u);
  DT_ASSERT_OK(dt_device_name(kDev1, buf, sizeof buf, nullptr));
  EXPECT_STREQ(buf, "devtensor test device 1");
  DT_EXPECT_STATUS(dt_device_name(dt_device{kTestDev, 2}, buf, sizeof buf, nullptr), DT_ERR_INVALID_DEVICE);
  EXPECT_NE(std::string(dt_last_error_message()).find("testdev:2 requested, 2 testdev devices visible"),
            std::string::npos)
      << dt_last_error_message();
  // Not a GPU: the GPU helpers do not offer it.
  dt_device g{};
  DT_ASSERT_OK(dt_try_gpu(0, &g));
  EXPECT_NE(g.type, kTestDev);
  // dt_build_info names it.
  size_t need = 0;
  DT_ASSERT_OK(dt_build_info(nullptr, 0, &need));
  std::string info(need, '\0');
  DT_ASSERT_OK(dt_build_info(&info[0], need, nullptr));
  EXPECT_NE(info.find("testdev (plugin)"), std::string::npos) << info;
}

TEST_F(PluginBackend, TensorsMoveToItAndBackAndOpsRunInIt) {
  const float host[6] = {1, -2, 3, -4, 5, -6};
  const int64_t shape[] = {2, 3};
  T x, on0, on1, y, z, back;
  DT_ASSERT_OK(dt_tensor_from_data(host, sizeof host, shape, 2, DT_FLOAT32, cpu(), x.out()));
  DT_ASSERT_OK(dt_tensor_to(x, kDev0, DT_DTYPE_DEFAULT, 0, on0.out()));
  DT_ASSERT_OK(dt_tensor_to(on0, kDev1, DT_DTYPE_DEFAULT, 0, on1.out()));  // between its devices
  const uint64_t before = plugin_ops();
  DT_ASSERT_OK(dt_relu(on1, y.out()));
  DT_ASSERT_OK(dt_mul(y, on1, z.out()));
  EXPECT_EQ(plugin_ops(), before + 2) << "the ops did not run in the plugin";
  dt_device d{};
  DT_ASSERT_OK(dt_tensor_device(z, &d));
  EXPECT_EQ(d.type, kTestDev);
  EXPECT_EQ(d.index, 1);
  EXPECT_EQ(values<float>(z), (std::vector<float>{1, 0, 9, 0, 25, 0}));  // relu(x) * x
  EXPECT_EQ(str(y), "tensor([[1., 0., 3.],\n        [0., 5., 0.]], device='testdev:1')");
  // Mixing it with another device is the usual mismatch, naming both.
  T bad;
  DT_EXPECT_STATUS(dt_add(on0, x, bad.out()), DT_ERR_DEVICE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("testdev:0"), std::string::npos) << dt_last_error_message();
  // Its memory is counted by its own allocator.
  dt_mem_stats m;
  m.struct_size = sizeof m;
  DT_ASSERT_OK(dt_memory_stats(kDev1, &m));
  EXPECT_GE(m.allocated_bytes, 3 * 6 * sizeof(float));
}

TEST_F(PluginBackend, AModuleTrainsOnIt) {
  // forward, loss, backward and an SGD step, all on testdev:0, agree with cpu:0.
  std::vector<float> losses[2];
  for (int run = 0; run < 2; ++run) {
    const dt_device dev = run == 0 ? cpu() : kDev0;
    DT_ASSERT_OK(dt_manual_seed(5));
    M lin, mse;
    DT_ASSERT_OK(dt_linear_new(3, 2, 1, DT_FLOAT32, cpu(), lin.out()));
    DT_ASSERT_OK(dt_module_to(lin, dev));
    DT_ASSERT_OK(dt_mse_loss_new(DT_REDUCTION_MEAN, mse.out()));
    T w, b;
    DT_ASSERT_OK(dt_module_parameter(lin, 0, nullptr, 0, nullptr, w.out()));
    DT_ASSERT_OK(dt_module_parameter(lin, 1, nullptr, 0, nullptr, b.out()));
    const dt_tensor* params[] = {w, b};
    dt_optimizer* opt = nullptr;
    DT_ASSERT_OK(dt_sgd_new(params, 2, 0.1, 0.0, 0.0, 0.0, 0, &opt));
    const float xs[12] = {1, 2, 3, -1, 0, 1, 2, 2, -2, 0.5f, 0.5f, 0.5f};
    const float ys[8] = {1, 0, 0, 1, 1, 1, -1, 0};
    const int64_t xshape[] = {4, 3}, yshape[] = {4, 2};
    T x, y;
    DT_ASSERT_OK(dt_tensor_from_data(xs, sizeof xs, xshape, 2, DT_FLOAT32, dev, x.out()));
    DT_ASSERT_OK(dt_tensor_from_data(ys, sizeof ys, yshape, 2, DT_FLOAT32, dev, y.out()));
    for (int step = 0; step < 5; ++step) {
      T out, loss;
      const dt_tensor* in[] = {x};
      DT_ASSERT_OK(dt_module_forward(lin, in, 1, out.out()));
      const dt_tensor* pair[] = {out, y};
      DT_ASSERT_OK(dt_module_forward(mse, pair, 2, loss.out()));
      double v = 0;
      DT_ASSERT_OK(dt_tensor_item(loss, &v));
      losses[run].push_back(static_cast<float>(v));
      DT_ASSERT_OK(dt_backward(loss, nullptr));
      DT_ASSERT_OK(dt_optimizer_step(opt));
      DT_ASSERT_OK(dt_optimizer_zero_grad(opt));
    }
    DT_ASSERT_OK(dt_optimizer_release(opt));
  }
  EXPECT_EQ(losses[0], losses[1]) << "training on the plugin device differs from the CPU";
  EXPECT_LT(losses[1].back(), losses[1].front());
}

TEST_F(PluginBackend, DlpackExportsItsDeviceType) {
  const int64_t n = 4;
  T t;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, kDev1, t.out()));
  DLManagedTensor* m = nullptr;
  DT_ASSERT_OK(dt_tensor_to_dlpack(t, &m));
  EXPECT_EQ(static_cast<int32_t>(m->dl_tensor.device.device_type), kTestDev);
  EXPECT_EQ(m->dl_tensor.device.device_id, 1);
  T back;
  DT_ASSERT_OK(dt_tensor_from_dlpack(m, back.out()));  // devtensor's codes are DLPack's
  dt_device d{};
  DT_ASSERT_OK(dt_tensor_device(back, &d));
  EXPECT_EQ(d.type, kTestDev);
  EXPECT_EQ(d.index, 1);
}

TEST_F(PluginBackend, WhatItLacksIsNotSupported) {
  // The plugin offers no pinned memory, streams or events (optional slots left NULL);
  // pinned memory then comes from no usable backend here (CUDA is unavailable too).
  if (dt_cuda_is_available()) GTEST_SKIP() << "CUDA offers pinned memory here";
  const int64_t n = 2;
  T p;
  DT_EXPECT_STATUS(dt_tensor_empty_pinned(&n, 1, DT_FLOAT32, p.out()), DT_ERR_DEVICE_UNAVAILABLE);
}

}  // namespace
