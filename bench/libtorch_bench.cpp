// libtorch_bench: the cases of devtensor_bench.cpp (same names, shapes, inputs) in
// libtorch C++, as a peer for bench/compare. Built only when libtorch is found
// (Debian: libtorch-dev).
//
// Thread count: --threads=N, else DT_BENCH_THREADS, else libtorch's default; applied with
// at::set_num_threads. libtorch's GEMM runs on OpenBLAS, whose thread count is read from
// OPENBLAS_NUM_THREADS when the library loads: bench/compare sets it to the same count.
// Every op case runs under torch::NoGradGuard (the training cases need autograd) and
// reports real (wall) time.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// The same inputs as devtensor_bench: uniform in [-1, 1) from a fixed LCG.
torch::Tensor make_input(std::vector<int64_t> shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> host(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 12345u;
  for (auto& v : host) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  return torch::from_blob(host.data(), shape, torch::kFloat32).clone();
}

template <class Op>
void run_op(benchmark::State& state, Op op) {
  torch::NoGradGuard no_grad;
  { auto warm = op(); }
  for (auto _ : state) {
    torch::Tensor out = op();
    benchmark::DoNotOptimize(out.data_ptr());
  }
}

void BM_add(benchmark::State& state, int64_t n) {
  auto a = make_input({n}, 1), b = make_input({n}, 2);
  run_op(state, [&] { return torch::add(a, b); });
  state.SetBytesProcessed(state.iterations() * n * 3 * int64_t(sizeof(float)));
}

void BM_sum(benchmark::State& state, int64_t n) {
  auto a = make_input({n}, 3);
  run_op(state, [&] { return torch::sum(a); });
  state.SetBytesProcessed(state.iterations() * n * int64_t(sizeof(float)));
}

void BM_softmax(benchmark::State& state, int64_t rows, int64_t cols) {
  auto a = make_input({rows, cols}, 4);
  run_op(state, [&] { return torch::softmax(a, -1); });
  state.SetBytesProcessed(state.iterations() * rows * cols * 2 * int64_t(sizeof(float)));
}

void BM_sgemm(benchmark::State& state, int64_t n) {
  auto a = make_input({n, n}, 5), b = make_input({n, n}, 6);
  run_op(state, [&] { return torch::matmul(a, b); });
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * n * n * n * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// One training step per iteration (with autograd, so outside NoGradGuard).
void BM_train(benchmark::State& state, std::vector<int64_t> widths, int64_t batch) {
  torch::manual_seed(0);
  torch::nn::Sequential model;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    model->push_back(torch::nn::Linear(widths[i], widths[i + 1]));
    if (i + 2 < widths.size() || widths.size() > 3) model->push_back(torch::nn::ReLU());
  }
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01));
  auto x = make_input({batch, widths.front()}, 7);
  std::vector<int64_t> labels(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) labels[static_cast<size_t>(i)] = (i * 7 + 3) % widths.back();
  auto y = torch::tensor(labels, torch::kInt64);
  auto step = [&] {
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  };
  step();
  for (auto _ : state) step();
  double flops = 0;
  for (size_t i = 0; i + 1 < widths.size(); ++i) flops += 6.0 * batch * widths[i] * widths[i + 1];
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
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
  if (threads > 0) at::set_num_threads(threads);
  benchmark::AddCustomContext("libtorch_threads", std::to_string(at::get_num_threads()));
  benchmark::AddCustomContext("libtorch_version", TORCH_VERSION);

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
