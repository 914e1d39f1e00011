// 2-d max pooling (DTP_HOOK_MAX_POOL2D_FORWARD) on the device: one thread per output,
// walking its window inside the input (padding never read, as PyTorch's
// max_pool_forward_nchw), writing the largest value and its h * W + w in the plane.
// Without this pass the core reduces a padded windows view: a fill and a copy to pad,
// then a reduction (60x slower for ResNet's stem, measured on an H100: 1.27 ms against
// PyTorch's 29 us). Same comparison as the CPU's kernels_pool.cpp: a larger value or a
// NaN takes over, so equal values keep the first.
#include <algorithm>

#include "cuda/kernels.h"
#include "cuda/loops.cuh"
#include "cuda/runtime.h"
#include "ops/window_range.h"

namespace dt::cudap {
namespace {

struct PoolDims {
  int64_t planes, H, W;
  int OH, OW;  // an output plane's size: under 2^31 (checked before the launch)
  int kh, kw, sh, sw, dh, dw, pt, pl;
};

// blockIdx.y strides over the planes, x over one output plane.
template <typename T>
__global__ void max_pool2d_kernel(const T* x, T* out, int64_t* indices, PoolDims d) {
  using M = opmath_t<T>;
  const int plane_outputs = d.OH * d.OW;
  for (int64_t p = blockIdx.y; p < d.planes; p += gridDim.y) {
    const T* plane = x + p * d.H * d.W;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < plane_outputs; j += gridDim.x * blockDim.x) {
      const int oh = j / d.OW, ow = j - oh * d.OW;
      const int h0 = oh * d.sh - d.pt, w0 = ow * d.sw - d.pl;
      int64_t i0, i1, j0, j1;
      ops::window_inside(h0, d.kh, d.dh, d.H, &i0, &i1);
      ops::window_inside(w0, d.kw, d.dw, d.W, &j0, &j1);
      int64_t best_at = -1;  // an empty window (a dilation stepping over the input): -inf, no gradient
      M best = M(-INFINITY);
      if (i0 < i1 && j0 < j1) {
        best_at = (h0 + i0 * d.dh) * d.W + w0 + j0 * d.dw;
        best = M(plane[best_at]);
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t row_at = (h0 + i * d.dh) * d.W + w0;
          for (int64_t k = j0; k < j1; ++k) {
            const int64_t at = row_at + k * d.dw;
            const M v = M(plane[at]);
            if (v > best || v != v) {
              best = v;
              best_at = at;
            }
          }
        }
      }
      out[p * plane_outputs + j] = T(best);
      indices[p * plane_outputs + j] = best_at;
    }
  }
}

template <typename T>
void max_pool2d_typed(const dtp_tensor& out, const dtp_tensor& indices, const dtp_tensor& x, const PoolDims& d) {
  const int dev = out.device;
  // No output: an empty launch grid would be a launch error.
  if (d.planes == 0 || d.OH == 0 || d.OW == 0) return;
  const int64_t plane_outputs = static_cast<int64_t>(d.OH) * d.OW;
  const unsigned along = grid_for(dev, plane_outputs, kThreads);
  const unsigned across = static_cast<unsigned>(std::min<int64_t>(d.planes, 65535));
  max_pool2d_kernel<T><<<dim3(along, across), kThreads, 0, stream(dev)>>>(
      static_cast<const T*>(x.data), static_cast<T*>(out.data), static_cast<int64_t*>(indices.data), d);
  check_launch(dev, "max_pool2d");
}

}  // namespace

void max_pool2d(const dtp_op_args& a) {
  const dtp_tensor &out = *a.t[0], &indices = *a.t[1], &x = *a.t[2];
  const dtp_pool_geometry g = dtp_pool_geometry_unpack(a.i);
  // The ABI's library passes bring contiguous NCHW operands and fresh outputs (plugin_abi.h).
  PoolDims d;
  d.planes = x.sizes[0] * x.sizes[1];
  d.H = x.sizes[2];
  d.W = x.sizes[3];
  if (out.sizes[2] * out.sizes[3] >= (int64_t{1} << 31) || d.H >= (int64_t{1} << 30) || d.W >= (int64_t{1} << 30))
    raise(DT_ERR_NOT_SUPPORTED, "max_pool2d: planes this large are left to the core");
  d.OH = static_cast<int>(out.sizes[2]);
  d.OW = static_cast<int>(out.sizes[3]);
  d.kh = static_cast<int>(g.kernel[0]), d.kw = static_cast<int>(g.kernel[1]);
  d.sh = static_cast<int>(g.stride[0]), d.sw = static_cast<int>(g.stride[1]);
  d.dh = static_cast<int>(g.dilation[0]), d.dw = static_cast<int>(g.dilation[1]);
  d.pt = static_cast<int>(g.pad_begin[0]), d.pl = static_cast<int>(g.pad_begin[1]);
  if (d.planes == 0 || d.OH == 0 || d.OW == 0) return;
  switch (x.dtype) {
    case DT_FLOAT32: return max_pool2d_typed<float>(out, indices, x, d);
    case DT_FLOAT64: return max_pool2d_typed<double>(out, indices, x, d);
    case DT_FLOAT16: return max_pool2d_typed<float16>(out, indices, x, d);
    case DT_BFLOAT16: return max_pool2d_typed<bfloat16>(out, indices, x, d);
    default: raise(DT_ERR_NOT_SUPPORTED, "max_pool2d: the CUDA kernel takes floating dtypes");
  }
}

}  // namespace dt::cudap
