// fill, arange and random numbers on the device. Random values use the Philox4x32-10
// stream of core/philox.h with the CPU's mapping from element index to block and lane,
// through ops/random_value.h, the definition the CPU uses too.
#include <cmath>

#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"
#include "ops/cast.h"
#include "core/op_kinds.h"
#include "ops/random_value.h"

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
