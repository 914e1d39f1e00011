// How CUDA kernels walk tensors: N operands described by dtp_tensor are laid over the
// output's shape (broadcast inputs get stride 0), adjacent dims are merged where every
// operand allows it, and each thread turns a linear index into N element offsets.
// Launches are grid-stride loops on devtensor's stream (launch.cuh), checked after each.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/dtype.h"
#include "core/plugin_abi.h"
#include "cuda/launch.cuh"
#include "cuda/runtime.h"

namespace dt::cudap {

constexpr int kThreads = 256;

// Offsets (in elements) of N operands for each linear index of the iteration space.
template <int N>
struct Geometry {
  int ndim = 0;
  int64_t numel = 1;
  int64_t sizes[DT_MAX_DIMS];
  int64_t strides[N][DT_MAX_DIMS];

  __host__ __device__ void offsets(int64_t linear, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d > 0; --d) {
      int64_t size = sizes[d];
      int64_t i = linear % size;
      linear /= size;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += i * strides[k][d];
    }
    // What is left indexes the outermost dim (linear < numel): no division, so a single
    // merged dim (contiguous data) costs one multiply per operand.
    if (ndim > 0) {
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += linear * strides[k][0];
    }
  }
};

// ops[0] is the output; every other operand broadcasts to its shape (aligned right).
template <int N>
Geometry<N> make_geometry(const dtp_tensor* const (&ops)[N]) {
  Geometry<N> g;
  const dtp_tensor& out = *ops[0];
  int64_t sizes[DT_MAX_DIMS];
  int64_t strides[N][DT_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < out.ndim; ++d) {
    if (out.sizes[d] == 1) continue;  // size-1 dims carry no offset
    sizes[nd] = out.sizes[d];
    for (int k = 0; k < N; ++k) {
      const dtp_tensor& t = *ops[k];
      int td = d - (out.ndim - t.ndim);
      strides[k][nd] = (td < 0 || t.sizes[td] == 1) ? 0 : t.strides[td];
    }
    ++nd;
  }
  // Merge dim d into d-1 where, for every operand, stepping d-1 equals a full run of d.
  g.ndim = 0;
  for (int d = 0; d < nd; ++d) {
    bool merge = g.ndim > 0;
    for (int k = 0; merge && k < N; ++k)
      merge = g.strides[k][g.ndim - 1] == strides[k][d] * sizes[d];
    if (merge) {
      g.sizes[g.ndim - 1] *= sizes[d];
      for (int k = 0; k < N; ++k) g.strides[k][g.ndim - 1] = strides[k][d];
    } else {
      g.sizes[g.ndim] = sizes[d];
      for (int k = 0; k < N; ++k) g.strides[k][g.ndim] = strides[k][d];
      ++g.ndim;
    }
  }
  g.numel = out.numel;
  return g;
}

// True when operand k walks memory in order (one merged dim of stride 1, or nothing).
template <int N>
bool linear_operand(const Geometry<N>& g, int k) {
  return g.ndim == 0 || (g.ndim == 1 && g.strides[k][0] == 1);
}
// True when operand k is one value broadcast everywhere.
template <int N>
bool scalar_operand(const Geometry<N>& g, int k) {
  for (int d = 0; d < g.ndim; ++d)
    if (g.strides[k][d] != 0) return false;
  return true;
}

int multiprocessors(int device);

template <typename F>
__global__ void grid_stride_kernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    f(i);
}

// Blocks for n independent items: enough to fill every SM several times, no more.
inline unsigned grid_for(int device, int64_t n, int threads = kThreads) {
  int64_t want = (n + threads - 1) / threads;
  int64_t cap = static_cast<int64_t>(multiprocessors(device)) * 16;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(want, cap)));
}

// f(i) for i in [0, n) on the device's stream.
template <typename F>
void launch(int device, int64_t n, const char* name, F f) {
  if (n <= 0) return;
  launch_kernel<&grid_stride_kernel<F>>(device, grid_for(device, n), kThreads, name, n, f);
}

// Maps a dtype code to its C++ storage type for kernels: f(T{}).
template <typename F>
decltype(auto) dispatch(int32_t dtype, F&& f) {
  return dispatch_dtype(static_cast<DType>(dtype), std::forward<F>(f));
}

}  // namespace dt::cudap
