// Copies with dtype conversion, fills, arange and random numbers on the CPU.
#include <cmath>
#include <cstring>

#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "ops/cast.h"
#include "ops/random_value.h"

namespace dt::cpu {

void CpuBackend::copy(const Tensor& dst, const Tensor& src) {
  dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
    using D = decltype(dst_tag);
    dispatch_dtype(src.dtype(), [&](auto src_tag) {
      using S = decltype(src_tag);
      const Tensor* ops[2] = {&dst, &src};
      auto g = make_geometry<2>(ops);
      for_each_row<2>(g, kGrainCheap, [&](char* const* p, const int64_t* s, int64_t n) {
        if constexpr (std::is_same<D, S>::value) {
          if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
            std::memcpy(p[0], p[1], static_cast<size_t>(n) * sizeof(D));
            return;
          }
        }
        if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
          D* o = reinterpret_cast<D*>(p[0]);
          const S* x = reinterpret_cast<const S*>(p[1]);
          for (int64_t i = 0; i < n; ++i) o[i] = cast_value<D>(x[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<D*>(p[0] + i * s[0]) = cast_value<D>(*reinterpret_cast<const S*>(p[1] + i * s[1]));
        }
      });
    });
  });
}

void CpuBackend::fill(const Tensor& dst, double value) {
  dispatch_dtype(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = cast_value<T>(value);
    const Tensor* ops[1] = {&dst};
    auto g = make_geometry<1>(ops);
    for_each_row<1>(g, kGrainCheap, [&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
    });
  });
}

void CpuBackend::arange(const Tensor& dst, double start, double step) {
  dispatch_dtype(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = dst.data_as<T>();  // fresh, contiguous
    parallel_for(dst.numel(), kGrainCheap, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = cast_value<T>(start + static_cast<double>(i) * step);
    });
  });
}

namespace {
// Element i of a random tensor reads Philox block i/per_block; see the header's promise.
template <typename T>
void random_fill(T* o, int64_t numel, RandomDist dist, uint64_t seed, uint64_t offset) {
  parallel_for(numel, kGrainCostly, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      o[i] = random_value<T>(i, dist == RandomDist::Uniform, seed, offset);
    }
  });
}
}  // namespace

void CpuBackend::random(const Tensor& dst, RandomDist dist, uint64_t seed, uint64_t offset) {
  dispatch_floating(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    random_fill<T>(dst.data_as<T>(), dst.numel(), dist, seed, offset);
  });
}

}  // namespace dt::cpu
