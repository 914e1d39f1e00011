// Batch norm with fixed statistics (DTP_OP_BatchNormEval) on the device: one launch per
// layer instead of the nine of the unfused ops (seven of them on [C] vectors). Blocks
// run along one plane (one sample's channel, contiguous): each thread folds its channel's
// scale and shift once, then streams x * scale + shift in 16-byte packs where the planes
// allow (as cuDNN's inference kernel does). Rounding as the unfused ops
// (rounding.cuh, and the same 1 / sqrt functor), so the fused op gives their bits.
#include <algorithm>

#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"
#include "cuda/rounding.cuh"
#include "cuda/runtime.h"
#include "ops/functors.h"

namespace dt::cudap {
namespace {

constexpr int kNormThreads = 256;

template <typename T>
__device__ __forceinline__ T norm_apply(T x, T scale, T shift) {
  return add_rn(mul_rn(x, scale), shift);
}

// V elements per access: 16-byte packs when every plane starts 16-byte aligned (V = 1
// otherwise). blockIdx.y strides over the planes, blockIdx.x along one.
template <typename T, int V>
__global__ void batch_norm_eval_kernel(T* out, const T* x, const T* mean, const T* var, const T* weight, const T* bias,
                                       T eps, int64_t channels, int64_t inner, int64_t planes) {
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y) {
    const int64_t c = p % channels;
    const T rstd = fn::Rsqrt()(add_rn(var[c], eps));
    const T scale = weight ? mul_rn(weight[c], rstd) : rstd;
    const T ms = mul_rn(mean[c], scale);
    const T shift = bias ? sub_rn(bias[c], ms) : -ms;
    const T* src = x + p * inner;
    T* dst = out + p * inner;
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    for (int64_t v = first; v < inner / V; v += step) {
      Pack<T, V> pk = reinterpret_cast<const Pack<T, V>*>(src)[v];
#pragma unroll
      for (int j = 0; j < V; ++j) pk.v[j] = norm_apply(pk.v[j], scale, shift);
      reinterpret_cast<Pack<T, V>*>(dst)[v] = pk;
    }
    for (int64_t i = inner / V * V + first; i < inner; i += step) dst[i] = norm_apply(src[i], scale, shift);
  }
}

template <typename T>
void batch_norm_typed(const dtp_tensor& out, const dtp_tensor& x, const dtp_tensor& mean, const dtp_tensor& var,
                      const dtp_tensor* weight, const dtp_tensor* bias, double eps) {
  const int dev = out.device;
  const int64_t n = x.sizes[0], c = x.sizes[1];
  const int64_t planes = n * c, inner = planes > 0 ? x.numel / planes : 0;
  if (planes == 0 || inner == 0) return;
  constexpr int V = vector_width<T>();
  const bool packed = inner % V == 0 && aligned(x.data, 16) && aligned(out.data, 16);
  // Threads: a plane's accesses rounded up to whole warps, at most kNormThreads (a 7x7
  // plane gets 64, not 256 mostly idle). x: enough blocks to cover a plane (capped by the
  // device's fill); y: planes, up to CUDA's 65535 (the kernel strides over the rest).
  const int64_t accesses = packed ? inner / V : inner;
  const int threads = static_cast<int>(std::min<int64_t>(kNormThreads, (accesses + 31) / 32 * 32));
  const unsigned along = grid_for(dev, accesses, threads);
  const unsigned across = static_cast<unsigned>(std::min<int64_t>(planes, 65535));
  auto* o = static_cast<T*>(out.data);
  auto* in = static_cast<const T*>(x.data);
  auto* m = static_cast<const T*>(mean.data);
  auto* v = static_cast<const T*>(var.data);
  const T* w = weight ? static_cast<const T*>(weight->data) : nullptr;
  const T* b = bias ? static_cast<const T*>(bias->data) : nullptr;
  if (packed)
    batch_norm_eval_kernel<T, V><<<dim3(along, across), threads, 0, stream(dev)>>>(o, in, m, v, w, b, static_cast<T>(eps),
                                                                                  c, inner, planes);
  else
    batch_norm_eval_kernel<T, 1><<<dim3(along, across), threads, 0, stream(dev)>>>(o, in, m, v, w, b, static_cast<T>(eps),
                                                                                  c, inner, planes);
  check_launch(dev, "batch_norm");
}

}  // namespace

void batch_norm_eval(const dtp_tensor& out, const dtp_tensor& x, const dtp_tensor& mean, const dtp_tensor& var,
                     const dtp_tensor* weight, const dtp_tensor* bias, double eps) {
  // The front end admits contiguous float32 and float64 only.
  if (x.dtype == DT_FLOAT64) return batch_norm_typed<double>(out, x, mean, var, weight, bias, eps);
  batch_norm_typed<float>(out, x, mean, var, weight, bias, eps);
}

}  // namespace dt::cudap
