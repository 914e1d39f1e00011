// ReLU's gradient (KernelOp::ReluBackward) on the CPU: one pass, gx = o <= 0 ? 0 : g (a NaN
// output passes g on, as PyTorch's threshold_backward).
#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "cpu/parallel.h"

namespace dt::cpu {
namespace {

template <typename T>
void relu_backward_typed(T* __restrict gx, const T* __restrict o, const T* __restrict g, int64_t n) {
  parallel_for(n, kGrainCheap, [&](int64_t lo, int64_t hi) {
    // Both loads unconditional: the select then vectorises (a compare and a mask), where
    // a load under the condition made GCC branch per element.
    for (int64_t i = lo; i < hi; ++i) {
      const T y = o[i], d = g[i];
      gx[i] = y <= T(0) ? T(0) : d;
    }
  });
}

}  // namespace

void CpuBackend::relu_backward(const Tensor& gx, const Tensor& o, const Tensor& g) {
  // The front end (ops::relu_backward) admits contiguous float32 and float64 of one shape.
  if (o.dtype() == DType::Float64)
    return relu_backward_typed(gx.data_as<double>(), o.data_as<double>(), g.data_as<double>(), o.numel());
  relu_backward_typed(gx.data_as<float>(), o.data_as<float>(), g.data_as<float>(), o.numel());
}

}  // namespace dt::cpu
