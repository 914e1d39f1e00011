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
//   train_*_graph      those two steps captured once into a graph and replayed
//                      (dt_graph_replay); devtensor only, compared with its eager case
//   sgd_step_203k      one SGD step (momentum 0.9) over the 784-256-10 MLP's parameter
//                      shapes with fixed gradients; _unfused: the same through the op-by-op
//                      path (devtensor only)
//   train_lenet5       the same for LeNet-5 at batch 64 on 28x28 images
//   resnet18_fwd       ResNet-18's eval forward (functional ops) on [8, 3, 224, 224];
//                      _issue: the host's time to queue one (devtensor only)
//   transformer_layer_train  the same for one TransformerEncoderLayer(512, 8 heads, ff 2048)
//                      on [8, 256, 512] with a Linear(512, 16) head over the 2048 tokens
//
//   lstm_train         the same for a 2-layer LSTM(256, 256, batch_first) on [16, 64, 256]
//                      with a Linear(256, 16) head over the 1024 steps (peer:
//                      bench/pytorch_bench.py only)
//
//   sdpa_8x8x1024x64   dt_scaled_dot_product_attention forward of float32 [8, 8, 1024, 64]
//                      query, key and value (no mask)
//   custom_module_4    a module of the caller's (dt_module_new) computing relu(lin(x)) + x
//                      with its child Linear(4, 4) on [1, 4], without autograd: the cost
//                      of a user-written module per call
//
// Thread count: --threads=N, else the environment variable DT_BENCH_THREADS, else the
// library's default (DEVTENSOR_NUM_THREADS or the number of cores); set with
// dt_set_num_threads before any case runs. Every case reports real (wall) time.
//
// Device: --device=NAME (default cpu:0; e.g. cuda:0) puts every input, model and weight
// there; bench/compare --device runs the GPU comparison this way. On a device with
// asynchronous work the timed loop synchronises (dt_synchronize) after every 16th call
// and after the last one, inside the timed span, and a case warms up with 3 untimed
// calls and a synchronisation: the policy of libtorch_bench.cpp and pytorch_bench.py.
#include <benchmark/benchmark.h>
#include <devtensor.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

const dt_device kCpu = {DT_DEVICE_CPU, 0};
dt_device g_device = kCpu;  // --device: where the cases run

// The timed loops' synchronisation (see "Device" above): a no-op on the CPU, where every
// call has finished when it returns.
constexpr int64_t kSyncEvery = 16;
bool async_device() { return g_device.type != DT_DEVICE_CPU; }
dt_status sync_if_due(int64_t done, int64_t last) {
  if (!async_device() || (done % kSyncEvery != 0 && done != last)) return DT_OK;
  return dt_synchronize(g_device);
}

using bench::error_text;
using bench::Tensor;

// Moves t to g_device (nothing to do on the CPU).
bool to_device(benchmark::State& state, Tensor& t) {
  if (g_device.type == kCpu.type && g_device.index == kCpu.index) return true;
  dt_tensor* moved = nullptr;
  dt_status s = dt_tensor_to(t.t, g_device, DT_DTYPE_DEFAULT, 0, &moved);
  if (s != DT_OK) {
    state.SkipWithError(error_text("dt_tensor_to (--device)", s).c_str());
    return false;
  }
  dt_tensor_release(t.t);
  t.t = moved;
  return true;
}

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
  return to_device(state, out);
}

// On an asynchronous device: 3 untimed calls of call() and a synchronisation, so module
// loading, library handles and the caching allocator stay out of the timings.
template <class Call>
bool warm_up(benchmark::State& state, const char* name, Call call) {
  if (!async_device()) return true;
  dt_status s = DT_OK;
  for (int i = 0; i < 3 && s == DT_OK; ++i) s = call();
  if (s == DT_OK) s = dt_synchronize(g_device);
  if (s != DT_OK) state.SkipWithError(error_text(name, s).c_str());
  return s == DT_OK;
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
  if (!warm_up(state, name, [&] {
        dt_tensor* out = nullptr;
        dt_status s = op(&out);
        dt_tensor_release(out);
        return s;
      }))
    return;
  const int64_t last = static_cast<int64_t>(state.max_iterations);
  int64_t done = 0;
  for (auto _ : state) {
    dt_tensor* out = nullptr;
    dt_status s = op(&out);
    benchmark::DoNotOptimize(out);
    dt_tensor_release(out);
    if (s == DT_OK) s = sync_if_due(++done, last);
    if (s != DT_OK) {
      state.SkipWithError(error_text(name, s).c_str());
      break;
    }
  }
}

// custom_module_4: relu(lin(x)) + x, a module of the caller's (dt_module_new) whose forward
// reaches its child Linear(4, 4) through self, on [1, 4] without autograd: what a module a
// user writes costs per call (libtorch's side: a torch::nn::Module subclass).
dt_status residual_forward(dt_module* self, dt_tensor* const* in, size_t, void*, dt_tensor** out) {
  dt_module* lin = nullptr;
  dt_tensor *h = nullptr, *r = nullptr;
  dt_status s = dt_module_child(self, "lin", &lin);
  if (s == DT_OK) s = dt_module_forward(lin, in, 1, &h);
  if (s == DT_OK) s = dt_relu(h, &r);
  if (s == DT_OK) s = dt_add(r, in[0], out);
  dt_module_release(lin);
  dt_tensor_release(h);
  dt_tensor_release(r);
  return s;
}

void BM_custom_module(benchmark::State& state) {
  bench::Module lin, block;
  Tensor x;
  dt_status s = dt_linear_new(4, 4, 1, DT_FLOAT32, g_device, &lin.m);
  const char* names[] = {"lin"};
  dt_module* children[] = {lin.m};
  dt_module_spec spec{};
  spec.struct_size = sizeof spec;
  spec.kind = "Residual";
  spec.n_children = 1;
  spec.child_names = names;
  spec.children = children;
  spec.forward = residual_forward;
  if (s == DT_OK) s = dt_module_new(&spec, &block.m);
  if (s != DT_OK) {
    state.SkipWithError(error_text("dt_module_new", s).c_str());
    return;
  }
  if (!make_input(state, {1, 4}, 1, x)) return;
  int32_t previous = 0;
  dt_set_thread_grad_mode(0, &previous);
  run_op(state, "dt_module_forward", [&](dt_tensor** out) {
    const dt_tensor* in[] = {x.t};
    return dt_module_forward(block.m, in, 1, out);
  });
  dt_set_thread_grad_mode(previous, nullptr);
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

// One training step per iteration of `model` (owned: released here) on input x and
// labels y: zero_grad, forward, cross-entropy, backward, SGD step.
// graph: after the first (eager) step, capture one step on a stream of its own and time
// its replays instead (dt_graph_*: the same kernels, without the per-call front end).
void train_loop(benchmark::State& state, dt_module* model, Tensor& x, Tensor& y, double flops, bool graph = false) {
  dt_module* loss_fn = nullptr;
  dt_optimizer* opt = nullptr;
  dt_stream* stream = nullptr;
  dt_graph* captured = nullptr;
  dt_tensor *static_out = nullptr, *static_loss = nullptr;
  std::vector<dt_tensor*> params;
  auto cleanup = [&] {
    dt_graph_release(captured);
    dt_stream_release(stream);
    dt_tensor_release(static_out);
    dt_tensor_release(static_loss);
    for (dt_tensor* p : params) dt_tensor_release(p);
    dt_optimizer_release(opt);
    dt_module_release(loss_fn);
    dt_module_release(model);
  };
  dt_status s = dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0.0, &loss_fn);
  size_t n = 0;
  if (s == DT_OK) s = dt_module_parameter_count(model, &n);
  for (size_t i = 0; s == DT_OK && i < n; ++i) {
    dt_tensor* p = nullptr;
    s = dt_module_parameter(model, i, nullptr, 0, nullptr, &p);
    if (s == DT_OK) params.push_back(p);
  }
  if (s == DT_OK) s = dt_sgd_new(params.data(), params.size(), 0.01, 0, 0, 0, 0, &opt);
  auto step = [&]() -> dt_status {
    dt_tensor *out = nullptr, *loss = nullptr;
    const dt_tensor* in[2] = {x.t, nullptr};
    dt_status st = dt_optimizer_zero_grad(opt);
    if (st == DT_OK) st = dt_module_forward(model, in, 1, &out);
    in[0] = out;
    in[1] = y.t;
    if (st == DT_OK) st = dt_module_forward(loss_fn, in, 2, &loss);
    if (st == DT_OK) st = dt_backward(loss, nullptr);
    if (st == DT_OK) st = dt_optimizer_step(opt);
    dt_tensor_release(out);
    dt_tensor_release(loss);
    return st;
  };
  if (s == DT_OK) s = step();
  if (s != DT_OK) {
    state.SkipWithError(error_text("training step", s).c_str());
    return cleanup();
  }
  if (graph) {
    const dt_tensor* in[2] = {x.t, nullptr};
    s = dt_stream_create(g_device, &stream);
    if (s == DT_OK) s = dt_graph_capture_begin(stream);
    if (s == DT_OK) {
      dt_status st = dt_optimizer_zero_grad(opt);
      if (st == DT_OK) st = dt_module_forward(model, in, 1, &static_out);
      in[0] = static_out;
      in[1] = y.t;
      if (st == DT_OK) st = dt_module_forward(loss_fn, in, 2, &static_loss);
      if (st == DT_OK) st = dt_backward(static_loss, nullptr);
      if (st == DT_OK) st = dt_optimizer_step(opt);
      s = dt_graph_capture_end(stream, &captured);
      if (st != DT_OK) s = st;
    }
    if (s != DT_OK) {
      state.SkipWithError(error_text("capturing a training step", s).c_str());
      return cleanup();
    }
  }
  auto run = [&]() -> dt_status { return graph ? dt_graph_replay(captured) : step(); };
  if (!warm_up(state, "training step", run)) return cleanup();
  // The allocator's steady state: storage allocations per step, and how many of them it
  // did not serve from its cache (on the CPU blocks under 256 KiB always go to malloc and
  // count here; a large one here is fresh pages, faulted in and zeroed by the kernel).
  dt_mem_stats before{}, after{};
  before.struct_size = after.struct_size = sizeof(dt_mem_stats);
  dt_memory_stats(g_device, &before);
  const int64_t last = static_cast<int64_t>(state.max_iterations);
  int64_t done = 0;
  for (auto _ : state) {
    s = run();
    if (s == DT_OK) s = sync_if_due(++done, last);
    if (s != DT_OK) {
      state.SkipWithError(error_text("training step", s).c_str());
      break;
    }
  }
  dt_memory_stats(g_device, &after);
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["allocs/step"] = benchmark::Counter(
      static_cast<double>(after.allocation_count - before.allocation_count), benchmark::Counter::kAvgIterations);
  state.counters["system_allocs/step"] =
      benchmark::Counter(static_cast<double>(after.system_allocation_count - before.system_allocation_count),
                         benchmark::Counter::kAvgIterations);
  cleanup();
}

// Labels (i * 7 + 3) % classes for the rows of a batch; shape = the batch's dims but the
// class dim (so [batch] or [batch, seq]).
bool make_labels(benchmark::State& state, std::vector<int64_t> shape, int64_t classes, Tensor& out) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<int64_t> labels(n);
  for (size_t i = 0; i < n; ++i) labels[i] = static_cast<int64_t>((i * 7 + 3) % static_cast<size_t>(classes));
  dt_status s = dt_tensor_from_data(labels.data(), n * 8, shape.data(), shape.size(), DT_INT64, kCpu, &out.t);
  if (s != DT_OK) state.SkipWithError(error_text("labels", s).c_str());
  return s == DT_OK && to_device(state, out);
}

// A Sequential of modules made by `make` (each returns the next layer or a status).
dt_status sequential_of(const std::vector<std::function<dt_status(dt_module**)>>& make, dt_module** out) {
  std::vector<dt_module*> layers;
  dt_status s = DT_OK;
  for (const auto& m : make) {
    dt_module* layer = nullptr;
    if (s == DT_OK) s = m(&layer);
    if (s == DT_OK) layers.push_back(layer);
  }
  if (s == DT_OK) s = dt_sequential_new(layers.data(), layers.size(), out);
  for (dt_module* l : layers) dt_module_release(l);
  return s;
}

void BM_train(benchmark::State& state, std::vector<int64_t> widths, int64_t batch, bool graph) {
  std::vector<std::function<dt_status(dt_module**)>> make;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    make.push_back([&, i](dt_module** m) { return dt_linear_new(widths[i], widths[i + 1], 1, DT_FLOAT32, g_device, m); });
    // ReLU after every Linear but the last of the MLP; after every one in the stack
    if (i + 2 < widths.size() || widths.size() > 3) make.push_back([](dt_module** m) { return dt_relu_new(m); });
  }
  dt_module* model = nullptr;
  dt_status s = dt_manual_seed(0);
  if (s == DT_OK) s = sequential_of(make, &model);
  if (s != DT_OK) return state.SkipWithError(error_text("building the model", s).c_str());
  Tensor x, y;
  if (!make_input(state, {batch, widths.front()}, 7, x) || !make_labels(state, {batch}, widths.back(), y)) {
    dt_module_release(model);
    return;
  }
  double flops = 0;  // forward, then backward's two products per layer
  for (size_t i = 0; i + 1 < widths.size(); ++i) flops += 6.0 * batch * widths[i] * widths[i + 1];
  train_loop(state, model, x, y, flops, graph);
}

// LeNet-5 on [64, 1, 28, 28]: Conv2d(1, 6, 5) - ReLU - MaxPool2d(2) - Conv2d(6, 16, 5) -
// ReLU - MaxPool2d(2) - Flatten - Linear(256, 120) - ReLU - Linear(120, 84) - ReLU -
// Linear(84, 10).
void BM_lenet5(benchmark::State& state) {
  const int64_t k5[2] = {5, 5}, k2[2] = {2, 2};
  auto conv = [&](int64_t in, int64_t out) {
    return [=](dt_module** m) { return dt_conv2d_new(in, out, k5, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, g_device, m); };
  };
  auto linear = [](int64_t in, int64_t out) {
    return [=](dt_module** m) { return dt_linear_new(in, out, 1, DT_FLOAT32, g_device, m); };
  };
  auto relu = [](dt_module** m) { return dt_relu_new(m); };
  auto pool = [&](dt_module** m) { return dt_max_pool2d_new(k2, nullptr, nullptr, nullptr, 0, m); };
  dt_module* model = nullptr;
  dt_status s = dt_manual_seed(0);
  if (s == DT_OK)
    s = sequential_of({conv(1, 6), relu, pool, conv(6, 16), relu, pool, [](dt_module** m) { return dt_flatten_new(1, -1, m); },
                       linear(256, 120), relu, linear(120, 84), relu, linear(84, 10)},
                      &model);
  if (s != DT_OK) return state.SkipWithError(error_text("building LeNet-5", s).c_str());
  Tensor x, y;
  if (!make_input(state, {64, 1, 28, 28}, 8, x) || !make_labels(state, {64}, 10, y)) {
    dt_module_release(model);
    return;
  }
  // conv MACs: 6*24*24*25 + 16*8*8*150; linear: 256*120 + 120*84 + 84*10; x2 flop, x3 with backward
  const double macs = 6.0 * 24 * 24 * 25 + 16.0 * 8 * 8 * 150 + 256.0 * 120 + 120.0 * 84 + 84.0 * 10;
  train_loop(state, model, x, y, 6.0 * 64 * macs);
}

// One TransformerEncoderLayer(512, 8, 2048, dropout 0, relu, batch_first) on [8, 256, 512]
// followed by a Linear(512, 16) head (so the step ends in cross-entropy), forward and
// backward and an SGD step.
void BM_transformer_layer(benchmark::State& state) {
  dt_module* model = nullptr;
  dt_status s = dt_manual_seed(0);
  if (s == DT_OK)
    s = sequential_of({[](dt_module** m) {
                         return dt_transformer_encoder_layer_new(512, 8, 2048, 0.0, "relu", 1e-5, 1, 0, DT_FLOAT32, g_device, m);
                       },
                       [](dt_module** m) { return dt_flatten_new(0, 1, m); },
                       [](dt_module** m) { return dt_linear_new(512, 16, 1, DT_FLOAT32, g_device, m); }},
                      &model);
  if (s != DT_OK) return state.SkipWithError(error_text("building the layer", s).c_str());
  Tensor x, y;
  if (!make_input(state, {8, 256, 512}, 9, x) || !make_labels(state, {8 * 256}, 16, y)) {
    dt_module_release(model);
    return;
  }
  // per token: projections 4 * 512^2, feed-forward 2 * 512 * 2048, attention 2 * 256 * 512
  const double macs = 8.0 * 256 * (4.0 * 512 * 512 + 2.0 * 512 * 2048 + 2.0 * 256 * 512);
  train_loop(state, model, x, y, 6.0 * macs);
}

void BM_lstm(benchmark::State& state) {
  dt_module* model = nullptr;
  dt_status s = dt_manual_seed(0);
  if (s == DT_OK)
    s = sequential_of({[](dt_module** m) { return dt_lstm_new(256, 256, 2, 1, 1, 0.0, 0, DT_FLOAT32, g_device, m); },
                       [](dt_module** m) { return dt_flatten_new(0, 1, m); },
                       [](dt_module** m) { return dt_linear_new(256, 16, 1, DT_FLOAT32, g_device, m); }},
                      &model);
  if (s != DT_OK) return state.SkipWithError(error_text("building the LSTM", s).c_str());
  Tensor x, y;
  if (!make_input(state, {16, 64, 256}, 14, x) || !make_labels(state, {16 * 64}, 16, y)) {
    dt_module_release(model);
    return;
  }
  // per step and layer: the input and recurrent projections, 4 gates x 256 x (256 + 256)
  const double macs = 16.0 * 64 * (2 * 4.0 * 256 * 512 + 256 * 16);
  train_loop(state, model, x, y, 6.0 * macs);
}

// ResNet-18 (torchvision's layout) in eval mode, forward only, on [8, 3, 224, 224]: the
// functional ops of the C API, weights uniform from the LCG, BatchNorm with running
// statistics mean 0 / var 1 and affine 1 / 0 (the same work whatever the values).
class ResNet18 {
 public:
  explicit ResNet18(benchmark::State& state) : state_(state) {}
  ~ResNet18() {
    for (auto& [k, t] : params_) dt_tensor_release(t);
  }
  dt_tensor* conv(dt_tensor* x, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad) {
    dt_tensor* w = param({out, in, k, k});
    const int64_t st[2] = {stride, stride}, p[2] = {pad, pad};
    dt_tensor* y = nullptr;
    check(dt_conv2d(x, w, nullptr, st, p, nullptr, 1, &y));
    dt_tensor_release(x);
    return y;
  }
  dt_tensor* bn(dt_tensor* x, int64_t c, bool relu) {
    dt_tensor *mean = constant(c, 0.0), *var = constant(c, 1.0), *w = constant(c, 1.0), *b = constant(c, 0.0), *y = nullptr;
    check(dt_batch_norm(x, mean, var, w, b, 0, 0.1, 1e-5, &y));
    dt_tensor_release(x);
    if (relu) return this->relu(y);
    return y;
  }
  dt_tensor* relu(dt_tensor* x) {
    dt_tensor* y = nullptr;
    check(dt_relu(x, &y));
    dt_tensor_release(x);
    return y;
  }
  dt_tensor* block(dt_tensor* x, int64_t in, int64_t out, int64_t stride) {
    dt_tensor_retain(x);
    dt_tensor* shortcut = x;
    dt_tensor* y = bn(conv(x, in, out, 3, stride, 1), out, true);
    y = bn(conv(y, out, out, 3, 1, 1), out, false);
    if (stride != 1 || in != out) shortcut = bn(conv(shortcut, in, out, 1, stride, 0), out, false);
    dt_tensor* sum = nullptr;
    check(dt_add(y, shortcut, &sum));
    dt_tensor_release(y);
    dt_tensor_release(shortcut);
    return relu(sum);
  }
  // Returns the logits [N, 1000] (a new reference), or null after an error.
  dt_tensor* forward(const dt_tensor* input) {
    calls_ = 0;
    dt_tensor* x = const_cast<dt_tensor*>(input);
    dt_tensor_retain(x);
    x = bn(conv(x, 3, 64, 7, 2, 3), 64, true);
    const int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, p1[2] = {1, 1}, one[2] = {1, 1};
    dt_tensor* y = nullptr;
    check(dt_max_pool2d(x, k3, s2, p1, nullptr, 0, &y));
    dt_tensor_release(x);
    x = y;
    int64_t width = 64;
    for (int64_t out : {64, 128, 256, 512}) {
      x = block(x, width, out, out == 64 ? 1 : 2);
      x = block(x, out, out, 1);
      width = out;
    }
    dt_tensor *pooled = nullptr, *flat = nullptr, *wt = nullptr, *prod = nullptr, *logits = nullptr;
    check(dt_adaptive_avg_pool2d(x, one, &pooled));
    check(dt_flatten(pooled, 1, -1, &flat));
    check(dt_transpose(param({1000, 512}), 0, 1, &wt));
    check(dt_matmul(flat, wt, &prod));
    check(dt_add(prod, param({1000}), &logits));
    for (dt_tensor* t : {x, pooled, flat, wt, prod}) dt_tensor_release(t);
    if (!ok_) {
      dt_tensor_release(logits);
      return nullptr;
    }
    return logits;
  }
  bool ok() const { return ok_; }

 private:
  void check(dt_status s) {
    if (s != DT_OK && ok_) {
      ok_ = false;
      state_.SkipWithError(error_text("resnet18 forward", s).c_str());
    }
  }
  // The call-th weight of the network, made on the first forward (same shapes every time).
  dt_tensor* param(std::vector<int64_t> shape) {
    const int key = calls_++;
    auto it = params_.find(key);
    if (it != params_.end()) return it->second;
    Tensor t;
    if (!make_input(state_, shape, 100 + static_cast<uint32_t>(key), t)) ok_ = false;
    dt_tensor* raw = t.t;
    t.t = nullptr;
    params_[key] = raw;
    return raw;
  }
  dt_tensor* constant(int64_t c, double v) {
    const int key = calls_++;
    auto it = params_.find(key);
    if (it != params_.end()) return it->second;
    dt_tensor* t = nullptr;
    check(dt_tensor_full(&c, 1, v, DT_FLOAT32, g_device, &t));
    params_[key] = t;
    return t;
  }
  benchmark::State& state_;
  std::map<int, dt_tensor*> params_;
  int calls_ = 0;
  bool ok_ = true;
};

// issue_only: the time to queue one forward, the device idle at its start (a
// synchronization after each, outside the timing): the host's cost per forward, which
// bounds the forward's rate when it exceeds the device's time (resnet18_fwd_issue; a
// diagnostic on devices, no peer case).
void BM_resnet18_fwd(benchmark::State& state, bool issue_only) {
  Tensor x;
  if (!make_input(state, {8, 3, 224, 224}, 10, x)) return;
  ResNet18 net(state);
  dt_tensor* warm = net.forward(x.t);
  if (!warm) return;
  dt_tensor_release(warm);
  auto forward = [&]() -> dt_status {
    dt_tensor* logits = net.forward(x.t);
    dt_tensor_release(logits);
    return logits ? DT_OK : DT_ERR_INTERNAL;
  };
  if (!warm_up(state, "resnet18 forward", forward)) return;
  const int64_t last = static_cast<int64_t>(state.max_iterations);
  int64_t done = 0;
  for (auto _ : state) {
    if (forward() != DT_OK) break;  // net has reported the error
    if (issue_only) {
      state.PauseTiming();
      dt_status s = dt_synchronize(g_device);
      state.ResumeTiming();
      if (s != DT_OK) {
        state.SkipWithError(error_text("dt_synchronize", s).c_str());
        break;
      }
      continue;
    }
    dt_status s = sync_if_due(++done, last);
    if (s != DT_OK) {
      state.SkipWithError(error_text("dt_synchronize", s).c_str());
      break;
    }
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * 8 * 1.814e9 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// One optimizer step over tensors of the shapes of Linear(784,256) and Linear(256,10)'s
// parameters (203,530 floats), with fixed gradients: the optimizer alone. SGD (lr 0.01,
// momentum 0.9): dampening 0 takes the fused kernel (ops::sgd_step_); the _unfused case
// passes 1e-30, which leaves 1 - dampening == 1.0 exactly (the same arithmetic and bits)
// but takes the op-by-op path that any dampening takes. Adam, RMSprop and Adagrad with
// PyTorch's defaults (lr 1e-3, 1e-2, 1e-2), planned op by op.
enum class StepKind { Sgd, SgdUnfused, Adam, Rmsprop, Adagrad };
void BM_optimizer_step(benchmark::State& state, StepKind kind) {
  const std::vector<std::vector<int64_t>> shapes = {{256, 784}, {256}, {10, 256}, {10}};
  Tensor params[4];
  dt_optimizer* opt = nullptr;
  int64_t numel = 0;
  auto fail = [&](const char* what, dt_status s) {
    state.SkipWithError(error_text(what, s).c_str());
    dt_optimizer_release(opt);
  };
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor g;
    if (!make_input(state, shapes[i], 20 + uint32_t(i), params[i]) ||
        !make_input(state, shapes[i], 30 + uint32_t(i), g))
      return;
    int64_t n = 1;
    for (int64_t d : shapes[i]) n *= d;
    numel += n;
    // p's gradient becomes g: the backward of sum(p * g).
    Tensor pg, loss;
    dt_status s = dt_tensor_set_requires_grad(params[i].t, 1);
    if (s == DT_OK) s = dt_mul(params[i].t, g.t, &pg.t);
    if (s == DT_OK) s = dt_sum(pg.t, nullptr, 0, 0, &loss.t);
    if (s == DT_OK) s = dt_backward(loss.t, nullptr);
    if (s != DT_OK) return fail("setting a gradient", s);
  }
  const dt_tensor* raw[4] = {params[0].t, params[1].t, params[2].t, params[3].t};
  dt_status s = DT_OK;
  switch (kind) {
    case StepKind::Sgd: s = dt_sgd_new(raw, 4, 0.01, 0.9, 0.0, 0, 0, &opt); break;
    case StepKind::SgdUnfused: s = dt_sgd_new(raw, 4, 0.01, 0.9, 1e-30, 0, 0, &opt); break;
    case StepKind::Adam: s = dt_adam_new(raw, 4, 1e-3, 0.9, 0.999, 1e-8, 0, 0, &opt); break;
    case StepKind::Rmsprop: s = dt_rmsprop_new(raw, 4, 1e-2, 0.99, 1e-8, 0, 0, 0, &opt); break;
    case StepKind::Adagrad: s = dt_adagrad_new(raw, 4, 1e-2, 0, 0, 0, 1e-10, &opt); break;
  }
  if (s == DT_OK) s = dt_optimizer_step(opt);  // the state (buffers, moments) exists from here
  if (s != DT_OK) return fail("making the optimizer / first step", s);
  if (!warm_up(state, "dt_optimizer_step", [&] { return dt_optimizer_step(opt); })) {
    dt_optimizer_release(opt);
    return;
  }
  const int64_t last = static_cast<int64_t>(state.max_iterations);
  int64_t done = 0;
  for (auto _ : state) {
    s = dt_optimizer_step(opt);
    if (s == DT_OK) s = sync_if_due(++done, last);
    if (s != DT_OK) return fail("dt_optimizer_step", s);
  }
  // SGD reads parameter, gradient and buffer and writes parameter and buffer; the others
  // more (Adam: two moments), but the count stays SGD's so the cases compare by time.
  state.SetBytesProcessed(state.iterations() * numel * 5 * int64_t(sizeof(float)));
  dt_optimizer_release(opt);
}

// Attention alone: dt_scaled_dot_product_attention of float32 [8, 8, 1024, 64] query,
// key and value (no mask), forward, as PyTorch's F.scaled_dot_product_attention.
void BM_sdpa(benchmark::State& state) {
  Tensor q, k, v;
  if (!make_input(state, {8, 8, 1024, 64}, 11, q) || !make_input(state, {8, 8, 1024, 64}, 12, k) ||
      !make_input(state, {8, 8, 1024, 64}, 13, v))
    return;
  run_op(state, "dt_scaled_dot_product_attention",
         [&](dt_tensor** out) { return dt_scaled_dot_product_attention(q.t, k.t, v.t, nullptr, 0, out); });
  // q k^T and the product with v: 2 x 2 x L x S x E per head
  state.counters["GFLOPS"] = benchmark::Counter(4.0 * 64 * 1024 * 1024 * 64 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// --device=NAME (see the header); returns false on a name dt_device_parse refuses.
bool parse_device(int* argc, char** argv) {
  int w = 1;
  bool good = true;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], "--device=", 9) == 0) {
      dt_status s = dt_device_parse(argv[i] + 9, &g_device);
      if (s != DT_OK) {
        std::fprintf(stderr, "devtensor_bench: %s\n", error_text("--device", s).c_str());
        good = false;
      }
    } else {
      argv[w++] = argv[i];
    }
  }
  *argc = w;
  return good;
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
  if (!parse_device(&argc, argv)) return 2;
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
  char device_name[256] = {0};
  if (dt_device_name(g_device, device_name, sizeof device_name, nullptr) == DT_OK)
    benchmark::AddCustomContext("devtensor_device", device_name);

  const int64_t k16M = int64_t(16) << 20;
  benchmark::RegisterBenchmark("add_4", BM_add, int64_t(4))->UseRealTime()->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("add_16M", BM_add, k16M)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sum_16M", BM_sum, k16M)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("softmax_4096x1024", BM_softmax, int64_t(4096), int64_t(1024))
      ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sgemm_1024", BM_sgemm, int64_t(1024))->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sgemm_2048", BM_sgemm, int64_t(2048))->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_mlp_784_256_10", BM_train, std::vector<int64_t>{784, 256, 10}, int64_t(64), false)
      ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("resnet18_fwd", BM_resnet18_fwd, false)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_lenet5", BM_lenet5)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("transformer_layer_train", BM_transformer_layer)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_linear16_256", BM_train, std::vector<int64_t>(17, 256), int64_t(128), false)
      ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sdpa_8x8x1024x64", BM_sdpa)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("custom_module_4", BM_custom_module)->UseRealTime()->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("lstm_train", BM_lstm)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sgd_step_203k", BM_optimizer_step, StepKind::Sgd)
      ->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("adam_step_203k", BM_optimizer_step, StepKind::Adam)
      ->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("rmsprop_step_203k", BM_optimizer_step, StepKind::Rmsprop)
      ->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("adagrad_step_203k", BM_optimizer_step, StepKind::Adagrad)
      ->UseRealTime()->Unit(benchmark::kMicrosecond);
  // The unfused path on the same arithmetic; no peer case.
  benchmark::RegisterBenchmark("sgd_step_203k_unfused", BM_optimizer_step, StepKind::SgdUnfused)
      ->UseRealTime()->Unit(benchmark::kMicrosecond);
  // The host's time to queue one forward; no peer case.
  benchmark::RegisterBenchmark("resnet18_fwd_issue", BM_resnet18_fwd, true)->UseRealTime()->Unit(benchmark::kMillisecond);
  // The same steps captured once and replayed (dt_graph_replay); no peer case.
  benchmark::RegisterBenchmark("train_mlp_784_256_10_graph", BM_train, std::vector<int64_t>{784, 256, 10}, int64_t(64), true)
      ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_linear16_256_graph", BM_train, std::vector<int64_t>(17, 256), int64_t(128), true)
      ->UseRealTime()->Unit(benchmark::kMillisecond);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
