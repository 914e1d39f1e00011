// Binary arithmetic and comparisons: the functors of ops/functors.h, computed in the
// op's math type (float for float16/bfloat16), as on the CPU. (Functor structs rather
// than __device__ lambdas: nvcc allows no extended lambda inside the generic lambdas of
// the dtype dispatch.)
#include <type_traits>

#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"
#include "ops/cast.h"
#include "ops/functors.h"

namespace dt::cudap {
namespace {

template <typename T, typename F>
struct Arith {
  F f;
  __device__ T operator()(T x, T y) const { return T(f(opmath_t<T>(x), opmath_t<T>(y))); }
};
template <typename T, typename F>
struct Compare {
  F f;
  __device__ bool operator()(T x, T y) const { return f(opmath_t<T>(x), opmath_t<T>(y)); }
};

}  // namespace

void binary(int32_t op_code, const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b) {
  const BinaryOp op = static_cast<BinaryOp>(op_code);
  dispatch(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (is_comparison(op)) {
      fn::visit_compare(op, [&](auto f) { binary_op<bool, T, T>(out, a, b, "compare", Compare<T, decltype(f)>{f}); });
      return;
    }
    fn::visit_binary(op, [&](auto f) {
      using F = decltype(f);
      if constexpr (fn::binary_accepts<F, T>()) binary_op<T, T, T>(out, a, b, "binary", Arith<T, F>{f});
      // other combinations never get here: the front end converts or refuses them
    });
  });
}

}  // namespace dt::cudap
