// cuda_floor: what the CUDA runtime itself costs on the host per call, on this machine,
// so add_4_launch (bench/gpu/run) can be read against a floor: a kernel launch, a
// stream-ordered allocate+free from a pool, a pool attribute read, cudaGetDevice.
// Each figure is the mean host time per call over batches of 256 calls with one stream
// synchronisation per batch, best of 20 batches-of-batches; "issue only" stops the clock
// before the synchronisation, so it is the host's share alone (if it equals the figure
// with the synchronisation, the host is the bottleneck, not the GPU). Built by script/gpu-pack
// (nvcc, no other dependency); run on a GPU machine by script/gpu-session.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "cuda_check.h"


__global__ void empty_kernel() {}
// cuda_floor_big.cu: a kernel like add4 in a module of 1024 kernels.
cudaError_t launch_from_big_module(int which, cudaStream_t s, float* o, const float* a, const float* b);
__global__ void add4(int64_t n, float* o, const float* a, bool as, const float* b, bool bs) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) o[i] = a[as ? 0 : i] + b[bs ? 0 : i];
}

template <typename F>
double issue_ns(cudaStream_t s, F f) {
  using clock = std::chrono::steady_clock;
  double best = 1e30;
  for (int rep = 0; rep < 40; ++rep) {
    CHECK(cudaStreamSynchronize(s));
    auto t0 = clock::now();
    for (int i = 0; i < 256; ++i) f();
    double ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count() / 256;
    best = std::min(best, ns);
  }
  CHECK(cudaStreamSynchronize(s));
  return best;
}

template <typename F>
double per_call_ns(cudaStream_t s, F f) {
  using clock = std::chrono::steady_clock;
  double best = 1e30;
  for (int rep = 0; rep < 20; ++rep) {
    auto t0 = clock::now();
    for (int k = 0; k < 8; ++k) {
      for (int i = 0; i < 256; ++i) f();
      CHECK(cudaStreamSynchronize(s));
    }
    double ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count() / (8 * 256);
    best = std::min(best, ns);
  }
  return best;
}

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::fprintf(stderr, "cuda_floor: no CUDA device\n");
    return 3;
  }
  CHECK(cudaSetDevice(0));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaMemPool_t pool;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  CHECK(cudaMemPoolCreate(&pool, &props));
  uint64_t threshold = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  float *a, *b, *o;
  CHECK(cudaMalloc(&a, 64));
  CHECK(cudaMalloc(&b, 64));
  CHECK(cudaMalloc(&o, 64));

  double launch_empty = per_call_ns(s, [&] {
    empty_kernel<<<1, 128, 0, s>>>();
    CHECK(cudaGetLastError());
  });
  double launch_add = per_call_ns(s, [&] {
    add4<<<1, 128, 0, s>>>(4, o, a, false, b, false);
    CHECK(cudaGetLastError());
  });
  double launch_issue = issue_ns(s, [&] {
    add4<<<1, 128, 0, s>>>(4, o, a, false, b, false);
    CHECK(cudaGetLastError());
  });
  cudaFunction_t fn;
  CHECK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&add4)));
  int64_t n4 = 4;
  bool no = false;
  void* params[] = {&n4, &o, &a, &no, &b, &no};
  double launch_driver = per_call_ns(s, [&] {
    if (cuLaunchKernel(reinterpret_cast<CUfunction>(fn), 1, 1, 1, 128, 1, 1, 0, s, params, nullptr) != CUDA_SUCCESS) {
      std::fprintf(stderr, "cuLaunchKernel failed\n");
      std::exit(1);
    }
  });
  double launch_big = per_call_ns(s, [&] { CHECK(launch_from_big_module(7, s, o, a, b)); });
  double launch_big_issue = issue_ns(s, [&] { CHECK(launch_from_big_module(7, s, o, a, b)); });
  double alloc_free = per_call_ns(s, [&] {
    void* p = nullptr;
    CHECK(cudaMallocFromPoolAsync(&p, 16, pool, s));
    CHECK(cudaFreeAsync(p, s));
  });
  double attr = per_call_ns(s, [&] {
    uint64_t r = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &r));
  });
  double get_device = per_call_ns(s, [&] {
    int d = -1;
    CHECK(cudaGetDevice(&d));
  });
  double add_alloc = per_call_ns(s, [&] {
    void* p = nullptr;
    CHECK(cudaMallocFromPoolAsync(&p, 16, pool, s));
    add4<<<1, 128, 0, s>>>(4, static_cast<float*>(p), a, false, b, false);
    CHECK(cudaGetLastError());
    CHECK(cudaFreeAsync(p, s));
  });
  std::printf("cuda_floor: host time per call on cuda:0 (best of 20 x 2048 calls)\n");
  std::printf("  empty kernel launch                      %7.0f ns\n", launch_empty);
  std::printf("  add kernel launch (6 arguments)          %7.0f ns\n", launch_add);
  std::printf("  add kernel launch, issue only            %7.0f ns\n", launch_issue);
  std::printf("  add kernel launch, cuLaunchKernel         %7.0f ns\n", launch_driver);
  std::printf("  add launch, kernel of a 1024-kernel module %5.0f ns\n", launch_big);
  std::printf("  the same, issue only                     %7.0f ns\n", launch_big_issue);
  std::printf("  cudaMallocFromPoolAsync + cudaFreeAsync  %7.0f ns\n", alloc_free);
  std::printf("  cudaMemPoolGetAttribute                  %7.0f ns\n", attr);
  std::printf("  cudaGetDevice                            %7.0f ns\n", get_device);
  std::printf("  allocate + add launch + free             %7.0f ns\n", add_alloc);
  return 0;
}
