// Why CUDA is or is not usable, and that the core works either way. ctest runs this
// program several times (tests/CMakeLists.txt): as built, with DEVTENSOR_CUDA_PLUGIN
// naming a missing file, with it naming a library that is not the plugin, and with
// CUDA_VISIBLE_DEVICES hiding every device. DT_EXPECT_CUDA_STATE (a DT_CUDA_* number)
// and DT_EXPECT_CUDA_REASON (a substring) say what each run must report.
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/dt_test.h"

namespace {

std::string cuda_reason(int32_t* state) {
  char buf[1024];
  size_t need = 0;
  dt_status s = dt_cuda_status(state, buf, sizeof buf, &need);
  EXPECT_EQ(s, DT_OK) << dt_last_error_message();
  return buf;
}

TEST(CudaStatus, ReportsTheExpectedStateAndReason) {
  int32_t state = -1;
  std::string reason = cuda_reason(&state);
  EXPECT_FALSE(reason.empty());
  std::printf("dt_cuda_status: state %d: %s\n", state, reason.c_str());
  if (const char* want = std::getenv("DT_EXPECT_CUDA_STATE")) EXPECT_EQ(state, std::atoi(want)) << reason;
  if (const char* want = std::getenv("DT_EXPECT_CUDA_REASON"))
    EXPECT_NE(reason.find(want), std::string::npos) << reason << " should mention " << want;
  // With every device hidden: hidden, unless there is no driver to ask in the first place.
  if (std::getenv("DT_EXPECT_CUDA_HIDDEN") && state != DT_CUDA_NO_DRIVER && state != DT_CUDA_NOT_BUILT &&
      state != DT_CUDA_DRIVER_TOO_OLD)
    EXPECT_EQ(state, DT_CUDA_ALL_HIDDEN) << reason;
  EXPECT_EQ(dt_cuda_is_available(), state == DT_CUDA_AVAILABLE ? 1 : 0);
}

TEST(CudaStatus, TheCoreWorksWhateverTheState) {
  const int64_t shape[] = {3};
  const float a_host[] = {1, 2, 3}, b_host[] = {10, 20, 30};
  T a, b, c;
  DT_ASSERT_OK(dt_tensor_from_data(a_host, sizeof a_host, shape, 1, DT_FLOAT32, cpu(), a.out()));
  DT_ASSERT_OK(dt_tensor_from_data(b_host, sizeof b_host, shape, 1, DT_FLOAT32, cpu(), b.out()));
  DT_ASSERT_OK(dt_add(a, b, c.out()));
  EXPECT_EQ(values<float>(c), (std::vector<float>{11, 22, 33}));
}

// DESIGN §5: without a usable GPU, the GPU helpers fall back to the CPU and every CUDA
// request fails with DT_ERR_DEVICE_UNAVAILABLE carrying dt_cuda_status's reason.
TEST(CudaStatus, WithoutAGpuEveryCudaRequestSaysWhy) {
  int32_t state = -1;
  std::string reason = cuda_reason(&state);
  if (state == DT_CUDA_AVAILABLE) GTEST_SKIP() << "CUDA is available here: " << reason;
  size_t n = 99;
  DT_ASSERT_OK(dt_device_count(DT_DEVICE_CUDA, &n));
  EXPECT_EQ(n, 0u);
  dt_device d{DT_DEVICE_CUDA, 5};
  DT_ASSERT_OK(dt_try_gpu(0, &d));
  EXPECT_EQ(d.type, DT_DEVICE_CPU);
  EXPECT_EQ(d.index, 0);
  dt_device all[2];
  size_t count = 0;
  DT_ASSERT_OK(dt_all_gpus(all, 2, &count));
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(all[0].type, DT_DEVICE_CPU);

  const dt_device cuda0{DT_DEVICE_CUDA, 0};
  const int64_t shape[] = {2, 2};
  dt_tensor* out = nullptr;
  auto unavailable_with_reason = [&](dt_status s, const char* what) {
    EXPECT_EQ(s, DT_ERR_DEVICE_UNAVAILABLE) << what << ": " << dt_last_error_message();
    EXPECT_NE(std::string(dt_last_error_message()).find(reason), std::string::npos)
        << what << ": " << dt_last_error_message() << " should carry: " << reason;
  };
  // Issue 16.8: the message names the device asked for, as every other device error does.
  auto names_device = [&](const char* device, const char* what) {
    EXPECT_NE(std::string(dt_last_error_message()).find(std::string(device) + " requested"), std::string::npos)
        << what << ": " << dt_last_error_message() << " should name " << device;
  };
  unavailable_with_reason(dt_tensor_zeros(shape, 2, DT_FLOAT32, dt_device{DT_DEVICE_CUDA, 1}, &out), "dt_tensor_zeros");
  names_device("cuda:1", "dt_tensor_zeros");
  unavailable_with_reason(dt_tensor_rand(shape, 2, DT_FLOAT32, cuda0, &out), "dt_tensor_rand");
  names_device("cuda:0", "dt_tensor_rand");
  unavailable_with_reason(dt_tensor_empty_pinned(shape, 2, DT_FLOAT32, &out), "dt_tensor_empty_pinned");
  EXPECT_EQ(out, nullptr);
  T host;
  DT_ASSERT_OK(dt_tensor_ones(shape, 2, DT_FLOAT32, cpu(), host.out()));
  unavailable_with_reason(dt_tensor_to(host, cuda0, DT_DTYPE_DEFAULT, 0, &out), "dt_tensor_to");
  names_device("cuda:0", "dt_tensor_to");
  unavailable_with_reason(dt_tensor_pin_memory(host, &out), "dt_tensor_pin_memory");
  int32_t pinned = -1;
  DT_ASSERT_OK(dt_tensor_is_pinned(host, &pinned));
  EXPECT_EQ(pinned, 0);
  dt_device_props props;
  props.struct_size = sizeof props;
  unavailable_with_reason(dt_device_properties(cuda0, &props), "dt_device_properties");
  names_device("cuda:0", "dt_device_properties");
  M lin;
  DT_ASSERT_OK(dt_linear_new(2, 2, 1, DT_FLOAT32, cpu(), lin.out()));
  unavailable_with_reason(dt_module_to(lin, dt_device{DT_DEVICE_CUDA, 2}), "dt_module_to");
  names_device("cuda:2", "dt_module_to");
  dt_mem_stats stats;
  stats.struct_size = sizeof stats;
  unavailable_with_reason(dt_memory_stats(cuda0, &stats), "dt_memory_stats");
  unavailable_with_reason(dt_synchronize(cuda0), "dt_synchronize");
}

TEST(CudaStatus, Tf32IsOffByDefaultAndTakesOnlyZeroOrOne) {
  int32_t on = -1;
  DT_ASSERT_OK(dt_allow_tf32(&on));
  EXPECT_EQ(on, 0);
  DT_ASSERT_OK(dt_set_allow_tf32(1));
  DT_ASSERT_OK(dt_allow_tf32(&on));
  EXPECT_EQ(on, 1);
  DT_EXPECT_STATUS(dt_set_allow_tf32(2), DT_ERR_INVALID_ARGUMENT);
  DT_ASSERT_OK(dt_allow_tf32(&on));
  EXPECT_EQ(on, 1);
  DT_ASSERT_OK(dt_set_allow_tf32(0));
}

}  // namespace
