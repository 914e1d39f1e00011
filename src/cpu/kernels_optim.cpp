// The fused SGD step (KernelOp::SgdStep) on the CPU: one pass over a parameter, its
// gradient and its momentum buffer instead of the four or five elementwise ops (and two
// to four temporaries) of the unfused step. Each product and sum is rounded to the dtype
// on its own, as the unfused ops round them: this file is built without FMA contraction
// (the baseline flags), so a replaced step gives the same bits. The multi-parameter form
// (KernelOp::SgdStepMulti) runs the same loop for each row of its table.
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
void sgd_pointers(T* p, const T* g, T* b, int64_t n, double lr, double momentum, bool fresh, bool nesterov) {
  // The scalars in the dtype, as the unfused ops convert theirs.
  const T l = static_cast<T>(lr), m = static_cast<T>(momentum);
  if (!b) return sgd_rows<T, 0, false>(p, g, b, n, l, m);
  if (fresh) return nesterov ? sgd_rows<T, 1, true>(p, g, b, n, l, m) : sgd_rows<T, 1, false>(p, g, b, n, l, m);
  return nesterov ? sgd_rows<T, 2, true>(p, g, b, n, l, m) : sgd_rows<T, 2, false>(p, g, b, n, l, m);
}

template <typename T>
void sgd_typed(const Tensor& param, const Tensor& grad, const Tensor* buf, double lr, double momentum, bool fresh,
               bool nesterov) {
  sgd_pointers<T>(param.data_as<T>(), grad.data_as<T>(), buf ? buf->data_as<T>() : nullptr, param.numel(), lr, momentum,
                  fresh, nesterov);
}

// One step per row of the table (plugin_abi.h, DTP_OP_SgdStepMulti).
template <typename T>
void sgd_table(const Tensor& table, double lr, double momentum, bool nesterov) {
  const int64_t* row = table.data_as<int64_t>();
  for (int64_t r = 0; r < table.size(0); ++r, row += 5)
    sgd_pointers<T>(reinterpret_cast<T*>(row[0]), reinterpret_cast<const T*>(row[1]), reinterpret_cast<T*>(row[2]),
                    row[3], lr, momentum, row[4] != 0, nesterov);
}

}  // namespace

void CpuBackend::sgd_step_multi(const Tensor& param0, const Tensor& table, double lr, double momentum, bool nesterov) {
  if (param0.dtype() == DType::Float64) return sgd_table<double>(table, lr, momentum, nesterov);
  sgd_table<float>(table, lr, momentum, nesterov);
}

void CpuBackend::sgd_step(const Tensor& param, const Tensor& grad, const Tensor* buf, double lr, double momentum,
                          bool fresh, bool nesterov) {
  // The front end (ops::sgd_step_) admits float32 and float64 only.
  if (param.dtype() == DType::Float64) return sgd_typed<double>(param, grad, buf, lr, momentum, fresh, nesterov);
  sgd_typed<float>(param, grad, buf, lr, momentum, fresh, nesterov);
}

}  // namespace dt::cpu
