// Batch norm with fixed statistics (KernelOp::BatchNormEval) on the CPU: the scale and
// shift of each channel, then one pass over its planes (x * scale + shift). Each
// operation is rounded to the dtype as the unfused ops round theirs: this file is built
// without FMA contraction (the baseline flags), so the fused op gives the same bits.
#include <algorithm>

#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "cpu/parallel.h"
#include "ops/functors.h"

namespace dt::cpu {
namespace {

template <typename T>
void batch_norm_typed(const Tensor& out, const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor* weight,
                      const Tensor* bias, double eps) {
  const int64_t n = x.size(0), c = x.size(1), inner = n * c > 0 ? x.numel() / (n * c) : 0;
  const T* m = mean.data_as<T>();
  const T* v = var.data_as<T>();
  const T* w = weight ? weight->data_as<T>() : nullptr;
  const T* b = bias ? bias->data_as<T>() : nullptr;
  const T e = static_cast<T>(eps);  // the scalar in the dtype, as the unfused add converts it
  const T* in = x.data_as<T>();
  T* o = out.data_as<T>();
  // Planes (one sample's channel) are the unit of work; a grain of about kGrainCheap elements.
  const int64_t planes = n * c, grain = std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, inner));
  parallel_for(planes, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const int64_t ch = p % c;
      const T rstd = fn::Rsqrt()(v[ch] + e);
      const T scale = w ? w[ch] * rstd : rstd;
      const T ms = m[ch] * scale;
      const T shift = b ? b[ch] - ms : -ms;
      const T* __restrict src = in + p * inner;
      T* __restrict dst = o + p * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * scale + shift;
    }
  });
}

}  // namespace

void CpuBackend::batch_norm_eval(const Tensor& out, const Tensor& x, const Tensor& mean, const Tensor& var,
                                 const Tensor* weight, const Tensor* bias, double eps) {
  // The front end (ops::batch_norm_eval) admits contiguous float32 and float64 only.
  if (x.dtype() == DType::Float64) return batch_norm_typed<double>(out, x, mean, var, weight, bias, eps);
  batch_norm_typed<float>(out, x, mean, var, weight, bias, eps);
}

}  // namespace dt::cpu
