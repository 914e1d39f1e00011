// Process groups, DDP and DataParallel on CUDA through NCCL (the CUDA plugin loads
// libnccl.so.2 at first use). A lent machine has one GPU, so the groups here are of one
// process: every collective then gives back the rank's own values, which checks that
// each one runs through NCCL on cuda:0 for every dtype, leaves the stream usable, and
// that DDP over NCCL trains exactly as the plain module. Several GPUs (DataParallel's
// NCCL broadcast, groups of several ranks) are not lent: docs/scaling.md says what is
// tested where. Every test is SKIPPED, saying why, where CUDA or NCCL is unusable.
#include <unistd.h>

#include <string>
#include <vector>

#include "support/dt_test.h"

namespace {

const dt_device kCuda{DT_DEVICE_CUDA, 0};

class Nccl : public LeakChecked {
 protected:
  void SetUp() override {
    const std::string info = build_info_text();
    const size_t at = info.find("nccl: ");
    const std::string line = at == std::string::npos ? "no nccl line" : info.substr(at, info.find('\n', at) - at);
    if (!dt_cuda_is_available() || line.rfind("nccl: usable", 0) != 0) GTEST_SKIP() << line;
    LeakChecked::SetUp();
  }
  std::string store(const char* what) const {
    return "file:///tmp/dt-nccl-" + std::string(what) + "-" + std::to_string(getpid());
  }
};

std::string backend_of(const dt_process_group* pg) {
  char buf[64] = {};
  EXPECT_EQ(dt_process_group_backend(pg, buf, sizeof buf, nullptr), DT_OK) << dt_last_error_message();
  return buf;
}

TEST_F(Nccl, AGroupOfOneRunsEveryCollectiveInEveryDtypeOnCuda0) {
  dt_process_group* pg = nullptr;
  DT_ASSERT_OK(dt_process_group_new("nccl", store("all").c_str(), 0, 1, 60000, &pg));
  EXPECT_EQ(backend_of(pg), "nccl");
  const int64_t shape[] = {3, 5}, flat[] = {15}, gathered[] = {1, 15};
  const dt_dtype dtypes[] = {DT_FLOAT32, DT_FLOAT64, DT_FLOAT16, DT_BFLOAT16, DT_INT8,
                             DT_INT32,   DT_INT64,   DT_UINT8,   DT_BOOL};
  std::vector<double> seed(15);
  for (int i = 0; i < 15; ++i) seed[static_cast<size_t>(i)] = (i * 7) % 11;  // 0..10: exact in every dtype
  T base;
  DT_ASSERT_OK(dt_tensor_from_data(seed.data(), seed.size() * sizeof(double), shape, 2, DT_FLOAT64, cpu(), base.out()));
  for (dt_dtype dtype : dtypes) {
    SCOPED_TRACE(dtype);
    T want, x, g, rs, back;
    DT_ASSERT_OK(dt_tensor_to(base, cpu(), dtype, 0, want.out()));
    DT_ASSERT_OK(dt_tensor_to(want, kCuda, DT_DTYPE_DEFAULT, 0, x.out()));
    for (int32_t op : {DT_REDUCE_SUM, DT_REDUCE_MIN, DT_REDUCE_MAX, DT_REDUCE_PRODUCT}) DT_ASSERT_OK(dt_all_reduce_(pg, x, op));
    if (dtype == DT_FLOAT32 || dtype == DT_FLOAT64 || dtype == DT_FLOAT16 || dtype == DT_BFLOAT16)
      DT_ASSERT_OK(dt_all_reduce_(pg, x, DT_REDUCE_AVG));
    DT_ASSERT_OK(dt_broadcast_(pg, x, 0));
    DT_ASSERT_OK(dt_tensor_to(x, cpu(), DT_DTYPE_DEFAULT, 0, back.out()));
    EXPECT_EQ(str(back), str(want));
    DT_ASSERT_OK(dt_tensor_zeros(gathered, 2, dtype, kCuda, g.out()));
    DT_ASSERT_OK(dt_all_gather(pg, x, g));
    T gb, flat_want;
    DT_ASSERT_OK(dt_tensor_to(g, cpu(), DT_DTYPE_DEFAULT, 0, gb.out()));
    DT_ASSERT_OK(dt_reshape(want, gathered, 2, flat_want.out()));
    EXPECT_EQ(str(gb), str(flat_want));
    DT_ASSERT_OK(dt_tensor_zeros(flat, 1, dtype, kCuda, rs.out()));
    DT_ASSERT_OK(dt_reduce_scatter(pg, x, rs, DT_REDUCE_SUM));
    T rb, rs_want;
    DT_ASSERT_OK(dt_tensor_to(rs, cpu(), DT_DTYPE_DEFAULT, 0, rb.out()));
    DT_ASSERT_OK(dt_reshape(want, flat, 1, rs_want.out()));
    EXPECT_EQ(str(rb), str(rs_want));
  }
  // What NCCL cannot do, and what the group does not take, is said before anything moves.
  T i16, host;
  DT_ASSERT_OK(dt_tensor_ones(flat, 1, DT_INT16, kCuda, i16.out()));
  DT_EXPECT_STATUS(dt_all_reduce_(pg, i16, DT_REDUCE_SUM), DT_ERR_DTYPE_MISMATCH);
  DT_ASSERT_OK(dt_broadcast_(pg, i16, 0));  // moves only: any dtype
  DT_ASSERT_OK(dt_tensor_ones(flat, 1, DT_FLOAT32, cpu(), host.out()));
  DT_EXPECT_STATUS(dt_all_reduce_(pg, host, DT_REDUCE_SUM), DT_ERR_DEVICE_MISMATCH);
  DT_ASSERT_OK(dt_barrier(pg));
  DT_ASSERT_OK(dt_process_group_release(pg));
}

TEST_F(Nccl, ADefaultGroupTakesCpuTensorsOnGlooAndCudaTensorsOnNccl) {
  dt_process_group* pg = nullptr;
  DT_ASSERT_OK(dt_process_group_new("", store("both").c_str(), 0, 1, 60000, &pg));
  EXPECT_EQ(backend_of(pg), "gloo,nccl");
  const int64_t n = 4;
  T host, dev, back;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, cpu(), host.out()));
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, kCuda, dev.out()));
  DT_ASSERT_OK(dt_all_reduce_(pg, host, DT_REDUCE_SUM));
  DT_ASSERT_OK(dt_all_reduce_(pg, dev, DT_REDUCE_SUM));
  DT_ASSERT_OK(dt_tensor_to(dev, cpu(), DT_DTYPE_DEFAULT, 0, back.out()));
  EXPECT_EQ(values<float>(back), std::vector<float>(4, 1.0f));
  DT_ASSERT_OK(dt_process_group_release(pg));
}

TEST_F(Nccl, DistributedDataParallelOnCuda0TrainsAsThePlainModule) {
  std::vector<float> losses[2];
  for (int run = 0; run < 2; ++run) {
    DT_ASSERT_OK(dt_manual_seed(21));
    M lin, mse, ddp;
    DT_ASSERT_OK(dt_linear_new(6, 3, 1, DT_FLOAT32, cpu(), lin.out()));
    DT_ASSERT_OK(dt_module_to(lin, kCuda));
    DT_ASSERT_OK(dt_mse_loss_new(DT_REDUCTION_MEAN, mse.out()));
    dt_process_group* pg = nullptr;
    if (run == 1) {
      DT_ASSERT_OK(dt_process_group_new("nccl", store("ddp").c_str(), 0, 1, 60000, &pg));
      DT_ASSERT_OK(dt_distributed_data_parallel_new(lin, pg, 0, 0, ddp.out()));
    }
    dt_module* model = run == 1 ? static_cast<dt_module*>(ddp) : static_cast<dt_module*>(lin);
    T w, b;
    DT_ASSERT_OK(dt_module_parameter(lin, 0, nullptr, 0, nullptr, w.out()));
    DT_ASSERT_OK(dt_module_parameter(lin, 1, nullptr, 0, nullptr, b.out()));
    const dt_tensor* params[] = {w, b};
    dt_optimizer* opt = nullptr;
    DT_ASSERT_OK(dt_sgd_new(params, 2, 0.05, 0.9, 0.0, 0.0, 0, &opt));
    const int64_t xs[] = {8, 6}, ys[] = {8, 3};
    T x, y;
    DT_ASSERT_OK(dt_manual_seed(22));
    DT_ASSERT_OK(dt_tensor_randn(xs, 2, DT_FLOAT32, kCuda, x.out()));
    DT_ASSERT_OK(dt_tensor_randn(ys, 2, DT_FLOAT32, kCuda, y.out()));
    for (int step = 0; step < 6; ++step) {
      T out, loss;
      const dt_tensor* in[] = {x};
      DT_ASSERT_OK(dt_module_forward(model, in, 1, out.out()));
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
    DT_ASSERT_OK(dt_process_group_release(pg));
  }
  EXPECT_EQ(losses[0], losses[1]) << "DDP over NCCL with one rank must equal plain training";
  EXPECT_LT(losses[1].back(), losses[1].front());
}

}  // namespace
