// The fused SGD step (DTP_OP_SgdStep) on the device: one kernel over a parameter, its
// gradient and its momentum buffer. Products and sums go through the _rn intrinsics so
// that nvcc cannot contract them into FMAs: each is rounded on its own, as the unfused
// ops (one kernel each) round them. The multi-parameter form (DTP_OP_SgdStepMulti) runs
// that kernel per parameter, or, with DEVTENSOR_MULTI_TENSOR_SGD=1 until a GPU has checked
// it, one launch for up to 32 parameters (PyTorch's foreach step).
#include <algorithm>

#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"
#include "cuda/rounding.cuh"
#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

// One element of the step: the unfused ops' roundings, in their order.
template <typename T>
__device__ __forceinline__ void sgd_element(T* p, const T* g, T* b, int64_t i, T l, T m, bool fresh, bool nesterov) {
  T d = g[i];
  if (b) {
    const T v = fresh ? d : add_rn(mul_rn(b[i], m), d);
    b[i] = v;
    d = nesterov ? add_rn(d, mul_rn(v, m)) : v;
  }
  p[i] = sub_rn(p[i], mul_rn(d, l));
}

template <typename T>
void sgd_pointers(int device, T* p, const T* g, T* b, int64_t n, double lr, double momentum, bool fresh,
                  bool nesterov) {
  const T l = static_cast<T>(lr), m = static_cast<T>(momentum);
  launch(device, n, "sgd_step", [=] __device__(int64_t i) { sgd_element(p, g, b, i, l, m, fresh, nesterov); });
}

template <typename T>
void sgd_typed(const dtp_tensor& param, const dtp_tensor& grad, const dtp_tensor* buf, double lr, double momentum,
               bool fresh, bool nesterov) {
  // all contiguous, one shape (the front end checked)
  sgd_pointers<T>(param.device, static_cast<T*>(param.data), static_cast<const T*>(grad.data),
                  buf ? static_cast<T*>(buf->data) : nullptr, param.numel, lr, momentum, fresh, nesterov);
}

// The multi-tensor kernel: up to kMultiMax parameters per launch, passed by value (about
// 1.3 KB of arguments). Block k works on chunk k - first_block[t] of parameter t, the
// parameter whose range of blocks holds k; kChunk elements per block.
constexpr int kMultiMax = 32, kMultiThreads = 256;
constexpr int64_t kChunk = 4096;

template <typename T>
struct SgdTable {
  T* p[kMultiMax];
  const T* g[kMultiMax];
  T* b[kMultiMax];
  int64_t n[kMultiMax];
  int64_t first_block[kMultiMax + 1];
  uint32_t fresh;  // bit t: parameter t's buffer is new
  int count;
};

template <typename T>
__global__ void sgd_multi_kernel(SgdTable<T> tab, T l, T m, bool nesterov) {
  const int64_t block = blockIdx.x;
  int t = 0;
  while (t + 1 < tab.count && tab.first_block[t + 1] <= block) ++t;
  const int64_t begin = (block - tab.first_block[t]) * kChunk, end = min(tab.n[t], begin + kChunk);
  const bool fresh = (tab.fresh >> t) & 1u;
  for (int64_t i = begin + threadIdx.x; i < end; i += kMultiThreads)
    sgd_element(tab.p[t], tab.g[t], tab.b[t], i, l, m, fresh, nesterov);
}

template <typename T>
void sgd_multi_typed(int device, const dtp_tensor& table, double lr, double momentum, bool nesterov) {
  const int64_t* row = static_cast<const int64_t*>(table.data);  // host memory
  const int64_t rows = table.sizes[0];
  if (!multi_tensor_sgd_offered()) {  // a launch per parameter, the checked kernel
    for (int64_t r = 0; r < rows; ++r, row += 5)
      sgd_pointers<T>(device, reinterpret_cast<T*>(row[0]), reinterpret_cast<const T*>(row[1]),
                      reinterpret_cast<T*>(row[2]), row[3], lr, momentum, row[4] != 0, nesterov);
    return;
  }
  const T l = static_cast<T>(lr), m = static_cast<T>(momentum);
  for (int64_t at = 0; at < rows; at += kMultiMax) {
    SgdTable<T> tab{};
    tab.count = static_cast<int>(std::min<int64_t>(kMultiMax, rows - at));
    int64_t blocks = 0;
    for (int t = 0; t < tab.count; ++t, row += 5) {
      tab.p[t] = reinterpret_cast<T*>(row[0]);
      tab.g[t] = reinterpret_cast<const T*>(row[1]);
      tab.b[t] = reinterpret_cast<T*>(row[2]);
      tab.n[t] = row[3];
      if (row[4] != 0) tab.fresh |= 1u << t;
      tab.first_block[t] = blocks;
      blocks += (row[3] + kChunk - 1) / kChunk;
    }
    tab.first_block[tab.count] = blocks;
    if (blocks == 0) continue;
    if (blocks > 2147483647) raise(DT_ERR_NOT_SUPPORTED, "sgd_step: too many elements for one launch");
    sgd_multi_kernel<T><<<static_cast<unsigned>(blocks), kMultiThreads, 0, stream(device)>>>(tab, l, m, nesterov);
    check_launch(device, "sgd_step");
  }
}

}  // namespace

bool multi_tensor_sgd_offered() {
  static const bool on = env_equals("DEVTENSOR_MULTI_TENSOR_SGD", "1");
  return on;
}

void sgd_step_multi(const dtp_tensor& param0, const dtp_tensor& table, double lr, double momentum, bool nesterov) {
  if (param0.dtype == DT_FLOAT64) return sgd_multi_typed<double>(param0.device, table, lr, momentum, nesterov);
  sgd_multi_typed<float>(param0.device, table, lr, momentum, nesterov);
}

void sgd_step(const dtp_tensor& param, const dtp_tensor& grad, const dtp_tensor* buf, double lr, double momentum,
              bool fresh, bool nesterov) {
  if (param.dtype == DT_FLOAT64) return sgd_typed<double>(param, grad, buf, lr, momentum, fresh, nesterov);
  sgd_typed<float>(param, grad, buf, lr, momentum, fresh, nesterov);
}

}  // namespace dt::cudap
