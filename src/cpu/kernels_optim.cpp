// The fused SGD step (KernelOp::SgdStep) on the CPU: one pass over a parameter, its
// gradient and its momentum buffer instead of the four or five elementwise ops (and two
// to four temporaries) of the unfused step. Each product and sum is rounded to the dtype
// on its own, as the unfused ops round them: this file is built without FMA contraction
// (the baseline flags), so a replaced step gives the same bits. The multi-parameter form
// (KernelOp::SgdStepMulti) runs the same loop for each row of its table. The fused
// Adam, RMSprop and Adagrad steps (KernelOp::AdaptiveStep) follow, under the same rule;
// the file is built with -fno-math-errno (src/CMakeLists.txt), which changes no result
// but lets their square roots vectorise.
#include <cmath>

#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "cpu/parallel.h"
#include "ops/ops.h"  // AdaptiveKind, AdaptiveFlags

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

// The fused Adam, RMSprop and Adagrad steps (DTP_OP_AdaptiveStep): per element, the
// operations of the unfused plan (nn/optim.cpp, nn/optim_adaptive.cpp) in its order,
// each rounded to T, the constants converted to T as the unfused ops convert theirs.
template <typename T>
struct AdaptiveArgs {
  T* p;
  const T* g;
  T* s[3];
  const double* c;  // the constants, in plugin_abi.h's order for the kind
  int flags;
};

// The flags are template arguments so that each loop body is branch-free and vectorises.
template <typename T, bool L2, bool Decoupled>
void adam_rows(const AdaptiveArgs<T>& a, int64_t n) {
  const T wd = T(a.c[0]), b1 = T(a.c[1]), one_b1 = T(a.c[2]), b2 = T(a.c[3]), one_b2 = T(a.c[4]),
          sqrt_bc2 = T(a.c[5]), eps = T(a.c[6]), step = T(a.c[7]), decay = T(a.c[8]);
  parallel_for(n, kGrainCheap, [=](int64_t lo, int64_t hi) {
    // Constants captured by value, loads first, stores last, through restrict pointers
    // local to the loop: so that it vectorises.
    T* __restrict p = a.p;
    T* __restrict m = a.s[0];
    T* __restrict v = a.s[1];
    const T* __restrict g = a.g;
    for (int64_t i = lo; i < hi; ++i) {
      T gi = g[i];
      const T p0 = p[i], m0 = m[i], v0 = v[i];
      if constexpr (L2) gi = gi + p0 * wd;
      const T mi = m0 * b1 + gi * one_b1;
      const T vi = v0 * b2 + (gi * gi) * one_b2;
      const T denom = std::sqrt(vi) / sqrt_bc2 + eps;
      const T pd = Decoupled ? p0 * decay : p0;
      m[i] = mi;
      v[i] = vi;
      p[i] = pd - (mi / denom) * step;
    }
  });
}

template <typename T>
void adam_dispatch(const AdaptiveArgs<T>& a, int64_t n) {
  if (a.flags & ops::kL2Decay) return adam_rows<T, true, false>(a, n);
  if (a.flags & ops::kDecoupledDecay) return adam_rows<T, false, true>(a, n);
  adam_rows<T, false, false>(a, n);
}

template <typename T, bool L2, bool Centered, bool WithBuf>
void rmsprop_rows(const AdaptiveArgs<T>& a, int64_t n) {
  const T wd = T(a.c[0]), alpha = T(a.c[1]), one_alpha = T(a.c[2]), eps = T(a.c[3]), momentum = T(a.c[4]),
          lr = T(a.c[5]);
  parallel_for(n, kGrainCheap, [=](int64_t lo, int64_t hi) {
    // Constants captured by value, loads first, stores last, through restrict pointers
    // local to the loop: so that it vectorises.
    T* __restrict p = a.p;
    T* __restrict sq = a.s[0];
    T* __restrict buf = WithBuf ? a.s[1] : a.s[0];
    T* __restrict ga = Centered ? a.s[WithBuf ? 2 : 1] : a.s[0];
    const T* __restrict g = a.g;
    for (int64_t i = lo; i < hi; ++i) {
      T gi = g[i];
      const T p0 = p[i], s0 = sq[i];
      const T ga0 = Centered ? ga[i] : T(0), b0 = WithBuf ? buf[i] : T(0);
      if constexpr (L2) gi = gi + p0 * wd;
      const T si = s0 * alpha + (gi * gi) * one_alpha;
      const T gai = ga0 * alpha + gi * one_alpha;  // used when Centered
      const T avg = (Centered ? std::sqrt(si - gai * gai) : std::sqrt(si)) + eps;
      const T bi = b0 * momentum + gi / avg;  // used WithBuf
      sq[i] = si;
      if constexpr (Centered) ga[i] = gai;
      if constexpr (WithBuf) {
        buf[i] = bi;
        p[i] = p0 - bi * lr;
      } else {
        p[i] = p0 - (gi / avg) * lr;
      }
    }
  });
}

template <typename T, bool L2>
void rmsprop_dispatch_l2(const AdaptiveArgs<T>& a, int64_t n) {
  const bool centered = a.flags & ops::kCentered, with_buf = a.flags & ops::kMomentum;
  if (centered) return with_buf ? rmsprop_rows<T, L2, true, true>(a, n) : rmsprop_rows<T, L2, true, false>(a, n);
  with_buf ? rmsprop_rows<T, L2, false, true>(a, n) : rmsprop_rows<T, L2, false, false>(a, n);
}

template <typename T>
void rmsprop_dispatch(const AdaptiveArgs<T>& a, int64_t n) {
  if (a.flags & ops::kL2Decay) return rmsprop_dispatch_l2<T, true>(a, n);
  rmsprop_dispatch_l2<T, false>(a, n);
}

template <typename T, bool L2>
void adagrad_rows(const AdaptiveArgs<T>& a, int64_t n) {
  const T wd = T(a.c[0]), eps = T(a.c[1]), clr = T(a.c[2]);
  parallel_for(n, kGrainCheap, [=](int64_t lo, int64_t hi) {
    T* __restrict p = a.p;
    T* __restrict sum = a.s[0];
    const T* __restrict g = a.g;
    for (int64_t i = lo; i < hi; ++i) {
      T gi = g[i];
      const T p0 = p[i];
      if constexpr (L2) gi = gi + p0 * wd;
      const T si = sum[i] + gi * gi;
      sum[i] = si;
      p[i] = p0 - (gi / (std::sqrt(si) + eps)) * clr;
    }
  });
}

template <typename T>
void adaptive_typed(const Tensor& param, const Tensor& grad, const Tensor& constants, const Tensor* const* state,
                    int nstate, int kind, int flags) {
  AdaptiveArgs<T> a{param.data_as<T>(), grad.data_as<T>(), {nullptr, nullptr, nullptr}, constants.data_as<double>(),
                    flags};
  for (int k = 0; k < nstate; ++k) a.s[k] = state[k]->data_as<T>();
  const int64_t n = param.numel();
  if (kind == static_cast<int>(ops::AdaptiveKind::Adam)) return adam_dispatch(a, n);
  if (kind == static_cast<int>(ops::AdaptiveKind::Rmsprop)) return rmsprop_dispatch(a, n);
  if (flags & ops::kL2Decay) return adagrad_rows<T, true>(a, n);
  adagrad_rows<T, false>(a, n);
}

}  // namespace

void CpuBackend::adaptive_step(const Tensor& param, const Tensor& grad, const Tensor& constants,
                               const Tensor* const* state, int nstate, int kind, int flags) {
  // The front end (ops::adaptive_step_) admits float32 and float64 only.
  if (param.dtype() == DType::Float64) return adaptive_typed<double>(param, grad, constants, state, nstate, kind, flags);
  adaptive_typed<float>(param, grad, constants, state, nstate, kind, flags);
}

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
