// The fused SGD step (KernelOp::SgdStep) on the CPU: one pass over a parameter, its
// gradient and its momentum buffer instead of the four or five elementwise ops (and two
// to four temporaries) of the unfused step. Each product and sum is rounded to the dtype
// on its own, as the unfused ops round them: this file is built without FMA contraction
// (the baseline flags), so a replaced step gives the same bits.
#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "cpu/parallel.h"

namespace dt::cpu {
namespace {

// Buf: 0 none, 1 fresh (buf = g), 2 running (buf = buf * m + g).
template <typename T, int Buf, bool Nesterov>
void sgd_rows(T* __restrict p, const T* __restrict g, T* __restrict b, int64_t n, T lr, T m) {
  parallel_for(n, kGrainCheap, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      T d = g[i];
      if constexpr (Buf != 0) {
        T v;
        if constexpr (Buf == 1) v = d;
        else v = b[i] * m + d;
        b[i] = v;
        d = Nesterov ? d + v * m : v;
      }
      p[i] = p[i] - d * lr;
    }
  });
}

template <typename T>
void sgd_typed(const Tensor& param, const Tensor& grad, const Tensor* buf, double lr, double momentum, bool fresh,
               bool nesterov) {
  T* p = param.data_as<T>();
  const T* g = grad.data_as<T>();
  T* b = buf ? buf->data_as<T>() : nullptr;
  const int64_t n = param.numel();
  // The scalars in the dtype, as the unfused ops convert theirs.
  const T l = static_cast<T>(lr), m = static_cast<T>(momentum);
  if (!b) return sgd_rows<T, 0, false>(p, g, b, n, l, m);
  if (fresh) return nesterov ? sgd_rows<T, 1, true>(p, g, b, n, l, m) : sgd_rows<T, 1, false>(p, g, b, n, l, m);
  return nesterov ? sgd_rows<T, 2, true>(p, g, b, n, l, m) : sgd_rows<T, 2, false>(p, g, b, n, l, m);
}

}  // namespace

void CpuBackend::sgd_step(const Tensor& param, const Tensor& grad, const Tensor* buf, double lr, double momentum,
                          bool fresh, bool nesterov) {
  // The front end (ops::sgd_step_) admits float32 and float64 only.
  if (param.dtype() == DType::Float64) return sgd_typed<double>(param, grad, buf, lr, momentum, fresh, nesterov);
  sgd_typed<float>(param, grad, buf, lr, momentum, fresh, nesterov);
}

}  // namespace dt::cpu
