// Cross entropy over class indices on the CPU (KernelOp::CrossEntropy and its backward):
// each row's log-sum-exp and loss in one pass over the logits, the reduction in a fixed
// order (so results do not depend on the thread count), and the gradient
// (softmax - one-hot) * g in one more pass: where the composed ops (log_softmax, a
// gather, a mask, sums, a division, and their backward) took some twenty calls.
#include <cmath>
#include <vector>

#include "core/error.h"
#include "cpu/cpu_backend.h"
#include "cpu/parallel.h"

namespace dt::cpu {
namespace {

// The count of targets not ignored; INVALID_ARGUMENT, before anything is written, unless
// every target is a class in [0, C) or ignore_index: the eager front end checked them
// already, but a graph replays with whatever the static target tensor holds then. (The
// backward reads no logit by target, so it needs no check of its own.)
int64_t count_checked_targets(const int64_t* target, int64_t N, int64_t C, int64_t ignore_index) {
  int64_t kept = 0;
  for (int64_t n = 0; n < N; ++n) {
    if (target[n] == ignore_index) continue;
    if (target[n] < 0 || target[n] >= C)
      fail(DT_ERR_INVALID_ARGUMENT, cat("cross_entropy: target index ", target[n], " is out of bounds for ", C,
                                        " classes"));
    ++kept;
  }
  return kept;
}

template <typename T>
void forward_typed(const Tensor& out, const Tensor& lse_t, const Tensor& count_t, const Tensor& x_t,
                   const Tensor& target_t, int64_t ignore_index, int reduction) {
  const int64_t N = x_t.size(0), C = x_t.size(1);
  const T* x = x_t.data_as<T>();
  const int64_t* target = target_t.data_as<int64_t>();
  T* lse = lse_t.data_as<T>();
  const int64_t kept = count_checked_targets(target, N, C, ignore_index);
  // Reduction none writes the rows' losses into out; the others into a buffer, then sum.
  std::vector<T> buffer(reduction == 0 ? 0 : static_cast<size_t>(N));
  T* row_loss = reduction == 0 ? out.data_as<T>() : buffer.data();
  parallel_for(N, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, C)), [&](int64_t lo, int64_t hi) {
    for (int64_t n = lo; n < hi; ++n) {
      const T* row = x + n * C;
      T m = -INFINITY;
      for (int64_t c = 0; c < C; ++c) m = row[c] > m || row[c] != row[c] ? row[c] : m;
      T s = 0;
      for (int64_t c = 0; c < C; ++c) s += std::exp(row[c] - m);
      // An all -inf row: max -inf, lse -inf, so the loss is NaN as PyTorch's log_softmax
      // gives; a +inf logit makes s, and so lse and the whole row's gradient, NaN, as there.
      const T l = m == -INFINITY ? m : m + std::log(s);
      lse[n] = l;
      row_loss[n] = target[n] == ignore_index ? T(0) : l - row[target[n]];
    }
  });
  *count_t.data_as<T>() = static_cast<T>(kept);
  if (reduction == 0) return;
  double total = 0;  // in order, in double: the same bits for any thread count
  for (int64_t n = 0; n < N; ++n) total += static_cast<double>(row_loss[n]);
  const T sum = static_cast<T>(total);
  *out.data_as<T>() = reduction == 2 ? sum : sum / static_cast<T>(kept);
}

template <typename T>
void backward_typed(const Tensor& gx_t, const Tensor& g_t, const Tensor& x_t, const Tensor& lse_t,
                    const Tensor& count_t, const Tensor& target_t, int64_t ignore_index, int reduction) {
  const int64_t N = x_t.size(0), C = x_t.size(1);
  const T* x = x_t.data_as<T>();
  const T* lse = lse_t.data_as<T>();
  const T* g = g_t.data_as<T>();
  const int64_t* target = target_t.data_as<int64_t>();
  T* gx = gx_t.data_as<T>();
  const T scale = reduction == 1 ? g[0] / *count_t.data_as<T>() : g[0];  // none reads g per row
  parallel_for(N, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, C)), [&](int64_t lo, int64_t hi) {
    for (int64_t n = lo; n < hi; ++n) {
      T* out = gx + n * C;
      const T* row = x + n * C;
      const int64_t t = target[n];
      if (t == ignore_index) {
        for (int64_t c = 0; c < C; ++c) out[c] = T(0);
        continue;
      }
      const T s = reduction == 0 ? g[n] : scale, l = lse[n];
      for (int64_t c = 0; c < C; ++c) out[c] = s * (std::exp(row[c] - l) - (c == t ? T(1) : T(0)));
    }
  });
}

}  // namespace

void CpuBackend::cross_entropy(const Tensor& out, const Tensor& lse, const Tensor& count, const Tensor& x,
                               const Tensor& target, int64_t ignore_index, int reduction) {
  switch (x.dtype()) {
    case DType::Float32: return forward_typed<float>(out, lse, count, x, target, ignore_index, reduction);
    case DType::Float64: return forward_typed<double>(out, lse, count, x, target, ignore_index, reduction);
    default: fail(DT_ERR_NOT_SUPPORTED, "cross_entropy: the cpu kernel takes float32 or float64");
  }
}

void CpuBackend::cross_entropy_backward(const Tensor& gx, const Tensor& g, const Tensor& x, const Tensor& lse,
                                        const Tensor& count, const Tensor& target, int64_t ignore_index,
                                        int reduction) {
  switch (x.dtype()) {
    case DType::Float32: return backward_typed<float>(gx, g, x, lse, count, target, ignore_index, reduction);
    case DType::Float64: return backward_typed<double>(gx, g, x, lse, count, target, ignore_index, reduction);
    default: fail(DT_ERR_NOT_SUPPORTED, "cross_entropy_backward: the cpu kernel takes float32 or float64");
  }
}

}  // namespace dt::cpu
