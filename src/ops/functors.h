// The math of every elementwise op, defined once and compiled for every backend
// (__host__ __device__ under nvcc). Functors take and return the op's math type
// (opmath_t: float for float16/bfloat16); integer arithmetic wraps like PyTorch's
// (done in unsigned to stay clear of C++'s signed-overflow UB).
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/macros.h"
#include "core/op_kinds.h"

namespace dt::fn {

template <typename T>
using uns_t = typename std::conditional<std::is_integral<T>::value && !std::is_same<T, bool>::value,
                                        std::make_unsigned<T>, std::common_type<T>>::type::type;

template <typename T> DT_HD T wrap_add(T a, T b) {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value)
    return static_cast<T>(static_cast<uns_t<T>>(a) + static_cast<uns_t<T>>(b));
  else return a + b;
}
template <typename T> DT_HD T wrap_sub(T a, T b) {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value)
    return static_cast<T>(static_cast<uns_t<T>>(a) - static_cast<uns_t<T>>(b));
  else return a - b;
}
template <typename T> DT_HD T wrap_mul(T a, T b) {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
    // at least `unsigned`: uint16_t operands would be promoted to (signed) int, and
    // 65535 * 65535 overflows it
    using U = typename std::common_type<uns_t<T>, unsigned>::type;
    return static_cast<T>(static_cast<U>(static_cast<uns_t<T>>(a)) * static_cast<U>(static_cast<uns_t<T>>(b)));
  } else {
    return a * b;
  }
}

template <typename T> DT_HD bool is_nan(T v) {
  if constexpr (std::is_floating_point<T>::value) return v != v;
  else return false;
}

struct Add { template <typename T> DT_HD T operator()(T a, T b) const {
  if constexpr (std::is_same<T, bool>::value) return a || b; else return wrap_add(a, b); } };
struct Sub { template <typename T> DT_HD T operator()(T a, T b) const { return wrap_sub(a, b); } };
struct Mul { template <typename T> DT_HD T operator()(T a, T b) const {
  if constexpr (std::is_same<T, bool>::value) return a && b; else return wrap_mul(a, b); } };
struct Div { template <typename T> DT_HD T operator()(T a, T b) const { return a / b; } };  // floating only

struct Pow {
  template <typename T> DT_HD T operator()(T a, T b) const {
    if constexpr (std::is_same<T, bool>::value) {
      return a || !b;  // x**0 == 1, 1**y == 1, 0**1 == 0
    } else if constexpr (std::is_integral<T>::value) {
      if constexpr (std::is_signed<T>::value) {
        if (b < 0) {
          // integer base to a negative power: 1 and -1 are exact, others truncate to 0
          if (a == 1) return 1;
          if (a == T(-1)) return (b & 1) ? T(-1) : T(1);
          return 0;
        }
      }
      T result = 1, base = a;
      using U = uns_t<T>;
      U e = static_cast<U>(b);
      while (e) {
        if (e & 1) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
        e >>= 1;
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};

struct Maximum {
  template <typename T> DT_HD T operator()(T a, T b) const {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return a > b ? a : b;
  }
};
struct Minimum {
  template <typename T> DT_HD T operator()(T a, T b) const {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return a < b ? a : b;
  }
};

// The integer-division family, as PyTorch's kernels. An integer divisor of 0 is refused by
// the front end; these still return 0 for it (a graph replay, whose values the front end
// cannot see) rather than trap. A divisor of -1 is special-cased: INT_MIN / -1 overflows.
struct Fmod {
  template <typename T> DT_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      if (b == 0) return 0;
      if constexpr (std::is_signed<T>::value) if (b == T(-1)) return 0;
      return static_cast<T>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
struct Remainder {
  template <typename T> DT_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      if (b == 0) return 0;
      if constexpr (std::is_signed<T>::value) if (b == T(-1)) return 0;
      T r = static_cast<T>(a % b);
      if constexpr (std::is_signed<T>::value)
        if (r != 0 && ((r < 0) != (b < 0))) r = wrap_add(r, b);
      return r;
    } else {
      T m = std::fmod(a, b);
      if (m != T(0) && ((b < T(0)) != (m < T(0)))) m += b;
      return m;
    }
  }
};
struct FloorDivide {
  template <typename T> DT_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      if (b == 0) return 0;
      if constexpr (std::is_signed<T>::value) {
        if (b == T(-1)) return wrap_sub(T(0), a);
        const T q = static_cast<T>(a / b);
        return ((a < 0) != (b < 0) && q * b != a) ? static_cast<T>(q - 1) : q;
      } else {
        return static_cast<T>(a / b);
      }
    } else {
      // Python's float floor division (PyTorch's div_floor): exact where floor(a / b)
      // would round the quotient first.
      if (b == T(0)) return a / b;
      const T m = std::fmod(a, b);
      T d = (a - m) / b;
      if (m != T(0) && ((b < T(0)) != (m < T(0)))) d -= T(1);
      if (d == T(0)) return std::copysign(T(0), a / b);
      T f = std::floor(d);
      if (d - f > T(0.5)) f += T(1);
      return f;
    }
  }
};
struct Atan2 { template <typename T> DT_HD T operator()(T a, T b) const { return std::atan2(a, b); } };  // floating only

struct Eq { template <typename T> DT_HD bool operator()(T a, T b) const { return a == b; } };
struct Ne { template <typename T> DT_HD bool operator()(T a, T b) const { return a != b; } };
struct Lt { template <typename T> DT_HD bool operator()(T a, T b) const { return a < b; } };
struct Le { template <typename T> DT_HD bool operator()(T a, T b) const { return a <= b; } };
struct Gt { template <typename T> DT_HD bool operator()(T a, T b) const { return a > b; } };
struct Ge { template <typename T> DT_HD bool operator()(T a, T b) const { return a >= b; } };

// -a, not 0 - a: the negation of +0.0 is -0.0.
struct Neg { template <typename T> DT_HD T operator()(T a) const {
  if constexpr (std::is_integral<T>::value) return wrap_sub(T(0), a); else return -a; } };
struct Abs { template <typename T> DT_HD T operator()(T a) const {
  if constexpr (std::is_unsigned<T>::value) return a;
  else if constexpr (std::is_integral<T>::value) return a < 0 ? wrap_sub(T(0), a) : a;
  else return std::fabs(a); } };
struct Relu { template <typename T> DT_HD T operator()(T a) const {
  if constexpr (std::is_floating_point<T>::value) return (a > T(0) || a != a) ? a : T(0);
  else return a > T(0) ? a : T(0); } };
// The rest are floating only (integer inputs are converted first by the front end).
struct Exp { template <typename T> DT_HD T operator()(T a) const { return std::exp(a); } };
struct Log { template <typename T> DT_HD T operator()(T a) const { return std::log(a); } };
struct Sqrt { template <typename T> DT_HD T operator()(T a) const { return std::sqrt(a); } };
struct Rsqrt { template <typename T> DT_HD T operator()(T a) const { return T(1) / std::sqrt(a); } };
struct Sin { template <typename T> DT_HD T operator()(T a) const { return std::sin(a); } };
struct Cos { template <typename T> DT_HD T operator()(T a) const { return std::cos(a); } };
struct Sigmoid { template <typename T> DT_HD T operator()(T a) const { return T(1) / (T(1) + std::exp(-a)); } };
struct Tanh { template <typename T> DT_HD T operator()(T a) const { return std::tanh(a); } };
struct Gelu { template <typename T> DT_HD T operator()(T a) const {
  return T(0.5) * a * (T(1) + std::erf(a * T(0.70710678118654752440))); } };
struct Silu { template <typename T> DT_HD T operator()(T a) const { return a / (T(1) + std::exp(-a)); } };
struct Erf { template <typename T> DT_HD T operator()(T a) const { return std::erf(a); } };
// Rounding sees floating elements only: integers never reach a kernel (IntCopy).
struct Floor { template <typename T> DT_HD T operator()(T a) const { return std::floor(a); } };
struct Ceil { template <typename T> DT_HD T operator()(T a) const { return std::ceil(a); } };
// nearbyint in the default rounding mode: halves to even, as torch.round.
struct Round { template <typename T> DT_HD T operator()(T a) const { return std::nearbyint(a); } };
struct Trunc { template <typename T> DT_HD T operator()(T a) const { return std::trunc(a); } };
struct Frac { template <typename T> DT_HD T operator()(T a) const { return a - std::trunc(a); } };
// PyTorch's (0 < a) - (a < 0): NaN and -0.0 give +0, bool stays itself.
struct Sign { template <typename T> DT_HD T operator()(T a) const {
  if constexpr (std::is_same<T, bool>::value) return a;
  else if constexpr (std::is_unsigned<T>::value) return a > T(0) ? T(1) : T(0);
  else return static_cast<T>(static_cast<int>(T(0) < a) - static_cast<int>(a < T(0))); } };
struct Reciprocal { template <typename T> DT_HD T operator()(T a) const { return T(1) / a; } };
struct Log1p { template <typename T> DT_HD T operator()(T a) const { return std::log1p(a); } };
struct Expm1 { template <typename T> DT_HD T operator()(T a) const { return std::expm1(a); } };
struct Log2 { template <typename T> DT_HD T operator()(T a) const { return std::log2(a); } };
struct Log10 { template <typename T> DT_HD T operator()(T a) const { return std::log10(a); } };
struct Exp2 { template <typename T> DT_HD T operator()(T a) const { return std::exp2(a); } };
struct Tan { template <typename T> DT_HD T operator()(T a) const { return std::tan(a); } };
struct Asin { template <typename T> DT_HD T operator()(T a) const { return std::asin(a); } };
struct Acos { template <typename T> DT_HD T operator()(T a) const { return std::acos(a); } };
struct Atan { template <typename T> DT_HD T operator()(T a) const { return std::atan(a); } };
struct Sinh { template <typename T> DT_HD T operator()(T a) const { return std::sinh(a); } };
struct Cosh { template <typename T> DT_HD T operator()(T a) const { return std::cosh(a); } };
struct Asinh { template <typename T> DT_HD T operator()(T a) const { return std::asinh(a); } };
struct Acosh { template <typename T> DT_HD T operator()(T a) const { return std::acosh(a); } };
struct Atanh { template <typename T> DT_HD T operator()(T a) const { return std::atanh(a); } };
// d gelu(a) / da = Phi(a) + a * phi(a), for autograd.
struct GeluGrad { template <typename T> DT_HD T operator()(T a) const {
  return T(0.5) * (T(1) + std::erf(a * T(0.70710678118654752440))) +
         a * T(0.39894228040143267794) * std::exp(T(-0.5) * a * a); } };

// GELU's tanh approximation and its derivative, with PyTorch's constants and order of
// operations: u = sqrt(2/pi) * (a + 0.044715 a^3), gelu = a/2 * (1 + tanh(u)).
struct GeluTanh { template <typename T> DT_HD T operator()(T a) const {
  const T u = T(0.79788456080286535588) * (a + T(0.044715) * a * a * a);
  return T(0.5) * a * (T(1) + std::tanh(u)); } };
struct GeluTanhGrad { template <typename T> DT_HD T operator()(T a) const {
  const T a2 = a * a, t = std::tanh(T(0.79788456080286535588) * (a + T(0.044715) * a2 * a));
  return T(0.5) * (T(1) + t) +
         T(0.5) * a * (T(1) - t * t) * T(0.79788456080286535588) * (T(1) + T(3) * T(0.044715) * a2); } };

// Maps an op to its functor (fn::<Name>, the table's row name): visit_unary(op, [&](auto
// f) { ... }) calls the lambda with fn::Relu{} for UnaryOp::Relu. Made from the table
// (core/op_table.h), so every row must have its functor here.
template <typename V> DT_HD decltype(auto) visit_unary(UnaryOp op, V&& v) {
  switch (op) {
#define DT_X(Name, ...) case UnaryOp::Name: return v(Name{});
    DT_UNARY_OPS(DT_X)
#undef DT_X
  }
  return v(Neg{});  // not reached: every enumerator has a case
}

// The arithmetic binary ops (visit_binary) and the comparisons (visit_compare, whose
// functors return bool), told apart by the table's rule.
template <typename V> DT_HD decltype(auto) visit_binary(BinaryOp op, V&& v) {
  switch (op) {
#define DT_X(Name, code, c_name, rule, ...) DT_IF_ARITH_##rule(case BinaryOp::Name: return v(Name{});)
    DT_BINARY_OPS(DT_X)
#undef DT_X
    default: break;
  }
  return v(Add{});  // not reached: the caller sends comparisons to visit_compare
}
template <typename V> DT_HD decltype(auto) visit_compare(BinaryOp op, V&& v) {
  switch (op) {
#define DT_X(Name, code, c_name, rule, ...) DT_IF_COMPARE_##rule(case BinaryOp::Name: return v(Name{});)
    DT_BINARY_OPS(DT_X)
#undef DT_X
    default: break;
  }
  return v(Eq{});  // not reached: the caller sends only comparisons here
}

// Compile-time facts about a unary functor, from its table row: whether integer inputs
// reach it (the backends instantiate only the dtypes that can arrive).
template <typename F> struct UnaryTraits;
#define DT_X(Name, code, c_name, rule, ...)                                                        \
  template <> struct UnaryTraits<Name> {                                                           \
    static constexpr bool takes_integers = UnaryRule::rule == UnaryRule::KeepsInt || UnaryRule::rule == UnaryRule::KeepsAll; \
    static constexpr bool takes_bool = UnaryRule::rule == UnaryRule::KeepsAll;                     \
  };
DT_UNARY_OPS(DT_X)
#undef DT_X

// Whether a unary functor is ever called with elements of type T.
template <typename F, typename T> constexpr bool unary_accepts() {
  if constexpr (std::is_same<T, bool>::value) return UnaryTraits<F>::takes_bool;
  else if constexpr (std::is_integral<T>::value) return UnaryTraits<F>::takes_integers;
  else return true;
}

// The same for the arithmetic binary ops: ToFloat ops (div, atan2) never see integers or
// bool (the front end computes them in a floating dtype), IntDiv ops never see bool.
template <typename F> struct BinaryTraits;
#define DT_X(Name, code, c_name, rule, ...)                                            \
  template <> struct BinaryTraits<Name> {                                              \
    static constexpr bool floating_only = BinaryRule::rule == BinaryRule::ToFloat;     \
    static constexpr bool takes_bool = BinaryRule::rule != BinaryRule::IntDiv;         \
  };
DT_BINARY_OPS(DT_X)
#undef DT_X
template <typename F, typename T> constexpr bool binary_accepts() {
  if constexpr (std::is_same<T, bool>::value) return BinaryTraits<F>::takes_bool && !BinaryTraits<F>::floating_only;
  else if constexpr (std::is_integral<T>::value) return !BinaryTraits<F>::floating_only;
  else return true;
}

}  // namespace dt::fn
