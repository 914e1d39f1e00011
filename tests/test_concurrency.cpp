// Many threads at once (issue 7's stress test): 8 threads, a bounded number of rounds
// each, share some tensors and a module (read only) and own others, creating, moving
// between logical devices, computing, viewing, differentiating and releasing. Every call
// must succeed, results must be right, and the live-handle count must come back to
// where it started. ctest also runs this under ThreadSanitizer (the tsan preset).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "support/dt_test.h"

// ThreadSanitizer's annotation: the calling thread's plain memory accesses are not
// checked until the matching End (synchronisation still is).
#if defined(__SANITIZE_THREAD__)
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#define CALLER_DATA_RACE_BEGIN() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define CALLER_DATA_RACE_END() AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define CALLER_DATA_RACE_BEGIN() ((void)0)
#define CALLER_DATA_RACE_END() ((void)0)
#endif

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

// ---- readers racing a module that moves, loads or steps (issue 16.1)
//
// A thread reading a parameter through its handle while another thread runs dt_module_to
// used to read the storage that the move freed (the move swaps the storage under the
// handle). Readers now pin a parameter for the length of each call and moves swap
// storage only when no reader holds it, so a racing reader sees the old data or the new,
// never freed memory. ASan, TSan and valgrind (script/test) run these.

constexpr int kReaders = 3;
constexpr int64_t kIn = 24, kOut = 16;  // small: the reads run inline on the caller's thread

std::vector<float> weight_values(dt_module* m) {
  T w;
  EXPECT_EQ(dt_module_parameter(m, 0, nullptr, 0, nullptr, w.out()), DT_OK);
  return values<float>(w);
}

// Runs kReaders threads that each call read(weight, bias) while this thread calls
// act(i) for i = 0, 1, ...: at least `rounds` times, and until every reader has read at
// least kReadsEach times (threads start slowly under valgrind), or a minute has passed.
// Reports the first failure any reader saw.
constexpr long kReadsEach = 200;

template <typename Read, typename Act>
void race(dt_module* m, int rounds, const Read& read, const Act& act) {
  T w, b;
  DT_ASSERT_OK(dt_module_parameter(m, 0, nullptr, 0, nullptr, w.out()));
  DT_ASSERT_OK(dt_module_parameter(m, 1, nullptr, 0, nullptr, b.out()));
  std::atomic<bool> done{false};
  std::vector<std::atomic<long>> reads(kReaders);
  std::vector<std::string> errors(kReaders);
  std::vector<std::thread> threads;
  for (int r = 0; r < kReaders; ++r)
    threads.emplace_back([&, r] {
      while (!done.load() && errors[r].empty()) {
        errors[r] = read(w.get(), b.get());
        reads[r].fetch_add(1);
      }
    });
  auto enough = [&] {
    for (const auto& n : reads)
      if (n.load() < kReadsEach) return false;
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int i = 0;
  for (; (i < rounds || !enough()) && std::chrono::steady_clock::now() < deadline && !::testing::Test::HasFatalFailure(); ++i) act(i);
  done = true;
  for (auto& t : threads) t.join();
  for (const std::string& e : errors)
    if (!e.empty()) ADD_FAILURE() << e;
  long total = 0;
  for (const auto& n : reads) total += n.load();
  EXPECT_TRUE(enough()) << "the readers did not get to run";
  std::printf("[ race     ] %d rounds, %ld reads\n", i, total);
}

std::string status_text(const char* what, dt_status s) {
  return std::string(what) + ": " + dt_status_string(s) + ": " + dt_last_error_message();
}

class RacingReaders : public LeakChecked {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kDevicesSet);
    dt_manual_seed(16);
    DT_ASSERT_OK(dt_linear_new(kIn, kOut, 1, DT_FLOAT32, cpu(0), m_.out()));
    LeakChecked::SetUp();  // the module lives through TearDown
  }
  M m_;
};

TEST_F(RacingReaders, SeeTheSameValuesWhileTheModuleMovesBetweenDevices) {
  const std::vector<float> before = weight_values(m_);
  const int64_t in_shape[] = {2, kIn};
  auto read = [&](dt_tensor* w, dt_tensor* b) -> std::string {
    std::vector<float> got(before.size());
    dt_status s = dt_tensor_copy_to_host(w, got.data(), got.size() * sizeof(float));
    if (s != DT_OK) return status_text("copy_to_host", s);
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != before[i]) return "copy_to_host read " + std::to_string(got[i]) + " at " + std::to_string(i) +
                                      ", not " + std::to_string(before[i]);
    T sum, twice, text_holder;
    if ((s = dt_add(w, w, twice.out())) != DT_OK) return status_text("add", s);
    if ((s = dt_sum(b, nullptr, 0, 0, sum.out())) != DT_OK) return status_text("sum", s);
    dt_device d{};
    if ((s = dt_tensor_device(w, &d)) != DT_OK) return status_text("device", s);
    if (d.type != DT_DEVICE_CPU || d.index < 0 || d.index > 1) return "device " + std::to_string(d.index);
    char text[64];
    if ((s = dt_tensor_to_string(b, text, sizeof text, nullptr)) != DT_OK) return status_text("to_string", s);
    // A forward may meet the module on either device: the right answer or a clear mismatch.
    T x, y;
    if ((s = dt_tensor_ones(in_shape, 2, DT_FLOAT32, cpu(0), x.out())) != DT_OK) return status_text("ones", s);
    const dt_tensor* in[] = {x};
    s = dt_module_forward(m_, in, 1, y.out());
    if (s != DT_OK && s != DT_ERR_DEVICE_MISMATCH) return status_text("forward", s);
    return "";
  };
  race(m_, 1000, read, [&](int i) { ASSERT_EQ(dt_module_to(m_, cpu(1 - i % 2)), DT_OK) << dt_last_error_message(); });
  EXPECT_EQ(weight_values(m_), before);
}

TEST_F(RacingReaders, SeeOldOrNewValuesWhileTheModuleLoads) {
  // Two states A and B on file; the module loads them in turn while readers copy the
  // weight out. Loading writes in place (as PyTorch's load_state_dict), so the data race
  // on the values is the caller's (the header says so): each element must be A's or B's.
  char a_path[64], b_path[64];
  std::snprintf(a_path, sizeof a_path, "/tmp/dt-race-a-%d.safetensors", static_cast<int>(getpid()));
  std::snprintf(b_path, sizeof b_path, "/tmp/dt-race-b-%d.safetensors", static_cast<int>(getpid()));
  const std::vector<float> a = weight_values(m_);
  DT_ASSERT_OK(dt_module_save(m_, a_path));
  M other;
  DT_ASSERT_OK(dt_linear_new(kIn, kOut, 1, DT_FLOAT32, cpu(0), other.out()));
  const std::vector<float> b = weight_values(other);
  DT_ASSERT_OK(dt_module_save(other, b_path));
  auto read = [&](dt_tensor* w, dt_tensor*) -> std::string {
    std::vector<float> got(a.size());
    CALLER_DATA_RACE_BEGIN();
    dt_status s = dt_tensor_copy_to_host(w, got.data(), got.size() * sizeof(float));
    CALLER_DATA_RACE_END();
    if (s != DT_OK) return status_text("copy_to_host", s);
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != a[i] && got[i] != b[i]) return "read " + std::to_string(got[i]) + " at " + std::to_string(i);
    return "";
  };
  int last = 0;
  race(m_, 200, read, [&](int i) {
    last = i;
    ASSERT_EQ(dt_module_load(m_, i % 2 ? a_path : b_path), DT_OK) << dt_last_error_message();
    ASSERT_EQ(dt_module_to(m_, cpu(i % 2)), DT_OK) << dt_last_error_message();
  });
  EXPECT_EQ(weight_values(m_), last % 2 ? a : b);
  std::remove(a_path);
  std::remove(b_path);
}

TEST_F(RacingReaders, SeeFiniteValuesWhileAnOptimizerSteps) {
  // Training on one thread (forward, backward, step, zero_grad) while others read the
  // weight and its gradient: no freed memory, no corrupted value.
  T w, b;
  DT_ASSERT_OK(dt_module_parameter(m_, 0, nullptr, 0, nullptr, w.out()));
  DT_ASSERT_OK(dt_module_parameter(m_, 1, nullptr, 0, nullptr, b.out()));
  const dt_tensor* params[] = {w, b};
  dt_optimizer* opt = nullptr;
  DT_ASSERT_OK(dt_sgd_new(params, 2, 0.01, 0.9, 0.0, 0.0, 0, &opt));
  const int64_t in_shape[] = {4, kIn};
  T x;
  DT_ASSERT_OK(dt_tensor_rand(in_shape, 2, DT_FLOAT32, cpu(0), x.out()));
  auto read = [&](dt_tensor* weight, dt_tensor*) -> std::string {
    std::vector<float> got(kIn * kOut);
    CALLER_DATA_RACE_BEGIN();
    dt_status s = dt_tensor_copy_to_host(weight, got.data(), got.size() * sizeof(float));
    CALLER_DATA_RACE_END();
    if (s != DT_OK) return status_text("copy_to_host", s);
    for (float v : got)
      if (!std::isfinite(v) || std::fabs(v) > 10) return "read " + std::to_string(v);
    T g;
    if ((s = dt_tensor_grad(weight, g.out())) != DT_OK) return status_text("grad", s);
    return "";
  };
  race(m_, 300, read, [&](int) {
    T y, loss;
    const dt_tensor* in[] = {x};
    ASSERT_EQ(dt_module_forward(m_, in, 1, y.out()), DT_OK) << dt_last_error_message();
    ASSERT_EQ(dt_mean(y, nullptr, 0, 0, loss.out()), DT_OK) << dt_last_error_message();
    ASSERT_EQ(dt_backward(loss, nullptr), DT_OK) << dt_last_error_message();
    ASSERT_EQ(dt_optimizer_step(opt), DT_OK) << dt_last_error_message();
    ASSERT_EQ(dt_optimizer_zero_grad(opt), DT_OK) << dt_last_error_message();
  });
  DT_ASSERT_OK(dt_optimizer_release(opt));
}

}  // namespace
