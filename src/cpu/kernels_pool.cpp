// Max pooling on the CPU: one pass over each input plane, planes in parallel, writing the
// largest value of each window and its index (h * W + w in the plane, as PyTorch's
// max_pool2d_with_indices). The generic path (windows view, a copy, two reductions) read
// each element several times and made lenet5's training step spend a fifth of its time
// pooling.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <algorithm>
#include <limits>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/parallel.h"
#include "ops/window_range.h"

namespace dt::cpu {
namespace {

// c ? a : b with masks, which compilers keep branch-free (a ?: on floats became a jump).
template <typename T>
T pick(bool c, T a, T b) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  U ua, ub;
  std::memcpy(&ua, &a, sizeof ua);
  std::memcpy(&ub, &b, sizeof ub);
  const U mask = U{0} - static_cast<U>(c);
  const U r = (ua & mask) | (ub & ~mask);
  T out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

// The search of one window of KH x KW dense elements wholly inside the plane, at `at`,
// unrolled at compile time (the common 2x2 and 3x3 pools): PyTorch's order and rule.
template <int KH, int KW, typename T>
inline void dense_window(const T* plane, int64_t at, int64_t W, T* best_out, int64_t* at_out) {
  T best = plane[at];
  int64_t best_at = at;
  for (int i = 0; i < KH; ++i)
    for (int j = 0; j < KW; ++j) {
      const int64_t a = at + i * W + j;
      const T v = plane[a];
      const bool take = (v > best) | (v != v);
      best = pick(take, v, best);
      best_at = pick(take, a, best_at);
    }
  *best_out = best;
  *at_out = best_at;
}

template <typename T>
void max_pool_planes(const Tensor& out, const Tensor& indices, const Tensor& x, const PoolGeometry& g) {
  // Nothing to write; and an empty output's other sizes may be huge, so not multiplied. (An
  // empty input under a nonempty output, H = 0 with padding, still writes -inf windows.)
  if (out.numel() == 0) return;
  const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = out.size(2), OW = out.size(3);
  const int64_t sh = g.stride[0], sw = g.stride[1], dh = g.dilation[0], dw = g.dilation[1];
  const T* in = x.data_as<T>();
  T* o = out.data_as<T>();
  int64_t* idx = indices.data_as<int64_t>();
  // Each window's column range inside the input, once for all rows and planes.
  std::vector<int64_t> col_first(OW), col_last(OW);
  for (int64_t ow = 0; ow < OW; ++ow)
    ops::window_inside(ow * sw - g.pad_begin[1], g.kernel[1], dw, W, &col_first[ow], &col_last[ow]);
  const bool dense = dh == 1 && dw == 1;
  const bool dense2 = dense && g.kernel[0] == 2 && g.kernel[1] == 2, dense3 = dense && g.kernel[0] == 3 && g.kernel[1] == 3;
  // Planes per task: about 16384 window elements. OH * OW fits (the output exists); times
  // a kernel 2^62 wide it may not, and then each task takes one plane.
  int64_t work = 0;
  const bool huge =
      __builtin_mul_overflow(OH * OW, g.kernel[0], &work) || __builtin_mul_overflow(work, g.kernel[1], &work);
  const int64_t grain = huge ? 1 : std::max<int64_t>(1, 16384 / std::max<int64_t>(1, work));
  parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = in + p * H * W;
      T* op = o + p * OH * OW;
      int64_t* ip = idx + p * OH * OW;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t h0 = oh * sh - g.pad_begin[0];
        int64_t i0 = 0, i1 = 0;
        ops::window_inside(h0, g.kernel[0], dh, H, &i0, &i1);
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t w0 = ow * sw - g.pad_begin[1], j0 = col_first[ow], j1 = col_last[ow];
          if (i0 == i1 || j0 == j1) {  // a dilation that steps over the input: -inf, as PyTorch
            op[oh * OW + ow] = -std::numeric_limits<T>::infinity();
            ip[oh * OW + ow] = -1;  // no element: the backward gives it no gradient (nn/grad_pool.cpp)
            continue;
          }
          const bool whole = i0 == 0 && i1 == g.kernel[0] && j0 == 0 && j1 == g.kernel[1];
          if (whole && dense2) {
            dense_window<2, 2>(plane, h0 * W + w0, W, &op[oh * OW + ow], &ip[oh * OW + ow]);
            continue;
          }
          if (whole && dense3) {
            dense_window<3, 3>(plane, h0 * W + w0, W, &op[oh * OW + ow], &ip[oh * OW + ow]);
            continue;
          }
          // The first element inside starts the search; PyTorch's comparison then lets a
          // larger value or a NaN take over (so equal values keep the first).
          int64_t best_at = (h0 + i0 * dh) * W + w0 + j0 * dw;
          T best = plane[best_at];
          for (int64_t i = i0; i < i1; ++i) {
            // An index, not a pointer to the row's start: with padding that start lies
            // before the plane (by as much as 2^62 elements), and a pointer there is
            // undefined even if only offset back inside.
            const int64_t row_at = (h0 + i * dh) * W + w0;
            for (int64_t j = j0; j < j1; ++j) {
              // Branch-free (selects, not jumps): on real data the comparison is a coin
              // toss, and mispredicted branches made this loop 5x slower than a copy.
              const T v = plane[row_at + j * dw];
              const bool take = (v > best) | (v != v);
              best = pick(take, v, best);
              best_at = pick(take, row_at + j * dw, best_at);
            }
          }
          op[oh * OW + ow] = best;
          ip[oh * OW + ow] = best_at;
        }
      }
    }
  });
}

}  // namespace

bool CpuBackend::max_pool2d_forward(const Tensor& out, const Tensor& indices, const Tensor& x, const PoolGeometry& g) {
  if (!x.is_contiguous() || !out.is_contiguous() || !indices.is_contiguous() || indices.dtype() != DType::Int64)
    return false;
  if (x.dtype() == DType::Float32) {
    max_pool_planes<float>(out, indices, x, g);
    return true;
  }
  if (x.dtype() == DType::Float64) {
    max_pool_planes<double>(out, indices, x, g);
    return true;
  }
  return false;
}

}  // namespace dt::cpu
