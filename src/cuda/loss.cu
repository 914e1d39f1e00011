// Cross entropy over class indices (KernelOp::CrossEntropy and its backward): one warp per
// row computes the row's log-sum-exp and loss (NaN and all -inf rows as on the CPU), one
// block then sums the rows in a fixed order (no atomics: the same bits on every run, so
// a graph replay equals the eager step), and the gradient is one elementwise pass.
// Offered only with DEVTENSOR_FUSED_LOSS=1 until a GPU has checked it; the core composes
// the loss otherwise.
#include <algorithm>
#include <cmath>

#include "cuda/kernels.h"
#include "cuda/loops.cuh"
#include "cuda/memory.h"
#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

constexpr int kRowsPerBlock = 8;  // warps per block of the row kernel
constexpr int kSumThreads = 256;

template <typename T>
__global__ void cross_entropy_rows(const T* x, const int64_t* target, T* lse, T* row_loss, int64_t rows, int64_t n,
                                   int64_t ignore_index) {
  const int lane = threadIdx.x % 32;
  const int64_t row = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / 32;
  if (row >= rows) return;
  const T* xr = x + row * n;
  T m = -INFINITY;
  bool nan = false;
  for (int64_t k = lane; k < n; k += 32) {
    const T v = xr[k];
    nan |= v != v;
    m = v > m ? v : m;
  }
  for (int o = 16; o > 0; o /= 2) {
    const T w = __shfl_xor_sync(0xffffffffu, m, o);
    m = w > m ? w : m;
    nan |= __shfl_xor_sync(0xffffffffu, static_cast<int>(nan), o) != 0;
  }
  if (nan) m = NAN;
  T s = 0;
  for (int64_t k = lane; k < n; k += 32) s += exp(xr[k] - m);
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) {
    const T l = m == -INFINITY ? m : m + log(s);  // as the CPU kernel: +inf gives NaN
    lse[row] = l;
    // A target out of range (only a graph replay can pass one: eager calls are checked on
    // the host) reads nothing and gives NaN.
    const int64_t t = target[row];
    row_loss[row] = t == ignore_index ? T(0) : t < 0 || t >= n ? T(NAN) : l - xr[t];
  }
}

// out = the sum of row_loss (reduction 2) or it over count (1); count = rows not ignored.
// One block; thread i takes rows i, i + 256, ... in double, then a fixed-shape tree.
template <typename T>
__global__ void cross_entropy_sum(const T* row_loss, const int64_t* target, T* out, T* count, int64_t rows,
                                  int64_t ignore_index, int reduction) {
  __shared__ double sums[kSumThreads];
  __shared__ long long kept[kSumThreads];
  double acc = 0;
  long long k = 0;
  for (int64_t r = threadIdx.x; r < rows; r += kSumThreads) {
    acc += static_cast<double>(row_loss[r]);
    k += target[r] != ignore_index;
  }
  sums[threadIdx.x] = acc;
  kept[threadIdx.x] = k;
  __syncthreads();
  for (int w = kSumThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      sums[threadIdx.x] += sums[threadIdx.x + w];
      kept[threadIdx.x] += kept[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const T total = static_cast<T>(sums[0]), c = static_cast<T>(kept[0]);
    *count = c;
    if (out) *out = reduction == 2 ? total : total / c;
  }
}

template <typename T>
void forward_typed(const dtp_tensor& out, const dtp_tensor& lse, const dtp_tensor& count, const dtp_tensor& x,
                   const dtp_tensor& target, int64_t ignore_index, int reduction) {
  const int dev = x.device;
  const int64_t rows = x.sizes[0], n = x.sizes[1];
  const auto* tg = static_cast<const int64_t*>(target.data);
  // Reduction none writes the rows' losses into out; the others into scratch, then sum.
  Scratch scratch(dev, reduction == 0 ? 1 : static_cast<size_t>(std::max<int64_t>(rows, 1)) * sizeof(T));
  T* row_loss = reduction == 0 ? static_cast<T*>(out.data) : static_cast<T*>(scratch.get());
  if (rows > 0) {
    const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
    if (blocks > 2147483647) raise(DT_ERR_NOT_SUPPORTED, "cross_entropy: too many rows for CUDA");
    cross_entropy_rows<T><<<static_cast<unsigned>(blocks), kRowsPerBlock * 32, 0, stream(dev)>>>(
        static_cast<const T*>(x.data), tg, static_cast<T*>(lse.data), row_loss, rows, n, ignore_index);
    check_launch(dev, "cross_entropy");
  }
  // The count (and, reduced, the loss): reduction none has its rows in out already.
  cross_entropy_sum<T><<<1, kSumThreads, 0, stream(dev)>>>(row_loss, tg, reduction == 0 ? nullptr : static_cast<T*>(out.data),
                                                          static_cast<T*>(count.data), rows, ignore_index, reduction);
  check_launch(dev, "cross_entropy");
}

template <typename T>
void backward_typed(const dtp_tensor& gx, const dtp_tensor& g, const dtp_tensor& x, const dtp_tensor& lse,
                    const dtp_tensor& count, const dtp_tensor& target, int64_t ignore_index, int reduction) {
  const int64_t n = x.sizes[1];
  T* o = static_cast<T*>(gx.data);
  const T* xs = static_cast<const T*>(x.data);
  const T* l = static_cast<const T*>(lse.data);
  const T* gs = static_cast<const T*>(g.data);
  const T* c = static_cast<const T*>(count.data);
  const int64_t* tg = static_cast<const int64_t*>(target.data);
  launch(gx.device, gx.numel, "cross_entropy_backward", [=] __device__(int64_t i) {
    const int64_t row = i / n, col = i % n, t = tg[row];
    if (t == ignore_index) {
      o[i] = T(0);
      return;
    }
    if (t < 0 || t >= n) {  // out of range: NaN, as the forward
      o[i] = T(NAN);
      return;
    }
    const T s = reduction == 0 ? gs[row] : reduction == 1 ? gs[0] / c[0] : gs[0];
    o[i] = s * (exp(xs[i] - l[row]) - (col == t ? T(1) : T(0)));
  });
}

}  // namespace

bool fused_loss_offered() {
  static const bool on = env_equals("DEVTENSOR_FUSED_LOSS", "1");
  return on;
}

void cross_entropy(const dtp_tensor& out, const dtp_tensor& lse, const dtp_tensor& count, const dtp_tensor& x,
                   const dtp_tensor& target, int64_t ignore_index, int reduction) {
  if (static_cast<DType>(x.dtype) == DType::Float64) return forward_typed<double>(out, lse, count, x, target, ignore_index, reduction);
  if (static_cast<DType>(x.dtype) == DType::Float32) return forward_typed<float>(out, lse, count, x, target, ignore_index, reduction);
  raise(DT_ERR_NOT_SUPPORTED, "cross_entropy: the CUDA kernel takes float32 or float64");
}

void cross_entropy_backward(const dtp_tensor& gx, const dtp_tensor& g, const dtp_tensor& x, const dtp_tensor& lse,
                            const dtp_tensor& count, const dtp_tensor& target, int64_t ignore_index, int reduction) {
  if (static_cast<DType>(x.dtype) == DType::Float64)
    return backward_typed<double>(gx, g, x, lse, count, target, ignore_index, reduction);
  if (static_cast<DType>(x.dtype) == DType::Float32)
    return backward_typed<float>(gx, g, x, lse, count, target, ignore_index, reduction);
  raise(DT_ERR_NOT_SUPPORTED, "cross_entropy_backward: the CUDA kernel takes float32 or float64");
}

}  // namespace dt::cudap
