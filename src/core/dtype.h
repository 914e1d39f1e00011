// Element types: sizes, names, categories, PyTorch's promotion lattice, and the
// compile-time mapping between dtype codes and C++ types used by every backend.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/half.h"
#include "devtensor.h"

namespace dt {

enum class DType : int32_t {
  Float32 = DT_FLOAT32,
  Float64 = DT_FLOAT64,
  Float16 = DT_FLOAT16,
  BFloat16 = DT_BFLOAT16,
  Int8 = DT_INT8,
  Int16 = DT_INT16,
  Int32 = DT_INT32,
  Int64 = DT_INT64,
  UInt8 = DT_UINT8,
  Bool = DT_BOOL,
};
constexpr int kNumDTypes = 10;

bool dtype_valid(int32_t code);
inline size_t dtype_size(DType t) {
  // indexed by the dtype code (DT_FLOAT32 == 1 ... DT_BOOL == 10)
  static constexpr unsigned char kSizes[] = {0, 4, 8, 2, 2, 1, 2, 4, 8, 1, 1};
  return kSizes[static_cast<int>(t)];
}
const char* dtype_name(DType t);  // "float32", as torch prints it after "torch."
inline bool is_floating(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}
inline bool is_integral(DType t, bool include_bool) {
  return (t == DType::Bool) ? include_bool : !is_floating(t);
}
// PyTorch's torch.promote_types.
DType promote_types(DType a, DType b);
// PyTorch's can_cast(from, to): no float->int, no int->bool narrowing of category.
bool can_cast(DType from, DType to);

// C++ storage type of each dtype.
template <DType D> struct dtype_cpp;
template <> struct dtype_cpp<DType::Float32> { using type = float; };
template <> struct dtype_cpp<DType::Float64> { using type = double; };
template <> struct dtype_cpp<DType::Float16> { using type = float16; };
template <> struct dtype_cpp<DType::BFloat16> { using type = bfloat16; };
template <> struct dtype_cpp<DType::Int8> { using type = int8_t; };
template <> struct dtype_cpp<DType::Int16> { using type = int16_t; };
template <> struct dtype_cpp<DType::Int32> { using type = int32_t; };
template <> struct dtype_cpp<DType::Int64> { using type = int64_t; };
template <> struct dtype_cpp<DType::UInt8> { using type = uint8_t; };
template <> struct dtype_cpp<DType::Bool> { using type = bool; };

// The type arithmetic is done in: float for the 16-bit floats, the type itself otherwise.
template <typename T> struct opmath { using type = T; };
template <> struct opmath<float16> { using type = float; };
template <> struct opmath<bfloat16> { using type = float; };
template <typename T> using opmath_t = typename opmath<T>::type;

// The type a running sum (cumsum) accumulates in on every backend: PyTorch's CPU
// acc_type, so float32 in double (1 + 1e8 - 1e8 keeps the 1), the 16-bit floats in float.
template <typename T> struct scan_acc { using type = opmath_t<T>; };
template <> struct scan_acc<float> { using type = double; };
template <typename T> using scan_acc_t = typename scan_acc<T>::type;

// Calls f(T{}) with T the C++ type of dtype; the one switch every dispatcher uses.
template <typename F>
decltype(auto) dispatch_dtype(DType d, F&& f) {
  switch (d) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(float16{});
    case DType::BFloat16: return f(bfloat16{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Bool: return f(bool{});
  }
  return f(float{});  // unreachable: dtypes are validated at the API
}

// Same, restricted to the floating dtypes (callers check first).
template <typename F>
decltype(auto) dispatch_floating(DType d, F&& f) {
  switch (d) {
    case DType::Float64: return f(double{});
    case DType::Float16: return f(float16{});
    case DType::BFloat16: return f(bfloat16{});
    default: return f(float{});
  }
}

}  // namespace dt
