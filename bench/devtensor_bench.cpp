// devtensor_bench: Google Benchmark cases for devtensor, through the public C API only.
//
// The same cases, with the same names and shapes, are in libtorch_bench.cpp and
// numpy_bench.py; bench/compare runs the three side by side.
//
//   add_4              dt_add of two float32[4]; a fresh output each call (created and
//                      released every iteration, as a user would): per-call overhead
//   add_16M            dt_add of two float32[16M] (16*2^20), fresh output each call
//   sum_16M            dt_sum over all dims of float32[16M] (a 0-d result each call)
//   softmax_4096x1024  dt_softmax(x, dim -1) of float32[4096, 1024]
//   sgemm_1024         dt_matmul of two float32[1024, 1024]
//   sgemm_2048         dt_matmul of two float32[2048, 2048]
//   train_mlp_784_256_10  one training step (zero_grad, forward, cross-entropy, backward,
//                      SGD step) of Linear(784,256)-ReLU-Linear(256,10) at batch 64
//   train_linear16_256 the same for 16 x (Linear(256,256)+ReLU) at batch 128 (256 classes)
//
// Thread count: --threads=N, else the environment variable DT_BENCH_THREADS, else the
// library's default (DEVTENSOR_NUM_THREADS or the number of cores); set with
// dt_set_num_threads before any case runs. Every case reports real (wall) time.
#include <benchmark/benchmark.h>
#include <devtensor.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

const dt_device kCpu = {DT_DEVICE_CPU, 0};

using bench::error_text;
using bench::Tensor;

// Uniform values in [-1, 1) from a fixed LCG, the same on every run; copied into a new
// CPU float32 tensor with dt_tensor_from_data.
bool make_input(benchmark::State& state, std::vector<int64_t> shape, uint32_t seed, Tensor& out) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<float> host(n);
  uint32_t x = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    host[i] = static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  dt_status s = dt_tensor_from_data(host.data(), n * sizeof(float), shape.data(), shape.size(),
                                    DT_FLOAT32, kCpu, &out.t);
  if (s != DT_OK) {
    state.SkipWithError(error_text("dt_tensor_from_data", s).c_str());
    return false;
  }
  return true;
}

// Runs op once outside the timed loop so a missing op is reported, not timed.
template <class Op>
void run_op(benchmark::State& state, const char* name, Op op) {
  {
    dt_tensor* out = nullptr;
    dt_status s = op(&out);
    if (s != DT_OK) {
      state.SkipWithError(error_text(name, s).c_str());
      return;
    }
    dt_tensor_release(out);
  }
  for (auto _ : state) {
    dt_tensor* out = nullptr;
    dt_status s = op(&out);
    benchmark::DoNotOptimize(out);
    if (s != DT_OK) {
      state.SkipWithError(error_text(name, s).c_str());
      break;
    }
    dt_tensor_release(out);
  }
}

void BM_add(benchmark::State& state, int64_t n) {
  Tensor a, b;
  if (!make_input(state, {n}, 1, a) || !make_input(state, {n}, 2, b)) return;
  run_op(state, "dt_add", [&](dt_tensor** out) { return dt_add(a.t, b.t, out); });
  state.SetBytesProcessed(state.iterations() * n * 3 * int64_t(sizeof(float)));
}

void BM_sum(benchmark::State& state, int64_t n) {
  Tensor a;
  if (!make_input(state, {n}, 3, a)) return;
  run_op(state, "dt_sum", [&](dt_tensor** out) { return dt_sum(a.t, nullptr, 0, 0, out); });
  state.SetBytesProcessed(state.iterations() * n * int64_t(sizeof(float)));
}

void BM_softmax(benchmark::State& state, int64_t rows, int64_t cols) {
  Tensor a;
  if (!make_input(state, {rows, cols}, 4, a)) return;
  run_op(state, "dt_softmax", [&](dt_tensor** out) { return dt_softmax(a.t, -1, out); });
  state.SetBytesProcessed(state.iterations() * rows * cols * 2 * int64_t(sizeof(float)));
}

void BM_sgemm(benchmark::State& state, int64_t n) {
  Tensor a, b;
  if (!make_input(state, {n, n}, 5, a) || !make_input(state, {n, n}, 6, b)) return;
  run_op(state, "dt_matmul", [&](dt_tensor** out) { return dt_matmul(a.t, b.t, out); });
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * n * n * n * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// One training step per iteration, through modules, autograd and an optimizer.
void BM_train(benchmark::State& state, std::vector<int64_t> widths, int64_t batch) {
  std::vector<dt_module*> layers;
  dt_module *model = nullptr, *loss_fn = nullptr;
  dt_optimizer* opt = nullptr;
  std::vector<dt_tensor*> params;
  Tensor x, y;
  auto cleanup = [&] {
    for (dt_tensor* p : params) dt_tensor_release(p);
    dt_optimizer_release(opt);
    dt_module_release(loss_fn);
    dt_module_release(model);
    for (dt_module* m : layers) dt_module_release(m);
  };
  auto fail = [&](const char* what, dt_status s) {
    state.SkipWithError(error_text(what, s).c_str());
    cleanup();
  };
  dt_status s = dt_manual_seed(0);
  for (size_t i = 0; s == DT_OK && i + 1 < widths.size(); ++i) {
    dt_module* m = nullptr;
    s = dt_linear_new(widths[i], widths[i + 1], 1, DT_FLOAT32, kCpu, &m);
    if (s == DT_OK) layers.push_back(m);
    // ReLU after every Linear but the last of the MLP; after every one in the stack
    if (s == DT_OK && (i + 2 < widths.size() || widths.size() > 3)) {
      s = dt_relu_new(&m);
      if (s == DT_OK) layers.push_back(m);
    }
  }
  if (s == DT_OK) s = dt_sequential_new(layers.data(), layers.size(), &model);
  if (s == DT_OK) s = dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0.0, &loss_fn);
  size_t n = 0;
  if (s == DT_OK) s = dt_module_parameter_count(model, &n);
  for (size_t i = 0; s == DT_OK && i < n; ++i) {
    dt_tensor* p = nullptr;
    s = dt_module_parameter(model, i, nullptr, 0, nullptr, &p);
    if (s == DT_OK) params.push_back(p);
  }
  if (s == DT_OK) s = dt_sgd_new(params.data(), params.size(), 0.01, 0, 0, 0, 0, &opt);
  if (s != DT_OK) return fail("building the model", s);
  if (!make_input(state, {batch, widths.front()}, 7, x)) return cleanup();
  std::vector<int64_t> labels(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) labels[static_cast<size_t>(i)] = (i * 7 + 3) % widths.back();
  s = dt_tensor_from_data(labels.data(), labels.size() * 8, &batch, 1, DT_INT64, kCpu, &y.t);
  if (s != DT_OK) return fail("labels", s);
  auto step = [&]() -> dt_status {
    dt_tensor *logits = nullptr, *loss = nullptr;
    const dt_tensor* in[2] = {x.t, nullptr};
    dt_status st = dt_optimizer_zero_grad(opt);
    if (st == DT_OK) st = dt_module_forward(model, in, 1, &logits);
    in[0] = logits;
    in[1] = y.t;
    if (st == DT_OK) st = dt_module_forward(loss_fn, in, 2, &loss);
    if (st == DT_OK) st = dt_backward(loss, nullptr);
    if (st == DT_OK) st = dt_optimizer_step(opt);
    dt_tensor_release(logits);
    dt_tensor_release(loss);
    return st;
  };
  if ((s = step()) != DT_OK) return fail("training step", s);
  for (auto _ : state) {
    if ((s = step()) != DT_OK) {
      state.SkipWithError(error_text("training step", s).c_str());
      break;
    }
  }
  double flops = 0;  // forward, then backward's two products per layer
  for (size_t i = 0; i + 1 < widths.size(); ++i) flops += 6.0 * batch * widths[i] * widths[i + 1];
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  cleanup();
}

int parse_threads(int* argc, char** argv) {
  int threads = 0;
  int w = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      threads = std::atoi(argv[i] + 10);
    } else {
      argv[w++] = argv[i];
    }
  }
  *argc = w;
  if (threads == 0) {
    const char* env = std::getenv("DT_BENCH_THREADS");
    if (env && *env) threads = std::atoi(env);
  }
  return threads;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = parse_threads(&argc, argv);
  if (threads > 0) {
    dt_status s = dt_set_num_threads(threads);
    if (s != DT_OK) {
      std::fprintf(stderr, "devtensor_bench: %s\n", error_text("dt_set_num_threads", s).c_str());
      return 2;
    }
  }
  int32_t used = 0;
  if (dt_num_threads(&used) == DT_OK) {
    benchmark::AddCustomContext("devtensor_threads", std::to_string(used));
  }
  benchmark::AddCustomContext("devtensor_version", dt_version_string());

  const int64_t k16M = int64_t(16) << 20;
  benchmark::RegisterBenchmark("add_4", BM_add, int64_t(4))->UseRealTime()->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("add_16M", BM_add, k16M)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sum_16M", BM_sum, k16M)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("softmax_4096x1024", BM_softmax, int64_t(4096), int64_t(1024))
      ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sgemm_1024", BM_sgemm, int64_t(1024))->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sgemm_2048", BM_sgemm, int64_t(2048))->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_mlp_784_256_10", BM_train, std::vector<int64_t>{784, 256, 10}, int64_t(64))
      ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_linear16_256", BM_train, std::vector<int64_t>(17, 256), int64_t(128))
      ->UseRealTime()->Unit(benchmark::kMillisecond);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
