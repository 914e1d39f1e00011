// Sort keys: every dtype's elements as unsigned integers whose order is PyTorch's sort
// order, written once for every backend (__host__ __device__ under nvcc). The CPU
// (cpu/kernels_sort.cpp) and CUDA (cuda/sort.cu, CUB's radix sort) kernels sort these
// keys with each element's position as the tie-break, so both give torch.sort's stable
// order, and each needs one sort per key width (32 and 64 bits) instead of one per dtype.
//
// The order: integers by value; floats by value with -0.0 equal to +0.0 and every NaN
// after +inf (PyTorch sorts NaN as the largest value); bool false before true.
// Descending order is the bitwise complement of the key, so ties still keep their
// positions in order, as torch.sort(descending=True, stable=True).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/half.h"
#include "core/macros.h"

namespace dt::sortkey {

// 64-bit keys for 8-byte dtypes, 32-bit keys for the rest.
template <typename T>
using key_t = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

// The bits of a key that can differ (a radix sort needs to look at no others).
template <typename T>
constexpr int key_bits() {
  return static_cast<int>(8 * sizeof(T));
}

namespace detail {
// An IEEE float's bits (U unsigned, as wide as the float) as an ordered key.
template <typename U>
DT_HD U float_order(U bits, bool is_nan) {
  constexpr U sign = U(1) << (8 * sizeof(U) - 1);
  if (is_nan) return U(~U(0));        // every NaN, whatever its sign and payload, sorts last
  if ((bits & ~sign) == 0) bits = 0;  // -0.0 ties with +0.0
  return (bits & sign) ? U(~bits) : U(bits | sign);
}

DT_HD uint64_t double_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
#endif
}
}  // namespace detail

// x's key (ascending order), or its complement within the dtype's bits (descending).
template <typename T>
DT_HD key_t<T> encode(T x, bool descending) {
  using K = key_t<T>;
  K k;
  if constexpr (std::is_same<T, bool>::value) {
    k = x ? 1u : 0u;
  } else if constexpr (std::is_same<T, float>::value) {
    k = detail::float_order<uint32_t>(float_bits(x), x != x);
  } else if constexpr (std::is_same<T, double>::value) {
    k = detail::float_order<uint64_t>(detail::double_bits(x), x != x);
  } else if constexpr (std::is_same<T, float16>::value || std::is_same<T, bfloat16>::value) {
    const float f = static_cast<float>(x);
    k = detail::float_order<uint16_t>(x.x, f != f);
  } else if constexpr (std::is_signed<T>::value) {
    // Flipping the sign bit maps [min, max] onto [0, 2^bits) in order.
    using U = std::make_unsigned_t<T>;
    k = static_cast<K>(static_cast<U>(static_cast<U>(x) ^ (U(1) << (8 * sizeof(T) - 1))));
  } else {
    k = static_cast<K>(x);
  }
  constexpr K mask = key_bits<T>() >= 8 * static_cast<int>(sizeof(K)) ? K(~K(0)) : K((K(1) << key_bits<T>()) - 1);
  return descending ? K(~k & mask) : k;
}

}  // namespace dt::sortkey
