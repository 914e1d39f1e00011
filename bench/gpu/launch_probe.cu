// launch_probe: where devtensor's launch of a tiny add loses its microsecond against a bare
// CUDA launch (bench/gpu/NOTES.md, "Open: add_4_launch"). One process, four ways to put a
// float32[4] add on a stream, measured in interleaved rounds so that machine drift hits
// them alike:
//   bare_small    a 6-argument add kernel, alone in its module (cuda_floor's add4)
//   shaped_small  a kernel of the plugin's shape (functor, 16-byte packs), small module
//   shaped_big    the same kernel in a module of 2048 kernels, as large as binary.cu's
//   plugin        the CUDA plugin's binary() entry (src/core/plugin_abi.h) called directly,
//                 as the core calls it: the plugin's whole path, no core
//   devtensor     dt_add_(a, b) on cuda float32[4] through the C ABI (the plugin's kernel)
//   so_runtime, so_guarded, so_driver: the plugin-shaped kernel launched from a dlopen'd
//                 shared object with the runtime linked statically (launch_probe_so.cu)
// Each figure is the host's issue time per call over 256 calls (clock stopped before the
// synchronisation); the table gives the median and the minimum over the rounds.
// Usage: launch_probe [ROUNDS [PLUGIN_PATH [CASE]]]; with CASE (0..7) it runs that case
// forever, for script/gpu-session's sampling profiler.
// Built by script/gpu-pack (nvcc, linked with libdevtensor); run by script/gpu-session.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/plugin_abi.h"
#include "cuda_check.h"
#include "devtensor.h"
#include "launch_probe_kernels.cuh"

#define DT_CHECK(x)                                                                     \
  do {                                                                                  \
    dt_status s_ = (x);                                                                 \
    if (s_ != DT_OK) {                                                                  \
      std::fprintf(stderr, "%s: %s\n", #x, dt_last_error_message());                    \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

__global__ void bare_add4(int64_t n, float* o, const float* a, bool as, const float* b, bool bs) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) o[i] = a[as ? 0 : i] + b[bs ? 0 : i];
}

constexpr int kCalls = 256;

template <typename Issue, typename Sync>
double issue_ns(Issue issue, Sync sync) {
  sync();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) issue();
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / kCalls;
  sync();
  return ns;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::fprintf(stderr, "launch_probe: no CUDA device\n");
    return 3;
  }
  CHECK(cudaSetDevice(0));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *a, *b, *o;
  CHECK(cudaMalloc(&a, 64));
  CHECK(cudaMalloc(&b, 64));
  CHECK(cudaMalloc(&o, 64));
  CHECK(cudaMemset(a, 0, 64));
  CHECK(cudaMemset(b, 0, 64));

  dt_device cuda0 = {DT_DEVICE_CUDA, 0};
  const int64_t four = 4;
  dt_tensor *ta = nullptr, *tb = nullptr;
  DT_CHECK(dt_tensor_ones(&four, 1, DT_FLOAT32, cuda0, &ta));
  DT_CHECK(dt_tensor_ones(&four, 1, DT_FLOAT32, cuda0, &tb));

  // The plugin devtensor loaded (dlopen of the same file returns the same instance).
  const char* plugin_path = argc > 2 ? argv[2] : "build/release/src/libdevtensor-cuda.so";
  void* plugin = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    std::fprintf(stderr, "launch_probe: %s\n", dlerror());
    return 1;
  }
  auto entry = reinterpret_cast<dtp_entry_fn>(dlsym(plugin, DTP_ENTRY_SYMBOL));
  const dtp_backend* api = entry ? entry(DTP_ABI_VERSION) : nullptr;
  if (!api) {
    std::fprintf(stderr, "launch_probe: %s speaks no ABI version %d\n", plugin_path, DTP_ABI_VERSION);
    return 1;
  }
  dtp_tensor da{}, db{}, dout{};
  for (dtp_tensor* d : {&da, &db, &dout}) {
    d->dtype = DT_FLOAT32;
    d->device = 0;
    d->ndim = 1;
    d->numel = 4;
    d->sizes[0] = 4;
    d->strides[0] = 1;
  }
  da.data = a;
  db.data = b;
  dout.data = o;
  dtp_error err;
  auto plugin_ok = [&](int32_t code, const char* what) {
    if (code != DT_OK) {
      std::fprintf(stderr, "%s: %s\n", what, err.message);
      std::exit(1);
    }
  };

  // The shared-object probe ($LAUNCH_PROBE_SO, else beside the program).
  const char* so_path = std::getenv("LAUNCH_PROBE_SO");
  void* so = dlopen(so_path ? so_path : "build/bench/bench/liblaunch_probe_so.so", RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    std::fprintf(stderr, "launch_probe: %s\n", dlerror());
    return 1;
  }
  using so_launch = int (*)(cudaStream_t, float*, const float*, const float*);
  so_launch so_fns[3] = {reinterpret_cast<so_launch>(dlsym(so, "probe_so_runtime")),
                         reinterpret_cast<so_launch>(dlsym(so, "probe_so_guarded")),
                         reinterpret_cast<so_launch>(dlsym(so, "probe_so_driver"))};
  for (so_launch f : so_fns)
    if (!f) {
      std::fprintf(stderr, "launch_probe: a probe_so_* symbol is missing\n");
      return 1;
    }

  auto sync_probe = [&] { CHECK(cudaStreamSynchronize(s)); };
  auto sync_dt = [&] { DT_CHECK(dt_synchronize(cuda0)); };
  auto sync_plugin = [&] { plugin_ok(api->synchronize(0, &err), "plugin synchronize"); };
  constexpr int kCases = 8;
  const char* names[kCases] = {"bare_small", "shaped_small", "shaped_big", "plugin",
                               "devtensor",  "so_runtime",   "so_guarded", "so_driver"};
  std::vector<double> t[kCases];
  auto run = [&](int which) {
    switch (which) {
      case 0:
        return issue_ns([&] { bare_add4<<<1, 128, 0, s>>>(4, o, a, false, b, false); CHECK(cudaGetLastError()); }, sync_probe);
      case 1:
        return issue_ns([&] {
          probe_binary_kernel<4><<<1, 256, 0, s>>>(int64_t{4}, o, a, false, b, false, ProbeAdd<0>{});
          CHECK(cudaGetLastError());
        }, sync_probe);
      case 2:
        return issue_ns([&] { CHECK(launch_probe_big(7, s, o, a, b)); }, sync_probe);
      case 3:
        return issue_ns([&] {
                          dtp_op_args args{};
                          args.t[0] = &dout;
                          args.t[1] = &da;
                          args.t[2] = &db;
                          args.nt = 3;
                          plugin_ok(api->run(DTP_OP_Add, &args, &err), "plugin run(add)");
                        },
                        sync_plugin);
      case 4:
        return issue_ns([&] { DT_CHECK(dt_add_(ta, tb)); }, sync_dt);
      default:
        return issue_ns([&] { CHECK(static_cast<cudaError_t>(so_fns[which - 5](s, o, a, b))); }, sync_probe);
    }
  };
  for (int w = 0; w < kCases; ++w) run(w);  // warm-up: module loads, first launches
  if (argc > 3) {  // one case, over and over, for a sampling profiler to attach to
    const int only = std::atoi(argv[3]);
    for (;;) run(only % kCases);
  }
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < kCases; ++k) {
      int w = (r + k) % kCases;  // rotate the order so no case always follows the same one
      t[w].push_back(run(w));
    }
  std::printf("launch_probe: host issue time per call on cuda:0, %d rounds x %d calls\n", rounds, kCalls);
  std::printf("  %-14s %10s %10s\n", "case", "median ns", "min ns");
  for (int w = 0; w < kCases; ++w) {
    std::sort(t[w].begin(), t[w].end());
    std::printf("  %-14s %10.0f %10.0f\n", names[w], t[w][t[w].size() / 2], t[w][0]);
  }
  dt_tensor_release(ta);
  dt_tensor_release(tb);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(o));
  return 0;
}
