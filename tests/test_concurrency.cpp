// Many threads at once (issue 7's stress test): 8 threads, a bounded number of rounds
// each, share some tensors and a module (read only) and own others, creating, moving
// between logical devices, computing, viewing, differentiating and releasing. Every call
// must succeed, results must be right, and the live-handle count must come back to
// where it started. ctest also runs this under ThreadSanitizer (the tsan preset).
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "support/dt_test.h"

namespace {

const bool kDevicesSet = [] { return setenv("DEVTENSOR_CPU_DEVICES", "2", 1) == 0; }();

constexpr int kThreads = 8;
constexpr int kRounds = 60;

TEST(Concurrency, EightThreadsShareAndOwnTensorsAndLeakNothing) {
  ASSERT_TRUE(kDevicesSet);
  const size_t live = dt_live_handle_count();
  const int64_t shape[] = {16, 16};
  T shared;  // read by every thread
  DT_ASSERT_OK(dt_tensor_ones(shape, 2, DT_FLOAT32, cpu(0), shared.out()));
  dt_module* model = nullptr;  // one module, run forward from every thread
  DT_ASSERT_OK(dt_linear_new(16, 4, 1, DT_FLOAT32, cpu(0), &model));
  std::atomic<int> failures{0};
  std::vector<std::string> first_error(kThreads);

  auto worker = [&](int id) {
    auto ok = [&](dt_status s, const char* what) {
      if (s == DT_OK) return true;
      if (failures.fetch_add(1) == 0) first_error[id] = std::string(what) + ": " + dt_last_error_message();
      return false;
    };
    for (int round = 0; round < kRounds; ++round) {
      dt_tensor *mine = nullptr, *moved = nullptr, *sum = nullptr, *prod = nullptr, *total = nullptr, *view = nullptr;
      dt_tensor *out = nullptr, *loss = nullptr, *grad = nullptr;
      const float fill = static_cast<float>(id + 1);
      bool good = ok(dt_tensor_full(shape, 2, fill, DT_FLOAT32, cpu(id % 2), &mine), "full") &&
                  ok(dt_tensor_to(mine, cpu(0), DT_DTYPE_DEFAULT, 0, &moved), "to") &&
                  ok(dt_tensor_set_requires_grad(moved, 1), "requires_grad") &&
                  ok(dt_add(moved, shared, &sum), "add") && ok(dt_matmul(sum, shared, &prod), "matmul") &&
                  ok(dt_transpose(prod, 0, 1, &view), "transpose") &&
                  ok(dt_sum(view, nullptr, 0, 0, &total), "sum");
      if (good) {
        double v = 0;
        // (fill + 1) summed over 16 terms, 256 times
        if (ok(dt_tensor_item(total, &v), "item") && v != (fill + 1) * 16 * 256) {
          if (failures.fetch_add(1) == 0) first_error[id] = "wrong sum " + std::to_string(v);
        }
        // autograd on a tensor of this thread, through the shared module
        const dt_tensor* in[] = {sum};
        good = ok(dt_module_forward(model, in, 1, &out), "forward") &&
               ok(dt_sum(out, nullptr, 0, 0, &loss), "sum") && ok(dt_backward(loss, nullptr), "backward") &&
               ok(dt_tensor_grad(moved, &grad), "grad") && ok(grad ? DT_OK : DT_ERR_INTERNAL, "grad is NULL");
      }
      for (dt_tensor* t : {mine, moved, sum, prod, total, view, out, loss, grad}) dt_tensor_release(t);
      if (!good) return;
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (auto& t : threads) t.join();
  for (const std::string& e : first_error)
    if (!e.empty()) ADD_FAILURE() << e;
  EXPECT_EQ(failures.load(), 0);
  // The module's parameters accumulated every thread's gradient: drop them with it.
  DT_ASSERT_OK(dt_module_release(model));
  shared = T();
  EXPECT_EQ(dt_live_handle_count(), live) << "handles leaked across threads";
}

}  // namespace
