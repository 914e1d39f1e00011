// fill, arange and random numbers on the device. Random values use the Philox4x32-10
// stream of core/philox.h with the CPU's mapping from element index to block and lane,
// so `rand` gives bit-identical values on every backend (randn: within the device's
// log/cos/sqrt rounding).
#include <cmath>

#include "core/philox.h"
#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"
#include "ops/cast.h"
#include "ops/op_kinds.h"

namespace dt::cudap {
namespace {

template <typename T>
void fill_typed(const dtp_tensor& dst, double value) {
  const T v = cast_value<T>(value);
  const dtp_tensor* ops[1] = {&dst};
  Geometry<1> g = make_geometry<1>(ops);
  T* o = static_cast<T*>(dst.data);
  launch(dst.device, g.numel, "fill", [=] __device__(int64_t i) {
    int64_t off[1];
    g.offsets(i, off);
    o[off[0]] = v;
  });
}

template <typename T>
void arange_typed(const dtp_tensor& dst, double start, double step) {
  T* o = static_cast<T*>(dst.data);  // fresh and contiguous
  launch(dst.device, dst.numel, "arange", [=] __device__(int64_t i) {
    o[i] = cast_value<T>(start + static_cast<double>(i) * step);
  });
}

// Element i, exactly as cpu/kernels_copy.cpp's random_fill computes it.
template <typename T>
__device__ T random_value(int64_t i, bool uniform, uint64_t seed, uint64_t offset) {
  constexpr bool wide = std::is_same<T, double>::value;
  if (uniform) {
    if constexpr (wide) {
      Philox4 r = philox_block(seed, offset, static_cast<uint64_t>(i) / 2);
      int k = static_cast<int>(i % 2) * 2;
      return uniform_double(r.v[k], r.v[k + 1]);
    } else {
      Philox4 r = philox_block(seed, offset, static_cast<uint64_t>(i) / 4);
      float u = uniform_float(r.v[i % 4]);
      if constexpr (is_reduced_float<T>::value) {
        constexpr int bits = std::is_same<T, float16>::value ? 11 : 8;
        u = static_cast<float>(r.v[i % 4] >> (32 - bits)) / static_cast<float>(1u << bits);
      }
      return T(u);
    }
  }
  if constexpr (wide) {
    Philox4 r = philox_block(seed, offset, static_cast<uint64_t>(i));
    double u1 = 1.0 - uniform_double(r.v[0], r.v[1]);
    double u2 = uniform_double(r.v[2], r.v[3]);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
  } else {
    Philox4 r = philox_block(seed, offset, static_cast<uint64_t>(i) / 2);
    int k = static_cast<int>(i % 2) * 2;
    float u1 = 1.0f - uniform_float(r.v[k]);
    float u2 = uniform_float(r.v[k + 1]);
    // the precise (not the fast-math) single-precision functions
    return T(sqrtf(-2.0f * logf(u1)) * cosf(6.2831853071795865f * u2));
  }
}

template <typename T>
void random_typed(const dtp_tensor& dst, bool uniform, uint64_t seed, uint64_t offset) {
  T* o = static_cast<T*>(dst.data);  // fresh and contiguous
  launch(dst.device, dst.numel, "random",
         [=] __device__(int64_t i) { o[i] = random_value<T>(i, uniform, seed, offset); });
}

}  // namespace

void fill(const dtp_tensor& dst, double value) {
  dispatch(dst.dtype, [&](auto tag) { fill_typed<decltype(tag)>(dst, value); });
}

void arange(const dtp_tensor& dst, double start, double step) {
  dispatch(dst.dtype, [&](auto tag) { arange_typed<decltype(tag)>(dst, start, step); });
}

void random(const dtp_tensor& dst, int32_t dist, uint64_t seed, uint64_t offset) {
  const bool uniform = static_cast<RandomDist>(dist) == RandomDist::Uniform;
  dispatch_floating(static_cast<DType>(dst.dtype),
                    [&](auto tag) { random_typed<decltype(tag)>(dst, uniform, seed, offset); });
}

}  // namespace dt::cudap
