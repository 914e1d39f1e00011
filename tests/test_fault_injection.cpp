// The allocation fault-injection sweep (SQLite's method, src/core/fault_injection.h): a
// workload that touches tensors, views, ops, dtype and device moves, DLPack, printing,
// streams and events, modules,
// autograd, an optimizer and safetensors save/load runs once per N with the Nth
// allocation failing (transiently, then persistently), N = 1, 2, ... until a run passes
// without reaching N. Every run must end in success or DT_ERR_OUT_OF_MEMORY, leave no
// live handle behind, and leave the library usable (the workload then passes untouched).
// Leaks are LSan's to find: the ASan build runs this test too. On a machine with a GPU
// the workload also runs on cuda:0, so device allocations fail as well.
#include <dlpack/dlpack.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../src/api/testing.h"
#include "support/dt_test.h"

namespace {

struct Module {
  dt_module* m = nullptr;
  ~Module() { dt_module_release(m); }
};
struct Optimizer {
  dt_optimizer* o = nullptr;
  ~Optimizer() { dt_optimizer_release(o); }
};

struct Stream {
  dt_stream* s = nullptr;
  ~Stream() { dt_stream_release(s); }
};
struct Event {
  dt_event* e = nullptr;
  ~Event() { dt_event_release(e); }
};
// Restores the thread's stream it replaced (when set) on every way out.
struct ThreadStream {
  dt_stream* previous = nullptr;
  ~ThreadStream() {
    if (previous) dt_set_thread_stream(previous, nullptr);
    dt_stream_release(previous);
  }
};

#define STEP(expr)               \
  do {                           \
    dt_status s_ = (expr);       \
    if (s_ != DT_OK) return s_;  \
  } while (0)

// Touches every feature once; returns the first failing status. Every object is owned by
// an RAII holder, so an early return releases what was made.
dt_status workload(dt_device dev, const char* path) {
  const int64_t shape[] = {4, 3};
  const float data[12] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12};
  T x, y, z, v, w, s, cat_out, big, moved, half;
  STEP(dt_tensor_from_data(data, sizeof data, shape, 2, DT_FLOAT32, dev, x.out()));
  STEP(dt_tensor_rand(shape, 2, DT_FLOAT32, dev, y.out()));
  STEP(dt_add(x, y, z.out()));
  STEP(dt_transpose(z, 0, 1, v.out()));
  STEP(dt_matmul(x, v, w.out()));
  STEP(dt_softmax(w, -1, s.out()));
  const dt_tensor* parts[] = {x, z};
  STEP(dt_cat(parts, 2, 0, cat_out.out()));
  const int64_t big_shape[] = {256, 1024};  // 1 MiB: the large-block host path
  STEP(dt_tensor_zeros(big_shape, 2, DT_FLOAT32, dev, big.out()));
  STEP(dt_tensor_to(cat_out, dt_device{DT_DEVICE_CPU, 0}, DT_FLOAT16, 0, half.out()));
  STEP(dt_tensor_to(half, dev, DT_FLOAT32, DT_TO_COPY, moved.out()));
  // DLPack out and back in: on a failed import the managed tensor is still ours.
  DLManagedTensor* managed = nullptr;
  STEP(dt_tensor_to_dlpack(moved, &managed));
  T imported;
  dt_status st = dt_tensor_from_dlpack(managed, imported.out());
  if (st != DT_OK) {
    managed->deleter(managed);
    return st;
  }
  char text[512];
  size_t need = 0;
  STEP(dt_tensor_to_string(s, text, sizeof text, &need));

  // A module, autograd and an optimizer step.
  Module lin, relu, seq, loss;
  STEP(dt_linear_new(3, 5, 1, DT_FLOAT32, dev, &lin.m));
  STEP(dt_relu_new(&relu.m));
  dt_module* chain[] = {lin.m, relu.m};
  STEP(dt_sequential_new(chain, 2, &seq.m));
  STEP(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0.0, &loss.m));
  T p0, p1, logits, target, l;
  STEP(dt_module_parameter(seq.m, 0, nullptr, 0, &need, p0.out()));
  STEP(dt_module_parameter(seq.m, 1, nullptr, 0, &need, p1.out()));
  const dt_tensor* params[] = {p0, p1};
  Optimizer sgd;
  STEP(dt_sgd_new(params, 2, 0.1, 0.9, 0.0, 0.0, 0, &sgd.o));
  const dt_tensor* in[] = {x};
  STEP(dt_module_forward(seq.m, in, 1, logits.out()));
  const int64_t labels[] = {0, 1, 2, 3};
  const int64_t n4[] = {4};
  STEP(dt_tensor_from_data(labels, sizeof labels, n4, 1, DT_INT64, dev, target.out()));
  const dt_tensor* loss_in[] = {logits, target};
  STEP(dt_module_forward(loss.m, loss_in, 2, l.out()));
  STEP(dt_backward(l, nullptr));
  STEP(dt_optimizer_step(sgd.o));
  STEP(dt_optimizer_zero_grad(sgd.o));

  // Streams and events: a product on a stream of its own, between two events, its input
  // recorded for that stream.
  Stream side;
  Event e0, e1;
  STEP(dt_stream_create(dev, &side.s));
  STEP(dt_event_create(dev, &e0.e));
  STEP(dt_event_create(dev, &e1.e));
  {
    ThreadStream scope;
    STEP(dt_set_thread_stream(side.s, &scope.previous));
    STEP(dt_event_record(e0.e, nullptr));
    T on_side;
    STEP(dt_mul(x, x, on_side.out()));
    STEP(dt_event_record(e1.e, nullptr));
    STEP(dt_tensor_record_stream(x, side.s));
  }
  float ms = 0;
  STEP(dt_event_elapsed_ms(e0.e, e1.e, &ms));
  // Save and load back (safetensors, mapped on load).
  STEP(dt_module_save(seq.m, path));
  STEP(dt_module_load(seq.m, path));
  return DT_OK;
}

class FaultInjection : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::snprintf(path_, sizeof path_, "/tmp/devtensor-fault-%d-%d.safetensors", static_cast<int>(getpid()),
                  GetParam() ? 1 : 0);
  }
  void TearDown() override {
    dt_testing_fail_allocation(0, 0);
    std::remove(path_);
  }
  // Sweeps one device; returns the number of allocation sites reached.
  int64_t sweep(dt_device dev) {
    const bool persistent = GetParam();
    const size_t live = dt_live_handle_count();
    int64_t n = 1;
    int64_t failures = 0;
    for (;; ++n) {
      dt_testing_fail_allocation(n, persistent ? 1 : 0);
      dt_status st = workload(dev, path_);
      const int64_t seen = dt_testing_allocation_count();
      dt_testing_fail_allocation(0, 0);
      std::string why = st == DT_OK ? "" : dt_last_error_message();
      EXPECT_TRUE(st == DT_OK || st == DT_ERR_OUT_OF_MEMORY)
          << "N=" << n << ": " << dt_status_string(st) << ": " << why;
      if (st == DT_ERR_OUT_OF_MEMORY) ++failures;
      EXPECT_EQ(dt_live_handle_count(), live) << "N=" << n << " left handles behind";
      if (seen < n) break;  // the Nth allocation never came: the workload ran untouched
      // Usable afterwards: the same workload succeeds with nothing failing.
      dt_status again = workload(dev, path_);
      EXPECT_EQ(again, DT_OK) << "N=" << n << ": the library is not usable after the failure: "
                              << dt_last_error_message();
      if (::testing::Test::HasFailure()) break;
    }
    EXPECT_EQ(workload(dev, path_), DT_OK);
    EXPECT_GT(failures, 0) << "no injected failure surfaced as DT_ERR_OUT_OF_MEMORY";
    std::printf("[ sweep    ] %s, %s: %lld allocation sites failed in turn, %lld runs ended in "
                "DT_ERR_OUT_OF_MEMORY\n",
                dev.type == DT_DEVICE_CPU ? "cpu:0" : "cuda:0", persistent ? "persistent" : "transient",
                static_cast<long long>(n - 1), static_cast<long long>(failures));
    return n - 1;
  }
  char path_[128];
};

TEST_P(FaultInjection, EveryAllocationFailureIsAnErrorAndLeavesNothingBehind) {
  EXPECT_GT(sweep(dt_device{DT_DEVICE_CPU, 0}), 20);
}

TEST_P(FaultInjection, OnTheGpuToo) {
  if (!dt_cuda_is_available()) GTEST_SKIP() << "CUDA is not available";
  EXPECT_GT(sweep(dt_device{DT_DEVICE_CUDA, 0}), 20);
}

// ---- a training step is all or nothing (issue 16.3)
//
// Two identical models train side by side; every dt_backward and dt_optimizer_step of
// the second first runs with its 1st, 2nd, ... allocation failing, until one run gets
// through. Each failed call must leave every parameter and .grad exactly as it was, and
// a retry must then do exactly what the first model's single call did: after three
// steps the parameters are bit-identical (a momentum buffer or an Adam step counter
// advanced by a failed call would show).

// SgdMomentum has weight decay and runs the unfused step; SgdFused has none and runs
// ops::sgd_step_, whose first step allocates the momentum buffers before any write.
enum class Opt { SgdMomentum, SgdFused, Adam, AdamW };

struct Trainer {
  Module seq, l0, act, l1, loss;
  Optimizer opt;
  T params[4];
  dt_status init(Opt kind) {
    STEP(dt_manual_seed(7));
    STEP(dt_linear_new(4, 5, 1, DT_FLOAT32, dt_device{DT_DEVICE_CPU, 0}, &l0.m));
    STEP(dt_tanh_new(&act.m));
    STEP(dt_linear_new(5, 3, 1, DT_FLOAT32, dt_device{DT_DEVICE_CPU, 0}, &l1.m));
    dt_module* chain[] = {l0.m, act.m, l1.m};
    STEP(dt_sequential_new(chain, 3, &seq.m));
    STEP(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0.0, &loss.m));
    const dt_tensor* ps[4];
    for (size_t i = 0; i < 4; ++i) {
      STEP(dt_module_parameter(seq.m, i, nullptr, 0, nullptr, params[i].out()));
      ps[i] = params[i];
    }
    switch (kind) {
      case Opt::SgdMomentum: return dt_sgd_new(ps, 4, 0.1, 0.9, 0.0, 0.01, 1, &opt.o);
      case Opt::SgdFused: return dt_sgd_new(ps, 4, 0.1, 0.9, 0.0, 0.0, 0, &opt.o);
      case Opt::Adam: return dt_adam_new(ps, 4, 0.05, 0.9, 0.999, 1e-8, 0.01, 0, &opt.o);
      case Opt::AdamW: return dt_adam_new(ps, 4, 0.05, 0.9, 0.999, 1e-8, 0.01, 1, &opt.o);
    }
    return DT_ERR_INTERNAL;
  }
  // The loss of one batch (step k's), recorded for backward.
  dt_status forward(int k, T* l) {
    float x[12];
    for (int i = 0; i < 12; ++i) x[i] = static_cast<float>((i * 7 + k * 3) % 11) / 5.0f - 1.0f;
    const int64_t labels[3] = {k % 3, (k + 1) % 3, 2};
    const int64_t xs[] = {3, 4}, ys[] = {3};
    T in, target, logits;
    STEP(dt_tensor_from_data(x, sizeof x, xs, 2, DT_FLOAT32, dt_device{DT_DEVICE_CPU, 0}, in.out()));
    STEP(dt_tensor_from_data(labels, sizeof labels, ys, 1, DT_INT64, dt_device{DT_DEVICE_CPU, 0}, target.out()));
    const dt_tensor* a[] = {in};
    STEP(dt_module_forward(seq.m, a, 1, logits.out()));
    const dt_tensor* b[] = {logits, target};
    return dt_module_forward(loss.m, b, 2, l->out());
  }
  // Every parameter's values, then every .grad's (empty for none), as bytes.
  std::vector<std::vector<float>> state() {
    std::vector<std::vector<float>> out;
    for (T& p : params) out.push_back(values<float>(p));
    for (T& p : params) {
      T g;
      EXPECT_EQ(dt_tensor_grad(p, g.out()), DT_OK);
      out.push_back(g.get() ? values<float>(g) : std::vector<float>());
    }
    return out;
  }
};

// Runs call with its Nth allocation failing, N = 1, 2, ..., until it succeeds; checks
// that every failure was DT_ERR_OUT_OF_MEMORY and changed nothing. Returns the failures.
template <typename Call>
int fail_until_done(Trainer& t, const char* what, const Call& call) {
  int failures = 0;
  for (int64_t n = 1;; ++n) {
    const auto before = t.state();
    dt_testing_fail_allocation(n, 0);
    const dt_status st = call();
    const int64_t seen = dt_testing_allocation_count();
    dt_testing_fail_allocation(0, 0);
    if (st == DT_OK) {
      EXPECT_LT(seen, n) << what << " succeeded although allocation " << n << " failed";
      return failures;
    }
    ++failures;
    EXPECT_EQ(st, DT_ERR_OUT_OF_MEMORY) << what << ", N=" << n << ": " << dt_last_error_message();
    EXPECT_EQ(t.state(), before) << what << " failed at allocation " << n << " but changed parameters or gradients";
    if (::testing::Test::HasFailure()) return failures;
  }
}

class AllOrNothing : public ::testing::TestWithParam<Opt> {};

TEST_P(AllOrNothing, AFailedBackwardOrStepChangesNothingAndARetryDoesItOnce) {
  const size_t live = dt_live_handle_count();
  {
    Trainer clean, faulted;
    ASSERT_EQ(clean.init(GetParam()), DT_OK) << dt_last_error_message();
    ASSERT_EQ(faulted.init(GetParam()), DT_OK) << dt_last_error_message();
    ASSERT_EQ(clean.state(), faulted.state());
    int backward_failures = 0, step_failures = 0;
    for (int k = 0; k < 3; ++k) {
      T lc, lf;
      ASSERT_EQ(clean.forward(k, &lc), DT_OK) << dt_last_error_message();
      ASSERT_EQ(faulted.forward(k, &lf), DT_OK) << dt_last_error_message();
      ASSERT_EQ(dt_backward(lc, nullptr), DT_OK);
      ASSERT_EQ(dt_optimizer_step(clean.opt.o), DT_OK);
      backward_failures += fail_until_done(faulted, "dt_backward", [&] { return dt_backward(lf, nullptr); });
      step_failures += fail_until_done(faulted, "dt_optimizer_step", [&] { return dt_optimizer_step(faulted.opt.o); });
      ASSERT_FALSE(HasFailure());
      ASSERT_EQ(clean.state(), faulted.state()) << "after step " << k;
      ASSERT_EQ(dt_optimizer_zero_grad(clean.opt.o), DT_OK);
      ASSERT_EQ(dt_optimizer_zero_grad(faulted.opt.o), DT_OK);
    }
    EXPECT_GT(backward_failures, 3);
    EXPECT_GT(step_failures, 3);
    std::printf("[ all-or-nothing ] %d failed backward calls, %d failed steps, each changing nothing\n",
                backward_failures, step_failures);
  }
  EXPECT_EQ(dt_live_handle_count(), live);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, AllOrNothing,
                         ::testing::Values(Opt::SgdMomentum, Opt::SgdFused, Opt::Adam, Opt::AdamW),
                         [](const ::testing::TestParamInfo<Opt>& i) {
                           switch (i.param) {
                             case Opt::SgdMomentum: return "SgdMomentum";
                             case Opt::SgdFused: return "SgdFused";
                             case Opt::Adam: return "Adam";
                             case Opt::AdamW: return "AdamW";
                           }
                           return "?";
                         });

INSTANTIATE_TEST_SUITE_P(Sweep, FaultInjection, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Persistent" : "Transient"; });

}  // namespace
