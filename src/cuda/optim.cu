// The fused SGD step (DTP_OP_SgdStep) on the device: one kernel over a parameter, its
// gradient and its momentum buffer. Products and sums go through the _rn intrinsics so
// that nvcc cannot contract them into FMAs: each is rounded on its own, as the unfused
// ops (one kernel each) round them.
#include "cuda/elementwise.cuh"
#include "cuda/kernels.h"
#include "cuda/rounding.cuh"

namespace dt::cudap {
namespace {

template <typename T>
void sgd_typed(const dtp_tensor& param, const dtp_tensor& grad, const dtp_tensor* buf, double lr, double momentum,
               bool fresh, bool nesterov) {
  T* p = static_cast<T*>(param.data);  // all contiguous, one shape (the front end checked)
  const T* g = static_cast<const T*>(grad.data);
  T* b = buf ? static_cast<T*>(buf->data) : nullptr;
  const T l = static_cast<T>(lr), m = static_cast<T>(momentum);
  launch(param.device, param.numel, "sgd_step", [=] __device__(int64_t i) {
    T d = g[i];
    if (b) {
      const T v = fresh ? d : add_rn(mul_rn(b[i], m), d);
      b[i] = v;
      d = nesterov ? add_rn(d, mul_rn(v, m)) : v;
    }
    p[i] = sub_rn(p[i], mul_rn(d, l));
  });
}

}  // namespace

void sgd_step(const dtp_tensor& param, const dtp_tensor& grad, const dtp_tensor* buf, double lr, double momentum,
              bool fresh, bool nesterov) {
  if (param.dtype == DT_FLOAT64) return sgd_typed<double>(param, grad, buf, lr, momentum, fresh, nesterov);
  sgd_typed<float>(param, grad, buf, lr, momentum, fresh, nesterov);
}

}  // namespace dt::cudap
