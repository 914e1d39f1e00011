// The shape of the plugin's binary_linear_kernel (src/cuda/elementwise.cuh): a vectorised
// grid-stride loop taking a functor, so launch_probe can launch the same kind of kernel
// from a small module and from a module as large as the plugin's binary.cu.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

template <int K>
struct ProbeAdd {
  __device__ float operator()(float x, float y) const { return x + y + static_cast<float>(K); }
};

template <typename T, int V>
struct alignas(sizeof(T) * V) ProbePack {
  T v[V];
};

template <int V, typename F>
__global__ void probe_binary_kernel(int64_t n, float* o, const float* a, bool as, const float* b, bool bs, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int64_t v = first; v < n / V; v += step) {
    ProbePack<float, V> x = *reinterpret_cast<const ProbePack<float, V>*>(a + (as ? 0 : v * V));
    ProbePack<float, V> y = *reinterpret_cast<const ProbePack<float, V>*>(b + (bs ? 0 : v * V));
    ProbePack<float, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = f(x.v[j], y.v[j]);
    *reinterpret_cast<ProbePack<float, V>*>(o + v * V) = r;
  }
  for (int64_t i = n / V * V + first; i < n; i += step) o[i] = f(a[as ? 0 : i], b[bs ? 0 : i]);
}

// From launch_probe_big.cu: kernel `which` of a module of 2048 such kernels.
cudaError_t launch_probe_big(int which, cudaStream_t s, float* o, const float* a, const float* b);
