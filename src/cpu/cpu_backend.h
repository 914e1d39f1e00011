// The CPU backend: host memory, logical CPU devices (DEVTENSOR_CPU_DEVICES), and every op
// as threaded, vectorised loops. The kernels are implemented across src/cpu/kernels_*.cpp,
// one file per family, so each stays small and compiles in parallel; run() sends an op
// code to its kernel. It registers itself (core/registry.h) as the library loads.
#pragma once
#include "core/backend.h"

namespace dt::cpu {

Allocator& host_allocator();  // host_allocator.cpp

class CpuBackend final : public Backend {
 public:
  int32_t device_type() const override { return DT_DEVICE_CPU; }
  const char* name() const override { return "cpu"; }
  bool accelerator() const override { return false; }
  size_t device_count() override;
  void check_device(Device d) override;
  void properties(int32_t index, dt_device_props* out) override;
  void memory(int32_t index, uint64_t* free_bytes, uint64_t* total_bytes) override;
  Allocator& allocator(int32_t) override { return host_allocator(); }
  void synchronize(Device) override {}
  void copy(const Tensor& dst, const Tensor& src, bool non_blocking) override;
  bool supports(int32_t op) override;
  void run(int32_t op, const OpArgs& args) override;
  // float32 convolutions through oneDNN (conv_onednn.cpp) when the library was built with
  // it (DT_HAVE_ONEDNN); false otherwise, and for other dtypes.
  bool conv2d_forward(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor* bias,
                      const ConvGeometry& g) override;
  bool conv2d_input_grad(const Tensor& gx, const Tensor& gout, const Tensor& w, const ConvGeometry& g) override;
  bool conv2d_weight_grad(const Tensor& gw, const Tensor& x, const Tensor& gout, const ConvGeometry& g) override;
  // float32 / float64, one pass over each input plane (kernels_pool.cpp).
  bool max_pool2d_forward(const Tensor& out, const Tensor& indices, const Tensor& x, const PoolGeometry& g) override;

  // The kernels (kernels_*.cpp).
  void copy(const Tensor& dst, const Tensor& src);
  void fill(const Tensor& dst, double value);
  void arange(const Tensor& dst, double start, double step);
  void random(const Tensor& dst, RandomDist dist, uint64_t seed, uint64_t offset);
  void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b);
  void unary(UnaryOp op, const Tensor& out, const Tensor& a);
  void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
  // Reduces `in` over the dims flagged in `reduce_mask` (bit d = dim d of in) into out,
  // whose shape is in's with those dims set to 1 (keepdim form). Mean divides by the
  // reduced count; ArgMax/ArgMin write int64 and get exactly one flagged dim.
  void reduce(ReduceOp op, const Tensor& out, const Tensor& in, uint32_t reduce_mask);
  void softmax(const Tensor& out, const Tensor& in, int dim, bool log);
  // Running sums along dim of contiguous in into out (one dtype), from the end when
  // `reverse` (kernels_scan.cpp).
  void cumsum(const Tensor& out, const Tensor& in, int dim, bool reverse);
  // Each row of the last dim of contiguous `in` sorted into `values`, with the row
  // positions in `indices` (int64), stable (kernels_sort.cpp).
  void sort(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending);
  // out[b] = a[b] @ b[b] for 3-d tensors [B, M, K] x [B, K, N] -> [B, M, N] (any strides).
  void matmul(const Tensor& out, const Tensor& a, const Tensor& b);
  void addmm(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias);  // a b + bias per row
  // Cross entropy of x [N, C] at class indices (plugin_abi.h, DTP_OP_CrossEntropy*).
  void cross_entropy(const Tensor& out, const Tensor& lse, const Tensor& count, const Tensor& x, const Tensor& target,
                     int64_t ignore_index, int reduction);
  void cross_entropy_backward(const Tensor& gx, const Tensor& g, const Tensor& x, const Tensor& lse,
                              const Tensor& count, const Tensor& target, int64_t ignore_index, int reduction);
  // out = in.index_select(dim, index) / in.gather(dim, index); index is int64, checked.
  void index_select(const Tensor& out, const Tensor& in, int dim, const Tensor& index);
  void gather(const Tensor& out, const Tensor& in, int dim, const Tensor& index);
  // self.index_add_(dim, index, source) / self.scatter_add_(dim, index, src), in place.
  void index_add(const Tensor& self, int dim, const Tensor& index, const Tensor& source);
  void scatter_add(const Tensor& self, int dim, const Tensor& index, const Tensor& src);
  // One SGD step in place (KernelOp::SgdStep; plugin_abi.h gives the formula): buf may be
  // null (no momentum), `fresh` when buf is new and takes the gradient.
  void sgd_step(const Tensor& param, const Tensor& grad, const Tensor* buf, double lr, double momentum, bool fresh,
                bool nesterov);
  // DTP_OP_SgdStepMulti: sgd_step for each row of a host table of tensor addresses.
  void sgd_step_multi(const Tensor& param0, const Tensor& table, double lr, double momentum, bool nesterov);
  // DTP_OP_AdaptiveStep: one Adam, RMSprop or Adagrad step in place (kernels_optim.cpp).
  void adaptive_step(const Tensor& param, const Tensor& grad, const Tensor& constants, const Tensor* const* state,
                     int nstate, int kind, int flags);
  // Batch norm with fixed statistics (KernelOp::BatchNormEval; plugin_abi.h gives the
  // formula and its rounding): weight and bias may be null.
  // gx = o > 0 ? g : 0 (KernelOp::ReluBackward), kernels_grad.cpp.
  void relu_backward(const Tensor& gx, const Tensor& o, const Tensor& g);
  void batch_norm_eval(const Tensor& out, const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor* weight,
                       const Tensor* bias, double eps);
};

}  // namespace dt::cpu
