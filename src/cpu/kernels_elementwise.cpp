// Binary, comparison, unary and where kernels: the functors of ops/functors.h looped
// over strided operands. 16-bit floats are widened to float for the math.
#include <type_traits>

#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "cpu/vec_math.h"
#include "ops/cast.h"
#include "ops/functors.h"

namespace dt::cpu {
namespace {

template <typename T, typename F>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  using M = opmath_t<T>;
  // Small contiguous operands of one shape: a plain loop, no geometry, no threads.
  const int64_t n = out.numel();
  if (n <= kGrainCheap && a.numel() == n && b.numel() == n && a.is_contiguous() && b.is_contiguous()) {
    T* o = out.data_as<T>();
    const T* x = a.data_as<T>();
    const T* y = b.data_as<T>();
    for (int64_t i = 0; i < n; ++i) o[i] = T(f(M(x[i]), M(y[i])));
    return;
  }
  const Tensor* ops[3] = {&out, &a, &b};
  auto g = make_geometry<3>(ops);
  for_each_row<3>(g, kGrainCheap, [&](char* const* p, const int64_t* s, int64_t n) {
    T* o = reinterpret_cast<T*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    const T* y = reinterpret_cast<const T*>(p[2]);
    constexpr int64_t e = sizeof(T);
    if (s[0] == e && s[1] == e && s[2] == e) {
      for (int64_t i = 0; i < n; ++i) o[i] = T(f(M(x[i]), M(y[i])));
    } else if (s[0] == e && s[1] == e && s[2] == 0) {
      const M yv = M(*y);
      for (int64_t i = 0; i < n; ++i) o[i] = T(f(M(x[i]), yv));
    } else if (s[0] == e && s[1] == 0 && s[2] == e) {
      const M xv = M(*x);
      for (int64_t i = 0; i < n; ++i) o[i] = T(f(xv, M(y[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            T(f(M(*reinterpret_cast<const T*>(p[1] + i * s[1])), M(*reinterpret_cast<const T*>(p[2] + i * s[2]))));
    }
  });
}

template <typename T, typename F>
void compare_loop(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  using M = opmath_t<T>;
  const Tensor* ops[3] = {&out, &a, &b};
  auto g = make_geometry<3>(ops);
  for_each_row<3>(g, kGrainCheap, [&](char* const* p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<bool*>(p[0] + i * s[0]) =
          f(M(*reinterpret_cast<const T*>(p[1] + i * s[1])), M(*reinterpret_cast<const T*>(p[2] + i * s[2])));
  });
}

template <typename T, typename F>
void unary_loop(const Tensor& out, const Tensor& a, F f, int64_t grain) {
  using M = opmath_t<T>;
  const Tensor* ops[2] = {&out, &a};
  auto g = make_geometry<2>(ops);
  for_each_row<2>(g, grain, [&](char* const* p, const int64_t* s, int64_t n) {
    constexpr int64_t e = sizeof(T);
    if (s[0] == e && s[1] == e) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* x = reinterpret_cast<const T*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = T(f(M(x[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) = T(f(M(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
    }
  });
}

}  // namespace

void CpuBackend::binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (is_comparison(op)) {
      fn::visit_compare(op, [&](auto f) { compare_loop<T>(out, a, b, f); });
    } else {
      fn::visit_binary(op, [&](auto f) {
        using F = decltype(f);
        if constexpr (fn::binary_accepts<F, T>()) binary_loop<T>(out, a, b, f);
        // other combinations (integer division, bool remainders) never get here: the
        // front end converts or refuses them
      });
    }
  });
}

void CpuBackend::unary(UnaryOp op, const Tensor& out, const Tensor& a) {
  const int64_t grain = unary_cost(op) == OpCost::Costly ? kGrainCostly : kGrainCheap;
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    fn::visit_unary(op, [&](auto f) {
      using F = decltype(f);
      if constexpr (fn::unary_accepts<F, T>()) unary_loop<T>(out, a, f, grain);
      // other combinations (bool inputs, integer inputs of float-only ops) never get here:
      // the front end refuses or converts them
    });
  });
}

void CpuBackend::where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const Tensor* ops[4] = {&out, &cond, &a, &b};
    auto g = make_geometry<4>(ops);
    for_each_row<4>(g, kGrainCheap, [&](char* const* p, const int64_t* s, int64_t n) {
      constexpr int64_t e = sizeof(T);
      if (s[0] == e && s[1] == 1 && s[2] == e && (s[3] == e || s[3] == 0)) {
        // Dense rows (b dense or one value, as autograd's where(mask, g, 0)): a loop the
        // compiler vectorises.
        T* o = reinterpret_cast<T*>(p[0]);
        const bool* c = reinterpret_cast<const bool*>(p[1]);
        const T* x = reinterpret_cast<const T*>(p[2]);
        const T* y = reinterpret_cast<const T*>(p[3]);
        if constexpr (std::is_same<T, float>::value) {
          select_f32(o, c, x, s[3] == 0 ? nullptr : y, *y, n);
          return;
        }
        // Both sides are loaded unconditionally, so the select has no branch.
        if (s[3] == 0) {
          const T y0 = *y;
          for (int64_t i = 0; i < n; ++i) {
            const T xv = x[i];
            o[i] = c[i] ? xv : y0;
          }
        } else {
          for (int64_t i = 0; i < n; ++i) {
            const T xv = x[i], yv = y[i];
            o[i] = c[i] ? xv : yv;
          }
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            c ? *reinterpret_cast<const T*>(p[2] + i * s[2]) : *reinterpret_cast<const T*>(p[3] + i * s[3]);
      }
    });
  });
}

}  // namespace dt::cpu
