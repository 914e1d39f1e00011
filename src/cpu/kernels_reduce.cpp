// Reductions (sum, mean, max, min, argmax, argmin) and softmax on the CPU. Sums are
// split into fixed-size blocks whose partials are combined in order, so the result
// does not depend on the thread count.
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "cpu/vec_math.h"
#include "ops/cast.h"

namespace dt::cpu {
namespace {

// The reduced sub-space of `in`: sizes and element strides of the flagged dims, merged
// where contiguous, innermost last.
struct Reduced {
  int n = 0;
  int64_t size[kMaxDims];
  int64_t stride[kMaxDims];
  int64_t count = 1;
};

Reduced reduced_dims(const Tensor& in, uint32_t mask) {
  Reduced r;
  for (int d = 0; d < in.ndim(); ++d) {
    if (!(mask & (1u << d))) continue;
    int64_t sz = in.size(d), st = in.stride(d);
    r.count *= sz;
    if (sz == 1) continue;
    if (r.n > 0 && r.stride[r.n - 1] == st * sz) {
      r.size[r.n - 1] *= sz;
      r.stride[r.n - 1] = st;
      continue;
    }
    r.size[r.n] = sz;
    r.stride[r.n] = st;
    ++r.n;
  }
  return r;
}

// Visits every element of the reduced sub-space starting at base, in row-major order.
template <typename T, typename V>
void visit_reduced(const T* base, const Reduced& r, V&& visit) {
  if (r.count == 0) return;
  if (r.n == 0) { visit(base, int64_t{1}, int64_t{1}, int64_t{0}); return; }
  int64_t idx[kMaxDims] = {};
  const int last = r.n - 1;
  int64_t linear = 0;
  while (true) {
    int64_t off = 0;
    for (int d = 0; d < last; ++d) off += idx[d] * r.stride[d];
    visit(base + off, r.size[last], r.stride[last], linear);
    linear += r.size[last];
    int d = last - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < r.size[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

template <typename T>
struct SumAcc {  // integer sums in int64 (wrapping), floating in double
  using type = typename std::conditional<is_float_like<T>, double, int64_t>::type;
};

template <typename T, typename O>
void reduce_one(ReduceOp op, const T* base, const Reduced& r, O* out) {
  using M = opmath_t<T>;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean: {
      using A = typename SumAcc<T>::type;
      A acc = 0;
      visit_reduced(base, r, [&](const T* p, int64_t n, int64_t s, int64_t) {
        if constexpr (std::is_same<T, float>::value) {
          if (s == 1) { acc += sum_f32(p, n); return; }
        }
        if constexpr (std::is_same<A, int64_t>::value) {
          uint64_t u = static_cast<uint64_t>(acc);
          for (int64_t i = 0; i < n; ++i) u += static_cast<uint64_t>(static_cast<int64_t>(p[i * s]));
          acc = static_cast<int64_t>(u);
        } else {
          for (int64_t i = 0; i < n; ++i) acc += static_cast<A>(M(p[i * s]));
        }
      });
      if (op == ReduceOp::Mean) *out = cast_value<O>(static_cast<double>(acc) / static_cast<double>(r.count));
      else *out = cast_value<O>(acc);
      return;
    }
    case ReduceOp::Max:
    case ReduceOp::Min: {
      const bool is_max = op == ReduceOp::Max;
      M best = M(*base);
      bool nan = false;
      visit_reduced(base, r, [&](const T* p, int64_t n, int64_t s, int64_t) {
        for (int64_t i = 0; i < n; ++i) {
          M v = M(p[i * s]);
          if (v != v) nan = true;
          if (is_max ? v > best : v < best) best = v;
        }
      });
      if constexpr (is_float_like<T>) {
        if (nan) best = std::numeric_limits<M>::quiet_NaN();
      }
      *out = cast_value<O>(T(best));
      return;
    }
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: {
      const bool is_max = op == ReduceOp::ArgMax;
      M best = M(*base);
      int64_t best_i = 0;
      bool found_nan = false;
      visit_reduced(base, r, [&](const T* p, int64_t n, int64_t s, int64_t start) {
        for (int64_t i = 0; i < n && !found_nan; ++i) {
          M v = M(p[i * s]);
          if (v != v) { best_i = start + i; found_nan = true; break; }  // NaN wins, first one
          if (is_max ? v > best : v < best) { best = v; best_i = start + i; }
        }
      });
      *out = cast_value<O>(best_i);
      return;
    }
  }
}

template <typename T, typename O>
void reduce_all(ReduceOp op, const Tensor& out, const Tensor& in, uint32_t mask) {
  Reduced r = reduced_dims(in, mask);
  // Kept dims of `in` (those not flagged), matched with out's strides.
  int kn = 0;
  int64_t ksize[kMaxDims], kin[kMaxDims], kout[kMaxDims];
  for (int d = 0; d < in.ndim(); ++d) {
    if (mask & (1u << d)) continue;
    ksize[kn] = in.size(d);
    kin[kn] = in.stride(d);
    kout[kn] = out.stride(d);
    ++kn;
  }
  int64_t outputs = out.numel();
  const T* in_base = in.data_as<T>();
  O* out_base = out.data_as<O>();
  // One output and a long contiguous float sum: fixed blocks in parallel, combined in order.
  if constexpr (std::is_same<T, float>::value) {
    if (outputs == 1 && (op == ReduceOp::Sum || op == ReduceOp::Mean) && r.n == 1 && r.stride[0] == 1 &&
        r.count >= 2 * kGrainCheap) {
      constexpr int64_t kBlock = 1 << 16;
      int64_t blocks = (r.count + kBlock - 1) / kBlock;
      std::vector<double> parts(static_cast<size_t>(blocks));
      parallel_for(blocks, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          int64_t start = i * kBlock, len = std::min(kBlock, r.count - start);
          parts[static_cast<size_t>(i)] = sum_f32(in_base + start, len);
        }
      });
      double total = 0;
      for (double p : parts) total += p;
      if (op == ReduceOp::Mean) total /= static_cast<double>(r.count);
      *out_base = cast_value<O>(total);
      return;
    }
  }
  // A floating sum over one strided dim into contiguous outputs (a bias gradient: [N, C]
  // summed over N): whole rows are added into the column totals, in the same order and
  // accumulator as reduce_one, so the same bits, but streaming through memory.
  if constexpr (is_float_like<T>) {
    if ((op == ReduceOp::Sum || op == ReduceOp::Mean) && r.n == 1 && kn == 1 && kin[0] == 1 && r.stride[0] != 1) {
      using A = typename SumAcc<T>::type;
      using M = opmath_t<T>;
      const int64_t cols = ksize[0], rows = r.size[0], rs = r.stride[0], os = kout[0];
      parallel_for(cols, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, rows)), [&](int64_t b, int64_t e) {
        std::vector<A> acc(static_cast<size_t>(e - b), A(0));
        for (int64_t i = 0; i < rows; ++i) {
          const T* row = in_base + i * rs + b;
          for (int64_t c = 0; c < e - b; ++c) acc[static_cast<size_t>(c)] += static_cast<A>(M(row[c]));
        }
        for (int64_t c = 0; c < e - b; ++c) {
          const A v = acc[static_cast<size_t>(c)];
          out_base[(b + c) * os] = op == ReduceOp::Mean
                                       ? cast_value<O>(static_cast<double>(v) / static_cast<double>(r.count))
                                       : cast_value<O>(v);
        }
      });
      return;
    }
  }
  int64_t grain = std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, r.count));
  parallel_for(outputs, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      int64_t rem = o, in_off = 0, out_off = 0;
      for (int d = kn - 1; d >= 0; --d) {
        int64_t i = rem % ksize[d];
        rem /= ksize[d];
        in_off += i * kin[d];
        out_off += i * kout[d];
      }
      reduce_one<T, O>(op, in_base + in_off, r, out_base + out_off);
    }
  });
}

}  // namespace

void CpuBackend::reduce(ReduceOp op, const Tensor& out, const Tensor& in, uint32_t mask) {
  dispatch_dtype(in.dtype(), [&](auto in_tag) {
    using T = decltype(in_tag);
    dispatch_dtype(out.dtype(), [&](auto out_tag) {
      using O = decltype(out_tag);
      // only the pairs the front end produces are instantiated usefully; all are valid C++
      reduce_all<T, O>(op, out, in, mask);
    });
  });
}

namespace {
template <typename T>
void softmax_rows(const Tensor& out, const Tensor& in, int dim, bool log) {
  using M = opmath_t<T>;
  // in and out are contiguous here: view as [outer, n, inner].
  int64_t n = in.size(dim), inner = 1, outer = 1;
  for (int d = 0; d < dim; ++d) outer *= in.size(d);
  for (int d = dim + 1; d < in.ndim(); ++d) inner *= in.size(d);
  const T* x = in.data_as<T>();
  T* y = out.data_as<T>();
  if (n == 0) return;
  int64_t rows = outer * inner;
  int64_t grain = std::max<int64_t>(1, kGrainCostly / n);
  parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    std::vector<float> tmp;
    for (int64_t row = b; row < e; ++row) {
      int64_t o = row / inner, i = row % inner;
      const T* xr = x + o * n * inner + i;
      T* yr = y + o * n * inner + i;
      if constexpr (std::is_same<T, float>::value) {
        if (inner == 1) {
          float m = max_f32(xr, n);
          if (std::isinf(m) && m < 0) m = 0;  // all -inf: exp gives 0s; keep NaN math like PyTorch
          if (log) {
            double s = exp_sum_f32(xr, n, m, nullptr);
            float lse = m + static_cast<float>(std::log(s));
            for (int64_t k = 0; k < n; ++k) yr[k] = xr[k] - lse;
          } else {
            double s = exp_sum_f32(xr, n, m, yr);
            scale_f32(yr, n, static_cast<float>(1.0 / s));
          }
          continue;
        }
      }
      M m = -std::numeric_limits<M>::infinity();
      bool nan = false;
      for (int64_t k = 0; k < n; ++k) {
        M v = M(xr[k * inner]);
        nan |= v != v;
        m = v > m ? v : m;
      }
      if (nan) m = std::numeric_limits<M>::quiet_NaN();
      if (std::isinf(m) && m < 0) m = 0;
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(static_cast<double>(M(xr[k * inner]) - m));
      if (log) {
        double lse = static_cast<double>(m) + std::log(s);
        for (int64_t k = 0; k < n; ++k) yr[k * inner] = T(static_cast<M>(static_cast<double>(M(xr[k * inner])) - lse));
      } else {
        for (int64_t k = 0; k < n; ++k)
          yr[k * inner] = T(static_cast<M>(std::exp(static_cast<double>(M(xr[k * inner]) - m)) / s));
      }
    }
  });
}
}  // namespace

void CpuBackend::softmax(const Tensor& out, const Tensor& in, int dim, bool log) {
  dispatch_floating(in.dtype(), [&](auto tag) { softmax_rows<decltype(tag)>(out, in, dim, log); });
}

}  // namespace dt::cpu
