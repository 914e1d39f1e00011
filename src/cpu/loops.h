// The CPU's strided loop engine: operands broadcast to one shape, dimensions coalesced,
// then rows walked in parallel. Kernels supply a row function that sees byte strides
// for the innermost dimension, so the contiguous case is a plain vectorisable loop.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/tensor.h"
#include "cpu/parallel.h"

namespace dt::cpu {

template <int N>
struct Geometry {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t strides[N][kMaxDims];  // bytes; 0 where an operand is broadcast
  char* base[N];
  int64_t numel = 1;
};

// ops[0] is the output (defines the shape); the others broadcast to it.
template <int N>
Geometry<N> make_geometry(const Tensor* const (&ops)[N]) {
  Geometry<N> g;
  const Tensor& out = *ops[0];
  int nd = out.ndim();
  // Build full strides per operand, right-aligned.
  int64_t full[N][kMaxDims];
  for (int k = 0; k < N; ++k) {
    const Tensor& t = *ops[k];
    int shift = nd - t.ndim();
    int64_t item = static_cast<int64_t>(t.itemsize());
    for (int d = 0; d < nd; ++d) {
      int td = d - shift;
      full[k][d] = (td < 0 || t.size(td) == 1) ? 0 : t.stride(td) * item;
    }
    g.base[k] = t.data();
  }
  // Drop size-1 dims and merge neighbours that are contiguous for every operand.
  for (int d = 0; d < nd; ++d) {
    int64_t size = out.size(d);
    g.numel *= size;
    if (size == 1) continue;
    if (g.ndim > 0) {
      int p = g.ndim - 1;
      bool merge = true;
      for (int k = 0; k < N; ++k)
        if (g.strides[k][p] != full[k][d] * size) { merge = false; break; }
      if (merge) {
        g.shape[p] *= size;
        for (int k = 0; k < N; ++k) g.strides[k][p] = full[k][d];
        continue;
      }
    }
    g.shape[g.ndim] = size;
    for (int k = 0; k < N; ++k) g.strides[k][g.ndim] = full[k][d];
    ++g.ndim;
  }
  if (g.ndim == 0) {  // a single element
    g.ndim = 1;
    g.shape[0] = 1;
    for (int k = 0; k < N; ++k) g.strides[k][0] = 0;
  }
  return g;
}

// Calls row(ptrs, inner_strides, count) for every run of the innermost dimension,
// splitting the element range over threads.
template <int N, typename Row>
void for_each_row(const Geometry<N>& g, int64_t grain, const Row& row) {
  if (g.numel == 0) return;
  const int last = g.ndim - 1;
  const int64_t inner = g.shape[last];
  int64_t inner_strides[N];
  for (int k = 0; k < N; ++k) inner_strides[k] = g.strides[k][last];
  parallel_for(g.numel, grain, [&](int64_t begin, int64_t end) {
    int64_t idx[kMaxDims];
    int64_t rem = begin;
    for (int d = last; d >= 0; --d) {
      idx[d] = rem % g.shape[d];
      rem /= g.shape[d];
    }
    int64_t i = begin;
    while (i < end) {
      char* p[N];
      for (int k = 0; k < N; ++k) {
        int64_t off = 0;
        for (int d = 0; d <= last; ++d) off += idx[d] * g.strides[k][d];
        p[k] = g.base[k] + off;
      }
      int64_t n = std::min(inner - idx[last], end - i);
      row(p, inner_strides, n);
      i += n;
      idx[last] += n;
      for (int d = last; d > 0 && idx[d] == g.shape[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  });
}

// Elements per thread below which splitting costs more than it saves. With the pool's
// workers polling between jobs a handoff costs about a microsecond, so a cheap op of
// 32K floats (a [128, 256] activation) is worth two threads: train_linear16_256's best of
// 4 paired runs 4.56 ms with 1 << 14 against 5.30 ms with 1 << 16.
constexpr int64_t kGrainCheap = 1 << 14;
constexpr int64_t kGrainCostly = 1 << 12;

}  // namespace dt::cpu
