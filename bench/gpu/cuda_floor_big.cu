// cuda_floor's second module: 1024 kernels in one translation unit (so one CUDA module),
// about as many as the plugin's binary.cu holds, to test whether the driver's launch
// cost grows with the size of the module the kernel lives in (bench/gpu/NOTES.md).
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

template <int K>
__global__ void big_add(int64_t n, float* o, const float* a, bool as, const float* b, bool bs) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) o[i] = a[as ? 0 : i] + b[bs ? 0 : i] + static_cast<float>(K);
}

template <int... K>
const void* const* all_kernels(std::integer_sequence<int, K...>) {
  static const void* const table[] = {reinterpret_cast<const void*>(&big_add<K>)...};
  return table;
}

cudaError_t launch_from_big_module(int which, cudaStream_t s, float* o, const float* a, const float* b) {
  const void* const* table = all_kernels(std::make_integer_sequence<int, 1024>{});
  int64_t n = 4;
  bool no = false;
  void* args[] = {&n, &o, &a, &no, &b, &no};
  return cudaLaunchKernel(table[which & 1023], dim3(1), dim3(128), args, 0, s);
}
