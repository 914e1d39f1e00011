// launch_probe's large module: 2048 instantiations of probe_binary_kernel in one
// translation unit (so one CUDA module), about as many kernels as the plugin's binary.cu.
#include <utility>

#include "launch_probe_kernels.cuh"

template <int... K>
const void* const* probe_table(std::integer_sequence<int, K...>) {
  static const void* const table[] = {reinterpret_cast<const void*>(&probe_binary_kernel<4, ProbeAdd<K>>)...};
  return table;
}

cudaError_t launch_probe_big(int which, cudaStream_t s, float* o, const float* a, const float* b) {
  const void* const* table = probe_table(std::make_integer_sequence<int, 2048>{});
  int64_t n = 4;
  bool no = false;
  ProbeAdd<0> f;  // every ProbeAdd<K> is empty: one byte of parameters, like the plugin's functors
  void* args[] = {&n, &o, &a, &no, &b, &no, &f};
  return cudaLaunchKernel(table[which & 2047], dim3(1), dim3(256), args, 0, s);
}
