// softmax / log_softmax over one dim of a contiguous tensor viewed as [outer, n, inner]
// (the front end makes the input contiguous). inner == 1: one warp per row of up to 1024
// elements, held in registers; one block per longer row, kept in shared memory when it
// fits so it is read from device memory once; inner > 1:
// one thread per (outer, inner) column, neighbouring threads reading neighbouring
// elements. NaN and all -inf rows behave as on the CPU.
#include <cmath>

#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace dt::cudap {
namespace {

constexpr int kRowThreads = 512;
constexpr size_t kRowCacheBytes = 48 * 1024;

template <typename M>
__device__ M warp_sum(M v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <typename M>
__device__ M warp_max(M v) {
  for (int o = 16; o > 0; o /= 2) {
    M w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w > v ? w : v;
  }
  return v;
}

// Block-wide sum or max of v (every thread gets the result). scratch: 32 values.
template <bool IsMax, typename M>
__device__ M block_all(M v, M* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = (blockDim.x + 31) / 32;
  v = IsMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  M r = lane < warps ? scratch[lane] : (IsMax ? -INFINITY : M(0));
  r = IsMax ? warp_max(r) : warp_sum(r);
  __syncthreads();
  return r;
}

template <typename T, bool Cached>
__global__ void softmax_rows(const T* x, T* y, int64_t rows, int64_t n, bool log) {
  using M = opmath_t<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ M scratch[32];
  __shared__ int any_nan;
  M* cache = reinterpret_cast<M*>(smem_raw);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    if (threadIdx.x == 0) any_nan = 0;
    __syncthreads();
    M m = -INFINITY;
    bool nan = false;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      M v = M(xr[k]);
      if (Cached) cache[k] = v;
      nan |= v != v;
      m = v > m ? v : m;
    }
    if (nan) any_nan = 1;
    m = block_all<true>(m, scratch);
    if (any_nan) m = NAN;
    if (isinf(m) && m < 0) m = 0;  // an all -inf row: exp gives zeros, as on the CPU
    M s = 0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) s += exp((Cached ? cache[k] : M(xr[k])) - m);
    s = block_all<false>(s, scratch);
    const M lse = m + ::log(s), inv = M(1) / s;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      M v = Cached ? cache[k] : M(xr[k]);
      yr[k] = T(log ? v - lse : exp(v - m) * inv);
    }
    __syncthreads();
  }
}

// Rows of at most 32 * PerLane elements (up to 1024), one warp per row, held in
// registers: the max and the sum are warp shuffles, with no shared memory and no block
// barrier (the block kernel above spends most of a short row's time in them). Lane l
// holds the V-element groups l, l + 32, ... (V > 1: 16-byte loads and stores, for rows
// whose length is a multiple of V and that start 16-byte aligned). exp is taken once per
// element and kept for the output. Same NaN and all -inf rules as softmax_rows.
template <typename T, int PerLane, int V>
__global__ void softmax_warp_rows(const T* x, T* y, int64_t rows, int n, bool log) {
  using M = opmath_t<T>;
  constexpr int Groups = PerLane / V;
  const int lane = threadIdx.x % 32;
  const int64_t warps = blockDim.x / 32;
  for (int64_t row = blockIdx.x * warps + threadIdx.x / 32; row < rows; row += static_cast<int64_t>(gridDim.x) * warps) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    M v[PerLane];
    M m = -INFINITY;
    bool nan = false;
#pragma unroll
    for (int j = 0; j < Groups; ++j) {
      const int k = (lane + 32 * j) * V;
      if (k < n) {
        Pack<T, V> pk = *reinterpret_cast<const Pack<T, V>*>(xr + k);
#pragma unroll
        for (int e = 0; e < V; ++e) v[j * V + e] = M(pk.v[e]);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) v[j * V + e] = M(-INFINITY);
      }
#pragma unroll
      for (int e = 0; e < V; ++e) {
        nan |= v[j * V + e] != v[j * V + e];
        m = v[j * V + e] > m ? v[j * V + e] : m;
      }
    }
    m = warp_max(m);
    if (__any_sync(0xffffffffu, nan)) m = NAN;
    if (isinf(m) && m < 0) m = 0;  // an all -inf row: exp gives zeros, as on the CPU
    M s = 0;
#pragma unroll
    for (int j = 0; j < Groups; ++j) {
      if ((lane + 32 * j) * V < n) {
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const M ex = exp(v[j * V + e] - m);
          s += ex;
          if (!log) v[j * V + e] = ex;  // kept: the output is ex / s
        }
      }
    }
    s = warp_sum(s);
    const M lse = m + ::log(s), inv = M(1) / s;
#pragma unroll
    for (int j = 0; j < Groups; ++j) {
      const int k = (lane + 32 * j) * V;
      if (k < n) {
        Pack<T, V> pk;
#pragma unroll
        for (int e = 0; e < V; ++e) pk.v[e] = T(log ? v[j * V + e] - lse : v[j * V + e] * inv);
        *reinterpret_cast<Pack<T, V>*>(yr + k) = pk;
      }
    }
  }
}

constexpr int kWarpRowThreads = 128;  // 4 rows per block

template <typename T, int PerLane>
void launch_warp_rows(int dev, const T* x, T* y, int64_t rows, int64_t n, bool log) {
  const int64_t warps = kWarpRowThreads / 32;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((rows + warps - 1) / warps, int64_t{1} << 20));
  constexpr int V = vector_width<T>() < PerLane ? vector_width<T>() : PerLane;
  if (V > 1 && n % V == 0 && aligned(x, 16) && aligned(y, 16))
    softmax_warp_rows<T, PerLane, V><<<blocks, kWarpRowThreads, 0, stream(dev)>>>(x, y, rows, static_cast<int>(n), log);
  else
    softmax_warp_rows<T, PerLane, 1><<<blocks, kWarpRowThreads, 0, stream(dev)>>>(x, y, rows, static_cast<int>(n), log);
}

template <typename T>
__global__ void softmax_columns(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  using M = opmath_t<T>;
  const int64_t columns = outer * inner;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = c / inner, i = c % inner;
    const T* xc = x + o * n * inner + i;
    T* yc = y + o * n * inner + i;
    M m = -INFINITY;
    bool nan = false;
    for (int64_t k = 0; k < n; ++k) {
      M v = M(xc[k * inner]);
      nan |= v != v;
      m = v > m ? v : m;
    }
    if (nan) m = NAN;
    if (isinf(m) && m < 0) m = 0;
    M s = 0;
    for (int64_t k = 0; k < n; ++k) s += exp(M(xc[k * inner]) - m);
    const M lse = m + ::log(s), inv = M(1) / s;
    for (int64_t k = 0; k < n; ++k) {
      M v = M(xc[k * inner]);
      yc[k * inner] = T(log ? v - lse : exp(v - m) * inv);
    }
  }
}

template <typename T>
void softmax_typed(const dtp_tensor& out, const dtp_tensor& in, int dim, bool log) {
  using M = opmath_t<T>;
  const int dev = out.device;
  int64_t n = in.sizes[dim], outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= in.sizes[d];
  for (int d = dim + 1; d < in.ndim; ++d) inner *= in.sizes[d];
  if (n == 0 || outer * inner == 0) return;
  const T* x = static_cast<const T*>(in.data);
  T* y = static_cast<T*>(out.data);
  if (inner == 1 && n <= 1024) {
    if (n <= 32) launch_warp_rows<T, 1>(dev, x, y, outer, n, log);
    else if (n <= 64) launch_warp_rows<T, 2>(dev, x, y, outer, n, log);
    else if (n <= 128) launch_warp_rows<T, 4>(dev, x, y, outer, n, log);
    else if (n <= 256) launch_warp_rows<T, 8>(dev, x, y, outer, n, log);
    else if (n <= 512) launch_warp_rows<T, 16>(dev, x, y, outer, n, log);
    else launch_warp_rows<T, 32>(dev, x, y, outer, n, log);
  } else if (inner == 1) {
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(outer, 65535 * 8));
    const int threads = n >= kRowThreads ? kRowThreads : (n >= 128 ? 128 : 32);
    const size_t cache = static_cast<size_t>(n) * sizeof(M);
    if (cache <= kRowCacheBytes)
      softmax_rows<T, true><<<blocks, threads, cache, stream(dev)>>>(x, y, outer, n, log);
    else
      softmax_rows<T, false><<<blocks, threads, 0, stream(dev)>>>(x, y, outer, n, log);
  } else {
    softmax_columns<T><<<grid_for(dev, outer * inner), kThreads, 0, stream(dev)>>>(x, y, outer, n, inner, log);
  }
  check_launch(dev, "softmax");
}

}  // namespace

void softmax(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, bool log) {
  dispatch_floating(static_cast<DType>(in.dtype), [&](auto tag) { softmax_typed<decltype(tag)>(out, in, dim, log); });
}

}  // namespace dt::cudap
