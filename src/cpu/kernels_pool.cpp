// Max pooling on the CPU: one pass over each input plane, planes in parallel, writing the
// largest value of each window and its index (h * W + w in the plane, as PyTorch's
// max_pool2d_with_indices). The generic path (windows view, a copy, two reductions) read
// each element several times and made lenet5's training step spend a fifth of its time
// pooling.
#include <cmath>
#include <limits>

#include "cpu/cpu_backend.h"
#include "cpu/parallel.h"

namespace dt::cpu {
namespace {

template <typename T>
void max_pool_planes(const Tensor& out, const Tensor& indices, const Tensor& x, const PoolGeometry& g) {
  const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = out.size(2), OW = out.size(3);
  const T* in = x.data_as<T>();
  T* o = out.data_as<T>();
  int64_t* idx = indices.data_as<int64_t>();
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, OH * OW * g.kernel[0] * g.kernel[1]));
  parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = in + p * H * W;
      T* op = o + p * OH * OW;
      int64_t* ip = idx + p * OH * OW;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t h0 = oh * g.stride[0] - g.pad_begin[0];
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t w0 = ow * g.stride[1] - g.pad_begin[1];
          T best = -std::numeric_limits<T>::infinity();
          int64_t best_at = -1;
          for (int64_t i = 0; i < g.kernel[0]; ++i) {
            const int64_t h = h0 + i * g.dilation[0];
            if (h < 0 || h >= H) continue;
            for (int64_t j = 0; j < g.kernel[1]; ++j) {
              const int64_t w = w0 + j * g.dilation[1];
              if (w < 0 || w >= W) continue;
              const T v = plane[h * W + w];
              // PyTorch's comparison: a larger value or a NaN takes over; -inf everywhere
              // keeps the first element.
              if (v > best || std::isnan(v) || best_at < 0) {
                best = v;
                best_at = h * W + w;
              }
            }
          }
          op[oh * OW + ow] = best;
          ip[oh * OW + ow] = best_at;
        }
      }
    }
  });
}

}  // namespace

bool CpuBackend::max_pool2d_forward(const Tensor& out, const Tensor& indices, const Tensor& x, const PoolGeometry& g) {
  if (!x.is_contiguous() || !out.is_contiguous() || !indices.is_contiguous() || indices.dtype() != DType::Int64)
    return false;
  if (x.dtype() == DType::Float32) {
    max_pool_planes<float>(out, indices, x, g);
    return true;
  }
  if (x.dtype() == DType::Float64) {
    max_pool_planes<double>(out, indices, x, g);
    return true;
  }
  return false;
}

}  // namespace dt::cpu
