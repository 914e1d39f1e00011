// launch_probe's shared library: the plugin-shaped kernel launched from a dlopen'd shared
// object that links the CUDA runtime statically, as libdevtensor-cuda.so does, three ways:
//   probe_so_runtime  <<<>>> (cudaLaunchKernel), nothing else
//   probe_so_guarded  cudaGetDevice + <<<>>> + cudaGetLastError: the plugin's calls
//                     around a launch (DeviceGuard, check_launch)
//   probe_so_driver   cuLaunchKernel on a CUfunction looked up once: the runtime bypassed
// so that launch_probe can tell the cost of the runtime inside a shared object from the
// cost of the plugin's own code (bench/gpu/NOTES.md).
#include <cuda.h>

#include "launch_probe_kernels.cuh"

#define PROBE_SO_API extern "C" __attribute__((visibility("default")))

namespace {
CUfunction g_fn = nullptr;
}

PROBE_SO_API int probe_so_runtime(cudaStream_t s, float* o, const float* a, const float* b) {
  probe_binary_kernel<4><<<1, 256, 0, s>>>(int64_t{4}, o, a, false, b, false, ProbeAdd<1>{});
  return static_cast<int>(cudaGetLastError());
}

PROBE_SO_API int probe_so_guarded(cudaStream_t s, float* o, const float* a, const float* b) {
  int device = -1;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return static_cast<int>(e);
  probe_binary_kernel<4><<<1, 256, 0, s>>>(int64_t{4}, o, a, false, b, false, ProbeAdd<1>{});
  return static_cast<int>(cudaGetLastError());
}

PROBE_SO_API int probe_so_driver(cudaStream_t s, float* o, const float* a, const float* b) {
  if (!g_fn) {
    cudaFunction_t f;
    cudaError_t e = cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(&probe_binary_kernel<4, ProbeAdd<1>>));
    if (e != cudaSuccess) return static_cast<int>(e);
    g_fn = reinterpret_cast<CUfunction>(f);
  }
  int64_t n = 4;
  bool no = false;
  ProbeAdd<1> f;
  void* args[] = {&n, &o, &a, &no, &b, &no, &f};
  return cuLaunchKernel(g_fn, 1, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(s), args, nullptr) == CUDA_SUCCESS ? 0 : 1;
}
