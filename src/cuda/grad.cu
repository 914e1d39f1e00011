// ReLU's gradient (DTP_OP_ReluBackward) on the device: one kernel, gx = o <= 0 ? 0 : g (a
// NaN output passes g on, as PyTorch's), where the composed form launched four (a fill
// for the scalar, the comparison, a zero and a where).
#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"

namespace dt::cudap {
namespace {

template <typename T>
void relu_backward_typed(const dtp_tensor& gx, const dtp_tensor& o, const dtp_tensor& g) {
  T* out = static_cast<T*>(gx.data);  // all contiguous, one shape (the front end checked)
  const T* y = static_cast<const T*>(o.data);
  const T* grad = static_cast<const T*>(g.data);
  launch(gx.device, gx.numel, "relu_backward", [=] __device__(int64_t i) { out[i] = y[i] <= T(0) ? T(0) : grad[i]; });
}

}  // namespace

void relu_backward(const dtp_tensor& gx, const dtp_tensor& o, const dtp_tensor& g) {
  if (o.dtype == DT_FLOAT64) return relu_backward_typed<double>(gx, o, g);
  relu_backward_typed<float>(gx, o, g);
}

}  // namespace dt::cudap
