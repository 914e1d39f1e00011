// Unary math and where(): the functors of ops/functors.h in the op's math type.
#include <type_traits>

#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"
#include "ops/cast.h"
#include "ops/functors.h"

namespace dt::cudap {
namespace {

template <typename T, typename F>
struct Math1 {
  F f;
  __device__ T operator()(T x) const { return T(f(opmath_t<T>(x))); }
};

template <typename T>
void where_typed(const dtp_tensor& out, const dtp_tensor& cond, const dtp_tensor& a, const dtp_tensor& b) {
  const dtp_tensor* ops[4] = {&out, &cond, &a, &b};
  Geometry<4> g = make_geometry<4>(ops);
  T* o = static_cast<T*>(out.data);
  const bool* c = static_cast<const bool*>(cond.data);
  const T* x = static_cast<const T*>(a.data);
  const T* y = static_cast<const T*>(b.data);
  launch(out.device, g.numel, "where", [=] __device__(int64_t i) {
    int64_t off[4];
    g.offsets(i, off);
    o[off[0]] = c[off[1]] ? x[off[2]] : y[off[3]];
  });
}

}  // namespace

void unary(int32_t op_code, const dtp_tensor& out, const dtp_tensor& a) {
  const UnaryOp op = static_cast<UnaryOp>(op_code);
  dispatch(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    fn::visit_unary(op, [&](auto f) {
      using F = decltype(f);
      if constexpr (fn::unary_accepts<F, T>()) unary_op<T, T>(out, a, "unary", Math1<T, F>{f});
      // other combinations never get here: the front end refuses or converts them
    });
  });
}

void where(const dtp_tensor& out, const dtp_tensor& cond, const dtp_tensor& a, const dtp_tensor& b) {
  dispatch(out.dtype, [&](auto tag) { where_typed<decltype(tag)>(out, cond, a, b); });
}

}  // namespace dt::cudap
