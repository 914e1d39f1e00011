// The kernels of the CUDA plugin, one family per file (binary.cu, unary.cu, copy.cu,
// factory.cu, reduce.cu, softmax.cu, scan.cu, sort.cu, matmul.cu, index.cu, optim.cu, norm.cu, pool.cu,
// attention.cu). Each takes checked
// descriptors (the core's front end validated devices, shapes and dtypes) and queues
// work on devtensor's stream for the output's device; failures throw Failure.
#pragma once
#include <cstdint>

#include "core/plugin_abi.h"

namespace dt::cudap {

void binary(int32_t op, const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b);
void unary(int32_t op, const dtp_tensor& out, const dtp_tensor& a);
void where(const dtp_tensor& out, const dtp_tensor& cond, const dtp_tensor& a, const dtp_tensor& b);
// Same-device copy with dtype conversion and broadcasting.
void copy_on_device(const dtp_tensor& dst, const dtp_tensor& src);
// Any direction (host<->device, device<->device); see dtp_backend::copy.
void copy(const dtp_tensor& dst, const dtp_tensor& src, bool non_blocking);
void fill(const dtp_tensor& dst, double value);
void arange(const dtp_tensor& dst, double start, double step);
void random(const dtp_tensor& dst, int32_t dist, uint64_t seed, uint64_t offset);
void reduce(int32_t op, const dtp_tensor& out, const dtp_tensor& in, uint32_t mask);
void softmax(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, bool log);
void cumsum(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, bool reverse);
void sort(const dtp_tensor& values, const dtp_tensor& indices, const dtp_tensor& in, bool descending);  // sort.cu
void matmul(const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b, bool allow_tf32);
void addmm(const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b, const dtp_tensor& bias, bool allow_tf32);
// loss.cu: cross entropy over class indices (plugin_abi.h, DTP_OP_CrossEntropy*), offered
// only when fused_loss_offered() (DEVTENSOR_FUSED_LOSS=1, until checked on a GPU).
bool fused_loss_offered();
void cross_entropy(const dtp_tensor& out, const dtp_tensor& lse, const dtp_tensor& count, const dtp_tensor& x,
                   const dtp_tensor& target, int64_t ignore_index, int reduction);
void cross_entropy_backward(const dtp_tensor& gx, const dtp_tensor& g, const dtp_tensor& x, const dtp_tensor& lse,
                            const dtp_tensor& count, const dtp_tensor& target, int64_t ignore_index, int reduction);
void index_select(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, const dtp_tensor& index);
void gather(const dtp_tensor& out, const dtp_tensor& in, int32_t dim, const dtp_tensor& index);
// self.index_add_(dim, index, source) / self.scatter_add_(dim, index, src), in place.
void index_add(const dtp_tensor& self, int32_t dim, const dtp_tensor& index, const dtp_tensor& source);
void scatter_add(const dtp_tensor& self, int32_t dim, const dtp_tensor& index, const dtp_tensor& src);
// One SGD step in place (DTP_OP_SgdStep); buf null without momentum.
void sgd_step(const dtp_tensor& param, const dtp_tensor& grad, const dtp_tensor* buf, double lr, double momentum,
              bool fresh, bool nesterov);
// DTP_OP_SgdStepMulti (table: host int64 [n, 5], plugin_abi.h); one launch for up to 32
// parameters only when multi_tensor_sgd_offered() (DEVTENSOR_MULTI_TENSOR_SGD=1).
bool multi_tensor_sgd_offered();
void sgd_step_multi(const dtp_tensor& param0, const dtp_tensor& table, double lr, double momentum, bool nesterov);
// ReLU's gradient (DTP_OP_ReluBackward): gx = o > 0 ? g : 0, contiguous float32 or float64.
void relu_backward(const dtp_tensor& gx, const dtp_tensor& o, const dtp_tensor& g);
// Batch norm with fixed statistics (DTP_OP_BatchNormEval); weight and bias may be null.
void batch_norm_eval(const dtp_tensor& out, const dtp_tensor& x, const dtp_tensor& mean, const dtp_tensor& var,
                     const dtp_tensor* weight, const dtp_tensor* bias, double eps);
// 2-d max pooling with indices (DTP_HOOK_MAX_POOL2D_FORWARD: t = {out, indices, x}).
void max_pool2d(const dtp_op_args& a);
// Fused attention (DTP_HOOK_ATTENTION_FORWARD: t = {out, q, k, v}, attention.cu): float32,
// head size 64; NOT_SUPPORTED for the rest. Offered (supports_op) only with
// DEVTENSOR_FUSED_ATTENTION=1 until a GPU has checked it.
void attention_forward(const dtp_op_args& a);
bool fused_attention_offered();

}  // namespace dt::cudap
