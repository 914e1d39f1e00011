// libtorch_bench: the cases of devtensor_bench.cpp (same names, shapes, inputs) in
// libtorch C++, as a peer for bench/compare. Built only when libtorch is found
// (Debian: libtorch-dev).
//
// Thread count: --threads=N, else DT_BENCH_THREADS, else libtorch's default; applied with
// at::set_num_threads. libtorch's GEMM runs on OpenBLAS, whose thread count is read from
// OPENBLAS_NUM_THREADS when the library loads: bench/compare sets it to the same count.
// Every op case runs under torch::NoGradGuard (the training cases need autograd) and
// reports real (wall) time.
//
// Device: --device=NAME (cpu, cuda, cuda:0; default cpu) puts inputs and models there.
// On CUDA the timed loop synchronises after every 16th call and after the last one,
// inside the timed span, after 3 untimed calls and a synchronisation: devtensor_bench's
// policy. TF32 is off in cuBLAS and cuDNN (devtensor's default; PyTorch's is on for
// cuDNN). bench/gpu/build-libtorch-bench builds this file against the libtorch of a CUDA
// PyTorch on a GPU machine.
#include <benchmark/benchmark.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

torch::Device g_device(torch::kCPU);  // --device

// The timed loop's synchronisation on CUDA (see "Device" above); nothing on the CPU.
constexpr int64_t kSyncEvery = 16;
void sync_if_due(int64_t done, int64_t last) {
  if (g_device.is_cuda() && (done % kSyncEvery == 0 || done == last)) torch::cuda::synchronize();
}
template <class Call>
void warm_up(Call call) {
  if (!g_device.is_cuda()) return;
  for (int i = 0; i < 3; ++i) call();
  torch::cuda::synchronize();
}
// The timed loop: call() per iteration, synchronised as above.
template <class Call>
void timed(benchmark::State& state, Call call) {
  warm_up(call);
  const int64_t last = static_cast<int64_t>(state.max_iterations);
  int64_t done = 0;
  for (auto _ : state) {
    call();
    sync_if_due(++done, last);
  }
}

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
  return torch::from_blob(host.data(), shape, torch::kFloat32).clone().to(g_device);
}

template <class Op>
void run_op(benchmark::State& state, Op op) {
  torch::NoGradGuard no_grad;
  { auto warm = op(); }
  timed(state, [&] {
    torch::Tensor out = op();
    benchmark::DoNotOptimize(out.data_ptr());
  });
}

// custom_module_4: relu(lin(x)) + x in a torch::nn::Module subclass with a Linear(4, 4)
// child, on [1, 4] under NoGradGuard (devtensor's side: a dt_module_new module).
struct ResidualImpl : torch::nn::Module {
  torch::nn::Linear lin{nullptr};
  ResidualImpl() { lin = register_module("lin", torch::nn::Linear(4, 4)); }
  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(lin(x)) + x; }
};
TORCH_MODULE(Residual);

void BM_custom_module(benchmark::State& state) {
  Residual block;
  block->to(g_device);
  torch::Tensor x = make_input({1, 4}, 1);
  run_op(state, [&] { return block(x); });
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
  model->to(g_device);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01));
  auto x = make_input({batch, widths.front()}, 7);
  std::vector<int64_t> labels(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) labels[static_cast<size_t>(i)] = (i * 7 + 3) % widths.back();
  auto y = torch::tensor(labels, torch::kInt64).to(g_device);
  auto step = [&] {
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  };
  step();
  timed(state, step);
  double flops = 0;
  for (size_t i = 0; i + 1 < widths.size(); ++i) flops += 6.0 * batch * widths[i] * widths[i + 1];
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// One SGD step (lr 0.01, momentum 0.9) over the 784-256-10 MLP's parameter shapes with
// fixed gradients, as devtensor_bench's sgd_step_203k.
void BM_sgd_step(benchmark::State& state) {
  std::vector<torch::Tensor> params;
  uint32_t seed = 20;
  for (std::vector<int64_t> shape : {std::vector<int64_t>{256, 784}, {256}, {10, 256}, {10}}) {
    auto p = make_input(shape, seed).requires_grad_(true);
    p.mutable_grad() = make_input(shape, seed + 10);
    ++seed;
    params.push_back(p);
  }
  torch::optim::SGD opt(params, torch::optim::SGDOptions(0.01).momentum(0.9));
  opt.step();
  timed(state, [&] { opt.step(); });
  state.SetBytesProcessed(state.iterations() * 203530 * 5 * int64_t(sizeof(float)));
}

// The same module-based steps as devtensor_bench: zero_grad, forward, cross-entropy,
// backward, SGD step.
template <class Forward>
void train_steps(benchmark::State& state, std::vector<torch::Tensor> params, Forward forward, const torch::Tensor& y,
                 double flops) {
  torch::optim::SGD opt(params, torch::optim::SGDOptions(0.01));
  auto step = [&] {
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(forward(), y);
    loss.backward();
    opt.step();
  };
  step();
  timed(state, step);
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

torch::Tensor labels_of(int64_t n, int64_t classes) {
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[static_cast<size_t>(i)] = (i * 7 + 3) % classes;
  return torch::tensor(labels, torch::kInt64).to(g_device);
}

void BM_lenet5(benchmark::State& state) {
  torch::manual_seed(0);
  namespace nn = torch::nn;
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 6, 5)), nn::ReLU(), nn::MaxPool2d(2),
                       nn::Conv2d(nn::Conv2dOptions(6, 16, 5)), nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(),
                       nn::Linear(256, 120), nn::ReLU(), nn::Linear(120, 84), nn::ReLU(), nn::Linear(84, 10));
  model->to(g_device);
  auto x = make_input({64, 1, 28, 28}, 8);
  const double macs = 6.0 * 24 * 24 * 25 + 16.0 * 8 * 8 * 150 + 256.0 * 120 + 120.0 * 84 + 84.0 * 10;
  train_steps(state, model->parameters(), [&] { return model->forward(x); }, labels_of(64, 10), 6.0 * 64 * macs);
}

// libtorch 1.13's C++ TransformerEncoderLayer has no batch_first: the input is [256, 8,
// 512] (sequence first), the same math as devtensor's batch_first [8, 256, 512].
void BM_transformer_layer(benchmark::State& state) {
  torch::manual_seed(0);
  namespace nn = torch::nn;
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(512, 8).dim_feedforward(2048).dropout(0.0));
  nn::Linear head(512, 16);
  layer->to(g_device);
  head->to(g_device);
  auto x = make_input({256, 8, 512}, 9);
  auto params = layer->parameters();
  for (auto& p : head->parameters()) params.push_back(p);
  const double macs = 8.0 * 256 * (4.0 * 512 * 512 + 2.0 * 512 * 2048 + 2.0 * 256 * 512);
  train_steps(state, params, [&] { return head->forward(layer->forward(x).flatten(0, 1)); }, labels_of(8 * 256, 16),
              6.0 * macs);
}

// ResNet-18 (torchvision's layout, eval mode, forward only) on [8, 3, 224, 224].
struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride) {
    namespace nn = torch::nn;
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)));
    bn1 = register_module("bn1", nn::BatchNorm2d(out));
    conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(out, out, 3).padding(1).bias(false)));
    bn2 = register_module("bn2", nn::BatchNorm2d(out));
    if (stride != 1 || in != out) {
      down_conv = register_module("down_conv", nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)));
      down_bn = register_module("down_bn", nn::BatchNorm2d(out));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = bn2(conv2(torch::relu(bn1(conv1(x)))));
    auto shortcut = down_conv ? down_bn(down_conv(x)) : x;
    return torch::relu(y + shortcut);
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, down_conv{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, down_bn{nullptr};
};
TORCH_MODULE(BasicBlock);

void BM_resnet18_fwd(benchmark::State& state) {
  torch::manual_seed(0);
  namespace nn = torch::nn;
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)), nn::BatchNorm2d(64),
                     nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  int64_t width = 64;
  for (int64_t out : {64, 128, 256, 512}) {
    net->push_back(BasicBlock(width, out, out == 64 ? 1 : 2));
    net->push_back(BasicBlock(out, out, 1));
    width = out;
  }
  net->push_back(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})));
  net->push_back(nn::Flatten());
  net->push_back(nn::Linear(512, 1000));
  net->eval();
  net->to(g_device);
  auto x = make_input({8, 3, 224, 224}, 10);
  run_op(state, [&] { return net->forward(x); });
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * 8 * 1.814e9 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Attention alone, as devtensor_bench's sdpa_8x8x1024x64: forward of float32 [8, 8, 1024,
// 64] query, key and value, no mask (libtorch 2's fused scaled_dot_product_attention;
// before 2.0 there is none, and the case is skipped).
void BM_sdpa(benchmark::State& state) {
#if TORCH_VERSION_MAJOR >= 2
  auto q = make_input({8, 8, 1024, 64}, 11), k = make_input({8, 8, 1024, 64}, 12), v = make_input({8, 8, 1024, 64}, 13);
  run_op(state, [&] { return at::scaled_dot_product_attention(q, k, v); });
  state.counters["GFLOPS"] = benchmark::Counter(4.0 * 64 * 1024 * 1024 * 64 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
#else
  state.SkipWithError("libtorch before 2.0 has no scaled_dot_product_attention");
#endif
}

// --device=NAME (see the header).
void parse_device(int* argc, char** argv) {
  int w = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], "--device=", 9) == 0) {
      g_device = torch::Device(std::string(argv[i] + 9));
    } else {
      argv[w++] = argv[i];
    }
  }
  *argc = w;
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
  parse_device(&argc, argv);
  if (g_device.is_cuda() && !torch::cuda::is_available()) {
    std::fprintf(stderr, "libtorch_bench: --device=%s but libtorch sees no CUDA device\n", g_device.str().c_str());
    return 3;
  }
  if (g_device.is_cuda()) {  // float32 arithmetic in cuBLAS and cuDNN, as devtensor's default
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
  }
  int threads = parse_threads(&argc, argv);
  if (threads > 0) at::set_num_threads(threads);
  benchmark::AddCustomContext("libtorch_threads", std::to_string(at::get_num_threads()));
  benchmark::AddCustomContext("libtorch_version", TORCH_VERSION);
  benchmark::AddCustomContext("libtorch_device", g_device.str());

  const int64_t k16M = int64_t(16) << 20;
  benchmark::RegisterBenchmark("add_4", BM_add, int64_t(4))->UseRealTime()->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("add_16M", BM_add, k16M)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sum_16M", BM_sum, k16M)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sgd_step_203k", BM_sgd_step)->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("softmax_4096x1024", BM_softmax, int64_t(4096), int64_t(1024))
      ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sgemm_1024", BM_sgemm, int64_t(1024))->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sgemm_2048", BM_sgemm, int64_t(2048))->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_mlp_784_256_10", BM_train, std::vector<int64_t>{784, 256, 10}, int64_t(64))
      ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("resnet18_fwd", BM_resnet18_fwd)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_lenet5", BM_lenet5)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("transformer_layer_train", BM_transformer_layer)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_linear16_256", BM_train, std::vector<int64_t>(17, 256), int64_t(128))
      ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sdpa_8x8x1024x64", BM_sdpa)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("custom_module_4", BM_custom_module)->UseRealTime()->Unit(benchmark::kNanosecond);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
