// Value conversion between dtypes with PyTorch's rules, for every backend: nonzero is
// true; float to integer truncates toward zero (through int64, so negative floats wrap
// into unsigned types as on PyTorch's CPU); 16-bit floats round to nearest even.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/half.h"
#include "core/macros.h"

namespace dt {

template <typename T> struct is_reduced_float : std::false_type {};
template <> struct is_reduced_float<float16> : std::true_type {};
template <> struct is_reduced_float<bfloat16> : std::true_type {};
template <typename T>
constexpr bool is_float_like = std::is_floating_point<T>::value || is_reduced_float<T>::value;

template <typename To, typename From>
DT_HD To cast_value(From v) {
  if constexpr (std::is_same<To, From>::value) {
    return v;
  } else if constexpr (is_reduced_float<From>::value) {
    return cast_value<To, float>(static_cast<float>(v));
  } else if constexpr (std::is_same<To, bool>::value) {
    return v != From(0);
  } else if constexpr (is_reduced_float<To>::value) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_floating_point<To>::value) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point<From>::value) {
    // float -> integer: truncate through int64 (out-of-range values are unspecified, as in PyTorch)
    // NaN and out-of-range values give INT64_MIN, as x86's truncating conversion does
    if (!(v >= From(-9.2233720368547758e18) && v < From(9.2233720368547758e18))) return static_cast<To>(INT64_MIN);
    return static_cast<To>(static_cast<int64_t>(v));
  } else {
    return static_cast<To>(v);  // integer -> integer wraps (two's complement)
  }
}

}  // namespace dt
