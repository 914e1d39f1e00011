// devtensor_gpu_bench: Google Benchmark cases for devtensor on cuda:0, through the public
// C API only. The same cases, with the same names, shapes and dtypes, are in
// pytorch_gpu_bench.py; bench/gpu/run runs the two side by side on the same GPU.
//
//   h2d_pageable_64M    dt_tensor_to(cpu float32[16Mi] in pageable memory, cuda:0)
//                       (PyTorch: x.to("cuda"))
//   h2d_pinned_64M      the same from pinned memory with DT_TO_NON_BLOCKING
//                       (PyTorch: x_pinned.to("cuda", non_blocking=True))
//   d2h_pinned_64M      dt_tensor_copy_to_host of a cuda float32[16Mi] into the memory of a
//                       preallocated pinned tensor (PyTorch: dst_pinned.copy_(x, non_blocking=True))
//   h2d_pinned_1G       as h2d_pinned_64M with float32[256Mi] (1 GiB)
//   d2d_1G              dt_tensor_to(cuda float32[256Mi], cuda:0, DT_TO_COPY): a fresh copy
//                       (PyTorch: x.to("cuda", copy=True))
//   add_256M            dt_add of two cuda float32[256Mi], a fresh output each call
//   sgemm_4096          dt_matmul of two cuda float32[4096, 4096], TF32 off
//   tf32_4096           the same with dt_set_allow_tf32(1) (reset to 0 afterwards)
//   bf16_4096           dt_matmul of two cuda bfloat16[4096, 4096]
//   softmax_8192x8192   dt_softmax(x, -1) of cuda float32[8192, 8192]
//   add_4_launch        dt_add of two cuda float32[4]: the host-side cost a user pays per
//                       call (launch, allocation, handle, release); no sync per call
//   mlp_fwd_784_256_10  a batch-64 forward of Sequential(Linear(784,256), ReLU,
//                       Linear(256,10)) on cuda:0, grad mode on (PyTorch: the same modules)
//   mlp_fwd_784_256_10_graph  the same forward captured once on a stream of its own
//                       (dt_graph_capture_begin/end) and replayed per call (dt_graph_replay)
//                       (PyTorch: the module's forward captured in a torch.cuda.CUDAGraph)
//
// Sizes: 64M / 1G are bytes of float32 tensors (64 MiB, 1 GiB); 256M is 256Mi elements.
// Inputs come from dt_tensor_rand (uniform [0, 1), never zeros) after dt_manual_seed with a
// fixed seed per case, created before the timed loop; every op makes a fresh output that is
// released in the loop, as a user would.
//
// Timing. CUDA work is asynchronous, so a timer that stops when the last call RETURNS
// would miss queued work. Each case therefore synchronises INSIDE the timed loop: after
// every `batch` calls and after the very last iteration (the loop runs exactly
// state.max_iterations times), with the benchmark's own real-time clock (UseRealTime).
// The reported real_time is per call and every timed span ends with dt_synchronize.
// This was chosen over SetIterationTime around op+sync because (a) a per-call sync would
// add the synchronisation latency (~5-20 us) to every sample, which dominates the short
// cases (bf16 GEMM, softmax, add_4_launch, the MLP) and would measure latency, not what a
// user's pipeline pays, and (b) the C API has no CUDA events, so host clocks are all we
// have; pytorch_gpu_bench.py times its loop the same way (perf_counter around the same
// batches and synchronisations), so both sides pay the same number of syncs. `batch` also
// keeps the launch queue bounded. Before the timed loop each case runs `batch` calls and a
// sync (warm-up: module loading, cuBLAS handles and heuristics, the caching allocator).
//
// Output: real time per call, plus bytes_per_second (copies, add, softmax) or FLOPS
// (GEMMs, MLP) or items_per_second (calls per second: add_4_launch, MLP).
//
// When dt_cuda_is_available() is 0, the program prints dt_cuda_status's reason and exits
// with status 3 without running anything. `--cuda-status` prints the status (and the
// GPU's name) and exits 0 when CUDA is usable, 3 when it is not.
#include <benchmark/benchmark.h>
#include <devtensor.h>

#include <cstdint>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../bench_util.h"

namespace {

const dt_device kCpu = {DT_DEVICE_CPU, 0};
const dt_device kCuda = {DT_DEVICE_CUDA, 0};

using bench::error_text;
using bench::Module;
using bench::Tensor;

// Reports a failed setup call on state; returns whether s is DT_OK.
bool ok(benchmark::State& state, const char* what, dt_status s) {
  if (s == DT_OK) return true;
  state.SkipWithError(error_text(what, s).c_str());
  return false;
}

// Seeds every generator with seed so each case's inputs are the same whatever the filter.
bool seed(benchmark::State& state, uint64_t value) {
  return ok(state, "dt_manual_seed", dt_manual_seed(value));
}

// Uniform [0, 1) values of dtype on device (bfloat16 by casting float32 on the device).
bool make_rand(benchmark::State& state, std::vector<int64_t> shape, dt_dtype dtype,
               dt_device device, Tensor& out) {
  if (dtype == DT_FLOAT32) {
    return ok(state, "dt_tensor_rand",
              dt_tensor_rand(shape.data(), shape.size(), DT_FLOAT32, device, &out.t));
  }
  Tensor f32;
  if (!ok(state, "dt_tensor_rand",
          dt_tensor_rand(shape.data(), shape.size(), DT_FLOAT32, device, &f32.t))) {
    return false;
  }
  return ok(state, "dt_tensor_to (dtype)", dt_tensor_to(f32.t, device, dtype, 0, &out.t));
}

// Returns memory cached by the last case, so 1 GiB cases do not pile up. Best effort.
void tidy() {
  (void)dt_synchronize(kCuda);
  (void)dt_empty_cache(kCuda);
}

// The timed loop (see "Timing" above). op() makes one call and releases its output;
// it returns the call's status.
template <class Op>
void run_loop(benchmark::State& state, const char* name, int64_t batch, Op op) {
  for (int64_t i = 0; i < batch; ++i) {  // warm-up, untimed; a missing op is reported here
    if (!ok(state, name, op())) return;
  }
  if (!ok(state, "dt_synchronize", dt_synchronize(kCuda))) return;

  const int64_t last = static_cast<int64_t>(state.max_iterations);
  int64_t i = 0;
  for (auto _ : state) {
    dt_status s = op();
    if (s != DT_OK) {
      state.SkipWithError(error_text(name, s).c_str());
      break;
    }
    ++i;
    if (i % batch == 0 || i == last) {
      s = dt_synchronize(kCuda);
      if (s != DT_OK) {
        state.SkipWithError(error_text("dt_synchronize", s).c_str());
        break;
      }
    }
  }
}

// One call of a function that makes a new tensor, which is released at once.
template <class F>
dt_status call_release(F f) {
  dt_tensor* out = nullptr;
  dt_status s = f(&out);
  benchmark::DoNotOptimize(out);
  dt_tensor_release(out);
  return s;
}

constexpr int64_t k64MiBElems = int64_t(16) << 20;   // float32 elements in 64 MiB
constexpr int64_t k1GiBElems = int64_t(256) << 20;   // float32 elements in 1 GiB
constexpr int64_t kFloat = int64_t(sizeof(float));

// ---------------------------------------------------------------------------- copies

// h2d: dt_tensor_to(host tensor, cuda:0); pinned sources use DT_TO_NON_BLOCKING, as
// x.to("cuda", non_blocking=True) would.
void BM_h2d(benchmark::State& state, int64_t n, bool pinned, int64_t batch) {
  Tensor pageable, pinned_t;
  if (!seed(state, 101) || !make_rand(state, {n}, DT_FLOAT32, kCpu, pageable)) return;
  const dt_tensor* src = pageable.t;
  uint32_t flags = 0;
  if (pinned) {
    if (!ok(state, "dt_tensor_pin_memory", dt_tensor_pin_memory(pageable.t, &pinned_t.t))) return;
    dt_tensor_release(pageable.t);
    pageable.t = nullptr;
    src = pinned_t.t;
    flags = DT_TO_NON_BLOCKING;
  }
  run_loop(state, "dt_tensor_to (host to cuda:0)", batch, [&] {
    return call_release([&](dt_tensor** out) {
      return dt_tensor_to(src, kCuda, DT_DTYPE_DEFAULT, flags, out);
    });
  });
  state.SetBytesProcessed(state.iterations() * n * kFloat);
  tidy();
}

// d2h into a preallocated pinned buffer: dt_tensor_copy_to_host into the pinned tensor's
// memory, the C API's form of dst_pinned.copy_(src, non_blocking=True). (dt_tensor_to to
// the CPU would allocate a fresh pageable tensor every call; the copy always waits for the
// device, as the header documents, so the sync after it is cheap.)
void BM_d2h_pinned(benchmark::State& state, int64_t n, int64_t batch) {
  Tensor src, dst;
  if (!seed(state, 102) || !make_rand(state, {n}, DT_FLOAT32, kCuda, src)) return;
  if (!ok(state, "dt_tensor_empty_pinned", dt_tensor_empty_pinned(&n, 1, DT_FLOAT32, &dst.t))) {
    return;
  }
  void* host = nullptr;
  if (!ok(state, "dt_tensor_data_ptr", dt_tensor_data_ptr(dst.t, &host))) return;
  const size_t nbytes = static_cast<size_t>(n * kFloat);
  run_loop(state, "dt_tensor_copy_to_host (cuda:0 to pinned)", batch,
           [&] { return dt_tensor_copy_to_host(src.t, host, nbytes); });
  benchmark::DoNotOptimize(host);
  state.SetBytesProcessed(state.iterations() * n * kFloat);
  tidy();
}

// d2d: a fresh copy on the same GPU (bytes = read + write).
void BM_d2d(benchmark::State& state, int64_t n, int64_t batch) {
  Tensor src;
  if (!seed(state, 103) || !make_rand(state, {n}, DT_FLOAT32, kCuda, src)) return;
  run_loop(state, "dt_tensor_to (DT_TO_COPY)", batch, [&] {
    return call_release([&](dt_tensor** out) {
      return dt_tensor_to(src.t, kCuda, DT_DTYPE_DEFAULT, DT_TO_COPY, out);
    });
  });
  state.SetBytesProcessed(state.iterations() * 2 * n * kFloat);
  tidy();
}

// ---------------------------------------------------------------------------- ops

void BM_add(benchmark::State& state, int64_t n, int64_t batch) {
  Tensor a, b;
  if (!seed(state, 104) || !make_rand(state, {n}, DT_FLOAT32, kCuda, a) ||
      !make_rand(state, {n}, DT_FLOAT32, kCuda, b)) {
    return;
  }
  run_loop(state, "dt_add", batch,
           [&] { return call_release([&](dt_tensor** out) { return dt_add(a.t, b.t, out); }); });
  if (n > 4) {
    state.SetBytesProcessed(state.iterations() * 3 * n * kFloat);
  } else {
    state.SetItemsProcessed(state.iterations());  // calls per second
  }
  tidy();
}

// Diagnostics, devtensor only (bench/gpu/run does not run them; script/gpu-session
// does): the parts of add_4_launch, read against bench/gpu/cuda_floor's CUDA figures.
//   diag_empty_4        dt_tensor_empty(cuda float32[4]) and its release: allocation, handle
//   diag_add_4_inplace  dt_add_(a, b) on cuda float32[4]: the launch path, no allocation
//   diag_add_4_inplace_issue  the same, timing only the host issuing 256 calls (time per
//                       batch; the counter issue_ns_per_call is per call)
//   diag_add_4_cpu      dt_add of two cpu float32[4]: the device-independent part
void BM_diag_empty(benchmark::State& state) {
  const int64_t n = 4;
  run_loop(state, "dt_tensor_empty", 256, [&] {
    return call_release([&](dt_tensor** out) { return dt_tensor_empty(&n, 1, DT_FLOAT32, kCuda, out); });
  });
  tidy();
}

void BM_diag_add_inplace(benchmark::State& state) {
  Tensor a, b;
  if (!seed(state, 104) || !make_rand(state, {4}, DT_FLOAT32, kCuda, a) ||
      !make_rand(state, {4}, DT_FLOAT32, kCuda, b)) {
    return;
  }
  run_loop(state, "dt_add_", 256, [&] { return dt_add_(a.t, b.t); });
  tidy();
}

// The host's share alone: the clock stops after 256 calls are queued, before the
// synchronisation (if this is below diag_add_4_inplace, the GPU sets the pace).
void BM_diag_add_issue(benchmark::State& state) {
  Tensor a, b;
  if (!seed(state, 104) || !make_rand(state, {4}, DT_FLOAT32, kCuda, a) ||
      !make_rand(state, {4}, DT_FLOAT32, kCuda, b)) {
    return;
  }
  for (auto _ : state) {
    if (!ok(state, "dt_synchronize", dt_synchronize(kCuda))) break;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 256; ++i) {
      if (dt_add_(a.t, b.t) != DT_OK) break;
    }
    auto t1 = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(seconds);  // per batch of 256: Google Benchmark sizes runs by it
    state.counters["issue_ns_per_call"] = seconds / 256 * 1e9;
  }
  (void)dt_synchronize(kCuda);
  tidy();
}

void BM_diag_add_cpu(benchmark::State& state) {
  Tensor a, b;
  if (!seed(state, 104) || !make_rand(state, {4}, DT_FLOAT32, kCpu, a) ||
      !make_rand(state, {4}, DT_FLOAT32, kCpu, b)) {
    return;
  }
  for (auto _ : state) {
    dt_status s = call_release([&](dt_tensor** out) { return dt_add(a.t, b.t, out); });
    if (s != DT_OK) {
      state.SkipWithError(error_text("dt_add", s).c_str());
      break;
    }
  }
}

// Resets TF32 to off when a case that turned it on ends, whichever way it ends.
struct Tf32Scope {
  bool on = false;
  ~Tf32Scope() {
    if (on) (void)dt_set_allow_tf32(0);
  }
};

void BM_gemm(benchmark::State& state, int64_t n, dt_dtype dtype, bool tf32, int64_t batch) {
  Tf32Scope scope;
  if (!ok(state, "dt_set_allow_tf32", dt_set_allow_tf32(tf32 ? 1 : 0))) return;
  scope.on = tf32;
  Tensor a, b;
  if (!seed(state, 105) || !make_rand(state, {n, n}, dtype, kCuda, a) ||
      !make_rand(state, {n, n}, dtype, kCuda, b)) {
    return;
  }
  run_loop(state, "dt_matmul", batch,
           [&] { return call_release([&](dt_tensor** out) { return dt_matmul(a.t, b.t, out); }); });
  state.counters["FLOPS"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                               benchmark::Counter::kIsIterationInvariantRate);
  tidy();
}

void BM_softmax(benchmark::State& state, int64_t rows, int64_t cols, int64_t batch) {
  Tensor x;
  if (!seed(state, 106) || !make_rand(state, {rows, cols}, DT_FLOAT32, kCuda, x)) return;
  run_loop(state, "dt_softmax", batch,
           [&] { return call_release([&](dt_tensor** out) { return dt_softmax(x.t, -1, out); }); });
  state.SetBytesProcessed(state.iterations() * 2 * rows * cols * kFloat);
  tidy();
}

// y = relu(x @ w1 + b1) @ w2 + b2; the weights are stored [in, out] so no transpose is
// needed (nn.Linear keeps [out, in] and multiplies by its transpose).
void BM_mlp(benchmark::State& state, int64_t batch_rows, int64_t in, int64_t hidden, int64_t out_dim,
            int64_t batch, bool graph) {
  // What a user writes, as the PyTorch side: Sequential(Linear, ReLU, Linear) on cuda:0,
  // PyTorch's initialisation, autograd recording (grad mode on).
  Tensor x;
  Module l1, relu, l2, model;
  if (!seed(state, 107) || !make_rand(state, {batch_rows, in}, DT_FLOAT32, kCuda, x) ||
      !ok(state, "dt_linear_new", dt_linear_new(in, hidden, 1, DT_FLOAT32, kCuda, &l1.m)) ||
      !ok(state, "dt_relu_new", dt_relu_new(&relu.m)) ||
      !ok(state, "dt_linear_new", dt_linear_new(hidden, out_dim, 1, DT_FLOAT32, kCuda, &l2.m))) {
    return;
  }
  dt_module* const layers[] = {l1.m, relu.m, l2.m};
  if (!ok(state, "dt_sequential_new", dt_sequential_new(layers, 3, &model.m))) return;
  auto forward = [&]() -> dt_status {
    Tensor o;
    const dt_tensor* inputs[] = {x.t};
    const dt_status s = dt_module_forward(model.m, inputs, 1, &o.t);
    benchmark::DoNotOptimize(o.t);
    return s;
  };
  if (!graph) {
    run_loop(state, "mlp forward (dt_module_forward)", batch, forward);
  } else {
    // Captured once (after a warm-up call, as torch.cuda.graphs' recipe) on a stream of
    // its own; each call then replays the kernels (three: each Linear is one cuBLASLt
    // product with its bias, between them the ReLU).
    dt_stream* stream = nullptr;
    dt_graph* captured = nullptr;
    dt_status s = forward();
    if (s == DT_OK) s = dt_stream_create(kCuda, &stream);
    if (s == DT_OK) s = dt_graph_capture_begin(stream);
    if (s == DT_OK) {
      const dt_status inner = forward();
      s = dt_graph_capture_end(stream, &captured);
      if (inner != DT_OK) s = inner;
    }
    if (ok(state, "capturing the mlp forward", s))
      run_loop(state, "dt_graph_replay", batch, [&] { return dt_graph_replay(captured); });
    dt_graph_release(captured);
    dt_stream_release(stream);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["FLOPS"] = benchmark::Counter(
      2.0 * double(batch_rows) * double(in * hidden + hidden * out_dim),
      benchmark::Counter::kIsIterationInvariantRate);
  tidy();
}

// ---------------------------------------------------------------------------- setup

std::string cuda_status_text(int32_t* state) {
  char buf[1024] = {0};
  *state = -1;
  dt_status s = dt_cuda_status(state, buf, sizeof buf, nullptr);
  if (s != DT_OK) return error_text("dt_cuda_status", s);
  return buf;
}

std::string gpu_name() {
  char buf[512] = {0};
  if (dt_device_name(kCuda, buf, sizeof buf, nullptr) != DT_OK) return "";
  return buf;
}

// Removes flag from argv; returns whether it was there.
bool take_flag(int* argc, char** argv, const char* flag) {
  bool found = false;
  int w = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) {
      found = true;
    } else {
      argv[w++] = argv[i];
    }
  }
  *argc = w;
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  const bool status_only = take_flag(&argc, argv, "--cuda-status");
  bool list_only = false;  // --benchmark_list_tests needs no GPU
  for (int i = 1; i < argc; ++i) {
    list_only = list_only || std::strcmp(argv[i], "--benchmark_list_tests") == 0 ||
                std::strcmp(argv[i], "--benchmark_list_tests=true") == 0;
  }

  // Registered before the CUDA check so that --benchmark_list_tests works anywhere.
  const int64_t kMiB64 = k64MiBElems, kGiB = k1GiBElems;
  const auto ms = benchmark::kMillisecond, us = benchmark::kMicrosecond;
  benchmark::RegisterBenchmark("h2d_pageable_64M", BM_h2d, kMiB64, false, int64_t(1))
      ->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("h2d_pinned_64M", BM_h2d, kMiB64, true, int64_t(4))
      ->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("d2h_pinned_64M", BM_d2h_pinned, kMiB64, int64_t(4))
      ->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("h2d_pinned_1G", BM_h2d, kGiB, true, int64_t(1))
      ->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("d2d_1G", BM_d2d, kGiB, int64_t(4))->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("add_256M", BM_add, kGiB, int64_t(4))->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("sgemm_4096", BM_gemm, int64_t(4096), DT_FLOAT32, false, int64_t(4))
      ->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("tf32_4096", BM_gemm, int64_t(4096), DT_FLOAT32, true, int64_t(16))
      ->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("bf16_4096", BM_gemm, int64_t(4096), DT_BFLOAT16, false, int64_t(16))
      ->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("softmax_8192x8192", BM_softmax, int64_t(8192), int64_t(8192),
                               int64_t(16))
      ->UseRealTime()->Unit(ms);
  benchmark::RegisterBenchmark("add_4_launch", BM_add, int64_t(4), int64_t(256))
      ->UseRealTime()->Unit(us);
  benchmark::RegisterBenchmark("diag_empty_4", BM_diag_empty)->UseRealTime()->Unit(us);
  benchmark::RegisterBenchmark("diag_add_4_inplace", BM_diag_add_inplace)->UseRealTime()->Unit(us);
  benchmark::RegisterBenchmark("diag_add_4_inplace_issue", BM_diag_add_issue)->UseManualTime()->Unit(us);
  benchmark::RegisterBenchmark("diag_add_4_cpu", BM_diag_add_cpu)->UseRealTime()->Unit(us);
  benchmark::RegisterBenchmark("mlp_fwd_784_256_10", BM_mlp, int64_t(64), int64_t(784),
                               int64_t(256), int64_t(10), int64_t(64), false)
      ->UseRealTime()->Unit(us);
  benchmark::RegisterBenchmark("mlp_fwd_784_256_10_graph", BM_mlp, int64_t(64), int64_t(784),
                               int64_t(256), int64_t(10), int64_t(64), true)
      ->UseRealTime()->Unit(us);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  if (list_only && !status_only) {
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }
  int32_t state = -1;
  const std::string why = cuda_status_text(&state);
  if (!dt_cuda_is_available()) {
    std::fprintf(stderr, "devtensor_gpu_bench: CUDA not available (dt_cuda_status %d): %s\n",
                 state, why.c_str());
    return 3;
  }
  const std::string name = gpu_name();
  if (status_only) {
    std::printf("available: %s\n", name.c_str());
    return 0;
  }
  benchmark::AddCustomContext("devtensor_version", dt_version_string());
  benchmark::AddCustomContext("devtensor_cuda_status", why);
  benchmark::AddCustomContext("gpu", name);
  dt_status s = dt_set_allow_tf32(0);  // the PyTorch default; only tf32_4096 turns it on
  if (s != DT_OK) {
    std::fprintf(stderr, "devtensor_gpu_bench: %s\n", error_text("dt_set_allow_tf32", s).c_str());
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
